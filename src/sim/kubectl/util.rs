//! Small formatting helpers kubectl uses everywhere: ages, RFC 1123 timestamps, resource names,
//! label lists, and the error shapes cobra and the API machinery print.

use crate::sim::session::CommandOutput;
use crate::sim::types::{Kind, LabelSelector, Millis, Object, StringMap, Time, EPOCH_UNIX_SECONDS};

/// `duration.HumanDuration` on a signed duration: negative beyond a second is `<invalid>` (what
/// `describe` shows for a terminating pod's future deletion timestamp), then `45s`, `3m20s`,
/// `5m`, `2h10m`, `3d4h`, `5d`, `2y3d`.
pub fn human_duration(ms: i64) -> String {
    // Go truncates toward zero: -1.5 s is -1 and reads as "0s".
    let seconds = ms / 1000;
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// `translateTimestampSince`: the age of a timestamp at `now`, `<unknown>` when absent.
pub fn since(now: Millis, t: Option<Time>) -> String {
    match t {
        Some(t) => human_duration(now as i64 - t.0 as i64),
        None => "<unknown>".into(),
    }
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
    fn human_durations_match_apimachinery() {
        for (ms, want) in [
            (-3000, "<invalid>"),
            (-1500, "0s"),
            (0, "0s"),
            (65_000, "65s"),
            (125_000, "2m5s"),
            (600_000, "10m"),
            (3 * 3_600_000 + 120_000, "3h2m"),
            (30 * 3_600_000, "30h"),
            (50 * 3_600_000, "2d2h"),
            (10 * 86_400_000, "10d"),
        ] {
            assert_eq!(human_duration(ms), want, "{ms}");
        }
    }

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
