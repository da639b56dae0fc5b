//! Indexed Jobs (`indexed_job_utils.go`): each pod carries a completion index, the Job succeeds
//! when every index in `[0, completions)` has a succeeded pod, and `status.completedIndexes`
//! keeps them as intervals (`"0-2,4"`).

use std::collections::BTreeSet;

use serde_json::{json, Value as Json};

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::job::COMPLETION_INDEX;
use crate::sim::api::types::Pod;
use crate::sort::CollectTree;

/// A pod's completion index, from its annotation.
pub fn index_of(pod: &Pod) -> Option<usize> {
    pod.metadata
        .annotations
        .get(COMPLETION_INDEX)
        .and_then(|v| v.parse().ok())
}

/// Gives a new pod its index: annotation and label, hostname `<job>-<index>` where the template
/// sets none, and `JOB_COMPLETION_INDEX` in every container's environment.
pub fn add_index(pod: &mut Pod, job: &str, index: usize) {
    let i = index.to_string();
    pod.metadata.annotations.insert(COMPLETION_INDEX, i.clone());
    pod.metadata.labels.insert(COMPLETION_INDEX, i);
    if pod.spec.hostname.is_none() {
        pod.spec_mut().hostname = Some(Box::new(json!(format!("{job}-{index}"))));
    }
    let var = json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "fieldPath": format!("metadata.annotations['{COMPLETION_INDEX}']")}}});
    let spec = pod.spec_mut();
    for c in spec
        .init_containers
        .iter_mut()
        .chain(spec.containers.iter_mut())
    {
        match c.env.as_deref_mut() {
            Some(Json::Array(env)) => env.push(var.clone()),
            _ => c.env = Some(Box::new(json!([var.clone()]))),
        }
    }
}

/// `"0-2,4"` → {0, 1, 2, 4}; malformed parts are skipped.
pub fn parse_indexes(s: &str) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
            out.extend(a..=b.min(a + 100_000));
        }
    }
    out
}

/// {0, 1, 2, 4} → `"0-2,4"`.
pub fn format_indexes(set: &BTreeSet<usize>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut it = set.iter().copied().peekable();
    while let Some(start) = it.next() {
        let mut end = start;
        while it.peek() == Some(&(end + 1)) {
            end += 1;
            it.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

/// The indexes that have succeeded: those in status, and those of the succeeded pods being
/// counted now (`succeeded`: the uids in `uncountedTerminatedPods.succeeded`). A pod already
/// counted as a failure (deleted before it finished) does not complete its index.
pub fn completed_indexes(
    job: &CustomObject,
    pods: &[&Pod],
    succeeded: &BTreeSet<String>,
) -> BTreeSet<usize> {
    let mut set = job
        .at(&["status", "completedIndexes"])
        .and_then(Json::as_str)
        .map(parse_indexes)
        .unwrap_or_default();
    if crate::sim::api::job::indexed(job) {
        set.extend(
            pods.iter()
                .filter(|p| {
                    p.status.phase == "Succeeded" && succeeded.contains(p.metadata.uid.as_str())
                })
                .filter_map(|p| index_of(p)),
        );
    }
    set
}

/// Active pods an Indexed Job does not need: without a valid index, for an index already
/// completed or beyond `completions`, or a second pod for the same index.
pub fn redundant<'a>(
    active: &[&'a Pod],
    completions: Option<i32>,
    completed: &BTreeSet<usize>,
) -> Vec<&'a Pod> {
    let limit = completions.map_or(0, |c| c.max(0) as usize);
    let mut seen = BTreeSet::new();
    active
        .iter()
        .copied()
        .filter(|p| match index_of(p) {
            Some(i) if i < limit && !completed.contains(&i) => !seen.insert(i),
            _ => true,
        })
        .collect()
}

/// `firstPendingIndexes`: the lowest `n` indexes neither completed nor held by a pod that is
/// still running or terminating.
pub fn first_pending(
    pods: &[&Pod],
    completed: &BTreeSet<usize>,
    n: usize,
    completions: usize,
) -> Vec<usize> {
    let held = pods
        .iter()
        .filter(|p| !matches!(p.status.phase.as_str(), "Succeeded" | "Failed"))
        .filter_map(|p| index_of(p))
        .collect_set();
    (0..completions)
        .filter(|i| !completed.contains(i) && !held.contains(i))
        .take(n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_indexes_read_and_print_as_intervals() {
        let set = parse_indexes("0-2,4,7-8");
        assert_eq!(set.iter().copied().collect::<Vec<_>>(), [0, 1, 2, 4, 7, 8]);
        assert_eq!(format_indexes(&set), "0-2,4,7-8");
        assert_eq!(format_indexes(&BTreeSet::new()), "");
    }
}
