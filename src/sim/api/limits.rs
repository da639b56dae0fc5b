//! The playground's limits, in one place: how big a simulated cluster, a file, a command line or a
//! link may be, and how long history is kept.
//!
//! A browser tab has one thread and a few hundred MiB to spare, so every input that could make the
//! simulation do unbounded work is capped, and going over a cap is answered like Kubernetes
//! answers a request it will not take — a 422 `Invalid value` naming the field, or a 403
//! `Forbidden` like a ResourceQuota's — with the words "(a simulated cluster's limit)" so nobody
//! mistakes it for real Kubernetes behaviour. Real clusters' documented ceilings are 5,000 nodes
//! and 150,000 pods; the playground keeps the node ceiling and lowers the pod ceiling to what
//! converges in seconds in a tab (`kubeloop bench` measures 10,000 pods on 1,000 nodes).
//!
//! Where each cap is enforced:
//!
//! | cap | enforced in | answer |
//! |---|---|---|
//! | [`MAX_REPLICAS`] | `validation::validate` (Deployment, ReplicaSet): apply, `kubectl scale/patch/create`, EditObject faults | 422 Invalid |
//! | [`MAX_PODS`], [`MAX_NODES`], [`MAX_OBJECTS`] | `ApiServer::create` (every create: user, controllers, faults) | 403 Forbidden |
//! | [`MAX_NODES`] for `spec.nodes.count` | `scenario::decode_scenario` (so `Session::load` and `kubeloop validate`) | positioned error |
//! | [`MAX_OBJECTS_PER_FILE`] | `decode::decode_manifests` (every apply, load and link) | positioned error |
//! | [`MAX_COMMAND_BYTES`], control characters | `kubectl::execute_with_stdin` | kubectl-style `error:` |
//! | [`MAX_TRACE_TEXT`] | `Sim::record_command` (a command's text and output in the trace) | clipped, says so |
//! | `apiextensions::MAX_INTERNED_KINDS` custom kinds per page | `ApiServer::create` of a CRD | 403 Forbidden |
//! | [`SCRIPT_STEPS`], [`SCRIPT_MEMORY_BYTES`], [`SCRIPT_CALL_DEPTH`] per pass of a learner's controller | `controllers::script` (the engine counts, `sim::script::Limits`) | a failed pass: `ReconcileError` "reconcile exceeded its budget of N steps" |
//!
//! Caps that live beside the code they protect, listed here so this is the one page to read:
//! YAML input (`yaml::MAX_INPUT_BYTES` 1 MiB, depth 32, 25,000 nodes, 1,000 documents), share
//! links (`share::MAX_FRAGMENT`, `share::MAX_INFLATED` 1 MiB), the trace
//! (`trace::DEFAULT_TRACE_CAPACITY` entries, oldest dropped first, counted by `Trace::dropped`),
//! watch history (`apiserver::WATCH_HISTORY_WINDOW`, 75 s, at most
//! `apiserver::WATCH_HISTORY_CAPACITY` changes), Events (`events::EVENT_TTL`, 1 h, at most
//! `events::MAX_EVENTS`), JSONPath templates (`jsonpath::MAX_SELECTED` values selected in one
//! run, `jsonpath::MAX_NESTING` levels of ranges, filters and unions). A CRD's schema has no cap
//! of its own: it arrives through the YAML caps (depth 32, 25,000 nodes), which bound every object
//! it checks too, and pruning, defaulting and validation each walk the object once beside it, so
//! their work is linear in the object; `x-kubernetes-validations` rules are stored, not run.

use std::borrow::Cow;

use super::types::{Kind, Millis};
use super::{ApiError, StatusReason};

/// The most replicas a Deployment or ReplicaSet may ask for.
pub const MAX_REPLICAS: i64 = 20_000;
/// The steps one pass of a learner's controller may take (statements, expressions, calls):
/// `while (true) {}` ends in a fraction of a second of a tab's time, as a failed pass.
pub const SCRIPT_STEPS: u64 = 1_000_000;
/// The bytes one pass of a learner's controller may allocate, and its module state may hold.
pub const SCRIPT_MEMORY_BYTES: usize = 16 * 1024 * 1024;
/// How deep a learner's controller's calls may nest.
pub const SCRIPT_CALL_DEPTH: usize = 200;

/// The most Pods the simulated cluster holds at once (room for a surge above [`MAX_REPLICAS`]).
pub const MAX_PODS: usize = 30_000;
/// The most Nodes (Kubernetes' own documented ceiling for one cluster).
pub const MAX_NODES: usize = 5_000;
/// The most objects of all kinds but Events (which expire after an hour) the store holds.
pub const MAX_OBJECTS: usize = 60_000;
/// The most objects one file (one apply, one scenario, one link) may hold, counting List items.
/// The YAML layer's 25,000-node cap usually stops a file first; this one names the problem when
/// it does not (2,000 minimal objects fit in 25,000 nodes).
pub const MAX_OBJECTS_PER_FILE: usize = 2_000;
/// The longest kubectl command line accepted (standard input is capped by the YAML limits).
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// The most of a command's text, and of its output, the trace keeps.
pub const MAX_TRACE_TEXT: usize = 64 * 1024;

/// The longest duration anything in the simulation waits (about 31,700 years; the same bound
/// `time::parse_duration` puts on Go durations). Seconds fields are int64 in Kubernetes
/// (`terminationGracePeriodSeconds`, `tolerationSeconds`); clamping them here keeps every
/// deadline computed from them far from overflowing.
pub const MAX_DURATION_MS: Millis = 1_000_000_000_000_000;

/// A Kubernetes seconds field as simulated milliseconds: negative counts as 0, and anything past
/// [`MAX_DURATION_MS`] as that.
pub fn seconds_to_millis(seconds: i64) -> Millis {
    (seconds.max(0) as u64)
        .saturating_mul(1000)
        .min(MAX_DURATION_MS)
}

/// The words every limit message ends with, so nobody mistakes a playground cap for Kubernetes.
pub const LIMIT_NOTE: &str = "in the playground (a simulated cluster's limit)";

/// What the store holds now, for [`admit_create`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreCounts {
    /// Objects of the kind being created.
    pub of_kind: usize,
    /// Objects of every kind but Event.
    pub total: usize,
}

/// Admission for a create, as a ResourceQuota would answer it: 403 Forbidden once the store
/// holds [`MAX_PODS`] Pods, [`MAX_NODES`] Nodes or [`MAX_OBJECTS`] objects. Events are exempt:
/// the recorder writes them outside admission and they expire.
pub fn admit_create(kind: Kind, name: &str, counts: StoreCounts) -> Result<(), ApiError> {
    let over = match kind {
        Kind::Event => None,
        Kind::Pod if counts.of_kind >= MAX_PODS => Some((MAX_PODS, kind.resource())),
        Kind::Node if counts.of_kind >= MAX_NODES => Some((MAX_NODES, kind.resource())),
        _ if counts.total >= MAX_OBJECTS => Some((MAX_OBJECTS, "objects".into())),
        _ => None,
    };
    match over {
        None => Ok(()),
        Some((max, what)) => Err(ApiError {
            reason: StatusReason::Forbidden,
            message: format!(
                "{} \"{name}\" is forbidden: exceeded the limit of {max} {what} {LIMIT_NOTE}",
                kind.resource()
            ),
        }),
    }
}

/// The message for a file holding more than [`MAX_OBJECTS_PER_FILE`] objects.
pub fn too_many_objects_message() -> String {
    format!(
        "too many objects: a file may hold at most {MAX_OBJECTS_PER_FILE} objects {LIMIT_NOTE}; the rest were not read"
    )
}

/// Refuses a kubectl command line that is too long or holds control characters (a tab counts as
/// a space), with kubectl's `error: ` prefix. Control characters never belong in a command a
/// person typed; echoing them back would let a pasted line rewrite the terminal.
pub fn check_command_line(line: &str) -> Result<(), String> {
    if line.len() > MAX_COMMAND_BYTES {
        return Err(format!(
            "error: the command line is {} bytes long; at most {MAX_COMMAND_BYTES} bytes are accepted {LIMIT_NOTE}",
            line.len()
        ));
    }
    // Line breaks around the command (a YAML block scalar's, a paste's) are harmless.
    let lead = line.len() - line.trim_start().len();
    let bad = line
        .trim()
        .char_indices()
        .find(|&(_, c)| c.is_control() && c != '\t');
    if let Some((at, c)) = bad {
        let column = line[..lead + at].chars().count() + 1;
        return Err(format!(
            "error: the command line contains a control character (U+{:04X}) at column {column}; type the command without it",
            c as u32
        ));
    }
    Ok(())
}

/// `text` cut to at most `max` bytes on a character boundary, saying how much was left out.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}… ({} more bytes not kept)",
        &text[..end],
        text.len() - end
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_past_a_store_cap_are_forbidden_like_a_quota() {
        let full = StoreCounts {
            of_kind: MAX_PODS,
            total: MAX_PODS,
        };
        let e = admit_create(Kind::Pod, "web-1", full).unwrap_err();
        assert_eq!(e.code(), 403);
        assert_eq!(
            e.kubectl_message(),
            "Error from server (Forbidden): pods \"web-1\" is forbidden: exceeded the limit of 30000 pods in the playground (a simulated cluster's limit)"
        );
        assert!(admit_create(Kind::Event, "e", full).is_ok());
        assert!(admit_create(Kind::Service, "s", full).is_ok());
        let total = StoreCounts {
            of_kind: 0,
            total: MAX_OBJECTS,
        };
        assert!(admit_create(Kind::Service, "s", total).is_err());
    }

    #[test]
    fn command_lines_with_control_characters_are_refused_with_the_column() {
        assert!(check_command_line("get pods\t-A").is_ok());
        assert!(check_command_line("\n  get pods\r\n").is_ok());
        assert!(check_command_line(" get\npods")
            .unwrap_err()
            .contains("(U+000A) at column 5"));
        assert_eq!(
            check_command_line("get pods\u{1b}[2J").unwrap_err(),
            "error: the command line contains a control character (U+001B) at column 9; type the command without it"
        );
        assert!(check_command_line(&"x".repeat(MAX_COMMAND_BYTES + 1))
            .unwrap_err()
            .contains("at most 65536 bytes"));
    }

    #[test]
    fn seconds_fields_become_bounded_milliseconds() {
        assert_eq!(seconds_to_millis(-5), 0);
        assert_eq!(seconds_to_millis(30), 30_000);
        assert_eq!(seconds_to_millis(i64::MAX), MAX_DURATION_MS);
    }

    #[test]
    fn clipping_keeps_whole_characters_and_says_what_was_left_out() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("ééé", 3), "é… (4 more bytes not kept)");
    }
}
