//! `metav1.Condition`s of objects kept as JSON (custom resources, what operators report): one
//! made from its parts, and a list stamped as `meta.SetStatusCondition` stamps it.

use serde_json::{json, Value as Json};

use super::types::{Millis, Time};

/// A condition without its timestamps: `status` is `True` or `False`.
pub fn condition(type_: &str, ok: bool, reason: &str, message: impl AsRef<str>) -> Json {
    json!({
        "type": type_,
        "status": if ok { "True" } else { "False" },
        "reason": reason,
        "message": message.as_ref(),
    })
}

/// Stamps `conds` against the live list `old`: a condition whose status holds keeps its
/// `lastTransitionTime`, one that changed (or is new) gets `now`, to the second; each carries
/// the `observedGeneration` it was computed for.
pub fn stamp(conds: &mut [Json], old: Option<&Json>, now: Millis, generation: i64) {
    let second = json!(Time(now - now % 1000).to_rfc3339());
    for c in conds.iter_mut() {
        let prev = old
            .and_then(Json::as_array)
            .and_then(|a| a.iter().find(|o| o.get("type") == c.get("type")));
        let t = match prev {
            Some(p) if p.get("status") == c.get("status") => p
                .get("lastTransitionTime")
                .cloned()
                .unwrap_or_else(|| second.clone()),
            _ => second.clone(),
        };
        if let Some(m) = c.as_object_mut() {
            m.insert("lastTransitionTime".into(), t);
            m.insert("observedGeneration".into(), json!(generation));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_holds() {
        let old = json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"},
                         {"type": "Synced", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"}]);
        let mut conds = vec![
            condition("Ready", true, "Ok", "fine"),
            condition("Synced", false, "Failed", "no"),
            condition("New", true, "Ok", ""),
        ];
        stamp(&mut conds, Some(&old), 61_500, 3);
        assert_eq!(conds[0]["lastTransitionTime"], "2026-01-01T00:00:05Z");
        assert_eq!(conds[1]["lastTransitionTime"], "2026-01-01T00:01:01Z");
        assert_eq!(conds[2]["lastTransitionTime"], "2026-01-01T00:01:01Z");
        assert_eq!(conds[0]["observedGeneration"], 3);
    }
}
