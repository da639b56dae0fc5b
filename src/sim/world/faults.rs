//! Faults: one method per fault behind a short dispatch, and the heals that end the ones with a duration.

use super::*;
use crate::sim::machinery::storage_backend::StorageCall;

/// A rule that makes a component lose watch events.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct DropRule {
    pub(super) remaining: Option<u32>,
    pub(super) probability: Option<f64>,
    pub(super) kind: Option<Kind>,
    pub(super) event_type: Option<WatchEventType>,
    pub(super) until: Option<Millis>,
    /// The fault's trace entry: the cause of each drop, and which heal ends this rule.
    pub(super) fault: u64,
}

impl DropRule {
    /// The rule a DropWatchEvents asks for: the next `count` matching events (one by default),
    /// each with `probability`, or — with only a duration (`until`) — every one until then.
    fn new(
        count: Option<u32>,
        probability: Option<f64>,
        kind: &Option<String>,
        event_type: &Option<String>,
        until: Option<Millis>,
        fault: u64,
    ) -> Result<DropRule, String> {
        let kind = kind.as_deref().map(Kind::parse).transpose()?;
        let event_type = event_type
            .as_deref()
            .map(WatchEventType::parse)
            .transpose()?;
        if let Some(p) = probability {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("probability must be between 0 and 1, got {p}"));
            }
        }
        let (remaining, probability) = match (count, probability, until) {
            (_, Some(p), _) => (None, Some(p)),
            (Some(n), None, _) => (Some(n), None),
            (None, None, Some(_)) => (None, Some(1.0)),
            (None, None, None) => (Some(1), None),
        };
        Ok(DropRule {
            remaining,
            probability,
            kind,
            event_type,
            until,
            fault,
        })
    }
}

/// A rule that makes a component's watch lag.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct DelayRule {
    pub(super) delay: Millis,
    pub(super) until: Option<Millis>,
    pub(super) fault: u64,
}

/// A ConflictingWriter: a second writer racing the owner of one object.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Rival {
    pub(super) fault: u64,
    pub(super) until: Option<Millis>,
    /// The resourceVersion of its own latest write: a request based on it has seen the race.
    pub(super) last_rv: String,
    pub(super) writes: u64,
}

/// What a scheduled heal ends (each checks it still belongs to the fault that scheduled it).
#[derive(Clone, Debug)]
pub(super) enum Heal {
    Drop(Vec<ComponentId>),
    Delay(Vec<ComponentId>),
    Rival(ObjectKey),
    /// A container fault with a duration: the runtime already stops failing by itself; the
    /// heal wakes the kubelets so they notice and marks the moment in the trace.
    Container {
        fault: &'static str,
        pods: Vec<(String, ObjectKey)>,
    },
    /// A machine powered on by NodeUp has booted, unless it lost power again since (`boot`
    /// counts its power cuts): its kubelet starts.
    Boot {
        node: String,
        boot: u32,
    },
    /// A process CrashMidReconcile killed is started again, unless something started it since.
    Restart(Vec<ComponentId>),
}

/// How long a crashed control-plane process stays down: the kubelet's first CrashLoopBackOff
/// delay for its static pod.
pub(super) const CRASH_BACKOFF: Millis = 10_000;

/// The names a fault may use for the API server.
pub(super) fn is_api_server(name: &str) -> bool {
    matches!(name, "kube-apiserver" | "api-server" | "apiserver")
}

/// " for 30s" after a fault's description when it has a duration, else nothing.
pub(super) fn for_span(duration: Option<Millis>) -> String {
    duration.map_or(String::new(), |d| {
        format!(" for {}", crate::sim::time::format_duration(d))
    })
}

/// The resourceVersion a request is conditional on, if any (only those can meet 409 Conflict).
fn precondition_rv(req: &ApiRequest) -> Option<String> {
    match req {
        ApiRequest::Update(o) | ApiRequest::UpdateStatus(o) => {
            Some(o.meta().resource_version.clone())
                .filter(|rv| !rv.is_empty())
                .map(String::from)
        }
        ApiRequest::Patch { patch, .. } => patch
            .pointer("/metadata/resourceVersion")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        ApiRequest::Delete { options, .. } => options.precondition_resource_version.clone(),
        _ => None,
    }
}

impl Sim {
    /// Schedules a fault at simulated time `at`.
    pub fn schedule_fault(&mut self, at: Millis, fault: Fault) {
        self.schedule(at, Due::Fault(Box::new(fault)));
    }

    /// Injects a fault now. Returns a message for the learner (what happened, or why not).
    ///
    /// The fault's trace entry is pushed first, so that it is the root cause of everything the
    /// fault does at once (a DeletePod's DELETE, a restart's relist, a heal's 410) and of its
    /// heal; its description gets the outcome appended afterwards.
    pub fn inject(&mut self, fault: Fault) -> Result<String, String> {
        let seq = self.trace.push(
            self.now,
            None,
            TraceKind::Fault {
                fault: fault.name().into(),
                description: fault.describe(),
            },
        );
        let outer = self.fault_cause.replace(seq);
        let result = self.apply(&fault, seq);
        self.fault_cause = outer;
        let text = match &result {
            Ok(s) => s.clone(),
            Err(e) => format!("refused: {e}"),
        };
        if let Some(TraceEntry {
            kind: TraceKind::Fault { description, .. },
            ..
        }) = self.trace.get_mut(seq)
        {
            description.push_str(" — ");
            description.push_str(&text);
        }
        result
    }

    pub(super) fn component_arg(&self, name: &str) -> Result<Vec<ComponentId>, String> {
        if name == "controller-manager" || name == "kube-controller-manager" {
            return Ok(ComponentId::CONTROLLER_MANAGER.to_vec());
        }
        let id = match name {
            "kube-scheduler" => Some(ComponentId::Scheduler),
            other => ComponentId::parse(other),
        };
        let id = id.ok_or_else(|| format!("unknown component {name:?}"))?;
        if !self.components.contains_key(&id) {
            return Err(format!("unknown component {name:?}"));
        }
        Ok(vec![id])
    }

    pub(super) fn names(ids: &[ComponentId]) -> String {
        if ids.len() == ComponentId::CONTROLLER_MANAGER.len()
            && ComponentId::CONTROLLER_MANAGER
                .iter()
                .all(|c| ids.contains(c))
        {
            return "kube-controller-manager".into();
        }
        ids.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
    }

    /// The closed set of faults, one method each: what `inject` applies, `seq` being the fault's
    /// trace entry (the cause of what it does, and the key its heal checks).
    fn apply(&mut self, fault: &Fault, seq: u64) -> Result<String, String> {
        match fault {
            Fault::DeletePod { target } => self.delete_pods(target),
            Fault::NodeDown { node } => self.power_off(node),
            Fault::NodeUp { node } => self.power_on(node, seq),
            Fault::PartitionNode { node } => self.partition(node),
            Fault::HealNode { node } => self.repair(node),
            Fault::DropWatchEvents {
                component,
                count,
                probability,
                kind,
                event_type,
                duration,
            } => {
                let until = duration.map(|d| self.now + d);
                let rule = DropRule::new(*count, *probability, kind, event_type, until, seq)?;
                self.lose_watch_events(component, rule, *duration)
            }
            Fault::DelayWatchEvents {
                component,
                delay,
                duration,
            } => self.delay_watch_events(component, *delay, *duration, seq),
            Fault::RestartController { component } => self.restart(component),
            Fault::StopComponent { component } => self.crash(component),
            Fault::StartComponent { component } => self.start(component),
            Fault::EditObject { object, patch } => self.edit(object, patch),
            Fault::BreakImage { image } => Ok(self.set_image_broken(image, true)),
            Fault::FixImage { image } => Ok(self.set_image_broken(image, false)),
            Fault::CrashContainer { target, .. }
            | Fault::CrashLoop { target, .. }
            | Fault::OomKill { target }
            | Fault::FailReadiness { target, .. }
            | Fault::FailLiveness { target, .. } => self.inject_container_fault(fault, target, seq),
            Fault::ConflictingWriter { object, duration } => {
                self.race_writes_to(object, *duration, seq)
            }
            Fault::FailJobPods {
                job,
                namespace,
                count,
                exit_code,
            } => self.fail_job_pods(namespace, job, *count, *exit_code),
            Fault::FailVolumeProvisioning {
                storage_class,
                count,
            } => self.fail_storage_calls(StorageCall::Provision, storage_class, *count),
            Fault::FailVolumeExpansion {
                storage_class,
                count,
            } => self.fail_storage_calls(StorageCall::Expand, storage_class, *count),
            Fault::DetachVolume { claim, namespace } => self.detach_volume(namespace, claim),
            Fault::CrashMidReconcile {
                component,
                after_requests,
            } => self.arm_crash(component, *after_requests, seq),
            Fault::SetTriggerMode { component, mode } => {
                let mut out = Vec::new();
                for id in &self.component_arg(component)? {
                    out.push(self.set_trigger_mode(id, *mode)?);
                }
                Ok(out.join("\n"))
            }
            Fault::SetOperatorBug { bug, enabled } => self.set_operator_bug(*bug, *enabled),
            Fault::SetResync { component, period } => {
                let ids = self.component_arg(component)?;
                for id in &ids {
                    self.set_resync(id, *period);
                }
                Ok(match period {
                    Some(p) => format!(
                        "{} resyncs every {}",
                        Self::names(&ids),
                        crate::sim::time::format_duration((*p).max(1000))
                    ),
                    None => format!("{} never resyncs", Self::names(&ids)),
                })
            }
        }
    }

    /// FailVolumeProvisioning, FailVolumeExpansion: the storage system refuses the next `count`
    /// calls for volumes of `class` ("" = any).
    fn fail_storage_calls(
        &mut self,
        call: StorageCall,
        class: &str,
        count: u32,
    ) -> Result<String, String> {
        const MAX: u32 = 100;
        if count == 0 || count > MAX {
            return Err(format!("count must be between 1 and {MAX}"));
        }
        if !class.is_empty() {
            let kind =
                crate::sim::api::storage::class_kind().ok_or("StorageClasses are not served")?;
            if self.api.get(&ObjectKey::new(kind, "", class)).is_none() {
                return Err(format!("storageclasses.storage.k8s.io {class:?} not found"));
            }
        }
        self.storage.fail_next(call, class, count);
        let what = match call {
            StorageCall::Provision => "volume(s) asked",
            StorageCall::Expand => "expansion(s) asked",
        };
        let of = if class.is_empty() {
            "of any class".to_string()
        } else {
            format!("of StorageClass {class}")
        };
        Ok(format!(
            "the storage system will refuse the next {count} {what} {of}"
        ))
    }

    /// CrashMidReconcile: arms the crash; [`Sim::crash_mid_reconcile`] springs it.
    fn arm_crash(&mut self, component: &str, after: u32, seq: u64) -> Result<String, String> {
        const MAX: u32 = 100;
        if after > MAX {
            return Err(format!("afterRequests must be between 0 and {MAX}"));
        }
        if is_api_server(component) {
            return Err(
                "the API server has no reconcile loop: use StopComponent to take it down".into(),
            );
        }
        let ids = self.component_arg(component)?;
        for id in &ids {
            self.crash_after.insert(id.clone(), (after, seq));
        }
        Ok(format!(
            "{}: the next pass that sends more than {after} request(s) sends {after} and dies",
            Self::names(&ids)
        ))
    }

    /// Springs an armed CrashMidReconcile on a pass of `id` that sends `actions`: None when
    /// none is armed or the pass sends too few; otherwise how many requests get out and the
    /// crash's trace entry (their cause), after the process (all of kube-controller-manager for
    /// one of its controllers) was stopped, that entry told what got out and what was lost, and
    /// its restart was scheduled. The entry is caused by the fault, so that the fault timeline
    /// follows the crash, the writes that got out and the restart from it.
    pub(super) fn crash_mid_reconcile(
        &mut self,
        id: &ComponentId,
        actions: &[String],
        pass: u64,
    ) -> Option<(usize, u64)> {
        let (after, fault) = *self.crash_after.get(id)?;
        let after = after as usize;
        if actions.len() <= after {
            return None;
        }
        let process: Vec<ComponentId> = if ComponentId::CONTROLLER_MANAGER.contains(id) {
            ComponentId::CONTROLLER_MANAGER.to_vec()
        } else if matches!(id, ComponentId::KroInstance(_)) {
            // One process with kro's graph controller, which starts them again.
            vec![ComponentId::Kro]
        } else {
            vec![id.clone()]
        };
        self.crash_after.remove(id);
        for p in &process {
            self.crash_after.remove(p);
        }
        let list = |xs: &[String]| {
            if xs.is_empty() {
                "nothing".to_string()
            } else {
                xs.join("; ")
            }
        };
        let key = match self.trace.get(pass).map(|e| &e.kind) {
            Some(TraceKind::Reconcile(tr)) => format!(" of {}", tr.key),
            _ => String::new(),
        };
        let seq = self.trace.push(
            self.now,
            Some(fault),
            TraceKind::Fault {
                fault: "CrashMidReconcile".into(),
                description: format!(
                    "{} died in the middle of a pass{key} after sending {after} of its {} requests. Sent: {}. Lost: {}",
                    id.name(),
                    actions.len(),
                    list(&actions[..after]),
                    list(&actions[after..])
                ),
            },
        );
        for p in &process {
            self.stop_component(p);
        }
        self.schedule_heal(Some(self.now + CRASH_BACKOFF), seq, Heal::Restart(process));
        Some((after, seq))
    }

    /// DetachVolume: the disk bound to the claim falls off every node it is attached to.
    fn detach_volume(&mut self, namespace: &str, claim: &str) -> Result<String, String> {
        use crate::sim::api::storage::{attachable_handle, claim_kind, str_at, volume_kind};
        let (Some(claim_kind), Some(volume_kind)) = (claim_kind(), volume_kind()) else {
            return Err("PersistentVolumeClaims are not served".into());
        };
        let stored = self
            .api
            .get(&ObjectKey::new(claim_kind, namespace, claim))
            .ok_or_else(|| format!("persistentvolumeclaims {claim:?} not found"))?;
        let volume = stored
            .as_custom()
            .and_then(|c| str_at(c, &["spec", "volumeName"]))
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("persistentvolumeclaim {claim:?} is not bound to a volume yet"))?
            .to_string();
        let pv = self.api.get(&ObjectKey::new(volume_kind, "", &volume));
        let handle = pv
            .as_ref()
            .and_then(|o| o.as_custom())
            .and_then(attachable_handle)
            .map(str::to_string)
            .ok_or_else(|| {
                format!("volume {volume} is not a disk that attaches to a node (only the {} driver's are): nothing to detach", crate::sim::api::storage::DISK_DRIVER)
            })?;
        let nodes = self.storage.lose(&handle);
        if nodes.is_empty() {
            return Err(format!(
                "volume {volume} ({handle}) is not attached to any node"
            ));
        }
        Ok(format!(
            "disk {handle} of volume {volume} fell off {}; the driver's external-attacher checks every 60s",
            nodes.join(", ")
        ))
    }

    /// FailJobPods: the Job's next `count` pods each fail once.
    fn fail_job_pods(
        &mut self,
        namespace: &str,
        job: &str,
        count: u32,
        exit_code: i32,
    ) -> Result<String, String> {
        const MAX: u32 = 100;
        if count == 0 || count > MAX {
            return Err(format!("count must be between 1 and {MAX}"));
        }
        let kind = crate::sim::api::job::job_kind().ok_or("Jobs are not served")?;
        if self
            .api
            .get(&ObjectKey::new(kind, namespace, job))
            .is_none()
        {
            return Err(format!("jobs.batch {job:?} not found"));
        }
        self.job_failures
            .insert((Str::from(namespace), Str::from(job)), (count, exit_code));
        Ok(format!(
            "the next {count} pod(s) of Job {namespace}/{job} will exit {exit_code}"
        ))
    }

    /// What FailJobPods does as requests pass: a new pod of a Job it aims at is picked, and a
    /// picked pod, once bound, is handed to its machine, whose runtime makes its first run fail.
    pub(super) fn doom_job_pods(&mut self, req: &ApiRequest, stored: &Object) {
        if self.job_failures.is_empty() && self.doomed_pods.is_empty() {
            return;
        }
        let Some(pod) = stored.as_pod() else {
            return;
        };
        let uid = pod.metadata.uid.clone();
        match req {
            ApiRequest::Create(_) => {
                let Some(r) = pod.metadata.controller_ref().filter(|r| r.kind == "Job") else {
                    return;
                };
                let key = (pod.metadata.namespace.clone(), r.name.clone());
                if let Some((left, code)) = self.job_failures.get_mut(&key) {
                    self.doomed_pods.insert(uid.clone(), *code);
                    *left -= 1;
                    if *left == 0 {
                        self.job_failures.remove(&key);
                    }
                }
            }
            ApiRequest::Bind { node, .. } => {
                if let Some(code) = self.doomed_pods.remove(&uid) {
                    if let Some(m) = self.machines.get_mut(node.as_str()) {
                        m.runtime.doomed.insert(uid.clone(), code);
                    }
                }
            }
            _ => {}
        }
    }

    /// DeletePod: as `kubectl delete pod`, one line per pod.
    fn delete_pods(&mut self, target: &crate::sim::faults::PodTarget) -> Result<String, String> {
        let mut out = Vec::new();
        for key in self.select_pods(target)? {
            match self.submit(ApiRequest::Delete {
                key: key.clone(),
                options: DeleteOptions::default(),
            }) {
                Ok(_) => out.push(format!("pod \"{}\" deleted", key.name)),
                Err(e) => out.push(e.kubectl_message()),
            }
        }
        Ok(out.join("\n"))
    }

    /// NodeDown: the machine loses power; its kubelet and containers are gone.
    fn power_off(&mut self, node: &str) -> Result<String, String> {
        let m = self
            .machines
            .get_mut(node)
            .ok_or_else(|| format!("node {node:?} not found"))?;
        if !m.up {
            return Err(format!("node {node} is already down"));
        }
        m.up = false;
        m.kubelet_starts_at = None;
        m.runtime.power_off();
        self.machines_generation += 1;
        self.stop_component(&ComponentId::Kubelet(Str::from(node)));
        Ok(format!(
            "node {node} is down: its kubelet and containers are gone"
        ))
    }

    /// NodeUp: the machine boots for [`MACHINE_BOOT_MS`]; the heal that ends the boot starts
    /// its kubelet.
    fn power_on(&mut self, node: &str, seq: u64) -> Result<String, String> {
        let m = self
            .machines
            .get_mut(node)
            .ok_or_else(|| format!("node {node:?} not found"))?;
        if m.up {
            return Err(format!("node {node} is already up"));
        }
        m.up = true;
        let at = self.now.saturating_add(MACHINE_BOOT_MS);
        m.kubelet_starts_at = Some(at);
        let boot = m.runtime.reboots;
        self.machines_generation += 1;
        self.schedule_heal(
            Some(at),
            seq,
            Heal::Boot {
                node: node.to_string(),
                boot,
            },
        );
        Ok(format!(
            "node {node} is powered on: it boots, and in {} its kubelet starts, relists and reconciles its pods",
            crate::sim::time::format_duration(MACHINE_BOOT_MS)
        ))
    }

    /// PartitionNode: the kubelet is cut off from the API server.
    fn partition(&mut self, node: &str) -> Result<String, String> {
        let id = ComponentId::Kubelet(Str::from(node));
        let c = self
            .components
            .get_mut(&id)
            .ok_or_else(|| format!("node {node:?} not found"))?;
        if c.partitioned {
            return Err(format!("node {node} is already partitioned"));
        }
        c.partitioned = true;
        self.refresh_watchers(&id);
        Ok(format!(
            "node {node} is cut off from the API server; its containers keep running"
        ))
    }

    /// HealNode: the partition ends and the kubelet's watch resumes.
    fn repair(&mut self, node: &str) -> Result<String, String> {
        let id = ComponentId::Kubelet(Str::from(node));
        let c = self
            .components
            .get_mut(&id)
            .ok_or_else(|| format!("node {node:?} not found"))?;
        if !c.partitioned {
            return Err(format!("node {node} is not partitioned"));
        }
        c.partitioned = false;
        let running = c.running;
        self.refresh_watchers(&id);
        if running {
            self.resume_watch(&id);
        }
        Ok(format!(
            "node {node} reconnected: the kubelet resumes its watch (or relists after 410 Gone)"
        ))
    }

    /// DropWatchEvents: the components' informers lose what `rule` matches.
    fn lose_watch_events(
        &mut self,
        component: &str,
        rule: DropRule,
        duration: Option<Millis>,
    ) -> Result<String, String> {
        let ids = self.component_arg(component)?;
        for id in &ids {
            self.components.get_mut(id).expect("checked").drop = Some(rule.clone());
        }
        self.schedule_heal(rule.until, rule.fault, Heal::Drop(ids.clone()));
        let what = format!(
            "{}{} event{}",
            rule.kind.map_or(String::new(), |k| format!("{k} ")),
            rule.event_type.map_or("watch", |t| t.as_str()),
            if rule.remaining == Some(1) { "" } else { "s" }
        );
        let how = match (rule.remaining, rule.probability) {
            (Some(1), _) => format!("the next {what}"),
            (Some(n), _) => format!("the next {n} {what}"),
            (None, Some(p)) if p >= 1.0 => format!("every {what}"),
            (None, Some(p)) => format!("each {what} with probability {p}"),
            (None, None) => what,
        };
        let span = match duration {
            Some(d) => format!(
                " for {}; then its watch restarts and it relists",
                crate::sim::time::format_duration(d)
            ),
            None => String::new(),
        };
        Ok(format!("{} will lose {how}{span}", Self::names(&ids)))
    }

    /// DelayWatchEvents: the components' watches lag by `delay`.
    fn delay_watch_events(
        &mut self,
        component: &str,
        delay: Millis,
        duration: Option<Millis>,
        seq: u64,
    ) -> Result<String, String> {
        let until = duration.map(|d| self.now + d);
        let ids = self.component_arg(component)?;
        for id in &ids {
            self.components.get_mut(id).expect("checked").delay = Some(DelayRule {
                delay,
                until,
                fault: seq,
            });
        }
        self.schedule_heal(until, seq, Heal::Delay(ids.clone()));
        Ok(format!(
            "{}'s watch lags by {}{}",
            Self::names(&ids),
            crate::sim::time::format_duration(delay),
            for_span(duration)
        ))
    }

    /// RestartController: the process restarts (its memory is gone and it relists); for the
    /// API server, every watch breaks and reconnects from where it was.
    fn restart(&mut self, component: &str) -> Result<String, String> {
        if is_api_server(component) {
            self.resume_every_watch();
            return Ok("the API server restarted: every watch reconnects".into());
        }
        let ids = self.component_arg(component)?;
        for id in &ids {
            self.stop_component(id);
            self.start_component(id, "restarted");
        }
        Ok(format!(
            "{} restarted: caches, queues and expectations are gone; it relists",
            Self::names(&ids)
        ))
    }

    /// StopComponent: the process stops (the API server: every request gets 503).
    fn crash(&mut self, component: &str) -> Result<String, String> {
        if is_api_server(component) {
            if !self.api_server_up {
                return Err("the API server is already down".into());
            }
            self.api_server_up = false;
            return Ok(
                "the API server is down: every request gets 503 and is retried with back-off"
                    .into(),
            );
        }
        let ids = self.component_arg(component)?;
        for id in &ids {
            self.stop_component(id);
        }
        Ok(format!("{} stopped", Self::names(&ids)))
    }

    /// StartComponent: a stopped process starts and lists; the API server comes back and the
    /// watches resume.
    fn start(&mut self, component: &str) -> Result<String, String> {
        if is_api_server(component) {
            if self.api_server_up {
                return Err("the API server is already up".into());
            }
            self.api_server_up = true;
            self.resume_every_watch();
            return Ok("the API server is back: watches resume (or relist after 410 Gone)".into());
        }
        let ids = self.component_arg(component)?;
        for id in &ids {
            if !self.is_running(id) {
                self.start_component(id, "started");
            }
        }
        Ok(format!("{} started", Self::names(&ids)))
    }

    /// Every running, connected component reconnects its watch.
    fn resume_every_watch(&mut self) {
        let ids: Vec<ComponentId> = self
            .components
            .iter()
            .filter(|(_, c)| c.running && !c.partitioned)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            self.resume_watch(&id);
        }
    }

    /// EditObject: a merge patch from outside the control plane.
    fn edit(&mut self, object: &str, patch: &serde_json::Value) -> Result<String, String> {
        let key = ObjectKey::parse_ref(object)?;
        match self.submit(ApiRequest::Patch {
            key,
            patch: patch.clone(),
            status: false,
        }) {
            Ok(o) => Ok(format!("{} edited", o.key())),
            Err(e) => Err(e.kubectl_message()),
        }
    }

    /// BreakImage / FixImage: whether the registry serves `image`.
    fn set_image_broken(&mut self, image: &str, broken: bool) -> String {
        if broken {
            self.broken_images.insert(image.to_string());
        } else {
            self.broken_images.remove(image);
        }
        self.machines
            .for_each_mut(|_, m| m.runtime.set_image_broken(image, broken));
        if broken {
            format!("the registry no longer serves {image}")
        } else {
            format!("the registry serves {image} again")
        }
    }

    /// ConflictingWriter: a rival races every controller write to `object`.
    fn race_writes_to(
        &mut self,
        object: &str,
        duration: Option<Millis>,
        seq: u64,
    ) -> Result<String, String> {
        let key = ObjectKey::parse_ref(object)?;
        if self.api.get(&key).is_none() {
            return Err(format!(
                "{} \"{}\" not found",
                key.kind.resource(),
                key.name
            ));
        }
        let until = duration.map(|d| self.now + d);
        self.rivals.insert(
            key.clone(),
            Rival {
                fault: seq,
                until,
                last_rv: String::new(),
                writes: 0,
            },
        );
        self.schedule_heal(until, seq, Heal::Rival(key.clone()));
        Ok(format!(
            "a second writer races every controller write to {key}{}: each gets 409 Conflict once and is retried from a fresh read",
            for_span(duration)
        ))
    }

    /// A ConflictingWriter's move: just before a controller's conditional write to the object
    /// (Update, UpdateStatus, or a patch or delete carrying a resourceVersion) that would succeed,
    /// the rival writes the object first, so the controller's write meets 409 Conflict. A write
    /// based on the rival's own latest version has re-read since, and goes through: every write is
    /// raced once, costs one 409 and a back-off retry, and nothing is lost.
    pub(super) fn race_conflicting_writer(&mut self, req: &ApiRequest) {
        if self.rivals.is_empty() {
            return;
        }
        let key = req.key();
        let Some(rival) = self.rivals.get(&key) else {
            return;
        };
        if rival.until.is_some_and(|u| self.now >= u) {
            return;
        }
        let Some(base) = precondition_rv(req) else {
            return;
        };
        let Some(live) = self.api.get(&key) else {
            return;
        };
        let live_rv = &live.meta().resource_version;
        if base != *live_rv || *live_rv == rival.last_rv {
            return;
        }
        let (fault, n) = (rival.fault, rival.writes + 1);
        let patch =
            serde_json::json!({"metadata": {"annotations": {RIVAL_ANNOTATION: n.to_string()}}});
        let result = self.send_as(
            RIVAL_ACTOR.into(),
            false,
            &ApiRequest::Patch {
                key: key.clone(),
                patch,
                status: false,
            },
            Some(fault),
        );
        if let (Ok(obj), Some(r)) = (result, self.rivals.get_mut(&key)) {
            r.last_rv = obj.meta().resource_version.to_string();
            r.writes = n;
        }
    }

    /// Ends a fault whose duration is over, unless something newer replaced it.
    pub(super) fn heal(&mut self, fault: u64, heal: Heal) {
        match heal {
            Heal::Drop(ids) => self.heal_drop(fault, ids),
            Heal::Delay(ids) => self.heal_delay(fault, ids),
            Heal::Rival(key) => self.heal_rival(fault, key),
            Heal::Boot { node, boot } => self.finish_boot(fault, node, boot),
            Heal::Restart(ids) => {
                let down: Vec<ComponentId> =
                    ids.into_iter().filter(|id| !self.is_running(id)).collect();
                if down.is_empty() {
                    return;
                }
                let seq = self.trace_heal(
                    fault,
                    "CrashMidReconcile",
                    format!(
                        "{} started again after its crash back-off: it relists and reconciles everything",
                        Self::names(&down)
                    ),
                );
                let outer = self.fault_cause.replace(seq);
                for id in &down {
                    self.start_component(id, "restarted");
                }
                self.fault_cause = outer;
            }
            Heal::Container { fault: name, pods } => {
                let seq = self.trace_heal(
                    fault,
                    name,
                    format!(
                        "the container fault on {} is over",
                        pods.iter()
                            .map(|(_, k)| format!("pod \"{}\"", k.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
                for (node, key) in pods {
                    self.wake_kubelet(node, key, seq);
                }
            }
        }
    }

    /// A heal's trace entry, caused by its fault.
    fn trace_heal(&mut self, fault: u64, name: &str, text: String) -> u64 {
        self.trace.push(
            self.now,
            Some(fault),
            TraceKind::Fault {
                fault: name.into(),
                description: format!("healed — {text}"),
            },
        )
    }

    /// The components that lost watch events hear everything again, and relist to catch up.
    fn heal_drop(&mut self, fault: u64, ids: Vec<ComponentId>) {
        let ids = self.still_under(ids, fault, |c| c.drop.as_ref().map(|r| r.fault));
        if ids.is_empty() {
            return;
        }
        let seq = self.trace_heal(
            fault,
            "DropWatchEvents",
            format!(
                "{} receives every watch event again; its watch restarts and it relists to catch up",
                Self::names(&ids)
            ),
        );
        let outer = self.fault_cause.replace(seq);
        for id in &ids {
            let c = self.components.get_mut(id).expect("filtered above");
            c.drop = None;
            if !c.running {
                continue;
            }
            if c.partitioned {
                c.needs_relist = true;
            } else {
                self.relist_with(id, "watch restarted after lost events", true);
            }
        }
        self.fault_cause = outer;
    }

    /// The components among `ids` whose rule (`fault_of`) is still the one fault `fault` set:
    /// a newer fault of the same kind replaced the others, and its own heal ends it.
    fn still_under(
        &self,
        ids: Vec<ComponentId>,
        fault: u64,
        fault_of: impl Fn(&Component) -> Option<u64>,
    ) -> Vec<ComponentId> {
        ids.into_iter()
            .filter(|id| self.components.get(id).and_then(&fault_of) == Some(fault))
            .collect()
    }

    /// The lagging watches are on time again.
    fn heal_delay(&mut self, fault: u64, ids: Vec<ComponentId>) {
        let ids = self.still_under(ids, fault, |c| c.delay.as_ref().map(|r| r.fault));
        if ids.is_empty() {
            return;
        }
        for id in &ids {
            self.components.get_mut(id).expect("filtered above").delay = None;
        }
        self.trace_heal(
            fault,
            "DelayWatchEvents",
            format!("{}'s watch is on time again", Self::names(&ids)),
        );
    }

    /// The conflicting writer stops.
    fn heal_rival(&mut self, fault: u64, key: ObjectKey) {
        if self.rivals.get(&key).is_none_or(|r| r.fault != fault) {
            return;
        }
        let rival = self.rivals.remove(&key).expect("checked");
        self.trace_heal(
            fault,
            "ConflictingWriter",
            format!(
                "the second writer stopped after racing {} write{} to {key}",
                rival.writes,
                if rival.writes == 1 { "" } else { "s" }
            ),
        );
    }

    /// A machine powered on by NodeUp has booted (unless it lost power again): its kubelet
    /// starts.
    fn finish_boot(&mut self, fault: u64, node: String, boot: u32) {
        let Some(m) = self
            .machines
            .get_mut(node.as_str())
            .filter(|m| m.up && m.runtime.reboots == boot)
        else {
            return;
        };
        m.kubelet_starts_at = None;
        self.machines_generation += 1;
        // Not "healed": NodeUp is the repair, and this is the end of its boot.
        let seq = self.trace.push(
            self.now,
            Some(fault),
            TraceKind::Fault {
                fault: "NodeUp".into(),
                description: format!(
                    "booted — node {node} finished booting: its kubelet starts, relists and reconciles its pods"
                ),
            },
        );
        let id = ComponentId::Kubelet(Str::from(node));
        if let Some(c) = self.components.get_mut(&id) {
            c.partitioned = false;
        }
        let outer = self.fault_cause.replace(seq);
        self.start_component(&id, "node booted");
        self.fault_cause = outer;
    }

    /// A container fault changed `node`'s runtime: its running kubelet looks at the pod at its
    /// next PLEG relist.
    fn wake_kubelet(&mut self, node: String, key: ObjectKey, cause: u64) {
        let id = ComponentId::Kubelet(Str::from(node));
        if let Some(gen) = self
            .components
            .get(&id)
            .filter(|c| c.running)
            .map(|c| c.generation)
        {
            let at = crate::sim::machinery::node_runtime::next_relist(self.now);
            self.requeue_caused(&id, gen, key, at, "requeue", Some(cause));
        }
    }

    /// Container faults change the machine's runtime; the kubelet notices at its next PLEG relist.
    pub(super) fn inject_container_fault(
        &mut self,
        fault: &Fault,
        target: &crate::sim::faults::PodTarget,
        seq: u64,
    ) -> Result<String, String> {
        let now = self.now;
        let (mut done, mut refused, mut hit) = (Vec::new(), Vec::new(), Vec::new());
        for key in self.select_pods(target)? {
            let Some(pod) = self.api.get(&key).and_then(|o| o.as_pod()).cloned() else {
                continue;
            };
            let container = match &target.container {
                Some(name) => pod
                    .spec
                    .containers
                    .iter()
                    .chain(&pod.spec.init_containers)
                    .find(|c| &c.name == name),
                None => pod.spec.containers.first(),
            };
            let Some(container) = container else {
                refused.push(format!(
                    "pod \"{}\" has no container {:?}",
                    key.name,
                    target.container.as_deref().unwrap_or("")
                ));
                continue;
            };
            let node = pod.spec.node_name.clone();
            let Some(machine) = self.machines.get_mut(node.as_str()).filter(|m| m.up) else {
                refused.push(format!("pod \"{}\" is not running on any node", key.name));
                continue;
            };
            match machine
                .runtime
                .inject(fault, &pod.metadata.uid, &key.name, container, now)
            {
                Ok(msg) => {
                    done.push(msg);
                    hit.push((node.to_string(), key.clone()));
                    self.wake_kubelet(node.to_string(), key, seq);
                }
                Err(e) => refused.push(e),
            }
        }
        if done.is_empty() {
            return Err(refused.join("\n"));
        }
        let duration = match fault {
            Fault::CrashLoop { duration, .. }
            | Fault::FailReadiness { duration, .. }
            | Fault::FailLiveness { duration, .. } => *duration,
            _ => None,
        };
        self.schedule_heal(
            duration.map(|d| now + d),
            seq,
            Heal::Container {
                fault: fault.name(),
                pods: hit,
            },
        );
        done.extend(refused);
        Ok(done.join("\n"))
    }

    /// Pods a fault targets, by name or selector.
    pub fn select_pods(
        &self,
        target: &crate::sim::faults::PodTarget,
    ) -> Result<Vec<ObjectKey>, String> {
        if let Some(name) = &target.pod {
            let key = ObjectKey::new(Kind::Pod, &target.namespace, name);
            return if self.api.get(&key).is_some() {
                Ok(vec![key])
            } else {
                Err(format!("pods \"{name}\" not found"))
            };
        }
        let Some(sel) = &target.selector else {
            return Err("name a pod or a selector".into());
        };
        let selector = LabelSelector::parse(sel)?;
        let keys: Vec<ObjectKey> = self
            .api
            .list(Kind::Pod)
            .filter(|o| {
                o.meta().namespace == target.namespace && selector.matches(&o.meta().labels)
            })
            .map(|o| o.key())
            .collect();
        if keys.is_empty() {
            return Err(format!("no pods match {sel:?}"));
        }
        Ok(keys)
    }

    /// Schedules the heal that ends fault `fault`'s effect at `at`; a fault with no duration
    /// (`at` None) lasts until the world is reset.
    pub(super) fn schedule_heal(&mut self, at: Option<Millis>, fault: u64, heal: Heal) {
        if let Some(at) = at {
            self.schedule(at, Due::Heal { fault, heal });
        }
    }
}
