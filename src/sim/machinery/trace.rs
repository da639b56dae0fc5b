//! The trace: every request, watch delivery, reconcile pass, Event and fault, with its cause.
//!
//! It is the single source for the event log, the sequence diagram, the loop panel, the CLI's
//! `--trace` and the tests' snapshots. It is bounded: the oldest entries are dropped first and
//! the count of dropped entries is kept so views can say history was trimmed.
//!
//! Causes form chains: an API write is caused by the reconcile pass (or fault, or command) that
//! sent it; a watch delivery by the write that produced it; a reconcile pass by the delivery,
//! relist, failed request or earlier pass that queued it; a fault's heal by the fault. Faults are
//! roots. [`cause_chain`] walks a chain back to its root and [`effects_of`] forward to everything
//! an entry set off, so views can draw fault → observed gap → action → outcome.

use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

use serde::Serialize;
use serde_json::{json, Value as Json};

use super::controller::ReconcileRecord;
use crate::sim::api::types::{
    Condition, ContainerState, ContainerStatus, Millis, Object, PodStatus, Str, Time,
    LAST_FOUR_DIGIT_YEAR,
};
use crate::sim::api::{ApiRequest, WatchEventType};
use crate::sim::text::concat;
use crate::sort::CollectTree;

/// Default number of entries kept: at lesson scale (about 12,000 entries an hour) eight hours of
/// history; at 10,000 pods a few seconds of a rollout, in about 15 MiB natively (`kubeloop bench
/// --memory`). The views show far fewer; `Trace::dropped` counts what went.
pub const DEFAULT_TRACE_CAPACITY: usize = 100_000;

/// Why a watch event did or did not reach a component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Delivery {
    Delivered,
    /// Lost by a DropWatchEvents fault.
    Dropped,
}

/// A delivered watch event's type as the watch stream names it: `ADDED`, `MODIFIED`, `DELETED`,
/// or `ERROR` (410 Gone). One byte: four trace lines in five are deliveries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchType {
    Added,
    Modified,
    Deleted,
    Error,
}

impl WatchType {
    /// The stream's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            WatchType::Added => "ADDED",
            WatchType::Modified => "MODIFIED",
            WatchType::Deleted => "DELETED",
            WatchType::Error => "ERROR",
        }
    }
}

impl From<WatchEventType> for WatchType {
    fn from(t: WatchEventType) -> WatchType {
        match t {
            WatchEventType::Added => WatchType::Added,
            WatchEventType::Modified => WatchType::Modified,
            WatchEventType::Deleted => WatchType::Deleted,
        }
    }
}

/// Compared with the stream's word, as the trace's readers (views, tests) name event types.
impl PartialEq<&str> for WatchType {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

impl std::fmt::Display for WatchType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for WatchType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TraceKind {
    /// A request reached the API server and was answered.
    #[serde(rename = "api")]
    Api(Box<ApiTrace>),
    /// A watch event was delivered to (or lost on the way to) a component's informer.
    #[serde(rename = "watch")]
    Watch {
        component: Str,
        #[serde(rename = "eventType")]
        event_type: WatchType,
        /// Shared with the watch event (and every other delivery of it).
        object: Str,
        #[serde(rename = "resourceVersion")]
        resource_version: u64,
        delivery: Delivery,
    },
    /// An informer (re)listed: at start, after a restart, or after 410 Gone.
    #[serde(rename = "list")]
    List {
        component: Str,
        reason: String,
        objects: usize,
    },
    /// A reconcile pass.
    #[serde(rename = "reconcile")]
    Reconcile(Box<ReconcileTrace>),
    /// A Kubernetes Event was recorded.
    #[serde(rename = "event")]
    Event(Box<EventTrace>),
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

/// What [`TraceKind::Api`] records. The payloads of requests, passes and Events are boxed so
/// that a trace line is as small as a watch delivery's, which are four in five of them: 100,000
/// lines of 152 bytes each were a tenth of the heap at 10,000 pods.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApiTrace {
    /// Shared with the component that sent it (every request and delivery names one).
    pub actor: Str,
    /// One of [`ApiRequest::verb`](crate::sim::api::ApiRequest::verb)'s words: no allocation per
    /// request.
    pub verb: &'static str,
    /// Shared with the write's watch event, which names the object the same way.
    pub object: Str,
    pub code: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(rename = "resourceVersion", skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<u64>,
}

/// What [`TraceKind::Reconcile`] records.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReconcileTrace {
    pub component: Str,
    pub key: String,
    /// `watch`, `relist`, `resync`, `timer`, `requeue` or `retry`.
    pub trigger: &'static str,
    /// Boxed: most passes of a busy cluster are kept without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<Box<ReconcileRecord>>,
    pub requests: usize,
    /// What the pass asked the API server to do, one line per request in send order
    /// ("create Pod (generateName web-7d9f8-)", "update ReplicaSet web-7d9f8 spec.replicas
    /// 3→2", "bind web-7d9f8-x2k4f → node-2"); see [`describe_request`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
}

/// What [`TraceKind::Event`] records.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventTrace {
    #[serde(rename = "eventType")]
    pub event_type: Str,
    pub reason: Str,
    pub message: Str,
    pub object: Str,
    pub source: Str,
}

/// One trace line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceEntry {
    /// Position in the whole run (never reused, survives trimming).
    pub seq: u64,
    /// Simulated milliseconds.
    pub t: Millis,
    /// The entry that caused this one, when known ([`TraceEntry::cause`]).
    #[serde(skip_serializing_if = "Cause::is_none")]
    cause: Cause,
    #[serde(flatten)]
    pub kind: TraceKind,
}

/// A cause in 8 bytes where an `Option<u64>` takes 16: a sequence number, or `u64::MAX` for
/// none (sequence numbers count up from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cause(u64);

impl Cause {
    const NONE: Cause = Cause(u64::MAX);

    fn of(cause: Option<u64>) -> Cause {
        cause.map_or(Cause::NONE, Cause)
    }

    fn is_none(&self) -> bool {
        *self == Cause::NONE
    }
}

impl Serialize for Cause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl TraceEntry {
    /// The entry that caused this one, when known.
    pub fn cause(&self) -> Option<u64> {
        (!self.cause.is_none()).then_some(self.cause.0)
    }

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

/// Entries per chunk of the trace: a copy of the trace (a time-travel snapshot) shares every
/// full chunk and copies at most this many entries when either side appends.
const CHUNK: usize = 1024;

/// The bounded trace, kept in shared chunks: every chunk but the last is full and immutable, so
/// a clone costs a pointer per chunk, not a copy of a hundred thousand entries.
#[derive(Clone, Debug)]
pub struct Trace {
    chunks: VecDeque<Rc<Vec<TraceEntry>>>,
    /// Entries of the first chunk already trimmed (a chunk goes once all of it is).
    front: usize,
    len: usize,
    next_seq: u64,
    capacity: usize,
    dropped: u64,
    /// The sequence number of the newest fault line (0: none yet).
    newest_fault: u64,
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
            chunks: VecDeque::new(),
            front: 0,
            len: 0,
            next_seq: 1,
            capacity: capacity.max(1),
            dropped: 0,
            newest_fault: 0,
        }
    }

    /// Appends an entry and returns its sequence number.
    pub fn push(&mut self, t: Millis, cause: Option<u64>, kind: TraceKind) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if let TraceKind::Fault { .. } = kind {
            self.newest_fault = seq;
        }
        let entry = TraceEntry {
            seq,
            t,
            cause: Cause::of(cause),
            kind,
        };
        match self.chunks.back_mut() {
            Some(last) if last.len() < CHUNK => Rc::make_mut(last).push(entry),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(entry);
                self.chunks.push_back(Rc::new(chunk));
            }
        }
        self.len += 1;
        while self.len > self.capacity {
            self.front += 1;
            self.len -= 1;
            self.dropped += 1;
            if self.front == CHUNK {
                self.chunks.pop_front();
                self.front = 0;
            }
        }
        seq
    }

    /// The kept entries from the `index`th on, oldest first.
    fn entries_from(&self, index: usize) -> impl DoubleEndedIterator<Item = &TraceEntry> + Clone {
        let at = self.front + index.min(self.len);
        let (first, offset) = (at / CHUNK, at % CHUNK);
        self.chunks
            .range(first.min(self.chunks.len())..)
            .enumerate()
            .flat_map(move |(i, c)| c[if i == 0 { offset.min(c.len()) } else { 0 }..].iter())
    }

    /// Where the entry with sequence number `seq` is kept: its chunk and its place in it.
    fn locate(&self, seq: u64) -> Option<(usize, usize)> {
        let first = self.next_seq - self.len as u64;
        let index = seq.checked_sub(first).filter(|&i| i < self.len as u64)? as usize;
        let at = self.front + index;
        Some((at / CHUNK, at % CHUNK))
    }

    /// Entries with `seq > after`, oldest first.
    pub fn since(&self, after: u64) -> impl Iterator<Item = &TraceEntry> + Clone {
        let first = self.next_seq - self.len as u64;
        let skip = (after + 1).saturating_sub(first).min(self.len as u64);
        self.entries_from(skip as usize)
    }

    /// The kept entries' count and an FNV-1a hash of their JSON lines, written `<count> <hex>`:
    /// what the determinism tests compare between builds (natively, in wasm, in the page).
    pub fn fingerprint(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for e in self.entries() {
            for b in e.to_json().to_string().bytes().chain([b'\n']) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        format!("{} {h:016x}", self.len)
    }

    /// All kept entries.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &TraceEntry> + Clone {
        self.entries_from(0)
    }

    /// The entry with sequence number `seq`, if still kept.
    pub fn get(&self, seq: u64) -> Option<&TraceEntry> {
        let (chunk, at) = self.locate(seq)?;
        self.chunks.get(chunk)?.get(at)
    }

    /// The entry with sequence number `seq`, to complete it after the fact (a fault's entry is
    /// pushed before its effects, so that it can be their cause, and gets its outcome after).
    pub(crate) fn get_mut(&mut self, seq: u64) -> Option<&mut TraceEntry> {
        let (chunk, at) = self.locate(seq)?;
        Rc::make_mut(self.chunks.get_mut(chunk)?).get_mut(at)
    }

    /// The sequence number of the newest fault line, 0 before the first: a view that acts only
    /// on faults and what they set off can tell there is no new one without reading the lines.
    pub fn newest_fault(&self) -> u64 {
        self.newest_fault
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
        self.len
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// How far [`cause_chain`] walks back: chains through periodic requeues can be long.
pub const CHAIN_LIMIT: usize = 256;

/// How many entries [`effects_of`] returns at most.
pub const EFFECTS_LIMIT: usize = 2_000;

/// The chain of causes that led to entry `seq`, root first and `seq` itself last (empty when
/// `seq` is no longer kept). The walk stops at an entry without a cause, at one trimmed from the
/// trace, or after [`CHAIN_LIMIT`] steps.
pub fn cause_chain(trace: &Trace, seq: u64) -> Vec<&TraceEntry> {
    let mut chain = Vec::new();
    let mut next = Some(seq);
    while let Some(s) = next {
        if chain.len() >= CHAIN_LIMIT {
            break;
        }
        let Some(e) = trace.get(s) else { break };
        chain.push(e);
        // Causes always point backwards; anything else would loop.
        next = e.cause().filter(|&c| c < e.seq);
    }
    chain.reverse();
    chain
}

/// Everything entry `seq` set off, directly or through other entries, oldest first (not
/// including `seq` itself), at most [`EFFECTS_LIMIT`] entries. One forward pass suffices because a
/// cause always precedes its effects.
pub fn effects_of(trace: &Trace, seq: u64) -> Vec<&TraceEntry> {
    let mut family: BTreeSet<u64> = std::iter::once(seq).collect_set();
    let mut out = Vec::new();
    for e in trace.since(seq) {
        if out.len() >= EFFECTS_LIMIT {
            break;
        }
        if e.cause().is_some_and(|c| family.contains(&c)) {
            family.insert(e.seq);
            out.push(e);
        }
    }
    out
}

/// One line saying what a request asks for, for the loop panel's "actions": the verb, the
/// object, and for writes the fields that change relative to `cached` (the sender's view of the
/// object, so a stale view shows as the change the sender believed it was making).
pub fn describe_request(req: &ApiRequest, cached: Option<&Object>) -> String {
    match req {
        ApiRequest::DeleteCollection { kind, namespace } => {
            format!(
                "deletecollection {} in namespace {namespace}",
                kind.plural()
            )
        }
        ApiRequest::Finalize(o) => {
            let finalizers = o.as_namespace().map(|n| n.spec.finalizers.join(", "));
            format!(
                "finalize {} {}: spec.finalizers [{}]",
                o.kind(),
                o.meta().name,
                finalizers.unwrap_or_default()
            )
        }
        ApiRequest::Create(o) => {
            let m = o.meta();
            if m.name.is_empty() {
                concat(&[
                    "create ",
                    o.kind().as_str(),
                    " (generateName ",
                    &m.generate_name,
                    ")",
                ])
            } else {
                concat(&["create ", o.kind().as_str(), " ", &m.name])
            }
        }
        ApiRequest::Update(o) | ApiRequest::UpdateStatus(o) => {
            let status = matches!(req, ApiRequest::UpdateStatus(_));
            let mut head = concat(&["update ", o.kind().as_str(), " ", &o.meta().name]);
            // A status write names status fields bare (`readyReplicas 2→3`); a spec write names
            // them in full (`spec.replicas 3→2`).
            if status {
                head.push_str(" status");
            }
            let mut changes = Vec::new();
            match (cached, o) {
                (Some(Object::Pod(old)), Object::Pod(new)) if status => {
                    pod_status_changes(&old.status, &new.status, &mut changes);
                    #[cfg(debug_assertions)]
                    {
                        let mut slow = Vec::new();
                        for ((prefix, before), (_, after)) in
                            sections(cached.expect("matched"), status)
                                .into_iter()
                                .zip(sections(o, status))
                        {
                            json_changes(prefix, &before, &after, &mut slow);
                        }
                        debug_assert_eq!(changes, slow);
                    }
                }
                (Some(old), _) => {
                    for ((prefix, before), (_, after)) in
                        sections(old, status).into_iter().zip(sections(o, status))
                    {
                        json_changes(prefix, &before, &after, &mut changes);
                    }
                }
                (None, _) => {}
            }
            with_changes(head, changes)
        }
        ApiRequest::Patch { key, patch, status } => {
            let mut head = concat(&["patch ", key.kind.as_str(), " ", &key.name]);
            if *status {
                head.push_str(" status");
            }
            let mut fields = Vec::new();
            patch_fields("", patch, &mut fields);
            with_changes(head, fields)
        }
        ApiRequest::Delete { key, .. } => concat(&["delete ", key.kind.as_str(), " ", &key.name]),
        ApiRequest::Bind { key, node } => concat(&["bind ", &key.name, " → ", node]),
        ApiRequest::Evict { key, .. } => concat(&["evict ", key.kind.as_str(), " ", &key.name]),
    }
}

/// The parts of an object a write changes, as JSON: `status` for a status write (named bare),
/// `metadata` and `spec` otherwise. Only those parts are serialised: this runs on every write.
fn sections(o: &Object, status: bool) -> Vec<(&'static str, Json)> {
    fn json<T: Serialize>(v: &T) -> Json {
        serde_json::to_value(v).unwrap_or(Json::Null)
    }
    macro_rules! parts {
        ($x:expr, status) => {
            if status {
                vec![("", json(&$x.status))]
            } else {
                vec![("metadata", json(&$x.metadata)), ("spec", json(&$x.spec))]
            }
        };
    }
    match o {
        Object::Pod(x) => parts!(x, status),
        Object::ReplicaSet(x) => parts!(x, status),
        Object::Deployment(x) => parts!(x, status),
        Object::Node(x) => parts!(x, status),
        Object::PodDisruptionBudget(x) => parts!(x, status),
        other => {
            let mut whole = other.to_json();
            let take = |w: &mut Json, k: &str| w.get_mut(k).map(Json::take).unwrap_or(Json::Null);
            if status {
                vec![("", take(&mut whole, "status"))]
            } else {
                let meta = take(&mut whole, "metadata");
                vec![("metadata", meta), ("", whole)]
            }
        }
    }
}

/// [`json_changes`] over two pod statuses (the kubelet's most frequent write) without
/// serialising them whole: only fields that differ are turned into JSON, visited in the order
/// of their JSON names as the generic walk visits them, a skipped (empty) field reading as null.
fn pod_status_changes(a: &PodStatus, b: &PodStatus, out: &mut Vec<String>) {
    fn part<T: Serialize>(v: &T, skipped: bool) -> Json {
        if skipped {
            Json::Null
        } else {
            serde_json::to_value(v).unwrap_or(Json::Null)
        }
    }
    macro_rules! field {
        ($name:literal, $f:ident, $skip:expr) => {
            if a.$f != b.$f {
                json_changes(
                    $name,
                    &part(&a.$f, $skip(&a.$f)),
                    &part(&b.$f, $skip(&b.$f)),
                    out,
                );
            }
        };
    }
    // Every field is listed below: a new PodStatus field must be added there too.
    let PodStatus {
        phase: _,
        conditions: _,
        reason: _,
        message: _,
        host_ip: _,
        pod_ip: _,
        start_time: _,
        nominated_node_name: _,
        container_statuses: _,
        init_container_statuses: _,
        qos_class: _,
    } = a;
    // A list is named whole when its JSON differs; times compare at the second, as serialised.
    macro_rules! list {
        ($name:literal, $f:ident, $same:expr) => {
            if a.$f != b.$f {
                match $same(&a.$f, &b.$f) {
                    Some(true) => {}
                    Some(false) => out.push($name.to_string()),
                    None => json_changes(
                        $name,
                        &part(&a.$f, a.$f.is_empty()),
                        &part(&b.$f, b.$f.is_empty()),
                        out,
                    ),
                }
            }
        };
    }
    let none = |o: &Option<Str>| o.is_none();
    list!("conditions", conditions, same_conditions);
    list!(
        "containerStatuses",
        container_statuses,
        same_container_statuses
    );
    field!("hostIP", host_ip, none);
    list!(
        "initContainerStatuses",
        init_container_statuses,
        same_container_statuses
    );
    field!("message", message, none);
    field!("nominatedNodeName", nominated_node_name, none);
    field!("phase", phase, |s: &Str| s.is_empty());
    field!("podIP", pod_ip, none);
    field!("qosClass", qos_class, none);
    field!("reason", reason, none);
    field!("startTime", start_time, Option::is_none);
}

/// Whether two times serialise alike (second precision); None when either has no four-digit
/// year, whose form this does not model.
fn same_second(a: &Option<Time>, b: &Option<Time>) -> Option<bool> {
    match (a, b) {
        (None, None) => Some(true),
        (Some(x), Some(y)) if x.0 <= LAST_FOUR_DIGIT_YEAR && y.0 <= LAST_FOUR_DIGIT_YEAR => {
            Some(x.0 / 1000 == y.0 / 1000)
        }
        (Some(_), Some(_)) => None,
        _ => Some(false),
    }
}

/// Whether two condition lists serialise alike.
fn same_conditions(a: &[Condition], b: &[Condition]) -> Option<bool> {
    if a.len() != b.len() {
        return Some(false);
    }
    for (x, y) in a.iter().zip(b) {
        let Condition {
            type_,
            status,
            reason,
            message,
            last_transition_time,
            last_update_time,
            last_heartbeat_time,
            last_probe_time,
            observed_generation,
        } = x;
        if *type_ != y.type_
            || *status != y.status
            || *reason != y.reason
            || *message != y.message
            || *observed_generation != y.observed_generation
        {
            return Some(false);
        }
        for (p, q) in [
            (last_transition_time, &y.last_transition_time),
            (last_update_time, &y.last_update_time),
            (last_heartbeat_time, &y.last_heartbeat_time),
            (last_probe_time, &y.last_probe_time),
        ] {
            if !same_second(p, q)? {
                return Some(false);
            }
        }
    }
    Some(true)
}

/// Whether two container states serialise alike.
fn same_state(a: &ContainerState, b: &ContainerState) -> Option<bool> {
    let ContainerState {
        waiting,
        running,
        terminated,
    } = a;
    if *waiting != b.waiting {
        return Some(false);
    }
    match (running, &b.running) {
        (None, None) => {}
        (Some(x), Some(y)) => {
            if !same_second(&x.started_at, &y.started_at)? {
                return Some(false);
            }
        }
        _ => return Some(false),
    }
    match (terminated, &b.terminated) {
        (None, None) => Some(true),
        (Some(x), Some(y)) => Some(
            x.exit_code == y.exit_code
                && x.reason == y.reason
                && x.message == y.message
                && same_second(&x.started_at, &y.started_at)?
                && same_second(&x.finished_at, &y.finished_at)?,
        ),
        _ => Some(false),
    }
}

/// Whether two container status lists serialise alike.
fn same_container_statuses(a: &[ContainerStatus], b: &[ContainerStatus]) -> Option<bool> {
    if a.len() != b.len() {
        return Some(false);
    }
    for (x, y) in a.iter().zip(b) {
        let ContainerStatus {
            name,
            image,
            ready,
            started,
            restart_count,
            state,
            last_state,
            image_id,
            container_id,
        } = x;
        if *name != y.name
            || *image != y.image
            || *ready != y.ready
            || *started != y.started
            || *restart_count != y.restart_count
            || *image_id != y.image_id
            || *container_id != y.container_id
            || !same_state(state, &y.state)?
        {
            return Some(false);
        }
        match (last_state, &y.last_state) {
            (None, None) => {}
            (Some(p), Some(q)) => {
                if !same_state(p, q)? {
                    return Some(false);
                }
            }
            _ => return Some(false),
        }
    }
    Some(true)
}

/// At most this many changed fields are named per request; the rest are counted.
const MAX_CHANGES: usize = 3;

fn with_changes(mut head: String, changes: Vec<String>) -> String {
    for (i, change) in changes.iter().take(MAX_CHANGES).enumerate() {
        head.push_str(if i == 0 { " " } else { ", " });
        head.push_str(change);
    }
    if changes.len() > MAX_CHANGES {
        head.push_str(", +");
        head.push_str(&(changes.len() - MAX_CHANGES).to_string());
        head.push_str(" more");
    }
    head
}

/// Server-managed fields every write changes or that say nothing about intent.
fn is_noise(path: &str) -> bool {
    matches!(
        path,
        "metadata.resourceVersion" | "metadata.managedFields" | "metadata.generation"
    ) || path.starts_with("metadata.annotations.kubectl.kubernetes.io/last-applied")
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        concat(&[prefix, ".", key])
    }
}

fn scalar(v: &Json) -> Option<String> {
    match v {
        Json::Null => Some("∅".into()),
        Json::String(s) if s.chars().count() <= 40 => Some(s.clone()),
        Json::Bool(_) | Json::Number(_) => Some(v.to_string()),
        _ => None,
    }
}

/// The leaf paths that differ between two JSON values: `spec.replicas 3→2` for scalars,
/// just the path for anything bigger.
fn json_changes(prefix: &str, old: &Json, new: &Json, out: &mut Vec<String>) {
    if old == new || is_noise(prefix) {
        return;
    }
    match (old, new) {
        (Json::Object(a), Json::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect_set();
            for k in keys {
                json_changes(
                    &join(prefix, k),
                    a.get(k).unwrap_or(&Json::Null),
                    b.get(k).unwrap_or(&Json::Null),
                    out,
                );
            }
        }
        (Json::Null, Json::Object(b)) => json_changes(
            prefix,
            &Json::Object(Default::default()),
            &Json::Object(b.clone()),
            out,
        ),
        (Json::Object(a), Json::Null) => json_changes(
            prefix,
            &Json::Object(a.clone()),
            &Json::Object(Default::default()),
            out,
        ),
        _ => match (scalar(old), scalar(new)) {
            (Some(a), Some(b)) => out.push(concat(&[prefix, " ", &a, "→", &b])),
            _ => out.push(prefix.to_string()),
        },
    }
}

/// The fields a merge patch sets (`metadata.labels.app=other`, `metadata.ownerReferences`).
fn patch_fields(prefix: &str, patch: &Json, out: &mut Vec<String>) {
    match patch {
        Json::Object(m) => {
            for (k, v) in m {
                let path = join(prefix, k);
                if is_noise(&path) {
                    continue;
                }
                if v.is_object() {
                    patch_fields(&path, v, out);
                } else {
                    match scalar(v) {
                        Some(s) => out.push(format!("{path}={s}")),
                        None => out.push(path),
                    }
                }
            }
        }
        other => {
            if let Some(s) = scalar(other) {
                out.push(format!("{prefix}={s}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Kind, ObjectKey, ObjectMeta, ReplicaSet, ReplicaSetSpec};

    fn note(t: &mut Trace, cause: Option<u64>, what: &str) -> u64 {
        t.push(
            0,
            cause,
            TraceKind::Command {
                command: what.into(),
                output: String::new(),
                ok: true,
            },
        )
    }

    #[test]
    fn the_trace_knows_its_newest_fault_line_and_a_copy_keeps_it() {
        let mut t = Trace::with_capacity(4);
        note(&mut t, None, "kubectl get pods");
        assert_eq!(t.newest_fault(), 0);
        let fault = |description: &str| TraceKind::Fault {
            fault: "KillPod".into(),
            description: description.into(),
        };
        let first = t.push(0, None, fault("web-1 killed"));
        note(&mut t, Some(first), "kubectl get pods");
        assert_eq!(t.newest_fault(), first);
        let copy = t.clone();
        let second = t.push(0, None, fault("web-2 killed"));
        assert_eq!((t.newest_fault(), copy.newest_fault()), (second, first));
        for _ in 0..8 {
            note(&mut t, None, "kubectl get pods");
        }
        assert_eq!(
            t.newest_fault(),
            second,
            "trimmed or not, it was the newest"
        );
    }

    fn names<'a>(entries: impl IntoIterator<Item = &'a TraceEntry>) -> Vec<String> {
        entries
            .into_iter()
            .map(|e| match &e.kind {
                TraceKind::Command { command, .. } => command.clone(),
                _ => String::new(),
            })
            .collect()
    }

    #[test]
    fn a_bounded_trace_keeps_the_newest_entries_across_chunk_boundaries() {
        let capacity = CHUNK + 300;
        let mut t = Trace::with_capacity(capacity);
        let total = 3 * CHUNK + 17;
        for i in 0..total {
            note(&mut t, None, &i.to_string());
        }
        assert_eq!(t.len(), capacity);
        assert_eq!(t.dropped(), (total - capacity) as u64);
        let kept: Vec<String> = (total - capacity..total).map(|i| i.to_string()).collect();
        assert_eq!(names(t.entries()), kept);
        assert_eq!(
            names(t.entries().rev().take(2)),
            [kept[capacity - 1].clone(), kept[capacity - 2].clone()]
        );
        let first = t.entries().next().map(|e| e.seq).unwrap();
        assert_eq!(t.get(first).map(|e| e.seq), Some(first));
        assert!(t.get(first - 1).is_none());
        assert!(t.get(t.next_seq()).is_none());
        let after = first + CHUNK as u64 - 1;
        assert_eq!(names(t.since(after)), kept[CHUNK..]);
        assert_eq!(t.since(0).count(), capacity);
        assert_eq!(t.since(t.next_seq()).count(), 0);
    }

    #[test]
    fn a_copy_of_the_trace_goes_its_own_way() {
        let mut t = Trace::with_capacity(2 * CHUNK);
        for i in 0..CHUNK + 5 {
            note(&mut t, None, &i.to_string());
        }
        let copy = t.clone();
        let last = t.next_seq() - 1;
        note(&mut t, None, "only in the original");
        if let Some(e) = t.get_mut(last) {
            e.t = 42;
        }
        assert_eq!(copy.len(), CHUNK + 5);
        assert_eq!(copy.get(last).map(|e| e.t), Some(0));
        assert_eq!(t.get(last).map(|e| e.t), Some(42));
        assert_eq!(names(copy.since(last - 1)), [(CHUNK + 4).to_string()]);
    }

    #[test]
    fn a_cause_chain_runs_from_the_root_to_the_entry() {
        let mut t = Trace::default();
        let fault = note(&mut t, None, "fault");
        let _noise = note(&mut t, None, "noise");
        let api = note(&mut t, Some(fault), "api");
        let watch = note(&mut t, Some(api), "watch");
        assert_eq!(names(cause_chain(&t, watch)), ["fault", "api", "watch"]);
        assert!(cause_chain(&t, 99).is_empty());
    }

    #[test]
    fn effects_are_every_transitive_descendant_in_order() {
        let mut t = Trace::default();
        let fault = note(&mut t, None, "fault");
        let a = note(&mut t, Some(fault), "a");
        let _other = note(&mut t, None, "other");
        let _b = note(&mut t, Some(a), "b");
        let _c = note(&mut t, Some(fault), "c");
        assert_eq!(names(effects_of(&t, fault)), ["a", "b", "c"]);
    }

    fn rs(replicas: i32) -> Object {
        Object::from(ReplicaSet {
            metadata: ObjectMeta {
                name: "web-1".into(),
                namespace: "default".into(),
                resource_version: "7".into(),
                ..Default::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    #[test]
    fn an_update_names_the_fields_it_changes_against_the_senders_view() {
        let line = describe_request(&ApiRequest::Update(rs(2)), Some(&rs(3)));
        assert_eq!(line, "update ReplicaSet web-1 spec.replicas 3→2");
    }

    #[test]
    fn binds_and_patches_read_as_one_short_line() {
        let key = ObjectKey::new(Kind::Pod, "default", "web-1-x");
        assert_eq!(
            describe_request(
                &ApiRequest::Bind {
                    key: key.clone(),
                    node: "node-2".into()
                },
                None
            ),
            "bind web-1-x → node-2"
        );
        let patch = json!({"metadata": {"labels": {"app": "other"}, "resourceVersion": "9"}});
        assert_eq!(
            describe_request(
                &ApiRequest::Patch {
                    key,
                    patch,
                    status: false
                },
                None
            ),
            "patch Pod web-1-x metadata.labels.app=other"
        );
    }
}
