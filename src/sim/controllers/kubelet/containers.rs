//! `kuberuntime_manager`'s part: starting, restarting and stopping a pod's containers in
//! order (init containers, sidecars, the app), and a terminating pod's grace period.

use super::*;

impl Kubelet {
    /// A pod in a terminal phase: nothing runs; a deleted one is confirmed gone.
    pub(super) fn sync_terminated(
        &mut self,
        obj: &Rc<Object>,
        pod: &Pod,
        now: Millis,
        rt: &mut NodeRuntime,
        out: &mut Outcome,
    ) {
        let uid = &pod.metadata.uid;
        let running: Vec<Str> = rt.pods.get(uid).map_or(Vec::new(), |s| {
            s.containers
                .iter()
                .filter(|(_, c)| c.running)
                .map(|(n, _)| n.clone())
                .collect()
        });
        for name in &running {
            out.event(
                EventRecord::normal(obj, "Killing", format!("Stopping container {name}"))
                    .at_field(role_of(pod, name).field(name)),
            );
            rt.kill_container(uid, name, now, 0, "Completed");
        }
        let deleting = pod.metadata.deletion_timestamp.is_some();
        if deleting {
            out.request(delete_request(pod));
        }
        out.record = Some(ReconcileRecord {
            observed: format!(
                "{}; {}",
                pod.status.phase,
                summarize(
                    pod.status
                        .init_container_statuses
                        .iter()
                        .chain(&pod.status.container_statuses)
                )
            ),
            desired: if deleting {
                "pod object deleted".into()
            } else {
                "nothing runs (the pod finished)".into()
            },
            diff: if deleting {
                "delete the pod object (grace period 0)".into()
            } else {
                String::new()
            },
        });
    }

    /// A pod being deleted: stop its containers, then report a terminal phase and delete it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sync_terminating(
        &mut self,
        obj: &Rc<Object>,
        pod: &Pod,
        node: Option<&Node>,
        now: Millis,
        rng: &mut Rng,
        rt: &mut NodeRuntime,
        out: &mut Outcome,
    ) {
        let uid = pod.metadata.uid.clone();
        let view = rt.pods.get(&uid).cloned();
        let mut wake: Option<Millis> = None;
        self.run_probes(obj, pod, rt, now, true, out, &mut wake);
        self.pulls.retain(|(u, _), _| *u != uid);
        let deadline = pod.metadata.deletion_timestamp.map_or(now, |t| t.0);
        let grace_left = deadline.saturating_sub(now);
        let running: Vec<(Str, bool)> = rt.pods.get(&uid).map_or(Vec::new(), |s| {
            s.containers
                .iter()
                .filter(|(_, c)| c.running)
                .map(|(n, c)| (n.clone(), c.stopping))
                .collect()
        });
        for (name, stopping) in &running {
            if !stopping {
                let after = rng.range(STOP_TIME.0, STOP_TIME.1).min(grace_left);
                let spec = pod
                    .spec
                    .init_containers
                    .iter()
                    .chain(&pod.spec.containers)
                    .find(|c| c.name == *name);
                if spec.is_some_and(|c| ignores_sigterm(c.command.as_deref(), c.args.as_deref())) {
                    // Killed when the grace period ends.
                    rt.stop_container(&uid, name, now + grace_left, 137);
                } else {
                    rt.stop_container(&uid, name, now + after, 0);
                }
                out.event(
                    EventRecord::normal(obj, "Killing", format!("Stopping container {name}"))
                        .at_field(role_of(pod, name).field(name)),
                );
            }
        }
        if let Some(s) = rt.pods.get(&uid) {
            for c in s.containers.values().filter(|c| c.running) {
                if let Some(e) = &c.scheduled_exit {
                    wake = min_opt(wake, next_relist(e.at));
                }
            }
        }
        let host_ip = self.pod_host_ip(node);
        if !running.is_empty() {
            let status = self.generate_status(pod, view.as_ref(), &host_ip, now, false);
            if status != pod.status {
                let req = self.update_status(pod, status);
                out.request(req);
            }
            if let Some(w) = wake {
                out.requeue(w.saturating_sub(now).max(1));
            }
            out.record = Some(ReconcileRecord {
                observed: format!("terminating; {} container(s) running", running.len()),
                desired: "containers stopped, then the pod object deleted".into(),
                diff: format!(
                    "stop {} (grace period ends in {})",
                    running
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    format_duration(grace_left)
                ),
            });
            return;
        }
        let status = self.generate_status(pod, view.as_ref(), &host_ip, now, true);
        let phase = status.phase.clone();
        if status != pod.status {
            let req = self.update_status(pod, status);
            out.request(req);
        }
        out.request(delete_request(pod));
        out.record = Some(ReconcileRecord {
            observed: "terminating; all containers stopped".into(),
            desired: "pod object deleted".into(),
            diff: format!("report phase {phase}, then delete the pod object (grace period 0)"),
        });
    }

    /// A pod that should run: init containers in order, then start what is missing, restart what
    /// exited, probe what runs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sync_running(
        &mut self,
        obj: &Rc<Object>,
        pod: &Pod,
        node: Option<&Node>,
        cache: &Cache,
        now: Millis,
        rng: &mut Rng,
        rt: &mut NodeRuntime,
        out: &mut Outcome,
    ) {
        let uid = pod.metadata.uid.clone();
        let view = rt.pods.get(&uid).cloned();
        let mut p = Pass {
            obj,
            cache,
            pod,
            now,
            out,
            wake: None,
            gaps: Vec::new(),
            changed: false,
        };
        let kills = self.run_probes(obj, pod, rt, now, false, p.out, &mut p.wake);

        let finished = restart_policy(pod) == "Never"
            && pod.spec.containers.iter().all(|c| ran_before(pod, &c.name));
        if !rt.pods.contains_key(&uid) && !pod.spec.containers.is_empty() && !finished {
            if pod.status.pod_ip.is_some() {
                p.out.event(EventRecord::normal(
                    obj,
                    "SandboxChanged",
                    "Pod sandbox changed, it will be killed and re-created.",
                ));
            }
            let prefix = self.pod_ip_prefix(node);
            rt.ensure_sandbox(
                &uid,
                &pod.metadata.namespace,
                &pod.metadata.name,
                &prefix,
                now,
            );
            p.changed = true;
        }

        // Init containers run one at a time; sidecars start and keep running. Once a regular
        // container has started, a restarting sidecar no longer holds the others back.
        let mut initialized = true;
        for ic in &pod.spec.init_containers {
            if !self.step_container(&mut p, ic, Role::of_init(ic), &kills, rt, rng) {
                initialized = false;
                break;
            }
        }
        let app_started = pod
            .spec
            .containers
            .iter()
            .any(|c| rt.container(&uid, &c.name).is_some());
        if initialized || app_started {
            for c in &pod.spec.containers {
                self.step_container(&mut p, c, Role::App, &kills, rt, rng);
            }
        }

        let (mut wake, mut gaps, changed) = (p.wake, std::mem::take(&mut p.gaps), p.changed);
        if changed {
            wake = min_opt(wake, next_relist(now));
        }
        if let Some(s) = rt.pods.get(&uid) {
            for c in s.containers.values().filter(|c| c.running) {
                if let Some(e) = &c.scheduled_exit {
                    wake = min_opt(wake, next_relist(e.at));
                }
            }
        }
        let host_ip = self.pod_host_ip(node);
        let status = self.generate_status(pod, view.as_ref(), &host_ip, now, false);
        let observed = concat(&[
            &status.phase,
            "; ",
            &summarize(
                status
                    .init_container_statuses
                    .iter()
                    .chain(&status.container_statuses),
            ),
        ]);
        if status != pod.status {
            let req = self.update_status(pod, status);
            out.request(req);
            if gaps.is_empty() {
                gaps.push("status out of date".into());
            }
        }
        if let Some(w) = wake {
            out.requeue(w.saturating_sub(now).max(1));
        }
        // Written piece by piece into one string, as `summarize` is: every pod sync says it.
        let mut desired = String::with_capacity(64);
        for c in &pod.spec.init_containers {
            if !desired.is_empty() {
                desired.push_str(", ");
            }
            match Role::of_init(c) {
                Role::Sidecar => {
                    desired.push_str("sidecar ");
                    desired.push_str(&c.name);
                    desired.push_str(" running ");
                    desired.push_str(&c.image);
                }
                _ => {
                    desired.push_str("init container ");
                    desired.push_str(&c.name);
                    desired.push_str(" completed");
                }
            }
        }
        for c in &pod.spec.containers {
            if !desired.is_empty() {
                desired.push_str(", ");
            }
            desired.push_str(&c.name);
            desired.push_str(" running ");
            desired.push_str(&c.image);
        }
        out.record = Some(ReconcileRecord {
            observed,
            desired,
            diff: gaps.join("; "),
        });
    }

    /// Moves one container toward running (an init container: toward completed). Returns true when
    /// the pod may go on to the next container in start order.
    pub(super) fn step_container(
        &mut self,
        p: &mut Pass<'_>,
        c: &Container,
        role: Role,
        kills: &BTreeMap<Str, String>,
        rt: &mut NodeRuntime,
        rng: &mut Rng,
    ) -> bool {
        let (obj, pod, now) = (p.obj, p.pod, p.now);
        let uid = pod.metadata.uid.clone();
        let name = c.name.clone();
        let field = role.field(&name);
        let policy = restart_policy(pod);
        let ck = (uid.clone(), name.clone());
        if let Some(cur) = rt.container(&uid, &name).filter(|x| x.running).cloned() {
            if let Some(msg) = kills.get(&name) {
                let restart = policy != "Never" || role == Role::Sidecar;
                let msg = if restart {
                    format!("{msg}, will be restarted")
                } else {
                    msg.clone()
                };
                p.out
                    .event(EventRecord::normal(obj, "Killing", msg).at_field(field.clone()));
                rt.kill_container(&uid, &name, now, 137, "Error");
                p.changed = true;
            } else if cur.image != c.image {
                p.out.event(
                    EventRecord::normal(
                        obj,
                        "Killing",
                        format!("Container {name} definition changed, will be restarted"),
                    )
                    .at_field(field.clone()),
                );
                rt.kill_container(&uid, &name, now, 0, "Completed");
                p.changed = true;
            } else {
                return match role {
                    Role::Init => false,
                    Role::Sidecar => self.probe_passed(
                        &uid,
                        c,
                        &cur.id,
                        ProbeKind::Startup,
                        c.startup_probe.as_deref(),
                    ),
                    Role::App => true,
                };
            }
        }
        let cur = rt.container(&uid, &name).cloned();
        let exit_code = cur
            .as_ref()
            .and_then(|x| x.termination.as_ref())
            .map(|t| t.exit_code);
        let should_start = match (role, exit_code) {
            // After a reboot lost it, a container that already ran is not run again under Never.
            (Role::App, None) => !(policy == "Never" && ran_before(pod, &name)),
            (_, None) => true,
            (Role::Init, Some(0)) => return true,
            (Role::Init, Some(_)) => policy != "Never",
            (Role::Sidecar, Some(_)) => true,
            (Role::App, Some(code)) => policy == "Always" || (policy == "OnFailure" && code != 0),
        };
        if !should_start {
            return role == Role::App;
        }
        // client-go's back-off key (`GetStableKey`) hashes the container's spec: a changed image
        // starts afresh instead of waiting out the old image's crash back-off.
        let bk = concat(&[&uid, "/", &name, "/", &c.image]);
        let finished = cur.as_ref().and_then(|x| x.finished_at());
        if let Some(finished) = finished {
            if self.crash_backoff.in_backoff_since(&bk, finished, now) {
                let b = self.crash_backoff.get(&bk);
                let pod_ref = format!("{}_{}({})", pod.metadata.name, pod.metadata.namespace, uid);
                p.out.event(
                    EventRecord::warning(
                        obj,
                        "BackOff",
                        format!("Back-off restarting failed container {name} in pod {pod_ref}"),
                    )
                    .at_field(field.clone()),
                );
                let message = format!(
                    "back-off {} restarting failed container={name} pod={pod_ref}",
                    format_duration(b)
                );
                self.reasons
                    .insert(ck, ("CrashLoopBackOff".into(), message));
                p.wake = min_opt(p.wake, finished + b);
                p.gaps.push(format!(
                    "{name}: back-off {} before restart",
                    format_duration(b)
                ));
                return false;
            }
        }
        // The real kubelet pulls inside the sync that starts the container, so the back-off step
        // it takes before pulling never holds up that start; here a pull spans syncs, so the step
        // is taken once the image is there.
        if !self.ensure_image(p, c, &field, rt, rng) {
            return false;
        }
        if let Some(msg) = env_error(c, pod, p.cache) {
            p.out.event(
                EventRecord::warning(obj, "Failed", format!("Error: {msg}")).at_field(field),
            );
            p.gaps.push(format!("{name}: {msg}"));
            self.reasons
                .insert(ck, ("CreateContainerConfigError".into(), msg));
            let retry = SYNC_RETRY + rng.range(0, SYNC_RETRY / 2);
            p.wake = min_opt(p.wake, now + retry);
            return false;
        }
        if let Some(finished) = finished {
            self.crash_backoff.next(&bk, finished, now);
        }
        let (attempt, seed) = match &cur {
            Some(x) => (x.attempt + 1, None),
            None => seed_from_status(pod, &name),
        };
        let crash_after = rng.range(CRASH_RUN.0, CRASH_RUN.1);
        let init_run = (role == Role::Init).then(|| rng.range(INIT_RUN.0, INIT_RUN.1));
        let exits = match (
            process_of(&c.image, c.command.as_deref(), c.args.as_deref()),
            role,
        ) {
            (_, Role::Sidecar) | (Process::Serves, Role::App) => None,
            (Process::Exits { after, code }, _) => Some((after, code)),
            // An init container the convention reads as endless (a wait-for-dependency loop)
            // finishes as its dependency would appear.
            (Process::Serves, Role::Init) => init_run.map(|d| (d, 0)),
        };
        let exits = match (role, rt.doomed.remove(&uid)) {
            (Role::App, Some(code)) => Some((exits.map_or(crash_after, |(d, _)| d), code)),
            (_, Some(code)) => {
                rt.doomed.insert(uid.clone(), code);
                exits
            }
            (_, None) => exits,
        };
        rt.start_container(
            &uid,
            &name,
            &c.image,
            attempt,
            seed,
            crash_after,
            exits,
            now,
        );
        p.out.event(
            EventRecord::normal(obj, "Created", Str::concat(&["Created container: ", &name]))
                .at_field(field.clone()),
        );
        p.out.event(
            EventRecord::normal(obj, "Started", Str::concat(&["Started container ", &name]))
                .at_field(field),
        );
        self.reasons.remove(&ck);
        p.changed = true;
        p.gaps.push(concat(&[
            &name,
            if attempt > 0 {
                ": restarted"
            } else {
                ": started"
            },
        ]));
        role == Role::App
    }
}
