//! What each node's Filter and Score gave the last pods of one shape, kept until the node changes.
//!
//! A cycle runs every Filter plugin and four Score plugins on a few hundred nodes, and at 10,000
//! pods on 1,000 nodes that was a quarter of the simulation's instructions, though a cycle
//! changes one node (the chosen one, by Reserve) and the pods of a ReplicaSet all ask the same.
//! So the scheduler keeps, per node, the verdict and raw scores it computed for the current
//! *pod shape* (the spec, the controller default spreading counts for, and what PreFilter
//! read from volumes), stamped with the node's generation ([`NodeInfo::generation`], a number
//! [`super::ClusterState`] gives a node at each change). A node whose generation still matches
//! gives its memo; any other is evaluated as before. Only "feasible" is remembered (a rejection's reasons are recomputed), and nodes with
//! nominated pods, evaluated with those pods added, are never memoised. Debug builds evaluate
//! every memo hit again and compare: the trace cannot tell the two paths apart.
//!
//! Upstream evaluates every node afresh, in parallel (16 goroutines); this is the sequential
//! simulation's stand-in for that parallelism, not a model change.

use std::rc::Rc;

use crate::sim::api::shared_str::Str;
use crate::sim::api::types::{NodeSelectorTerm, PodSpec};

#[cfg(doc)]
use super::plugins::NodeInfo;
use super::plugins::PodCtx;

/// The raw Score plugin results a node gave a pod shape (before normalization, which depends on
/// the other nodes of the cycle), and what PodTopologySpread reads from the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct NodeScores {
    pub taint: i64,
    /// None when the shape has no preferred node affinity (NodeAffinity's PreScore skips).
    pub affinity: Option<i64>,
    pub fit: i64,
    /// None when BalancedAllocation skips the shape (a BestEffort pod).
    pub balanced: Option<i64>,
    /// The pods of the shape's spread owner on the node (0 without one): part of the shape, so
    /// a cycle reads no node's pods by owner while the node is unchanged.
    pub owned: i64,
}

/// A node the memo knows passed every filter for the current shape, as it is now.
#[derive(Clone, Copy, Debug)]
pub(super) struct Feasible {
    /// Its raw scores, once a cycle scored it.
    pub scores: Option<NodeScores>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Memo {
    /// The shape it holds for, 0 for none.
    shape: u64,
    /// The node's generation it holds for.
    generation: u64,
    /// Known once a cycle scored the node (a node can pass Filter after the cycle has enough).
    scores: Option<NodeScores>,
}

/// Per node slot, the last shape's verdict (feasible) and scores.
#[derive(Debug, Default)]
pub(super) struct CycleMemo {
    /// Counts the shapes seen; the current one's number.
    shape: u64,
    spec: Option<Rc<PodSpec>>,
    spread_owner: Option<Str>,
    volume_terms: Vec<Vec<NodeSelectorTerm>>,
    volume_zones: Vec<(String, Vec<String>)>,
    nodes: Vec<Memo>,
}

// A copy starts empty: the memo is a cache the next cycles fill again, and time travel copies
// the scheduler for every moment it keeps (a thousand nodes' entries each).
impl Clone for CycleMemo {
    fn clone(&self) -> CycleMemo {
        CycleMemo::default()
    }
}

impl CycleMemo {
    /// Makes `p`'s shape the current one: the memos of another shape no longer match.
    pub fn enter(&mut self, p: &PodCtx) {
        let same = self.spec.as_ref().is_some_and(|s| {
            // The pending pods of one template share the spec the API server defaulted for
            // the first of them; others (a spec written again, a restored snapshot) are
            // compared by value, once per cycle, against hundreds of node evaluations saved.
            (Rc::ptr_eq(s, &p.pod.spec) || **s == *p.pod.spec)
                && self.spread_owner == p.spread_owner
                && self.volume_terms == p.volume_terms
                && self.volume_zones == p.volume_zones
        });
        if !same {
            self.shape += 1;
            self.spec = Some(p.pod.spec.clone());
            self.spread_owner = p.spread_owner.clone();
            self.volume_terms = p.volume_terms.clone();
            self.volume_zones = p.volume_zones.clone();
        }
    }

    fn at(&self, slot: u32, generation: u64) -> Option<&Memo> {
        self.nodes
            .get(slot as usize)
            .filter(|m| m.shape == self.shape && m.generation == generation)
    }

    /// Whether the node in `slot`, at `generation` ([`NodeInfo::generation`]), passed every
    /// filter for this shape, with its raw scores when they are known: one look at the memo for
    /// both phases of a cycle.
    pub fn feasible(&self, slot: u32, generation: u64) -> Option<Feasible> {
        self.at(slot, generation)
            .map(|m| Feasible { scores: m.scores })
    }

    /// The node in `slot`, at `generation`, passed every filter for this shape.
    pub fn set_feasible(&mut self, slot: u32, generation: u64) {
        let i = slot as usize;
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, Memo::default());
        }
        self.nodes[i] = Memo {
            shape: self.shape,
            generation,
            scores: None,
        };
    }

    /// Remembers the raw scores of a node [`CycleMemo::set_feasible`] marked.
    pub fn set_scores(&mut self, slot: u32, generation: u64, scores: NodeScores) {
        if let Some(m) = self.nodes.get_mut(slot as usize) {
            if m.shape == self.shape && m.generation == generation {
                m.scores = Some(scores);
            }
        }
    }
}
