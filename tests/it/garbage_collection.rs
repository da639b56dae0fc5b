//! The garbage collector on owners of any kind: a custom resource owning a Deployment, a
//! cluster-scoped custom owner, each propagation policy, and the namespace rules of
//! ownerReferences with upstream's `OwnerRefInvalidNamespace` Warning.

use kubeloop::sim::api::types::{Kind, Object, ObjectKey};
use kubeloop::sim::faults::Fault;
use kubeloop::sim::session::Session;

/// A namespaced kind (the documentation's CronTab) and a cluster-scoped one (a Tenant).
const CRDS: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tenants.example.com
spec:
  group: example.com
  scope: Cluster
  names: {plural: tenants, singular: tenant, kind: Tenant}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: nightly
spec: {image: backup}
---
apiVersion: example.com/v1
kind: Tenant
metadata:
  name: acme
spec: {}
"#;

fn uid(s: &Session, key: &ObjectKey) -> String {
    s.sim
        .api()
        .get(key)
        .unwrap_or_else(|| panic!("{key} exists"))
        .meta()
        .uid
        .to_string()
}

fn custom_key(s: &Session, kind: &str, namespace: &str, name: &str) -> ObjectKey {
    let k = s
        .sim
        .api()
        .all()
        .map(|o| o.kind())
        .find(|k| k.as_str() == kind)
        .unwrap_or_else(|| panic!("a {kind} is stored"));
    ObjectKey::new(k, namespace, name)
}

/// A Deployment in `namespace` whose controller is the object `owner` (`apiVersion`, `kind`,
/// `name`, `uid`).
fn owned_deployment(name: &str, namespace: &str, owner: (&str, &str, &str, &str)) -> String {
    let (api_version, kind, owner_name, uid) = owner;
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {namespace}
  ownerReferences:
  - apiVersion: {api_version}
    kind: {kind}
    name: {owner_name}
    uid: {uid}
    controller: true
    blockOwnerDeletion: true
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: app, image: nginx}}]
"#
    )
}

/// A session with both kinds served, a CronTab that owns Deployment `web`, running two pods.
fn crontab_owning_a_deployment() -> (Session, ObjectKey) {
    let mut s = Session::new(3);
    let report = s.apply_text("crds.yaml", CRDS);
    assert!(report.ok, "{:?}", report.diagnostics);
    let tab = custom_key(&s, "CronTab", "default", "nightly");
    let owner = (
        "stable.example.com/v1",
        "CronTab",
        "nightly",
        &*uid(&s, &tab),
    );
    let report = s.apply_text("web.yaml", &owned_deployment("web", "default", owner));
    assert!(report.ok, "{:?}", report.diagnostics);
    s.advance_to(20_000, usize::MAX);
    assert_eq!(pods(&s, "web"), 2, "the Deployment runs its pods");
    (s, tab)
}

fn deployment(s: &Session, namespace: &str, name: &str) -> Option<Object> {
    s.sim
        .api()
        .get(&ObjectKey::new(Kind::Deployment, namespace, name))
        .map(|o| (**o).clone())
}

fn pods(s: &Session, prefix: &str) -> usize {
    s.sim
        .api()
        .list(Kind::Pod)
        .filter(|p| p.meta().name.starts_with(prefix))
        .count()
}

fn warnings(s: &Session, reason: &str) -> Vec<(String, String)> {
    s.sim
        .api()
        .list(Kind::Event)
        .filter_map(|e| match &**e {
            Object::Event(e) if e.reason == reason => {
                Some((e.involved_object.name.to_string(), e.message.to_string()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn deleting_a_custom_owner_in_the_background_deletes_its_deployment_and_pods() {
    let (mut s, tab) = crontab_owning_a_deployment();
    let out = s.kubectl("delete crontab nightly");
    assert!(out.ok, "{}", out.stderr);
    assert!(s.sim.api().get(&tab).is_none(), "the owner goes at once");
    s.advance_to(60_000, usize::MAX);
    assert!(deployment(&s, "default", "web").is_none());
    assert_eq!(s.sim.api().count(Kind::ReplicaSet), 0);
    assert_eq!(pods(&s, "web"), 0);
}

#[test]
fn a_custom_owner_deleted_in_the_foreground_waits_for_its_blocking_dependents() {
    let (mut s, tab) = crontab_owning_a_deployment();
    let out = s.kubectl("delete crontab nightly --cascade=foreground");
    assert!(out.ok, "{}", out.stderr);
    let waiting = s.sim.api().get(&tab).expect("still there").meta().clone();
    assert!(waiting.deletion_timestamp.is_some());
    assert_eq!(waiting.finalizers, ["foregroundDeletion"]);
    s.advance_to(60_000, usize::MAX);
    assert!(deployment(&s, "default", "web").is_none());
    assert_eq!(pods(&s, "web"), 0);
    assert!(
        s.sim.api().get(&tab).is_none(),
        "the owner goes once its dependents are gone"
    );
}

#[test]
fn a_custom_owner_deleted_with_orphan_leaves_its_deployment_running_without_the_reference() {
    let (mut s, tab) = crontab_owning_a_deployment();
    let out = s.kubectl("delete ct nightly --cascade=orphan");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(60_000, usize::MAX);
    assert!(s.sim.api().get(&tab).is_none());
    let web = deployment(&s, "default", "web").expect("the Deployment stays");
    assert!(web.meta().owner_references.is_empty());
    assert_eq!(pods(&s, "web"), 2);
}

#[test]
fn a_cluster_scoped_custom_owner_collects_namespaced_dependents_of_any_kind() {
    let mut s = Session::new(5);
    assert!(s.apply_text("crds.yaml", CRDS).ok);
    let tenant = custom_key(&s, "Tenant", "", "acme");
    let tenant_uid = uid(&s, &tenant);
    let owner = ("example.com/v1", "Tenant", "acme", &*tenant_uid);
    let tab = format!(
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: hourly\n  ownerReferences:\n  - {{apiVersion: example.com/v1, kind: Tenant, name: acme, uid: {tenant_uid}}}\nspec: {{image: x}}\n"
    );
    assert!(s.apply_text("hourly.yaml", &tab).ok);
    assert!(
        s.apply_text("api.yaml", &owned_deployment("api", "default", owner))
            .ok
    );
    s.advance_to(20_000, usize::MAX);
    assert_eq!(pods(&s, "api"), 2);
    let out = s.kubectl("delete tenant acme");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(60_000, usize::MAX);
    assert!(deployment(&s, "default", "api").is_none());
    assert!(s
        .sim
        .api()
        .get(&custom_key(&s, "CronTab", "default", "nightly"))
        .is_some());
    assert!(
        s.sim.api().all().all(|o| o.meta().name != "hourly"),
        "the custom dependent went with its cluster-scoped owner"
    );
}

#[test]
fn an_owner_named_from_another_namespace_counts_as_absent_and_the_dependent_is_warned_and_deleted()
{
    let mut s = Session::new(7);
    assert!(s.apply_text("crds.yaml", CRDS).ok);
    let tab = custom_key(&s, "CronTab", "default", "nightly");
    let tab_uid = uid(&s, &tab);
    let owner = ("stable.example.com/v1", "CronTab", "nightly", &*tab_uid);
    assert!(s.kubectl("create namespace team-b").ok);
    assert!(
        s.apply_text("stray.yaml", &owned_deployment("stray", "team-b", owner))
            .ok
    );
    s.advance_to(30_000, usize::MAX);
    assert!(
        deployment(&s, "team-b", "stray").is_none(),
        "the GC deletes a dependent whose owner is not in its namespace"
    );
    assert!(s.sim.api().get(&tab).is_some(), "the owner is untouched");
    assert_eq!(
        warnings(&s, "OwnerRefInvalidNamespace"),
        [(
            "stray".to_string(),
            format!("ownerRef [stable.example.com/v1/CronTab, namespace: team-b, name: nightly, uid: {tab_uid}] does not exist in namespace \"team-b\"")
        )]
    );
}

#[test]
fn a_cluster_scoped_dependent_of_a_namespaced_owner_is_warned_and_never_collected() {
    let mut s = Session::new(9);
    assert!(s.apply_text("crds.yaml", CRDS).ok);
    let tab = custom_key(&s, "CronTab", "default", "nightly");
    let tab_uid = uid(&s, &tab);
    let tenant = format!(
        "apiVersion: example.com/v1\nkind: Tenant\nmetadata:\n  name: orphaned\n  ownerReferences:\n  - {{apiVersion: stable.example.com/v1, kind: CronTab, name: nightly, uid: {tab_uid}}}\nspec: {{}}\n"
    );
    assert!(s.apply_text("tenant.yaml", &tenant).ok);
    s.advance_to(10_000, usize::MAX);
    assert_eq!(
        warnings(&s, "OwnerRefInvalidNamespace"),
        [(
            "orphaned".to_string(),
            format!("ownerRef [stable.example.com/v1/CronTab, namespace: , name: nightly, uid: {tab_uid}] does not exist in namespace \"\"")
        )]
    );
    assert!(s.kubectl("delete crontab nightly").ok);
    s.advance_to(40_000, usize::MAX);
    let orphaned = custom_key(&s, "Tenant", "", "orphaned");
    assert!(
        s.sim.api().get(&orphaned).is_some(),
        "an unresolvable reference is never collected"
    );
}

#[test]
fn a_restarted_garbage_collector_relists_custom_kinds_and_still_collects() {
    let (mut s, tab) = crontab_owning_a_deployment();
    let restarted = s.inject(Fault::RestartController {
        component: "garbage-collector".into(),
    });
    assert!(restarted.is_ok(), "{restarted:?}");
    s.advance_to(40_000, usize::MAX);
    assert!(
        deployment(&s, "default", "web").is_some(),
        "the relist found the owner: a consistent list without it would have meant it was gone"
    );
    assert!(s.kubectl("delete crontab nightly").ok);
    assert!(s.sim.api().get(&tab).is_none());
    s.advance_to(90_000, usize::MAX);
    assert!(deployment(&s, "default", "web").is_none());
    assert_eq!(pods(&s, "web"), 0);
}

#[test]
fn a_service_owned_by_a_deleted_custom_resource_is_collected() {
    let mut s = Session::new(3);
    let report = s.apply_text("crds.yaml", CRDS);
    assert!(report.ok, "{:?}", report.diagnostics);
    let tab = custom_key(&s, "CronTab", "default", "nightly");
    let service = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: nightly\n  ownerReferences:\n  - {{apiVersion: stable.example.com/v1, kind: CronTab, name: nightly, uid: {}, controller: true, blockOwnerDeletion: true}}\nspec:\n  selector: {{app: nightly}}\n  ports: [{{port: 80}}]\n",
        uid(&s, &tab)
    );
    let report = s.apply_text("svc.yaml", &service);
    assert!(report.ok, "{:?}", report.diagnostics);
    s.advance_to(5_000, usize::MAX);
    let key = ObjectKey::new(Kind::Service, "default", "nightly");
    assert!(s.sim.api().get(&key).is_some());
    let out = s.kubectl("delete crontab nightly");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    s.advance_to(20_000, usize::MAX);
    assert!(s.sim.api().get(&key).is_none(), "the GC took the Service");
}
