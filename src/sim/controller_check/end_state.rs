//! What a run of the check ends with, compared between runs: the primary objects' status and, per controller owner, the owned objects.
//!
//! Only what the controller is answerable for is compared, and only what is the same in every
//! correct run: a primary's `status` with times masked (a controller stamping `lastUpdated`
//! is not wrong), and per owner and owned kind the objects with their name, labels and
//! everything but `metadata` and `status`. A name the API server generated from `generateName`
//! differs between runs as soon as a fault moves the RNG, so it is compared as
//! `generateName*`; annotations are left out because other writers (the Deployment
//! controller's revision, a ConflictingWriter's mark) put theirs there.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::sim::api::types::{Kind, Object};
use crate::sim::session::Session;

/// The owner group of owned objects no primary controls.
const NO_OWNER: &str = "no owner";

/// The end state of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct EndState {
    /// Per primary, as the learner names it (`Website web`): its status, times masked.
    pub(super) primaries: BTreeMap<String, Json>,
    /// Per (owner, owned kind): the owned objects as compared, in a canonical order.
    pub(super) children: BTreeMap<(String, Kind), Vec<Json>>,
}

/// `Website web`, or `Website prod/web` outside the default namespace: how summaries name an
/// object.
pub(super) fn object_name(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() || namespace == "default" {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

impl EndState {
    /// Reads the end state of `session` for a controller of `primary` owning `owned`.
    pub(super) fn of(session: &Session, primary: Kind, owned: &[Kind]) -> EndState {
        let api = session.sim.api();
        let mut state = EndState::default();
        for o in api.list(primary) {
            let meta = o.meta();
            let status = o.to_json().get("status").cloned().unwrap_or(Json::Null);
            state.primaries.insert(
                object_name(primary.as_str(), &meta.namespace, &meta.name),
                mask_times(status),
            );
        }
        for &kind in owned {
            for o in api.list(kind) {
                let owner = match o.meta().controller_ref() {
                    Some(r) if r.kind == primary.as_str() => {
                        object_name(&r.kind, &o.meta().namespace, &r.name)
                    }
                    // Owned by something else (a ReplicaSet's pods): not this controller's.
                    Some(_) => continue,
                    None => NO_OWNER.to_string(),
                };
                state
                    .children
                    .entry((owner, kind))
                    .or_default()
                    .push(compared(o));
            }
        }
        for list in state.children.values_mut() {
            list.sort_by_cached_key(|j| j.to_string());
        }
        state
    }

    /// How this run's end differs from `want`'s (the fault-free run's), in one clause a learner
    /// reads ("2 Deployments are owned by Website web (the fault-free run has 1)"), most telling
    /// first: duplicates, then missing objects, then a changed object, then a status.
    pub(super) fn difference(&self, want: &EndState) -> Option<String> {
        let groups = |s: &EndState| {
            s.children
                .keys()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
        };
        let mut all = groups(self);
        all.extend(groups(want));
        let count = |s: &EndState, g: &(String, Kind)| s.children.get(g).map_or(0, Vec::len);
        let owned_by = |g: &(String, Kind), n: usize| {
            let (owner, kind) = g;
            let kinds = plural(kind.as_str(), n);
            let verb = if n == 1 { "is" } else { "are" };
            if owner == NO_OWNER {
                format!("{n} {kinds} without an owner exist")
            } else {
                format!("{n} {kinds} {verb} owned by {owner}")
            }
        };
        for g in &all {
            let (got, wanted) = (count(self, g), count(want, g));
            if got > wanted {
                return Some(format!(
                    "{} (the fault-free run has {wanted})",
                    owned_by(g, got)
                ));
            }
        }
        for g in &all {
            let (got, wanted) = (count(self, g), count(want, g));
            if got < wanted {
                return Some(format!(
                    "{} (the fault-free run has {wanted})",
                    owned_by(g, got)
                ));
            }
        }
        for (g, got) in &self.children {
            let Some(wanted) = want.children.get(g) else {
                continue;
            };
            for (a, b) in got.iter().zip(wanted) {
                if let Some((path, x, y)) = first_difference(a, b, String::new()) {
                    let name = a["name"].as_str().unwrap_or("?");
                    let whose = if g.0 == NO_OWNER {
                        String::new()
                    } else {
                        format!(" (owned by {})", g.0)
                    };
                    return Some(format!(
                        "{} {name}{whose} has {path} {} where the fault-free run's has {}",
                        g.1.as_str(),
                        short(&x),
                        short(&y)
                    ));
                }
            }
        }
        for (name, wanted) in &want.primaries {
            let got = self.primaries.get(name).unwrap_or(&Json::Null);
            if let Some((path, x, y)) = first_difference(got, wanted, "status".into()) {
                return Some(format!(
                    "{name}'s {path} is {} where the fault-free run ends with {}",
                    short(&x),
                    short(&y)
                ));
            }
        }
        None
    }

    /// How many objects the controller owns, over every owner and kind.
    pub(super) fn owned_count(&self) -> usize {
        self.children
            .iter()
            .filter(|((owner, _), _)| owner != NO_OWNER)
            .map(|(_, v)| v.len())
            .sum()
    }
}

/// An owned object as runs compare it.
fn compared(o: &Object) -> Json {
    let meta = o.meta();
    let mut out = Map::new();
    let name = if meta.generate_name.is_empty() {
        meta.name.to_string()
    } else {
        format!("{}*", meta.generate_name)
    };
    out.insert("name".into(), Json::String(name));
    if !meta.labels.is_empty() {
        let labels: Map<String, Json> = meta
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), Json::String(v.to_string())))
            .collect();
        out.insert("labels".into(), Json::Object(labels));
    }
    if meta.deletion_timestamp.is_some() {
        out.insert("terminating".into(), Json::Bool(true));
    }
    if let Json::Object(m) = o.to_json() {
        for (k, v) in m {
            if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
                out.insert(k, mask_times(v));
            }
        }
    }
    Json::Object(out)
}

/// The value with every time in it replaced by `<time>`: fields named `…Time` or `…Timestamp`
/// and strings written as RFC 3339 times.
fn mask_times(v: Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(
            m.into_iter()
                .map(|(k, v)| {
                    if k.ends_with("Time") || k.ends_with("Timestamp") {
                        (k, Json::String("<time>".into()))
                    } else {
                        (k, mask_times(v))
                    }
                })
                .collect(),
        ),
        Json::Array(a) => Json::Array(a.into_iter().map(mask_times).collect()),
        Json::String(s) if looks_like_time(&s) => Json::String("<time>".into()),
        other => other,
    }
}

/// `2026-01-01T00:00:05Z` and the like.
fn looks_like_time(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
}

/// The first field where `a` and `b` differ, with both values (`Null` where one lacks it).
fn first_difference(a: &Json, b: &Json, path: String) -> Option<(String, Json, Json)> {
    if a == b {
        return None;
    }
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                first_difference(
                    x.get(k).unwrap_or(&Json::Null),
                    y.get(k).unwrap_or(&Json::Null),
                    join(k),
                )
            })
        }
        (Json::Array(x), Json::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{path}[{i}]"))),
        _ => Some((
            if path.is_empty() { "it".into() } else { path },
            a.clone(),
            b.clone(),
        )),
    }
}

/// A value as a summary quotes it: compact JSON, cut at 80 characters.
fn short(v: &Json) -> String {
    let s = match v {
        Json::Null => "absent".to_string(),
        other => other.to_string(),
    };
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}

/// `Deployment` → `Deployments` (one → `Deployment`), `Policy` → `Policies`, `Ingress` →
/// `Ingresses`.
pub(super) fn plural(kind: &str, n: usize) -> String {
    if n == 1 {
        kind.to_string()
    } else if let Some(stem) = kind
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        format!("{stem}ies")
    } else if kind.ends_with('s') {
        format!("{kind}es")
    } else {
        format!("{kind}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_are_masked_wherever_they_are_written() {
        let v = mask_times(json!({
            "lastUpdated": "2026-01-01T00:00:05Z",
            "conditions": [{"lastTransitionTime": "x", "status": "True"}],
            "availableReplicas": 2
        }));
        assert_eq!(
            v,
            json!({
                "lastUpdated": "<time>",
                "conditions": [{"lastTransitionTime": "<time>", "status": "True"}],
                "availableReplicas": 2
            })
        );
    }

    #[test]
    fn the_first_difference_names_its_field_path() {
        let d = first_difference(
            &json!({"spec": {"replicas": 3, "x": [1, 2]}}),
            &json!({"spec": {"replicas": 2, "x": [1, 2]}}),
            String::new(),
        );
        assert_eq!(d, Some(("spec.replicas".into(), json!(3), json!(2))));
    }

    #[test]
    fn kinds_are_counted_in_english() {
        assert_eq!(plural("Deployment", 2), "Deployments");
        assert_eq!(plural("Deployment", 1), "Deployment");
        assert_eq!(plural("NetworkPolicy", 0), "NetworkPolicies");
        assert_eq!(plural("Ingress", 3), "Ingresses");
    }
}
