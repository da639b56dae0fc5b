//! Views fed from the trace: the observe → diff → act loop cards and the live sequence diagram.
//!
//! Both are incremental: they consume `trace.since(last_seq)` once per frame, so their cost
//! follows what happened in the frame, not the length of the run.

use std::collections::VecDeque;

use super::format::{object_kind, short_object};
use crate::sim::api::types::Millis;
use crate::sim::machinery::trace::{ApiTrace, Delivery, ReconcileTrace, TraceEntry, TraceKind};
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
            crate::sim::handoff::is_heartbeat_write(actor, verb, object)
        }
        TraceKind::Watch {
            object, event_type, ..
        } => {
            let kind = object_kind(object);
            kind == "Lease" || (kind == "Node" && *event_type == "MODIFIED")
        }
        TraceKind::Reconcile(tr) => {
            let ReconcileTrace {
                component,
                key,
                record,
                requests,
                ..
            } = &**tr;
            let kind = object_kind(key);
            let idle = *requests == 0 && record.as_ref().is_none_or(|r| r.diff.is_empty());
            kind == "Lease"
                || (component.starts_with("kubelet") && kind == "Node" && idle)
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
}

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
        }
    }

    /// Forgets every message (after a reset).
    pub fn clear(&mut self) {
        self.msgs.clear();
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

    fn push(&mut self, m: SeqMsg) {
        self.msgs.push_back(m);
        while self.msgs.len() > self.capacity {
            self.msgs.pop_front();
        }
        self.version += 1;
    }

    /// Adds the diagram rows for new trace entries.
    pub fn ingest<'a>(&mut self, entries: impl IntoIterator<Item = &'a TraceEntry>) {
        for e in entries {
            if !self.show_heartbeats && is_heartbeat(e) {
                continue;
            }
            let base = |from: Lane, to: Vec<Lane>, label: String, style: MsgStyle| SeqMsg {
                seq: e.seq,
                t: e.t,
                from,
                to,
                label,
                detail: String::new(),
                style,
                code: None,
                error: false,
                node: None,
            };
            match &e.kind {
                TraceKind::Api(tr) => {
                    let ApiTrace {
                        actor,
                        verb,
                        object,
                        code,
                        message,
                        ..
                    } = &**tr;
                    let mut m = base(
                        Lane::of_component(actor),
                        vec![Lane::ApiServer],
                        format!("{verb} {}", short_object(object)),
                        MsgStyle::Request,
                    );
                    m.code = Some(*code);
                    m.error = *code >= 400;
                    m.detail = message.clone().unwrap_or_default();
                    m.node = kubelet_node(actor);
                    self.push(m);
                }
                TraceKind::Watch {
                    component,
                    event_type,
                    object,
                    resource_version,
                    delivery,
                } => {
                    let lane = Lane::of_component(component);
                    let dropped = *delivery == Delivery::Dropped;
                    let label = format!("{event_type} {}", short_object(object));
                    if !dropped {
                        // Merge the fan-out of one change into one row with several arrowheads.
                        let merged = self.msgs.iter_mut().rev().take(24).find(|m| {
                            m.style == MsgStyle::Watch
                                && m.label == label
                                && m.detail == format!("rv {resource_version}")
                        });
                        if let Some(m) = merged {
                            if !m.to.contains(&lane) {
                                m.to.push(lane);
                                m.to.stable_sort();
                            }
                            if lane == Lane::Kubelet {
                                m.node = kubelet_node(component);
                            }
                            self.version += 1;
                            continue;
                        }
                    }
                    let mut m = base(
                        Lane::ApiServer,
                        vec![lane],
                        label,
                        if dropped {
                            MsgStyle::Dropped
                        } else {
                            MsgStyle::Watch
                        },
                    );
                    m.detail = format!("rv {resource_version}");
                    m.error = dropped;
                    m.node = kubelet_node(component);
                    self.push(m);
                }
                TraceKind::Reconcile(tr) => {
                    let ReconcileTrace {
                        component,
                        key,
                        record,
                        requests,
                        trigger,
                        ..
                    } = &**tr;
                    let idle = *requests == 0 && record.as_ref().is_none_or(|r| r.diff.is_empty());
                    if idle && !self.show_idle_reconciles {
                        continue;
                    }
                    let lane = Lane::of_component(component);
                    let mut m = base(
                        lane,
                        vec![lane],
                        format!("reconcile {}", short_object(key)),
                        MsgStyle::Reconcile,
                    );
                    m.detail = match record {
                        Some(r) if !r.diff.is_empty() => format!("gap: {}", r.diff),
                        Some(_) if *requests > 0 => format!("{requests} request(s)"),
                        Some(_) => "no gap: nothing to do".into(),
                        None if *requests > 0 => format!("{requests} request(s) ({trigger})"),
                        None => format!("nothing to do ({trigger})"),
                    };
                    m.node = kubelet_node(component);
                    self.push(m);
                }
                TraceKind::List {
                    component,
                    reason,
                    objects,
                } => {
                    let lane = Lane::of_component(component);
                    let mut m = base(
                        lane,
                        vec![Lane::ApiServer],
                        format!("list ({objects} objects)"),
                        MsgStyle::List,
                    );
                    m.detail = reason.clone();
                    m.node = kubelet_node(component);
                    self.push(m);
                }
                TraceKind::Fault { fault, description } => {
                    let mut m = base(
                        Lane::User,
                        Lane::ALL.to_vec(),
                        format!("⚡ {fault}"),
                        MsgStyle::Fault,
                    );
                    // The description is `<fault as JSON> — <what happened>`: the band shows
                    // what happened; the JSON is already summed up by the fault's name.
                    m.detail = description
                        .split_once(" — ")
                        .map_or_else(|| description.clone(), |(_, what)| what.to_string());
                    self.push(m);
                }
                TraceKind::Command {
                    command,
                    ok,
                    output,
                } => {
                    let mut m = base(
                        Lane::User,
                        vec![Lane::User],
                        format!("$ {command}"),
                        MsgStyle::Command,
                    );
                    m.error = !ok;
                    m.detail = output.lines().next().unwrap_or_default().to_string();
                    self.push(m);
                }
                TraceKind::Event(_) | TraceKind::Check { .. } => {}
            }
        }
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
}

/// How long the loop card's pulse plays (`.loop-pulse` in www/style.css). A pass that comes while
/// it plays does not restart it: during a rollout the ReplicaSet controller runs many times a
/// second, and restarting the animation (a new element, a new compositor layer) on each frame
/// cost about a sixth of the main thread in a 300-pod rollout, for a dot that only flickered.
pub const PULSE_MS: f64 = 900.0;

impl LoopCard {
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
    pending: VecDeque<(u64, String)>,
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
        for e in entries {
            match &e.kind {
                TraceKind::Reconcile(tr) => {
                    let ReconcileTrace {
                        component,
                        key,
                        trigger,
                        record,
                        requests,
                        actions,
                    } = &**tr;
                    if is_heartbeat(e) {
                        continue;
                    }
                    let previous = self.cards.get(&**component);
                    let passes = previous.map_or(0, |c| c.passes) + 1;
                    let (pulse, pulse_at) = match previous {
                        Some(c) if real_ms - c.pulse_at < PULSE_MS => (c.pulse, c.pulse_at),
                        _ => (e.seq, real_ms),
                    };
                    let r = record.clone().unwrap_or_default();
                    self.cards.insert(
                        component.to_string(),
                        LoopCard {
                            component: component.to_string(),
                            key: short_object(key),
                            trigger,
                            t: e.t,
                            observed: r.observed,
                            desired: r.desired,
                            diff: r.diff,
                            actions: actions
                                .iter()
                                .map(|a| LoopAction {
                                    text: a.clone(),
                                    code: None,
                                    message: None,
                                })
                                .collect(),
                            requests: *requests,
                            passes,
                            seq: e.seq,
                            pulse,
                            pulse_at,
                        },
                    );
                    if *requests > 0 {
                        self.pending.push_back((e.seq, component.to_string()));
                        while self.pending.len() > 64 {
                            self.pending.pop_front();
                        }
                    }
                    self.version += 1;
                }
                TraceKind::Api(tr) => {
                    let ApiTrace {
                        verb,
                        object,
                        code,
                        message,
                        ..
                    } = &**tr;
                    let Some(cause) = e.cause() else { continue };
                    let Some((_, component)) = self.pending.iter().find(|(s, _)| *s == cause)
                    else {
                        continue;
                    };
                    if let Some(card) = self.cards.get_mut(component) {
                        if card.seq == cause {
                            // Answers arrive in send order: fill the first action still waiting.
                            match card.actions.iter_mut().find(|a| a.code.is_none()) {
                                Some(a) => {
                                    a.code = Some(*code);
                                    a.message = message.clone();
                                }
                                None => card.actions.push(LoopAction {
                                    text: format!("{verb} {}", short_object(object)),
                                    code: Some(*code),
                                    message: message.clone(),
                                }),
                            }
                            self.version += 1;
                        }
                    }
                }
                _ => {}
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
    use crate::sim::machinery::controller::ReconcileRecord;
    use crate::sim::machinery::trace::{Trace, WatchType};

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
