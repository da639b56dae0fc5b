//! The battery's faults really happen: a schedule that misses its moment (a child not there yet,
//! a crash point no pass reaches) would pass every controller and prove nothing.

use super::schedule::Schedule;
use super::*;
use crate::sim::faults::Fault;
use crate::sim::machinery::trace::Delivery;

const WEBSITE: &str = include_str!("../../../tests/fixtures/controllers/website.yaml");

/// Each schedule of the example's battery with the trace of its run.
fn runs_of_the_example() -> Vec<(Schedule, Session)> {
    let decoded = decode::decode_manifests("website.yaml", WEBSITE);
    let doc = pick("website.yaml", &decoded, None).expect("one controller");
    let id = ComponentId::Script(crate::sim::api::types::Str::from(doc.name.as_str()));
    let kinds = Kinds {
        primary: doc.primary.resolve().expect("served once loaded"),
        owned: doc.owns.iter().filter_map(|t| t.resolve()).collect(),
    };
    let quiet = quiet_window(doc.resync);
    let base = run(
        Session::load("website.yaml", WEBSITE, None).expect("loads"),
        &id,
        &kinds,
        0,
        quiet,
    );
    let landmarks = landmarks(&base, &id.name(), &kinds);
    schedule::battery(&landmarks)
        .into_iter()
        .map(|sched| {
            let text =
                reproduce::scenario_text(WEBSITE, decoded.scenario.as_ref(), "t", 1, &sched.steps);
            let mut s = Session::load("website.yaml", &text, None).expect("the run loads");
            s.advance_to(sched.quiet_from + quiet, usize::MAX);
            (sched, s)
        })
        .collect()
}

#[test]
fn every_fault_of_the_battery_takes_effect_on_the_example_controller() {
    let runs = runs_of_the_example();
    assert_eq!(runs.len(), 7);
    for (sched, s) in &runs {
        let trace: Vec<&TraceKind> = s.sim.trace().entries().map(|e| &e.kind).collect();
        let faults = |name: &str| {
            trace
                .iter()
                .filter_map(|k| match k {
                    TraceKind::Fault { fault, description } if fault == name => {
                        Some(description.as_str())
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        for step in &sched.steps {
            match &step.action {
                schedule::Action::Kubectl(cmd) => assert!(
                    trace.iter().any(|k| matches!(k,
                        TraceKind::Command { command, ok: true, .. } if command.ends_with(cmd.as_str()))),
                    "{cmd} ran: {}",
                    sched.description
                ),
                schedule::Action::Fault(Fault::RestartController { .. }) => {
                    assert!(!faults("RestartController").is_empty())
                }
                schedule::Action::Fault(Fault::ConflictingWriter { .. }) => {
                    let heals = faults("ConflictingWriter");
                    assert!(
                        heals
                            .iter()
                            .any(|d| d.contains("after racing") && !d.contains("racing 0 ")),
                        "{heals:?}"
                    );
                }
                schedule::Action::Fault(Fault::DropWatchEvents { component, .. }) => {
                    assert!(
                        trace.iter().any(|k| matches!(k,
                            TraceKind::Watch { component: c, delivery: Delivery::Dropped, .. }
                                if &**c == component.as_str())),
                        "an event was lost: {}",
                        sched.description
                    );
                }
                schedule::Action::Fault(Fault::CrashMidReconcile { .. }) => {
                    assert!(
                        faults("CrashMidReconcile")
                            .iter()
                            .any(|d| d.contains("died in the middle of a pass")),
                        "the crash sprang: {}",
                        sched.description
                    );
                }
                other => panic!("a step the test does not know: {other:?}"),
            }
        }
    }
}
