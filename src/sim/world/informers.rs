//! The informer driver: starting, stopping and relisting components, their work queues, timers and resyncs — the loop around each controller's `reconcile`.

use super::*;
use crate::sim::api::object_map::NO_SLOT;
use crate::sim::machinery::trace::ReconcileTrace;
use crate::vec_map::LookupSet;

impl Sim {
    pub(super) fn start_component(&mut self, id: &ComponentId, reason: &str) {
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        c.running = true;
        c.generation += 1;
        if let Some(fresh) = c.ctrl.restarted() {
            c.ctrl = fresh;
        }
        c.queue.clear();
        c.requeues.clear();
        c.triggers.clear();
        c.pump_scheduled = false;
        self.refresh_watchers(id);
        self.relist(id, reason);
        let gen = self.components[id].generation;
        self.tick(id, gen);
        self.arm_resync(id);
    }

    /// Schedules a component's next resync from its configured period (or none).
    pub(super) fn arm_resync(&mut self, id: &ComponentId) {
        let period = self.config.resync.get(id).copied();
        let now = self.now;
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        c.resync_at = period.map(|p| now + p);
        let gen = c.generation;
        if let Some(at) = c.resync_at {
            self.schedule(
                at,
                Due::Resync {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    pub(super) fn stop_component(&mut self, id: &ComponentId) {
        if let Some(c) = self.components.get_mut(id) {
            c.running = false;
            c.generation += 1;
            c.pump_scheduled = false;
        }
        self.refresh_watchers(id);
        // kro's instance controllers live in its process: they stop with it, and its restarted
        // graph controller registers them again.
        if *id == ComponentId::Kro {
            let instances: Vec<ComponentId> = self
                .components
                .keys()
                .filter(|k| matches!(k, ComponentId::KroInstance(_)))
                .cloned()
                .collect();
            for i in instances {
                self.stop_component(&i);
            }
        }
    }

    pub(super) fn relist(&mut self, id: &ComponentId, reason: &str) {
        self.relist_with(id, reason, false);
    }

    /// An informer's LIST. A (re)started process starts from an empty cache and queues every
    /// key. The same process relisting (410 Gone, a watch that was broken) keeps its handlers'
    /// state: like client-go's Replace, the handlers see what changed since the cache's view —
    /// new objects as ADDED, changed ones as MODIFIED, vanished ones as DELETED tombstones
    /// (`DeletedFinalStateUnknown`) — so expectations and bookkeeping catch up. Edge-triggered
    /// components refresh their cache but are told nothing.
    pub(super) fn relist_with(&mut self, id: &ComponentId, reason: &str, same_process: bool) {
        let api_up = self.api_server_up;
        let cause = self.fault_cause;
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        if !api_up {
            // The LIST fails; informers wait for their first sync before any worker runs.
            if !same_process {
                c.cache.clear();
                c.queue.clear();
            }
            c.needs_relist = true;
            let err = ApiError::unavailable();
            self.trace.push(
                self.now,
                cause,
                TraceKind::List {
                    component: id.name().into(),
                    reason: format!("{reason}: failed: {} {}", err.code(), err.message),
                    objects: 0,
                },
            );
            return;
        }
        c.needs_relist = false;
        let old = c.cache.take();
        for kind in c.ctrl.watched_kinds() {
            for (key, obj) in self.api.list_keyed(*kind) {
                if c.ctrl.accepts(obj) {
                    c.cache.upsert_shared(obj.clone(), key, NO_SLOT);
                }
            }
        }
        if c.ctrl.watches_custom_kinds() {
            for (key, obj) in self.api.list_custom_keyed() {
                if c.ctrl.watches(key.kind) && c.ctrl.accepts(obj) {
                    c.cache.upsert_shared(obj.clone(), key, NO_SLOT);
                }
            }
        }
        let rv = self.api.resource_version();
        c.cache.last_rv = rv;
        let selected: LookupSet<ObjectKey> = if c.ctrl.has_field_selector() {
            c.cache.all().map(|o| o.key()).collect()
        } else {
            LookupSet::default()
        };
        if let Some(node) = routing_of(id, c.ctrl.as_ref()) {
            for key in c.selected.difference(&selected) {
                release(&mut self.routed_selected, key, node);
            }
            for key in selected.difference(&c.selected) {
                hold(&mut self.routed_selected, key, node);
            }
        }
        c.selected = selected;
        let n = c.cache.len();
        let gen = c.generation;
        let edge = c.mode == TriggerMode::Edge;
        let seq = self.trace.push(
            self.now,
            cause,
            TraceKind::List {
                component: id.name().into(),
                reason: reason.into(),
                objects: n,
            },
        );
        if edge {
            return;
        }
        let mut keys: Vec<(ObjectKey, Option<u64>)> = Vec::new();
        if same_process {
            let mut changes = Vec::new();
            for obj in c.cache.all() {
                match old.get(&obj.key()) {
                    None => changes.push((WatchEventType::Added, obj.clone(), None)),
                    Some(prev) if prev.meta().resource_version != obj.meta().resource_version => {
                        changes.push((WatchEventType::Modified, obj.clone(), Some(prev.clone())))
                    }
                    Some(_) => {}
                }
            }
            for prev in old.all() {
                if c.cache.get(&prev.key()).is_none() {
                    changes.push((WatchEventType::Deleted, prev.clone(), Some(prev.clone())));
                }
            }
            for (type_, object, prev) in changes {
                let ev = WatchEvent::new(type_, object, rv, seq);
                let found = c.ctrl.keys_for_event(&ev, prev.as_ref(), &c.cache);
                let ev_seq = self.trace.push(
                    self.now,
                    Some(seq),
                    TraceKind::Watch {
                        component: id.name().into(),
                        event_type: type_.into(),
                        object: self.api.trace_name(&ev.key, ev.slot),
                        resource_version: rv,
                        delivery: Delivery::Delivered,
                    },
                );
                keys.extend(found.into_iter().map(|k| (k, Some(ev_seq))));
            }
        }
        keys.extend(
            c.ctrl
                .keys_for_resync(&c.cache)
                .into_iter()
                .map(|k| (k, Some(seq))),
        );
        for (k, cause) in keys {
            self.enqueue(id, gen, k, "relist", cause);
        }
    }

    pub(super) fn enqueue(
        &mut self,
        id: &ComponentId,
        gen: u32,
        key: ObjectKey,
        trigger: &'static str,
        cause: Option<u64>,
    ) {
        let cost = self.config.reconcile_cost;
        let now = self.now;
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        if !c.running || c.generation != gen {
            return;
        }
        if c.queue.add(key.clone()) {
            c.triggers.insert(key, (trigger, cause));
        }
        if !c.pump_scheduled {
            c.pump_scheduled = true;
            self.schedule(
                now + cost,
                Due::Pump {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    /// client-go's `processNextWorkItem`: takes the next key off a component's queue, runs its
    /// reconcile, and sends the requests it returned (they reach the API server after its latency).
    pub(super) fn process_next_work_item(&mut self, id: &ComponentId, gen: u32) {
        let now = self.now;
        let cost = self.config.reconcile_cost;
        let api_latency = self.jitter(self.config.api_latency);
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        if !c.running || c.generation != gen {
            return;
        }
        c.pump_scheduled = false;
        let Some(key) = c.queue.pop() else { return };
        let (trigger, cause) = c.triggers.remove(&key).unwrap_or(("requeue", None));
        let (runtime, storage) = match id {
            ComponentId::Kubelet(node) => {
                (self.machines.get_mut(node).map(|m| &mut m.runtime), None)
            }
            ComponentId::Provisioner | ComponentId::CsiDisk => (None, Some(&mut self.storage)),
            _ => (None, None),
        };
        let mut ctx = Ctx {
            now,
            cache: &c.cache,
            rng: &mut c.rng,
            runtime,
            storage,
        };
        let mut outcome: Outcome = c.ctrl.reconcile(&key, &mut ctx);
        let changes = std::mem::take(&mut outcome.controllers);
        if !c.queue.is_empty() {
            c.pump_scheduled = true;
        }
        let more = c.pump_scheduled;
        let n_requests = outcome.requests().count();
        let actions: Vec<String> = outcome
            .requests()
            .map(|r| describe_request(r, c.cache.get(&r.key()).map(|o| &**o)))
            .collect();
        let seq = self.trace.push(
            now,
            cause,
            TraceKind::Reconcile(Box::new(ReconcileTrace {
                component: c.name.clone(),
                key: key.trace_name(),
                trigger,
                record: outcome.record.clone().map(Box::new),
                requests: n_requests,
                actions: actions.clone(),
            })),
        );
        if let Some((sent, crash)) = self.crash_mid_reconcile(id, &actions, seq) {
            // The process died mid-pass: what it had sent is on the wire, the rest, its events
            // and its requeues died with it.
            let mut left = sent;
            let batches: Vec<Vec<ApiRequest>> = outcome
                .batches
                .into_iter()
                .map(|b| {
                    let take = b.len().min(left);
                    left -= take;
                    b.into_iter().take(take).collect::<Vec<_>>()
                })
                .filter(|b| !b.is_empty())
                .collect();
            if !batches.is_empty() {
                self.schedule(
                    now + api_latency,
                    Due::Api(Box::new(ApiCall {
                        from: id.clone(),
                        gen,
                        key,
                        batches,
                        cause: crash,
                        sent: Sent::default(),
                    })),
                );
            }
            return;
        }
        for e in &outcome.events {
            self.record_event(id, e, Some(seq));
        }
        for change in changes {
            match change {
                ControllerChange::Start(ctrl) => self.add_component(ctrl),
                ControllerChange::Stop(other) => {
                    self.retire_component(&other);
                }
            }
        }
        if let Some(after) = outcome.requeue_after {
            self.requeue_caused(id, gen, key.clone(), now + after, "requeue", Some(seq));
        }
        let backs_off = outcome.error.is_some() || outcome.rate_limited;
        if backs_off {
            let c = self.components.get_mut(id).expect("exists");
            let delay = c.queue.backoff(&key);
            self.requeue_caused(id, gen, key.clone(), now + delay, "retry", Some(seq));
        }
        if n_requests > 0 {
            self.schedule(
                now + api_latency,
                Due::Api(Box::new(ApiCall {
                    from: id.clone(),
                    gen,
                    key,
                    batches: outcome.batches,
                    cause: seq,
                    sent: Sent::default(),
                })),
            );
        } else if !backs_off {
            if let Some(c) = self.components.get_mut(id) {
                c.queue.forget(&key);
            }
        }
        if more {
            self.schedule(
                now + cost,
                Due::Pump {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    /// Queues `key` again at `at`, remembering why (the trigger and the trace entry behind it).
    pub(super) fn requeue_caused(
        &mut self,
        id: &ComponentId,
        gen: u32,
        key: ObjectKey,
        at: Millis,
        trigger: &'static str,
        cause: Option<u64>,
    ) {
        debug_assert!(matches!(trigger, "requeue" | "retry"), "{trigger}");
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        if let Some(&existing) = c.requeues.get(&key) {
            if existing <= at {
                return;
            }
        }
        c.requeues.insert(key.clone(), at);
        self.schedule(
            at,
            Due::Requeue {
                to: id.clone(),
                gen,
                key,
                retry: trigger == "retry",
                cause,
            },
        );
    }

    pub(super) fn tick(&mut self, id: &ComponentId, gen: u32) {
        let now = self.now;
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        if !c.running || c.generation != gen {
            return;
        }
        let (keys, next) = c.ctrl.tick(now);
        for k in keys {
            self.enqueue(id, gen, k, "timer", None);
        }
        if let Some(next) = next {
            self.schedule(
                now + next.max(1),
                Due::Tick {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    pub(super) fn resync(&mut self, id: &ComponentId, gen: u32) {
        let Some(c) = self.components.get(id) else {
            return;
        };
        // A timer from before the period changed, or a second one for the same moment.
        if !c.running || c.generation != gen || c.resync_at != Some(self.now) {
            return;
        }
        // An edge-triggered component never looks at everything again.
        let keys = if c.mode == TriggerMode::Edge {
            Vec::new()
        } else {
            c.ctrl.keys_for_resync(&c.cache)
        };
        for k in keys {
            self.enqueue(id, gen, k, "resync", None);
        }
        self.arm_resync(id);
    }

    /// Changes a component's resync period (None turns resync off) from now on.
    pub fn set_resync(&mut self, id: &ComponentId, period: Option<Millis>) {
        match period {
            Some(p) => {
                self.config.resync.insert(id.clone(), p.max(1000));
            }
            None => {
                self.config.resync.remove(id);
            }
        }
        // The next resync is one new period from now; timers armed before are ignored.
        if self.is_running(id) {
            self.arm_resync(id);
        }
    }

    /// Switches a component between level- and edge-triggered reconciliation, a teaching device
    /// (see [`crate::sim::faults::EDGE_TRIGGERED_NOTE`]). The component restarts with the other
    /// implementation, so its in-memory state is lost; in edge mode its relists and resyncs
    /// queue nothing and it acts only on each event's delta.
    pub fn set_trigger_mode(
        &mut self,
        id: &ComponentId,
        mode: TriggerMode,
    ) -> Result<String, String> {
        let c = self
            .components
            .get(id)
            .ok_or_else(|| format!("unknown component {:?}", id.name()))?;
        if c.mode == mode {
            return Ok(format!("{id} is already {}-triggered", mode.as_str()));
        }
        let ctrl = controllers::for_trigger_mode(id, mode).ok_or_else(|| {
            format!(
                "{id} has no {}-triggered variant (only replicaset-controller has one)",
                mode.as_str()
            )
        })?;
        let running = c.running;
        let c = self.components.get_mut(id).expect("checked above");
        c.ctrl = ctrl;
        c.mode = mode;
        self.refresh_watchers(id);
        if running {
            self.stop_component(id);
            self.start_component(id, &format!("restarted {}-triggered", mode.as_str()));
        }
        Ok(match mode {
            TriggerMode::Edge => format!(
                "{id} is now edge-triggered (a teaching device): it acts only on each event's delta and never relists or resyncs"
            ),
            TriggerMode::Level => format!(
                "{id} is level-triggered again: every pass compares the whole cached state with the spec"
            ),
        })
    }

    /// Turns one of the example operator's deliberate bugs on or off, a teaching device (see
    /// [`crate::sim::faults::OperatorBug::note`]). The operator restarts with the new switches
    /// (its memory is lost, as a redeploy loses it). With the edge-triggered bug the world stops
    /// queueing its relists' and resyncs' keys, as for an edge-triggered component; the
    /// status-on-main-resource bug installs the CRD without its status subresource, and putting
    /// it back off installs it with one again.
    pub fn set_operator_bug(
        &mut self,
        bug: crate::sim::faults::OperatorBug,
        enabled: bool,
    ) -> Result<String, String> {
        use crate::sim::controllers::postgres::{self, PostgresOperator};
        use crate::sim::faults::OperatorBug;
        let id = ComponentId::PostgresOperator;
        let c = self.components.get(&id).ok_or(
            "postgres-operator is not installed: a scenario installs it with addons: [postgres-operator]",
        )?;
        let mut bugs = c
            .ctrl
            .as_any()
            .and_then(|a| a.downcast_ref::<PostgresOperator>())
            .map(|p| p.bugs().to_vec())
            .unwrap_or_default();
        let running = c.running;
        let word = if enabled { "on" } else { "off" };
        if bugs.contains(&bug) == enabled {
            return Ok(format!("{id}: {} is already {word}", bug.as_str()));
        }
        if enabled {
            bugs.push(bug);
        } else {
            bugs.retain(|b| *b != bug);
        }
        if bug == OperatorBug::StatusOnMainResource {
            let versions = postgres::crd(!enabled)
                .pointer("/spec/versions")
                .cloned()
                .unwrap_or_default();
            let req = ApiRequest::Patch {
                key: ObjectKey::new(Kind::CustomResourceDefinition, "", postgres::CRD_NAME),
                patch: serde_json::json!({"spec": {"versions": versions}}),
                status: false,
            };
            self.send_as("kubectl".into(), false, &req, self.fault_cause)
                .map_err(|e| format!("cannot reinstall the CRD: {}", e.message))?;
        }
        let edge = bugs.contains(&OperatorBug::EdgeTriggered);
        let c = self.components.get_mut(&id).expect("checked above");
        c.ctrl = Box::new(PostgresOperator::with_bugs(bugs.iter().copied()));
        c.mode = if edge {
            TriggerMode::Edge
        } else {
            TriggerMode::Level
        };
        self.refresh_watchers(&id);
        if running {
            self.stop_component(&id);
            self.start_component(
                &id,
                &format!("restarted with the {} bug {word}", bug.as_str()),
            );
        }
        let crd = match (bug, enabled) {
            (OperatorBug::StatusOnMainResource, true) => {
                "; its CRD is reinstalled without the status subresource"
            }
            (OperatorBug::StatusOnMainResource, false) => {
                "; its CRD is reinstalled with the status subresource"
            }
            _ => "",
        };
        // Where the switch is seen (the notice, the fault timeline, the trace) it says it is a
        // bug and what the fix is.
        let note = if enabled {
            format!(". {}", bug.note())
        } else {
            String::new()
        };
        Ok(format!(
            "{id}: the deliberate {} bug is {word}{crd}{note}",
            bug.as_str()
        ))
    }

    /// How a component is triggered.
    pub fn trigger_mode(&self, id: &ComponentId) -> TriggerMode {
        self.components
            .get(id)
            .map_or(TriggerMode::Level, |c| c.mode)
    }

    /// Reconnects a component's watch from its last resourceVersion: the missed events are
    /// delivered, or — when the history no longer reaches back that far — the server answers
    /// 410 Gone and the informer relists.
    pub(super) fn resume_watch(&mut self, id: &ComponentId) {
        let Some(c) = self.components.get(id) else {
            return;
        };
        if c.needs_relist {
            // Its list failed earlier (or its lost events must be caught up): list now.
            let same_process = !c.cache.is_empty();
            self.relist_with(id, "relist after the outage", same_process);
            return;
        }
        let from = c.cache.last_rv;
        let gen = c.generation;
        let floor = c.last_delivery;
        match self.api.events_since(from) {
            Ok(events) => {
                // One watch stream, in order: the backlog is delivered no earlier than anything
                // already on its way to this watcher, and what the live fan-out sends from now on
                // comes after it. A live event overtaking the backlog made the informer skip the
                // backlog as already seen (a pod bound during a partition never reached its
                // kubelet).
                let latency = self.jitter(self.config.watch_latency);
                let at = (self.now + latency).max(floor);
                let Some(c) = self.components.get_mut(id) else {
                    return;
                };
                c.last_delivery = at;
                let line = c.line;
                for ev in events {
                    let kind = ev.object.kind();
                    if self.components[id].ctrl.watches(kind) {
                        self.schedule_delivery(at, line, gen, Rc::new(ev));
                    }
                }
            }
            Err(too_old) => {
                let err = too_old.to_error();
                self.trace.push(
                    self.now,
                    self.fault_cause,
                    TraceKind::Watch {
                        component: id.name().into(),
                        event_type: WatchType::Error,
                        object: format!("410 {:?}: {}", err.reason, err.message).into(),
                        resource_version: from,
                        delivery: Delivery::Delivered,
                    },
                );
                self.relist_with(id, "410 Gone: too old resource version", true);
            }
        }
    }
}
