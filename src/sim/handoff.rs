//! Hand-offs: the moments one component's write reaches another, for "step to the next hand-off".
//!
//! A single Step runs one simulation event, and most events are node heartbeats, cache
//! deliveries nobody acts on and status bookkeeping: a fresh Deployment takes a dozen presses
//! before its ReplicaSet appears. A hand-off is read from the trace, never from a component's
//! internals, so the definition holds for every controller:
//!
//! A **hand-off** is a successful API write (2xx) that is not a node heartbeat (a Lease, or a
//! kubelet's update of its own Node) and that either
//! - **answers another component**: following its cause chain back (the reconcile pass that sent
//!   it, the watch delivery or requeue that queued the pass), the nearest API write is another
//!   actor's (the Deployment controller creating a ReplicaSet for the learner's Deployment, the
//!   scheduler binding the ReplicaSet controller's pod, a kubelet reporting the pod it was
//!   given); a component answering its own write (a status update after its own create, a
//!   retry after its own 409) is self-chatter and skipped; or
//! - **changes a watched object unprompted**: no API write is on its chain at all (a timer, a
//!   probe, a fault, a scenario step: the node controller marking a silent node `Unknown`).
//!
//! The search is bounded: it gives up after [`HAND_OFF_MAX_EVENTS`] events or
//! [`HAND_OFF_MAX_MS`] of simulated time, and says so. It only reads the trace, so stepping this
//! way runs exactly the events single steps or playing would: a run's trace does not depend on
//! how it was stepped.

use super::api::types::Millis;
use super::machinery::trace::{ApiTrace, Trace, TraceEntry, TraceKind, CHAIN_LIMIT};
use super::time::human_duration;
use super::world::Sim;

/// The most simulation events one search runs before it gives up (about a second of work in
/// the browser at the largest cluster).
pub const HAND_OFF_MAX_EVENTS: usize = 10_000;
/// The most simulated time one search covers before it gives up: past a pod's default
/// five-minute toleration of an unreachable node, so the eviction after a node failure is found.
pub const HAND_OFF_MAX_MS: Millis = 6 * 60_000;

/// How a search for the next hand-off ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandOff {
    /// Stopped at the hand-offs of one simulated moment, in trace order: what each write did.
    Found { at: Millis, writes: Vec<String> },
    /// Nothing is left to run.
    Idle,
    /// No hand-off within the caps.
    GaveUp { events: usize, ms: Millis },
}

impl HandOff {
    /// One sentence for the page.
    pub fn message(&self) -> String {
        match self {
            HandOff::Found { at, writes } => {
                let first = writes.first().map_or("", String::as_str);
                let more = match writes.len() {
                    0 | 1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                };
                format!("Hand-off at {}: {first}{more}", super::time::clock(*at))
            }
            HandOff::Idle => "Nothing is scheduled to happen: no hand-off to step to".into(),
            HandOff::GaveUp { events, ms } => format!(
                "No hand-off within {} ({events} events): the cluster is quiet; press again to look further",
                human_duration(i64::try_from(*ms).unwrap_or(i64::MAX))
            ),
        }
    }
}

/// Follows the trace while the caller runs the simulation one event at a time (the caller owns
/// the stepping, so scenario steps and checks run as they would anyway).
#[derive(Clone, Debug)]
pub struct HandOffSearch {
    /// The last trace entry before the search.
    first: u64,
    /// The last trace entry looked at.
    scanned: u64,
    start: Millis,
    events: usize,
    /// Where the first hand-off was found: the search then finishes that simulated moment.
    found_at: Option<Millis>,
}

impl HandOffSearch {
    /// A search starting now.
    pub fn start(sim: &Sim) -> HandOffSearch {
        let last = sim.trace().next_seq().saturating_sub(1);
        HandOffSearch {
            first: last,
            scanned: last,
            start: sim.now(),
            events: 0,
            found_at: None,
        }
    }

    /// Looks at what the last event added. Some(time) once a hand-off was found: the caller runs
    /// the rest of that simulated moment (two pods bound in the same millisecond are one step)
    /// and then asks [`HandOffSearch::finish`].
    pub fn after_event(&mut self, sim: &Sim) -> Option<Millis> {
        self.events += 1;
        if self.found_at.is_none() {
            let trace = sim.trace();
            if let Some(e) = trace.since(self.scanned).find(|e| is_hand_off(trace, e)) {
                self.found_at = Some(e.t);
            }
            self.scanned = trace.next_seq().saturating_sub(1);
        }
        self.found_at
    }

    /// True when the search should give up (no hand-off and a cap reached).
    pub fn exhausted(&self, sim: &Sim) -> bool {
        self.found_at.is_none()
            && (self.events >= HAND_OFF_MAX_EVENTS
                || sim.now().saturating_sub(self.start) >= HAND_OFF_MAX_MS)
    }

    /// The outcome, once the caller stopped stepping: the hand-offs found since the start (or
    /// why there were none). `idle` says the simulation had nothing left to run.
    pub fn finish(&self, sim: &Sim, idle: bool) -> HandOff {
        let trace = sim.trace();
        if let Some(at) = self.found_at {
            let writes = trace
                .since(self.first)
                .filter(|e| is_hand_off(trace, e))
                .map(|e| describe(trace, e))
                .collect();
            return HandOff::Found { at, writes };
        }
        if idle {
            return HandOff::Idle;
        }
        HandOff::GaveUp {
            events: self.events,
            ms: sim.now().saturating_sub(self.start),
        }
    }
}

/// True for a node heartbeat: a Lease renewal, or a kubelet's write to its Node other than
/// registering it. The sequence diagram hides the same writes.
pub fn is_heartbeat_write(actor: &str, verb: &str, object: &str) -> bool {
    is_kind(object, "Lease")
        || (is_kind(object, "Node") && actor.starts_with("kubelet") && verb != "create")
}

/// Whether the trace key `key` (`Kind/namespace/name`, `Kind/name`) names an object of `kind`.
/// Views ask this of every trace line they take in: a prefix test, not a split.
pub fn is_kind(key: &str, kind: &str) -> bool {
    key.strip_prefix(kind)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// True when `e` is a hand-off (see the module documentation).
pub fn is_hand_off(trace: &Trace, e: &TraceEntry) -> bool {
    let TraceKind::Api(tr) = &e.kind else {
        return false;
    };
    let ApiTrace {
        actor,
        verb,
        object,
        code,
        ..
    } = &**tr;
    if !(200..300).contains(code) || is_heartbeat_write(actor, verb, object) {
        return false;
    }
    match origin(trace, e) {
        Some(TraceKind::Api(from)) => from.actor != *actor,
        _ => true,
    }
}

/// The nearest API write on the cause chain of `e` (excluding `e` itself), if any is kept.
fn origin<'a>(trace: &'a Trace, e: &TraceEntry) -> Option<&'a TraceKind> {
    let mut next = e.cause().filter(|&c| c < e.seq);
    for _ in 0..CHAIN_LIMIT {
        let cause = trace.get(next?)?;
        if matches!(cause.kind, TraceKind::Api(_)) {
            return Some(&cause.kind);
        }
        next = cause.cause().filter(|&c| c < cause.seq);
    }
    None
}

/// "replicaset-controller created Pod web-7d9f8-x2k4f, answering deployment-controller's
/// ReplicaSet web-7d9f8".
fn describe(trace: &Trace, e: &TraceEntry) -> String {
    let TraceKind::Api(tr) = &e.kind else {
        return String::new();
    };
    let ApiTrace {
        actor,
        verb,
        object,
        ..
    } = &**tr;
    let mut s = format!("{actor} {} {}", past(verb), kind_and_name(object));
    if let Some(TraceKind::Api(tr)) = origin(trace, e) {
        let ApiTrace {
            actor: from,
            object: about,
            ..
        } = &**tr;
        s.push_str(&format!(", answering {from}'s {}", kind_and_name(about)));
    }
    s
}

/// What a request verb did, in words.
fn past(verb: &str) -> &'static str {
    match verb {
        "create" => "created",
        "update" => "updated",
        "update/status" => "updated the status of",
        "patch" => "patched",
        "patch/status" => "patched the status of",
        "delete" => "deleted",
        "create/binding" => "bound",
        "create/eviction" => "evicted",
        _ => "wrote",
    }
}

/// `Pod/default/web-x` → `Pod web-x`.
fn kind_and_name(object: &str) -> String {
    let kind = object.split('/').next().unwrap_or("");
    let name = object.rsplit('/').next().unwrap_or(object);
    format!("{kind} {name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::machinery::trace::ReconcileTrace;
    use crate::sim::machinery::trace::{Delivery, WatchType};

    #[test]
    fn a_trace_key_names_its_kind_by_its_first_part_only() {
        assert!(is_kind("Lease/kube-node-lease/node-1", "Lease"));
        assert!(is_kind("Node/node-1", "Node"));
        assert!(is_kind("Node", "Node"));
        assert!(!is_kind("NodeClaim/x", "Node"));
        assert!(!is_kind("Pod/default/Node", "Node"));
        assert!(!is_kind("", "Node"));
    }

    /// Traces one API request written as `actor verb object code`, caused by `cause`.
    fn write(trace: &mut Trace, cause: Option<u64>, line: &str) -> u64 {
        let words: Vec<&str> = line.split(' ').collect();
        let verb = ["create", "update", "update/status"]
            .into_iter()
            .find(|v| *v == words[1])
            .expect("a verb these tests use");
        trace.push(
            0,
            cause,
            TraceKind::Api(Box::new(ApiTrace {
                actor: words[0].into(),
                verb,
                object: words[2].into(),
                code: words[3].parse().expect("a status code"),
                message: None,
                resource_version: None,
            })),
        )
    }

    /// A reconcile pass of `component`, queued by `cause`.
    fn pass(trace: &mut Trace, cause: Option<u64>, component: &str, trigger: &'static str) -> u64 {
        trace.push(
            0,
            cause,
            TraceKind::Reconcile(Box::new(ReconcileTrace {
                component: component.into(),
                key: "x".into(),
                trigger,
                record: None,
                requests: 1,
                actions: Vec::new(),
            })),
        )
    }

    /// A delivery of `write` to `component`, and the pass it queued.
    fn pass_after(trace: &mut Trace, write: u64, component: &str) -> u64 {
        let delivery = trace.push(
            0,
            Some(write),
            TraceKind::Watch {
                component: component.into(),
                event_type: WatchType::Added,
                object: "x".into(),
                resource_version: 1,
                delivery: Delivery::Delivered,
            },
        );
        pass(trace, Some(delivery), component, "watch")
    }

    #[test]
    fn a_write_answering_another_actor_is_a_hand_off_and_one_answering_itself_is_not() {
        let mut t = Trace::default();
        let apply = write(&mut t, None, "user create Deployment/default/web 201");
        let dc = pass_after(&mut t, apply, "deployment-controller");
        let rs = write(
            &mut t,
            Some(dc),
            "deployment-controller create ReplicaSet/default/web-1 201",
        );
        let own = pass_after(&mut t, rs, "deployment-controller");
        let status = write(
            &mut t,
            Some(own),
            "deployment-controller update/status Deployment/default/web 200",
        );
        let rsc = pass_after(&mut t, rs, "replicaset-controller");
        let pod = write(
            &mut t,
            Some(rsc),
            "replicaset-controller create Pod/default/web-1-a 201",
        );
        let refused = write(
            &mut t,
            Some(rsc),
            "replicaset-controller create Pod/default/web-1-b 409",
        );
        let is = |seq: u64| is_hand_off(&t, t.get(seq).expect("kept"));
        assert!(is(apply), "the learner's change, prompted by no write");
        assert!(is(rs));
        assert!(!is(status), "self-chatter: answering its own ReplicaSet");
        assert!(is(pod));
        assert!(!is(refused), "a refused request changes nothing");
        assert!(!is(dc), "only writes are hand-offs");
        assert_eq!(
            describe(&t, t.get(pod).expect("kept")),
            "replicaset-controller created Pod web-1-a, answering deployment-controller's ReplicaSet web-1"
        );
    }

    #[test]
    fn heartbeats_are_never_hand_offs_but_a_timer_that_changes_a_node_is() {
        let mut t = Trace::default();
        let lease = write(
            &mut t,
            None,
            "kubelet/node-1 update Lease/kube-node-lease/node-1 200",
        );
        let status = write(&mut t, None, "kubelet/node-1 update/status Node/node-1 200");
        let register = write(&mut t, None, "kubelet/node-1 create Node/node-1 201");
        let timer = pass(&mut t, None, "node-controller", "timer");
        let unknown = write(
            &mut t,
            Some(timer),
            "node-controller update/status Node/node-2 200",
        );
        let is = |seq: u64| is_hand_off(&t, t.get(seq).expect("kept"));
        assert!(!is(lease));
        assert!(!is(status));
        assert!(is(register), "a node joining is news");
        assert!(is(unknown), "the node controller marking a silent node");
    }

    #[test]
    fn each_outcome_says_what_happened_in_one_sentence() {
        let found = HandOff::Found {
            at: 31,
            writes: vec!["a created B".into(), "a updated C".into()],
        };
        assert_eq!(
            found.message(),
            "Hand-off at 00:00.0: a created B (and 1 more)"
        );
        let gave_up = HandOff::GaveUp {
            events: 1_200,
            ms: HAND_OFF_MAX_MS,
        };
        assert!(gave_up
            .message()
            .starts_with("No hand-off within 6m (1200 events)"));
        assert!(HandOff::Idle.message().starts_with("Nothing is scheduled"));
    }
}
