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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{json, Value as Json};

use crate::sim::api::quantity::parse_quantity;
use crate::sim::api::types::{
    find_condition, Condition, Container, ContainerState, ContainerStateRunning,
    ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, Kind, Lease, LeaseSpec,
    Millis, Node, Object, ObjectKey, ObjectMeta, OwnerReference, Pod, PodStatus, Probe,
    ResourceRequirements, Time,
};
use crate::sim::api::{
    ApiRequest, ApiResult, DeleteOptions, StatusReason, WatchEvent, WatchEventType,
};
use crate::sim::controllers::scheduler;
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sim::machinery::node_runtime::{
    image_size, next_relist, normalize_image, parse_image, NodeRuntime, PodSandbox, ProbeKind,
    Termination, REASON_STATUS_UNKNOWN,
};
use crate::sim::rng::Rng;
use crate::sim::time::format_duration;
use crate::sort::StableSort;

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

/// client-go's `flowcontrol.Backoff`: per-key exponential back-off whose entries expire.
#[derive(Clone, Debug, Default)]
struct Backoff {
    entries: BTreeMap<String, BackoffEntry>,
}

#[derive(Clone, Copy, Debug)]
struct BackoffEntry {
    backoff: Millis,
    last_update: Millis,
}

/// After 2 × max without an update an entry starts over ("stable for twice the max").
fn backoff_expired(event_time: Millis, last_update: Millis) -> bool {
    event_time.saturating_sub(last_update) > 2 * BACKOFF_MAX
}

impl Backoff {
    fn get(&self, id: &str) -> Millis {
        self.entries.get(id).map_or(0, |e| e.backoff)
    }

    fn next(&mut self, id: &str, event_time: Millis, now: Millis) {
        let backoff = match self.entries.get(id) {
            Some(e) if !backoff_expired(event_time, e.last_update) => {
                (e.backoff * 2).min(BACKOFF_MAX)
            }
            _ => BACKOFF_INITIAL,
        };
        self.entries.insert(
            id.to_string(),
            BackoffEntry {
                backoff,
                last_update: now,
            },
        );
    }

    /// True while less than the back-off has passed since `event_time` (a container's exit).
    fn in_backoff_since(&self, id: &str, event_time: Millis, now: Millis) -> bool {
        self.entries.get(id).is_some_and(|e| {
            !backoff_expired(event_time, e.last_update)
                && now.saturating_sub(event_time) < e.backoff
        })
    }

    /// True while less than the back-off has passed since the last failure (image pulls).
    fn in_backoff_since_update(&self, id: &str, now: Millis) -> bool {
        self.entries.get(id).is_some_and(|e| {
            !backoff_expired(now, e.last_update) && now.saturating_sub(e.last_update) < e.backoff
        })
    }

    fn retry_at(&self, id: &str) -> Option<Millis> {
        self.entries.get(id).map(|e| e.last_update + e.backoff)
    }

    fn forget_prefix(&mut self, prefix: &str) {
        self.entries.retain(|k, _| !k.starts_with(prefix));
    }
}

/// One probe worker's memory, for one container instance.
#[derive(Clone, Debug)]
struct ProbeWorker {
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
    fn settled(&self) -> bool {
        self.result == Some(true) && self.last_raw != Some(false)
    }
}

/// An image pull in flight (the serial image puller: one pull at a time per node).
#[derive(Clone, Debug)]
struct Pull {
    image: String,
    requested_at: Millis,
    began_at: Millis,
    done_at: Millis,
    error: Option<String>,
}

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
    fn field(self, name: &str) -> String {
        match self {
            Role::App => format!("spec.containers{{{name}}}"),
            Role::Init | Role::Sidecar => format!("spec.initContainers{{{name}}}"),
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
    obj: &'a Arc<Object>,
    pod: &'a Pod,
    now: Millis,
    out: &'a mut Outcome,
    wake: Option<Millis>,
    gaps: Vec<String>,
    changed: bool,
}

/// The kubelet of one node.
#[derive(Debug)]
pub struct Kubelet {
    node: String,
    /// Pods whose last status write or final delete failed: retried on every heartbeat tick, as
    /// the status manager's periodic sync does.
    unsynced: BTreeSet<ObjectKey>,
    /// Pods this process admitted (admission runs once per pod per kubelet process).
    admitted: BTreeSet<String>,
    /// Restart back-off per container (`<uid>/<container>`).
    crash_backoff: Backoff,
    /// Pull back-off per pod and image (`<uid>_<image>`), with the last pull error.
    pull_backoff: Backoff,
    pull_errors: BTreeMap<String, String>,
    probes: BTreeMap<(String, String, ProbeKind), ProbeWorker>,
    pulls: BTreeMap<(String, String), Pull>,
    puller_free_at: Millis,
    /// Why a container could not be started last time (the kubelet's reasonCache).
    reasons: BTreeMap<(String, String), (String, String)>,
    /// The pod as this kubelet's last status write stored it, per pod uid, to ignore the echo of
    /// its own writes. The API server's answer, shared with its store: a copy of each status
    /// would be a few kB a pod.
    written: BTreeMap<String, Arc<Object>>,
    /// Per pod uid: (the cached resourceVersion a write was based on, the one it produced).
    status_rv: BTreeMap<String, (String, String)>,
    /// The cached resourceVersion of the status write in flight, per pod uid.
    status_anchor: BTreeMap<String, String>,
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
}

impl Kubelet {
    /// The kubelet of `node`, as a freshly started process.
    pub fn new(node: &str) -> Self {
        Kubelet {
            node: node.to_string(),
            unsynced: BTreeSet::new(),
            admitted: BTreeSet::new(),
            crash_backoff: Backoff::default(),
            pull_backoff: Backoff::default(),
            pull_errors: BTreeMap::new(),
            probes: BTreeMap::new(),
            pulls: BTreeMap::new(),
            puller_free_at: 0,
            reasons: BTreeMap::new(),
            written: BTreeMap::new(),
            status_rv: BTreeMap::new(),
            status_anchor: BTreeMap::new(),
            node_posted_at: None,
            node_post_sent_at: 0,
            started: false,
            ready_announced: false,
            last_unschedulable: None,
            lease: None,
            lease_exists: false,
        }
    }

    fn node_key(&self) -> ObjectKey {
        ObjectKey::new(Kind::Node, "", &self.node)
    }

    fn lease_key(&self) -> ObjectKey {
        ObjectKey::new(Kind::Lease, LEASE_NAMESPACE, &self.node)
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
        ApiRequest::UpdateStatus(Object::Pod(p))
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
                    message: format!("Stopping container {name}"),
                    object: key.clone(),
                    uid: uid.to_string(),
                    field_path: format!("spec.containers{{{name}}}"),
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
        let stale: Vec<String> = rt
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
            status.reason = Some(reason.clone());
            status.message = Some(format!("Pod was rejected: {message}"));
            let req = self.update_status(pod, status);
            out.request(req);
            out.record = Some(ReconcileRecord {
                observed: format!("new pod; {message}"),
                desired: "admit the pod if the node can run it".into(),
                diff: format!("reject the pod ({reason})"),
            });
        } else {
            self.admitted.insert(pod.metadata.uid.clone());
            self.sync_running(&obj, pod, node, now, rng, rt, &mut out);
        }
        out
    }

    /// Kubelet admission (`GeneralPredicates`): the pod must fit what the node has left and match
    /// its node selector. Pods already admitted, or already running, pass. Returns (reason, message)
    /// for a rejected pod.
    fn admit(
        &self,
        pod: &Pod,
        node: Option<&Node>,
        cache: &Cache,
        rt: &NodeRuntime,
    ) -> Option<(String, String)> {
        let uid = &pod.metadata.uid;
        if self.admitted.contains(uid) || rt.pods.contains_key(uid) {
            return None;
        }
        let node = node?;
        let others: Vec<&Pod> = cache
            .pods_on_node(&self.node)
            .filter_map(|o| o.as_pod())
            .filter(|p| {
                p.metadata.uid != *uid && !matches!(p.status.phase.as_str(), "Succeeded" | "Failed")
            })
            .filter(|p| {
                self.admitted.contains(&p.metadata.uid) || rt.pods.contains_key(&p.metadata.uid)
            })
            .collect();
        let allocatable = |name: &str| {
            node.status
                .allocatable
                .get(name)
                .and_then(|q| parse_quantity_milli(q))
        };
        let short = |name: &str, requested: i64, used: i64, capacity: i64| {
            let message = format!(
                "Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"
            );
            Some((format!("OutOf{name}"), message))
        };
        let max_pods = allocatable("pods").map_or(110, |v| (v / 1000.0) as i64);
        if others.len() as i64 + 1 > max_pods {
            return short("pods", 1, others.len() as i64, max_pods);
        }
        // cpu in millicores, memory in bytes, as the scheduler framework counts them.
        for (name, divisor) in [("cpu", 1.0), ("memory", 1000.0)] {
            let requested = (pod_request(pod, name) / divisor).ceil() as i64;
            let Some(capacity) = allocatable(name).map(|v| (v / divisor) as i64) else {
                continue;
            };
            let used: i64 = others
                .iter()
                .map(|p| (pod_request(p, name) / divisor).ceil() as i64)
                .sum();
            if requested > 0 && used + requested > capacity {
                return short(name, requested, used, capacity);
            }
        }
        // The kubelet admits with the scheduler's own node-affinity check (both use
        // `GetRequiredNodeAffinity` in Kubernetes).
        if !scheduler::required_affinity_matches(pod, node) {
            return Some((
                "NodeAffinity".into(),
                "Predicate NodeAffinity failed".into(),
            ));
        }
        None
    }

    /// A pod in a terminal phase: nothing runs; a deleted one is confirmed gone.
    fn sync_terminated(
        &mut self,
        obj: &Arc<Object>,
        pod: &Pod,
        now: Millis,
        rt: &mut NodeRuntime,
        out: &mut Outcome,
    ) {
        let uid = &pod.metadata.uid;
        let running: Vec<String> = rt.pods.get(uid).map_or(Vec::new(), |s| {
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
    fn sync_terminating(
        &mut self,
        obj: &Arc<Object>,
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
        let running: Vec<(String, bool)> = rt.pods.get(&uid).map_or(Vec::new(), |s| {
            s.containers
                .iter()
                .filter(|(_, c)| c.running)
                .map(|(n, c)| (n.clone(), c.stopping))
                .collect()
        });
        for (name, stopping) in &running {
            if !stopping {
                let after = rng.range(STOP_TIME.0, STOP_TIME.1).min(grace_left);
                rt.stop_container(&uid, name, now + after, 0);
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
        let host_ip = self.host_ip(node);
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
    fn sync_running(
        &mut self,
        obj: &Arc<Object>,
        pod: &Pod,
        node: Option<&Node>,
        now: Millis,
        rng: &mut Rng,
        rt: &mut NodeRuntime,
        out: &mut Outcome,
    ) {
        let uid = pod.metadata.uid.clone();
        let view = rt.pods.get(&uid).cloned();
        let mut p = Pass {
            obj,
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
        let status = self.generate_status(pod, view.as_ref(), &self.host_ip(node), now, false);
        let observed = format!(
            "{}; {}",
            status.phase,
            summarize(
                status
                    .init_container_statuses
                    .iter()
                    .chain(&status.container_statuses)
            )
        );
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
        let desired = pod
            .spec
            .init_containers
            .iter()
            .map(|c| match Role::of_init(c) {
                Role::Sidecar => format!("sidecar {} running {}", c.name, c.image),
                _ => format!("init container {} completed", c.name),
            })
            .chain(
                pod.spec
                    .containers
                    .iter()
                    .map(|c| format!("{} running {}", c.name, c.image)),
            )
            .collect::<Vec<_>>()
            .join(", ");
        out.record = Some(ReconcileRecord {
            observed,
            desired,
            diff: gaps.join("; "),
        });
    }

    /// Moves one container toward running (an init container: toward completed). Returns true when
    /// the pod may go on to the next container in start order.
    fn step_container(
        &mut self,
        p: &mut Pass<'_>,
        c: &Container,
        role: Role,
        kills: &BTreeMap<String, String>,
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
        let bk = format!("{uid}/{name}/{}", c.image);
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
        if let Some(finished) = finished {
            self.crash_backoff.next(&bk, finished, now);
        }
        let (attempt, seed) = match &cur {
            Some(x) => (x.attempt + 1, None),
            None => seed_from_status(pod, &name),
        };
        let crash_after = rng.range(CRASH_RUN.0, CRASH_RUN.1);
        let completes_after = (role == Role::Init).then(|| rng.range(INIT_RUN.0, INIT_RUN.1));
        rt.start_container(
            &uid,
            &name,
            &c.image,
            attempt,
            seed,
            crash_after,
            completes_after,
            now,
        );
        p.out.event(
            EventRecord::normal(obj, "Created", format!("Created container: {name}"))
                .at_field(field.clone()),
        );
        p.out.event(
            EventRecord::normal(obj, "Started", format!("Started container {name}"))
                .at_field(field),
        );
        self.reasons.remove(&ck);
        p.changed = true;
        p.gaps.push(format!(
            "{name}: {}",
            if attempt > 0 { "restarted" } else { "started" }
        ));
        role == Role::App
    }

    /// Makes sure the container's image is on the node. Returns true when it can be started now.
    fn ensure_image(
        &mut self,
        p: &mut Pass<'_>,
        c: &Container,
        field: &str,
        rt: &mut NodeRuntime,
        rng: &mut Rng,
    ) -> bool {
        let (obj, now) = (p.obj, p.now);
        let uid = &p.pod.metadata.uid;
        let name = &c.name;
        let ck = (uid.clone(), name.clone());
        let image = &c.image;
        let parsed = match parse_image(image) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!(
                    "Failed to apply default image tag {image:?}: couldn't parse image name {image:?}: {e}"
                );
                p.out
                    .event(EventRecord::warning(obj, "InspectFailed", msg.clone()).at_field(field));
                p.out.event(
                    EventRecord::warning(obj, "Failed", "Error: InvalidImageName").at_field(field),
                );
                self.reasons.insert(ck, ("InvalidImageName".into(), msg));
                p.gaps
                    .push(format!("{name}: image name {image:?} is invalid"));
                return false;
            }
        };
        let image_ref = parsed.normalized();
        let policy = c.image_pull_policy.clone().unwrap_or_else(|| {
            if parsed.is_latest() {
                "Always".into()
            } else {
                "IfNotPresent".into()
            }
        });
        let present = rt.has_image(&image_ref);
        if policy == "Never" || (present && policy != "Always") {
            if present {
                p.out.event(
                    EventRecord::normal(
                        obj,
                        "Pulled",
                        format!("Container image {image:?} already present on machine"),
                    )
                    .at_field(field),
                );
                return true;
            }
            let msg = format!("Container image {image:?} is not present with pull policy of Never");
            p.out
                .event(EventRecord::warning(obj, "ErrImageNeverPull", msg.clone()).at_field(field));
            p.out.event(
                EventRecord::warning(obj, "Failed", "Error: ErrImageNeverPull").at_field(field),
            );
            self.reasons.insert(ck, ("ErrImageNeverPull".into(), msg));
            p.gaps.push(format!(
                "{name}: image not present and imagePullPolicy is Never"
            ));
            return false;
        }
        let bk = format!("{uid}_{image}");
        if let Some(pull) = self.pulls.remove(&ck) {
            if pull.image == *image {
                if now < pull.done_at {
                    p.wake = min_opt(p.wake, pull.done_at);
                    self.pulls.insert(ck, pull);
                    p.gaps.push(format!("{name}: pulling {image}"));
                    return false;
                }
                if let Some(err) = pull.error {
                    p.out.event(
                        EventRecord::warning(
                            obj,
                            "Failed",
                            format!("Failed to pull image {image:?}: {err}"),
                        )
                        .at_field(field),
                    );
                    p.out.event(
                        EventRecord::warning(obj, "Failed", "Error: ErrImagePull").at_field(field),
                    );
                    self.pull_backoff.next(&bk, now, now);
                    self.pull_errors.insert(bk, err.clone());
                    self.reasons.insert(ck, ("ErrImagePull".into(), err));
                    p.wake = min_opt(p.wake, next_relist(now));
                    p.gaps.push(format!("{name}: image pull failed"));
                    return false;
                }
                rt.images.insert(image_ref.clone());
                let message = format!(
                    "Successfully pulled image {image:?} in {} ({} including waiting). Image size: {} bytes.",
                    format_duration(pull.done_at - pull.began_at),
                    format_duration(pull.done_at - pull.requested_at),
                    image_size(&image_ref)
                );
                p.out
                    .event(EventRecord::normal(obj, "Pulled", message).at_field(field));
                return true;
            }
        }
        if self.pull_backoff.in_backoff_since_update(&bk, now) {
            p.out.event(
                EventRecord::normal(obj, "BackOff", format!("Back-off pulling image {image:?}"))
                    .at_field(field),
            );
            p.out.event(
                EventRecord::warning(obj, "Failed", "Error: ImagePullBackOff").at_field(field),
            );
            let last = self.pull_errors.get(&bk).cloned().unwrap_or_default();
            let message = format!("Back-off pulling image {image:?}: ErrImagePull: {last}");
            self.reasons
                .insert(ck, ("ImagePullBackOff".into(), message));
            if let Some(at) = self.pull_backoff.retry_at(&bk) {
                p.wake = min_opt(p.wake, at);
            }
            p.gaps.push(format!("{name}: back-off pulling {image}"));
            return false;
        }
        p.out.event(
            EventRecord::normal(obj, "Pulling", format!("Pulling image {image:?}")).at_field(field),
        );
        let began = now.max(self.puller_free_at);
        let error = rt.pull_error(&image_ref);
        let layers_cached = present
            || self.pulls.values().any(|other| {
                other.error.is_none()
                    && other.done_at <= began
                    && normalize_image(&other.image) == image_ref
            });
        let took = if error.is_some() {
            rng.range(300, 1_500)
        } else if layers_cached {
            rng.range(100, 600)
        } else {
            rng.range(1_000, 4_000)
        };
        let done_at = began + took;
        self.puller_free_at = done_at;
        self.pulls.insert(
            ck,
            Pull {
                image: image.clone(),
                requested_at: now,
                began_at: began,
                done_at,
                error,
            },
        );
        p.wake = min_opt(p.wake, done_at);
        p.gaps.push(format!("{name}: pulling {image}"));
        false
    }

    /// Replays each probe worker's ticks up to `now`. Returns the containers a failed liveness or
    /// startup probe condemns, with the kill message.
    #[allow(clippy::too_many_arguments)]
    fn run_probes(
        &mut self,
        obj: &Arc<Object>,
        pod: &Pod,
        rt: &NodeRuntime,
        now: Millis,
        terminating: bool,
        out: &mut Outcome,
        wake: &mut Option<Millis>,
    ) -> BTreeMap<String, String> {
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

    /// The pod status the kubelet reports, from the runtime as the PLEG saw it (`view`).
    fn generate_status(
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
        let mut phase = get_phase(pod, policy, &init_statuses, &statuses, terminal).to_string();
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
        let cond = |type_: &str, ok: bool, reason: Option<String>, message: Option<String>| {
            let status = if ok { "True" } else { "False" };
            let prior = find_condition(&old.conditions, type_).filter(|c| c.status == status);
            Condition {
                type_: type_.into(),
                status: status.into(),
                reason,
                message,
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
            host_ip: Some(host_ip.to_string()),
            pod_ip: view.map(|v| v.ip.clone()).or_else(|| old.pod_ip.clone()),
            start_time: old.start_time.or(Some(ts(now))),
            nominated_node_name: old.nominated_node_name.clone(),
            container_statuses: statuses,
            init_container_statuses: init_statuses,
            qos_class: Some(qos_class(pod).into()),
        }
    }

    /// One container's status (`convertToAPIContainerStatuses` plus the prober's ready/started).
    fn container_status(
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
            name: c.name.clone(),
            image: c.image.clone(),
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
                cs.image = r.image_ref.clone();
                cs.image_id = Some(r.image_id.clone());
                cs.container_id = Some(format!("containerd://{}", r.id));
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

    /// The published result of a probe for one container instance (true when there is no probe).
    fn probe_passed(
        &self,
        uid: &str,
        c: &Container,
        container_id: &str,
        kind: ProbeKind,
        probe: Option<&Probe>,
    ) -> bool {
        if probe.is_none() {
            return true;
        }
        self.probes
            .get(&(uid.to_string(), c.name.clone(), kind))
            .filter(|w| w.container_id == container_id)
            .is_some_and(|w| w.result == Some(true) || w.succeeded_at.is_some())
    }

    // ------------------------------------------------------------------ node

    /// Node status (checked every 10 s, posted on change or every 5 min) and pod housekeeping.
    fn sync_node(&mut self, now: Millis, cache: &Cache, rt: Option<&mut NodeRuntime>) -> Outcome {
        let mut out = Outcome::default();
        let boot_id = rt.as_deref().map(|r| r.boot_id(&self.node));
        if let Some(rt) = rt {
            rt.settle(now);
            let live: BTreeSet<String> = cache
                .list(Kind::Pod)
                .map(|o| o.meta().uid.clone())
                .collect();
            let orphans: Vec<String> = rt
                .pods
                .keys()
                .filter(|u| !live.contains(*u))
                .cloned()
                .collect();
            for uid in orphans {
                self.kill_orphan(rt, &uid, &mut out);
            }
            let known: BTreeSet<String> = live.iter().chain(rt.pods.keys()).cloned().collect();
            let forgotten: BTreeSet<String> = self
                .written
                .keys()
                .chain(self.reasons.keys().map(|(u, _)| u))
                .filter(|u| !known.contains(*u))
                .cloned()
                .collect();
            for uid in forgotten {
                self.forget_pod(&uid);
            }
        }
        let Some(obj) = cache.get(&self.node_key()).cloned() else {
            out.record = Some(ReconcileRecord {
                observed: "Node object not found".into(),
                desired: "Node status posted".into(),
                diff: String::new(),
            });
            return out;
        };
        let Some(node) = obj.as_node() else {
            return out;
        };
        let node_ref = |reason: &str, message: String| EventRecord {
            type_: "Normal",
            reason: reason.into(),
            message,
            object: obj.key(),
            uid: node.metadata.name.clone(),
            field_path: String::new(),
        };
        let status_is_now =
            |what: &str| format!("Node {} status is now: {what}", node.metadata.name);
        let first_pass = !self.started;
        if first_pass {
            self.started = true;
            out.event(node_ref("Starting", "Starting kubelet.".into()));
        }
        let desired = [
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
                "NodeHasSufficientMemory",
            ),
            (
                "DiskPressure",
                "False",
                "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure",
                "NodeHasNoDiskPressure",
            ),
            (
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
                "NodeHasSufficientPID",
            ),
            (
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status",
                "NodeReady",
            ),
        ];
        let mut new = node.clone();
        let mut changed = false;
        let mut ready_event = None;
        let mut info = new.status.node_info.clone().unwrap_or_else(|| {
            Box::new(json!({
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0-79-generic",
                "kubeProxyVersion": "",
                "kubeletVersion": "v1.34.1",
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
            }))
        });
        if let (Some(boot_id), Some(map)) = (&boot_id, info.as_object_mut()) {
            let previous = map.get("bootID").and_then(Json::as_str).map(str::to_string);
            if previous.as_deref() != Some(boot_id.as_str()) {
                if previous.is_some() {
                    let message = format!(
                        "Node {} has been rebooted, boot id: {boot_id}",
                        node.metadata.name
                    );
                    out.event(EventRecord {
                        type_: "Warning",
                        ..node_ref("Rebooted", message)
                    });
                }
                map.insert("bootID".into(), Json::String(boot_id.clone()));
            }
        }
        if new.status.node_info.as_ref() != Some(&info) {
            new.status.node_info = Some(info);
            changed = true;
        }
        for (type_, status, reason, message, event) in desired {
            let old = find_condition(&node.status.conditions, type_);
            let flips = old.is_none_or(|o| o.status != status);
            let same_words = old.is_some_and(|o| {
                o.status == status
                    && o.reason.as_deref() == Some(reason)
                    && o.message.as_deref() == Some(message)
            });
            changed |= !same_words;
            let cond = Condition {
                type_: type_.into(),
                status: status.into(),
                reason: Some(reason.into()),
                message: Some(message.into()),
                last_heartbeat_time: Some(ts(now)),
                last_transition_time: if flips {
                    Some(ts(now))
                } else {
                    old.and_then(|o| o.last_transition_time).or(Some(ts(now)))
                },
                ..Default::default()
            };
            match new.status.conditions.iter_mut().find(|c| c.type_ == type_) {
                Some(c) => *c = cond,
                None => new.status.conditions.push(cond),
            }
            if type_ == "Ready" {
                if flips && !self.ready_announced {
                    ready_event = Some(node_ref(event, status_is_now(event)));
                    self.ready_announced = true;
                } else if !flips {
                    self.ready_announced = false;
                }
            } else if first_pass || flips {
                out.event(node_ref(event, status_is_now(event)));
            }
        }
        if first_pass {
            out.event(node_ref(
                "NodeAllocatableEnforced",
                "Updated Node Allocatable limit across pods".into(),
            ));
        }
        if let Some(e) = ready_event {
            out.event(e);
        }
        if let Some(last) = self.last_unschedulable {
            if last != node.spec.unschedulable {
                let what = if node.spec.unschedulable {
                    "NodeNotSchedulable"
                } else {
                    "NodeSchedulable"
                };
                out.event(node_ref(what, status_is_now(what)));
            }
        }
        self.last_unschedulable = Some(node.spec.unschedulable);
        let mut capacity = node.status.capacity.clone();
        let mut allocatable = node.status.allocatable.clone();
        if capacity.is_empty() {
            capacity = allocatable.clone();
        }
        if allocatable.is_empty() {
            allocatable = capacity.clone();
        }
        for list in [&mut capacity, &mut allocatable] {
            if !list.contains_key("pods") {
                list.insert("pods".into(), "110".into());
            }
        }
        changed |= capacity != node.status.capacity || allocatable != node.status.allocatable;
        new.status.capacity = capacity;
        new.status.allocatable = allocatable;
        if new.status.addresses.is_none() {
            new.status.addresses = Some(Box::new(json!([
                {"type": "InternalIP", "address": self.host_ip(Some(node))},
                {"type": "Hostname", "address": node.metadata.name},
            ])));
            changed = true;
        }
        let due = self
            .node_posted_at
            .is_none_or(|t| now >= t + STATUS_REPORT_PERIOD);
        let ready = node.ready_status().to_string();
        let heartbeat =
            find_condition(&node.status.conditions, "Ready").and_then(|c| c.last_heartbeat_time);
        let observed = match heartbeat {
            Some(t) => format!(
                "Ready={ready}, last heartbeat {} ago",
                format_duration(now.saturating_sub(t.0) / 1000 * 1000)
            ),
            None => format!("Ready={ready}, never posted"),
        };
        let diff = if changed {
            "conditions changed: post status".to_string()
        } else if due {
            "report period elapsed: post status".to_string()
        } else {
            String::new()
        };
        if changed || due {
            self.node_post_sent_at = now;
            out.request(ApiRequest::UpdateStatus(Object::Node(new)));
        }
        // updateDefaultLabels, at registration: a Node someone else created (a manifest) gets
        // the labels this kubelet would have given it. After the status post, which carries the
        // resourceVersion this patch would move on.
        if first_pass {
            let missing: serde_json::Map<String, serde_json::Value> =
                default_node_labels(&self.node)
                    .into_iter()
                    .filter(|(k, v)| node.metadata.labels.get(k) != Some(v))
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect();
            if !missing.is_empty() {
                out.request(ApiRequest::Patch {
                    key: obj.key(),
                    patch: json!({"metadata": {"labels": missing}}),
                    status: false,
                });
            }
        }
        out.record = Some(ReconcileRecord {
            observed,
            desired: "Ready=True (KubeletReady), no pressure; posted on change or every 5m".into(),
            diff,
        });
        out
    }

    /// Renews (or first creates) the node Lease: the cheap heartbeat the node controller watches.
    fn sync_lease(&mut self, now: Millis, cache: &Cache) -> Outcome {
        let mut out = Outcome::default();
        let node_uid = cache
            .get(&self.node_key())
            .map(|o| o.meta().uid.clone())
            .unwrap_or_default();
        let fresh = || Lease {
            metadata: ObjectMeta {
                name: self.node.clone(),
                namespace: LEASE_NAMESPACE.into(),
                owner_references: if node_uid.is_empty() {
                    Vec::new()
                } else {
                    vec![OwnerReference {
                        api_version: "v1".into(),
                        kind: "Node".into(),
                        name: self.node.clone(),
                        uid: node_uid.clone(),
                        controller: None,
                        block_owner_deletion: None,
                    }]
                },
                ..Default::default()
            },
            spec: LeaseSpec {
                holder_identity: Some(self.node.clone()),
                lease_duration_seconds: Some(LEASE_DURATION_SECONDS),
                renew_time: Some(ts(now)),
            },
        };
        let (observed, req) = match &self.lease {
            Some(l) => {
                let mut l = l.clone();
                let last = l.spec.renew_time.map_or(0, |t| t.0);
                l.spec.renew_time = Some(ts(now));
                (
                    format!(
                        "lease renewed {} ago",
                        format_duration(now.saturating_sub(last))
                    ),
                    ApiRequest::Update(Object::Lease(l)),
                )
            }
            None if self.lease_exists => (
                "lease exists; its resourceVersion is unknown".to_string(),
                ApiRequest::Update(Object::Lease(fresh())),
            ),
            None => (
                "no lease yet".to_string(),
                ApiRequest::Create(Object::Lease(fresh())),
            ),
        };
        let verb = if matches!(req, ApiRequest::Create(_)) {
            "create"
        } else {
            "renew"
        };
        out.request(req);
        out.record = Some(ReconcileRecord {
            observed,
            desired: format!(
                "renewTime refreshed every {}s (leaseDurationSeconds {LEASE_DURATION_SECONDS})",
                HEARTBEAT_PERIOD / 1000
            ),
            diff: format!("{verb} the lease"),
        });
        out
    }
}

impl Controller for Kubelet {
    fn id(&self) -> ComponentId {
        ComponentId::Kubelet(self.node.clone())
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Node, Kind::Pod]
    }

    fn has_field_selector(&self) -> bool {
        true
    }

    fn accepts(&self, obj: &Object) -> bool {
        match obj {
            Object::Pod(p) => p.spec.node_name == self.node,
            Object::Node(n) => n.metadata.name == self.node,
            _ => false,
        }
    }

    fn node_selector(&self) -> Option<&str> {
        Some(&self.node)
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Object>>,
        _cache: &Cache,
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
                let was = old.and_then(|o| o.as_node()).map(|o| o.spec.unschedulable);
                if was.is_some_and(|u| u != n.spec.unschedulable) {
                    vec![self.node_key()]
                } else {
                    Vec::new()
                }
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
            message,
        }),
        ..Default::default()
    }
}

fn terminated_state(t: &Termination) -> ContainerState {
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: t.exit_code,
            reason: Some(t.reason.clone()),
            message: t.message.clone(),
            started_at: t.started_at.map(ts),
            finished_at: t.finished_at.map(ts),
        }),
        ..Default::default()
    }
}

fn delete_request(pod: &Pod) -> ApiRequest {
    ApiRequest::Delete {
        key: ObjectKey::new(Kind::Pod, &pod.metadata.namespace, &pod.metadata.name),
        options: DeleteOptions {
            grace_period_seconds: Some(0),
            precondition_uid: Some(pod.metadata.uid.clone()),
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
        reason: t.reason.clone().unwrap_or_default(),
        message: t.message.clone(),
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

/// `getPhase`, including init containers and sidecars.
fn get_phase(
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
fn terminate_statuses(
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
fn initialized(
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
        let message = format!(
            "containers with incomplete status: [{}]",
            incomplete.join(" ")
        );
        (
            false,
            Some("ContainersNotInitialized".into()),
            Some(message),
        )
    }
}

/// `GenerateContainersReadyCondition`: (ready, reason, message); sidecars count, listed first.
fn containers_ready(
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
        let message = format!("containers with unready status: [{}]", unready.join(" "));
        (false, Some("ContainersNotReady".into()), Some(message))
    }
}

/// Pod readiness gates: every named condition must be True.
fn readiness_gates(pod: &Pod, conditions: &[Condition]) -> (bool, Option<String>, Option<String>) {
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

/// What a failing probe reports, per mechanism.
fn probe_failure_output(probe: &Probe, kind: ProbeKind, pod_ip: &str) -> String {
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

/// A quantity in thousandths (`500m` → 500, `1` → 1000, `1Ki` → 1024000), for QoS comparisons.
fn parse_quantity_milli(s: &str) -> Option<f64> {
    // Exact, like the API's own parsing, then in float for the QoS and admission sums.
    parse_quantity(s).ok().map(|q| q.nanos() as f64 / 1e6)
}

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

/// `GetPodQOS`: Guaranteed, Burstable or BestEffort from cpu/memory requests and limits.
fn qos_class(pod: &Pod) -> &'static str {
    let mut requests: BTreeMap<&str, f64> = BTreeMap::new();
    let mut limits: BTreeMap<&str, f64> = BTreeMap::new();
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
fn summarize<'a>(statuses: impl Iterator<Item = &'a ContainerStatus>) -> String {
    let lines: Vec<String> = statuses
        .map(|s| {
            let state = if s.state.running.is_some() {
                if s.ready {
                    "running, ready".to_string()
                } else {
                    "running, not ready".to_string()
                }
            } else if let Some(t) = &s.state.terminated {
                format!(
                    "terminated ({}, exit {})",
                    t.reason.as_deref().unwrap_or(""),
                    t.exit_code
                )
            } else {
                let reason = s
                    .state
                    .waiting
                    .as_ref()
                    .and_then(|w| w.reason.as_deref())
                    .unwrap_or("");
                format!("waiting ({reason})")
            };
            let restarts = if s.restart_count > 0 {
                format!(", {} restarts", s.restart_count)
            } else {
                String::new()
            };
            format!("container {}: {state}{restarts}", s.name)
        })
        .collect();
    if lines.is_empty() {
        "no container statuses".into()
    } else {
        lines.join("; ")
    }
}

#[cfg(test)]
mod tests;
