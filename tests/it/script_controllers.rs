//! Learners' controllers end to end: a JavaScript `reconcile` run as a component reads its cache,
//! writes through the API server, is answered by the next pass, requeues, fails with a Warning
//! Event, runs out of its budget, and forgets its module state when its process restarts.

use std::rc::Rc;

use kubeloop::sim::api::types::{Kind, ObjectKey};
use kubeloop::sim::controllers::script::{ScriptController, ScriptSpec, TypeName};
use kubeloop::sim::faults::Fault;
use kubeloop::sim::input::controller_doc::ControllerDoc;
use kubeloop::sim::input::diagnostic::Severity;
use kubeloop::sim::machinery::controller::ComponentId;
use kubeloop::sim::script::Limits;
use kubeloop::sim::session::Session;
use serde_json::Value as Json;

use crate::support::messages as events;

const STEP: usize = 5_000_000;

const FILE: &str = include_str!("../fixtures/controllers/website.yaml");

const WEBSITE_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: websites.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: websites, singular: website, kind: Website}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              image: {type: string}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
";

const WEBSITE: &str = "apiVersion: example.com/v1
kind: Website
metadata:
  name: web
spec:
  replicas: 2
  image: nginx:1.27
";

/// The issue's example controller (the fixture's source): one Deployment per Website, its
/// availability reported back.
fn good() -> String {
    let lines: Vec<&str> = FILE
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("source: |"))
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with("    "))
        .collect();
    lines
        .iter()
        .map(|l| l.get(4..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn spec(name: &str, source: &str, limits: Limits) -> Rc<ScriptSpec> {
    let t = |api_version: &str, kind: &str| TypeName {
        api_version: api_version.into(),
        kind: kind.into(),
    };
    Rc::new(ScriptSpec {
        doc: ControllerDoc {
            name: name.into(),
            primary: t("example.com/v1", "Website"),
            owns: vec![t("apps/v1", "Deployment")],
            watches: Vec::new(),
            resync: Some(30_000),
            source: source.into(),
        },
        limits,
    })
}

/// A cluster with the Website CRD and a learner's controller running `source`.
fn cluster_with(source: &str, limits: Limits) -> Session {
    let mut s = Session::load("crd.yaml", WEBSITE_CRD, None).expect("the CRD loads");
    advance(&mut s, 5_000);
    s.sim.add_component(Box::new(ScriptController::new(spec(
        "website", source, limits,
    ))));
    s
}

fn advance(s: &mut Session, by: u64) {
    let t = s.sim.now() + by;
    s.advance_to(t, STEP);
}

fn website_kind() -> Kind {
    Kind::of_type("example.com/v1", "Website").expect("served")
}

fn get(s: &Session, kind: Kind, name: &str) -> Option<Json> {
    s.sim
        .api()
        .get(&ObjectKey::new(kind, "default", name))
        .map(|o| o.to_json())
}

#[test]
fn the_example_controller_makes_a_deployment_per_website_and_reports_its_availability() {
    let mut s = cluster_with(&good(), Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 90_000);
    let dep = get(&s, Kind::Deployment, "web").expect("the Deployment was created");
    assert_eq!(dep["spec"]["replicas"], 2);
    assert_eq!(dep["metadata"]["ownerReferences"][0]["kind"], "Website");
    let site = get(&s, website_kind(), "web").expect("the Website");
    assert_eq!(site["status"]["availableReplicas"], 2, "{site}");
}

#[test]
fn a_deleted_child_is_made_again_because_its_owner_is_queued() {
    let mut s = cluster_with(&good(), Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 30_000);
    let first = get(&s, Kind::Deployment, "web").expect("created")["metadata"]["uid"].clone();
    let out = s.kubectl("kubectl delete deployment web");
    assert!(out.ok, "{out:?}");
    advance(&mut s, 5_000);
    let again = get(&s, Kind::Deployment, "web").expect("made again");
    assert_ne!(again["metadata"]["uid"], first);
}

#[test]
fn a_changed_spec_is_patched_onto_the_child() {
    let mut s = cluster_with(&good(), Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 30_000);
    assert!(
        s.apply_text("web.yaml", &WEBSITE.replace("replicas: 2", "replicas: 4"))
            .ok
    );
    advance(&mut s, 5_000);
    assert_eq!(
        get(&s, Kind::Deployment, "web").expect("exists")["spec"]["replicas"],
        4
    );
}

#[test]
fn a_thrown_error_is_a_failed_pass_with_a_reconcile_error_event() {
    let src = "function reconcile(req, ctx) { const s = ctx.get('Website', req.name); return s.spec.missing.deeper; }";
    let mut s = cluster_with(src, Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 10_000);
    let messages = events(&s, "ReconcileError");
    assert!(
        messages.iter().any(
            |m| m.contains("TypeError: Cannot read properties of undefined (reading 'deeper')")
        ),
        "{messages:?}"
    );
}

#[test]
fn an_endless_loop_ends_as_a_budget_error_and_the_simulation_goes_on() {
    let src = "function reconcile(req, ctx) { while (true) {} }";
    let limits = Limits {
        steps: 10_000,
        ..Limits::default()
    };
    let mut s = cluster_with(src, limits);
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 10_000);
    let messages = events(&s, "ReconcileError");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("reconcile exceeded its budget of 10000 steps")),
        "{messages:?}"
    );
}

#[test]
fn a_stale_update_is_answered_with_a_conflict_in_the_next_pass() {
    // The first pass writes twice with the same resourceVersion: the second write is stale.
    let src = r#"
let seen = [];
function reconcile(req, ctx) {
  const site = ctx.get("Website", req.name);
  if (!site) return;
  for (const e of ctx.lastErrors()) seen.push(e.reason);
  if (seen.length == 0) {
    ctx.update({...site, metadata: {...site.metadata, labels: {a: "1"}}});
    ctx.update({...site, metadata: {...site.metadata, labels: {b: "2"}}});
    return {requeue: true};
  }
  ctx.log("errors: " + seen.join(","));
  ctx.event(site, "Normal", "Seen", seen.join(","));
}
"#;
    let mut s = cluster_with(src, Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 10_000);
    assert_eq!(events(&s, "Seen"), ["Conflict"]);
}

#[test]
fn module_state_lives_as_long_as_the_process_and_a_restart_forgets_it() {
    let src = r#"
let passes = 0;
function reconcile(req, ctx) {
  const site = ctx.get("Website", req.name);
  if (!site) return;
  passes++;
  ctx.event(site, "Normal", "Pass", "pass " + passes);
  return passes < 3 ? {requeueAfter: "1s"} : undefined;
}
"#;
    let mut s = cluster_with(src, Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 10_000);
    assert_eq!(events(&s, "Pass").len(), 3, "{:?}", events(&s, "Pass"));
    s.inject(Fault::RestartController {
        component: ComponentId::Script("website".into()).name(),
    })
    .expect("restarts");
    advance(&mut s, 10_000);
    // The restarted process counts from one again: "pass 1" is recorded a second time (the
    // recorder folds a repeated Event into its count).
    assert_eq!(pass_count(&s, "pass 1"), 2);
    assert_eq!(pass_count(&s, "pass 4"), 0, "{:?}", events(&s, "Pass"));
}

/// The loop records of the learner's controller's passes, oldest first.
fn records(s: &Session) -> Vec<kubeloop::sim::machinery::controller::ReconcileRecord> {
    s.sim
        .trace()
        .since(0)
        .filter_map(|e| match &e.kind {
            kubeloop::sim::machinery::trace::TraceKind::Reconcile(tr)
                if tr.component.starts_with("controller/") =>
            {
                tr.record.as_deref().cloned()
            }
            _ => None,
        })
        .collect()
}

fn pass_count(s: &Session, message: &str) -> i32 {
    s.sim
        .api()
        .list(Kind::Event)
        .filter_map(|o| o.as_event())
        .filter(|e| e.reason == "Pass" && e.message == message)
        .map(|e| e.count.max(1))
        .sum()
}

#[test]
fn a_file_with_a_controller_document_runs_it_beside_its_crd_and_objects() {
    let mut s = Session::load("website.yaml", FILE, None).expect("the file loads");
    advance(&mut s, 90_000);
    assert!(s.sim.is_running(&ComponentId::Script("website".into())));
    assert_eq!(
        get(&s, Kind::Deployment, "web").expect("the controller made it")["spec"]["replicas"],
        2
    );
    assert_eq!(
        get(&s, website_kind(), "web").expect("the Website")["status"]["availableReplicas"],
        2
    );
}

#[test]
fn applying_a_controller_again_keeps_it_running_and_a_changed_one_is_a_new_process() {
    let mut s = Session::load("website.yaml", FILE, None).expect("the file loads");
    advance(&mut s, 10_000);
    let again = s.apply_text("website.yaml", FILE);
    assert!(
        again
            .lines
            .iter()
            .any(|l| l == "controller.kubeloop.dev/website unchanged"),
        "{:?}",
        again.lines
    );
    let changed = s.apply_text(
        "website.yaml",
        &FILE.replace("resyncPeriod: 30s", "resyncPeriod: 1m"),
    );
    assert!(
        changed
            .lines
            .iter()
            .any(|l| l == "controller.kubeloop.dev/website configured"),
        "{:?}",
        changed.lines
    );
}

/// The file's diagnostics, as `file:line:col: message`.
fn refused(text: &str) -> Vec<String> {
    match Session::load("website.yaml", text, None) {
        Ok(_) => panic!("the file should be refused"),
        Err(diags) => diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| format!("{}:{}:{}: {}", d.file, d.line, d.col, d.message))
            .collect(),
    }
}

#[test]
fn a_syntax_error_in_the_source_is_reported_at_its_place_in_the_yaml_file() {
    // Line 3 of the source is `if (!site) return;`: break it.
    let text = FILE.replace("if (!site) return;", "if (!site return;");
    let line = 1 + FILE
        .lines()
        .position(|l| l.contains("if (!site) return;"))
        .expect("the line") as u32;
    let diags = refused(&text);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].starts_with(&format!("website.yaml:{line}:")),
        "{diags:?} (expected line {line})"
    );
    assert!(
        diags[0].ends_with(":17: spec.source: SyntaxError: Unexpected token 'return'"),
        "{diags:?}"
    );
}

#[test]
fn a_controller_document_is_checked_as_strictly_as_an_object() {
    let diags = refused(&FILE.replace("language: javascript", "language: python\n  replicas: 3"));
    assert!(
        diags.iter().any(|d| d.ends_with(
            r#"spec.language: Unsupported value: "python": supported values: "javascript""#
        )),
        "{diags:?}"
    );
    assert!(
        diags
            .iter()
            .any(|d| d.ends_with(r#"unknown field "spec.replicas""#)),
        "{diags:?}"
    );
    let diags = refused(&FILE.replace(
        "function reconcile(req, ctx)",
        "function reconcil(req, ctx)",
    ));
    assert!(
        diags
            .iter()
            .any(|d| d.contains("the source defines no function reconcile(req, ctx)")),
        "{diags:?}"
    );
    let diags = refused(&FILE.replace("  for: {apiVersion: example.com/v1, kind: Website}\n", ""));
    assert!(
        diags.iter().any(|d| d.contains("spec.for: Required value")),
        "{diags:?}"
    );
}

#[test]
fn each_pass_records_what_it_read_what_it_decided_and_what_it_logged() {
    let src = r#"
function reconcile(req, ctx) {
  const site = ctx.get("Website", req.name);
  ctx.list("Deployment", {labelSelector: "app=" + req.name});
  ctx.log("want", site?.spec?.replicas);
  return {requeueAfter: "45s"};
}
"#;
    let mut s = cluster_with(src, Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 3_000);
    let pass = s
        .sim
        .trace()
        .entries()
        .map(|e| e.to_json())
        .rfind(|j| j["component"] == "controller/website" && j.get("record").is_some())
        .expect("a recorded pass");
    let record = &pass["record"];
    assert_eq!(
        record["observed"], "get Website default/web: found; list deployments: 0",
        "{pass}"
    );
    assert_eq!(record["desired"], "returned requeueAfter 45s", "{pass}");
    assert_eq!(record["diff"], "want 2", "{pass}");
}

#[test]
fn with_its_watch_events_dropped_the_controller_reads_a_stale_cache_until_it_relists() {
    let mut s = cluster_with(&good(), Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 30_000);
    s.inject(Fault::DropWatchEvents {
        component: "controller/website".into(),
        count: None,
        probability: None,
        kind: Some("Deployment".into()),
        event_type: Some("DELETED".into()),
        duration: Some(60_000),
    })
    .expect("the fault applies");
    let out = s.kubectl("kubectl delete deployment web");
    assert!(out.ok, "{out:?}");
    // Its resyncs replay a cache that still holds the Deployment: nothing is made again.
    advance(&mut s, 50_000);
    assert!(get(&s, Kind::Deployment, "web").is_none());
    // The watch heals at 60 s, the informer relists and the next pass makes it again.
    advance(&mut s, 20_000);
    assert!(get(&s, Kind::Deployment, "web").is_some());
}

#[test]
fn hostile_sources_are_refused_at_their_place_and_never_take_the_simulation_down() {
    let deep = format!(
        "function reconcile(req, ctx) {{ return {}1{}; }}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let text = FILE.replace(
        "function reconcile(req, ctx) {",
        &format!("{deep}\n    function unused(req, ctx) {{"),
    );
    let diags = refused(&text);
    assert_eq!(
        diags.len(),
        1,
        "{:?}",
        diags
            .iter()
            .map(|d| d.chars().take(200).collect::<String>())
            .collect::<Vec<_>>()
    );
    assert!(
        diags[0].contains("spec.source: "),
        "{}",
        &diags[0][..200.min(diags[0].len())]
    );
    // Runaway recursion and allocation end as failed passes; the cluster goes on.
    for src in [
        "function reconcile(req, ctx) { return reconcile(req, ctx); }",
        "function reconcile(req, ctx) { let a = []; while (true) a.push('x'.repeat(100000)); }",
    ] {
        let mut s = cluster_with(src, Limits::default());
        assert!(s.apply_text("web.yaml", WEBSITE).ok);
        advance(&mut s, 5_000);
        let errors = events(&s, "ReconcileError");
        assert!(!errors.is_empty(), "{src}");
        let out = s.kubectl("kubectl get websites");
        assert!(out.ok && out.stdout.contains("web"), "{out:?}");
    }
}

#[test]
fn deleting_the_controller_document_stops_its_process_and_its_children_stay() {
    let mut s = Session::load("website.yaml", FILE, None).expect("the file loads");
    advance(&mut s, 30_000);
    let controller = FILE
        .split("\n---\n")
        .find(|d| d.contains("kind: Controller"))
        .expect("the fixture has one");
    let report = s.delete_text("controller.yaml", controller);
    assert_eq!(
        report.lines,
        ["controller.kubeloop.dev \"website\" deleted"]
    );
    assert!(!s.sim.is_running(&ComponentId::Script("website".into())));
    let out = s.kubectl("kubectl delete deployment web");
    assert!(out.ok, "{out:?}");
    advance(&mut s, 60_000);
    assert!(
        get(&s, Kind::Deployment, "web").is_none(),
        "nothing makes it again"
    );
    let again = s.delete_text("controller.yaml", controller);
    assert!(!again.ok);
    assert_eq!(
        again.lines,
        ["Error from server (NotFound): controllers.kubeloop.dev \"website\" not found"]
    );
    // Applied again, it is a new process that makes the Deployment again.
    let report = s.apply_text("controller.yaml", controller);
    assert_eq!(report.lines, ["controller.kubeloop.dev/website created"]);
    advance(&mut s, 5_000);
    assert!(get(&s, Kind::Deployment, "web").is_some());
}

#[test]
fn patch_status_writes_the_status_subresource_and_now_is_simulated_time() {
    let src = r#"
function reconcile(req, ctx) {
  ctx.patchStatus("Website", req.name, {status: {seenAt: ctx.now()}}, req.namespace);
}"#;
    let mut s = cluster_with(src, Limits::default());
    let applied_at = s.sim.now();
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 5_000);
    let site = get(&s, website_kind(), "web").expect("the Website");
    // ctx.now() is the simulated clock in ms, never the machine's: the pass ran in the last 5 s.
    let t = site["status"]["seenAt"].as_u64().expect("a time");
    assert!(
        t >= applied_at && t <= s.sim.now(),
        "{t} in {applied_at}..{}",
        s.sim.now()
    );
    assert_eq!(site["spec"]["replicas"], 2, "the spec is left alone");
}

#[test]
fn list_filters_by_label_selector_object_and_field_selector() {
    let src = r#"
function reconcile(req, ctx) {
  const bySelector = ctx.list("pods", {namespace: req.namespace, labelSelector: {matchLabels: {app: "web"}}});
  const byField = ctx.list("Pod", {fieldSelector: "status.phase=Running"});
  const byBoth = ctx.list("po", {labelSelector: "app=web", fieldSelector: "metadata.name!=nothing"});
  ctx.log(`selector ${bySelector.length} field ${byField.length} both ${byBoth.length}`);
  return {requeueAfter: "5s"};
}"#;
    let mut spec = (*spec("website", src, Limits::default())).clone();
    spec.doc.watches = vec![TypeName {
        api_version: "v1".into(),
        kind: "Pod".into(),
    }];
    let mut s = Session::load("crd.yaml", WEBSITE_CRD, None).expect("the CRD loads");
    advance(&mut s, 5_000);
    s.sim
        .add_component(Box::new(ScriptController::new(Rc::new(spec))));
    assert!(
        s.kubectl("kubectl create deployment web --image=nginx --replicas=2")
            .ok
    );
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    advance(&mut s, 60_000);
    let last = records(&s).last().cloned().expect("a pass");
    let logs = format!(
        "{}{}",
        last.diff,
        if last.diff.is_empty() {
            &last.desired
        } else {
            ""
        }
    );
    assert_eq!(logs, "selector 2 field 2 both 2");
}

#[test]
fn requeue_true_brings_the_key_back_with_rate_limited_back_off_and_no_event() {
    let src = r#"
let passes = 0;
function reconcile(req, ctx) {
  passes += 1;
  ctx.log(`pass ${passes}`);
  return {requeue: true};
}"#;
    let mut s = cluster_with(src, Limits::default());
    assert!(s.apply_text("web.yaml", WEBSITE).ok);
    let requeued = |s: &Session| {
        records(s)
            .iter()
            .filter(|r| r.desired == "returned requeue: true (rate-limited)")
            .count()
    };
    advance(&mut s, 2_000);
    let early = requeued(&s);
    advance(&mut s, 60_000);
    let later = requeued(&s);
    // Nothing changes the Website, yet it comes back: client-go's per-item back-off (5 ms
    // doubling) means a few passes in the first seconds, then ever fewer.
    assert!(early >= 3, "{early} passes in 2 s");
    assert!(later > early, "it keeps coming back: {early} then {later}");
    assert!(later < 40, "backing off, not spinning: {later}");
    assert!(
        events(&s, "ReconcileError").is_empty(),
        "a requeue is not an error"
    );
}
