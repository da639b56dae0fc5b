//! Small formatting helpers kubectl uses everywhere: ages, RFC 1123 timestamps, resource names,
//! label lists, and the error shapes cobra and the API machinery print.

use serde_json::Value as Json;

use crate::sim::api::types::{
    Event, Kind, LabelSelector, Millis, Object, ObjectKey, StringMap, Time, EPOCH_UNIX_SECONDS,
};
use crate::sim::api::{ApiRequest, ApiResult};
use crate::sim::kubectl::CommandOutput;
use crate::sim::time::human_duration;
use crate::sim::world::Sim;

/// `translateTimestampSince`: the age of a timestamp at `now`, `<unknown>` when absent.
pub fn since(now: Millis, t: Option<Time>) -> String {
    match t {
        Some(t) => human_duration(now as i64 - t.0 as i64),
        None => "<unknown>".into(),
    }
}

/// When an Event happened, as `describe`'s Events table and `kubectl events` print it: `59s`
/// once, `10s (x5 over 3m)` for a repeated one (last seen, count, first seen).
pub fn event_interval(now: Millis, e: &Event) -> String {
    let first = since(now, e.first_timestamp);
    if e.count > 1 {
        format!(
            "{} (x{} over {first})",
            since(now, e.last_timestamp),
            e.count
        )
    } else {
        first
    }
}

/// Sends the user's merge patch of an object's main resource (not `status`), as the commands
/// that change one field (`scale`, `label`, `taint`, `cordon`, `rollout pause`…) do.
pub fn merge_patch(sim: &mut Sim, key: &ObjectKey, patch: Json) -> ApiResult {
    sim.submit(ApiRequest::Patch {
        key: key.clone(),
        patch,
        status: false,
    })
}

/// An object's AGE column.
pub fn age(now: Millis, obj: &Object) -> String {
    since(now, obj.meta().creation_timestamp)
}

/// Go's `time.RFC1123Z` in UTC: `Thu, 01 Jan 2026 00:00:00 +0000`, as `describe` prints times.
pub fn rfc1123z(t: Time) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = EPOCH_UNIX_SECONDS + (t.0 / 1000) as i64;
    let days = secs.div_euclid(86_400);
    // 1970-01-01 was a Thursday.
    let weekday = DAYS[days.rem_euclid(7) as usize];
    let rfc = t.to_rfc3339(); // 2026-01-01T00:00:00Z
    let (y, mo, d) = (&rfc[0..4], &rfc[5..7], &rfc[8..10]);
    let month = MONTHS[mo.parse::<usize>().unwrap_or(1).clamp(1, 12) - 1];
    format!("{weekday}, {d} {month} {y} {} +0000", &rfc[11..19])
}

/// `deployment.apps`, `pod`, `poddisruptionbudget.policy`: how kubectl names a kind in messages
/// such as `deployment.apps/web scaled` and `pod "x" deleted`.
pub fn kind_name(kind: Kind) -> String {
    let singular = kind.as_str().to_ascii_lowercase();
    match kind.resource().split_once('.') {
        Some((_, group)) => format!("{singular}.{group}"),
        None => singular,
    }
}

/// `deployment.apps/web`: kubectl's `-o name` and operation-printer form.
pub fn object_name(kind: Kind, name: &str) -> String {
    format!("{}/{name}", kind_name(kind))
}

/// `deployments.apps/web`, `pods/x`: the resource form `set image` and `wait` errors use.
pub fn resource_name(kind: Kind, name: &str) -> String {
    format!("{}/{name}", kind.resource())
}

/// `labels.FormatLabels`: `k=v,k2=v2` sorted, or `<none>`.
pub fn format_labels(labels: &StringMap) -> String {
    if labels.is_empty() {
        return "<none>".into();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `metav1.FormatLabelSelector`: `<none>` for an empty selector.
pub fn format_selector(sel: &LabelSelector) -> String {
    let s = sel.to_selector_string();
    if s.is_empty() {
        "<none>".into()
    } else {
        s
    }
}

/// A successful output; the text gets a trailing newline if it lacks one.
pub fn out(stdout: impl Into<String>) -> CommandOutput {
    CommandOutput::ok(terminate(stdout.into()))
}

/// A failed output; the text gets a trailing newline if it lacks one.
pub fn fail(stderr: impl Into<String>) -> CommandOutput {
    CommandOutput::err(terminate(stderr.into()))
}

/// `error: …` as cobra's `CheckErr` prints it (the prefix is not doubled).
pub fn error(msg: impl AsRef<str>) -> CommandOutput {
    let msg = msg.as_ref();
    if msg.starts_with("error: ") || msg.starts_with("Error from server") {
        fail(msg)
    } else {
        fail(format!("error: {msg}"))
    }
}

/// Unwraps one step of a command, or returns the output the step ended the command with:
/// `let request = or_return!(request_or(sim.api(), words, "…"));`.
macro_rules! or_return {
    ($step:expr) => {
        match $step {
            Ok(value) => value,
            Err(output) => return output,
        }
    };
}
pub(crate) use or_return;

/// Adds a trailing newline to non-empty text that lacks one.
pub fn terminate(mut s: String) -> String {
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// The playground's answer for kubectl features it does not simulate.
pub fn unsupported(what: &str, why: &str) -> CommandOutput {
    fail(format!(
        "error: {what} is not supported in the playground{}",
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        }
    ))
}

/// `utilerrors.NewAggregate(errs).Error()`: one message as is, several as `[a, b]`, repeats
/// collapsed.
pub fn aggregate(errs: &[String]) -> String {
    let mut seen: Vec<&String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen[0].clone(),
        _ => format!(
            "[{}]",
            seen.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1123z_names_the_weekday() {
        assert_eq!(rfc1123z(Time(0)), "Thu, 01 Jan 2026 00:00:00 +0000");
        assert_eq!(
            rfc1123z(Time(86_400_000 + 61_000)),
            "Fri, 02 Jan 2026 00:01:01 +0000"
        );
    }

    #[test]
    fn kinds_are_named_with_their_group() {
        assert_eq!(object_name(Kind::Deployment, "web"), "deployment.apps/web");
        assert_eq!(object_name(Kind::Pod, "x"), "pod/x");
        assert_eq!(
            kind_name(Kind::PodDisruptionBudget),
            "poddisruptionbudget.policy"
        );
    }

    #[test]
    fn aggregates_print_like_utilerrors() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }
}
