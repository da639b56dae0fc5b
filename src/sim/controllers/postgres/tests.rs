//! One reconcile of one cluster over a preloaded cache, checked by the requests it returns.

use serde_json::json;

use super::*;
use crate::sim::api::apiextensions::CustomKind;
use crate::sim::controllers::testing::{cache_of, reconcile_once};

fn kind() -> Kind {
    Kind::Custom(
        CustomKind::intern(GROUP, KIND, "postgresclusters", true, "v1alpha1").expect("interned"),
    )
}

fn cluster(finalizers: &[&str]) -> Object {
    Object::from_json(
        kind(),
        json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": "db", "namespace": "default", "uid": "u-db", "generation": 1,
                         "finalizers": finalizers},
            "spec": {"version": "16", "replicas": 2, "storage": "1Gi"},
        }),
    )
    .expect("a cluster")
}

fn key() -> ObjectKey {
    ObjectKey::new(kind(), "default", "db")
}

#[test]
fn a_new_cluster_is_claimed_with_the_finalizer_before_anything_is_made() {
    let cache = cache_of([cluster(&[])]);
    let out = reconcile_once(&mut PostgresOperator::new(), &cache, &key(), 0);
    let reqs: Vec<&ApiRequest> = out.requests().collect();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    let ApiRequest::Patch { patch, status, .. } = reqs[0] else {
        panic!("{reqs:?}")
    };
    assert!(!status);
    assert_eq!(patch, &json!({"metadata": {"finalizers": [FINALIZER]}}));
}

#[test]
fn a_claimed_cluster_gets_its_four_objects_then_its_status_in_a_later_batch() {
    let cache = cache_of([cluster(&[FINALIZER])]);
    let out = reconcile_once(&mut PostgresOperator::new(), &cache, &key(), 0);
    assert_eq!(out.batches.len(), 2, "{:?}", out.batches);
    let made: Vec<String> = out.batches[0]
        .iter()
        .map(|r| match r {
            ApiRequest::Create(o) => format!("{} {}", o.kind().as_str(), o.meta().name),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        made,
        [
            "StatefulSet db",
            "Service db",
            "ConfigMap db-backup",
            "Job db-migrate-16"
        ]
    );
    let ApiRequest::Patch { patch, status, .. } = &out.batches[1][0] else {
        panic!("{:?}", out.batches[1])
    };
    assert!(status, "through the status subresource");
    assert_eq!(patch["status"]["phase"], "Migrating");
    assert_eq!(patch["status"]["observedGeneration"], 1);
}

#[test]
fn with_the_generate_name_and_status_bugs_the_job_has_no_name_and_status_is_a_plain_update() {
    let cache = cache_of([cluster(&[FINALIZER])]);
    let mut op =
        PostgresOperator::with_bugs([OperatorBug::GenerateName, OperatorBug::StatusOnMainResource]);
    let out = reconcile_once(&mut op, &cache, &key(), 0);
    let job = out
        .requests()
        .find_map(|r| match r {
            ApiRequest::Create(o) if o.kind().as_str() == "Job" => Some(o.meta().clone()),
            _ => None,
        })
        .expect("a Job");
    assert_eq!(
        (job.name.as_str(), job.generate_name.as_str()),
        ("", "db-migrate-")
    );
    assert!(
        matches!(out.batches[1][0], ApiRequest::Update(_)),
        "{:?}",
        out.batches[1]
    );
}
