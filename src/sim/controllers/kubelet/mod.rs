//! The kubelet: the node agent that runs the pods bound to its node and reports on them.
//!
//! One instance per node. It watches its own Node and the Pods whose `spec.nodeName` is its node,
//! and drives that machine's [`NodeRuntime`]: image pulls, sandbox and container start, probes,
//! restarts with CrashLoopBackOff, graceful stops. It writes pod status (UpdateStatus with the
//! cached resourceVersion), node status (every 10 s check, post on change or every 5 min), and
//! renews the node Lease every 10 s.
//!
//! How it maps onto the real kubelet:
//! - `reconcile(Pod key)` is `syncPod` / `syncTerminatingPod`: status is generated from the runtime
//!   as the PLEG last saw it (a snapshot taken before this pass's actions), then actions run;
//!   changes the runtime makes are reported at the next 1 s PLEG relist (a requeue).
//! - Time-driven runtime facts (an app that crashes 2 s after start, a stop that completes) are
//!   known in advance, so instead of relisting every second the kubelet requeues the pod key for
//!   the relist that would notice them. Faults wake the pod key through the world in the same way.
//! - Probes are simulated analytically: each probe worker's ticks up to `now` are replayed when the
//!   pod is synced, and the pod is requeued for the next tick whose outcome matters.
//! - Back-off follows client-go's `flowcontrol.Backoff` (10 s doubling to 300 s; an entry expires
//!   when 600 s pass between updates), keyed per container for restarts and per image for pulls.
//! - Init containers run to completion one after another; sidecars (`restartPolicy: Always` init
//!   containers) start before the app containers and keep running. Admission (`GeneralPredicates`)
//!   rejects pods that do not fit (OutOfcpu, OutOfmemory, OutOfpods) or whose node selector or
//!   required node affinity does not match (NodeAffinity): pods with a preset `nodeName` skip the
//!   scheduler's checks, not the kubelet's.
//! - In-memory state (back-offs, probe results, waiting reasons, admitted pods) is lost on restart,
//!   as in the real kubelet; the runtime and the API status are what a restarted kubelet re-derives
//!   from. Failed status writes are retried on the 10 s heartbeat tick (the status manager's sync).
//!
//! Laid out by job, as `pkg/kubelet` is: this file holds the kubelet, its pod sync and its
//! controller contract; `admit`, `containers` (start order, restarts, termination), `images`
//! (the puller), `probes`, `backoff`, `pod_status` and `node_status` (with the lease) hold the rest.

mod admit;
mod backoff;
mod containers;
mod env;
mod images;
mod node_status;
mod pod_status;
mod probes;
mod volumes;

use backoff::*;
use env::*;
use images::*;
use pod_status::*;
use probes::*;
use volumes::*;

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::{json, Value as Json};

use crate::sim::api::quantity::parse_quantity;
use crate::sim::api::types::{
    find_condition, Condition, Container, ContainerState, ContainerStateRunning,
    ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, Kind, Lease, LeaseSpec,
    Millis, Node, Object, ObjectKey, ObjectMeta, OwnerReference, Pod, PodSpec, PodStatus, Probe,
    ResourceRequirements, Str, Time,
};
use crate::sim::api::{
    ApiRequest, ApiResult, DeleteOptions, StatusReason, WatchEvent, WatchEventType,
};
use crate::sim::controllers::scheduler;
use crate::sim::machinery::cache::{Cache, Indexers};
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sim::machinery::node_runtime::{
    image_size, next_relist, NodeRuntime, PodSandbox, ProbeKind, Termination, REASON_STATUS_UNKNOWN,
};
use crate::sim::machinery::process::{ignores_sigterm, process_of, Process};
use crate::sim::rng::Rng;
use crate::sim::text::{concat, push_quoted};
use crate::sim::time::format_duration;
use crate::sort::StableSort;
use crate::vec_map::{LookupMap, VecMap};

/// The namespace node Leases live in.
pub const LEASE_NAMESPACE: &str = "kube-node-lease";
/// `leaseDurationSeconds` the kubelet writes.
pub const LEASE_DURATION_SECONDS: i64 = 40;
/// Lease renewal and node status check period (`nodeStatusUpdateFrequency`, lease renew interval).
pub const HEARTBEAT_PERIOD: Millis = 10_000;
/// The labels a kubelet gives its Node (`kubernetes.io/hostname` and the os and arch of an amd64
/// Linux machine, with their beta twins): set when it registers the Node, and added by
/// `updateDefaultLabels` to a Node it finds already created.
pub fn default_node_labels(node: &str) -> [(String, String); 5] {
    [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", node),
        ("kubernetes.io/os", "linux"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()))
}

/// A node status is posted at least this often even when nothing changed (`nodeStatusReportFrequency`).
pub const STATUS_REPORT_PERIOD: Millis = 300_000;
/// First restart / pull back-off.
pub const BACKOFF_INITIAL: Millis = 10_000;
/// Back-off cap (`MaxContainerBackOff`).
pub const BACKOFF_MAX: Millis = 300_000;
/// How long a crash-looping app runs before it exits, at least and at most.
const CRASH_RUN: (Millis, Millis) = (1_000, 3_000);
/// How long a simulated init container runs before it exits 0, at least and at most.
const INIT_RUN: (Millis, Millis) = (1_000, 3_000);
/// A simulated app stops within this long after SIGTERM (bounded by the grace period).
const STOP_TIME: (Millis, Millis) = (0, 2_000);
/// Replaying probe ticks stops after this many in one pass (a safety bound).
const MAX_PROBE_TICKS: usize = 10_000;

/// The pod condition types the kubelet owns; others (DisruptionTarget…) are preserved.
const KUBELET_CONDITIONS: [&str; 5] = [
    "PodScheduled",
    "Ready",
    "Initialized",
    "ContainersReady",
    "PodReadyToStartContainers",
];

/// Where a container sits in a pod's start order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A regular init container: runs to completion before the next one starts.
    Init,
    /// An init container with `restartPolicy: Always`: starts before the app and keeps running.
    Sidecar,
    /// One of `spec.containers`.
    App,
}

impl Role {
    fn of_init(c: &Container) -> Role {
        if c.restart_policy.as_deref() == Some("Always") {
            Role::Sidecar
        } else {
            Role::Init
        }
    }

    /// The event field path: `spec.containers{app}` or `spec.initContainers{init}`.
    fn field(self, name: &str) -> Str {
        match self {
            Role::App => Str::concat(&["spec.containers{", name, "}"]),
            Role::Init | Role::Sidecar => Str::concat(&["spec.initContainers{", name, "}"]),
        }
    }
}

/// The role of a pod's container by name (app containers for names the spec does not list).
fn role_of(pod: &Pod, name: &str) -> Role {
    pod.spec
        .init_containers
        .iter()
        .find(|c| c.name == name)
        .map_or(Role::App, Role::of_init)
}

/// What one pod sync accumulates while it acts: events, the next wake-up, what it did.
struct Pass<'a> {
    obj: &'a Rc<Object>,
    /// The kubelet's cache: the ConfigMaps and Secrets a container's environment reads.
    cache: &'a Cache,
    pod: &'a Pod,
    now: Millis,
    out: &'a mut Outcome,
    wake: Option<Millis>,
    gaps: Vec<String>,
    changed: bool,
}

/// The kubelet of one node.
#[derive(Clone, Debug)]
pub struct Kubelet {
    node: Str,
    /// Pods whose last status write or final delete failed: retried on every heartbeat tick, as
    /// the status manager's periodic sync does.
    unsynced: BTreeSet<ObjectKey>,
    /// Pods this process admitted (admission runs once per pod per kubelet process), with what
    /// each asks of the node: every later admission sums the requests of the pods already here,
    /// and parsing them all again was most of a pod's admission.
    admitted: LookupMap<Str, Admitted>,
    /// Restart back-off per container (`<uid>/<container>`).
    crash_backoff: Backoff,
    /// Pull back-off per pod and image (`<uid>_<image>`), with the last pull error.
    pull_backoff: Backoff,
    pull_errors: VecMap<String, String>,
    probes: VecMap<(Str, Str, ProbeKind), ProbeWorker>,
    pulls: VecMap<(Str, Str), Pull>,
    puller_free_at: Millis,
    /// Why a container could not be started last time (the kubelet's reasonCache).
    reasons: VecMap<(Str, Str), (Str, String)>,
    /// The pod as this kubelet's last status write stored it, per pod uid, to ignore the echo of
    /// its own writes. The API server's answer, shared with its store: a copy of each status
    /// would be a few kB a pod.
    written: VecMap<Str, Rc<Object>>,
    /// Per pod uid: (the cached resourceVersion a write was based on, the one it produced).
    status_rv: VecMap<Str, (Str, Str)>,
    /// The cached resourceVersion of the status write in flight, per pod uid.
    status_anchor: VecMap<Str, Str>,
    node_posted_at: Option<Millis>,
    /// When the status post in flight was decided (the report period counts from there).
    node_post_sent_at: Millis,
    /// The start-up node events were recorded by this process.
    started: bool,
    /// NodeReady was recorded for the current not-ready episode.
    ready_announced: bool,
    last_unschedulable: Option<bool>,
    lease: Option<Lease>,
    lease_exists: bool,
    /// Per pod uid: when its volumes may be mounted again after a failed attempt.
    mount_retry: VecMap<Str, MountRetry>,
    /// Claims whose filesystem this kubelet grows online (NodeExpandVolume): when the
    /// expansion is done, or, once its status has been sent, when to send it again should the
    /// claim still wait for a node then (the write was lost).
    expanding: VecMap<ObjectKey, Millis>,
    /// The node's resourceVersion and the InternalIP [`Kubelet::host_ip`] read from it: every
    /// status a pod gets reports it, and the node changes far less often than its pods.
    pod_host_ip: Option<(Str, Str)>,
}

impl Kubelet {
    /// The kubelet of `node`, as a freshly started process.
    pub fn new(node: &str) -> Self {
        Kubelet {
            node: Str::from(node),
            unsynced: BTreeSet::new(),
            admitted: LookupMap::default(),
            crash_backoff: Backoff::default(),
            pull_backoff: Backoff::default(),
            pull_errors: VecMap::new(),
            probes: VecMap::new(),
            pulls: VecMap::new(),
            puller_free_at: 0,
            reasons: VecMap::new(),
            written: VecMap::new(),
            status_rv: VecMap::new(),
            status_anchor: VecMap::new(),
            node_posted_at: None,
            node_post_sent_at: 0,
            started: false,
            ready_announced: false,
            last_unschedulable: None,
            lease: None,
            lease_exists: false,
            mount_retry: VecMap::new(),
            expanding: VecMap::new(),
            pod_host_ip: None,
        }
    }

    fn node_key(&self) -> ObjectKey {
        ObjectKey::shared(Kind::Node, &Str::EMPTY, &self.node)
    }

    fn lease_key(&self) -> ObjectKey {
        ObjectKey::from_parts(Kind::Lease, Str::from(LEASE_NAMESPACE), self.node.clone())
    }

    /// A stable small number for this node: its trailing digits, else a hash (for IP ranges).
    fn node_index(&self) -> u8 {
        let digits: String = self
            .node
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if let Ok(n) = digits.parse::<u32>() {
            return (n % 250) as u8;
        }
        let h = self
            .node
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
        (h % 250 + 1) as u8
    }

    /// The first three octets of this node's pod range: from `spec.podCIDR` when it is a /24.
    fn pod_ip_prefix(&self, node: Option<&Node>) -> String {
        if let Some(cidr) = node.and_then(|n| n.spec.pod_cidr.as_deref()) {
            if let Some(base) = cidr.strip_suffix(".0/24") {
                if base.split('.').count() == 3 && base.split('.').all(|o| o.parse::<u8>().is_ok())
                {
                    return base.to_string();
                }
            }
        }
        format!("10.244.{}", self.node_index())
    }

    /// The node's InternalIP from its status, or a kind-style address derived from its index.
    fn host_ip(&self, node: Option<&Node>) -> String {
        let from_status = node
            .and_then(|n| n.status.addresses.as_ref())
            .and_then(|a| a.as_array())
            .and_then(|a| {
                a.iter()
                    .find(|x| x.get("type").and_then(Json::as_str) == Some("InternalIP"))
                    .and_then(|x| x.get("address").and_then(Json::as_str))
                    .map(str::to_string)
            });
        from_status.unwrap_or_else(|| format!("172.18.0.{}", self.node_index() as u16 + 2))
    }

    /// [`Kubelet::host_ip`] for a pod's status, read again only when the node changed.
    fn pod_host_ip(&mut self, node: Option<&Node>) -> Str {
        let version = node.map_or(Str::EMPTY, |n| n.metadata.resource_version.clone());
        if let Some((seen, ip)) = &self.pod_host_ip {
            if *seen == version && !version.is_empty() {
                debug_assert_eq!(*ip, self.host_ip(node), "a node version has one address");
                return ip.clone();
            }
        }
        let ip = Str::from(self.host_ip(node));
        self.pod_host_ip = Some((version, ip.clone()));
        ip
    }

    /// An UpdateStatus with the cached resourceVersion, or with the one our own last write produced
    /// when the cache has not seen that write's echo yet (the status manager remembers its writes).
    fn update_status(&mut self, pod: &Pod, status: PodStatus) -> ApiRequest {
        let uid = pod.metadata.uid.clone();
        let cached_rv = pod.metadata.resource_version.clone();
        let mut p = pod.clone();
        if let Some((anchor, latest)) = self.status_rv.get(&uid) {
            if *anchor == cached_rv {
                p.metadata.resource_version = latest.clone();
            }
        }
        self.status_anchor.insert(uid, cached_rv);
        p.status = status;
        ApiRequest::UpdateStatus(Object::from(p))
    }

    /// Drops everything this process remembers about a pod incarnation.
    fn forget_pod(&mut self, uid: &str) {
        self.admitted.remove(uid);
        self.crash_backoff.forget_prefix(&format!("{uid}/"));
        self.pull_backoff.forget_prefix(&format!("{uid}_"));
        self.pull_errors
            .retain(|k, _| !k.starts_with(&format!("{uid}_")));
        self.probes.retain(|(u, _, _), _| u != uid);
        self.pulls.retain(|(u, _), _| u != uid);
        self.reasons.retain(|(u, _), _| u != uid);
        self.written.remove(uid);
        self.status_rv.remove(uid);
        self.status_anchor.remove(uid);
        self.mount_retry.remove(uid);
    }

    /// Kills and removes the sandbox of a pod the API no longer has. Returns how many containers ran.
    fn kill_orphan(&mut self, rt: &mut NodeRuntime, uid: &str, out: &mut Outcome) -> usize {
        let Some(sandbox) = rt.remove_sandbox(uid) else {
            return 0;
        };
        let key = ObjectKey::new(Kind::Pod, &sandbox.namespace, &sandbox.name);
        let mut n = 0;
        for (name, c) in &sandbox.containers {
            if c.running {
                n += 1;
                out.event(EventRecord {
                    type_: "Normal",
                    reason: "Killing".into(),
                    message: format!("Stopping container {name}").into(),
                    object: key.clone(),
                    uid: Str::from(uid),
                    field_path: Str::concat(&["spec.containers{", name, "}"]),
                });
            }
        }
        self.forget_pod(uid);
        n
    }

    // ------------------------------------------------------------------ pods

    fn sync_pod(
        &mut self,
        key: &ObjectKey,
        now: Millis,
        cache: &Cache,
        rng: &mut Rng,
        rt: &mut NodeRuntime,
    ) -> Outcome {
        let mut out = Outcome::default();
        rt.settle(now);
        let obj = cache
            .get(key)
            .filter(|o| o.as_pod().is_some_and(|p| p.spec.node_name == self.node))
            .cloned();
        let uid = obj.as_ref().map(|o| o.meta().uid.clone());
        let stale: Vec<Str> = rt
            .pods
            .values()
            .filter(|s| {
                s.namespace == key.namespace && s.name == key.name && Some(&s.uid) != uid.as_ref()
            })
            .map(|s| s.uid.clone())
            .collect();
        let mut killed = 0;
        for u in &stale {
            killed += self.kill_orphan(rt, u, &mut out);
        }
        let Some(obj) = obj else {
            out.record = Some(ReconcileRecord {
                observed: match (stale.is_empty(), killed) {
                    (true, _) => {
                        "pod no longer exists on this node; nothing left in the runtime".into()
                    }
                    (false, 0) => "pod no longer exists; its stopped sandbox remains".into(),
                    (false, n) => format!("pod no longer exists; {n} container(s) still running"),
                },
                desired: "no containers for this pod".into(),
                diff: match (stale.is_empty(), killed) {
                    (true, _) => String::new(),
                    (false, 0) => "remove the sandbox".into(),
                    (false, n) => format!("kill {n} container(s), remove the sandbox"),
                },
            });
            return out;
        };
        let pod = obj.as_pod().expect("filtered to pods above");
        let node = cache.get(&self.node_key()).and_then(|o| o.as_node());
        if matches!(pod.status.phase.as_str(), "Succeeded" | "Failed") {
            self.sync_terminated(&obj, pod, now, rt, &mut out);
        } else if pod.metadata.deletion_timestamp.is_some() {
            self.sync_terminating(&obj, pod, node, now, rng, rt, &mut out);
        } else if let Some((reason, message)) = self.admit(pod, node, cache, rt) {
            out.event(EventRecord::warning(&obj, &reason, message.clone()));
            let mut status = pod.status.clone();
            status
                .conditions
                .retain(|c| !KUBELET_CONDITIONS.contains(&c.type_.as_str()));
            status.phase = "Failed".into();
            status.reason = Some(Str::from(reason.as_str()));
            status.message = Some(Str::from(format!("Pod was rejected: {message}")));
            let req = self.update_status(pod, status);
            out.request(req);
            out.record = Some(ReconcileRecord {
                observed: format!("new pod; {message}"),
                desired: "admit the pod if the node can run it".into(),
                diff: format!("reject the pod ({reason})"),
            });
        } else {
            // Every sync of an admitted pod passes here: its requests are read again only when
            // its spec is not the one they were read from.
            match self.admitted.get(&pod.metadata.uid) {
                Some(a) if Rc::ptr_eq(&a.spec, &pod.spec) => {}
                _ => {
                    self.admitted
                        .insert(pod.metadata.uid.clone(), Admitted::of(pod));
                }
            }
            let new_sandbox = !rt.pods.contains_key(&pod.metadata.uid);
            if new_sandbox
                && self
                    .wait_for_mounts(&obj, pod, cache, node, now, &mut out)
                    .is_some()
            {
                return out;
            }
            self.sync_running(&obj, pod, node, cache, now, rng, rt, &mut out);
            if rt.pods.contains_key(&pod.metadata.uid) {
                self.expand_filesystems(&obj, pod, cache, now, &mut out);
            }
        }
        out
    }

    // ------------------------------------------------------------------ node
}

impl Controller for Kubelet {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Kubelet(self.node.clone())
    }

    /// Its pods by node (upstream's `spec.nodeName` indexer): admission counts what the node already runs.
    fn indexers(&self) -> Indexers {
        Indexers {
            node_name: true,
            ..Indexers::NONE
        }
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        // The ConfigMaps and Secrets volumes mount are served kinds, interned at run time.
        static KINDS: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        KINDS.get_or_init(|| {
            let mut kinds = vec![Kind::Node, Kind::Pod];
            kinds.extend(mounted_kinds().into_iter().flatten());
            // Volumes too: a claim's volume says whether it must be attached first.
            kinds.extend(crate::sim::api::storage::volume_kind());
            kinds
        })
    }

    fn has_field_selector(&self) -> bool {
        true
    }

    fn accepts(&self, obj: &Object) -> bool {
        match obj {
            Object::Pod(p) => p.spec.node_name == self.node,
            Object::Node(n) => n.metadata.name == self.node,
            Object::Custom(c) => {
                mounted_kinds().contains(&Some(Kind::Custom(c.kind)))
                    || crate::sim::api::storage::volume_kind() == Some(Kind::Custom(c.kind))
            }
            _ => false,
        }
    }

    fn node_selector(&self) -> Option<&str> {
        Some(&self.node)
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        match &*ev.object {
            Object::Pod(p) => {
                if ev.type_ == WatchEventType::Modified {
                    if let Some(o) = old.and_then(|o| o.as_pod()) {
                        let same_spec = o.spec == p.spec
                            && o.metadata.uid == p.metadata.uid
                            && o.metadata.deletion_timestamp == p.metadata.deletion_timestamp
                            && o.metadata.deletion_grace_period_seconds
                                == p.metadata.deletion_grace_period_seconds;
                        let own_status = o.status == p.status
                            || self
                                .written
                                .get(&p.metadata.uid)
                                .and_then(|w| w.as_pod())
                                .is_some_and(|w| w.status == p.status);
                        if same_spec && own_status {
                            return Vec::new();
                        }
                    }
                }
                vec![ev.object.key()]
            }
            Object::Node(n) => {
                let old = old.and_then(|o| o.as_node());
                let mut keys = Vec::new();
                if old.is_some_and(|o| o.spec.unschedulable != n.spec.unschedulable) {
                    keys.push(self.node_key());
                }
                // A disk attached to the node wakes the pods waiting for theirs.
                if old.is_some_and(|o| o.status.volumes_attached != n.status.volumes_attached) {
                    keys.extend(
                        cache
                            .list(Kind::Pod)
                            .filter_map(|o| o.as_pod())
                            .filter(|p| {
                                p.spec.node_name == self.node
                                    && !crate::sim::api::storage::pod_claims(p).is_empty()
                            })
                            .map(|p| ObjectKey::of(Kind::Pod, &p.metadata)),
                    );
                }
                keys
            }
            // A mounted object that appears wakes the pods waiting for it, and so does a claim
            // that changes (it may have been bound).
            Object::Custom(c)
                if ev.type_ == WatchEventType::Added
                    || (ev.type_ == WatchEventType::Modified
                        && c.kind.names().kind == "PersistentVolumeClaim") =>
            {
                self.pods_mounting(
                    cache,
                    Kind::Custom(c.kind),
                    &c.metadata.namespace,
                    &c.metadata.name,
                )
            }
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cache.list(Kind::Pod).map(|o| o.key()).collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let Ctx {
            now,
            cache,
            rng,
            runtime,
            ..
        } = ctx;
        let now = *now;
        match key.kind {
            Kind::Pod => match runtime.as_deref_mut() {
                Some(rt) => self.sync_pod(key, now, cache, rng, rt),
                None => Outcome {
                    error: Some("the node's container runtime is not reachable".into()),
                    record: Some(ReconcileRecord {
                        observed: "no container runtime on this machine".into(),
                        desired: "the pod's containers as its spec says".into(),
                        diff: "retry once the runtime answers".into(),
                    }),
                    ..Default::default()
                },
            },
            Kind::Node if key.name == self.node => {
                self.sync_node(now, cache, runtime.as_deref_mut())
            }
            Kind::Lease if key.name == self.node => self.sync_lease(now, cache),
            _ => Outcome::done(),
        }
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        match (req, result) {
            (ApiRequest::UpdateStatus(Object::Pod(p)), Err(_)) => {
                self.unsynced.insert(Object::Pod(p.clone()).key());
            }
            (ApiRequest::Delete { key, .. }, Err(e))
                if key.kind == Kind::Pod && e.code() != 404 =>
            {
                self.unsynced.insert(key.clone());
            }
            (ApiRequest::Delete { key, .. }, _) if key.kind == Kind::Pod => {
                self.unsynced.remove(key);
            }
            (ApiRequest::UpdateStatus(Object::Pod(_)), Ok(o)) => {
                self.unsynced.remove(&o.key());
                if let Some(p) = o.as_pod() {
                    let uid = p.metadata.uid.clone();
                    self.written.insert(uid.clone(), o.clone());
                    if let Some(anchor) = self.status_anchor.remove(&uid) {
                        self.status_rv
                            .insert(uid, (anchor, p.metadata.resource_version.clone()));
                    }
                }
            }
            // A claim's grown capacity that did not reach the API server: grow it again.
            (ApiRequest::Patch { key, .. }, Err(_)) => {
                self.expanding.remove(key);
            }
            (ApiRequest::UpdateStatus(Object::Node(_)), Ok(_)) => {
                self.node_posted_at = Some(self.node_post_sent_at)
            }
            (
                ApiRequest::Create(Object::Lease(_)) | ApiRequest::Update(Object::Lease(_)),
                Ok(o),
            ) => {
                self.lease = o.as_lease().cloned();
                self.lease_exists = true;
            }
            (ApiRequest::Create(Object::Lease(_)), Err(e))
                if e.reason == StatusReason::AlreadyExists =>
            {
                self.lease = None;
                self.lease_exists = true;
            }
            (ApiRequest::Update(Object::Lease(_)), Err(e))
                if e.code() == 409 || e.code() == 404 =>
            {
                self.lease = None;
                self.lease_exists = e.code() == 409;
            }
            _ => {}
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Kubelet::new(&self.node)))
    }

    fn tick(&mut self, _now: Millis) -> (Vec<ObjectKey>, Option<Millis>) {
        let mut keys = vec![self.lease_key(), self.node_key()];
        keys.extend(self.unsynced.iter().cloned());
        (keys, Some(HEARTBEAT_PERIOD))
    }
}

// ---------------------------------------------------------------------- helpers

/// API timestamps have second precision; generating them truncated keeps status comparisons honest.
fn ts(ms: Millis) -> Time {
    Time(ms / 1000 * 1000)
}

fn min_opt(a: Option<Millis>, b: Millis) -> Option<Millis> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn restart_policy(pod: &Pod) -> &str {
    pod.spec.restart_policy.as_deref().unwrap_or("Always")
}

fn waiting(reason: &str, message: Option<String>) -> ContainerState {
    ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.into()),
            message: message.map(Str::from),
        }),
        ..Default::default()
    }
}

fn terminated_state(t: &Termination) -> ContainerState {
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: t.exit_code,
            reason: Some(Str::from(t.reason.as_str())),
            message: t.message.as_deref().map(Str::from),
            started_at: t.started_at.map(ts),
            finished_at: t.finished_at.map(ts),
        }),
        ..Default::default()
    }
}

fn delete_request(pod: &Pod) -> ApiRequest {
    ApiRequest::Delete {
        key: ObjectKey::of(Kind::Pod, &pod.metadata),
        options: DeleteOptions {
            grace_period_seconds: Some(0),
            precondition_uid: Some(pod.metadata.uid.to_string()),
            ..Default::default()
        },
    }
}

/// The restart count and previous termination a container's first instance on a fresh sandbox
/// continues from: after a reboot the API status still remembers the instances the runtime lost.
fn seed_from_status(pod: &Pod, name: &str) -> (i32, Option<Termination>) {
    let all = pod
        .status
        .init_container_statuses
        .iter()
        .chain(&pod.status.container_statuses);
    let Some(o) = all.into_iter().find(|s| s.name == name) else {
        return (0, None);
    };
    let from_api = |t: &ContainerStateTerminated| Termination {
        exit_code: t.exit_code,
        reason: t.reason.as_deref().unwrap_or_default().to_string(),
        message: t.message.as_deref().map(String::from),
        started_at: t.started_at.map(|x| x.0),
        finished_at: t.finished_at.map(|x| x.0),
        container_id: String::new(),
    };
    if o.state.running.is_some() {
        let lost = Termination {
            exit_code: 137,
            reason: REASON_STATUS_UNKNOWN.into(),
            message: Some("The container could not be located when the pod was deleted.  The container used to be Running".into()),
            ..Default::default()
        };
        return (o.restart_count + 1, Some(lost));
    }
    if let Some(t) = &o.state.terminated {
        return (o.restart_count + 1, Some(from_api(t)));
    }
    match o.last_state.as_ref().and_then(|l| l.terminated.as_ref()) {
        Some(t) => (o.restart_count + 1, Some(from_api(t))),
        None => (o.restart_count, None),
    }
}

/// `HasAnyRegularContainerStarted`: a regular container left its first waiting state.
fn any_regular_container_started(statuses: &[ContainerStatus]) -> bool {
    statuses.iter().any(|s| {
        s.state.running.is_some()
            || s.state.terminated.is_some()
            || s.last_state
                .as_ref()
                .is_some_and(|l| l.terminated.is_some())
    })
}

/// Whether the API status shows that this container ran at some point.
fn ran_before(pod: &Pod, name: &str) -> bool {
    let all = pod
        .status
        .init_container_statuses
        .iter()
        .chain(&pod.status.container_statuses);
    all.into_iter().filter(|s| s.name == name).any(|s| {
        s.state.running.is_some()
            || s.state.terminated.is_some()
            || s.last_state
                .as_ref()
                .is_some_and(|l| l.terminated.is_some())
    })
}

/// A quantity in thousandths (`500m` → 500, `1` → 1000, `1Ki` → 1024000), for QoS comparisons.
fn parse_quantity_milli(s: &str) -> Option<f64> {
    // Exact, like the API's own parsing, then in float for the QoS and admission sums.
    parse_quantity(s).ok().map(|q| q.nanos() as f64 / 1e6)
}

/// An admitted pod's requests and QoS class, for the spec they were read from (a pod whose spec
/// changed is read again).
#[derive(Clone, Debug)]
struct Admitted {
    spec: Rc<PodSpec>,
    requests: [i64; 2],
    /// Written into every status the pod gets: reading it parsed every container's requests
    /// and limits again, for each of a pod's half-dozen status writes.
    qos: &'static str,
}

impl Admitted {
    fn of(pod: &Pod) -> Admitted {
        Admitted {
            spec: pod.spec.clone(),
            requests: pod_requests(pod),
            qos: pod_status::qos_class(pod),
        }
    }
}

/// What admission counts of a pod: its cpu request in millicores and its memory in bytes, as
/// the scheduler framework counts them (`ADMITTED_RESOURCES`' order).
fn pod_requests(pod: &Pod) -> [i64; 2] {
    ADMITTED_RESOURCES.map(|(name, divisor)| (pod_request(pod, name) / divisor).ceil() as i64)
}

/// The resources admission checks, with the divisor from thousandths to their unit.
const ADMITTED_RESOURCES: [(&str, f64); 2] = [("cpu", 1.0), ("memory", 1000.0)];

/// A pod's effective request for a resource, in thousandths: the larger of what its app
/// containers (plus sidecars) ask together and what its biggest init container asks.
fn pod_request(pod: &Pod, name: &str) -> f64 {
    let none = ResourceRequirements::default();
    let request = |c: &Container| {
        let res = c.resources.as_ref().unwrap_or(&none);
        // API defaulting copies a limit into an absent request.
        res.requests
            .get(name)
            .or_else(|| res.limits.get(name))
            .and_then(|q| parse_quantity_milli(q))
            .unwrap_or(0.0)
    };
    let sidecars: f64 = pod
        .spec
        .init_containers
        .iter()
        .filter(|c| Role::of_init(c) == Role::Sidecar)
        .map(request)
        .sum();
    let apps: f64 = pod.spec.containers.iter().map(request).sum::<f64>() + sidecars;
    let init = pod
        .spec
        .init_containers
        .iter()
        .filter(|c| Role::of_init(c) == Role::Init)
        .map(request)
        .fold(0.0, f64::max);
    apps.max(init)
}

#[cfg(test)]
mod tests;
