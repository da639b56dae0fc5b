//! Built-in kinds the playground stores without simulating them (ConfigMap, Secret,
//! ServiceAccount, Ingress, StatefulSet, Role…): served from the upstream v1.34 definitions,
//! decoded as Go decodes them, and handled by kubectl, namespaces and the garbage collector like
//! every other kind.

use kubeloop::sim::api::types::{Kind, ObjectKey};
use kubeloop::sim::session::Session;

const APP: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: shop
data:
  PORT: "8080"
  mode: production
---
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
stringData:
  password: hunter2
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
  namespace: shop
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: shop
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
"#;

fn loaded() -> Session {
    let mut s = Session::new(1);
    let report = s.apply_text("app.yaml", APP);
    assert!(report.ok, "{:?}", report.diagnostics);
    s.advance_to(2_000, usize::MAX);
    s
}

fn stored(s: &Session, api_version: &str, kind: &str, ns: &str, name: &str) -> bool {
    let kind = Kind::of_type(api_version, kind).expect("a served kind");
    s.sim.api().get(&ObjectKey::new(kind, ns, name)).is_some()
}

#[test]
fn real_manifests_of_unsimulated_kinds_are_stored_and_listed_with_their_columns() {
    let mut s = loaded();
    assert!(stored(&s, "v1", "ConfigMap", "shop", "web-config"));
    assert!(stored(
        &s,
        "rbac.authorization.k8s.io/v1",
        "Role",
        "shop",
        "reader"
    ));
    assert_eq!(
        s.kubectl("get cm -n shop").stdout,
        "NAME         DATA   AGE\nweb-config   2      2s\n"
    );
    assert_eq!(
        s.kubectl("get secrets -n shop").stdout,
        "NAME   TYPE     DATA   AGE\ndb     Opaque   1      2s\n"
    );
    assert_eq!(
        s.kubectl("get serviceaccount web -n shop").stdout,
        "NAME   SECRETS   AGE\nweb    0         2s\n"
    );
    assert_eq!(
        s.kubectl("get ingresses.networking.k8s.io -n shop -o name")
            .stdout,
        "ingress.networking.k8s.io/web\n"
    );
}

#[test]
fn a_secrets_string_data_is_stored_base64_encoded_in_data() {
    let mut s = loaded();
    let out = s.kubectl("get secret db -n shop -o jsonpath={.data.password}");
    assert_eq!(out.stdout, "aHVudGVyMg==");
    let yaml = s.kubectl("get secret db -n shop -o yaml").stdout;
    assert!(!yaml.contains("\nstringData:"), "{yaml}");
    assert!(yaml.contains("\ntype: Opaque\n"), "{yaml}");
}

#[test]
fn api_resources_lists_the_built_in_kinds_with_their_short_names() {
    let mut s = Session::new(1);
    let out = s.kubectl("api-resources").stdout;
    for row in [
        "configmaps                          cm           v1                                true         ConfigMap",
        "statefulsets                        sts          apps/v1                           true         StatefulSet",
        "clusterroles                                     rbac.authorization.k8s.io/v1      false        ClusterRole",
    ] {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == cells),
            "{row} missing from:\n{out}"
        );
    }
    assert!(s
        .kubectl("api-versions")
        .stdout
        .contains("\nrbac.authorization.k8s.io/v1\n"));
}

#[test]
fn a_number_where_go_wants_a_string_is_refused_as_the_api_server_refuses_it() {
    let mut s = Session::new(1);
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        env:\n        - name: PORT\n          value: 8080\n";
    let out = s.kubectl_with_input("apply -f web.yaml", Some(deploy));
    assert!(!out.ok);
    assert_eq!(
        out.stderr,
        "Error from server (BadRequest): error when creating \"web.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string\n"
    );
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  port: 80\n";
    let report = s.apply_text("cm.yaml", cm);
    assert!(!report.ok);
    assert!(
        report.diagnostics.iter().any(|d| d.line == 6
            && d.message
                == "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
        "{:?}",
        report.diagnostics
    );
}

#[test]
fn unknown_fields_of_a_stored_kind_are_refused_by_strict_decoding() {
    let mut s = Session::new(1);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndatas:\n  a: b\n";
    let report = s.apply_text("cm.yaml", cm);
    assert!(!report.ok);
    assert_eq!(
        report.diagnostics[0].message,
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"datas\""
    );
    assert_eq!(report.diagnostics[0].line, 5);
}

#[test]
fn deleting_a_namespace_deletes_its_config_maps_and_secrets_too() {
    let mut s = loaded();
    let out = s.kubectl("delete namespace shop --wait=false");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(s.sim.now() + 60_000, usize::MAX);
    assert!(!stored(&s, "v1", "ConfigMap", "shop", "web-config"));
    assert!(!stored(&s, "v1", "Secret", "shop", "db"));
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Namespace, "", "shop"))
        .is_none());
}

#[test]
fn a_config_map_owned_by_a_deployment_is_collected_with_it() {
    let mut s = Session::new(1);
    let out = s.kubectl("create deployment web --image=nginx");
    assert!(out.ok, "{}", out.stderr);
    let uid = s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Deployment, "default", "web"))
        .map(|d| d.meta().uid.clone())
        .expect("created");
    let cm = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  ownerReferences:\n  - apiVersion: apps/v1\n    kind: Deployment\n    name: web\n    uid: {uid}\ndata:\n  a: b\n");
    let report = s.apply_text("cm.yaml", &cm);
    assert!(report.ok, "{:?}", report.diagnostics);
    s.advance_to(s.sim.now() + 1_000, usize::MAX);
    assert!(stored(&s, "v1", "ConfigMap", "default", "web-config"));
    let out = s.kubectl("delete deployment web");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(s.sim.now() + 10_000, usize::MAX);
    assert!(!stored(&s, "v1", "ConfigMap", "default", "web-config"));
}

#[test]
fn kubectl_get_all_covers_the_all_category_in_discovery_order() {
    let mut s = Session::new(1);
    let sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: postgres}]\n";
    let report = s.apply_text("db.yaml", sts);
    assert!(report.ok, "{:?}", report.diagnostics);
    s.advance_to(1_000, usize::MAX);
    let out = s.kubectl("get all").stdout;
    assert!(
        out.contains("statefulset.apps/db"),
        "the StatefulSet is in the all category:\n{out}"
    );
    let service = out
        .find("service/kubernetes")
        .expect("the kubernetes Service is listed");
    let sts = out
        .find("statefulset.apps/db")
        .expect("the StatefulSet is listed");
    assert!(service < sts, "core kinds come first:\n{out}");
}

const MOUNTS_CONFIG: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx
    volumeMounts:
    - {name: config, mountPath: /etc/web}
  volumes:
  - name: config
    configMap:
      name: web-config
"#;

#[test]
fn a_pod_that_mounts_a_missing_config_map_stays_container_creating_until_it_appears() {
    let mut s = Session::new(1);
    let report = s.apply_text("pod.yaml", MOUNTS_CONFIG);
    assert!(report.ok, "{:?}", report.diagnostics);
    s.advance_to(10_000, usize::MAX);
    let pods = s.kubectl("get pod web").stdout;
    assert!(pods.contains("0/1     ContainerCreating"), "{pods}");
    let events = s
        .kubectl("get events --field-selector reason=FailedMount")
        .stdout;
    assert!(
        events.contains(
            "Warning   FailedMount   pod/web   MountVolume.SetUp failed for volume \"config\" : configmap \"web-config\" not found"
        ),
        "{events}"
    );
    // The kubelet retries with the operation executor's back-off (0.5 s, doubling): five
    // attempts in the first ten seconds, aggregated into one Event.
    let count =
        s.kubectl("get events --field-selector reason=FailedMount -o jsonpath={.items[0].count}");
    assert_eq!(count.stdout, "5");

    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  a: b\n";
    assert!(s.apply_text("cm.yaml", cm).ok);
    // Created at 10 s, inside the back-off that ends at 15.5 s: the pod waits for it.
    s.advance_to(15_000, usize::MAX);
    assert!(s
        .kubectl("get pod web")
        .stdout
        .contains("ContainerCreating"));
    s.advance_to(30_000, usize::MAX);
    let pods = s.kubectl("get pod web").stdout;
    assert!(pods.contains("1/1     Running"), "{pods}");
}

#[test]
fn an_optional_config_map_volume_does_not_hold_the_pod_back() {
    let mut s = Session::new(1);
    let pod = MOUNTS_CONFIG.replace(
        "      name: web-config\n",
        "      name: web-config\n      optional: true\n",
    );
    assert!(s.apply_text("pod.yaml", &pod).ok);
    s.advance_to(20_000, usize::MAX);
    let pods = s.kubectl("get pod web").stdout;
    assert!(pods.contains("1/1     Running"), "{pods}");
}

#[test]
fn an_env_value_from_a_missing_config_map_key_holds_the_container_in_create_container_config_error()
{
    let mut s = Session::new(1);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx\n    env:\n    - name: PORT\n      valueFrom:\n        configMapKeyRef: {name: web-config, key: PORT}\n";
    assert!(s.apply_text("pod.yaml", pod).ok);
    s.advance_to(20_000, usize::MAX);
    let pods = s.kubectl("get pod web").stdout;
    assert!(
        pods.contains("0/1     CreateContainerConfigError"),
        "{pods}"
    );
    let events = s
        .kubectl("get events --field-selector reason=Failed")
        .stdout;
    assert!(
        events.contains("pod/web   Error: configmap \"web-config\" not found"),
        "{events}"
    );

    // The ConfigMap without the key: the next try says which key is missing.
    let cm =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  MODE: prod\n";
    assert!(s.apply_text("cm.yaml", cm).ok);
    s.advance_to(40_000, usize::MAX);
    let message =
        s.kubectl("get pod web -o jsonpath={.status.containerStatuses[0].state.waiting.message}");
    assert_eq!(
        message.stdout,
        "couldn't find key PORT in ConfigMap default/web-config"
    );

    // With the key the container starts at the pod worker's next try.
    let cm = cm.replace("  MODE: prod\n", "  MODE: prod\n  PORT: \"8080\"\n");
    assert!(s.apply_text("cm.yaml", &cm).ok);
    s.advance_to(60_000, usize::MAX);
    let pods = s.kubectl("get pod web").stdout;
    assert!(pods.contains("1/1     Running"), "{pods}");
}

#[test]
fn env_from_a_missing_secret_holds_the_container_unless_it_is_optional() {
    let mut s = Session::new(1);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx\n    envFrom:\n    - secretRef: {name: db}\n";
    assert!(s.apply_text("pod.yaml", pod).ok);
    s.advance_to(20_000, usize::MAX);
    let message = s.kubectl(
        "get pod web -o jsonpath={.status.containerStatuses[0].state.waiting.reason}/{.status.containerStatuses[0].state.waiting.message}",
    );
    assert_eq!(
        message.stdout,
        "CreateContainerConfigError/secret \"db\" not found"
    );
    let mut optional = Session::new(1);
    let pod = pod.replace("{name: db}", "{name: db, optional: true}");
    assert!(optional.apply_text("pod.yaml", &pod).ok);
    optional.advance_to(20_000, usize::MAX);
    assert!(optional
        .kubectl("get pod web")
        .stdout
        .contains("1/1     Running"));
}

#[test]
fn kubectl_creates_config_maps_generic_secrets_and_service_accounts_from_literals() {
    let mut s = Session::new(1);
    let out =
        s.kubectl("create configmap web-config --from-literal=PORT=8080 --from-literal=mode=prod");
    assert_eq!(
        out.stdout, "configmap/web-config created\n",
        "{}",
        out.stderr
    );
    assert_eq!(
        s.kubectl("get cm web-config -o jsonpath={.data.PORT}/{.data.mode}")
            .stdout,
        "8080/prod"
    );
    let out = s.kubectl("create secret generic db --from-literal=password=hunter2");
    assert_eq!(out.stdout, "secret/db created\n", "{}", out.stderr);
    assert_eq!(
        s.kubectl("get secret db -o jsonpath={.type}/{.data.password}")
            .stdout,
        "Opaque/aHVudGVyMg=="
    );
    assert_eq!(
        s.kubectl("create sa web").stdout,
        "serviceaccount/web created\n"
    );
    assert_eq!(
        s.kubectl("create cm bad --from-literal=PORT").stderr,
        "error: invalid literal source PORT, expected key=value\n"
    );
    assert_eq!(
        s.kubectl("create cm bad --from-literal=a=1 --from-literal=a=2")
            .stderr,
        "error: cannot add key a, another key by that name already exists in Data for ConfigMap \"bad\"\n"
    );
    assert_eq!(
        s.kubectl("create configmap web-config --from-literal=a=b")
            .stderr,
        "error: failed to create configmap: configmaps \"web-config\" already exists\n"
    );
}

#[test]
fn kubectl_describe_prints_config_maps_secrets_and_service_accounts_as_kubectls_describers_do() {
    let mut s = Session::new(1);
    s.kubectl("create configmap web-config --from-literal=PORT=8080 --from-literal=mode=prod");
    s.kubectl("create secret generic db --from-literal=password=hunter2");
    s.kubectl("create serviceaccount web");
    assert_eq!(
        s.kubectl("describe cm web-config").stdout,
        "Name:         web-config\nNamespace:    default\nLabels:       <none>\nAnnotations:  <none>\n\nData\n====\nPORT:\n----\n8080\n\nmode:\n----\nprod\n\n\nBinaryData\n====\n\nEvents:  <none>\n"
    );
    assert_eq!(
        s.kubectl("describe secret db").stdout,
        "Name:         db\nNamespace:    default\nLabels:       <none>\nAnnotations:  <none>\n\nType:  Opaque\n\nData\n====\npassword:  7 bytes\n"
    );
    assert_eq!(
        s.kubectl("describe sa web").stdout,
        "Name:                web\nNamespace:           default\nLabels:              <none>\nAnnotations:         <none>\nImage pull secrets:  <none>\nMountable secrets:   <none>\nTokens:              <none>\nEvents:              <none>\n"
    );
}
