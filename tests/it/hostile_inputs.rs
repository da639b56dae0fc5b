//! The hostile-input corpus in `tests/fixtures/hostile/`: each file is refused with a clear
//! message, never a panic. With `--nocapture` the test also prints how long each one took
//! (it does not assert on time: machines differ; the budgets in `sim::yaml` bound the work).

use std::time::Instant;

use kubeloop::sim::input::decode::{decode_manifest_bytes, Decoded};
use kubeloop::sim::input::diagnostic::Severity;

fn corpus(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/hostile/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    if name.ends_with(".zz") {
        miniz_oxide::inflate::decompress_to_vec_zlib(&bytes).expect("valid zlib data")
    } else {
        bytes
    }
}

#[allow(clippy::disallowed_methods)] // prints how long decoding took; asserts nothing on it
fn decode_timed(name: &str) -> Decoded {
    let bytes = corpus(name);
    let started = Instant::now();
    let decoded = decode_manifest_bytes(name, &bytes);
    let elapsed = started.elapsed();
    println!(
        "{name:<28} {:>9} bytes  {:>8.3} ms",
        bytes.len(),
        elapsed.as_secs_f64() * 1e3
    );
    decoded
}

fn first_error(d: &Decoded) -> String {
    d.diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .unwrap_or_else(|| panic!("expected an error, got {:?}", d.diagnostics))
}

#[test]
fn every_hostile_input_is_refused_with_a_clear_message() {
    let cases = [
        (
            "deep-flow-nesting.yaml",
            "deep-flow-nesting.yaml:5:",
            "exceeded max depth of 32",
        ),
        (
            "deep-block-nesting.yaml",
            "deep-block-nesting.yaml:5:",
            "exceeded max depth of 32",
        ),
        (
            "alias-bomb.yaml",
            "alias-bomb.yaml:",
            "document contains excessive aliasing",
        ),
        (
            "alias-bomb-72k.yaml",
            "alias-bomb-72k.yaml:",
            "document contains excessive aliasing",
        ),
        (
            "big-scalar.yaml.zz",
            "big-scalar.yaml.zz:1:1:",
            "more than the limit of 1048576 bytes (1 MiB)",
        ),
        (
            "many-nodes.yaml",
            "many-nodes.yaml:3:",
            "document is too large: more than 25000 nodes",
        ),
        (
            "many-documents.yaml",
            "many-documents.yaml:",
            "more than 1000 documents",
        ),
        (
            "invalid-utf8.yaml",
            "invalid-utf8.yaml:4:12:",
            "yaml: line 4: invalid leading UTF-8 octet 0xE9",
        ),
        (
            "control-characters.yaml",
            "control-characters.yaml:6:",
            "control characters are not allowed",
        ),
        (
            "long-key.yaml",
            "long-key.yaml:4:",
            "error converting YAML to JSON: yaml: line 4:",
        ),
    ];
    println!("{:<28} {:>15}  {:>11}", "input", "size", "time");
    for (name, position, message) in cases {
        let d = decode_timed(name);
        assert!(d.objects.is_empty(), "{name} produced objects");
        let err = first_error(&d);
        assert!(err.starts_with(position), "{name}: {err}");
        assert!(err.contains(message), "{name}: {err}");
    }
}

#[test]
fn hostile_names_are_refused_and_echoed_escaped() {
    let d = decode_timed("html-names.yaml");
    assert!(d.objects.is_empty());
    let rendered: Vec<String> = d.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(rendered[0].starts_with(
        "html-names.yaml:4:3: Deployment.apps \"<img src=x onerror=alert(1)>\" is invalid: metadata.name: Invalid value: \"<img src=x onerror=alert(1)>\": a lowercase RFC 1123 subdomain"
    ), "{rendered:#?}");
    assert!(
        rendered
            .iter()
            .any(|r| r
                .contains("spec.template.spec.containers[0].name: Invalid value: \"<script>\"")),
        "{rendered:#?}"
    );

    let d = decode_timed("escaped-control-name.yaml");
    let err = first_error(&d);
    assert!(
        err.contains("metadata.name: Invalid value: \"web\\x07\\r\\n\""),
        "{err}"
    );
}

#[test]
#[allow(clippy::disallowed_methods)] // prints how long decoding took; asserts nothing on it
fn a_large_legitimate_file_still_loads() {
    let doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-NAME\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        resources: {requests: {cpu: 100m, memory: 64Mi}}\n";
    let text: String = (0..500)
        .map(|i| format!("---\n{}", doc.replace("NAME", &i.to_string())))
        .collect();
    let started = Instant::now();
    let d = decode_manifest_bytes("big.yaml", text.as_bytes());
    println!(
        "500 Deployments ({} bytes): {:.3} ms",
        text.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    assert!(!d.has_errors(), "{:?}", d.diagnostics.first());
    assert_eq!(d.objects.len(), 500);
}
