//! The download-size check of `make build` (scripts/size-report.js against scripts/size-budget.json):
//! it finds the first-paint files from index.html, and it fails the build past the budget.
//!
//! Each test builds a small fake dist/ in a temporary directory and runs the real script on it with
//! node (installed by `make tools`, as for the e2e suite), so the failure path is exercised without
//! a release build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;

/// A fresh temporary directory for one test (removed when dropped).
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("kubeloop-size-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www")).expect("create temp dist");
        TempDir(dir)
    }

    fn write(&self, rel: &str, bytes: &[u8]) {
        std::fs::write(self.0.join(rel), bytes).expect("write temp file");
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bytes that do not compress (a fixed xorshift stream), so the compressed size is about `n`.
fn incompressible(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A dist/ shaped like trunk's output for a build under the sub-path /kubeloop/: an index.html
/// naming a stylesheet, the loader, the JS glue and ~40 kB of wasm; the loader imports crash.js;
/// an embed SDK sits beside it, fetched by nobody.
fn fake_dist(name: &str) -> TempDir {
    let d = TempDir::new(name);
    d.write(
        "index.html",
        br#"<!doctype html><html><head>
<link rel="icon" href="data:," />
<link rel="stylesheet" href="/kubeloop/style-1.css" />
<script type="module" src="/kubeloop/www/boot.js" data-kubeloop-js="/kubeloop/app-1.js" data-kubeloop-wasm="/kubeloop/app-1_bg.wasm"></script>
<link rel="modulepreload" href="/kubeloop/app-1.js"><link rel="preload" href="/kubeloop/app-1_bg.wasm" as="fetch">
</head><body></body></html>"#,
    );
    d.write("style-1.css", b"body { margin: 0 }\n");
    d.write(
        "www/boot.js",
        b"const crash = await import('./crash.js');\nawait import(tag.dataset.kubeloopJs);\n",
    );
    d.write("www/crash.js", b"export function bootFailed() {}\n");
    d.write("www/kubeloop-embed.js", b"// the embed SDK\n");
    d.write("app-1.js", b"export default async function init() {}\n");
    d.write("app-1_bg.wasm", &incompressible(40_000));
    d
}

fn budget(dir: &TempDir, budget_kb: f64) -> PathBuf {
    let file = dir.0.join("budget.json");
    let json = format!(
        r#"{{"compression": "gzip", "budgetKB": {budget_kb}, "goalKB": 300, "marginKB": 5}}"#
    );
    std::fs::write(&file, json).expect("write budget");
    file
}

fn report(dist: &Path, budget: &Path) -> Output {
    let script = format!("{}/scripts/size-report.js", env!("CARGO_MANIFEST_DIR"));
    Command::new("node")
        .arg(script)
        .arg(dist)
        .arg("--budget")
        .arg(budget)
        .output()
        .expect("node runs (make tools installs it)")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The first table of the report: the first-paint files, one per line, up to the TOTAL line.
fn first_paint_section(out: &str) -> String {
    out.split("Published beside")
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_download_within_its_budget_passes_and_prints_the_goal_and_the_budget() {
    let d = fake_dist("within");
    let b = budget(&d, 100.0);
    let o = report(&d.0, &b);
    let out = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("goal (issue #10):        300 kB"), "{out}");
    assert!(out.contains("100 kB  ok"), "{out}");
}

#[test]
fn a_download_past_its_budget_fails_the_build_with_both_figures() {
    let d = fake_dist("past");
    let b = budget(&d, 10.0);
    let o = report(&d.0, &b);
    let out = stdout(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(out.contains("EXCEEDED by"), "{out}");
    assert!(
        out.contains("300 kB  not met") || out.contains("300 kB  met"),
        "{out}"
    );
    assert!(err.contains("over its budget of 10 kB"), "{err}");
}

#[test]
fn the_first_paint_counts_what_index_html_names_and_what_its_scripts_import() {
    let d = fake_dist("files");
    let b = budget(&d, 100.0);
    let out = stdout(&report(&d.0, &b));
    let first = first_paint_section(&out);
    for f in [
        "index.html",
        "style-1.css",
        "www/boot.js",
        "www/crash.js",
        "app-1.js",
        "app-1_bg.wasm",
    ] {
        assert!(
            first.contains(f),
            "{f} missing from the first paint:\n{out}"
        );
    }
    assert!(
        !first.contains("kubeloop-embed.js"),
        "the embed SDK is not fetched by the app:\n{out}"
    );
    assert!(out.contains("www/kubeloop-embed.js"), "{out}");
}

#[test]
fn the_checked_in_budget_keeps_the_issue_goal_and_a_small_margin() {
    let path = format!("{}/scripts/size-budget.json", env!("CARGO_MANIFEST_DIR"));
    let json: Json = serde_json::from_str(&std::fs::read_to_string(&path).expect("budget file"))
        .expect("valid JSON");
    assert_eq!(json["goalKB"], 300, "issue #10: 300 kB compressed");
    let budget = json["budgetKB"].as_f64().expect("budgetKB");
    let margin = json["marginKB"].as_f64().expect("marginKB");
    assert!(budget > 0.0, "a budget in kB");
    assert!(
        margin > 0.0 && margin <= budget * 0.1,
        "a small margin over the measured size"
    );
    assert!(matches!(
        json["compression"].as_str(),
        Some("gzip" | "brotli")
    ));
}
