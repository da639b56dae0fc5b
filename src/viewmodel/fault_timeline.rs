//! The fault timeline: for each fault, what it hit, how the control plane answered, and when the
//! system was whole again — read from the trace and the API server's own change history.
//!
//! Everything here is observed, never predicted:
//! - **What a fault set off** is its trace family: every entry whose cause chain leads back to the
//!   fault (what [`crate::sim::machinery::trace::effects_of`] walks, followed incrementally here). A dead
//!   machine tells nobody, so NodeDown and PartitionNode have no cause link to what follows; for
//!   them the node controller's passes over that node that changed something (until NodeUp /
//!   HealNode) are adopted as roots, and the incident says it was linked by the node's name.
//! - **Affected objects** are the pods and nodes that family harmed (deleted, evicted, marked
//!   NotReady, crashed); **replacements** are the pods it created, with the controller that made
//!   them, the node the scheduler bound them to, and when they started and turned Ready.
//! - **Recovery** is judged on the API server's record. Each object the fault put at risk gets a
//!   [`Goal`]: the Deployment (or ReplicaSet) owning an affected pod back to ready = available =
//!   desired; a bare pod Ready again; the node Ready again. Goals are replayed change by change
//!   from the watch history ([`crate::sim::api::apiserver::ApiServer::events_since`]), each change at
//!   the time of the write that made it, so "recovered after 1.0s" is the time from the fault to
//!   the status write that closed the last gap. A deleted pod with no controller is never
//!   recreated — the loop heals only what it watches — and the verdict says so.
//!
//! Like the loop panel it is incremental: [`FaultTimeline::observe`] reads what happened since its last
//! call and stops following an incident once it has settled, so its cost follows activity, not
//! the length of the run.

use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

use crate::sim::api::types::{Kind, Millis, Object, ObjectKey};
use crate::sim::api::{WatchEvent, WatchEventType};
use crate::sim::faults::{Fault, PodTarget};
use crate::sim::machinery::trace::{
    ApiTrace, Delivery, EventTrace, ReconcileTrace, Trace, TraceEntry, TraceKind,
};
use crate::sim::world::{Sim, MACHINE_BOOT_MS};
use crate::sort::CollectTree;
use crate::vec_map::VecMap;

/// Most incidents kept; the oldest go first.
pub const MAX_INCIDENTS: usize = 50;
/// Most object rows one incident lists (the rest are counted in [`Incident::more_rows`]).
pub const MAX_ROWS: usize = 40;
/// Most marks one row keeps (the rest are counted in [`Row::more_marks`]).
pub const MAX_MARKS: usize = 16;
/// Most control-plane passes one incident lists.
pub const MAX_RESPONSES: usize = 12;
/// The most trace entries one incident follows; past it the incident stops growing.
pub const FAMILY_CAP: usize = 20_000;
/// An incident whose goals are all settled and that set nothing off for this long is done.
pub const QUIET_MS: Millis = 30_000;
/// No incident is followed longer than this after its fault.
pub const FOLLOW_LIMIT_MS: Millis = 3_600_000;

/// How a mark is drawn: a shape and a colour, always with a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Something was broken or removed (✕).
    Harm,
    /// A warning the control plane raised (▲).
    Warn,
    /// The control plane acted: created, scheduled, started (●).
    Act,
    /// Back to health (✓).
    Ok,
    /// Bookkeeping worth seeing (○).
    Info,
}

impl Tone {
    /// The class suffix and the glyph the page draws.
    pub fn as_str(self) -> &'static str {
        match self {
            Tone::Harm => "harm",
            Tone::Warn => "warn",
            Tone::Act => "act",
            Tone::Ok => "ok",
            Tone::Info => "info",
        }
    }

    /// A shape for the mark, so tone is never told by colour alone.
    pub fn glyph(self) -> &'static str {
        match self {
            Tone::Harm => "✕",
            Tone::Warn => "▲",
            Tone::Act => "●",
            Tone::Ok => "✓",
            Tone::Info => "○",
        }
    }
}

/// One thing that happened to an object, at a simulated time.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub t: Millis,
    /// One or two words: `deleted`, `NodeNotReady`, `scheduled → node-3`, `Ready`.
    pub label: String,
    /// Who did it and in whose words (`node-controller: Node is not ready`).
    pub detail: String,
    pub tone: Tone,
}

/// Whether a row's object was there before the fault or was made in answer to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Existed before and was harmed.
    Affected,
    /// Created by the control plane in answer (a replacement pod).
    Replacement,
}

/// One object on the timeline, with what happened to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub object: ObjectKey,
    pub role: Role,
    /// Context: its owner (`ReplicaSet web-7d9f8`), or who created it for whom.
    pub note: String,
    /// Oldest first.
    pub marks: Vec<Mark>,
    /// Marks not kept past [`MAX_MARKS`].
    pub more_marks: usize,
    /// Readiness as last replayed (None until seen).
    ready: Option<bool>,
    /// The object was removed from the API.
    gone: bool,
    /// When the row was made: changes replayed from before it are not its story.
    since: Millis,
    /// Its owner's goal was added.
    has_goal: bool,
}

/// What kind of object a goal watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalKind {
    /// Ready = available = updated = `spec.replicas`, no extra pods, newest generation observed.
    Deployment,
    /// A ReplicaSet with no Deployment: ready = `spec.replicas`.
    ReplicaSet,
    /// A pod no controller owns: it can only come back Ready in place.
    BarePod,
    /// Ready=True.
    Node,
}

/// Where a goal stands.
#[derive(Clone, Debug, PartialEq)]
pub enum GoalState {
    /// Not seen broken since the fault.
    Waiting,
    /// Broken since then.
    Broken { since: Millis },
    /// Whole again at this time (after having been broken).
    Met { at: Millis },
    /// The fault passed without ever breaking it.
    NoGap,
    /// It can never come back (a deleted bare pod, a deleted Deployment).
    Lost { at: Millis, why: String },
}

/// One object the fault put at risk and whether it is whole again.
#[derive(Clone, Debug, PartialEq)]
pub struct Goal {
    pub object: ObjectKey,
    pub kind: GoalKind,
    pub state: GoalState,
    /// The goal in words, as last seen (`2/3 ready, 2 available`, `Ready=Unknown`).
    pub words: String,
    /// The words at its lowest since the fault (`1/3 ready, 1 available`), empty if it never broke.
    pub worst_words: String,
    /// The lowest health seen (ready replicas; 1/0 for a pod or node), with `worst_words`.
    worst: Option<i64>,
    /// Only changes from this time on count.
    from: Millis,
    /// When the state last changed (for settling).
    changed: Millis,
}

impl Goal {
    fn settled(&self) -> bool {
        matches!(
            self.state,
            GoalState::Met { .. } | GoalState::NoGap | GoalState::Lost { .. }
        )
    }

    /// Applies one observed state of the object at time `t`.
    fn see(&mut self, t: Millis, j: Judged) {
        let Judged { met, words, health } = j;
        if t < self.from || matches!(self.state, GoalState::Lost { .. }) {
            return;
        }
        if !met && self.worst.is_none_or(|w| health < w) {
            self.worst = Some(health);
            self.worst_words = words.clone();
        }
        let next = match (&self.state, met) {
            (GoalState::Waiting | GoalState::NoGap | GoalState::Met { .. }, false) => {
                Some(GoalState::Broken { since: t })
            }
            (GoalState::Broken { .. }, true) => Some(GoalState::Met { at: t }),
            _ => None,
        };
        self.words = words;
        if let Some(s) = next {
            self.state = s;
            self.changed = t;
        }
    }

    fn lose(&mut self, t: Millis, why: String) {
        if !matches!(self.state, GoalState::Lost { .. }) {
            self.state = GoalState::Lost { at: t, why };
            self.changed = t;
        }
    }

    /// `deployment/web`, `node/node-2`, `pod/debug`, as kubectl names them.
    pub fn name(&self) -> String {
        kubectl_ref(&self.object)
    }
}

/// A control-plane pass the fault set off that asked for something (`replicaset-controller: 1
/// missing → create 1`).
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub t: Millis,
    pub component: String,
    pub words: String,
}

/// The verdict on one incident.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The fault was refused: nothing happened.
    Refused(String),
    /// Still open: the reason in words.
    Recovering(String),
    /// Every goal whole again; `after` is measured from the fault.
    Recovered { at: Millis, after: Millis },
    /// Cannot heal by itself, and why.
    NotRecovered(String),
    /// Nothing the control plane keeps broke.
    NoImpact(String),
}

impl Verdict {
    /// The headline, a few words: `recovered after 1.0s`, `not recovered`.
    pub fn headline(&self) -> String {
        match self {
            Verdict::Refused(_) => "refused".into(),
            Verdict::Recovering(_) => "recovering".into(),
            Verdict::Recovered { after, .. } => format!("recovered after {}", span_words(*after)),
            Verdict::NotRecovered(_) => "not recovered".into(),
            Verdict::NoImpact(_) => "no gap opened".into(),
        }
    }

    /// Why, in a sentence, when there is more to say than the headline.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Recovered { .. } => None,
            Verdict::Refused(why)
            | Verdict::Recovering(why)
            | Verdict::NotRecovered(why)
            | Verdict::NoImpact(why) => Some(why),
        }
    }

    /// A one-word class for styling and tests.
    pub fn class(&self) -> &'static str {
        match self {
            Verdict::Refused(_) => "refused",
            Verdict::Recovering(_) => "recovering",
            Verdict::Recovered { .. } => "recovered",
            Verdict::NotRecovered(_) => "not-recovered",
            Verdict::NoImpact(_) => "no-impact",
        }
    }
}

/// How long the fault keeps acting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lasting {
    /// It acts once (a deletion, a crash, an edit).
    Once,
    /// Until it heals by itself at this time.
    Until(Millis),
    /// Until another fault undoes it (NodeUp, HealNode, StartComponent, FixImage), or forever.
    UntilRepaired,
}

/// One fault and its consequences.
#[derive(Clone, Debug, PartialEq)]
pub struct Incident {
    /// The fault's trace entry (a stable id).
    pub seq: u64,
    pub t: Millis,
    /// The fault's type (`DeletePod`).
    pub fault: String,
    /// What it was aimed at (`pod web-7d9f8-x2k4f`, `node node-2`, `pods app=web`).
    pub target: String,
    /// What the simulation said it did.
    pub outcome: String,
    pub refused: bool,
    pub rows: Vec<Row>,
    /// Rows not kept past [`MAX_ROWS`].
    pub more_rows: usize,
    pub goals: Vec<Goal>,
    pub responses: Vec<Response>,
    pub more_responses: usize,
    /// When a fault with a duration healed itself.
    pub healed: Option<Millis>,
    /// When another fault undid it, and which (`NodeUp`).
    pub repaired: Option<(Millis, String)>,
    /// For node faults: when the node controller noticed (the adopted root).
    pub noticed: Option<Millis>,
    /// Consequences were linked by the node's name, not by a cause link (node faults).
    pub linked_by_name: bool,
    /// Watch events the fault made a component lose.
    pub dropped: usize,
    /// Informer relists it set off.
    pub relists: usize,
    /// 409 Conflicts it set off.
    pub conflicts: usize,
    /// Trace entries followed.
    pub effects: usize,
    /// Still reading the trace for consequences.
    pub following: bool,
    /// The last time the family grew.
    last_activity: Millis,
    /// A node whose node-controller passes count as this fault's consequences.
    adopt_node: Option<String>,
    lasting: Lasting,
    parsed: Option<Fault>,
}

impl Incident {
    fn new(e: &TraceEntry, name: &str, description: &str) -> Incident {
        let (json, outcome) = description.split_once(" — ").unwrap_or((description, ""));
        let parsed: Option<Fault> = serde_json::from_str(json).ok();
        let refused = outcome.starts_with("refused: ");
        let outcome = outcome.strip_prefix("refused: ").unwrap_or(outcome);
        let lasting = parsed.as_ref().map_or(Lasting::Once, |f| lasting(f, e.t));
        let adopt_node = match &parsed {
            Some(Fault::NodeDown { node } | Fault::PartitionNode { node }) if !refused => {
                Some(node.clone())
            }
            _ => None,
        };
        Incident {
            seq: e.seq,
            t: e.t,
            fault: name.to_string(),
            target: parsed.as_ref().map(target_words).unwrap_or_default(),
            outcome: outcome.to_string(),
            refused,
            rows: Vec::new(),
            more_rows: 0,
            goals: Vec::new(),
            responses: Vec::new(),
            more_responses: 0,
            healed: None,
            repaired: None,
            noticed: None,
            linked_by_name: false,
            dropped: 0,
            relists: 0,
            conflicts: 0,
            effects: 0,
            following: !refused,
            last_activity: e.t,
            adopt_node,
            lasting,
            parsed,
        }
    }

    /// True while the fault itself still acts (before its heal or repair).
    pub fn fault_active(&self, now: Millis) -> bool {
        match self.lasting {
            Lasting::Once => false,
            Lasting::Until(end) => self.healed.is_none() && now < end,
            Lasting::UntilRepaired => self.repaired.is_none(),
        }
    }

    /// The verdict now.
    pub fn verdict(&self, now: Millis) -> Verdict {
        if self.refused {
            return Verdict::Refused(self.outcome.clone());
        }
        if let Some(g) = self
            .goals
            .iter()
            .find(|g| matches!(g.state, GoalState::Lost { .. }))
        {
            if let GoalState::Lost { why, .. } = &g.state {
                return Verdict::NotRecovered(why.clone());
            }
        }
        if let Some(g) = self
            .goals
            .iter()
            .find(|g| matches!(g.state, GoalState::Broken { .. }))
        {
            let what = format!("{} {}", g.name(), g.words);
            if let Some(why) = self.booting_words(g, now) {
                return Verdict::Recovering(format!("{what}: {why}"));
            }
            return match (self.fault_active(now), self.persistent_words(g)) {
                (true, Some(why)) => Verdict::NotRecovered(format!("{what}: {why}")),
                _ => Verdict::Recovering(what),
            };
        }
        if let Some(g) = self.goals.iter().find(|g| g.state == GoalState::Waiting) {
            let why = match (g.kind, &self.parsed) {
                (GoalKind::Node, Some(Fault::NodeDown { .. } | Fault::PartitionNode { .. })) => {
                    format!(
                        "{} still reports Ready: nothing tells the control plane a machine \
                         died; the node controller notices only when heartbeats stop for its \
                         grace period",
                        g.name()
                    )
                }
                _ if self.fault_active(now) => self
                    .booting_words(g, now)
                    .unwrap_or_else(|| "the fault is still acting".to_string()),
                _ => format!("no gap on {} yet", g.name()),
            };
            return Verdict::Recovering(why);
        }
        if self.goals.is_empty() {
            if self.following && self.fault_active(now) {
                return Verdict::Recovering("the fault is still acting".into());
            }
            if self.following {
                return Verdict::Recovering("following what it set off".into());
            }
            return Verdict::NoImpact(self.no_goal_words());
        }
        if let Lasting::Until(end) = self.lasting {
            if self.healed.is_none() && now < end {
                // Whole for the moment, but the fault still acts: a crash loop between crashes.
                return Verdict::Recovering(format!(
                    "the fault acts until {}",
                    crate::sim::time::clock(end)
                ));
            }
        }
        let recovered = self
            .goals
            .iter()
            .filter_map(|g| match g.state {
                GoalState::Met { at } => Some(at),
                _ => None,
            })
            .max();
        match recovered {
            Some(at) => Verdict::Recovered {
                at,
                after: at.saturating_sub(self.t),
            },
            None => {
                Verdict::NoImpact("everything it touched stayed at its desired state".to_string())
            }
        }
    }

    /// Where a node powered on by NodeUp is on its way to Ready: booting, or its kubelet started.
    fn booting_words(&self, g: &Goal, now: Millis) -> Option<String> {
        let Some(Fault::NodeUp { .. }) = &self.parsed else {
            return None;
        };
        if g.kind != GoalKind::Node {
            return None;
        }
        let started = self.t.saturating_add(MACHINE_BOOT_MS);
        Some(if now < started {
            format!(
                "the machine is booting; its kubelet starts at {} and then reports the node Ready",
                crate::sim::time::clock(started)
            )
        } else {
            format!(
                "its kubelet started at {}; the node is Ready at its first status update",
                crate::sim::time::clock(started)
            )
        })
    }

    /// Why a broken goal cannot heal while this fault lasts, when that is so.
    fn persistent_words(&self, g: &Goal) -> Option<String> {
        let f = self.parsed.as_ref()?;
        Some(match (f, g.kind) {
            (Fault::NodeDown { node }, GoalKind::Node) => format!(
                "its machine is down. The control plane marks it NotReady and moves its pods \
                 away, but only booting the machine (NodeUp {node}) makes it Ready again"
            ),
            (Fault::PartitionNode { node }, GoalKind::Node) => format!(
                "its kubelet cannot reach the API server; healing the partition (HealNode \
                 {node}) brings its heartbeats back"
            ),
            (Fault::StopComponent { component }, _) => format!(
                "{component} is stopped, and a stopped loop repairs nothing (StartComponent \
                 brings it back)"
            ),
            (Fault::BreakImage { image }, _) => format!(
                "the registry does not serve {image}: the kubelet retries with back-off, but \
                 only FixImage (or another image) ends it"
            ),
            (
                Fault::CrashLoop { duration: None, .. }
                | Fault::FailReadiness { duration: None, .. }
                | Fault::FailLiveness { duration: None, .. },
                _,
            ) => "the fault has no end: the kubelet restarts the container with back-off, \
                  but nothing replaces a pod whose own container keeps failing"
                .to_string(),
            _ => return None,
        })
    }

    /// The verdict's words for a fault that put nothing at risk.
    fn no_goal_words(&self) -> String {
        match &self.parsed {
            Some(Fault::BreakImage { image }) => format!(
                "running containers keep running; only new pulls of {image} fail, and the trace \
                 links those to the pulls, not to this fault"
            ),
            Some(Fault::NodeUp { .. } | Fault::HealNode { .. }) => {
                "a repair: its effects are listed here, the healing on the fault it undid".into()
            }
            _ if self.effects == 0 => "the trace links nothing to this fault".into(),
            _ => "no pod or node it touched was harmed".into(),
        }
    }

    /// The time span to draw: from the fault to a little past its last mark, recovery or `now`
    /// while it is still open.
    pub fn span(&self, now: Millis) -> (Millis, Millis) {
        let mut end = self.t + 1_000;
        for r in &self.rows {
            if let Some(m) = r.marks.last() {
                end = end.max(m.t);
            }
        }
        for g in &self.goals {
            match g.state {
                GoalState::Met { at } => end = end.max(at),
                GoalState::Lost { at, .. } => end = end.max(at),
                GoalState::Broken { .. } | GoalState::Waiting => end = end.max(now),
                GoalState::NoGap => {}
            }
        }
        if let Some(h) = self.healed {
            end = end.max(h);
        }
        if let Some((r, _)) = &self.repaired {
            end = end.max(*r);
        }
        if matches!(self.verdict(now), Verdict::Recovering(_)) {
            end = end.max(now);
        }
        let end = end.min(now.max(self.t + 1));
        let len = end.saturating_sub(self.t).max(1_000);
        (self.t, self.t + len + len / 12)
    }

    /// The pods and nodes harmed, in the order they were hit.
    pub fn affected(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.role == Role::Affected)
    }

    /// The pods made in answer.
    pub fn replacements(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.role == Role::Replacement)
    }

    fn row_index(&self, key: &ObjectKey) -> Option<usize> {
        self.rows.iter().position(|r| &r.object == key)
    }

    fn goal_index(&self, key: &ObjectKey) -> Option<usize> {
        self.goals.iter().position(|g| &g.object == key)
    }
}

/// Everything [`Incident`]s need to read while they ingest: the simulation and, fetched at most
/// once per observation, the API changes since the last one.
struct Ctx<'a> {
    sim: &'a Sim,
    /// The API server's resourceVersion at the previous observation (0: never observed).
    since_rv: u64,
    changes: Option<Vec<WatchEvent>>,
    /// The changes could not be read (history compacted): use the live state.
    compacted: bool,
}

impl Ctx<'_> {
    fn changes(&mut self) -> &[WatchEvent] {
        if self.changes.is_none() {
            let evs = if self.since_rv == 0 {
                Err(())
            } else {
                self.sim.api().events_since(self.since_rv).map_err(|_| ())
            };
            self.compacted = evs.is_err();
            self.changes = Some(evs.unwrap_or_default());
        }
        self.changes.as_deref().unwrap_or(&[])
    }

    /// The object as it is, or as it was when it was deleted since the last observation.
    fn lookup(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        if let Some(o) = self.sim.api().get(key) {
            return Some(o.clone());
        }
        self.changes()
            .iter()
            .rev()
            .find(|e| &e.object.key() == key)
            .map(|e| e.object.clone())
    }

    /// The object's state at the previous observation, when it has not changed since.
    fn unchanged(&self, key: &ObjectKey) -> Option<Rc<Object>> {
        let o = self.sim.api().get(key)?;
        let rv: u64 = o.meta().resource_version.parse().ok()?;
        (self.since_rv > 0 && rv <= self.since_rv).then(|| o.clone())
    }
}

/// The timeline of every fault in the run, newest last.
#[derive(Clone, Debug, Default)]
pub struct FaultTimeline {
    incidents: VecDeque<Incident>,
    /// The trace entries each followed incident set off, by its fault's entry. Kept apart from
    /// the incidents (which views clone) and dropped once an incident stops following.
    families: VecMap<u64, BTreeSet<u64>>,
    /// The last trace entry read.
    after: u64,
    /// The API server's resourceVersion at the last observation.
    api_rv: u64,
    last_now: Millis,
    /// Bumped on every change, so views can skip re-rendering.
    pub version: u64,
}

impl FaultTimeline {
    /// Forgets everything (a reset, a newly loaded scenario).
    pub fn clear(&mut self) {
        let version = self.version + 1;
        *self = FaultTimeline {
            version,
            ..FaultTimeline::default()
        };
    }

    /// The incidents, oldest first.
    pub fn incidents(&self) -> impl DoubleEndedIterator<Item = &Incident> + ExactSizeIterator {
        self.incidents.iter()
    }

    /// One incident by its fault's trace entry.
    pub fn get(&self, seq: u64) -> Option<&Incident> {
        self.incidents.iter().find(|i| i.seq == seq)
    }

    /// Reads what happened since the last call: new faults, their consequences, and the API
    /// changes that decide their goals. Cheap when nothing is being followed.
    pub fn observe(&mut self, sim: &Sim) {
        let trace = sim.trace();
        let now = sim.now();
        if trace.next_seq() <= self.after || now < self.last_now {
            // A different session (reset, a loaded scenario): start over.
            self.clear();
        }
        self.last_now = now;
        let mut ctx = Ctx {
            sim,
            since_rv: self.api_rv,
            changes: None,
            compacted: false,
        };
        let mut changed = false;
        // Only a fault line, or a line set off by an incident still followed, does anything here:
        // most advances have neither, and the walk over their lines was 1% of the page's model.
        let quiet =
            trace.newest_fault() <= self.after && !self.incidents.iter().any(|i| i.following);
        if !quiet {
            for e in trace.since(self.after) {
                if let TraceKind::Fault { fault, description } = &e.kind {
                    if e.cause().is_none() {
                        changed = true;
                        self.start(e, fault, description, &mut ctx);
                        continue;
                    }
                }
                for inc in self.incidents.iter_mut() {
                    if inc.following {
                        let family = self
                            .families
                            .entry(inc.seq)
                            .or_insert_with(|| std::iter::once(inc.seq).collect_set());
                        changed |= ingest(inc, family, e, &mut ctx);
                    } else if e.cause() == Some(inc.seq) {
                        // A heal after the incident settled still closes it.
                        if let TraceKind::Fault { .. } = e.kind {
                            inc.healed = Some(e.t);
                            changed = true;
                        }
                    }
                }
            }
        }
        self.after = trace.next_seq().saturating_sub(1);

        let open = self
            .incidents
            .iter()
            .any(|i| i.following || i.goals.iter().any(|g| !g.settled()));
        if open {
            changed |= self.replay(&mut ctx, now);
        }
        for inc in self.incidents.iter_mut() {
            changed |= settle(inc, now);
        }
        let incidents = &self.incidents;
        self.families
            .retain(|seq, _| incidents.iter().any(|i| i.seq == *seq && i.following));
        self.api_rv = sim.api().resource_version();
        if changed {
            self.version += 1;
        }
    }

    /// A new fault entry: a new incident, and a repair closes the incident it undoes.
    fn start(&mut self, e: &TraceEntry, name: &str, description: &str, ctx: &mut Ctx) {
        let mut inc = Incident::new(e, name, description);
        if !inc.refused {
            if let Some(f) = inc.parsed.clone() {
                for other in self.incidents.iter_mut() {
                    if other.repaired.is_none() && repairs(&f, other.parsed.as_ref()) {
                        other.repaired = Some((e.t, name.to_string()));
                        other.adopt_node = None;
                    }
                }
                first_marks(&mut inc, &f, ctx);
            }
        }
        self.incidents.push_back(inc);
        while self.incidents.len() > MAX_INCIDENTS {
            self.incidents.pop_front();
        }
    }

    /// Replays the API changes since the last observation into every open goal and row.
    fn replay(&mut self, ctx: &mut Ctx, now: Millis) -> bool {
        let mut changed = false;
        let changes: Vec<WatchEvent> = ctx.changes().to_vec();
        if ctx.compacted {
            // No history to replay (first observation, or a jump past the watch window): judge
            // on the live objects, at the current time.
            for inc in self.incidents.iter_mut() {
                for g in inc.goals.iter_mut().filter(|g| !g.settled()) {
                    let before = g.state.clone();
                    match ctx.sim.api().get(&g.object).and_then(|o| judge(o)) {
                        Some(j) => g.see(now, j),
                        None => g.lose(now, gone_words(g)),
                    }
                    changed |= before != g.state;
                }
            }
            return changed;
        }
        let sim = ctx.sim;
        let trace = sim.trace();
        for ev in &changes {
            let key = ev.object.key();
            if !matches!(
                key.kind,
                Kind::Pod | Kind::Node | Kind::Deployment | Kind::ReplicaSet
            ) {
                continue;
            }
            let t = trace.get(ev.cause).map_or(now, |c| c.t);
            for inc in self.incidents.iter_mut() {
                if let Some(gi) = inc.goal_index(&key) {
                    let g = &mut inc.goals[gi];
                    if !g.settled() || inc.following {
                        let before = g.state.clone();
                        if ev.type_ == WatchEventType::Deleted {
                            if t >= g.from {
                                g.lose(t, gone_words(g));
                            }
                        } else if let Some(j) = judge(&ev.object) {
                            g.see(t, j);
                        }
                        changed |= before != g.state;
                    }
                }
                if inc.following {
                    if let Some(ri) = inc.row_index(&key) {
                        changed |= replay_row(&mut inc.rows[ri], ev, t);
                    }
                }
            }
        }
        changed
    }
}

/// Whether fault `f` undoes fault `other`.
fn repairs(f: &Fault, other: Option<&Fault>) -> bool {
    match (f, other) {
        (Fault::NodeUp { node: a }, Some(Fault::NodeDown { node: b }))
        | (Fault::HealNode { node: a }, Some(Fault::PartitionNode { node: b })) => a == b,
        (Fault::StartComponent { component: a }, Some(Fault::StopComponent { component: b })) => {
            a == b
        }
        (Fault::FixImage { image: a }, Some(Fault::BreakImage { image: b })) => a == b,
        _ => false,
    }
}

fn lasting(f: &Fault, t: Millis) -> Lasting {
    let until = |d: &Option<Millis>| match d {
        Some(d) => Lasting::Until(t.saturating_add(*d)),
        None => Lasting::UntilRepaired,
    };
    match f {
        Fault::CrashLoop { duration, .. }
        | Fault::FailReadiness { duration, .. }
        | Fault::FailLiveness { duration, .. } => until(duration),
        Fault::DropWatchEvents {
            duration: Some(d), ..
        }
        | Fault::DelayWatchEvents {
            duration: Some(d), ..
        }
        | Fault::ConflictingWriter {
            duration: Some(d), ..
        } => Lasting::Until(t.saturating_add(*d)),
        Fault::NodeDown { .. }
        | Fault::PartitionNode { .. }
        | Fault::StopComponent { .. }
        | Fault::BreakImage { .. } => Lasting::UntilRepaired,
        // The machine boots before its kubelet can act.
        Fault::NodeUp { .. } => Lasting::Until(t.saturating_add(MACHINE_BOOT_MS)),
        _ => Lasting::Once,
    }
}

fn pods_words(t: &PodTarget) -> String {
    let ns = if t.namespace == "default" {
        String::new()
    } else {
        format!(" in {}", t.namespace)
    };
    match (&t.pod, &t.selector) {
        (Some(p), _) => format!("pod {p}{ns}"),
        (None, Some(s)) => format!("pods {s}{ns}"),
        (None, None) => format!("pods{ns}"),
    }
}

/// What a fault was aimed at, in a few words.
pub fn target_words(f: &Fault) -> String {
    match f {
        Fault::DeletePod { target }
        | Fault::CrashContainer { target, .. }
        | Fault::CrashLoop { target, .. }
        | Fault::OomKill { target }
        | Fault::FailReadiness { target, .. }
        | Fault::FailLiveness { target, .. } => pods_words(target),
        Fault::BreakImage { image } | Fault::FixImage { image } => format!("image {image}"),
        Fault::NodeDown { node }
        | Fault::NodeUp { node }
        | Fault::PartitionNode { node }
        | Fault::HealNode { node } => format!("node {node}"),
        Fault::DropWatchEvents { component, .. }
        | Fault::DelayWatchEvents { component, .. }
        | Fault::RestartController { component }
        | Fault::StopComponent { component }
        | Fault::StartComponent { component }
        | Fault::SetTriggerMode { component, .. }
        | Fault::SetResync { component, .. }
        | Fault::CrashMidReconcile { component, .. } => component.clone(),
        Fault::ConflictingWriter { object, .. } | Fault::EditObject { object, .. } => {
            object.clone()
        }
        Fault::SetOperatorBug { .. } => "postgres-operator".into(),
        Fault::FailJobPods { job, namespace, .. } => format!("job {namespace}/{job}"),
        Fault::DetachVolume { claim, namespace } => format!("pvc {namespace}/{claim}"),
        Fault::FailVolumeProvisioning { storage_class, .. }
        | Fault::FailVolumeExpansion { storage_class, .. } => {
            if storage_class.is_empty() {
                "storage".into()
            } else {
                format!("storageclass {storage_class}")
            }
        }
    }
}

/// The marks a fault makes by itself, at its own time: the node it downed, the object it edited.
fn first_marks(inc: &mut Incident, f: &Fault, ctx: &mut Ctx) {
    let t = inc.t;
    match f {
        Fault::NodeDown { node } | Fault::PartitionNode { node } => {
            let key = ObjectKey::new(Kind::Node, "", node);
            let (label, detail) = if matches!(f, Fault::NodeDown { .. }) {
                (
                    "machine down",
                    "the machine died: its kubelet and containers are gone",
                )
            } else {
                (
                    "cut off",
                    "the kubelet cannot reach the API server; its containers run on",
                )
            };
            mark(
                inc,
                &key,
                Role::Affected,
                t,
                label,
                detail.into(),
                Tone::Harm,
                ctx,
            );
            add_goal(inc, key, GoalKind::Node, t, ctx);
        }
        Fault::NodeUp { node } => {
            // The repair's goal is the node Ready again: the incident stays open while the
            // machine boots and its kubelet starts, and closes with the status write that
            // makes the node Ready.
            let key = ObjectKey::new(Kind::Node, "", node);
            mark(
                inc,
                &key,
                Role::Affected,
                t,
                "powered on",
                format!(
                    "the machine boots; its kubelet starts {} later",
                    span_words(MACHINE_BOOT_MS)
                ),
                Tone::Act,
                ctx,
            );
            add_goal(inc, key.clone(), GoalKind::Node, t, ctx);
            // Nothing writes a booting node's status, so its state now is its state at `t`
            // even when it changed since the last observation.
            let Some(j) = ctx.lookup(&key).and_then(|o| judge(&o)) else {
                return;
            };
            if let Some(ri) = inc.row_index(&key) {
                inc.rows[ri].ready = Some(j.met);
            }
            if let Some(g) = inc.goals.iter_mut().find(|g| g.object == key) {
                if g.state == GoalState::Waiting {
                    g.see(t, j);
                }
            }
        }
        Fault::EditObject { object, .. } => {
            if let Some(key) = parse_object(object) {
                if matches!(key.kind, Kind::Deployment | Kind::ReplicaSet) {
                    let kind = if key.kind == Kind::Deployment {
                        GoalKind::Deployment
                    } else {
                        GoalKind::ReplicaSet
                    };
                    add_goal(inc, key, kind, t, ctx);
                }
            }
        }
        _ => {}
    }
}

/// `Kind/namespace/name` (or `Kind/name`) back to a key.
pub fn parse_object(s: &str) -> Option<ObjectKey> {
    let (kind, rest) = s.split_once('/')?;
    let kind = Kind::from_kind_str(kind)?;
    if kind.namespaced() {
        let (ns, name) = rest.split_once('/')?;
        Some(ObjectKey::new(kind, ns, name))
    } else {
        Some(ObjectKey::new(kind, "", rest))
    }
}

/// `deployment/web`, as kubectl names an object.
pub fn kubectl_ref(key: &ObjectKey) -> String {
    format!("{}/{}", key.kind.as_str().to_ascii_lowercase(), key.name)
}

/// An object's state against its goal.
struct Judged {
    met: bool,
    words: String,
    /// Higher is healthier (ready replicas; 1 or 0 for a pod or node), to keep the worst.
    health: i64,
}

/// Whether an object is at its goal, and its state in a few words.
fn judge(o: &Object) -> Option<Judged> {
    let j = |met: bool, words: String, health: i64| Some(Judged { met, words, health });
    match o {
        Object::Deployment(d) => {
            let want = d.spec.replicas.unwrap_or(1);
            let s = &d.status;
            let met = s.observed_generation >= d.metadata.generation
                && s.replicas == want
                && s.updated_replicas == want
                && s.ready_replicas == want
                && s.available_replicas == want;
            let words = format!(
                "{}/{want} ready, {} available",
                s.ready_replicas, s.available_replicas
            );
            j(
                met,
                words,
                s.ready_replicas.min(s.available_replicas).into(),
            )
        }
        Object::ReplicaSet(r) => {
            let want = r.spec.replicas.unwrap_or(1);
            let s = &r.status;
            let met = s.observed_generation >= r.metadata.generation
                && s.replicas == want
                && s.ready_replicas == want;
            j(
                met,
                format!("{}/{want} ready", s.ready_replicas),
                s.ready_replicas.into(),
            )
        }
        Object::Pod(p) => {
            let ready = p.is_ready() && p.metadata.deletion_timestamp.is_none();
            let words = if ready { "Ready" } else { "not Ready" };
            j(ready, words.to_string(), ready.into())
        }
        Object::Node(n) => {
            let s = n.ready_status();
            j(s == "True", format!("Ready={s}"), (s == "True").into())
        }
        _ => None,
    }
}

fn gone_words(g: &Goal) -> String {
    match g.kind {
        GoalKind::BarePod => bare_pod_words(&g.object.name),
        _ => format!("{} was deleted", g.name()),
    }
}

fn bare_pod_words(pod: &str) -> String {
    format!(
        "pod {pod} had no controller (no ownerReference), so nothing watches it and nothing \
         recreated it. The loop heals only what it watches: run pods from a Deployment"
    )
}

/// Readiness of a pod or node row, for its ✓ / not-Ready marks.
fn row_ready(o: &Object) -> Option<bool> {
    match o {
        Object::Pod(p) => Some(p.is_ready() && p.metadata.deletion_timestamp.is_none()),
        Object::Node(n) => Some(n.ready_status() == "True"),
        _ => None,
    }
}

fn replay_row(row: &mut Row, ev: &WatchEvent, t: Millis) -> bool {
    if t < row.since || row.gone {
        return false;
    }
    if ev.type_ == WatchEventType::Deleted {
        row.gone = true;
        if !row.marks.iter().any(|m| m.label == "removed") {
            push_mark(
                row,
                Mark {
                    t,
                    label: "removed".into(),
                    detail: "the object is gone from the API server".into(),
                    tone: Tone::Info,
                },
            );
        }
        return true;
    }
    let Some(ready) = row_ready(&ev.object) else {
        return false;
    };
    let before = row.ready.replace(ready);
    if before.is_some_and(|b| b != ready) {
        let (label, tone) = match (ready, ev.object.kind()) {
            (true, Kind::Node) => ("Ready", Tone::Ok),
            (false, Kind::Node) => ("NotReady", Tone::Harm),
            (true, _) => ("Ready", Tone::Ok),
            (false, _) => ("not Ready", Tone::Warn),
        };
        push_mark(
            row,
            Mark {
                t,
                label: label.into(),
                detail: format!("status written at resourceVersion {}", ev.resource_version),
                tone,
            },
        );
        return true;
    }
    false
}

fn push_mark(row: &mut Row, m: Mark) {
    if row.marks.len() >= MAX_MARKS {
        row.more_marks += 1;
        return;
    }
    // Marks arrive in trace order, replayed changes in API order: keep them sorted by time.
    let at = row.marks.partition_point(|x| x.t <= m.t);
    row.marks.insert(at, m);
}

/// Adds a mark to the object's row, making the row (and its goal) when it is new.
#[allow(clippy::too_many_arguments)]
fn mark(
    inc: &mut Incident,
    key: &ObjectKey,
    role: Role,
    t: Millis,
    label: &str,
    detail: String,
    tone: Tone,
    ctx: &mut Ctx,
) -> bool {
    let idx = match inc.row_index(key) {
        Some(i) => i,
        None => {
            if inc.rows.len() >= MAX_ROWS {
                inc.more_rows += 1;
                return false;
            }
            let snapshot = ctx.lookup(key);
            let note = match role {
                Role::Replacement => String::new(),
                Role::Affected => snapshot.as_deref().map(owner_note).unwrap_or_default(),
            };
            let ready = match role {
                Role::Replacement => Some(false),
                Role::Affected => None,
            };
            inc.rows.push(Row {
                object: key.clone(),
                role,
                note,
                marks: Vec::new(),
                more_marks: 0,
                ready,
                gone: false,
                since: t,
                has_goal: false,
            });
            inc.rows.len() - 1
        }
    };
    // A pod the fault harmed, or one made in answer, puts its owner at risk; a pod that only
    // drew a warning (a lost watch event, a back-off) does not by itself.
    let at_risk = role == Role::Replacement || tone == Tone::Harm;
    if key.kind == Kind::Pod && at_risk && !inc.rows[idx].has_goal {
        inc.rows[idx].has_goal = true;
        if let Some(obj) = ctx.lookup(key) {
            if let Some((gk, kind)) = goal_for_pod(&obj, ctx) {
                add_goal(inc, gk, kind, t, ctx);
            }
        }
    }
    let row = &mut inc.rows[idx];
    // The same word again at the same moment says nothing new.
    if row.marks.iter().any(|m| m.t == t && m.label == label) {
        return false;
    }
    push_mark(
        row,
        Mark {
            t,
            label: label.to_string(),
            detail,
            tone,
        },
    );
    true
}

/// `owned by ReplicaSet web-7d9f8` or `no controller`.
fn owner_note(o: &Object) -> String {
    if o.kind() != Kind::Pod {
        return String::new();
    }
    match o.meta().controller_ref() {
        Some(r) => format!("owned by {} {}", r.kind, r.name),
        None => "no controller".into(),
    }
}

/// The goal a pod's health rolls up to: its ReplicaSet's Deployment, its ReplicaSet, or itself.
fn goal_for_pod(pod: &Object, ctx: &mut Ctx) -> Option<(ObjectKey, GoalKind)> {
    let meta = pod.meta();
    match meta.controller_ref() {
        Some(r) if r.kind == "ReplicaSet" => {
            let rs = ObjectKey::new(Kind::ReplicaSet, &meta.namespace, &r.name);
            let dep = ctx.lookup(&rs).and_then(|o| {
                o.meta()
                    .controller_ref()
                    .filter(|d| d.kind == "Deployment")
                    .map(|d| d.name.clone())
            });
            Some(match dep {
                Some(d) => (
                    ObjectKey::new(Kind::Deployment, &meta.namespace, &d),
                    GoalKind::Deployment,
                ),
                None => (rs, GoalKind::ReplicaSet),
            })
        }
        // Other controllers are not simulated; their pods heal as their owner decides.
        Some(_) => None,
        None => Some((pod.key(), GoalKind::BarePod)),
    }
}

fn add_goal(inc: &mut Incident, key: ObjectKey, kind: GoalKind, t: Millis, ctx: &mut Ctx) {
    if inc.goal_index(&key).is_some() {
        return;
    }
    let mut g = Goal {
        object: key,
        kind,
        state: GoalState::Waiting,
        words: String::new(),
        worst_words: String::new(),
        worst: None,
        from: t,
        changed: t,
    };
    // Unchanged since the last observation: its state now is its state at `t`.
    if let Some(j) = ctx.unchanged(&g.object).and_then(|o| judge(&o)) {
        g.see(t, j);
    }
    inc.goals.push(g);
}

/// The goal of a pod row, when it is a bare pod.
fn bare_goal<'a>(inc: &'a mut Incident, pod: &ObjectKey) -> Option<&'a mut Goal> {
    inc.goals
        .iter_mut()
        .find(|g| g.kind == GoalKind::BarePod && &g.object == pod)
}

/// The node a scheduler pass bound `pod` to, from the pass's own request list.
fn bound_node(trace: &Trace, cause: Option<u64>, pod: &str) -> Option<String> {
    let e = trace.get(cause?)?;
    let TraceKind::Reconcile(tr) = &e.kind else {
        return None;
    };
    let actions = &tr.actions;
    let prefix = format!("bind {pod} → ");
    actions
        .iter()
        .find_map(|a| a.strip_prefix(&prefix).map(str::to_string))
}

/// The object a reconcile pass that caused `cause` was about (`ReplicaSet/default/web-7d9f8`).
fn pass_key(trace: &Trace, cause: Option<u64>) -> Option<String> {
    match &trace.get(cause?)?.kind {
        TraceKind::Reconcile(tr) => Some(tr.key.clone()),
        _ => None,
    }
}

/// Event reasons the timeline leaves out because another mark says the same thing better (the
/// API request) or they are routine steps of a start.
const QUIET_REASONS: &[&str] = &[
    "Scheduled",
    "SuccessfulCreate",
    "SuccessfulDelete",
    "Pulled",
    "Pulling",
    "Created",
    "TaintManagerEviction",
    "RegisteredNode",
    "NodeReady",
    "Starting",
];

/// Reasons that mean harm to the object, drawn as ✕ even when Kubernetes files them as Normal.
const HARM_REASONS: &[&str] = &["NodeNotReady", "Killing", "OOMKilling", "Evicted"];

/// Reads one trace entry into an incident that is following its consequences. Returns true when
/// the incident changed.
fn ingest(inc: &mut Incident, family: &mut BTreeSet<u64>, e: &TraceEntry, ctx: &mut Ctx) -> bool {
    let linked = e.cause().is_some_and(|c| family.contains(&c));
    let adopted = !linked && e.t >= inc.t && adoptable(inc, e);
    if !linked && !adopted {
        return false;
    }
    if family.len() >= FAMILY_CAP || e.t > inc.t.saturating_add(FOLLOW_LIMIT_MS) {
        inc.following = false;
        return true;
    }
    family.insert(e.seq);
    inc.effects += 1;
    inc.last_activity = e.t;
    if adopted {
        inc.linked_by_name = true;
        inc.noticed.get_or_insert(e.t);
    }
    let sim = ctx.sim;
    let trace = sim.trace();
    match &e.kind {
        TraceKind::Api(tr) => {
            let ApiTrace {
                actor,
                verb,
                object,
                code,
                ..
            } = &**tr;
            if *code == 409 {
                inc.conflicts += 1;
            }
            if *code >= 300 {
                return true;
            }
            let Some(key) = parse_object(object) else {
                return true;
            };
            match (key.kind, *verb) {
                (Kind::Pod, "delete") if actor.starts_with("kubelet/") => {
                    if let Some(i) = inc.row_index(&key) {
                        inc.rows[i].gone = true;
                        mark(
                            inc,
                            &key,
                            Role::Affected,
                            e.t,
                            "removed",
                            format!(
                                "{actor} confirmed its containers stopped; the Pod object is gone"
                            ),
                            Tone::Info,
                            ctx,
                        );
                    }
                }
                (Kind::Pod, "delete" | "create/eviction") => {
                    let label = match (&**actor, *verb) {
                        ("taint-eviction-controller", _) | (_, "create/eviction") => "evicted",
                        _ => "deleted",
                    };
                    let who = match (&**actor, label) {
                        ("user", _) => "the fault sent DELETE: graceful deletion starts".into(),
                        (_, "evicted") => format!("{actor} evicted it"),
                        _ => format!("{actor} deleted it"),
                    };
                    mark(inc, &key, Role::Affected, e.t, label, who, Tone::Harm, ctx);
                    if let Some(g) = bare_goal(inc, &key) {
                        let why = bare_pod_words(&key.name);
                        g.lose(e.t, why);
                    }
                }
                (Kind::Pod, "create") => {
                    let owner = pass_key(trace, e.cause())
                        .and_then(|k| parse_object(&k))
                        .filter(|k| k.kind != Kind::Pod);
                    let note = match &owner {
                        Some(o) => format!("created by {actor} for {} {}", o.kind, o.name),
                        None => format!("created by {actor}"),
                    };
                    let detail = note.clone();
                    if mark(
                        inc,
                        &key,
                        Role::Replacement,
                        e.t,
                        "created",
                        detail,
                        Tone::Act,
                        ctx,
                    ) {
                        if let Some(i) = inc.row_index(&key) {
                            if inc.rows[i].note.is_empty() {
                                inc.rows[i].note = note;
                            }
                        }
                    }
                    // A pod made by a ReplicaSet of a Deployment rolls up to the Deployment,
                    // even when the pod itself is not readable any more.
                    if inc.goals.is_empty() {
                        if let Some(rs) = owner.filter(|o| o.kind == Kind::ReplicaSet) {
                            if let Some(obj) = ctx.lookup(&rs) {
                                let dep = obj
                                    .meta()
                                    .controller_ref()
                                    .filter(|d| d.kind == "Deployment")
                                    .map(|d| {
                                        ObjectKey::new(Kind::Deployment, &rs.namespace, &d.name)
                                    });
                                match dep {
                                    Some(d) => add_goal(inc, d, GoalKind::Deployment, e.t, ctx),
                                    None => add_goal(inc, rs, GoalKind::ReplicaSet, e.t, ctx),
                                }
                            }
                        }
                    }
                }
                (Kind::Pod, "create/binding") => {
                    let node = bound_node(trace, e.cause(), &key.name);
                    let label = match &node {
                        Some(n) => format!("scheduled → {n}"),
                        None => "scheduled".into(),
                    };
                    let role = inc
                        .row_index(&key)
                        .map_or(Role::Replacement, |i| inc.rows[i].role);
                    mark(
                        inc,
                        &key,
                        role,
                        e.t,
                        &label,
                        format!("{actor} bound it to a node"),
                        Tone::Act,
                        ctx,
                    );
                    if let (Some(n), Some(i)) = (node, inc.row_index(&key)) {
                        let r = &mut inc.rows[i];
                        if r.role == Role::Replacement && !r.note.contains(" · on ") {
                            r.note = format!("{} · on {n}", r.note);
                        }
                    }
                }
                (Kind::Node, "update") if &**actor == "node-controller" => {
                    let diff = match trace.get(e.cause().unwrap_or(0)).map(|c| &c.kind) {
                        Some(TraceKind::Reconcile(tr)) => {
                            tr.record.as_ref().map(|r| r.diff.clone())
                        }
                        _ => None,
                    }
                    .filter(|d| !d.is_empty())
                    .unwrap_or_else(|| "taints changed".into());
                    let label = if diff.starts_with('-') {
                        "untainted"
                    } else {
                        "tainted"
                    };
                    mark(
                        inc,
                        &key,
                        Role::Affected,
                        e.t,
                        label,
                        format!("node-controller: {diff}"),
                        Tone::Warn,
                        ctx,
                    );
                }
                _ => {}
            }
        }
        TraceKind::Event(tr) => {
            let EventTrace {
                event_type,
                reason,
                message,
                object,
                source,
            } = &**tr;
            let Some(key) = parse_object(object) else {
                return true;
            };
            if !matches!(key.kind, Kind::Pod | Kind::Node)
                || QUIET_REASONS.contains(&reason.as_str())
            {
                return true;
            }
            let warning = event_type == "Warning";
            let tone = if HARM_REASONS.contains(&reason.as_str()) {
                Tone::Harm
            } else if warning {
                Tone::Warn
            } else if reason == "Started" {
                Tone::Act
            } else {
                Tone::Info
            };
            let known = inc.row_index(&key).map(|i| inc.rows[i].role);
            // A Normal event about an object the fault never harmed is not its consequence.
            if known.is_none() && !(warning || tone == Tone::Harm) {
                return true;
            }
            let label = if reason == "Started" && known == Some(Role::Replacement) {
                "started".to_string()
            } else {
                reason.to_string()
            };
            mark(
                inc,
                &key,
                known.unwrap_or(Role::Affected),
                e.t,
                &label,
                format!("{source}: {message}"),
                tone,
                ctx,
            );
        }
        TraceKind::Watch {
            component,
            event_type,
            object,
            delivery: Delivery::Dropped,
            ..
        } => {
            inc.dropped += 1;
            if let Some(key) = parse_object(object).filter(|k| k.kind == Kind::Pod) {
                mark(
                    inc,
                    &key,
                    Role::Affected,
                    e.t,
                    &format!("{event_type} lost"),
                    format!("{component} never heard of this change"),
                    Tone::Warn,
                    ctx,
                );
            }
        }
        TraceKind::List {
            component, reason, ..
        } => {
            inc.relists += 1;
            respond(inc, e.t, component, format!("relisted ({reason})"));
        }
        TraceKind::Reconcile(tr) => {
            let ReconcileTrace {
                component,
                key,
                record,
                requests,
                actions,
                ..
            } = &**tr;
            // Passes that only wrote status are bookkeeping; the rest are the loop acting.
            let acts = actions
                .iter()
                .any(|a| !(a.starts_with("update ") && a.contains(" status")));
            if *requests > 0 && acts {
                let words = match record {
                    Some(r) if !r.diff.is_empty() => format!("{}: {}", short_key(key), r.diff),
                    _ => actions.first().cloned().unwrap_or_default(),
                };
                respond(inc, e.t, component, words);
            }
            // A container fault's first consequence: the kubelet's pass over the pod it hit.
            if e.cause() == Some(inc.seq) && component.starts_with("kubelet/") {
                if let (Some(pod), Some(label)) = (parse_object(key), container_label(inc)) {
                    let detail = record
                        .as_ref()
                        .map(|r| format!("{component}: {}", r.diff))
                        .unwrap_or_default();
                    mark(
                        inc,
                        &pod,
                        Role::Affected,
                        inc.t,
                        label,
                        detail,
                        Tone::Harm,
                        ctx,
                    );
                }
            }
        }
        TraceKind::Fault { description, .. } if description.starts_with("healed") => {
            inc.healed = Some(e.t);
        }
        TraceKind::Fault { description, .. } if description.starts_with("booted") => {
            if let Some(Fault::NodeUp { node }) = inc.parsed.clone() {
                let key = ObjectKey::new(Kind::Node, "", &node);
                let detail = "the machine finished booting: its kubelet starts".to_string();
                mark(
                    inc,
                    &key,
                    Role::Affected,
                    e.t,
                    "booted",
                    detail,
                    Tone::Act,
                    ctx,
                );
            }
        }
        _ => {}
    }
    true
}

/// The mark a container fault leaves on the pod it hit.
fn container_label(inc: &Incident) -> Option<&'static str> {
    Some(match inc.parsed.as_ref()? {
        Fault::CrashContainer { .. } => "crashed",
        Fault::CrashLoop { .. } => "crash loop",
        Fault::OomKill { .. } => "OOMKilled",
        Fault::FailReadiness { .. } => "readiness failing",
        Fault::FailLiveness { .. } => "liveness failing",
        _ => return None,
    })
}

/// `rs/web-7d9f8` from `ReplicaSet/default/web-7d9f8`.
fn short_key(key: &str) -> String {
    super::format::short_object(key)
}

/// A node fault's consequences have no cause link (a dead machine tells nobody): the node
/// controller's passes over the node that change something are its consequences.
fn adoptable(inc: &Incident, e: &TraceEntry) -> bool {
    let Some(node) = &inc.adopt_node else {
        return false;
    };
    match &e.kind {
        TraceKind::Reconcile(tr) => {
            let ReconcileTrace {
                component,
                key,
                requests,
                ..
            } = &**tr;
            &**component == "node-controller"
                && *requests > 0
                && key.strip_prefix("Node/") == Some(node.as_str())
        }
        _ => false,
    }
}

fn respond(inc: &mut Incident, t: Millis, component: &str, words: String) {
    if inc
        .responses
        .iter()
        .any(|r| r.component == component && r.words == words)
    {
        return;
    }
    if inc.responses.len() >= MAX_RESPONSES {
        inc.more_responses += 1;
        return;
    }
    inc.responses.push(Response {
        t,
        component: component.to_string(),
        words,
    });
}

/// Ends what is over: goals that never broke once the incident went quiet, and following once
/// every goal is settled. Returns true when anything changed.
fn settle(inc: &mut Incident, now: Millis) -> bool {
    if !inc.following {
        return false;
    }
    let active = inc.fault_active(now) || inc.adopt_node.is_some();
    let last_change = inc
        .goals
        .iter()
        .map(|g| g.changed)
        .max()
        .unwrap_or(inc.t)
        .max(inc.last_activity);
    let quiet = now.saturating_sub(last_change) >= QUIET_MS;
    let mut changed = false;
    if quiet && !active {
        for g in inc
            .goals
            .iter_mut()
            .filter(|g| g.state == GoalState::Waiting)
        {
            g.state = GoalState::NoGap;
            g.changed = now;
            changed = true;
        }
        if inc.goals.iter().all(Goal::settled) {
            inc.following = false;
            changed = true;
        }
    }
    if now > inc.t.saturating_add(FOLLOW_LIMIT_MS) {
        inc.following = false;
        changed = true;
    }
    changed
}

/// A duration as the timeline says it: `0.4s`, `12.5s`, `5m 55s`, `1h 2m`.
pub fn span_words(ms: Millis) -> String {
    if ms < 60_000 {
        return format!("{:.1}s", ms as f64 / 1000.0);
    }
    let s = ms / 1000;
    if s < 3600 {
        return if s % 60 == 0 {
            format!("{}m", s / 60)
        } else {
            format!("{}m {}s", s / 60, s % 60)
        };
    }
    format!("{}h {}m", s / 3600, (s % 3600) / 60)
}

/// Where time `t` falls across `[t0, t1]`, in percent.
pub fn x_percent(t: Millis, t0: Millis, t1: Millis) -> f64 {
    if t1 <= t0 {
        return 0.0;
    }
    ((t.saturating_sub(t0)) as f64 / (t1 - t0) as f64 * 100.0).clamp(0.0, 100.0)
}

/// A time after the fault: `+0s`, `+30ms`, `+1.2s`, `+5m 55s`.
pub fn offset_words(ms: Millis) -> String {
    match ms {
        0 => "+0s".into(),
        1..=999 => format!("+{ms}ms"),
        _ => format!("+{}", span_words(ms)),
    }
}

/// Positions (percent, ascending) nudged right so no two are closer than `min_gap`, and pulled
/// back from the right edge, so marks a few milliseconds apart stay distinguishable on a
/// minutes-wide track. Each mark's exact time stays in its label.
pub fn spread(xs: &[f64], min_gap: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::with_capacity(xs.len());
    for &x in xs {
        let x = match out.last() {
            Some(&prev) if x < prev + min_gap => prev + min_gap,
            _ => x,
        };
        out.push(x);
    }
    // Whatever ran past 100% is shifted back, keeping the gaps.
    let mut limit = 100.0;
    for x in out.iter_mut().rev() {
        if *x > limit {
            *x = limit;
        }
        limit = *x - min_gap;
    }
    out.iter().map(|x| x.clamp(0.0, 100.0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::session::Session;

    /// A session running `text`, observed every quarter second as the playground does.
    struct Run {
        s: Session,
        tl: FaultTimeline,
    }

    impl Run {
        fn lesson(name: &str) -> Run {
            let text = crate::sim::examples::by_name(name).expect("a built-in lesson");
            let s = Session::load("lesson.yaml", text, None).expect("the lesson loads");
            let mut r = Run {
                s,
                tl: FaultTimeline::default(),
            };
            r.tl.observe(&r.s.sim);
            r
        }

        fn text(text: &str) -> Run {
            let s = Session::load("t.yaml", text, Some(1)).expect("the scenario loads");
            let mut r = Run {
                s,
                tl: FaultTimeline::default(),
            };
            r.tl.observe(&r.s.sim);
            r
        }

        fn advance(&mut self, ms: Millis) {
            let end = self.s.sim.now() + ms;
            while self.s.sim.now() < end {
                let t = (self.s.sim.now() + 250).min(end);
                self.s.advance_to(t, usize::MAX);
                self.tl.observe(&self.s.sim);
            }
        }

        fn inject(&mut self, f: Fault) {
            self.s.inject(f).expect("the fault applies");
            self.tl.observe(&self.s.sim);
        }

        fn now(&self) -> Millis {
            self.s.sim.now()
        }

        fn last(&self) -> &Incident {
            self.tl.incidents().last().expect("an incident")
        }

        fn pods(&self, prefix: &str) -> Vec<String> {
            self.s
                .sim
                .api()
                .list(Kind::Pod)
                .map(|o| o.meta().name.to_string())
                .filter(|n| n.starts_with(prefix))
                .collect()
        }
    }

    fn delete(pod: &str) -> Fault {
        Fault::DeletePod {
            target: PodTarget {
                pod: Some(pod.into()),
                namespace: "default".into(),
                ..Default::default()
            },
        }
    }

    fn names<'a>(rows: impl Iterator<Item = &'a Row>) -> Vec<String> {
        rows.map(|r| r.object.name.to_string()).collect()
    }

    fn labels(row: &Row) -> Vec<&str> {
        row.marks.iter().map(|m| m.label.as_str()).collect()
    }

    const BARE: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec:\n  containers: [{name: c, image: \"busybox:1.36\"}]\n";

    #[test]
    fn a_deleted_deployment_pod_shows_the_victim_its_replacement_and_the_time_to_recovery() {
        let mut r = Run::lesson("playground");
        r.advance(30_000);
        let before = r.pods("web-");
        assert_eq!(before.len(), 3);
        let victim = before[0].clone();
        r.inject(delete(&victim));
        r.advance(60_000);

        let inc = r.last();
        assert_eq!(inc.fault, "DeletePod");
        assert_eq!(inc.target, format!("pod {victim}"));
        assert_eq!(names(inc.affected()), std::slice::from_ref(&victim));
        let victim_row = inc.affected().next().unwrap();
        assert_eq!(labels(victim_row)[0], "deleted");
        assert!(labels(victim_row).contains(&"removed"), "{victim_row:#?}");
        assert!(victim_row.note.starts_with("owned by ReplicaSet web-"));

        let now_pods = r.pods("web-");
        let replacement: Vec<String> = names(inc.replacements());
        assert_eq!(replacement.len(), 1, "{inc:#?}");
        assert!(now_pods.contains(&replacement[0]) && !before.contains(&replacement[0]));
        let row = inc.replacements().next().unwrap();
        let l = labels(row);
        assert_eq!(l[0], "created");
        assert!(
            l.iter().any(|x| x.starts_with("scheduled → node-")),
            "{l:?}"
        );
        assert!(l.contains(&"started") && l.contains(&"Ready"), "{l:?}");
        assert!(row
            .note
            .starts_with("created by replicaset-controller for ReplicaSet web-"));
        assert!(inc
            .responses
            .iter()
            .any(|x| x.component == "replicaset-controller" && x.words.contains("create 1")));

        assert_eq!(inc.goals.len(), 1);
        assert_eq!(inc.goals[0].name(), "deployment/web");
        assert_eq!(inc.goals[0].worst_words, "2/3 ready, 2 available");
        match inc.verdict(r.now()) {
            Verdict::Recovered { at, after } => {
                assert_eq!(after, at - inc.t);
                assert!(after > 0 && after < 10_000, "{after}");
                // The recovery is the status write that closed the gap: the replacement was
                // Ready before it.
                let ready = row.marks.iter().find(|m| m.label == "Ready").unwrap().t;
                assert!(ready <= at, "ready {ready}, recovered {at}");
            }
            v => panic!("{v:?}"),
        }
        assert!(inc
            .verdict(r.now())
            .headline()
            .starts_with("recovered after "));
        assert!(!inc.following, "settled after a quiet minute");
        assert!(
            r.tl.families.is_empty(),
            "a settled incident keeps no family"
        );
    }

    #[test]
    fn recovery_time_is_the_write_that_closed_the_gap_not_when_it_was_looked_at() {
        // Observed in one long step instead of quarter seconds: same verdict to the millisecond.
        let mut fine = Run::lesson("playground");
        fine.advance(30_000);
        let victim = fine.pods("web-")[1].clone();
        fine.inject(delete(&victim));
        fine.advance(40_000);
        let mut coarse = Run::lesson("playground");
        coarse.advance(30_000);
        coarse.inject(delete(&victim));
        let end = coarse.now() + 40_000;
        coarse.s.advance_to(end, usize::MAX);
        coarse.tl.observe(&coarse.s.sim);
        assert_eq!(
            fine.last().verdict(fine.now()),
            coarse.last().verdict(coarse.now())
        );
    }

    #[test]
    fn a_deleted_bare_pod_is_not_recovered_because_nothing_watches_it() {
        let mut r = Run::text(BARE);
        r.advance(20_000);
        r.inject(delete("debug"));
        r.advance(40_000);
        let inc = r.last();
        assert_eq!(names(inc.affected()), ["debug"]);
        assert!(inc.replacements().next().is_none());
        assert_eq!(inc.affected().next().unwrap().note, "no controller");
        let v = inc.verdict(r.now());
        let Verdict::NotRecovered(why) = &v else {
            panic!("{v:?}")
        };
        assert!(why.contains("no controller"), "{why}");
        assert!(why.contains("heals only what it watches"), "{why}");
    }

    #[test]
    fn a_dead_node_is_noticed_its_pods_evicted_and_replaced_but_the_node_stays_down() {
        let mut r = Run::lesson("node-dies");
        r.advance(30_000);
        let on_node: Vec<String> =
            r.s.sim
                .api()
                .list(Kind::Pod)
                .filter_map(|o| o.as_pod())
                .filter(|p| p.spec.node_name == "node-2")
                .map(|p| p.metadata.name.to_string())
                .collect();
        assert!(!on_node.is_empty());
        r.inject(Fault::NodeDown {
            node: "node-2".into(),
        });
        r.advance(20_000);
        let inc = r.last();
        assert!(
            matches!(inc.verdict(r.now()), Verdict::Recovering(ref w) if w.contains("still reports Ready")),
            "{:?}",
            inc.verdict(r.now())
        );

        r.advance(400_000);
        let inc = r.last();
        assert!(inc.linked_by_name);
        let noticed = inc.noticed.expect("the node controller noticed");
        assert!(noticed >= inc.t + 40_000, "noticed at {noticed}");
        let node = inc.affected().next().unwrap();
        assert_eq!(node.object.name, "node-2");
        assert_eq!(labels(node)[0], "machine down");
        assert!(labels(node).contains(&"NodeNotReady"), "{node:#?}");
        let affected = names(inc.affected().skip(1));
        for p in &on_node {
            assert!(affected.contains(p), "{p} in {affected:?}");
        }
        for row in inc.affected().skip(1) {
            assert!(labels(row).contains(&"NodeNotReady"), "{row:#?}");
            assert!(labels(row).contains(&"evicted"), "{row:#?}");
        }
        assert_eq!(inc.replacements().count(), on_node.len());
        for row in inc.replacements() {
            assert!(!row.note.contains("on node-2"), "{}", row.note);
        }
        let dep = inc
            .goals
            .iter()
            .find(|g| g.kind == GoalKind::Deployment)
            .expect("the Deployment goal");
        let GoalState::Met { at } = dep.state else {
            panic!("{dep:?}")
        };
        assert!(
            at > inc.t + 300_000,
            "only after the 300 s toleration: {at}"
        );
        let v = inc.verdict(r.now());
        let Verdict::NotRecovered(why) = &v else {
            panic!("{v:?}")
        };
        assert!(
            why.contains("node/node-2") && why.contains("NodeUp"),
            "{why}"
        );

        // Booting the machine closes it.
        r.inject(Fault::NodeUp {
            node: "node-2".into(),
        });
        r.advance(60_000);
        let down =
            r.tl.incidents()
                .find(|i| i.fault == "NodeDown")
                .expect("still listed");
        assert_eq!(
            down.repaired.as_ref().map(|(_, f)| f.as_str()),
            Some("NodeUp")
        );
        match down.verdict(r.now()) {
            Verdict::Recovered { at, .. } => assert!(at > down.repaired.as_ref().unwrap().0),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_powered_on_node_stays_open_on_the_timeline_until_its_kubelet_reports_it_ready() {
        let mut r = Run::lesson("node-dies");
        r.advance(30_000);
        r.inject(Fault::NodeDown {
            node: "node-2".into(),
        });
        r.advance(120_000);
        r.inject(Fault::NodeUp {
            node: "node-2".into(),
        });
        r.advance(10_000);
        let up = r.last();
        assert_eq!(up.fault, "NodeUp");
        match up.verdict(r.now()) {
            Verdict::Recovering(why) => assert!(
                why.starts_with("node/node-2 Ready=Unknown: the machine is booting"),
                "{why}"
            ),
            v => panic!("{v:?}"),
        }
        r.advance(60_000);
        let up = r.last();
        let node = up.affected().next().expect("the node's row");
        let marks = labels(node);
        let at = |l: &str| marks.iter().position(|m| *m == l);
        assert_eq!(at("powered on"), Some(0), "{marks:?}");
        assert!(
            at("booted") < at("Ready") && at("booted").is_some(),
            "{marks:?}"
        );
        match up.verdict(r.now()) {
            Verdict::Recovered { after, .. } => assert!(
                (MACHINE_BOOT_MS..MACHINE_BOOT_MS + 2_000).contains(&after),
                "Ready {after} ms after power-on"
            ),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_crashed_container_is_restarted_in_place_with_no_replacement() {
        let mut r = Run::lesson("playground");
        r.advance(30_000);
        let pod = r.pods("web-")[0].clone();
        r.inject(Fault::CrashContainer {
            target: PodTarget {
                pod: Some(pod.clone()),
                namespace: "default".into(),
                ..Default::default()
            },
            exit_code: 1,
        });
        r.advance(90_000);
        let inc = r.last();
        assert_eq!(names(inc.affected()), [pod]);
        assert_eq!(labels(inc.affected().next().unwrap())[0], "crashed");
        assert_eq!(inc.replacements().count(), 0);
        assert!(
            matches!(inc.verdict(r.now()), Verdict::Recovered { .. })
                || matches!(inc.verdict(r.now()), Verdict::NoImpact(_)),
            "{:?}",
            inc.verdict(r.now())
        );
    }

    #[test]
    fn a_crash_loop_is_not_called_recovered_while_it_still_acts() {
        let mut r = Run::lesson("playground");
        r.advance(30_000);
        r.inject(Fault::CrashLoop {
            target: PodTarget {
                selector: Some("app=web".into()),
                namespace: "default".into(),
                ..Default::default()
            },
            exit_code: 1,
            duration: Some(60_000),
        });
        for _ in 0..20 {
            r.advance(2_500);
            let v = r.last().verdict(r.now());
            assert!(matches!(v, Verdict::Recovering(_)), "{v:?} at {}", r.now());
        }
        r.advance(150_000);
        let inc = r.last();
        assert_eq!(inc.healed, Some(inc.t + 60_000));
        match inc.verdict(r.now()) {
            Verdict::Recovered { after, .. } => assert!(after > 60_000, "{after}"),
            v => panic!("{v:?}"),
        }
        assert_eq!(inc.affected().count(), 3);
        assert!(inc
            .affected()
            .all(|row| row.marks.iter().any(|m| m.label == "BackOff")));
    }

    #[test]
    fn the_timeline_keeps_a_bounded_number_of_incidents() {
        let mut r = Run::lesson("playground");
        r.advance(20_000);
        for _ in 0..MAX_INCIDENTS + 5 {
            let victim = r.pods("web-")[0].clone();
            r.inject(delete(&victim));
            r.advance(2_000);
        }
        assert_eq!(r.tl.incidents().len(), MAX_INCIDENTS);
        assert!(r.tl.families.len() <= MAX_INCIDENTS);
        r.advance(60_000);
        assert!(r.tl.families.is_empty(), "every incident settled");
    }

    #[test]
    fn a_refused_fault_is_listed_as_refused() {
        let mut r = Run::lesson("playground");
        assert!(r.s.inject(delete("nope")).is_err());
        r.tl.observe(&r.s.sim);
        let inc = r.last();
        assert!(inc.refused);
        assert_eq!(inc.verdict(r.now()).class(), "refused");
    }

    #[test]
    fn a_new_session_starts_an_empty_timeline() {
        let mut r = Run::lesson("playground");
        r.advance(30_000);
        let victim = r.pods("web-")[0].clone();
        r.inject(delete(&victim));
        assert_eq!(r.tl.incidents().len(), 1);
        r.s = Session::load(
            "t.yaml",
            crate::sim::examples::by_name("playground").unwrap(),
            None,
        )
        .unwrap();
        r.tl.observe(&r.s.sim);
        assert_eq!(r.tl.incidents().len(), 0);
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(span_words(400), "0.4s");
        assert_eq!(span_words(1_034), "1.0s");
        assert_eq!(span_words(355_000), "5m 55s");
        assert_eq!(span_words(120_000), "2m");
        assert_eq!(span_words(3_720_000), "1h 2m");
        assert_eq!(x_percent(150, 100, 200), 50.0);
        assert_eq!(x_percent(50, 100, 200), 0.0);
        assert_eq!(offset_words(0), "+0s");
        assert_eq!(offset_words(30), "+30ms");
        assert_eq!(offset_words(1_200), "+1.2s");
    }

    #[test]
    fn marks_close_in_time_are_nudged_apart_and_kept_on_the_track() {
        assert_eq!(spread(&[0.0, 0.5, 1.0, 50.0], 2.0), [0.0, 2.0, 4.0, 50.0]);
        assert_eq!(spread(&[99.0, 100.0], 2.0), [98.0, 100.0]);
        assert!(spread(&[], 2.0).is_empty());
    }
}
