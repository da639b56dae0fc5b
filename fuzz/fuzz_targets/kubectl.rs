//! kubectl command lines (one per input line) against a small running cluster: every line
//! answers with output or an error, never a panic.
#![no_main]

use kubeloop::sim::session::Session;
use libfuzzer_sys::fuzz_target;

const CLUSTER: &str = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  seed: 3\n  nodes: {count: 2}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: \"nginx:1.27\"}]}\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut s = Session::load("fuzz.yaml", CLUSTER, None).expect("the base cluster loads");
    s.advance_to(5_000, usize::MAX);
    for line in text.lines().take(16) {
        let out = s.kubectl(line);
        assert!(
            out.ok || !out.stderr.is_empty(),
            "no error text for {line:?}"
        );
        let now = s.sim.now();
        s.advance_to(now + 2_000, 20_000);
    }
});
