//! The default profile's Filter and Score plugins, and the resource arithmetic they share.
//!
//! Each function mirrors one kube-scheduler plugin of `pkg/scheduler/framework/plugins`, with the
//! plugin names and reason strings verbatim. Plugins read a [`NodeInfo`]: the node plus running
//! totals of the pods charged to it (bound pods, terminating pods until they are gone, and pods
//! the scheduler has assumed but not yet seen bound).

use std::collections::BTreeSet;
use std::rc::Rc;

use serde::Serialize;

use crate::sim::api::quantity::parse_quantity;
use crate::sim::api::types::{
    find_condition, Container, Millis, Node, NodeSelectorRequirement, NodeSelectorTerm, Object,
    ObjectKey, Pod, Str, StringMap, Taint, Toleration,
};
use crate::sort::StableSort;
use crate::vec_map::VecMap;

/// `framework.MaxNodeScore`: every plugin's normalized score lies in 0..=100.
pub const MAX_NODE_SCORE: i64 = 100;
/// `schedutil.DefaultMilliCPURequest`: what a container without a CPU request counts as when scoring.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// `schedutil.DefaultMemoryRequest` (200 MiB): the same for memory.
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;
/// The kubelet's default `maxPods`; used when a Node reports no `allocatable.pods` (the simulated
/// kubelet always reports it; hand-written Node objects may not).
pub const DEFAULT_ALLOWED_PODS: i64 = 110;

/// The taint a cordoned node carries (and that NodeUnschedulable checks tolerations against).
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// Plugin names, as the scheduler's metrics and logs spell them.
pub const NODE_UNSCHEDULABLE: &str = "NodeUnschedulable";
pub const NODE_NAME: &str = "NodeName";
pub const TAINT_TOLERATION: &str = "TaintToleration";
pub const NODE_AFFINITY: &str = "NodeAffinity";
pub const NODE_PORTS: &str = "NodePorts";
pub const NODE_RESOURCES_FIT: &str = "NodeResourcesFit";
pub const BALANCED_ALLOCATION: &str = "NodeResourcesBalancedAllocation";
pub const POD_TOPOLOGY_SPREAD: &str = "PodTopologySpread";
pub const VOLUME_BINDING: &str = "VolumeBinding";
pub const VOLUME_ZONE: &str = "VolumeZone";

/// Filter reason strings (`ErrReason…` constants of each plugin).
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
pub const ERR_REASON_NODE_NAME: &str = "node(s) didn't match the requested node name";
pub const ERR_REASON_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
pub const ERR_REASON_PORTS: &str = "node(s) didn't have free ports for the requested pod ports";
pub const ERR_REASON_TOO_MANY_PODS: &str = "Too many pods";
/// VolumeBinding's `ErrReasonNodeConflict` as v1.33 renamed it (it said `node(s) had volume node
/// affinity conflict` before).
pub const ERR_REASON_VOLUME_NODE_CONFLICT: &str =
    "node(s) didn't match PersistentVolume's node affinity";

/// VolumeZone's `ErrReasonConflict`.
pub const ERR_REASON_VOLUME_ZONE: &str = "node(s) had no available volume zone";

/// Score weights of the default profile (`default_plugins.go`).
pub const WEIGHT_TAINT_TOLERATION: i64 = 3;
pub const WEIGHT_NODE_AFFINITY: i64 = 2;
pub const WEIGHT_NODE_RESOURCES_FIT: i64 = 1;
pub const WEIGHT_BALANCED_ALLOCATION: i64 = 1;
pub const WEIGHT_POD_TOPOLOGY_SPREAD: i64 = 2;

/// PodTopologySpread's system default constraints (`defaultConstraints`, both ScheduleAnyway):
/// (topology key, maxSkew). They spread the pods of one controller over nodes and zones.
pub const DEFAULT_SPREAD_CONSTRAINTS: [(&str, i64); 2] = [
    ("kubernetes.io/hostname", 3),
    ("topology.kubernetes.io/zone", 5),
];

// ------------------------------------------------------------------ quantities and resources

/// CPU in millicores, rounded up as `Quantity.MilliValue()`; unparseable text counts as 0
/// (validation rejects it before it can reach a pod or node).
fn milli_value(s: &str) -> i64 {
    parse_quantity(s).map(|q| q.to_millis()).unwrap_or(0)
}

/// Whole units (bytes, pods, devices), rounded up as `Quantity.Value()`.
fn value(s: &str) -> i64 {
    parse_quantity(s).map(|q| q.value()).unwrap_or(0)
}

/// `framework.Resource`: the amounts the scheduler compares. Anything other than cpu, memory,
/// ephemeral-storage and pods is a scalar (extended) resource such as `nvidia.com/gpu`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Resources {
    pub milli_cpu: i64,
    pub memory: i64,
    pub ephemeral_storage: i64,
    pub scalars: VecMap<String, i64>,
}

impl Resources {
    /// Parses a ResourceList (requests, allocatable or overhead); `pods` is returned apart.
    pub fn from_list(list: &StringMap) -> (Resources, Option<i64>) {
        let mut r = Resources::default();
        let mut pods = None;
        for (name, q) in list {
            match name.as_str() {
                "cpu" => r.milli_cpu = milli_value(q),
                "memory" => r.memory = value(q),
                "ephemeral-storage" => r.ephemeral_storage = value(q),
                "pods" => pods = Some(value(q)),
                other => {
                    r.scalars.insert(other.to_string(), value(q));
                }
            }
        }
        (r, pods)
    }

    /// Adds `o` (`addResourceList`).
    pub fn add(&mut self, o: &Resources) {
        self.milli_cpu += o.milli_cpu;
        self.memory += o.memory;
        self.ephemeral_storage += o.ephemeral_storage;
        for (k, v) in &o.scalars {
            *self.scalars.entry(k.clone()).or_insert(0) += v;
        }
    }

    /// Subtracts `o`, dropping scalars that reach zero so totals stay comparable.
    pub fn sub(&mut self, o: &Resources) {
        self.milli_cpu -= o.milli_cpu;
        self.memory -= o.memory;
        self.ephemeral_storage -= o.ephemeral_storage;
        for (k, v) in &o.scalars {
            let e = self.scalars.entry(k.clone()).or_insert(0);
            *e -= v;
            if *e == 0 {
                self.scalars.remove(k);
            }
        }
    }

    /// Keeps the larger of each amount (`maxResourceList`): init containers run one at a time.
    pub fn max_with(&mut self, o: &Resources) {
        self.milli_cpu = self.milli_cpu.max(o.milli_cpu);
        self.memory = self.memory.max(o.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(o.ephemeral_storage);
        for (k, v) in &o.scalars {
            let e = self.scalars.entry(k.clone()).or_insert(*v);
            *e = (*e).max(*v);
        }
    }

    /// True when nothing is requested (a BestEffort pod's requests).
    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0
            && self.memory == 0
            && self.ephemeral_storage == 0
            && self.scalars.values().all(|v| *v == 0)
    }
}

/// A pod's requests as the scheduler charges them: exact requests (for Filter and
/// BalancedAllocation) and the non-zero CPU/memory that LeastAllocated scores with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PodResources {
    pub requests: Resources,
    pub non0_cpu: i64,
    pub non0_mem: i64,
}

fn container_requests(c: &Container, non_missing: bool) -> Resources {
    let empty = StringMap::new();
    let list = c.resources.as_ref().map_or(&empty, |r| &r.requests);
    let (mut r, _) = Resources::from_list(list);
    // `applyNonMissing`: only a request that is absent gets the default, not an explicit zero.
    if non_missing {
        if !list.contains_key("cpu") {
            r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST;
        }
        if !list.contains_key("memory") {
            r.memory = DEFAULT_MEMORY_REQUEST;
        }
    }
    r
}

/// `resourcehelper.AggregateContainerRequests`: Σ containers, with init containers taking the
/// max, and sidecars (restartable init containers) both adding to the sum and stacking under
/// every later init container, as KEP-753 specifies.
fn aggregate_requests(pod: &Pod, non_missing: bool) -> Resources {
    let mut reqs = Resources::default();
    for c in &pod.spec.containers {
        reqs.add(&container_requests(c, non_missing));
    }
    let mut sidecars = Resources::default();
    let mut init_max = Resources::default();
    for c in &pod.spec.init_containers {
        let r = container_requests(c, non_missing);
        let during = if c.restart_policy.as_deref() == Some("Always") {
            reqs.add(&r);
            sidecars.add(&r);
            sidecars.clone()
        } else {
            let mut t = r;
            t.add(&sidecars);
            t
        };
        init_max.max_with(&during);
    }
    reqs.max_with(&init_max);
    if let Some(serde_json::Value::Object(m)) = pod.spec.overhead.as_deref() {
        let list: StringMap = m
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect();
        reqs.add(&Resources::from_list(&list).0);
    }
    reqs
}

/// What a pod asks of a node (`PodInfo.CalculateResource`).
pub fn pod_resources(pod: &Pod) -> PodResources {
    let requests = aggregate_requests(pod, false);
    let non0 = aggregate_requests(pod, true);
    PodResources {
        requests,
        non0_cpu: non0.milli_cpu,
        non0_mem: non0.memory,
    }
}

/// A pod's priority (`corev1helpers.PodPriority`): the admission-resolved value, 0 when unset.
pub fn pod_priority(pod: &Pod) -> i64 {
    pod.spec.priority.unwrap_or(0)
}

// ------------------------------------------------------------------ host ports

/// One used host port: `hostIP` (0.0.0.0 when empty), protocol (TCP when empty) and port.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct HostPort {
    pub ip: String,
    pub protocol: String,
    pub port: i64,
}

const BIND_ALL_HOST_IP: &str = "0.0.0.0";

/// `schedutil.GetHostPorts`: the ports with `hostPort > 0` of the pod's containers.
pub fn host_ports(pod: &Pod) -> Vec<HostPort> {
    pod.spec
        .containers
        .iter()
        .flat_map(|c| &c.ports)
        .filter_map(|p| {
            let port = p.host_port.filter(|hp| *hp > 0)?;
            let ip = p
                .host_ip
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| BIND_ALL_HOST_IP.into());
            let protocol = p
                .protocol
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "TCP".into());
            Some(HostPort { ip, protocol, port })
        })
        .collect()
}

// ------------------------------------------------------------------ node info

/// What one pod charges to its node. Kept so that removing the pod subtracts exactly what
/// adding it added, whatever the pod looks like by then.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PodEntry {
    pub node: Str,
    pub resources: PodResources,
    pub ports: Vec<HostPort>,
    pub priority: i64,
    /// Has a deletionTimestamp: still charged (its containers may still run) but a preemption
    /// candidate no more.
    pub terminating: bool,
    /// Terminating because the scheduler preempted it (a `DisruptionTarget` condition with
    /// reason `PreemptionByScheduler`): its preemptor waits for it rather than preempting again.
    pub terminating_by_preemption: bool,
    /// `status.startTime` (or creation) in ms: preemption prefers evicting the youngest.
    pub start: Millis,
    pub uid: Str,
    /// Charged by Reserve ("assume") before the binding was observed.
    pub assumed: bool,
    /// The uid of its controller (a ReplicaSet), whose pods PodTopologySpread spreads.
    pub owner: Option<Str>,
}

impl PodEntry {
    /// The charge of `pod` on `node`.
    pub fn for_pod(pod: &Pod, node: &Str, assumed: bool) -> PodEntry {
        let charge = (pod_resources(pod), host_ports(pod), pod_priority(pod));
        PodEntry::charging(pod, node.clone(), charge, assumed)
    }

    /// The charge of the pod `p` was made for, on `node`: what the cycle read of it, not read
    /// again.
    pub fn for_ctx(p: &PodCtx, node: &Str, assumed: bool) -> PodEntry {
        let charge = (p.resources.clone(), p.ports.clone(), p.priority);
        debug_assert!(charge == (pod_resources(p.pod), host_ports(p.pod), pod_priority(p.pod)));
        PodEntry::charging(p.pod, node.clone(), charge, assumed)
    }

    /// The charge of `pod`, whose spec equals the one `placed` was made from: its node, what it
    /// asks of it and whether it was assumed are `placed`'s, the rest is read from `pod`.
    pub fn for_pod_charged_as(pod: &Pod, placed: &PodEntry) -> PodEntry {
        let charge = (
            placed.resources.clone(),
            placed.ports.clone(),
            placed.priority,
        );
        debug_assert!(
            charge == (pod_resources(pod), host_ports(pod), pod_priority(pod)),
            "{:?} was charged as if its spec were another's",
            pod.metadata.name
        );
        PodEntry::charging(pod, placed.node.clone(), charge, placed.assumed)
    }

    fn charging(
        pod: &Pod,
        node: Str,
        (resources, ports, priority): (PodResources, Vec<HostPort>, i64),
        assumed: bool,
    ) -> PodEntry {
        PodEntry {
            node,
            resources,
            ports,
            priority,
            terminating: pod.metadata.deletion_timestamp.is_some(),
            terminating_by_preemption: terminating_by_preemption(pod),
            start: pod
                .status
                .start_time
                .or(pod.metadata.creation_timestamp)
                .map_or(0, |t| t.0),
            uid: pod.metadata.uid.clone(),
            assumed,
            owner: spread_owner(pod),
        }
    }

    /// Whether `old` and `new`, two versions of a pod with equal specs, read alike to
    /// [`PodEntry::charging`]: a status write that only moves the pod along its way to Ready
    /// leaves its entry, and its node's generation (which the cycle memo checks), as they are.
    pub fn charges_alike(old: &Pod, new: &Pod) -> bool {
        old.metadata.deletion_timestamp == new.metadata.deletion_timestamp
            // Released or adopted: PodTopologySpread counts it for another owner.
            && old.metadata.owner_references == new.metadata.owner_references
            && old.status.start_time == new.status.start_time
            && terminating_by_preemption(old) == terminating_by_preemption(new)
    }
}

/// Terminating because the scheduler preempted it: a `DisruptionTarget` condition with reason
/// `PreemptionByScheduler` on a pod with a deletionTimestamp.
fn terminating_by_preemption(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
        && find_condition(&pod.status.conditions, "DisruptionTarget")
            .is_some_and(|c| c.reason.as_deref() == Some("PreemptionByScheduler"))
}

/// `framework.NodeInfo`: a node and the running totals of the pods charged to it.
#[derive(Clone, Debug, Default)]
pub struct NodeInfo {
    /// The Node object; None while pods name a node the cache does not (yet) have.
    pub node: Option<Rc<Object>>,
    pub allocatable: Resources,
    pub allowed_pods: i64,
    pub requested: Resources,
    pub non0_cpu: i64,
    pub non0_mem: i64,
    pub pods: BTreeSet<ObjectKey>,
    pub used_ports: VecMap<HostPort, u32>,
    /// Pods here that are not terminating, by controller uid: what PodTopologySpread counts, on
    /// each of hundreds of nodes per cycle. A node runs the pods of a few controllers, and a
    /// controller's pods share its uid's allocation, so a short vector found by pointer first
    /// answers where a B-tree compared 36-byte uids.
    pub by_owner: VecMap<Str, u32>,
    /// The node has the hostname label (PodTopologySpread's first default domain).
    pub has_hostname: bool,
    /// Its `topology.kubernetes.io/zone` label, if any (the second).
    pub zone: Option<Str>,
    /// Set anew by the scheduler's cache at every change of the node or its pods, from one count
    /// for all nodes (so no two states of any node share a number): what the cycle memo
    /// (`memo.rs`) checks its verdicts against.
    pub generation: u64,
}

impl NodeInfo {
    /// The Node, when known.
    pub fn node(&self) -> Option<&Node> {
        self.node.as_deref().and_then(Object::as_node)
    }

    /// Replaces the Node object and re-reads `status.allocatable` (`SetNode`).
    pub fn set_node(&mut self, obj: Rc<Object>) {
        if let Some(n) = obj.as_node() {
            let (alloc, pods) = Resources::from_list(&n.status.allocatable);
            self.allocatable = alloc;
            self.allowed_pods = pods.unwrap_or(DEFAULT_ALLOWED_PODS);
            let [(host_key, _), (zone_key, _)] = DEFAULT_SPREAD_CONSTRAINTS;
            self.has_hostname = n.metadata.labels.contains_key(host_key);
            self.zone = n.metadata.labels.get(zone_key).cloned();
        }
        self.node = Some(obj);
    }

    /// Charges a pod (`AddPod`).
    pub fn add_pod(&mut self, key: &ObjectKey, e: &PodEntry) {
        if self.pods.insert(key.clone()) {
            self.charge(e);
        }
    }

    /// Releases a pod (`RemovePod`).
    pub fn remove_pod(&mut self, key: &ObjectKey, e: &PodEntry) {
        if self.pods.remove(key) {
            self.release(e);
        }
    }

    /// A pod already here seen again (`UpdatePod` on the same node): its old entry released and
    /// the new one charged, the node's set of pods left as it is.
    pub fn update_pod(&mut self, old: &PodEntry, new: &PodEntry) {
        self.release(old);
        self.charge(new);
    }

    fn charge(&mut self, e: &PodEntry) {
        self.requested.add(&e.resources.requests);
        self.non0_cpu += e.resources.non0_cpu;
        self.non0_mem += e.resources.non0_mem;
        for p in &e.ports {
            *self.used_ports.entry(p.clone()).or_insert(0) += 1;
        }
        if let (Some(owner), false) = (&e.owner, e.terminating) {
            match self.by_owner.get_mut(owner) {
                Some(n) => *n += 1,
                None => {
                    self.by_owner.insert(owner.clone(), 1);
                }
            }
        }
    }

    fn release(&mut self, e: &PodEntry) {
        self.requested.sub(&e.resources.requests);
        self.non0_cpu -= e.resources.non0_cpu;
        self.non0_mem -= e.resources.non0_mem;
        for p in &e.ports {
            if let Some(n) = self.used_ports.get_mut(p) {
                *n -= 1;
                if *n == 0 {
                    self.used_ports.remove(p);
                }
            }
        }
        if let (Some(owner), false) = (&e.owner, e.terminating) {
            if let Some(n) = self.by_owner.get_mut(owner) {
                *n -= 1;
                if *n == 0 {
                    self.by_owner.remove(owner);
                }
            }
        }
    }

    /// How many pods of `owner` run here, terminating ones aside (`countPodsMatchSelector`).
    pub fn owned_by(&self, owner: &Str) -> i64 {
        i64::from(self.by_owner.get(owner).copied().unwrap_or(0))
    }

    /// `HostPortInfo.CheckConflict` for each wanted port: 0.0.0.0 collides with every IP.
    pub fn ports_conflict(&self, wanted: &[HostPort]) -> bool {
        wanted.iter().any(|w| {
            self.used_ports.keys().any(|u| {
                u.protocol == w.protocol
                    && u.port == w.port
                    && (w.ip == BIND_ALL_HOST_IP || u.ip == BIND_ALL_HOST_IP || u.ip == w.ip)
            })
        })
    }
}

/// The controller whose pods the system default spreading counts for `pod`, if it applies: a
/// pod with constraints of its own is not default-spread (and those are not simulated), and a
/// pod without a controller has no default selector. Kubernetes builds that selector from the
/// Services, ReplicaSets and StatefulSets selecting the pod; counting the pods of the same
/// controller is what it comes to for a Deployment's pods (the `pod-template-hash` label makes
/// the ReplicaSet's selector match its pods only).
pub fn spread_owner(pod: &Pod) -> Option<Str> {
    if pod.spec.topology_spread_constraints.is_some() {
        return None;
    }
    pod.metadata.controller_ref().map(|r| r.uid.clone())
}

/// PodTopologySpread (PreScore) with the system default constraints for the pods of one owner:
/// what a cycle computes once, each constraint's weight (from how many domains the feasible
/// nodes span) and the owner's pods per zone among them; [`SpreadCycle::raw`] is Score, per
/// constraint whose key the node has `count × ln(domains + 2) + (maxSkew − 1)`, with `count` the
/// owner's pods (not terminating) in the node's domain. Fewer siblings, lower score.
pub struct SpreadCycle<'a> {
    host_weight: f64,
    zone_weight: f64,
    zone_counts: VecMap<&'a str, i64>,
}

impl<'a> SpreadCycle<'a> {
    /// PreScore for the feasible nodes' `zones` (one per node, None for a node without the
    /// label), counting the owner's pods on every node of `all`.
    pub fn new(
        owner: &Str,
        zones: impl ExactSizeIterator<Item = Option<&'a str>>,
        all: impl Iterator<Item = &'a NodeInfo>,
    ) -> SpreadCycle<'a> {
        let host_weight = ((zones.len() + 2) as f64).ln();
        // A node without the zone label is the domain "" here, as Go reads a missing map key.
        let mut zone_counts: VecMap<&str, i64> = VecMap::new();
        let mut unzoned = false;
        for zone in zones {
            match zone {
                Some(z) => {
                    zone_counts.insert(z, 0);
                }
                None => unzoned = true,
            }
        }
        let zone_weight = ((zone_counts.len() + usize::from(unzoned) + 2) as f64).ln();
        if !zone_counts.is_empty() {
            // Counted on every node that has both keys, feasible or not.
            for ni in all.filter(|ni| ni.has_hostname) {
                if let Some(n) = ni.zone.as_deref().and_then(|z| zone_counts.get_mut(z)) {
                    *n += ni.owned_by(owner);
                }
            }
        }
        SpreadCycle {
            host_weight,
            zone_weight,
            zone_counts,
        }
    }

    /// The raw score of a feasible node with (or without) the hostname label, `owned` of the
    /// owner's pods, in `zone`.
    pub fn raw(&self, has_hostname: bool, owned: i64, zone: Option<&str>) -> i64 {
        let [(_, host_skew), (_, zone_skew)] = DEFAULT_SPREAD_CONSTRAINTS;
        let mut score = 0.0;
        if has_hostname {
            score += owned as f64 * self.host_weight + (host_skew - 1) as f64;
        }
        if let Some(zone) = zone {
            let count = self.zone_counts.get(zone).copied().unwrap_or(0);
            score += count as f64 * self.zone_weight + (zone_skew - 1) as f64;
        }
        score.round() as i64
    }
}

/// One Score plugin's NormalizeScore, with what it read from the whole column (its minimum and
/// maximum): a cycle applies it to each node's raw score as it sums them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normalizer {
    /// The plugin does not normalise (its scores are already 0..=100).
    Identity,
    /// `helper.DefaultNormalizeScore`: scales to 0..=100 by the maximum; `reverse` flips it
    /// (TaintToleration).
    Default { max: i64, reverse: bool },
    /// PodTopologySpread's: the fewest siblings get the most, `100 × (max + min − s) / max`;
    /// all 100 when every raw score is 0.
    Spread { min: i64, max: i64 },
}

impl Normalizer {
    /// `helper.DefaultNormalizeScore` over the column `raws`.
    pub fn default_over(raws: impl Iterator<Item = i64>, reverse: bool) -> Normalizer {
        Normalizer::Default {
            max: raws.max().unwrap_or(0),
            reverse,
        }
    }

    /// PodTopologySpread's over the column `raws`.
    pub fn spread_over(raws: impl Iterator<Item = i64>) -> Normalizer {
        let bounds = raws.fold(None, |bounds: Option<(i64, i64)>, s| {
            Some(bounds.map_or((s, s), |(min, max)| (min.min(s), max.max(s))))
        });
        let (min, max) = bounds.unwrap_or((0, 0));
        Normalizer::Spread { min, max }
    }

    /// The normalised score of a node whose raw score was `raw`.
    pub fn apply(self, raw: i64) -> i64 {
        match self {
            Normalizer::Identity => raw,
            Normalizer::Default { max: 0, reverse } => {
                if reverse {
                    MAX_NODE_SCORE
                } else {
                    raw
                }
            }
            Normalizer::Default { max, reverse } => {
                let v = MAX_NODE_SCORE * raw / max;
                if reverse {
                    MAX_NODE_SCORE - v
                } else {
                    v
                }
            }
            Normalizer::Spread { max: 0, .. } => MAX_NODE_SCORE,
            Normalizer::Spread { min, max } => MAX_NODE_SCORE * (max + min - raw) / max,
        }
    }
}

// ------------------------------------------------------------------ the pod being scheduled

/// The pod of one scheduling cycle with what PreFilter/PreScore compute once per cycle.
#[derive(Clone, Debug)]
pub struct PodCtx<'a> {
    pub pod: &'a Pod,
    pub key: ObjectKey,
    pub resources: PodResources,
    pub ports: Vec<HostPort>,
    pub priority: i64,
    /// The required node affinity of each bound volume the pod mounts (VolumeBinding's
    /// PreFilter reads them once per cycle); a node must match a term of every one.
    pub volume_terms: Vec<Vec<NodeSelectorTerm>>,
    /// The zone and region labels of each bound volume the pod mounts (VolumeZone's PreFilter):
    /// the label key and the values (`a__b` lists several) a node's label must be one of.
    pub volume_zones: Vec<(String, Vec<String>)>,
    /// The controller whose pods default spreading counts for it ([`spread_owner`]).
    pub spread_owner: Option<Str>,
}

impl<'a> PodCtx<'a> {
    /// Pre-computes what every node's check needs.
    pub fn new(pod: &'a Pod) -> PodCtx<'a> {
        PodCtx {
            pod,
            key: ObjectKey::of(crate::sim::api::types::Kind::Pod, &pod.metadata),
            resources: pod_resources(pod),
            ports: host_ports(pod),
            priority: pod_priority(pod),
            volume_terms: Vec::new(),
            volume_zones: Vec::new(),
            spread_owner: spread_owner(pod),
        }
    }
}

/// VolumeBinding (Filter), for bound claims: the node must be one each volume is reachable
/// from. Unbound claims are provisioned where the pod goes, so they pass.
pub fn volume_binding(p: &PodCtx, node: &Node) -> Option<Rejection> {
    let conflict = p
        .volume_terms
        .iter()
        .any(|terms| !terms.iter().any(|t| term_matches(t, node)));
    if conflict {
        return reject(VOLUME_BINDING, ERR_REASON_VOLUME_NODE_CONFLICT, true);
    }
    None
}

/// VolumeZone (Filter): a node must be in the zone (and region) each bound volume's labels
/// name. A node without the label is refused too, as upstream's is.
pub fn volume_zone(p: &PodCtx, node: &Node) -> Option<Rejection> {
    let conflict = p.volume_zones.iter().any(|(key, values)| {
        node.metadata
            .labels
            .get(key)
            .is_none_or(|v| !values.iter().any(|x| x == v))
    });
    if conflict {
        return reject(VOLUME_ZONE, ERR_REASON_VOLUME_ZONE, true);
    }
    None
}

// ------------------------------------------------------------------ filters

/// A node's Filter status: which plugin rejected it and with which reasons. `unresolvable`
/// (UnschedulableAndUnresolvable) means evicting pods cannot help, so preemption skips the node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rejection {
    pub plugin: &'static str,
    pub reasons: Vec<String>,
    #[serde(skip)]
    pub unresolvable: bool,
}

fn reject(
    plugin: &'static str,
    reason: impl Into<String>,
    unresolvable: bool,
) -> Option<Rejection> {
    Some(Rejection {
        plugin,
        reasons: vec![reason.into()],
        unresolvable,
    })
}

/// Whether the tolerations tolerate the taint (`v1helper.TolerationsTolerateTaint`).
pub fn tolerated(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| t.tolerates(taint))
}

/// NodeUnschedulable: a cordoned node takes only pods that tolerate the unschedulable taint.
pub fn node_unschedulable(p: &PodCtx, node: &Node) -> Option<Rejection> {
    if !node.spec.unschedulable {
        return None;
    }
    let taint = Taint {
        key: TAINT_NODE_UNSCHEDULABLE.into(),
        value: None,
        effect: "NoSchedule".into(),
        time_added: None,
    };
    if tolerated(&p.pod.spec.tolerations, &taint) {
        return None;
    }
    reject(NODE_UNSCHEDULABLE, ERR_REASON_UNSCHEDULABLE, true)
}

/// NodeName: a pod that names its node fits only there.
pub fn node_name(p: &PodCtx, node: &Node) -> Option<Rejection> {
    let want = &p.pod.spec.node_name;
    if want.is_empty() || *want == node.metadata.name {
        return None;
    }
    reject(NODE_NAME, ERR_REASON_NODE_NAME, true)
}

/// The first NoSchedule/NoExecute taint (in the node's order) the pod does not tolerate.
pub fn first_untolerated_taint<'n>(
    tolerations: &[Toleration],
    node: &'n Node,
) -> Option<&'n Taint> {
    node.spec
        .taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| !tolerated(tolerations, t))
}

/// TaintToleration (Filter): PreferNoSchedule taints are left to scoring.
pub fn taint_toleration(p: &PodCtx, node: &Node) -> Option<Rejection> {
    let taint = first_untolerated_taint(&p.pod.spec.tolerations, node)?;
    let value = taint.value.as_deref().unwrap_or("");
    reject(
        TAINT_TOLERATION,
        format!("node(s) had untolerated taint {{{}: {value}}}", taint.key),
        true,
    )
}

fn requirement_matches(r: &NodeSelectorRequirement, got: Option<&str>) -> bool {
    match r.operator.as_str() {
        "In" => got.is_some_and(|v| r.values.iter().any(|x| x == v)),
        "NotIn" => got.is_none_or(|v| !r.values.iter().any(|x| x == v)),
        "Exists" => got.is_some(),
        "DoesNotExist" => got.is_none(),
        "Gt" | "Lt" => {
            // Both sides must be integers; anything else never matches (as `labels.Requirement`).
            let (Some(v), [bound]) = (got, r.values.as_slice()) else {
                return false;
            };
            let (Ok(v), Ok(bound)) = (v.parse::<i64>(), bound.parse::<i64>()) else {
                return false;
            };
            if r.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

/// Whether a NodeSelectorTerm selects the node; an empty term selects nothing.
pub fn term_matches(term: &NodeSelectorTerm, node: &Node) -> bool {
    if term.match_expressions.is_empty() && term.match_fields.is_empty() {
        return false;
    }
    term.match_expressions
        .iter()
        .all(|r| requirement_matches(r, node.metadata.labels.get(&r.key).map(|v| v.as_str())))
        && term.match_fields.iter().all(|r| {
            // Only `metadata.name` is a supported node field.
            r.key == "metadata.name" && requirement_matches(r, Some(node.metadata.name.as_str()))
        })
}

/// Whether `nodeSelector` and the required node affinity both select the node
/// (`GetRequiredNodeAffinity(pod).Match(node)`).
pub fn required_affinity_matches(pod: &Pod, node: &Node) -> bool {
    let selector_ok = pod
        .spec
        .node_selector
        .iter()
        .all(|(k, v)| node.metadata.labels.get(k) == Some(v));
    if !selector_ok {
        return false;
    }
    let required = pod
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    match required {
        None => true,
        Some(sel) => sel
            .node_selector_terms
            .iter()
            .any(|t| term_matches(t, node)),
    }
}

/// NodeAffinity (Filter).
pub fn node_affinity(p: &PodCtx, node: &Node) -> Option<Rejection> {
    if required_affinity_matches(p.pod, node) {
        None
    } else {
        reject(NODE_AFFINITY, ERR_REASON_AFFINITY, true)
    }
}

/// NodePorts: the pod's host ports must be free on the node.
pub fn node_ports(p: &PodCtx, ni: &NodeInfo) -> Option<Rejection> {
    if p.ports.is_empty() || !ni.ports_conflict(&p.ports) {
        None
    } else {
        reject(NODE_PORTS, ERR_REASON_PORTS, false)
    }
}

/// One resource a node lacks, as `noderesources.InsufficientResource`.
#[derive(Clone, Debug, PartialEq)]
pub struct Insufficient {
    pub reason: String,
    /// The pod alone asks for more than the node has: no eviction can help.
    pub unresolvable: bool,
}

/// `fitsRequest`: the pod count first, then each requested resource against what is left.
pub fn fits_request(req: &Resources, ni: &NodeInfo) -> Vec<Insufficient> {
    let mut out = Vec::new();
    if ni.pods.len() as i64 + 1 > ni.allowed_pods {
        out.push(Insufficient {
            reason: ERR_REASON_TOO_MANY_PODS.into(),
            unresolvable: false,
        });
    }
    if req.is_zero() {
        return out;
    }
    let mut check = |name: &str, want: i64, alloc: i64, used: i64| {
        if want > 0 && want > alloc - used {
            out.push(Insufficient {
                reason: format!("Insufficient {name}"),
                unresolvable: want > alloc,
            });
        }
    };
    check(
        "cpu",
        req.milli_cpu,
        ni.allocatable.milli_cpu,
        ni.requested.milli_cpu,
    );
    check(
        "memory",
        req.memory,
        ni.allocatable.memory,
        ni.requested.memory,
    );
    check(
        "ephemeral-storage",
        req.ephemeral_storage,
        ni.allocatable.ephemeral_storage,
        ni.requested.ephemeral_storage,
    );
    for (name, want) in &req.scalars {
        let alloc = ni.allocatable.scalars.get(name).copied().unwrap_or(0);
        let used = ni.requested.scalars.get(name).copied().unwrap_or(0);
        check(name, *want, alloc, used);
    }
    out
}

/// NodeResourcesFit (Filter): every reason is kept, so one node can add several to the message.
pub fn node_resources_fit(p: &PodCtx, ni: &NodeInfo) -> Option<Rejection> {
    let insufficient = fits_request(&p.resources.requests, ni);
    if insufficient.is_empty() {
        return None;
    }
    let unresolvable = insufficient.iter().any(|i| i.unresolvable);
    Some(Rejection {
        plugin: NODE_RESOURCES_FIT,
        reasons: insufficient.into_iter().map(|i| i.reason).collect(),
        unresolvable,
    })
}

/// Runs the Filter plugins in the default profile's order; the first rejection wins (as
/// `RunFilterPlugins`). A NodeInfo without a Node object is rejected as unschedulable.
pub fn run_filters(p: &PodCtx, ni: &NodeInfo) -> Option<Rejection> {
    let Some(node) = ni.node() else {
        return reject(NODE_UNSCHEDULABLE, ERR_REASON_UNSCHEDULABLE, true);
    };
    node_unschedulable(p, node)
        .or_else(|| node_name(p, node))
        .or_else(|| taint_toleration(p, node))
        .or_else(|| node_affinity(p, node))
        .or_else(|| node_ports(p, ni))
        .or_else(|| node_resources_fit(p, ni))
        .or_else(|| volume_binding(p, node))
        .or_else(|| volume_zone(p, node))
}

// ------------------------------------------------------------------ scores

/// TaintToleration (Score, raw): untolerated PreferNoSchedule taints, counted against the
/// tolerations whose effect is PreferNoSchedule or empty. Fewer is better (normalized reversed).
pub fn taint_toleration_raw(pod: &Pod, node: &Node) -> i64 {
    // Upstream first keeps the tolerations whose effect is PreferNoSchedule or empty; any other
    // effect cannot tolerate a PreferNoSchedule taint anyway (`Toleration.ToleratesTaint` checks
    // the effect), so the pod's whole list gives the same count without a copy per node.
    node.spec
        .taints
        .iter()
        .filter(|t| t.effect == "PreferNoSchedule" && !tolerated(&pod.spec.tolerations, t))
        .count() as i64
}

/// Whether the pod has preferred node-affinity terms (NodeAffinity's PreScore skips otherwise).
pub fn has_preferred_affinity(pod: &Pod) -> bool {
    pod.spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .is_some_and(|na| {
            na.preferred_during_scheduling_ignored_during_execution
                .iter()
                .any(|t| t.weight != 0)
        })
}

/// NodeAffinity (Score, raw): the summed weights of the preferred terms the node matches.
pub fn node_affinity_raw(pod: &Pod, node: &Node) -> i64 {
    let Some(na) = pod
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
    else {
        return 0;
    };
    na.preferred_during_scheduling_ignored_during_execution
        .iter()
        .filter(|t| t.weight != 0 && term_matches(&t.preference, node))
        .map(|t| t.weight)
        .sum()
}

fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// NodeResourcesFit (Score, LeastAllocated; cpu and memory, weight 1 each): free share after
/// placing the pod, counting every pod at no less than 100m / 200Mi.
pub fn least_allocated(p: &PodCtx, ni: &NodeInfo) -> i64 {
    let resources = [
        (ni.non0_cpu + p.resources.non0_cpu, ni.allocatable.milli_cpu),
        (ni.non0_mem + p.resources.non0_mem, ni.allocatable.memory),
    ];
    let (mut score, mut weights) = (0, 0);
    for (requested, alloc) in resources {
        if alloc == 0 {
            continue;
        }
        score += least_requested_score(requested, alloc);
        weights += 1;
    }
    // Two resources at most: halving by a shift, not a division by a count (a division was a
    // tenth of a scheduling cycle's own time, for each of hundreds of nodes per pod).
    match weights {
        0 => 0,
        1 => score,
        _ => score / 2,
    }
}

/// NodeResourcesBalancedAllocation (Score): 100 × (1 − std of the cpu and memory fractions
/// after placing the pod), on actual requests. None when skipped: BestEffort pods are not
/// scored by it (PreScore returns Skip, kubernetes#129138).
pub fn balanced_allocation(p: &PodCtx, ni: &NodeInfo) -> Option<i64> {
    let req = &p.resources.requests;
    if req.milli_cpu == 0 && req.memory == 0 {
        return None;
    }
    let resources = [
        (
            ni.requested.milli_cpu + req.milli_cpu,
            ni.allocatable.milli_cpu,
        ),
        (ni.requested.memory + req.memory, ni.allocatable.memory),
    ];
    // With exactly cpu and memory, the standard deviation is half their difference.
    let fraction = |(requested, alloc): (i64, i64)| {
        (alloc != 0).then(|| (requested as f64 / alloc as f64).min(1.0))
    };
    let std = match (fraction(resources[0]), fraction(resources[1])) {
        (Some(cpu), Some(mem)) => ((cpu - mem) / 2.0).abs(),
        _ => 0.0,
    };
    Some(((1.0 - std) * MAX_NODE_SCORE as f64) as i64)
}

// ------------------------------------------------------------------ messages

/// `FitError.Error()`: `0/N nodes are available: <histogram>.` then the PostFilter message.
/// The histogram counts each reason once per node ("3 Insufficient cpu") and is sorted as
/// strings, so "10 …" sorts before "2 …" exactly as Go's `sort.Strings` does. The PostFilter
/// message is followed by its own period (`SeparatorFormat = " %v."`, since 1.25), which is why
/// real messages end in "..".
pub fn fit_error_message<'a>(
    num_all_nodes: usize,
    reasons: impl IntoIterator<Item = &'a str>,
    post_filter: Option<&str>,
) -> String {
    let mut histogram: VecMap<&str, usize> = VecMap::new();
    for r in reasons {
        *histogram.entry(r).or_insert(0) += 1;
    }
    let mut parts: Vec<String> = histogram
        .into_iter()
        .map(|(r, n)| format!("{n} {r}"))
        .collect();
    parts.stable_sort();
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    if !parts.is_empty() {
        msg.push_str(&format!(" {}.", parts.join(", ")));
    }
    if let Some(pf) = post_filter.filter(|s| !s.is_empty()) {
        msg.push_str(&format!(" {pf}."));
    }
    msg
}
