//! The node lifecycle controller (`node-controller`): notices nodes whose kubelet went silent,
//! marks them `Unknown`, marks their pods not ready, and taints them so the scheduler avoids them
//! and the taint eviction controller moves their pods away.
//!
//! Modelled on `pkg/controller/nodelifecycle/node_lifecycle_controller.go`:
//! - A monitor pass runs every `--node-monitor-period` (5 s) over every node ([`Controller::tick`]
//!   queues each node key and marks it "monitor due"). The probe timestamp is the controller's own
//!   clock at the pass that first saw a newer Ready `lastHeartbeatTime` or Lease `renewTime`
//!   (Kubernetes does this to be immune to clock skew), so a dead kubelet is noticed 50–60 s after
//!   its last heartbeat, not exactly 50 s.
//! - After `--node-monitor-grace-period` (50 s; 60 s `--node-startup-grace-period` for a node that
//!   never posted Ready) every kubelet-owned condition becomes `Unknown` (`NodeStatusUnknown` /
//!   `NodeStatusNeverUpdated`) through `UpdateStatus`.
//! - When this controller flips Ready away from True it records `NodeNotReady` on the node and
//!   marks every pod on it `Ready=False` (`MarkPodsNotReady`) with a Warning `NodeNotReady` each.
//! - NoSchedule taints follow the conditions and `spec.unschedulable` on every node change
//!   (`doNoScheduleTaintingPass`); NoExecute `not-ready` / `unreachable` taints follow the Ready
//!   condition *observed at the previous pass* through a per-zone rate limiter (0.1 node/s), and are
//!   swapped at once when Ready flips between False and Unknown.
//! - Zone disruption (`handleDisruption`): a zone with ≥ 55 % (and > 2) not-ready nodes slows to
//!   0.01 node/s if it has more than 50 nodes and stops otherwise; when every node of every zone is
//!   not ready the controller enters "master disruption mode": it removes the NoExecute taints and
//!   stops adding them, assuming the control plane, not the nodes, is cut off.
//!
//! Deliberate simplifications: taint writes are plain `Update`s with the cached resourceVersion
//! (409 → retry) instead of strategic-merge patches; the per-zone queue is a token bucket checked
//! by each node's own pass rather than a FIFO drained every 100 ms; a newly registered node's
//! NoExecute taints are not removed and re-added (Kubernetes does that within ~100 ms, only
//! renewing `timeAdded`); the `kubernetes.io/os`/`arch` beta-label reconciliation is not simulated.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use crate::sim::api::types::{
    find_condition, Condition, Kind, Millis, Node, Object, ObjectKey, Str, Taint, Time,
};
use crate::sim::api::{ApiRequest, ApiResult, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::{Cache, Indexers};
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::vec_map::{SlotMap, VecMap};

/// `--node-monitor-period`: how often every node's health is checked.
pub const NODE_MONITOR_PERIOD: Millis = 5_000;
/// `--node-monitor-grace-period` (50 s since v1.32): silence tolerated before Ready becomes Unknown.
pub const NODE_MONITOR_GRACE_PERIOD: Millis = 50_000;
/// `--node-startup-grace-period`: the longer grace of a node that never posted a Ready condition.
pub const NODE_STARTUP_GRACE_PERIOD: Millis = 60_000;
/// `--node-eviction-rate`: NoExecute taints added per second per healthy zone.
pub const EVICTION_LIMITER_QPS: f64 = 0.1;
/// `--secondary-node-eviction-rate`: the rate in a partially disrupted large zone.
pub const SECONDARY_EVICTION_LIMITER_QPS: f64 = 0.01;
/// `--large-cluster-size-threshold`: zones up to this size stop tainting when partially disrupted.
pub const LARGE_CLUSTER_THRESHOLD: usize = 50;
/// `--unhealthy-zone-threshold`: the not-ready fraction that makes a zone partially disrupted.
pub const UNHEALTHY_ZONE_THRESHOLD: f64 = 0.55;
/// The namespace of node heartbeat Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// Ready=False.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Ready=Unknown.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `spec.unschedulable` (cordon).
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// MemoryPressure=True.
pub const TAINT_NODE_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// DiskPressure=True.
pub const TAINT_NODE_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// PIDPressure=True.
pub const TAINT_NODE_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// NetworkUnavailable=True.
pub const TAINT_NODE_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";
/// Nodes with this label do not count in zone-disruption decisions.
pub const LABEL_EXCLUDE_DISRUPTION: &str = "node.kubernetes.io/exclude-disruption";

/// The conditions the kubelet owns; `NetworkUnavailable` belongs to the network plugin.
const KUBELET_CONDITIONS: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

/// `nodeConditionToTaintKeyStatusMap`: which NoSchedule taint a condition in a status maps to.
fn condition_taint(type_: &str, status: &str) -> Option<&'static str> {
    match (type_, status) {
        ("Ready", "False") => Some(TAINT_NODE_NOT_READY),
        ("Ready", "Unknown") => Some(TAINT_NODE_UNREACHABLE),
        ("MemoryPressure", "True") => Some(TAINT_NODE_MEMORY_PRESSURE),
        ("DiskPressure", "True") => Some(TAINT_NODE_DISK_PRESSURE),
        ("NetworkUnavailable", "True") => Some(TAINT_NODE_NETWORK_UNAVAILABLE),
        ("PIDPressure", "True") => Some(TAINT_NODE_PID_PRESSURE),
        _ => None,
    }
}

/// NoSchedule taint keys this controller owns (any other NoSchedule taint is left alone).
fn is_managed_no_schedule_key(key: &str) -> bool {
    matches!(
        key,
        TAINT_NODE_NOT_READY
            | TAINT_NODE_UNREACHABLE
            | TAINT_NODE_UNSCHEDULABLE
            | TAINT_NODE_MEMORY_PRESSURE
            | TAINT_NODE_DISK_PRESSURE
            | TAINT_NODE_PID_PRESSURE
            | TAINT_NODE_NETWORK_UNAVAILABLE
    )
}

fn has_taint(taints: &[Taint], key: &str, effect: &str) -> bool {
    taints.iter().any(|t| t.key == key && t.effect == effect)
}

fn new_taint(key: &str, effect: &str, now: Millis) -> Taint {
    Taint {
        key: key.into(),
        value: None,
        effect: effect.into(),
        time_added: Some(Time(now)),
    }
}

/// `nodetopology.GetZoneKey`: region and zone labels, or "" when the node has neither.
pub fn zone_key(node: &Node) -> String {
    let l = &node.metadata.labels;
    let region = l
        .get("topology.kubernetes.io/region")
        .or_else(|| l.get("failure-domain.beta.kubernetes.io/region"))
        .cloned()
        .unwrap_or_default();
    let zone = l
        .get("topology.kubernetes.io/zone")
        .or_else(|| l.get("failure-domain.beta.kubernetes.io/zone"))
        .cloned()
        .unwrap_or_default();
    if region.is_empty() && zone.is_empty() {
        String::new()
    } else {
        format!("{region}:\x00:{zone}")
    }
}

/// What the controller remembers about one node between passes (`nodeHealthData`).
#[derive(Clone, Debug, PartialEq)]
struct NodeHealth {
    /// The controller's clock when it last saw the node alive.
    probe: Millis,
    ready_transition: Millis,
    /// The Ready condition as last observed (or as this controller last wrote it).
    saved_ready: Option<Condition>,
    lease_renew: Option<Time>,
}

/// What the last monitor pass decided about the NoExecute taints of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NoExecuteIntent {
    /// Ready was True: remove `not-ready`/`unreachable` NoExecute (`markNodeAsReachable`).
    Reachable,
    /// Ready was False or Unknown: this taint should be there, and its opposite not.
    Taint(&'static str),
}

/// A zone's health, as `ComputeZoneState` classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneState {
    Initial,
    Normal,
    PartialDisruption,
    FullDisruption,
}

/// A token bucket with burst 1: the per-zone `RateLimitedTimedQueue` limiter.
#[derive(Clone, Debug, PartialEq)]
struct TokenBucket {
    qps: f64,
    tokens: f64,
    last: Millis,
}

impl TokenBucket {
    fn new(qps: f64, now: Millis) -> TokenBucket {
        TokenBucket {
            qps,
            tokens: if qps > 0.0 { 1.0 } else { 0.0 },
            last: now,
        }
    }

    fn refill(&mut self, now: Millis) {
        if self.qps > 0.0 && now > self.last {
            self.tokens = (self.tokens + (now - self.last) as f64 * self.qps / 1000.0).min(1.0);
        }
        self.last = self.last.max(now);
    }

    fn try_accept(&mut self, now: Millis) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Milliseconds until the next token, or None when the bucket never refills (qps 0).
    fn wait(&self) -> Option<Millis> {
        if self.qps <= 0.0 {
            return None;
        }
        Some((((1.0 - self.tokens) * 1000.0 / self.qps).ceil() as Millis).max(1))
    }

    /// `SwapLimiter`: a new bucket that is full unless the old one was exhausted.
    fn swap(&mut self, qps: f64, now: Millis) {
        if (self.qps - qps).abs() < f64::EPSILON {
            return;
        }
        self.refill(now);
        let exhausted = self.tokens < 1.0;
        self.qps = qps;
        self.tokens = if qps <= 0.0 || exhausted { 0.0 } else { 1.0 };
        self.last = now;
    }
}

/// `ComputeZoneState` over the Ready statuses (None: never reported) of a zone's nodes.
pub fn compute_zone_state(statuses: &[Option<Str>]) -> ZoneState {
    let ready = statuses
        .iter()
        .filter(|s| s.as_deref() == Some("True"))
        .count();
    let not_ready = statuses.len() - ready;
    if ready == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2
        && not_ready as f64 / (not_ready + ready) as f64 >= UNHEALTHY_ZONE_THRESHOLD
    {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    }
}

/// The outcome of `tryUpdateNodeHealth` for one node.
struct HealthCheck {
    /// Ready as the cache showed it before this pass (a fake Unknown when never reported).
    observed: Condition,
    /// Ready after this pass (None: never reported and still within the startup grace).
    current: Option<Condition>,
    /// The node with Unknown conditions, when this pass must write them.
    updated: Option<Node>,
    silent_for: Millis,
    grace: Millis,
}

/// The node lifecycle controller. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct NodeLifecycleController {
    /// Nodes the informer has shown us; the monitor pass visits each.
    seen: BTreeSet<String>,
    /// `knownNodeSet`: registered nodes (name → uid), for RegisteredNode / RemovingNode.
    known: SlotMap<String, String>,
    /// Nodes queued by the latest tick whose monitor pass has not run yet.
    monitor_due: BTreeSet<String>,
    /// True while a tick's pass is in progress; zone states are computed when it completes.
    pass_open: bool,
    /// Zone → Ready statuses gathered by the pass in progress.
    pass: BTreeMap<String, Vec<Option<Str>>>,
    health: SlotMap<Str, NodeHealth>,
    intents: SlotMap<Str, NoExecuteIntent>,
    nodes_to_retry: BTreeSet<String>,
    zone_states: VecMap<String, ZoneState>,
    limiters: VecMap<String, TokenBucket>,
}

impl NodeLifecycleController {
    /// A fresh instance with no memory of any node.
    pub fn new() -> Self {
        Self::default()
    }

    /// True in "master disruption mode": every zone is fully disrupted, so NoExecute tainting stops.
    pub fn in_master_disruption_mode(&self) -> bool {
        !self.zone_states.is_empty()
            && self
                .zone_states
                .values()
                .all(|s| *s == ZoneState::FullDisruption)
    }

    /// The state of each zone as of the last complete monitor pass ("" is the zone of unlabelled nodes).
    pub fn zone_states(&self) -> &VecMap<String, ZoneState> {
        &self.zone_states
    }

    /// `tryUpdateNodeHealth`: refreshes the probe timestamp and decides whether the node went silent.
    fn check_health(&mut self, node: &Node, lease_renew: Option<Time>, now: Millis) -> HealthCheck {
        let name = node.metadata.name.clone();
        let created = node.metadata.creation_timestamp.unwrap_or(Time(0));
        let current = find_condition(&node.status.conditions, "Ready").cloned();
        let (observed, grace) = match &current {
            None => (
                Condition {
                    type_: "Ready".into(),
                    status: "Unknown".into(),
                    last_heartbeat_time: Some(created),
                    last_transition_time: Some(created),
                    ..Default::default()
                },
                NODE_STARTUP_GRACE_PERIOD,
            ),
            Some(c) => (c.clone(), NODE_MONITOR_GRACE_PERIOD),
        };
        let fresh = |ready: Option<Condition>, lease: Option<Time>| NodeHealth {
            probe: now,
            ready_transition: now,
            saved_ready: ready,
            lease_renew: lease,
        };
        let mut h = match (self.health.remove(&name), &current) {
            // A node that never reported is measured from its creation, even after a restart.
            (None, None) => NodeHealth {
                probe: created.0,
                ready_transition: created.0,
                saved_ready: None,
                lease_renew: None,
            },
            // Without a Ready condition the saved status is replaced and the probe left alone.
            (Some(mut h), None) => {
                h.saved_ready = None;
                h
            }
            (None, Some(c)) => fresh(Some(c.clone()), None),
            (Some(h), Some(c)) if h.saved_ready.is_none() => fresh(Some(c.clone()), h.lease_renew),
            (Some(h), Some(c)) => {
                let saved = h.saved_ready.clone().expect("matched: saved_ready is Some");
                if saved.last_heartbeat_time != c.last_heartbeat_time {
                    let transition = if saved.last_transition_time != c.last_transition_time {
                        now
                    } else {
                        h.ready_transition
                    };
                    NodeHealth {
                        probe: now,
                        ready_transition: transition,
                        saved_ready: Some(c.clone()),
                        lease_renew: h.lease_renew,
                    }
                } else {
                    h
                }
            }
        };
        // Always refresh the probe when the Lease was renewed: it is the cheap heartbeat.
        if let Some(renew) = lease_renew {
            if h.lease_renew.is_none_or(|saved| saved < renew) {
                h.lease_renew = Some(renew);
                h.probe = now;
            }
        }
        let silent_for = now.saturating_sub(h.probe);
        let mut check = HealthCheck {
            observed,
            current,
            updated: None,
            silent_for,
            grace,
        };
        if now > h.probe + grace {
            let mut updated = node.clone();
            for type_ in KUBELET_CONDITIONS {
                match updated
                    .status
                    .conditions
                    .iter_mut()
                    .find(|c| c.type_ == type_)
                {
                    None => updated.status.conditions.push(Condition {
                        type_: type_.into(),
                        status: "Unknown".into(),
                        reason: Some("NodeStatusNeverUpdated".into()),
                        message: Some("Kubelet never posted node status.".into()),
                        last_heartbeat_time: Some(created),
                        last_transition_time: Some(Time(now)),
                        ..Default::default()
                    }),
                    Some(c) if c.status != "Unknown" => {
                        c.status = "Unknown".into();
                        c.reason = Some("NodeStatusUnknown".into());
                        c.message = Some("Kubelet stopped posting node status.".into());
                        c.last_transition_time = Some(Time(now));
                    }
                    Some(_) => {}
                }
            }
            let new_ready = find_condition(&updated.status.conditions, "Ready").cloned();
            if new_ready.as_ref() != Some(&check.observed) {
                h = NodeHealth {
                    probe: h.probe,
                    ready_transition: now,
                    saved_ready: new_ready.clone(),
                    lease_renew: h.lease_renew,
                };
                check.current = new_ready;
                check.updated = Some(updated);
            }
        }
        self.health.insert(name, h);
        check
    }

    /// `MarkPodsNotReady`: Ready=False on every pod of the node whose Ready is not False yet.
    fn mark_pods_not_ready<'a>(
        pods: impl Iterator<Item = &'a Rc<Object>>,
        node: &str,
        now: Millis,
        out: &mut Outcome,
    ) -> Vec<ApiRequest> {
        let mut reqs = Vec::new();
        for obj in pods {
            let Some(pod) = obj.as_pod() else { continue };
            if pod.spec.node_name != node {
                continue;
            }
            let Some(i) = pod
                .status
                .conditions
                .iter()
                .position(|c| c.type_ == "Ready")
            else {
                continue;
            };
            if pod.status.conditions[i].status == "False" {
                continue;
            }
            let mut updated = pod.clone();
            let cond = &mut updated.status.conditions[i];
            cond.status = "False".into();
            cond.last_transition_time = Some(Time(now));
            reqs.push(ApiRequest::UpdateStatus(Object::from(updated)));
            out.event(EventRecord::warning(
                obj,
                "NodeNotReady",
                "Node is not ready",
            ));
        }
        reqs
    }

    /// The node's taints as this controller wants them, or None when they are already right.
    /// Returns also how long to wait for the zone's rate limiter, if it held back a NoExecute taint.
    fn desired_taints(
        &mut self,
        node: &Node,
        now: Millis,
    ) -> (Option<Vec<Taint>>, Option<Millis>, Vec<String>) {
        let mut taints = node.spec.taints.clone();
        let mut notes = Vec::new();
        // doNoScheduleTaintingPass: conditions and cordon decide the NoSchedule taints.
        let mut want: Vec<&'static str> = node
            .status
            .conditions
            .iter()
            .filter_map(|c| condition_taint(&c.type_, &c.status))
            .collect();
        if node.spec.unschedulable {
            want.push(TAINT_NODE_UNSCHEDULABLE);
        }
        taints.retain(|t| {
            let keep = t.effect != "NoSchedule"
                || !is_managed_no_schedule_key(&t.key)
                || want.contains(&t.key.as_str());
            if !keep {
                notes.push(format!("-{}:NoSchedule", t.key));
            }
            keep
        });
        for key in &want {
            if !has_taint(&taints, key, "NoSchedule") {
                taints.push(new_taint(key, "NoSchedule", now));
                notes.push(format!("+{key}:NoSchedule"));
            }
        }
        // NoExecute: what the last monitor pass decided, unless evictions are stopped cluster-wide.
        let mut wait = None;
        let intent = if self.in_master_disruption_mode() {
            Some(NoExecuteIntent::Reachable)
        } else {
            self.intents.get(&node.metadata.name).copied()
        };
        match intent {
            None => {}
            Some(NoExecuteIntent::Reachable) => {
                taints.retain(|t| {
                    let keep = t.effect != "NoExecute"
                        || (t.key != TAINT_NODE_NOT_READY && t.key != TAINT_NODE_UNREACHABLE);
                    if !keep {
                        notes.push(format!("-{}:NoExecute", t.key));
                    }
                    keep
                });
            }
            Some(NoExecuteIntent::Taint(key)) => {
                let opposite = if key == TAINT_NODE_NOT_READY {
                    TAINT_NODE_UNREACHABLE
                } else {
                    TAINT_NODE_NOT_READY
                };
                let swap = has_taint(&taints, opposite, "NoExecute");
                if swap {
                    // Flipping between False and Unknown swaps the taint at once, unthrottled.
                    taints.retain(|t| !(t.key == opposite && t.effect == "NoExecute"));
                    notes.push(format!("-{opposite}:NoExecute"));
                }
                if !has_taint(&taints, key, "NoExecute") {
                    let zone = zone_key(node);
                    let limiter = self
                        .limiters
                        .entry(zone)
                        .or_insert_with(|| TokenBucket::new(EVICTION_LIMITER_QPS, now));
                    if swap || limiter.try_accept(now) {
                        taints.push(new_taint(key, "NoExecute", now));
                        notes.push(format!("+{key}:NoExecute"));
                    } else {
                        wait = limiter.wait();
                        notes.push(format!(
                            "{key}:NoExecute waits for the zone's eviction rate limiter"
                        ));
                    }
                }
            }
        }
        let changed = taints != node.spec.taints;
        (changed.then_some(taints), wait, notes)
    }

    /// `handleDisruption`: zone states from the pass that just completed, and their limiters.
    fn handle_disruption(
        &mut self,
        cache: &Cache,
        current: &str,
        now: Millis,
        out: &mut Outcome,
        notes: &mut Vec<String>,
    ) {
        let zone_conds = std::mem::take(&mut self.pass);
        let mut new_states = BTreeMap::new();
        let mut all_are = true;
        for (zone, statuses) in &zone_conds {
            let state = compute_zone_state(statuses);
            if state != ZoneState::FullDisruption {
                all_are = false;
            }
            new_states.insert(zone.clone(), state);
            self.zone_states
                .entry(zone.clone())
                .or_insert(ZoneState::Initial);
            self.limiters
                .entry(zone.clone())
                .or_insert_with(|| TokenBucket::new(EVICTION_LIMITER_QPS, now));
        }
        let mut all_was = true;
        let zones: Vec<String> = self.zone_states.keys().cloned().collect();
        for z in zones {
            if !zone_conds.contains_key(&z) {
                self.zone_states.remove(&z);
                continue;
            }
            if self.zone_states[&z] != ZoneState::FullDisruption {
                all_was = false;
                break;
            }
        }
        if all_are && all_was {
            return;
        }
        if all_are {
            notes.push("all nodes are not Ready: entering master disruption mode, NoExecute taints removed and evictions stopped".into());
            for obj in cache.list(Kind::Node) {
                let Some(node) = obj.as_node() else { continue };
                if node.metadata.name == current {
                    continue; // this node's own pass removes them below, in the same write
                }
                let mut updated = node.clone();
                updated.spec.taints.retain(|t| {
                    t.effect != "NoExecute"
                        || (t.key != TAINT_NODE_NOT_READY && t.key != TAINT_NODE_UNREACHABLE)
                });
                if updated.spec.taints != node.spec.taints {
                    out.request(ApiRequest::Update(Object::from(updated)));
                }
            }
            for limiter in self.limiters.values_mut() {
                limiter.swap(0.0, now);
            }
            for s in self.zone_states.values_mut() {
                *s = ZoneState::FullDisruption;
            }
            return;
        }
        if all_was {
            notes.push("some nodes are Ready again: exiting master disruption mode".into());
            self.health.for_each_mut(|_, h| {
                h.probe = now;
                h.ready_transition = now;
            });
        }
        let zones: Vec<String> = self.zone_states.keys().cloned().collect();
        for z in zones {
            let new = new_states.get(&z).copied().unwrap_or(ZoneState::Normal);
            if !all_was && self.zone_states[&z] == new {
                continue;
            }
            let size = zone_conds.get(&z).map_or(0, |v| v.len());
            let qps = match new {
                ZoneState::Normal | ZoneState::Initial | ZoneState::FullDisruption => {
                    EVICTION_LIMITER_QPS
                }
                ZoneState::PartialDisruption if size > LARGE_CLUSTER_THRESHOLD => {
                    SECONDARY_EVICTION_LIMITER_QPS
                }
                ZoneState::PartialDisruption => 0.0,
            };
            self.limiters
                .entry(z.clone())
                .or_insert_with(|| TokenBucket::new(EVICTION_LIMITER_QPS, now))
                .swap(qps, now);
            if new == ZoneState::PartialDisruption {
                notes.push(format!(
                    "zone {:?} is partially disrupted: evictions at {qps} nodes/s",
                    z.replace('\0', "")
                ));
            }
            self.zone_states.insert(z, new);
        }
    }

    fn sync_node(&mut self, name: &str, ctx: &mut Ctx<'_>) -> Outcome {
        let now = ctx.now;
        let mut out = Outcome::default();
        let key = ObjectKey::new(Kind::Node, "", name);
        let tick_due = self.monitor_due.remove(name);
        let Some(obj) = ctx.cache.get(&key).cloned() else {
            if tick_due {
                self.seen.remove(name);
                self.health.remove(name);
                self.intents.remove(name);
                self.nodes_to_retry.remove(name);
                if let Some(uid) = self.known.remove(name) {
                    out.event(EventRecord {
                        type_: "Normal",
                        reason: "RemovingNode".into(),
                        message: format!("Node {name} event: Removing Node {name} from Controller")
                            .into(),
                        object: key.clone(),
                        uid: uid.into(),
                        field_path: Str::EMPTY,
                    });
                }
                self.finish_pass(ctx.cache, name, now, &mut out, &mut Vec::new());
            }
            out.record = Some(ReconcileRecord {
                observed: "node is gone".into(),
                desired: String::new(),
                diff: String::new(),
            });
            return out;
        };
        let Some(node) = obj.as_node() else {
            return out;
        };
        self.seen.insert(name.to_string());
        let registered = self.known.contains_key(name);
        let monitor = tick_due || !registered;
        let mut notes: Vec<String> = Vec::new();
        let mut observed_text = format!("Ready={}", node.ready_status());
        let mut status_write = None;
        let mut pod_writes = Vec::new();
        if monitor {
            if !registered {
                self.known
                    .insert(name.to_string(), node.metadata.uid.to_string());
                out.event(EventRecord::normal(
                    &obj,
                    "RegisteredNode",
                    format!("Node {name} event: Registered Node {name} in Controller"),
                ));
            }
            let lease_renew = ctx
                .cache
                .get(&ObjectKey::new(Kind::Lease, NODE_LEASE_NAMESPACE, name))
                .and_then(|l| l.as_lease())
                .and_then(|l| l.spec.renew_time);
            let check = self.check_health(node, lease_renew, now);
            observed_text = format!(
                "Ready={}, last heartbeat seen {}s ago",
                check.observed.status,
                check.silent_for / 1000
            );
            if let Some(updated) = check.updated {
                notes.push(format!(
                    "silent for {}s > {}s grace: conditions set to Unknown",
                    check.silent_for / 1000,
                    check.grace / 1000
                ));
                status_write = Some(updated);
            }
            if tick_due && !node.metadata.labels.contains_key(LABEL_EXCLUDE_DISRUPTION) {
                self.pass
                    .entry(zone_key(node))
                    .or_default()
                    .push(check.current.as_ref().map(|c| c.status.clone()));
            }
            if let Some(current) = &check.current {
                // processTaintBaseEviction acts on the condition as observed before this pass.
                let intent = match check.observed.status.as_str() {
                    "True" => NoExecuteIntent::Reachable,
                    "False" => NoExecuteIntent::Taint(TAINT_NODE_NOT_READY),
                    _ => NoExecuteIntent::Taint(TAINT_NODE_UNREACHABLE),
                };
                self.intents.insert(Str::from(name), intent);
                let needs_retry = self.nodes_to_retry.remove(name);
                let flipped = current.status != "True" && check.observed.status == "True";
                if flipped {
                    out.event(EventRecord::normal(
                        &obj,
                        "NodeNotReady",
                        format!("Node {name} status is now: NodeNotReady"),
                    ));
                }
                if flipped || (needs_retry && check.observed.status != "True") {
                    pod_writes = Self::mark_pods_not_ready(
                        ctx.cache.pods_on_node(name),
                        name,
                        now,
                        &mut out,
                    );
                    if !pod_writes.is_empty() {
                        notes.push(format!("{} pod(s) marked Ready=False", pod_writes.len()));
                    }
                }
            }
            if tick_due {
                self.finish_pass(ctx.cache, name, now, &mut out, &mut notes);
            }
        }
        if let Some(updated) = status_write {
            // The taints follow in the pass this write's watch event triggers (same resourceVersion).
            out.request(ApiRequest::UpdateStatus(Object::from(updated)));
        } else {
            let (taints, wait, taint_notes) = self.desired_taints(node, now);
            notes.extend(taint_notes);
            if let Some(taints) = taints {
                let mut updated = node.clone();
                updated.spec.taints = taints;
                out.request(ApiRequest::Update(Object::from(updated)));
            }
            if let Some(w) = wait {
                out.requeue(w);
            }
        }
        out.batch(pod_writes);
        let taints: Vec<String> = node
            .spec
            .taints
            .iter()
            .map(|t| format!("{}:{}", t.key, t.effect))
            .collect();
        if !taints.is_empty() {
            observed_text.push_str(&format!("; taints {}", taints.join(", ")));
        }
        out.record = Some(ReconcileRecord {
            observed: observed_text,
            desired: format!(
                "a heartbeat within {}s; taints matching conditions",
                NODE_MONITOR_GRACE_PERIOD / 1000
            ),
            diff: notes.join("; "),
        });
        out
    }

    fn finish_pass(
        &mut self,
        cache: &Cache,
        current: &str,
        now: Millis,
        out: &mut Outcome,
        notes: &mut Vec<String>,
    ) {
        if self.pass_open && self.monitor_due.is_empty() {
            self.pass_open = false;
            self.handle_disruption(cache, current, now, out, notes);
        }
    }

    /// `processPod`: a pod newly bound to a node this controller considers not ready.
    fn sync_pod(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let Some(obj) = ctx.cache.get(key).cloned() else {
            return out;
        };
        let Some(pod) = obj.as_pod() else { return out };
        let node = pod.spec.node_name.clone();
        let Some(ready) = self
            .health
            .get(node.as_str())
            .and_then(|h| h.saved_ready.clone())
        else {
            return out;
        };
        if ctx
            .cache
            .get(&ObjectKey::new(Kind::Node, "", &node))
            .is_none()
            || ready.status == "True"
        {
            return out;
        }
        let reqs = Self::mark_pods_not_ready(std::iter::once(&obj), &node, ctx.now, &mut out);
        out.record = Some(ReconcileRecord {
            observed: format!("pod on node {node} whose Ready is {}", ready.status),
            desired: "pods on a not-ready node are not Ready".into(),
            diff: if reqs.is_empty() {
                String::new()
            } else {
                "marking Ready=False".into()
            },
        });
        out.batch(reqs);
        out
    }
}

impl Controller for NodeLifecycleController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::NodeLifecycle
    }

    /// Its pods by node (upstream's `spec.nodeName` indexer): the pods of a node that stopped reporting.
    fn indexers(&self) -> Indexers {
        Indexers {
            node_name: true,
            ..Indexers::NONE
        }
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Node, Kind::Lease, Kind::Pod]
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        match &*ev.object {
            Object::Node(n) => {
                if ev.type_ != WatchEventType::Deleted {
                    self.seen.insert(n.metadata.name.to_string());
                }
                vec![ev.object.key()]
            }
            Object::Pod(p) => {
                // podUpdated: only a (new) binding matters; status changes come through the monitor.
                let old_node = old
                    .and_then(|o| o.as_pod())
                    .map(|o| o.spec.node_name.as_str());
                if ev.type_ != WatchEventType::Deleted
                    && !p.spec.node_name.is_empty()
                    && old_node != Some(p.spec.node_name.as_str())
                {
                    vec![ev.object.key()]
                } else {
                    Vec::new()
                }
            }
            // Leases are read by the monitor pass; a renewal alone wakes nothing.
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cache.list(Kind::Node).map(|o| o.key()).collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        match key.kind {
            Kind::Node => self.sync_node(&key.name, ctx),
            Kind::Pod => self.sync_pod(key, ctx),
            _ => Outcome::done(),
        }
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        // A pod that could not be marked not ready is retried at the node's next pass.
        if let (ApiRequest::UpdateStatus(Object::Pod(p)), Err(e)) = (req, result) {
            if e.code() != 404 {
                self.nodes_to_retry.insert(p.spec.node_name.to_string());
            }
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        if let ApiRequest::UpdateStatus(Object::Pod(p)) = req {
            self.nodes_to_retry.insert(p.spec.node_name.to_string());
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::default()))
    }

    fn tick(&mut self, _now: Millis) -> (Vec<ObjectKey>, Option<Millis>) {
        self.monitor_due.extend(self.seen.iter().cloned());
        self.pass_open = !self.monitor_due.is_empty();
        self.pass.clear();
        let keys = self
            .monitor_due
            .iter()
            .map(|n| ObjectKey::new(Kind::Node, "", n))
            .collect();
        (keys, Some(NODE_MONITOR_PERIOD))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{
        Container, Lease, LeaseSpec, ObjectMeta, Pod, PodSpec, PodStatus, Toleration,
    };
    use crate::sim::controllers::testing;
    use crate::sim::faults::Fault;
    use crate::sim::world::{Sim, SimConfig};

    fn ready(status: &str, heartbeat: Millis) -> Condition {
        Condition {
            type_: "Ready".into(),
            status: status.into(),
            reason: Some("KubeletReady".into()),
            message: Some("kubelet is posting ready status".into()),
            last_heartbeat_time: Some(Time(heartbeat)),
            last_transition_time: Some(Time(0)),
            ..Default::default()
        }
    }

    fn node(name: &str, conditions: Vec<Condition>) -> Node {
        let allocatable: crate::sim::api::types::StringMap =
            [("cpu", "4"), ("memory", "8Gi"), ("pods", "110")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        Node {
            metadata: ObjectMeta {
                name: name.into(),
                uid: format!("uid-{name}").into(),
                resource_version: "7".into(),
                creation_timestamp: Some(Time(0)),
                ..Default::default()
            },
            status: crate::sim::api::types::NodeStatus {
                capacity: allocatable.clone(),
                allocatable,
                conditions,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn pod(name: &str, node: &str, tolerations: Vec<Toleration>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                uid: format!("uid-{name}").into(),
                resource_version: "9".into(),
                labels: [("app".to_string(), "web".to_string())].into(),
                ..Default::default()
            },
            spec: PodSpec {
                node_name: node.into(),
                containers: vec![Container {
                    name: "app".into(),
                    image: "nginx:1.27".into(),
                    ..Default::default()
                }],
                tolerations,
                ..Default::default()
            }
            .into(),
            status: PodStatus {
                phase: "Running".into(),
                pod_ip: Some("10.244.1.5".into()),
                conditions: vec![Condition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    last_transition_time: Some(Time(0)),
                    ..Default::default()
                }],
                ..Default::default()
            },
        }
    }

    fn unreachable_toleration(seconds: Option<i64>) -> Toleration {
        Toleration {
            key: Some(TAINT_NODE_UNREACHABLE.into()),
            operator: Some("Exists".into()),
            effect: Some("NoExecute".into()),
            toleration_seconds: seconds,
            ..Default::default()
        }
    }

    fn cache_of(objs: Vec<Object>) -> Cache {
        testing::cache_of(objs)
    }

    fn run(c: &mut NodeLifecycleController, name: &str, now: Millis, cache: &Cache) -> Outcome {
        testing::reconcile_once(c, cache, &ObjectKey::new(Kind::Node, "", name), now)
    }

    fn updated_node(out: &Outcome) -> Option<Node> {
        out.requests().find_map(|r| match r {
            ApiRequest::Update(Object::Node(n)) | ApiRequest::UpdateStatus(Object::Node(n)) => {
                Some(Node::clone(n))
            }
            _ => None,
        })
    }

    fn taint_names(n: &Node) -> Vec<String> {
        n.spec
            .taints
            .iter()
            .map(|t| format!("{}:{}", t.key, t.effect))
            .collect()
    }

    #[test]
    fn a_node_silent_past_the_grace_period_gets_unknown_conditions_and_its_pods_are_marked_not_ready(
    ) {
        let cache = cache_of(vec![
            Object::from(node("node-1", vec![ready("True", 0)])),
            Object::from(pod("web-1", "node-1", vec![])),
        ]);
        let mut c = NodeLifecycleController::new();
        let first = run(&mut c, "node-1", 1_000, &cache);
        assert_eq!(first.events[0].reason, "RegisteredNode");
        assert_eq!(
            first.events[0].message,
            "Node node-1 event: Registered Node node-1 in Controller"
        );
        assert_eq!(
            first.requests().count(),
            0,
            "a fresh heartbeat needs no write"
        );

        c.tick(51_000);
        let at_grace = run(&mut c, "node-1", 51_000, &cache);
        assert_eq!(
            at_grace.requests().count(),
            0,
            "exactly the grace period is still healthy"
        );

        c.tick(51_001);
        let out = run(&mut c, "node-1", 51_001, &cache);
        let n = updated_node(&out).expect("status write");
        assert!(matches!(out.batches[0][0], ApiRequest::UpdateStatus(_)));
        let r = find_condition(&n.status.conditions, "Ready").unwrap();
        assert_eq!(
            (r.status.as_str(), r.reason.as_deref()),
            ("Unknown", Some("NodeStatusUnknown"))
        );
        assert_eq!(
            r.message.as_deref(),
            Some("Kubelet stopped posting node status.")
        );
        assert_eq!(
            r.last_heartbeat_time,
            Some(Time(0)),
            "the heartbeat is the kubelet's, not ours"
        );
        let mem = find_condition(&n.status.conditions, "MemoryPressure").unwrap();
        assert_eq!(
            (mem.status.as_str(), mem.reason.as_deref()),
            ("Unknown", Some("NodeStatusNeverUpdated"))
        );
        let pod_write = out.batches[1].iter().find_map(|r| match r {
            ApiRequest::UpdateStatus(Object::Pod(p)) => Some(p.clone()),
            _ => None,
        });
        assert!(!pod_write.expect("pod marked").is_ready());
        let events: Vec<(&str, &str, String)> = out
            .events
            .iter()
            .map(|e| (e.type_, e.reason.as_str(), e.message.to_string()))
            .collect();
        assert!(events.contains(&(
            "Normal",
            "NodeNotReady",
            "Node node-1 status is now: NodeNotReady".into()
        )));
        assert!(events.contains(&("Warning", "NodeNotReady", "Node is not ready".into())));
    }

    #[test]
    fn a_node_that_never_reported_gets_never_updated_conditions_after_the_startup_grace() {
        let cache = cache_of(vec![Object::from(node("node-1", vec![]))]);
        let mut c = NodeLifecycleController::new();
        assert_eq!(run(&mut c, "node-1", 59_000, &cache).requests().count(), 0);
        c.tick(60_001);
        let out = run(&mut c, "node-1", 60_001, &cache);
        let n = updated_node(&out).expect("status write");
        let r = find_condition(&n.status.conditions, "Ready").unwrap();
        assert_eq!(r.reason.as_deref(), Some("NodeStatusNeverUpdated"));
        assert_eq!(
            r.message.as_deref(),
            Some("Kubelet never posted node status.")
        );
        assert!(
            out.events.iter().all(|e| e.reason != "NodeNotReady"),
            "it was never Ready, so nothing flipped"
        );
    }

    #[test]
    fn cordon_adds_the_unschedulable_taint_and_uncordon_removes_it() {
        let mut cordoned = node("node-1", vec![ready("True", 0)]);
        cordoned.spec.unschedulable = true;
        let mut c = NodeLifecycleController::new();
        let out = run(
            &mut c,
            "node-1",
            1_000,
            &cache_of(vec![Object::from(cordoned.clone())]),
        );
        let n = updated_node(&out).expect("taint update");
        assert!(matches!(out.batches[0][0], ApiRequest::Update(_)));
        assert_eq!(
            taint_names(&n),
            vec!["node.kubernetes.io/unschedulable:NoSchedule"]
        );
        assert_eq!(n.spec.taints[0].time_added, Some(Time(1_000)));
        assert_eq!(
            n.metadata.resource_version, "7",
            "written against the cached version"
        );

        let mut uncordoned = n.clone();
        uncordoned.spec.unschedulable = false;
        let out = run(
            &mut c,
            "node-1",
            2_000,
            &cache_of(vec![Object::from(uncordoned)]),
        );
        assert!(updated_node(&out)
            .expect("taint removal")
            .spec
            .taints
            .is_empty());
    }

    #[test]
    fn an_unknown_node_gets_unreachable_taints_for_both_effects() {
        let cache = cache_of(vec![Object::from(node(
            "node-1",
            vec![ready("Unknown", 0)],
        ))]);
        let mut c = NodeLifecycleController::new();
        let out = run(&mut c, "node-1", 100_000, &cache);
        let n = updated_node(&out).expect("taint update");
        assert_eq!(
            taint_names(&n),
            vec![
                "node.kubernetes.io/unreachable:NoSchedule",
                "node.kubernetes.io/unreachable:NoExecute"
            ]
        );
    }

    #[test]
    fn the_second_unreachable_node_of_a_zone_waits_for_the_eviction_rate_limiter() {
        let cache = cache_of(vec![
            Object::from(node("node-a", vec![ready("Unknown", 0)])),
            Object::from(node("node-b", vec![ready("Unknown", 0)])),
        ]);
        let mut c = NodeLifecycleController::new();
        let a = run(&mut c, "node-a", 100_000, &cache);
        assert!(taint_names(&updated_node(&a).unwrap())
            .contains(&"node.kubernetes.io/unreachable:NoExecute".into()));
        let b = run(&mut c, "node-b", 100_001, &cache);
        assert_eq!(
            taint_names(&updated_node(&b).unwrap()),
            vec!["node.kubernetes.io/unreachable:NoSchedule"]
        );
        let wait = b.requeue_after.expect("retry when a token is back");
        assert!((9_990..=10_000).contains(&wait), "0.1 nodes/s: {wait}");
        let later = run(&mut c, "node-b", 100_001 + wait, &cache);
        assert!(taint_names(&updated_node(&later).unwrap())
            .contains(&"node.kubernetes.io/unreachable:NoExecute".into()));
    }

    #[test]
    fn a_node_flipping_from_unknown_to_not_ready_swaps_its_taints_at_once() {
        let mut n = node("node-c", vec![ready("False", 0)]);
        n.spec.taints = vec![
            Taint {
                key: TAINT_NODE_UNREACHABLE.into(),
                value: None,
                effect: "NoSchedule".into(),
                time_added: Some(Time(5)),
            },
            Taint {
                key: TAINT_NODE_UNREACHABLE.into(),
                value: None,
                effect: "NoExecute".into(),
                time_added: Some(Time(5)),
            },
        ];
        let cache = cache_of(vec![
            Object::from(node("node-a", vec![ready("Unknown", 0)])),
            Object::from(n),
        ]);
        let mut c = NodeLifecycleController::new();
        run(&mut c, "node-a", 100_000, &cache); // uses the zone's only token
        let out = run(&mut c, "node-c", 100_001, &cache);
        assert_eq!(
            taint_names(&updated_node(&out).unwrap()),
            vec![
                "node.kubernetes.io/not-ready:NoSchedule",
                "node.kubernetes.io/not-ready:NoExecute"
            ]
        );
        assert_eq!(out.requeue_after, None, "a swap is not rate limited");
    }

    #[test]
    fn zone_state_follows_compute_zone_state() {
        let s = |v: &[&str]| v.iter().map(|x| Some(Str::from(*x))).collect::<Vec<_>>();
        assert_eq!(
            compute_zone_state(&s(&["True", "True", "Unknown"])),
            ZoneState::Normal
        );
        assert_eq!(
            compute_zone_state(&s(&["Unknown", "False"])),
            ZoneState::FullDisruption
        );
        assert_eq!(compute_zone_state(&[None]), ZoneState::FullDisruption);
        assert_eq!(
            compute_zone_state(&s(&["True", "True", "Unknown", "Unknown"])),
            ZoneState::Normal,
            "needs > 2 not ready"
        );
        assert_eq!(
            compute_zone_state(&s(&["True", "True", "Unknown", "Unknown", "False"])),
            ZoneState::PartialDisruption
        );
        assert_eq!(
            compute_zone_state(&s(&["True", "True", "True", "Unknown", "Unknown", "False"])),
            ZoneState::Normal,
            "50% < 55%"
        );
    }

    // ------------------------------------------------------------------ world scenarios

    /// A cluster whose kubelets' heartbeats the test drives itself, every 10 s.
    struct Cluster {
        sim: Sim,
        alive: BTreeSet<String>,
    }

    impl Cluster {
        fn new(nodes: &[&str]) -> Cluster {
            let mut sim = Sim::new(SimConfig::default());
            for name in nodes {
                let mut n = node(name, vec![ready("True", 0)]);
                n.metadata.uid = Default::default();
                n.metadata.resource_version = Default::default();
                sim.submit(ApiRequest::Create(Object::from(n)))
                    .expect("node created");
            }
            let mut c = Cluster {
                sim,
                alive: nodes.iter().map(|n| n.to_string()).collect(),
            };
            c.heartbeat();
            c
        }

        /// What the kubelet's node lease controller does every 10 s.
        fn heartbeat(&mut self) {
            let now = self.sim.now();
            for name in self.alive.clone() {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: name.as_str().into(),
                        namespace: NODE_LEASE_NAMESPACE.into(),
                        ..Default::default()
                    },
                    spec: LeaseSpec {
                        holder_identity: Some(name.clone()),
                        lease_duration_seconds: Some(40),
                        renew_time: Some(Time(now)),
                    },
                };
                let key = ObjectKey::new(Kind::Lease, NODE_LEASE_NAMESPACE, &name);
                let req = if self.sim.get(&key).is_some() {
                    ApiRequest::Update(Object::from(lease))
                } else {
                    ApiRequest::Create(Object::from(lease))
                };
                self.sim.submit(req).expect("lease renewed");
            }
        }

        /// Posts Ready=True with a fresh heartbeat, as a kubelet coming back does.
        fn post_ready(&mut self, name: &str) {
            let key = ObjectKey::new(Kind::Node, "", name);
            let mut n = self
                .sim
                .get(&key)
                .and_then(|o| o.as_node().cloned())
                .expect("node exists");
            n.status.conditions = vec![ready("True", self.sim.now())];
            n.status.conditions[0].last_transition_time = Some(Time(self.sim.now()));
            n.metadata.resource_version = Default::default();
            self.sim
                .submit(ApiRequest::UpdateStatus(Object::from(n)))
                .expect("status posted");
        }

        /// Advances 100 ms at a time, renewing leases on every 10 s boundary.
        fn step_to(&mut self, t: Millis, mut each_step: impl FnMut(&Sim)) {
            while self.sim.now() < t {
                let next = (self.sim.now() / 100 + 1) * 100;
                self.sim.advance_to(next, usize::MAX);
                if next % 10_000 == 0 {
                    self.heartbeat();
                }
                each_step(&self.sim);
            }
        }

        fn run_pod(&mut self, name: &str, node: &str, tolerations: Vec<Toleration>) {
            let mut p = pod(name, node, tolerations);
            p.metadata.uid = Default::default();
            p.metadata.resource_version = Default::default();
            let status = p.status.clone();
            let created = self
                .sim
                .submit(ApiRequest::Create(Object::from(p)))
                .expect("pod created");
            let mut running = created.as_pod().cloned().expect("a pod");
            running.status = status;
            running.metadata.resource_version = Default::default();
            self.sim
                .submit(ApiRequest::UpdateStatus(Object::from(running)))
                .expect("pod running");
        }

        fn node(&self, name: &str) -> Node {
            self.sim
                .get(&ObjectKey::new(Kind::Node, "", name))
                .and_then(|o| o.as_node().cloned())
                .expect("node")
        }

        fn pod(&self, name: &str) -> Option<Pod> {
            self.sim
                .get(&ObjectKey::new(Kind::Pod, "default", name))
                .and_then(|o| o.as_pod().cloned())
        }

        fn events(&self, reason: &str) -> Vec<String> {
            self.sim
                .api()
                .list(Kind::Event)
                .filter_map(|o| o.as_event())
                .filter(|e| e.reason == reason)
                .map(|e| format!("{}: {}", e.involved_object.name, e.message))
                .collect()
        }
    }

    fn no_execute(n: &Node) -> Option<&Taint> {
        n.spec
            .taints
            .iter()
            .find(|t| t.effect == "NoExecute" && t.key == TAINT_NODE_UNREACHABLE)
    }

    /// When the pod was deleted: its deletionTimestamp minus the grace period.
    fn deleted_at(p: &Pod) -> Option<Millis> {
        let grace = p.metadata.deletion_grace_period_seconds.unwrap_or(0) as Millis * 1000;
        p.metadata.deletion_timestamp.map(|t| t.0 - grace)
    }

    #[test]
    fn a_dead_node_goes_unknown_then_tainted_and_its_pods_are_evicted_when_their_tolerations_run_out(
    ) {
        let mut c = Cluster::new(&["node-1", "node-2"]);
        c.run_pod("web-default", "node-1", vec![]); // admission adds 300 s tolerations
        c.run_pod("web-zero", "node-1", vec![unreachable_toleration(Some(0))]);
        c.run_pod("web-forever", "node-1", vec![unreachable_toleration(None)]);
        c.run_pod("other", "node-2", vec![]);
        let default_tol = c.pod("web-default").unwrap().spec.tolerations.clone();
        assert!(
            default_tol
                .iter()
                .any(|t| t.key.as_deref() == Some(TAINT_NODE_UNREACHABLE)
                    && t.toleration_seconds == Some(300)),
            "DefaultTolerationSeconds admission: {default_tol:?}"
        );
        c.step_to(60_000, |_| {});
        let last_heartbeat = 60_000;
        c.alive.remove("node-1");
        c.sim
            .inject(Fault::NodeDown {
                node: "node-1".into(),
            })
            .expect("node down");

        let mut unknown_at = None;
        let mut not_ready_pods_at = None;
        c.step_to(700_000, |sim| {
            let n = sim
                .get(&ObjectKey::new(Kind::Node, "", "node-1"))
                .and_then(|o| o.as_node().cloned())
                .unwrap();
            if unknown_at.is_none() && n.ready_status() == "Unknown" {
                unknown_at = Some(sim.now());
            }
            let p = sim
                .get(&ObjectKey::new(Kind::Pod, "default", "web-default"))
                .and_then(|o| o.as_pod().cloned());
            if not_ready_pods_at.is_none() && p.is_some_and(|p| !p.is_ready()) {
                not_ready_pods_at = Some(sim.now());
            }
        });
        let unknown_at = unknown_at.expect("node-1 went Unknown");
        let silent = unknown_at - last_heartbeat;
        assert!(
            (50_000..=60_500).contains(&silent),
            "Unknown {silent} ms after the last heartbeat"
        );
        let marked = not_ready_pods_at.expect("pods marked not ready") - unknown_at;
        assert!(
            marked <= 200,
            "pods are marked not ready right after the node: {marked} ms"
        );
        let n = c.node("node-1");
        assert_eq!(
            find_condition(&n.status.conditions, "Ready")
                .unwrap()
                .reason
                .as_deref(),
            Some("NodeStatusUnknown")
        );
        assert!(taint_names(&n).contains(&"node.kubernetes.io/unreachable:NoSchedule".into()));
        let tainted = no_execute(&n)
            .and_then(|t| t.time_added)
            .expect("unreachable:NoExecute")
            .0;
        assert!(
            tainted > unknown_at - 1_000 && tainted <= unknown_at + 5_500,
            "NoExecute at the next pass: {tainted}"
        );

        let zero = deleted_at(
            &c.pod("web-zero")
                .expect("terminating, no kubelet to finish"),
        )
        .expect("deleted");
        assert!(
            zero >= tainted && zero < tainted + 200,
            "tolerationSeconds 0 evicts at once: {zero}"
        );
        let default = deleted_at(&c.pod("web-default").unwrap()).expect("deleted after 300 s");
        let after = default - tainted;
        assert!(
            (300_000..300_200).contains(&after),
            "evicted {after} ms after the taint"
        );
        assert!(
            c.pod("web-forever")
                .unwrap()
                .metadata
                .deletion_timestamp
                .is_none(),
            "tolerates forever"
        );
        let other = c.pod("other").unwrap();
        assert!(
            other.metadata.deletion_timestamp.is_none() && other.is_ready(),
            "node-2 is untouched"
        );
        let target = find_condition(
            &c.pod("web-default").unwrap().status.conditions,
            "DisruptionTarget",
        )
        .cloned()
        .unwrap();
        assert_eq!(target.reason.as_deref(), Some("DeletionByTaintManager"));
        assert!(c
            .events("TaintManagerEviction")
            .contains(&"web-default: Marking for deletion Pod default/web-default".into()));
        assert!(c
            .events("NodeNotReady")
            .contains(&"node-1: Node node-1 status is now: NodeNotReady".into()));
        assert!(c
            .events("RegisteredNode")
            .contains(&"node-2: Node node-2 event: Registered Node node-2 in Controller".into()));
        assert!(c.node("node-2").spec.taints.is_empty());
    }

    #[test]
    fn a_node_that_recovers_before_the_toleration_ends_keeps_its_pods() {
        let mut c = Cluster::new(&["node-1", "node-2"]);
        c.run_pod("web", "node-1", vec![]);
        c.step_to(60_000, |_| {});
        c.alive.remove("node-1");
        c.sim
            .inject(Fault::NodeDown {
                node: "node-1".into(),
            })
            .expect("node down");
        c.step_to(200_000, |_| {});
        assert!(no_execute(&c.node("node-1")).is_some(), "tainted by now");
        c.sim
            .inject(Fault::NodeUp {
                node: "node-1".into(),
            })
            .expect("node up");
        c.alive.insert("node-1".into());
        c.heartbeat();
        c.post_ready("node-1");
        c.step_to(500_000, |_| {});
        let n = c.node("node-1");
        assert!(
            n.spec.taints.is_empty(),
            "taints removed once Ready: {:?}",
            taint_names(&n)
        );
        assert!(
            c.pod("web").unwrap().metadata.deletion_timestamp.is_none(),
            "eviction was cancelled"
        );
        assert!(c
            .events("TaintManagerEviction")
            .contains(&"web: Cancelling deletion of Pod default/web".into()));
    }

    #[test]
    fn when_every_node_stops_reporting_evictions_stop() {
        let mut c = Cluster::new(&["node-1", "node-2"]);
        c.run_pod("web", "node-1", vec![]);
        c.step_to(60_000, |_| {});
        c.alive.clear();
        for name in ["node-1", "node-2"] {
            c.sim
                .inject(Fault::NodeDown { node: name.into() })
                .expect("node down");
        }
        c.step_to(600_000, |_| {});
        for name in ["node-1", "node-2"] {
            let n = c.node(name);
            assert_eq!(n.ready_status(), "Unknown");
            assert!(taint_names(&n).contains(&"node.kubernetes.io/unreachable:NoSchedule".into()));
            assert!(
                no_execute(&n).is_none(),
                "master disruption mode adds no NoExecute taint to {name}"
            );
        }
        assert!(c.pod("web").unwrap().metadata.deletion_timestamp.is_none());
    }

    #[test]
    fn cordoning_a_node_through_the_api_taints_it_unschedulable() {
        let mut c = Cluster::new(&["node-1"]);
        let key = ObjectKey::new(Kind::Node, "", "node-1");
        c.sim
            .submit(ApiRequest::Patch {
                key: key.clone(),
                patch: serde_json::json!({"spec": {"unschedulable": true}}),
                status: false,
            })
            .unwrap();
        c.step_to(2_000, |_| {});
        assert_eq!(
            taint_names(&c.node("node-1")),
            vec!["node.kubernetes.io/unschedulable:NoSchedule"]
        );
        c.sim
            .submit(ApiRequest::Patch {
                key,
                patch: serde_json::json!({"spec": {"unschedulable": null}}),
                status: false,
            })
            .unwrap();
        c.step_to(4_000, |_| {});
        assert!(c.node("node-1").spec.taints.is_empty());
    }

    // ------------------------------------------------------------------ full stack

    fn full_stack_cluster() -> Sim {
        use crate::sim::api::types::{
            Deployment, DeploymentSpec, LabelSelector, PodTemplateSpec, Service, ServicePort,
            ServiceSpec,
        };
        let mut sim = Sim::new(SimConfig::default());
        for name in ["node-1", "node-2", "node-3"] {
            let mut n = node(name, vec![]);
            n.metadata.uid = Default::default();
            n.metadata.resource_version = Default::default();
            sim.submit(ApiRequest::Create(Object::from(n)))
                .expect("node registered");
        }
        let labels: crate::sim::api::types::StringMap =
            [("app".to_string(), "web".to_string())].into();
        let deployment = Deployment {
            metadata: ObjectMeta {
                name: "web".into(),
                namespace: "default".into(),
                ..Default::default()
            },
            spec: DeploymentSpec {
                replicas: Some(3),
                selector: LabelSelector {
                    match_labels: labels.clone(),
                    ..Default::default()
                },
                template: PodTemplateSpec {
                    metadata: ObjectMeta {
                        labels: labels.clone(),
                        ..Default::default()
                    },
                    spec: PodSpec {
                        containers: vec![Container {
                            name: "nginx".into(),
                            image: "nginx:1.27".into(),
                            ..Default::default()
                        }],
                        ..Default::default()
                    },
                },
                ..Default::default()
            },
            ..Default::default()
        };
        sim.submit(ApiRequest::Create(Object::from(deployment)))
            .expect("deployment created");
        let service = Service {
            metadata: ObjectMeta {
                name: "web".into(),
                namespace: "default".into(),
                ..Default::default()
            },
            spec: ServiceSpec {
                selector: labels,
                ports: vec![ServicePort {
                    port: 80,
                    ..Default::default()
                }],
                ..Default::default()
            },
            status: None,
        };
        sim.submit(ApiRequest::Create(Object::from(service)))
            .expect("service created");
        sim
    }

    fn web_pods(sim: &Sim) -> Vec<Pod> {
        sim.api()
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod().cloned())
            .collect()
    }

    fn ready_ips(sim: &Sim) -> Vec<String> {
        crate::sim::controllers::endpointslice::ready_endpoints(
            sim.api().list(Kind::EndpointSlice),
            "default",
            "web",
        )
    }

    #[test]
    fn a_node_failure_plays_out_as_in_a_real_cluster() {
        let mut sim = full_stack_cluster();
        sim.advance_to(60_000, usize::MAX);
        let pods = web_pods(&sim);
        assert_eq!(
            pods.iter().filter(|p| p.is_ready()).count(),
            3,
            "the Deployment is up: {pods:#?}"
        );
        assert_eq!(ready_ips(&sim).len(), 3);
        let dead = pods[0].spec.node_name.clone();
        let victims: Vec<String> = pods
            .iter()
            .filter(|p| p.spec.node_name == dead)
            .map(|p| p.metadata.name.to_string())
            .collect();
        let victim_ips: Vec<String> = pods
            .iter()
            .filter(|p| p.spec.node_name == dead)
            .filter_map(|p| p.status.pod_ip.as_deref().map(String::from))
            .collect();
        let lease = sim
            .get(&ObjectKey::new(Kind::Lease, NODE_LEASE_NAMESPACE, &dead))
            .and_then(|o| o.as_lease().cloned());
        let last_renew = lease
            .and_then(|l| l.spec.renew_time)
            .expect("the kubelet renews its lease")
            .0;
        assert!(
            last_renew + 10_000 >= 60_000,
            "renewed every 10 s: {last_renew}"
        );
        sim.inject(Fault::NodeDown {
            node: dead.to_string(),
        })
        .expect("node down");

        let node_of = |sim: &Sim| {
            sim.get(&ObjectKey::new(Kind::Node, "", &dead))
                .and_then(|o| o.as_node().cloned())
                .unwrap()
        };
        let pod_of = |sim: &Sim, name: &str| {
            sim.get(&ObjectKey::new(Kind::Pod, "default", name))
                .and_then(|o| o.as_pod().cloned())
        };
        let mut t = sim.now();
        while node_of(&sim).ready_status() == "True" {
            t += 100;
            assert!(t < 200_000, "the node never went Unknown");
            sim.advance_to(t, usize::MAX);
        }
        let unknown_after = t - last_renew;
        assert!(
            (50_000..=60_500).contains(&unknown_after),
            "Unknown {unknown_after} ms after the last renewal"
        );
        sim.advance_to(t + 1_000, usize::MAX);
        for v in &victims {
            assert!(!pod_of(&sim, v).unwrap().is_ready(), "{v} marked not ready");
        }
        let ips = ready_ips(&sim);
        assert!(
            victim_ips.iter().all(|ip| !ips.contains(ip)),
            "endpoints drop the dead node's pods: {ips:?}"
        );
        assert!(
            pod_of(&sim, &victims[0])
                .unwrap()
                .metadata
                .deletion_timestamp
                .is_none(),
            "not replaced yet"
        );

        sim.advance_to(t + 10_000, usize::MAX);
        let tainted = no_execute(&node_of(&sim))
            .and_then(|x| x.time_added)
            .expect("unreachable:NoExecute")
            .0;
        sim.advance_to(tainted + 299_000, usize::MAX);
        assert!(
            pod_of(&sim, &victims[0])
                .unwrap()
                .metadata
                .deletion_timestamp
                .is_none(),
            "tolerated for 300 s"
        );
        sim.advance_to(tainted + 301_000, usize::MAX);
        for v in &victims {
            let p = pod_of(&sim, v).expect("stays Terminating: no kubelet to confirm");
            assert!(
                p.metadata.deletion_timestamp.is_some(),
                "{v} evicted after 300 s"
            );
        }
        let evicted_after = tainted + 301_000 - last_renew;
        assert!(
            (350_000..=375_000).contains(&evicted_after),
            "evicted ≈ 350–360 s after the failure: {evicted_after}"
        );

        sim.advance_to(tainted + 361_000, usize::MAX);
        let live: Vec<Pod> = web_pods(&sim)
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect();
        assert_eq!(live.len(), 3, "the ReplicaSet replaced the evicted pods");
        assert!(
            live.iter().all(|p| p.spec.node_name != dead),
            "the scheduler avoids the unreachable node"
        );
        assert_eq!(live.iter().filter(|p| p.is_ready()).count(), 3);
        assert_eq!(ready_ips(&sim).len(), 3);

        sim.inject(Fault::NodeUp {
            node: dead.to_string(),
        })
        .expect("node up");
        let back = sim.now();
        sim.advance_to(back + 60_000, usize::MAX);
        assert_eq!(node_of(&sim).ready_status(), "True");
        assert!(
            node_of(&sim).spec.taints.is_empty(),
            "taints removed: {:?}",
            taint_names(&node_of(&sim))
        );
        for v in &victims {
            assert!(
                pod_of(&sim, v).is_none(),
                "the returning kubelet finished deleting {v}"
            );
        }
    }
}
