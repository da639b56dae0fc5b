//! What the subject modules share: a session with a manifest applied, the events about a kind
//! of object in the order they were first recorded, and the `kubeloop` binary run as a user
//! runs it.

use kubeloop::sim::api::types::Kind;
use kubeloop::sim::session::Session;

/// A fresh session (seed 1) with `yaml` applied, which must succeed.
pub fn applied(yaml: &str) -> Session {
    let mut s = Session::new(1);
    let report = s.apply_text("manifest.yaml", yaml);
    assert!(report.ok, "{report:?}");
    s
}

/// `(reason, message)` of the events about objects of `kind` (and `name`, when given), in the
/// order they were first recorded.
pub fn events(s: &Session, kind: &str, name: Option<&str>) -> Vec<(String, String)> {
    let mut evs: Vec<(u64, (String, String))> = s
        .sim
        .api()
        .list(Kind::Event)
        .filter_map(|o| o.as_event())
        .filter(|e| e.involved_object.kind == kind)
        .filter(|e| name.is_none_or(|n| e.involved_object.name == n))
        .map(|e| {
            (
                e.metadata.creation_timestamp.map_or(0, |t| t.0),
                (e.reason.to_string(), e.message.to_string()),
            )
        })
        .collect();
    evs.sort();
    evs.into_iter().map(|(_, e)| e).collect()
}

/// The messages of every event with `reason`, about any object.
pub fn messages(s: &Session, reason: &str) -> Vec<String> {
    s.sim
        .api()
        .list(Kind::Event)
        .filter_map(|o| o.as_event())
        .filter(|e| e.reason == reason)
        .map(|e| e.message.to_string())
        .collect()
}

/// Runs the `kubeloop` binary: its exit code, standard output and standard error.
pub fn kubeloop(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubeloop"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}
