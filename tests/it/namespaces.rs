//! Namespaces: the four a cluster starts with, NamespaceLifecycle's refusals, and a deletion
//! the namespace controller carries out (pods first, conditions, the finalizer, then gone).

use kubeloop::sim::api::types::{Kind, Object, ObjectKey};
use kubeloop::sim::session::Session;

const SHOP: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
"#;

fn namespace(s: &Session, name: &str) -> Option<kubeloop::sim::api::types::Namespace> {
    s.sim
        .api()
        .get(&ObjectKey::new(Kind::Namespace, "", name))
        .and_then(|o| o.as_namespace().cloned())
}

fn in_namespace(s: &Session, ns: &str) -> Vec<String> {
    s.sim
        .api()
        .all()
        .filter(|o| o.meta().namespace == ns && o.kind() != Kind::Event)
        .map(|o| o.key().to_string())
        .collect()
}

#[test]
fn a_new_cluster_has_the_four_system_namespaces_active() {
    let mut s = Session::new(1);
    let out = s.kubectl("get ns");
    assert_eq!(
        out.stdout,
        "NAME              STATUS   AGE\ndefault           Active   0s\nkube-node-lease   Active   0s\nkube-public       Active   0s\nkube-system       Active   0s\n"
    );
    let default = namespace(&s, "default").expect("default exists");
    assert_eq!(default.spec.finalizers, ["kubernetes"]);
    assert_eq!(
        default
            .metadata
            .labels
            .get("kubernetes.io/metadata.name")
            .map(|v| v.as_str()),
        Some("default")
    );
    let described = s.kubectl("describe ns default");
    assert_eq!(
        described.stdout,
        "Name:         default\nLabels:       kubernetes.io/metadata.name=default\nAnnotations:  <none>\nStatus:       Active\n\nNo resource quota.\n\nNo LimitRange resource.\n"
    );
}

#[test]
fn creating_into_a_namespace_that_does_not_exist_is_refused_as_not_found() {
    let mut s = Session::new(1);
    let out = s.kubectl("create deployment web --image=nginx -n shop");
    assert!(!out.ok);
    assert_eq!(
        out.stderr,
        "error: failed to create deployment: namespaces \"shop\" not found\n"
    );
    let created = s.kubectl("create namespace shop");
    assert_eq!(created.stdout, "namespace/shop created\n");
    let again = s.kubectl("create deployment web --image=nginx -n shop");
    assert!(again.ok, "{}", again.stderr);
}

#[test]
fn the_system_namespaces_may_not_be_deleted() {
    let mut s = Session::new(1);
    for name in ["default", "kube-system", "kube-public"] {
        let out = s.kubectl(&format!("delete namespace {name}"));
        assert_eq!(
            out.stderr,
            format!("Error from server (Forbidden): namespaces \"{name}\" is forbidden: this namespace may not be deleted\n")
        );
    }
}

#[test]
fn a_scenario_creates_its_namespaces_before_what_lives_in_them() {
    let (ns, deploy) = SHOP.split_once("---\n").expect("two documents");
    let s = Session::load("shop.yaml", &format!("{deploy}---\n{ns}"), None).expect("loads");
    assert!(namespace(&s, "shop").is_some());
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Deployment, "shop", "web"))
        .is_some());
}

#[test]
fn deleting_a_namespace_terminates_its_pods_first_then_the_rest_then_the_namespace() {
    let mut s = Session::new(1);
    let applied = s.apply_text("shop.yaml", SHOP);
    assert!(applied.ok, "{:?}", applied.diagnostics);
    s.advance_to(20_000, usize::MAX);
    assert_eq!(
        s.sim
            .api()
            .list(Kind::Pod)
            .filter(|p| p.meta().namespace == "shop")
            .count(),
        2
    );

    let out = s.kubectl("delete namespace shop --wait=false");
    assert_eq!(out.stdout, "namespace \"shop\" deleted\n");
    let ns = namespace(&s, "shop").expect("still there, terminating");
    assert_eq!(ns.status.phase, "Terminating");
    let refused = s.kubectl("create deployment late --image=nginx -n shop");
    assert_eq!(
        refused.stderr,
        "error: failed to create deployment: deployments.apps \"late\" is forbidden: unable to create new content in namespace shop because it is being terminated\n"
    );
    let twice = s.kubectl("delete namespace shop --wait=false");
    assert!(
        twice.stderr.contains("The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system."),
        "{}",
        twice.stderr
    );

    // The pods go first, gracefully; the Deployment waits for them.
    s.advance_to(s.sim.now() + 1_000, usize::MAX);
    let left = in_namespace(&s, "shop");
    assert!(
        left.iter().any(|k| k.starts_with("Deployment/")),
        "{left:?}"
    );
    let pods: Vec<Object> = s
        .sim
        .api()
        .list(Kind::Pod)
        .filter(|p| p.meta().namespace == "shop")
        .map(|p| (**p).clone())
        .collect();
    assert!(pods.iter().all(|p| p.meta().deletion_timestamp.is_some()));
    let ns = namespace(&s, "shop").expect("still terminating");
    let remaining = ns
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "NamespaceContentRemaining")
        .expect("the controller says what is left");
    assert_eq!(remaining.status, "True");
    assert_eq!(
        remaining.message.as_deref(),
        Some("Some resources are remaining: pods. has 2 resource instances")
    );
    let described = s.kubectl("describe namespace shop").stdout;
    assert!(
        described.contains("Annotations:  <none>\nStatus:       Terminating\nConditions:\n  Type ")
            && described.contains(
                "  NamespaceContentRemaining                    True    Thu, 01 Jan 2026 00:00:20 +0000  SomeResourcesRemain     Some resources are remaining: pods. has 2 resource instances\n"
            ),
        "{described}"
    );

    s.advance_to(s.sim.now() + 60_000, usize::MAX);
    assert!(
        in_namespace(&s, "shop").is_empty(),
        "{:?}",
        in_namespace(&s, "shop")
    );
    assert!(namespace(&s, "shop").is_none(), "finalized and gone");
    let get = s.kubectl("get ns shop");
    assert_eq!(
        get.stderr,
        "Error from server (NotFound): namespaces \"shop\" not found\n"
    );
}

#[test]
fn set_context_changes_the_namespace_commands_use_until_set_back() {
    let mut s = Session::new(1);
    assert!(s.apply_text("shop.yaml", SHOP).ok);
    let set = s.kubectl("config set-context --current --namespace=shop");
    assert_eq!(set.stdout, "Context \"kubeloop\" modified.\n");
    let contexts = s.kubectl("config get-contexts");
    assert_eq!(
        contexts.stdout,
        "CURRENT   NAME       CLUSTER    AUTHINFO   NAMESPACE\n*         kubeloop   kubeloop   kubeloop   shop\n"
    );
    let deployments = s.kubectl("get deployments -o name");
    assert_eq!(deployments.stdout, "deployment.apps/web\n");
    let explicit = s.kubectl("get deployments -n default");
    assert_eq!(
        explicit.stderr,
        "No resources found in default namespace.\n"
    );
    let everywhere = s.kubectl("get deployments -A -o name");
    assert_eq!(everywhere.stdout, "deployment.apps/web\n");
    assert!(s.kubectl("config set-context --current --namespace=").ok);
    let back = s.kubectl("get deployments");
    assert_eq!(back.stderr, "No resources found in default namespace.\n");
}
