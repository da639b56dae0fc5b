//! The CLI contract course authors and scripts rely on: exit codes, diagnostics, traces, links.

use crate::support::kubeloop;
use std::path::{Path, PathBuf};

/// A file in a directory of its own (for what the CLI writes beside it), removed with it when
/// the test ends, passing or not.
struct Temp(PathBuf);

impl std::ops::Deref for Temp {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn temp(name: &str, content: &str) -> Temp {
    let dir = std::env::temp_dir().join(format!("kubeloop-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    Temp(p)
}

const SCENARIO: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: converge}
spec:
  seed: 7
  nodes: {count: 3, cpu: "4", memory: 8Gi}
  checks:
  - name: web becomes available
    wait: deployment/web --for=condition=Available --timeout=2m
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"#;

#[test]
fn run_converges_prints_a_summary_and_exits_zero_when_every_check_passes() {
    let f = temp("ok.yaml", SCENARIO);
    let (code, out, err) = kubeloop(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("deployment/web"), "{out}");
    assert!(out.contains("PASS      web becomes available"), "{out}");
}

#[test]
fn run_exits_one_when_a_check_fails() {
    let text = SCENARIO.replace(
        "--for=condition=Available --timeout=2m",
        "--for=jsonpath='{.status.readyReplicas}'=4 --timeout=30s",
    );
    let f = temp("fail.yaml", &text);
    let (code, out, _) = kubeloop(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL"), "{out}");
}

#[test]
fn invalid_input_exits_two_with_file_line_and_column() {
    let f = temp(
        "bad.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: [\n",
    );
    let (code, _, err) = kubeloop(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("{}:", f.display())), "{err}");
    let parts: Vec<&str> = first.splitn(4, ':').collect();
    assert!(
        parts[1].parse::<u32>().is_ok() && parts[2].parse::<u32>().is_ok(),
        "{first}"
    );
}

#[test]
fn the_same_seed_writes_byte_identical_traces() {
    let f = temp("trace.yaml", SCENARIO);
    let dir = f.parent().unwrap().to_path_buf();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    for t in [&a, &b] {
        let (code, _, err) = kubeloop(&[
            "run",
            f.to_str().unwrap(),
            "--until",
            "90s",
            "--trace",
            t.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let (ta, tb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(ta.len() > 1000);
    assert_eq!(ta, tb);
    let text = String::from_utf8(ta).unwrap();
    let event = text
        .lines()
        .find(|l| l.contains(r#""type":"event""#))
        .expect("an event line");
    let v: serde_json::Value = serde_json::from_str(event).unwrap();
    for field in ["t", "eventType", "reason", "message", "object", "source"] {
        assert!(v.get(field).is_some(), "{field} missing in {event}");
    }
    let api = text
        .lines()
        .find(|l| l.contains(r#""type":"api""#))
        .expect("an api line");
    let v: serde_json::Value = serde_json::from_str(api).unwrap();
    for field in ["t", "actor", "verb", "object", "code"] {
        assert!(v.get(field).is_some(), "{field} missing in {api}");
    }
}

#[test]
fn final_writes_every_object_as_a_kubernetes_list() {
    let f = temp("final.yaml", SCENARIO);
    let out = f.parent().unwrap().join("final-out.yaml");
    let (code, _, err) = kubeloop(&[
        "run",
        f.to_str().unwrap(),
        "--until",
        "60s",
        "--final",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(out).unwrap();
    assert!(
        text.starts_with("apiVersion: v1\nitems:\n"),
        "{}",
        &text[..200.min(text.len())]
    );
    assert!(text.contains("kind: Deployment"));
    assert!(text.contains("availableReplicas: 3"));
}

#[test]
fn a_share_link_runs_headlessly_like_its_file() {
    let f = temp("link.yaml", SCENARIO);
    let (code, url, err) = kubeloop(&[
        "link",
        f.to_str().unwrap(),
        "--base",
        "https://course.example/kubeloop/",
    ]);
    assert_eq!(code, 0, "{err}");
    let url = url.trim();
    assert!(
        url.starts_with("https://course.example/kubeloop/#k1:"),
        "{url}"
    );
    let (code, out, err) = kubeloop(&["run", url]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("PASS"), "{out}");
}

#[test]
fn a_link_to_a_moment_replays_to_it_and_goes_on_only_when_told() {
    let lesson = kubeloop::sim::examples::by_name("node-dies").expect("the lesson");
    let f = temp("node-dies.yaml", lesson);
    let (code, url, err) = kubeloop(&["link", f.to_str().unwrap(), "--at", "90s"]);
    assert_eq!(code, 0, "{err}");
    let url = url.trim();
    assert!(url.starts_with("http://127.0.0.1:8080/#k2:"), "{url}");
    let (code, out, err) = kubeloop(&["run", url]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.starts_with("Simulated 1m30s"), "{out}");
    assert!(err.is_empty(), "{err}");
    // The lesson powered node-2 off at 30s (its steps are done on time in a headless run).
    assert!(out.contains("node-2"), "{out}");
    let (_, at_90s, _) = kubeloop(&["run", url]);
    assert_eq!(at_90s, out, "the same link shows the same moment");
    let (_, later, _) = kubeloop(&["run", url, "--until", "3m"]);
    assert!(later.starts_with("Simulated 3m0s"), "{later}");
    let (code, _, err) = kubeloop(&["link", f.to_str().unwrap(), "--at", "soon"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: --at:"), "{err}");
}

#[test]
fn validate_accepts_good_files_and_rejects_bad_ones() {
    let good = temp("good.yaml", SCENARIO);
    let (code, out, _) = kubeloop(&["validate", good.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("valid (1 objects and a Scenario)"), "{out}");
    let bad = temp(
        "bad-scenario.yaml",
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  stepz: []\n",
    );
    let (code, _, err) = kubeloop(&["validate", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown field \"spec.stepz\""), "{err}");
}

#[test]
fn bench_refuses_a_flag_it_does_not_know_before_running_anything() {
    let (code, out, err) = kubeloop(&["bench", "--quik"]);
    assert_eq!(code, 2, "{out}");
    assert!(err.starts_with("error: unknown flag: --quik"), "{err}");
    assert!(!err.contains("running:"), "{err}");
    let (code, _, err) = kubeloop(&["bench", "--only"]);
    assert_eq!(
        (code, err.trim()),
        (2, "error: flag needs an argument: --only")
    );
    let (code, out, _) = kubeloop(&["bench", "--help"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("Usage: kubeloop bench"), "{out}");
}

#[test]
fn unknown_commands_exit_two_with_usage() {
    let (code, _, err) = kubeloop(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("Usage:"));
}

#[test]
fn run_runs_a_learners_controller_and_writes_the_same_trace_twice() {
    let text = include_str!("../fixtures/controllers/website.yaml");
    let f = temp("website.yaml", text);
    let dir = f.parent().unwrap().to_path_buf();
    let (a, b) = (dir.join("ctrl-a.jsonl"), dir.join("ctrl-b.jsonl"));
    for t in [&a, &b] {
        let (code, out, err) = kubeloop(&[
            "run",
            f.to_str().unwrap(),
            "--until",
            "60s",
            "--trace",
            t.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    }
    let (ta, tb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(ta, tb);
    let trace = String::from_utf8(ta).unwrap();
    // The learner's controller is a component: its passes and its create are in the trace.
    assert!(
        trace.contains("controller/website"),
        "no pass of the controller"
    );
    assert!(
        trace.lines().any(|l| l.contains("controller/website")
            && l.contains("create")
            && l.contains("Deployment")),
        "no create of the Deployment by the controller"
    );
}

#[test]
fn a_syntax_error_in_a_controllers_source_exits_two_at_its_line_in_the_file() {
    let text = include_str!("../fixtures/controllers/website.yaml")
        .replace("if (!site) return;", "if (!site return;");
    let f = temp("broken-controller.yaml", &text);
    let (code, _, err) = kubeloop(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(":40:17: spec.source: SyntaxError: Unexpected token 'return'"),
        "{err}"
    );
}
