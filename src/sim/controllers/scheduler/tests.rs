//! Scheduler tests: each filter and score, FailedScheduling texts, the queue, the assume cache,
//! preemption, and one cluster run through the world.

use std::rc::Rc;

use super::plugins::{self, NodeInfo, PodCtx, PodEntry};
use super::*;
use crate::sim::api::types::{
    Condition, Container, ContainerPort, Kind, Node, NodeAffinity, NodeSelector,
    NodeSelectorRequirement, NodeSelectorTerm, Object, ObjectKey, Pod, PreferredSchedulingTerm,
    ResourceRequirements, Taint, Time, Toleration,
};
use crate::sim::api::{ApiError, WatchEvent, WatchEventType};
use crate::sim::controllers::testing;
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{Controller, Ctx, Outcome};
use crate::sim::rng::Rng;

// ------------------------------------------------------------------ fixtures

fn node(name: &str) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    n.metadata.uid = format!("uid-{name}").into();
    n.metadata.labels.insert("kubernetes.io/hostname", name);
    n.status.allocatable = [("cpu", "2"), ("memory", "4Gi"), ("pods", "110")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    n.status.capacity = n.status.allocatable.clone();
    n.status.conditions.push(Condition {
        type_: "Ready".into(),
        status: "True".into(),
        ..Default::default()
    });
    n
}

trait NodeExt: Sized {
    fn alloc(self, cpu: &str, mem: &str, pods: &str) -> Self;
    fn taint(self, key: &str, value: &str, effect: &str) -> Self;
    fn label(self, k: &str, v: &str) -> Self;
    fn cordoned(self) -> Self;
}

impl NodeExt for Node {
    fn alloc(mut self, cpu: &str, mem: &str, pods: &str) -> Self {
        self.status.allocatable.insert("cpu", cpu);
        self.status.allocatable.insert("memory", mem);
        self.status.allocatable.insert("pods", pods);
        self
    }
    fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        let value = if value.is_empty() {
            None
        } else {
            Some(value.to_string())
        };
        self.spec.taints.push(Taint {
            key: key.into(),
            value,
            effect: effect.into(),
            time_added: None,
        });
        self
    }
    fn label(mut self, k: &str, v: &str) -> Self {
        self.metadata.labels.insert(k, v);
        self
    }
    /// As `kubectl cordon` plus the node controller's taint.
    fn cordoned(mut self) -> Self {
        self.spec.unschedulable = true;
        self.taint(plugins::TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule")
    }
}

fn pod(name: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = "default".into();
    p.metadata.uid = format!("uid-{name}").into();
    p.metadata.creation_timestamp = Some(Time(0));
    p.spec_mut().scheduler_name = Some("default-scheduler".into());
    p.spec_mut().containers.push(Container {
        name: "app".into(),
        image: "nginx".into(),
        ..Default::default()
    });
    p.status.phase = "Pending".into();
    p
}

trait PodExt: Sized {
    fn req(self, cpu: &str, mem: &str) -> Self;
    fn on(self, node: &str) -> Self;
    fn tolerate(self, key: &str, op: &str, value: &str, effect: &str) -> Self;
    fn select(self, k: &str, v: &str) -> Self;
    fn require(self, key: &str, op: &str, values: &[&str]) -> Self;
    fn prefer(self, weight: i64, key: &str, values: &[&str]) -> Self;
    fn host_port(self, port: i64, protocol: &str, ip: &str) -> Self;
    fn priority(self, p: i64) -> Self;
    fn terminating(self) -> Self;
}

impl PodExt for Pod {
    fn req(mut self, cpu: &str, mem: &str) -> Self {
        let mut r = ResourceRequirements::default();
        if !cpu.is_empty() {
            r.requests.insert("cpu", cpu);
        }
        if !mem.is_empty() {
            r.requests.insert("memory", mem);
        }
        self.spec_mut().containers[0].resources = Some(r);
        self
    }
    fn on(mut self, node: &str) -> Self {
        self.spec_mut().node_name = node.into();
        self.status.phase = "Running".into();
        self
    }
    fn tolerate(mut self, key: &str, op: &str, value: &str, effect: &str) -> Self {
        let s = |v: &str| {
            if v.is_empty() {
                None
            } else {
                Some(Str::from(v))
            }
        };
        self.spec_mut().tolerations.push(Toleration {
            key: s(key),
            operator: s(op),
            value: s(value),
            effect: s(effect),
            toleration_seconds: None,
        });
        self
    }
    fn select(mut self, k: &str, v: &str) -> Self {
        self.spec_mut().node_selector.insert(k, v);
        self
    }
    fn require(mut self, key: &str, op: &str, values: &[&str]) -> Self {
        let na = node_affinity_mut(&mut self);
        let sel = na
            .required_during_scheduling_ignored_during_execution
            .get_or_insert_with(NodeSelector::default);
        sel.node_selector_terms.push(NodeSelectorTerm {
            match_expressions: vec![requirement(key, op, values)],
            match_fields: vec![],
        });
        self
    }
    fn prefer(mut self, weight: i64, key: &str, values: &[&str]) -> Self {
        let na = node_affinity_mut(&mut self);
        na.preferred_during_scheduling_ignored_during_execution
            .push(PreferredSchedulingTerm {
                weight,
                preference: NodeSelectorTerm {
                    match_expressions: vec![requirement(key, "In", values)],
                    match_fields: vec![],
                },
            });
        self
    }
    fn host_port(mut self, port: i64, protocol: &str, ip: &str) -> Self {
        self.spec_mut().containers[0].ports.push(ContainerPort {
            container_port: port,
            host_port: Some(port),
            protocol: Some(protocol.into()),
            host_ip: if ip.is_empty() { None } else { Some(ip.into()) },
            name: None,
        });
        self
    }
    fn priority(mut self, p: i64) -> Self {
        self.spec_mut().priority = Some(p);
        self
    }
    fn terminating(mut self) -> Self {
        self.metadata.deletion_timestamp = Some(Time(30_000));
        self
    }
}

fn requirement(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

fn node_affinity_mut(p: &mut Pod) -> &mut NodeAffinity {
    p.spec_mut()
        .affinity
        .get_or_insert_with(Default::default)
        .node_affinity
        .get_or_insert_with(NodeAffinity::default)
}

fn pkey(name: &str) -> ObjectKey {
    ObjectKey::new(Kind::Pod, "default", name)
}

fn node_info(n: &Node, pods: &[Pod]) -> NodeInfo {
    let mut ni = NodeInfo::default();
    ni.set_node(Rc::new(Object::from(n.clone())));
    for p in pods {
        ni.add_pod(
            &pkey(&p.metadata.name),
            &PodEntry::for_pod(p, &n.metadata.name, false),
        );
    }
    ni
}

/// The Filter verdict for `p` on `n` already running `pods`: (plugin, reasons) or None.
fn filter(p: &Pod, n: &Node, pods: &[Pod]) -> Option<(&'static str, Vec<String>)> {
    plugins::run_filters(&PodCtx::new(p), &node_info(n, pods)).map(|r| (r.plugin, r.reasons))
}

fn cache_of(nodes: &[Node], pods: &[Pod]) -> Cache {
    let nodes = nodes.iter().cloned().map(Object::from);
    testing::cache_of(nodes.chain(pods.iter().cloned().map(Object::from)))
}

fn reconcile(s: &mut Scheduler, cache: &Cache, key: &ObjectKey, now: u64) -> Outcome {
    testing::reconcile_with(s, cache, key, now, &mut Rng::new(7), None)
}

fn binds(out: &Outcome) -> Vec<(String, String)> {
    out.requests()
        .filter_map(|r| match r {
            ApiRequest::Bind { key, node } => Some((key.name.to_string(), node.clone())),
            _ => None,
        })
        .collect()
}

fn failed_scheduling(out: &Outcome) -> String {
    out.events
        .iter()
        .find(|e| e.reason == "FailedScheduling")
        .map(|e| e.message.to_string())
        .unwrap_or_default()
}

/// Schedules `p` once against `nodes` running `pods` and returns the FailedScheduling message.
fn failure_message(nodes: &[Node], pods: &[Pod], p: Pod) -> String {
    let mut all = pods.to_vec();
    let key = pkey(&p.metadata.name);
    all.push(p);
    let cache = cache_of(nodes, &all);
    let mut s = Scheduler::new();
    let out = reconcile(&mut s, &cache, &key, 1_000);
    assert!(
        binds(&out).is_empty(),
        "expected no binding, got {:?}",
        binds(&out)
    );
    failed_scheduling(&out)
}

fn watch(type_: WatchEventType, obj: Object) -> WatchEvent {
    WatchEvent::new(type_, Rc::new(obj), 0, 0)
}

// ------------------------------------------------------------------ filters

#[test]
fn each_filter_plugin_accepts_or_rejects_with_its_reason() {
    let gpu = node("n").taint("dedicated", "gpu", "NoSchedule");
    let zoned = node("n").label("zone", "a").label("cores", "8");
    // (case, pod, node, pods already on the node, expected (plugin, reason) or None for a fit)
    type Case = (
        &'static str,
        Pod,
        Node,
        Vec<Pod>,
        Option<(&'static str, &'static str)>,
    );
    let cases: Vec<Case> = vec![
        (
            "a cordoned node rejects pods",
            pod("p"),
            node("n").cordoned(),
            vec![],
            Some((NODE_UNSCHEDULABLE, "node(s) were unschedulable")),
        ),
        (
            "a cordoned node takes a pod tolerating the unschedulable taint",
            pod("p").tolerate(
                plugins::TAINT_NODE_UNSCHEDULABLE,
                "Exists",
                "",
                "NoSchedule",
            ),
            node("n").cordoned(),
            vec![],
            None,
        ),
        (
            "a pod naming another node does not fit",
            {
                let mut p = pod("p");
                p.spec_mut().node_name = "other".into();
                p
            },
            node("n"),
            vec![],
            Some((NODE_NAME, "node(s) didn't match the requested node name")),
        ),
        (
            "an untolerated NoSchedule taint rejects",
            pod("p"),
            gpu.clone(),
            vec![],
            Some((
                TAINT_TOLERATION,
                "node(s) had untolerated taint {dedicated: gpu}",
            )),
        ),
        (
            "an untolerated NoExecute taint with no value rejects",
            pod("p"),
            node("n").taint("node.kubernetes.io/unreachable", "", "NoExecute"),
            vec![],
            Some((
                TAINT_TOLERATION,
                "node(s) had untolerated taint {node.kubernetes.io/unreachable: }",
            )),
        ),
        (
            "a PreferNoSchedule taint is left to scoring",
            pod("p"),
            node("n").taint("spot", "true", "PreferNoSchedule"),
            vec![],
            None,
        ),
        (
            "an Equal toleration tolerates its taint",
            pod("p").tolerate("dedicated", "Equal", "gpu", "NoSchedule"),
            gpu.clone(),
            vec![],
            None,
        ),
        (
            "an empty-key Exists toleration tolerates every taint",
            pod("p").tolerate("", "Exists", "", ""),
            gpu.clone(),
            vec![],
            None,
        ),
        (
            "a toleration for another effect does not help",
            pod("p").tolerate("dedicated", "Equal", "gpu", "NoExecute"),
            gpu,
            vec![],
            Some((
                TAINT_TOLERATION,
                "node(s) had untolerated taint {dedicated: gpu}",
            )),
        ),
        (
            "a matching nodeSelector fits",
            pod("p").select("zone", "a"),
            zoned.clone(),
            vec![],
            None,
        ),
        (
            "a nodeSelector mismatch rejects",
            pod("p").select("zone", "b"),
            zoned.clone(),
            vec![],
            Some((
                NODE_AFFINITY,
                "node(s) didn't match Pod's node affinity/selector",
            )),
        ),
        (
            "In matches a listed value",
            pod("p").require("zone", "In", &["a", "b"]),
            zoned.clone(),
            vec![],
            None,
        ),
        (
            "NotIn rejects a listed value",
            pod("p").require("zone", "NotIn", &["a"]),
            zoned.clone(),
            vec![],
            Some((NODE_AFFINITY, plugins::ERR_REASON_AFFINITY)),
        ),
        (
            "NotIn accepts a missing label",
            pod("p").require("disk", "NotIn", &["ssd"]),
            zoned.clone(),
            vec![],
            None,
        ),
        (
            "Exists needs the label",
            pod("p").require("disk", "Exists", &[]),
            zoned.clone(),
            vec![],
            Some((NODE_AFFINITY, plugins::ERR_REASON_AFFINITY)),
        ),
        (
            "DoesNotExist needs it absent",
            pod("p").require("disk", "DoesNotExist", &[]),
            zoned.clone(),
            vec![],
            None,
        ),
        (
            "Gt compares integers",
            pod("p").require("cores", "Gt", &["4"]),
            zoned.clone(),
            vec![],
            None,
        ),
        (
            "Lt compares integers",
            pod("p").require("cores", "Lt", &["4"]),
            zoned.clone(),
            vec![],
            Some((NODE_AFFINITY, plugins::ERR_REASON_AFFINITY)),
        ),
        (
            "Gt on a non-integer label never matches",
            pod("p").require("zone", "Gt", &["1"]),
            zoned.clone(),
            vec![],
            Some((NODE_AFFINITY, plugins::ERR_REASON_AFFINITY)),
        ),
        (
            "required terms are ORed",
            pod("p")
                .require("zone", "In", &["x"])
                .require("zone", "In", &["a"]),
            zoned,
            vec![],
            None,
        ),
        (
            "a taken host port rejects",
            pod("p").host_port(80, "TCP", ""),
            node("n"),
            vec![pod("q").host_port(80, "TCP", "").on("n")],
            Some((
                NODE_PORTS,
                "node(s) didn't have free ports for the requested pod ports",
            )),
        ),
        (
            "the same port over another protocol fits",
            pod("p").host_port(80, "UDP", ""),
            node("n"),
            vec![pod("q").host_port(80, "TCP", "").on("n")],
            None,
        ),
        (
            "the same port on two specific IPs fits",
            pod("p").host_port(80, "TCP", "10.0.0.1"),
            node("n"),
            vec![pod("q").host_port(80, "TCP", "10.0.0.2").on("n")],
            None,
        ),
        (
            "0.0.0.0 collides with a specific IP",
            pod("p").host_port(80, "TCP", "10.0.0.1"),
            node("n"),
            vec![pod("q").host_port(80, "TCP", "").on("n")],
            Some((NODE_PORTS, plugins::ERR_REASON_PORTS)),
        ),
        (
            "requests within allocatable fit",
            pod("p").req("1", "1Gi"),
            node("n"),
            vec![pod("q").req("1", "3Gi").on("n")],
            None,
        ),
        (
            "too little cpu left rejects",
            pod("p").req("1500m", ""),
            node("n"),
            vec![pod("q").req("1", "").on("n")],
            Some((NODE_RESOURCES_FIT, "Insufficient cpu")),
        ),
        (
            "too little memory left rejects",
            pod("p").req("", "2Gi"),
            node("n"),
            vec![pod("q").req("", "3Gi").on("n")],
            Some((NODE_RESOURCES_FIT, "Insufficient memory")),
        ),
        (
            "a terminating pod still holds its resources",
            pod("p").req("1500m", ""),
            node("n"),
            vec![pod("q").req("1", "").on("n").terminating()],
            Some((NODE_RESOURCES_FIT, "Insufficient cpu")),
        ),
        (
            "a full pod count rejects even a pod without requests",
            pod("p"),
            node("n").alloc("2", "4Gi", "1"),
            vec![pod("q").on("n")],
            Some((NODE_RESOURCES_FIT, "Too many pods")),
        ),
        (
            "a pod without requests fits a node whose cpu is taken",
            pod("p"),
            node("n"),
            vec![pod("q").req("2", "").on("n")],
            None,
        ),
    ];
    for (name, p, n, pods, want) in cases {
        let got = filter(&p, &n, &pods);
        let got = got.as_ref().map(|(pl, reasons)| (*pl, reasons.join(", ")));
        assert_eq!(
            got.as_ref().map(|(pl, r)| (*pl, r.as_str())),
            want,
            "{name}"
        );
    }
}

#[test]
fn node_resources_fit_reports_every_missing_resource_at_once() {
    let got = filter(
        &pod("p").req("3", "8Gi"),
        &node("n").alloc("2", "4Gi", "1"),
        &[pod("q").on("n")],
    );
    assert_eq!(
        got,
        Some((
            NODE_RESOURCES_FIT,
            vec![
                "Too many pods".into(),
                "Insufficient cpu".into(),
                "Insufficient memory".into()
            ]
        ))
    );
}

#[test]
fn match_fields_select_nodes_by_name_and_empty_terms_select_nothing() {
    let mut by_name = pod("p");
    node_affinity_mut(&mut by_name).required_during_scheduling_ignored_during_execution =
        Some(NodeSelector {
            node_selector_terms: vec![NodeSelectorTerm {
                match_expressions: vec![],
                match_fields: vec![requirement("metadata.name", "In", &["n"])],
            }],
        });
    assert_eq!(filter(&by_name, &node("n"), &[]), None);
    assert!(filter(&by_name, &node("m"), &[]).is_some());
    let mut empty = pod("p");
    node_affinity_mut(&mut empty).required_during_scheduling_ignored_during_execution =
        Some(NodeSelector {
            node_selector_terms: vec![NodeSelectorTerm::default()],
        });
    assert!(filter(&empty, &node("n"), &[]).is_some());
}

#[test]
fn pod_requests_take_the_largest_init_container_and_add_sidecars() {
    let mut p = pod("p").req("500m", "100Mi");
    let init = |name: &str, cpu: &str, sidecar: bool| Container {
        name: name.into(),
        resources: Some(ResourceRequirements {
            requests: [("cpu".to_string(), cpu.to_string())].into(),
            ..Default::default()
        }),
        restart_policy: if sidecar { Some("Always".into()) } else { None },
        ..Default::default()
    };
    p.spec_mut().init_containers = vec![init("setup", "2", false)];
    assert_eq!(
        plugins::pod_resources(&p).requests.milli_cpu,
        2000,
        "init container larger than the sum"
    );
    p.spec_mut().init_containers = vec![init("proxy", "250m", true), init("setup", "300m", false)];
    // The sidecar runs alongside the app (500m + 250m) and during the later init container (300m + 250m).
    assert_eq!(plugins::pod_resources(&p).requests.milli_cpu, 750);
}

#[test]
fn pods_without_requests_count_as_100m_and_200mi_only_when_scoring() {
    let r = plugins::pod_resources(&pod("p"));
    assert!(r.requests.is_zero());
    assert_eq!((r.non0_cpu, r.non0_mem), (100, 200 * 1024 * 1024));
    let r = plugins::pod_resources(&pod("p").req("0", ""));
    assert_eq!(
        (r.non0_cpu, r.non0_mem),
        (0, 200 * 1024 * 1024),
        "an explicit zero is not missing"
    );
}

// ------------------------------------------------------------------ scores

#[test]
fn each_score_plugin_computes_upstream_values() {
    let n = node("n").alloc("4", "8Gi", "110");
    let busy = [pod("q").req("1", "2Gi").on("n")];
    let cases: Vec<(&str, i64, i64)> = vec![
        // (name, got, want)
        (
            "LeastAllocated: half of cpu and memory free after placing",
            plugins::least_allocated(
                &PodCtx::new(&pod("p").req("1", "2Gi")),
                &node_info(&n, &busy),
            ),
            50,
        ),
        (
            "LeastAllocated counts a request-less pod as 100m/200Mi",
            plugins::least_allocated(
                &PodCtx::new(&pod("p")),
                &node_info(&node("m").alloc("1", "1000Mi", "110"), &[]),
            ),
            (90 + 80) / 2,
        ),
        (
            "BalancedAllocation: fractions 0.5 and 0.25 give 100 × (1 − 0.125)",
            plugins::balanced_allocation(
                &PodCtx::new(&pod("p").req("2", "2Gi")),
                &node_info(&n, &[]),
            )
            .unwrap_or(-1),
            87,
        ),
        (
            "TaintToleration counts untolerated PreferNoSchedule taints",
            plugins::taint_toleration_raw(
                &pod("p"),
                &node("m")
                    .taint("a", "", "PreferNoSchedule")
                    .taint("b", "", "PreferNoSchedule")
                    .taint("c", "", "NoSchedule"),
            ),
            2,
        ),
        (
            "TaintToleration ignores tolerated ones",
            plugins::taint_toleration_raw(
                &pod("p").tolerate("a", "Exists", "", "PreferNoSchedule"),
                &node("m").taint("a", "", "PreferNoSchedule"),
            ),
            0,
        ),
        (
            "TaintToleration does not count a toleration for another effect",
            plugins::taint_toleration_raw(
                &pod("p")
                    .tolerate("a", "Exists", "", "NoSchedule")
                    .tolerate("b", "Exists", "", ""),
                &node("m")
                    .taint("a", "", "PreferNoSchedule")
                    .taint("b", "", "PreferNoSchedule"),
            ),
            1,
        ),
        (
            "NodeAffinity sums the weights of matching preferred terms",
            plugins::node_affinity_raw(
                &pod("p")
                    .prefer(5, "zone", &["a"])
                    .prefer(3, "disk", &["ssd"]),
                &node("m").label("zone", "a").label("disk", "ssd"),
            ),
            8,
        ),
    ];
    for (name, got, want) in cases {
        assert_eq!(got, want, "{name}");
    }
    assert_eq!(
        plugins::balanced_allocation(&PodCtx::new(&pod("p")), &node_info(&n, &[])),
        None,
        "BestEffort pods skip BalancedAllocation"
    );
}

#[test]
fn normalize_scales_by_the_maximum_and_reverses_for_taints() {
    let normalized = |raws: &[i64], reverse: bool| -> Vec<i64> {
        let n = plugins::Normalizer::default_over(raws.iter().copied(), reverse);
        raws.iter().map(|r| n.apply(*r)).collect()
    };
    assert_eq!(normalized(&[0, 1, 2], true), vec![100, 50, 0]);
    assert_eq!(
        normalized(&[0, 0], true),
        vec![100, 100],
        "no taints anywhere: every node is best"
    );
    assert_eq!(normalized(&[8, 5, 0], false), vec![100, 62, 0]);
}

#[test]
fn the_weighted_sum_prefers_the_emptier_node_and_avoids_prefer_no_schedule_taints() {
    let nodes = [
        node("node-1"),
        node("node-2"),
        node("node-3").taint("spot", "true", "PreferNoSchedule"),
    ];
    let running = [pod("busy").req("1", "2Gi").on("node-1")];
    let p = pod("web").req("500m", "512Mi");
    let d = explain(
        &p,
        &nodes.iter().collect::<Vec<_>>(),
        &running.iter().collect::<Vec<_>>(),
    );
    assert_eq!(d.chosen.as_deref(), Some("node-2"));
    let total = |name: &str| {
        d.nodes
            .iter()
            .find(|n| n.node == name)
            .and_then(|n| match &n.verdict {
                NodeVerdict::Feasible { total, .. } => Some(*total),
                NodeVerdict::Filtered { .. } => None,
            })
    };
    // node-2: taint 100×3 + fit (75+87)/2=81 + balanced 100×(1−|0.25−0.125|/2)=93.
    assert_eq!(total("node-2"), Some(300 + 81 + 93));
    assert_eq!(
        total("node-3"),
        Some(81 + 93),
        "the PreferNoSchedule taint costs the whole taint score"
    );
    assert!(total("node-1") < total("node-2"));
}

// ------------------------------------------------------------------ FailedScheduling texts

fn three(f: impl Fn(Node) -> Node) -> Vec<Node> {
    ["node-1", "node-2", "node-3"]
        .iter()
        .map(|n| f(node(n)))
        .collect()
}

#[test]
fn insufficient_cpu_message() {
    let nodes = three(|n| n);
    let running: Vec<Pod> = (1..=3)
        .map(|i| {
            pod(&format!("busy-{i}"))
                .req("1500m", "")
                .on(&format!("node-{i}"))
        })
        .collect();
    insta::assert_snapshot!(failure_message(&nodes, &running, pod("web").req("1", "")), @"0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..");
}

#[test]
fn insufficient_memory_message() {
    let nodes = three(|n| n);
    let running: Vec<Pod> = (1..=3)
        .map(|i| {
            pod(&format!("busy-{i}"))
                .req("", "3Gi")
                .on(&format!("node-{i}"))
        })
        .collect();
    insta::assert_snapshot!(failure_message(&nodes, &running, pod("web").req("", "2Gi")), @"0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..");
}

#[test]
fn a_request_larger_than_any_node_is_not_helped_by_preemption() {
    insta::assert_snapshot!(failure_message(&three(|n| n), &[], pod("web").req("4", "")), @"0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..");
}

#[test]
fn too_many_pods_message() {
    let nodes = three(|n| n.alloc("2", "4Gi", "1"));
    let running: Vec<Pod> = (1..=3)
        .map(|i| pod(&format!("busy-{i}")).on(&format!("node-{i}")))
        .collect();
    insta::assert_snapshot!(failure_message(&nodes, &running, pod("web")), @"0/3 nodes are available: 3 Too many pods. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..");
}

#[test]
fn untolerated_taint_message() {
    let nodes = three(|n| n.taint("node.kubernetes.io/unreachable", "", "NoExecute"));
    insta::assert_snapshot!(failure_message(&nodes, &[], pod("web")), @"0/3 nodes are available: 3 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..");
}

#[test]
fn node_selector_mismatch_message() {
    insta::assert_snapshot!(failure_message(&three(|n| n), &[], pod("web").select("disktype", "ssd")), @"0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..");
}

#[test]
fn cordoned_nodes_message() {
    insta::assert_snapshot!(failure_message(&three(NodeExt::cordoned), &[], pod("web")), @"0/3 nodes are available: 3 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..");
}

#[test]
fn mixed_reasons_message() {
    let nodes = vec![
        node("node-1").taint("node.kubernetes.io/unreachable", "", "NoExecute"),
        node("node-2"),
        node("node-3"),
    ];
    let running = [
        pod("busy-2").req("1500m", "").on("node-2"),
        pod("busy-3").req("1500m", "").on("node-3"),
    ];
    insta::assert_snapshot!(failure_message(&nodes, &running, pod("web").req("1", "")), @"0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..");
}

#[test]
fn one_node_can_count_under_several_reasons() {
    let nodes: Vec<Node> = (1..=4).map(|i| node(&format!("node-{i}"))).collect();
    let running = [
        pod("a").req("1500m", "3Gi").on("node-1"),
        pod("b").req("1500m", "3Gi").on("node-2"),
        pod("c").req("1500m", "").on("node-3"),
        pod("d").req("", "3Gi").on("node-4"),
    ];
    insta::assert_snapshot!(failure_message(&nodes, &running, pod("web").req("1", "2Gi")), @"0/4 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod..");
}

#[test]
fn no_nodes_at_all_has_its_own_message() {
    assert_eq!(
        failure_message(&[], &[], pod("web")),
        "no nodes available to schedule pods"
    );
}

#[test]
fn preemption_policy_never_is_reported() {
    let mut p = pod("web").req("1", "");
    p.spec_mut().preemption_policy = Some(Box::new(serde_json::json!("Never")));
    let running: Vec<Pod> = (1..=3)
        .map(|i| {
            pod(&format!("busy-{i}"))
                .req("1500m", "")
                .on(&format!("node-{i}"))
        })
        .collect();
    insta::assert_snapshot!(failure_message(&three(|n| n), &running, p), @"0/3 nodes are available: 3 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..");
}

// ------------------------------------------------------------------ reconcile

#[test]
fn a_pending_pod_is_bound_with_a_scheduled_event_and_a_record() {
    let cache = cache_of(&[node("node-1")], &[pod("web")]);
    let mut s = Scheduler::new();
    let out = reconcile(&mut s, &cache, &pkey("web"), 1_000);
    assert_eq!(binds(&out), vec![("web".into(), "node-1".into())]);
    assert!(
        out.events.is_empty(),
        "Scheduled waits for the binding to succeed"
    );
    let bind = out.requests().next().expect("a bind").clone();
    let stored = Rc::new(Object::from(pod("web").on("node-1")));
    s.on_response(&bind, &Ok(stored.clone()), 1_004);
    let events = s.events_for_response(&bind, &Ok(stored));
    let ev = &events[0];
    assert_eq!(
        (ev.type_, ev.reason.as_str(), ev.message.as_str()),
        (
            "Normal",
            "Scheduled",
            "Successfully assigned default/web to node-1"
        )
    );
    let rec = out.record.expect("every pass records");
    assert_eq!(rec.observed, "pod web unscheduled; 1 nodes");
    assert_eq!(rec.desired, "bound to a feasible node");
    assert!(rec.diff.starts_with("best node-1 (score "), "{}", rec.diff);
}

#[test]
fn an_unschedulable_pod_gets_the_pod_scheduled_false_condition_once() {
    let cache = cache_of(&[node("node-1").cordoned()], &[pod("web")]);
    let mut s = Scheduler::new();
    let out = reconcile(&mut s, &cache, &pkey("web"), 1_000);
    let msg = failed_scheduling(&out);
    let updated: Vec<&Pod> = out
        .requests()
        .filter_map(|r| match r {
            ApiRequest::UpdateStatus(Object::Pod(p)) => Some(&**p),
            _ => None,
        })
        .collect();
    assert_eq!(updated.len(), 1);
    let c = find_condition(&updated[0].status.conditions, "PodScheduled").expect("condition set");
    assert_eq!(
        (c.status.as_str(), c.reason.as_deref(), c.message.as_deref()),
        ("False", Some("Unschedulable"), Some(msg.as_str()))
    );
    assert_eq!(s.queue_of(&pkey("web")), Some(QueueName::UnschedulablePods));

    // Same failure with the condition already in place: the event again, no status write.
    let cache = cache_of(&[node("node-1").cordoned()], &[updated[0].clone()]);
    let mut s = Scheduler::new();
    let again = reconcile(&mut s, &cache, &pkey("web"), 2_000);
    assert_eq!(failed_scheduling(&again), msg);
    assert_eq!(again.requests().count(), 0);
}

#[test]
fn pods_of_other_schedulers_and_bound_pods_are_left_alone() {
    let mut other = pod("other");
    other.spec_mut().scheduler_name = Some("my-scheduler".into());
    let cache = cache_of(&[node("node-1")], &[other, pod("bound").on("node-1")]);
    let mut s = Scheduler::new();
    assert!(reconcile(&mut s, &cache, &pkey("other"), 1)
        .requests()
        .next()
        .is_none());
    assert!(reconcile(&mut s, &cache, &pkey("bound"), 2)
        .requests()
        .next()
        .is_none());
    assert_eq!(
        s.requested_on("node-1").map(|(_, n)| n),
        Some(1),
        "the bound pod is charged to its node"
    );
}

#[test]
fn higher_priority_pods_are_scheduled_first() {
    let cache = cache_of(
        &[node("node-1")],
        &[pod("a-low"), pod("b-high").priority(1000)],
    );
    let mut s = Scheduler::new();
    let low = reconcile(&mut s, &cache, &pkey("a-low"), 1);
    assert!(binds(&low).is_empty());
    assert_eq!(
        low.requeue_after,
        Some(1),
        "it waits behind the higher-priority pod"
    );
    assert_eq!(
        low.record.map(|r| r.observed),
        Some("pod a-low in activeQ behind b-high".into())
    );
    assert_eq!(s.queue.active_keys(), vec![pkey("b-high"), pkey("a-low")]);
    assert_eq!(
        binds(&reconcile(&mut s, &cache, &pkey("b-high"), 2)),
        vec![("b-high".into(), "node-1".into())]
    );
    assert_eq!(
        binds(&reconcile(&mut s, &cache, &pkey("a-low"), 3)),
        vec![("a-low".into(), "node-1".into())]
    );
}

#[test]
fn the_assume_cache_prevents_double_booking_the_last_slot() {
    // Room for one more 600m pod; the informer has not yet seen the first binding.
    let cache = cache_of(
        &[node("node-1").alloc("1", "4Gi", "110")],
        &[pod("a").req("600m", ""), pod("b").req("600m", "")],
    );
    let mut s = Scheduler::new();
    assert_eq!(
        binds(&reconcile(&mut s, &cache, &pkey("a"), 1)),
        vec![("a".into(), "node-1".into())]
    );
    let second = reconcile(&mut s, &cache, &pkey("b"), 2);
    assert!(binds(&second).is_empty());
    assert!(failed_scheduling(&second).starts_with("0/1 nodes are available: 1 Insufficient cpu."));
    assert_eq!(
        s.requested_on("node-1").map(|(r, n)| (r.milli_cpu, n)),
        Some((600, 1))
    );
}

#[test]
fn a_failed_binding_forgets_the_assumed_pod_and_backs_off() {
    let cache = cache_of(&[node("node-1")], &[pod("a").req("600m", "")]);
    let mut s = Scheduler::new();
    let out = reconcile(&mut s, &cache, &pkey("a"), 1_000);
    let bind = out.requests().next().expect("a bind").clone();
    s.on_response(&bind, &Err(ApiError::unavailable()), 1_005);
    let events = s.events_for_response(&bind, &Err(ApiError::unavailable()));
    assert_eq!(
        events.iter().map(|e| (e.reason.as_str(), e.message.as_str())).collect::<Vec<_>>(),
        vec![("FailedScheduling", "running Bind plugin \"DefaultBinder\": the server is currently unable to handle the request")]
    );
    assert_eq!(
        s.requested_on("node-1").map(|(r, n)| (r.milli_cpu, n)),
        Some((0, 0))
    );
    assert_eq!(s.queue_of(&pkey("a")), Some(QueueName::BackoffQ));
    let (keys, _) = s.tick(2_004);
    assert!(!keys.contains(&pkey("a")), "1 s back-off not over yet");
    let (keys, _) = s.tick(2_005);
    assert_eq!(keys, vec![pkey("a")]);
}

#[test]
fn the_bound_pod_replaces_its_assumed_charge() {
    let mut cache = cache_of(&[node("node-1")], &[pod("a").req("600m", "")]);
    let mut s = Scheduler::new();
    reconcile(&mut s, &cache, &pkey("a"), 1);
    let bound = pod("a").req("600m", "").on("node-1");
    let old = cache.upsert(Rc::new(Object::from(bound.clone())));
    s.keys_for_event(
        &watch(WatchEventType::Modified, Object::from(bound)),
        old.as_ref(),
        &cache,
    );
    assert_eq!(
        s.requested_on("node-1").map(|(r, n)| (r.milli_cpu, n)),
        Some((600, 1)),
        "charged once, not twice"
    );
}

#[test]
fn a_status_write_on_the_way_to_ready_leaves_the_node_as_the_cycle_memo_knows_it() {
    let mut cache = cache_of(&[node("node-1")], &[]);
    let mut s = Scheduler::new();
    let mut observe = |p: &Pod| {
        let old = cache.upsert(Rc::new(Object::from(p.clone())));
        let type_ = match old {
            Some(_) => WatchEventType::Modified,
            None => WatchEventType::Added,
        };
        s.keys_for_event(&watch(type_, Object::from(p.clone())), old.as_ref(), &cache);
        let entry = s.state.pods.get(&pkey("a")).cloned().expect("placed");
        let generation = s.state.nodes.get("node-1").expect("cached").generation;
        (entry.terminating_by_preemption, generation)
    };
    let condition = |type_: &str, reason: &str| Condition {
        type_: type_.into(),
        status: "True".into(),
        reason: Some(reason.into()),
        ..Default::default()
    };
    let mut pod = pod("a").req("100m", "").on("node-1");
    let (_, placed) = observe(&pod);
    pod.status.conditions.push(condition("Ready", "PodReady"));
    assert_eq!(observe(&pod), (false, placed), "its charge is as it was");

    pod = pod.terminating();
    let (_, terminating) = observe(&pod);
    assert!(terminating > placed);
    pod.status
        .conditions
        .push(condition("DisruptionTarget", "PreemptionByScheduler"));
    let (by_preemption, after) = observe(&pod);
    assert!(by_preemption, "its preemptor waits for it");
    assert!(after > terminating, "the node is charged anew");
}

#[test]
fn a_deleted_node_is_no_longer_tried_by_the_next_cycle() {
    let mut cache = cache_of(&[node("node-1"), node("node-2")], &[pod("a"), pod("b")]);
    let mut s = Scheduler::new();
    assert_eq!(binds(&reconcile(&mut s, &cache, &pkey("a"), 1)).len(), 1);
    let gone = cache
        .remove(&ObjectKey::new(Kind::Node, "", "node-1"))
        .expect("cached");
    s.keys_for_event(
        &watch(WatchEventType::Deleted, (*gone).clone()),
        Some(&gone),
        &cache,
    );
    let out = reconcile(&mut s, &cache, &pkey("b"), 2);
    assert_eq!(binds(&out), vec![("b".into(), "node-2".into())]);
    let rec = out.record.expect("every pass records");
    assert_eq!(rec.observed, "pod b unscheduled; 1 nodes");
}

#[test]
fn an_unschedulable_pod_is_retried_when_a_fitting_node_is_added() {
    let mut cache = cache_of(
        &[node("small").alloc("1", "4Gi", "110")],
        &[pod("web").req("2", "")],
    );
    let mut s = Scheduler::new();
    assert!(binds(&reconcile(&mut s, &cache, &pkey("web"), 1_000)).is_empty());
    assert_eq!(s.queue_of(&pkey("web")), Some(QueueName::UnschedulablePods));

    // A node too small for it is no reason to retry (NodeResourcesFit's queueing hint).
    let tiny = node("tiny").alloc("1", "1Gi", "110");
    cache.upsert(Rc::new(Object::from(tiny.clone())));
    assert!(s
        .keys_for_event(
            &watch(WatchEventType::Added, Object::from(tiny)),
            None,
            &cache
        )
        .is_empty());

    let big = node("big").alloc("4", "8Gi", "110");
    cache.upsert(Rc::new(Object::from(big.clone())));
    s.tick(5_000);
    let keys = s.keys_for_event(
        &watch(WatchEventType::Added, Object::from(big)),
        None,
        &cache,
    );
    assert_eq!(
        keys,
        vec![pkey("web")],
        "back-off is over, so straight to activeQ"
    );
    assert_eq!(
        binds(&reconcile(&mut s, &cache, &pkey("web"), 5_001)),
        vec![("web".into(), "big".into())]
    );
}

#[test]
fn uncordoning_a_node_retries_the_pods_it_rejected() {
    let cordoned = node("node-1").cordoned();
    let mut cache = cache_of(std::slice::from_ref(&cordoned), &[pod("web")]);
    let mut s = Scheduler::new();
    reconcile(&mut s, &cache, &pkey("web"), 1_000);
    s.tick(3_000);
    let mut open = cordoned.clone();
    open.spec.unschedulable = false;
    open.spec.taints.clear();
    let old = cache.upsert(Rc::new(Object::from(open.clone())));
    assert_eq!(
        s.keys_for_event(
            &watch(WatchEventType::Modified, Object::from(open)),
            old.as_ref(),
            &cache
        ),
        vec![pkey("web")]
    );
}

#[test]
fn deleting_a_bound_pod_frees_its_node_and_retries_pods_that_did_not_fit() {
    let busy = pod("busy").req("2", "").on("node-1");
    let mut cache = cache_of(&[node("node-1")], &[busy.clone(), pod("web").req("1", "")]);
    let mut s = Scheduler::new();
    reconcile(&mut s, &cache, &pkey("web"), 1_000);
    s.tick(3_000);
    cache.remove(&pkey("busy"));
    let keys = s.keys_for_event(
        &watch(WatchEventType::Deleted, Object::from(busy)),
        None,
        &cache,
    );
    assert_eq!(keys, vec![pkey("web")]);
    assert_eq!(s.requested_on("node-1").map(|(r, _)| r.milli_cpu), Some(0));
}

#[test]
fn a_higher_priority_pod_preempts_a_lower_priority_one() {
    let victim = pod("victim").req("1500m", "").on("node-1");
    let cache = cache_of(
        &[node("node-1")],
        &[victim, pod("vip").req("1", "").priority(1000)],
    );
    let mut s = Scheduler::new();
    let out = reconcile(&mut s, &cache, &pkey("vip"), 1_000);
    assert_eq!(
        failed_scheduling(&out),
        "0/1 nodes are available: 1 Insufficient cpu."
    );
    let reqs: Vec<String> = out
        .requests()
        .map(|r| match r {
            ApiRequest::UpdateStatus(Object::Pod(p)) if p.metadata.name == "vip" => {
                format!(
                    "nominate vip to {}",
                    p.status.nominated_node_name.clone().unwrap_or_default()
                )
            }
            ApiRequest::UpdateStatus(Object::Pod(p)) => {
                let c = find_condition(&p.status.conditions, "DisruptionTarget")
                    .and_then(|c| c.reason.clone());
                format!("mark {} {}", p.metadata.name, c.unwrap_or_default())
            }
            ApiRequest::Delete { key, options } => format!(
                "delete {} (uid {})",
                key.name,
                options.precondition_uid.clone().unwrap_or_default()
            ),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        reqs,
        vec![
            "nominate vip to node-1",
            "mark victim PreemptionByScheduler",
            "delete victim (uid uid-victim)"
        ]
    );
    let preempted = out
        .events
        .iter()
        .find(|e| e.reason == "Preempted")
        .expect("an event on the victim");
    assert_eq!(preempted.message, "Preempted by pod uid-vip on node node-1");
}

#[test]
fn a_nominated_pod_keeps_its_place_against_lower_priority_pods() {
    let mut vip = pod("vip").req("1", "").priority(1000);
    vip.status.nominated_node_name = Some("node-1".into());
    let busy = pod("busy").req("500m", "").on("node-1");
    let low = pod("low").req("1", "");
    let n = node("node-1");
    // 500m running + 1 CPU held for vip leaves too little for another 1 CPU pod…
    let d = explain(&low, &[&n], &[&busy, &vip]);
    assert_eq!(
        d.message
            .as_deref()
            .map(|m| m.starts_with("0/1 nodes are available: 1 Insufficient cpu.")),
        Some(true)
    );
    // …but the nominated pod itself, and pods of its priority or higher, are not held back by it.
    assert_eq!(
        explain(&vip, &[&n], &[&busy, &vip]).chosen.as_deref(),
        Some("node-1")
    );
    assert_eq!(
        explain(&low, &[&n], &[&busy]).chosen.as_deref(),
        Some("node-1")
    );
}

#[test]
fn explain_lists_every_node_with_its_verdict() {
    let nodes = [
        node("node-1").cordoned(),
        node("node-2"),
        node("node-3").label("zone", "b"),
    ];
    let d = explain(
        &pod("web").require("zone", "NotIn", &["b"]),
        &nodes.iter().collect::<Vec<_>>(),
        &[],
    );
    let summary: Vec<String> = d
        .nodes
        .iter()
        .map(|n| match &n.verdict {
            NodeVerdict::Filtered { plugin, reasons } => {
                format!("{}: {plugin} {}", n.node, reasons.join(", "))
            }
            NodeVerdict::Feasible { total, .. } => format!("{}: score {total}", n.node),
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            "node-1: NodeUnschedulable node(s) were unschedulable",
            "node-2: score 395",
            "node-3: NodeAffinity node(s) didn't match Pod's node affinity/selector",
        ]
    );
    assert_eq!(
        (d.chosen.as_deref(), d.total_nodes, d.feasible_nodes),
        (Some("node-2"), 3, 1)
    );
}

#[test]
fn ties_are_broken_at_random_among_the_top_nodes() {
    let nodes = [node("node-1"), node("node-2")];
    let d = explain(&pod("web"), &nodes.iter().collect::<Vec<_>>(), &[]);
    assert_eq!(
        (d.chosen.as_deref(), d.tied_with.clone()),
        (Some("node-1"), vec!["node-2".to_string()])
    );
    let mut picked = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let cache = cache_of(&nodes, &[pod("web")]);
        let mut s = Scheduler::new();
        let mut rng = Rng::new(seed);
        let out = s.reconcile(
            &pkey("web"),
            &mut Ctx {
                now: 1,
                cache: &cache,
                rng: &mut rng,
                runtime: None,
                storage: None,
            },
        );
        picked.extend(binds(&out).into_iter().map(|(_, n)| n));
    }
    assert_eq!(picked.len(), 2, "both tied nodes get chosen for some seed");
}

#[test]
fn large_clusters_stop_filtering_once_enough_nodes_fit() {
    assert_eq!(num_feasible_nodes_to_find(50), 50);
    assert_eq!(num_feasible_nodes_to_find(1000), 420);
    assert_eq!(num_feasible_nodes_to_find(5000), 500);
    assert_eq!(num_feasible_nodes_to_find(200), 100);
}

// ------------------------------------------------------------------ through the world

fn api_node(name: &str) -> Object {
    Object::from(node(name))
}

#[test]
fn a_pod_submitted_to_a_three_node_cluster_is_bound() {
    use crate::sim::world::{Sim, SimConfig};
    let mut sim = Sim::new(SimConfig::default());
    for n in ["node-1", "node-2", "node-3"] {
        sim.submit(ApiRequest::Create(api_node(n)))
            .expect("node created");
    }
    let mut p = pod("web").req("500m", "256Mi");
    p.metadata.uid = Default::default();
    p.metadata.creation_timestamp = None;
    p.status = Default::default();
    sim.submit(ApiRequest::Create(Object::from(p)))
        .expect("pod created");
    sim.advance_to(5_000, usize::MAX);
    let bound = sim
        .get(&pkey("web"))
        .and_then(|o| o.as_pod())
        .map(|p| p.spec.node_name.clone())
        .unwrap_or_default();
    assert!(bound.starts_with("node-"), "bound to {bound:?}");
    let scheduled = sim
        .api()
        .list(Kind::Event)
        .filter_map(|o| o.as_event())
        .find(|e| e.reason == "Scheduled")
        .map(|e| (e.message.to_string(), e.source.component.clone()));
    assert_eq!(
        scheduled,
        Some((
            format!("Successfully assigned default/web to {bound}"),
            "default-scheduler".into()
        ))
    );
}

#[test]
fn a_deployment_sized_burst_of_pods_is_spread_and_all_bound() {
    use crate::sim::world::{Sim, SimConfig};
    let mut sim = Sim::new(SimConfig::default());
    for n in ["node-1", "node-2", "node-3"] {
        sim.submit(ApiRequest::Create(api_node(n)))
            .expect("node created");
    }
    for i in 0..9 {
        let mut p = pod(&format!("web-{i}")).req("100m", "128Mi");
        p.metadata.uid = Default::default();
        p.metadata.creation_timestamp = None;
        p.status = Default::default();
        sim.submit(ApiRequest::Create(Object::from(p)))
            .expect("pod created");
    }
    sim.advance_to(5_000, usize::MAX);
    let mut per_node = std::collections::BTreeMap::new();
    for o in sim.api().list(Kind::Pod) {
        let n = o
            .as_pod()
            .map(|p| p.spec.node_name.clone())
            .unwrap_or_default();
        assert!(!n.is_empty(), "{} is still pending", o.meta().name);
        *per_node.entry(n).or_insert(0) += 1;
    }
    assert_eq!(
        per_node.values().copied().collect::<Vec<_>>(),
        vec![3, 3, 3],
        "LeastAllocated spreads equal pods evenly"
    );
}

/// Ten thousand pods onto a thousand nodes, through reconcile and the watch handler only.
#[test]
#[ignore = "benchmark: cargo test --release --lib scheduler -- --ignored --nocapture"]
#[allow(clippy::disallowed_methods)] // a benchmark times itself
fn ten_thousand_pods_schedule_onto_a_thousand_nodes_quickly() {
    let t0 = std::time::Instant::now();
    let nodes: Vec<Node> = (0..1000)
        .map(|i| node(&format!("node-{i:04}")).alloc("16", "64Gi", "110"))
        .collect();
    let pods: Vec<Pod> = (0..10_000)
        .map(|i| pod(&format!("web-{i:05}")).req("100m", "128Mi"))
        .collect();
    let mut cache = cache_of(&nodes, &pods);
    let mut s = Scheduler::new();
    let mut rng = Rng::new(1);
    let mut bound = 0;
    let keys: Vec<ObjectKey> = pods.iter().map(|p| pkey(&p.metadata.name)).collect();
    println!("setup {:?}", t0.elapsed());
    let t1 = std::time::Instant::now();
    for (i, k) in keys.iter().enumerate() {
        let out = s.reconcile(
            k,
            &mut Ctx {
                now: i as u64,
                cache: &cache,
                rng: &mut rng,
                runtime: None,
                storage: None,
            },
        );
        for (name, n) in binds(&out) {
            bound += 1;
            let b = pod(&name).req("100m", "128Mi").on(&n);
            let old = cache.upsert(Rc::new(Object::from(b.clone())));
            s.keys_for_event(
                &watch(WatchEventType::Modified, Object::from(b)),
                old.as_ref(),
                &cache,
            );
        }
    }
    println!("scheduled {bound} in {:?}", t1.elapsed());
    assert_eq!(bound, 10_000);
    let counts: Vec<usize> = nodes
        .iter()
        .filter_map(|n| s.requested_on(&n.metadata.name))
        .map(|(_, count)| count)
        .collect();
    let (min, max) = (counts.iter().min().copied(), counts.iter().max().copied());
    println!("pods per node: min {min:?} max {max:?}");
    // Only ~42% of the nodes are scored per cycle (percentageOfNodesToScore), so the spread is
    // close to, not exactly, even.
    assert!(
        max.zip(min).is_some_and(|(max, min)| max - min <= 3),
        "min {min:?} max {max:?}"
    );
}

#[test]
fn a_relist_that_missed_a_deletion_is_caught_up_by_resync_keys() {
    let cache = cache_of(
        &[node("node-1")],
        &[pod("gone").req("1", "").on("node-1"), pod("web")],
    );
    let mut s = Scheduler::new();
    reconcile(&mut s, &cache, &pkey("web"), 1);
    assert_eq!(
        s.requested_on("node-1").map(|(r, _)| r.milli_cpu),
        Some(1000)
    );
    // The informer relisted without the deleted pod, and without a DELETED event.
    let relisted = cache_of(&[node("node-1")], &[pod("web").on("node-1")]);
    let keys = s.keys_for_resync(&relisted);
    assert_eq!(
        keys,
        vec![pkey("gone")],
        "only the pod the scheduler has wrong"
    );
    reconcile(&mut s, &relisted, &pkey("gone"), 2);
    assert_eq!(
        s.requested_on("node-1").map(|(r, n)| (r.milli_cpu, n)),
        Some((0, 1))
    );
}

#[test]
fn a_decision_over_many_nodes_keeps_the_best_scored_and_the_first_rejected_in_evaluation_order() {
    // 80 feasible nodes with more CPU the later they come, and 80 cordoned ones between them.
    let nodes: Vec<Node> = (0..160)
        .map(|i| {
            let n = node(&format!("n{i:03}")).alloc(&(4 + i).to_string(), "64Gi", "110");
            if i % 2 == 1 {
                n.cordoned()
            } else {
                n
            }
        })
        .collect();
    let p = pod("web").req("1", "1Gi");
    let d = explain(&p, &nodes.iter().collect::<Vec<_>>(), &[]);

    // Without taints every total is independent of the other nodes, so each can be scored alone.
    let alone = |n: &Node| match &explain(&p, &[n], &[]).nodes[0].verdict {
        NodeVerdict::Feasible { total, .. } => *total,
        NodeVerdict::Filtered { .. } => unreachable!("{} is feasible", n.metadata.name),
    };
    let mut feasible: Vec<(i64, usize)> =
        (0..160).step_by(2).map(|i| (alone(&nodes[i]), i)).collect();
    feasible.sort_by_key(|(total, i)| (std::cmp::Reverse(*total), *i));
    let mut want: Vec<usize> = feasible[..DECISION_DETAIL_NODES / 2]
        .iter()
        .map(|(_, i)| *i)
        .chain((1..160).step_by(2).take(DECISION_DETAIL_NODES / 2))
        .collect();
    want.sort();
    let want: Vec<String> = want.iter().map(|i| format!("n{i:03}")).collect();
    let got: Vec<&str> = d.nodes.iter().map(|n| n.node.as_str()).collect();
    assert_eq!(got, want);
    assert_eq!(d.omitted_nodes, 160 - DECISION_DETAIL_NODES);
    assert_eq!(d.feasible_nodes, 80);
    let best = format!("n{:03}", feasible[0].1);
    assert_eq!(d.chosen.as_deref(), Some(best.as_str()));
}

// ------------------------------------------------------------------ PodTopologySpread

/// `p` as a pod of the ReplicaSet `rs`.
fn owned(mut p: Pod, rs: &str) -> Pod {
    p.metadata.owner_references = vec![crate::sim::api::types::OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: rs.into(),
        uid: format!("uid-{rs}").into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }];
    p
}

/// Each node's NodeInfo with the pods bound to it.
fn infos_of(nodes: impl Iterator<Item = Node>, pods: &[Pod]) -> Vec<NodeInfo> {
    nodes
        .map(|n| {
            let here: Vec<Pod> = pods
                .iter()
                .filter(|p| p.spec.node_name == n.metadata.name)
                .cloned()
                .collect();
            node_info(&n, &here)
        })
        .collect()
}

/// PodTopologySpread's raw scores for the pods of `uid-web` on the three feasible nodes
/// `infos`, among `all`.
fn spread_raw<'a>(infos: &[&'a NodeInfo], all: impl Iterator<Item = &'a NodeInfo>) -> [i64; 3] {
    let owner = Str::from("uid-web");
    let cycle = plugins::SpreadCycle::new(&owner, infos.iter().map(|ni| ni.zone.as_deref()), all);
    let raws: Vec<i64> = infos
        .iter()
        .map(|ni| cycle.raw(ni.has_hostname, ni.owned_by(&owner), ni.zone.as_deref()))
        .collect();
    raws.try_into().expect("three nodes")
}

#[test]
fn default_spreading_scores_nodes_by_their_siblings_with_upstreams_formula() {
    let nodes = [node("a"), node("b"), node("c")];
    let pods = [
        owned(pod("w1").req("100m", "128Mi"), "web")
            .on("a")
            .terminating(),
        owned(pod("w2").req("100m", "128Mi"), "web").on("b"),
        owned(pod("w3").req("100m", "128Mi"), "web").on("c"),
        owned(pod("x1").req("100m", "128Mi"), "other").on("a"),
    ];
    let infos = infos_of(nodes.iter().cloned(), &pods);
    let refs: Vec<&NodeInfo> = infos.iter().collect();
    // Hostname only: count × ln(3 + 2) + (3 − 1); the terminating sibling and the other
    // ReplicaSet's pod do not count.
    let raw = spread_raw(&refs, infos.iter());
    assert_eq!(raw, [2, 4, 4]);
    let norm = plugins::Normalizer::spread_over(raw.iter().copied());
    assert_eq!(raw.map(|r| norm.apply(r)), [100, 50, 50]);
    // Zones add count × ln(2 + 2) + (5 − 1) per node that has one: a and b share z1.
    let zoned = infos_of(
        nodes
            .iter()
            .zip(["z1", "z1", "z2"])
            .map(|(n, z)| n.clone().label("topology.kubernetes.io/zone", z)),
        &pods,
    );
    let refs: Vec<&NodeInfo> = zoned.iter().collect();
    assert_eq!(spread_raw(&refs, zoned.iter()), [7, 9, 9]);
    assert_eq!(plugins::spread_owner(&pod("bare")), None);
}

#[test]
fn a_replacement_pod_goes_to_the_node_without_siblings_though_another_has_more_room() {
    // node-1 is a little busier (another app's pod) but runs no web pod any more: its old one
    // is terminating. Resources alone pick node-2 or node-3; spreading picks node-1, as
    // kube-scheduler does.
    let nodes = [node("node-1"), node("node-2"), node("node-3")];
    let pods = [
        owned(pod("web-old").req("100m", "128Mi"), "web")
            .on("node-1")
            .terminating(),
        owned(pod("api-1").req("300m", "256Mi"), "api").on("node-1"),
        owned(pod("web-2").req("100m", "128Mi"), "web").on("node-2"),
        owned(pod("web-3").req("100m", "128Mi"), "web").on("node-3"),
    ];
    let node_refs: Vec<&Node> = nodes.iter().collect();
    let pod_refs: Vec<&Pod> = pods.iter().collect();
    let new = owned(pod("web-new").req("100m", "128Mi"), "web");
    let decision = explain(&new, &node_refs, &pod_refs);
    assert_eq!(decision.chosen.as_deref(), Some("node-1"), "{decision:?}");
    // A pod without a controller is not spread: the roomier nodes win.
    let bare = explain(&pod("bare").req("100m", "128Mi"), &node_refs, &pod_refs);
    assert_ne!(bare.chosen.as_deref(), Some("node-1"), "{bare:?}");
}

// ------------------------------------------------------------------ the cycle memo

/// A cache of `nodes`, listed, and one cycle of `p` against it with `memo`: (chosen node, the
/// FailedScheduling message).
fn memo_cycle(state: &ClusterState, p: &Pod, memo: &mut CycleMemo) -> Cycle {
    let mut p = PodCtx::new(p);
    p.key = pkey(&p.pod.metadata.name);
    run_cycle(state, &p, 0, usize::MAX, None, true, Some(memo))
}

fn state_of(nodes: &[Node]) -> ClusterState {
    let mut state = ClusterState::default();
    for n in nodes {
        state.set_node(Rc::new(Object::from(n.clone())));
    }
    state.list_nodes();
    state
}

#[test]
fn a_node_filled_after_a_cycle_is_refused_to_the_next_pod_of_the_same_shape() {
    let mut state = state_of(&[node("n1").alloc("1", "4Gi", "110")]);
    let mut memo = CycleMemo::default();
    let first = memo_cycle(&state, &pod("a").req("600m", ""), &mut memo);
    assert_eq!(first.decision.chosen.as_deref(), Some("n1"));
    // Reserve charges the node: the memo's "feasible" was for the node before.
    state.place(
        pkey("a"),
        PodEntry::for_pod(&pod("a").req("600m", ""), &"n1".into(), true),
    );
    let second = memo_cycle(&state, &pod("b").req("600m", ""), &mut memo);
    assert_eq!(second.decision.chosen, None);
    assert_eq!(
        second.decision.message.as_deref(),
        Some(
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: \
             1 No preemption victims found for incoming pod.."
        )
    );
}

#[test]
fn the_memo_answers_for_unchanged_nodes_and_only_for_pods_of_the_same_shape() {
    let mut state = state_of(&[node("n1"), node("n2")]);
    let mut memo = CycleMemo::default();
    let web = |name: &str| pod(name).req("100m", "128Mi");
    memo_cycle(&state, &web("a"), &mut memo);
    let slot = |state: &ClusterState, name: &str| {
        let (_, slot) = *state.listed().iter().find(|(n, _)| n == name).unwrap();
        (slot, state.nodes.at(slot).generation)
    };
    let (s1, n1) = slot(&state, "n1");
    let (s2, n2) = slot(&state, "n2");
    assert!(memo.feasible(s1, n1).is_some() && memo.feasible(s2, n2).is_some());
    assert!(memo.feasible(s1, n1).and_then(|f| f.scores).is_some());

    state.place(pkey("a"), PodEntry::for_pod(&web("a"), &"n1".into(), true));
    let (s1, n1) = slot(&state, "n1");
    assert!(memo.feasible(s1, n1).is_none(), "n1 changed");
    assert!(memo.feasible(s2, n2).is_some(), "n2 did not");

    // Another shape: nothing the memo holds is its.
    memo.enter(&PodCtx::new(&pod("c").req("2", "")));
    assert!(memo.feasible(s2, n2).is_none());
}

#[test]
fn a_copy_of_the_scheduler_starts_with_an_empty_memo_and_decides_alike() {
    let state = state_of(&[node("n1"), node("n2")]);
    let mut memo = CycleMemo::default();
    let first = memo_cycle(&state, &pod("a").req("100m", ""), &mut memo);
    let (_, slot) = state.listed()[0];
    assert!(memo
        .feasible(slot, state.nodes.at(slot).generation)
        .is_some());
    let mut copy = memo.clone();
    assert!(copy
        .feasible(slot, state.nodes.at(slot).generation)
        .is_none());
    let again = memo_cycle(&state, &pod("a").req("100m", ""), &mut copy);
    assert_eq!(again.decision, first.decision);
}

#[test]
fn the_memo_counts_spreading_for_the_owner_of_the_pod_in_the_cycle() {
    let mut state = state_of(&[node("n1"), node("n2")]);
    let web = owned(pod("web-1").req("100m", "128Mi"), "web");
    let api = owned(pod("api-1").req("100m", "128Mi"), "api");
    state.place(pkey("web-1"), PodEntry::for_pod(&web, &"n1".into(), false));
    state.place(pkey("api-1"), PodEntry::for_pod(&api, &"n2".into(), false));
    let mut memo = CycleMemo::default();
    // Equal specs, equal room: each ReplicaSet's next pod goes where it has no sibling.
    let next_web = memo_cycle(
        &state,
        &owned(pod("web-2").req("100m", "128Mi"), "web"),
        &mut memo,
    );
    assert_eq!(next_web.decision.chosen.as_deref(), Some("n2"));
    let next_api = memo_cycle(
        &state,
        &owned(pod("api-2").req("100m", "128Mi"), "api"),
        &mut memo,
    );
    assert_eq!(next_api.decision.chosen.as_deref(), Some("n1"));
}

#[test]
fn a_node_summary_follows_its_node_through_changes_and_a_reused_slot() {
    let summary_of = |state: &ClusterState, name: &str| {
        let (slot, ni) = state
            .nodes
            .slots()
            .find(|(n, _)| *n == name)
            .map(|(_, slot)| (slot, state.nodes.at(slot)))
            .unwrap();
        let s = &state.summaries[slot as usize];
        (
            slot,
            (s.generation, s.has_hostname, s.zone.clone()),
            ni.generation,
        )
    };
    let mut zoned = node("n1");
    zoned
        .metadata
        .labels
        .insert("topology.kubernetes.io/zone", "zone-a");
    let mut state = state_of(&[zoned, node("n2")]);
    let (slot, seen, generation) = summary_of(&state, "n1");
    assert_eq!(seen, (generation, true, Some("zone-a".into())));

    state.place(pkey("a"), PodEntry::for_pod(&pod("a"), &"n1".into(), true));
    let (_, seen, moved) = summary_of(&state, "n1");
    assert!(moved > generation, "placing a pod is a change");
    assert_eq!(seen.0, moved);

    // n1 goes; a node that takes its slot writes the slot's summary anew.
    state.unplace(&pkey("a"));
    state.remove_node("n1");
    let mut plain = node("n3");
    plain.metadata.labels = Default::default();
    state.set_node(Rc::new(Object::from(plain)));
    state.list_nodes();
    let (reused, seen, fresh) = summary_of(&state, "n3");
    assert_eq!(reused, slot, "the freed slot is taken again");
    assert_eq!(seen, (fresh, false, None));
}
