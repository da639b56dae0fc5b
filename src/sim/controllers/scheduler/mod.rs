//! kube-scheduler: places pending pods on nodes, one scheduling cycle per reconcile.
//!
//! Faithful to `pkg/scheduler` in the parts a learner can observe: the scheduling queue
//! (`queue.rs`), the default profile's Filter and Score plugins with their weights and reason
//! strings (`plugins.rs`), DefaultPreemption (`preemption.rs`), the assume cache (a pod charged to
//! its node the moment it is chosen, before the binding is seen), the exact `FailedScheduling`
//! text, and the `PodScheduled` condition.
//!
//! ## How the scheduling queue maps onto the world's work queue
//!
//! The world hands a component one key per reconcile from a FIFO, de-duplicating queue. The
//! scheduler keeps kube-scheduler's own queue inside itself and uses the world's queue as the
//! list of pods that are *in activeQ*: whenever a pod enters activeQ (a new pod, a cluster event
//! moving it, its back-off ending), its key is handed to the world — from `keys_for_event` or
//! `tick`. `reconcile(pod)` runs one scheduling cycle for that pod only if it is the head of
//! activeQ (highest priority, then earliest into activeQ); otherwise it goes to the back of its
//! priority band and asks to be requeued, so pods are always scheduled in activeQ order.
//! Back-off expiry and the 5-minute unschedulablePods flush are driven by `tick`, which is timed
//! to the next back-off expiry (at most 1 s apart, kube-scheduler's backoffQ flush period).
//! Pods waiting in backoffQ or unschedulablePods are not on the world's queue at all.
//!
//! One cycle: snapshot = the informer cache + assumed pods → Filter (every node, starting where
//! the previous cycle stopped, until enough feasible nodes are found as
//! `percentageOfNodesToScore` prescribes) → Score and NormalizeScore → weighted sum → the best
//! node (ties broken at random with reservoir sampling, like `selectHost`) → Reserve (assume) →
//! Bind. With no feasible node: PostFilter (preemption), the Warning event `FailedScheduling`
//! and the condition `PodScheduled=False` with reason `Unschedulable`.

mod memo;
mod plugins;
mod preemption;
mod queue;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::rc::Rc;

use serde::Serialize;

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::storage;
use crate::sim::api::types::{
    find_condition, set_condition, Condition, Kind, Millis, Node, NodeSelectorTerm, Object,
    ObjectKey, Pod, Str, Time,
};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sim::rng::Rng;
use crate::sim::text::{concat, decimal_into};
use crate::sort::CollectTree;
use crate::vec_map::{HashedSlotMap, LookupSlots, SlotMap, VecMap};

pub use plugins::{
    required_affinity_matches, HostPort, PodResources, Resources, BALANCED_ALLOCATION,
    NODE_AFFINITY, NODE_NAME, NODE_PORTS, NODE_RESOURCES_FIT, NODE_UNSCHEDULABLE,
    POD_TOPOLOGY_SPREAD, TAINT_TOLERATION,
};
pub use queue::{backoff_duration, QueueName};

use memo::{CycleMemo, NodeScores};
use plugins::{NodeInfo, PodCtx, PodEntry, Rejection};
use preemption::PostFilter;
use queue::{SchedulingQueue, BACKOFF_FLUSH_PERIOD, UNSCHEDULABLE_FLUSH_PERIOD};

/// The profile this scheduler serves (`spec.schedulerName`).
pub const SCHEDULER_NAME: &str = "default-scheduler";
/// The message when the cluster has no nodes at all (`ErrNoNodesAvailable`).
pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
/// `minFeasibleNodesToFind`.
const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// `minFeasibleNodesPercentageToFind`.
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: usize = 5;

// ------------------------------------------------------------------ decisions (for the UI)

/// One plugin's score for one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PluginScore {
    pub plugin: &'static str,
    /// What the plugin computed (for TaintToleration: untolerated PreferNoSchedule taints).
    pub raw: i64,
    /// After NormalizeScore, 0..=100.
    pub score: i64,
    pub weight: i64,
}

/// Why a node was or was not chosen.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "camelCase")]
pub enum NodeVerdict {
    /// A Filter plugin rejected the node.
    Filtered {
        plugin: &'static str,
        reasons: Vec<String>,
    },
    /// The node passed every filter and was scored.
    Feasible {
        scores: Vec<PluginScore>,
        total: i64,
    },
}

/// One node's line in a [`SchedulingDecision`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeDecision {
    pub node: String,
    #[serde(flatten)]
    pub verdict: NodeVerdict,
}

/// A scheduling cycle laid out for the inspector's Scheduling tab: each evaluated node's filter
/// verdict or scores, and the outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedulingDecision {
    pub pod: ObjectKey,
    /// Nodes in the order they were evaluated (in clusters of over 100 nodes, only the 50 best
    /// feasible nodes and the first 50 rejected ones).
    pub nodes: Vec<NodeDecision>,
    /// Evaluated nodes left out of `nodes`.
    pub omitted_nodes: usize,
    /// The node the pod was (or, for [`explain`], would be) bound to.
    pub chosen: Option<String>,
    /// Other nodes with the same top score (up to 20); the scheduler picks among them at random.
    pub tied_with: Vec<String>,
    /// The FailedScheduling message when no node fits.
    pub message: Option<String>,
    /// When no node fits but evicting lower-priority pods would help: the node and the victims.
    pub preemption: Option<(String, Vec<ObjectKey>)>,
    /// Nodes in the snapshot.
    pub total_nodes: usize,
    /// Nodes that passed every filter.
    pub feasible_nodes: usize,
}

// ------------------------------------------------------------------ the scheduler's cache

/// A pod nominated to a node by preemption: it holds its place there against lower-priority pods.
#[derive(Clone, Debug, PartialEq)]
struct Nominated {
    entry: PodEntry,
}

/// The scheduler cache: nodes with their charged pods, kept up to date event by event so a cycle
/// never re-sums pods (`internal/cache`). Also used, built from live objects, by [`explain`].
#[derive(Clone, Debug, Default)]
struct ClusterState {
    nodes: SlotMap<Str, NodeInfo>,
    // Found by hash: every watch event of a pod looks it up in both. `pods` is never walked in
    // its own order (the nodes hold theirs), so it keeps none: a tree of its keys cost a descent
    // of string comparisons each time a pod was placed and each time it left.
    pods: LookupSlots<ObjectKey, PodEntry>,
    nominated: HashedSlotMap<ObjectKey, Nominated>,
    /// The nodes that have their Node object, in name order, with their slots in `nodes`: the
    /// list every cycle walks. Made again only when a node comes or goes
    /// ([`ClusterState::list_nodes`]): walking the map's tree for each pod, twice, was a fifth
    /// of the scheduler's time at 1,000 nodes.
    listed: Vec<(Str, u32)>,
    /// A node came or went since `listed` was made.
    relist: bool,
    /// Changes to nodes so far: each change gives its node the next number as its generation.
    changes: u64,
    /// By slot, what a cycle reads of every node it walks (see [`NodeSummary`]); a freed slot's
    /// entry is stale until a node takes the slot, which writes it.
    summaries: Vec<NodeSummary>,
}

/// What a cycle reads of each node it walks whatever the verdict, kept by slot side by side:
/// the generation the cycle memo checks, and PodTopologySpread's inputs from the node's labels.
/// Read from the [`NodeInfo`]s, these were two or three cache misses per node per cycle, four
/// hundred nodes a cycle at 1,000 nodes (the `NodeInfo`s are hundreds of bytes apart); side by
/// side, a thousand nodes' summaries are 24 kB. The `NodeInfo` keeps the same fields for the
/// plugins and `explain`.
#[derive(Clone, Debug, Default)]
struct NodeSummary {
    generation: u64,
    has_hostname: bool,
    zone: Option<Str>,
}

/// Gives the node `ni` in `slot` the next generation (it changed) and writes its summary.
fn changed(changes: &mut u64, summaries: &mut Vec<NodeSummary>, (slot, ni): (u32, &mut NodeInfo)) {
    *changes += 1;
    ni.generation = *changes;
    let i = slot as usize;
    if summaries.len() <= i {
        summaries.resize(i + 1, NodeSummary::default());
    }
    summaries[i] = NodeSummary {
        generation: ni.generation,
        has_hostname: ni.has_hostname,
        zone: ni.zone.clone(),
    };
}

impl ClusterState {
    fn set_node(&mut self, obj: Rc<Object>) {
        let Some(name) = obj.as_node().map(|n| n.metadata.name.clone()) else {
            return;
        };
        let (slot, ni) = self.nodes.get_or_insert_at(name, NodeInfo::default);
        self.relist |= ni.node.is_none();
        ni.set_node(obj);
        changed(&mut self.changes, &mut self.summaries, (slot, ni));
    }

    fn remove_node(&mut self, name: &str) {
        if let Some((slot, ni)) = self.nodes.get_mut_at(name) {
            self.relist |= ni.node.is_some();
            // Pods still bound to a deleted node keep their NodeInfo until they go (as upstream).
            ni.node = None;
            let gone = ni.pods.is_empty();
            changed(&mut self.changes, &mut self.summaries, (slot, ni));
            if gone {
                self.nodes.remove(name);
            }
        }
    }

    fn place(&mut self, key: ObjectKey, entry: PodEntry) {
        // The same pod again on the same node (a status write): charged anew where it is,
        // without taking its key out of both maps and the node's set and putting it back.
        if let Some(old) = self.pods.get_mut(&key) {
            if old.node == entry.node {
                if let Some((slot, ni)) = self.nodes.get_mut_at(entry.node.as_str()) {
                    ni.update_pod(old, &entry);
                    changed(&mut self.changes, &mut self.summaries, (slot, ni));
                    *old = entry;
                    return;
                }
            }
        }
        self.unplace(&key);
        let (slot, node) = match self.nodes.get_mut_at(entry.node.as_str()) {
            Some(found) => found,
            None => self
                .nodes
                .get_or_insert_at(Str::from(entry.node.as_str()), NodeInfo::default),
        };
        node.add_pod(&key, &entry);
        changed(&mut self.changes, &mut self.summaries, (slot, node));
        self.pods.insert(key, entry);
    }

    fn unplace(&mut self, key: &ObjectKey) -> Option<PodEntry> {
        let entry = self.pods.remove(key)?;
        if let Some((slot, ni)) = self.nodes.get_mut_at(entry.node.as_str()) {
            ni.remove_pod(key, &entry);
            let gone = ni.node.is_none() && ni.pods.is_empty();
            changed(&mut self.changes, &mut self.summaries, (slot, ni));
            if gone {
                self.nodes.remove(entry.node.as_str());
            }
        }
        Some(entry)
    }

    /// Makes [`ClusterState::listed`] current: before a cycle reads it.
    fn list_nodes(&mut self) {
        if !std::mem::take(&mut self.relist) {
            return;
        }
        let nodes = &self.nodes;
        self.listed.clear();
        self.listed.extend(
            nodes
                .slots()
                .filter(|&(_, slot)| nodes.at(slot).node.is_some())
                .map(|(name, slot)| (name.clone(), slot)),
        );
    }

    /// The nodes a cycle evaluates (those with a Node object), in name order, with their slots.
    fn listed(&self) -> &[(Str, u32)] {
        debug_assert!(!self.relist, "list_nodes runs before a cycle");
        &self.listed
    }
}

/// Whether this scheduler is responsible for the pod (`spec.schedulerName`).
fn responsible_for(pod: &Pod) -> bool {
    pod.spec
        .scheduler_name
        .as_deref()
        .is_none_or(|n| n.is_empty() || n == SCHEDULER_NAME)
}

fn is_terminal(pod: &Pod) -> bool {
    pod.status.phase == "Succeeded" || pod.status.phase == "Failed"
}

/// A pod waiting to be scheduled by us: unbound, not being deleted, ours.
fn is_pending(pod: &Pod) -> bool {
    pod.spec.node_name.is_empty()
        && pod.metadata.deletion_timestamp.is_none()
        && responsible_for(pod)
        && !is_terminal(pod)
}

fn pod_key(pod: &Pod) -> ObjectKey {
    ObjectKey::of(Kind::Pod, &pod.metadata)
}

// ------------------------------------------------------------------ one cycle

/// `numFeasibleNodesToFind` with the adaptive `percentageOfNodesToScore` (50% − nodes/125, at
/// least 5%, at least 100 nodes): small clusters always evaluate every node.
fn num_feasible_nodes_to_find(num_all: usize) -> usize {
    if num_all < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all;
    }
    let percentage = 50usize
        .saturating_sub(num_all / 125)
        .max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    (num_all * percentage / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// Where a processed node's verdict is kept in a [`FilterPass`].
#[derive(Clone, Copy)]
enum Verdict {
    /// Its position in `feasible` (and in the score columns).
    Feasible(usize),
    /// Its position in `rejected`.
    Rejected(usize),
}

/// The Filter phase's result. Nodes are indices into `listed` (every existing node in name
/// order, [`ClusterState::listed`]) so that a pass over a thousand nodes allocates next to nothing
/// and reads only the nodes it evaluates.
struct FilterPass<'s> {
    listed: &'s [(Str, u32)],
    nodes: &'s SlotMap<Str, NodeInfo>,
    summaries: &'s [NodeSummary],
    /// Evaluation order of the processed nodes, each with where its verdict is.
    processed: Vec<(usize, Verdict)>,
    /// The status of every rejected node, in evaluation order.
    rejected: Vec<(usize, Rejection)>,
    feasible: Vec<usize>,
    /// Beside each feasible node, the raw scores the cycle memo kept for it, if any.
    kept: Vec<Option<NodeScores>>,
}

impl<'s> FilterPass<'s> {
    /// The name of the node at `idx`.
    fn name(&self, idx: usize) -> &'s Str {
        &self.listed[idx].0
    }

    /// The scheduler's view of the node at `idx`.
    fn info(&self, idx: usize) -> &'s NodeInfo {
        self.nodes.at(self.listed[idx].1)
    }

    /// What every cycle reads of the node at `idx`, whatever its verdict.
    fn summary(&self, idx: usize) -> &'s NodeSummary {
        let summary = &self.summaries[self.listed[idx].1 as usize];
        debug_assert!({
            let ni = self.info(idx);
            summary.generation == ni.generation
                && summary.has_hostname == ni.has_hostname
                && summary.zone == ni.zone
        });
        summary
    }
}

/// The Filter phase (`findNodesThatPassFilters`), sequential and deterministic: from `start`,
/// round the node list, until `limit` feasible nodes are found. Pods nominated to a node with at
/// least this pod's priority are counted there (`RunFilterPluginsWithNominatedPods`).
fn filter_nodes<'s>(
    state: &'s ClusterState,
    p: &PodCtx,
    start: usize,
    limit: usize,
    mut memo: Option<&mut CycleMemo>,
) -> FilterPass<'s> {
    // Sized up front: this runs once per pod over every node, and growing these vectors step by
    // step showed in profiles of a thousand-node cluster.
    let listed = state.listed();
    let total = listed.len();
    let mut nominated_here: VecMap<&str, Vec<(&ObjectKey, &PodEntry)>> = VecMap::new();
    for (k, n) in state.nominated.iter() {
        if *k != p.key && n.entry.priority >= p.priority {
            nominated_here
                .entry(n.entry.node.as_str())
                .or_default()
                .push((k, &n.entry));
        }
    }
    let mut pass = FilterPass {
        listed,
        nodes: &state.nodes,
        summaries: &state.summaries,
        processed: Vec::with_capacity(limit.min(total)),
        rejected: Vec::new(),
        feasible: Vec::with_capacity(limit.min(total)),
        kept: Vec::with_capacity(limit.min(total)),
    };
    let mut idx = start % total.max(1);
    for _ in 0..total {
        if pass.feasible.len() >= limit {
            break;
        }
        let mut kept = None;
        // Most cycles have no nominated pods: the node's name (a read of its string's block
        // for each of hundreds of nodes) is looked at only when some are.
        let nominated = if nominated_here.is_empty() {
            None
        } else {
            nominated_here.get(pass.name(idx).as_str())
        };
        let verdict = match nominated {
            Some(noms) => {
                let mut with = pass.info(idx).clone();
                for (k, e) in noms {
                    with.add_pod(k, e);
                }
                plugins::run_filters(p, &with)
            }
            None => {
                let slot = pass.listed[idx].1;
                match memo.as_deref_mut() {
                    Some(m) => match m.feasible(slot, pass.summary(idx).generation) {
                        Some(known) => {
                            debug_assert!(
                                plugins::run_filters(p, pass.info(idx)).is_none(),
                                "the memo kept {} feasible for {:?}",
                                pass.name(idx),
                                p.key
                            );
                            kept = known.scores;
                            None
                        }
                        None => {
                            let ni = pass.info(idx);
                            let verdict = plugins::run_filters(p, ni);
                            if verdict.is_none() {
                                m.set_feasible(slot, ni.generation);
                            }
                            verdict
                        }
                    },
                    None => plugins::run_filters(p, pass.info(idx)),
                }
            }
        };
        match verdict {
            Some(r) => {
                pass.processed
                    .push((idx, Verdict::Rejected(pass.rejected.len())));
                pass.rejected.push((idx, r));
            }
            None => {
                pass.processed
                    .push((idx, Verdict::Feasible(pass.feasible.len())));
                pass.feasible.push(idx);
                pass.kept.push(kept);
            }
        }
        idx += 1;
        if idx == total {
            idx = 0;
        }
    }
    pass
}

/// What PodTopologySpread reads from a node: the hostname label, the owner's pods there, the
/// zone.
type SpreadInputs<'a> = (bool, i64, Option<&'a str>);

/// A Score plugin's column: which of a node's raw scores it is.
#[derive(Clone, Copy)]
enum Column {
    TaintToleration,
    NodeAffinity,
    NodeResourcesFit,
    BalancedAllocation,
    PodTopologySpread,
}

/// A feasible node's raw scores: the memo's, and PodTopologySpread's (which reads the other
/// nodes of the cycle).
#[derive(Clone, Copy, PartialEq, Eq)]
struct RawScores {
    node: NodeScores,
    spread: i64,
}

impl Column {
    fn raw(self, r: &RawScores) -> i64 {
        match self {
            Column::TaintToleration => r.node.taint,
            Column::NodeAffinity => r.node.affinity.unwrap_or(0),
            Column::NodeResourcesFit => r.node.fit,
            Column::BalancedAllocation => r.node.balanced.unwrap_or(0),
            Column::PodTopologySpread => r.spread,
        }
    }
}

/// Scores of the feasible nodes: their raw scores, and per Score plugin that ran its weight and
/// normalisation; the totals are what `selectHost` reads, the rest what `describe` lays out.
struct Scores {
    raws: Vec<RawScores>,
    /// (plugin, weight, column, its NormalizeScore).
    columns: Vec<(&'static str, i64, Column, plugins::Normalizer)>,
    totals: Vec<i64>,
}

impl Scores {
    fn of(&self, i: usize) -> Vec<PluginScore> {
        self.columns
            .iter()
            .map(|&(plugin, weight, column, norm)| {
                let raw = column.raw(&self.raws[i]);
                PluginScore {
                    plugin,
                    raw,
                    score: norm.apply(raw),
                    weight,
                }
            })
            .collect()
    }

    /// The weighted sum of a node's normalised scores.
    fn total(&self, r: &RawScores) -> i64 {
        self.columns
            .iter()
            .map(|&(_, weight, column, norm)| weight * norm.apply(column.raw(r)))
            .sum()
    }
}

/// PreScore + Score + NormalizeScore + weighted sum for the feasible nodes (`prioritizeNodes`).
/// With a memo, each node's raw scores come from it while the node is as it was when they were
/// computed (`pass.kept`).
fn score_nodes<'a>(
    p: &PodCtx,
    pass: &FilterPass<'a>,
    all_nodes: impl Iterator<Item = &'a NodeInfo>,
    mut memo: Option<&mut CycleMemo>,
) -> Scores {
    // Feasible nodes always have their Node object (Filter rejects the others).
    let preferred = plugins::has_preferred_affinity(p.pod);
    let owner = p.spread_owner.as_ref();
    let raw_of = |ni: &NodeInfo| NodeScores {
        taint: ni
            .node()
            .map_or(0, |n| plugins::taint_toleration_raw(p.pod, n)),
        affinity: preferred.then(|| {
            ni.node()
                .map_or(0, |n| plugins::node_affinity_raw(p.pod, n))
        }),
        fit: plugins::least_allocated(p, ni),
        // BalancedAllocation skips BestEffort pods altogether (the same answer for every node).
        balanced: plugins::balanced_allocation(p, ni),
        owned: owner.map_or(0, |o| ni.owned_by(o)),
    };
    let spread = owner.map(|o| {
        plugins::SpreadCycle::new(
            o,
            pass.feasible
                .iter()
                .map(|&idx| pass.summary(idx).zone.as_deref()),
            all_nodes,
        )
    });
    // Nodes that fill alike are alike to PodTopologySpread too: its score is worked out again
    // only for a node whose inputs differ from the one before.
    let mut last_spread: Option<(SpreadInputs, i64)> = None;
    let raws: Vec<RawScores> = pass
        .feasible
        .iter()
        .zip(&pass.kept)
        .map(|(&idx, kept)| {
            // A node the memo scored is not read at all: its summary has the rest.
            let node = match (kept, memo.as_deref_mut()) {
                (Some(kept), _) => {
                    debug_assert_eq!(
                        *kept,
                        raw_of(pass.info(idx)),
                        "the memo's scores went stale"
                    );
                    *kept
                }
                (None, Some(m)) => {
                    let ni = pass.info(idx);
                    let fresh = raw_of(ni);
                    m.set_scores(pass.listed[idx].1, ni.generation, fresh);
                    fresh
                }
                (None, None) => raw_of(pass.info(idx)),
            };
            let spread = spread.as_ref().map_or(0, |c| {
                let summary = pass.summary(idx);
                let inputs = (summary.has_hostname, node.owned, summary.zone.as_deref());
                match last_spread {
                    Some((last, raw)) if last == inputs => raw,
                    _ => {
                        let raw = c.raw(inputs.0, inputs.1, inputs.2);
                        last_spread = Some((inputs, raw));
                        raw
                    }
                }
            });
            RawScores { node, spread }
        })
        .collect();

    let column = |c: Column| raws.iter().map(move |r| c.raw(r));
    let mut columns = vec![(
        TAINT_TOLERATION,
        plugins::WEIGHT_TAINT_TOLERATION,
        Column::TaintToleration,
        plugins::Normalizer::default_over(column(Column::TaintToleration), true),
    )];
    if preferred {
        columns.push((
            NODE_AFFINITY,
            plugins::WEIGHT_NODE_AFFINITY,
            Column::NodeAffinity,
            plugins::Normalizer::default_over(column(Column::NodeAffinity), false),
        ));
    }
    columns.push((
        NODE_RESOURCES_FIT,
        plugins::WEIGHT_NODE_RESOURCES_FIT,
        Column::NodeResourcesFit,
        plugins::Normalizer::Identity,
    ));
    if raws.iter().all(|r| r.node.balanced.is_some()) {
        columns.push((
            BALANCED_ALLOCATION,
            plugins::WEIGHT_BALANCED_ALLOCATION,
            Column::BalancedAllocation,
            plugins::Normalizer::Identity,
        ));
    }
    if spread.is_some() {
        columns.push((
            POD_TOPOLOGY_SPREAD,
            plugins::WEIGHT_POD_TOPOLOGY_SPREAD,
            Column::PodTopologySpread,
            plugins::Normalizer::spread_over(column(Column::PodTopologySpread)),
        ));
    }
    let mut scores = Scores {
        raws,
        columns,
        totals: Vec::new(),
    };
    // Nodes that fill alike score alike: a node with the raw scores of the one before it has
    // its total (the sum normalises each column again, with a division or two).
    let mut totals = Vec::with_capacity(scores.raws.len());
    let mut last: Option<(&RawScores, i64)> = None;
    for r in &scores.raws {
        let total = match last {
            Some((prev, total)) if prev == r => total,
            _ => scores.total(r),
        };
        totals.push(total);
        last = Some((r, total));
    }
    scores.totals = totals;
    scores
}

/// `selectHost`: the top-scoring node; among equals, reservoir sampling picks uniformly.
/// Without a random source (explain), the first top node in evaluation order.
fn select_host(totals: &[i64], mut rng: Option<&mut Rng>) -> Option<usize> {
    let max = *totals.iter().max()?;
    let mut chosen = None;
    let mut count = 0u64;
    for (i, t) in totals.iter().enumerate() {
        if *t != max {
            continue;
        }
        count += 1;
        let replace = match (&mut rng, count) {
            (_, 1) => true,
            (Some(r), n) => r.range(0, n - 1) == 0,
            (None, _) => false,
        };
        if replace {
            chosen = Some(i);
        }
    }
    chosen
}

enum CycleOutcome {
    NoNodes,
    Fits {
        node: Str,
        total: i64,
    },
    Unschedulable {
        message: String,
        plugins: BTreeSet<&'static str>,
        post_filter: PostFilter,
    },
}

struct Cycle {
    decision: SchedulingDecision,
    processed: usize,
    outcome: CycleOutcome,
}

/// Up to this many evaluated nodes a decision lists every one; beyond, the best-scoring feasible
/// nodes and the first rejected ones (a thousand-node cycle would otherwise cost a thousand
/// entries per pod).
const DECISION_DETAIL_NODES: usize = 100;
/// At most this many tied nodes are named in a decision.
const DECISION_MAX_TIED: usize = 20;

fn describe_nodes(
    pass: &FilterPass,
    scores: &Scores,
    chosen: Option<usize>,
) -> (Vec<NodeDecision>, usize) {
    // Indexed like `pass.processed`, not by node: a pass reads a few hundred of a thousand nodes
    // and this runs once per scheduled pod.
    let detailed = pass.processed.len() <= DECISION_DETAIL_NODES;
    let mut keep = vec![detailed; pass.processed.len()];
    if !detailed {
        let half = DECISION_DETAIL_NODES / 2;
        // The best `half` feasible nodes by score (ties: evaluation order); the keys are unique,
        // so selection finds exactly the nodes a full sort would put first.
        let mut best: Vec<(std::cmp::Reverse<i64>, usize)> = scores
            .totals
            .iter()
            .enumerate()
            .map(|(i, total)| (std::cmp::Reverse(*total), i))
            .collect();
        if best.len() > half {
            best.select_nth_unstable(half);
            best.truncate(half);
        }
        let mut picked = vec![false; pass.feasible.len()];
        for i in best.into_iter().map(|(_, i)| i).chain(chosen) {
            picked[i] = true;
        }
        let rejected_shown = half.min(pass.rejected.len());
        for (pos, (_, verdict)) in pass.processed.iter().enumerate() {
            keep[pos] = match *verdict {
                Verdict::Feasible(i) => picked[i],
                Verdict::Rejected(i) => i < rejected_shown,
            };
        }
    }
    let nodes: Vec<NodeDecision> = pass
        .processed
        .iter()
        .zip(&keep)
        .filter(|(_, keep)| **keep)
        .map(|((idx, verdict), _)| {
            let verdict = match *verdict {
                Verdict::Rejected(i) => {
                    let r = &pass.rejected[i].1;
                    NodeVerdict::Filtered {
                        plugin: r.plugin,
                        reasons: r.reasons.clone(),
                    }
                }
                Verdict::Feasible(i) => NodeVerdict::Feasible {
                    scores: scores.of(i),
                    total: scores.totals[i],
                },
            };
            NodeDecision {
                node: pass.name(*idx).to_string(),
                verdict,
            }
        })
        .collect();
    let omitted = pass.processed.len() - nodes.len();
    (nodes, omitted)
}

/// One scheduling cycle against `state`, shared by the scheduler and [`explain`]. Only
/// [`explain`] asks for each node's verdict and the tied nodes (`describe`): the scheduler acts on
/// the outcome alone, and keeping a hundred nodes' scores for each of its latest pods, for nobody
/// to read, was more than a third of its memory at 10,000 pods.
fn run_cycle(
    state: &ClusterState,
    p: &PodCtx,
    start: usize,
    limit: usize,
    rng: Option<&mut Rng>,
    describe: bool,
    mut memo: Option<&mut CycleMemo>,
) -> Cycle {
    if let Some(m) = memo.as_deref_mut() {
        m.enter(p);
    }
    let pass = filter_nodes(state, p, start, limit, memo.as_deref_mut());
    let total_nodes = pass.listed.len();
    let mut decision = SchedulingDecision {
        pod: p.key.clone(),
        nodes: Vec::new(),
        omitted_nodes: 0,
        chosen: None,
        tied_with: Vec::new(),
        message: None,
        preemption: None,
        total_nodes,
        feasible_nodes: pass.feasible.len(),
    };
    if total_nodes == 0 {
        decision.message = Some(NO_NODES_AVAILABLE.into());
        return Cycle {
            decision,
            processed: 0,
            outcome: CycleOutcome::NoNodes,
        };
    }
    let scores = score_nodes(p, &pass, state.nodes.values(), memo);

    if pass.feasible.is_empty() {
        let rejected: Vec<(&str, &Rejection)> = pass
            .rejected
            .iter()
            .map(|(idx, r)| (pass.name(*idx).as_str(), r))
            .collect();
        let post_filter = preemption::preempt(state, p, &rejected, total_nodes);
        let pf_message = post_filter.message();
        let reasons = pass
            .rejected
            .iter()
            .flat_map(|(_, r)| r.reasons.iter().map(String::as_str));
        let message = plugins::fit_error_message(total_nodes, reasons, pf_message.as_deref());
        let plugins = pass.rejected.iter().map(|(_, r)| r.plugin).collect_set();
        if describe {
            (decision.nodes, decision.omitted_nodes) = describe_nodes(&pass, &scores, None);
        }
        decision.message = Some(message.clone());
        if let PostFilter::Preempt { node, victims } = &post_filter {
            decision.preemption = Some((node.clone(), victims.clone()));
        }
        let outcome = CycleOutcome::Unschedulable {
            message,
            plugins,
            post_filter,
        };
        return Cycle {
            decision,
            processed: pass.processed.len(),
            outcome,
        };
    }

    let best = select_host(&scores.totals, rng).expect("feasible is not empty");
    let node = pass.name(pass.feasible[best]).clone();
    let total = scores.totals[best];
    if describe {
        (decision.nodes, decision.omitted_nodes) = describe_nodes(&pass, &scores, Some(best));
        decision.tied_with = pass
            .feasible
            .iter()
            .zip(&scores.totals)
            .filter(|(idx, t)| **t == total && *pass.name(**idx) != node)
            .take(DECISION_MAX_TIED)
            .map(|(idx, _)| pass.name(*idx).to_string())
            .collect();
        decision.chosen = Some(node.to_string());
    }
    Cycle {
        decision,
        processed: pass.processed.len(),
        outcome: CycleOutcome::Fits { node, total },
    }
}

/// Explains where `pod` would go on the live state, for the inspector's Scheduling tab: every node's
/// filter verdict or scores and the winner (the first top-scoring node; `tied_with` lists the
/// others the real scheduler would pick from at random). `pods` are the cluster's pods; the pod
/// itself is left out, so a bound pod is explained as if it were being scheduled again. Every
/// node is evaluated, and nothing is evicted: a preemption is only reported.
pub fn explain(pod: &Pod, nodes: &[&Node], pods: &[&Pod]) -> SchedulingDecision {
    let mut state = ClusterState::default();
    for n in nodes {
        state.set_node(Rc::new(Object::from((*n).clone())));
    }
    let me = pod_key(pod);
    for q in pods {
        let key = pod_key(q);
        if key == me || is_terminal(q) {
            continue;
        }
        if !q.spec.node_name.is_empty() {
            state.place(key, PodEntry::for_pod(q, &q.spec.node_name, false));
        } else if let Some(n) = q
            .status
            .nominated_node_name
            .as_deref()
            .filter(|n| !n.is_empty())
        {
            state.nominated.insert(
                key,
                Nominated {
                    entry: PodEntry::for_pod(q, &Str::from(n), false),
                },
            );
        }
    }
    state.list_nodes();
    let p = PodCtx::new(pod);
    run_cycle(&state, &p, 0, usize::MAX, None, true, None).decision
}

// ------------------------------------------------------------------ cluster events

/// A change that may make unschedulable pods schedulable (`framework.ClusterEvent`).
enum ClusterEvent<'a> {
    NodeAdd(&'a Node),
    NodeUpdate {
        old: &'a Node,
        new: &'a Node,
    },
    /// A pod charged to a node went away (deleted, finished, or its assumed binding failed).
    AssignedPodDelete(&'a PodEntry),
    /// A claim, volume or class was added or changed.
    VolumeChange,
}

impl ClusterEvent<'_> {
    /// Node updates matter only when something a filter reads changed (heartbeats do not).
    fn relevant(&self) -> bool {
        match self {
            ClusterEvent::NodeUpdate { old, new } => {
                old.spec.unschedulable != new.spec.unschedulable
                    || old.spec.taints != new.spec.taints
                    || old.metadata.labels != new.metadata.labels
                    || old.status.allocatable != new.status.allocatable
            }
            _ => true,
        }
    }
}

fn fits_empty_node(pod: &Pod, node: &Node) -> bool {
    let mut ni = NodeInfo::default();
    ni.set_node(Rc::new(Object::from(node.clone())));
    plugins::fits_request(&plugins::pod_resources(pod).requests, &ni).is_empty()
}

fn allocatable_increased(pod: &Pod, old: &Node, new: &Node) -> bool {
    let (o, op) = Resources::from_list(&old.status.allocatable);
    let (n, np) = Resources::from_list(&new.status.allocatable);
    if np.unwrap_or(plugins::DEFAULT_ALLOWED_PODS) > op.unwrap_or(plugins::DEFAULT_ALLOWED_PODS) {
        return true;
    }
    let req = plugins::pod_resources(pod).requests;
    (req.milli_cpu > 0 && n.milli_cpu > o.milli_cpu)
        || (req.memory > 0 && n.memory > o.memory)
        || (req.ephemeral_storage > 0 && n.ephemeral_storage > o.ephemeral_storage)
        || req
            .scalars
            .iter()
            .any(|(k, v)| *v > 0 && n.scalars.get(k) > o.scalars.get(k))
}

/// QueueingHint of `plugin` for `event` (the plugins' `EventsToRegister` and hint functions):
/// could the event make a pod this plugin rejected schedulable? Without the pod, any event the
/// plugin registers for counts.
fn hint(plugin: &str, pod: Option<&Pod>, event: &ClusterEvent) -> bool {
    use ClusterEvent::*;
    let tolerates_all =
        |p: &Pod, n: &Node| plugins::first_untolerated_taint(&p.spec.tolerations, n).is_none();
    match (plugin, event) {
        (NODE_UNSCHEDULABLE, NodeAdd(n)) => {
            pod.is_none_or(|p| plugins::node_unschedulable(&PodCtx::new(p), n).is_none())
        }
        (NODE_UNSCHEDULABLE, NodeUpdate { old, new }) => {
            old.spec.unschedulable && !new.spec.unschedulable
        }
        (NODE_NAME, NodeAdd(n)) => pod.is_none_or(|p| p.spec.node_name == n.metadata.name),
        (TAINT_TOLERATION, NodeAdd(n)) => pod.is_none_or(|p| tolerates_all(p, n)),
        (TAINT_TOLERATION, NodeUpdate { old, new }) => {
            pod.is_none_or(|p| tolerates_all(p, new) && !tolerates_all(p, old))
        }
        (NODE_AFFINITY, NodeAdd(n)) => pod.is_none_or(|p| plugins::required_affinity_matches(p, n)),
        (NODE_AFFINITY, NodeUpdate { old, new }) => pod.is_none_or(|p| {
            plugins::required_affinity_matches(p, new)
                && !plugins::required_affinity_matches(p, old)
        }),
        (NODE_PORTS, NodeAdd(_)) => true,
        (NODE_PORTS, AssignedPodDelete(e)) => pod.is_none_or(|p| {
            let mut ni = NodeInfo::default();
            for (i, hp) in e.ports.iter().enumerate() {
                ni.used_ports.insert(hp.clone(), i as u32 + 1);
            }
            ni.ports_conflict(&plugins::host_ports(p))
        }),
        (NODE_RESOURCES_FIT, NodeAdd(n)) => pod.is_none_or(|p| fits_empty_node(p, n)),
        (NODE_RESOURCES_FIT, NodeUpdate { old, new }) => {
            pod.is_none_or(|p| fits_empty_node(p, new) && allocatable_increased(p, old, new))
        }
        (NODE_RESOURCES_FIT, AssignedPodDelete(_)) => true,
        (plugins::VOLUME_BINDING, VolumeChange | NodeAdd(_)) => true,
        _ => false,
    }
}

// ------------------------------------------------------------------ the controller

/// kube-scheduler with the default profile. See the module documentation for how its queue maps
/// onto the world's work queue.
#[derive(Clone, Debug)]
pub struct Scheduler {
    state: ClusterState,
    queue: SchedulingQueue,
    /// Pods popped and sent to Bind whose response has not come back (to re-queue on failure).
    binding: SlotMap<ObjectKey, queue::QueuedPod>,
    /// Claims whose `selected-node` patch (VolumeBinding's PreBind) is on its way, and the pod
    /// it is for: a failed patch fails that pod's binding cycle.
    prebinding: SlotMap<ObjectKey, ObjectKey>,
    /// Charges forgotten after a failed binding, still to be announced to unschedulable pods.
    forgotten: Vec<PodEntry>,
    /// Events about a binding's answer, handed over by `events_for_response`.
    answer_events: Vec<EventRecord>,
    /// The latest simulated time seen (watch handlers are not told the time).
    now: Millis,
    /// Set by a (re)start: the cache is rebuilt from the informer on first use.
    needs_rebuild: bool,
    last_leftover_flush: Millis,
    /// `nextStartNodeIndex`: where the next Filter pass starts, so nodes share the load.
    next_start_node_index: usize,
    /// Each node's verdict and scores for the last pod shape, while the node is unchanged.
    memo: CycleMemo,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler::new()
    }
}

impl Scheduler {
    /// A scheduler that has not yet listed anything.
    pub fn new() -> Self {
        Scheduler {
            state: ClusterState::default(),
            queue: SchedulingQueue::new(),
            binding: SlotMap::new(),
            prebinding: SlotMap::new(),
            forgotten: Vec::new(),
            answer_events: Vec::new(),
            now: 0,
            needs_rebuild: true,
            last_leftover_flush: 0,
            next_start_node_index: 0,
            memo: CycleMemo::default(),
        }
    }

    /// Which queue `pod` waits in, if any (activeQ, backoffQ, unschedulablePods).
    pub fn queue_of(&self, pod: &ObjectKey) -> Option<QueueName> {
        self.queue.location(pod).map(|(_, q)| q)
    }

    /// How many pods wait in activeQ, backoffQ and unschedulablePods.
    pub fn queue_lengths(&self) -> (usize, usize, usize) {
        self.queue.lens()
    }

    /// Total requests charged to `node` (bound and assumed pods), for tests and the UI.
    pub fn requested_on(&self, node: &str) -> Option<(Resources, usize)> {
        self.state
            .nodes
            .get(node)
            .map(|ni| (ni.requested.clone(), ni.pods.len()))
    }

    /// Rebuilds the cache and the queue from the informer after a (re)start.
    fn rebuild(&mut self, cache: &Cache) {
        self.state = ClusterState::default();
        // The new cache counts generations from the start again.
        self.memo = CycleMemo::default();
        self.queue = SchedulingQueue::new();
        self.binding.clear();
        self.forgotten.clear();
        for n in cache.list(Kind::Node) {
            self.state.set_node(n.clone());
        }
        for obj in cache.list(Kind::Pod) {
            if let Some(pod) = obj.as_pod() {
                let mut ignored = Vec::new();
                self.observe_pod(pod, None, &mut ignored);
            }
        }
        self.needs_rebuild = false;
    }

    /// Moves unschedulable pods a cluster event may help; returns those now in activeQ.
    fn move_for(&mut self, event: &ClusterEvent, cache: Option<&Cache>) -> Vec<ObjectKey> {
        let now = self.now;
        self.queue.move_unschedulable(now, |qp| {
            if qp.unschedulable_plugins.is_empty() {
                return true;
            }
            let pod = cache.and_then(|c| c.get(&qp.key)).and_then(|o| o.as_pod());
            qp.unschedulable_plugins
                .iter()
                .any(|pl| hint(pl, pod, event))
        })
    }

    fn announce_forgotten(&mut self, cache: Option<&Cache>, out: &mut Vec<ObjectKey>) {
        for entry in std::mem::take(&mut self.forgotten) {
            out.extend(self.move_for(&ClusterEvent::AssignedPodDelete(&entry), cache));
        }
    }

    /// Applies a pod add/update to the cache and the queue. `old` is the previous cached version.
    fn observe_pod(&mut self, pod: &Pod, old: Option<&Pod>, out: &mut Vec<ObjectKey>) {
        let key = pod_key(pod);
        if !pod.spec.node_name.is_empty() {
            self.queue.delete(&key);
            self.state.nominated.remove(&key);
            // The entry this cache placed from an earlier version of the pod: every version
            // since had a spec equal to its (or it would have been placed again).
            let placed = self
                .state
                .pods
                .get(&key)
                .filter(|e| !e.assumed && e.node == pod.spec.node_name);
            // A status write shares its spec with the version before (`Pod::spec_mut`), so the
            // pointer settles most comparisons without reading either spec.
            let same_spec = old.filter(|o| Rc::ptr_eq(&o.spec, &pod.spec) || o.spec == pod.spec);
            let unchanged =
                placed.is_some() && same_spec.is_some_and(|o| PodEntry::charges_alike(o, pod));
            if !unchanged {
                let entry = match placed.filter(|_| same_spec.is_some()) {
                    // The spec's charge (its requests parsed from their quantities, its ports,
                    // its priority) is the placed entry's: a pod's status changes four times on
                    // its way to Ready, and parsing its requests again each time was 2% of the
                    // instructions converging a cluster.
                    Some(e) => PodEntry::for_pod_charged_as(pod, e),
                    None => PodEntry::for_pod(pod, &pod.spec.node_name, false),
                };
                self.state.place(key, entry);
            }
            return;
        }
        if let Some(e) = self.state.pods.get(&key).filter(|e| e.assumed) {
            if e.uid == pod.metadata.uid {
                // Reserved and being bound: the cache still shows it unbound.
                return;
            }
            // Another pod of the same name (a StatefulSet's replacement): the assumed one is
            // gone, and its binding was never seen. Upstream's cache keys pods by uid, so the
            // two never meet; here the stale one is forgotten and its node freed.
            self.binding.remove(&key);
            if let Some(entry) = self.state.unplace(&key) {
                self.forgotten.push(entry);
            }
        }
        if !is_pending(pod) {
            self.queue.delete(&key);
            self.state.nominated.remove(&key);
            return;
        }
        match pod
            .status
            .nominated_node_name
            .as_deref()
            .filter(|n| !n.is_empty())
        {
            Some(n) => {
                self.state.nominated.insert(
                    key.clone(),
                    Nominated {
                        entry: PodEntry::for_pod(pod, &Str::from(n), false),
                    },
                );
            }
            None => {
                self.state.nominated.remove(&key);
            }
        }
        if self.queue.add(key.clone(), plugins::pod_priority(pod)) {
            out.push(key);
        } else if old
            .is_some_and(|o| o.spec != pod.spec || o.metadata.labels != pod.metadata.labels)
        {
            // The pod itself changed (tolerations, labels…): it may fit now.
            out.extend(self.queue.move_one(&key, self.now));
        }
    }

    /// A pod the informer no longer has: drop it everywhere and free its node.
    fn forget_pod(&mut self, key: &ObjectKey) {
        self.queue.delete(key);
        self.state.nominated.remove(key);
        self.binding.remove(key);
        if let Some(entry) = self.state.unplace(key) {
            self.forgotten.push(entry);
        }
    }

    /// Keys whose state in the informer cache differs from the scheduler's bookkeeping.
    fn out_of_sync(&self, cache: &Cache) -> Vec<ObjectKey> {
        let mut keys = BTreeSet::new();
        for (name, ni) in &self.state.nodes {
            let k = ObjectKey::new(Kind::Node, "", name);
            let same = match (&ni.node, cache.get(&k)) {
                (Some(mine), Some(theirs)) => {
                    mine.meta().resource_version == theirs.meta().resource_version
                }
                (None, None) => true,
                _ => false,
            };
            if !same {
                keys.insert(k);
            }
        }
        for n in cache.list(Kind::Node) {
            if self
                .state
                .nodes
                .get(&n.meta().name)
                .is_none_or(|ni| ni.node.is_none())
            {
                keys.insert(n.key());
            }
        }
        // In no particular order: `keys` orders them.
        for (k, e) in self.state.pods.iter() {
            let same = cache.get(k).and_then(|o| o.as_pod()).is_some_and(|p| {
                p.spec.node_name == e.node || (e.assumed && p.spec.node_name.is_empty())
            });
            if !same {
                keys.insert(k.clone());
            }
        }
        for k in self.queue.keys() {
            if !cache
                .get(k)
                .and_then(|o| o.as_pod())
                .is_some_and(is_pending)
            {
                keys.insert(k.clone());
            }
        }
        for o in cache.list(Kind::Pod) {
            let Some(p) = o.as_pod() else { continue };
            let k = pod_key(p);
            let known = self.queue.contains(&k) || self.state.pods.contains_key(&k);
            if !known && (is_pending(p) || !p.spec.node_name.is_empty()) {
                keys.insert(k);
            }
        }
        keys.into_iter().collect()
    }

    fn record(observed: String, desired: &str, diff: String) -> Option<ReconcileRecord> {
        Some(ReconcileRecord {
            observed,
            desired: desired.into(),
            diff,
        })
    }

    /// One scheduling cycle for `qp` (already popped).
    fn schedule_one(
        &mut self,
        qp: queue::QueuedPod,
        obj: &Rc<Object>,
        pod: &Pod,
        ctx: &mut Ctx<'_>,
    ) -> Outcome {
        let mut out = Outcome::done();
        self.state.list_nodes();
        let total_nodes = self.state.listed().len();
        if let Some(reason) = volume_prefilter(pod, ctx.cache).filter(|_| total_nodes > 0) {
            // PreFilter: every node would refuse alike, so none is tried and none can be freed.
            let message = format!(
                "0/{total_nodes} nodes are available: {reason}. preemption: 0/{total_nodes} nodes \
                 are available: {total_nodes} Preemption is not helpful for scheduling.."
            );
            self.queue
                .add_unschedulable(qp, ctx.now, [plugins::VOLUME_BINDING].into());
            self.fail(&mut out, obj, pod, &message, None, ctx);
            out.record = Self::record(
                format!(
                    "pod {} unscheduled; {} nodes",
                    pod.metadata.name, total_nodes
                ),
                "bound to a feasible node",
                message,
            );
            return out;
        }
        let mut p = PodCtx::new(pod);
        p.volume_terms = bound_volume_terms(pod, ctx.cache);
        p.volume_zones = bound_volume_zones(pod, ctx.cache);
        let limit = num_feasible_nodes_to_find(total_nodes);
        let start = if total_nodes == 0 {
            0
        } else {
            self.next_start_node_index % total_nodes
        };
        let cycle = run_cycle(
            &self.state,
            &p,
            start,
            limit,
            Some(&mut *ctx.rng),
            false,
            Some(&mut self.memo),
        );
        if total_nodes > 0 {
            self.next_start_node_index = (start + cycle.processed) % total_nodes;
        }
        let observed = concat(&[
            "pod ",
            &pod.metadata.name,
            " unscheduled; ",
            decimal_into(&mut [0; 20], total_nodes as u64),
            " nodes",
        ]);
        let desired = "bound to a feasible node";
        match cycle.outcome {
            CycleOutcome::Fits { ref node, total } => {
                // Reserve: charge the node now, so the next cycle sees the slot taken.
                self.state
                    .place(p.key.clone(), PodEntry::for_ctx(&p, node, true));
                self.state.nominated.remove(&p.key);
                self.binding.insert(p.key.clone(), qp);
                let prebind = select_node_for_claims(pod, node, ctx.cache);
                for req in &prebind {
                    self.prebinding.insert(req.key(), p.key.clone());
                }
                out.batch(prebind);
                // `Scheduled` is recorded when the binding succeeds (see `on_response`).
                out.request(ApiRequest::Bind {
                    key: p.key.clone(),
                    node: node.to_string(),
                });
                out.record =
                    Self::record(observed, desired, format!("best {node} (score {total})"));
            }
            CycleOutcome::NoNodes => {
                self.queue.add_unschedulable(qp, ctx.now, BTreeSet::new());
                self.fail(&mut out, obj, pod, NO_NODES_AVAILABLE, None, ctx);
                out.record = Self::record(observed, desired, NO_NODES_AVAILABLE.into());
            }
            CycleOutcome::Unschedulable {
                ref message,
                ref plugins,
                ref post_filter,
            } => {
                self.queue.add_unschedulable(qp, ctx.now, plugins.clone());
                let nominate = match post_filter {
                    PostFilter::Preempt { node, victims } => {
                        self.preempt(&mut out, pod, node, victims, ctx);
                        Some(node.as_str())
                    }
                    PostFilter::Failed(_) => None,
                };
                self.fail(&mut out, obj, pod, message, nominate, ctx);
                out.record = Self::record(observed, desired, message.clone());
            }
        }
        out
    }

    /// `handleSchedulingFailure`: the Warning event every time; the condition only if it changed.
    fn fail(
        &mut self,
        out: &mut Outcome,
        obj: &Rc<Object>,
        pod: &Pod,
        message: &str,
        nominate: Option<&str>,
        ctx: &Ctx<'_>,
    ) {
        out.event(EventRecord::warning(obj, "FailedScheduling", message));
        let same = find_condition(&pod.status.conditions, "PodScheduled").is_some_and(|c| {
            c.status == "False"
                && c.reason.as_deref() == Some("Unschedulable")
                && c.message.as_deref() == Some(message)
        });
        let nominated_same =
            nominate.is_none_or(|n| pod.status.nominated_node_name.as_deref() == Some(n));
        if same && nominated_same {
            return;
        }
        let mut updated = pod.clone();
        set_condition(
            &mut updated.status.conditions,
            Condition {
                type_: "PodScheduled".into(),
                status: "False".into(),
                reason: Some("Unschedulable".into()),
                message: Some(message.into()),
                last_transition_time: Some(Time(ctx.now)),
                ..Default::default()
            },
        );
        if let Some(n) = nominate {
            updated.status.nominated_node_name = Some(Str::from(n));
        }
        // Preemption's requests ride in the same batch so one failure does not cancel the rest.
        let req = ApiRequest::UpdateStatus(Object::from(updated));
        match out.batches.first_mut() {
            Some(batch) => batch.insert(0, req),
            None => out.request(req),
        }
    }

    /// `prepareCandidate`: mark each victim with DisruptionTarget, delete it, and nominate the pod.
    fn preempt(
        &mut self,
        out: &mut Outcome,
        pod: &Pod,
        node: &str,
        victims: &[ObjectKey],
        ctx: &Ctx<'_>,
    ) {
        let mut reqs = Vec::new();
        for v in victims {
            let Some(vobj) = ctx.cache.get(v) else {
                continue;
            };
            let Some(vpod) = vobj.as_pod() else { continue };
            let mut marked = vpod.clone();
            set_condition(
                &mut marked.status.conditions,
                Condition {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                    reason: Some("PreemptionByScheduler".into()),
                    message: Some(Str::from(format!(
                        "{SCHEDULER_NAME}: preempting to accommodate a higher priority pod"
                    ))),
                    last_transition_time: Some(Time(ctx.now)),
                    ..Default::default()
                },
            );
            reqs.push(ApiRequest::UpdateStatus(Object::from(marked)));
            reqs.push(ApiRequest::Delete {
                key: v.clone(),
                options: DeleteOptions {
                    precondition_uid: Some(vpod.metadata.uid.to_string()),
                    ..Default::default()
                },
            });
            out.event(EventRecord::normal(
                vobj,
                "Preempted",
                format!("Preempted by pod {} on node {node}", pod.metadata.uid),
            ));
        }
        out.batch(reqs);
        let key = pod_key(pod);
        self.state.nominated.insert(
            key,
            Nominated {
                entry: PodEntry::for_pod(pod, &Str::from(node), false),
            },
        );
    }

    fn idle_record(&self, key: &ObjectKey) -> Option<ReconcileRecord> {
        let name = &key.name;
        let observed = match self.queue.location(key) {
            Some((qp, QueueName::BackoffQ)) => format!(
                "pod {name} in backoffQ until {}",
                Time(qp.backoff_expiry()).to_rfc3339()
            ),
            Some((_, QueueName::UnschedulablePods)) => {
                format!("pod {name} in unschedulablePods, waiting for a cluster event")
            }
            Some((_, QueueName::ActiveQ)) => match self.queue.head() {
                Some(h) => format!("pod {name} in activeQ behind {}", h.name),
                None => format!("pod {name} in activeQ"),
            },
            None => match self.state.pods.get(key) {
                Some(e) if e.assumed => format!("pod {name} assumed on {}; binding", e.node),
                Some(e) => format!("pod {name} bound to {}", e.node),
                None => format!("pod {name} not pending"),
            },
        };
        Self::record(observed, "bound to a feasible node", String::new())
    }
}

/// The pod's claims the cache holds, with their keys.
fn claims_in_cache<'a>(pod: &Pod, cache: &'a Cache) -> Vec<(ObjectKey, &'a CustomObject)> {
    let Some(claim_kind) = storage::claim_kind() else {
        return Vec::new();
    };
    storage::pod_claims(pod)
        .into_iter()
        .filter_map(|name| {
            let key = ObjectKey::new(claim_kind, &pod.metadata.namespace, name);
            let claim = cache.get(&key)?.as_custom()?;
            Some((key, claim))
        })
        .collect()
}

/// VolumeBinding's PreFilter refusals, which concern the pod rather than any node: a claim the
/// scheduler does not know, a claim being deleted, or claims of Immediate classes not yet bound.
fn volume_prefilter(pod: &Pod, cache: &Cache) -> Option<String> {
    let class_kind = storage::class_kind()?;
    let known = claims_in_cache(pod, cache);
    if let Some(missing) = storage::pod_claims(pod)
        .into_iter()
        .find(|name| !known.iter().any(|(k, _)| k.name == *name))
    {
        return Some(format!("persistentvolumeclaim \"{missing}\" not found"));
    }
    if let Some((key, _)) = known
        .iter()
        .find(|(_, c)| c.metadata.deletion_timestamp.is_some())
    {
        return Some(format!(
            "persistentvolumeclaim \"{}\" is being deleted",
            key.name
        ));
    }
    let unbound_immediate = known.iter().any(|(_, claim)| {
        let unbound = storage::str_at(claim, &["spec", "volumeName"]).is_none_or(str::is_empty);
        let class = storage::str_at(claim, &["spec", "storageClassName"]).unwrap_or("");
        let mode = cache
            .get(&ObjectKey::new(class_kind, "", class))
            .and_then(|o| o.as_custom())
            .and_then(|c| storage::str_at(c, &["volumeBindingMode"]));
        unbound && mode != Some("WaitForFirstConsumer")
    });
    unbound_immediate.then(|| "pod has unbound immediate PersistentVolumeClaims".to_string())
}

/// VolumeBinding's PreFilter for bound claims: the required node affinity of each volume the
/// pod's bound claims name.
fn bound_volume_terms(pod: &Pod, cache: &Cache) -> Vec<Vec<NodeSelectorTerm>> {
    let Some(volume_kind) = storage::volume_kind() else {
        return Vec::new();
    };
    claims_in_cache(pod, cache)
        .into_iter()
        .filter_map(|(_, claim)| {
            let volume =
                storage::str_at(claim, &["spec", "volumeName"]).filter(|v| !v.is_empty())?;
            let volume = cache
                .get(&ObjectKey::new(volume_kind, "", volume))?
                .as_custom()?;
            let terms = volume
                .content
                .get("spec")?
                .get("nodeAffinity")?
                .get("required")?
                .get("nodeSelectorTerms")?;
            let findings = Default::default();
            crate::sim::api::strict::decode_as::<Vec<NodeSelectorTerm>>(terms, &findings).ok()
        })
        .collect()
}

/// The topology labels VolumeZone reads on a volume (`volumeZoneLabels`: GA and beta keys).
const VOLUME_ZONE_LABELS: [&str; 4] = [
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
];

/// VolumeZone's PreFilter: the zone and region labels of each volume the pod's bound claims name.
fn bound_volume_zones(pod: &Pod, cache: &Cache) -> Vec<(String, Vec<String>)> {
    let Some(volume_kind) = storage::volume_kind() else {
        return Vec::new();
    };
    let mut zones = Vec::new();
    for (_, claim) in claims_in_cache(pod, cache) {
        let Some(volume) = storage::str_at(claim, &["spec", "volumeName"])
            .filter(|v| !v.is_empty())
            .and_then(|v| cache.get(&ObjectKey::new(volume_kind, "", v)))
        else {
            continue;
        };
        for key in VOLUME_ZONE_LABELS {
            if let Some(value) = volume.meta().labels.get(key) {
                zones.push((
                    key.to_string(),
                    value.split("__").map(String::from).collect(),
                ));
            }
        }
    }
    zones
}

/// VolumeBinding's PreBind for the pod's claims that wait for their first consumer: each gets
/// the chosen node in its `selected-node` annotation, which lets its provisioner make the volume
/// there. Simplified: upstream then waits (up to 10 minutes) for the claims to be bound before it
/// binds the pod; here the pod is bound at once and its kubelet is what waits.
fn select_node_for_claims(pod: &Pod, node: &str, cache: &Cache) -> Vec<ApiRequest> {
    let Some(class_kind) = storage::class_kind() else {
        return Vec::new();
    };
    claims_in_cache(pod, cache)
        .into_iter()
        .filter_map(|(key, claim)| {
            let unbound = storage::str_at(claim, &["spec", "volumeName"]).is_none_or(str::is_empty);
            let class = storage::str_at(claim, &["spec", "storageClassName"]).unwrap_or("");
            let waits = cache
                .get(&ObjectKey::new(class_kind, "", class))
                .and_then(|o| o.as_custom())
                .and_then(|c| storage::str_at(c, &["volumeBindingMode"]))
                == Some("WaitForFirstConsumer");
            if !unbound || !waits || claim.metadata.annotations.contains_key(storage::SELECTED_NODE) {
                return None;
            }
            Some(ApiRequest::Patch {
                key,
                patch: serde_json::json!({"metadata": {"annotations": {storage::SELECTED_NODE: node}}}),
                status: false,
            })
        })
        .collect()
}

impl Controller for Scheduler {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Scheduler
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        // VolumeBinding's listers: claims, volumes and classes, to keep a pod where its bound
        // volumes are and to name the node of a claim that waits for its first consumer.
        static WATCHED: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        WATCHED.get_or_init(|| {
            [Kind::Node, Kind::Pod]
                .into_iter()
                .chain(storage::claim_kind())
                .chain(storage::volume_kind())
                .chain(storage::class_kind())
                .collect()
        })
    }

    fn has_field_selector(&self) -> bool {
        true
    }

    /// The pod informer's field selector: `status.phase!=Succeeded,status.phase!=Failed`, so a
    /// finished pod leaves the cache (and frees its node) as if deleted.
    fn accepts(&self, obj: &Object) -> bool {
        obj.as_pod().is_none_or(|p| !is_terminal(p))
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        if self.needs_rebuild {
            self.rebuild(cache);
            return self.queue.active_keys();
        }
        let mut out = Vec::new();
        self.announce_forgotten(Some(cache), &mut out);
        match &*ev.object {
            Object::Node(node) => {
                if ev.type_ == WatchEventType::Deleted {
                    self.state.remove_node(&node.metadata.name);
                } else {
                    self.state.set_node(ev.object.clone());
                    let event = match old.and_then(|o| o.as_node()) {
                        None => ClusterEvent::NodeAdd(node),
                        Some(o) => ClusterEvent::NodeUpdate { old: o, new: node },
                    };
                    if event.relevant() {
                        out.extend(self.move_for(&event, Some(cache)));
                    }
                }
            }
            // VolumeBinding's events: a claim, volume or class that appears or changes may
            // unblock the pods it refused.
            Object::Custom(_) if ev.type_ != WatchEventType::Deleted => {
                out.extend(self.move_for(&ClusterEvent::VolumeChange, Some(cache)));
            }
            Object::Pod(pod) => {
                let key = pod_key(pod);
                if ev.type_ == WatchEventType::Deleted {
                    self.queue.delete(&key);
                    self.state.nominated.remove(&key);
                    self.binding.remove(&key);
                    if let Some(entry) = self.state.unplace(&key) {
                        out.extend(
                            self.move_for(&ClusterEvent::AssignedPodDelete(&entry), Some(cache)),
                        );
                    }
                } else {
                    let old_pod = old.and_then(|o| o.as_pod());
                    self.observe_pod(pod, old_pod, &mut out);
                }
            }
            _ => {}
        }
        out.extend(self.queue.flush_backoff(self.now));
        out
    }

    /// After a (re)start: every pending pod. After a relist that kept the process (a watch that
    /// expired) or a periodic resync: the pods and nodes whose cached state the scheduler's own
    /// bookkeeping disagrees with, so `reconcile` can bring each back in line.
    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        if self.needs_rebuild {
            return cache
                .list(Kind::Pod)
                .filter_map(|o| o.as_pod())
                .filter(|p| is_pending(p))
                .map(pod_key)
                .collect();
        }
        self.out_of_sync(cache)
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        self.now = ctx.now;
        if self.needs_rebuild {
            self.rebuild(ctx.cache);
        }
        if key.kind == Kind::Node {
            let observed = match ctx.cache.get(key) {
                Some(n) => {
                    self.state.set_node(n.clone());
                    format!("node {} resynced", key.name)
                }
                None => {
                    self.state.remove_node(&key.name);
                    format!("node {} gone", key.name)
                }
            };
            let mut out = Outcome::done();
            out.record = Self::record(observed, "cache matches the informer", String::new());
            return out;
        }
        let Some(obj) = ctx.cache.get(key).cloned() else {
            self.forget_pod(key);
            let mut out = Outcome::done();
            out.record = Self::record(
                format!("pod {} not found", key.name),
                "bound to a feasible node",
                String::new(),
            );
            return out;
        };
        let Some(pod) = obj.as_pod() else {
            return Outcome::done();
        };
        // Level-triggered: bring the bookkeeping for this pod in line with the cache first.
        let mut activated = Vec::new();
        self.observe_pod(pod, None, &mut activated);
        if !is_pending(pod) {
            let mut out = Outcome::done();
            out.record = self.idle_record(key);
            return out;
        }
        if let Some(qp) = self.queue.pop_if_head(key) {
            return self.schedule_one(qp, &obj, pod, ctx);
        }
        let mut out = Outcome::done();
        out.record = self.idle_record(key);
        if self
            .queue
            .location(key)
            .is_some_and(|(_, q)| q == QueueName::ActiveQ)
        {
            // A pod ahead of it in activeQ goes first; it waits its turn again at the back.
            self.queue.send_to_back(key);
            out.requeue(1);
        }
        out
    }

    /// The binding cycle's end: on success `Scheduled`; on failure the assumed pod is forgotten
    /// (freeing its node), the pod backs off, and `FailedScheduling` tells why.
    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, now: Millis) {
        self.now = self.now.max(now);
        if let ApiRequest::Patch { key: claim, .. } = req {
            let pod = self.prebinding.remove(claim);
            if let (Some(pod), Err(e)) = (pod, result) {
                let uid = self
                    .state
                    .pods
                    .get(&pod)
                    .map(|e| e.uid.clone())
                    .unwrap_or_default();
                self.answer_events.push(EventRecord {
                    type_: "Warning",
                    reason: "FailedScheduling".into(),
                    message: format!("running PreBind plugin \"VolumeBinding\": {}", e.message)
                        .into(),
                    object: pod,
                    uid,
                    field_path: Str::EMPTY,
                });
            }
            return;
        }
        let ApiRequest::Bind { key, node } = req else {
            return;
        };
        let qp = self.binding.remove(key);
        let uid = self
            .state
            .pods
            .get(key)
            .map(|e| e.uid.clone())
            .unwrap_or_default();
        let err = match result {
            Ok(stored) => {
                self.answer_events.push(EventRecord::normal(
                    stored,
                    "Scheduled",
                    Str::concat(&[
                        "Successfully assigned ",
                        &key.namespace,
                        "/",
                        &key.name,
                        " to ",
                        node,
                    ]),
                ));
                return;
            }
            Err(e) => e,
        };
        if self.state.pods.get(key).is_some_and(|e| e.assumed) {
            if let Some(entry) = self.state.unplace(key) {
                self.forgotten.push(entry);
            }
        }
        if let Some(qp) = qp {
            self.queue.add_backoff(qp, now);
        }
        self.answer_events.push(EventRecord {
            type_: "Warning",
            reason: "FailedScheduling".into(),
            message: format!("running Bind plugin \"DefaultBinder\": {}", err.message).into(),
            object: key.clone(),
            uid,
            field_path: Str::EMPTY,
        });
    }

    fn events_for_response(&mut self, _req: &ApiRequest, _result: &ApiResult) -> Vec<EventRecord> {
        std::mem::take(&mut self.answer_events)
    }

    /// A Bind cancelled because its PreBind failed: the binding cycle ends as a failed one
    /// does (`Unreserve`, the pod back to the queue with back-off).
    fn on_skipped(&mut self, req: &ApiRequest) {
        match req {
            ApiRequest::Patch { key, .. } => {
                self.prebinding.remove(key);
            }
            ApiRequest::Bind { key, .. } => {
                let qp = self.binding.remove(key);
                if self.state.pods.get(key).is_some_and(|e| e.assumed) {
                    if let Some(entry) = self.state.unplace(key) {
                        self.forgotten.push(entry);
                    }
                }
                if let Some(qp) = qp {
                    self.queue.add_backoff(qp, self.now);
                }
            }
            _ => {}
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Scheduler::new()))
    }

    fn tick(&mut self, now: Millis) -> (Vec<ObjectKey>, Option<Millis>) {
        self.now = now;
        if self.needs_rebuild {
            return (Vec::new(), Some(BACKOFF_FLUSH_PERIOD));
        }
        let mut out = Vec::new();
        self.announce_forgotten(None, &mut out);
        out.extend(self.queue.flush_backoff(now));
        if now >= self.last_leftover_flush + UNSCHEDULABLE_FLUSH_PERIOD {
            self.last_leftover_flush = now;
            out.extend(self.queue.flush_unschedulable_leftover(now));
        }
        // Safety net: the head of activeQ is always on the world's queue (de-duplicated there).
        if let Some(h) = self.queue.head() {
            if !out.contains(h) {
                out.push(h.clone());
            }
        }
        let mut next =
            BACKOFF_FLUSH_PERIOD.min(self.last_leftover_flush + UNSCHEDULABLE_FLUSH_PERIOD - now);
        if let Some(t) = self.queue.next_backoff_expiry() {
            next = next.min(t.saturating_sub(now));
        }
        (out, Some(next.max(1)))
    }
}
