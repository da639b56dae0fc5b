//! DefaultPreemption, the PostFilter plugin: which lower-priority pods to evict, and on which node.
//!
//! As `framework/preemption`: a pod may preempt unless `preemptionPolicy: Never` (or a victim it
//! chose earlier is still terminating on its nominated node). Nodes rejected as
//! UnschedulableAndUnresolvable are skipped ("Preemption is not helpful for scheduling"). On the
//! others, every lower-priority pod is removed in a dry run; if the pod then fits, victims are
//! reprieved one by one from the most important down, and the node with the least damage wins.
//! PodDisruptionBudgets are not consulted (a deliberate simplification).

use crate::sim::api::types::{Millis, ObjectKey};
use crate::sort::StableSort;

use super::plugins::{fit_error_message, run_filters, NodeInfo, PodCtx, PodEntry, Rejection};
use super::ClusterState;
use crate::vec_map::VecMap;

/// Preemption's message for a node where evicting pods cannot help.
pub const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// Preemption's message for a node with no lower-priority pod to evict.
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";

/// What PostFilter decided.
#[derive(Clone, Debug, PartialEq)]
pub enum PostFilter {
    /// No preemption; the message (without the "preemption: " prefix) goes into the FitError.
    Failed(String),
    /// Evict `victims` so the pod fits on `node` (the pod is nominated to it).
    Preempt {
        node: String,
        victims: Vec<ObjectKey>,
    },
}

impl PostFilter {
    /// The PostFilter message as it appears in FailedScheduling ("preemption: …"), if any.
    pub fn message(&self) -> Option<String> {
        match self {
            PostFilter::Failed(m) => Some(format!("preemption: {m}")),
            PostFilter::Preempt { .. } => None,
        }
    }
}

struct Candidate {
    node: String,
    victims: Vec<(ObjectKey, i64, Millis)>,
}

/// `podEligibleToPreemptOthers`.
fn eligible(
    state: &ClusterState,
    p: &PodCtx,
    rejected: &[(&str, &Rejection)],
) -> Result<(), String> {
    if p.pod
        .spec
        .preemption_policy
        .as_ref()
        .and_then(|v| v.as_str())
        == Some("Never")
    {
        return Err("not eligible due to preemptionPolicy=Never.".into());
    }
    let nominated = p.pod.status.nominated_node_name.as_deref().unwrap_or("");
    if nominated.is_empty() {
        return Ok(());
    }
    if rejected
        .iter()
        .any(|(n, r)| *n == nominated && r.unresolvable)
    {
        return Ok(());
    }
    if let Some(ni) = state.nodes.get(nominated) {
        let terminating_victim = ni
            .pods
            .iter()
            .filter_map(|k| state.pods.get(k))
            .any(|e| e.priority < p.priority && e.terminating_by_preemption);
        if terminating_victim {
            return Err("not eligible due to a terminating pod on the nominated node.".into());
        }
    }
    Ok(())
}

/// `SelectVictimsOnNode`: Err carries the node's status reasons when preemption cannot help.
fn select_victims(
    state: &ClusterState,
    p: &PodCtx,
    base: &NodeInfo,
) -> Result<Vec<(ObjectKey, i64, Millis)>, Vec<String>> {
    let mut ni = base.clone();
    let mut potential: Vec<(&ObjectKey, &PodEntry)> = base
        .pods
        .iter()
        .filter_map(|k| state.pods.get(k).map(|e| (k, e)))
        .filter(|(_, e)| e.priority < p.priority)
        .collect();
    if potential.is_empty() {
        return Err(vec![NO_VICTIMS.into()]);
    }
    for (k, e) in &potential {
        ni.remove_pod(k, e);
    }
    if let Some(r) = run_filters(p, &ni) {
        return Err(r.reasons);
    }
    // `MoreImportantPod`: higher priority first, then the one that started earlier.
    potential.stable_sort_by(|a, b| {
        b.1.priority
            .cmp(&a.1.priority)
            .then(a.1.start.cmp(&b.1.start))
            .then(a.0.cmp(b.0))
    });
    let mut victims = Vec::new();
    for (k, e) in potential {
        ni.add_pod(k, e);
        if run_filters(p, &ni).is_some() {
            ni.remove_pod(k, e);
            victims.push((k.clone(), e.priority, e.start));
        }
    }
    Ok(victims)
}

/// `pickOneNodeForPreemption` without PDBs: the lowest highest-victim priority, then the
/// smallest priority sum, then the fewest victims, then the latest-started top victims.
fn pick(candidates: Vec<Candidate>) -> Option<Candidate> {
    let key = |c: &Candidate| {
        let highest = c.victims.iter().map(|v| v.1).max().unwrap_or(i64::MIN);
        // Upstream offsets each priority by MaxInt32+1 so that negative priorities still add up.
        let sum: i128 = c
            .victims
            .iter()
            .map(|v| i128::from(v.1) + (1i128 << 31))
            .sum();
        let earliest_top = c
            .victims
            .iter()
            .filter(|v| v.1 == highest)
            .map(|v| v.2)
            .min()
            .unwrap_or(0);
        (
            highest,
            sum,
            c.victims.len(),
            std::cmp::Reverse(earliest_top),
        )
    };
    let mut best: Option<Candidate> = None;
    for c in candidates {
        if best.as_ref().is_none_or(|b| key(&c) < key(b)) {
            best = Some(c);
        }
    }
    best
}

/// Runs DefaultPreemption after Filter found no node. `rejected` holds every node's status.
pub(super) fn preempt(
    state: &ClusterState,
    p: &PodCtx,
    rejected: &[(&str, &Rejection)],
    num_all_nodes: usize,
) -> PostFilter {
    if let Err(msg) = eligible(state, p, rejected) {
        return PostFilter::Failed(msg);
    }
    let mut statuses: VecMap<&str, Vec<String>> = VecMap::new();
    let mut candidates = Vec::new();
    for (node, r) in rejected {
        if r.unresolvable {
            statuses.insert(*node, vec![NOT_HELPFUL.into()]);
            continue;
        }
        let Some(ni) = state.nodes.get(*node) else {
            continue;
        };
        match select_victims(state, p, ni) {
            Ok(victims) => candidates.push(Candidate {
                node: node.to_string(),
                victims,
            }),
            Err(reasons) => {
                statuses.insert(*node, reasons);
            }
        }
    }
    if let Some(c) = pick(candidates) {
        return PostFilter::Preempt {
            node: c.node,
            victims: c.victims.into_iter().map(|v| v.0).collect(),
        };
    }
    // Nodes preemption did not look at count as "not helpful" (`SetAbsentNodesStatus`).
    let absent = num_all_nodes.saturating_sub(statuses.len());
    let reasons = statuses
        .values()
        .flatten()
        .map(String::as_str)
        .chain(std::iter::repeat_n(NOT_HELPFUL, absent));
    PostFilter::Failed(fit_error_message(num_all_nodes, reasons, None))
}
