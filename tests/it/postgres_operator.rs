//! The example operator end to end: a PostgresCluster becomes its StatefulSet, Service, backup
//! ConfigMap and migration Job with its status reported back; deletion waits for the
//! operator's cleanup; and each deliberate bug fails as its note says, while the fix holds.

use kubeloop::sim::api::types::{Kind, ObjectKey};
use kubeloop::sim::controllers::postgres;
use kubeloop::sim::faults::{Fault, OperatorBug};
use kubeloop::sim::session::Session;
use serde_json::{json, Value as Json};

const CLUSTER: &str = include_str!("../fixtures/postgres/cluster.yaml");
const STEP: usize = 5_000_000;

/// The add-on installed, nothing applied.
fn installed() -> Session {
    let text = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: pg\nspec:\n  addons: [postgres-operator]\n";
    Session::load("pg.yaml", text, None).expect("loads")
}

/// The example scenario, loaded (the operator not yet run).
fn example() -> Session {
    Session::load("cluster.yaml", CLUSTER, None).expect("the example loads")
}

/// The PostgresCluster `db`, applied to a session with the add-on.
const DB: &str = "apiVersion: db.kubeloop.dev/v1alpha1\nkind: PostgresCluster\nmetadata:\n  name: db\nspec:\n  version: \"16\"\n  replicas: 2\n";

fn stored(name: &str) -> Kind {
    let (group, kind) = name.split_once('/').unwrap_or(("", name));
    match kind {
        "Service" => Kind::Service,
        "PostgresCluster" => postgres::cluster_kind().expect("served"),
        _ => Kind::Custom(
            kubeloop::sim::api::openapi::stored_kind(group, kind).expect("a stored kind"),
        ),
    }
}

fn get(s: &Session, kind: &str, name: &str) -> Option<Json> {
    s.sim
        .api()
        .get(&ObjectKey::new(stored(kind), "default", name))
        .map(|o| o.to_json())
}

fn cluster(s: &Session) -> Json {
    get(s, "PostgresCluster", "db").expect("the cluster exists")
}

fn condition<'a>(obj: &'a Json, type_: &str) -> &'a Json {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Json::Null)
}

fn migration_jobs(s: &Session) -> Vec<String> {
    s.sim
        .api()
        .list(stored("batch/Job"))
        .filter(|j| {
            j.meta()
                .labels
                .get(postgres::LABEL_CLUSTER)
                .map(|v| v.as_str())
                == Some("db")
        })
        .map(|j| j.meta().name.to_string())
        .collect()
}

fn advance(s: &mut Session, by: u64) {
    let t = s.sim.now() + by;
    s.advance_to(t, STEP);
}

fn inject(s: &mut Session, f: Fault) {
    s.inject(f.clone()).unwrap_or_else(|e| panic!("{f:?}: {e}"));
}

fn bug(s: &mut Session, bug: OperatorBug, enabled: bool) {
    inject(s, Fault::SetOperatorBug { bug, enabled });
}

fn assert_ready(s: &Session, replicas: i64, version: &str) {
    let c = cluster(s);
    assert_eq!(c["status"]["phase"], "Ready", "{c:#}");
    assert_eq!(c["status"]["readyReplicas"], replicas, "{c:#}");
    assert_eq!(c["status"]["currentVersion"], version, "{c:#}");
    assert_eq!(
        c["status"]["observedGeneration"], c["metadata"]["generation"],
        "{c:#}"
    );
    assert_eq!(condition(&c, "Ready")["status"], "True", "{c:#}");
    assert_eq!(condition(&c, "Migrated")["status"], "True", "{c:#}");
}

#[test]
fn a_postgres_cluster_converges_to_its_statefulset_service_backup_and_migration_job_and_reports_ready(
) {
    let mut s = example();
    advance(&mut s, 120_000);
    let c = cluster(&s);
    assert_eq!(c["metadata"]["finalizers"], json!([postgres::FINALIZER]));
    assert_eq!(c["spec"]["storage"], "1Gi", "the CRD's default");
    assert_ready(&s, 2, "16");
    let sts = get(&s, "apps/StatefulSet", "db").expect("the StatefulSet");
    assert_eq!(sts["spec"]["replicas"], 2);
    assert_eq!(sts["spec"]["serviceName"], "db");
    assert_eq!(
        sts["spec"]["template"]["spec"]["containers"][0]["image"],
        "postgres:16"
    );
    let vct = &sts["spec"]["volumeClaimTemplates"][0];
    assert_eq!(vct["metadata"]["name"], "data");
    assert_eq!(vct["spec"]["resources"]["requests"]["storage"], "1Gi");
    let owner = &sts["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "PostgresCluster");
    assert_eq!(owner["uid"], c["metadata"]["uid"]);
    assert_eq!(owner["controller"], true);
    assert_eq!(owner["blockOwnerDeletion"], true);
    let svc = get(&s, "Service", "db").expect("the Service");
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert!(get(&s, "ConfigMap", "db-backup").is_some());
    let job = get(&s, "batch/Job", "db-migrate-16").expect("the migration Job");
    assert!(
        job["status"]["conditions"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Complete")),
        "{job:#}"
    );
    assert_eq!(migration_jobs(&s), ["db-migrate-16"]);
    for claim in ["data-db-0", "data-db-1"] {
        assert!(get(&s, "PersistentVolumeClaim", claim).is_some(), "{claim}");
    }
    let out = s.kubectl("get pg");
    assert!(out.stdout.contains("Ready"), "{}", out.stdout);
}

#[test]
fn the_crd_shipped_as_a_file_is_the_one_the_add_on_installs_and_it_defaults_a_cluster() {
    let mut s = Session::new(1);
    let report = s.apply_text("crd.yaml", include_str!("../fixtures/postgres/crd.yaml"));
    assert!(report.ok, "{report:?}");
    let crd = s
        .sim
        .api()
        .get(&ObjectKey::new(
            Kind::CustomResourceDefinition,
            "",
            postgres::CRD_NAME,
        ))
        .expect("the CRD")
        .to_json();
    let addon = installed();
    let bundled = addon
        .sim
        .api()
        .get(&ObjectKey::new(
            Kind::CustomResourceDefinition,
            "",
            postgres::CRD_NAME,
        ))
        .expect("the add-on's CRD")
        .to_json();
    assert_eq!(crd["spec"], bundled["spec"]);
    assert_eq!(
        crd["spec"]["versions"][0]["subresources"],
        json!({"status": {}})
    );
    assert!(s.apply_text("db.yaml", DB).ok);
    let c = cluster(&s);
    assert_eq!(
        (c["spec"]["replicas"].clone(), c["spec"]["storage"].clone()),
        (json!(2), json!("1Gi"))
    );
    let bad = s.apply_text(
        "bad.yaml",
        "apiVersion: db.kubeloop.dev/v1alpha1\nkind: PostgresCluster\nmetadata:\n  name: bad\nspec:\n  version: \"16\"\n  replicas: 0\n",
    );
    assert!(!bad.ok, "replicas below the CRD's minimum is refused");
}

#[test]
fn a_deleted_statefulset_comes_back() {
    let mut s = example();
    advance(&mut s, 120_000);
    let before = get(&s, "apps/StatefulSet", "db").expect("the StatefulSet");
    let out = s.kubectl("delete statefulset db");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    advance(&mut s, 120_000);
    let after = get(&s, "apps/StatefulSet", "db").expect("the StatefulSet is back");
    assert_ne!(after["metadata"]["uid"], before["metadata"]["uid"]);
    assert_ready(&s, 2, "16");
}

#[test]
fn a_spec_change_reaches_the_statefulset_and_a_new_version_runs_its_own_migration() {
    let mut s = example();
    advance(&mut s, 120_000);
    let out = s.kubectl(r#"patch pg db --type=merge -p '{"spec":{"replicas":3,"version":"17"}}'"#);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    advance(&mut s, 180_000);
    let sts = get(&s, "apps/StatefulSet", "db").unwrap();
    assert_eq!(sts["spec"]["replicas"], 3);
    assert_eq!(
        sts["spec"]["template"]["spec"]["containers"][0]["image"],
        "postgres:17"
    );
    assert_eq!(migration_jobs(&s), ["db-migrate-16", "db-migrate-17"]);
    assert_ready(&s, 3, "17");
}

#[test]
fn deleting_a_cluster_while_its_operator_is_stopped_leaves_it_terminating_until_the_operator_cleans_up(
) {
    let mut s = example();
    advance(&mut s, 120_000);
    inject(
        &mut s,
        Fault::StopComponent {
            component: "postgres-operator".into(),
        },
    );
    let out = s.kubectl("delete pg db");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    advance(&mut s, 120_000);
    let c = cluster(&s);
    assert!(c["metadata"]["deletionTimestamp"].is_string(), "{c:#}");
    assert_eq!(c["metadata"]["finalizers"], json!([postgres::FINALIZER]));
    assert!(get(&s, "ConfigMap", "db-backup").is_some());
    assert!(get(&s, "apps/StatefulSet", "db").is_some());
    inject(
        &mut s,
        Fault::StartComponent {
            component: "postgres-operator".into(),
        },
    );
    advance(&mut s, 120_000);
    assert!(
        get(&s, "PostgresCluster", "db").is_none(),
        "the cluster is gone"
    );
    assert!(
        get(&s, "ConfigMap", "db-backup").is_none(),
        "the cleanup ran"
    );
    for (kind, name) in [
        ("apps/StatefulSet", "db"),
        ("Service", "db"),
        ("batch/Job", "db-migrate-16"),
    ] {
        assert!(get(&s, kind, name).is_none(), "the GC took {kind} {name}");
    }
    let cleanup = crate::support::messages(&s, "Cleanup");
    assert_eq!(cleanup.len(), 2, "{cleanup:?}");
}

/// Drops the operator's watch for 5 s (it relists when it heals) while `replicas` goes to 3.
fn scale_during_a_broken_watch(s: &mut Session) {
    inject(
        s,
        Fault::DropWatchEvents {
            component: "postgres-operator".into(),
            count: None,
            probability: None,
            kind: None,
            event_type: None,
            duration: Some(5_000),
        },
    );
    let out = s.kubectl(r#"patch pg db --type=merge -p '{"spec":{"replicas":3}}'"#);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    advance(s, 120_000);
}

#[test]
fn edge_triggered_a_dropped_spec_change_is_never_acted_on_while_level_triggered_heals_at_the_relist(
) {
    let mut level = example();
    advance(&mut level, 120_000);
    scale_during_a_broken_watch(&mut level);
    assert_eq!(
        get(&level, "apps/StatefulSet", "db").unwrap()["spec"]["replicas"],
        3
    );

    let mut edge = example();
    advance(&mut edge, 120_000);
    bug(&mut edge, OperatorBug::EdgeTriggered, true);
    scale_during_a_broken_watch(&mut edge);
    assert_eq!(
        get(&edge, "apps/StatefulSet", "db").unwrap()["spec"]["replicas"],
        2,
        "the change was in the dropped event"
    );
}

#[test]
fn edge_triggered_still_acts_on_the_events_it_hears() {
    let mut s = example();
    advance(&mut s, 120_000);
    bug(&mut s, OperatorBug::EdgeTriggered, true);
    let out = s.kubectl(r#"patch pg db --type=merge -p '{"spec":{"replicas":3}}'"#);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    advance(&mut s, 120_000);
    assert_eq!(
        get(&s, "apps/StatefulSet", "db").unwrap()["spec"]["replicas"],
        3
    );
    s.kubectl("delete service db");
    advance(&mut s, 10_000);
    assert!(get(&s, "Service", "db").is_some(), "its DELETED was heard");
}

/// The add-on, `bugs` on, a crash armed after `after` requests, then the cluster applied.
fn crash_while_creating(bugs: &[OperatorBug], after: u32) -> Session {
    let mut s = installed();
    for b in bugs {
        bug(&mut s, *b, true);
    }
    inject(
        &mut s,
        Fault::CrashMidReconcile {
            component: "postgres-operator".into(),
            after_requests: after,
        },
    );
    assert!(s.apply_text("db.yaml", DB).ok);
    advance(&mut s, 180_000);
    s
}

#[test]
fn generate_name_and_a_crash_between_the_job_create_and_the_status_write_run_the_migration_twice() {
    // The second pass sends: StatefulSet, Service, ConfigMap, Job, then the status.
    let s = crash_while_creating(&[OperatorBug::GenerateName], 4);
    let jobs = migration_jobs(&s);
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(
        jobs.iter().all(|j| j.starts_with("db-migrate-")),
        "{jobs:?}"
    );
}

#[test]
fn with_the_deterministic_job_name_the_same_crash_runs_the_migration_once() {
    let mut s = crash_while_creating(&[], 4);
    assert_eq!(migration_jobs(&s), ["db-migrate-16"]);
    advance(&mut s, 60_000);
    assert_ready(&s, 2, "16");
}

#[test]
fn status_on_the_main_resource_without_a_status_subresource_chases_observed_generation_forever() {
    let mut s = installed();
    bug(&mut s, OperatorBug::StatusOnMainResource, true);
    assert!(s.apply_text("db.yaml", DB).ok);
    advance(&mut s, 30_000);
    let c = cluster(&s);
    let generation = c["metadata"]["generation"].as_i64().unwrap();
    assert!(
        generation > 100,
        "every status write moves the generation: {generation}"
    );
    advance(&mut s, 1_000);
    let later = cluster(&s)["metadata"]["generation"].as_i64().unwrap();
    assert!(
        later > generation,
        "still writing: {generation} then {later}"
    );

    bug(&mut s, OperatorBug::StatusOnMainResource, false);
    advance(&mut s, 30_000);
    let c = cluster(&s);
    let settled = c["metadata"]["generation"].clone();
    advance(&mut s, 30_000);
    let c2 = cluster(&s);
    assert_eq!(c2["metadata"]["generation"], settled, "the loop stopped");
    assert_eq!(c2["status"]["observedGeneration"], settled, "{c2:#}");
}

#[test]
fn with_the_status_subresource_a_status_write_leaves_the_generation_alone() {
    let mut s = installed();
    assert!(s.apply_text("db.yaml", DB).ok);
    advance(&mut s, 120_000);
    let c = cluster(&s);
    assert_eq!(c["metadata"]["generation"], 1);
    assert_ready(&s, 2, "16");
}

/// A default StorageClass whose volumes may grow, then the example cluster.
fn expandable() -> Session {
    let class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: expandable\n  annotations:\n    storageclass.kubernetes.io/is-default-class: \"true\"\nprovisioner: rancher.io/local-path\nvolumeBindingMode: WaitForFirstConsumer\nallowVolumeExpansion: true\n";
    let mut s = installed();
    // A second later than `standard`, so the newest default class is this one.
    advance(&mut s, 1_000);
    assert!(s.apply_text("class.yaml", class).ok);
    assert!(s.apply_text("db.yaml", DB).ok);
    advance(&mut s, 120_000);
    assert_ready(&s, 2, "16");
    s
}

fn claim_requests(s: &Session) -> Vec<Json> {
    ["data-db-0", "data-db-1"]
        .iter()
        .map(|c| {
            get(s, "PersistentVolumeClaim", c).expect("the claim")["spec"]["resources"]["requests"]
                ["storage"]
                .clone()
        })
        .collect()
}

#[test]
fn volume_via_template_is_refused_with_422_on_every_retry_and_no_claim_grows() {
    let mut s = expandable();
    bug(&mut s, OperatorBug::VolumeViaTemplate, true);
    let out = s.kubectl(r#"patch pg db --type=merge -p '{"spec":{"storage":"2Gi"}}'"#);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    advance(&mut s, 60_000);
    assert_eq!(claim_requests(&s), [json!("1Gi"), json!("1Gi")]);
    let refused = crate::support::messages(&s, "UpdateFailed");
    assert!(
        refused
            .iter()
            .any(|m| m.contains("Forbidden: updates to statefulset spec for fields other than")),
        "{refused:?}"
    );
    let sts = get(&s, "apps/StatefulSet", "db").unwrap();
    assert_eq!(
        sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"],
        "1Gi"
    );
}

#[test]
fn the_fix_patches_each_claim_the_statefulset_made() {
    let mut s = expandable();
    let out = s.kubectl(r#"patch pg db --type=merge -p '{"spec":{"storage":"2Gi"}}'"#);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    advance(&mut s, 60_000);
    assert_eq!(claim_requests(&s), [json!("2Gi"), json!("2Gi")]);
    assert!(crate::support::messages(&s, "UpdateFailed").is_empty());
}

#[test]
fn a_bug_switch_needs_the_add_on_and_says_when_nothing_changes() {
    let mut s = Session::new(1);
    let e = s
        .inject(Fault::SetOperatorBug {
            bug: OperatorBug::GenerateName,
            enabled: true,
        })
        .unwrap_err();
    assert!(e.contains("not installed"), "{e}");
    let mut s = installed();
    let m = s
        .inject(Fault::SetOperatorBug {
            bug: OperatorBug::GenerateName,
            enabled: false,
        })
        .unwrap();
    assert!(m.contains("already off"), "{m}");
}

/// The whole trace, as text.
fn trace_text(s: &Session) -> String {
    s.sim
        .trace()
        .entries()
        .map(|e| e.to_json().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_same_seed_and_faults_give_the_same_trace_with_every_bug_on() {
    let run = || {
        let mut s = installed();
        for b in OperatorBug::ALL {
            bug(&mut s, b, true);
        }
        inject(
            &mut s,
            Fault::CrashMidReconcile {
                component: "postgres-operator".into(),
                after_requests: 4,
            },
        );
        assert!(s.apply_text("db.yaml", DB).ok);
        advance(&mut s, 40_000);
        let out = s.kubectl(r#"patch pg db --type=merge -p '{"spec":{"storage":"2Gi"}}'"#);
        assert!(out.stderr.is_empty(), "{}", out.stderr);
        advance(&mut s, 5_000);
        trace_text(&s)
    };
    let (a, b) = (run(), run());
    assert!(a.len() > 10_000, "a busy trace");
    assert!(a == b, "the two runs differ");
}

#[test]
fn the_status_counts_the_migration_jobs_of_its_version_so_a_double_migration_shows() {
    let s = crash_while_creating(&[OperatorBug::GenerateName], 4);
    assert_eq!(cluster(&s)["status"]["migrationJobs"], 2);
    let s = crash_while_creating(&[], 4);
    assert_eq!(cluster(&s)["status"]["migrationJobs"], 1);
}
