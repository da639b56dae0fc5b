//! "Check my controller": learners' controllers run through the checker's battery of faults,
//! judged convergent, level-triggered and idempotent, each failure with a scenario that replays
//! it, the same way every time.

use kubeloop::sim::api::types::Kind;
use kubeloop::sim::controller_check::{check_controller, Property, Report, Verdict};
use kubeloop::sim::session::Session;

use crate::support::kubeloop;

const GOOD: &str = include_str!("../fixtures/controllers/website.yaml");
const EDGE: &str = include_str!("../fixtures/controllers/website-edge-triggered.yaml");
const GENERATE_NAME: &str = include_str!("../fixtures/controllers/website-generate-name.yaml");
const THROWS: &str = include_str!("../fixtures/controllers/website-throws.yaml");
const FLIPS: &str = include_str!("../fixtures/controllers/website-flips.yaml");

fn check(text: &str) -> Report {
    match check_controller("website.yaml", text, None) {
        Ok(r) => r,
        Err(d) => panic!("the file is refused: {d:?}"),
    }
}

fn verdict(report: &Report, property: Property) -> &Verdict {
    report
        .verdicts
        .iter()
        .find(|v| v.property == property)
        .expect("every property has a verdict")
}

/// How many Deployments Website `web` controls in a run of `text` to ten simulated minutes.
fn owned_deployments_after_running(text: &str) -> usize {
    let mut s = Session::load("repro.yaml", text, None).expect("the scenario loads");
    s.advance_to(10 * 60_000, usize::MAX);
    s.sim
        .api()
        .list(Kind::Deployment)
        .filter(|o| {
            o.meta()
                .controller_ref()
                .is_some_and(|r| r.kind == "Website" && r.name == "web")
        })
        .count()
}

#[test]
fn the_example_controller_is_convergent_level_triggered_and_idempotent() {
    let report = check(GOOD);
    assert_eq!(report.controller, "website");
    assert_eq!(
        report
            .verdicts
            .iter()
            .map(|v| v.property)
            .collect::<Vec<_>>(),
        Property::ALL
    );
    for v in &report.verdicts {
        assert!(v.passed, "{v:?}");
        assert_eq!(v.failing_schedule, None);
        assert_eq!(v.reproduce, None);
    }
    assert!(report.passed());
    // The fault-free run, three disturbances, two watch faults, a crash before and after its
    // first request (its first pass creates the Deployment and writes the status).
    assert_eq!(report.runs, 8, "{report:?}");
}

#[test]
fn a_controller_acting_on_its_memory_fails_level_triggered_naming_the_lost_events() {
    let report = check(EDGE);
    let level = verdict(&report, Property::LevelTriggered);
    assert!(!level.passed);
    assert_eq!(
        level.summary,
        "With the DELETED watch events of its Deployments lost for 30s and Deployment web \
deleted by hand, 0 Deployments are owned by Website web (the fault-free run has 1)."
    );
    let schedule = level.failing_schedule.as_deref().expect("a schedule");
    assert!(schedule.contains("DELETED watch events"), "{schedule}");
    // It remembers what it made, so a Deployment deleted in plain sight is not made again either.
    let convergent = verdict(&report, Property::Convergent);
    assert!(!convergent.passed);
    assert!(
        convergent
            .summary
            .starts_with("After Deployment web was deleted by hand, 0 Deployments"),
        "{}",
        convergent.summary
    );
    assert!(verdict(&report, Property::Idempotent).passed);
}

#[test]
fn a_controller_creating_with_generate_name_and_remembering_it_in_status_fails_idempotent_with_duplicates(
) {
    let report = check(GENERATE_NAME);
    let idempotent = verdict(&report, Property::Idempotent);
    assert!(!idempotent.passed);
    assert_eq!(
        idempotent.summary,
        "After a crash after its 1st request, 2 Deployments are owned by Website web (the \
fault-free run has 1)."
    );
    assert!(
        idempotent
            .failing_schedule
            .as_deref()
            .is_some_and(|s| s.contains("CrashMidReconcile afterRequests: 1")),
        "{idempotent:?}"
    );
    // It repairs a deleted Deployment and survives lost events: only the crash breaks it.
    assert!(verdict(&report, Property::Convergent).passed, "{report:?}");
    assert!(
        verdict(&report, Property::LevelTriggered).passed,
        "{report:?}"
    );
}

#[test]
fn a_controller_that_throws_every_pass_fails_convergent_with_its_error() {
    let report = check(THROWS);
    let convergent = verdict(&report, Property::Convergent);
    assert!(!convergent.passed);
    assert_eq!(
        convergent.summary,
        "Without any fault it never settles: its passes keep failing: TypeError: Cannot read \
properties of undefined (reading 'replicas') (line 3, column 28)."
    );
    assert_eq!(
        report.runs, 1,
        "nothing else is run when the fault-free run fails"
    );
    for p in [Property::LevelTriggered, Property::Idempotent] {
        let v = verdict(&report, p);
        assert!(!v.passed && v.summary.starts_with("Not checked"), "{v:?}");
    }
}

#[test]
fn a_controller_that_flips_a_field_every_pass_fails_convergent_as_it_keeps_writing() {
    let report = check(FLIPS);
    let convergent = verdict(&report, Property::Convergent);
    assert!(!convergent.passed);
    assert!(
        convergent
            .summary
            .starts_with("Without any fault it never settles: it keeps writing (")
            && convergent
                .summary
                .ends_with("the last: update/status Website/default/web)."),
        "{}",
        convergent.summary
    );
}

#[test]
fn the_scenario_of_a_duplicating_crash_shows_the_duplicates_when_loaded_and_run() {
    let report = check(GENERATE_NAME);
    let text = verdict(&report, Property::Idempotent)
        .reproduce
        .clone()
        .expect("a failing verdict has a scenario");
    assert!(
        text.starts_with(GENERATE_NAME.trim_end()),
        "the learner's file comes first"
    );
    assert!(text.contains("type: CrashMidReconcile"), "{text}");
    assert_eq!(owned_deployments_after_running(&text), 2);
    // Without the crash the same file makes one.
    assert_eq!(owned_deployments_after_running(GENERATE_NAME), 1);
}

#[test]
fn the_scenario_of_a_lost_delete_shows_the_deployment_missing_when_loaded_and_run() {
    let report = check(EDGE);
    let text = verdict(&report, Property::LevelTriggered)
        .reproduce
        .clone()
        .expect("a failing verdict has a scenario");
    assert!(text.contains("eventType: DELETED"), "{text}");
    assert!(
        text.contains("kubectl: delete deployments.apps web -n default"),
        "{text}"
    );
    assert_eq!(owned_deployments_after_running(&text), 0);
}

#[test]
fn a_file_with_a_scenario_keeps_its_seed_and_steps_and_gets_the_failing_runs_steps_after_them() {
    let scenario = "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: mine}
spec:
  seed: 7
  nodes: {count: 2}
  steps:
  - {at: 1s, kubectl: get websites}
---
";
    let text = format!("{scenario}{GENERATE_NAME}");
    let report = check_controller("website.yaml", &text, Some("website")).expect("checked");
    assert_eq!(report.seed, 7);
    let repro = verdict(&report, Property::Idempotent)
        .reproduce
        .clone()
        .expect("it fails idempotent with any seed");
    assert_eq!(repro.matches("kind: Scenario").count(), 1, "{repro}");
    let s = Session::load("repro.yaml", &repro, None).expect("the merged scenario loads");
    assert_eq!(s.sim.config().seed, 7);
    assert_eq!(s.scenario.metadata.name, "mine");
    assert_eq!(s.scenario.spec.nodes.as_ref().map(|n| n.count), Some(2));
    let steps: Vec<(&str, bool)> = s
        .scenario
        .spec
        .steps
        .iter()
        .map(|st| (st.at.as_str(), st.fault.is_some()))
        .collect();
    assert_eq!(steps, [("1s", false), ("0s", true)]);
    assert!(
        repro.ends_with(GENERATE_NAME),
        "the rest of the file is kept as written"
    );
    assert_eq!(owned_deployments_after_running(&repro), 2);
}

#[test]
fn the_check_is_deterministic() {
    assert_eq!(check(GENERATE_NAME), check(GENERATE_NAME));
    assert_eq!(check(EDGE), check(EDGE));
    assert_eq!(check(GOOD), check(GOOD));
}

#[test]
fn a_file_without_a_controller_or_with_an_unknown_one_is_refused_with_a_diagnostic() {
    let messages = |text: &str, name: Option<&str>| -> Vec<String> {
        match check_controller("f.yaml", text, name) {
            Ok(r) => panic!("checked: {r:?}"),
            Err(d) => d.iter().map(|d| d.to_string()).collect(),
        }
    };
    let website_only = GOOD
        .split("\n---\n")
        .filter(|d| !d.contains("kind: Controller"))
        .collect::<Vec<_>>()
        .join("\n---\n");
    assert_eq!(
        messages(&website_only, None),
        ["f.yaml:1:1: the file has no Controller document (kubeloop.dev/v1alpha1) to check"]
    );
    assert_eq!(
        messages(GOOD, Some("blog")),
        ["f.yaml:1:1: the file has no controller \"blog\" (it has: website)"]
    );
    let without_website = GOOD
        .split("\n---\n")
        .filter(|d| !d.contains("kind: Website\nmetadata"))
        .collect::<Vec<_>>()
        .join("\n---\n");
    assert_eq!(
        messages(&without_website, None),
        ["f.yaml:1:1: controller website: the file has no Website for it to reconcile: add one to check it"]
    );
    let broken = GOOD.replace("if (!site) return;", "if (!site return;");
    let m = messages(&broken, None);
    assert!(
        m.len() == 1 && m[0].contains("spec.source: SyntaxError"),
        "{m:?}"
    );
}

#[test]
fn the_report_serializes_for_the_page() {
    let report = check(GENERATE_NAME);
    let json = serde_json::to_value(&report).expect("serializes");
    assert_eq!(json["controller"], "website");
    assert_eq!(json["verdicts"][1]["property"], "level-triggered");
    assert_eq!(json["verdicts"][2]["passed"], false);
    assert!(json["verdicts"][2]["failingSchedule"].is_string());
    assert!(json["verdicts"][2]["reproduce"].is_string());
}

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/controllers/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn kubeloop_check_prints_a_line_per_property_and_exits_zero_when_all_hold() {
    let (code, out, err) = kubeloop(&["check", &fixture("website.yaml")]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Checked controller website (8 runs, seed 1).");
    assert!(lines[2].starts_with("PASS      convergent — "), "{out}");
    assert!(
        lines[3].starts_with("PASS      level-triggered — "),
        "{out}"
    );
    assert!(lines[4].starts_with("PASS      idempotent — "), "{out}");
}

#[test]
fn kubeloop_check_exits_one_with_the_failing_schedule_and_a_link_that_replays_it() {
    let (code, out, err) = kubeloop(&[
        "check",
        &fixture("website-generate-name.yaml"),
        "--controller",
        "website",
    ]);
    assert_eq!(code, 1, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("FAIL      idempotent — After a crash after its 1st request, 2 Deployments are owned by Website web (the fault-free run has 1).\n          schedule: the first pass that sends more than 1 request dies"),
        "{out}"
    );
    let link = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("reproduce: kubeloop run '"))
        .and_then(|l| l.strip_suffix('\''))
        .expect("a reproduce line");
    // The link replays the failing run: `kubeloop run` shows two Deployments of Website web.
    let (code, out, err) = kubeloop(&["run", link, "--until", "5m"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let deployments = out
        .lines()
        .filter(|l| l.starts_with("deployment/web-"))
        .count();
    assert_eq!(deployments, 2, "{out}");
}

#[test]
fn kubeloop_check_exits_two_on_bad_input() {
    let (code, _, err) = kubeloop(&["check", &fixture("website.yaml"), "--controller", "blog"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the file has no controller \"blog\" (it has: website)"),
        "{err}"
    );
    let (code, _, err) = kubeloop(&["check"]);
    assert_eq!(code, 2);
    assert!(err.contains("kubeloop check needs a file"), "{err}");
    let (code, _, err) = kubeloop(&["check", "/no/such/file.yaml"]);
    assert_eq!(code, 2);
    assert!(err.contains("does not exist"), "{err}");
}

/// A lesson's file, split: the document its first `apply:` step applies, and its own documents
/// after the Scenario with the Controller left out.
fn lesson_parts(name: &str) -> (String, Vec<&'static str>, String) {
    let lesson = kubeloop::sim::examples::by_name(name).expect("the lesson");
    let docs: Vec<&'static str> = lesson.split("\n---\n").collect();
    let step = docs[0]
        .split("    apply: |\n")
        .nth(1)
        .expect("a step applies a document");
    let applied: String = step
        .lines()
        .take_while(|l| l.is_empty() || l.starts_with("      "))
        .map(|l| l.get(6..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let objects: Vec<&str> = docs[1..]
        .iter()
        .copied()
        .filter(|d| !d.contains("kind: Controller"))
        .collect();
    (applied, objects, docs[1..].join("\n---\n"))
}

#[test]
fn the_break_it_lessons_controller_fails_all_three_properties_and_its_fix_passes_them() {
    let (fix, objects, buggy) = lesson_parts("break-it-then-fix-it");
    let report = check(&buggy);
    for p in Property::ALL {
        assert!(!verdict(&report, p).passed, "{p:?} fails: {report:#?}");
    }
    let fixed = format!("{}\n---\n{fix}\n", objects.join("\n---\n"));
    let report = check(&fixed);
    assert!(report.passed(), "{report:#?}");
}

#[test]
fn your_first_controllers_answer_passes_all_three_properties() {
    let (answer, objects, _) = lesson_parts("your-first-controller");
    let text = format!("{}\n---\n{answer}\n", objects.join("\n---\n"));
    assert!(check(&text).passed());
}
