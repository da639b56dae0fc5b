//! `pkg/kubelet/status` and `kubelet_pods.go`'s status half: the PodStatus a kubelet writes
//! (phase, conditions, container statuses, QoS class).

use super::*;
use crate::vec_map::VecMap;

impl Kubelet {
    /// The pod status the kubelet reports, from the runtime as the PLEG saw it (`view`).
    pub(super) fn generate_status(
        &self,
        pod: &Pod,
        view: Option<&PodSandbox>,
        host_ip: &str,
        now: Millis,
        terminal: bool,
    ) -> PodStatus {
        let old = &pod.status;
        let mut init_statuses: Vec<ContainerStatus> = pod
            .spec
            .init_containers
            .iter()
            .map(|c| {
                self.container_status(pod, c, Role::of_init(c), &old.init_container_statuses, view)
            })
            .collect();
        let mut statuses: Vec<ContainerStatus> = pod
            .spec
            .containers
            .iter()
            .map(|c| self.container_status(pod, c, Role::App, &old.container_statuses, view))
            .collect();
        if terminal {
            terminate_statuses(pod, &mut init_statuses, &mut statuses);
        }
        statuses.stable_sort_by(|a, b| a.name.cmp(&b.name));

        let policy = restart_policy(pod);
        let mut phase = Str::from(get_phase(pod, policy, &init_statuses, &statuses, terminal));
        if matches!(old.phase.as_str(), "Succeeded" | "Failed") {
            phase = old.phase.clone();
        } else if terminal && !matches!(phase.as_str(), "Succeeded" | "Failed") {
            phase = "Failed".into();
        }
        let (reason, message) = if phase == old.phase {
            (old.reason.clone(), old.message.clone())
        } else {
            (None, None)
        };

        let mut conditions: Vec<Condition> = old
            .conditions
            .iter()
            .filter(|c| !KUBELET_CONDITIONS.contains(&c.type_.as_str()))
            .cloned()
            .collect();
        // Each sync writes the five conditions again: in the words of the ones they replace,
        // which mostly say the same (no lookup of a well-known word, no copy of a message).
        let cond = |type_: &str, ok: bool, reason: Option<String>, message: Option<String>| {
            let status = if ok { "True" } else { "False" };
            let before = find_condition(&old.conditions, type_);
            let prior = before.filter(|c| c.status == status);
            let reuse = |held: Option<&Option<Str>>, text: Option<String>| {
                text.map(|t| Str::reuse(held.and_then(Option::as_ref), &t))
            };
            Condition {
                type_: before.map_or_else(|| type_.into(), |c| c.type_.clone()),
                status: Str::reuse(before.map(|c| &c.status), status),
                reason: reuse(before.map(|c| &c.reason), reason),
                message: reuse(before.map(|c| &c.message), message),
                last_transition_time: prior
                    .map_or(Some(ts(now)), |c| c.last_transition_time.or(Some(ts(now)))),
                ..Default::default()
            }
        };
        conditions.push(cond(
            "PodReadyToStartContainers",
            view.is_some() && !terminal,
            None,
            None,
        ));
        let (initialized, ireason, imessage) = initialized(pod, &init_statuses, &statuses, &phase);
        conditions.push(cond("Initialized", initialized, ireason, imessage));
        let (cready, creason, cmessage) = containers_ready(pod, &init_statuses, &statuses, &phase);
        let (ready, rreason, rmessage) = if cready {
            readiness_gates(pod, &old.conditions)
        } else {
            (false, creason.clone(), cmessage.clone())
        };
        conditions.push(cond("Ready", ready, rreason, rmessage));
        conditions.push(cond("ContainersReady", cready, creason, cmessage));
        conditions.push(cond("PodScheduled", true, None, None));

        PodStatus {
            phase,
            conditions,
            reason,
            message,
            host_ip: Some(Str::reuse(old.host_ip.as_ref(), host_ip)),
            pod_ip: view
                .map(|v| Str::reuse(old.pod_ip.as_ref(), &v.ip))
                .or_else(|| old.pod_ip.clone()),
            start_time: old.start_time.or(Some(ts(now))),
            nominated_node_name: old.nominated_node_name.clone(),
            container_statuses: statuses,
            init_container_statuses: init_statuses,
            qos_class: Some(Str::reuse(old.qos_class.as_ref(), self.qos_of(pod))),
        }
    }

    /// `pod`'s QoS class, as its admission read it while its spec is the one admitted.
    pub(super) fn qos_of(&self, pod: &Pod) -> &'static str {
        match self.admitted.get(&pod.metadata.uid) {
            Some(a) if Rc::ptr_eq(&a.spec, &pod.spec) => {
                debug_assert_eq!(a.qos, qos_class(pod));
                a.qos
            }
            _ => qos_class(pod),
        }
    }

    /// One container's status (`convertToAPIContainerStatuses` plus the prober's ready/started).
    pub(super) fn container_status(
        &self,
        pod: &Pod,
        c: &Container,
        role: Role,
        old_list: &[ContainerStatus],
        view: Option<&PodSandbox>,
    ) -> ContainerStatus {
        let uid = &pod.metadata.uid;
        let deleting = pod.metadata.deletion_timestamp.is_some();
        let policy = restart_policy(pod);
        let default_reason = if pod.spec.init_containers.is_empty() {
            "ContainerCreating"
        } else {
            "PodInitializing"
        };
        let old_cs = old_list.iter().find(|s| s.name == c.name);
        let mut cs = ContainerStatus {
            name: Str::reuse(old_cs.map(|o| &o.name), &c.name),
            image: Str::reuse(old_cs.map(|o| &o.image), &c.image),
            ready: false,
            started: Some(false),
            restart_count: 0,
            state: waiting(default_reason, None),
            last_state: Some(ContainerState::default()),
            image_id: None,
            container_id: None,
        };
        if let Some(o) = old_cs {
            if o.state.terminated.is_some() {
                cs = o.clone();
            } else {
                cs.restart_count = o.restart_count;
                cs.last_state = o
                    .last_state
                    .clone()
                    .or_else(|| Some(ContainerState::default()));
            }
        }
        let rec = view.and_then(|v| v.containers.get(&c.name));
        match rec {
            Some(r) => {
                cs.restart_count = r.attempt;
                let prior = old_cs.filter(|o| o.state.terminated.is_none());
                cs.image = Str::reuse(prior.map(|o| &o.image), &r.image_ref);
                cs.image_id = Some(Str::reuse(
                    prior.and_then(|o| o.image_id.as_ref()),
                    &r.image_id,
                ));
                cs.container_id = Some(match prior.and_then(|o| o.container_id.as_ref()) {
                    Some(id) if id.strip_prefix("containerd://") == Some(r.id.as_str()) => {
                        id.clone()
                    }
                    _ => Str::concat(&["containerd://", &r.id]),
                });
                cs.last_state = Some(
                    r.last_termination
                        .as_ref()
                        .map_or_else(ContainerState::default, terminated_state),
                );
                if r.running {
                    let started = self.probe_passed(
                        uid,
                        c,
                        &r.id,
                        ProbeKind::Startup,
                        c.startup_probe.as_deref(),
                    );
                    let ready = self.probe_passed(
                        uid,
                        c,
                        &r.id,
                        ProbeKind::Readiness,
                        c.readiness_probe.as_deref(),
                    );
                    cs.state = ContainerState {
                        running: Some(ContainerStateRunning {
                            started_at: r.started_at.map(ts),
                        }),
                        ..Default::default()
                    };
                    cs.started = Some(started);
                    cs.ready = role != Role::Init && started && ready;
                } else {
                    cs.state = r
                        .termination
                        .as_ref()
                        .map_or_else(|| waiting(default_reason, None), terminated_state);
                    cs.started = Some(false);
                    cs.ready = role == Role::Init
                        && r.termination.as_ref().is_some_and(|t| t.exit_code == 0);
                }
            }
            None => {
                let lost = old_cs.is_some_and(|o| o.state.running.is_some());
                let final_ = role == Role::App && policy == "Never" && ran_before(pod, &c.name);
                if lost && final_ {
                    cs.state = terminated_state(&Termination {
                        exit_code: 137,
                        reason: REASON_STATUS_UNKNOWN.into(),
                        message: Some(
                            "The container could not be located when the pod was terminated".into(),
                        ),
                        ..Default::default()
                    });
                    cs.started = Some(false);
                } else if lost
                    && cs
                        .last_state
                        .as_ref()
                        .is_none_or(|l| l.terminated.is_none())
                {
                    cs.last_state = Some(terminated_state(&Termination {
                        exit_code: 137,
                        reason: REASON_STATUS_UNKNOWN.into(),
                        message: Some(
                            "The container could not be located when the pod was deleted.  The container used to be Running"
                                .into(),
                        ),
                        ..Default::default()
                    }));
                    if !deleting {
                        cs.restart_count += 1;
                    }
                }
            }
        }
        let exit_code = rec
            .and_then(|r| r.termination.as_ref())
            .map(|t| t.exit_code);
        let will_restart = !deleting
            && match rec {
                None => !(role == Role::App && policy == "Never" && ran_before(pod, &c.name)),
                Some(r) if r.running => false,
                Some(_) => match (role, exit_code.unwrap_or(0)) {
                    (Role::Init, 0) => false,
                    (Role::Init, _) => policy != "Never",
                    (Role::Sidecar, _) => true,
                    (Role::App, code) => policy == "Always" || (policy == "OnFailure" && code != 0),
                },
            };
        if will_restart {
            if let Some((reason, msg)) = self.reasons.get(&(uid.clone(), c.name.clone())) {
                if cs.state.terminated.is_some() {
                    cs.last_state = Some(cs.state.clone());
                }
                cs.state = waiting(reason, Some(msg.clone()));
                cs.ready = false;
                cs.started = Some(false);
            }
        }
        cs
    }
}

/// `getPhase`, including init containers and sidecars.
pub(super) fn get_phase(
    pod: &Pod,
    policy: &str,
    init_statuses: &[ContainerStatus],
    statuses: &[ContainerStatus],
    terminal: bool,
) -> &'static str {
    let find =
        |list: &'_ [ContainerStatus], name: &str| list.iter().find(|s| s.name == name).cloned();
    let ended = |cs: &ContainerStatus| cs.last_state.as_ref().and_then(|l| l.terminated.clone());
    let (mut pending_init, mut failed_init) = (0, 0);
    let (mut unknown, mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0, 0);
    for ic in &pod.spec.init_containers {
        let Some(cs) = find(init_statuses, &ic.name) else {
            pending_init += 1;
            if Role::of_init(ic) == Role::Sidecar {
                unknown += 1;
            }
            continue;
        };
        match Role::of_init(ic) {
            Role::Sidecar => {
                if cs.state.running.is_some() {
                    if cs.started != Some(true) {
                        pending_init += 1;
                    }
                    running += 1;
                } else if cs.state.terminated.is_none() && ended(&cs).is_none() {
                    pending_init += 1;
                    waiting += 1;
                }
            }
            _ => {
                if cs.state.running.is_some() {
                    pending_init += 1;
                } else if let Some(t) = &cs.state.terminated {
                    if t.exit_code != 0 {
                        failed_init += 1;
                    }
                } else if let Some(t) = ended(&cs) {
                    if t.exit_code != 0 {
                        failed_init += 1;
                    }
                } else {
                    pending_init += 1;
                }
            }
        }
    }
    for c in &pod.spec.containers {
        let Some(cs) = find(statuses, &c.name) else {
            unknown += 1;
            continue;
        };
        if cs.state.running.is_some() {
            running += 1;
        } else if let Some(t) = &cs.state.terminated {
            stopped += 1;
            if t.exit_code == 0 {
                succeeded += 1;
            }
        } else if ended(&cs).is_some() {
            stopped += 1;
        } else {
            waiting += 1;
        }
    }
    if failed_init > 0 && policy == "Never" {
        return "Failed";
    }
    if (pending_init > 0 && !any_regular_container_started(statuses)) || waiting > 0 {
        return "Pending";
    }
    if running > 0 && unknown == 0 {
        return "Running";
    }
    if running == 0 && stopped > 0 && unknown == 0 {
        if terminal {
            return if stopped == succeeded {
                "Succeeded"
            } else {
                "Failed"
            };
        }
        if policy == "Always" {
            return "Running";
        }
        if stopped == succeeded {
            return "Succeeded";
        }
        if policy == "Never" {
            return "Failed";
        }
        return "Running";
    }
    "Pending"
}

/// `TerminatePod`: containers the runtime cannot account for at the end count as failed.
pub(super) fn terminate_statuses(
    pod: &Pod,
    init_statuses: &mut [ContainerStatus],
    statuses: &mut [ContainerStatus],
) {
    let unknown = |cs: &mut ContainerStatus| {
        cs.state = terminated_state(&Termination {
            exit_code: 137,
            reason: REASON_STATUS_UNKNOWN.into(),
            message: Some("The container could not be located when the pod was terminated".into()),
            ..Default::default()
        });
        cs.ready = false;
        cs.started = Some(false);
    };
    let last_init_completed = init_statuses.last().is_some_and(|s| {
        s.state
            .terminated
            .as_ref()
            .is_some_and(|t| t.exit_code == 0)
    });
    let initialized = pod.spec.init_containers.is_empty()
        || statuses.iter().any(|s| {
            s.state.waiting.is_none()
                || s.last_state
                    .as_ref()
                    .is_some_and(|l| l.terminated.is_some())
        })
        || last_init_completed;
    if initialized {
        statuses
            .iter_mut()
            .filter(|s| s.state.terminated.is_none())
            .for_each(unknown);
    }
    // Init containers up to the last one that ever started are failed; later ones never ran.
    let started = |s: &ContainerStatus| {
        s.state.waiting.is_none()
            || s.last_state
                .as_ref()
                .is_some_and(|l| l.terminated.is_some())
    };
    if let Some(last) = init_statuses.iter().rposition(started) {
        init_statuses[..=last]
            .iter_mut()
            .filter(|s| s.state.terminated.is_none())
            .for_each(unknown);
    }
}

/// `GeneratePodInitializedCondition`: (initialized, reason, message).
pub(super) fn initialized(
    pod: &Pod,
    init_statuses: &[ContainerStatus],
    statuses: &[ContainerStatus],
    phase: &str,
) -> (bool, Option<String>, Option<String>) {
    if phase == "Succeeded" {
        return (true, Some("PodCompleted".into()), None);
    }
    if any_regular_container_started(statuses) {
        return (true, None, None);
    }
    let incomplete: Vec<&str> = pod
        .spec
        .init_containers
        .iter()
        .filter(|ic| {
            let cs = init_statuses.iter().find(|s| s.name == ic.name);
            match Role::of_init(ic) {
                Role::Sidecar => cs.is_none_or(|s| s.started != Some(true)),
                _ => cs.is_none_or(|s| !s.ready),
            }
        })
        .map(|ic| ic.name.as_str())
        .collect();
    if incomplete.is_empty() {
        (true, None, None)
    } else {
        let message = concat(&[
            "containers with incomplete status: [",
            &incomplete.join(" "),
            "]",
        ]);
        (
            false,
            Some("ContainersNotInitialized".into()),
            Some(message),
        )
    }
}

/// `GenerateContainersReadyCondition`: (ready, reason, message); sidecars count, listed first.
pub(super) fn containers_ready(
    pod: &Pod,
    init_statuses: &[ContainerStatus],
    statuses: &[ContainerStatus],
    phase: &str,
) -> (bool, Option<String>, Option<String>) {
    match phase {
        "Succeeded" => return (false, Some("PodCompleted".into()), None),
        "Failed" => return (false, Some("PodFailed".into()), None),
        _ => {}
    }
    let sidecars = pod
        .spec
        .init_containers
        .iter()
        .filter(|c| Role::of_init(c) == Role::Sidecar);
    let unready: Vec<&str> = sidecars
        .map(|c| (c, init_statuses))
        .chain(pod.spec.containers.iter().map(|c| (c, statuses)))
        .filter(|(c, list)| !list.iter().any(|s| s.name == c.name && s.ready))
        .map(|(c, _)| c.name.as_str())
        .collect();
    if unready.is_empty() {
        (true, None, None)
    } else {
        let message = concat(&["containers with unready status: [", &unready.join(" "), "]"]);
        (false, Some("ContainersNotReady".into()), Some(message))
    }
}

/// Pod readiness gates: every named condition must be True.
pub(super) fn readiness_gates(
    pod: &Pod,
    conditions: &[Condition],
) -> (bool, Option<String>, Option<String>) {
    let gates: Vec<String> = pod
        .spec
        .readiness_gates
        .as_ref()
        .and_then(|g| g.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|g| {
                    g.get("conditionType")
                        .and_then(Json::as_str)
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    let msgs: Vec<String> = gates
        .iter()
        .filter_map(|g| match find_condition(conditions, g) {
            None => Some(format!(
                "corresponding condition of pod readiness gate {g:?} does not exist."
            )),
            Some(c) if c.status != "True" => Some(format!(
                "the status of pod readiness gate {g:?} is not \"True\", but {}",
                c.status
            )),
            Some(_) => None,
        })
        .collect();
    if msgs.is_empty() {
        (true, None, None)
    } else {
        (
            false,
            Some("ReadinessGatesNotReady".into()),
            Some(msgs.join(", ")),
        )
    }
}

/// `GetPodQOS`: Guaranteed, Burstable or BestEffort from cpu/memory requests and limits.
pub(super) fn qos_class(pod: &Pod) -> &'static str {
    let mut requests: VecMap<&str, f64> = VecMap::new();
    let mut limits: VecMap<&str, f64> = VecMap::new();
    let mut guaranteed = true;
    let none = ResourceRequirements::default();
    for c in pod
        .spec
        .containers
        .iter()
        .chain(pod.spec.init_containers.iter())
    {
        let res = c.resources.as_ref().unwrap_or(&none);
        let mut found_limits = BTreeSet::new();
        for name in ["cpu", "memory"] {
            // API defaulting copies a limit into an absent request.
            let req = res
                .requests
                .get(name)
                .or_else(|| res.limits.get(name))
                .and_then(|q| parse_quantity_milli(q))
                .filter(|v| *v > 0.0);
            if let Some(v) = req {
                *requests.entry(name).or_insert(0.0) += v;
            }
            if let Some(v) = res
                .limits
                .get(name)
                .and_then(|q| parse_quantity_milli(q))
                .filter(|v| *v > 0.0)
            {
                found_limits.insert(name);
                *limits.entry(name).or_insert(0.0) += v;
            }
        }
        if found_limits.len() < 2 {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed
        && requests.len() == limits.len()
        && requests
            .iter()
            .all(|(k, v)| limits.get(k).is_some_and(|l| (l - v).abs() < 1e-6))
    {
        return "Guaranteed";
    }
    "Burstable"
}

/// One line per container for the loop panel: `container app: running, ready`.
pub(super) fn summarize<'a>(statuses: impl Iterator<Item = &'a ContainerStatus>) -> String {
    // Written piece by piece into one string: every pod sync summarises its containers.
    let mut out = String::with_capacity(64);
    for s in statuses {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str("container ");
        out.push_str(&s.name);
        out.push_str(": ");
        if s.state.running.is_some() {
            out.push_str(if s.ready {
                "running, ready"
            } else {
                "running, not ready"
            });
        } else if let Some(t) = &s.state.terminated {
            out.push_str("terminated (");
            out.push_str(t.reason.as_deref().unwrap_or(""));
            out.push_str(", exit ");
            out.push_str(&t.exit_code.to_string());
            out.push(')');
        } else {
            out.push_str("waiting (");
            out.push_str(
                s.state
                    .waiting
                    .as_ref()
                    .and_then(|w| w.reason.as_deref())
                    .unwrap_or(""),
            );
            out.push(')');
        }
        if s.restart_count > 0 {
            out.push_str(", ");
            out.push_str(&s.restart_count.to_string());
            out.push_str(" restarts");
        }
    }
    if out.is_empty() {
        "no container statuses".into()
    } else {
        out
    }
}
