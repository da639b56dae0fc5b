//! The Deployment controller's tests: each reconcile's requests, events and status, against upstream's.

use super::*;
use crate::sim::api::types::{
    Container, DeploymentStrategy, IntOrString, LabelSelector, ObjectMeta, PodTemplateSpec,
    ReplicaSetSpec, ReplicaSetStatus, RollingUpdateDeployment, StringMap, Time,
};
use crate::sim::controllers::testing;
use crate::sim::machinery::trace::EventTrace;
use crate::sim::world::{Sim, SimConfig};
use util::{
    compute_hash, controller_ref, max_surge, selector_with_hash, DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION, POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
};

const NOW: Millis = 1_000_000;

fn labels(pairs: &[(&str, &str)]) -> StringMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn template(image: &str) -> PodTemplateSpec {
    let mut t = PodTemplateSpec::default();
    t.metadata.labels = labels(&[("app", "web")]);
    t.spec.containers = vec![Container {
        name: "app".into(),
        image: image.into(),
        ..Default::default()
    }];
    t
}

/// Deployment `default/web` at generation 1 (observed), running `image`, default strategy.
fn deploy(replicas: i32, image: &str) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: "web".into(),
            namespace: "default".into(),
            uid: "uid-web".into(),
            resource_version: "100".into(),
            generation: 1,
            creation_timestamp: Some(Time(0)),
            ..Default::default()
        },
        spec: crate::sim::api::types::DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: labels(&[("app", "web")]),
                ..Default::default()
            },
            template: template(image),
            ..Default::default()
        },
        status: DeploymentStatus {
            observed_generation: 1,
            ..Default::default()
        },
    }
}

fn surge(mut d: Deployment, max_surge: i64, max_unavailable: i64) -> Deployment {
    d.spec.strategy = Some(DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(IntOrString::Int(max_surge)),
            max_unavailable: Some(IntOrString::Int(max_unavailable)),
        }),
    });
    d
}

fn recreate(mut d: Deployment) -> Deployment {
    d.spec.strategy = Some(DeploymentStrategy {
        type_: Some("Recreate".into()),
        rolling_update: None,
    });
    d
}

fn paused(mut d: Deployment) -> Deployment {
    d.spec.paused = true;
    d
}

/// ReplicaSet `name` of `d` running `image` with `replicas`, all ready and available, at
/// revision `rev`, created at second `created`, annotated for `d`'s current size.
fn rs(
    d: &Deployment,
    name: &str,
    image: &str,
    replicas: i32,
    rev: i64,
    created: u64,
) -> ReplicaSet {
    let hash = name.rsplit('-').next().unwrap_or(name).to_string();
    let mut t = template(image);
    t.metadata
        .labels
        .insert(POD_TEMPLATE_HASH_LABEL, hash.clone());
    let desired = util::replicas(d);
    ReplicaSet {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: "default".into(),
            uid: format!("uid-{name}").into(),
            resource_version: "50".into(),
            generation: 1,
            creation_timestamp: Some(Time(created * 1000)),
            labels: t.metadata.labels.clone(),
            annotations: labels(&[
                (REVISION_ANNOTATION, &rev.to_string()),
                (DESIRED_REPLICAS_ANNOTATION, &desired.to_string()),
                (
                    MAX_REPLICAS_ANNOTATION,
                    &(desired + max_surge(d)).to_string(),
                ),
            ]),
            owner_references: vec![controller_ref(d)],
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            min_ready_seconds: 0,
            selector: selector_with_hash(&d.spec.selector, &hash),
            template: t,
        },
        status: ReplicaSetStatus {
            replicas,
            ready_replicas: replicas,
            available_replicas: replicas,
            observed_generation: 1,
            ..Default::default()
        },
    }
}

fn available(mut r: ReplicaSet, n: i32) -> ReplicaSet {
    r.status.available_replicas = n;
    r.status.ready_replicas = n;
    r
}

fn annotated(mut r: ReplicaSet, desired: i32, max: i32) -> ReplicaSet {
    r.metadata
        .annotations
        .insert(DESIRED_REPLICAS_ANNOTATION, desired.to_string());
    r.metadata
        .annotations
        .insert(MAX_REPLICAS_ANNOTATION, max.to_string());
    r
}

fn pod_of(r: &ReplicaSet, name: &str, phase: &str, terminating: bool) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = "default".into();
    p.metadata.uid = format!("uid-{name}").into();
    p.metadata.labels = r.spec.template.metadata.labels.clone();
    p.metadata.owner_references = vec![crate::sim::api::types::OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: r.metadata.name.clone(),
        uid: r.metadata.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }];
    p.status.phase = phase.into();
    if terminating {
        p.metadata.deletion_timestamp = Some(Time(NOW + 30_000));
    }
    p
}

fn cache_with(d: &Deployment, rss: &[ReplicaSet], pods: &[Pod]) -> Cache {
    let mut c = Cache::new();
    c.upsert(Rc::new(Object::from(d.clone())));
    for r in rss {
        c.upsert(Rc::new(Object::from(r.clone())));
    }
    for p in pods {
        c.upsert(Rc::new(Object::from(p.clone())));
    }
    c
}

fn web() -> ObjectKey {
    ObjectKey::new(Kind::Deployment, "default", "web")
}

/// One reconcile; every write is then answered with success, so the events that wait for
/// success land in `events` after the pass's own.
fn run_at(ctrl: &mut DeploymentController, cache: &Cache, now: Millis) -> Outcome {
    let mut out = reconcile_only(ctrl, cache, now);
    let answered: Vec<EventRecord> = out
        .requests()
        .flat_map(|r| {
            ctrl.events_for_response(r, &Ok(Rc::new(Object::from(Deployment::default()))))
        })
        .collect();
    out.events.extend(answered);
    out
}

fn reconcile_only(ctrl: &mut DeploymentController, cache: &Cache, now: Millis) -> Outcome {
    testing::reconcile_once(ctrl, cache, &web(), now)
}

fn run(d: &Deployment, rss: &[ReplicaSet]) -> Outcome {
    run_at(
        &mut DeploymentController::new(),
        &cache_with(d, rss, &[]),
        NOW,
    )
}

/// The name the controller gives `d`'s new ReplicaSet.
fn new_name(d: &Deployment) -> String {
    format!(
        "web-{}",
        compute_hash(&d.spec.template, d.status.collision_count)
    )
}

/// Requests as short lines; the new ReplicaSet's generated name reads `NEW`.
fn summary(out: &Outcome, d: &Deployment) -> Vec<String> {
    let new = new_name(d);
    out.requests()
        .map(|r| {
            let line = match r {
                ApiRequest::Create(Object::ReplicaSet(rs)) => {
                    format!(
                        "create ReplicaSet {} replicas={}",
                        rs.metadata.name,
                        util::rs_replicas(rs)
                    )
                }
                ApiRequest::Update(Object::ReplicaSet(rs)) => {
                    format!(
                        "update ReplicaSet {} replicas={}",
                        rs.metadata.name,
                        util::rs_replicas(rs)
                    )
                }
                other => format!("{} {} {}", other.verb(), other.key().kind, other.key().name),
            };
            line.replace(&new, "NEW")
        })
        .collect()
}

fn events(out: &Outcome, d: &Deployment) -> Vec<String> {
    let new = new_name(d);
    out.events
        .iter()
        .map(|e| format!("{} {} {}", e.type_, e.reason, e.message).replace(&new, "NEW"))
        .collect()
}

fn written_status(out: &Outcome) -> Option<Deployment> {
    out.requests().find_map(|r| match r {
        ApiRequest::UpdateStatus(Object::Deployment(d)) => Some(Deployment::clone(d)),
        _ => None,
    })
}

fn written_rs(out: &Outcome, name: &str) -> Option<ReplicaSet> {
    out.requests().find_map(|r| match r {
        ApiRequest::Create(Object::ReplicaSet(rs)) | ApiRequest::Update(Object::ReplicaSet(rs))
            if rs.metadata.name == name =>
        {
            Some(ReplicaSet::clone(rs))
        }
        _ => None,
    })
}

fn condition<'a>(d: &'a Deployment, type_: &str) -> (&'a str, &'a str, &'a str) {
    let c = util::get_condition(&d.status, type_)
        .unwrap_or_else(|| panic!("no {type_} condition in {:?}", d.status.conditions));
    (
        c.status.as_str(),
        c.reason.as_deref().unwrap_or(""),
        c.message.as_deref().unwrap_or(""),
    )
}

/// `d` after the status update in `out` landed (as the informer would deliver it).
fn after(d: &Deployment, out: &Outcome) -> Deployment {
    let mut next = d.clone();
    if let Some(w) = written_status(out) {
        next.status = w.status;
        next.metadata.annotations = w.metadata.annotations;
    }
    next
}

// ------------------------------------------------------------ RollingUpdate steps

struct Step {
    name: &'static str,
    d: Deployment,
    rss: Vec<ReplicaSet>,
    requests: &'static [&'static str],
    events: &'static [&'static str],
}

#[test]
fn each_rolling_update_step_sends_exactly_the_expected_requests() {
    let d10 = surge(deploy(10, "v2"), 3, 2);
    let d3 = deploy(3, "v2");
    let d4 = deploy(4, "v3");
    let steps = vec![
        Step {
            name: "ten replicas with surge 3 / unavailable 2: new RS created at 3, old scaled 10→8",
            rss: vec![rs(&d10, "web-v1", "v1", 10, 1, 1)],
            d: d10,
            requests: &[
                "create ReplicaSet NEW replicas=3",
                "update ReplicaSet web-v1 replicas=8",
                "update/status Deployment web",
            ],
            events: &[
                "Normal ScalingReplicaSet Scaled up replica set NEW from 0 to 3",
                "Normal ScalingReplicaSet Scaled down replica set web-v1 from 10 to 8",
            ],
        },
        Step {
            name: "an available new pod lets the old RS shrink by one",
            rss: vec![
                rs(&d3, "web-v1", "v1", 3, 1, 1),
                rs(&d3, "web-v2", "v2", 1, 2, 2),
            ],
            d: d3.clone(),
            requests: &[
                "update ReplicaSet web-v1 replicas=2",
                "update/status Deployment web",
            ],
            events: &["Normal ScalingReplicaSet Scaled down replica set web-v1 from 3 to 2"],
        },
        Step {
            name: "the new RS grows while the total stays within replicas plus surge",
            rss: vec![
                rs(&d3, "web-v1", "v1", 2, 1, 1),
                rs(&d3, "web-v2", "v2", 1, 2, 2),
            ],
            d: d3.clone(),
            requests: &[
                "update ReplicaSet web-v2 replicas=2",
                "update/status Deployment web",
            ],
            events: &["Normal ScalingReplicaSet Scaled up replica set web-v2 from 1 to 2"],
        },
        Step {
            name: "an unavailable new pod blocks any scale-down",
            rss: vec![
                rs(&d3, "web-v1", "v1", 3, 1, 1),
                available(rs(&d3, "web-v2", "v2", 1, 2, 2), 0),
            ],
            d: d3.clone(),
            requests: &["update/status Deployment web"],
            events: &[],
        },
        Step {
            name: "unhealthy old replicas are cleaned up, oldest RS first",
            rss: vec![
                available(rs(&d4, "web-v1", "v1", 2, 1, 1), 0),
                rs(&d4, "web-v2", "v2", 2, 2, 2),
                rs(&d4, "web-v3", "v3", 1, 3, 3),
            ],
            d: d4.clone(),
            requests: &[
                "update ReplicaSet web-v1 replicas=0",
                "update/status Deployment web",
            ],
            events: &["Normal ScalingReplicaSet Scaled down replica set web-v1 from 2 to 0"],
        },
        Step {
            name: "spare availability scales old RSs down, oldest first",
            rss: vec![
                rs(&d4, "web-v1", "v1", 1, 1, 1),
                rs(&d4, "web-v2", "v2", 2, 2, 2),
                rs(&d4, "web-v3", "v3", 2, 3, 3),
            ],
            d: d4.clone(),
            requests: &[
                "update ReplicaSet web-v1 replicas=0",
                "update ReplicaSet web-v2 replicas=1",
                "update/status Deployment web",
            ],
            events: &[
                "Normal ScalingReplicaSet Scaled down replica set web-v1 from 1 to 0",
                "Normal ScalingReplicaSet Scaled down replica set web-v2 from 2 to 1",
            ],
        },
        Step {
            name: "a new RS larger than the spec is scaled down to it",
            rss: vec![rs(&d3, "web-v2", "v2", 4, 1, 1)],
            d: d3.clone(),
            requests: &[
                "update ReplicaSet web-v2 replicas=3",
                "update/status Deployment web",
            ],
            events: &["Normal ScalingReplicaSet Scaled down replica set web-v2 from 4 to 3"],
        },
    ];
    for s in steps {
        let out = run(&s.d, &s.rss);
        assert_eq!(summary(&out, &s.d), s.requests, "{}", s.name);
        assert_eq!(events(&out, &s.d), s.events, "{}", s.name);
        assert_eq!(out.error, None, "{}", s.name);
    }
}

/// A Deployment of 3 mid-rollout: web-v1 (3) is next to scale down, to 2.
fn mid_rollout() -> Cache {
    let d = deploy(3, "v2");
    cache_with(
        &d,
        &[
            rs(&d, "web-v1", "v1", 3, 1, 1),
            rs(&d, "web-v2", "v2", 1, 2, 2),
        ],
        &[],
    )
}

/// Answers `scale` with success: the controller records its one pending event, then holds none.
fn succeed_and_expect_the_scale_down_event(ctrl: &mut DeploymentController, scale: &ApiRequest) {
    let ok = Ok(Rc::new(Object::from(Deployment::default())));
    let recorded: Vec<String> = ctrl
        .events_for_response(scale, &ok)
        .iter()
        .map(|e| e.message.to_string())
        .collect();
    assert_eq!(recorded, ["Scaled down replica set web-v1 from 3 to 2"]);
    assert!(ctrl.pending_events.is_empty());
}

#[test]
fn scaling_events_are_recorded_only_when_the_write_succeeds() {
    let cache = mid_rollout();
    let mut ctrl = DeploymentController::new();
    let out = reconcile_only(&mut ctrl, &cache, NOW);
    assert!(
        out.events.is_empty(),
        "nothing is recorded before the answer"
    );
    let scale = out.requests().next().expect("scale-down").clone();
    let conflict = Err(ApiError::conflict(Kind::ReplicaSet, "web-v1"));
    assert!(ctrl.events_for_response(&scale, &conflict).is_empty());
    let out = reconcile_only(&mut ctrl, &cache, NOW + 20);
    let scale = out.requests().next().expect("retried").clone();
    succeed_and_expect_the_scale_down_event(&mut ctrl, &scale);
}

#[test]
fn a_skipped_request_does_not_take_the_event_of_an_equal_one_that_succeeds() {
    let cache = mid_rollout();
    let mut ctrl = DeploymentController::new();
    // Two passes over the same cache (a watch event and a retry): equal scale-downs.
    let first = reconcile_only(&mut ctrl, &cache, NOW);
    let second = reconcile_only(&mut ctrl, &cache, NOW);
    let scale = first.requests().next().expect("scale-down").clone();
    assert_eq!(second.requests().next(), Some(&scale));
    // The first pass's earlier write failed, so its scale-down never went out...
    ctrl.on_skipped(&scale);
    // ...and the second pass's succeeded: its event is recorded.
    succeed_and_expect_the_scale_down_event(&mut ctrl, &scale);
}

#[test]
fn first_rollout_creates_the_new_replica_set_with_hash_labels_and_revision_1() {
    let d = deploy(3, "nginx:1.27");
    let out = run(&d, &[]);
    let name = new_name(&d);
    assert_eq!(
        summary(&out, &d),
        [
            "create ReplicaSet NEW replicas=3",
            "update/status Deployment web"
        ]
    );
    assert_eq!(
        events(&out, &d),
        ["Normal ScalingReplicaSet Scaled up replica set NEW from 0 to 3"]
    );
    let created = written_rs(&out, &name).expect("created");
    let hash = name.trim_start_matches("web-");
    assert!(hash.chars().all(|c| "456789bcdf".contains(c)), "{hash}");
    for l in [
        &created.metadata.labels,
        &created.spec.template.metadata.labels,
        &created.spec.selector.match_labels,
    ] {
        assert_eq!(
            l.get(POD_TEMPLATE_HASH_LABEL).map(|v| v.as_str()),
            Some(hash)
        );
    }
    assert_eq!(
        created
            .metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("1")
    );
    assert_eq!(
        created
            .metadata
            .annotations
            .get(DESIRED_REPLICAS_ANNOTATION)
            .map(|v| v.as_str()),
        Some("3")
    );
    assert_eq!(
        created
            .metadata
            .annotations
            .get(MAX_REPLICAS_ANNOTATION)
            .map(|v| v.as_str()),
        Some("4")
    );
    let owner = created.metadata.controller_ref().expect("controller ref");
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.uid.as_str(),
            owner.block_owner_deletion
        ),
        ("Deployment", "uid-web", Some(true))
    );
    let status = written_status(&out).expect("status");
    assert_eq!(
        status
            .metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("1")
    );
    assert_eq!(
        condition(&status, "Progressing"),
        (
            "True",
            "NewReplicaSetCreated",
            &*format!("Created new replica set \"{name}\"")
        )
    );
    assert_eq!(
        condition(&status, "Available"),
        (
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability."
        )
    );
}

#[test]
fn deployment_annotations_are_copied_to_the_new_replica_set_except_excluded_ones() {
    let mut d = deploy(1, "v1");
    d.metadata.annotations = labels(&[
        ("team", "blue"),
        (crate::sim::api::types::LAST_APPLIED, "{}"),
        (REVISION_ANNOTATION, "7"),
    ]);
    let out = run(&d, &[]);
    let created = written_rs(&out, &new_name(&d)).expect("created");
    assert_eq!(
        created.metadata.annotations.get("team").map(|v| v.as_str()),
        Some("blue")
    );
    assert!(!created
        .metadata
        .annotations
        .contains_key(crate::sim::api::types::LAST_APPLIED));
    assert_eq!(
        created
            .metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("1")
    );
}

// ------------------------------------------------------------ Recreate

#[test]
fn recreate_scales_old_replica_sets_to_zero_first_and_creates_nothing() {
    let d = recreate(deploy(3, "v2"));
    let out = run(&d, &[rs(&d, "web-v1", "v1", 3, 1, 1)]);
    assert_eq!(
        summary(&out, &d),
        [
            "update ReplicaSet web-v1 replicas=0",
            "update/status Deployment web"
        ]
    );
    assert_eq!(
        events(&out, &d),
        ["Normal ScalingReplicaSet Scaled down replica set web-v1 from 3 to 0"]
    );
}

#[test]
fn recreate_waits_while_an_old_pod_still_exists() {
    let d = recreate(deploy(3, "v2"));
    let old = rs(&d, "web-v1", "v1", 0, 1, 1);
    let pods = [pod_of(&old, "web-v1-abcde", "Running", true)];
    let out = run_at(
        &mut DeploymentController::new(),
        &cache_with(&d, &[old], &pods),
        NOW,
    );
    assert!(
        summary(&out, &d).iter().all(|l| !l.contains("ReplicaSet")),
        "{:?}",
        summary(&out, &d)
    );
    assert!(out
        .record
        .expect("record")
        .diff
        .contains("wait for old pods"));
}

#[test]
fn recreate_creates_the_new_replica_set_at_full_size_once_old_pods_are_gone() {
    let d = recreate(deploy(3, "v2"));
    let old = rs(&d, "web-v1", "v1", 0, 1, 1);
    let failed = [pod_of(&old, "web-v1-done", "Failed", false)];
    let out = run_at(
        &mut DeploymentController::new(),
        &cache_with(&d, &[old], &failed),
        NOW,
    );
    assert_eq!(
        summary(&out, &d),
        [
            "create ReplicaSet NEW replicas=3",
            "update/status Deployment web"
        ]
    );
    assert_eq!(
        events(&out, &d),
        ["Normal ScalingReplicaSet Scaled up replica set NEW from 0 to 3"]
    );
}

#[test]
fn deleting_the_last_pod_of_a_recreate_deployment_wakes_it() {
    let d = recreate(deploy(3, "v2"));
    let old = rs(&d, "web-v1", "v1", 0, 1, 1);
    let gone = pod_of(&old, "web-v1-a", "Running", true);
    let other = pod_of(&old, "web-v1-b", "Running", true);
    let ev = WatchEvent::new(WatchEventType::Deleted, Rc::new(Object::from(gone)), 9, 0);
    let mut ctrl = DeploymentController::new();
    let cache = cache_with(&d, std::slice::from_ref(&old), std::slice::from_ref(&other));
    assert!(
        ctrl.keys_for_event(&ev, None, &cache).is_empty(),
        "another old pod remains"
    );
    let cache = cache_with(&d, &[old], &[]);
    assert_eq!(ctrl.keys_for_event(&ev, None, &cache), [web()]);
    let rolling = deploy(3, "v2");
    let cache = cache_with(&rolling, &[rs(&rolling, "web-v1", "v1", 0, 1, 1)], &[]);
    assert!(
        ctrl.keys_for_event(&ev, None, &cache).is_empty(),
        "RollingUpdate ignores pod deletions"
    );
}

// ------------------------------------------------------------ scaling events

#[test]
fn proportional_scaling_mid_rollout_matches_the_documentation_example() {
    let d = surge(deploy(15, "v2"), 3, 2);
    let old = annotated(rs(&d, "web-v1", "v1", 8, 1, 1), 10, 13);
    let new = annotated(rs(&d, "web-v2", "v2", 5, 2, 2), 10, 13);
    let out = run(&d, &[old, new]);
    assert_eq!(
        summary(&out, &d),
        [
            "update ReplicaSet web-v1 replicas=11",
            "update ReplicaSet web-v2 replicas=7",
            "update/status Deployment web"
        ]
    );
    assert_eq!(
        events(&out, &d),
        [
            "Normal ScalingReplicaSet Scaled up replica set web-v1 from 8 to 11",
            "Normal ScalingReplicaSet Scaled up replica set web-v2 from 5 to 7",
        ]
    );
    let v1 = written_rs(&out, "web-v1").expect("v1");
    assert_eq!(
        v1.metadata
            .annotations
            .get(DESIRED_REPLICAS_ANNOTATION)
            .map(|v| v.as_str()),
        Some("15")
    );
    assert_eq!(
        v1.metadata
            .annotations
            .get(MAX_REPLICAS_ANNOTATION)
            .map(|v| v.as_str()),
        Some("18")
    );
}

#[test]
fn proportional_scale_down_takes_from_the_oldest_largest_first_and_gives_it_the_leftover() {
    // 15 → 10 with surge 3: allowed 13, 18 running; old 11 and new 7 lose 8×… proportionally.
    let d = surge(deploy(10, "v2"), 3, 2);
    let old = annotated(rs(&d, "web-v1", "v1", 11, 1, 1), 15, 18);
    let new = annotated(rs(&d, "web-v2", "v2", 7, 2, 2), 15, 18);
    let out = run(&d, &[old, new]);
    // old: round(11×13/18)=8 (−3); new: round(7×13/18)=5 (−2); total −5 = 13−18.
    assert_eq!(
        summary(&out, &d),
        [
            "update ReplicaSet web-v1 replicas=8",
            "update ReplicaSet web-v2 replicas=5",
            "update/status Deployment web"
        ]
    );
}

#[test]
fn scaling_a_settled_deployment_resizes_its_only_replica_set() {
    let d = deploy(5, "v1");
    let out = run(&d, &[annotated(rs(&d, "web-v1", "v1", 3, 1, 1), 3, 4)]);
    assert_eq!(
        summary(&out, &d),
        [
            "update ReplicaSet web-v1 replicas=5",
            "update/status Deployment web"
        ]
    );
    let v1 = written_rs(&out, "web-v1").expect("v1");
    assert_eq!(
        v1.metadata
            .annotations
            .get(MAX_REPLICAS_ANNOTATION)
            .map(|v| v.as_str()),
        Some("7")
    );
}

// ------------------------------------------------------------ revisions and history

#[test]
fn rolling_back_to_revision_1_makes_it_revision_3_with_history_1() {
    // The template was just set back to v1 (kubectl rollout undo); v2 still runs everything.
    let mut d = deploy(3, "v1");
    d.status = DeploymentStatus {
        observed_generation: 1,
        replicas: 3,
        ready_replicas: 3,
        available_replicas: 3,
        ..Default::default()
    };
    let out = run(
        &d,
        &[
            rs(&d, "web-v1", "v1", 0, 1, 1),
            rs(&d, "web-v2", "v2", 3, 2, 2),
        ],
    );
    assert_eq!(
        summary(&out, &d),
        [
            "update ReplicaSet web-v1 replicas=1",
            "update/status Deployment web"
        ]
    );
    let v1 = written_rs(&out, "web-v1").expect("v1");
    assert_eq!(
        v1.metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("3")
    );
    assert_eq!(
        v1.metadata
            .annotations
            .get(REVISION_HISTORY_ANNOTATION)
            .map(|v| v.as_str()),
        Some("1")
    );
    let status = written_status(&out).expect("status");
    assert_eq!(
        status
            .metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("3")
    );
    assert_eq!(
        condition(&status, "Progressing"),
        (
            "True",
            "FoundNewReplicaSet",
            "Found new replica set \"web-v1\""
        )
    );
}

#[test]
fn rollout_undo_picks_the_previous_revision_or_the_one_asked_for() {
    let d = deploy(3, "v2");
    let v1 = rs(&d, "web-v1", "v1", 0, 1, 1);
    let mut v2 = rs(&d, "web-v2", "v2", 3, 2, 2);
    v2.metadata
        .annotations
        .insert("kubernetes.io/change-cause", "v2");
    let mut with_cause = v1.clone();
    with_cause
        .metadata
        .annotations
        .insert("kubernetes.io/change-cause", "v1");
    let rss = [&with_cause, &v2];
    let plan = rollback_template(&d, &rss, None).expect("plan");
    let RollbackPlan::RollBack {
        revision,
        template: t,
        annotations,
    } = &plan
    else {
        panic!("{plan:?}")
    };
    assert_eq!(*revision, 1);
    assert_eq!(*t, template("v1"), "the hash label is dropped");
    assert_eq!(
        annotations
            .get("kubernetes.io/change-cause")
            .map(|v| v.as_str()),
        Some("v1")
    );
    assert_eq!(plan.message(), "rolled back");
    let cases: [(Option<i64>, Result<String, String>); 4] = [
        (
            Some(2),
            Ok("skipped rollback (current template already matches revision 2)".into()),
        ),
        (Some(1), Ok("rolled back".into())),
        (
            Some(5),
            Err("unable to find specified revision 5 in history".into()),
        ),
        (
            Some(-1),
            Err("unable to find specified revision -1 in history".into()),
        ),
    ];
    for (to, want) in cases {
        assert_eq!(
            rollback_template(&d, &[&v1, &v2], to).map(|p| p.message()),
            want,
            "{to:?}"
        );
    }
    assert_eq!(
        rollback_template(&d, &[&v2], None),
        Err("no rollout history found for deployment \"web\"".into())
    );
    assert_eq!(
        rollback_template(&paused(d.clone()), &[&v1, &v2], None),
        Err("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/web' and try again".into())
    );
}

/// `d` as it looks once the rollout to `rev` completed and the controller recorded it.
fn settled(mut d: Deployment, rev: &str) -> Deployment {
    let r = util::replicas(&d);
    d.metadata.annotations.insert(REVISION_ANNOTATION, rev);
    d.status = DeploymentStatus {
        observed_generation: d.metadata.generation,
        replicas: r,
        updated_replicas: r,
        ready_replicas: r,
        available_replicas: r,
        conditions: vec![
            util::new_condition(
                "Available",
                "True",
                util::MINIMUM_REPLICAS_AVAILABLE,
                "Deployment has minimum availability.",
                0,
            ),
            util::new_condition(
                "Progressing",
                "True",
                util::NEW_RS_AVAILABLE_REASON,
                "ReplicaSet \"x\" has successfully progressed.",
                0,
            ),
        ],
        ..Default::default()
    };
    d
}

#[test]
fn history_cleanup_deletes_the_oldest_scaled_down_revisions_beyond_the_limit() {
    let mut d = settled(deploy(3, "v3"), "3");
    d.spec.revision_history_limit = Some(1);
    let out = run(
        &d,
        &[
            rs(&d, "web-v1", "v1", 0, 1, 1),
            rs(&d, "web-v2", "v2", 0, 2, 2),
            rs(&d, "web-v3", "v3", 3, 3, 3),
        ],
    );
    assert_eq!(summary(&out, &d), ["delete ReplicaSet web-v1"]);
    let mut busy = rs(&d, "web-v1", "v1", 0, 1, 1);
    busy.status.replicas = 1;
    let out = run(
        &d,
        &[
            busy,
            rs(&d, "web-v2", "v2", 0, 2, 2),
            rs(&d, "web-v3", "v3", 3, 3, 3),
        ],
    );
    assert!(
        summary(&out, &d).iter().all(|l| !l.starts_with("delete")),
        "an RS that still has pods is kept: {:?}",
        summary(&out, &d)
    );
}

#[test]
fn history_is_not_cleaned_up_while_a_rollout_is_in_progress() {
    let mut d = deploy(3, "v3");
    d.spec.revision_history_limit = Some(0);
    let out = run(
        &d,
        &[
            rs(&d, "web-v1", "v1", 0, 1, 1),
            rs(&d, "web-v2", "v2", 3, 2, 2),
            available(rs(&d, "web-v3", "v3", 1, 3, 3), 0),
        ],
    );
    assert!(
        summary(&out, &d).iter().all(|l| !l.starts_with("delete")),
        "{:?}",
        summary(&out, &d)
    );
}

// ------------------------------------------------------------ conditions

#[test]
fn a_complete_rollout_reports_new_replica_set_available_and_minimum_availability() {
    let mut d = deploy(3, "v2");
    d.status.replicas = 3;
    d.status.updated_replicas = 2;
    d.status.available_replicas = 2;
    d.status.conditions = vec![util::new_condition(
        "Progressing",
        "True",
        util::REPLICA_SET_UPDATED_REASON,
        "x",
        500_000,
    )];
    let out = run(
        &d,
        &[
            rs(&d, "web-v1", "v1", 0, 1, 1),
            rs(&d, "web-v2", "v2", 3, 2, 2),
        ],
    );
    let s = written_status(&out).expect("status");
    assert_eq!(
        condition(&s, "Progressing"),
        (
            "True",
            "NewReplicaSetAvailable",
            "ReplicaSet \"web-v2\" has successfully progressed."
        )
    );
    assert_eq!(
        condition(&s, "Available"),
        (
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability."
        )
    );
    let order: Vec<&str> = s
        .status
        .conditions
        .iter()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(
        order,
        ["Available", "Progressing"],
        "a replaced condition moves to the end"
    );
    assert_eq!(
        (
            s.status.replicas,
            s.status.updated_replicas,
            s.status.available_replicas,
            s.status.unavailable_replicas
        ),
        (3, 3, 3, 0)
    );
}

#[test]
fn observed_progress_refreshes_last_update_time_but_keeps_last_transition_time() {
    let mut d = deploy(3, "v2");
    d.status.available_replicas = 2;
    let mut c = util::new_condition(
        "Progressing",
        "True",
        util::REPLICA_SET_UPDATED_REASON,
        "x",
        100_000,
    );
    c.last_transition_time = Some(Time(50_000));
    d.status.conditions = vec![c];
    let out = run(
        &d,
        &[
            rs(&d, "web-v1", "v1", 1, 1, 1),
            available(rs(&d, "web-v2", "v2", 3, 2, 2), 2),
        ],
    );
    assert_eq!(summary(&out, &d), ["update/status Deployment web"]);
    let s = written_status(&out).expect("status");
    assert_eq!(
        condition(&s, "Progressing"),
        (
            "True",
            "ReplicaSetUpdated",
            "ReplicaSet \"web-v2\" is progressing."
        )
    );
    let p = util::get_condition(&s.status, "Progressing").expect("progressing");
    assert_eq!(
        (p.last_update_time, p.last_transition_time),
        (Some(Time(NOW)), Some(Time(50_000)))
    );
}

#[test]
fn no_progress_for_the_deadline_times_out_and_otherwise_requeues_one_second_after_it() {
    let d = deploy(3, "v2");
    let rss = [
        rs(&d, "web-v1", "v1", 3, 1, 1),
        available(rs(&d, "web-v2", "v2", 1, 2, 2), 0),
    ];
    let cache = cache_with(&d, &rss, &[]);
    let first = run_at(&mut DeploymentController::new(), &cache, NOW);
    let d = after(&d, &first);
    let stuck_at = util::get_condition(&d.status, "Progressing")
        .and_then(|c| c.last_update_time)
        .expect("set")
        .0;
    // Nothing changed since: no write, a timer for the deadline.
    let again = run_at(
        &mut DeploymentController::new(),
        &cache_with(&d, &rss, &[]),
        NOW + 100_000,
    );
    assert_eq!(summary(&again, &d), Vec::<String>::new());
    assert_eq!(
        again.requeue_after,
        Some(stuck_at + 600_000 - (NOW + 100_000) + 1000)
    );
    let late = run_at(
        &mut DeploymentController::new(),
        &cache_with(&d, &rss, &[]),
        stuck_at + 600_001,
    );
    let s = written_status(&late).expect("status");
    assert_eq!(
        condition(&s, "Progressing"),
        (
            "False",
            "ProgressDeadlineExceeded",
            "ReplicaSet \"web-v2\" has timed out progressing."
        )
    );
    assert_eq!(
        rollout_status_message(&s, None),
        Err("deployment \"web\" exceeded its progress deadline".into())
    );
}

#[test]
fn paused_deployment_does_not_create_a_new_replica_set_on_template_change() {
    let d = paused(settled(deploy(3, "v2"), "1"));
    let out = run(&d, &[rs(&d, "web-v1", "v1", 3, 1, 1)]);
    assert_eq!(summary(&out, &d), ["update/status Deployment web"]);
    let s = written_status(&out).expect("status");
    assert_eq!(
        condition(&s, "Progressing"),
        ("Unknown", "DeploymentPaused", "Deployment is paused")
    );
}

#[test]
fn paused_deployment_still_scales() {
    let d = paused(settled(deploy(5, "v2"), "1"));
    let out = run(&d, &[annotated(rs(&d, "web-v1", "v1", 3, 1, 1), 3, 4)]);
    assert_eq!(
        summary(&out, &d),
        [
            "update ReplicaSet web-v1 replicas=5",
            "update/status Deployment web"
        ]
    );
}

#[test]
fn resuming_marks_progressing_unknown_so_the_pause_does_not_count_against_the_deadline() {
    let mut d = deploy(3, "v2");
    d.status = DeploymentStatus {
        observed_generation: 1,
        replicas: 3,
        updated_replicas: 3,
        ready_replicas: 1,
        available_replicas: 1,
        ..Default::default()
    };
    d.status.conditions = vec![util::new_condition(
        "Progressing",
        "Unknown",
        util::PAUSED_DEPLOY_REASON,
        "Deployment is paused",
        0,
    )];
    let out = run(&d, &[available(rs(&d, "web-v2", "v2", 3, 1, 1), 1)]);
    let s = written_status(&out).expect("status");
    assert_eq!(
        condition(&s, "Progressing"),
        ("Unknown", "DeploymentResumed", "Deployment is resumed")
    );
}

#[test]
fn an_empty_selector_warns_selecting_all_and_only_observes_the_generation() {
    let mut d = deploy(3, "v1");
    d.spec.selector = LabelSelector::default();
    d.metadata.generation = 2;
    let out = run(&d, &[]);
    assert_eq!(summary(&out, &d), ["update/status Deployment web"]);
    assert_eq!(events(&out, &d), ["Warning SelectingAll This deployment is selecting all pods. A non-empty selector is required."]);
    assert_eq!(
        written_status(&out)
            .expect("status")
            .status
            .observed_generation,
        2
    );
}

// ------------------------------------------------------------ ownership and failures

#[test]
fn orphans_matching_the_selector_are_adopted_and_non_matching_owned_sets_released() {
    let d = settled(deploy(3, "v1"), "1");
    let mut orphan = rs(&d, "web-v1", "v1", 3, 1, 1);
    orphan.metadata.owner_references.clear();
    let mut stray = rs(&d, "web-old", "v0", 0, 0, 0);
    stray.metadata.labels = labels(&[("app", "other")]);
    let out = run(&d, &[orphan, stray]);
    assert_eq!(
        summary(&out, &d),
        ["patch ReplicaSet web-old", "patch ReplicaSet web-v1"]
    );
    let patches: Vec<&Json> = out
        .requests()
        .filter_map(|r| match r {
            ApiRequest::Patch { patch, .. } => Some(patch),
            _ => None,
        })
        .collect();
    assert_eq!(patches[0]["metadata"]["ownerReferences"], Json::Null);
    let adopt = &patches[1]["metadata"]["ownerReferences"][0];
    assert_eq!(
        (
            adopt["kind"].as_str(),
            adopt["controller"].as_bool(),
            adopt["blockOwnerDeletion"].as_bool()
        ),
        (Some("Deployment"), Some(true), Some(true))
    );
}

#[test]
fn replica_set_events_wake_the_owner_or_the_deployments_selecting_an_orphan() {
    let d = deploy(3, "v1");
    let owned = rs(&d, "web-v1", "v1", 3, 1, 1);
    let mut orphan = owned.clone();
    orphan.metadata.owner_references.clear();
    let cache = cache_with(&d, std::slice::from_ref(&owned), &[]);
    let mut ctrl = DeploymentController::new();
    let ev = |o: &ReplicaSet, t| WatchEvent::new(t, Rc::new(Object::from(o.clone())), 60, 0);
    let mut bumped = owned.clone();
    bumped.metadata.resource_version = "61".into();
    let old = Rc::new(Object::from(owned.clone()));
    assert_eq!(
        ctrl.keys_for_event(&ev(&bumped, WatchEventType::Modified), Some(&old), &cache),
        [web()]
    );
    assert!(
        ctrl.keys_for_event(&ev(&owned, WatchEventType::Modified), Some(&old), &cache)
            .is_empty(),
        "resync: same RV"
    );
    assert_eq!(
        ctrl.keys_for_event(&ev(&orphan, WatchEventType::Added), None, &cache),
        [web()]
    );
    assert_eq!(
        ctrl.keys_for_event(&ev(&owned, WatchEventType::Deleted), None, &cache),
        [web()]
    );
    let mut foreign = owned.clone();
    foreign.metadata.owner_references[0].uid = "someone-else".into();
    assert!(ctrl
        .keys_for_event(&ev(&foreign, WatchEventType::Added), None, &cache)
        .is_empty());
}

#[test]
fn a_hash_collision_bumps_collision_count_and_the_next_name_differs() {
    let d = deploy(3, "v2");
    let old = rs(&d, "web-v1", "v1", 3, 1, 1);
    let mut ctrl = DeploymentController::new();
    let first = run_at(
        &mut ctrl,
        &cache_with(&d, std::slice::from_ref(&old), &[]),
        NOW,
    );
    let create = first.requests().next().expect("create").clone();
    let name = new_name(&d);
    ctrl.on_response(
        &create,
        &Err(ApiError::already_exists(Kind::ReplicaSet, &name)),
        NOW,
    );
    let mut squatter = rs(&d, &name, "something-else", 1, 0, 0);
    squatter.metadata.owner_references.clear();
    squatter.metadata.labels = labels(&[("app", "squatter")]);
    let second = run_at(
        &mut ctrl,
        &cache_with(&d, &[old.clone(), squatter.clone()], &[]),
        NOW,
    );
    assert_eq!(summary(&second, &d), ["update/status Deployment web"]);
    assert_eq!(
        second.error,
        Some(format!("replicasets.apps \"{name}\" already exists"))
    );
    let bumped = after(&d, &second);
    assert_eq!(bumped.status.collision_count, Some(1));
    let third = run_at(&mut ctrl, &cache_with(&bumped, &[old, squatter], &[]), NOW);
    let created = written_rs(&third, &new_name(&bumped)).expect("created under the new name");
    assert_ne!(created.metadata.name, name);
}

#[test]
fn a_failed_create_is_reported_as_replica_set_create_error() {
    let d = deploy(3, "v2");
    let mut ctrl = DeploymentController::new();
    let cache = cache_with(&d, &[rs(&d, "web-v1", "v1", 3, 1, 1)], &[]);
    let first = run_at(&mut ctrl, &cache, NOW);
    let create = first.requests().next().expect("create").clone();
    let err = ApiError {
        reason: StatusReason::Forbidden,
        message: "exceeded quota: pods".into(),
    };
    ctrl.on_response(&create, &Err(err), NOW);
    let second = run_at(&mut ctrl, &cache, NOW + 10);
    let name = new_name(&d);
    let msg = format!("Failed to create new replica set \"{name}\": exceeded quota: pods");
    assert_eq!(summary(&second, &d), ["update/status Deployment web"]);
    assert_eq!(
        events(&second, &d),
        [format!("Warning ReplicaSetCreateError {msg}").replace(&name, "NEW")]
    );
    assert_eq!(
        condition(&written_status(&second).expect("status"), "Progressing"),
        ("False", "ReplicaSetCreateError", &*msg)
    );
    assert_eq!(second.error.as_deref(), Some("exceeded quota: pods"));
}

// ------------------------------------------------------------ kubectl helpers

#[test]
fn rollout_status_messages_follow_kubectl() {
    let base = deploy(3, "v2");
    let with = |f: &dyn Fn(&mut Deployment)| {
        let mut d = base.clone();
        f(&mut d);
        d
    };
    type Case = (Deployment, Result<(String, bool), String>);
    let cases: Vec<Case> = vec![
        (with(&|d| d.metadata.generation = 2), Ok(("Waiting for deployment spec update to be observed...".into(), false))),
        (
            with(&|d| d.status.updated_replicas = 1),
            Ok(("Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...".into(), false)),
        ),
        (
            with(&|d| {
                d.status.updated_replicas = 3;
                d.status.replicas = 4;
            }),
            Ok(("Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...".into(), false)),
        ),
        (
            with(&|d| {
                d.status.updated_replicas = 3;
                d.status.replicas = 3;
                d.status.available_replicas = 2;
            }),
            Ok(("Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...".into(), false)),
        ),
        (settled(base.clone(), "2"), Ok(("deployment \"web\" successfully rolled out".into(), true))),
    ];
    for (d, want) in cases {
        assert_eq!(rollout_status_message(&d, None), want);
    }
    assert_eq!(
        rollout_status_message(&settled(base.clone(), "2"), Some(3)),
        Err("desired revision (3) is different from the running revision (2)".into())
    );
}

#[test]
fn fencepost_table_from_the_reference() {
    for (replicas, want) in [
        (1, (1, 0)),
        (2, (1, 0)),
        (3, (1, 0)),
        (4, (1, 1)),
        (10, (3, 2)),
    ] {
        assert_eq!(
            max_surge_and_unavailable(&deploy(replicas, "v1")),
            want,
            "replicas {replicas}"
        );
    }
}

// ------------------------------------------------------------ through the world

#[test]
fn a_new_deployment_gets_its_first_replica_set_through_the_world() {
    let mut sim = Sim::new(SimConfig::default());
    let mut d = deploy(3, "nginx:1.27");
    d.metadata = ObjectMeta {
        name: "web".into(),
        namespace: "default".into(),
        ..Default::default()
    };
    d.status = DeploymentStatus::default();
    sim.submit(ApiRequest::Create(Object::from(d)))
        .expect("deployment created");
    sim.advance_to(5_000, usize::MAX);
    let stored = sim
        .get(&web())
        .and_then(|o| o.as_deployment())
        .expect("stored")
        .clone();
    let rss: Vec<ReplicaSet> = sim
        .api()
        .list(Kind::ReplicaSet)
        .filter_map(|o| o.as_replica_set().cloned())
        .collect();
    assert_eq!(rss.len(), 1, "{rss:?}");
    let first = &rss[0];
    assert_eq!(
        first.metadata.name,
        format!("web-{}", compute_hash(&stored.spec.template, None))
    );
    assert_eq!(first.spec.replicas, Some(3));
    assert_eq!(
        first
            .metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("1")
    );
    assert_eq!(
        stored
            .metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("1")
    );
    assert_eq!(
        stored.status.observed_generation,
        stored.metadata.generation
    );
    let progressing =
        util::get_condition(&stored.status, "Progressing").and_then(|c| c.reason.clone());
    assert!(
        matches!(
            progressing.as_deref(),
            Some("NewReplicaSetCreated") | Some("ReplicaSetUpdated")
        ),
        "{progressing:?}"
    );
}

fn cluster(nodes: &[&str]) -> Sim {
    let mut sim = Sim::new(SimConfig::default());
    for n in nodes {
        let mut node = crate::sim::api::types::Node::default();
        node.metadata.name = (*n).into();
        node.status.allocatable = labels(&[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")]);
        sim.submit(ApiRequest::Create(Object::from(node)))
            .expect("node created");
    }
    sim
}

fn submit_deployment(sim: &mut Sim, d: Deployment) {
    let mut d = d;
    d.metadata = ObjectMeta {
        name: "web".into(),
        namespace: "default".into(),
        ..Default::default()
    };
    d.status = DeploymentStatus::default();
    sim.submit(ApiRequest::Create(Object::from(d)))
        .expect("deployment created");
}

fn live(sim: &Sim) -> Deployment {
    sim.get(&web())
        .and_then(|o| o.as_deployment())
        .expect("deployment exists")
        .clone()
}

fn live_rss(sim: &Sim) -> Vec<ReplicaSet> {
    sim.api()
        .list(Kind::ReplicaSet)
        .filter_map(|o| o.as_replica_set().cloned())
        .collect()
}

fn set_image(sim: &mut Sim, image: &str) {
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}});
    sim.submit(ApiRequest::Patch {
        key: web(),
        patch,
        status: false,
    })
    .expect("patched");
}

/// ScalingReplicaSet messages in the order the controller recorded them.
fn scaling_events(sim: &Sim) -> Vec<String> {
    sim.trace()
        .entries()
        .filter_map(|e| match &e.kind {
            crate::sim::machinery::trace::TraceKind::Event(tr)
                if tr.reason == "ScalingReplicaSet" =>
            {
                let EventTrace { message, .. } = &**tr;
                Some(message.to_string())
            }
            _ => None,
        })
        .collect()
}

fn rolled_out(sim: &Sim) -> bool {
    rollout_status_message(&live(sim), None).is_ok_and(|(_, done)| done)
}

#[test]
fn a_rolling_update_through_the_world_stays_within_surge_and_availability_and_completes() {
    let mut sim = cluster(&["node-1", "node-2"]);
    submit_deployment(&mut sim, deploy(3, "nginx:1.27"));
    sim.advance_to(60_000, usize::MAX);
    assert!(
        rolled_out(&sim),
        "{:?}",
        rollout_status_message(&live(&sim), None)
    );
    let first = live_rss(&sim);
    assert_eq!(first.len(), 1);
    let old_name = first[0].metadata.name.clone();

    set_image(&mut sim, "nginx:1.28");
    let mut t = sim.now();
    while t < 180_000 {
        t += 250;
        sim.advance_to(t, usize::MAX);
        let rss = live_rss(&sim);
        let spec: i32 = rss.iter().map(util::rs_replicas).sum();
        let available: i32 = rss.iter().map(|r| r.status.available_replicas).sum();
        assert!(
            spec <= 4,
            "at {t} ms the ReplicaSets ask for {spec} > replicas + maxSurge"
        );
        assert!(
            available >= 3,
            "at {t} ms only {available} available < replicas - maxUnavailable"
        );
    }
    assert!(
        rolled_out(&sim),
        "{:?}",
        rollout_status_message(&live(&sim), None)
    );
    let d = live(&sim);
    let new_name = format!("web-{}", compute_hash(&d.spec.template, None));
    assert_eq!(
        d.metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("2")
    );
    assert_eq!(
        condition(&d, "Progressing"),
        (
            "True",
            "NewReplicaSetAvailable",
            &*format!("ReplicaSet \"{new_name}\" has successfully progressed.")
        )
    );
    let sizes: Vec<(String, i32)> = live_rss(&sim)
        .iter()
        .map(|r| (r.metadata.name.to_string(), util::rs_replicas(r)))
        .collect();
    assert!(
        sizes.contains(&(new_name.clone(), 3)) && sizes.contains(&(old_name.to_string(), 0)),
        "{sizes:?}"
    );
    let events = scaling_events(&sim);
    let rollout: Vec<&str> = events.iter().skip(1).map(String::as_str).collect();
    assert_eq!(
        rollout,
        [
            format!("Scaled up replica set {new_name} from 0 to 1"),
            format!("Scaled down replica set {old_name} from 3 to 2"),
            format!("Scaled up replica set {new_name} from 1 to 2"),
            format!("Scaled down replica set {old_name} from 2 to 1"),
            format!("Scaled up replica set {new_name} from 2 to 3"),
            format!("Scaled down replica set {old_name} from 1 to 0"),
        ]
    );
}

#[test]
fn a_broken_image_stalls_the_rollout_and_the_progress_deadline_reports_it() {
    let mut sim = cluster(&["node-1"]);
    let mut d = deploy(3, "nginx:1.27");
    d.spec.progress_deadline_seconds = Some(60);
    submit_deployment(&mut sim, d);
    sim.advance_to(60_000, usize::MAX);
    assert!(rolled_out(&sim));
    sim.inject(crate::sim::faults::Fault::BreakImage {
        image: "nginx:broken".into(),
    })
    .expect("fault injected");
    set_image(&mut sim, "nginx:broken");
    let start = sim.now();
    sim.advance_to(start + 45_000, usize::MAX);
    let d = live(&sim);
    let new_name = format!("web-{}", compute_hash(&d.spec.template, None));
    let mut sizes: Vec<i32> = live_rss(&sim).iter().map(util::rs_replicas).collect();
    sizes.sort();
    assert_eq!(
        sizes,
        [1, 3],
        "the unavailable new pod blocks any scale-down"
    );
    assert_eq!(condition(&d, "Progressing").0, "True");
    sim.advance_to(start + 90_000, usize::MAX);
    let d = live(&sim);
    let msg = format!("ReplicaSet \"{new_name}\" has timed out progressing.");
    assert_eq!(
        condition(&d, "Progressing"),
        ("False", "ProgressDeadlineExceeded", msg.as_str())
    );
    assert_eq!(
        condition(&d, "Available").0,
        "True",
        "the old pods still serve"
    );
    assert_eq!(
        rollout_status_message(&d, None),
        Err("deployment \"web\" exceeded its progress deadline".into())
    );
}

#[test]
fn pause_holds_template_changes_and_restart_after_resume_rolls_out_a_new_revision() {
    let mut sim = cluster(&["node-1"]);
    submit_deployment(&mut sim, deploy(2, "nginx:1.27"));
    sim.advance_to(60_000, usize::MAX);
    let pause = json!({"spec": {"paused": true}});
    sim.submit(ApiRequest::Patch {
        key: web(),
        patch: pause,
        status: false,
    })
    .expect("paused");
    set_image(&mut sim, "nginx:1.28");
    sim.advance_to(90_000, usize::MAX);
    assert_eq!(live_rss(&sim).len(), 1, "no rollout while paused");
    assert_eq!(
        condition(&live(&sim), "Progressing"),
        ("Unknown", "DeploymentPaused", "Deployment is paused")
    );
    assert_eq!(
        restart_patch(&live(&sim), sim.now()),
        Err("can't restart paused deployment (run rollout resume first)".into())
    );
    let resume = json!({"spec": {"paused": null}});
    sim.submit(ApiRequest::Patch {
        key: web(),
        patch: resume,
        status: false,
    })
    .expect("resumed");
    sim.advance_to(150_000, usize::MAX);
    assert!(
        rolled_out(&sim),
        "{:?}",
        rollout_status_message(&live(&sim), None)
    );
    assert_eq!(live_rss(&sim).len(), 2);
    let patch = restart_patch(&live(&sim), sim.now()).expect("not paused");
    sim.submit(ApiRequest::Patch {
        key: web(),
        patch,
        status: false,
    })
    .expect("restarted");
    sim.advance_to(250_000, usize::MAX);
    assert!(
        rolled_out(&sim),
        "{:?}",
        rollout_status_message(&live(&sim), None)
    );
    let d = live(&sim);
    assert_eq!(
        d.metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("3")
    );
    assert!(d
        .spec
        .template
        .metadata
        .annotations
        .contains_key(util::RESTARTED_AT_ANNOTATION));
    assert_eq!(live_rss(&sim).len(), 3);
}

#[test]
fn rollout_undo_through_the_world_turns_revision_1_into_revision_3() {
    let mut sim = cluster(&["node-1"]);
    submit_deployment(&mut sim, deploy(2, "nginx:1.27"));
    sim.advance_to(60_000, usize::MAX);
    set_image(&mut sim, "nginx:1.28");
    sim.advance_to(180_000, usize::MAX);
    assert!(rolled_out(&sim));
    let rss = live_rss(&sim);
    let refs: Vec<&ReplicaSet> = rss.iter().collect();
    let plan = rollback_template(&live(&sim), &refs, None).expect("a previous revision exists");
    let undone = plan.apply_to(&live(&sim)).expect("not skipped");
    sim.submit(ApiRequest::Update(Object::from(undone)))
        .expect("rolled back");
    sim.advance_to(300_000, usize::MAX);
    assert!(
        rolled_out(&sim),
        "{:?}",
        rollout_status_message(&live(&sim), None)
    );
    let d = live(&sim);
    assert_eq!(
        d.metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("3")
    );
    let current = live_rss(&sim)
        .into_iter()
        .find(|r| util::rs_replicas(r) == 2)
        .expect("one RS runs everything");
    assert_eq!(
        current
            .metadata
            .annotations
            .get(REVISION_ANNOTATION)
            .map(|v| v.as_str()),
        Some("3")
    );
    assert_eq!(
        current
            .metadata
            .annotations
            .get(REVISION_HISTORY_ANNOTATION)
            .map(|v| v.as_str()),
        Some("1")
    );
    assert_eq!(
        live_rss(&sim).len(),
        2,
        "rolling back re-uses the revision-1 ReplicaSet"
    );
}

#[test]
fn recreate_through_the_world_never_runs_old_and_new_pods_together() {
    let mut sim = cluster(&["node-1"]);
    submit_deployment(&mut sim, recreate(deploy(2, "nginx:1.27")));
    sim.advance_to(60_000, usize::MAX);
    assert!(rolled_out(&sim));
    let old_hash = live_rss(&sim)[0].metadata.labels[POD_TEMPLATE_HASH_LABEL].clone();
    set_image(&mut sim, "nginx:1.28");
    let mut t = sim.now();
    while t < 200_000 {
        t += 250;
        sim.advance_to(t, usize::MAX);
        let hashes: BTreeSet<String> = sim
            .api()
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.status.phase != "Succeeded" && p.status.phase != "Failed")
            .filter_map(|p| {
                p.metadata
                    .labels
                    .get(POD_TEMPLATE_HASH_LABEL)
                    .map(|v| v.to_string())
            })
            .collect();
        assert!(
            hashes.len() <= 1,
            "at {t} ms pods of two templates exist: {hashes:?}"
        );
    }
    assert!(
        rolled_out(&sim),
        "{:?}",
        rollout_status_message(&live(&sim), None)
    );
    let pods: Vec<String> = sim
        .api()
        .list(Kind::Pod)
        .filter_map(|o| o.as_pod())
        .filter_map(|p| {
            p.metadata
                .labels
                .get(POD_TEMPLATE_HASH_LABEL)
                .map(|v| v.to_string())
        })
        .collect();
    assert!(
        pods.len() == 2 && pods.iter().all(|h| *h != old_hash),
        "{pods:?}"
    );
}
