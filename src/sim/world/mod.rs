//! The world: one clock, one event queue, one seeded RNG, the API server, every component, and
//! the trace. Every state change in the simulation happens inside [`Sim::apply`] or
//! [`Sim::advance_to`], in (time, sequence) order, so a seed and a list of actions replay exactly.

use std::collections::{BTreeSet, BinaryHeap};
use std::rc::Rc;

use crate::sim::api::apiserver::ApiServer;
use crate::sim::api::types::{Kind, LabelSelector, Millis, Object, ObjectKey, Str};
use crate::sim::api::{ApiError, ApiRequest, ApiResult, DeleteOptions, WatchEvent, WatchEventType};
use crate::sim::controllers;
use crate::sim::faults::{Fault, TriggerMode};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, ControllerChange, Ctx, EventRecord, Outcome,
};
use crate::sim::machinery::node_runtime::NodeRuntime;
use crate::sim::machinery::recorder::{
    Recorder, Reporter, EVENT_EXPIRY_BATCH, EVENT_TTL, MAX_EVENTS,
};
use crate::sim::machinery::trace::{
    describe_request, Delivery, Trace, TraceEntry, TraceKind, WatchType,
};
use crate::sim::machinery::workqueue::WorkQueue;
use crate::sim::rng::Rng;
use crate::vec_map::{HashedSlotMap, LookupMap, LookupSet, SlotMap, VecMap};

mod faults;
mod informers;
mod lines;
mod machines;
mod requests;
mod slab;
mod watch;

use faults::{DelayRule, DropRule, Heal, Rival};
use lines::{Lines, Pending};
pub use machines::{Machine, MACHINE_BOOT_MS};
use requests::{ApiCall, Sent};
pub use requests::{API_REQUESTS_PER_STEP, RIVAL_ACTOR, RIVAL_ANNOTATION};
use slab::Slab;
use watch::{hold, release, routing_of, Watchers};

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
    pub resync: VecMap<ComponentId, Millis>,
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
            resync: VecMap::new(),
            trace_capacity: crate::sim::machinery::trace::DEFAULT_TRACE_CAPACITY,
        }
    }
}

/// One component with its informer cache and work queue.
struct Component {
    ctrl: Box<dyn Controller>,
    /// Its [`ComponentId::name`], kept: every delivery, pass and request it makes names it in the
    /// trace, which shares this one allocation.
    name: Str,
    /// Who its Events say recorded them.
    reporter: Reporter,
    cache: Cache,
    queue: WorkQueue,
    rng: Rng,
    running: bool,
    partitioned: bool,
    pump_scheduled: bool,
    /// Incremented on every stop/restart so timers of the old process are ignored.
    generation: u32,
    /// Earliest pending requeue timer per key (looked up only, as `triggers`: found by hash).
    requeues: LookupMap<ObjectKey, Millis>,
    /// Why each queued key was queued (trigger, causing trace entry).
    triggers: LookupMap<ObjectKey, (&'static str, Option<u64>)>,
    /// Watch deliveries stay in order: none is delivered before the previous one.
    last_delivery: Millis,
    /// Its line of deliveries on their way ([`Lines`]), in order by `last_delivery`.
    line: u32,
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
    /// a field selector ([`Controller::has_field_selector`]), which is sent every event. Found by
    /// hash: the scheduler's selection is every pod not yet finished, looked up for each pod
    /// event, where a B-tree compared keys string by string; walked only where each member is
    /// handled on its own (releasing or holding its routing), so its order shows nowhere.
    selected: LookupSet<ObjectKey>,
}

/// The recorder of `id`'s Events (`name` is its [`ComponentId::name`]): a kubelet records as
/// `kubelet` on its node, as upstream.
fn reporter_of(id: &ComponentId, name: &Str) -> Reporter {
    match id {
        ComponentId::Kubelet(node) => Reporter::new(&Str::from("kubelet"), node),
        _ => Reporter::new(name, &Str::EMPTY),
    }
}

impl Component {
    fn new(ctrl: Box<dyn Controller>, seed: u64, lines: &mut Lines) -> Component {
        let id = ctrl.id();
        let name: Str = id.name().into();
        let reporter = reporter_of(&id, &name);
        let line = lines.open(id);
        let rng = Rng::stream(seed, &name);
        Component {
            cache: Cache::with_indexers(ctrl.indexers()),
            ctrl,
            name,
            reporter,
            selected: LookupSet::default(),
            queue: WorkQueue::new(),
            rng,
            running: false,
            partitioned: false,
            pump_scheduled: false,
            generation: 0,
            requeues: LookupMap::default(),
            triggers: LookupMap::default(),
            last_delivery: 0,
            line,
            drop: None,
            delay: None,
            mode: TriggerMode::Level,
            needs_relist: false,
            resync_at: None,
        }
    }
}

impl Component {
    /// This component as it is now, its process's memory included (see [`Controller::snapshot`]).
    fn snapshot(&self) -> Option<Component> {
        Some(Component {
            ctrl: self.ctrl.snapshot()?,
            name: self.name.clone(),
            reporter: self.reporter.clone(),
            cache: self.cache.clone(),
            queue: self.queue.clone(),
            rng: self.rng.clone(),
            running: self.running,
            partitioned: self.partitioned,
            pump_scheduled: self.pump_scheduled,
            generation: self.generation,
            requeues: self.requeues.clone(),
            triggers: self.triggers.clone(),
            last_delivery: self.last_delivery,
            line: self.line,
            drop: self.drop.clone(),
            delay: self.delay.clone(),
            mode: self.mode,
            needs_relist: self.needs_relist,
            resync_at: self.resync_at,
            selected: self.selected.clone(),
        })
    }
}

/// What falls due in the world's queue at a simulated time (a delivery, a timer, a response, a
/// fault or its heal): neither a Kubernetes Event nor a watch event, which keep that name.
#[derive(Clone, Debug)]
enum Due {
    /// The first delivery of a watcher's line ([`Lines`]), which stands for the rest.
    Deliveries(u32),
    Pump {
        to: ComponentId,
        gen: u32,
    },
    Requeue {
        to: ComponentId,
        gen: u32,
        key: ObjectKey,
        /// `retry` (back-off after a failure) rather than `requeue` (asked for by a pass): a
        /// flag, not the word, so that a queued event stays as small as a delivery.
        retry: bool,
        /// The pass that asked, or the failed request.
        cause: Option<u64>,
    },
    Tick {
        to: ComponentId,
        gen: u32,
    },
    Resync {
        to: ComponentId,
        gen: u32,
    },
    /// A pass's requests, sent [`API_REQUESTS_PER_STEP`] at a time. Boxed, as the fault is: a
    /// slot takes the room of the largest variant, and deliveries, a hundred times as many,
    /// fill the queue at its peak.
    Api(Box<ApiCall>),
    Fault(Box<Fault>),
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
            MemoryPart::Controllers => "the other controllers' state, work queues",
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
    /// Events processed since the start: with the clock, a moment of the run (a pause or a
    /// Step can stop between two events of one millisecond).
    events_done: u64,
    config: SimConfig,
    queue: BinaryHeap<Scheduled>,
    /// Where queued events wait.
    slots: Slab<Due>,
    /// Watch deliveries, in their recipients' lines.
    lines: Lines,
    /// Running, connected watchers per kind (see [`Watchers`]).
    watchers: VecMap<Kind, Watchers>,
    /// Running, connected components that watch every custom kind
    /// ([`Controller::watches_custom_kinds`]), in id order.
    custom_watchers: Vec<ComponentId>,
    /// For kubelet-style routed components: object key → the nodes whose kubelet's field
    /// selector currently holds it (the inverse of their `selected` sets), so an object leaving
    /// a node's selection still reaches that node's kubelet. Only looked up, by every watch
    /// event of a pod, so found by hash.
    routed_selected: LookupMap<ObjectKey, Vec<String>>,
    /// The API server, which alone writes the store: everything else reads it through
    /// [`Sim::api`] and writes by sending it requests.
    api: ApiServer,
    components: HashedSlotMap<ComponentId, Component>,
    /// Container runtimes, one per machine; a node that is down has none running.
    machines: SlotMap<Str, Machine>,
    /// Bumped whenever a machine is added, removed, powered off or powered on.
    machines_generation: u64,
    /// Images the simulated registry refuses to serve.
    broken_images: BTreeSet<String>,
    /// FailJobPods: per Job (namespace, name), how many of its next pods fail and with what code.
    job_failures: VecMap<(Str, Str), (u32, i32)>,
    /// The storage system the volume drivers call (FailVolumeProvisioning/Expansion set it up).
    storage: crate::sim::machinery::storage_backend::StorageBackend,
    /// Pods picked by FailJobPods and not yet bound, by uid: binding hands them to the machine.
    doomed_pods: VecMap<Str, i32>,
    /// CrashMidReconcile, armed: per component, how many requests its next pass that sends more
    /// gets out before the process dies, and the fault's trace entry (the crash's cause).
    crash_after: VecMap<ComponentId, (u32, u64)>,
    api_server_up: bool,
    recorder: Recorder,
    trace: Trace,
    latency_rng: Rng,
    /// While a fault (or its heal) is being applied: its trace entry, the cause of what it does.
    fault_cause: Option<u64>,
    /// Active ConflictingWriters by object.
    rivals: VecMap<ObjectKey, Rival>,
    /// The trace entry of the last request sent.
    last_api_seq: u64,
    /// The learner's creates waiting for a CRD to serve their kind ([`Sim::defer_create`]).
    deferred: Vec<ApiRequest>,
}

impl Sim {
    /// A cluster with the control plane running and no objects yet.
    pub fn new(config: SimConfig) -> Sim {
        let seed = config.seed;
        let mut sim = Sim {
            now: 0,
            seq: 0,
            events_done: 0,
            queue: BinaryHeap::new(),
            slots: Slab::default(),
            lines: Lines::default(),
            watchers: VecMap::new(),
            custom_watchers: Vec::new(),
            routed_selected: LookupMap::default(),
            api: ApiServer::new(seed),
            components: HashedSlotMap::new(),
            machines: SlotMap::new(),
            machines_generation: 0,
            broken_images: BTreeSet::new(),
            job_failures: VecMap::new(),
            storage: Default::default(),
            doomed_pods: VecMap::new(),
            crash_after: VecMap::new(),
            api_server_up: true,
            recorder: Recorder::default(),
            trace: Trace::with_capacity(config.trace_capacity),
            latency_rng: Rng::stream(seed, "latency"),
            fault_cause: None,
            rivals: VecMap::new(),
            last_api_seq: 0,
            deferred: Vec::new(),
            config,
        };
        // The API server is up before any component connects: their first list finds these,
        // and the default StorageClass kind's storage addon installs once (deleted, it stays
        // deleted, as on kind).
        sim.ensure_bootstrap_objects();
        if let Some(class) = crate::sim::api::storage::standard_class() {
            let _ = sim.send_as(
                "kube-apiserver".into(),
                false,
                &ApiRequest::Create(Object::from(class)),
                None,
            );
        }
        for ctrl in controllers::control_plane() {
            let id = ctrl.id();
            let c = Component::new(ctrl, seed, &mut sim.lines);
            sim.components.insert(id.clone(), c);
            sim.start_component(&id, "start");
        }
        sim.schedule(10_000, Due::Housekeeping);
        sim
    }

    /// A copy of the store, the machines and the clock with no component running and nothing
    /// queued: what an action would change, worked out without touching this simulation (a
    /// lesson compares it with what the learner did: see `progress`). Nothing in it advances.
    pub fn detached_copy(&self) -> Sim {
        self.copy(HashedSlotMap::new(), false)
    }

    /// The whole world as it is now, so a run can go on from here more than once (time
    /// travel's snapshots): what runs from the copy is what would have run from this one. None
    /// when a component's memory cannot be copied (see [`Controller::snapshot`]).
    pub fn snapshot(&self) -> Option<Sim> {
        let mut components = HashedSlotMap::new();
        for (id, c) in self.components.iter() {
            components.insert(id.clone(), c.snapshot()?);
        }
        Some(self.copy(components, true))
    }

    /// This world with `components`: running (everything in flight copied too) or detached
    /// (nothing queued, no watchers, a short trace).
    fn copy(&self, components: HashedSlotMap<ComponentId, Component>, running: bool) -> Sim {
        Sim {
            now: self.now,
            seq: self.seq,
            events_done: self.events_done,
            config: self.config.clone(),
            queue: if running {
                self.queue.clone()
            } else {
                BinaryHeap::new()
            },
            slots: if running {
                self.slots.clone()
            } else {
                Slab::default()
            },
            lines: if running {
                self.lines.clone()
            } else {
                Lines::default()
            },
            watchers: if running {
                self.watchers.clone()
            } else {
                VecMap::new()
            },
            custom_watchers: if running {
                self.custom_watchers.clone()
            } else {
                Vec::new()
            },
            routed_selected: if running {
                self.routed_selected.clone()
            } else {
                LookupMap::default()
            },
            api: self.api.clone(),
            components,
            machines: self.machines.clone(),
            machines_generation: self.machines_generation,
            broken_images: self.broken_images.clone(),
            job_failures: self.job_failures.clone(),
            storage: self.storage.clone(),
            doomed_pods: self.doomed_pods.clone(),
            crash_after: self.crash_after.clone(),
            api_server_up: self.api_server_up,
            recorder: if running {
                self.recorder.clone()
            } else {
                Recorder::default()
            },
            trace: if running {
                self.trace.clone()
            } else {
                Trace::with_capacity(DETACHED_TRACE)
            },
            latency_rng: self.latency_rng.clone(),
            fault_cause: self.fault_cause.filter(|_| running),
            rivals: if running {
                self.rivals.clone()
            } else {
                VecMap::new()
            },
            last_api_seq: if running { self.last_api_seq } else { 0 },
            deferred: self.deferred.clone(),
        }
    }

    /// How many events have been processed since the start: with the clock, a moment of the run.
    pub fn events_done(&self) -> u64 {
        self.events_done
    }

    /// The API server, to read the store, its resourceVersion and its history. Writes go through
    /// [`Sim::submit`] (the learner's requests) or a component's requests, never around it.
    pub fn api(&self) -> &ApiServer {
        &self.api
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
                if let Some(p) = ctrl.default_resync() {
                    self.config.resync.entry(id.clone()).or_insert(p);
                }
                let c = Component::new(ctrl, self.config.seed, &mut self.lines);
                self.components.insert(id.clone(), c);
            }
        }
        self.start_component(&id, "start");
    }

    /// Installs kro, as its Helm chart does: the ResourceGraphDefinition CRD, then the `kro`
    /// component. Installing it twice changes nothing.
    pub fn install_kro(&mut self) {
        if self.components.contains_key(&ComponentId::Kro) {
            return;
        }
        for obj in crate::sim::controllers::kro::resourcegraphdefinition::install_objects() {
            let _ = self.send_as("helm".into(), false, &ApiRequest::Create(obj), None);
        }
        self.add_component(Box::new(
            crate::sim::controllers::kro::resourcegraphdefinition::ResourceGraphDefinitionController::new(),
        ));
    }

    /// Installs the example PostgresCluster operator, as its manifests would: the
    /// PostgresCluster CRD, then the `postgres-operator` component. Installing it twice changes
    /// nothing.
    pub fn install_postgres_operator(&mut self) {
        use crate::sim::controllers::postgres;
        if self.components.contains_key(&ComponentId::PostgresOperator) {
            return;
        }
        for obj in postgres::install_objects() {
            let _ = self.send_as("kubectl".into(), false, &ApiRequest::Create(obj), None);
        }
        self.add_component(Box::new(postgres::PostgresOperator::new()));
    }

    /// Runs a learner's controller (a `Controller` document applied): a new one starts, a
    /// changed one is replaced by a new process (its module state gone, as a redeployed
    /// controller's is), an unchanged one keeps running. Says which, as `kubectl apply` does.
    pub fn run_script_controller(
        &mut self,
        spec: crate::sim::controllers::script::ScriptSpec,
    ) -> &'static str {
        use crate::sim::controllers::script::ScriptController;
        let id = ComponentId::Script(Str::from(spec.doc.name.as_str()));
        let same = self
            .components
            .get(&id)
            .and_then(|c| c.ctrl.as_any())
            .and_then(|a| a.downcast_ref::<ScriptController>())
            .map(|c| c.spec() == &spec);
        let verb = match (self.is_running(&id), same) {
            (true, Some(true)) => return "unchanged",
            (true, _) => "configured",
            (false, _) => "created",
        };
        self.add_component(Box::new(ScriptController::new(std::rc::Rc::new(spec))));
        verb
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

    fn schedule(&mut self, at: Millis, ev: Due) {
        self.seq += 1;
        self.push_slot(at.max(self.now), self.seq, ev);
    }

    /// Queues a watch delivery of `event` in `line`, to the process `gen` of its component, due
    /// at `at`: the line takes a slot of the queue only when it was empty.
    fn schedule_delivery(&mut self, at: Millis, line: u32, gen: u32, event: Rc<WatchEvent>) {
        self.seq += 1;
        let (at, seq) = (at.max(self.now), self.seq);
        if self.lines.push(
            line,
            Pending {
                at,
                seq,
                gen,
                event,
            },
        ) {
            self.push_slot(at, seq, Due::Deliveries(line));
        }
    }

    fn push_slot(&mut self, at: Millis, seq: u64, ev: Due) {
        let slot = self.slots.insert(ev);
        self.queue.push(Scheduled { at, seq, slot });
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
        let Some(&Scheduled { at, seq, slot }) = self.queue.peek() else {
            return;
        };
        self.events_done += 1;
        self.now = self.now.max(at);
        if let Some(&Due::Deliveries(line)) = self.slots.get(slot) {
            self.deliver_next(line, (at, seq));
            return;
        }
        self.queue.pop();
        let Some(ev) = self.slots.take(slot) else {
            return;
        };
        match ev {
            // Handed out in place, above.
            Due::Deliveries(_) => {}
            Due::Pump { to, gen } => self.process_next_work_item(&to, gen),
            Due::Requeue {
                to,
                gen,
                key,
                retry,
                cause,
            } => {
                let trigger = if retry { "retry" } else { "requeue" };
                // client-go's delaying queue keeps one timer per key, the soonest: a timer that a
                // sooner one replaced adds nothing when it comes due. Running it anyway made an
                // extra pass, and every failed pass doubles the key's back-off: a ten-second
                // outage could push the next retry out to client-go's 1,000 s cap.
                let Some(c) = self.components.get_mut(&to) else {
                    return;
                };
                if c.generation != gen || c.requeues.get(&key) != Some(&at) {
                    return;
                }
                c.requeues.remove(&key);
                self.enqueue(&to, gen, key, trigger, cause);
            }
            Due::Tick { to, gen } => self.tick(&to, gen),
            Due::Resync { to, gen } => self.resync(&to, gen),
            Due::Api(mut call) => {
                if self.execute(&mut call) {
                    // The rest of the requests, before anything else that is due: the same time
                    // and sequence number, so the work is done in exactly the order one long
                    // step did it, only with a step boundary (a frame) in between.
                    self.push_slot(at, seq, Due::Api(call));
                }
            }
            Due::Fault(f) => {
                let _ = self.inject(*f);
            }
            Due::Heal { fault, heal } => self.heal(fault, heal),
            Due::Housekeeping => self.housekeeping(),
        }
    }

    /// Hands out line `line`'s first delivery, due now (`due`: its time and sequence number, the
    /// queue's head). A line keeps its slot while it holds deliveries: the head takes the next
    /// one's time in place, one sift down of the heap where a pop and a push sifted twice, and
    /// most events are deliveries.
    fn deliver_next(&mut self, line: u32, due: (Millis, u64)) {
        let popped = self.lines.pop(line);
        debug_assert!(
            popped.as_ref().is_none_or(|(_, p)| (p.at, p.seq) == due),
            "a line's slot is its first delivery"
        );
        match self.lines.next_due(line) {
            Some((at, seq)) => {
                let mut head = self.queue.peek_mut().expect("the line's slot is the head");
                head.at = at;
                head.seq = seq;
            }
            None => {
                let Some(Scheduled { slot, .. }) = self.queue.pop() else {
                    return;
                };
                self.slots.take(slot);
                if let Some((to, _)) = &popped {
                    if self.components.get(to).is_none_or(|c| c.line != line) {
                        self.lines.retire(line);
                    }
                }
            }
        }
        if let Some((to, p)) = popped {
            self.deliver(&to, p.gen, &p.event);
        }
    }

    /// The API server's bootstrap controller, every housekeeping pass (its loop runs every 10 s):
    /// the `kubernetes` Service and its EndpointSlice come back when someone deletes them. A
    /// deliberate simplification: it recreates them but does not revert edits to them.
    fn ensure_bootstrap_objects(&mut self) {
        if !self.api_server_up {
            return;
        }
        for obj in crate::sim::api::apiserver::bootstrap_objects() {
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
            .events_aged_before(self.now.saturating_sub(EVENT_TTL))
            .into_iter()
            .filter(|(_, k)| {
                self.api
                    .get(k)
                    .and_then(|o| o.as_event())
                    .is_some_and(|e| e.last_timestamp.is_some())
            })
            .map(|(_, k)| (*k).clone())
            .collect();
        self.expire_events(&expired);
        self.recorder.prune(self.now);
        // Events created by other means than the recorder (kubectl create) count too.
        self.cap_events();
        self.schedule(self.now + 10_000, Due::Housekeeping);
    }

    /// How many events wait in the world's queue (deliveries, timers, requests in flight): with
    /// [`Sim::recorder_len`], what the memory-bound tests watch over a long run.
    pub fn queued_events(&self) -> usize {
        let (waiting, lines) = self.lines.counts();
        self.queue.len() - lines + waiting
    }

    /// How many entries the Event recorder remembers (see [`crate::sim::machinery::recorder::Recorder::len`]).
    pub fn recorder_len(&self) -> usize {
        self.recorder.len()
    }

    /// Drops one component with its cache, state and queue, for `kubeloop bench --memory` to
    /// say which of the controllers holds the heap (the run cannot go on after it).
    pub fn free_component_for_measurement(&mut self, id: &ComponentId) {
        self.components.retain(|i, _| i != id);
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
                self.components.for_each_mut(|_, c| {
                    c.cache.clear();
                    c.selected = LookupSet::default();
                });
                self.routed_selected = LookupMap::default();
            }
            MemoryPart::Kubelets => {
                self.components
                    .retain(|id, _| !matches!(id, ComponentId::Kubelet(_)));
                for w in self.watchers.values_mut() {
                    w.by_node = Vec::new();
                }
            }
            MemoryPart::Controllers => {
                self.components = HashedSlotMap::new();
                self.watchers = VecMap::new();
                self.custom_watchers = Vec::new();
            }
            MemoryPart::Runtimes => self.machines = SlotMap::new(),
            MemoryPart::EventQueue => {
                self.queue = BinaryHeap::new();
                self.slots = Slab::default();
                self.lines = Lines::default();
            }
            MemoryPart::Store => self.api = ApiServer::new(self.config.seed),
        }
    }

    /// True when nothing but periodic timers remains: no watch deliveries, API calls or queued keys.
    pub fn is_quiescent(&self) -> bool {
        self.components.values().all(|c| c.queue.is_empty())
            && self.slots.values().all(|e| {
                matches!(
                    e,
                    Due::Tick { .. }
                        | Due::Resync { .. }
                        | Due::Housekeeping
                        | Due::Requeue { .. }
                        | Due::Heal { .. }
                )
            })
    }

    /// Convenience for tests and the CLI: the live object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.api.get(key)
    }
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
            }
            .into(),
            ..Default::default()
        };
        let key = s
            .sim
            .submit(ApiRequest::Create(Object::from(pod)))
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
        moved.as_pod_mut().expect("a pod").spec_mut().node_name = "node-2".into();
        moved.meta_mut().resource_version = Default::default();
        s.sim.submit(ApiRequest::Update(moved)).expect("updated");
        s.advance_to(4_000, usize::MAX);
        assert!(!kubelet_sees(&s.sim, "node-1", &key));
        assert!(kubelet_sees(&s.sim, "node-2", &key));
        assert_eq!(
            s.sim.routed_selected.get(&key).map(Vec::as_slice),
            Some(&["node-2".to_string()][..])
        );
    }

    /// The objects the trace names for writes and deliveries at resourceVersion `rv`.
    fn named_at(sim: &Sim, rv: u64) -> Vec<String> {
        sim.trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Api(a) if a.resource_version == Some(rv) => Some(a.object.to_string()),
                TraceKind::Watch {
                    object,
                    resource_version,
                    ..
                } if *resource_version == rv => Some(object.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_write_and_delivery_names_its_object_whatever_its_kind_or_slot_held_before() {
        let (mut s, p) = pod_on_node_1();
        // Written by a user through the API: an Event is named like any other object, though
        // nothing built in watches Events.
        let event = "apiVersion: v1\nkind: Event\nmetadata: {name: hello}\ninvolvedObject: {kind: Pod, name: p, namespace: default}\nreason: Hi\nmessage: hi\n";
        let out = s.kubectl_with_input("apply -f -", Some(event));
        assert!(out.ok, "{}", out.stderr);
        let rv = |s: &Session, kind: Kind, name: &str| {
            s.sim
                .api
                .get(&ObjectKey::new(kind, "default", name))
                .expect("stored")
                .meta()
                .rv()
        };
        assert_eq!(
            named_at(&s.sim, rv(&s, Kind::Event, "hello")),
            ["Event/default/hello"]
        );
        // The pod's deletion is named after it, then a pod that may take its store slot after
        // its own name, in its write and in each delivery of it.
        assert!(s.kubectl("delete pod p --grace-period=0 --force").ok);
        s.advance_to(5_000, usize::MAX);
        let gone = s.sim.trace().entries().filter_map(|e| match &e.kind {
            TraceKind::Watch {
                object, event_type, ..
            } if *event_type == "DELETED" => Some(object.to_string()),
            _ => None,
        });
        assert!(gone.into_iter().any(|o| o == p.trace_name()));
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {nodeName: node-1, containers: [{name: app, image: nginx}]}\n";
        assert!(s.kubectl_with_input("apply -f -", Some(pod)).ok);
        s.advance_to(6_000, usize::MAX);
        let names = named_at(&s.sim, rv(&s, Kind::Pod, "q"));
        assert!(names.len() > 2, "{names:?}");
        assert!(names.iter().all(|n| n == "Pod/default/q"), "{names:?}");
    }

    /// The watch deliveries to one watcher, with when they came and the resourceVersion.
    fn deliveries_to(sim: &Sim, component: &str) -> Vec<(Millis, u64)> {
        sim.trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Watch {
                    component: c,
                    resource_version,
                    delivery: Delivery::Delivered,
                    ..
                } if c == component => Some((e.t, *resource_version)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn deliveries_to_one_watcher_wait_in_its_line_behind_one_slot_of_the_queue() {
        let (mut s, key) = pod_on_node_1();
        let pod = s.sim.api.get(&key).expect("stored").clone();
        let rv = s.sim.api.resource_version();
        let scheduler = &s.sim.components[&ComponentId::Scheduler];
        let (gen, line) = (scheduler.generation, scheduler.line);
        let (now, before) = (s.sim.now, s.sim.queued_events());
        for (after, bump) in [(5, 1), (5, 2), (9, 3)] {
            let ev = WatchEvent::new(WatchEventType::Modified, pod.clone(), rv + bump, 0);
            s.sim.schedule_delivery(now + after, line, gen, Rc::new(ev));
        }
        assert_eq!(s.sim.queued_events(), before + 3, "each delivery counts");
        assert_eq!(s.sim.queue.len(), before + 1, "one slot for the line");
        s.sim.advance_to(now + 20, usize::MAX);
        let got = deliveries_to(&s.sim, "default-scheduler");
        assert_eq!(
            got[got.len() - 3..],
            [(now + 5, rv + 1), (now + 5, rv + 2), (now + 9, rv + 3)]
        );
    }

    #[test]
    fn a_kubelet_made_again_under_its_nodes_name_opens_a_line_of_its_own_and_the_old_one_gives_its_room_back(
    ) {
        // What was on its way to the old kubelet may be due after what is sent to the new one.
        let (mut s, key) = pod_on_node_1();
        let kubelet = ComponentId::Kubelet("node-1".into());
        let old_line = s.sim.components[&kubelet].line;
        let node_key = ObjectKey::new(Kind::Node, "", "node-1");
        let mut node = (**s.sim.api.get(&node_key).expect("registered")).clone();
        let relabel = |s: &mut Session, value: &str| {
            let mut pod = (**s.sim.api.get(&key).expect("stored")).clone();
            pod.meta_mut().labels.insert("try", value);
            s.sim.submit(ApiRequest::Update(pod)).expect("updated");
        };
        s.sim
            .inject(Fault::DelayWatchEvents {
                component: "kubelet/node-1".into(),
                delay: 500,
                duration: None,
            })
            .expect("delayed");
        relabel(&mut s, "1");
        s.sim
            .submit(ApiRequest::Delete {
                key: node_key.clone(),
                options: DeleteOptions::default(),
            })
            .expect("deleted");
        node.meta_mut().resource_version = Default::default();
        node.meta_mut().uid = Default::default();
        s.sim
            .submit(ApiRequest::Create(node))
            .expect("registered again");
        relabel(&mut s, "2");
        let new_line = s.sim.components[&kubelet].line;
        assert_ne!(new_line, old_line);
        assert!(
            s.sim.lines.room(old_line) > 0,
            "the old kubelet's deliveries still wait"
        );
        s.sim.advance_to(s.sim.now + 1_000, usize::MAX);
        assert_eq!(
            s.sim.lines.room(old_line),
            0,
            "drained, the old line gave its room back"
        );
        let seen = s.sim.cache_of(&kubelet).and_then(|c| c.get(&key)).cloned();
        let label = seen
            .as_ref()
            .and_then(|p| p.meta().labels.get("try").cloned());
        assert_eq!(label.as_deref(), Some("2"));
    }

    #[test]
    fn only_components_with_a_field_selector_track_what_it_holds() {
        let (mut s, key) = pod_on_node_1();
        let holds = |sim: &Sim, id: &ComponentId| sim.components[id].selected.contains(&key);
        let cached = |sim: &Sim, id: &ComponentId| sim.components[id].cache.get(&key).is_some();
        assert!(holds(&s.sim, &ComponentId::Scheduler));
        assert!(holds(&s.sim, &ComponentId::Kubelet("node-1".into())));
        for id in ComponentId::CONTROLLER_MANAGER {
            if !s.sim.components[&id].ctrl.watches(Kind::Pod) {
                continue;
            }
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
        let names: Vec<&Str> = s
            .sim
            .trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Watch {
                    object,
                    event_type: WatchType::Added,
                    ..
                } if **object == *name => Some(object),
                _ => None,
            })
            .collect();
        // Every controller that watches pods (twelve), the scheduler and node-1's kubelet heard of it.
        assert_eq!(names.len(), 14);
        assert!(names.iter().all(|n| Str::ptr_eq(n, names[0])));
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

#[cfg(all(test, target_pointer_width = "64"))]
mod due_size {
    /// The queue's slab keeps the room of its peak (a timer, a request batch or a watcher's
    /// line for each of thousands of pods and components), each slot the size of the largest
    /// variant: the rare large ones are boxed.
    #[test]
    fn a_queued_event_takes_the_room_of_a_delivery_not_of_a_request_batch_or_a_fault() {
        assert!(std::mem::size_of::<super::Due>() <= 80);
        assert_eq!(std::mem::size_of::<super::ComponentId>(), 16);
    }

    /// Deliveries are most of what waits at a peak: in their lines, 32 bytes each natively and
    /// 24 in the page (a 32-bit process generation and pointer), the event shared by its
    /// recipients.
    #[test]
    fn a_delivery_waiting_in_its_line_takes_four_words() {
        assert_eq!(std::mem::size_of::<super::Pending>(), 32);
    }
}
