//! Pinned traces of the control plane's classic scenarios: every Kubernetes Event and every API
//! write, in order, with simulated time. A change in behaviour shows up as a snapshot diff to review.

use kubeloop::sim::machinery::trace::{ApiTrace, EventTrace, TraceKind};
use kubeloop::sim::session::Session;

const SECOND: u64 = 1000;

fn deployment(replicas: u32, image: &str, strategy: &str, extra: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n{strategy}{extra}  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: app\n        image: {image}\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n"
    )
}

const ROLLING_10: &str =
    "  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 3, maxUnavailable: 2}\n";
const RECREATE: &str = "  strategy: {type: Recreate}\n";

/// The trace as readable lines: Events and writes (reads, watch deliveries and no-op reconciles left out).
fn pinned(s: &Session, from_seq: u64) -> String {
    let mut out = String::new();
    for e in s.sim.trace().since(from_seq) {
        let line = match &e.kind {
            TraceKind::Event(tr) => {
                let EventTrace {
                    event_type,
                    reason,
                    message,
                    object,
                    source,
                } = &**tr;
                format!("event  {event_type:<7} {reason:<22} {object}  {message}  [{source}]")
            }
            TraceKind::Api(tr)
                if !tr.actor.starts_with("kubelet")
                    || tr.verb != "update"
                    || !tr.object.starts_with("Lease") =>
            {
                let ApiTrace {
                    actor,
                    verb,
                    object,
                    code,
                    ..
                } = &**tr;
                if object.starts_with("Lease/")
                    || object.starts_with("Node/") && verb.starts_with("update/status")
                {
                    continue;
                }
                format!("api    {code} {actor:<28} {verb:<15} {object}")
            }
            TraceKind::Fault { fault, .. } => format!("fault  {fault}"),
            TraceKind::Command { command, ok, .. } => {
                format!("cmd    {command} ({})", if *ok { "ok" } else { "error" })
            }
            _ => continue,
        };
        out.push_str(&format!("{:>9} {line}\n", kubeloop::sim::time::clock(e.t)));
    }
    out
}

fn started(replicas: u32, strategy: &str, extra: &str) -> (Session, u64) {
    let mut s = Session::new(5);
    s.advance_to(SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    let r = s.apply_text(
        "web.yaml",
        &deployment(replicas, "nginx:1.27", strategy, extra),
    );
    assert!(r.ok, "{:?}", r.diagnostics);
    (s, from)
}

#[test]
fn creating_a_deployment_of_three() {
    let (mut s, from) = started(3, "", "");
    s.advance_to(30 * SECOND, usize::MAX);
    insta::assert_snapshot!(pinned(&s, from));
}

#[test]
fn scaling_up_then_down() {
    let (mut s, _) = started(3, "", "");
    s.advance_to(30 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    assert!(s.kubectl("scale deployment/web --replicas=5").ok);
    s.advance_to(60 * SECOND, usize::MAX);
    assert!(s.kubectl("scale deployment/web --replicas=2").ok);
    s.advance_to(120 * SECOND, usize::MAX);
    insta::assert_snapshot!(pinned(&s, from));
}

#[test]
fn rolling_update_of_ten_with_surge_three_and_unavailable_two() {
    let (mut s, _) = started(10, ROLLING_10, "");
    s.advance_to(40 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    let r = s.apply_text("web.yaml", &deployment(10, "nginx:1.28", ROLLING_10, ""));
    assert!(r.ok);
    s.advance_to(160 * SECOND, usize::MAX);
    let trace = pinned(&s, from);
    let scaling: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("ScalingReplicaSet"))
        .collect();
    assert!(
        scaling[0].contains("from 0 to 3"),
        "the new ReplicaSet starts at maxSurge: {}",
        scaling[0]
    );
    assert!(
        scaling[1].contains("from 10 to 8"),
        "old scales down by maxUnavailable: {}",
        scaling[1]
    );
    insta::assert_snapshot!(trace);
}

#[test]
fn recreate_stops_every_old_pod_before_starting_new_ones() {
    let (mut s, _) = started(3, RECREATE, "");
    s.advance_to(30 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    assert!(
        s.apply_text("web.yaml", &deployment(3, "nginx:1.28", RECREATE, ""))
            .ok
    );
    s.advance_to(120 * SECOND, usize::MAX);
    insta::assert_snapshot!(pinned(&s, from));
}

#[test]
fn rollback_to_the_first_revision() {
    let (mut s, _) = started(3, "", "");
    s.advance_to(30 * SECOND, usize::MAX);
    assert!(s.kubectl("set image deployment/web app=nginx:1.28").ok);
    s.advance_to(90 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    let out = s.kubectl("rollout undo deployment/web");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(160 * SECOND, usize::MAX);
    insta::assert_snapshot!(pinned(&s, from));
}

#[test]
fn pause_and_resume() {
    let (mut s, _) = started(3, "", "");
    s.advance_to(30 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    assert!(s.kubectl("rollout pause deployment/web").ok);
    assert!(s.kubectl("set image deployment/web app=nginx:1.28").ok);
    s.advance_to(60 * SECOND, usize::MAX);
    assert!(s.kubectl("rollout resume deployment/web").ok);
    s.advance_to(150 * SECOND, usize::MAX);
    insta::assert_snapshot!(pinned(&s, from));
}

#[test]
fn a_bad_image_stalls_the_rollout_at_its_progress_deadline() {
    let (mut s, _) = started(3, "", "  progressDeadlineSeconds: 60\n");
    s.advance_to(30 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    assert!(s
        .inject(serde_json::from_str(r#"{"type":"BreakImage","image":"nginx:9.99"}"#).unwrap())
        .is_ok());
    assert!(
        s.apply_text(
            "web.yaml",
            &deployment(3, "nginx:9.99", "", "  progressDeadlineSeconds: 60\n")
        )
        .ok
    );
    s.advance_to(150 * SECOND, usize::MAX);
    let trace = pinned(&s, from);
    let status = s.kubectl("rollout status deployment/web");
    assert!(
        status.stderr.contains("exceeded its progress deadline"),
        "{status:?}"
    );
    insta::assert_snapshot!(trace);
}

#[test]
fn deleting_a_deployment_cascades_to_its_replicasets_and_pods() {
    let (mut s, _) = started(3, "", "");
    s.advance_to(30 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    assert!(s.kubectl("delete deployment web").ok);
    s.advance_to(90 * SECOND, usize::MAX);
    assert_eq!(
        s.sim
            .api()
            .list(kubeloop::sim::api::types::Kind::Pod)
            .count(),
        0
    );
    assert_eq!(
        s.sim
            .api()
            .list(kubeloop::sim::api::types::Kind::ReplicaSet)
            .count(),
        0
    );
    insta::assert_snapshot!(pinned(&s, from));
}

#[test]
fn a_conflicting_write_is_retried_and_nothing_is_lost() {
    let (mut s, _) = started(3, "", "");
    s.advance_to(30 * SECOND, usize::MAX);
    let from = s.sim.trace().next_seq() - 1;
    let fault = serde_json::from_str(
        r#"{"type":"ConflictingWriter","object":"Deployment/default/web","duration":"60s"}"#,
    )
    .unwrap();
    assert!(s.inject(fault).is_ok());
    assert!(s.kubectl("scale deployment/web --replicas=5").ok);
    s.advance_to(120 * SECOND, usize::MAX);
    let trace = pinned(&s, from);
    assert!(
        trace.contains("api    409"),
        "a 409 Conflict appears in the trace"
    );
    let d = s
        .sim
        .api()
        .list(kubeloop::sim::api::types::Kind::Deployment)
        .next()
        .unwrap()
        .as_deployment()
        .cloned()
        .unwrap();
    assert_eq!(
        (d.status.ready_replicas, d.status.available_replicas),
        (5, 5)
    );
    insta::assert_snapshot!(trace);
}
