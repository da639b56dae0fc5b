//! `pkg/kubelet/prober`: one worker per probe and container instance; liveness, readiness and
//! startup results, and what a failed probe prints.

use super::*;

impl Kubelet {
    /// Replays each probe worker's ticks up to `now`. Returns the containers a failed liveness or
    /// startup probe condemns, with the kill message.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_probes(
        &mut self,
        obj: &Rc<Object>,
        pod: &Pod,
        rt: &NodeRuntime,
        now: Millis,
        terminating: bool,
        out: &mut Outcome,
        wake: &mut Option<Millis>,
    ) -> BTreeMap<Str, String> {
        let uid = pod.metadata.uid.clone();
        let pod_ip = rt.pods.get(&uid).map(|s| s.ip.clone()).unwrap_or_default();
        let mut kills = BTreeMap::new();
        let sidecars = pod
            .spec
            .init_containers
            .iter()
            .filter(|c| Role::of_init(c) == Role::Sidecar);
        let probed = sidecars
            .map(|c| (c, Role::Sidecar))
            .chain(pod.spec.containers.iter().map(|c| (c, Role::App)));
        for (c, role) in probed {
            let Some(cur) = rt.container(&uid, &c.name).filter(|x| x.running) else {
                continue;
            };
            let started_at = cur.started_at.unwrap_or(now);
            for (kind, probe) in [
                (ProbeKind::Startup, &c.startup_probe),
                (ProbeKind::Readiness, &c.readiness_probe),
                (ProbeKind::Liveness, &c.liveness_probe),
            ] {
                let Some(probe) = probe else { continue };
                if terminating && kind != ProbeKind::Readiness {
                    continue;
                }
                let gate: Option<Millis> =
                    if kind == ProbeKind::Startup || c.startup_probe.is_none() {
                        Some(0)
                    } else {
                        self.probes
                            .get(&(uid.clone(), c.name.clone(), ProbeKind::Startup))
                            .filter(|w| w.container_id == cur.id)
                            .and_then(|w| w.succeeded_at)
                    };
                let period = probe.period_seconds.unwrap_or(10).max(1) as Millis * 1000;
                let delay = probe.initial_delay_seconds.unwrap_or(0).max(0) as Millis * 1000;
                let success_threshold = probe.success_threshold.unwrap_or(1).max(1);
                let failure_threshold = probe.failure_threshold.unwrap_or(3).max(1);
                let wk = (uid.clone(), c.name.clone(), kind);
                let fresh = self
                    .probes
                    .get(&wk)
                    .is_none_or(|w| w.container_id != cur.id);
                if fresh {
                    let first = started_at + delay;
                    let next_tick = if first >= now {
                        first
                    } else if kind == ProbeKind::Readiness {
                        now
                    } else {
                        first + (now - first).div_ceil(period) * period
                    };
                    let result = match kind {
                        ProbeKind::Readiness => Some(false),
                        ProbeKind::Liveness => Some(true),
                        ProbeKind::Startup => None,
                    };
                    self.probes.insert(
                        wk.clone(),
                        ProbeWorker {
                            container_id: cur.id.clone(),
                            next_tick,
                            result,
                            last_raw: None,
                            run: 0,
                            on_hold: false,
                            succeeded_at: None,
                        },
                    );
                }
                let w = self.probes.get_mut(&wk).expect("inserted above");
                let mut ticks = 0;
                while w.next_tick <= now {
                    let t = w.next_tick;
                    let done = w.on_hold || w.succeeded_at.is_some();
                    let gated = gate.is_none_or(|g| t < g);
                    let quiet = w.settled() && rt.fault_free(&uid, &c.name, kind, &cur.id, t, now);
                    if done || quiet || ticks >= MAX_PROBE_TICKS || (gated && gate.is_none()) {
                        w.next_tick = t + ((now - t) / period + 1) * period;
                        break;
                    }
                    w.next_tick = t + period;
                    if gated {
                        continue;
                    }
                    ticks += 1;
                    let raw = rt.app_answers(&uid, &c.name, kind, &cur.id, t);
                    if w.last_raw == Some(raw) {
                        w.run += 1;
                    } else {
                        w.last_raw = Some(raw);
                        w.run = 1;
                    }
                    if !raw {
                        out.event(
                            EventRecord::warning(
                                obj,
                                "Unhealthy",
                                format!(
                                    "{} probe failed: {}",
                                    kind.as_str(),
                                    probe_failure_output(probe, kind, &pod_ip)
                                ),
                            )
                            .at_field(role.field(&c.name)),
                        );
                    }
                    let threshold = if raw {
                        success_threshold
                    } else {
                        failure_threshold
                    };
                    if w.run >= threshold {
                        w.result = Some(raw);
                        if raw && kind == ProbeKind::Startup {
                            w.succeeded_at = Some(t);
                        }
                        if !raw && kind != ProbeKind::Readiness {
                            w.on_hold = true;
                            w.run = 0;
                            kills.insert(
                                c.name.clone(),
                                format!(
                                    "Container {} failed {} probe",
                                    c.name,
                                    kind.as_str().to_lowercase()
                                ),
                            );
                        }
                    }
                }
                let finished = w.on_hold || w.succeeded_at.is_some();
                let quiet =
                    w.settled() && rt.app_answers(&uid, &c.name, kind, &cur.id, w.next_tick);
                if !finished && !quiet {
                    *wake = min_opt(*wake, w.next_tick);
                }
            }
        }
        kills
    }

    /// The published result of a probe for one container instance (true when there is no probe).
    pub(super) fn probe_passed(
        &self,
        uid: &Str,
        c: &Container,
        container_id: &str,
        kind: ProbeKind,
        probe: Option<&Probe>,
    ) -> bool {
        if probe.is_none() {
            return true;
        }
        self.probes
            .get(&(uid.clone(), c.name.clone(), kind))
            .filter(|w| w.container_id == container_id)
            .is_some_and(|w| w.result == Some(true) || w.succeeded_at.is_some())
    }
}

/// One probe worker's memory, for one container instance.
#[derive(Clone, Debug)]
pub(super) struct ProbeWorker {
    container_id: String,
    next_tick: Millis,
    /// The published result: `None` is Unknown (startup probes start there).
    result: Option<bool>,
    last_raw: Option<bool>,
    run: i64,
    /// A failed liveness/startup probe stops probing until a new container instance appears.
    on_hold: bool,
    /// When a startup probe succeeded; it is not run again for this instance.
    succeeded_at: Option<Millis>,
}

impl ProbeWorker {
    pub(super) fn settled(&self) -> bool {
        self.result == Some(true) && self.last_raw != Some(false)
    }
}

/// What a failing probe reports, per mechanism.
pub(super) fn probe_failure_output(probe: &Probe, kind: ProbeKind, pod_ip: &str) -> String {
    if probe.http_get.is_some() {
        return format!(
            "HTTP probe failed with statuscode: {}",
            kind.failing_status_code()
        );
    }
    if let Some(tcp) = &probe.tcp_socket {
        let port = tcp.get("port").map(|p| match p {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        });
        let port = port.unwrap_or_default();
        return format!("dial tcp {pod_ip}:{port}: connect: connection refused");
    }
    if probe.grpc.is_some() {
        return "service unhealthy (responded with \"NOT_SERVING\")".into();
    }
    String::new()
}
