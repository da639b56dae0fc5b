use kubeloop::sim::session::Session;
use kubeloop::sim::faults::{Fault, PodTarget};
use kubeloop::sim::trace::TraceKind;
#[test]
fn scratch() {
    let text = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {name: p}\nspec:\n  seed: 208712\n  nodes: {count: 2, cpu: \"1\", memory: 2Gi, pods: \"6\"}\n";
    let mut s = Session::load("p.yaml", text, None).unwrap();
    let m = |r: u32| format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {r}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.0\n        resources: {{requests: {{cpu: 200m, memory: 128Mi}}}}\n");
    assert!(s.apply_text("w.yaml", &m(1)).ok);
    s.advance_to(7, usize::MAX);
    s.inject(Fault::StopComponent { component: "scheduler".into() }).unwrap();
    s.sim.schedule_fault(1007, Fault::StartComponent { component: "scheduler".into() });
    s.advance_to(11, usize::MAX);
    s.inject(Fault::DropWatchEvents { component: "controller-manager".into(), count: None, probability: Some(0.7), kind: None, event_type: None, duration: Some(1000) }).unwrap();
    s.advance_to(29, usize::MAX);
    let pod = s.sim.api.list(kubeloop::sim::types::Kind::Pod).next().map(|p| p.meta().name.clone());
    println!("pod {pod:?}");
    if let Some(p) = pod { println!("{:?}", s.inject(Fault::DeletePod { target: PodTarget { pod: Some(p), namespace: "default".into(), ..Default::default() } })); }
    s.advance_to(60_000, usize::MAX);
    for e in s.sim.trace().entries() {
        match &e.kind {
            TraceKind::Api { object, .. } if object.contains("Lease") || object.contains("Node") => {}
            TraceKind::Reconcile { component, .. } if component.contains("node") || component.contains("kubelet") => {}
            TraceKind::Watch { object, .. } if object.contains("Lease") || object.contains("Node/") => {}
            TraceKind::Event { .. } => {}
            TraceKind::Watch { component, .. } if !(component.contains("deployment") || component.contains("replicaset")) => {}
            _ => println!("{} {} {:?} {:?}", e.t, e.seq, e.cause, e.kind),
        }
    }
}
