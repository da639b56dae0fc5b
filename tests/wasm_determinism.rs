//! The wasm build runs the same scenario to the same trace as the native build (one fingerprint).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;

#[path = "common/determinism.rs"]
mod common;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn the_wasm_trace_matches_the_native_fingerprint() {
    assert_eq!(common::fingerprint(), common::expected());
}

#[wasm_bindgen_test]
fn a_learners_controller_runs_to_the_native_fingerprint_in_wasm() {
    assert_eq!(common::script_fingerprint(), common::script_expected());
}

#[wasm_bindgen_test]
fn a_run_replayed_from_its_journal_gives_the_same_trace_in_wasm() {
    let (run, replayed, _) = common::run_and_replay();
    assert_eq!(replayed, run);
}

#[wasm_bindgen_test]
fn a_run_goes_on_from_a_snapshot_as_from_the_original_in_wasm() {
    let (run, _, from_snapshot) = common::run_and_replay();
    assert_eq!(from_snapshot, run);
}
