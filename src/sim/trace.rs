//! The trace: every request, watch delivery, reconcile pass, Event and fault, with its cause.
//!
//! It is the single source for the event log, the sequence diagram, the loop panel, the CLI's
//! `--trace` and the tests' snapshots. It is bounded: the oldest entries are dropped first and
//! the count of dropped entries is kept so views can say history was trimmed.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::{json, Value as Json};

use super::controller::ReconcileRecord;
use super::types::Millis;

/// Default number of entries kept.
pub const DEFAULT_TRACE_CAPACITY: usize = 200_000;

/// Why a watch event did or did not reach a component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Delivery {
    Delivered,
    /// Lost by a DropWatchEvents fault.
    Dropped,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TraceKind {
    /// A request reached the API server and was answered.
    #[serde(rename = "api")]
    Api {
        actor: String,
        verb: String,
        object: String,
        code: u16,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(rename = "resourceVersion", skip_serializing_if = "Option::is_none")]
        resource_version: Option<u64>,
    },
    /// A watch event was delivered to (or lost on the way to) a component's informer.
    #[serde(rename = "watch")]
    Watch {
        component: String,
        #[serde(rename = "eventType")]
        event_type: String,
        object: String,
        #[serde(rename = "resourceVersion")]
        resource_version: u64,
        delivery: Delivery,
    },
    /// An informer (re)listed: at start, after a restart, or after 410 Gone.
    #[serde(rename = "list")]
    List {
        component: String,
        reason: String,
        objects: usize,
    },
    /// A reconcile pass.
    #[serde(rename = "reconcile")]
    Reconcile {
        component: String,
        key: String,
        trigger: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        record: Option<ReconcileRecord>,
        requests: usize,
    },
    /// A Kubernetes Event was recorded.
    #[serde(rename = "event")]
    Event {
        #[serde(rename = "eventType")]
        event_type: String,
        reason: String,
        message: String,
        object: String,
        source: String,
    },
    /// A fault was injected or healed.
    #[serde(rename = "fault")]
    Fault { fault: String, description: String },
    /// A user command (Apply, kubectl) ran.
    #[serde(rename = "command")]
    Command {
        command: String,
        output: String,
        ok: bool,
    },
    /// A scenario check was decided.
    #[serde(rename = "check")]
    Check {
        name: String,
        passed: bool,
        message: String,
    },
}

/// One trace line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceEntry {
    /// Position in the whole run (never reused, survives trimming).
    pub seq: u64,
    /// Simulated milliseconds.
    pub t: Millis,
    /// The entry that caused this one, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<u64>,
    #[serde(flatten)]
    pub kind: TraceKind,
}

impl TraceEntry {
    /// The JSON line `--trace` writes: `t` and `type` first, then the fields.
    pub fn to_json(&self) -> Json {
        let mut v = serde_json::to_value(self).unwrap_or_else(|_| json!({}));
        if let Json::Object(m) = &mut v {
            let mut ordered = serde_json::Map::new();
            for k in ["t", "type", "seq", "cause"] {
                if let Some(x) = m.remove(k) {
                    ordered.insert(k.into(), x);
                }
            }
            ordered.extend(std::mem::take(m));
            return Json::Object(ordered);
        }
        v
    }
}

/// The bounded trace.
#[derive(Clone, Debug)]
pub struct Trace {
    entries: VecDeque<TraceEntry>,
    next_seq: u64,
    capacity: usize,
    dropped: u64,
}

impl Default for Trace {
    fn default() -> Self {
        Trace::with_capacity(DEFAULT_TRACE_CAPACITY)
    }
}

impl Trace {
    /// A trace keeping at most `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Trace {
        Trace {
            entries: VecDeque::new(),
            next_seq: 1,
            capacity: capacity.max(1),
            dropped: 0,
        }
    }

    /// Appends an entry and returns its sequence number.
    pub fn push(&mut self, t: Millis, cause: Option<u64>, kind: TraceKind) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.entries.push_back(TraceEntry {
            seq,
            t,
            cause,
            kind,
        });
        while self.entries.len() > self.capacity {
            self.entries.pop_front();
            self.dropped += 1;
        }
        seq
    }

    /// Entries with `seq > after`, oldest first.
    pub fn since(&self, after: u64) -> impl Iterator<Item = &TraceEntry> {
        let start = self.entries.partition_point(|e| e.seq <= after);
        self.entries.range(start..)
    }

    /// All kept entries.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &TraceEntry> {
        self.entries.iter()
    }

    /// The entry with sequence number `seq`, if still kept.
    pub fn get(&self, seq: u64) -> Option<&TraceEntry> {
        let first = self.entries.front()?.seq;
        self.entries.get(seq.checked_sub(first)? as usize)
    }

    /// How many old entries were trimmed.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The sequence number the next entry will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Number of kept entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
