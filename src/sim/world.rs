//! The world: one clock, one event queue, one seeded RNG, the API server, every component, and
//! the trace. Every state change in the simulation happens inside [`Sim::apply`] or
//! [`Sim::advance_to`], in (time, sequence) order, so a seed and a list of actions replay exactly.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;

use super::api::{ApiError, ApiRequest, ApiResult, DeleteOptions, WatchEvent, WatchEventType};
use super::apiserver::ApiServer;
use super::cache::Cache;
use super::controller::{ComponentId, Controller, Ctx, EventRecord, Outcome};
use super::controllers;
use super::events::{Recorder, EVENT_TTL};
use super::faults::Fault;
use super::rng::Rng;
use super::runtime::NodeRuntime;
use super::trace::{Delivery, Trace, TraceKind};
use super::types::{Kind, Millis, Object, ObjectKey};
use super::workqueue::WorkQueue;

/// Timing knobs. Defaults are chosen so that a lesson reads like a real cluster's event log.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub seed: u64,
    /// Request → response latency range, in ms.
    pub api_latency: (Millis, Millis),
    /// Commit → informer delivery latency range, in ms.
    pub watch_latency: (Millis, Millis),
    /// Simulated cost of one reconcile pass, in ms (spaces a component's passes).
    pub reconcile_cost: Millis,
    /// Informer resync period per component (None: never, as kube-controller-manager in practice).
    pub resync: BTreeMap<ComponentId, Millis>,
    /// How many trace entries to keep.
    pub trace_capacity: usize,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            api_latency: (2, 6),
            watch_latency: (5, 20),
            reconcile_cost: 1,
            resync: BTreeMap::new(),
            trace_capacity: super::trace::DEFAULT_TRACE_CAPACITY,
        }
    }
}

/// A rule that makes a component lose watch events.
#[derive(Clone, Debug, PartialEq)]
struct DropRule {
    remaining: Option<u32>,
    probability: Option<f64>,
    kind: Option<Kind>,
    until: Option<Millis>,
}

/// One component with its informer cache and work queue.
struct Component {
    ctrl: Box<dyn Controller>,
    cache: Cache,
    queue: WorkQueue,
    rng: Rng,
    running: bool,
    partitioned: bool,
    pump_scheduled: bool,
    /// Incremented on every stop/restart so timers of the old process are ignored.
    generation: u64,
    /// Earliest pending requeue timer per key.
    requeues: BTreeMap<ObjectKey, Millis>,
    /// Why each queued key was queued (trigger, causing trace entry).
    triggers: BTreeMap<ObjectKey, (String, Option<u64>)>,
    /// Watch deliveries stay in order: none is delivered before the previous one.
    last_delivery: Millis,
    drop: Option<DropRule>,
    delay: Option<(Millis, Option<Millis>)>,
}

impl Component {
    fn new(ctrl: Box<dyn Controller>, seed: u64) -> Component {
        let rng = Rng::stream(seed, &ctrl.id().name());
        Component {
            ctrl,
            cache: Cache::new(),
            queue: WorkQueue::new(),
            rng,
            running: false,
            partitioned: false,
            pump_scheduled: false,
            generation: 0,
            requeues: BTreeMap::new(),
            triggers: BTreeMap::new(),
            last_delivery: 0,
            drop: None,
            delay: None,
        }
    }
}

/// Things waiting in the event queue.
#[derive(Debug)]
enum SimEvent {
    Deliver {
        to: ComponentId,
        gen: u64,
        event: WatchEvent,
    },
    Pump {
        to: ComponentId,
        gen: u64,
    },
    Requeue {
        to: ComponentId,
        gen: u64,
        key: ObjectKey,
    },
    Tick {
        to: ComponentId,
        gen: u64,
    },
    Resync {
        to: ComponentId,
        gen: u64,
    },
    Api {
        from: ComponentId,
        gen: u64,
        key: ObjectKey,
        batches: Vec<Vec<ApiRequest>>,
        cause: u64,
    },
    Fault(Fault),
    Housekeeping,
}

/// What [`Sim::advance_to`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advanced {
    /// Events processed.
    pub events: usize,
    /// True when the work cap stopped it before reaching the target time.
    pub capped: bool,
}

/// The whole simulated cluster.
pub struct Sim {
    now: Millis,
    seq: u64,
    config: SimConfig,
    queue: BinaryHeap<Reverse<(Millis, u64)>>,
    pending: BTreeMap<u64, SimEvent>,
    /// The API server's store.
    pub api: ApiServer,
    components: BTreeMap<ComponentId, Component>,
    /// Container runtimes, one per machine; a node that is down has none running.
    machines: BTreeMap<String, Machine>,
    /// Images the simulated registry refuses to serve.
    pub broken_images: BTreeSet<String>,
    api_server_up: bool,
    recorder: Recorder,
    trace: Trace,
    latency_rng: Rng,
}

/// A simulated machine.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    pub up: bool,
    pub runtime: NodeRuntime,
}

impl Sim {
    /// A cluster with the control plane running and no objects yet.
    pub fn new(config: SimConfig) -> Sim {
        let seed = config.seed;
        let mut sim = Sim {
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            pending: BTreeMap::new(),
            api: ApiServer::new(seed),
            components: BTreeMap::new(),
            machines: BTreeMap::new(),
            broken_images: BTreeSet::new(),
            api_server_up: true,
            recorder: Recorder::default(),
            trace: Trace::with_capacity(config.trace_capacity),
            latency_rng: Rng::stream(seed, "latency"),
            config,
        };
        for ctrl in controllers::control_plane() {
            let id = ctrl.id();
            sim.components
                .insert(id.clone(), Component::new(ctrl, seed));
            sim.start_component(&id, "start");
        }
        sim.schedule(10_000, SimEvent::Housekeeping);
        sim
    }

    /// The simulated clock.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The configuration the simulation was built with.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Appends to the trace (for session-level records: commands, checks).
    pub(crate) fn trace_push(&mut self, t: Millis, cause: Option<u64>, kind: TraceKind) -> u64 {
        self.trace.push(t, cause, kind)
    }

    /// The machines (for the cluster view: which nodes are up).
    pub fn machines(&self) -> &BTreeMap<String, Machine> {
        &self.machines
    }

    /// The ids of every component, in order.
    pub fn component_ids(&self) -> Vec<ComponentId> {
        self.components.keys().cloned().collect()
    }

    /// Whether a component is running (not stopped or down).
    pub fn is_running(&self, id: &ComponentId) -> bool {
        self.components.get(id).is_some_and(|c| c.running)
    }

    /// A component's informer cache (for the UI's "what the controller sees" view and tests).
    pub fn cache_of(&self, id: &ComponentId) -> Option<&Cache> {
        self.components.get(id).map(|c| &c.cache)
    }

    /// How many keys wait in a component's queue.
    pub fn queue_len(&self, id: &ComponentId) -> usize {
        self.components.get(id).map_or(0, |c| c.queue.len())
    }

    /// Time of the next scheduled event, if any.
    pub fn next_event_time(&self) -> Option<Millis> {
        self.queue.peek().map(|Reverse((t, _))| *t)
    }

    fn schedule(&mut self, at: Millis, ev: SimEvent) {
        self.seq += 1;
        self.queue.push(Reverse((at.max(self.now), self.seq)));
        self.pending.insert(self.seq, ev);
    }

    fn jitter(&mut self, range: (Millis, Millis)) -> Millis {
        self.latency_rng.range(range.0, range.1)
    }

    /// Processes every event up to and including `t`, then sets the clock to `t`, doing at most
    /// `max_events` events (the UI's per-frame budget); a capped advance leaves the clock at the
    /// last processed event so nothing is skipped.
    pub fn advance_to(&mut self, t: Millis, max_events: usize) -> Advanced {
        let mut done = Advanced::default();
        while let Some(&Reverse((at, _))) = self.queue.peek() {
            if at > t {
                break;
            }
            if done.events >= max_events {
                done.capped = true;
                return done;
            }
            self.step_one();
            done.events += 1;
        }
        self.now = self.now.max(t);
        done
    }

    /// Processes the next event only (the UI's single step). Returns false when nothing is queued.
    pub fn step(&mut self) -> bool {
        if self.queue.is_empty() {
            return false;
        }
        self.step_one();
        true
    }

    fn step_one(&mut self) {
        let Some(Reverse((at, seq))) = self.queue.pop() else {
            return;
        };
        self.now = self.now.max(at);
        let Some(ev) = self.pending.remove(&seq) else {
            return;
        };
        match ev {
            SimEvent::Deliver { to, gen, event } => self.deliver(&to, gen, event),
            SimEvent::Pump { to, gen } => self.pump(&to, gen),
            SimEvent::Requeue { to, gen, key } => {
                if let Some(c) = self.components.get_mut(&to) {
                    if c.generation == gen && c.requeues.get(&key) == Some(&at) {
                        c.requeues.remove(&key);
                    }
                }
                self.enqueue(&to, gen, key, "requeue", None);
            }
            SimEvent::Tick { to, gen } => self.tick(&to, gen),
            SimEvent::Resync { to, gen } => self.resync(&to, gen),
            SimEvent::Api {
                from,
                gen,
                key,
                batches,
                cause,
            } => self.execute(&from, gen, &key, batches, cause),
            SimEvent::Fault(f) => {
                let _ = self.inject(f);
            }
            SimEvent::Housekeeping => self.housekeeping(),
        }
    }

    // ------------------------------------------------------------------ components

    fn start_component(&mut self, id: &ComponentId, reason: &str) {
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        c.running = true;
        c.generation += 1;
        c.ctrl.reset();
        c.queue.clear();
        c.requeues.clear();
        c.triggers.clear();
        c.pump_scheduled = false;
        self.relist(id, reason);
        let gen = self.components[id].generation;
        self.tick(id, gen);
        if let Some(&period) = self.config.resync.get(id) {
            self.schedule(
                self.now + period,
                SimEvent::Resync {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    fn stop_component(&mut self, id: &ComponentId) {
        if let Some(c) = self.components.get_mut(id) {
            c.running = false;
            c.generation += 1;
            c.pump_scheduled = false;
        }
    }

    fn relist(&mut self, id: &ComponentId, reason: &str) {
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        c.cache.clear();
        for kind in c.ctrl.watched_kinds() {
            for obj in self.api.list(*kind) {
                if c.ctrl.accepts(obj) {
                    c.cache.upsert(obj.clone());
                }
            }
        }
        c.cache.last_rv = self.api.resource_version();
        let keys = c.ctrl.keys_for_resync(&c.cache);
        let n = c.cache.len();
        let gen = c.generation;
        let seq = self.trace.push(
            self.now,
            None,
            TraceKind::List {
                component: id.name(),
                reason: reason.into(),
                objects: n,
            },
        );
        for k in keys {
            self.enqueue(id, gen, k, "relist", Some(seq));
        }
    }

    fn enqueue(
        &mut self,
        id: &ComponentId,
        gen: u64,
        key: ObjectKey,
        trigger: &str,
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
            c.triggers.insert(key, (trigger.to_string(), cause));
        }
        if !c.pump_scheduled {
            c.pump_scheduled = true;
            self.schedule(
                now + cost,
                SimEvent::Pump {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    fn fan_out(&mut self, events: &[WatchEvent]) {
        for ev in events {
            self.maybe_boot_machine(ev);
            let kind = ev.object.kind();
            let ids: Vec<ComponentId> = self
                .components
                .iter()
                .filter(|(_, c)| {
                    c.running && !c.partitioned && c.ctrl.watched_kinds().contains(&kind)
                })
                .map(|(id, _)| id.clone())
                .collect();
            for id in ids {
                let latency = self.jitter(self.config.watch_latency);
                let now = self.now;
                let c = self.components.get_mut(&id).expect("listed above");
                // A lost event never reaches the informer; its cache stays stale for that object.
                if let Some(rule) = &mut c.drop {
                    let active = rule.until.is_none_or(|u| now < u);
                    let kind_ok = rule.kind.is_none_or(|k| k == kind);
                    if active && kind_ok {
                        let hit = match (rule.remaining.as_mut(), rule.probability) {
                            (Some(n), _) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            (None, Some(p)) => c.rng.chance(p),
                            _ => false,
                        };
                        if rule.remaining == Some(0) && rule.probability.is_none() {
                            c.drop = None;
                        }
                        if hit {
                            self.trace.push(
                                now,
                                Some(ev.cause),
                                TraceKind::Watch {
                                    component: id.name(),
                                    event_type: ev.type_.as_str().into(),
                                    object: ev.object.key().to_string(),
                                    resource_version: ev.resource_version,
                                    delivery: Delivery::Dropped,
                                },
                            );
                            continue;
                        }
                    } else if !active {
                        c.drop = None;
                    }
                }
                let extra = match c.delay {
                    Some((d, until)) if until.is_none_or(|u| now < u) => d,
                    Some(_) => {
                        c.delay = None;
                        0
                    }
                    None => 0,
                };
                let at = (now + latency + extra).max(c.last_delivery);
                c.last_delivery = at;
                let gen = c.generation;
                self.schedule(
                    at,
                    SimEvent::Deliver {
                        to: id,
                        gen,
                        event: ev.clone(),
                    },
                );
            }
        }
    }

    fn deliver(&mut self, id: &ComponentId, gen: u64, ev: WatchEvent) {
        let now = self.now;
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        if !c.running || c.generation != gen {
            return;
        }
        // The informer applies its field selector: objects entering or leaving it look like adds/deletes.
        let key = ev.object.key();
        let cached = c.cache.get(&key).is_some();
        let accepted = ev.type_ != WatchEventType::Deleted && c.ctrl.accepts(&ev.object);
        let local = match (accepted, cached) {
            (true, false) => Some(WatchEventType::Added),
            (true, true) => Some(WatchEventType::Modified),
            (false, true) => Some(WatchEventType::Deleted),
            (false, false) => None,
        };
        c.cache.last_rv = c.cache.last_rv.max(ev.resource_version);
        let Some(type_) = local else { return };
        let local_ev = WatchEvent { type_, ..ev };
        let old = c.cache.apply(&local_ev);
        let keys = c.ctrl.keys_for_event(&local_ev, old.as_ref(), &c.cache);
        let seq = self.trace.push(
            now,
            Some(local_ev.cause),
            TraceKind::Watch {
                component: id.name(),
                event_type: local_ev.type_.as_str().into(),
                object: key.to_string(),
                resource_version: local_ev.resource_version,
                delivery: Delivery::Delivered,
            },
        );
        for k in keys {
            self.enqueue(id, gen, k, "watch", Some(seq));
        }
    }

    fn pump(&mut self, id: &ComponentId, gen: u64) {
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
        let (trigger, cause) = c
            .triggers
            .remove(&key)
            .unwrap_or_else(|| ("requeue".into(), None));
        let runtime = match id {
            ComponentId::Kubelet(node) => self.machines.get_mut(node).map(|m| &mut m.runtime),
            _ => None,
        };
        let mut ctx = Ctx {
            now,
            cache: &c.cache,
            rng: &mut c.rng,
            runtime,
        };
        let outcome: Outcome = c.ctrl.reconcile(&key, &mut ctx);
        if !c.queue.is_empty() {
            c.pump_scheduled = true;
        }
        let more = c.pump_scheduled;
        let n_requests = outcome.requests().count();
        let seq = self.trace.push(
            now,
            cause,
            TraceKind::Reconcile {
                component: id.name(),
                key: key.to_string(),
                trigger,
                record: outcome.record.clone(),
                requests: n_requests,
            },
        );
        for e in &outcome.events {
            self.record_event(id, e, Some(seq));
        }
        if let Some(after) = outcome.requeue_after {
            self.requeue_at(id, gen, key.clone(), now + after);
        }
        if let Some(err) = &outcome.error {
            let _ = err;
            let c = self.components.get_mut(id).expect("exists");
            let delay = c.queue.backoff(&key);
            self.requeue_at(id, gen, key.clone(), now + delay);
        }
        if n_requests > 0 {
            self.schedule(
                now + api_latency,
                SimEvent::Api {
                    from: id.clone(),
                    gen,
                    key,
                    batches: outcome.batches,
                    cause: seq,
                },
            );
        } else if outcome.error.is_none() {
            if let Some(c) = self.components.get_mut(id) {
                c.queue.forget(&key);
            }
        }
        if more {
            self.schedule(
                now + cost,
                SimEvent::Pump {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    fn requeue_at(&mut self, id: &ComponentId, gen: u64, key: ObjectKey, at: Millis) {
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
            SimEvent::Requeue {
                to: id.clone(),
                gen,
                key,
            },
        );
    }

    fn tick(&mut self, id: &ComponentId, gen: u64) {
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
                SimEvent::Tick {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    fn resync(&mut self, id: &ComponentId, gen: u64) {
        let Some(c) = self.components.get(id) else {
            return;
        };
        if !c.running || c.generation != gen {
            return;
        }
        let keys = c.ctrl.keys_for_resync(&c.cache);
        for k in keys {
            self.enqueue(id, gen, k, "resync", None);
        }
        if let Some(&period) = self.config.resync.get(id) {
            self.schedule(
                self.now + period,
                SimEvent::Resync {
                    to: id.clone(),
                    gen,
                },
            );
        }
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
        if let Some(c) = self.components.get_mut(id) {
            // Re-arm under a new generation-independent timer: old timers check the period again.
            let gen = c.generation;
            if let Some(p) = period {
                self.schedule(
                    self.now + p.max(1000),
                    SimEvent::Resync {
                        to: id.clone(),
                        gen,
                    },
                );
            }
        }
    }

    fn execute(
        &mut self,
        from: &ComponentId,
        gen: u64,
        key: &ObjectKey,
        batches: Vec<Vec<ApiRequest>>,
        cause: u64,
    ) {
        let mut failed = false;
        let mut iter = batches.into_iter();
        for batch in iter.by_ref() {
            let mut batch_failed = false;
            for req in batch {
                // `send` traces the request as the next entry: the cause of events about its answer.
                let api_seq = self.trace.next_seq();
                let result = self.send(from, req.clone(), Some(cause));
                if let Err(e) = &result {
                    // A delete of something already gone is what the controller wanted.
                    let benign = matches!(req, ApiRequest::Delete { .. }) && e.code() == 404;
                    if !benign {
                        batch_failed = true;
                    }
                }
                let mut answer_events = Vec::new();
                if let Some(c) = self.components.get_mut(from) {
                    if c.generation == gen {
                        c.ctrl.on_response(&req, &result, self.now);
                        answer_events = c.ctrl.events_for_response(&req, &result);
                    }
                }
                for e in &answer_events {
                    self.record_event(from, e, Some(api_seq));
                }
            }
            if batch_failed {
                failed = true;
                break;
            }
        }
        for batch in iter {
            for req in batch {
                if let Some(c) = self.components.get_mut(from) {
                    if c.generation == gen {
                        c.ctrl.on_skipped(&req);
                    }
                }
            }
        }
        let now = self.now;
        if let Some(c) = self.components.get_mut(from) {
            if c.generation != gen {
                return;
            }
            if failed {
                let delay = c.queue.backoff(key);
                self.requeue_at(from, gen, key.clone(), now + delay);
            } else {
                c.queue.forget(key);
            }
        }
    }

    /// Sends one request to the API server now, traces it, and fans out what it changed.
    fn send(&mut self, from: &ComponentId, req: ApiRequest, cause: Option<u64>) -> ApiResult {
        let verb = req.verb();
        let key = req.key();
        let partitioned = self.components.get(from).is_some_and(|c| c.partitioned);
        if !self.api_server_up || partitioned {
            let err = ApiError::unavailable();
            self.trace.push(
                self.now,
                cause,
                TraceKind::Api {
                    actor: from.name(),
                    verb: verb.into(),
                    object: key.to_string(),
                    code: err.code(),
                    message: Some(err.message.clone()),
                    resource_version: None,
                },
            );
            return Err(err);
        }
        let seq = self.trace.next_seq();
        let handled = self.api.handle(self.now, req, seq);
        let (code, message, rv, object) = match &handled.result {
            Ok(o) => (
                if verb.starts_with("create") { 201 } else { 200 },
                None,
                Some(o.meta().rv()),
                o.key().to_string(),
            ),
            Err(e) => (e.code(), Some(e.message.clone()), None, key.to_string()),
        };
        self.trace.push(
            self.now,
            cause,
            TraceKind::Api {
                actor: from.name(),
                verb: verb.into(),
                object,
                code,
                message,
                resource_version: rv,
            },
        );
        self.fan_out(&handled.events);
        handled.result
    }

    /// The learner's (or a scenario's) request, executed synchronously as kubectl would.
    pub fn submit(&mut self, req: ApiRequest) -> ApiResult {
        self.send(&ComponentId::User, req, None)
    }

    /// Records a Kubernetes Event on behalf of a component.
    pub fn record_event(&mut self, from: &ComponentId, rec: &EventRecord, cause: Option<u64>) {
        let (source, host) = match from {
            ComponentId::Kubelet(node) => ("kubelet".to_string(), node.clone()),
            other => (other.name(), String::new()),
        };
        let api = &self.api;
        let recorded = self.recorder.record(self.now, &source, &host, rec, |name| {
            api.get(&ObjectKey::new(
                Kind::Event,
                if rec.object.namespace.is_empty() {
                    "default"
                } else {
                    &rec.object.namespace
                },
                name,
            ))
            .and_then(|o| o.as_event().cloned())
        });
        let ev = recorded.event;
        self.trace.push(
            self.now,
            cause,
            TraceKind::Event {
                event_type: ev.type_.clone(),
                reason: ev.reason.clone(),
                message: ev.message.clone(),
                object: rec.object.to_string(),
                source,
            },
        );
        self.api
            .put_event(self.now, Object::Event(ev), cause.unwrap_or(0));
    }

    // ------------------------------------------------------------------ machines

    fn maybe_boot_machine(&mut self, ev: &WatchEvent) {
        let Object::Node(node) = &*ev.object else {
            return;
        };
        let name = node.metadata.name.clone();
        match ev.type_ {
            WatchEventType::Added if !self.machines.contains_key(&name) => {
                self.machines.insert(
                    name.clone(),
                    Machine {
                        up: true,
                        runtime: NodeRuntime::booted(&self.broken_images),
                    },
                );
                let id = ComponentId::Kubelet(name.clone());
                let kubelet = controllers::kubelet_for(&name);
                self.components
                    .insert(id.clone(), Component::new(kubelet, self.config.seed));
                self.start_component(&id, "start");
            }
            WatchEventType::Deleted => {
                // Deleting the Node object decommissions the machine (a deliberate simplification:
                // a real kubelet would re-register its node).
                self.machines.remove(&name);
                self.components.remove(&ComponentId::Kubelet(name));
            }
            _ => {}
        }
    }

    // ------------------------------------------------------------------ faults

    /// Schedules a fault at simulated time `at`.
    pub fn schedule_fault(&mut self, at: Millis, fault: Fault) {
        self.schedule(at, SimEvent::Fault(fault));
    }

    /// Injects a fault now. Returns a message for the learner (what happened, or why not).
    pub fn inject(&mut self, fault: Fault) -> Result<String, String> {
        let description = fault.describe();
        let result = self.inject_inner(&fault);
        let text = match &result {
            Ok(s) => s.clone(),
            Err(e) => format!("refused: {e}"),
        };
        self.trace.push(
            self.now,
            None,
            TraceKind::Fault {
                fault: fault.name().into(),
                description: format!("{description} — {text}"),
            },
        );
        result
    }

    fn component_arg(&self, name: &str) -> Result<Vec<ComponentId>, String> {
        if name == "controller-manager" || name == "kube-controller-manager" {
            return Ok(ComponentId::CONTROLLER_MANAGER.to_vec());
        }
        let id = ComponentId::parse(name).ok_or_else(|| format!("unknown component {name:?}"))?;
        if !self.components.contains_key(&id) {
            return Err(format!("unknown component {name:?}"));
        }
        Ok(vec![id])
    }

    fn inject_inner(&mut self, fault: &Fault) -> Result<String, String> {
        match fault {
            Fault::DeletePod { target } => {
                let pods = self.select_pods(target)?;
                let mut out = Vec::new();
                for key in pods {
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
            Fault::NodeDown { node } => {
                let m = self
                    .machines
                    .get_mut(node)
                    .ok_or_else(|| format!("node {node:?} not found"))?;
                m.up = false;
                m.runtime.power_off();
                self.stop_component(&ComponentId::Kubelet(node.clone()));
                Ok(format!(
                    "node {node} is down: its kubelet and containers are gone"
                ))
            }
            Fault::NodeUp { node } => {
                let m = self
                    .machines
                    .get_mut(node)
                    .ok_or_else(|| format!("node {node:?} not found"))?;
                if m.up {
                    return Err(format!("node {node} is already up"));
                }
                m.up = true;
                let id = ComponentId::Kubelet(node.clone());
                if let Some(c) = self.components.get_mut(&id) {
                    c.partitioned = false;
                }
                self.start_component(&id, "node booted");
                Ok(format!(
                    "node {node} booted: the kubelet relists and reconciles its pods"
                ))
            }
            Fault::PartitionNode { node } => {
                let id = ComponentId::Kubelet(node.clone());
                let c = self
                    .components
                    .get_mut(&id)
                    .ok_or_else(|| format!("node {node:?} not found"))?;
                c.partitioned = true;
                Ok(format!(
                    "node {node} is cut off from the API server; its containers keep running"
                ))
            }
            Fault::HealNode { node } => {
                let id = ComponentId::Kubelet(node.clone());
                let c = self
                    .components
                    .get_mut(&id)
                    .ok_or_else(|| format!("node {node:?} not found"))?;
                if !c.partitioned {
                    return Err(format!("node {node} is not partitioned"));
                }
                c.partitioned = false;
                self.resume_watch(&id);
                Ok(format!("node {node} reconnected"))
            }
            Fault::DropWatchEvents {
                component,
                count,
                probability,
                kind,
                duration,
            } => {
                let kind = match kind {
                    Some(k) => {
                        Some(Kind::from_kind_str(k).ok_or_else(|| format!("unknown kind {k:?}"))?)
                    }
                    None => None,
                };
                let until = duration.map(|d| self.now + d);
                let rule = DropRule {
                    remaining: if probability.is_some() {
                        None
                    } else {
                        Some(count.unwrap_or(1))
                    },
                    probability: *probability,
                    kind,
                    until,
                };
                for id in self.component_arg(component)? {
                    self.components.get_mut(&id).expect("checked").drop = Some(rule.clone());
                }
                Ok(format!("{component} will miss watch events"))
            }
            Fault::DelayWatchEvents {
                component,
                delay,
                duration,
            } => {
                let until = duration.map(|d| self.now + d);
                for id in self.component_arg(component)? {
                    self.components.get_mut(&id).expect("checked").delay = Some((*delay, until));
                }
                Ok(format!(
                    "{component}'s watch lags by {}",
                    super::time::format_duration(*delay)
                ))
            }
            Fault::RestartController { component } => {
                for id in self.component_arg(component)? {
                    self.stop_component(&id);
                    self.start_component(&id, "restarted");
                }
                Ok(format!(
                    "{component} restarted: caches, queues and expectations are gone; it relists"
                ))
            }
            Fault::StopComponent { component } => {
                if component == "kube-apiserver"
                    || component == "api-server"
                    || component == "apiserver"
                {
                    self.api_server_up = false;
                    return Ok("the API server is down: every request gets 503".into());
                }
                for id in self.component_arg(component)? {
                    self.stop_component(&id);
                }
                Ok(format!("{component} stopped"))
            }
            Fault::StartComponent { component } => {
                if component == "kube-apiserver"
                    || component == "api-server"
                    || component == "apiserver"
                {
                    self.api_server_up = true;
                    let ids: Vec<ComponentId> = self
                        .components
                        .iter()
                        .filter(|(_, c)| c.running)
                        .map(|(id, _)| id.clone())
                        .collect();
                    for id in ids {
                        self.resume_watch(&id);
                    }
                    return Ok("the API server is back".into());
                }
                for id in self.component_arg(component)? {
                    if !self.is_running(&id) {
                        self.start_component(&id, "started");
                    }
                }
                Ok(format!("{component} started"))
            }
            Fault::EditObject { object, patch } => {
                let key = parse_object_ref(object)?;
                match self.submit(ApiRequest::Patch {
                    key,
                    patch: patch.clone(),
                    status: false,
                }) {
                    Ok(o) => Ok(format!("{} edited", o.key())),
                    Err(e) => Err(e.kubectl_message()),
                }
            }
            Fault::BreakImage { image } => {
                self.broken_images.insert(image.clone());
                for m in self.machines.values_mut() {
                    m.runtime.set_image_broken(image, true);
                }
                Ok(format!("the registry no longer serves {image}"))
            }
            Fault::FixImage { image } => {
                self.broken_images.remove(image);
                for m in self.machines.values_mut() {
                    m.runtime.set_image_broken(image, false);
                }
                Ok(format!("the registry serves {image} again"))
            }
            Fault::CrashContainer { target, .. }
            | Fault::CrashLoop { target, .. }
            | Fault::OomKill { target }
            | Fault::FailReadiness { target, .. }
            | Fault::FailLiveness { target, .. } => self.inject_container_fault(fault, target),
            Fault::ConflictingWriter { .. } => {
                Err(format!("{} is not simulated yet", fault.name()))
            }
        }
    }

    /// Container faults change the machine's runtime; the kubelet notices at its next PLEG relist.
    fn inject_container_fault(
        &mut self,
        fault: &Fault,
        target: &super::faults::PodTarget,
    ) -> Result<String, String> {
        let now = self.now;
        let (mut done, mut refused) = (Vec::new(), Vec::new());
        for key in self.select_pods(target)? {
            let Some(pod) = self.api.get(&key).and_then(|o| o.as_pod()).cloned() else {
                continue;
            };
            let container = match &target.container {
                Some(name) => pod.spec.containers.iter().chain(&pod.spec.init_containers).find(|c| &c.name == name),
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
            let Some(machine) = self.machines.get_mut(&node).filter(|m| m.up) else {
                refused.push(format!("pod \"{}\" is not running on any node", key.name));
                continue;
            };
            match machine
                .runtime
                .inject(fault, &pod.metadata.uid, &key.name, container, now)
            {
                Ok(msg) => {
                    done.push(msg);
                    let id = ComponentId::Kubelet(node);
                    if let Some(gen) = self
                        .components
                        .get(&id)
                        .filter(|c| c.running)
                        .map(|c| c.generation)
                    {
                        self.requeue_at(&id, gen, key, super::runtime::next_relist(now));
                    }
                }
                Err(e) => refused.push(e),
            }
        }
        if done.is_empty() {
            return Err(refused.join("\n"));
        }
        done.extend(refused);
        Ok(done.join("\n"))
    }

    fn resume_watch(&mut self, id: &ComponentId) {
        let Some(c) = self.components.get(id) else {
            return;
        };
        let from = c.cache.last_rv;
        let gen = c.generation;
        match self.api.events_since(from) {
            Ok(events) => {
                let latency = self.jitter(self.config.watch_latency);
                for ev in events {
                    let kind = ev.object.kind();
                    if self.components[id].ctrl.watched_kinds().contains(&kind) {
                        self.schedule(
                            self.now + latency,
                            SimEvent::Deliver {
                                to: id.clone(),
                                gen,
                                event: ev,
                            },
                        );
                    }
                }
            }
            Err(too_old) => {
                let err = too_old.to_error();
                self.trace.push(
                    self.now,
                    None,
                    TraceKind::Watch {
                        component: id.name(),
                        event_type: "ERROR".into(),
                        object: format!("410 {:?}: {}", err.reason, err.message),
                        resource_version: from,
                        delivery: Delivery::Delivered,
                    },
                );
                self.relist(id, "410 Gone: too old resource version");
            }
        }
    }

    /// Pods a fault targets, by name or selector.
    pub fn select_pods(&self, target: &super::faults::PodTarget) -> Result<Vec<ObjectKey>, String> {
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
        let selector = parse_label_selector(sel)?;
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

    fn housekeeping(&mut self) {
        self.api.compact(self.now);
        let expired: Vec<ObjectKey> = self
            .api
            .list(Kind::Event)
            .filter(|o| {
                o.as_event()
                    .and_then(|e| e.last_timestamp)
                    .is_some_and(|t| t.0 + EVENT_TTL < self.now)
            })
            .map(|o| o.key())
            .collect();
        for k in expired {
            self.recorder.forget(&k.name);
            self.api.expire_event(&k);
        }
        self.schedule(self.now + 10_000, SimEvent::Housekeeping);
    }

    /// True when nothing but periodic timers remains: no watch deliveries, API calls or queued keys.
    pub fn is_quiescent(&self) -> bool {
        self.components.values().all(|c| c.queue.is_empty())
            && self.pending.values().all(|e| {
                matches!(
                    e,
                    SimEvent::Tick { .. }
                        | SimEvent::Resync { .. }
                        | SimEvent::Housekeeping
                        | SimEvent::Requeue { .. }
                )
            })
    }
}

/// Parses `Kind/namespace/name` or `Kind/name` (namespace `default`), as faults name objects.
pub fn parse_object_ref(s: &str) -> Result<ObjectKey, String> {
    let parts: Vec<&str> = s.split('/').collect();
    let (kind, ns, name) = match parts.as_slice() {
        [k, n] => (*k, "default", *n),
        [k, ns, n] => (*k, *ns, *n),
        _ => return Err(format!("expected Kind/namespace/name, got {s:?}")),
    };
    let kind = Kind::from_kind_str(kind)
        .or_else(|| {
            Kind::ALL
                .into_iter()
                .find(|k| k.as_str().eq_ignore_ascii_case(kind))
        })
        .ok_or_else(|| format!("unknown kind {kind:?}"))?;
    Ok(ObjectKey::new(kind, ns, name))
}

/// Parses a label selector string (`app=web,tier!=db,env in (a,b),!x,y`).
pub fn parse_label_selector(s: &str) -> Result<super::types::LabelSelector, String> {
    use super::types::{LabelSelector, LabelSelectorRequirement};
    let mut sel = LabelSelector::default();
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    parts.push(cur);
    for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let set_op = |op: &str| -> Option<(String, Vec<String>)> {
            let idx = p.find(&format!(" {op} "))?;
            let key = p[..idx].trim().to_string();
            let rest = p[idx + op.len() + 2..].trim();
            let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
            Some((
                key,
                inner
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .collect(),
            ))
        };
        if let Some((key, values)) = set_op("notin") {
            sel.match_expressions.push(LabelSelectorRequirement {
                key,
                operator: "NotIn".into(),
                values,
            });
        } else if let Some((key, values)) = set_op("in") {
            sel.match_expressions.push(LabelSelectorRequirement {
                key,
                operator: "In".into(),
                values,
            });
        } else if let Some((k, v)) = p.split_once("!=") {
            sel.match_expressions.push(LabelSelectorRequirement {
                key: k.trim().into(),
                operator: "NotIn".into(),
                values: vec![v.trim().into()],
            });
        } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
            sel.match_labels.insert(k.trim().into(), v.trim().into());
        } else if let Some(k) = p.strip_prefix('!') {
            sel.match_expressions.push(LabelSelectorRequirement {
                key: k.trim().into(),
                operator: "DoesNotExist".into(),
                values: vec![],
            });
        } else if p
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        {
            sel.match_expressions.push(LabelSelectorRequirement {
                key: p.into(),
                operator: "Exists".into(),
                values: vec![],
            });
        } else {
            return Err(format!("unable to parse requirement: {p:?}"));
        }
    }
    Ok(sel)
}

/// Convenience for tests and the CLI: the live object under `key`.
impl Sim {
    pub fn get(&self, key: &ObjectKey) -> Option<&Arc<Object>> {
        self.api.get(key)
    }
}
