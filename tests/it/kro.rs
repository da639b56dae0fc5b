//! kro end to end: a ResourceGraphDefinition becomes a CRD and an instance controller, and an
//! instance becomes its resources, in dependency order, with its status reported back.

use kubeloop::sim::api::types::{Kind, ObjectKey};
use kubeloop::sim::machinery::controller::ComponentId;
use kubeloop::sim::machinery::trace::ApiTrace;
use kubeloop::sim::session::Session;

/// A session with kro installed and `files` applied one after the other.
fn with_kro() -> Session {
    let mut s = Session::new(1);
    s.sim.install_kro();
    s
}

/// kro running the simple-deployment graph's instance `shop` for `ms`.
fn shop_after(ms: u64) -> Session {
    let mut s = with_kro();
    let text = include_str!("../fixtures/kro/simple-deployment.yaml");
    let report = s.apply_text("simple-deployment.yaml", text);
    assert!(report.ok, "{report:?}");
    s.advance_to(ms, 1_000_000);
    s
}

fn instance_json(s: &Session, kind: &str, name: &str) -> serde_json::Value {
    let k = Kind::of_type("kro.run/v1alpha1", kind).expect("kind served");
    s.sim
        .api()
        .get(&ObjectKey::new(k, "default", name))
        .expect("instance exists")
        .to_json()
}

#[test]
fn an_instance_becomes_its_deployment_and_service_and_reports_available_replicas() {
    let mut s = with_kro();
    let text = include_str!("../fixtures/kro/simple-deployment.yaml");
    let report = s.apply_text("simple-deployment.yaml", text);
    assert!(report.ok, "{report:?}");
    s.advance_to(60_000, 1_000_000);
    assert!(s
        .sim
        .is_running(&ComponentId::KroInstance("simple-app.kro.run".into())));
    let inst = instance_json(&s, "SimpleApp", "shop");
    assert_eq!(inst["status"]["state"], "ACTIVE", "{inst:#}");
    assert_eq!(inst["status"]["availableReplicas"], 2);
    let annotations = &inst["metadata"]["annotations"];
    assert_eq!(
        annotations["applyset.kubernetes.io/contains-group-kinds"],
        "Deployment.apps,Service"
    );
    assert_eq!(annotations["applyset.kubernetes.io/tooling"], "kro/v0.9.3");
    let dep = s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Deployment, "default", "shop"))
        .expect("deployment");
    assert_eq!(dep.meta().labels["kro.run/node-id"], "deployment");
    assert!(dep.meta().owner_references.is_empty());
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Service, "default", "shop"))
        .is_some());
}

fn get(s: &Session, kind: Kind, name: &str) -> Option<serde_json::Value> {
    s.sim
        .api()
        .get(&ObjectKey::new(kind, "default", name))
        .map(|o| o.to_json())
}

#[test]
fn every_example_shaped_graph_runs_unchanged_and_its_instance_becomes_active() {
    for (file, kind, name) in [
        ("simple-deployment.yaml", "SimpleApp", "shop"),
        ("webapp.yaml", "WebApp", "store"),
        ("defaults.yaml", "Settings", "mine"),
        ("printer-columns.yaml", "Storefront", "front"),
        ("job.yaml", "BatchWeb", "nightly"),
    ] {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/kro/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut s = with_kro();
        let report = s.apply_text(file, &text);
        assert!(report.ok, "{file}: {report:?}");
        s.advance_to(120_000, 2_000_000);
        let inst = instance_json(&s, kind, name);
        assert_eq!(inst["status"]["state"], "ACTIVE", "{file}: {inst:#}");
        let ready = inst["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap()
            .clone();
        assert_eq!(ready["status"], "True", "{file}");
    }
}

#[test]
fn defaults_from_the_simple_schema_fill_the_instance() {
    let mut s = with_kro();
    let text = include_str!("../fixtures/kro/defaults.yaml");
    assert!(s.apply_text("defaults.yaml", text).ok);
    s.advance_to(10_000, 1_000_000);
    let inst = instance_json(&s, "Settings", "mine");
    assert_eq!(inst["spec"]["tags"], serde_json::json!(["blue", "green"]));
    // kro's status fields are omitempty: a graph without resources has no order to show.
    let k = Kind::of_type("kro.run/v1alpha1", "ResourceGraphDefinition").unwrap();
    let rgd = s
        .sim
        .api()
        .get(&ObjectKey::new(k, "", "settings.kro.run"))
        .unwrap()
        .to_json();
    assert_eq!(rgd["status"]["state"], "Active");
    assert!(rgd["status"].get("topologicalOrder").is_none(), "{rgd:#}");
    assert_eq!(inst["spec"]["limit"], 50);
    assert_eq!(inst["spec"]["tuning"]["high"], 90);
}

#[test]
fn a_scenario_with_the_kro_addon_loads_the_graph_then_its_instance() {
    let text = format!(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: kro\nspec:\n  addons: [kro]\n---\n{}",
        include_str!("../fixtures/kro/simple-deployment.yaml")
    );
    let mut s = Session::load("kro.yaml", &text, None).expect("loads");
    s.advance_to(60_000, 1_000_000);
    assert_eq!(
        instance_json(&s, "SimpleApp", "shop")["status"]["state"],
        "ACTIVE"
    );
    let out = s.kubectl("get rgd");
    assert!(out.stdout.contains("simple-app.kro.run"), "{}", out.stdout);
    assert!(out.stdout.contains("Active"), "{}", out.stdout);
}

#[test]
fn a_deleted_child_comes_back_and_an_excluded_one_is_pruned() {
    let mut s = shop_after(30_000);
    let out = s.kubectl("delete deployment shop");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(60_000, 1_000_000);
    assert!(get(&s, Kind::Deployment, "shop").is_some());
    let out = s.kubectl(
        "patch simpleapp shop --type=merge -p '{\"spec\":{\"service\":{\"enabled\":false}}}'",
    );
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(90_000, 1_000_000);
    assert!(get(&s, Kind::Service, "shop").is_none());
    assert!(get(&s, Kind::Deployment, "shop").is_some());
}

#[test]
fn deleting_an_instance_removes_its_children_leaves_first_then_the_finalizer() {
    let mut s = shop_after(30_000);
    let out = s.kubectl("delete simpleapp shop --wait=false");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(120_000, 2_000_000);
    let k = Kind::of_type("kro.run/v1alpha1", "SimpleApp").unwrap();
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(k, "default", "shop"))
        .is_none());
    assert!(get(&s, Kind::Deployment, "shop").is_none());
    assert!(get(&s, Kind::Service, "shop").is_none());
    // The Service (wave 2) was deleted before the Deployment (wave 1).
    let deletes: Vec<String> = s
        .sim
        .trace()
        .entries()
        .filter_map(|e| match &e.kind {
            kubeloop::sim::machinery::trace::TraceKind::Api(tr)
                if tr.actor.as_ref() == "kro/simple-app.kro.run" && tr.verb == "delete" =>
            {
                let ApiTrace { object, .. } = &**tr;
                Some(object.to_string())
            }
            _ => None,
        })
        .collect();
    let first_deployment = deletes.iter().position(|d| d.starts_with("Deployment"));
    let last_service = deletes.iter().rposition(|d| d.starts_with("Service"));
    assert!(last_service < first_deployment, "{deletes:?}");
}

/// A graph whose two resources read each other.
const CYCLIC: &str = r#"apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: loop
spec:
  schema:
    apiVersion: v1alpha1
    kind: Loop
    spec:
      name: string
  resources:
  - id: a
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${b.metadata.name}-a
  - id: b
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${a.metadata.name}-b
"#;

#[test]
fn a_cyclic_graph_is_inactive_with_kros_message() {
    let mut s = with_kro();
    let text = CYCLIC;
    assert!(s.apply_text("loop.yaml", text).ok);
    s.advance_to(5_000, 100_000);
    let k = Kind::of_type("kro.run/v1alpha1", "ResourceGraphDefinition").unwrap();
    let rgd = s
        .sim
        .api()
        .get(&ObjectKey::new(k, "", "loop"))
        .unwrap()
        .to_json();
    assert_eq!(rgd["status"]["state"], "Inactive");
    assert_eq!(
        rgd["status"]["conditions"][0]["message"],
        "graph contains a cycle: a -> b -> a"
    );
}

#[test]
fn the_ownership_view_draws_the_instance_over_its_applyset_members_down_to_pods() {
    use kubeloop::viewmodel::inspect::OwnershipView;
    let s = shop_after(60_000);
    let api = s.sim.api();
    let view = OwnershipView::build(api.all(), Some(api), s.sim.now());
    let inst = view
        .roots
        .iter()
        .find(|n| n.key.name == "shop" && n.key.kind.as_str() == "SimpleApp")
        .expect("the instance is a root");
    assert!(inst.children.is_empty(), "kro sets no ownerReferences");
    let members: Vec<&str> = inst.members.iter().map(|m| m.key.kind.as_str()).collect();
    assert_eq!(members, ["Deployment", "Service"]);
    let rs = &inst.members[0].children[0];
    assert_eq!(rs.pods.len(), 2);
    assert!(!view
        .roots
        .iter()
        .any(|n| n.key.kind == Kind::Deployment && n.key.name == "shop"));
}

#[test]
fn kubectl_lists_graphs_with_kros_columns_and_instances_with_the_graphs_own() {
    let mut s = with_kro();
    assert!(
        s.apply_text(
            "a.yaml",
            include_str!("../fixtures/kro/printer-columns.yaml")
        )
        .ok
    );
    s.advance_to(60_000, 1_000_000);
    let wide = s.kubectl("get rgd -o wide").stdout;
    let header: Vec<&str> = wide.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "APIVERSION",
            "KIND",
            "STATE",
            "TOPOLOGICALORDER",
            "READY",
            "AGE"
        ]
    );
    assert!(
        wide.contains(
            r#"storefront   v1alpha1     Storefront   Active   ["deployment","service"]   True"#
        ),
        "{wide}"
    );
    let instances = s.kubectl("get storefront").stdout;
    assert!(
        instances.starts_with("NAME    AVAILABLE REPLICAS   IMAGE\nfront   2"),
        "{instances}"
    );
}

#[test]
fn the_determinism_scenario_grows_prunes_and_survives_a_crash_of_its_kro_instance() {
    let mut s = Session::load("determinism.yaml", crate::common::SCENARIO, None).expect("loads");
    s.advance_to(60_000, usize::MAX);
    let cm = |s: &Session, name: &str| {
        s.sim
            .api()
            .get(&ObjectKey::new(
                Kind::of_type("v1", "ConfigMap").unwrap(),
                "default",
                name,
            ))
            .is_some()
    };
    assert!(cm(&s, "acme-red") && cm(&s, "acme-green"));
    s.advance_to(180_000, usize::MAX);
    assert!(cm(&s, "acme-red") && cm(&s, "acme-blue") && !cm(&s, "acme-green"));
    let t = instance_json(&s, "Tenant", "acme");
    assert_eq!(t["status"]["state"], "ACTIVE", "{t:#}");
    assert_eq!(t["status"]["teams"], 2);
    let quota = Kind::of_type("v1", "ResourceQuota").unwrap();
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(quota, "default", "acme"))
        .is_none());
}

#[test]
fn the_editor_warns_at_its_line_of_a_graph_kro_will_refuse_and_applies_it_all_the_same() {
    use kubeloop::sim::input::diagnostic::Severity;
    let text = &CYCLIC.replace(
        "${a.metadata.name}-b",
        "${random.seededString(8, schema.spec.name)}",
    );
    let mut s = with_kro();
    let report = s.apply_text("loop.yaml", text);
    assert!(report.ok, "{report:?}");
    let warnings: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].line, 23, "{warnings:?}");
    assert!(
        warnings[0]
            .message
            .contains("function 'random.seededString' is not supported"),
        "{}",
        warnings[0].message
    );
    assert!(
        warnings[0].message.contains("not supported"),
        "{}",
        warnings[0].message
    );
    // Without the unsupported function, the cycle is what kro refuses, at its first resource.
    let report = s.apply_text("loop.yaml", CYCLIC);
    let w = report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Warning)
        .expect("a warning");
    assert_eq!(w.line, 12, "{w:?}");
    assert!(
        w.message.ends_with("graph contains a cycle: a -> b -> a"),
        "{}",
        w.message
    );
}

#[test]
fn without_kro_a_graph_is_refused_as_kubectl_refuses_it_with_a_tip_to_install_it() {
    use kubeloop::sim::input::diagnostic::Severity;
    let mut s = Session::new(1);
    let report = s.apply_text("a.yaml", include_str!("../fixtures/kro/defaults.yaml"));
    assert!(!report.ok);
    let error = report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .unwrap();
    assert!(
        error.message.contains(
            "no matches for kind \"ResourceGraphDefinition\" in version \"kro.run/v1alpha1\""
        ),
        "{}",
        error.message
    );
    assert!(report
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Info && d.message.contains("addons: [kro]")));
}

#[test]
fn a_changed_graph_restarts_its_instance_controller_and_its_instances_follow() {
    let mut s = shop_after(30_000);
    let text = include_str!("../fixtures/kro/simple-deployment.yaml").replace(
        "          app.kubernetes.io/name: ${schema.spec.name}\n      spec:",
        "          app.kubernetes.io/name: ${schema.spec.name}\n          tier: web\n      spec:",
    );
    let report = s.apply_text("simple-deployment.yaml", &text);
    assert!(report.ok, "{report:?}");
    s.advance_to(60_000, 1_000_000);
    let dep = get(&s, Kind::Deployment, "shop").unwrap();
    assert_eq!(dep["metadata"]["labels"]["tier"], "web");
    let starts = s
        .sim
        .trace()
        .entries()
        .filter(|e| {
            matches!(&e.kind, kubeloop::sim::machinery::trace::TraceKind::Reconcile(tr)
                if &*tr.component == "kro"
                    && tr.record.as_ref().is_some_and(|r| r.diff.contains("start instance controller")))
        })
        .count();
    assert_eq!(starts, 2, "started for generation 1, then for generation 2");
}

#[test]
fn deleting_a_graph_stops_its_instance_controller_and_keeps_its_crd_and_instances() {
    let mut s = shop_after(30_000);
    let out = s.kubectl("delete rgd simple-app.kro.run");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(60_000, 1_000_000);
    let id = ComponentId::KroInstance("simple-app.kro.run".into());
    assert!(!s.sim.is_running(&id));
    let k = Kind::of_type("kro.run/v1alpha1", "ResourceGraphDefinition").unwrap();
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(k, "", "simple-app.kro.run"))
        .is_none());
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(
            Kind::CustomResourceDefinition,
            "",
            "simpleapps.kro.run"
        ))
        .is_some());
    assert_eq!(
        instance_json(&s, "SimpleApp", "shop")["status"]["state"],
        "ACTIVE"
    );
    // Nothing acts on the instance now: its Deployment stays deleted.
    assert!(s.kubectl("delete deployment shop").ok);
    s.advance_to(90_000, 1_000_000);
    assert!(get(&s, Kind::Deployment, "shop").is_none());
}

const EXTERNAL: &str = r#"apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: site.kro.run}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Site
    spec:
      replicas: integer | default=1
  resources:
  - id: settings
    externalRef:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: site-settings}
  - id: web
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: "${schema.metadata.name}"}
      spec:
        replicas: ${schema.spec.replicas * 2 / int(settings.data.divisor)}
        selector: {matchLabels: {app: site}}
        template:
          metadata: {labels: {app: site}}
          spec:
            containers:
            - name: web
              image: ${settings.data.image}
---
apiVersion: kro.run/v1alpha1
kind: Site
metadata: {name: blog}
spec: {}
"#;

#[test]
fn an_external_reference_is_waited_for_read_and_never_written() {
    let mut s = with_kro();
    assert!(s.apply_text("site.yaml", EXTERNAL).ok);
    s.advance_to(20_000, 1_000_000);
    let site = instance_json(&s, "Site", "blog");
    assert_eq!(site["status"]["state"], "IN_PROGRESS", "{site:#}");
    assert!(get(&s, Kind::Deployment, "blog").is_none());
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: site-settings}\ndata: {image: \"nginx:1.27\", divisor: \"1\"}\n";
    assert!(s.apply_text("cm.yaml", cm).ok);
    s.advance_to(60_000, 1_000_000);
    let dep = get(&s, Kind::Deployment, "blog").expect("made once the ConfigMap exists");
    assert_eq!(
        dep["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    assert_eq!(dep["spec"]["replicas"], 2);
    let cm_json = s
        .kubectl("get cm site-settings -o jsonpath={.metadata.labels}")
        .stdout;
    assert!(
        cm_json.is_empty(),
        "kro never writes what it only reads: {cm_json}"
    );
}

#[test]
fn an_expression_that_fails_puts_the_instance_in_error_with_kros_condition() {
    let mut s = with_kro();
    assert!(s.apply_text("site.yaml", EXTERNAL).ok);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: site-settings}\ndata: {image: \"nginx:1.27\", divisor: \"0\"}\n";
    assert!(s.apply_text("cm.yaml", cm).ok);
    s.advance_to(30_000, 1_000_000);
    let site = instance_json(&s, "Site", "blog");
    assert_eq!(site["status"]["state"], "ERROR", "{site:#}");
    let graph = site["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "GraphResolved")
        .unwrap()
        .clone();
    assert_eq!(graph["status"], "False");
    assert_eq!(graph["reason"], "ResolutionFailed");
    assert!(
        graph["message"]
            .as_str()
            .unwrap()
            .contains("division by zero"),
        "{graph}"
    );
}
