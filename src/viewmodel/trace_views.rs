//! Views fed from the trace: the observe → diff → act loop cards and the live sequence diagram.
//!
//! Both are incremental: they consume `trace.since(last_seq)` once per frame, so their cost
//! follows what happened in the frame, not the length of the run.

use std::collections::VecDeque;

use super::format::{labelled, short_object};
use crate::sim::api::shared_str::Str;
use crate::sim::api::types::Millis;
use crate::sim::handoff::{is_heartbeat_write, is_kind};
use crate::sim::machinery::trace::{
    ApiTrace, Delivery, ReconcileTrace, TraceEntry, TraceKind, WatchType,
};
use crate::sim::text::{concat, decimal_into};
use crate::sort::StableSort;
use crate::vec_map::VecMap;

/// A column of the sequence diagram. Kubelets share one lane (the label names the node) and the
/// controllers the course does not name share "other controllers", so the diagram keeps the
/// course's six actors at a readable width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    User,
    ApiServer,
    Deployment,
    ReplicaSet,
    Scheduler,
    Kubelet,
    Other,
    /// Learners' controllers (`controller/<name>`): their own lane, beside the built-in ones.
    Yours,
}

impl Lane {
    /// Every lane, left to right: the order of the course's diagram.
    pub const ALL: [Lane; 8] = [
        Lane::User,
        Lane::ApiServer,
        Lane::Deployment,
        Lane::ReplicaSet,
        Lane::Scheduler,
        Lane::Kubelet,
        Lane::Other,
        Lane::Yours,
    ];

    /// The lane's heading.
    pub fn title(self) -> &'static str {
        match self {
            Lane::User => "User",
            Lane::ApiServer => "API server",
            Lane::Deployment => "Deployment controller",
            Lane::ReplicaSet => "ReplicaSet controller",
            Lane::Scheduler => "Scheduler",
            Lane::Kubelet => "kubelets",
            Lane::Other => "other controllers",
            Lane::Yours => "your controllers",
        }
    }

    /// A two-line heading for narrow columns.
    pub fn short_title(self) -> (&'static str, &'static str) {
        match self {
            Lane::User => ("User", ""),
            Lane::ApiServer => ("API", "server"),
            Lane::Deployment => ("Deployment", "controller"),
            Lane::ReplicaSet => ("ReplicaSet", "controller"),
            Lane::Scheduler => ("Scheduler", ""),
            Lane::Kubelet => ("kubelets", ""),
            Lane::Other => ("other", "controllers"),
            Lane::Yours => ("your", "controllers"),
        }
    }

    /// The lane's bit in a set of lanes (its place in [`Lane::ALL`]).
    fn bit(self) -> u16 {
        1 << self as u16
    }

    /// Column index.
    pub fn index(self) -> usize {
        Lane::ALL.iter().position(|l| *l == self).unwrap_or(0)
    }

    /// The lane of a component, by the name it reports as.
    pub fn of_component(name: &str) -> Lane {
        match name {
            "user" => Lane::User,
            "deployment-controller" => Lane::Deployment,
            "replicaset-controller" => Lane::ReplicaSet,
            "default-scheduler" => Lane::Scheduler,
            n if n.starts_with("kubelet") => Lane::Kubelet,
            n if n.starts_with("controller/") => Lane::Yours,
            _ => Lane::Other,
        }
    }
}

/// How a message is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgStyle {
    /// A request to the API server (solid arrow) with its response code.
    Request,
    /// A watch event pushed to informers (dashed arrow).
    Watch,
    /// A watch event lost by a fault (arrow ending in a cross).
    Dropped,
    /// A reconcile pass (a box on the component's own lane).
    Reconcile,
    /// An informer (re)list.
    List,
    /// An injected fault (a band across every lane).
    Fault,
    /// A command the learner ran.
    Command,
}

/// One row of the sequence diagram.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqMsg {
    /// The trace entry it came from (a stable key for the view).
    pub seq: u64,
    pub t: Millis,
    pub from: Lane,
    /// One or more targets: a watch event fans out to every informer of its kind.
    pub to: Vec<Lane>,
    pub label: String,
    /// Extra words for the tooltip and the row's right side (gap, response message).
    pub detail: String,
    pub style: MsgStyle,
    /// The HTTP code of a request.
    pub code: Option<u16>,
    /// The request failed, or the event was dropped.
    pub error: bool,
    /// Which node's kubelet (for the kubelets lane).
    pub node: Option<String>,
    /// A watch row's change (event type, object, resourceVersion): the later deliveries of the
    /// same change merge into the row by it, without formatting a label of their own.
    change: Option<(WatchType, Str, u64)>,
}

impl SeqMsg {
    /// Whether the watch delivery of (`event_type`, `object`, `resource_version`) is this row's
    /// change: its label and detail would be this row's (`MODIFIED pod/x`, `rv 7`).
    fn is_change(&self, event_type: WatchType, object: &Str, resource_version: u64) -> bool {
        self.change.as_ref().is_some_and(|(t, o, rv)| {
            same_change((*t, o, *rv), (event_type, object, resource_version))
        })
    }
}

/// True for the periodic traffic that would drown the diagram: node heartbeats (Lease renewals,
/// node status updates) and passes of the node controller that found nothing to do.
pub fn is_heartbeat(entry: &TraceEntry) -> bool {
    match &entry.kind {
        TraceKind::Api(tr) => {
            let ApiTrace {
                actor,
                verb,
                object,
                ..
            } = &**tr;
            is_heartbeat_write(actor, verb, object)
        }
        TraceKind::Watch {
            object, event_type, ..
        } => is_kind(object, "Lease") || (is_kind(object, "Node") && *event_type == "MODIFIED"),
        TraceKind::Reconcile(tr) => {
            let ReconcileTrace {
                component,
                key,
                record,
                requests,
                ..
            } = &**tr;
            let idle = *requests == 0 && record.as_ref().is_none_or(|r| r.diff.is_empty());
            is_kind(key, "Lease")
                || (component.starts_with("kubelet") && is_kind(key, "Node") && idle)
                || (&**component == "node-controller" && idle)
        }
        _ => false,
    }
}

fn kubelet_node(component: &str) -> Option<String> {
    component.strip_prefix("kubelet/").map(str::to_string)
}

/// The sequence diagram's recent messages.
#[derive(Clone, Debug)]
pub struct SequenceLog {
    msgs: VecDeque<SeqMsg>,
    capacity: usize,
    /// Show heartbeats too (off by default: they are most of the traffic and teach little).
    pub show_heartbeats: bool,
    /// Show passes that changed nothing ("no gap → no-op").
    pub show_idle_reconciles: bool,
    /// Bumped on every change, so views can skip re-rendering.
    pub version: u64,
    /// Rows pushed since the log began: a row's number is the count when it came.
    pushed: u64,
    /// The resourceVersion of each of the last [`MERGE_WINDOW`] rows that is a watch row
    /// ([`NOT_A_CHANGE`] for the others), row `n` at `n % MERGE_WINDOW`: a delivery finds the
    /// row of its change among these integers, where reading back through two dozen rows was a
    /// seventh of the time the page's model spent taking in trace lines.
    recent_changes: [u64; MERGE_WINDOW],
    /// The highest resourceVersion a watch row has shown: a delivery of a newer change (the
    /// first of its fan-out, most of the time) has no row to look for.
    highest_change: u64,
}

/// How many of the latest rows a watch delivery may merge into.
const MERGE_WINDOW: usize = 24;

/// [`SequenceLog::recent_changes`]' mark for a row that shows no change.
const NOT_A_CHANGE: u64 = u64::MAX;

impl Default for SequenceLog {
    fn default() -> Self {
        SequenceLog::with_capacity(400)
    }
}

impl SequenceLog {
    /// A log keeping the last `capacity` messages.
    pub fn with_capacity(capacity: usize) -> SequenceLog {
        SequenceLog {
            msgs: VecDeque::new(),
            capacity: capacity.max(1),
            show_heartbeats: false,
            show_idle_reconciles: true,
            version: 0,
            pushed: 0,
            recent_changes: [NOT_A_CHANGE; MERGE_WINDOW],
            highest_change: 0,
        }
    }

    /// Forgets every message (after a reset).
    pub fn clear(&mut self) {
        self.msgs.clear();
        self.recent_changes = [NOT_A_CHANGE; MERGE_WINDOW];
        self.highest_change = 0;
        self.version += 1;
    }

    /// The kept messages, oldest first.
    pub fn messages(&self) -> impl DoubleEndedIterator<Item = &SeqMsg> + ExactSizeIterator {
        self.msgs.iter()
    }

    /// The last `n` messages, oldest first.
    pub fn last(&self, n: usize) -> Vec<SeqMsg> {
        let skip = self.msgs.len().saturating_sub(n);
        self.msgs.iter().skip(skip).cloned().collect()
    }

    /// Lays out a row of the batch: its lanes and style now, the rest when the batch is done.
    fn lay<'a>(&mut self, batch: &mut RowBatch<'a>, row: Laid<'a>) {
        self.recent_changes[self.pushed as usize % MERGE_WINDOW] = match row.change() {
            Some((_, _, rv)) if row.style == MsgStyle::Watch => {
                self.highest_change = self.highest_change.max(rv);
                rv
            }
            _ => NOT_A_CHANGE,
        };
        self.pushed += 1;
        batch.laid += 1;
        batch.rows.push_back(row);
        if batch.rows.len() > self.capacity {
            batch.rows.pop_front();
        }
        self.version += 1;
    }

    /// Merges a watch delivery of (`event_type`, `object`, `resource_version`), to `lane` from
    /// `component`, into the newest row among the last [`MERGE_WINDOW`] that shows its change,
    /// laid out in this batch or kept from before; false when there is none.
    fn merge<'a>(
        &mut self,
        batch: &mut RowBatch<'a>,
        (event_type, object, resource_version): (WatchType, &Str, u64),
        lane: Lane,
        component: &'a str,
    ) -> bool {
        if resource_version > self.highest_change {
            return false;
        }
        let pushed = self.pushed as usize;
        let in_batch = batch.laid as usize;
        // Newest first: the row `age` rows back is numbered `pushed - age`.
        let mut slot = pushed % MERGE_WINDOW;
        for age in 1..=pushed.min(MERGE_WINDOW).min(self.capacity) {
            slot = slot.checked_sub(1).unwrap_or(MERGE_WINDOW - 1);
            if self.recent_changes[slot] != resource_version {
                continue;
            }
            if age <= in_batch {
                let Some(i) = batch.rows.len().checked_sub(age) else {
                    return false;
                };
                let row = &mut batch.rows[i];
                if row
                    .change()
                    .is_some_and(|c| same_change(c, (event_type, object, resource_version)))
                {
                    row.to |= lane.bit();
                    if lane == Lane::Kubelet {
                        row.node_of = Some(component);
                    }
                    self.version += 1;
                    return true;
                }
            } else {
                let Some(i) = self.msgs.len().checked_sub(age - in_batch) else {
                    return false;
                };
                let m = &mut self.msgs[i];
                if m.is_change(event_type, object, resource_version) {
                    if !m.to.contains(&lane) {
                        m.to.push(lane);
                        m.to.stable_sort();
                    }
                    if lane == Lane::Kubelet {
                        m.node = kubelet_node(component);
                    }
                    self.version += 1;
                    return true;
                }
            }
        }
        false
    }

    /// Adds the diagram rows for new trace entries.
    pub fn ingest<'a>(&mut self, entries: impl IntoIterator<Item = &'a TraceEntry>) {
        let mut batch = RowBatch::default();
        for e in entries {
            self.take(&mut batch, e, is_heartbeat(e));
        }
        self.finish(batch);
    }

    /// Lays out the row of one trace line of a batch ([`is_heartbeat`] already asked); the
    /// batch's rows that are still kept are made when it is done ([`SequenceLog::finish`]).
    pub fn take<'a>(&mut self, batch: &mut RowBatch<'a>, e: &'a TraceEntry, heartbeat: bool) {
        if !self.show_heartbeats && heartbeat {
            return;
        }
        let row = |from: Lane, to: u16, style: MsgStyle, node_of: Option<&'a str>| Laid {
            e,
            from,
            to,
            style,
            node_of,
        };
        let row = match &e.kind {
            TraceKind::Api(tr) => row(
                Lane::of_component(&tr.actor),
                Lane::ApiServer.bit(),
                MsgStyle::Request,
                Some(&tr.actor),
            ),
            TraceKind::Watch {
                component,
                event_type,
                object,
                resource_version,
                delivery,
            } => {
                let lane = Lane::of_component(component);
                let dropped = *delivery == Delivery::Dropped;
                // Merge the fan-out of one change into one row with several arrowheads.
                let change = (*event_type, object, *resource_version);
                if !dropped && self.merge(batch, change, lane, component) {
                    return;
                }
                let style = if dropped {
                    MsgStyle::Dropped
                } else {
                    MsgStyle::Watch
                };
                row(Lane::ApiServer, lane.bit(), style, Some(component))
            }
            TraceKind::Reconcile(tr) => {
                let ReconcileTrace {
                    component,
                    record,
                    requests,
                    ..
                } = &**tr;
                let idle = *requests == 0 && record.as_ref().is_none_or(|r| r.diff.is_empty());
                if idle && !self.show_idle_reconciles {
                    return;
                }
                let lane = Lane::of_component(component);
                row(lane, lane.bit(), MsgStyle::Reconcile, Some(component))
            }
            TraceKind::List { component, .. } => {
                let lane = Lane::of_component(component);
                row(lane, Lane::ApiServer.bit(), MsgStyle::List, Some(component))
            }
            TraceKind::Fault { .. } => row(Lane::User, u16::MAX, MsgStyle::Fault, None),
            TraceKind::Command { .. } => row(Lane::User, Lane::User.bit(), MsgStyle::Command, None),
            TraceKind::Event(_) | TraceKind::Check { .. } => return,
        };
        self.lay(batch, row);
    }

    /// Makes the rows of a batch that are still kept, worded.
    pub fn finish(&mut self, batch: RowBatch<'_>) {
        for row in batch.rows {
            self.msgs.push_back(row.made());
            if self.msgs.len() > self.capacity {
                self.msgs.pop_front();
            }
        }
    }
}

/// The rows of a batch of trace lines being taken in: a simulated second at 10,000 pods is tens
/// of thousands of lines, and the log keeps its last `capacity` rows, so rows are laid out
/// (lanes, merges) as lines come, and made and worded at the end, only those still kept.
#[derive(Default)]
pub struct RowBatch<'a> {
    /// The batch's last rows (at most the log's capacity), newest last.
    rows: VecDeque<Laid<'a>>,
    /// How many rows the batch has laid out.
    laid: u64,
}

/// A row laid out in a batch: what its trace line does not already say.
struct Laid<'a> {
    e: &'a TraceEntry,
    from: Lane,
    /// The lanes it points to, one bit each ([`Lane::bit`]).
    to: u16,
    style: MsgStyle,
    /// The component the row's node is read from (`kubelet/node-1`).
    node_of: Option<&'a str>,
}

impl Laid<'_> {
    /// A watch row's change: (event type, object, resourceVersion).
    fn change(&self) -> Option<(WatchType, &Str, u64)> {
        match &self.e.kind {
            TraceKind::Watch {
                event_type,
                object,
                resource_version,
                ..
            } => Some((*event_type, object, *resource_version)),
            _ => None,
        }
    }

    /// The row, worded.
    fn made(self) -> SeqMsg {
        let (label, detail) = wording(self.e);
        let (code, error) = match &self.e.kind {
            TraceKind::Api(tr) => (Some(tr.code), tr.code >= 400),
            TraceKind::Command { ok, .. } => (None, !ok),
            _ => (None, self.style == MsgStyle::Dropped),
        };
        SeqMsg {
            seq: self.e.seq,
            t: self.e.t,
            from: self.from,
            to: Lane::ALL
                .into_iter()
                .filter(|l| self.to & l.bit() != 0)
                .collect(),
            label,
            detail,
            style: self.style,
            code,
            error,
            node: self.node_of.and_then(kubelet_node),
            change: self.change().map(|(t, object, rv)| (t, object.clone(), rv)),
        }
    }
}

/// Whether two watch deliveries carry the same change: a row's label and detail would be the
/// same (`MODIFIED pod/x`, `rv 7`).
fn same_change(
    (t, o, rv): (WatchType, &Str, u64),
    (event_type, object, resource_version): (WatchType, &Str, u64),
) -> bool {
    t == event_type
        && rv == resource_version
        && (o == object || short_object(o) == short_object(object))
}

/// A row's label and detail, from the trace line that made it.
fn wording(e: &TraceEntry) -> (String, String) {
    match &e.kind {
        TraceKind::Api(tr) => (
            labelled(tr.verb, &tr.object),
            tr.message.clone().unwrap_or_default(),
        ),
        TraceKind::Watch {
            event_type,
            object,
            resource_version,
            ..
        } => (
            labelled(event_type.as_str(), object),
            concat(&["rv ", decimal_into(&mut [0; 20], *resource_version)]),
        ),
        TraceKind::Reconcile(tr) => {
            let ReconcileTrace {
                key,
                record,
                requests,
                trigger,
                ..
            } = &**tr;
            let detail = match record {
                Some(r) if !r.diff.is_empty() => concat(&["gap: ", &r.diff]),
                Some(_) if *requests > 0 => format!("{requests} request(s)"),
                Some(_) => "no gap: nothing to do".into(),
                None if *requests > 0 => format!("{requests} request(s) ({trigger})"),
                None => format!("nothing to do ({trigger})"),
            };
            (labelled("reconcile", key), detail)
        }
        TraceKind::List {
            reason, objects, ..
        } => (format!("list ({objects} objects)"), reason.clone()),
        // The description is `<fault as JSON> — <what happened>`: the band shows what
        // happened; the JSON is already summed up by the fault's name.
        TraceKind::Fault { fault, description } => (
            format!("⚡ {fault}"),
            description
                .split_once(" — ")
                .map_or_else(|| description.clone(), |(_, what)| what.to_string()),
        ),
        TraceKind::Command {
            command, output, ..
        } => (
            format!("$ {command}"),
            output.lines().next().unwrap_or_default().to_string(),
        ),
        TraceKind::Event(_) | TraceKind::Check { .. } => (String::new(), String::new()),
    }
}

/// One API request a reconcile pass made, with its answer.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopAction {
    /// What the pass asked for, in the engine's words (`create Pod (generateName web-7d9f8-)`).
    pub text: String,
    /// The API server's answer, once it is in.
    pub code: Option<u16>,
    /// The error message of a failed request.
    pub message: Option<String>,
}

/// The latest observe → diff → act pass of one component.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopCard {
    /// The component's name (`replicaset-controller`, `kubelet/node-1`).
    pub component: String,
    /// `rs/web-7d4b9c8f6`.
    pub key: String,
    /// Why the key was queued (`watch`, `requeue`, `relist`, `timer`, `resync`).
    pub trigger: &'static str,
    pub t: Millis,
    pub observed: String,
    pub desired: String,
    pub diff: String,
    /// Requests the pass decided on, with their answers as they come in.
    pub actions: Vec<LoopAction>,
    /// How many requests the pass decided on.
    pub requests: usize,
    /// Passes of this component seen so far.
    pub passes: u64,
    /// The pass's trace entry.
    pub seq: u64,
    /// The pass whose pulse the card is playing: a new value replays it. It moves on at most once
    /// per [`PULSE_MS`] of real time, so a controller that runs on every frame pulses steadily.
    pub pulse: u64,
    /// When (the page's real clock, ms) that pulse started.
    pub pulse_at: f64,
    /// While a batch of trace lines is taken in and the component has passes in it: where the
    /// batch keeps its last one, whose card this becomes ([`LoopTracker::finish`]).
    batch_pass: Option<usize>,
}

/// The last pass of each component in a batch of trace lines being taken in
/// ([`LoopTracker::take`]), with the answers to it so far, by [`LoopCard::batch_pass`].
#[derive(Default)]
pub struct PassBatch<'a> {
    passes: Vec<(&'a TraceEntry, Vec<&'a ApiTrace>)>,
}

/// How long the loop card's pulse plays (`.loop-pulse` in www/style.css). A pass that comes while
/// it plays does not restart it: during a rollout the ReplicaSet controller runs many times a
/// second, and restarting the animation (a new element, a new compositor layer) on each frame
/// cost about a sixth of the main thread in a 300-pod rollout, for a dot that only flickered.
pub const PULSE_MS: f64 = 900.0;

impl LoopCard {
    /// The card of a component before its first pass: no passes, no pulse.
    fn blank(component: &str) -> LoopCard {
        LoopCard {
            component: component.to_string(),
            key: String::new(),
            trigger: "",
            t: 0,
            observed: String::new(),
            desired: String::new(),
            diff: String::new(),
            actions: Vec::new(),
            requests: 0,
            passes: 0,
            seq: 0,
            pulse: 0,
            pulse_at: f64::NEG_INFINITY,
            batch_pass: None,
        }
    }

    /// Takes in the API server's answer to one of the pass's requests: answers arrive in send
    /// order, so it fills the first action still waiting.
    fn answer(&mut self, tr: &ApiTrace) {
        match self.actions.iter_mut().find(|a| a.code.is_none()) {
            Some(a) => {
                a.code = Some(tr.code);
                a.message = tr.message.clone();
            }
            None => self.actions.push(LoopAction {
                text: labelled(tr.verb, &tr.object),
                code: Some(tr.code),
                message: tr.message.clone(),
            }),
        }
    }

    /// A friendly title (`ReplicaSet controller`).
    pub fn title(&self) -> String {
        match self.component.as_str() {
            "deployment-controller" => "Deployment controller".into(),
            "replicaset-controller" => "ReplicaSet controller".into(),
            "statefulset-controller" => "StatefulSet controller".into(),
            "job-controller" => "Job controller".into(),
            "ttl-after-finished-controller" => "TTL-after-finished controller".into(),
            "persistentvolume-controller" => "PersistentVolume controller".into(),
            "persistentvolumeclaim-protection-controller" => "PVC protection controller".into(),
            "persistentvolume-protection-controller" => "PV protection controller".into(),
            "pod-garbage-collector-controller" => "Pod garbage collector".into(),
            "local-path-provisioner" => "local-path provisioner".into(),
            "csi-disk-controller" => "Disk CSI driver (provisioner, resizer, attacher)".into(),
            "attachdetach-controller" => "Attach/detach controller".into(),
            "default-scheduler" => "Scheduler".into(),
            "garbage-collector-controller" => "Garbage collector".into(),
            "node-controller" => "Node lifecycle controller".into(),
            "taint-eviction-controller" => "Taint eviction controller".into(),
            "disruption-controller" => "Disruption controller".into(),
            "endpointslice-controller" => "EndpointSlice controller".into(),
            "namespace-controller" => "Namespace controller".into(),
            "kro" => "kro: ResourceGraphDefinition controller".into(),
            c if c.starts_with("kro/") => format!("kro instance controller ({})", &c[4..]),
            c => c.to_string(),
        }
    }

    /// The panel's place for this card, which the view keys it by: every kubelet shares one
    /// (the panel shows the latest kubelet's pass), so a pass of another node's kubelet
    /// updates that card where it is instead of replacing it, several times a second.
    pub fn slot(&self) -> &str {
        if self.is_kubelet() {
            "kubelet"
        } else {
            &self.component
        }
    }

    fn is_kubelet(&self) -> bool {
        self.component.starts_with("kubelet")
    }

    /// True when the pass found no gap and did nothing.
    pub fn converged(&self) -> bool {
        self.diff.is_empty() && self.requests == 0
    }
}

/// Keeps the latest pass per component.
#[derive(Clone, Debug, Default)]
pub struct LoopTracker {
    cards: VecMap<String, LoopCard>,
    /// Reconcile seq → component, for matching the requests that follow.
    pending: VecDeque<(u64, Str)>,
    pub version: u64,
}

/// The order cards are shown in: the chain of the course's diagram first.
const CARD_ORDER: [&str; 3] = [
    "deployment-controller",
    "replicaset-controller",
    "default-scheduler",
];

impl LoopTracker {
    /// Forgets everything (after a reset).
    pub fn clear(&mut self) {
        *self = LoopTracker {
            version: self.version + 1,
            ..Default::default()
        };
    }

    /// Updates the cards from new trace entries, seen at `real_ms` on the page's real clock.
    pub fn ingest<'a>(&mut self, entries: impl IntoIterator<Item = &'a TraceEntry>, real_ms: f64) {
        let mut batch = PassBatch::default();
        for e in entries {
            self.take(&mut batch, e, is_heartbeat(e), real_ms);
        }
        self.finish(batch);
    }

    /// Takes in one trace line of a batch ([`is_heartbeat`] already asked), seen at `real_ms`.
    /// A component's card shows its last pass: of one batch's passes (tens of thousands in a
    /// simulated second at 10,000 pods) only each component's last is worth a card, made when the
    /// batch is done ([`LoopTracker::finish`]); every pass counts (passes, pulse) as it comes.
    pub fn take<'a>(
        &mut self,
        batch: &mut PassBatch<'a>,
        e: &'a TraceEntry,
        heartbeat: bool,
        real_ms: f64,
    ) {
        match &e.kind {
            TraceKind::Reconcile(tr) if !heartbeat => {
                if tr.requests > 0 {
                    self.pending.push_back((e.seq, tr.component.clone()));
                    while self.pending.len() > 64 {
                        self.pending.pop_front();
                    }
                }
                self.version += 1;
                let card = match self.cards.get_mut(&*tr.component) {
                    Some(card) => card,
                    None => {
                        self.cards
                            .insert(tr.component.to_string(), LoopCard::blank(&tr.component));
                        self.cards
                            .get_mut(&*tr.component)
                            .expect("the card just made")
                    }
                };
                card.passes += 1;
                if real_ms - card.pulse_at >= PULSE_MS {
                    (card.pulse, card.pulse_at) = (e.seq, real_ms);
                }
                card.seq = e.seq;
                let pass = (e, Vec::new());
                match card.batch_pass {
                    Some(i) => batch.passes[i] = pass,
                    None => {
                        card.batch_pass = Some(batch.passes.len());
                        batch.passes.push(pass);
                    }
                }
            }
            TraceKind::Api(tr) => {
                let Some(cause) = e.cause() else { return };
                // A pass's answers follow it closely: its entry is found from the newest.
                let Some((_, component)) = self.pending.iter().rev().find(|(s, _)| *s == cause)
                else {
                    return;
                };
                let Some(card) = self.cards.get_mut(&**component) else {
                    return;
                };
                if card.seq != cause {
                    return;
                }
                match card.batch_pass {
                    // The batch's last pass so far: answered once its card is made.
                    Some(i) => batch.passes[i].1.push(tr),
                    None => {
                        card.answer(tr);
                        self.version += 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// Makes the card of each component's last pass in a batch, with the answers it has had.
    pub fn finish(&mut self, batch: PassBatch<'_>) {
        for (e, answers) in batch.passes {
            let TraceKind::Reconcile(tr) = &e.kind else {
                continue;
            };
            let Some(card) = self.cards.get_mut(&*tr.component) else {
                continue;
            };
            let ReconcileTrace {
                key,
                trigger,
                record,
                requests,
                actions,
                ..
            } = &**tr;
            let r = record.clone().unwrap_or_default();
            card.key = short_object(key);
            card.trigger = trigger;
            card.t = e.t;
            (card.observed, card.desired, card.diff) = (r.observed, r.desired, r.diff);
            card.actions = actions
                .iter()
                .map(|a| LoopAction {
                    text: a.clone(),
                    code: None,
                    message: None,
                })
                .collect();
            card.requests = *requests;
            card.batch_pass = None;
            for a in answers {
                card.answer(a);
            }
        }
    }

    /// The cards: the course's chain first (Deployment, ReplicaSet, Scheduler, the latest kubelet),
    /// then any other controller that has run, most recent first.
    pub fn cards(&self) -> Vec<LoopCard> {
        // A learner's own controllers first: theirs is the loop they came to watch.
        let yours = |c: &LoopCard| Lane::of_component(&c.component) == Lane::Yours;
        let mut out: Vec<LoopCard> = self.cards.values().filter(|c| yours(c)).cloned().collect();
        out.extend(
            CARD_ORDER
                .iter()
                .filter_map(|c| self.cards.get(*c).cloned()),
        );
        if let Some(k) = self
            .cards
            .values()
            .filter(|c| c.is_kubelet())
            .max_by_key(|c| c.seq)
        {
            out.push(k.clone());
        }
        let mut others: Vec<&LoopCard> = self
            .cards
            .values()
            .filter(|c| !CARD_ORDER.contains(&c.component.as_str()) && !c.is_kubelet() && !yours(c))
            .collect();
        others.stable_sort_by_key(|c| std::cmp::Reverse(c.seq));
        out.extend(others.into_iter().cloned());
        out
    }

    /// The latest card of one component.
    pub fn card(&self, component: &str) -> Option<&LoopCard> {
        self.cards.get(component)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::faults::Fault;
    use crate::sim::machinery::controller::ReconcileRecord;
    use crate::sim::machinery::trace::Trace;
    use crate::sim::session::Session;

    fn api(actor: &str, verb: &'static str, object: &str, code: u16) -> TraceKind {
        TraceKind::Api(Box::new(ApiTrace {
            actor: actor.into(),
            verb,
            object: object.into(),
            code,
            message: None,
            resource_version: Some(1),
        }))
    }

    fn watch(component: &str, object: &str, rv: u64) -> TraceKind {
        TraceKind::Watch {
            component: component.into(),
            event_type: WatchType::Added,
            object: object.into(),
            resource_version: rv,
            delivery: Delivery::Delivered,
        }
    }

    fn reconcile(component: &str, key: &str, diff: &str, requests: usize) -> TraceKind {
        TraceKind::Reconcile(Box::new(ReconcileTrace {
            component: component.into(),
            key: key.into(),
            trigger: "watch",
            record: Some(Box::new(ReconcileRecord {
                observed: "0 pods".into(),
                desired: "replicas: 3".into(),
                diff: diff.into(),
            })),
            requests,
            actions: (0..requests).map(|i| format!("create Pod #{i}")).collect(),
        }))
    }

    #[test]
    fn a_learners_controller_has_its_own_lane_after_the_built_in_ones() {
        assert_eq!(Lane::of_component("controller/website"), Lane::Yours);
        assert_eq!(Lane::of_component("kro-instance-controller"), Lane::Other);
        assert_eq!(Lane::Yours.index(), Lane::ALL.len() - 1);
        assert_eq!(Lane::Yours.title(), "your controllers");
    }

    #[test]
    fn a_watch_fan_out_becomes_one_row_with_several_targets() {
        let mut t = Trace::default();
        t.push(
            0,
            None,
            api("user", "create", "Deployment/default/web", 201),
        );
        t.push(
            5,
            Some(1),
            watch("deployment-controller", "Deployment/default/web", 7),
        );
        t.push(
            9,
            Some(1),
            watch("garbage-collector-controller", "Deployment/default/web", 7),
        );
        let mut log = SequenceLog::default();
        log.ingest(t.entries());
        let msgs: Vec<&SeqMsg> = log.messages().collect();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].from, Lane::User);
        assert_eq!(msgs[0].to, vec![Lane::ApiServer]);
        assert_eq!(msgs[0].label, "create deployment/web");
        assert_eq!(msgs[1].to, vec![Lane::Deployment, Lane::Other]);
        assert_eq!(msgs[1].label, "ADDED deployment/web");
    }

    #[test]
    fn deliveries_merge_by_change_and_by_label_not_by_allocation() {
        let mut t = Trace::default();
        t.push(
            5,
            None,
            watch("deployment-controller", "Pod/default/web", 7),
        );
        // The same label (`ADDED pod/web`) and resourceVersion, written another way.
        t.push(5, None, watch("replicaset-controller", "Pod//web", 7));
        // Another change of the same object, and the same change under another event type.
        t.push(
            6,
            None,
            watch("replicaset-controller", "Pod/default/web", 8),
        );
        let mut modified = watch("deployment-controller", "Pod/default/web", 8);
        if let TraceKind::Watch { event_type, .. } = &mut modified {
            *event_type = WatchType::Modified;
        }
        t.push(6, None, modified);
        let mut log = SequenceLog::default();
        log.ingest(t.entries());
        let rows: Vec<(&str, &str, usize)> = log
            .messages()
            .map(|m| (m.label.as_str(), m.detail.as_str(), m.to.len()))
            .collect();
        assert_eq!(
            rows,
            [
                ("ADDED pod/web", "rv 7", 2),
                ("ADDED pod/web", "rv 8", 1),
                ("MODIFIED pod/web", "rv 8", 1)
            ]
        );
    }

    #[test]
    fn a_delivery_merges_into_its_changes_row_only_while_that_row_is_among_the_last_24() {
        // (rows between the change's row and its next delivery, capacity) → whether it merges.
        let merges = |between: usize, capacity: usize| {
            let mut t = Trace::default();
            t.push(
                0,
                None,
                watch("deployment-controller", "Pod/default/web", 7),
            );
            for i in 0..between {
                t.push(
                    1,
                    None,
                    api("user", "get", &format!("Pod/default/p-{i}"), 200),
                );
            }
            t.push(
                2,
                None,
                watch("replicaset-controller", "Pod/default/web", 7),
            );
            let mut log = SequenceLog::with_capacity(capacity);
            log.ingest(t.entries());
            let rows = log
                .messages()
                .filter(|m| m.label == "ADDED pod/web")
                .count();
            (rows == 1).then(|| log.messages().find(|m| m.to.len() == 2).is_some())
        };
        assert_eq!(merges(0, 400), Some(true));
        assert_eq!(
            merges(23, 400),
            Some(true),
            "the change's row is the 24th newest"
        );
        assert_eq!(merges(24, 400), None, "the 25th newest: a row of its own");
        assert_eq!(merges(100, 400), None);
        // A row the log no longer keeps takes no more deliveries.
        assert_eq!(merges(3, 4), Some(true));
        assert_eq!(merges(4, 4), Some(false), "only the new row is left");

        // A late delivery of an older change, after a newer change's row.
        let mut t = Trace::default();
        t.push(
            0,
            None,
            watch("deployment-controller", "Pod/default/web", 7),
        );
        t.push(
            0,
            None,
            watch("deployment-controller", "Pod/default/web", 9),
        );
        t.push(
            1,
            None,
            watch("replicaset-controller", "Pod/default/web", 7),
        );
        let mut log = SequenceLog::default();
        log.ingest(t.entries());
        let rows: Vec<(&str, usize)> = log
            .messages()
            .map(|m| (m.detail.as_str(), m.to.len()))
            .collect();
        assert_eq!(rows, [("rv 7", 2), ("rv 9", 1)]);
    }

    #[test]
    fn heartbeats_stay_out_of_the_diagram_unless_asked_for() {
        let mut t = Trace::default();
        t.push(
            0,
            None,
            api(
                "kubelet/node-1",
                "update",
                "Lease/kube-node-lease/node-1",
                200,
            ),
        );
        t.push(
            0,
            None,
            api("kubelet/node-1", "update/status", "Node/node-1", 200),
        );
        let mut log = SequenceLog::default();
        log.ingest(t.entries());
        assert_eq!(log.messages().len(), 0);
        log.show_heartbeats = true;
        log.ingest(t.entries());
        assert_eq!(log.messages().len(), 2);
        assert_eq!(
            log.messages().next().map(|m| m.node.clone()),
            Some(Some("node-1".into()))
        );
    }

    #[test]
    fn a_fault_band_says_what_happened_not_its_json() {
        let mut t = Trace::default();
        t.push(
            0,
            None,
            TraceKind::Fault {
                fault: "NodeDown".into(),
                description: r#"{"type":"NodeDown","node":"node-2"} — node node-2 is down"#.into(),
            },
        );
        let mut log = SequenceLog::default();
        log.ingest(t.entries());
        let m = log.messages().next().expect("a band");
        assert_eq!(
            (m.label.as_str(), m.detail.as_str()),
            ("⚡ NodeDown", "node node-2 is down")
        );
        assert_eq!(m.to.len(), Lane::ALL.len());
    }

    #[test]
    fn failed_requests_and_dropped_events_are_marked_as_errors() {
        let mut t = Trace::default();
        t.push(
            0,
            None,
            api(
                "replicaset-controller",
                "update",
                "ReplicaSet/default/web-1",
                409,
            ),
        );
        t.push(
            1,
            None,
            TraceKind::Watch {
                component: "replicaset-controller".into(),
                event_type: WatchType::Deleted,
                object: "Pod/default/web-1-x".into(),
                resource_version: 3,
                delivery: Delivery::Dropped,
            },
        );
        let mut log = SequenceLog::default();
        log.ingest(t.entries());
        let msgs: Vec<&SeqMsg> = log.messages().collect();
        assert!(msgs[0].error);
        assert_eq!(msgs[0].code, Some(409));
        assert_eq!(msgs[1].style, MsgStyle::Dropped);
        assert!(msgs[1].error);
    }

    #[test]
    fn the_loop_card_collects_the_requests_its_pass_made() {
        let mut t = Trace::default();
        let r = t.push(
            10,
            None,
            reconcile(
                "replicaset-controller",
                "ReplicaSet/default/web-1",
                "3 missing",
                3,
            ),
        );
        let mut tracker = LoopTracker::default();
        tracker.ingest(t.entries(), 0.0);
        let planned = tracker.card("replicaset-controller").expect("card");
        assert_eq!(planned.actions.len(), 3);
        assert!(
            planned.actions.iter().all(|a| a.code.is_none()),
            "no answers yet"
        );
        let seen = t.next_seq() - 1;
        for (i, code) in [201, 201, 409].into_iter().enumerate() {
            t.push(
                14,
                Some(r),
                api(
                    "replicaset-controller",
                    "create",
                    &format!("Pod/default/web-1-{i}"),
                    code,
                ),
            );
        }
        tracker.ingest(t.since(seen), 0.0);
        let card = tracker.card("replicaset-controller").expect("card");
        assert_eq!(card.key, "replicaset/web-1");
        assert_eq!(card.diff, "3 missing");
        assert_eq!(card.actions.len(), 3);
        assert_eq!(card.actions[0].text, "create Pod #0");
        let codes: Vec<Option<u16>> = card.actions.iter().map(|a| a.code).collect();
        assert_eq!(codes, [Some(201), Some(201), Some(409)]);
        assert!(!card.converged());
    }

    /// The node-dies lesson's first 90 s, node-2 powered off at 20 s: passes that fail and
    /// retry, watch fan-outs, Leases, a fault band.
    fn node_dies_run() -> Session {
        let text = crate::sim::examples::by_name("node-dies").expect("the lesson");
        let mut s = Session::load("node-dies.yaml", text, Some(3)).expect("the lesson loads");
        s.advance_to(20 * 1_000, usize::MAX);
        s.inject(Fault::NodeDown {
            node: "node-2".into(),
        })
        .expect("node-2 exists");
        s.advance_to(90 * 1_000, usize::MAX);
        s
    }

    #[test]
    fn rows_from_a_batch_are_the_rows_from_its_entries_one_at_a_time() {
        let s = node_dies_run();
        let trace = s.sim.trace();
        for (heartbeats, idle) in [(false, true), (true, false)] {
            let log = || {
                let mut log = SequenceLog::with_capacity(60);
                log.show_heartbeats = heartbeats;
                log.show_idle_reconciles = idle;
                log
            };
            let mut batch = log();
            batch.ingest(trace.entries());
            let mut one_by_one = log();
            for e in trace.entries() {
                one_by_one.ingest([e]);
            }
            assert_eq!(batch.messages().len(), 60);
            assert!(batch.messages().all(|m| !m.label.is_empty()));
            assert!(batch.messages().any(|m| m.to.len() > 1), "a merged fan-out");
            assert!(batch.messages().eq(one_by_one.messages()));
        }
    }

    #[test]
    fn cards_from_a_batch_are_the_cards_from_its_entries_one_at_a_time() {
        let s = node_dies_run();
        let trace = s.sim.trace();
        let mut batch = LoopTracker::default();
        batch.ingest(trace.entries(), 500.0);
        let mut one_by_one = LoopTracker::default();
        for e in trace.entries() {
            one_by_one.ingest([e], 500.0);
        }
        assert!(batch.cards().len() > 5, "{:?}", batch.cards());
        assert!(batch.cards().iter().any(|c| c.passes > 1));
        assert!(batch
            .cards()
            .iter()
            .any(|c| c.actions.iter().any(|a| a.code.is_some())));
        assert_eq!(batch.cards(), one_by_one.cards());
        assert_eq!(batch.pending, one_by_one.pending);
    }

    #[test]
    fn a_pass_during_the_pulse_keeps_it_and_a_pass_after_it_replays_it() {
        let mut t = Trace::default();
        let pass = |t: &mut Trace, at| {
            let reconcile = reconcile("replicaset-controller", "ReplicaSet/default/web-1", "", 0);
            t.push(at, None, reconcile)
        };
        let mut tracker = LoopTracker::default();
        let first = pass(&mut t, 10);
        tracker.ingest(t.entries(), 1_000.0);
        let seen = t.next_seq() - 1;
        let second = pass(&mut t, 20);
        tracker.ingest(t.since(seen), 1_000.0 + PULSE_MS - 1.0);
        let card = tracker.card("replicaset-controller").expect("card");
        assert_eq!(
            (card.seq, card.passes),
            (second, 2),
            "the card shows the latest pass"
        );
        assert_eq!(
            (card.pulse, card.pulse_at),
            (first, 1_000.0),
            "its pulse plays on"
        );
        let seen = t.next_seq() - 1;
        let third = pass(&mut t, 30);
        tracker.ingest(t.since(seen), 1_000.0 + PULSE_MS);
        let card = tracker.card("replicaset-controller").expect("card");
        assert_eq!((card.pulse, card.pulse_at), (third, 1_000.0 + PULSE_MS));
    }

    #[test]
    fn a_new_pass_replaces_the_card_and_counts_passes() {
        let mut t = Trace::default();
        t.push(
            10,
            None,
            reconcile(
                "deployment-controller",
                "Deployment/default/web",
                "1 missing",
                1,
            ),
        );
        t.push(
            20,
            None,
            reconcile("deployment-controller", "Deployment/default/web", "", 0),
        );
        let mut tracker = LoopTracker::default();
        tracker.ingest(t.entries(), 0.0);
        let card = tracker.card("deployment-controller").expect("card");
        assert_eq!(card.passes, 2);
        assert!(card.converged());
    }

    #[test]
    fn cards_follow_the_course_chain_then_the_latest_kubelet() {
        let mut t = Trace::default();
        t.push(1, None, reconcile("kubelet/node-2", "Pod/default/a", "", 0));
        t.push(
            2,
            None,
            reconcile("garbage-collector-controller", "Pod/default/a", "", 0),
        );
        t.push(
            3,
            None,
            reconcile("default-scheduler", "Pod/default/a", "", 1),
        );
        t.push(
            4,
            None,
            reconcile("deployment-controller", "Deployment/default/web", "", 0),
        );
        t.push(5, None, reconcile("kubelet/node-1", "Pod/default/b", "", 0));
        let mut tracker = LoopTracker::default();
        tracker.ingest(t.entries(), 0.0);
        let names: Vec<String> = tracker.cards().into_iter().map(|c| c.component).collect();
        assert_eq!(
            names,
            [
                "deployment-controller",
                "default-scheduler",
                "kubelet/node-1",
                "garbage-collector-controller"
            ]
        );
    }

    #[test]
    fn every_kubelet_shares_one_card_slot_and_each_controller_has_its_own() {
        let mut t = Trace::default();
        t.push(1, None, reconcile("kubelet/node-2", "Pod/default/a", "", 0));
        t.push(2, None, reconcile("kubelet/node-1", "Pod/default/b", "", 0));
        t.push(
            3,
            None,
            reconcile("default-scheduler", "Pod/default/a", "", 1),
        );
        let mut tracker = LoopTracker::default();
        tracker.ingest(t.entries(), 0.0);
        let slot = |c: &str| tracker.card(c).map(|c| c.slot().to_string());
        assert_eq!(slot("kubelet/node-1"), Some("kubelet".into()));
        assert_eq!(slot("kubelet/node-2"), Some("kubelet".into()));
        assert_eq!(slot("default-scheduler"), Some("default-scheduler".into()));
    }
}
