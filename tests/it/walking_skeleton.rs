//! The thin slice through every layer: apply a Deployment, watch it converge, break a pod, watch it heal.

use kubeloop::sim::api::types::{Kind, Object};
use kubeloop::sim::examples::DEFAULT_MANIFEST;
use kubeloop::sim::faults::{Fault, PodTarget};
use kubeloop::sim::session::Session;

const MINUTE: u64 = 60_000;

fn running_ready_pods(s: &Session) -> Vec<String> {
    s.sim
        .api()
        .list(Kind::Pod)
        .filter_map(|o| match &**o {
            Object::Pod(p)
                if p.status.phase == "Running"
                    && p.is_ready()
                    && p.metadata.deletion_timestamp.is_none() =>
            {
                Some(p.metadata.name.to_string())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn the_default_deployment_converges_to_three_running_ready_pods_on_three_nodes() {
    let mut s = Session::new(1);
    let report = s.apply_text("playground.yaml", DEFAULT_MANIFEST);
    assert!(report.ok, "{:?}", report.diagnostics);
    assert_eq!(report.lines, vec!["deployment.apps/web created"]);
    s.advance_to(MINUTE, usize::MAX);
    assert_eq!(running_ready_pods(&s).len(), 3);
    let d = s
        .sim
        .api()
        .list(Kind::Deployment)
        .next()
        .and_then(|o| o.as_deployment().cloned())
        .unwrap();
    assert_eq!(d.status.available_replicas, 3);
    assert_eq!(d.status.updated_replicas, 3);
    let nodes: Vec<_> = s
        .sim
        .api()
        .list(Kind::Node)
        .map(|o| o.meta().name.to_string())
        .collect();
    assert_eq!(nodes, vec!["node-1", "node-2", "node-3"]);
}

#[test]
fn deleting_a_pod_makes_the_replicaset_create_a_replacement() {
    let mut s = Session::new(1);
    s.apply_text("playground.yaml", DEFAULT_MANIFEST);
    s.advance_to(MINUTE, usize::MAX);
    let before = running_ready_pods(&s);
    let victim = before[0].clone();
    let msg = s.inject(Fault::DeletePod {
        target: PodTarget {
            pod: Some(victim.clone()),
            namespace: "default".into(),
            ..Default::default()
        },
    });
    assert!(msg.is_ok(), "{msg:?}");
    s.advance_to(3 * MINUTE, usize::MAX);
    let after = running_ready_pods(&s);
    assert_eq!(after.len(), 3);
    assert!(!after.contains(&victim), "the deleted pod is gone");
    assert!(s.sim.api().list(Kind::Pod).all(|o| o.meta().name != victim));
}

#[test]
fn reapplying_the_same_manifest_is_unchanged() {
    let mut s = Session::new(1);
    s.apply_text("playground.yaml", DEFAULT_MANIFEST);
    s.advance_to(MINUTE, usize::MAX);
    let report = s.apply_text("playground.yaml", DEFAULT_MANIFEST);
    assert_eq!(report.lines, vec!["deployment.apps/web unchanged"]);
}

#[test]
fn the_same_seed_and_actions_give_the_same_trace() {
    let run = || {
        let mut s = Session::new(42);
        s.apply_text("playground.yaml", DEFAULT_MANIFEST);
        s.advance_to(2 * MINUTE, usize::MAX);
        s.sim
            .trace()
            .entries()
            .map(|e| e.to_json().to_string())
            .collect::<Vec<_>>()
    };
    let a = run();
    assert!(a.len() > 100);
    assert_eq!(a, run());
}
