use kubeloop::sim::session::Session;
use kubeloop::sim::faults::Fault;
use kubeloop::sim::trace::TraceKind;
#[test]
fn scratch() {
    let text = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {name: p}\nspec:\n  seed: 579005\n  nodes: {count: 2, cpu: \"1\", memory: 2Gi, pods: \"6\"}\n";
    let mut s = Session::load("p.yaml", text, None).unwrap();
    let m = |r: u32| format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {r}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.0\n        resources: {{requests: {{cpu: 200m, memory: 128Mi}}}}\n");
    assert!(s.apply_text("w.yaml", &m(1)).ok);
    s.advance_to(11_274, usize::MAX);
    assert!(s.apply_text("w.yaml", &m(0)).ok);
    s.advance_to(11_287, usize::MAX);
    s.inject(Fault::StopComponent { component: "kube-apiserver".into() }).unwrap();
    s.sim.schedule_fault(30_287, Fault::StartComponent { component: "kube-apiserver".into() });
    s.advance_to(36_005, usize::MAX);
    s.inject(Fault::StopComponent { component: "kube-apiserver".into() }).unwrap();
    s.sim.schedule_fault(64_005, Fault::StartComponent { component: "kube-apiserver".into() });
    s.advance_to(80_000, usize::MAX);
    for e in s.sim.trace().entries() {
        match &e.kind {
            TraceKind::Api { actor, verb, object, code, .. } if object.contains("node-2") || actor.contains("node-controller") => println!("{} {actor} {verb} {object} {code}", e.t),
            TraceKind::Reconcile { component, key, record, trigger, .. } if key.contains("node-2") && (component.contains("node-2") || component.contains("node-controller")) => println!("{} {component} {key} {trigger} {:?}", e.t, record),
            TraceKind::Fault { .. } | TraceKind::List { .. } => println!("{} {:?}", e.t, e.kind),
            TraceKind::Watch { component, object, .. } if component == "node-controller" && object.contains("node-2") => println!("{} {:?}", e.t, e.kind),
            _ => {}
        }
    }
}
