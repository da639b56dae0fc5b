//! Runs in headless Chromium via wasm-bindgen-test-runner (`make test-wasm`), so the wasm build of
//! the library is exercised, not just the native one. Integration tests named `tests/wasm*.rs`
//! are the ones `make test-wasm` runs; everything else in tests/ is native-only.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn time_formats_as_rfc3339_in_the_browser() {
    assert_eq!(
        kubeloop::sim::api::types::Time(90_061_000).to_rfc3339(),
        "2026-01-02T01:01:01Z"
    );
}

#[wasm_bindgen_test]
fn without_its_engine_module_the_page_refuses_a_controller_document_at_its_kind() {
    let text = include_str!("fixtures/controllers/website.yaml");
    let decoded = kubeloop::sim::input::decode::decode_manifests("website.yaml", text);
    assert!(decoded.controllers.is_empty());
    let refusal = decoded
        .diagnostics
        .iter()
        .find(|d| d.message == kubeloop::sim::input::controller_doc::NO_ENGINE)
        .expect("the Controller document is refused with the reason");
    let line = 1 + text
        .lines()
        .position(|l| l == "kind: Controller")
        .expect("the fixture has one") as u32;
    assert_eq!((refusal.line, refusal.col), (line, 1));
}
