//! Kubelet tests: single reconcile passes over a preloaded cache, and scenarios through the world.

use super::*;
use crate::sim::api::types::{
    HttpGetAction, IntOrString, NodeStatus, PodSpec, ResourceRequirements, StringMap,
};
use crate::sim::controllers::testing;
use crate::sim::faults::{Fault, PodTarget};
use crate::sim::machinery::trace::{ApiTrace, EventTrace, TraceKind};
use crate::sim::world::{Sim, SimConfig, MACHINE_BOOT_MS};

// ------------------------------------------------------------------ fixtures

fn node(name: &str) -> Node {
    Node {
        metadata: ObjectMeta {
            name: name.into(),
            uid: format!("uid-{name}").into(),
            resource_version: "1".into(),
            ..Default::default()
        },
        status: NodeStatus {
            allocatable: [("cpu", "4"), ("memory", "8Gi"), ("pods", "110")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn pod(name: &str, image: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: "default".into(),
            ..Default::default()
        },
        spec: PodSpec {
            node_name: "node-1".into(),
            containers: vec![Container {
                name: "app".into(),
                image: image.into(),
                ..Default::default()
            }],
            ..Default::default()
        }
        .into(),
        ..Default::default()
    }
}

#[test]
fn a_status_written_again_shares_the_strings_of_the_one_it_replaces() {
    let k = Kubelet::new("node-1");
    let mut p = pod("web", "registry.example/team/app:1.2.3");
    p.status = k.generate_status(&p, None, "172.18.0.7", 1_000, false);
    let again = k.generate_status(&p, None, "172.18.0.7", 2_000, false);
    let host_ip = |s: &PodStatus| s.host_ip.clone().expect("set");
    assert!(Str::ptr_eq(&host_ip(&again), &host_ip(&p.status)));
    let image = |s: &PodStatus| s.container_statuses[0].image.clone();
    assert!(Str::ptr_eq(&image(&again), &image(&p.status)));
    let moved = k.generate_status(&p, None, "172.18.0.8", 3_000, false);
    assert_eq!(host_ip(&moved), "172.18.0.8");
}

#[test]
fn a_pods_host_ip_is_read_again_once_the_node_changes() {
    let mut k = Kubelet::new("node-1");
    let node = |rv: &str, ip: &str| {
        let mut n = Node::default();
        n.metadata.name = "node-1".into();
        n.metadata.resource_version = rv.into();
        n.status.addresses = Some(Box::new(
            serde_json::json!([{"type": "InternalIP", "address": ip}]),
        ));
        n
    };
    assert_eq!(k.pod_host_ip(Some(&node("5", "10.0.0.1"))), "10.0.0.1");
    assert_eq!(k.pod_host_ip(Some(&node("5", "10.0.0.1"))), "10.0.0.1");
    // Someone edits the node's addresses: a new version, a new answer.
    assert_eq!(k.pod_host_ip(Some(&node("6", "10.0.0.2"))), "10.0.0.2");
    // No node object: the address derived from the node's name.
    assert_eq!(k.pod_host_ip(None), k.host_ip(None));
}

fn http_probe(period: i64) -> Probe {
    Probe {
        http_get: Some(HttpGetAction {
            path: Some("/healthz".into()),
            port: IntOrString::Int(8080),
            ..Default::default()
        }),
        period_seconds: Some(period),
        ..Default::default()
    }
}

trait PodBuilder {
    fn with_readiness(self, period: i64) -> Self;
    fn with_liveness(self, period: i64) -> Self;
    fn with_restart_policy(self, policy: &str) -> Self;
    fn with_uid(self, uid: &str) -> Self;
}

impl PodBuilder for Pod {
    fn with_readiness(mut self, period: i64) -> Self {
        self.spec_mut().containers[0].readiness_probe = Some(Box::new(http_probe(period)));
        self
    }
    fn with_liveness(mut self, period: i64) -> Self {
        self.spec_mut().containers[0].liveness_probe = Some(Box::new(http_probe(period)));
        self
    }
    fn with_restart_policy(mut self, policy: &str) -> Self {
        self.spec_mut().restart_policy = Some(policy.into());
        self
    }
    fn with_uid(mut self, uid: &str) -> Self {
        self.metadata.uid = uid.into();
        self.metadata.resource_version = "5".into();
        self
    }
}

fn cluster() -> Sim {
    let mut sim = Sim::new(SimConfig::default());
    sim.submit(ApiRequest::Create(Object::from(node("node-1"))))
        .expect("node created");
    sim
}

fn create(sim: &mut Sim, p: Pod) {
    sim.submit(ApiRequest::Create(Object::from(p)))
        .expect("pod created");
}

fn get_pod(sim: &Sim, name: &str) -> Option<Pod> {
    sim.get(&ObjectKey::new(Kind::Pod, "default", name))
        .and_then(|o| o.as_pod().cloned())
}

fn running_pod(sim: &mut Sim, p: Pod) -> Pod {
    let name = p.metadata.name.clone();
    create(sim, p);
    sim.advance_to(sim.now() + 30_000, usize::MAX);
    let p = get_pod(sim, &name).expect("pod exists");
    assert_eq!(p.status.phase, "Running", "{:?}", p.status);
    p
}

fn target(pod: &str) -> PodTarget {
    PodTarget {
        pod: Some(pod.into()),
        namespace: "default".into(),
        ..Default::default()
    }
}

/// (time, reason, message) of the kubelet's events about one pod, in order.
fn pod_events(sim: &Sim, pod: &str) -> Vec<(Millis, String, String)> {
    let object = format!("Pod/default/{pod}");
    sim.trace()
        .entries()
        .filter_map(|e| match &e.kind {
            TraceKind::Event(tr) if tr.object == object && tr.source == "kubelet" => {
                let EventTrace {
                    reason, message, ..
                } = &**tr;
                Some((e.t, reason.to_string(), message.to_string()))
            }
            _ => None,
        })
        .collect()
}

fn times_of(events: &[(Millis, String, String)], reason: &str) -> Vec<Millis> {
    events
        .iter()
        .filter(|(_, r, _)| r == reason)
        .map(|(t, _, _)| *t)
        .collect()
}

/// (time, verb, code) of the kubelet's API requests on one object.
fn kubelet_requests(sim: &Sim, object: &str) -> Vec<(Millis, String, u16)> {
    sim.trace()
        .entries()
        .filter_map(|e| match &e.kind {
            TraceKind::Api(tr) if &*tr.actor == "kubelet/node-1" && tr.object == object => {
                let ApiTrace { verb, code, .. } = &**tr;
                Some((e.t, verb.to_string(), *code))
            }
            _ => None,
        })
        .collect()
}

fn condition<'a>(p: &'a Pod, type_: &str) -> &'a Condition {
    find_condition(&p.status.conditions, type_)
        .unwrap_or_else(|| panic!("condition {type_} missing in {:?}", p.status.conditions))
}

fn reconcile_once(
    k: &mut Kubelet,
    cache: &Cache,
    rt: &mut NodeRuntime,
    key: &ObjectKey,
    now: Millis,
) -> Outcome {
    testing::reconcile_with(k, cache, key, now, &mut Rng::new(7), Some(rt))
}

fn pod_key(name: &str) -> ObjectKey {
    ObjectKey::new(Kind::Pod, "default", name)
}

// ------------------------------------------------------------------ start-up

#[test]
fn a_new_pod_is_pulled_created_and_started_in_order() {
    let mut sim = cluster();
    create(&mut sim, pod("web", "nginx:1.27"));
    sim.advance_to(500, usize::MAX);
    let pending = get_pod(&sim, "web").unwrap();
    assert_eq!(pending.status.phase, "Pending");
    assert_eq!(
        pending.status.container_statuses[0]
            .state
            .waiting
            .as_ref()
            .unwrap()
            .reason
            .as_deref(),
        Some("ContainerCreating")
    );
    assert_eq!(
        condition(&pending, "Ready").message.as_deref(),
        Some("containers with unready status: [app]")
    );

    sim.advance_to(30_000, usize::MAX);
    let events = pod_events(&sim, "web");
    let reasons: Vec<&str> = events.iter().map(|(_, r, _)| r.as_str()).collect();
    assert_eq!(reasons, ["Pulling", "Pulled", "Created", "Started"]);
    assert_eq!(events[0].2, "Pulling image \"nginx:1.27\"");
    assert!(
        events[1]
            .2
            .starts_with("Successfully pulled image \"nginx:1.27\" in "),
        "{}",
        events[1].2
    );
    assert!(
        events[1].2.contains("s including waiting). Image size: ")
            && events[1].2.ends_with(" bytes."),
        "{}",
        events[1].2
    );
    assert!(
        (1_000..=4_100).contains(&(events[1].0 - events[0].0)),
        "pull took {}ms",
        events[1].0 - events[0].0
    );
    assert_eq!(events[2].2, "Created container: app");
    assert_eq!(events[3].2, "Started container app");

    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.phase, "Running");
    let types: Vec<&str> = p
        .status
        .conditions
        .iter()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(
        types,
        [
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled"
        ]
    );
    assert!(p.status.conditions.iter().all(|c| c.status == "True"));
    assert!(p.status.pod_ip.as_deref().unwrap().starts_with("10.244.1."));
    assert!(p.status.host_ip.is_some());
    assert!(p.status.start_time.is_some());
    assert_eq!(p.status.qos_class.as_deref(), Some("BestEffort"));
    let cs = &p.status.container_statuses[0];
    assert!(cs.ready && cs.started == Some(true) && cs.restart_count == 0);
    assert!(cs.state.running.is_some());
    assert_eq!(cs.image, "docker.io/library/nginx:1.27");
    assert!(cs
        .image_id
        .as_deref()
        .unwrap()
        .starts_with("docker.io/library/nginx@sha256:"));
    assert!(cs
        .container_id
        .as_deref()
        .unwrap()
        .starts_with("containerd://"));
}

#[test]
fn an_image_already_on_the_node_is_not_pulled_again() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("first", "nginx:1.27"));
    running_pod(&mut sim, pod("second", "nginx:1.27"));
    let events = pod_events(&sim, "second");
    let reasons: Vec<&str> = events.iter().map(|(_, r, _)| r.as_str()).collect();
    assert_eq!(reasons, ["Pulled", "Created", "Started"]);
    assert_eq!(
        events[0].2,
        "Container image \"nginx:1.27\" already present on machine"
    );
}

#[test]
fn a_latest_tag_is_pulled_every_time_because_its_policy_defaults_to_always() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("first", "nginx"));
    running_pod(&mut sim, pod("second", "nginx"));
    let reasons: Vec<String> = pod_events(&sim, "second")
        .into_iter()
        .map(|(_, r, _)| r)
        .collect();
    assert_eq!(reasons, ["Pulling", "Pulled", "Created", "Started"]);
}

#[test]
fn guaranteed_and_burstable_pods_are_classified_from_requests_and_limits() {
    let mut p = pod("web", "nginx:1.27");
    let limits: StringMap = [("cpu", "500m"), ("memory", "128Mi")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    p.spec_mut().containers[0].resources = Some(ResourceRequirements {
        limits: limits.clone(),
        ..Default::default()
    });
    assert_eq!(qos_class(&p), "Guaranteed");
    let requests: StringMap = [("cpu".to_string(), "0.25".to_string())].into();
    p.spec_mut().containers[0].resources = Some(ResourceRequirements {
        limits,
        requests,
        ..Default::default()
    });
    assert_eq!(qos_class(&p), "Burstable");
    assert_eq!(qos_class(&pod("web", "nginx:1.27")), "BestEffort");
}

#[test]
fn an_invalid_image_name_leaves_the_container_waiting_with_invalid_image_name() {
    let mut cache = Cache::new();
    cache.upsert(Rc::new(Object::from(node("node-1"))));
    cache.upsert(Rc::new(Object::from(
        pod("web", "NGINX:1.27").with_uid("u1"),
    )));
    let mut rt = NodeRuntime::default();
    let out = reconcile_once(
        &mut Kubelet::new("node-1"),
        &cache,
        &mut rt,
        &pod_key("web"),
        1_000,
    );
    let reasons: Vec<&str> = out.events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["InspectFailed", "Failed"]);
    assert_eq!(out.events[1].message, "Error: InvalidImageName");
    assert_eq!(out.events[1].field_path, "spec.containers{app}");
    let Some(ApiRequest::UpdateStatus(Object::Pod(p))) = out.requests().next() else {
        panic!("expected a status update")
    };
    let w = p.status.container_statuses[0]
        .state
        .waiting
        .clone()
        .unwrap();
    assert_eq!(w.reason.as_deref(), Some("InvalidImageName"));
    assert_eq!(
        w.message.as_deref(),
        Some("Failed to apply default image tag \"NGINX:1.27\": couldn't parse image name \"NGINX:1.27\": invalid reference format: repository name (library/NGINX) must be lowercase")
    );
    assert_eq!(
        p.metadata.resource_version, "5",
        "status updates carry the cached resourceVersion"
    );
}

// ------------------------------------------------------------------ restarts

#[test]
fn a_crash_looping_container_backs_off_10_20_40_up_to_300_seconds() {
    let mut sim = cluster();
    let p = running_pod(&mut sim, pod("web", "nginx:1.27"));
    let uid = p.metadata.uid.clone();
    sim.inject(Fault::CrashLoop {
        target: target("web"),
        exit_code: 1,
        duration: None,
    })
    .unwrap();
    sim.advance_to(sim.now() + 40 * 60_000, usize::MAX);

    let events = pod_events(&sim, "web");
    let started = times_of(&events, "Started");
    assert!(started.len() >= 10, "{started:?}");
    // The first crash restarts at once (within the PLEG's 1 s relist).
    assert!(started[1] - 30_000 <= 1_100, "{started:?}");
    // Each later restart waits the back-off after the crash; the app runs 1–3 s before crashing.
    let expected = [
        10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000,
    ];
    for (i, b) in expected.iter().enumerate() {
        let gap = started[i + 2] - started[i + 1];
        assert!(
            (b + 1_000..=b + 3_100).contains(&gap),
            "restart {}: gap {gap}ms, back-off {b}ms ({started:?})",
            i + 2
        );
    }
    assert!(events.iter().any(|(_, r, m)| r == "BackOff"
        && *m == format!("Back-off restarting failed container app in pod web_default({uid})")));

    let p = get_pod(&sim, "web").unwrap();
    let cs = &p.status.container_statuses[0];
    assert_eq!(cs.restart_count as usize, started.len() - 1);
    let last = cs
        .last_state
        .as_ref()
        .and_then(|l| l.terminated.as_ref())
        .expect("lastState.terminated");
    assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));
    if let Some(w) = &cs.state.waiting {
        assert_eq!(w.reason.as_deref(), Some("CrashLoopBackOff"));
        assert_eq!(
            w.message.clone().unwrap(),
            format!("back-off 5m0s restarting failed container=app pod=web_default({uid})")
        );
        assert_eq!(
            p.status.phase, "Running",
            "a restarting container keeps the pod Running"
        );
        assert_eq!(condition(&p, "Ready").status, "False");
    }
}

#[test]
fn the_restart_back_off_resets_after_ten_minutes_of_running() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27"));
    sim.inject(Fault::CrashLoop {
        target: target("web"),
        exit_code: 1,
        duration: Some(60_000),
    })
    .unwrap();
    sim.advance_to(sim.now() + 3 * 60_000, usize::MAX);
    let before = times_of(&pod_events(&sim, "web"), "Started").len();
    assert!(before >= 4, "the loop restarted a few times");

    // Running quietly for more than 10 minutes, then one crash: restarted at once, no back-off.
    sim.advance_to(sim.now() + 12 * 60_000, usize::MAX);
    let crash_at = sim.now();
    sim.inject(Fault::CrashContainer {
        target: target("web"),
        exit_code: 2,
    })
    .unwrap();
    sim.advance_to(crash_at + 5_000, usize::MAX);
    let started = times_of(&pod_events(&sim, "web"), "Started");
    assert_eq!(started.len(), before + 1);
    assert!(
        started[before] - crash_at <= 1_100,
        "restarted without back-off"
    );

    // A second crash soon after starts the back-off again from 10 s.
    let crash_at = sim.now();
    sim.inject(Fault::CrashContainer {
        target: target("web"),
        exit_code: 2,
    })
    .unwrap();
    sim.advance_to(crash_at + 30_000, usize::MAX);
    let started = times_of(&pod_events(&sim, "web"), "Started");
    assert_eq!(started.len(), before + 2);
    assert!(
        (10_000..=10_100).contains(&(started[before + 1] - crash_at)),
        "{}",
        started[before + 1] - crash_at
    );
}

#[test]
fn an_oom_killed_container_reports_oomkilled_and_is_restarted() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27"));
    sim.inject(Fault::OomKill {
        target: target("web"),
    })
    .unwrap();
    sim.advance_to(sim.now() + 5_000, usize::MAX);
    let cs = get_pod(&sim, "web").unwrap().status.container_statuses[0].clone();
    assert_eq!(cs.restart_count, 1);
    assert!(cs.state.running.is_some());
    let t = cs.last_state.unwrap().terminated.unwrap();
    assert_eq!((t.exit_code, t.reason.as_deref()), (137, Some("OOMKilled")));
}

#[test]
fn containers_of_never_restarting_pods_end_the_pod_in_a_terminal_phase() {
    let mut sim = cluster();
    running_pod(
        &mut sim,
        pod("fails", "nginx:1.27").with_restart_policy("Never"),
    );
    running_pod(
        &mut sim,
        pod("succeeds", "nginx:1.27").with_restart_policy("OnFailure"),
    );
    sim.inject(Fault::CrashContainer {
        target: target("fails"),
        exit_code: 3,
    })
    .unwrap();
    sim.inject(Fault::CrashContainer {
        target: target("succeeds"),
        exit_code: 0,
    })
    .unwrap();
    sim.advance_to(sim.now() + 60_000, usize::MAX);
    let failed = get_pod(&sim, "fails").unwrap();
    assert_eq!(failed.status.phase, "Failed");
    assert_eq!(
        condition(&failed, "Ready").reason.as_deref(),
        Some("PodFailed")
    );
    assert_eq!(
        failed.status.container_statuses[0]
            .state
            .terminated
            .as_ref()
            .unwrap()
            .exit_code,
        3
    );
    assert_eq!(failed.status.container_statuses[0].restart_count, 0);
    let succeeded = get_pod(&sim, "succeeds").unwrap();
    assert_eq!(succeeded.status.phase, "Succeeded");
    assert_eq!(
        condition(&succeeded, "Ready").reason.as_deref(),
        Some("PodCompleted")
    );
    assert_eq!(times_of(&pod_events(&sim, "fails"), "Started").len(), 1);
}

// ------------------------------------------------------------------ probes

#[test]
fn a_failing_readiness_probe_makes_the_pod_unready_until_it_passes_again() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27").with_readiness(5));
    let p = get_pod(&sim, "web").unwrap();
    assert!(p.is_ready());
    let fault_at = sim.now();
    sim.inject(Fault::FailReadiness {
        target: target("web"),
        duration: Some(60_000),
    })
    .unwrap();
    sim.advance_to(fault_at + 30_000, usize::MAX);
    let p = get_pod(&sim, "web").unwrap();
    assert!(!p.is_ready());
    assert_eq!(
        condition(&p, "Ready").reason.as_deref(),
        Some("ContainersNotReady")
    );
    assert_eq!(
        condition(&p, "ContainersReady").message.as_deref(),
        Some("containers with unready status: [app]")
    );
    let cs = &p.status.container_statuses[0];
    assert!(cs.state.running.is_some() && !cs.ready && cs.restart_count == 0);
    let events = pod_events(&sim, "web");
    let unhealthy = times_of(&events, "Unhealthy");
    assert!(unhealthy.len() >= 3);
    assert!(events.iter().any(|(_, r, m)| r == "Unhealthy"
        && m == "Readiness probe failed: HTTP probe failed with statuscode: 503"));
    // Three failures at 5 s intervals flip Ready: 10–15 s after the fault.
    let unready_since = condition(&p, "Ready").last_transition_time.unwrap().0;
    assert!(
        (fault_at + 10_000..=fault_at + 16_000).contains(&unready_since),
        "{}",
        unready_since - fault_at
    );

    sim.advance_to(fault_at + 80_000, usize::MAX);
    let p = get_pod(&sim, "web").unwrap();
    assert!(p.is_ready());
    assert_eq!(p.status.container_statuses[0].restart_count, 0);
    assert!(times_of(&pod_events(&sim, "web"), "Killing").is_empty());
}

#[test]
fn a_failing_liveness_probe_gets_the_container_restarted() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27").with_liveness(10));
    let fault_at = sim.now();
    sim.inject(Fault::FailLiveness {
        target: target("web"),
        duration: None,
    })
    .unwrap();
    sim.advance_to(fault_at + 2 * 60_000, usize::MAX);
    let events = pod_events(&sim, "web");
    let after: Vec<&(Millis, String, String)> =
        events.iter().filter(|(t, _, _)| *t >= fault_at).collect();
    let reasons: Vec<&str> = after.iter().map(|(_, r, _)| r.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "Unhealthy",
            "Unhealthy",
            "Unhealthy",
            "Killing",
            "Pulled",
            "Created",
            "Started"
        ]
    );
    assert_eq!(
        after[0].2,
        "Liveness probe failed: HTTP probe failed with statuscode: 500"
    );
    assert_eq!(
        after[3].2,
        "Container app failed liveness probe, will be restarted"
    );
    let cs = get_pod(&sim, "web").unwrap().status.container_statuses[0].clone();
    assert_eq!(cs.restart_count, 1);
    assert_eq!(cs.last_state.unwrap().terminated.unwrap().exit_code, 137);
}

// ------------------------------------------------------------------ image pulls

#[test]
fn a_broken_image_cycles_between_err_image_pull_and_image_pull_backoff() {
    let mut sim = cluster();
    sim.inject(Fault::BreakImage {
        image: "nginx:9.9".into(),
    })
    .unwrap();
    create(&mut sim, pod("web", "nginx:9.9"));
    let mut seen: Vec<String> = Vec::new();
    for t in (100..=35_000).step_by(100) {
        sim.advance_to(t, usize::MAX);
        let p = get_pod(&sim, "web").unwrap();
        let reason = p
            .status
            .container_statuses
            .first()
            .and_then(|c| c.state.waiting.as_ref())
            .and_then(|w| w.reason.as_deref().map(String::from))
            .unwrap_or_default();
        if seen.last() != Some(&reason) {
            seen.push(reason);
        }
    }
    // Pulls at about 0 s, 11 s (after 10 s) and 32 s (after 20 s more).
    assert_eq!(
        seen,
        [
            "ContainerCreating",
            "ErrImagePull",
            "ImagePullBackOff",
            "ErrImagePull",
            "ImagePullBackOff",
            "ErrImagePull",
            "ImagePullBackOff"
        ]
    );
    let w = get_pod(&sim, "web").unwrap().status.container_statuses[0]
        .state
        .waiting
        .clone()
        .unwrap();
    assert!(
        w.message.as_deref().unwrap().starts_with("Back-off pulling image \"nginx:9.9\": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:9.9\""),
        "{w:?}"
    );

    sim.advance_to(200_000, usize::MAX);
    let events = pod_events(&sim, "web");
    let first: Vec<&str> = events.iter().take(5).map(|(_, r, _)| r.as_str()).collect();
    assert_eq!(first, ["Pulling", "Failed", "Failed", "BackOff", "Failed"]);
    assert!(events[1]
        .2
        .starts_with("Failed to pull image \"nginx:9.9\": rpc error: code = NotFound"));
    assert_eq!(events[2].2, "Error: ErrImagePull");
    assert_eq!(events[3].2, "Back-off pulling image \"nginx:9.9\"");
    assert_eq!(events[4].2, "Error: ImagePullBackOff");
    let pulling = times_of(&events, "Pulling");
    for (i, b) in [10_000u64, 20_000, 40_000, 80_000].iter().enumerate() {
        let gap = pulling[i + 1] - pulling[i];
        assert!(
            (b + 300..=b + 1_600).contains(&gap),
            "pull {}: gap {gap}ms ({pulling:?})",
            i + 1
        );
    }
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.phase, "Pending");

    sim.inject(Fault::FixImage {
        image: "nginx:9.9".into(),
    })
    .unwrap();
    sim.advance_to(sim.now() + 310_000, usize::MAX);
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.phase, "Running");
    assert!(p.is_ready());
}

// ------------------------------------------------------------------ termination

#[test]
fn a_deleted_pod_is_stopped_gracefully_and_removed_with_a_grace_zero_delete() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27"));
    let deleted_at = sim.now();
    sim.submit(ApiRequest::Delete {
        key: pod_key("web"),
        options: DeleteOptions::default(),
    })
    .unwrap();
    assert!(get_pod(&sim, "web")
        .unwrap()
        .metadata
        .deletion_timestamp
        .is_some());
    sim.advance_to(deleted_at + 5_000, usize::MAX);
    assert!(
        get_pod(&sim, "web").is_none(),
        "deleted well before the 30 s grace period ends"
    );
    let events = pod_events(&sim, "web");
    assert!(events
        .iter()
        .any(|(t, r, m)| *t >= deleted_at && r == "Killing" && m == "Stopping container app"));
    let reqs = kubelet_requests(&sim, "Pod/default/web");
    let tail: Vec<(&str, u16)> = reqs
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(|(_, v, c)| (v.as_str(), *c))
        .collect();
    assert_eq!(tail, [("update/status", 200), ("delete", 200)]);
    assert!(
        sim.machines()["node-1"].runtime.pods.is_empty(),
        "the sandbox is removed"
    );
}

#[test]
fn a_terminating_pod_without_running_containers_reports_a_terminal_phase_then_deletes_with_grace_zero(
) {
    let mut p = pod("web", "nginx:1.27").with_uid("u1");
    p.metadata.deletion_timestamp = Some(Time(40_000));
    p.metadata.deletion_grace_period_seconds = Some(30);
    p.status.phase = "Running".into();
    let mut cache = Cache::new();
    cache.upsert(Rc::new(Object::from(node("node-1"))));
    cache.upsert(Rc::new(Object::from(p)));
    let mut rt = NodeRuntime::default();
    rt.ensure_sandbox(
        &"u1".into(),
        &"default".into(),
        &"web".into(),
        "10.244.1",
        0,
    );
    rt.start_container("u1", "app", &"nginx:1.27".into(), 0, None, 0, None, 1_000);
    rt.stop_container("u1", "app", 11_000, 0);
    let out = reconcile_once(
        &mut Kubelet::new("node-1"),
        &cache,
        &mut rt,
        &pod_key("web"),
        12_000,
    );
    assert_eq!(
        out.batches.len(),
        2,
        "status first, then the delete, in separate batches"
    );
    let ApiRequest::UpdateStatus(Object::Pod(status)) = &out.batches[0][0] else {
        panic!("{:?}", out.batches)
    };
    assert_eq!(status.status.phase, "Succeeded");
    assert_eq!(
        status.status.container_statuses[0]
            .state
            .terminated
            .as_ref()
            .unwrap()
            .reason
            .as_deref(),
        Some("Completed")
    );
    let ApiRequest::Delete { key, options } = &out.batches[1][0] else {
        panic!("{:?}", out.batches)
    };
    assert_eq!(key, &pod_key("web"));
    assert_eq!(options.grace_period_seconds, Some(0));
    assert_eq!(options.precondition_uid.as_deref(), Some("u1"));
}

#[test]
fn a_pod_force_deleted_behind_the_kubelets_back_has_its_containers_killed() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27"));
    let at = sim.now();
    sim.submit(ApiRequest::Delete {
        key: pod_key("web"),
        options: DeleteOptions {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    })
    .unwrap();
    sim.advance_to(at + 1_000, usize::MAX);
    assert!(sim.machines()["node-1"].runtime.pods.is_empty());
    assert!(pod_events(&sim, "web")
        .iter()
        .any(|(t, r, _)| *t >= at && r == "Killing"));
}

// ------------------------------------------------------------------ node restarts

#[test]
fn a_node_that_goes_down_and_comes_back_restarts_its_containers() {
    let mut sim = cluster();
    let before = running_pod(&mut sim, pod("web", "nginx:1.27"));
    let down_at = sim.now();
    sim.inject(Fault::NodeDown {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(down_at + 15_000, usize::MAX);
    assert!(sim.machines()["node-1"].runtime.pods.is_empty());
    let up_at = sim.now();
    sim.inject(Fault::NodeUp {
        node: "node-1".into(),
    })
    .unwrap();
    // The machine boots before its kubelet runs again.
    sim.advance_to(up_at + MACHINE_BOOT_MS + 10_000, usize::MAX);

    let events = pod_events(&sim, "web");
    let after: Vec<&str> = events
        .iter()
        .filter(|(t, _, _)| *t >= up_at)
        .map(|(_, r, _)| r.as_str())
        .collect();
    assert_eq!(after, ["SandboxChanged", "Pulled", "Created", "Started"]);
    assert!(events
        .iter()
        .any(|(_, _, m)| m == "Container image \"nginx:1.27\" already present on machine"));
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.phase, "Running");
    assert!(p.is_ready());
    let cs = &p.status.container_statuses[0];
    assert_eq!(cs.restart_count, 1);
    assert_ne!(
        cs.container_id,
        before.status.container_statuses[0].container_id
    );
    let lost = cs.last_state.as_ref().unwrap().terminated.as_ref().unwrap();
    assert_eq!(
        (lost.exit_code, lost.reason.as_deref()),
        (137, Some("ContainerStatusUnknown"))
    );
    assert_eq!(sim.machines()["node-1"].runtime.pods.len(), 1);
}

#[test]
fn a_pod_deleted_while_its_node_was_down_is_finished_off_when_the_node_returns() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27"));
    sim.inject(Fault::NodeDown {
        node: "node-1".into(),
    })
    .unwrap();
    sim.submit(ApiRequest::Delete {
        key: pod_key("web"),
        options: DeleteOptions::default(),
    })
    .unwrap();
    sim.advance_to(sim.now() + 10_000, usize::MAX);
    assert!(
        get_pod(&sim, "web").is_some(),
        "nobody confirms the deletion while the node is down"
    );
    sim.inject(Fault::NodeUp {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(sim.now() + MACHINE_BOOT_MS + 3_000, usize::MAX);
    assert!(get_pod(&sim, "web").is_none());
    assert!(
        times_of(&pod_events(&sim, "web"), "Started").len() == 1,
        "nothing restarted for a deleted pod"
    );
}

#[test]
fn a_restarted_kubelet_finds_its_containers_still_running() {
    let mut sim = cluster();
    let before = running_pod(&mut sim, pod("web", "nginx:1.27"));
    sim.inject(Fault::RestartController {
        component: "kubelet/node-1".into(),
    })
    .unwrap();
    sim.advance_to(sim.now() + 30_000, usize::MAX);
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(
        p.status.container_statuses,
        before.status.container_statuses
    );
    assert_eq!(times_of(&pod_events(&sim, "web"), "Started").len(), 1);
}

// ------------------------------------------------------------------ heartbeats

#[test]
fn the_lease_is_created_then_renewed_every_ten_seconds() {
    let mut sim = cluster();
    sim.advance_to(60_000, usize::MAX);
    let reqs = kubelet_requests(&sim, "Lease/kube-node-lease/node-1");
    assert_eq!((reqs[0].1.as_str(), reqs[0].2), ("create", 201));
    assert!(reqs.len() >= 6);
    for pair in reqs.windows(2) {
        assert_eq!(pair[1].1, "update");
        assert!(
            pair[1].0 - pair[0].0 >= 9_990 && pair[1].0 - pair[0].0 <= 10_010,
            "{reqs:?}"
        );
    }
    let lease = sim
        .get(&ObjectKey::new(Kind::Lease, LEASE_NAMESPACE, "node-1"))
        .and_then(|o| o.as_lease().cloned())
        .unwrap();
    assert_eq!(lease.spec.holder_identity.as_deref(), Some("node-1"));
    assert_eq!(lease.spec.lease_duration_seconds, Some(40));
    assert!(lease.spec.renew_time.unwrap().0 >= 50_000);
    assert_eq!(lease.metadata.owner_references[0].kind, "Node");
}

#[test]
fn the_node_reports_ready_with_its_start_up_events() {
    let mut sim = cluster();
    sim.advance_to(15_000, usize::MAX);
    let n = sim
        .get(&ObjectKey::new(Kind::Node, "", "node-1"))
        .and_then(|o| o.as_node().cloned())
        .unwrap();
    let ready = find_condition(&n.status.conditions, "Ready").unwrap();
    assert_eq!(
        (
            ready.status.as_str(),
            ready.reason.as_deref(),
            ready.message.as_deref()
        ),
        (
            "True",
            Some("KubeletReady"),
            Some("kubelet is posting ready status")
        )
    );
    let types: Vec<&str> = n
        .status
        .conditions
        .iter()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(
        types,
        ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
    );
    assert_eq!(
        n.status.capacity.get("pods").map(|v| v.as_str()),
        Some("110")
    );
    assert_eq!(
        n.status.allocatable.get("cpu").map(|v| v.as_str()),
        Some("4")
    );
    let events: Vec<(String, String)> = sim
        .trace()
        .entries()
        .filter_map(|e| match &e.kind {
            TraceKind::Event(tr) if tr.object == "Node/node-1" && tr.source == "kubelet" => {
                let EventTrace {
                    reason, message, ..
                } = &**tr;
                Some((reason.to_string(), message.to_string()))
            }
            _ => None,
        })
        .collect();
    let reasons: Vec<&str> = events.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "Starting",
            "NodeHasSufficientMemory",
            "NodeHasNoDiskPressure",
            "NodeHasSufficientPID",
            "NodeAllocatableEnforced",
            "NodeReady"
        ]
    );
    assert_eq!(events[0].1, "Starting kubelet.");
    assert_eq!(events[5].1, "Node node-1 status is now: NodeReady");
}

#[test]
fn node_status_is_reposted_every_five_minutes_or_when_ready_is_lost() {
    let mut sim = cluster();
    sim.advance_to(400_000, usize::MAX);
    let posts: Vec<Millis> = kubelet_requests(&sim, "Node/node-1")
        .into_iter()
        .filter(|(_, v, _)| v == "update/status")
        .map(|(t, _, _)| t)
        .collect();
    assert_eq!(posts.len(), 2, "{posts:?}");
    // Five minutes between the kubelet's decisions; the API latency's jitter moves each arrival.
    assert!(
        (299_900..=300_100).contains(&(posts[1] - posts[0])),
        "{posts:?}"
    );

    let patch = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}]}});
    sim.submit(ApiRequest::Patch {
        key: ObjectKey::new(Kind::Node, "", "node-1"),
        patch,
        status: true,
    })
    .unwrap();
    sim.advance_to(sim.now() + 11_000, usize::MAX);
    let n = sim
        .get(&ObjectKey::new(Kind::Node, "", "node-1"))
        .and_then(|o| o.as_node().cloned())
        .unwrap();
    assert_eq!(n.ready_status(), "True");
    let ready_events = sim
        .trace()
        .entries()
        .filter(|e| matches!(&e.kind, TraceKind::Event(tr) if tr.reason == "NodeReady" && tr.object == "Node/node-1"))
        .count();
    assert_eq!(ready_events, 2);
}

#[test]
fn the_same_seed_replays_the_same_kubelet_history() {
    let run = || {
        let mut sim = cluster();
        running_pod(&mut sim, pod("web", "nginx:1.27").with_readiness(5));
        sim.inject(Fault::CrashLoop {
            target: target("web"),
            exit_code: 1,
            duration: Some(90_000),
        })
        .unwrap();
        sim.advance_to(sim.now() + 5 * 60_000, usize::MAX);
        pod_events(&sim, "web")
    };
    assert_eq!(run(), run());
}

// ------------------------------------------------------------------ init containers

fn with_init(mut p: Pod, name: &str, sidecar: bool) -> Pod {
    p.spec_mut().init_containers.push(Container {
        name: name.into(),
        image: "busybox:1.36".into(),
        restart_policy: sidecar.then(|| "Always".into()),
        ..Default::default()
    });
    p
}

#[test]
fn init_containers_run_to_completion_one_after_another_before_the_app_starts() {
    let mut sim = cluster();
    create(
        &mut sim,
        with_init(
            with_init(pod("web", "nginx:1.27"), "migrate", false),
            "warm",
            false,
        ),
    );
    sim.advance_to(1_500, usize::MAX);
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.phase, "Pending");
    assert_eq!(
        condition(&p, "Initialized").message.as_deref(),
        Some("containers with incomplete status: [migrate warm]")
    );
    assert_eq!(
        p.status.container_statuses[0]
            .state
            .waiting
            .as_ref()
            .unwrap()
            .reason
            .as_deref(),
        Some("PodInitializing")
    );

    sim.advance_to(40_000, usize::MAX);
    let events = pod_events(&sim, "web");
    let started: Vec<&str> = events
        .iter()
        .filter(|(_, r, _)| r == "Started")
        .map(|(_, _, m)| m.as_str())
        .collect();
    assert_eq!(
        started,
        [
            "Started container migrate",
            "Started container warm",
            "Started container app"
        ]
    );
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.phase, "Running");
    assert!(p.is_ready());
    assert_eq!(condition(&p, "Initialized").status, "True");
    let init: Vec<(Str, bool, Option<Str>)> = p
        .status
        .init_container_statuses
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.ready,
                s.state.terminated.as_ref().and_then(|t| t.reason.clone()),
            )
        })
        .collect();
    assert_eq!(
        init,
        [
            (Str::from("migrate"), true, Some(Str::from("Completed"))),
            (Str::from("warm"), true, Some(Str::from("Completed")))
        ]
    );
}

#[test]
fn a_sidecar_starts_first_keeps_running_and_counts_for_readiness() {
    let mut sim = cluster();
    create(&mut sim, with_init(pod("web", "nginx:1.27"), "proxy", true));
    sim.advance_to(30_000, usize::MAX);
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.phase, "Running");
    assert!(p.is_ready());
    let proxy = &p.status.init_container_statuses[0];
    assert!(proxy.state.running.is_some() && proxy.ready && proxy.started == Some(true));
    let events = pod_events(&sim, "web");
    let fields: Vec<&str> = events
        .iter()
        .filter(|(_, r, _)| r == "Started")
        .map(|(_, _, m)| m.as_str())
        .collect();
    assert_eq!(fields, ["Started container proxy", "Started container app"]);
}

#[test]
fn a_failing_init_container_is_retried_with_back_off_or_fails_a_never_restarting_pod() {
    let mut sim = cluster();
    create(
        &mut sim,
        with_init(pod("retry", "nginx:1.27"), "migrate", false),
    );
    create(
        &mut sim,
        with_init(
            pod("once", "nginx:1.27").with_restart_policy("Never"),
            "migrate",
            false,
        ),
    );
    sim.advance_to(100, usize::MAX);
    for name in ["retry", "once"] {
        let t = PodTarget {
            container: Some("migrate".into()),
            ..target(name)
        };
        sim.inject(Fault::CrashLoop {
            target: t,
            exit_code: 1,
            duration: None,
        })
        .unwrap();
    }
    sim.advance_to(60_000, usize::MAX);
    let retry = get_pod(&sim, "retry").unwrap();
    assert_eq!(retry.status.phase, "Pending");
    assert!(retry.status.init_container_statuses[0].restart_count >= 2);
    assert!(times_of(&pod_events(&sim, "retry"), "BackOff").len() >= 2);
    assert_eq!(condition(&retry, "Initialized").status, "False");
    let once = get_pod(&sim, "once").unwrap();
    assert_eq!(once.status.phase, "Failed");
    assert_eq!(
        once.status.init_container_statuses[0]
            .state
            .terminated
            .as_ref()
            .unwrap()
            .exit_code,
        1
    );
    assert!(pod_events(&sim, "once")
        .iter()
        .all(|(_, _, m)| m != "Started container app"));
}

// ------------------------------------------------------------------ admission

fn requesting(mut p: Pod, cpu: &str, memory: &str) -> Pod {
    let requests: StringMap = [
        ("cpu".to_string(), cpu.to_string()),
        ("memory".to_string(), memory.to_string()),
    ]
    .into();
    p.spec_mut().containers[0].resources = Some(ResourceRequirements {
        requests,
        ..Default::default()
    });
    p
}

#[test]
fn a_pod_that_does_not_fit_the_node_is_rejected_with_out_of_cpu() {
    let mut sim = cluster();
    running_pod(&mut sim, requesting(pod("big", "nginx:1.27"), "3", "1Gi"));
    create(
        &mut sim,
        requesting(pod("too-big", "nginx:1.27"), "1500m", "1Gi"),
    );
    sim.advance_to(sim.now() + 5_000, usize::MAX);
    let p = get_pod(&sim, "too-big").unwrap();
    assert_eq!(p.status.phase, "Failed");
    assert_eq!(p.status.reason.as_deref(), Some("OutOfcpu"));
    assert_eq!(
        p.status.message.as_deref(),
        Some("Pod was rejected: Node didn't have enough resource: cpu, requested: 1500, used: 3000, capacity: 4000")
    );
    let events = pod_events(&sim, "too-big");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1, "OutOfcpu");
    assert!(
        sim.machines()["node-1"].runtime.pods.len() == 1,
        "nothing was started for the rejected pod"
    );
}

#[test]
fn admission_reads_again_the_requests_of_a_pod_whose_spec_changed_since_it_was_admitted() {
    // The playground does not refuse a pod's spec changes on update (ARCHITECTURE.md); the
    // kubelet remembers what each admitted pod asks, for the spec it read it from.
    let n = node("node-1");
    let with_uid = |mut p: Pod| {
        p.metadata.uid = format!("uid-{}", p.metadata.name).into();
        p
    };
    let big = with_uid(requesting(pod("big", "nginx:1.27"), "3", "1Gi"));
    let mut kubelet = Kubelet::new("node-1");
    kubelet
        .admitted
        .insert(big.metadata.uid.clone(), Admitted::of(&big));
    let fits = with_uid(requesting(pod("fits", "nginx:1.27"), "2500m", "1Gi"));
    let admit = |kubelet: &Kubelet, big: &Pod| {
        let mut cache = Cache::with_indexers(kubelet.indexers());
        for o in [Object::from(n.clone()), Object::from(big.clone())] {
            cache.upsert(Rc::new(o));
        }
        kubelet.admit(&fits, Some(&n), &cache, &NodeRuntime::default())
    };
    assert_eq!(
        admit(&kubelet, &big).map(|(reason, _)| reason).as_deref(),
        Some("OutOfcpu")
    );
    let smaller = requesting(big, "1", "1Gi");
    assert_eq!(admit(&kubelet, &smaller), None);
}

#[test]
fn a_pod_whose_spec_changed_since_it_was_admitted_gets_the_qos_class_of_its_new_spec() {
    let mut p = pod("web", "nginx:1.27");
    p.metadata.uid = "uid-web".into();
    let mut kubelet = Kubelet::new("node-1");
    kubelet
        .admitted
        .insert(p.metadata.uid.clone(), Admitted::of(&p));
    assert_eq!(kubelet.qos_of(&p), "BestEffort");
    let asking = requesting(p, "1", "1Gi");
    assert_eq!(kubelet.qos_of(&asking), "Burstable");
}

#[test]
fn a_pod_whose_node_selector_does_not_match_is_rejected_with_node_affinity() {
    let mut sim = cluster();
    let mut p = pod("picky", "nginx:1.27");
    p.spec_mut().node_selector.insert("disktype", "ssd");
    create(&mut sim, p);
    sim.advance_to(5_000, usize::MAX);
    let p = get_pod(&sim, "picky").unwrap();
    assert_eq!(
        (p.status.phase.as_str(), p.status.reason.as_deref()),
        ("Failed", Some("NodeAffinity"))
    );
    assert_eq!(
        p.status.message.as_deref(),
        Some("Pod was rejected: Predicate NodeAffinity failed")
    );
}

#[test]
fn a_rebooted_node_reports_a_new_boot_id() {
    let mut sim = cluster();
    sim.advance_to(5_000, usize::MAX);
    let boot = |sim: &Sim| {
        let n = sim
            .get(&ObjectKey::new(Kind::Node, "", "node-1"))
            .and_then(|o| o.as_node().cloned())
            .unwrap();
        n.status.node_info.unwrap()["bootID"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first = boot(&sim);
    sim.inject(Fault::NodeDown {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(20_000, usize::MAX);
    sim.inject(Fault::NodeUp {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(20_000 + MACHINE_BOOT_MS + 5_000, usize::MAX);
    let second = boot(&sim);
    assert_ne!(first, second);
    let rebooted: Vec<String> = sim
        .trace()
        .entries()
        .filter_map(|e| match &e.kind {
            TraceKind::Event(tr) if tr.reason == "Rebooted" && tr.event_type == "Warning" => {
                let EventTrace { message, .. } = &**tr;
                Some(message.to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        rebooted,
        [format!("Node node-1 has been rebooted, boot id: {second}")]
    );
}

#[test]
fn a_partitioned_kubelet_keeps_its_containers_running_and_catches_up_after_healing() {
    let mut sim = cluster();
    running_pod(&mut sim, pod("web", "nginx:1.27"));
    sim.inject(Fault::PartitionNode {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(sim.now() + 5_000, usize::MAX);
    sim.inject(Fault::CrashContainer {
        target: target("web"),
        exit_code: 1,
    })
    .unwrap();
    sim.advance_to(sim.now() + 120_000, usize::MAX);
    let stale = get_pod(&sim, "web").unwrap();
    assert_eq!(
        stale.status.container_statuses[0].restart_count, 0,
        "the API cannot hear about the restart"
    );
    let c = sim.machines()["node-1"]
        .runtime
        .container(&stale.metadata.uid, "app")
        .unwrap()
        .clone();
    assert!(
        c.running && c.attempt == 1,
        "the kubelet restarted the container anyway"
    );
    let failed = kubelet_requests(&sim, "Pod/default/web")
        .iter()
        .filter(|(_, _, code)| *code == 503)
        .count();
    assert!(failed >= 1);

    sim.inject(Fault::HealNode {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(sim.now() + 11_000, usize::MAX);
    let p = get_pod(&sim, "web").unwrap();
    assert_eq!(p.status.container_statuses[0].restart_count, 1);
    assert!(p.is_ready());
    let n = sim
        .get(&ObjectKey::new(Kind::Node, "", "node-1"))
        .and_then(|o| o.as_node().cloned())
        .unwrap();
    assert_eq!(n.ready_status(), "True");
}

#[test]
fn a_never_restarting_pod_that_lost_its_container_in_a_reboot_fails_instead_of_running_again() {
    let mut sim = cluster();
    running_pod(
        &mut sim,
        pod("once", "nginx:1.27").with_restart_policy("Never"),
    );
    sim.inject(Fault::NodeDown {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(sim.now() + 10_000, usize::MAX);
    sim.inject(Fault::NodeUp {
        node: "node-1".into(),
    })
    .unwrap();
    sim.advance_to(sim.now() + MACHINE_BOOT_MS + 10_000, usize::MAX);
    let p = get_pod(&sim, "once").unwrap();
    assert_eq!(p.status.phase, "Failed");
    let t = p.status.container_statuses[0]
        .state
        .terminated
        .clone()
        .unwrap();
    assert_eq!(
        (t.exit_code, t.reason.as_deref()),
        (137, Some("ContainerStatusUnknown"))
    );
    assert_eq!(times_of(&pod_events(&sim, "once"), "Started").len(), 1);
    assert!(
        sim.machines()["node-1"].runtime.pods.is_empty(),
        "no sandbox for a pod that will not run"
    );
}

#[test]
fn a_kubelet_gives_a_node_someone_else_created_its_default_labels_and_keeps_the_others() {
    let mut sim = Sim::new(SimConfig::default());
    let mut n = node("edge-7");
    n.metadata.labels = [
        ("tier".to_string(), "edge".to_string()),
        ("kubernetes.io/os".to_string(), "windows".to_string()),
    ]
    .into();
    sim.submit(ApiRequest::Create(Object::from(n)))
        .expect("node created");
    sim.advance_to(5_000, usize::MAX);
    let labels = sim
        .get(&ObjectKey::new(Kind::Node, "", "edge-7"))
        .and_then(|o| o.as_node().cloned())
        .expect("node")
        .metadata
        .labels;
    let get = |k: &str| labels.get(k).map(|v| v.as_str());
    assert_eq!(get("kubernetes.io/hostname"), Some("edge-7"));
    assert_eq!(get("kubernetes.io/arch"), Some("amd64"));
    // updateDefaultLabels corrects a default label that disagrees with the machine.
    assert_eq!(get("kubernetes.io/os"), Some("linux"));
    assert_eq!(get("tier"), Some("edge"));
}

#[test]
fn a_changed_image_restarts_the_container_right_after_its_pull_without_a_crash_back_off() {
    let mut sim = cluster();
    let mut p = running_pod(&mut sim, pod("web", "nginx:1.27"));
    let changed_at = sim.now();
    p.spec_mut().containers[0].image = "nginx:1.28".into();
    sim.submit(ApiRequest::Update(Object::from(p)))
        .expect("image changed");
    sim.advance_to(changed_at + 30_000, usize::MAX);
    let after: Vec<(Millis, String, String)> = pod_events(&sim, "web")
        .into_iter()
        .filter(|(t, _, _)| *t >= changed_at)
        .collect();
    let reasons: Vec<&str> = after.iter().map(|(_, r, _)| r.as_str()).collect();
    assert_eq!(
        reasons,
        ["Killing", "Pulling", "Pulled", "Created", "Started"],
        "{after:?}"
    );
    assert_eq!(
        after[2].0, after[4].0,
        "started as soon as pulled: {after:?}"
    );
    let p = get_pod(&sim, "web").expect("pod exists");
    let status = &p.status.container_statuses[0];
    assert_eq!(
        (status.image.as_str(), status.restart_count, status.ready),
        ("docker.io/library/nginx:1.28", 1, true)
    );
}
