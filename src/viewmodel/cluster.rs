//! The cluster view's model: nodes as cards (or dense tiles) with capacity bars, pods as chips.
//!
//! A pod's STATUS text is computed exactly as `kubectl get pods` prints it (kubectl's `printPod`),
//! so what the learner sees on a chip matches what they will see in a real terminal.
//!
//! The same view must stay cheap from 3 nodes to 1,000 nodes and 10,000 pods, so besides the
//! one-shot [`ClusterView::build`] there is [`ClusterCache`]: it follows the API server's watch
//! history like an informer and rebuilds only the nodes whose pods or status changed, keeping every
//! unchanged [`NodeView`] as the same `Rc` (which is what lets the page skip redrawing it). Above
//! [`DENSE_NODES`] nodes or [`DENSE_PODS`] pods the page switches to dense tiles with per-node
//! [`HealthCounts`] and an aggregate row of [`Bucket`]s instead of one chip per pod.
//!
//! A pod that mounts PersistentVolumeClaims carries a [`ClaimChip`] for each. Claims and volumes
//! change without their pod changing, so the cache keeps the set of pods that mount claims and,
//! when a claim (or its volume) changes, rebuilds the chips of those among them that mount it;
//! pods without claims never enter the set.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::claims::ClaimChip;
use super::format::{format_bytes, format_cpu, parse_bytes, parse_cpu_millis, percent};
use crate::sim::api::apiserver::ApiServer;
use crate::sim::api::storage::{claim_kind, str_at, volume_kind, ZONE_LABEL};
use crate::sim::api::types::{
    cmp_bytes, find_condition, Kind, Millis, Node, Object, ObjectKey, Pod, Str, Time,
};
use crate::sim::api::WatchEventType;
use crate::sim::kubectl::printers::{node_status, pod_summary};
use crate::sim::time::human_age;
use crate::sim::world::Sim;
use crate::sort::{CollectTree, StableSort};
use crate::vec_map::{SlotMap, VecMap};

/// The visual family of a pod: colour, glyph and label always travel together so the state is
/// readable without colour (shape and text carry it too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PodHealth {
    /// Pending with no node yet: waiting for the scheduler (or unschedulable).
    Unscheduled,
    /// Bound to a node, containers not running yet (ContainerCreating, pulling).
    Starting,
    /// Running but not Ready (readiness probe failing, or still starting up).
    NotReady,
    /// Running and Ready: serving.
    Ready,
    /// Crash-looping, failing to pull, Failed, Error, OOMKilled.
    Failing,
    /// Succeeded / Completed.
    Completed,
    /// Being deleted (deletionTimestamp set).
    Terminating,
    /// The node stopped reporting: the status is stale.
    Unknown,
}

impl PodHealth {
    /// The CSS modifier class (`pod--ready`).
    pub fn class(self) -> &'static str {
        match self {
            PodHealth::Unscheduled => "tone-unscheduled",
            PodHealth::Starting => "tone-starting",
            PodHealth::NotReady => "tone-notready",
            PodHealth::Ready => "tone-ready",
            PodHealth::Failing => "tone-failing",
            PodHealth::Completed => "tone-completed",
            PodHealth::Terminating => "tone-terminating",
            PodHealth::Unknown => "tone-unknown",
        }
    }

    /// A glyph whose shape alone tells the state apart (for colour-blind readers and print).
    pub fn glyph(self) -> &'static str {
        match self {
            PodHealth::Unscheduled => "◌",
            PodHealth::Starting => "◔",
            PodHealth::NotReady => "◐",
            PodHealth::Ready => "●",
            PodHealth::Failing => "✕",
            PodHealth::Completed => "✓",
            PodHealth::Terminating => "⊘",
            PodHealth::Unknown => "?",
        }
    }

    /// The legend's words.
    pub fn label(self) -> &'static str {
        match self {
            PodHealth::Unscheduled => "Unscheduled",
            PodHealth::Starting => "Starting",
            PodHealth::NotReady => "Not ready",
            PodHealth::Ready => "Ready",
            PodHealth::Failing => "Failing",
            PodHealth::Completed => "Completed",
            PodHealth::Terminating => "Terminating",
            PodHealth::Unknown => "Unknown",
        }
    }

    /// Every pod health, in legend order.
    pub const ALL: [PodHealth; 8] = [
        PodHealth::Unscheduled,
        PodHealth::Starting,
        PodHealth::NotReady,
        PodHealth::Ready,
        PodHealth::Failing,
        PodHealth::Completed,
        PodHealth::Terminating,
        PodHealth::Unknown,
    ];
}

/// Which visual family a pod's state belongs to.
pub fn pod_health(pod: &Pod, status: &str) -> PodHealth {
    if pod.metadata.deletion_timestamp.is_some() {
        return if status == "Unknown" {
            PodHealth::Unknown
        } else {
            PodHealth::Terminating
        };
    }
    if pod.status.phase == "Unknown" || status == "Unknown" {
        return PodHealth::Unknown;
    }
    const FAILING: [&str; 12] = [
        "CrashLoopBackOff",
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "Error",
        "OOMKilled",
        "Failed",
        "Evicted",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
        "ContainerCannotRun",
    ];
    if FAILING.contains(&status)
        || pod.status.phase == "Failed"
        || status.starts_with("ExitCode:")
        || status.starts_with("Signal:")
        || status.starts_with("Init:") && FAILING.iter().any(|f| status.ends_with(f))
    {
        return PodHealth::Failing;
    }
    if pod.status.phase == "Succeeded" || status == "Completed" {
        return PodHealth::Completed;
    }
    if pod.spec.node_name.is_empty() {
        return PodHealth::Unscheduled;
    }
    if pod.status.phase == "Running" {
        return if pod.is_ready() {
            PodHealth::Ready
        } else {
            PodHealth::NotReady
        };
    }
    PodHealth::Starting
}

/// One pod chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodView {
    pub name: Str,
    pub namespace: Str,
    /// `spec.nodeName`, empty while unscheduled.
    pub node: Str,
    /// `status.phase` (`Pending` when the kubelet has not written one yet).
    pub phase: Str,
    /// The Ready condition.
    pub ready: bool,
    /// kubectl's STATUS column.
    pub status: String,
    /// kubectl's READY column.
    pub ready_text: String,
    /// Total container restarts.
    pub restarts: i32,
    /// kubectl's RESTARTS column.
    pub restarts_text: String,
    pub health: PodHealth,
    /// The controlling owner (`ReplicaSet/web-7d4b9c8f6`), if any.
    pub owner: Option<String>,
    /// kubectl's AGE column.
    pub age: String,
    /// The scheduler's reason when it could not place the pod (PodScheduled=False message).
    pub unschedulable: Option<String>,
    pub uid: Str,
    /// The claims it mounts, in the order of its volumes (empty for most pods).
    pub claims: Vec<ClaimChip>,
}

impl PodView {
    /// Builds the chip model of `pod` at simulated time `now`.
    pub fn of(pod: &Pod, now: Millis) -> PodView {
        let summary = pod_summary(pod);
        let status = summary.status.clone();
        let health = pod_health(pod, &status);
        let unschedulable = find_condition(&pod.status.conditions, "PodScheduled")
            .filter(|c| c.status == "False")
            .map(|c| {
                c.message
                    .as_deref()
                    .or(c.reason.as_deref())
                    .unwrap_or_default()
                    .to_string()
            });
        PodView {
            name: pod.metadata.name.clone(),
            namespace: pod.metadata.namespace.clone(),
            node: pod.spec.node_name.clone(),
            phase: if pod.status.phase.is_empty() {
                "Pending".into()
            } else {
                pod.status.phase.clone()
            },
            ready: pod.is_ready(),
            restarts_text: summary.restarts_column(now),
            restarts: summary.restarts,
            ready_text: summary.ready,
            health,
            owner: pod
                .metadata
                .controller_ref()
                .map(|o| format!("{}/{}", o.kind, o.name)),
            age: pod
                .metadata
                .creation_timestamp
                .map(|t| human_age(now.saturating_sub(t.0)))
                .unwrap_or_else(|| "<unknown>".into()),
            unschedulable,
            uid: pod.metadata.uid.clone(),
            status,
            claims: Vec::new(),
        }
    }

    /// True when no controller owns the pod (no ownerReference with `controller: true`): a pod
    /// created by hand, or one a relabel released from its ReplicaSet. Nothing recreates it if
    /// it goes, and nothing counts it any more.
    pub fn orphan(&self) -> bool {
        self.owner.is_none()
    }

    /// A one-line description for tooltips and screen readers.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "Pod {}: {} ({}), ready {}",
            self.name,
            self.status,
            self.health.label(),
            self.ready_text
        );
        if self.restarts > 0 {
            s.push_str(&format!(", {} restarts", self.restarts));
        }
        if !self.node.is_empty() {
            s.push_str(&format!(", on {}", self.node));
        }
        if self.orphan() {
            s.push_str(&format!(", {ORPHAN_LABEL}"));
        }
        s
    }
}

/// What a pod without a controller is marked with, for screen readers and tooltips.
pub const ORPHAN_LABEL: &str = "orphan: no controller owns this pod";

/// One capacity bar: requested vs allocatable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Usage {
    pub used: u64,
    pub total: u64,
    /// 0..=100: how much of the bar is filled.
    pub pct: u32,
    /// `350m / 4` style text.
    pub text: String,
    /// Requests exceed allocatable (possible after a node shrinks, or for pods bound by hand).
    pub over: bool,
}

impl Usage {
    fn new(used: u64, total: u64, fmt: fn(u64) -> String) -> Usage {
        Usage {
            used,
            total,
            pct: percent(used, total),
            text: format!("{} / {}", fmt(used), fmt(total)),
            over: used > total,
        }
    }
}

/// The sum of a pod's container requests (cpu millicores, memory bytes), as the scheduler counts
/// them for a node's "Allocated resources" (init containers: the max, as Kubernetes does).
pub fn pod_requests(pod: &Pod) -> (u64, u64) {
    let sum = |cs: &[crate::sim::api::types::Container]| -> (u64, u64) {
        cs.iter().fold((0, 0), |(c, m), ct| {
            let req = ct.resources.as_ref().map(|r| &r.requests);
            let cpu = req
                .and_then(|r| r.get("cpu"))
                .and_then(|q| parse_cpu_millis(q))
                .unwrap_or(0);
            let mem = req
                .and_then(|r| r.get("memory"))
                .and_then(|q| parse_bytes(q))
                .unwrap_or(0);
            (c + cpu, m + mem)
        })
    };
    let (c, m) = sum(&pod.spec.containers);
    let (ic, im) = pod
        .spec
        .init_containers
        .iter()
        .map(|ct| sum(std::slice::from_ref(ct)))
        .fold((0, 0), |(a, b), (x, y)| (a.max(x), b.max(y)));
    (c.max(ic), m.max(im))
}

/// Above this many nodes the cluster view opens in dense tiles: a card per node stops being
/// readable (and cheap to draw) somewhere past a few screens of cards.
pub const DENSE_NODES: usize = 60;
/// Above this many pods the cluster view opens in dense tiles: one chip per pod stops being
/// something a person can scan.
pub const DENSE_PODS: usize = 600;
/// How many unscheduled pods the dense view still shows as chips (the rest as a count), so the
/// first few are one click from the scheduler's explanation.
pub const DENSE_TRAY_CHIPS: usize = 6;

/// Pods counted by [`PodHealth`], per node and for the whole cluster: what a dense tile and the
/// aggregate row draw instead of one chip per pod.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HealthCounts([u32; PodHealth::ALL.len()]);

impl HealthCounts {
    /// Counts one more pod of `health`.
    pub fn add(&mut self, health: PodHealth) {
        self.0[health as usize] += 1;
    }

    /// Pods of `health`.
    pub fn get(&self, health: PodHealth) -> u32 {
        self.0[health as usize]
    }

    /// Every pod counted.
    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// Adds another set of counts (a node's into the cluster's).
    pub fn merge(&mut self, other: &HealthCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    /// Pods in `bucket`.
    pub fn bucket(&self, bucket: Bucket) -> u32 {
        bucket.healths().iter().map(|t| self.get(*t)).sum()
    }

    /// The non-zero counts, in legend order.
    pub fn present(&self) -> impl Iterator<Item = (PodHealth, u32)> + '_ {
        PodHealth::ALL
            .iter()
            .map(|t| (*t, self.get(*t)))
            .filter(|(_, n)| *n > 0)
    }
}

/// The aggregate row of the dense view: the questions a person asks of 10,000 pods first (how
/// many serve, how many wait, how many are stuck, crashing, going away, or unheard of).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bucket {
    /// Running and Ready.
    Ready,
    /// Pending: not scheduled yet, or scheduled and still starting (pulling, creating).
    Pending,
    /// Running, but the Ready condition is not True.
    RunningNotReady,
    /// CrashLoopBackOff, image pull errors, Error, OOMKilled, Failed.
    Failing,
    /// deletionTimestamp set, the kubelet still shutting it down.
    Terminating,
    /// The node stopped reporting, so the pod's state is stale.
    Unknown,
    /// Succeeded.
    Completed,
}

impl Bucket {
    /// Every bucket, in the order the row shows them.
    pub const ALL: [Bucket; 7] = [
        Bucket::Ready,
        Bucket::Pending,
        Bucket::RunningNotReady,
        Bucket::Failing,
        Bucket::Terminating,
        Bucket::Unknown,
        Bucket::Completed,
    ];

    /// The pod healths a bucket gathers.
    pub fn healths(self) -> &'static [PodHealth] {
        match self {
            Bucket::Ready => &[PodHealth::Ready],
            Bucket::Pending => &[PodHealth::Unscheduled, PodHealth::Starting],
            Bucket::RunningNotReady => &[PodHealth::NotReady],
            Bucket::Failing => &[PodHealth::Failing],
            Bucket::Terminating => &[PodHealth::Terminating],
            Bucket::Unknown => &[PodHealth::Unknown],
            Bucket::Completed => &[PodHealth::Completed],
        }
    }

    /// The health whose colour and glyph the bucket borrows.
    pub fn health(self) -> PodHealth {
        self.healths()[self.healths().len() - 1]
    }

    /// The row's words.
    pub fn label(self) -> &'static str {
        match self {
            Bucket::Ready => "Ready",
            Bucket::Pending => "Pending",
            Bucket::RunningNotReady => "Running, not ready",
            Bucket::Failing => "CrashLoop / failing",
            Bucket::Terminating => "Terminating",
            Bucket::Unknown => "Unknown",
            Bucket::Completed => "Completed",
        }
    }

    /// A stable id for test ids and CSS (`dense-count-pending`).
    pub fn id(self) -> &'static str {
        match self {
            Bucket::Ready => "ready",
            Bucket::Pending => "pending",
            Bucket::RunningNotReady => "notready",
            Bucket::Failing => "failing",
            Bucket::Terminating => "terminating",
            Bucket::Unknown => "unknown",
            Bucket::Completed => "completed",
        }
    }
}

/// A node's condition as a dense tile draws it: colour, glyph and words together, so NotReady,
/// Unknown, powered-off and cordoned nodes differ in shape as well as colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    Ready,
    NotReady,
    /// No Ready condition heard recently (the node controller set Unknown, or none yet).
    Unknown,
    /// The machine is powered off (a NodeDown fault), whatever the API still says.
    Down,
}

impl NodeState {
    /// The CSS modifier class (shared with the cards).
    pub fn class(self) -> &'static str {
        match self {
            NodeState::Ready => "node--ready",
            NodeState::NotReady => "node--notready",
            NodeState::Unknown => "node--unknown",
            NodeState::Down => "node--down",
        }
    }

    /// A glyph whose shape alone tells the state apart.
    pub fn glyph(self) -> &'static str {
        match self {
            NodeState::Ready => "✓",
            NodeState::NotReady => "✕",
            NodeState::Unknown => "?",
            NodeState::Down => "■",
        }
    }
}

/// One node card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeView {
    pub name: String,
    /// Its `topology.kubernetes.io/zone` label, shown beside its name: where a zonal disk can
    /// follow a pod. None without the label.
    pub zone: Option<String>,
    /// The Ready condition's status: `True`, `False` or `Unknown`.
    pub ready: String,
    /// kubectl's STATUS column (`Ready`, `NotReady`, `Unknown`, `…,SchedulingDisabled`).
    pub status: String,
    /// The machine is running (false after a NodeDown fault). None when there is no machine.
    pub machine_up: Option<bool>,
    pub cpu: Usage,
    pub memory: Usage,
    pub pods_usage: Usage,
    /// Pods bound to this node, oldest first (so a new pod appears at the end). Shared: a pod
    /// that did not change keeps the same `Rc`, so its chip is not redrawn.
    pub pods: Vec<Rc<PodView>>,
    /// The node's pods counted by health, for the dense tile.
    pub counts: HealthCounts,
    /// `key=value:Effect` for each taint.
    pub taints: Vec<String>,
    pub unschedulable: bool,
    /// The Ready condition's reason and message, for the tooltip.
    pub ready_reason: String,
}

impl NodeView {
    /// The readiness part of [`NodeView::status`] (`Ready`, `NotReady`, `Unknown`): the card's
    /// pill, which leaves a cordon to a line of its own so that a narrow card does not cut it.
    pub fn readiness(&self) -> &str {
        self.status.split(',').next().unwrap_or_default()
    }

    /// No Ready condition at all: the node's kubelet has not posted a status yet (a scenario
    /// opens at t=0, as `kubeloop run` starts it, before any kubelet has run), which kubectl
    /// prints as `Unknown`. A condition the node controller set to Unknown prints `NotReady`.
    pub fn awaiting_kubelet(&self) -> bool {
        self.readiness() == "Unknown"
    }

    /// The lower-case form used in `data-ready` (`true`, `false`, `unknown`).
    pub fn ready_attr(&self) -> String {
        self.ready.to_ascii_lowercase()
    }

    /// The condition a dense tile shows.
    pub fn state(&self) -> NodeState {
        if self.machine_up == Some(false) {
            return NodeState::Down;
        }
        match self.ready.as_str() {
            "True" => NodeState::Ready,
            "False" => NodeState::NotReady,
            _ => NodeState::Unknown,
        }
    }

    /// A one-line summary for a tile's tooltip and screen readers: the status, the pod count
    /// against capacity, and the pods by health.
    pub fn describe(&self) -> String {
        let mut s = format!("Node {}: {}", self.name, self.status);
        if self.machine_up == Some(false) {
            s.push_str(", machine powered off");
        }
        s.push_str(&format!(
            "; {} of {} pods",
            self.pods_usage.used, self.pods_usage.total
        ));
        let parts: Vec<String> = self
            .counts
            .present()
            .map(|(t, n)| format!("{n} {}", t.label().to_ascii_lowercase()))
            .collect();
        if !parts.is_empty() {
            s.push_str(&format!(" ({})", parts.join(", ")));
        }
        s
    }
}

/// Everything the cluster view draws.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterView {
    /// In name order. Shared: a node that did not change keeps the same `Rc` between frames.
    pub nodes: Vec<Rc<NodeView>>,
    /// Pods with no node yet (or bound to a node that does not exist), oldest first.
    pub unscheduled: Rc<Vec<Rc<PodView>>>,
    /// Every pod counted by health (the legend and the dense view's aggregate row).
    pub counts: HealthCounts,
    /// Bumped by [`ClusterCache`] whenever anything above changed, so the page can compare two
    /// views in O(1) instead of pod by pod. Always 0 from [`ClusterView::build`].
    pub revision: u64,
}

/// What a pod adds to its node's bars: its requests, if it still holds them.
fn holds_resources(pod: &Pod) -> bool {
    pod.status.phase != "Succeeded" && pod.status.phase != "Failed"
}

/// The order pods are listed in: creation time, then namespace and name.
type PodOrder = (Option<Time>, String, String);

fn pod_order(pod: &Pod) -> PodOrder {
    (
        pod.metadata.creation_timestamp,
        pod.metadata.namespace.to_string(),
        pod.metadata.name.to_string(),
    )
}

/// One pod as the view needs it: its chip and what it adds to its node's bars.
#[derive(Clone, Debug)]
struct PodPart {
    view: Rc<PodView>,
    /// (cpu millicores, memory bytes) when it holds resources.
    requests: Option<(u64, u64)>,
}

impl PodPart {
    /// The pod's part; with the store, its chip shows the claims it mounts.
    fn of(pod: &Pod, now: Millis, api: Option<&ApiServer>) -> PodPart {
        let mut view = PodView::of(pod, now);
        if let Some(api) = api {
            view.claims = ClaimChip::of_pod(pod, api);
        }
        PodPart {
            view: Rc::new(view),
            requests: holds_resources(pod).then(|| pod_requests(pod)),
        }
    }
}

/// Builds one node's view from its pods (already in display order).
fn node_view<'a>(
    node: &Node,
    pods: impl Iterator<Item = &'a PodPart>,
    machine_up: Option<bool>,
) -> NodeView {
    let name = node.metadata.name.clone();
    let mut views = Vec::new();
    let mut counts = HealthCounts::default();
    let (mut cpu_used, mut mem_used, mut n_pods) = (0, 0, 0);
    for p in pods {
        // Allocated resources count pods that still hold them: not Succeeded/Failed.
        if let Some((c, m)) = p.requests {
            cpu_used += c;
            mem_used += m;
            n_pods += 1;
        }
        counts.add(p.view.health);
        views.push(p.view.clone());
    }
    let alloc = if node.status.allocatable.is_empty() {
        &node.status.capacity
    } else {
        &node.status.allocatable
    };
    let cpu_total = alloc
        .get("cpu")
        .and_then(|q| parse_cpu_millis(q))
        .unwrap_or(0);
    let mem_total = alloc
        .get("memory")
        .and_then(|q| parse_bytes(q))
        .unwrap_or(0);
    let pods_total = alloc
        .get("pods")
        .and_then(|q| q.parse::<u64>().ok())
        .unwrap_or(110);
    let ready_cond = find_condition(&node.status.conditions, "Ready");
    let ready = node.ready_status().to_string();
    let status = node_status(node);
    NodeView {
        // An empty value is no zone (`GetZoneKey` reads it so), and would draw an empty tag.
        zone: node
            .metadata
            .labels
            .get(ZONE_LABEL)
            .filter(|z| !z.is_empty())
            .map(|z| z.to_string()),
        machine_up,
        ready,
        status,
        cpu: Usage::new(cpu_used, cpu_total, format_cpu),
        memory: Usage::new(mem_used, mem_total, format_bytes),
        pods_usage: Usage::new(n_pods, pods_total, |n| n.to_string()),
        pods: views,
        counts,
        taints: node
            .spec
            .taints
            .iter()
            .map(|t| match &t.value {
                Some(v) if !v.is_empty() => format!("{}={}:{}", t.key, v, t.effect),
                _ => format!("{}:{}", t.key, t.effect),
            })
            .collect(),
        unschedulable: node.spec.unschedulable,
        ready_reason: ready_cond
            .map(|c| {
                let r = c.reason.as_deref().unwrap_or_default().to_string();
                match &c.message {
                    Some(m) if !m.is_empty() => format!("{r}: {m}"),
                    _ => r,
                }
            })
            .unwrap_or_else(|| "no Ready condition reported yet".into()),
        name: name.to_string(),
    }
}

impl ClusterView {
    /// Builds the view of everything in `sim`, claims included.
    pub fn of(sim: &Sim) -> ClusterView {
        let api = sim.api();
        let up = machine_list(sim).into_iter().collect_map();
        Self::assemble(
            api.list(Kind::Node).filter_map(|o| o.as_node()),
            api.list(Kind::Pod).filter_map(|o| o.as_pod()),
            &up,
            sim.now(),
            Some(api),
        )
    }

    /// Builds the view from the live objects, without their claims. `machine_up` tells which
    /// machines run.
    pub fn build<'a>(
        nodes: impl IntoIterator<Item = &'a Node>,
        pods: impl IntoIterator<Item = &'a Pod>,
        machine_up: &BTreeMap<String, bool>,
        now: Millis,
    ) -> ClusterView {
        Self::assemble(nodes, pods, machine_up, now, None)
    }

    fn assemble<'a>(
        nodes: impl IntoIterator<Item = &'a Node>,
        pods: impl IntoIterator<Item = &'a Pod>,
        machine_up: &BTreeMap<String, bool>,
        now: Millis,
        api: Option<&ApiServer>,
    ) -> ClusterView {
        let node_list: Vec<&Node> = nodes.into_iter().collect();
        let names: BTreeSet<&str> = node_list
            .iter()
            .map(|n| n.metadata.name.as_str())
            .collect_set();
        let mut by_node: BTreeMap<&str, Vec<(PodOrder, PodPart)>> = BTreeMap::new();
        let mut unscheduled: Vec<(PodOrder, PodPart)> = Vec::new();
        for pod in pods {
            let part = (pod_order(pod), PodPart::of(pod, now, api));
            if names.contains(pod.spec.node_name.as_str()) {
                by_node
                    .entry(pod.spec.node_name.as_str())
                    .or_default()
                    .push(part);
            } else {
                unscheduled.push(part);
            }
        }
        unscheduled.stable_sort_by(|a, b| a.0.cmp(&b.0));
        let mut view = ClusterView::default();
        for (_, p) in &unscheduled {
            view.counts.add(p.view.health);
        }
        view.unscheduled = Rc::new(unscheduled.into_iter().map(|(_, p)| p.view).collect());
        for node in node_list {
            let mut pods = by_node
                .remove(node.metadata.name.as_str())
                .unwrap_or_default();
            pods.stable_sort_by(|a, b| a.0.cmp(&b.0));
            let up = machine_up.get(node.metadata.name.as_str()).copied();
            let nv = node_view(node, pods.iter().map(|(_, p)| p), up);
            view.counts.merge(&nv.counts);
            view.nodes.push(Rc::new(nv));
        }
        view
    }

    /// How many pods no controller owns ([`PodView::orphan`]): the legend explains their mark
    /// while there are any.
    pub fn orphans(&self) -> usize {
        self.all_pods().filter(|p| p.orphan()).count()
    }

    /// Every pod in the view, on nodes and unscheduled.
    pub fn all_pods(&self) -> impl Iterator<Item = &PodView> {
        self.nodes
            .iter()
            .flat_map(|n| n.pods.iter())
            .chain(self.unscheduled.iter())
            .map(|p| &**p)
    }

    /// How many pods the view holds.
    pub fn pod_count(&self) -> usize {
        self.counts.total() as usize
    }

    /// The "waiting for a node" tray's caption: how many pods wait, and when none does, why
    /// (with no pods at all there is nothing the scheduler could have placed).
    pub fn tray_caption(&self) -> String {
        match (self.unscheduled.len(), self.pod_count()) {
            (0, 0) => "none: there are no pods yet".to_string(),
            (0, _) => "none: the scheduler has placed every pod".to_string(),
            (n, _) => format!("{n} pending: not bound to a node yet"),
        }
    }

    /// Counts per health, for the legend.
    pub fn tone_counts(&self) -> BTreeMap<PodHealth, usize> {
        self.counts
            .present()
            .map(|(t, n)| (t, n as usize))
            .collect_map()
    }

    /// True when the cluster is too big for cards: the page opens the dense tiles instead
    /// (a person can still switch back).
    pub fn dense_by_default(&self) -> bool {
        is_dense(self.nodes.len(), self.pod_count())
    }

    /// True when so many chips would run an endless animation that they should hold still:
    /// more than [`ENDLESS_ANIMATIONS_MAX`] pods starting or failing at once. Every such chip is
    /// a layer of its own that the browser updates on every frame: with the 75 starting pods of a
    /// 300-pod rollout they took about a fifth of the main thread (layerize, style and prepaint),
    /// so past the cap the stripes and rings stay drawn but still, and a lesson-sized cluster
    /// (a handful at a time) keeps every animation.
    pub fn calm_motion(&self) -> bool {
        let endless = self.counts.get(PodHealth::Starting) + self.counts.get(PodHealth::Failing);
        endless as usize > ENDLESS_ANIMATIONS_MAX
    }

    /// How many node cards the card layout draws, in name order: all of them while the cluster
    /// is small, else as many as keep within [`CARD_PODS_MAX`] chips and [`CARD_NODES_MAX`]
    /// cards (at least one). Someone who picks Cards for 10,000 pods gets the first cards and a
    /// pointer to the dense view, not a page that takes seconds to draw each frame.
    pub fn cards_shown(&self) -> usize {
        let mut pods = 0;
        for (i, n) in self.nodes.iter().enumerate() {
            pods += n.pods.len();
            if i >= CARD_NODES_MAX || (i > 0 && pods > CARD_PODS_MAX) {
                return i;
            }
        }
        self.nodes.len()
    }

    /// How many chips the card layout draws: the tray of pods without a node and the pods of
    /// the cards it shows ([`ClusterView::cards_shown`]).
    pub fn chips_drawn(&self) -> usize {
        let on_cards: usize = self
            .nodes
            .iter()
            .take(self.cards_shown())
            .map(|n| n.pods.len())
            .sum();
        self.unscheduled.len() + on_cards
    }

    /// True when the card layout draws so many chips that they should change state without
    /// animating, as at [`BRISK_SPEED`]: more than [`ANIMATED_CHIPS_MAX`]. In a rollout of 300
    /// pods at 1× the entrance and exit fades of the chips that come and go (dozens a second,
    /// most scrolled out of sight, which Chromium animates on the main thread) cost frames of
    /// 50-70 ms; without them, none (`browser-bench.js --frames --only "300 pods"`). A few pods
    /// among hundreds cannot be followed by eye anyway; a lesson-sized cluster keeps them all.
    pub fn crowded_motion(&self) -> bool {
        self.chips_drawn() > ANIMATED_CHIPS_MAX
    }
}

/// The most chips the card layout animates (see [`ClusterView::crowded_motion`]).
pub const ANIMATED_CHIPS_MAX: usize = 150;

/// The most pods whose chips run an endless animation at once (the moving stripes of a starting
/// pod, the ring of a failing one; see [`ClusterView::calm_motion`]).
pub const ENDLESS_ANIMATIONS_MAX: usize = 24;

/// The slowest speed at which chips change state without animating (see [`brisk_motion`]).
pub const BRISK_SPEED: f64 = 25.0;

/// True when the clock runs so fast that pod chips should change state without their entrance,
/// exit and endless animations. At 25× a chip's 0.45-s entrance spans 11 simulated seconds,
/// longer than the states it would show. And the browser runs the animations of chips scrolled
/// out of view on the main thread (it does not give the compositor an animation it judges
/// invisible): in a 100-pod rollout at 100× that was several frames of 50-80 ms.
pub fn brisk_motion(speed: f64) -> bool {
    speed >= BRISK_SPEED
}

/// The most node cards the card layout draws (see [`ClusterView::cards_shown`]).
pub const CARD_NODES_MAX: usize = 2 * DENSE_NODES;
/// The most pod chips the card layout's node cards draw (see [`ClusterView::cards_shown`]).
pub const CARD_PODS_MAX: usize = 2 * DENSE_PODS;

/// The size rule behind [`ClusterView::dense_by_default`]: more than [`DENSE_NODES`] nodes or
/// [`DENSE_PODS`] pods.
pub fn is_dense(nodes: usize, pods: usize) -> bool {
    nodes > DENSE_NODES || pods > DENSE_PODS
}

/// The cluster view kept between frames, following the API server's watch history the way an
/// informer follows a watch: each [`ClusterCache::update`] reads only the changes since the last
/// one and rebuilds only the nodes they touch. An unchanged node keeps its `Rc<NodeView>`, and an
/// update that changes nothing visible keeps the whole `Rc<ClusterView>` (and its revision).
///
/// Time-relative texts (a pod's `age`, "(15s ago)" after its restarts) are computed when the pod
/// last changed, not on every frame: the cluster view does not show them (the inspector and
/// `kubectl` do, from fresh data). [`ClusterView::build`] computes them fresh.
#[derive(Debug, Default)]
pub struct ClusterCache {
    /// False until the first full build, and after [`ClusterCache::invalidate`].
    valid: bool,
    /// The store's resourceVersion this cache reflects.
    seen_rv: u64,
    nodes: SlotMap<Str, Rc<Object>>,
    pods: SlotMap<ObjectKey, (Str, PodOrder)>,
    /// `spec.nodeName` ("" for none) → pods in display order.
    by_node: SlotMap<Str, BTreeMap<PodOrder, PodPart>>,
    /// The pods that mount claims (most pods mount none).
    claim_pods: BTreeSet<ObjectKey>,
    /// Each machine's power state as last seen (NodeDown changes it without an API write).
    machines: Vec<(String, bool)>,
    /// [`Sim::machines_generation`] when `machines` was taken: while it holds, the list is not
    /// compared again (a thousand names on every frame of an idle big cluster).
    machines_generation: u64,
    node_views: SlotMap<String, Rc<NodeView>>,
    view: Rc<ClusterView>,
    revision: u64,
    /// Per-kind change counters, bumped once per update that saw a change of that kind: other
    /// memoised views (the events list) key on them instead of the store-wide resourceVersion.
    kind_revisions: VecMap<Kind, u64>,
    /// Counts every update that changed anything at all, for the same purpose (all kinds).
    full_builds: u64,
}

impl ClusterCache {
    /// Forgets everything: the next update rebuilds from the store (after the session was
    /// replaced, when the watch history means nothing any more).
    pub fn invalidate(&mut self) {
        self.valid = false;
    }

    /// The current view (as of the last update).
    pub fn view(&self) -> Rc<ClusterView> {
        self.view.clone()
    }

    /// How many times objects of `kind` were seen changing (an update with several changes of
    /// one kind counts once; a full rebuild counts for every kind).
    pub fn kind_revision(&self, kind: Kind) -> u64 {
        self.full_builds + self.kind_revisions.get(&kind).copied().unwrap_or(0)
    }

    /// How many times the cache rebuilt everything from the store (the first update, a new
    /// session, a gap too long to replay), as opposed to following the changes.
    pub fn rebuilds(&self) -> u64 {
        self.full_builds
    }

    /// Brings the view up to date with `sim`. Returns true when the view changed.
    pub fn update(&mut self, sim: &Sim) -> bool {
        let api = &sim.api();
        let rv = api.resource_version();
        let now = sim.now();
        let machines_changed = sim.machines_generation() != self.machines_generation
            && (self.machines.len() != sim.machines().len()
                || self
                    .machines
                    .iter()
                    .zip(sim.machines())
                    .any(|((a, up_a), (b, m))| a != b || *up_a != m.up));
        if self.valid && rv == self.seen_rv && !machines_changed {
            return false;
        }
        // A long gap is cheaper to rebuild than to replay, and a gap the history no longer
        // covers (or a store that went backwards: a new session) can only be rebuilt.
        let budget = 2 * (self.pods.len() + self.nodes.len()) as u64 + 1_000;
        let events = if !self.valid || rv < self.seen_rv || rv - self.seen_rv > budget {
            None
        } else {
            api.events_since(self.seen_rv).ok()
        };
        let Some(events) = events else {
            self.rebuild(sim);
            return true;
        };
        self.seen_rv = rv;
        // The last change of each object wins; earlier ones within the same update are moot.
        let mut latest: BTreeMap<ObjectKey, Option<Rc<Object>>> = BTreeMap::new();
        let mut kinds: BTreeSet<Kind> = BTreeSet::new();
        // Claims are looked at only while some pod mounts one.
        let storage = (!self.claim_pods.is_empty())
            .then(|| claim_kind().zip(volume_kind()))
            .flatten();
        let mut touched_claims: Vec<(String, String)> = Vec::new();
        for ev in events {
            // Most changes are Events and Leases: their kind is all this needs, so no key is
            // built for them (the event carries the store's).
            let kind = ev.key.kind;
            kinds.insert(kind);
            if matches!(kind, Kind::Pod | Kind::Node) {
                let obj = (ev.type_ != WatchEventType::Deleted).then_some(ev.object);
                latest.insert((*ev.key).clone(), obj);
            } else if let Some((claims, volumes)) = storage {
                if kind == claims {
                    touched_claims.push((ev.key.namespace.to_string(), ev.key.name.to_string()));
                } else if kind == volumes {
                    let claim_ref = |f| {
                        ev.object
                            .as_custom()
                            .and_then(|v| str_at(v, &["spec", "claimRef", f]))
                    };
                    if let (Some(ns), Some(name)) = (claim_ref("namespace"), claim_ref("name")) {
                        touched_claims.push((ns.to_string(), name.to_string()));
                    }
                }
            }
        }
        // Their pods did not change, but their chips did: rebuild them as if they had.
        if !touched_claims.is_empty() {
            for pod in &self.claim_pods {
                let part = self
                    .pods
                    .get(pod)
                    .and_then(|(node, order)| self.by_node.get(node)?.get(order));
                let mounts = part.is_some_and(|p| {
                    p.view.claims.iter().any(|c| {
                        touched_claims
                            .iter()
                            .any(|(ns, name)| *ns == c.namespace && *name == c.name)
                    })
                });
                if mounts {
                    latest
                        .entry(pod.clone())
                        .or_insert_with(|| api.get(pod).cloned());
                }
            }
        }
        for k in kinds {
            *self.kind_revisions.entry(k).or_default() += 1;
        }
        let mut dirty: BTreeSet<String> = BTreeSet::new();
        let mut membership = false;
        for (key, obj) in latest {
            match key.kind {
                Kind::Node => {
                    let existed = match obj {
                        Some(o) => self.nodes.insert(key.name.clone(), o).is_some(),
                        None => self.nodes.remove(&key.name).is_some(),
                    };
                    // A node appearing or going moves its pods to or from the unscheduled tray.
                    membership |= existed != self.nodes.contains_key(&key.name);
                    dirty.insert(key.name.to_string());
                }
                _ => {
                    if let Some((node, order)) = self.pods.remove(&key) {
                        if let Some(group) = self.by_node.get_mut(&node) {
                            group.remove(&order);
                        }
                        self.claim_pods.remove(&key);
                        dirty.insert(node.to_string());
                    }
                    if let Some(pod) = obj.as_deref().and_then(Object::as_pod) {
                        let node = pod.spec.node_name.clone();
                        let order = pod_order(pod);
                        let part = PodPart::of(pod, now, Some(api));
                        if !part.view.claims.is_empty() {
                            self.claim_pods.insert(key.clone());
                        }
                        self.by_node
                            .entry(node.clone())
                            .or_default()
                            .insert(order.clone(), part);
                        self.pods.insert(key, (node.clone(), order));
                        dirty.insert(node.to_string());
                    }
                }
            }
        }
        if machines_changed {
            let before: BTreeMap<&str, bool> = self
                .machines
                .iter()
                .map(|(n, u)| (n.as_str(), *u))
                .collect_map();
            for (name, m) in sim.machines() {
                if before.get(name.as_str()) != Some(&m.up) {
                    dirty.insert(name.to_string());
                }
            }
            for (name, _) in &self.machines {
                if !sim.machines().contains_key(name.as_str()) {
                    dirty.insert(name.clone());
                }
            }
            self.machines = machine_list(sim);
            self.machines_generation = sim.machines_generation();
        }
        self.refresh(dirty, membership, sim)
    }

    /// Rebuilds the views of `dirty` node names (and the tray when needed); bumps the revision
    /// when anything visible changed.
    fn refresh(&mut self, dirty: BTreeSet<String>, membership: bool, sim: &Sim) -> bool {
        self.by_node.retain(|_, g| !g.is_empty());
        let mut changed = membership;
        let mut tray = membership;
        for name in &dirty {
            let Some(node) = self.nodes.get(name.as_str()).and_then(|o| o.as_node()) else {
                // Not a node (any more): its pods are in the tray.
                changed |= self.node_views.remove(name).is_some();
                tray = true;
                continue;
            };
            let up = sim.machines().get(name.as_str()).map(|m| m.up);
            let pods = self
                .by_node
                .get(name.as_str())
                .into_iter()
                .flat_map(|g| g.values());
            let nv = node_view(node, pods, up);
            if self.node_views.get(name).map(|v| **v != nv).unwrap_or(true) {
                self.node_views.insert(name.clone(), Rc::new(nv));
                changed = true;
            }
        }
        if !changed && !tray {
            return false;
        }
        let unscheduled = if tray {
            // The pods under names that are not nodes: both maps are in name order, so one walk
            // finds them (a lookup per node for each frame was a B-tree descent a thousand times
            // over in a big cluster, where the tray changes on nearly every frame).
            let mut nodes = self.nodes.keys().peekable();
            let mut groups = Vec::new();
            for (name, group) in &self.by_node {
                while nodes
                    .next_if(|n| cmp_bytes(n.as_bytes(), name.as_bytes()).is_lt())
                    .is_some()
                {}
                if nodes.peek().is_none_or(|n| *n != name) {
                    groups.push(group);
                }
            }
            // One group (the usual case: pods not yet scheduled, under "") is already in order.
            let list: Vec<Rc<PodView>> = match groups.as_slice() {
                [group] => group.values().map(|p| p.view.clone()).collect(),
                _ => {
                    let mut waiting: Vec<(&PodOrder, &PodPart)> =
                        groups.iter().flat_map(|g| g.iter()).collect();
                    waiting.stable_sort_by(|a, b| a.0.cmp(b.0));
                    waiting.into_iter().map(|(_, p)| p.view.clone()).collect()
                }
            };
            if *self.view.unscheduled != list {
                changed = true;
                Rc::new(list)
            } else {
                self.view.unscheduled.clone()
            }
        } else {
            self.view.unscheduled.clone()
        };
        if !changed {
            return false;
        }
        let mut counts = HealthCounts::default();
        for p in unscheduled.iter() {
            counts.add(p.health);
        }
        let nodes: Vec<Rc<NodeView>> = self.node_views.values().cloned().collect();
        for n in &nodes {
            counts.merge(&n.counts);
        }
        self.revision += 1;
        self.view = Rc::new(ClusterView {
            nodes,
            unscheduled,
            counts,
            revision: self.revision,
        });
        true
    }

    /// Builds everything from the store.
    fn rebuild(&mut self, sim: &Sim) {
        let api = &sim.api();
        let now = sim.now();
        self.valid = true;
        self.seen_rv = api.resource_version();
        self.full_builds += 1;
        self.nodes = api
            .list(Kind::Node)
            .map(|o| (o.meta().name.clone(), o.clone()))
            .collect();
        self.pods.clear();
        self.by_node.clear();
        self.claim_pods.clear();
        for o in api.list(Kind::Pod) {
            if let Some(pod) = o.as_pod() {
                let order = pod_order(pod);
                let node = pod.spec.node_name.clone();
                let part = PodPart::of(pod, now, Some(api));
                if !part.view.claims.is_empty() {
                    self.claim_pods.insert(o.key());
                }
                self.by_node
                    .entry(node.clone())
                    .or_default()
                    .insert(order.clone(), part);
                self.pods.insert(o.key(), (node, order));
            }
        }
        self.machines = machine_list(sim);
        self.machines_generation = sim.machines_generation();
        // Keep the Rc of every node whose view came out the same, so the page redraws only the
        // nodes that really changed even across a rebuild.
        let old = std::mem::take(&mut self.node_views);
        let dirty: BTreeSet<String> = self.nodes.keys().map(|n| n.to_string()).collect_set();
        self.node_views = old
            .into_iter()
            .filter(|(n, _)| self.nodes.contains_key(n.as_str()))
            .collect();
        self.refresh(dirty, true, sim);
    }
}

fn machine_list(sim: &Sim) -> Vec<(String, bool)> {
    sim.machines()
        .iter()
        .map(|(n, m)| (n.to_string(), m.up))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{
        Condition, Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
        ContainerStateWaiting, ContainerStatus, NodeSpec, NodeStatus, ObjectMeta, PodSpec,
        PodStatus, ResourceRequirements, Time,
    };

    fn pod(name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                creation_timestamp: Some(Time(0)),
                ..Default::default()
            },
            spec: PodSpec {
                containers: vec![Container {
                    name: "nginx".into(),
                    image: "nginx:1.27".into(),
                    resources: Some(ResourceRequirements {
                        requests: [
                            ("cpu".to_string(), "100m".to_string()),
                            ("memory".to_string(), "128Mi".to_string()),
                        ]
                        .into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }
            .into(),
            status: PodStatus {
                phase: "Pending".into(),
                ..Default::default()
            },
        }
    }

    fn on(mut p: Pod, node: &str) -> Pod {
        p.spec_mut().node_name = node.into();
        p
    }

    fn running(mut p: Pod, ready: bool) -> Pod {
        p.status.phase = "Running".into();
        p.status.conditions = vec![Condition {
            type_: "Ready".into(),
            status: if ready { "True" } else { "False" }.into(),
            ..Default::default()
        }];
        p.status.container_statuses = vec![ContainerStatus {
            name: "nginx".into(),
            ready,
            state: ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(Time(0)),
                }),
                ..Default::default()
            },
            ..Default::default()
        }];
        p
    }

    fn waiting(mut p: Pod, reason: &str, restarts: i32) -> Pod {
        p.status.container_statuses = vec![ContainerStatus {
            name: "nginx".into(),
            restart_count: restarts,
            state: ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: None,
                }),
                ..Default::default()
            },
            last_state: Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 1,
                    reason: Some("Error".into()),
                    finished_at: Some(Time(10_000)),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }];
        p
    }

    fn node(name: &str, ready: &str) -> Node {
        let res: crate::sim::api::types::StringMap = [
            ("cpu".to_string(), "4".to_string()),
            ("memory".to_string(), "8Gi".to_string()),
            ("pods".to_string(), "110".to_string()),
        ]
        .into();
        Node {
            metadata: ObjectMeta {
                name: name.into(),
                ..Default::default()
            },
            spec: NodeSpec::default(),
            status: NodeStatus {
                capacity: res.clone(),
                allocatable: res,
                conditions: vec![Condition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_new_pod_reads_pending_and_unscheduled() {
        let p = pod("web-1");
        assert_eq!(PodView::of(&p, 0).status, "Pending");
        assert_eq!(pod_health(&p, "Pending"), PodHealth::Unscheduled);
        assert_eq!(PodView::of(&p, 0).ready_text, "0/1");
    }

    #[test]
    fn a_chip_reads_what_kubectl_get_pods_prints_for_gated_pods_and_sidecars() {
        let mut gated = pod("gated");
        gated.status.conditions = vec![Condition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("SchedulingGated".into()),
            ..Default::default()
        }];
        assert_eq!(PodView::of(&gated, 0).status, "SchedulingGated");

        let mut p = running(on(pod("a"), "node-1"), true);
        p.spec_mut().init_containers = vec![crate::sim::api::types::Container {
            name: "proxy".into(),
            restart_policy: Some("Always".into()),
            ..Default::default()
        }];
        p.status.init_container_statuses = vec![ContainerStatus {
            name: "proxy".into(),
            started: Some(true),
            ready: true,
            restart_count: 2,
            state: ContainerState {
                running: Some(Default::default()),
                ..Default::default()
            },
            ..Default::default()
        }];
        let chip = PodView::of(&p, 0);
        let row = crate::sim::kubectl::printers::row(0, &Object::from(p), false);
        assert_eq!(chip.ready_text, "2/2");
        assert_eq!(chip.restarts, 2);
        assert_eq!(
            [chip.ready_text, chip.status, chip.restarts_text],
            [row[1].clone(), row[2].clone(), row[3].clone()]
        );
    }

    #[test]
    fn a_bound_pod_with_a_creating_container_reads_container_creating() {
        let p = waiting(on(pod("web-1"), "node-1"), "ContainerCreating", 0);
        assert_eq!(PodView::of(&p, 0).status, "ContainerCreating");
        assert_eq!(pod_health(&p, "ContainerCreating"), PodHealth::Starting);
    }

    #[test]
    fn running_pods_split_on_readiness() {
        let ready = running(on(pod("a"), "node-1"), true);
        let unready = running(on(pod("b"), "node-1"), false);
        assert_eq!(PodView::of(&ready, 0).status, "Running");
        assert_eq!(pod_health(&ready, "Running"), PodHealth::Ready);
        assert_eq!(PodView::of(&ready, 0).ready_text, "1/1");
        assert_eq!(pod_health(&unready, "Running"), PodHealth::NotReady);
        assert_eq!(PodView::of(&unready, 0).ready_text, "0/1");
    }

    #[test]
    fn a_crash_looping_pod_shows_the_waiting_reason_and_restarts_with_age() {
        let mut p = waiting(on(pod("a"), "node-1"), "CrashLoopBackOff", 3);
        p.status.phase = "Running".into();
        assert_eq!(PodView::of(&p, 0).status, "CrashLoopBackOff");
        assert_eq!(pod_health(&p, "CrashLoopBackOff"), PodHealth::Failing);
        assert_eq!(PodView::of(&p, 25_000).restarts_text, "3 (15s ago)");
    }

    #[test]
    fn a_deleted_pod_reads_terminating_unless_its_node_was_lost() {
        let mut p = running(on(pod("a"), "node-1"), true);
        p.metadata.deletion_timestamp = Some(Time(5_000));
        assert_eq!(PodView::of(&p, 0).status, "Terminating");
        assert_eq!(pod_health(&p, "Terminating"), PodHealth::Terminating);
        p.status.reason = Some("NodeLost".into());
        assert_eq!(PodView::of(&p, 0).status, "Unknown");
        assert_eq!(pod_health(&p, "Unknown"), PodHealth::Unknown);
    }

    #[test]
    fn a_terminated_container_without_reason_shows_its_exit_code() {
        let mut p = on(pod("a"), "node-1");
        p.status.phase = "Failed".into();
        p.status.container_statuses = vec![ContainerStatus {
            name: "nginx".into(),
            state: ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 2,
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        }];
        assert_eq!(PodView::of(&p, 0).status, "ExitCode:2");
        assert_eq!(pod_health(&p, "ExitCode:2"), PodHealth::Failing);
    }

    #[test]
    fn node_bars_sum_the_requests_of_pods_that_hold_resources() {
        let n = node("node-1", "True");
        let a = running(on(pod("a"), "node-1"), true);
        let b = running(on(pod("b"), "node-1"), true);
        let mut done = on(pod("c"), "node-1");
        done.status.phase = "Succeeded".into();
        let pending = pod("d");
        let view = ClusterView::build([&n], [&a, &b, &done, &pending], &BTreeMap::new(), 0);
        let nv = &view.nodes[0];
        assert_eq!(nv.cpu.used, 200);
        assert_eq!(nv.cpu.text, "200m / 4");
        assert_eq!(nv.cpu.pct, 5);
        assert_eq!(nv.memory.text, "256Mi / 8Gi");
        assert_eq!(nv.pods_usage.used, 2);
        assert_eq!(
            nv.pods.len(),
            3,
            "the completed pod is still shown on its node"
        );
        assert_eq!(view.unscheduled.len(), 1);
        assert_eq!(view.unscheduled[0].name, "d");
    }

    #[test]
    fn node_status_reads_like_kubectl_get_nodes() {
        let mut n = node("node-2", "Unknown");
        n.spec.unschedulable = true;
        let view = ClusterView::build(
            [&n],
            [],
            &BTreeMap::from([("node-2".to_string(), false)]),
            0,
        );
        // printNode: a Ready condition that is Unknown prints NotReady.
        assert_eq!(view.nodes[0].status, "NotReady,SchedulingDisabled");
        assert!(!view.nodes[0].awaiting_kubelet());
        assert_eq!(view.nodes[0].readiness(), "NotReady");
        assert_eq!(view.nodes[0].ready_attr(), "unknown");
        assert_eq!(view.nodes[0].machine_up, Some(false));
        let fresh = Node {
            metadata: ObjectMeta {
                name: "n".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let fresh = ClusterView::build([&fresh], [], &BTreeMap::new(), 0);
        assert_eq!(fresh.nodes[0].status, "Unknown");
        assert!(
            fresh.nodes[0].awaiting_kubelet(),
            "no Ready condition at all: its kubelet has not posted a status yet"
        );
    }

    #[test]
    fn a_node_card_shows_its_zone_when_the_node_has_one() {
        let mut zoned = node("node-1", "True");
        zoned.metadata.labels.insert(ZONE_LABEL, "zone-a");
        let plain = node("node-2", "True");
        let mut blank = node("node-3", "True");
        blank.metadata.labels.insert(ZONE_LABEL, String::new());
        let view = ClusterView::build([&zoned, &plain, &blank], [], &BTreeMap::new(), 0);
        let zones: Vec<Option<&str>> = view.nodes.iter().map(|n| n.zone.as_deref()).collect();
        assert_eq!(zones, [Some("zone-a"), None, None]);
    }

    #[test]
    fn a_node_cards_zone_follows_the_scenarios_zones_and_a_relabel() {
        let mut p = crate::viewmodel::Playground::new(1);
        let lesson = crate::sim::examples::by_name("at-most-one").expect("lesson 16");
        assert!(p.load_scenario(lesson, None).is_ok());
        let zones = |p: &crate::viewmodel::Playground| -> Vec<String> {
            p.cluster_view()
                .nodes
                .iter()
                .map(|n| format!("{} {}", n.name, n.zone.as_deref().unwrap_or("-")))
                .collect()
        };
        assert_eq!(
            zones(&p),
            [
                "node-1 zone-a",
                "node-2 zone-b",
                "node-3 zone-a",
                "node-4 zone-b"
            ]
        );
        let out = p.kubectl("label node node-4 topology.kubernetes.io/zone=zone-c --overwrite");
        assert!(out.ok, "{}", out.stderr);
        assert_eq!(zones(&p)[3], "node-4 zone-c");
        assert_cache_matches(&p, "node-4 relabelled");
    }

    #[test]
    fn the_tray_says_there_are_no_pods_rather_than_that_the_scheduler_placed_them_all() {
        let n = node("node-1", "True");
        let caption = |pods: &[&Pod]| {
            ClusterView::build([&n], pods.iter().copied(), &BTreeMap::new(), 0).tray_caption()
        };
        assert_eq!(caption(&[]), "none: there are no pods yet");
        let placed = on(pod("a"), "node-1");
        assert_eq!(
            caption(&[&placed]),
            "none: the scheduler has placed every pod"
        );
        let waiting = pod("b");
        assert_eq!(
            caption(&[&placed, &waiting]),
            "1 pending: not bound to a node yet"
        );
    }

    #[test]
    fn pods_bound_to_a_missing_node_are_listed_with_the_unscheduled() {
        let p = on(pod("a"), "node-9");
        let view = ClusterView::build([], [&p], &BTreeMap::new(), 0);
        assert_eq!(view.unscheduled.len(), 1);
    }

    #[test]
    fn pods_on_a_node_keep_creation_order() {
        let n = node("node-1", "True");
        let mut late = on(pod("a-late"), "node-1");
        late.metadata.creation_timestamp = Some(Time(9_000));
        let early = on(pod("z-early"), "node-1");
        let view = ClusterView::build([&n], [&late, &early], &BTreeMap::new(), 10_000);
        let names: Vec<&str> = view.nodes[0].pods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["z-early", "a-late"]);
        assert_eq!(view.nodes[0].pods[1].age, "1s");
    }

    #[test]
    fn the_dense_view_starts_above_sixty_nodes_or_six_hundred_pods() {
        assert!(!is_dense(3, 30));
        assert!(!is_dense(DENSE_NODES, DENSE_PODS));
        assert!(is_dense(DENSE_NODES + 1, 0));
        assert!(is_dense(3, DENSE_PODS + 1));
        let small = ClusterView::build([&node("node-1", "True")], [], &BTreeMap::new(), 0);
        assert!(!small.dense_by_default());
        let names: Vec<String> = (0..=DENSE_NODES).map(|i| format!("n-{i}")).collect();
        let many: Vec<Node> = names.iter().map(|n| node(n, "True")).collect();
        let big = ClusterView::build(&many, [], &BTreeMap::new(), 0);
        assert!(big.dense_by_default());
    }

    #[test]
    fn chips_hold_still_only_when_more_than_the_cap_are_starting_or_failing_at_once() {
        let n = node("node-1", "True");
        let view = |starting: usize, failing: usize, ready: usize| {
            let pods: Vec<Pod> = (0..starting)
                .map(|i| on(pod(&format!("s-{i:03}")), "node-1"))
                .chain((0..failing).map(|i| {
                    waiting(
                        on(pod(&format!("f-{i:03}")), "node-1"),
                        "CrashLoopBackOff",
                        3,
                    )
                }))
                .chain((0..ready).map(|i| running(on(pod(&format!("r-{i:03}")), "node-1"), true)))
                .collect();
            ClusterView::build([&n], &pods, &BTreeMap::new(), 0)
        };
        let lesson = view(8, 2, 20);
        assert_eq!(lesson.counts.get(PodHealth::Starting), 8);
        assert_eq!(lesson.counts.get(PodHealth::Failing), 2);
        assert!(!lesson.calm_motion());
        // Ready pods never animate endlessly, however many there are.
        assert!(!view(0, 0, 500).calm_motion());
        assert!(!view(ENDLESS_ANIMATIONS_MAX - 4, 4, 0).calm_motion());
        assert!(view(ENDLESS_ANIMATIONS_MAX - 4, 5, 0).calm_motion());
        assert!(view(ENDLESS_ANIMATIONS_MAX + 1, 0, 0).calm_motion());
        assert!(view(0, ENDLESS_ANIMATIONS_MAX + 1, 0).calm_motion());
    }

    #[test]
    fn chips_stop_animating_when_the_cards_draw_more_than_the_cap() {
        let nodes = [node("node-1", "True"), node("node-2", "True")];
        let view = |on_nodes: usize, pending: usize| {
            let pods: Vec<Pod> = (0..on_nodes)
                .map(|i| {
                    running(
                        on(
                            pod(&format!("r-{i:03}")),
                            if i % 2 == 0 { "node-1" } else { "node-2" },
                        ),
                        true,
                    )
                })
                .chain((0..pending).map(|i| pod(&format!("p-{i:03}"))))
                .collect();
            ClusterView::build(&nodes, &pods, &BTreeMap::new(), 0)
        };
        let lesson = view(100, 10);
        assert_eq!(lesson.chips_drawn(), 110);
        assert!(!lesson.crowded_motion());
        assert!(!view(ANIMATED_CHIPS_MAX - 5, 5).crowded_motion());
        // The tray's chips count too.
        assert!(view(ANIMATED_CHIPS_MAX - 5, 6).crowded_motion());
        assert!(view(300, 0).crowded_motion());
    }

    #[test]
    fn chips_stop_animating_from_the_toolbars_25x_speed_up() {
        let animated: Vec<f64> = crate::viewmodel::format::SPEEDS
            .into_iter()
            .filter(|s| !brisk_motion(*s))
            .collect();
        assert_eq!(animated, [0.25, 0.5, 1.0, 2.0, 5.0, 10.0]);
        assert!(brisk_motion(25.0));
        assert!(brisk_motion(100.0));
    }

    #[test]
    fn the_card_layout_draws_every_card_of_a_small_cluster_and_a_bounded_share_of_a_big_one() {
        let small = ClusterView::build([&node("node-1", "True")], [], &BTreeMap::new(), 0);
        assert_eq!(small.cards_shown(), 1);
        let names: Vec<String> = (0..1_000).map(|i| format!("n-{i:04}")).collect();
        let many: Vec<Node> = names.iter().map(|n| node(n, "True")).collect();
        let empty = ClusterView::build(&many, [], &BTreeMap::new(), 0);
        assert_eq!(empty.cards_shown(), CARD_NODES_MAX);
        // 10 pods a node: the chips run out before the cards do.
        let pods: Vec<Pod> = (0..10_000)
            .map(|i| on(pod(&format!("p-{i:05}")), &names[i / 10]))
            .collect();
        let full = ClusterView::build(&many, &pods, &BTreeMap::new(), 0);
        let shown = full.cards_shown();
        let chips: usize = full.nodes[..shown].iter().map(|n| n.pods.len()).sum();
        assert!(chips <= CARD_PODS_MAX, "{chips} chips");
        assert_eq!(shown, CARD_PODS_MAX / 10);
        // One node holding more pods than the cap is still drawn.
        let crowded: Vec<Pod> = (0..CARD_PODS_MAX + 5)
            .map(|i| on(pod(&format!("q-{i:05}")), "n-0000"))
            .collect();
        let one = ClusterView::build(&many[..2], &crowded, &BTreeMap::new(), 0);
        assert_eq!(one.cards_shown(), 1);
    }

    #[test]
    fn pods_are_counted_by_tone_per_node_and_for_the_whole_cluster() {
        let (n1, n2) = (node("node-1", "True"), node("node-2", "True"));
        let a = running(on(pod("a"), "node-1"), true);
        let b = running(on(pod("b"), "node-1"), false);
        let c = waiting(on(pod("c"), "node-2"), "ContainerCreating", 0);
        let mut d = waiting(on(pod("d"), "node-2"), "CrashLoopBackOff", 4);
        d.status.phase = "Running".into();
        let mut e = running(on(pod("e"), "node-2"), true);
        e.metadata.deletion_timestamp = Some(Time(1));
        let f = pod("f");
        let view = ClusterView::build([&n1, &n2], [&a, &b, &c, &d, &e, &f], &BTreeMap::new(), 0);
        let one = view.nodes[0].counts;
        assert_eq!(
            (
                one.get(PodHealth::Ready),
                one.get(PodHealth::NotReady),
                one.total()
            ),
            (1, 1, 2)
        );
        let two = view.nodes[1].counts;
        assert_eq!(
            (
                two.get(PodHealth::Starting),
                two.get(PodHealth::Failing),
                two.get(PodHealth::Terminating)
            ),
            (1, 1, 1)
        );
        assert_eq!(view.pod_count(), 6);
        let row: Vec<(Bucket, u32)> = Bucket::ALL
            .iter()
            .map(|b| (*b, view.counts.bucket(*b)))
            .collect();
        assert_eq!(
            row,
            [
                (Bucket::Ready, 1),
                (Bucket::Pending, 2), // one unscheduled, one creating its container
                (Bucket::RunningNotReady, 1),
                (Bucket::Failing, 1),
                (Bucket::Terminating, 1),
                (Bucket::Unknown, 0),
                (Bucket::Completed, 0),
            ]
        );
        assert_eq!(view.tone_counts().get(&PodHealth::Unscheduled), Some(&1));
        assert_eq!(
            view.tone_counts().get(&PodHealth::Unknown),
            None,
            "absent healths are left out"
        );
    }

    #[test]
    fn every_tone_falls_in_exactly_one_bucket() {
        for t in PodHealth::ALL {
            let homes = Bucket::ALL
                .iter()
                .filter(|b| b.healths().contains(&t))
                .count();
            assert_eq!(homes, 1, "{t:?}");
        }
        let ids: BTreeSet<_> = Bucket::ALL.iter().map(|b| b.id()).collect();
        assert_eq!(ids.len(), Bucket::ALL.len());
    }

    #[test]
    fn a_tile_tells_ready_notready_unknown_and_powered_off_nodes_apart_by_glyph() {
        let up = BTreeMap::from([("off".to_string(), false), ("on".to_string(), true)]);
        let nodes = [
            node("on", "True"),
            node("sick", "False"),
            node("quiet", "Unknown"),
            node("off", "True"),
        ];
        let view = ClusterView::build(&nodes, [], &up, 0);
        let states: BTreeMap<&str, NodeState> = view
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n.state()))
            .collect();
        assert_eq!(states["on"], NodeState::Ready);
        assert_eq!(states["sick"], NodeState::NotReady);
        assert_eq!(states["quiet"], NodeState::Unknown);
        assert_eq!(
            states["off"],
            NodeState::Down,
            "the machine wins over a stale Ready"
        );
        let glyphs: BTreeSet<_> = states.values().map(|s| s.glyph()).collect();
        assert_eq!(glyphs.len(), 4);
    }

    #[test]
    fn a_tile_description_counts_the_nodes_pods_by_state() {
        let n = node("node-1", "True");
        let a = running(on(pod("a"), "node-1"), true);
        let b = running(on(pod("b"), "node-1"), true);
        let c = running(on(pod("c"), "node-1"), false);
        let view = ClusterView::build([&n], [&a, &b, &c], &BTreeMap::new(), 0);
        assert_eq!(
            view.nodes[0].describe(),
            "Node node-1: Ready; 3 of 110 pods (1 not ready, 2 ready)"
        );
    }

    /// The view without the texts the cache computes when a pod changes rather than every frame.
    fn timeless(v: &ClusterView) -> ClusterView {
        let strip = |p: &PodView| PodView {
            age: String::new(),
            restarts_text: String::new(),
            ..p.clone()
        };
        ClusterView {
            nodes: v
                .nodes
                .iter()
                .map(|n| {
                    Rc::new(NodeView {
                        pods: n.pods.iter().map(|p| Rc::new(strip(p))).collect(),
                        ..(**n).clone()
                    })
                })
                .collect(),
            unscheduled: Rc::new(v.unscheduled.iter().map(|p| Rc::new(strip(p))).collect()),
            counts: v.counts,
            revision: 0,
        }
    }

    fn assert_cache_matches(p: &crate::viewmodel::Playground, when: &str) {
        let cached = p.cluster_view();
        assert_eq!(timeless(&cached), timeless(&p.cluster()), "{when}");
    }

    #[test]
    fn the_cache_follows_changes_instead_of_rebuilding() {
        let mut p = crate::viewmodel::Playground::new(3);
        let mut cache = ClusterCache::default();
        cache.update(&p.session.sim);
        assert!(p.apply(WEB).ok);
        for _ in 0..60 {
            p.advance_by(500);
            cache.update(&p.session.sim);
            assert_eq!(timeless(&cache.view()), timeless(&p.cluster()));
        }
        assert_eq!(
            cache.rebuilds(),
            1,
            "only the first update built from scratch"
        );
        assert_eq!(cache.view().pod_count(), 8);
    }

    #[test]
    fn a_pod_released_by_a_relabel_is_marked_an_orphan_on_its_chip_and_counted_for_the_legend() {
        let mut p = crate::viewmodel::Playground::new(3);
        assert!(p.apply(WEB).ok);
        p.advance_by(30_000);
        let view = p.cluster_view();
        assert_eq!(view.orphans(), 0, "every pod has its ReplicaSet");
        let victim = view.all_pods().next().expect("a pod").name.clone();
        assert!(!view
            .all_pods()
            .next()
            .expect("a pod")
            .describe()
            .contains("orphan"));
        let out = p.kubectl(&format!("label pod {victim} app=debug --overwrite"));
        assert!(out.ok, "{out:?}");
        // The ReplicaSet controller sees the pod no longer matches its selector and releases it
        // (removes its ownerReference), then makes a replacement.
        p.advance_by(5_000);
        let view = p.cluster_view();
        let released = view
            .all_pods()
            .find(|v| v.name == victim)
            .expect("the pod stays");
        assert!(released.orphan());
        assert!(
            released
                .describe()
                .ends_with(", orphan: no controller owns this pod"),
            "{}",
            released.describe()
        );
        assert_eq!(view.orphans(), 1, "the replacement has a controller");
        assert_eq!(view.pod_count(), 9);
        assert_cache_matches(&p, "after the release");
    }

    const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 8\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: app, image: \"nginx:1.27\"}]\n";

    #[test]
    fn the_incremental_view_matches_a_fresh_build_through_rollouts_faults_and_node_changes() {
        let mut p = crate::viewmodel::Playground::new(3);
        assert_cache_matches(&p, "booted");
        assert!(p.apply(WEB).ok);
        for i in 0..40 {
            p.advance_by(250);
            assert_cache_matches(&p, &format!("converging, slice {i}"));
        }
        p.run_command("set image deployment/web app=nginx:1.28");
        p.run_command("cordon node-1");
        assert!(p
            .inject(crate::sim::faults::Fault::NodeDown {
                node: "node-2".into()
            })
            .is_ok());
        for i in 0..30 {
            p.advance_by(1_000);
            assert_cache_matches(&p, &format!("rolling with node-2 down, second {i}"));
        }
        p.run_command("delete node node-3");
        p.advance_by(500);
        assert_cache_matches(&p, "node-3 deleted");
        assert!(
            p.apply("apiVersion: v1\nkind: Node\nmetadata: {name: node-9}\n")
                .ok
        );
        p.advance_by(60_000);
        assert_cache_matches(&p, "node-9 added");
        p.reset();
        assert_cache_matches(&p, "after a reset (a new session)");
    }

    #[test]
    fn powering_a_machine_off_and_on_shows_on_its_node_at_once() {
        // NodeDown and NodeUp write nothing to the API: the cache learns of them from the
        // simulation's machines alone.
        let mut p = crate::viewmodel::Playground::new(3);
        let up = |p: &crate::viewmodel::Playground| {
            let view = p.cluster_view();
            let node = view
                .nodes
                .iter()
                .find(|n| n.name == "node-2")
                .expect("node-2");
            node.machine_up
        };
        assert_eq!(up(&p), Some(true));
        let rv = p.session.sim.api().resource_version();
        let fault = |down| {
            let node = "node-2".to_string();
            if down {
                crate::sim::faults::Fault::NodeDown { node }
            } else {
                crate::sim::faults::Fault::NodeUp { node }
            }
        };
        assert!(p.inject(fault(true)).is_ok());
        assert_eq!(p.session.sim.api().resource_version(), rv, "no API write");
        assert_eq!(up(&p), Some(false));
        assert!(p.inject(fault(false)).is_ok());
        assert_eq!(up(&p), Some(true));
        assert_cache_matches(&p, "powered on again");
    }

    #[test]
    fn pods_of_a_deleted_node_and_pods_waiting_for_one_share_the_tray_in_creation_order() {
        // Two groups in the tray at once: pods still bound to a node that is gone, and pods the
        // scheduler cannot place; the incremental view must interleave them as a fresh build does.
        let pinned = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: pinned}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: pinned}}\n  template:\n    metadata: {labels: {app: pinned}}\n    spec:\n      nodeName: node-3\n      containers: [{name: app, image: \"nginx:1.27\"}]\n";
        let stuck = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: stuck}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: stuck}}\n  template:\n    metadata: {labels: {app: stuck}}\n    spec:\n      nodeSelector: {disk: none}\n      containers: [{name: app, image: \"nginx:1.27\"}]\n";
        let mut p = crate::viewmodel::Playground::new(3);
        assert!(p.apply(pinned).ok);
        assert!(p.apply(stuck).ok);
        for _ in 0..20 {
            p.advance_by(500);
            assert_cache_matches(&p, "both Deployments converging");
        }
        p.run_command("delete node node-3");
        p.advance_by(100);
        assert_cache_matches(&p, "node-3 deleted");
        let view = p.cluster_view();
        let in_tray = |app: &str| {
            view.unscheduled
                .iter()
                .filter(|v| v.name.starts_with(app))
                .count()
        };
        assert_eq!((in_tray("pinned-"), in_tray("stuck-")), (4, 4));
    }

    #[test]
    fn an_unchanged_node_keeps_its_rc_and_an_idle_cluster_keeps_the_whole_view() {
        let mut p = crate::viewmodel::Playground::new(3);
        assert!(p.apply(WEB).ok);
        p.advance_by(60_000);
        let before = p.cluster_view();
        p.advance_by(10_000);
        let idle = p.cluster_view();
        assert!(
            Rc::ptr_eq(&before, &idle),
            "leases and heartbeats change nothing the view shows"
        );
        assert!(p.revision(Kind::Lease) > 0);
        let victim = idle.nodes[0].pods[0].name.clone();
        assert!(p.delete_pod("default", &victim).is_ok());
        p.advance_by(100);
        let after = p.cluster_view();
        assert!(after.revision > idle.revision);
        assert!(
            !Rc::ptr_eq(&after.nodes[0], &idle.nodes[0]),
            "node-1 lost a pod"
        );
        let untouched = (1..3)
            .filter(|i| Rc::ptr_eq(&after.nodes[*i], &idle.nodes[*i]))
            .count();
        assert!(
            untouched >= 1,
            "a node the deletion did not touch is not rebuilt"
        );
    }

    #[test]
    fn a_long_gap_is_rebuilt_rather_than_replayed_and_still_matches() {
        let mut p = crate::viewmodel::Playground::new(5);
        let _ = p.cluster_view();
        assert!(p.apply(WEB).ok);
        p.advance_by(300_000);
        assert_cache_matches(&p, "five minutes later");
    }

    /// Lesson 15: the StatefulSet db, each replica with a claim `data-db-<n>` on a zonal disk.
    fn volumes_lesson() -> crate::viewmodel::Playground {
        let mut p = crate::viewmodel::Playground::new(1);
        let lesson = crate::sim::examples::by_name("non-idempotent-world").expect("lesson 15");
        assert!(p.load_scenario(lesson, None).is_ok());
        p
    }

    /// Each pod's claim chips as `pod: claim state size`, in the cache's view.
    fn claim_lines(p: &crate::viewmodel::Playground) -> Vec<String> {
        p.cluster_view()
            .all_pods()
            .flat_map(|v| {
                v.claims.iter().map(move |c| {
                    format!("{}: {} {} {}", v.name, c.name, c.state.label(), c.size())
                })
            })
            .collect()
    }

    #[test]
    fn a_pods_claim_chip_follows_its_claim_through_a_resize_while_the_pod_stays_unchanged() {
        use crate::viewmodel::claims::Pin;
        let mut p = volumes_lesson();
        assert!(claim_lines(&p).is_empty(), "no pod yet, so no chip");
        p.advance_by(90_000);
        assert_eq!(
            claim_lines(&p),
            ["db-0: data-db-0 Bound 1Gi", "db-1: data-db-1 Bound 1Gi"]
        );
        assert_cache_matches(&p, "both replicas running");
        let view = p.cluster_view();
        let db0 = view.all_pods().find(|v| v.name == "db-0").expect("db-0");
        let zone = p
            .kubectl(&format!(
                "get node {} -o jsonpath={{.metadata.labels.topology\\.kubernetes\\.io/zone}}",
                db0.node
            ))
            .stdout;
        assert_eq!(db0.claims[0].pin, Some(Pin::Zone(zone)));

        let pod_rv = |p: &crate::viewmodel::Playground| {
            let key = ObjectKey::new(Kind::Pod, "default", "db-0");
            let api = p.session.sim.api();
            api.get(&key).map(|o| o.meta().resource_version.clone())
        };
        let before = pod_rv(&p);
        let out = p.kubectl(
            r#"patch pvc data-db-0 -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'"#,
        );
        assert!(out.ok, "{}", out.stderr);
        p.advance_by(1_000);
        assert_eq!(
            claim_lines(&p),
            [
                "db-0: data-db-0 Resizing 1Gi→2Gi",
                "db-1: data-db-1 Bound 1Gi"
            ]
        );
        assert_eq!(pod_rv(&p), before, "only the claim changed, not its pod");
        assert_cache_matches(&p, "resizing");
        p.advance_by(10_000);
        assert_eq!(
            claim_lines(&p),
            ["db-0: data-db-0 Bound 2Gi", "db-1: data-db-1 Bound 1Gi"]
        );
        assert_cache_matches(&p, "grown");
    }

    #[test]
    fn only_pods_that_mount_claims_are_followed_for_their_claims() {
        let mut p = volumes_lesson();
        assert!(p.apply(WEB).ok);
        p.advance_by(90_000);
        let mut cache = ClusterCache::default();
        cache.update(&p.session.sim);
        assert_eq!(cache.view().pod_count(), 10, "8 web pods, 2 db pods");
        let followed: Vec<&str> = cache.claim_pods.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(followed, ["db-0", "db-1"]);
        let web = cache
            .view()
            .all_pods()
            .filter(|v| v.name.starts_with("web-") && v.claims.is_empty())
            .count();
        assert_eq!(web, 8);
        // A second pod of the same claim is followed too, until it is deleted.
        let reader = "apiVersion: v1\nkind: Pod\nmetadata: {name: reader}\nspec:\n  containers: [{name: app, image: \"nginx:1.27\"}]\n  volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]\n";
        assert!(p.apply(reader).ok);
        let followed = |cache: &mut ClusterCache, p: &crate::viewmodel::Playground| {
            cache.update(&p.session.sim);
            cache.claim_pods.len()
        };
        assert_eq!(followed(&mut cache, &p), 3);
        assert!(p.kubectl("delete pod reader --grace-period=0 --force").ok);
        assert_eq!(followed(&mut cache, &p), 2);
    }

    #[test]
    fn every_tone_has_a_distinct_glyph_and_class() {
        let glyphs: std::collections::BTreeSet<_> =
            PodHealth::ALL.iter().map(|t| t.glyph()).collect();
        let classes: std::collections::BTreeSet<_> =
            PodHealth::ALL.iter().map(|t| t.class()).collect();
        assert_eq!(glyphs.len(), PodHealth::ALL.len());
        assert_eq!(classes.len(), PodHealth::ALL.len());
    }
}
