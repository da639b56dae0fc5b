//! The built-in lessons (`src/lessons/*.yaml`, listed in `examples::ALL` and `examples::LESSONS`).
//!
//! (a) every lesson loads and validates cleanly, and its metadata agrees with its file;
//! (b) every lesson, run headlessly with its "try this" actions at their scripted `at:` times,
//!     passes every check — through the library and, for a few, through the real binary;
//! (c) each lesson's point holds in the simulated cluster: one assertion per lesson on the
//!     outcome it teaches, looked at directly rather than through the lesson's own checks.

use crate::support::kubeloop;
use std::collections::BTreeSet;

use kubeloop::sim::api::types::{Deployment, Kind, Millis, Pod, ReplicaSet};
use kubeloop::sim::examples::{self, ALL, LESSONS};
use kubeloop::sim::input::decode::decode_manifests;
use kubeloop::sim::input::diagnostic::Severity;
use kubeloop::sim::machinery::trace::{EventTrace, TraceKind};
use kubeloop::sim::scenario::{decode_scenario, StepAction, Trigger};
use kubeloop::sim::session::Session;

const SECOND: Millis = 1_000;
const MINUTE: Millis = 60 * SECOND;
/// No lesson may need more than this much simulated time.
const LIMIT: Millis = 60 * MINUTE;

/// The activity tabs an embed can open on (`src/ui/mod.rs`, `Tab::id`).
const VIEWS: &[&str] = &["events", "sequence", "ownership", "chart", "console"];

fn lesson_text(name: &str) -> &'static str {
    examples::by_name(name).unwrap_or_else(|| panic!("no built-in example {name:?}"))
}

/// A lesson being run headlessly, one simulated second at a time as `kubeloop run` does (checks
/// are decided between seconds, so a lesson's checks see what the CLI's would).
struct Run {
    s: Session,
    t: Millis,
}

impl Run {
    fn start(name: &str) -> Run {
        let file = format!("{name}.yaml");
        let mut s = Session::load(&file, lesson_text(name), None)
            .unwrap_or_else(|d| panic!("{name} does not load: {d:?}"));
        s.script_try_this();
        Run { s, t: 0 }
    }

    /// Advances to `t` (simulated ms since the start).
    fn to(&mut self, t: Millis) -> &mut Self {
        while self.t < t {
            self.t = (self.t + SECOND).min(t);
            self.s.advance_to(self.t, usize::MAX);
        }
        self
    }

    /// Runs until every step has run and every check is decided, then insists they all passed.
    fn finish(&mut self, name: &str) -> &mut Self {
        while (self.s.has_pending_actions() || !self.s.checks_decided()) && self.t < LIMIT {
            let t = self.t + SECOND;
            self.to(t);
        }
        assert_all_green(name, Pace::Timeline, self);
        self
    }

    /// Every command the run performed, with its output (for failure messages).
    fn commands(&self) -> String {
        self.s
            .sim
            .trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Command {
                    command,
                    output,
                    ok,
                    ..
                } => Some(format!("  {} {command} (ok={ok}): {output}", e.t)),
                TraceKind::Fault { description, .. } => Some(format!("  {} {description}", e.t)),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn deployment(&self, name: &str) -> Deployment {
        self.s
            .sim
            .api()
            .list(Kind::Deployment)
            .filter_map(|o| o.as_deployment())
            .find(|d| d.metadata.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no deployment {name}"))
    }

    /// Pods labelled `app=<app>`, terminating ones included.
    fn pods(&self, app: &str) -> Vec<Pod> {
        self.s
            .sim
            .api()
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.metadata.labels.get("app").map(|v| v.as_str()) == Some(app))
            .cloned()
            .collect()
    }

    /// Pods labelled `app=<app>` that are not being deleted.
    fn live_pods(&self, app: &str) -> Vec<Pod> {
        self.pods(app)
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect()
    }

    fn replicasets(&self, app: &str) -> Vec<ReplicaSet> {
        self.s
            .sim
            .api()
            .list(Kind::ReplicaSet)
            .filter_map(|o| o.as_replica_set())
            .filter(|r| r.metadata.labels.get("app").map(|v| v.as_str()) == Some(app))
            .cloned()
            .collect()
    }
}

fn names(pods: &[Pod]) -> BTreeSet<String> {
    pods.iter().map(|p| p.metadata.name.to_string()).collect()
}

fn condition<'a>(
    conds: &'a [kubeloop::sim::api::types::Condition],
    type_: &str,
) -> Option<&'a kubeloop::sim::api::types::Condition> {
    conds.iter().find(|c| c.type_ == type_)
}

fn image(p: &Pod) -> &str {
    &p.spec.containers[0].image
}

// ------------------------------------------------------------------ (a) loading and metadata

#[test]
fn every_lesson_is_listed_once_with_metadata_that_matches_its_file() {
    let in_all: Vec<&str> = ALL.iter().map(|(n, _)| *n).collect();
    assert_eq!(in_all[0], "playground");
    let lessons: Vec<&str> = LESSONS.iter().map(|l| l.name).collect();
    assert_eq!(
        &in_all[1..],
        lessons.as_slice(),
        "ALL lists the lessons in course order"
    );
    assert_eq!(LESSONS.len(), 21);
    for (i, l) in LESSONS.iter().enumerate() {
        assert_eq!(l.order as usize, i + 1, "{}: order", l.name);
        assert!(
            VIEWS.contains(&l.view),
            "{}: unknown view {:?}",
            l.name,
            l.view
        );
        assert!(!l.title.is_empty() && l.summary.len() > 80, "{}", l.name);
        assert_eq!(examples::lesson(l.name), Some(l));
        let s = Session::load("x.yaml", lesson_text(l.name), None).expect("loads");
        assert_eq!(
            s.scenario.metadata.name, l.name,
            "the Scenario is named after the lesson"
        );
    }
}

#[test]
fn every_lesson_loads_and_validates_cleanly() {
    for (name, text) in ALL {
        let file = format!("{name}.yaml");
        let decoded = decode_manifests(&file, text);
        // Notes (an instance created once kro serves its kind) are not findings.
        assert!(
            decoded
                .diagnostics
                .iter()
                .all(|d| d.severity == kubeloop::sim::input::diagnostic::Severity::Info),
            "{name}: {:?}",
            decoded.diagnostics
        );
        if let Err(d) = Session::load(&file, text, None) {
            panic!("{name} does not load: {d:?}");
        }
        if *name == "playground" {
            continue;
        }
        let (doc, _) = decoded.scenario.expect("a lesson has a Scenario document");
        let scenario = decode_scenario(&doc).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let spec = &scenario.spec;
        let description = spec.description.as_deref().unwrap_or_default();
        assert!(
            description.len() > 200,
            "{name}: the description teaches the point"
        );
        assert!(spec.seed.is_some(), "{name}: a lesson pins its seed");
        assert!(!spec.checks.is_empty(), "{name}: no checks");
        assert!(!spec.try_this.is_empty(), "{name}: no tryThis");
        // Every manifest a step or a button applies must be valid too.
        let mut applied = Vec::new();
        for t in &spec.try_this {
            assert!(t.at.is_some(), "{name}: tryThis {:?} has no at:", t.label);
            if let Ok(StepAction::Apply(text)) = t.action() {
                applied.push(text);
            }
        }
        for a in scenario.timeline().expect("timeline") {
            if let StepAction::Apply(text) = a.action {
                applied.push(text);
            }
        }
        for text in applied {
            let d = decode_manifests("apply.yaml", &text);
            assert!(
                d.diagnostics.iter().all(|d| d.severity != Severity::Error)
                    && !(d.objects.is_empty() && d.controllers.is_empty()),
                "{name}: an applied manifest is invalid: {:?}",
                d.diagnostics
            );
        }
    }
}

#[test]
fn try_this_actions_can_be_run_one_at_a_time_as_the_ui_does() {
    let mut s = Session::load("t.yaml", lesson_text("thermostat"), None).unwrap();
    s.advance_to(30 * SECOND, usize::MAX);
    let out = s.run_try_this(0).expect("delete pods");
    assert!(out.contains("deleted"), "{out}");
    assert!(s.run_try_this(99).is_err());
    // The UI never scripts them: nothing is pending in the timeline.
    assert!(s.pending_steps().is_empty());
}

// ------------------------------------------------------------------ (b) all checks pass

/// How a learner works through a lesson's try-this steps.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pace {
    /// The lesson's own timeline does each step at its `at:` (headless runs, "play the lesson").
    Timeline,
    /// Each step the moment its button is enabled.
    Immediate,
    /// Each step minutes after its button is enabled.
    Slow,
    /// Nothing at all.
    Idle,
}

/// How late the slow learner is.
const SLOW: Millis = 3 * MINUTE;

/// Runs a lesson at a pace, a simulated second at a time (as `kubeloop run` and a page's frames
/// decide checks between moments), until every step is done and every check decided.
fn run_at(name: &str, pace: Pace) -> Run {
    let mut run = Run {
        s: Session::load(&format!("{name}.yaml"), lesson_text(name), None)
            .unwrap_or_else(|d| panic!("{name} does not load: {d:?}")),
        t: 0,
    };
    if pace == Pace::Timeline {
        run.s.script_try_this();
    }
    let limit = if pace == Pace::Idle {
        20 * MINUTE
    } else {
        LIMIT
    };
    let mut offered_at: Vec<Option<Millis>> = vec![None; run.s.scenario.spec.try_this.len()];
    loop {
        let steps = run.s.try_this_statuses();
        let all_done = steps.iter().all(|st| st.done_at.is_some());
        let settled = run.s.checks_decided() && !run.s.has_pending_actions();
        let waiting_on_learner = matches!(pace, Pace::Immediate | Pace::Slow) && !all_done;
        if (settled && !waiting_on_learner) || run.t >= limit {
            break;
        }
        if matches!(pace, Pace::Immediate | Pace::Slow) {
            let late = if pace == Pace::Slow { SLOW } else { 0 };
            let due = steps.iter().enumerate().find_map(|(i, st)| {
                if st.done_at.is_some() || !st.enabled {
                    return None;
                }
                let since = *offered_at[i].get_or_insert(run.t);
                (run.t >= since + late).then_some(i)
            });
            if let Some(i) = due {
                if let Err(e) = run.s.run_try_this(i) {
                    panic!("{name} at {pace:?}: step {i} refused at {}: {e}", run.t);
                }
                continue;
            }
        }
        let t = run.t + SECOND;
        run.to(t);
    }
    run
}

/// Checks that wait, directly or through other checks, for a try-this step.
fn step_triggered(name: &str) -> BTreeSet<String> {
    let s = Session::load("x.yaml", lesson_text(name), None).expect("loads");
    let sc = &s.scenario;
    let mut out = BTreeSet::new();
    // Each round adds the checks that wait for a step or for a check already in.
    for _ in 0..=sc.spec.checks.len() {
        for (i, c) in sc.spec.checks.iter().enumerate() {
            let triggered = sc
                .check_triggers(i)
                .expect("resolves")
                .iter()
                .any(|t| match t {
                    Trigger::TryThis(_) => true,
                    Trigger::Check(j) => out.contains(&sc.spec.checks[*j].name),
                    _ => false,
                });
            if triggered {
                out.insert(c.name.clone());
            }
        }
    }
    out
}

fn assert_all_green(name: &str, pace: Pace, run: &Run) {
    let failed: Vec<String> = run
        .s
        .checks()
        .into_iter()
        .filter(|c| c.passed != Some(true))
        .map(|c| format!("  {:?} {}: {}", c.passed, c.name, c.message))
        .collect();
    let undone: Vec<String> = run
        .s
        .try_this_statuses()
        .iter()
        .zip(&run.s.scenario.spec.try_this)
        .filter(|(st, _)| st.done_at.is_none())
        .map(|(st, t)| format!("  {}: {:?}", t.label, st.waiting_for))
        .collect();
    assert!(
        failed.is_empty() && undone.is_empty(),
        "lesson {name} at {pace:?} pace:\nchecks not passed:\n{}\nsteps not done:\n{}\ncommands:\n{}",
        failed.join("\n"),
        undone.join("\n"),
        run.commands()
    );
}

fn every_lesson_at(pace: Pace) {
    let mut failures = Vec::new();
    for l in LESSONS {
        let result = std::panic::catch_unwind(|| {
            let run = run_at(l.name, pace);
            assert_all_green(l.name, pace, &run);
        });
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(msg);
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn every_lesson_passes_every_check_when_its_timeline_does_the_steps() {
    every_lesson_at(Pace::Timeline);
}

#[test]
fn every_lesson_passes_every_check_when_each_step_is_done_the_moment_it_is_offered() {
    every_lesson_at(Pace::Immediate);
}

#[test]
fn every_lesson_passes_every_check_when_each_step_is_done_minutes_late() {
    every_lesson_at(Pace::Slow);
}

#[test]
fn no_check_that_follows_a_step_passes_when_the_learner_does_nothing() {
    for l in LESSONS {
        let triggered = step_triggered(l.name);
        assert!(
            !triggered.is_empty(),
            "{}: no check follows what the learner does",
            l.name
        );
        let run = run_at(l.name, Pace::Idle);
        for c in run.s.checks() {
            if triggered.contains(&c.name) {
                assert_eq!(
                    c.passed, None,
                    "{}: {:?} was decided with nothing done: {}",
                    l.name, c.name, c.message
                );
                assert!(
                    c.waiting_for.is_some(),
                    "{}: {:?} says what it waits for",
                    l.name,
                    c.name
                );
            }
        }
    }
}

#[test]
fn the_binary_runs_lessons_by_link_and_by_file_and_exits_zero() {
    for name in ["whole-chain", "level-vs-edge", "node-dies"] {
        let link = format!("#example/{name}");
        let (code, out, err) = kubeloop(&["run", &link]);
        assert_eq!(code, 0, "{name}\nstdout:\n{out}\nstderr:\n{err}");
        assert!(out.contains("PASS"), "{out}");
        assert!(!out.contains("FAIL"), "{out}");
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/lessons/convergence-is-not-health.yaml"
    );
    let (code, out, err) = kubeloop(&["run", path]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let (code, out, err) = kubeloop(&["validate", path]);
    assert_eq!(code, 0, "{out}{err}");
}

// ------------------------------------------------------------------ (c) each lesson's point

#[test]
fn spec_status_gap_status_trails_spec_then_catches_up() {
    let mut r = Run::start("spec-status-gap");
    r.to(2 * SECOND);
    let d = r.deployment("web");
    assert_eq!(d.spec.replicas, Some(5));
    assert!(
        d.status.available_replicas < 5,
        "two seconds in, status still trails spec: {:?}",
        d.status
    );
    let available = condition(&d.status.conditions, "Available").expect("Available");
    assert_eq!(
        (available.status.as_str(), available.reason.as_deref()),
        ("False", Some("MinimumReplicasUnavailable"))
    );
    r.finish("spec-status-gap");
    let d = r.deployment("web");
    assert_eq!((d.spec.replicas, d.status.available_replicas), (Some(8), 8));
    let progressing = condition(&d.status.conditions, "Progressing").expect("Progressing");
    assert_eq!(
        progressing.reason.as_deref(),
        Some("NewReplicaSetAvailable")
    );
}

#[test]
fn whole_chain_each_component_acts_after_the_one_before_it() {
    let mut r = Run::start("whole-chain");
    r.finish("whole-chain");
    let first = |actor: &str, verb: &str, kind: &str| -> u64 {
        r.s.sim
            .trace()
            .entries()
            .find(|e| {
                matches!(&e.kind, TraceKind::Api(tr) if tr.actor.starts_with(actor) && tr.verb == verb && tr.object.starts_with(kind) && tr.code < 300)
            })
            .map(|e| e.seq)
            .unwrap_or_else(|| panic!("no successful {verb} of {kind} by {actor}"))
    };
    let chain = [
        first("user", "create", "Deployment/"),
        first("deployment-controller", "create", "ReplicaSet/"),
        first("replicaset-controller", "create", "Pod/"),
        first("default-scheduler", "create/binding", "Pod/"),
        first("kubelet/", "update/status", "Pod/"),
    ];
    assert!(
        chain.windows(2).all(|w| w[0] < w[1]),
        "API server → Deployment ctrl → RS ctrl → scheduler → kubelet, in that order: {chain:?}"
    );
}

#[test]
fn thermostat_deleted_pods_are_replaced_but_crashed_containers_restart_in_place() {
    let mut r = Run::start("thermostat");
    r.to(39 * SECOND);
    let original = names(&r.live_pods("web"));
    r.to(85 * SECOND);
    let after_delete = names(&r.live_pods("web"));
    assert_eq!(after_delete.len(), 3);
    assert!(
        original.is_disjoint(&after_delete),
        "deleted pods come back as new pods"
    );
    r.to(120 * SECOND);
    let after_crash = r.live_pods("web");
    assert_eq!(
        names(&after_crash),
        after_delete,
        "a crash does not replace the pod"
    );
    assert!(after_crash
        .iter()
        .all(|p| p.status.container_statuses[0].restart_count == 1));
    r.finish("thermostat");
}

#[test]
fn level_vs_edge_the_edge_triggered_replicaset_really_stays_short() {
    let mut r = Run::start("level-vs-edge");
    r.to(60 * SECOND);
    assert_eq!(
        r.live_pods("web").len(),
        3,
        "level-triggered healed the same loss"
    );
    r.to(4 * MINUTE + 50 * SECOND);
    let rs = r.replicasets("web");
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].spec.replicas, Some(3));
    assert_eq!(
        r.live_pods("web").len(),
        2,
        "edge-triggered: two minutes after the loss it is still one pod short"
    );
    let dropped = r.s.sim.trace().entries().any(|e| {
        matches!(&e.kind, TraceKind::Watch { component, event_type, delivery, .. }
            if &**component == "replicaset-controller" && *event_type == "DELETED"
                && format!("{delivery:?}") == "Dropped")
    });
    assert!(dropped, "a DELETED event was really lost");
    r.finish("level-vs-edge");
    assert_eq!(r.live_pods("web").len(), 3);
}

#[test]
fn racing_writers_conflicts_are_retried_and_nothing_is_lost() {
    let mut r = Run::start("racing-writers");
    r.finish("racing-writers");
    // The rival writes just before the controller's write lands; that write then gets 409.
    let entries: Vec<_> = r.s.sim.trace().entries().cloned().collect();
    let mut raced = 0;
    for (i, e) in entries.iter().enumerate() {
        if !matches!(&e.kind, TraceKind::Api(tr) if &*tr.actor == "conflicting-writer" && tr.object == "Deployment/default/web")
        {
            continue;
        }
        let lost = entries[i + 1..].iter().take(5).any(|n| {
            matches!(&n.kind, TraceKind::Api(tr) if &*tr.actor == "deployment-controller" && tr.object == "Deployment/default/web")
        });
        assert!(
            lost,
            "the rival's write at {} made the controller's write fail",
            e.t
        );
        raced += 1;
    }
    assert!(
        raced >= 2,
        "the race happened more than once\n{}",
        r.commands()
    );
    let d = r.deployment("web");
    assert_eq!(d.spec.replicas, Some(6));
    assert_eq!(d.status.observed_generation, d.metadata.generation);
    assert_eq!(
        (d.status.replicas, d.status.available_replicas),
        (6, 6),
        "status is exactly right after the retries"
    );
    assert_eq!(r.live_pods("web").len(), 6);
}

#[test]
fn unachievable_pods_stay_pending_and_the_scheduler_says_insufficient_cpu() {
    let mut r = Run::start("unachievable");
    r.to(2 * MINUTE);
    let pods = r.live_pods("big");
    assert_eq!(pods.len(), 100);
    let pending: Vec<&Pod> = pods
        .iter()
        .filter(|p| p.spec.node_name.is_empty())
        .collect();
    assert_eq!(
        pending.len(),
        80,
        "20 nodes × 16 CPU hold 20 pods of 16 CPU"
    );
    for p in &pending {
        // The API server sets phase Pending at creation; accept the empty phase of an
        // admission that does not (yet) do so.
        assert!(
            matches!(p.status.phase.as_str(), "Pending" | ""),
            "{}",
            p.status.phase
        );
        let c = condition(&p.status.conditions, "PodScheduled").expect("PodScheduled");
        assert_eq!(c.status, "False");
        let msg = c.message.as_deref().unwrap_or_default();
        assert!(
            msg.starts_with("0/20 nodes are available: 20 Insufficient cpu."),
            "{msg}"
        );
    }
    let failed_scheduling =
        r.s.sim
            .api()
            .list(Kind::Event)
            .filter_map(|o| o.as_event())
            .any(|e| e.reason == "FailedScheduling" && e.message.contains("Insufficient cpu"));
    assert!(failed_scheduling, "a FailedScheduling event explains it");
    r.finish("unachievable");
    assert_eq!(r.live_pods("big").len(), 20);
    assert!(r
        .live_pods("big")
        .iter()
        .all(|p| !p.spec.node_name.is_empty()));
}

#[test]
fn inconsistent_the_drain_never_finishes_until_the_budget_is_fixed() {
    let mut r = Run::start("inconsistent");
    r.to(29 * SECOND);
    let on_node_1 = |r: &Run| {
        names(
            &r.live_pods("web")
                .into_iter()
                .filter(|p| p.spec.node_name == "node-1")
                .collect::<Vec<_>>(),
        )
    };
    let before = on_node_1(&r);
    assert!(!before.is_empty(), "node-1 runs web pods before the drain");
    r.to(2 * MINUTE + 20 * SECOND);
    let node =
        r.s.sim
            .api()
            .list(Kind::Node)
            .filter_map(|o| o.as_node())
            .find(|n| n.metadata.name == "node-1")
            .cloned()
            .unwrap();
    assert!(node.spec.unschedulable, "the drain cordoned node-1");
    assert_eq!(
        on_node_1(&r),
        before,
        "two minutes of draining evicted nothing"
    );
    let refused =
        r.s.sim
            .trace()
            .entries()
            .any(|e| matches!(&e.kind, TraceKind::Api(tr) if tr.verb.contains("evict")));
    assert!(refused, "evictions were refused with 429\n{}", r.commands());
    r.finish("inconsistent");
    assert!(
        on_node_1(&r).is_empty(),
        "with a consistent budget the same drain emptied node-1"
    );
    assert_eq!(r.live_pods("web").len(), 5);
}

#[test]
fn never_settles_the_spec_flips_and_the_replicaset_churns() {
    let mut r = Run::start("never-settles");
    r.to(2 * MINUTE + 30 * SECOND);
    let d = r.deployment("web");
    assert!(
        d.metadata.generation >= 5,
        "four rewrites: generation {}",
        d.metadata.generation
    );
    let scalings: Vec<String> =
        r.s.sim
            .trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Event(tr) if tr.reason == "ScalingReplicaSet" => {
                    let EventTrace { message, .. } = &**tr;
                    Some(message.to_string())
                }
                _ => None,
            })
            .collect();
    let ups = scalings
        .iter()
        .filter(|m| m.starts_with("Scaled up"))
        .count();
    let downs = scalings
        .iter()
        .filter(|m| m.starts_with("Scaled down"))
        .count();
    assert!(
        ups >= 2 && downs >= 2,
        "the ReplicaSet went up and down repeatedly: {scalings:?}"
    );
    r.finish("never-settles");
    let d = r.deployment("web");
    assert_eq!(d.spec.replicas, Some(6), "with one owner the scale sticks");
}

#[test]
fn fix_the_spec_only_the_edits_a_controller_compares_are_reverted() {
    let mut r = Run::start("fix-the-spec");
    r.to(95 * SECOND);
    let orphans = r.pods("web-debug");
    assert_eq!(orphans.len(), 3, "relabelled pods keep running");
    assert!(
        orphans
            .iter()
            .all(|p| p.metadata.controller_ref().is_none()),
        "and are released by the ReplicaSet"
    );
    let rs = r.replicasets("web");
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].spec.template.spec.containers[0].image, "nginx:1.27");
    let managed = r.live_pods("web");
    assert_eq!(managed.len(), 3);
    for p in &managed {
        assert_eq!(
            image(p),
            "nginx:1.28",
            "the hand-edited pod keeps the edited image"
        );
        assert!(
            p.status.container_statuses[0].image.ends_with("nginx:1.28"),
            "and really runs it: {:?}",
            p.status.container_statuses[0]
        );
        assert_eq!(
            p.metadata.controller_ref().map(|o| o.name.as_str()),
            Some(rs[0].metadata.name.as_str()),
            "while still owned by the 1.27 ReplicaSet"
        );
    }
    r.to(2 * MINUTE);
    let rs = r.replicasets("web");
    assert_eq!(rs[0].spec.replicas, Some(3), "the RS was scaled back");
    r.finish("fix-the-spec");
    let d = r.deployment("web");
    let new_rs: Vec<ReplicaSet> = r
        .replicasets("web")
        .into_iter()
        .filter(|rs| rs.spec.replicas.unwrap_or(0) > 0)
        .collect();
    assert_eq!(new_rs.len(), 1);
    assert_eq!(
        new_rs[0].spec.template.spec.containers[0].image,
        "nginx:1.28"
    );
    assert_eq!(d.status.updated_replicas, 3);
    for p in r.live_pods("web") {
        assert_eq!(
            p.metadata.controller_ref().map(|o| o.name.clone()),
            Some(new_rs[0].metadata.name.clone()),
            "after the Deployment edit every pod comes from the new template"
        );
    }
    assert_eq!(
        r.pods("web-debug").len(),
        3,
        "orphans are yours to clean up"
    );
}

#[test]
fn convergence_is_not_health_every_pod_exists_and_no_endpoint_is_ready() {
    let mut r = Run::start("convergence-is-not-health");
    r.to(90 * SECOND);
    let pods = r.live_pods("web");
    assert_eq!(pods.len(), 3, "every pod exists");
    assert!(pods.iter().all(|p| p.status.phase == "Running"));
    assert!(pods.iter().all(|p| !p.is_ready()), "and none is Ready");
    let rs = r.replicasets("web");
    assert_eq!(
        (rs[0].spec.replicas, rs[0].status.replicas),
        (Some(3), 3),
        "the ReplicaSet has nothing to do"
    );
    let d = r.deployment("web");
    assert_eq!(d.status.observed_generation, d.metadata.generation);
    let slices: Vec<_> =
        r.s.sim
            .api()
            .list(Kind::EndpointSlice)
            .filter_map(|o| o.as_endpoint_slice())
            .filter(|s| {
                s.metadata
                    .labels
                    .get("kubernetes.io/service-name")
                    .map(|v| v.as_str())
                    == Some("web")
            })
            .cloned()
            .collect();
    let endpoints: Vec<_> = slices.iter().flat_map(|s| s.endpoints.iter()).collect();
    assert_eq!(endpoints.len(), 3, "the Service still lists every pod");
    assert!(
        endpoints.iter().all(|e| e.conditions.ready == Some(false)),
        "but none as ready: {endpoints:?}"
    );
    r.finish("convergence-is-not-health");
    assert_eq!(
        names(&r.live_pods("web")),
        names(&pods),
        "the same pods recovered; nothing was replaced"
    );
}

#[test]
fn node_dies_pods_wait_out_their_toleration_before_being_replaced() {
    let mut r = Run::start("node-dies");
    r.to(29 * SECOND);
    let on_node_2: BTreeSet<String> = names(
        &r.live_pods("web")
            .into_iter()
            .filter(|p| p.spec.node_name == "node-2")
            .collect::<Vec<_>>(),
    );
    assert!(!on_node_2.is_empty());
    r.to(4 * MINUTE);
    let still = names(&r.live_pods("web"));
    assert!(
        on_node_2.is_subset(&still),
        "3.5 minutes after the node died its pods are neither deleted nor replaced"
    );
    assert_eq!(r.live_pods("web").len(), 6);
    r.to(6 * MINUTE + 30 * SECOND);
    let now = r.live_pods("web");
    assert_eq!(now.len(), 6);
    assert!(
        names(&now).is_disjoint(&on_node_2),
        "after the toleration they were evicted"
    );
    assert!(
        now.iter().all(|p| p.spec.node_name != "node-2"),
        "and replaced elsewhere"
    );
    r.finish("node-dies");
    assert!(
        names(&r.pods("web")).is_disjoint(&on_node_2),
        "once node-2 is back its kubelet finishes the old pods"
    );
}

#[test]
fn rolling_updates_stay_within_surge_and_unavailable_and_a_bad_image_stalls() {
    let mut r = Run::start("rolling-updates");
    r.to(30 * SECOND);
    for t in 31..90 {
        r.to(t * SECOND);
        let total: i32 = r
            .replicasets("web")
            .iter()
            .map(|rs| rs.spec.replicas.unwrap_or(0))
            .sum();
        let d = r.deployment("web");
        assert!(
            total <= 5,
            "at {t}s the ReplicaSets want {total} pods (> 4 + maxSurge 1)"
        );
        assert!(
            d.status.available_replicas >= 3,
            "at {t}s only {} available (< 4 − maxUnavailable 1)",
            d.status.available_replicas
        );
    }
    r.to(3 * MINUTE + 30 * SECOND);
    let stuck: Vec<Pod> = r
        .live_pods("web")
        .into_iter()
        .filter(|p| image(p) == "nginx:1.28-alpne")
        .collect();
    assert_eq!(stuck.len(), 2, "the typo's ReplicaSet got 2 pods");
    for p in &stuck {
        let reason = p.status.container_statuses[0]
            .state
            .waiting
            .as_ref()
            .and_then(|w| w.reason.clone())
            .unwrap_or_default();
        assert!(
            reason == "ErrImagePull" || reason == "ImagePullBackOff",
            "{reason}"
        );
    }
    let d = r.deployment("web");
    let progressing = condition(&d.status.conditions, "Progressing").unwrap();
    assert_eq!(
        (progressing.status.as_str(), progressing.reason.as_deref()),
        ("False", Some("ProgressDeadlineExceeded"))
    );
    assert!(
        condition(&d.status.conditions, "Available").unwrap().status == "True",
        "the old pods kept it available"
    );
    r.finish("rolling-updates");
    assert!(r.live_pods("web").iter().all(|p| image(p) == "nginx:1.28"));
}

#[test]
fn controllers_crash_the_restarted_controllers_finish_the_rollout_exactly() {
    let mut r = Run::start("controllers-crash");
    r.to(49 * SECOND);
    let old_left: i32 = r
        .replicasets("web")
        .iter()
        .filter(|rs| rs.spec.template.spec.containers[0].image == "nginx:1.27")
        .map(|rs| rs.spec.replicas.unwrap_or(0))
        .sum();
    assert!(
        old_left > 0,
        "the restart comes mid-rollout (old RS still wants {old_left})"
    );
    r.finish("controllers-crash");
    let relisted = r.s.sim.trace().entries().any(|e| {
        matches!(&e.kind, TraceKind::List { component, reason, .. }
            if &**component == "deployment-controller" && reason == "restarted")
    });
    assert!(
        relisted,
        "the Deployment controller relisted after the restart"
    );
    let pods = r.live_pods("web");
    assert_eq!(pods.len(), 6);
    assert!(pods.iter().all(|p| image(p) == "nginx:1.28"));
    let new_rs = r
        .replicasets("web")
        .into_iter()
        .find(|rs| rs.spec.template.spec.containers[0].image == "nginx:1.28")
        .expect("the new ReplicaSet");
    let new_rs_key = format!("ReplicaSet/default/{}", new_rs.metadata.name);
    let created_by_new_rs =
        r.s.sim
            .trace()
            .entries()
            .filter(|e| {
                matches!(&e.kind, TraceKind::Event(tr) if tr.reason == "SuccessfulCreate" && tr.object == new_rs_key)
            })
            .count();
    assert_eq!(
        created_by_new_rs, 6,
        "the new ReplicaSet created exactly six pods: none twice after the restart"
    );
    let rs_count = r.replicasets("web").len();
    assert_eq!(rs_count, 2, "one old and one new ReplicaSet, no duplicate");
}

#[test]
fn the_write_your_own_lesson_example_in_the_docs_passes_its_checks() {
    let doc = include_str!("../../docs/lessons.md");
    let start = doc.find("```yaml\n").expect("a yaml block") + "```yaml\n".len();
    let end = start + doc[start..].find("```").expect("closed");
    let text = &doc[start..end];
    let mut s = Session::load("gc.yaml", text, None).expect("the example loads");
    assert_eq!(s.script_try_this(), 1);
    let mut t = 0;
    while (s.has_pending_actions() || !s.checks_decided()) && t < LIMIT {
        t += SECOND;
        s.advance_to(t, usize::MAX);
    }
    for c in s.checks() {
        assert_eq!(c.passed, Some(true), "{}: {}", c.name, c.message);
    }
}

// ------------------------------------------------------------------ (d) steps follow the learner

/// Loads a lesson and runs it, doing the steps before `label` as they are offered, until the
/// try-this step `label` is offered.
fn until_offered(name: &str, label: &str) -> Run {
    let mut run = Run {
        s: Session::load("x.yaml", lesson_text(name), None).expect("loads"),
        t: 0,
    };
    let i = run
        .s
        .scenario
        .spec
        .try_this
        .iter()
        .position(|t| t.label == label)
        .unwrap_or_else(|| panic!("{name} has no step {label:?}"));
    // The steps before it are done the moment they are offered.
    loop {
        let steps = run.s.try_this_statuses();
        if steps[i].enabled {
            return run;
        }
        assert!(run.t < 20 * MINUTE, "{label:?} is never offered");
        if let Some(j) = (0..i).find(|&j| steps[j].enabled && steps[j].done_at.is_none()) {
            run.s.run_try_this(j).expect("an earlier step");
            continue;
        }
        let t = run.t + SECOND;
        run.to(t);
    }
}

fn check(s: &Session, prefix: &str) -> kubeloop::sim::session::CheckStatus {
    s.checks()
        .into_iter()
        .find(|c| c.name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no check {prefix:?}"))
}

#[test]
fn deleting_the_pods_from_the_console_does_the_step_and_starts_its_checks() {
    let mut run = until_offered("thermostat", "Delete every web pod");
    let gap = "deleting pods opens a gap";
    assert_eq!(check(&run.s, gap).passed, None);
    assert_eq!(
        check(&run.s, gap).waiting_for.as_deref(),
        Some("after you delete every web pod")
    );
    // Nothing happens for a while: the check does not start on the clock.
    let t = run.t + 2 * MINUTE;
    run.to(t);
    assert_eq!(check(&run.s, gap).passed, None);
    assert!(check(&run.s, gap).waiting_for.is_some());
    let out = run.s.kubectl("delete pods -l app=web");
    assert!(out.ok, "{}", out.stderr);
    let done = run.s.try_this_statuses()[0].done_at;
    assert_eq!(done, Some(run.t), "the console's delete is the step");
    assert_eq!(check(&run.s, gap).waiting_for, None, "it watches now");
    let t = run.t + MINUTE;
    run.to(t);
    assert_eq!(
        check(&run.s, gap).passed,
        Some(true),
        "{:?}",
        check(&run.s, gap)
    );
}

#[test]
fn deleting_one_pod_is_not_deleting_every_pod() {
    let mut run = until_offered("thermostat", "Delete every web pod");
    let pod = run.live_pods("web")[0].metadata.name.to_string();
    let out = run.s.kubectl(&format!("delete pod {pod}"));
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(run.s.try_this_statuses()[0].done_at, None);
    // The same fault from the pod menu, on every pod, is the step.
    let f: kubeloop::sim::faults::Fault =
        serde_json::from_str(r#"{"type":"DeletePod","selector":"app=web"}"#).unwrap();
    let t = run.t + 40 * SECOND;
    run.to(t);
    run.s.inject(f).expect("deletes");
    assert_eq!(run.s.try_this_statuses()[0].done_at, Some(run.t));
}

#[test]
fn powering_off_the_node_from_its_menu_does_the_step() {
    let mut run = until_offered("node-dies", "Power off node-2");
    let f: kubeloop::sim::faults::Fault =
        serde_json::from_str(r#"{"type":"NodeDown","node":"node-2"}"#).unwrap();
    run.s.inject(f).expect("powers off");
    assert_eq!(run.s.try_this_statuses()[0].done_at, Some(run.t));
    let t = run.t + 3 * MINUTE;
    run.to(t);
    assert_eq!(
        check(&run.s, "about 50 s after its last heartbeat").passed,
        Some(true)
    );
    // Another node is another step.
    let mut other = until_offered("node-dies", "Power off node-2");
    let f: kubeloop::sim::faults::Fault =
        serde_json::from_str(r#"{"type":"NodeDown","node":"node-3"}"#).unwrap();
    other.s.inject(f).expect("powers off");
    assert_eq!(other.s.try_this_statuses()[0].done_at, None);
}

#[test]
fn fixing_the_spec_in_the_editor_does_the_set_image_step() {
    let mut run = until_offered(
        "fix-the-spec",
        "Fix the spec instead: set the image on the Deployment",
    );
    let text = lesson_text("fix-the-spec");
    let deployment = &text[text.rfind("---").expect("a manifest") + 4..];
    let edited = deployment.replace("nginx:1.27", "nginx:1.28");
    assert_ne!(edited, deployment);
    let report = run.s.apply_text("editor.yaml", &edited);
    assert!(report.ok, "{:?}", report.diagnostics);
    assert_eq!(run.s.try_this_statuses()[3].done_at, Some(run.t));
    // An apply that changes something else is not the step.
    let mut other = until_offered(
        "fix-the-spec",
        "Fix the spec instead: set the image on the Deployment",
    );
    let report = other.s.apply_text(
        "editor.yaml",
        &deployment.replace("replicas: 3", "replicas: 4"),
    );
    assert!(report.ok, "{:?}", report.diagnostics);
    assert_eq!(other.s.try_this_statuses()[3].done_at, None);
}

#[test]
fn the_timelines_own_steps_are_not_the_learners() {
    // level-vs-edge deletes every pod at 0:31 on its own; its try-this "Delete every web pod"
    // is not done by that, and nothing that follows it starts.
    let mut run = Run {
        s: Session::load("x.yaml", lesson_text("level-vs-edge"), None).expect("loads"),
        t: 0,
    };
    run.to(2 * MINUTE);
    assert!(run
        .s
        .try_this_statuses()
        .iter()
        .all(|s| s.done_at.is_none()));
    assert_eq!(
        check(&run.s, "level-triggered: deleting").passed,
        Some(true)
    );
    assert!(check(&run.s, "edge-triggered").waiting_for.is_some());
}

#[test]
fn a_step_is_offered_only_after_what_it_follows() {
    let mut s = Session::load("x.yaml", lesson_text("level-vs-edge"), None).expect("loads");
    let steps = s.try_this_statuses();
    assert!(!steps[1].enabled);
    assert_eq!(
        steps[1].waiting_for.as_deref(),
        Some("after you make the ReplicaSet controller edge-triggered (a teaching device)")
    );
    let err = s.run_try_this(1).unwrap_err();
    assert!(
        err.starts_with("not yet: this step comes after you make"),
        "{err}"
    );
}

#[test]
fn play_the_lesson_lets_the_timeline_do_the_steps_left_after_the_learner_did_some() {
    let mut run = until_offered("thermostat", "Delete every web pod");
    run.s.run_try_this(0).expect("the learner deletes the pods");
    let t = run.t + 10 * MINUTE;
    run.to(t);
    assert!(run.s.try_this_statuses()[1].done_at.is_none());
    // Past their `at:` already: the timeline does them as soon as each is offered.
    assert_eq!(run.s.script_try_this(), 2);
    let t = run.t + 15 * MINUTE;
    run.to(t);
    assert!(run
        .s
        .try_this_statuses()
        .iter()
        .all(|s| s.done_at.is_some()));
    for c in run.s.checks() {
        assert_eq!(c.passed, Some(true), "{}: {}", c.name, c.message);
    }
}

#[test]
fn a_command_typed_into_the_console_with_its_standard_input_does_the_step_too() {
    let mut run = until_offered("thermostat", "Delete every web pod");
    let out = run
        .s
        .kubectl_with_input("kubectl delete pods -l app=web", None);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(run.s.try_this_statuses()[0].done_at, Some(run.t));
}

#[test]
fn run_to_completion_failures_are_counted_once_and_retried_after_a_doubling_back_off() {
    let mut r = Run::start("run-to-completion");
    r.finish("run-to-completion");
    let mut get = |what: &str, path: &str| {
        r.s.kubectl(&format!("get {what} -o jsonpath={path}"))
            .stdout
    };
    assert_eq!(get("job report", "{.status.failed}"), "2");
    assert_eq!(get("job report", "{.status.succeeded}"), "1");
    assert_eq!(get("job strict", "{.status.failed}"), "2");
    assert_eq!(
        get("job strict", "{.status.conditions[*].type}"),
        "Suspended FailureTarget Failed"
    );
    assert_eq!(
        get("job strict", "{.status.conditions[2].reason}"),
        "BackoffLimitExceeded"
    );
    // report's pods: each replacement waited out the back-off after the failure before it.
    let mut report: Vec<(u64, u64)> =
        r.s.sim
            .api()
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.metadata.name.starts_with("report-"))
            .map(|p| {
                let created = p.metadata.creation_timestamp.map_or(0, |t| t.0);
                let finished = p.status.container_statuses[0]
                    .state
                    .terminated
                    .as_ref()
                    .and_then(|t| t.finished_at)
                    .map_or(0, |t| t.0);
                (created, finished)
            })
            .collect();
    report.sort();
    assert_eq!(report.len(), 3);
    let waits: Vec<u64> = report
        .windows(2)
        .map(|w| (w[1].0 - w[0].1) / SECOND)
        .collect();
    assert!((10..=11).contains(&waits[0]), "{waits:?}");
    assert!((20..=21).contains(&waits[1]), "{waits:?}");
}

#[test]
fn the_non_idempotent_world_leaves_claims_the_template_cannot_describe_or_undo() {
    let mut r = Run::start("non-idempotent-world");
    r.finish("non-idempotent-world");
    let commands = r.commands();
    assert!(
        commands.contains("The StatefulSet \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than"),
        "{commands}"
    );
    assert!(
        commands.contains("The PersistentVolumeClaim \"data-db-0\" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"),
        "{commands}"
    );
    let mut get = |what: &str, path: &str| {
        r.s.kubectl(&format!("get {what} -o jsonpath={path}"))
            .stdout
    };
    assert_eq!(get("pvc data-db-0", "{.status.capacity.storage}"), "2Gi");
    assert_eq!(get("pvc data-db-1", "{.status.capacity.storage}"), "1Gi");
    assert_eq!(get("pvc data-db-2", "{.status.capacity.storage}"), "1Gi");
    assert_eq!(
        get("pod db-0", "{.status.containerStatuses[0].restartCount}"),
        "0"
    );
}

#[test]
fn at_most_one_replaces_the_deployments_pod_at_once_and_web_1_only_once_its_node_is_out_of_service()
{
    let mut r = Run::start("at-most-one");
    r.finish("at-most-one");
    let mut get = |what: &str, path: &str| {
        r.s.kubectl(&format!("get {what} -o jsonpath={path}"))
            .stdout
    };
    assert_eq!(get("pod web-1", "{.spec.nodeName}"), "node-3");
    let pv = get("pvc www-web-1", "{.spec.volumeName}");
    assert_eq!(
        get(
            &format!("pv {pv}"),
            "{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}"
        ),
        "zone-a"
    );
    // The api pods all run on live nodes; none is left on node-1.
    let api_nodes = get("pods -l app=api", "{.items[*].spec.nodeName}");
    assert!(!api_nodes.contains("node-1"), "{api_nodes}");
    let gc = crate::support::events(&r.s, "Pod", Some("web-1"));
    assert!(
        gc.iter()
            .any(|(reason, _)| reason == "TaintManagerEviction"),
        "{gc:?}"
    );
}
