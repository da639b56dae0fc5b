//! The world: one clock, one event queue, one seeded RNG, the API server, every component, and
//! the trace. Every state change in the simulation happens inside [`Sim::apply`] or
//! [`Sim::advance_to`], in (time, sequence) order, so a seed and a list of actions replay exactly.

use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;

use super::api::apiserver::ApiServer;
use super::api::types::{Kind, Millis, Object, ObjectKey};
use super::api::{ApiError, ApiRequest, ApiResult, DeleteOptions, WatchEvent, WatchEventType};
use super::controllers;
use super::faults::{Fault, TriggerMode};
use super::machinery::cache::Cache;
use super::machinery::controller::{ComponentId, Controller, Ctx, EventRecord, Outcome};
use super::machinery::node_runtime::NodeRuntime;
use super::machinery::recorder::{Recorder, EVENT_EXPIRY_BATCH, EVENT_TTL, MAX_EVENTS};
use super::machinery::trace::{describe_request, Delivery, Trace, TraceEntry, TraceKind};
use super::machinery::workqueue::WorkQueue;
use super::rng::Rng;

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
            trace_capacity: super::machinery::trace::DEFAULT_TRACE_CAPACITY,
        }
    }
}

/// A rule that makes a component lose watch events.
#[derive(Clone, Debug, PartialEq)]
struct DropRule {
    remaining: Option<u32>,
    probability: Option<f64>,
    kind: Option<Kind>,
    event_type: Option<WatchEventType>,
    until: Option<Millis>,
    /// The fault's trace entry: the cause of each drop, and which heal ends this rule.
    fault: u64,
}

/// A rule that makes a component's watch lag.
#[derive(Clone, Debug, PartialEq)]
struct DelayRule {
    delay: Millis,
    until: Option<Millis>,
    fault: u64,
}

/// A ConflictingWriter: a second writer racing the owner of one object.
#[derive(Clone, Debug, PartialEq)]
struct Rival {
    fault: u64,
    until: Option<Millis>,
    /// The resourceVersion of its own latest write: a request based on it has seen the race.
    last_rv: String,
    writes: u64,
}

/// What a scheduled heal ends (each checks it still belongs to the fault that scheduled it).
#[derive(Clone, Debug)]
enum Heal {
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
}

/// One component with its informer cache and work queue.
struct Component {
    ctrl: Box<dyn Controller>,
    /// Its [`ComponentId::name`], kept: every delivery, pass and request it makes names it in the
    /// trace, which shares this one allocation.
    name: Arc<str>,
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
    triggers: BTreeMap<ObjectKey, (&'static str, Option<u64>)>,
    /// Watch deliveries stay in order: none is delivered before the previous one.
    last_delivery: Millis,
    drop: Option<DropRule>,
    delay: Option<DelayRule>,
    /// Level (Kubernetes) or edge (the teaching variant, which never relists or resyncs).
    mode: TriggerMode,
    /// Its list failed (the API server was down): it lists as soon as the server is back.
    needs_relist: bool,
    /// When its next resync is due; a resync timer for any other time is stale.
    resync_at: Option<Millis>,
    /// Keys its field selector currently lets through, as the watch cache tracks them server-side:
    /// events about other objects are never sent (a kubelet does not hear of other nodes' pods),
    /// except the one that takes an object out of the selection. Empty for a component without
    /// a field selector ([`Controller::has_field_selector`]), which is sent every event.
    selected: BTreeSet<ObjectKey>,
}

impl Component {
    fn new(ctrl: Box<dyn Controller>, seed: u64) -> Component {
        let name: Arc<str> = ctrl.id().name().into();
        let rng = Rng::stream(seed, &name);
        Component {
            ctrl,
            name,
            cache: Cache::new(),
            selected: BTreeSet::new(),
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
            mode: TriggerMode::Level,
            needs_relist: false,
            resync_at: None,
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
        /// `requeue` (asked for by a pass) or `retry` (back-off after a failure).
        trigger: &'static str,
        /// The pass that asked, or the failed request.
        cause: Option<u64>,
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
    /// A fault's duration is over.
    Heal {
        fault: u64,
        heal: Heal,
    },
    Housekeeping,
}

/// A slot in the event queue: when, the tie-breaking sequence number, and where the event waits.
/// Kept small (the event itself stays put in [`Sim::slots`]) so the heap moves 24 bytes a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Scheduled {
    at: Millis,
    seq: u64,
    slot: u32,
}

impl Ord for Scheduled {
    /// Reversed, so the max-heap pops the earliest (time, sequence) first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Which running components watch one kind, kept up to date as components start, stop,
/// partition and heal, so a write is offered only to the components that can hear of it.
#[derive(Clone, Debug, Default)]
struct Watchers {
    /// Components asked about every event of the kind ([`Controller::accepts`]), in id order.
    general: Vec<ComponentId>,
    /// Kubelets routed by node name ([`Controller::node_selector`]), sorted by node name (which
    /// is their id order).
    by_node: Vec<String>,
}

/// Whether `id` sorts before `ComponentId::Kubelet(node)`.
fn before_kubelet(id: &ComponentId, node: &str) -> bool {
    match id {
        ComponentId::Kubelet(n) => n.as_str() < node,
        other => *other < ComponentId::Kubelet(String::new()),
    }
}

/// The node a routed (kubelet-style) field selector would pick an object by.
fn routed_node(obj: &Object) -> Option<&str> {
    match obj {
        Object::Pod(p) => Some(p.spec.node_name.as_str()),
        Object::Node(n) => Some(n.metadata.name.as_str()),
        _ => None,
    }
}

/// The node a component is routed by, if its selector is a kubelet's and its id says the same.
fn routing_of<'a>(id: &'a ComponentId, ctrl: &dyn Controller) -> Option<&'a str> {
    match (id, ctrl.node_selector()) {
        (ComponentId::Kubelet(n), Some(sel)) if n == sel => Some(n.as_str()),
        _ => None,
    }
}

/// The node of a kubelet id (routed components are kubelets).
fn id_node(id: &ComponentId) -> &str {
    match id {
        ComponentId::Kubelet(n) => n,
        _ => "",
    }
}

/// Records that `node`'s kubelet selects `key` (see `Sim::routed_selected`).
fn hold(index: &mut BTreeMap<ObjectKey, Vec<String>>, key: &ObjectKey, node: &str) {
    let nodes = index.entry(key.clone()).or_default();
    if !nodes.iter().any(|n| n == node) {
        nodes.push(node.to_string());
    }
}

/// Records that `node`'s kubelet no longer selects `key`.
fn release(index: &mut BTreeMap<ObjectKey, Vec<String>>, key: &ObjectKey, node: &str) {
    if let Some(nodes) = index.get_mut(key) {
        nodes.retain(|n| n != node);
        if nodes.is_empty() {
            index.remove(key);
        }
    }
}

/// What [`Sim::advance_to`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advanced {
    /// Events processed.
    pub events: usize,
    /// True when the work cap stopped it before reaching the target time.
    pub capped: bool,
}

/// A part of the world [`Sim::free_for_measurement`] can free, in the order a memory breakdown
/// frees them (an object version shared by several parts is counted where it is freed last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryPart {
    /// The trace's entries.
    Trace,
    /// The API server's watch history (old object versions nobody else holds).
    WatchHistory,
    /// Event objects and the recorder's memory of them.
    Events,
    /// Every component's informer cache, with its indexes and field-selector sets.
    InformerCaches,
    /// The kubelets' own state (pod workers, probe and back-off bookkeeping), work queues and
    /// timers.
    Kubelets,
    /// The control-plane components' own state (scheduler queues, expectations, the garbage
    /// collector's graph), work queues and timers.
    Controllers,
    /// The container runtimes of the machines.
    Runtimes,
    /// The world's queue of deliveries, requests in flight and timers.
    EventQueue,
    /// The API server's store: the current version of every object.
    Store,
}

impl MemoryPart {
    /// Every part, in breakdown order.
    pub const ALL: [MemoryPart; 9] = [
        MemoryPart::Trace,
        MemoryPart::WatchHistory,
        MemoryPart::Events,
        MemoryPart::InformerCaches,
        MemoryPart::Kubelets,
        MemoryPart::Controllers,
        MemoryPart::Runtimes,
        MemoryPart::EventQueue,
        MemoryPart::Store,
    ];

    /// What the breakdown calls it.
    pub fn name(self) -> &'static str {
        match self {
            MemoryPart::Trace => "trace",
            MemoryPart::WatchHistory => "watch history (old versions)",
            MemoryPart::Events => "Events + recorder",
            MemoryPart::InformerCaches => "informer caches (maps, indexes)",
            MemoryPart::Kubelets => "kubelets' own state, work queues",
            MemoryPart::Controllers => "controllers' own state, work queues",
            MemoryPart::Runtimes => "container runtimes",
            MemoryPart::EventQueue => "world event queue",
            MemoryPart::Store => "store (current objects)",
        }
    }
}

/// Trace entries a [`Sim::detached_copy`] keeps: it runs one action and is dropped.
const DETACHED_TRACE: usize = 64;

/// The whole simulated cluster.
pub struct Sim {
    now: Millis,
    seq: u64,
    config: SimConfig,
    queue: BinaryHeap<Scheduled>,
    /// Where queued events wait (a slab: freed slots are reused, lowest-freed-last, which is
    /// deterministic and never observable).
    slots: Vec<Option<SimEvent>>,
    free_slots: Vec<u32>,
    /// Running, connected watchers per kind (see [`Watchers`]).
    watchers: BTreeMap<Kind, Watchers>,
    /// For kubelet-style routed components: object key → the nodes whose kubelet's field
    /// selector currently holds it (the inverse of their `selected` sets), so an object leaving
    /// a node's selection still reaches that node's kubelet.
    routed_selected: BTreeMap<ObjectKey, Vec<String>>,
    /// The API server's store.
    pub api: ApiServer,
    components: BTreeMap<ComponentId, Component>,
    /// Container runtimes, one per machine; a node that is down has none running.
    machines: BTreeMap<String, Machine>,
    /// Bumped whenever a machine is added, removed, powered off or powered on.
    machines_generation: u64,
    /// Images the simulated registry refuses to serve.
    pub broken_images: BTreeSet<String>,
    api_server_up: bool,
    recorder: Recorder,
    trace: Trace,
    latency_rng: Rng,
    /// While a fault (or its heal) is being applied: its trace entry, the cause of what it does.
    fault_cause: Option<u64>,
    /// Active ConflictingWriters by object.
    rivals: BTreeMap<ObjectKey, Rival>,
    /// The trace entry of the last request sent.
    last_api_seq: u64,
}

/// A simulated machine.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// Powered on (booting or booted).
    pub up: bool,
    pub runtime: NodeRuntime,
    /// While it boots after a NodeUp: when its kubelet starts.
    pub kubelet_starts_at: Option<Millis>,
}

/// How long a machine powered on by NodeUp takes before its kubelet runs: firmware, kernel and
/// systemd, then the container runtime and the kubelet (ARCHITECTURE.md, "Deliberate
/// simplifications", says where the figure comes from). The kubelet then posts the node Ready
/// within a second, as its fast status update on start does.
pub const MACHINE_BOOT_MS: Millis = 30_000;

impl Sim {
    /// A cluster with the control plane running and no objects yet.
    pub fn new(config: SimConfig) -> Sim {
        let seed = config.seed;
        let mut sim = Sim {
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            watchers: BTreeMap::new(),
            routed_selected: BTreeMap::new(),
            api: ApiServer::new(seed),
            components: BTreeMap::new(),
            machines: BTreeMap::new(),
            machines_generation: 0,
            broken_images: BTreeSet::new(),
            api_server_up: true,
            recorder: Recorder::default(),
            trace: Trace::with_capacity(config.trace_capacity),
            latency_rng: Rng::stream(seed, "latency"),
            fault_cause: None,
            rivals: BTreeMap::new(),
            last_api_seq: 0,
            config,
        };
        // The API server is up before any component connects: their first list finds these.
        sim.ensure_bootstrap_objects();
        for ctrl in controllers::control_plane() {
            let id = ctrl.id();
            sim.components
                .insert(id.clone(), Component::new(ctrl, seed));
            sim.start_component(&id, "start");
        }
        sim.schedule(10_000, SimEvent::Housekeeping);
        sim
    }

    /// A copy of the store, the machines and the clock with no component running and nothing
    /// queued: what an action would change, worked out without touching this simulation (a
    /// lesson compares it with what the learner did: see `progress`). Nothing in it advances.
    pub fn detached_copy(&self) -> Sim {
        Sim {
            now: self.now,
            seq: self.seq,
            config: self.config.clone(),
            queue: BinaryHeap::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            watchers: BTreeMap::new(),
            routed_selected: BTreeMap::new(),
            api: self.api.clone(),
            components: BTreeMap::new(),
            machines: self.machines.clone(),
            machines_generation: self.machines_generation,
            broken_images: self.broken_images.clone(),
            api_server_up: self.api_server_up,
            recorder: Recorder::default(),
            trace: Trace::with_capacity(DETACHED_TRACE),
            latency_rng: self.latency_rng.clone(),
            fault_cause: None,
            rivals: BTreeMap::new(),
            last_api_seq: 0,
        }
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

    /// Changes whenever [`Sim::machines`] gains or loses a machine or one is powered off or on,
    /// so a view can tell that nothing changed without comparing a thousand names every frame.
    pub fn machines_generation(&self) -> u64 {
        self.machines_generation
    }

    /// The ids of every component, in order.
    pub fn component_ids(&self) -> Vec<ComponentId> {
        self.components.keys().cloned().collect()
    }

    /// Whether the API server answers (a StopComponent kube-apiserver fault makes it 503).
    pub fn is_api_server_up(&self) -> bool {
        self.api_server_up
    }

    /// Whether a component is running (not stopped or down).
    pub fn is_running(&self, id: &ComponentId) -> bool {
        self.components.get(id).is_some_and(|c| c.running)
    }

    /// Adds a component at runtime (a long-running client such as `kubectl drain`) and starts it.
    /// A component with the same id is replaced; its generation carries on, so timers and
    /// responses meant for the old one are ignored.
    pub fn add_component(&mut self, ctrl: Box<dyn Controller>) {
        let id = ctrl.id();
        match self.components.get_mut(&id) {
            Some(c) => {
                c.ctrl = ctrl;
                self.stop_component(&id);
            }
            None => {
                self.components
                    .insert(id.clone(), Component::new(ctrl, self.config.seed));
            }
        }
        self.start_component(&id, "start");
    }

    /// Stops a runtime component for good; it stays listed so its state can still be read.
    pub fn retire_component(&mut self, id: &ComponentId) -> bool {
        let known = self.components.contains_key(id);
        self.stop_component(id);
        known
    }

    /// A component's controller, to read its state through [`Controller::as_any`].
    pub fn component(&self, id: &ComponentId) -> Option<&dyn Controller> {
        self.components.get(id).map(|c| c.ctrl.as_ref())
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
        self.queue.peek().map(|s| s.at)
    }

    /// Schedules the heal that ends fault `fault`'s effect at `at`; a fault with no duration
    /// (`at` None) lasts until the world is reset.
    fn schedule_heal(&mut self, at: Option<Millis>, fault: u64, heal: Heal) {
        if let Some(at) = at {
            self.schedule(at, SimEvent::Heal { fault, heal });
        }
    }

    fn schedule(&mut self, at: Millis, ev: SimEvent) {
        self.seq += 1;
        let slot = match self.free_slots.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(ev);
                i
            }
            None => {
                self.slots.push(Some(ev));
                (self.slots.len() - 1) as u32
            }
        };
        self.queue.push(Scheduled {
            at: at.max(self.now),
            seq: self.seq,
            slot,
        });
    }

    fn jitter(&mut self, range: (Millis, Millis)) -> Millis {
        self.latency_rng.range(range.0, range.1)
    }

    /// Processes every event up to and including `t`, then sets the clock to `t`, doing at most
    /// `max_events` events (the UI's per-frame budget); a capped advance leaves the clock at the
    /// last processed event so nothing is skipped.
    pub fn advance_to(&mut self, t: Millis, max_events: usize) -> Advanced {
        let mut done = Advanced::default();
        while let Some(&Scheduled { at, .. }) = self.queue.peek() {
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
        let Some(Scheduled { at, slot, .. }) = self.queue.pop() else {
            return;
        };
        self.now = self.now.max(at);
        let Some(ev) = self.slots.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        self.free_slots.push(slot);
        match ev {
            SimEvent::Deliver { to, gen, event } => self.deliver(&to, gen, event),
            SimEvent::Pump { to, gen } => self.process_next_work_item(&to, gen),
            SimEvent::Requeue {
                to,
                gen,
                key,
                trigger,
                cause,
            } => {
                if let Some(c) = self.components.get_mut(&to) {
                    if c.generation == gen && c.requeues.get(&key) == Some(&at) {
                        c.requeues.remove(&key);
                    }
                }
                self.enqueue(&to, gen, key, trigger, cause);
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
            SimEvent::Heal { fault, heal } => self.heal(fault, heal),
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
    fn arm_resync(&mut self, id: &ComponentId) {
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
        self.refresh_watchers(id);
    }

    fn relist(&mut self, id: &ComponentId, reason: &str) {
        self.relist_with(id, reason, false);
    }

    /// An informer's LIST. A (re)started process starts from an empty cache and queues every
    /// key. The same process relisting (410 Gone, a watch that was broken) keeps its handlers'
    /// state: like client-go's Replace, the handlers see what changed since the cache's view —
    /// new objects as ADDED, changed ones as MODIFIED, vanished ones as DELETED tombstones
    /// (`DeletedFinalStateUnknown`) — so expectations and bookkeeping catch up. Edge-triggered
    /// components refresh their cache but are told nothing.
    fn relist_with(&mut self, id: &ComponentId, reason: &str, same_process: bool) {
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
        let old = std::mem::take(&mut c.cache);
        for kind in c.ctrl.watched_kinds() {
            for (key, obj) in self.api.list_keyed(*kind) {
                if c.ctrl.accepts(obj) {
                    c.cache.upsert_shared(obj.clone(), key);
                }
            }
        }
        let rv = self.api.resource_version();
        c.cache.last_rv = rv;
        let selected: BTreeSet<ObjectKey> = if c.ctrl.has_field_selector() {
            c.cache.all().map(|o| o.key()).collect()
        } else {
            BTreeSet::new()
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
                        event_type: type_.as_str(),
                        object: ev.name.clone(),
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

    fn enqueue(
        &mut self,
        id: &ComponentId,
        gen: u64,
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
                SimEvent::Pump {
                    to: id.clone(),
                    gen,
                },
            );
        }
    }

    /// Brings the per-kind watcher index up to date for one component, after it was added,
    /// started, stopped, partitioned, healed, replaced or removed.
    fn refresh_watchers(&mut self, id: &ComponentId) {
        for w in self.watchers.values_mut() {
            if let Ok(i) = w.general.binary_search(id) {
                w.general.remove(i);
            }
            if let ComponentId::Kubelet(n) = id {
                if let Ok(i) = w.by_node.binary_search(n) {
                    w.by_node.remove(i);
                }
            }
        }
        let Some(c) = self.components.get(id) else {
            return;
        };
        if !c.running || c.partitioned {
            return;
        }
        let routed = routing_of(id, c.ctrl.as_ref()).map(str::to_string);
        for kind in c.ctrl.watched_kinds() {
            let w = self.watchers.entry(*kind).or_default();
            match &routed {
                Some(n) => {
                    if let Err(i) = w.by_node.binary_search(n) {
                        w.by_node.insert(i, n.clone());
                    }
                }
                None => {
                    if let Err(i) = w.general.binary_search(id) {
                        w.general.insert(i, id.clone());
                    }
                }
            }
        }
    }

    /// The running, connected components that can hear of `ev`, each with its rank among all
    /// of the kind's running watchers (its place in the latency draws), in rank order; and how
    /// many watchers there are in all. Routed kubelets that neither select the object nor held
    /// it are left out: they would only have drawn a latency.
    fn listeners(
        &self,
        ev: &WatchEvent,
        key: &ObjectKey,
    ) -> (Vec<(usize, ComponentId, bool)>, usize) {
        let Some(w) = self.watchers.get(&key.kind) else {
            return (Vec::new(), 0);
        };
        let mut heard: Vec<(usize, ComponentId, bool)> = Vec::with_capacity(w.general.len() + 2);
        for (i, g) in w.general.iter().enumerate() {
            let kubelets_before = match g {
                ComponentId::Kubelet(n) => w.by_node.partition_point(|m| m < n),
                other if *other < ComponentId::Kubelet(String::new()) => 0,
                _ => w.by_node.len(),
            };
            heard.push((i + kubelets_before, g.clone(), false));
        }
        if !w.by_node.is_empty() {
            let mut nodes: Vec<&str> = Vec::new();
            if let Some(n) = routed_node(&ev.object) {
                nodes.push(n);
            }
            if let Some(held) = self.routed_selected.get(key) {
                nodes.extend(held.iter().map(String::as_str));
            }
            nodes.sort_unstable();
            nodes.dedup();
            for n in nodes {
                if let Ok(p) = w.by_node.binary_search_by(|m| m.as_str().cmp(n)) {
                    let general_before = w.general.partition_point(|g| before_kubelet(g, n));
                    heard.push((
                        general_before + p,
                        ComponentId::Kubelet(n.to_string()),
                        true,
                    ));
                }
            }
            heard.sort_by_key(|(rank, _, _)| *rank);
        }
        (heard, w.general.len() + w.by_node.len())
    }

    fn fan_out(&mut self, events: &[WatchEvent]) {
        let (lo, hi) = self.config.watch_latency;
        // `Rng::range` draws once per call exactly when the range is not empty.
        let draws_each = u64::from(hi > lo);
        for ev in events {
            self.maybe_boot_machine(ev);
            let kind = ev.object.kind();
            let key: &ObjectKey = &ev.key;
            // Every running watcher of the kind draws a latency, in id order, whether its field
            // selector lets the event through or not; only those that can hear of it are visited,
            // each with the draw at its rank, and the stream then jumps past all of them.
            let (heard, total) = self.listeners(ev, key);
            #[cfg(debug_assertions)]
            self.check_unheard(ev, key, &heard);
            let base = self.latency_rng.clone();
            for (rank, id, routed) in heard {
                let latency = {
                    let mut r = base.clone();
                    r.skip(rank as u64 * draws_each);
                    r.range(lo, hi)
                };
                let now = self.now;
                let c = self
                    .components
                    .get_mut(&id)
                    .expect("indexed watchers exist");
                if !c.ctrl.has_field_selector() {
                    debug_assert!(
                        c.ctrl.accepts(&ev.object),
                        "{id} filters without a field selector"
                    );
                } else if ev.type_ != WatchEventType::Deleted && c.ctrl.accepts(&ev.object) {
                    if !c.selected.contains(key) {
                        c.selected.insert(key.clone());
                        if routed {
                            hold(&mut self.routed_selected, key, id_node(&id));
                        }
                    }
                } else if !c.selected.remove(key) {
                    continue;
                } else if routed {
                    release(&mut self.routed_selected, key, id_node(&id));
                }
                // A lost event never reaches the informer; its cache stays stale for that object.
                if let Some(rule) = &mut c.drop {
                    let active = rule.until.is_none_or(|u| now < u);
                    let kind_ok = rule.kind.is_none_or(|k| k == kind)
                        && rule.event_type.is_none_or(|t| t == ev.type_);
                    if active && kind_ok {
                        let hit = match (rule.remaining.as_mut(), rule.probability) {
                            (Some(n), _) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            (None, Some(p)) => c.rng.chance(p),
                            _ => false,
                        };
                        let fault = rule.fault;
                        // A rule with a duration stays until its heal, which relists.
                        if rule.remaining == Some(0)
                            && rule.probability.is_none()
                            && rule.until.is_none()
                        {
                            c.drop = None;
                        }
                        if hit {
                            // Caused by the fault that lost it (the write is named by rv).
                            self.trace.push(
                                now,
                                Some(fault),
                                TraceKind::Watch {
                                    component: id.name().into(),
                                    event_type: ev.type_.as_str(),
                                    object: ev.name.clone(),
                                    resource_version: ev.resource_version,
                                    delivery: Delivery::Dropped,
                                },
                            );
                            continue;
                        }
                    }
                }
                let extra = match &c.delay {
                    Some(rule) if rule.until.is_none_or(|u| now < u) => rule.delay,
                    _ => 0,
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
            self.latency_rng.skip(total as u64 * draws_each);
        }
    }

    /// Debug builds check the routing: a kubelet left out of a fan-out would not have heard
    /// of the event anyway.
    #[cfg(debug_assertions)]
    fn check_unheard(
        &self,
        ev: &WatchEvent,
        key: &ObjectKey,
        heard: &[(usize, ComponentId, bool)],
    ) {
        for (id, c) in &self.components {
            if !c.running || c.partitioned || !c.ctrl.watched_kinds().contains(&key.kind) {
                continue;
            }
            if heard.iter().any(|(_, h, _)| h == id) {
                continue;
            }
            let accepted = ev.type_ != WatchEventType::Deleted && c.ctrl.accepts(&ev.object);
            assert!(
                !accepted && !c.selected.contains(key),
                "{id} would hear of {key} but was not routed to"
            );
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
        // Already seen: a resumed watch or a relist overtook this delivery.
        if ev.resource_version <= c.cache.last_rv {
            return;
        }
        // The informer applies its field selector: objects entering or leaving it look like
        // adds/deletes. One cache descent both applies the change and tells which it was.
        let accepted = ev.type_ != WatchEventType::Deleted && c.ctrl.accepts(&ev.object);
        c.cache.last_rv = c.cache.last_rv.max(ev.resource_version);
        let (type_, old) = if accepted {
            let old = c.cache.upsert_shared(ev.object.clone(), &ev.key);
            let type_ = if old.is_some() {
                WatchEventType::Modified
            } else {
                WatchEventType::Added
            };
            (type_, old)
        } else {
            match c.cache.remove(&ev.key) {
                Some(old) => (WatchEventType::Deleted, Some(old)),
                // client-go hands a DELETED to the handlers even when the object never reached
                // the cache (its ADD was lost): they still learn it is gone.
                None if ev.type_ == WatchEventType::Deleted && c.ctrl.accepts(&ev.object) => {
                    (WatchEventType::Deleted, None)
                }
                None => return,
            }
        };
        let local_ev = WatchEvent { type_, ..ev };
        let object = local_ev.name.clone();
        let keys = c.ctrl.keys_for_event(&local_ev, old.as_ref(), &c.cache);
        let seq = self.trace.push(
            now,
            Some(local_ev.cause),
            TraceKind::Watch {
                component: c.name.clone(),
                event_type: local_ev.type_.as_str(),
                object,
                resource_version: local_ev.resource_version,
                delivery: Delivery::Delivered,
            },
        );
        for k in keys {
            self.enqueue(id, gen, k, "watch", Some(seq));
        }
    }

    /// client-go's `processNextWorkItem`: takes the next key off a component's queue, runs its
    /// reconcile, and sends the requests it returned (they reach the API server after its latency).
    fn process_next_work_item(&mut self, id: &ComponentId, gen: u64) {
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
        let actions: Vec<String> = outcome
            .requests()
            .map(|r| describe_request(r, c.cache.get(&r.key()).map(|o| &**o)))
            .collect();
        let seq = self.trace.push(
            now,
            cause,
            TraceKind::Reconcile {
                component: c.name.clone(),
                key: key.to_string(),
                trigger,
                record: outcome.record.clone().map(Box::new),
                requests: n_requests,
                actions,
            },
        );
        for e in &outcome.events {
            self.record_event(id, e, Some(seq));
        }
        if let Some(after) = outcome.requeue_after {
            self.requeue_caused(id, gen, key.clone(), now + after, "requeue", Some(seq));
        }
        if outcome.error.is_some() {
            let c = self.components.get_mut(id).expect("exists");
            let delay = c.queue.backoff(&key);
            self.requeue_caused(id, gen, key.clone(), now + delay, "retry", Some(seq));
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

    /// Queues `key` again at `at`, remembering why (the trigger and the trace entry behind it).
    fn requeue_caused(
        &mut self,
        id: &ComponentId,
        gen: u64,
        key: ObjectKey,
        at: Millis,
        trigger: &'static str,
        cause: Option<u64>,
    ) {
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
                trigger,
                cause,
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

    fn execute(
        &mut self,
        from: &ComponentId,
        gen: u64,
        key: &ObjectKey,
        batches: Vec<Vec<ApiRequest>>,
        cause: u64,
    ) {
        let mut failed = false;
        let mut failure = None;
        let mut iter = batches.into_iter();
        for batch in iter.by_ref() {
            let mut batch_failed = false;
            for req in batch {
                let result = self.send(from, &req, Some(cause));
                // The request's own entry (a racing writer may have written just before it): the
                // cause of events about its answer, and of the retry when it failed.
                let api_seq = self.last_api_seq;
                if let Err(e) = &result {
                    // A delete of something already gone is what the controller wanted.
                    let benign = matches!(req, ApiRequest::Delete { .. }) && e.code() == 404;
                    if !benign {
                        batch_failed = true;
                        failure.get_or_insert(api_seq);
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
                self.requeue_caused(from, gen, key.clone(), now + delay, "retry", failure);
            } else {
                c.queue.forget(key);
            }
        }
    }

    /// Sends one request to the API server now, traces it, and fans out what it changed.
    fn send(&mut self, from: &ComponentId, req: &ApiRequest, cause: Option<u64>) -> ApiResult {
        let (partitioned, actor) = match self.components.get(from) {
            Some(c) => (c.partitioned, c.name.clone()),
            None => (false, from.name().into()),
        };
        if self.api_server_up && !partitioned && *from != ComponentId::User {
            self.race_conflicting_writer(req);
        }
        self.send_as(actor, partitioned, req, cause)
    }

    /// [`Sim::send`] for any actor, including ones that are not components (a ConflictingWriter).
    fn send_as(
        &mut self,
        actor: Arc<str>,
        partitioned: bool,
        req: &ApiRequest,
        cause: Option<u64>,
    ) -> ApiResult {
        let verb = req.verb();
        let key = req.key();
        if !self.api_server_up || partitioned {
            let err = ApiError::unavailable();
            self.last_api_seq = self.trace.push(
                self.now,
                cause,
                TraceKind::Api {
                    actor,
                    verb,
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
        self.last_api_seq = self.trace.push(
            self.now,
            cause,
            TraceKind::Api {
                actor,
                verb,
                object,
                code,
                message,
                resource_version: rv,
            },
        );
        self.fan_out(&handled.events);
        handled.result
    }

    /// The learner's (or a scenario's) request, executed synchronously as kubectl would. Sent
    /// while a fault is applied (DeletePod, EditObject), the fault is its cause.
    pub fn submit(&mut self, req: ApiRequest) -> ApiResult {
        let cause = self.fault_cause;
        self.send(&ComponentId::User, &req, cause)
    }

    /// Records a Kubernetes Event on behalf of a component.
    pub fn record_event(&mut self, from: &ComponentId, rec: &EventRecord, cause: Option<u64>) {
        // The recorder cannot write it (the API server is down, or a partition cuts the component
        // off); client-go's broadcaster retries and then drops it.
        let cut_off = self.components.get(from).is_some_and(|c| c.partitioned);
        if !self.api_server_up || cut_off {
            return;
        }
        let (source, host) = match from {
            ComponentId::Kubelet(node) => ("kubelet".to_string(), node.clone()),
            other => (other.name(), String::new()),
        };
        let recorded = self
            .recorder
            .record(self.now, &source, &host, rec, &self.api);
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
        self.cap_events();
    }

    /// Past [`MAX_EVENTS`], expires the oldest Events (by last time seen, as the TTL would) down
    /// to [`EVENT_EXPIRY_BATCH`] below the cap, and makes the recorder forget them, as TTL expiry
    /// does: a repeat of one of them starts a fresh Event.
    fn cap_events(&mut self) {
        let count = self.api.count(Kind::Event);
        if count <= MAX_EVENTS {
            return;
        }
        // The store keeps Events in (age, key) order, so the oldest `excess` are its first ones.
        let excess = count - (MAX_EVENTS - EVENT_EXPIRY_BATCH);
        let expired: Vec<ObjectKey> = self
            .api
            .events_by_age()
            .take(excess)
            .map(|(_, k)| k.clone())
            .collect();
        self.expire_events(&expired);
    }

    /// Removes `expired` Events from the store, and their identities from the recorder.
    fn expire_events(&mut self, expired: &[ObjectKey]) {
        self.recorder.forget(
            expired
                .iter()
                .filter_map(|k| self.api.get(k).and_then(|o| o.as_event())),
        );
        for k in expired {
            self.api.expire_event(k);
        }
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
                        kubelet_starts_at: None,
                    },
                );
                self.machines_generation += 1;
                let id = ComponentId::Kubelet(name.clone());
                let kubelet = controllers::kubelet_for(&name);
                self.components
                    .insert(id.clone(), Component::new(kubelet, self.config.seed));
                self.start_component(&id, "start");
            }
            WatchEventType::Deleted => {
                // Deleting the Node object decommissions the machine (a deliberate simplification:
                // a real kubelet would re-register its node).
                if self.machines.remove(&name).is_some() {
                    self.machines_generation += 1;
                }
                let id = ComponentId::Kubelet(name);
                if let Some(c) = self.components.remove(&id) {
                    if let Some(node) = routing_of(&id, c.ctrl.as_ref()) {
                        for key in &c.selected {
                            release(&mut self.routed_selected, key, node);
                        }
                    }
                }
                self.refresh_watchers(&id);
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
        let result = self.inject_inner(&fault, seq);
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

    fn component_arg(&self, name: &str) -> Result<Vec<ComponentId>, String> {
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

    fn names(ids: &[ComponentId]) -> String {
        if ids.len() == ComponentId::CONTROLLER_MANAGER.len()
            && ComponentId::CONTROLLER_MANAGER
                .iter()
                .all(|c| ids.contains(c))
        {
            return "kube-controller-manager".into();
        }
        ids.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
    }

    fn inject_inner(&mut self, fault: &Fault, seq: u64) -> Result<String, String> {
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
                if !m.up {
                    return Err(format!("node {node} is already down"));
                }
                m.up = false;
                m.kubelet_starts_at = None;
                m.runtime.power_off();
                self.machines_generation += 1;
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
                let at = self.now.saturating_add(MACHINE_BOOT_MS);
                m.kubelet_starts_at = Some(at);
                let boot = m.runtime.reboots;
                self.machines_generation += 1;
                self.schedule(
                    at,
                    SimEvent::Heal {
                        fault: seq,
                        heal: Heal::Boot {
                            node: node.clone(),
                            boot,
                        },
                    },
                );
                Ok(format!(
                    "node {node} is powered on: it boots, and in {} its kubelet starts, relists and reconciles its pods",
                    super::time::format_duration(MACHINE_BOOT_MS)
                ))
            }
            Fault::PartitionNode { node } => {
                let id = ComponentId::Kubelet(node.clone());
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
                let running = c.running;
                self.refresh_watchers(&id);
                if running {
                    self.resume_watch(&id);
                }
                Ok(format!(
                    "node {node} reconnected: the kubelet resumes its watch (or relists after 410 Gone)"
                ))
            }
            Fault::DropWatchEvents {
                component,
                count,
                probability,
                kind,
                event_type,
                duration,
            } => {
                let kind = match kind {
                    Some(k) => Some(parse_kind(k)?),
                    None => None,
                };
                let event_type = match event_type {
                    Some(t) => Some(parse_event_type(t)?),
                    None => None,
                };
                if let Some(p) = probability {
                    if !(0.0..=1.0).contains(p) {
                        return Err(format!("probability must be between 0 and 1, got {p}"));
                    }
                }
                // A duration alone loses every matching event for that long.
                let (remaining, probability) = match (count, probability, duration) {
                    (_, Some(p), _) => (None, Some(*p)),
                    (Some(n), None, _) => (Some(*n), None),
                    (None, None, Some(_)) => (None, Some(1.0)),
                    (None, None, None) => (Some(1), None),
                };
                let until = duration.map(|d| self.now + d);
                let rule = DropRule {
                    remaining,
                    probability,
                    kind,
                    event_type,
                    until,
                    fault: seq,
                };
                let ids = self.component_arg(component)?;
                for id in &ids {
                    self.components.get_mut(id).expect("checked").drop = Some(rule.clone());
                }
                self.schedule_heal(until, seq, Heal::Drop(ids.clone()));
                let what = format!(
                    "{}{} event{}",
                    kind.map_or(String::new(), |k| format!("{k} ")),
                    event_type.map_or("watch", |t| t.as_str()),
                    if remaining == Some(1) { "" } else { "s" }
                );
                let how = match (remaining, probability) {
                    (Some(1), _) => format!("the next {what}"),
                    (Some(n), _) => format!("the next {n} {what}"),
                    (None, Some(p)) if p >= 1.0 => format!("every {what}"),
                    (None, Some(p)) => format!("each {what} with probability {p}"),
                    (None, None) => what,
                };
                let span = match duration {
                    Some(d) => format!(
                        " for {}; then its watch restarts and it relists",
                        super::time::format_duration(*d)
                    ),
                    None => String::new(),
                };
                Ok(format!("{} will lose {how}{span}", Self::names(&ids)))
            }
            Fault::DelayWatchEvents {
                component,
                delay,
                duration,
            } => {
                let until = duration.map(|d| self.now + d);
                let ids = self.component_arg(component)?;
                for id in &ids {
                    self.components.get_mut(id).expect("checked").delay = Some(DelayRule {
                        delay: *delay,
                        until,
                        fault: seq,
                    });
                }
                self.schedule_heal(until, seq, Heal::Delay(ids.clone()));
                let span = for_span(*duration);
                Ok(format!(
                    "{}'s watch lags by {}{span}",
                    Self::names(&ids),
                    super::time::format_duration(*delay)
                ))
            }
            Fault::RestartController { component } => {
                if is_api_server(component) {
                    // Watches break and reconnect from where they were; nothing else is lost.
                    let ids: Vec<ComponentId> = self
                        .components
                        .iter()
                        .filter(|(_, c)| c.running && !c.partitioned)
                        .map(|(id, _)| id.clone())
                        .collect();
                    for id in ids {
                        self.resume_watch(&id);
                    }
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
            Fault::StopComponent { component } => {
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
            Fault::StartComponent { component } => {
                if is_api_server(component) {
                    if self.api_server_up {
                        return Err("the API server is already up".into());
                    }
                    self.api_server_up = true;
                    let ids: Vec<ComponentId> = self
                        .components
                        .iter()
                        .filter(|(_, c)| c.running && !c.partitioned)
                        .map(|(id, _)| id.clone())
                        .collect();
                    for id in ids {
                        self.resume_watch(&id);
                    }
                    return Ok(
                        "the API server is back: watches resume (or relist after 410 Gone)".into(),
                    );
                }
                let ids = self.component_arg(component)?;
                for id in &ids {
                    if !self.is_running(id) {
                        self.start_component(id, "started");
                    }
                }
                Ok(format!("{} started", Self::names(&ids)))
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
            | Fault::FailLiveness { target, .. } => self.inject_container_fault(fault, target, seq),
            Fault::ConflictingWriter { object, duration } => {
                let key = parse_object_ref(object)?;
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
                let span = for_span(*duration);
                Ok(format!(
                    "a second writer races every controller write to {key}{span}: each gets 409 Conflict once and is retried from a fresh read"
                ))
            }
            Fault::SetTriggerMode { component, mode } => {
                let ids = self.component_arg(component)?;
                let mut out = Vec::new();
                for id in &ids {
                    out.push(self.set_trigger_mode(id, *mode)?);
                }
                Ok(out.join("\n"))
            }
            Fault::SetResync { component, period } => {
                let ids = self.component_arg(component)?;
                for id in &ids {
                    self.set_resync(id, *period);
                }
                Ok(match period {
                    Some(p) => format!(
                        "{} resyncs every {}",
                        Self::names(&ids),
                        super::time::format_duration((*p).max(1000))
                    ),
                    None => format!("{} never resyncs", Self::names(&ids)),
                })
            }
        }
    }

    /// A ConflictingWriter's move: just before a controller's conditional write to the object
    /// (Update, UpdateStatus, or a patch or delete carrying a resourceVersion) that would succeed,
    /// the rival writes the object first, so the controller's write meets 409 Conflict. A write
    /// based on the rival's own latest version has re-read since, and goes through: every write is
    /// raced once, costs one 409 and a back-off retry, and nothing is lost.
    fn race_conflicting_writer(&mut self, req: &ApiRequest) {
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
            r.last_rv = obj.meta().resource_version.clone();
            r.writes = n;
        }
    }

    /// Ends a fault whose duration is over, unless something newer replaced it.
    fn heal(&mut self, fault: u64, heal: Heal) {
        let now = self.now;
        let push = |sim: &mut Sim, name: &str, text: String| {
            sim.trace.push(
                now,
                Some(fault),
                TraceKind::Fault {
                    fault: name.into(),
                    description: format!("healed — {text}"),
                },
            )
        };
        match heal {
            Heal::Drop(ids) => {
                let ids: Vec<ComponentId> = ids
                    .into_iter()
                    .filter(|id| {
                        self.components
                            .get(id)
                            .and_then(|c| c.drop.as_ref())
                            .is_some_and(|r| r.fault == fault)
                    })
                    .collect();
                if ids.is_empty() {
                    return;
                }
                let seq = push(
                    self,
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
            Heal::Delay(ids) => {
                let ids: Vec<ComponentId> = ids
                    .into_iter()
                    .filter(|id| {
                        self.components
                            .get(id)
                            .and_then(|c| c.delay.as_ref())
                            .is_some_and(|r| r.fault == fault)
                    })
                    .collect();
                if ids.is_empty() {
                    return;
                }
                for id in &ids {
                    self.components.get_mut(id).expect("filtered above").delay = None;
                }
                push(
                    self,
                    "DelayWatchEvents",
                    format!("{}'s watch is on time again", Self::names(&ids)),
                );
            }
            Heal::Rival(key) => {
                if self.rivals.get(&key).is_none_or(|r| r.fault != fault) {
                    return;
                }
                let rival = self.rivals.remove(&key).expect("checked");
                push(
                    self,
                    "ConflictingWriter",
                    format!(
                        "the second writer stopped after racing {} write{} to {key}",
                        rival.writes,
                        if rival.writes == 1 { "" } else { "s" }
                    ),
                );
            }
            Heal::Boot { node, boot } => {
                let Some(m) = self
                    .machines
                    .get_mut(&node)
                    .filter(|m| m.up && m.runtime.reboots == boot)
                else {
                    return;
                };
                m.kubelet_starts_at = None;
                self.machines_generation += 1;
                // Not "healed": NodeUp is the repair, and this is the end of its boot.
                let seq = self.trace.push(
                    now,
                    Some(fault),
                    TraceKind::Fault {
                        fault: "NodeUp".into(),
                        description: format!(
                            "booted — node {node} finished booting: its kubelet starts, relists and reconciles its pods"
                        ),
                    },
                );
                let id = ComponentId::Kubelet(node);
                if let Some(c) = self.components.get_mut(&id) {
                    c.partitioned = false;
                }
                let outer = self.fault_cause.replace(seq);
                self.start_component(&id, "node booted");
                self.fault_cause = outer;
            }
            Heal::Container { fault: name, pods } => {
                let seq = push(
                    self,
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
                    let id = ComponentId::Kubelet(node);
                    if let Some(gen) = self
                        .components
                        .get(&id)
                        .filter(|c| c.running)
                        .map(|c| c.generation)
                    {
                        let at = super::machinery::node_runtime::next_relist(now);
                        self.requeue_caused(&id, gen, key, at, "requeue", Some(seq));
                    }
                }
            }
        }
    }

    /// Switches a component between level- and edge-triggered reconciliation, a teaching device
    /// (see [`super::faults::EDGE_TRIGGERED_NOTE`]). The component restarts with the other
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

    /// How a component is triggered.
    pub fn trigger_mode(&self, id: &ComponentId) -> TriggerMode {
        self.components
            .get(id)
            .map_or(TriggerMode::Level, |c| c.mode)
    }

    /// Container faults change the machine's runtime; the kubelet notices at its next PLEG relist.
    fn inject_container_fault(
        &mut self,
        fault: &Fault,
        target: &super::faults::PodTarget,
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
                    hit.push((node.clone(), key.clone()));
                    let id = ComponentId::Kubelet(node);
                    if let Some(gen) = self
                        .components
                        .get(&id)
                        .filter(|c| c.running)
                        .map(|c| c.generation)
                    {
                        let at = super::machinery::node_runtime::next_relist(now);
                        self.requeue_caused(&id, gen, key, at, "requeue", Some(seq));
                    }
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

    /// Reconnects a component's watch from its last resourceVersion: the missed events are
    /// delivered, or — when the history no longer reaches back that far — the server answers
    /// 410 Gone and the informer relists.
    fn resume_watch(&mut self, id: &ComponentId) {
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
                if let Some(c) = self.components.get_mut(id) {
                    c.last_delivery = at;
                }
                for ev in events {
                    let kind = ev.object.kind();
                    if self.components[id].ctrl.watched_kinds().contains(&kind) {
                        self.schedule(
                            at,
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
                    self.fault_cause,
                    TraceKind::Watch {
                        component: id.name().into(),
                        event_type: "ERROR",
                        object: format!("410 {:?}: {}", err.reason, err.message).into(),
                        resource_version: from,
                        delivery: Delivery::Delivered,
                    },
                );
                self.relist_with(id, "410 Gone: too old resource version", true);
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

    /// The API server's bootstrap controller, every housekeeping pass (its loop runs every 10 s):
    /// the `kubernetes` Service and its EndpointSlice come back when someone deletes them. A
    /// deliberate simplification: it recreates them but does not revert edits to them.
    fn ensure_bootstrap_objects(&mut self) {
        if !self.api_server_up {
            return;
        }
        for obj in super::api::apiserver::bootstrap_objects() {
            if self.api.get(&obj.key()).is_none() {
                // Refused only if a user's Service holds 10.96.0.1 (or a playground cap is
                // reached): left so, and tried again on the next pass.
                let _ = self.send_as(
                    "kube-apiserver".into(),
                    false,
                    &ApiRequest::Create(obj),
                    None,
                );
            }
        }
    }

    fn housekeeping(&mut self) {
        self.ensure_bootstrap_objects();
        self.api.compact(self.now);
        // An Event's age is its lastTimestamp when it has one, and the ones without never expire
        // here: every candidate is among the oldest.
        let expired: Vec<ObjectKey> = self
            .api
            .events_by_age()
            .take_while(|(t, _)| t + EVENT_TTL < self.now)
            .filter(|(_, k)| {
                self.api
                    .get(k)
                    .and_then(|o| o.as_event())
                    .is_some_and(|e| e.last_timestamp.is_some())
            })
            .map(|(_, k)| k.clone())
            .collect();
        self.expire_events(&expired);
        self.recorder.prune(self.now);
        // Events created by other means than the recorder (kubectl create) count too.
        self.cap_events();
        self.schedule(self.now + 10_000, SimEvent::Housekeeping);
    }

    /// How many events wait in the world's queue (deliveries, timers, requests in flight): with
    /// [`Sim::recorder_len`], what the memory-bound tests watch over a long run.
    pub fn queued_events(&self) -> usize {
        self.queue.len()
    }

    /// How many entries the Event recorder remembers (see [`super::machinery::recorder::Recorder::len`]).
    pub fn recorder_len(&self) -> usize {
        self.recorder.len()
    }

    /// Frees one part of the world, for `kubeloop bench --memory`, which reads how many heap
    /// bytes that gave back. Nothing else calls it: the world is not meant to run on afterwards.
    pub fn free_for_measurement(&mut self, part: MemoryPart) {
        match part {
            MemoryPart::Trace => {
                self.trace = Trace::with_capacity(self.config.trace_capacity);
            }
            MemoryPart::WatchHistory => self.api.free_history(),
            MemoryPart::Events => {
                let keys: Vec<ObjectKey> = self.api.list(Kind::Event).map(|o| o.key()).collect();
                for k in &keys {
                    self.api.expire_event(k);
                }
                self.recorder.clear();
            }
            MemoryPart::InformerCaches => {
                for c in self.components.values_mut() {
                    c.cache = Cache::new();
                    c.selected = BTreeSet::new();
                }
                self.routed_selected = BTreeMap::new();
            }
            MemoryPart::Kubelets => {
                self.components
                    .retain(|id, _| !matches!(id, ComponentId::Kubelet(_)));
                for w in self.watchers.values_mut() {
                    w.by_node = Vec::new();
                }
            }
            MemoryPart::Controllers => {
                self.components = BTreeMap::new();
                self.watchers = BTreeMap::new();
            }
            MemoryPart::Runtimes => self.machines = BTreeMap::new(),
            MemoryPart::EventQueue => {
                self.queue = BinaryHeap::new();
                self.slots = Vec::new();
                self.free_slots = Vec::new();
            }
            MemoryPart::Store => self.api = ApiServer::new(self.config.seed),
        }
    }

    /// True when nothing but periodic timers remains: no watch deliveries, API calls or queued keys.
    pub fn is_quiescent(&self) -> bool {
        self.components.values().all(|c| c.queue.is_empty())
            && self.slots.iter().flatten().all(|e| {
                matches!(
                    e,
                    SimEvent::Tick { .. }
                        | SimEvent::Resync { .. }
                        | SimEvent::Housekeeping
                        | SimEvent::Requeue { .. }
                        | SimEvent::Heal { .. }
                )
            })
    }
}

/// The annotation a ConflictingWriter bumps: a harmless change that moves the resourceVersion.
pub const RIVAL_ANNOTATION: &str = "kubeloop.dev/conflicting-writer";

/// How a ConflictingWriter appears in the trace (`actor`).
pub const RIVAL_ACTOR: &str = "conflicting-writer";

/// The names a fault may use for the API server.
fn is_api_server(name: &str) -> bool {
    matches!(name, "kube-apiserver" | "api-server" | "apiserver")
}

fn parse_kind(k: &str) -> Result<Kind, String> {
    Kind::from_kind_str(k)
        .or_else(|| {
            Kind::ALL
                .into_iter()
                .find(|x| x.as_str().eq_ignore_ascii_case(k))
        })
        .ok_or_else(|| format!("unknown kind {k:?}"))
}

fn parse_event_type(t: &str) -> Result<WatchEventType, String> {
    match t.to_ascii_uppercase().as_str() {
        "ADDED" => Ok(WatchEventType::Added),
        "MODIFIED" => Ok(WatchEventType::Modified),
        "DELETED" => Ok(WatchEventType::Deleted),
        _ => Err(format!(
            "unknown event type {t:?}: expected ADDED, MODIFIED or DELETED"
        )),
    }
}

/// The resourceVersion a request is conditional on, if any (only those can meet 409 Conflict).
fn precondition_rv(req: &ApiRequest) -> Option<String> {
    match req {
        ApiRequest::Update(o) | ApiRequest::UpdateStatus(o) => {
            Some(o.meta().resource_version.clone()).filter(|rv| !rv.is_empty())
        }
        ApiRequest::Patch { patch, .. } => patch
            .pointer("/metadata/resourceVersion")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        ApiRequest::Delete { options, .. } => options.precondition_resource_version.clone(),
        _ => None,
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
pub fn parse_label_selector(s: &str) -> Result<super::api::types::LabelSelector, String> {
    use super::api::types::{LabelSelector, LabelSelectorRequirement};
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

/// " for 30s" after a fault's description when it has a duration, else nothing.
fn for_span(duration: Option<Millis>) -> String {
    duration.map_or(String::new(), |d| {
        format!(" for {}", super::time::format_duration(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Container, ObjectMeta, Pod, PodSpec};
    use crate::sim::session::Session;

    fn kubelet_sees(sim: &Sim, node: &str, key: &ObjectKey) -> bool {
        sim.cache_of(&ComponentId::Kubelet(node.into()))
            .is_some_and(|c| c.get(key).is_some())
    }

    /// A session with the default cluster and a bare pod bound to node-1, its watch events
    /// delivered.
    fn pod_on_node_1() -> (Session, ObjectKey) {
        let mut s = Session::new(1);
        s.advance_to(2_000, usize::MAX);
        let pod = Pod {
            metadata: ObjectMeta {
                name: "p".into(),
                namespace: "default".into(),
                ..Default::default()
            },
            spec: PodSpec {
                node_name: "node-1".into(),
                containers: vec![Container {
                    name: "app".into(),
                    image: "nginx".into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
            ..Default::default()
        };
        let key = s
            .sim
            .submit(ApiRequest::Create(Object::Pod(pod)))
            .expect("created")
            .key();
        s.advance_to(3_000, usize::MAX);
        (s, key)
    }

    #[test]
    fn a_pod_moved_to_another_node_leaves_the_old_kubelets_view_and_enters_the_new_one() {
        // Debug builds also check every fan-out: no kubelet left out would have heard of a write.
        let (mut s, key) = pod_on_node_1();
        assert!(kubelet_sees(&s.sim, "node-1", &key));
        assert!(!kubelet_sees(&s.sim, "node-2", &key));
        let mut moved = (*s.sim.api.get(&key).expect("stored").clone()).clone();
        moved.as_pod_mut().expect("a pod").spec.node_name = "node-2".into();
        moved.meta_mut().resource_version.clear();
        s.sim.submit(ApiRequest::Update(moved)).expect("updated");
        s.advance_to(4_000, usize::MAX);
        assert!(!kubelet_sees(&s.sim, "node-1", &key));
        assert!(kubelet_sees(&s.sim, "node-2", &key));
        assert_eq!(
            s.sim.routed_selected.get(&key).map(Vec::as_slice),
            Some(&["node-2".to_string()][..])
        );
    }

    #[test]
    fn only_components_with_a_field_selector_track_what_it_holds() {
        let (mut s, key) = pod_on_node_1();
        let holds = |sim: &Sim, id: &ComponentId| sim.components[id].selected.contains(&key);
        let cached = |sim: &Sim, id: &ComponentId| sim.components[id].cache.get(&key).is_some();
        assert!(holds(&s.sim, &ComponentId::Scheduler));
        assert!(holds(&s.sim, &ComponentId::Kubelet("node-1".into())));
        for id in ComponentId::CONTROLLER_MANAGER {
            assert!(cached(&s.sim, &id), "{id} cached the pod");
            assert!(
                s.sim.components[&id].selected.is_empty(),
                "{id} keeps no set"
            );
        }
        // Without a set, the delete still reaches every controller's cache.
        s.sim
            .submit(ApiRequest::Delete {
                key: key.clone(),
                options: DeleteOptions {
                    grace_period_seconds: Some(0),
                    ..Default::default()
                },
            })
            .expect("deleted");
        s.advance_to(4_000, usize::MAX);
        for id in ComponentId::CONTROLLER_MANAGER {
            assert!(!cached(&s.sim, &id), "{id} heard of the delete");
        }
        assert!(!holds(&s.sim, &ComponentId::Scheduler));
    }

    #[test]
    fn every_delivery_of_a_write_shares_one_object_name_in_the_trace() {
        let (s, key) = pod_on_node_1();
        let name = key.to_string();
        let names: Vec<&Arc<str>> = s
            .sim
            .trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Watch {
                    object,
                    event_type: "ADDED",
                    ..
                } if **object == *name => Some(object),
                _ => None,
            })
            .collect();
        // The seven controllers, the scheduler and node-1's kubelet heard of the create.
        assert_eq!(names.len(), 9);
        assert!(names.iter().all(|n| Arc::ptr_eq(n, names[0])));
    }

    #[test]
    fn watchers_are_indexed_only_while_running_and_connected() {
        let mut s = Session::new(1);
        s.advance_to(1_000, usize::MAX);
        let pods = |sim: &Sim| sim.watchers.get(&Kind::Pod).cloned().unwrap_or_default();
        assert_eq!(pods(&s.sim).by_node, ["node-1", "node-2", "node-3"]);
        assert!(pods(&s.sim).general.contains(&ComponentId::Scheduler));
        s.sim
            .inject(Fault::PartitionNode {
                node: "node-2".into(),
            })
            .expect("partitioned");
        s.sim
            .inject(Fault::StopComponent {
                component: "scheduler".into(),
            })
            .expect("stopped");
        assert_eq!(pods(&s.sim).by_node, ["node-1", "node-3"]);
        assert!(!pods(&s.sim).general.contains(&ComponentId::Scheduler));
        s.sim
            .inject(Fault::HealNode {
                node: "node-2".into(),
            })
            .expect("healed");
        assert_eq!(pods(&s.sim).by_node, ["node-1", "node-2", "node-3"]);
    }
}
