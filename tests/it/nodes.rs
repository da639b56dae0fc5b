//! Where pods live: short node outages, readiness flapping in and out of a Service's endpoints.

use kubeloop::sim::api::types::{Kind, Millis, Object, ObjectKey};
use kubeloop::sim::controllers::endpointslice::ready_endpoints;
use kubeloop::sim::faults::{Fault, PodTarget};
use kubeloop::sim::machinery::controller::ComponentId;
use kubeloop::sim::session::Session;
use kubeloop::sim::world::MACHINE_BOOT_MS;

const SECOND: u64 = 1000;

const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2, failureThreshold: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
";

fn converged() -> Session {
    let mut s = Session::new(9);
    assert!(s.apply_text("web.yaml", WEB).ok);
    s.advance_to(60 * SECOND, usize::MAX);
    s
}

fn pod_names(s: &Session) -> Vec<String> {
    s.sim
        .api()
        .list(Kind::Pod)
        .map(|o| o.meta().name.to_string())
        .collect()
}

fn ready_addresses(s: &Session) -> usize {
    ready_endpoints(s.sim.api().list(Kind::EndpointSlice), "default", "web").len()
}

#[test]
fn a_node_back_before_the_grace_period_ends_loses_nothing() {
    let mut s = converged();
    let before = pod_names(&s);
    let node = s
        .sim
        .api()
        .list(Kind::Pod)
        .find_map(|o| o.as_pod().map(|p| p.spec.node_name.clone()))
        .expect("a bound pod");
    s.inject(Fault::NodeDown {
        node: node.to_string(),
    })
    .expect("node goes down");
    // Powered on again after 5 s: the machine boots for 30 s, so its kubelet's heartbeats are
    // back 35 s after the outage, inside the 50 s node-monitor-grace-period.
    s.advance_to(65 * SECOND, usize::MAX);
    let n = s
        .sim
        .api()
        .get(&kubeloop::sim::api::types::ObjectKey::new(
            Kind::Node,
            "",
            &node,
        ))
        .unwrap()
        .clone();
    assert_eq!(
        n.as_node().unwrap().ready_status(),
        "True",
        "not yet noticed at 5 s"
    );
    s.inject(Fault::NodeUp {
        node: node.to_string(),
    })
    .expect("node boots");
    s.advance_to(10 * 60 * SECOND, usize::MAX);
    assert_eq!(pod_names(&s), before, "no pod was evicted or replaced");

    let n = s
        .sim
        .api()
        .get(&kubeloop::sim::api::types::ObjectKey::new(
            Kind::Node,
            "",
            &node,
        ))
        .unwrap()
        .clone();
    let node_obj = n.as_node().unwrap();
    assert!(
        node_obj.spec.taints.iter().all(|t| t.effect != "NoExecute"),
        "{:?}",
        node_obj.spec.taints
    );
    assert!(s.sim.trace().entries().all(|e| !matches!(&e.kind, kubeloop::sim::machinery::trace::TraceKind::Event(tr) if tr.reason == "TaintManagerEviction")));
}

#[test]
fn a_pod_whose_readiness_flaps_leaves_and_rejoins_the_service_endpoints() {
    let mut s = converged();
    assert_eq!(ready_addresses(&s), 3);
    let victim = pod_names(&s)[0].clone();
    let fault = Fault::FailReadiness {
        target: PodTarget {
            pod: Some(victim.clone()),
            namespace: "default".into(),
            ..Default::default()
        },
        duration: Some(20 * SECOND),
    };
    s.inject(fault).expect("readiness fails");
    s.advance_to(75 * SECOND, usize::MAX);
    assert_eq!(
        ready_addresses(&s),
        2,
        "the unready pod receives no traffic"
    );
    let pod = s
        .sim
        .api()
        .list(Kind::Pod)
        .find(|o| o.meta().name == victim)
        .cloned()
        .unwrap();
    match &*pod {
        Object::Pod(p) => {
            assert!(!p.is_ready());
            assert_eq!(
                p.status.phase, "Running",
                "not ready is not crashed: no restart, no replacement"
            );
        }
        _ => unreachable!(),
    }
    assert_eq!(
        pod_names(&s).len(),
        3,
        "the ReplicaSet counts it: nothing is replaced"
    );
    s.advance_to(120 * SECOND, usize::MAX);
    assert_eq!(
        ready_addresses(&s),
        3,
        "back in the endpoints once the probe passes again"
    );
}

/// Two nodes, `node-1` and `node-2`, of `size` (the `nodes:` fields besides `count`).
fn two_nodes(seed: u64, size: &str) -> Session {
    let scenario = format!(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {{name: cut}}\nspec:\n  seed: {seed}\n  nodes: {{count: 2, {size}}}\n"
    );
    Session::load("cut.yaml", &scenario, None).expect("scenario loads")
}

/// Cuts `node-2`'s kubelet off from the API server (PartitionNode), or reconnects it (HealNode).
fn cut_off_node_2(s: &mut Session, cut: bool) {
    let node = "node-2".to_string();
    let fault = if cut {
        Fault::PartitionNode { node }
    } else {
        Fault::HealNode { node }
    };
    s.inject(fault).expect("the fault applies");
}

/// The one pod in the store.
fn only_pod(s: &Session) -> kubeloop::sim::api::types::Pod {
    let mut pods = s.sim.api().list(Kind::Pod).filter_map(|o| o.as_pod());
    let pod = pods.next().expect("a pod").clone();
    assert!(pods.next().is_none(), "only one pod");
    pod
}

#[test]
fn a_pod_bound_to_a_node_while_it_is_cut_off_starts_once_the_node_reconnects() {
    // The kubelet's watch resumes with the writes it missed (the pod's binding) while its own
    // status write already streams live: the missed ones must still arrive first, or the
    // informer skips them as already seen and the pod stays Pending for ever. Found by
    // tests/it/fault_properties.rs (seed 830649).
    let mut s = two_nodes(830649, r#"cpu: "1", memory: 2Gi, pods: "6""#);
    let one = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.0\n        resources: {requests: {cpu: 200m, memory: 128Mi}}\n";
    assert!(s.apply_text("web.yaml", one).ok);
    s.advance_to(4, usize::MAX);
    cut_off_node_2(&mut s, true);
    // Healed 30 s later, to the millisecond of the case that found it: the outcome depends on
    // which delivery the latency draws put first.
    s.advance_to(30 * SECOND + 4, usize::MAX);
    let pod = only_pod(&s);
    assert_eq!(pod.spec.node_name, "node-2", "bound while cut off");
    assert_eq!(
        pod.status.phase, "Pending",
        "its kubelet cannot hear of it yet"
    );
    cut_off_node_2(&mut s, false);
    s.advance_to(60 * SECOND, usize::MAX);
    let pod = only_pod(&s);
    assert_eq!(pod.status.phase, "Running");
    assert!(pod.is_ready(), "{:?}", pod.status.conditions);
}

#[test]
fn a_node_cut_off_from_the_api_server_records_no_events_until_it_reconnects() {
    // Its kubelet keeps working (and failing to post its status), but Events go through the API
    // server too: none can be written while the partition lasts.
    let mut s = two_nodes(5, r#"cpu: "2", memory: 4Gi"#);
    let pinned = "apiVersion: v1\nkind: Pod\nmetadata: {name: flaky, labels: {app: flaky}}\nspec:\n  nodeName: node-2\n  containers: [{name: app, image: \"busybox:1.36\"}]\n";
    assert!(s.apply_text("flaky.yaml", pinned).ok);
    s.advance_to(10 * SECOND, usize::MAX);
    let from_node_2 = |s: &Session, after: Millis| {
        s.sim
            .api()
            .list(Kind::Event)
            .filter_map(|o| o.as_event())
            .filter(|e| e.source.host == "node-2")
            .filter(|e| e.last_timestamp.is_some_and(|t| t.0 > after))
            .map(|e| format!("{} {}", e.reason, e.message))
            .collect::<Vec<_>>()
    };
    cut_off_node_2(&mut s, true);
    let cut_at = s.sim.now();
    // The pod's container crashes and restarts over and over: the kubelet would record
    // BackOff, Pulled, Created and Started.
    s.inject(Fault::CrashLoop {
        target: PodTarget {
            selector: Some("app=flaky".into()),
            namespace: "default".into(),
            ..Default::default()
        },
        exit_code: 1,
        duration: None,
    })
    .unwrap();
    s.advance_to(3 * 60 * SECOND, usize::MAX);
    assert_eq!(from_node_2(&s, cut_at), Vec::<String>::new());
    cut_off_node_2(&mut s, false);
    let healed_at = s.sim.now();
    s.advance_to(4 * 60 * SECOND, usize::MAX);
    assert!(
        !from_node_2(&s, healed_at).is_empty(),
        "once reconnected its Events reach the API server again"
    );
}

fn node_ready(s: &Session, node: &str) -> String {
    s.sim
        .api()
        .get(&ObjectKey::new(Kind::Node, "", node))
        .and_then(|o| o.as_node())
        .map(|n| n.ready_status().to_string())
        .unwrap_or_default()
}

#[test]
fn a_powered_on_node_is_ready_only_once_its_machine_has_booted_and_its_kubelet_reported() {
    let mut s = converged();
    s.inject(Fault::NodeDown {
        node: "node-2".into(),
    })
    .expect("node goes down");
    s.advance_to(s.sim.now() + 120 * SECOND, usize::MAX);
    assert_eq!(node_ready(&s, "node-2"), "Unknown");
    let up = s.sim.now();
    s.inject(Fault::NodeUp {
        node: "node-2".into(),
    })
    .expect("node boots");
    assert_eq!(
        s.sim.machines()["node-2"].kubelet_starts_at,
        Some(up + MACHINE_BOOT_MS)
    );
    let mut ready_at = None;
    while ready_at.is_none() && s.sim.now() < up + 120 * SECOND {
        s.advance_to(s.sim.now() + 100, usize::MAX);
        if node_ready(&s, "node-2") == "True" {
            ready_at = Some(s.sim.now());
        }
    }
    let ready_at = ready_at.expect("the node turns Ready");
    assert!(
        ready_at >= up + MACHINE_BOOT_MS,
        "Ready {} ms after power-on, before its kubelet ran",
        ready_at - up
    );
    assert!(
        ready_at <= up + MACHINE_BOOT_MS + 2 * SECOND,
        "Ready {} ms after power-on: the kubelet reports at once when it starts",
        ready_at - up
    );
    assert_eq!(s.sim.machines()["node-2"].kubelet_starts_at, None);
}

#[test]
fn a_machine_that_loses_power_again_while_booting_never_starts_its_kubelet() {
    let mut s = converged();
    let kubelet = ComponentId::Kubelet("node-2".into());
    s.inject(Fault::NodeDown {
        node: "node-2".into(),
    })
    .expect("node goes down");
    s.advance_to(s.sim.now() + 120 * SECOND, usize::MAX);
    s.inject(Fault::NodeUp {
        node: "node-2".into(),
    })
    .expect("node boots");
    s.advance_to(s.sim.now() + 10 * SECOND, usize::MAX);
    s.inject(Fault::NodeDown {
        node: "node-2".into(),
    })
    .expect("power cut while booting");
    s.advance_to(s.sim.now() + MACHINE_BOOT_MS + 30 * SECOND, usize::MAX);
    assert!(!s.sim.is_running(&kubelet));
    assert_eq!(node_ready(&s, "node-2"), "Unknown");
}
