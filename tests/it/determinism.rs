//! Determinism: the same scenario and seed give the same trace, run after run and on every target.

use crate::common;

#[test]
fn the_same_scenario_gives_the_same_trace_twice() {
    assert_eq!(common::fingerprint(), common::fingerprint());
}

#[test]
fn the_native_trace_matches_the_committed_fingerprint_the_wasm_test_also_checks() {
    let got = common::fingerprint();
    if std::env::var_os("UPDATE_DETERMINISM").is_some() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/snapshots/determinism-fingerprint.txt"
        );
        std::fs::write(path, format!("{} {:016x}\n", got.0, got.1)).expect("writable");
        return;
    }
    assert_eq!(
        got,
        common::expected(),
        "the simulation's behaviour changed; if intended, run `UPDATE_DETERMINISM=1 cargo test --test it determinism::` and commit the new fingerprint"
    );
}

#[test]
fn a_learners_controller_gives_the_same_trace_twice_and_the_committed_one() {
    let got = common::script_fingerprint();
    assert_eq!(got, common::script_fingerprint());
    if std::env::var_os("UPDATE_DETERMINISM").is_some() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/snapshots/script-determinism-fingerprint.txt"
        );
        std::fs::write(path, format!("{} {:016x}\n", got.0, got.1)).expect("writable");
        return;
    }
    assert_eq!(got, common::script_expected());
}

/// What the page runs for tests/e2e/controllers.spec.js's fingerprint: the scenario opened as the
/// page opens it (`Playground::load_scenario`) and advanced three minutes as `kubeloop.advance`
/// does. The page runs the controller through its engine module and the JSON bridge; this runs
/// the interpreter in-process. Both must give the committed fingerprint.
#[test]
fn a_learners_controller_in_the_playground_gives_the_fingerprint_the_page_must_give() {
    let text = include_str!("../fixtures/controllers/website-scenario.yaml");
    let mut p = kubeloop::viewmodel::Playground::new(1);
    p.load_scenario(text, None).expect("the scenario opens");
    p.advance_by(180_000);
    let got = p.session.sim.trace().fingerprint();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/page-controller-fingerprint.txt"
    );
    if std::env::var_os("UPDATE_DETERMINISM").is_some() {
        std::fs::write(path, format!("{got}\n")).expect("writable");
        return;
    }
    let expected = std::fs::read_to_string(path).expect("the committed fingerprint");
    assert_eq!(got, expected.trim());
    let restarted = p.session.sim.trace().entries().any(|e| {
        matches!(
            &e.kind,
            kubeloop::sim::machinery::trace::TraceKind::Fault { .. }
        )
    });
    assert!(restarted, "the restart happened");
}

#[test]
fn the_fingerprinted_scenario_really_grows_a_disk_reattaches_one_and_retries_a_job() {
    use kubeloop::sim::session::Session;
    let mut s = Session::load("determinism.yaml", common::SCENARIO, None).expect("loads");
    s.advance_to(8 * 60_000, usize::MAX);
    let mut get =
        |what: &str, path: &str| s.kubectl(&format!("get {what} -o jsonpath={path}")).stdout;
    assert_eq!(get("pvc data-db-1", "{.status.capacity.storage}"), "2Gi");
    assert_eq!(
        get("job once", "{.status.failed},{.status.succeeded}"),
        "1,1"
    );
    // data-db-2's disk, lost at 50 s, was found out and attached again.
    let reattached = s.sim.trace().entries().any(|e| {
        matches!(&e.kind, kubeloop::sim::machinery::trace::TraceKind::Reconcile(tr)
            if &*tr.component == "csi-disk-controller"
                && tr.record.as_ref().is_some_and(|r| r.observed.starts_with("ListVolumes: not attached")))
    });
    assert!(reattached);
}

#[test]
fn a_run_replayed_from_its_journal_gives_the_same_trace_natively() {
    let (run, replayed, _) = common::run_and_replay();
    assert_eq!(replayed, run);
}

#[test]
fn a_run_goes_on_from_a_snapshot_as_from_the_original_natively() {
    let (run, _, from_snapshot) = common::run_and_replay();
    assert_eq!(from_snapshot, run);
}
