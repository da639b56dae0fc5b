//! The ReplicaSet controller's tests: slow-start batches and burst limits, scale-down ranking,
//! adoption and release, expectations, events and status, each against upstream's behaviour.

use super::*;
use crate::sim::api::types::{Container, PodSpec, PodTemplateSpec, ReplicaSetSpec, Str};
use crate::sim::api::ApiError;
use crate::sim::controllers::testing;

const NS: &str = "default";

fn labels(pairs: &[(&str, &str)]) -> StringMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn rs(name: &str, replicas: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: NS.into(),
            uid: format!("uid-{name}").into(),
            resource_version: "10".into(),
            generation: 1,
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            min_ready_seconds: 0,
            selector: LabelSelector {
                match_labels: labels(&[("app", "web")]),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: ObjectMeta {
                    labels: labels(&[("app", "web")]),
                    ..Default::default()
                },
                spec: PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: "nginx".into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            },
        },
        status: ReplicaSetStatus::default(),
    }
}

fn owned_by(mut rs: ReplicaSet, owner_uid: &str) -> ReplicaSet {
    rs.metadata.owner_references = vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "web".into(),
        uid: owner_uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }];
    rs
}

/// A pod builder: `pod("a").of(&rs).on("n1").running().ready_at(5_000)`.
#[derive(Clone)]
struct P(Pod);

fn pod(name: &str) -> P {
    P(Pod {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: NS.into(),
            uid: format!("uid-{name}").into(),
            resource_version: "5".into(),
            labels: labels(&[("app", "web")]),
            creation_timestamp: Some(Time(0)),
            ..Default::default()
        },
        ..Default::default()
    })
}

impl P {
    fn of(mut self, rs: &ReplicaSet) -> P {
        self.0.metadata.owner_references = vec![controller_ref(rs)];
        self
    }
    fn on(mut self, node: &str) -> P {
        self.0.spec_mut().node_name = node.into();
        self
    }
    fn phase(mut self, phase: &str) -> P {
        self.0.status.phase = phase.into();
        self
    }
    fn running(self) -> P {
        self.phase("Running")
    }
    fn ready_at(mut self, t: Millis) -> P {
        self.0.status.conditions.push(Condition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(t)),
            ..Default::default()
        });
        self
    }
    fn created_at(mut self, t: Millis) -> P {
        self.0.metadata.creation_timestamp = Some(Time(t));
        self
    }
    fn uid(mut self, uid: &str) -> P {
        self.0.metadata.uid = uid.into();
        self
    }
    fn labels(mut self, l: &[(&str, &str)]) -> P {
        self.0.metadata.labels = labels(l);
        self
    }
    fn annotate(mut self, k: &str, v: &str) -> P {
        self.0.metadata.annotations.insert(k, v);
        self
    }
    fn restarts(mut self, n: i32) -> P {
        self.0.status.container_statuses = vec![crate::sim::api::types::ContainerStatus {
            name: "app".into(),
            restart_count: n,
            ..Default::default()
        }];
        self
    }
    fn terminating(mut self) -> P {
        self.0.metadata.deletion_timestamp = Some(Time(1));
        self
    }
    fn build(self) -> Pod {
        self.0
    }
}

fn cache_with(objs: Vec<Object>) -> Cache {
    testing::cache_of(objs)
}

#[test]
fn related_pods_are_counted_per_node_across_runs_of_labels_each_pod_once() {
    // Two ReplicaSets of one Deployment (selectors on the template hash) and a stranger:
    // the pods' labels change from one name-ordered pod to the next, in runs and singly.
    let with_hash = |name: &str, hash: &str| {
        let mut r = owned_by(rs(name, 3), "uid-dep");
        r.spec.selector.match_labels = labels(&[("app", "web"), ("hash", hash)]);
        r
    };
    let (old, new) = (with_hash("web-a", "a"), with_hash("web-b", "b"));
    let web = |name: &str, hash: &str, node: &str| {
        Object::from(
            pod(name)
                .labels(&[("app", "web"), ("hash", hash)])
                .on(node)
                .running()
                .build(),
        )
    };
    let cache = cache_with(vec![
        Object::from(old.clone()),
        Object::from(new),
        web("p1", "a", "n1"),
        web("p2", "a", "n1"),
        web("p3", "b", "n2"),
        web("p4", "a", "n2"),
        web("p5", "c", "n1"),
        web("p6", "b", "n1"),
        web("p7", "b", "n2"),
        Object::from(
            pod("p8")
                .labels(&[("app", "web"), ("hash", "a")])
                .on("n1")
                .terminating()
                .build(),
        ),
    ]);
    let mut counts = PodsPerNode::default();
    related_pods_per_node(&old, &cache, &mut counts);
    assert_eq!(
        counts.get("n1"),
        Some(&3),
        "p1, p2, p6 (p5 is no one's, p8 is going)"
    );
    assert_eq!(counts.get("n2"), Some(&3), "p3, p4, p7");
    assert_eq!(counts.len(), 2);
}

#[test]
fn related_pods_are_counted_from_every_owners_groups_and_the_orphans_alike() {
    let with_hash = |name: &str, hash: &str| {
        let mut r = owned_by(rs(name, 3), "uid-dep");
        r.metadata.uid = format!("uid-{name}").into();
        r.spec.selector.match_labels = labels(&[("app", "web"), ("hash", hash)]);
        r
    };
    let (old, new) = (with_hash("web-a", "a"), with_hash("web-b", "b"));
    let stranger = with_hash("other", "a");
    let web = |name: &str, owner: Option<&ReplicaSet>, hash: &str, node: &str| {
        let p = pod(name).labels(&[("app", "web"), ("hash", hash)]).on(node);
        let p = match owner {
            Some(r) => p.of(r),
            None => p,
        };
        Object::from(p.running().build())
    };
    let cache = cache_with(vec![
        Object::from(old.clone()),
        Object::from(new.clone()),
        web("p1", Some(&old), "a", "n1"),
        web("p2", Some(&new), "b", "n1"),
        web("p3", Some(&new), "b", "n2"),
        web("p4", Some(&stranger), "a", "n2"),
        web("p5", None, "b", "n2"),
        web("p6", None, "c", "n1"),
        web("p7", Some(&old), "a", ""),
    ]);
    // The table a pass before left: its counts start again from zero, and a node with none in
    // a pass is forgotten at the next.
    let mut counts: PodsPerNode = [("n1".to_string(), 7), ("gone".to_string(), 4)]
        .into_iter()
        .collect();
    related_pods_per_node(&old, &cache, &mut counts);
    assert_eq!(counts.get("gone"), Some(&0));
    related_pods_per_node(&old, &cache, &mut counts);
    assert_eq!(counts.get("gone"), None);
    assert_eq!(
        counts.get("n1"),
        Some(&2),
        "p1, p2 (p6 matches no selector)"
    );
    assert_eq!(
        counts.get("n2"),
        Some(&3),
        "p3, the stranger's p4 (its labels match) and the orphan p5"
    );
    assert_eq!(counts.get(""), Some(&1), "p7, not yet scheduled");
    assert_eq!(counts.len(), 3);
}

fn run(
    ctrl: &mut (impl Controller + ?Sized),
    cache: &Cache,
    key: &ObjectKey,
    now: Millis,
) -> Outcome {
    testing::reconcile_once(ctrl, cache, key, now)
}

fn rs_key(name: &str) -> ObjectKey {
    ObjectKey::new(Kind::ReplicaSet, NS, name)
}

fn creates(out: &Outcome) -> Vec<&Pod> {
    out.requests()
        .filter_map(|r| match r {
            ApiRequest::Create(Object::Pod(p)) => Some(&**p),
            _ => None,
        })
        .collect()
}

fn deleted_names(out: &Outcome) -> Vec<String> {
    out.requests()
        .filter_map(|r| match r {
            ApiRequest::Delete { key, .. } => Some(key.name.to_string()),
            _ => None,
        })
        .collect()
}

fn patches(out: &Outcome) -> Vec<(&ObjectKey, &Json)> {
    out.requests()
        .filter_map(|r| match r {
            ApiRequest::Patch { key, patch, .. } => Some((key, patch)),
            _ => None,
        })
        .collect()
}

fn status_update(out: &Outcome) -> Option<&ReplicaSetStatus> {
    out.requests().find_map(|r| match r {
        ApiRequest::UpdateStatus(Object::ReplicaSet(rs)) => Some(&rs.status),
        _ => None,
    })
}

fn create_batch_sizes(out: &Outcome) -> Vec<usize> {
    out.batches
        .iter()
        .filter(|b| b.iter().all(|r| matches!(r, ApiRequest::Create(_))))
        .map(|b| b.len())
        .collect()
}

#[test]
fn creates_missing_pods_in_slow_start_batches() {
    let web = rs("web", 10);
    let cache = cache_with(vec![Object::from(web.clone())]);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 0);
    assert_eq!(create_batch_sizes(&out), vec![1, 2, 4, 3]);
    let p = creates(&out)[0];
    assert_eq!(p.metadata.generate_name, "web-");
    assert_eq!(p.metadata.name, "");
    assert_eq!(p.metadata.namespace, NS);
    assert_eq!(p.metadata.labels, labels(&[("app", "web")]));
    assert_eq!(p.metadata.owner_references, vec![controller_ref(&web)]);
    let r = &p.metadata.owner_references[0];
    assert_eq!(
        (
            r.api_version.as_str(),
            r.kind.as_str(),
            r.controller,
            r.block_owner_deletion
        ),
        ("apps/v1", "ReplicaSet", Some(true), Some(true))
    );
    assert_eq!(p.spec.containers[0].image, "nginx");
    assert_eq!(
        ctrl.expectations().get(&rs_key("web")).map(|e| e.add),
        Some(10)
    );
    let record = out.record.expect("a record every pass");
    assert_eq!(record.observed, "0 active pods (0 ready)");
    assert_eq!(record.desired, "replicas: 10");
    assert_eq!(record.diff, "10 missing → create 10");
    // The status write comes last so a failing create batch cancels it, as an error return would.
    assert!(matches!(
        out.batches.last().map(|b| &b[0]),
        Some(ApiRequest::UpdateStatus(_))
    ));
}

#[test]
fn slow_start_batch_sizes_double_and_end_with_the_remainder() {
    for (count, want) in [
        (0, vec![]),
        (1, vec![1]),
        (3, vec![1, 2]),
        (10, vec![1, 2, 4, 3]),
        (16, vec![1, 2, 4, 8, 1]),
    ] {
        assert_eq!(slow_start_batches(count), want, "count {count}");
    }
}

#[test]
fn burst_limit_caps_creates_at_five_hundred_per_sync() {
    let cache = cache_with(vec![Object::from(rs("web", 700))]);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 0);
    assert_eq!(creates(&out).len(), 500);
    assert_eq!(
        ctrl.expectations().get(&rs_key("web")).map(|e| e.add),
        Some(500)
    );
    assert_eq!(
        out.record.map(|r| r.diff).as_deref(),
        Some("700 missing → create 500 (burst limit 500)")
    );
}

#[test]
fn burst_limit_caps_deletes_at_five_hundred_per_sync() {
    let web = rs("web", 0);
    let mut objs = vec![Object::from(web.clone())];
    for i in 0..600 {
        objs.push(Object::from(pod(&format!("p{i:03}")).of(&web).build()));
    }
    let cache = cache_with(objs);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 0);
    assert_eq!(deleted_names(&out).len(), 500);
    assert_eq!(
        ctrl.expectations().get(&rs_key("web")).map(|e| e.del),
        Some(500)
    );
}

#[test]
fn scale_down_deletes_by_ranking_one_rule_at_a_time() {
    // Each row: the pod to delete ("x") and a survivor ("a") that tie on every earlier rule.
    // "a" comes first in cache order, so each row passes only if the ranking moved "x" ahead.
    // `now` is 1 000 s; times far apart land in different log2 buckets of age in nanoseconds.
    let now = 1_000_000;
    let web = rs("web", 1);
    let (x, a) = (|| pod("x"), || pod("a"));
    let cases: Vec<(&str, P, P)> = vec![
        ("unassigned before assigned", x(), a().on("n1")),
        (
            "pending before unknown",
            x().on("n1").phase("Pending"),
            a().on("n1").phase("Unknown"),
        ),
        (
            "no phase counts as pending",
            x().on("n1"),
            a().on("n1").phase("Unknown"),
        ),
        (
            "unknown before running",
            x().on("n1").phase("Unknown"),
            a().on("n1").running(),
        ),
        (
            "not ready before ready",
            x().on("n1").running(),
            a().on("n1").running().ready_at(0),
        ),
        (
            "lower deletion cost first",
            x().on("n1").running().annotate(POD_DELETION_COST, "-5"),
            a().on("n2").running(),
        ),
        (
            "a deletion cost with a plus sign is invalid and counts as zero",
            x().on("n1").running().annotate(POD_DELETION_COST, "+10"),
            a().on("n2").running().annotate(POD_DELETION_COST, "5"),
        ),
        (
            "a deletion cost with a leading zero is invalid and counts as zero",
            x().on("n1").running().annotate(POD_DELETION_COST, "007"),
            a().on("n2").running().annotate(POD_DELETION_COST, "5"),
        ),
        (
            "ready for a shorter time first",
            x().on("n1").running().ready_at(990_000),
            a().on("n2").running().ready_at(10_000),
        ),
        (
            "more restarts first",
            x().on("n1").running().restarts(3),
            a().on("n2").running().restarts(1),
        ),
        (
            "newer first",
            x().on("n1").running().created_at(999_000),
            a().on("n2").running().created_at(1_000),
        ),
        (
            "same log2 age bucket falls back to uid order",
            x().on("n1").running().created_at(600_000).uid("uid-1"),
            a().on("n2").running().created_at(700_000).uid("uid-2"),
        ),
        (
            "ready times within one second are equal (the API serves seconds): restarts decide",
            x().on("n1").running().ready_at(500_100).restarts(1),
            a().on("n2").running().ready_at(500_900),
        ),
    ];
    for (rule, victim, survivor) in cases {
        let cache = cache_with(vec![
            Object::from(web.clone()),
            Object::from(victim.of(&web).build()),
            Object::from(survivor.of(&web).build()),
        ]);
        let out = run(
            &mut ReplicaSetController::new(),
            &cache,
            &rs_key("web"),
            now,
        );
        assert_eq!(deleted_names(&out), vec!["x"], "rule: {rule}");
    }
}

#[test]
fn scale_down_prefers_pods_doubled_up_with_sibling_replica_sets() {
    // The old RS of a Deployment: its pod on n1 shares the node with a pod of the new RS.
    let old = owned_by(rs("web-old", 1), "uid-deploy");
    let mut new = owned_by(rs("web-new", 1), "uid-deploy");
    new.spec.selector.match_labels.insert("rev", "2");
    let objs = vec![
        Object::from(old.clone()),
        Object::from(new.clone()),
        Object::from(pod("a").of(&old).on("n2").running().ready_at(0).build()),
        Object::from(pod("b").of(&old).on("n1").running().ready_at(0).build()),
        Object::from(
            pod("c")
                .of(&new)
                .on("n1")
                .running()
                .ready_at(0)
                .labels(&[("app", "web"), ("rev", "2")])
                .build(),
        ),
    ];
    // "c" also matches old's selector but is controlled by "new": never claimed by "old".
    let cache = cache_with(objs);
    let out = run(
        &mut ReplicaSetController::new(),
        &cache,
        &rs_key("web-old"),
        10_000,
    );
    assert_eq!(deleted_names(&out), vec!["b"]);
}

#[test]
fn scale_down_to_zero_deletes_everything_without_ranking() {
    let web = rs("web", 0);
    let cache = cache_with(vec![
        Object::from(web.clone()),
        Object::from(pod("a").of(&web).on("n1").running().ready_at(0).build()),
        Object::from(pod("b").of(&web).build()),
    ]);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 5_000);
    assert_eq!(deleted_names(&out), vec!["a", "b"]);
    assert_eq!(
        out.record.map(|r| r.diff).as_deref(),
        Some("2 extra → delete 2")
    );
}

#[test]
fn adopts_an_orphan_that_matches_the_selector() {
    let web = rs("web", 1);
    let cache = cache_with(vec![
        Object::from(web.clone()),
        Object::from(pod("orphan").build()),
    ]);
    let out = run(&mut ReplicaSetController::new(), &cache, &rs_key("web"), 0);
    let p = patches(&out);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].0.name, "orphan");
    assert_eq!(
        p[0].1,
        &json!({"metadata": {"resourceVersion": "5", "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "uid-web",
            "controller": true, "blockOwnerDeletion": true
        }]}})
    );
    // The adopted pod counts: nothing to create.
    assert!(creates(&out).is_empty());
    assert_eq!(status_update(&out).map(|s| s.replicas), Some(1));
    assert_eq!(
        out.record.map(|r| r.observed).as_deref(),
        Some("1 active pod (0 ready), adopting 1 orphan")
    );
}

#[test]
fn does_not_adopt_terminating_or_non_matching_orphans() {
    let web = rs("web", 0);
    let cache = cache_with(vec![
        Object::from(web),
        Object::from(pod("going").terminating().build()),
        Object::from(pod("other").labels(&[("app", "db")]).build()),
    ]);
    let out = run(&mut ReplicaSetController::new(), &cache, &rs_key("web"), 0);
    assert!(patches(&out).is_empty());
}

#[test]
fn releases_a_pod_whose_labels_no_longer_match_and_creates_a_replacement() {
    let web = rs("web", 2);
    let cache = cache_with(vec![
        Object::from(web.clone()),
        Object::from(pod("kept").of(&web).build()),
        Object::from(
            pod("relabelled")
                .of(&web)
                .labels(&[("app", "debug")])
                .build(),
        ),
    ]);
    let out = run(&mut ReplicaSetController::new(), &cache, &rs_key("web"), 0);
    let p = patches(&out);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].0.name, "relabelled");
    assert_eq!(
        p[0].1,
        &json!({"metadata": {"ownerReferences": null, "resourceVersion": "5"}})
    );
    // Claims run before manageReplicas: the released pod no longer counts.
    assert_eq!(creates(&out).len(), 1);
    assert!(matches!(out.batches[0][0], ApiRequest::Patch { .. }));
}

#[test]
fn never_steals_pods_controlled_by_another_owner() {
    let web = rs("web", 1);
    let other = rs("other", 1);
    let cache = cache_with(vec![
        Object::from(web.clone()),
        Object::from(other.clone()),
        Object::from(pod("theirs").of(&other).build()),
    ]);
    let out = run(&mut ReplicaSetController::new(), &cache, &rs_key("web"), 0);
    assert!(patches(&out).is_empty());
    assert_eq!(creates(&out).len(), 1);
}

#[test]
fn expectations_block_a_second_create_until_the_pods_are_observed() {
    let web = rs("web", 2);
    let mut cache = cache_with(vec![Object::from(web.clone())]);
    let mut ctrl = ReplicaSetController::new();
    assert_eq!(creates(&run(&mut ctrl, &cache, &rs_key("web"), 0)).len(), 2);
    // A second pass before any pod ADD arrives creates nothing and says why.
    let out = run(&mut ctrl, &cache, &rs_key("web"), 10);
    assert!(creates(&out).is_empty());
    assert_eq!(
        out.record.as_ref().map(|r| r.diff.as_str()),
        Some("expectations pending (add 2, del 0)")
    );
    assert_eq!(out.requeue_after, Some(EXPECTATIONS_TIMEOUT + 1 - 10));
    // The informer delivers both ADDs: expectations are satisfied and nothing is missing.
    for name in ["web-a", "web-b"] {
        let p = Rc::new(Object::from(pod(name).of(&web).build()));
        cache.upsert(p.clone());
        let ev = WatchEvent::new(WatchEventType::Added, p, 20, 0);
        assert_eq!(ctrl.keys_for_event(&ev, None, &cache), vec![rs_key("web")]);
    }
    assert!(ctrl.expectations().satisfied(&rs_key("web"), 20));
    let out = run(&mut ctrl, &cache, &rs_key("web"), 20);
    assert!(creates(&out).is_empty());
    assert_eq!(out.record.map(|r| r.diff).as_deref(), Some(""));
}

#[test]
fn expectations_expire_after_five_minutes() {
    let web = rs("web", 1);
    let cache = cache_with(vec![Object::from(web)]);
    let mut ctrl = ReplicaSetController::new();
    assert_eq!(creates(&run(&mut ctrl, &cache, &rs_key("web"), 0)).len(), 1);
    // The pod ADD was lost: at exactly five minutes the controller still waits…
    assert!(creates(&run(
        &mut ctrl,
        &cache,
        &rs_key("web"),
        EXPECTATIONS_TIMEOUT
    ))
    .is_empty());
    // …and just after, it acts again.
    assert_eq!(
        creates(&run(
            &mut ctrl,
            &cache,
            &rs_key("web"),
            EXPECTATIONS_TIMEOUT + 1
        ))
        .len(),
        1
    );
}

#[test]
fn a_restart_forgets_expectations() {
    let cache = cache_with(vec![Object::from(rs("web", 1))]);
    let mut ctrl = ReplicaSetController::new();
    run(&mut ctrl, &cache, &rs_key("web"), 0);
    let mut ctrl = ctrl.restarted().expect("a control-plane process");
    assert_eq!(
        creates(&run(&mut *ctrl, &cache, &rs_key("web"), 1)).len(),
        1
    );
}

#[test]
fn failed_and_skipped_creates_lower_expectations_and_record_events() {
    let web = rs("web", 3);
    let cache = cache_with(vec![Object::from(web.clone())]);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 0);
    let reqs: Vec<ApiRequest> = out.requests().cloned().collect();
    let err = ApiError {
        reason: StatusReason::Forbidden,
        message: "pods \"web-\" is forbidden: exceeded quota".into(),
    };
    // Batch 1 (one create) fails; batch 2 (two creates) is skipped by the world.
    ctrl.on_response(&reqs[0], &Err(err.clone()), 5);
    let evs = ctrl.events_for_response(&reqs[0], &Err(err));
    assert_eq!(evs.len(), 1);
    assert_eq!(
        (evs[0].type_, evs[0].reason.as_str()),
        ("Warning", "FailedCreate")
    );
    assert_eq!(
        evs[0].message,
        "Error creating: pods \"web-\" is forbidden: exceeded quota"
    );
    assert_eq!(evs[0].object, rs_key("web"));
    ctrl.on_skipped(&reqs[1]);
    ctrl.on_skipped(&reqs[2]);
    assert!(ctrl.expectations().satisfied(&rs_key("web"), 6));
    // The next pass reports the failure in the ReplicaFailure condition and tries again.
    let out = run(&mut ctrl, &cache, &rs_key("web"), 10);
    let cond =
        status_update(&out).and_then(|s| s.conditions.iter().find(|c| c.type_ == REPLICA_FAILURE));
    assert_eq!(cond.and_then(|c| c.reason.as_deref()), Some("FailedCreate"));
    assert_eq!(
        cond.and_then(|c| c.message.as_deref()),
        Some("pods \"web-\" is forbidden: exceeded quota")
    );
    assert_eq!(creates(&out).len(), 3);
}

#[test]
fn successful_create_event_names_the_generated_pod() {
    let web = rs("web", 1);
    let cache = cache_with(vec![Object::from(web.clone())]);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 0);
    let req = out.requests().next().cloned().expect("a create");
    let created: ApiResult = Ok(Rc::new(Object::from(pod("web-x2k4f").of(&web).build())));
    ctrl.on_response(&req, &created, 5);
    let evs = ctrl.events_for_response(&req, &created);
    assert_eq!(evs.len(), 1);
    assert_eq!(
        (
            evs[0].type_,
            evs[0].reason.as_str(),
            evs[0].message.as_str()
        ),
        ("Normal", "SuccessfulCreate", "Created pod: web-x2k4f")
    );
    assert_eq!(evs[0].uid, "uid-web");
}

#[test]
fn deletes_record_events_and_observe_expectations_once() {
    let web = rs("web", 0);
    let victim = pod("a").of(&web).on("n1").running().build();
    let mut cache = cache_with(vec![
        Object::from(web.clone()),
        Object::from(victim.clone()),
    ]);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 0);
    let req = out.requests().next().cloned().expect("a delete");
    assert_eq!(
        req,
        ApiRequest::Delete {
            key: ObjectKey::new(Kind::Pod, NS, "a"),
            options: DeleteOptions::default()
        }
    );
    let ok: ApiResult = Ok(Rc::new(Object::from(victim.clone())));
    ctrl.on_response(&req, &ok, 5);
    let evs = ctrl.events_for_response(&req, &ok);
    assert_eq!(evs[0].message, "Deleted pod: a");
    assert_eq!(evs[0].reason, "SuccessfulDelete");
    // Graceful deletion: the MODIFIED with deletionTimestamp counts; the later DELETED does not again.
    let mut terminating = victim.clone();
    terminating.metadata.deletion_timestamp = Some(Time(30_000));
    terminating.metadata.resource_version = "6".into();
    let t = Rc::new(Object::from(terminating));
    let old = cache.upsert(t.clone());
    let ev = WatchEvent::new(WatchEventType::Modified, t.clone(), 6, 0);
    ctrl.keys_for_event(&ev, old.as_ref(), &cache);
    assert_eq!(
        ctrl.expectations().get(&rs_key("web")).map(|e| e.del),
        Some(0)
    );
    cache.remove(&t.key());
    let ev = WatchEvent::new(WatchEventType::Deleted, t, 7, 0);
    ctrl.keys_for_event(&ev, None, &cache);
    assert_eq!(
        ctrl.expectations().get(&rs_key("web")).map(|e| e.del),
        Some(0)
    );
}

#[test]
fn failed_delete_records_a_warning_and_the_failure_condition() {
    let web = rs("web", 0);
    let cache = cache_with(vec![
        Object::from(web.clone()),
        Object::from(pod("a").of(&web).build()),
    ]);
    let mut ctrl = ReplicaSetController::new();
    let out = run(&mut ctrl, &cache, &rs_key("web"), 0);
    let req = out.requests().next().cloned().expect("a delete");
    let err: ApiResult = Err(ApiError::unavailable());
    ctrl.on_response(&req, &err, 5);
    let evs = ctrl.events_for_response(&req, &err);
    assert_eq!(
        evs[0].message,
        "Error deleting: the server is currently unable to handle the request"
    );
    assert!(ctrl.expectations().satisfied(&rs_key("web"), 6));
    let out = run(&mut ctrl, &cache, &rs_key("web"), 10);
    let cond = status_update(&out).and_then(|s| {
        s.conditions
            .iter()
            .find(|c| c.type_ == REPLICA_FAILURE)
            .cloned()
    });
    assert_eq!(
        cond.as_ref().and_then(|c| c.reason.as_deref()),
        Some("FailedDelete")
    );
    assert_eq!(
        cond.as_ref().and_then(|c| c.message.as_deref()),
        Some("unable to delete pods: the server is currently unable to handle the request")
    );
}

#[test]
fn status_counts_ready_and_available_pods_with_min_ready_seconds() {
    let mut web = rs("web", 3);
    web.spec.min_ready_seconds = 10;
    web.spec.template.metadata.labels.insert("tier", "front");
    let cache = cache_with(vec![
        Object::from(web.clone()),
        // Available: ready for 20 s.
        Object::from(
            pod("a")
                .of(&web)
                .on("n1")
                .running()
                .ready_at(10_000)
                .labels(&[("app", "web"), ("tier", "front")])
                .build(),
        ),
        // Ready for 5 s only: not available yet.
        Object::from(
            pod("b")
                .of(&web)
                .on("n1")
                .running()
                .ready_at(25_000)
                .build(),
        ),
        Object::from(pod("c").of(&web).on("n1").running().build()),
        // Terminating pods are not counted at all.
        Object::from(
            pod("d")
                .of(&web)
                .on("n1")
                .running()
                .ready_at(0)
                .terminating()
                .build(),
        ),
    ]);
    let out = run(
        &mut ReplicaSetController::new(),
        &cache,
        &rs_key("web"),
        30_000,
    );
    let s = status_update(&out).expect("status changed");
    assert_eq!(
        (
            s.replicas,
            s.fully_labeled_replicas,
            s.ready_replicas,
            s.available_replicas,
            s.observed_generation
        ),
        (3, 1, 2, 1, 1)
    );
    // "b" becomes available at 35 s: look again then.
    assert_eq!(out.requeue_after, Some(5_000));
    assert_eq!(
        out.record.map(|r| r.observed).as_deref(),
        Some("3 active pods (2 ready)")
    );
}

#[test]
fn status_is_not_written_when_nothing_changed() {
    let mut web = rs("web", 1);
    web.status = ReplicaSetStatus {
        replicas: 1,
        fully_labeled_replicas: 1,
        observed_generation: 1,
        ..Default::default()
    };
    let cache = cache_with(vec![
        Object::from(web.clone()),
        Object::from(pod("a").of(&web).build()),
    ]);
    let out = run(&mut ReplicaSetController::new(), &cache, &rs_key("web"), 0);
    assert!(out.batches.is_empty());
}

#[test]
fn a_replica_set_being_deleted_creates_nothing_and_adopts_nothing() {
    let mut web = rs("web", 3);
    web.metadata.deletion_timestamp = Some(Time(1));
    let cache = cache_with(vec![Object::from(web), Object::from(pod("orphan").build())]);
    let out = run(&mut ReplicaSetController::new(), &cache, &rs_key("web"), 0);
    assert!(creates(&out).is_empty());
    assert!(patches(&out).is_empty());
}

#[test]
fn orphan_pod_events_wake_every_matching_replica_set() {
    let mut ctrl = ReplicaSetController::new();
    let mut cache = cache_with(vec![Object::from(rs("a", 1)), Object::from(rs("b", 1))]);
    let mut other = rs("c", 1);
    other.spec.selector.match_labels = labels(&[("app", "db")]);
    cache.upsert(Rc::new(Object::from(other)));
    let p = Rc::new(Object::from(pod("orphan").build()));
    cache.upsert(p.clone());
    let ev = WatchEvent::new(WatchEventType::Added, p, 3, 0);
    assert_eq!(
        ctrl.keys_for_event(&ev, None, &cache),
        vec![rs_key("a"), rs_key("b")]
    );
}

#[test]
fn a_controller_ref_change_wakes_the_old_and_the_new_owner() {
    let mut ctrl = ReplicaSetController::new();
    let (a, b) = (rs("a", 1), rs("b", 1));
    let cache = cache_with(vec![Object::from(a.clone()), Object::from(b.clone())]);
    let old = Rc::new(Object::from(pod("p").of(&a).build()));
    let mut moved = pod("p").of(&b).build();
    moved.metadata.resource_version = "9".into();
    let ev = WatchEvent::new(WatchEventType::Modified, Rc::new(Object::from(moved)), 9, 0);
    assert_eq!(
        ctrl.keys_for_event(&ev, Some(&old), &cache),
        vec![rs_key("a"), rs_key("b")]
    );
}

#[test]
fn a_deleted_replica_set_drops_its_expectations() {
    let web = rs("web", 2);
    let cache = cache_with(vec![Object::from(web.clone())]);
    let mut ctrl = ReplicaSetController::new();
    run(&mut ctrl, &cache, &rs_key("web"), 0);
    let ev = WatchEvent::new(WatchEventType::Deleted, Rc::new(Object::from(web)), 3, 0);
    ctrl.keys_for_event(&ev, None, &Cache::new());
    assert!(ctrl.expectations().get(&rs_key("web")).is_none());
}

// ------------------------------------------------------------------ through the world

mod world {
    use super::*;
    use crate::sim::world::{Sim, SimConfig};

    fn world_rs(replicas: i32) -> Object {
        let mut r = rs("web", replicas);
        r.metadata.uid = Default::default();
        r.metadata.resource_version = Default::default();
        r.metadata.generation = 0;
        Object::from(r)
    }

    fn pods_of(sim: &Sim) -> Vec<Pod> {
        sim.api()
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod().cloned())
            .collect()
    }

    fn owned(sim: &Sim) -> Vec<Pod> {
        pods_of(sim)
            .into_iter()
            .filter(|p| p.metadata.controller_ref().is_some_and(|r| r.name == "web"))
            .collect()
    }

    fn started(replicas: i32) -> Sim {
        let mut sim = Sim::new(SimConfig::default());
        sim.submit(ApiRequest::Create(world_rs(replicas)))
            .expect("the ReplicaSet is created");
        sim.advance_to(5_000, usize::MAX);
        sim
    }

    #[test]
    fn a_replica_set_with_three_replicas_gets_three_pods() {
        let sim = started(3);
        let pods = owned(&sim);
        assert_eq!(pods.len(), 3);
        assert!(pods
            .iter()
            .all(|p| p.metadata.name.starts_with("web-")
                && p.metadata.name.len() == "web-".len() + 5));
        let rs = sim
            .get(&rs_key("web"))
            .and_then(|o| o.as_replica_set().cloned())
            .expect("rs");
        assert_eq!(rs.status.replicas, 3);
        assert_eq!(rs.status.observed_generation, rs.metadata.generation);
        let events: Vec<String> = sim
            .api()
            .list(Kind::Event)
            .filter_map(|o| o.as_event())
            .filter(|e| e.reason == "SuccessfulCreate")
            .map(|e| e.message.to_string())
            .collect();
        assert_eq!(events.len(), 3);
        assert!(pods
            .iter()
            .all(|p| events.contains(&format!("Created pod: {}", p.metadata.name))));
    }

    #[test]
    fn a_deleted_pod_is_replaced() {
        let mut sim = started(2);
        let victim = owned(&sim)[0].metadata.name.clone();
        sim.submit(ApiRequest::Delete {
            key: ObjectKey::new(Kind::Pod, NS, &victim),
            options: DeleteOptions::default(),
        })
        .expect("deleted");
        sim.advance_to(10_000, usize::MAX);
        let names: Vec<Str> = owned(&sim).into_iter().map(|p| p.metadata.name).collect();
        assert_eq!(names.len(), 2);
        assert!(!names.contains(&victim));
    }

    #[test]
    fn relabelling_a_pod_releases_it_and_a_replacement_is_created() {
        let mut sim = started(2);
        let target = owned(&sim)[0].metadata.name.clone();
        let key = ObjectKey::new(Kind::Pod, NS, &target);
        sim.submit(ApiRequest::Patch {
            key: key.clone(),
            patch: json!({"metadata": {"labels": {"app": "debug"}}}),
            status: false,
        })
        .expect("labelled");
        sim.advance_to(10_000, usize::MAX);
        let released = sim
            .get(&key)
            .and_then(|o| o.as_pod().cloned())
            .expect("the pod survives as an orphan");
        assert!(released.metadata.owner_references.is_empty());
        let names: Vec<Str> = owned(&sim).into_iter().map(|p| p.metadata.name).collect();
        assert_eq!(names.len(), 2);
        assert!(!names.contains(&target));
        // Re-labelling it back: the ReplicaSet adopts it and deletes one pod to get back to 2.
        sim.submit(ApiRequest::Patch {
            key: key.clone(),
            patch: json!({"metadata": {"labels": {"app": "web"}}}),
            status: false,
        })
        .expect("labelled back");
        sim.advance_to(15_000, usize::MAX);
        assert_eq!(owned(&sim).len(), 2);
        assert_eq!(pods_of(&sim).len(), 2);
    }

    #[test]
    fn scaling_down_deletes_pods_and_records_events() {
        let mut sim = started(3);
        sim.submit(ApiRequest::Patch {
            key: rs_key("web"),
            patch: json!({"spec": {"replicas": 1}}),
            status: false,
        })
        .expect("scaled");
        sim.advance_to(10_000, usize::MAX);
        assert_eq!(owned(&sim).len(), 1);
        let deletes = sim
            .api()
            .list(Kind::Event)
            .filter_map(|o| o.as_event())
            .filter(|e| {
                e.reason == "SuccessfulDelete" && e.message.starts_with("Deleted pod: web-")
            })
            .count();
        assert_eq!(deletes, 2);
    }
}

/// The ranking reads each pod once per pass; these check it against the rules read straight
/// off the pods at every comparison, as `ActivePodsWithRanks.Less` does, sorted by the same
/// merge, over pods that tie often (few nodes, phases, costs, and times within a few log2
/// buckets), including the orders that are not strict weak orders.
mod ranking {
    use super::*;
    use proptest::prelude::*;

    fn less_read_from_pods(a: &Pod, ra: usize, b: &Pod, rb: usize, now: Millis) -> bool {
        let seconds = |t: Option<Time>| t.map(|t| t.0 / 1000);
        let rule = |t1: Option<u64>, t2: Option<u64>| -> Option<bool> {
            if t1 == t2 {
                return None;
            }
            let (Some(x), Some(y)) = (t1, t2) else {
                return Some(after_or_zero(t1, t2));
            };
            let (bx, by) = (log2_age_bucket(x, now), log2_age_bucket(y, now));
            Some(if bx == by {
                a.metadata.uid < b.metadata.uid
            } else {
                bx < by
            })
        };
        let (na, nb) = (&a.spec.node_name, &b.spec.node_name);
        if na != nb && (na.is_empty() || nb.is_empty()) {
            return na.is_empty();
        }
        let (pa, pb) = (
            phase_ordinal(&a.status.phase),
            phase_ordinal(&b.status.phase),
        );
        if pa != pb {
            return pa < pb;
        }
        if a.is_ready() != b.is_ready() {
            return !a.is_ready();
        }
        if deletion_cost(a) != deletion_cost(b) {
            return deletion_cost(a) < deletion_cost(b);
        }
        if ra != rb {
            return ra > rb;
        }
        if a.is_ready() && b.is_ready() {
            if let Some(r) = rule(seconds(a.ready_since()), seconds(b.ready_since())) {
                return r;
            }
        }
        if a.max_restarts() != b.max_restarts() {
            return a.max_restarts() > b.max_restarts();
        }
        rule(
            seconds(a.metadata.creation_timestamp),
            seconds(b.metadata.creation_timestamp),
        )
        .unwrap_or(false)
    }

    fn pod_strategy() -> impl Strategy<Value = (Pod, usize)> {
        (
            (0usize..3, 0usize..4, proptest::option::of(0u64..1_000_000)),
            (0usize..3, 0i32..3, proptest::option::of(0u64..1_000_000)),
            (0usize..4, 0usize..3),
        )
            .prop_map(
                |((node, phase, ready), (cost, restarts, created), (uid, rank))| {
                    let mut p = pod("p")
                        .on(["", "n1", "n2"][node])
                        .phase(["", "Pending", "Running", "Unknown"][phase])
                        .restarts(restarts)
                        .uid(&format!("uid-{uid}"));
                    if let Some(t) = ready {
                        p = p.ready_at(t);
                    }
                    if let Some(t) = created {
                        p = p.created_at(t);
                    }
                    if cost > 0 {
                        p = p.annotate(POD_DELETION_COST, ["", "-3", "7"][cost]);
                    }
                    (p.build(), rank)
                },
            )
    }

    #[test]
    fn the_rank_head_orders_extreme_costs_and_related_counts_as_the_rules_do() {
        let head = |cost, related| rank_head(true, 2, true, cost, related);
        let costs = [i32::MIN, -1, 0, 1, i32::MAX];
        for w in costs.windows(2) {
            assert!(
                head(w[0], usize::MAX) < head(w[1], 0),
                "cost {} first",
                w[0]
            );
        }
        assert!(head(0, 2) < head(0, 1), "more related pods first");
        assert_eq!(head(0, usize::MAX), head(0, (1 << 28) - 1), "clamped");
        assert!(rank_head(false, 2, true, i32::MAX, 0) < rank_head(true, 0, false, i32::MIN, 9));
        assert!(rank_head(true, 1, true, 0, 0) < rank_head(true, 2, false, 0, 0));
        assert!(rank_head(true, 2, false, i32::MAX, 0) < rank_head(true, 2, true, i32::MIN, 9));
    }

    proptest! {
        #[test]
        fn the_ranking_orders_pods_as_the_rules_read_off_each_pod_do(
            pods in proptest::collection::vec(pod_strategy(), 0..40),
            now in 1_000_000u64..2_000_000,
        ) {
            let refs: Vec<(&Pod, usize)> = pods.iter().map(|(p, r)| (p, *r)).collect();
            let mut expected: Vec<usize> = (0..refs.len()).collect();
            merge_sort(&mut expected, &mut Vec::new(), &|&i, &j| {
                less_read_from_pods(refs[i].0, refs[i].1, refs[j].0, refs[j].1, now)
            });
            let ranked = rank_for_deletion(refs.clone(), now);
            let got: Vec<usize> = ranked
                .iter()
                .map(|p| refs.iter().position(|(q, _)| std::ptr::eq(*p, *q)).expect("one of them"))
                .collect();
            prop_assert_eq!(got, expected);
        }

        #[test]
        fn a_ranking_that_reuses_the_last_passes_buffers_orders_as_a_fresh_one_does(
            passes in proptest::collection::vec(
                proptest::collection::vec(pod_strategy(), 0..30),
                1..4,
            ),
            now in 1_000_000u64..2_000_000,
        ) {
            let mut kept = RankScratch::default();
            for pods in &passes {
                let refs: Vec<&Pod> = pods.iter().map(|(p, _)| p).collect();
                let related = |i: usize| pods[i].1;
                let fresh = RankScratch::default().rank(&refs, &related, now).to_vec();
                prop_assert_eq!(kept.rank(&refs, &related, now), &fresh[..]);
            }
        }

        #[test]
        fn a_uid_key_orders_as_its_string_does(
            a in "[a\\x00-]{0,20}",
            b in "[a\\x00-]{0,20}",
        ) {
            prop_assert_eq!(
                UidKey::of(&a).cmp_uids(UidKey::of(&b), || (&a, &b)),
                a.cmp(&b)
            );
        }

        #[test]
        fn the_merge_sort_is_the_standard_stable_sort_for_a_total_order(
            keys in proptest::collection::vec(0u8..6, 0..200),
        ) {
            let mut items: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|&(k, _)| k);
            merge_sort(&mut items, &mut Vec::new(), &|a, b| a.0 < b.0);
            prop_assert_eq!(items, expected);
        }
    }
}
