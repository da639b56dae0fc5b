//! One pass of the StatefulSet controller over a hand-made cache: what it asks for, in which
//! batches, and where an ordered set stops.

use serde_json::json;

use super::*;
use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::types::{Condition, ObjectMeta, Time};
use crate::sim::controllers::testing::{cache_of, reconcile_once};

fn web(policy: &str, replicas: i32) -> Object {
    let kinds = kinds().expect("stored kinds");
    let mut content = serde_json::Map::new();
    content.insert(
        "spec".into(),
        json!({
            "replicas": replicas,
            "podManagementPolicy": policy,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {}}]
        }),
    );
    let mut obj = CustomObject {
        kind: kinds.set.custom().expect("custom"),
        api_version: "apps/v1".into(),
        metadata: ObjectMeta {
            name: "web".into(),
            namespace: "default".into(),
            uid: "set-uid".into(),
            generation: 1,
            ..Default::default()
        },
        content,
    };
    crate::sim::api::statefulset::admit(&mut obj, None, false).expect("valid");
    Object::from(obj)
}

fn key() -> ObjectKey {
    ObjectKey::new(kinds().expect("stored kinds").set, "default", "web")
}

/// A pod of the set as the API server stores it: `phase`, and Ready when `ready`.
fn pod(set: &Object, ordinal: i32, phase: &str, ready: bool) -> Object {
    let s = read_set(set).expect("a set");
    let mut p = new_pod(&s, ordinal);
    p.metadata.uid = format!("pod-{ordinal}").into();
    p.status.phase = phase.into();
    p.status.conditions = vec![Condition {
        type_: "Ready".into(),
        status: if ready { "True" } else { "False" }.into(),
        last_transition_time: Some(Time(0)),
        ..Default::default()
    }];
    Object::from(p)
}

fn verbs(out: &Outcome) -> Vec<Vec<String>> {
    out.batches
        .iter()
        .map(|b| {
            b.iter()
                .map(|r| format!("{} {}", r.verb(), r.key().name))
                .collect()
        })
        .collect()
}

#[test]
fn an_ordered_set_records_its_revision_then_makes_the_first_claim_then_the_first_pod() {
    let set = web("OrderedReady", 3);
    let cache = cache_of([set]);
    let out = reconcile_once(&mut StatefulSetController::new(), &cache, &key(), 1_000);
    let batches = verbs(&out);
    assert_eq!(batches.len(), 4, "{batches:?}");
    assert!(batches[0][0].starts_with("create web-"), "{batches:?}");
    assert_eq!(batches[1], ["create www-web-0"]);
    assert_eq!(batches[2], ["create web-0"]);
    assert!(batches[3][0].starts_with("update/status"), "{batches:?}");
}

#[test]
fn an_ordered_set_waits_for_a_pod_that_is_not_ready() {
    let set = web("OrderedReady", 3);
    let cache = cache_of([set.clone(), pod(&set, 0, "Running", false)]);
    let out = reconcile_once(&mut StatefulSetController::new(), &cache, &key(), 1_000);
    assert!(!out
        .requests()
        .any(|r| r.verb() == "create" && r.key().kind == Kind::Pod));
    let record = out.record.expect("a record");
    assert!(
        record
            .diff
            .contains("waiting: web-0 is not Running and Ready"),
        "{}",
        record.diff
    );
}

#[test]
fn a_parallel_set_makes_every_missing_pod_in_slow_start_batches_claims_first() {
    let set = web("Parallel", 3);
    let cache = cache_of([set]);
    let out = reconcile_once(&mut StatefulSetController::new(), &cache, &key(), 1_000);
    let batches = verbs(&out);
    assert_eq!(
        batches[1..5],
        [
            vec!["create www-web-0".to_string()],
            vec!["create web-0".to_string()],
            vec![
                "create www-web-1".to_string(),
                "create www-web-2".to_string()
            ],
            vec!["create web-1".to_string(), "create web-2".to_string()],
        ]
    );
}

#[test]
fn a_failed_pod_is_deleted_and_made_again_only_once_it_is_gone() {
    let set = web("OrderedReady", 1);
    let cache = cache_of([set.clone(), pod(&set, 0, "Failed", false)]);
    let out = reconcile_once(&mut StatefulSetController::new(), &cache, &key(), 1_000);
    let deletes: Vec<String> = out
        .requests()
        .filter(|r| r.verb() == "delete")
        .map(|r| r.key().name.to_string())
        .collect();
    assert_eq!(deletes, ["web-0"]);
    assert!(!out
        .requests()
        .any(|r| r.verb() == "create" && r.key().kind == Kind::Pod));
}
