//! "What changed" between two moments of a run: the objects whose spec or status differ, each as
//! a unified diff of its YAML, the way `kubectl diff` reads.
//!
//! Events and Leases are left out (they change with every heartbeat and say so elsewhere), as are
//! a node's heartbeat times, so what is listed is what the controllers and the learner changed.

use serde_json::Value as Json;

use crate::sim::api::types::{Kind, Object};
use crate::sim::world::Sim;

/// Lines of context around each change.
const CONTEXT: usize = 2;
/// Past this many lines on either side an object's diff is not worked out line by line (the
/// table would be quadratic); it is shown as replaced whole.
const MAX_DIFF_LINES: usize = 400;

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    Removed(String),
    Added(String),
    /// Unchanged lines left out between two hunks.
    Gap(usize),
}

/// One object that differs between the two moments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectChange {
    /// `deployment/web`, `pod/web-7c9…` (with `namespace/` outside `default`).
    pub name: String,
    /// `created`, `deleted` or `changed`.
    pub what: &'static str,
    pub lines: Vec<DiffLine>,
}

/// The card: what differs between two moments of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangesView {
    pub from: crate::sim::api::types::Millis,
    pub to: crate::sim::api::types::Millis,
    pub objects: Vec<ObjectChange>,
    /// Where the run stood when the card was made (its moment and how many actions it had):
    /// the card goes once the clock moves or the learner acts.
    pub made_at: (crate::sim::run::Moment, usize),
}

/// What differs from `before` to `after`, in kind and name order.
pub fn between(before: &Sim, after: &Sim) -> Vec<ObjectChange> {
    let shown = |o: &&std::rc::Rc<Object>| o.kind() != Kind::Lease;
    // Both in key order (the store's), so one merge pass pairs them.
    let old: Vec<_> = before
        .api()
        .all_but_events()
        .into_iter()
        .filter(shown)
        .collect();
    let new: Vec<_> = after
        .api()
        .all_but_events()
        .into_iter()
        .filter(shown)
        .collect();
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => a.key().cmp(&b.key()),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (a, b) = match order {
            std::cmp::Ordering::Less => (Some(old[i].as_ref()), None),
            std::cmp::Ordering::Greater => (None, Some(new[j].as_ref())),
            std::cmp::Ordering::Equal => (Some(old[i].as_ref()), Some(new[j].as_ref())),
        };
        i += usize::from(order != std::cmp::Ordering::Greater);
        j += usize::from(order != std::cmp::Ordering::Less);
        if let Some(change) = object_change(a, b) {
            out.push(change);
        }
    }
    out
}

fn object_change(before: Option<&Object>, after: Option<&Object>) -> Option<ObjectChange> {
    let any = after.or(before)?;
    let key = any.key();
    let kind = key.kind.as_str().to_ascii_lowercase();
    let name = if key.namespace.is_empty() || key.namespace == "default" {
        format!("{kind}/{}", key.name)
    } else {
        format!("{}/{kind}/{}", key.namespace, key.name)
    };
    let old = before.map(compared).unwrap_or_default();
    let new = after.map(compared).unwrap_or_default();
    if before.is_some() && after.is_some() && old == new {
        return None;
    }
    let what = match (before, after) {
        (None, _) => "created",
        (_, None) => "deleted",
        _ => "changed",
    };
    Some(ObjectChange {
        name,
        what,
        lines: diff_lines(&old, &new),
    })
}

/// What is compared of an object: its spec and status (its data for the kinds without them), as
/// YAML, a node's heartbeat times left out.
fn compared(o: &Object) -> String {
    let json = o.to_json();
    let mut kept = serde_json::Map::new();
    for part in ["spec", "status", "data"] {
        if let Some(v) = json.get(part) {
            kept.insert(part.to_string(), v.clone());
        }
    }
    if o.kind() == Kind::Node {
        if let Some(Json::Array(conds)) =
            kept.get_mut("status").and_then(|s| s.get_mut("conditions"))
        {
            for c in conds.iter_mut().filter_map(Json::as_object_mut) {
                c.remove("lastHeartbeatTime");
            }
        }
    }
    crate::sim::input::yaml::to_yaml(&Json::Object(kept))
}

/// A unified diff of two texts' lines, with [`CONTEXT`] lines around each change.
pub fn diff_lines(old: &str, new: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let full = if a.len() > MAX_DIFF_LINES || b.len() > MAX_DIFF_LINES {
        a.iter()
            .map(|l| DiffLine::Removed(l.to_string()))
            .chain(b.iter().map(|l| DiffLine::Added(l.to_string())))
            .collect()
    } else {
        lcs_diff(&a, &b)
    };
    with_context(full)
}

/// Every line, kept, removed or added, from the longest common subsequence of the two.
fn lcs_diff(a: &[&str], b: &[&str]) -> Vec<DiffLine> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(DiffLine::Same(a[i].to_string()));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            // Removals before additions, as `diff -u` writes them.
            out.push(DiffLine::Removed(a[i].to_string()));
            i += 1;
        } else {
            out.push(DiffLine::Added(b[j].to_string()));
            j += 1;
        }
    }
    out
}

/// Keeps [`CONTEXT`] unchanged lines around each change and folds the rest into gaps.
fn with_context(full: Vec<DiffLine>) -> Vec<DiffLine> {
    let changed: Vec<bool> = full
        .iter()
        .map(|l| !matches!(l, DiffLine::Same(_)))
        .collect();
    let near = |i: usize| {
        let lo = i.saturating_sub(CONTEXT);
        let hi = (i + CONTEXT + 1).min(changed.len());
        changed[lo..hi].iter().any(|&c| c)
    };
    let mut out = Vec::new();
    let mut skipped = 0;
    for (i, line) in full.into_iter().enumerate() {
        if near(i) {
            if skipped > 0 {
                out.push(DiffLine::Gap(skipped));
                skipped = 0;
            }
            out.push(line);
        } else {
            skipped += 1;
        }
    }
    if skipped > 0 && !out.is_empty() {
        out.push(DiffLine::Gap(skipped));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::session::Session;

    #[test]
    fn a_line_diff_keeps_two_lines_of_context_and_folds_the_rest() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            diff_lines(old, new),
            vec![
                DiffLine::Gap(2),
                DiffLine::Same("c".into()),
                DiffLine::Same("d".into()),
                DiffLine::Removed("e".into()),
                DiffLine::Added("E".into()),
                DiffLine::Same("f".into()),
                DiffLine::Same("g".into()),
                DiffLine::Gap(1),
            ]
        );
        assert_eq!(diff_lines("x\n", "x\n"), vec![]);
    }

    #[test]
    fn a_scale_shows_the_deployments_replicas_and_the_new_pods_but_no_heartbeat() {
        let deployment = crate::sim::examples::DEFAULT_MANIFEST;
        let mut s = Session::new(1);
        s.apply_text("playground.yaml", deployment);
        s.advance_to(60_000, usize::MAX);
        let before = s.sim.detached_copy();
        s.kubectl("scale deployment web --replicas=4");
        s.advance_to(120_000, usize::MAX);
        let changes = between(&before, &s.sim);
        let names: Vec<(&str, &str)> = changes.iter().map(|c| (c.name.as_str(), c.what)).collect();
        assert!(names.contains(&("deployment/web", "changed")), "{names:?}");
        assert_eq!(
            names
                .iter()
                .filter(|(n, w)| n.starts_with("pod/web-") && *w == "created")
                .count(),
            1,
            "{names:?}"
        );
        assert!(
            !names
                .iter()
                .any(|(n, _)| n.starts_with("node/") || n.starts_with("lease/")),
            "{names:?}"
        );
        let web = changes.iter().find(|c| c.name == "deployment/web").unwrap();
        assert!(
            web.lines
                .contains(&DiffLine::Removed("  replicas: 3".into())),
            "{:?}",
            web.lines
        );
        assert!(
            web.lines.contains(&DiffLine::Added("  replicas: 4".into())),
            "{:?}",
            web.lines
        );
    }
}
