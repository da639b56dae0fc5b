//! The CustomResourceDefinitions of kro: its own (`resourcegraphdefinitions.kro.run`, which its
//! Helm chart installs) and the one it generates for each graph (`pkg/graph/crd`), with status
//! field types inferred from their expressions.

use serde_json::{json, Map, Value as Json};

use super::graph::{FieldTemplate, Graph, Seg};
use super::simpleschema;
use crate::sim::api::openapi;
use crate::sim::cel::{template::Part, BinaryOp, ExprKind, Func, UnaryOp};

/// `flect.Pluralize` for the kinds people name: `WebApp` → `webapps`, `Policy` → `policies`.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('y')
        && !lower.ends_with("ay")
        && !lower.ends_with("ey")
        && !lower.ends_with("oy")
        && !lower.ends_with("uy")
    {
        return format!("{}ies", &lower[..lower.len() - 1]);
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

/// The generated CRD's name: `<plural>.<group>`.
pub fn crd_name(graph: &Graph) -> String {
    format!("{}.{}", plural(&graph.schema.kind), graph.schema.group)
}

/// What every CRD kro generates has in common (`pkg/graph/crd/defaults.go`): one served storage
/// version with the status subresource, `state` and `conditions` in the status, and the default
/// printer columns. Data rather than code: the first paint downloads less.
const GENERATED: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "", "labels": {}},
  "spec": {
    "group": "",
    "names": {},
    "scope": "Namespaced",
    "versions": [{
      "name": "",
      "served": true,
      "storage": true,
      "subresources": {"status": {}},
      "additionalPrinterColumns": [
        {"name": "State", "type": "string", "jsonPath": ".status.state"},
        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
      ],
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {},
        "status": {"type": "object", "properties": {
          "state": {"type": "string"},
          "conditions": {"type": "array", "items": {"type": "object", "properties": {
            "type": {"type": "string"},
            "status": {"type": "string"},
            "reason": {"type": "string"},
            "message": {"type": "string"},
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "observedGeneration": {"type": "integer"}
          }}}
        }}
      }}}
    }]
  }
}"#;

fn put(doc: &mut Json, pointer: &str, value: Json) {
    if let Some(slot) = doc.pointer_mut(pointer) {
        *slot = value;
    }
}

/// The CRD kro generates for `graph`, as JSON, labelled as kro's (`rgd_name`, `rgd_uid`).
pub fn generate(graph: &Graph, rgd_name: &str, rgd_uid: &str) -> Result<Json, String> {
    let s = &graph.schema;
    let spec_schema = simpleschema::to_openapi(&s.spec, s.types.as_ref(), "spec.schema.spec")
        .map_err(|e| e.to_string())?;
    let mut crd: Json = serde_json::from_str(GENERATED).map_err(|e| e.to_string())?;
    let version = "/spec/versions/0";
    let schema = "/spec/versions/0/schema/openAPIV3Schema/properties";
    if let Some(status) = crd.pointer_mut(&format!("{schema}/status")) {
        for f in &graph.status {
            insert_status_field(status, &f.path, infer(f, graph));
        }
    }
    put(&mut crd, &format!("{schema}/spec"), spec_schema);
    if let Some(columns) = &s.additional_printer_columns {
        put(
            &mut crd,
            &format!("{version}/additionalPrinterColumns"),
            columns.clone(),
        );
    }
    put(
        &mut crd,
        &format!("{version}/name"),
        Json::from(s.api_version.as_str()),
    );
    let plural = plural(&s.kind);
    let mut names = Map::new();
    let mut text = |k: &str, v: String| {
        names.insert(k.into(), Json::String(v));
    };
    text("kind", s.kind.clone());
    text("listKind", format!("{}List", s.kind));
    text("plural", plural.clone());
    text("singular", s.kind.to_ascii_lowercase());
    let strings = |v: &[String]| Json::Array(v.iter().cloned().map(Json::String).collect());
    if !s.short_names.is_empty() {
        names.insert("shortNames".into(), strings(&s.short_names));
    }
    if !s.categories.is_empty() {
        names.insert("categories".into(), strings(&s.categories));
    }
    put(&mut crd, "/spec/names", Json::Object(names));
    put(&mut crd, "/spec/group", Json::from(s.group.as_str()));
    if !s.namespaced {
        put(&mut crd, "/spec/scope", Json::from("Cluster"));
    }
    put(
        &mut crd,
        "/metadata/name",
        Json::String(format!("{plural}.{}", s.group)),
    );
    let mut labels = Map::new();
    for (k, v) in [
        (super::LABEL_OWNED, "true"),
        (super::LABEL_KRO_VERSION, super::KRO_VERSION),
        (super::LABEL_RGD_ID, rgd_uid),
        (super::LABEL_RGD_NAME, rgd_name),
    ] {
        labels.insert(k.to_string(), Json::from(v));
    }
    put(&mut crd, "/metadata/labels", Json::Object(labels));
    Ok(crd)
}

fn insert_status_field(status: &mut Json, path: &[Seg], schema: Json) {
    let mut cur = status;
    for (i, seg) in path.iter().enumerate() {
        let Seg::Key(k) = seg else { return };
        let props = cur
            .as_object_mut()
            .and_then(|m| {
                m.entry("properties")
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
            })
            .expect("an object schema");
        if i + 1 == path.len() {
            props.insert(k.clone(), schema);
            return;
        }
        cur = props
            .entry(k.clone())
            .or_insert_with(|| json!({"type": "object"}));
    }
}

/// The OpenAPI schema a status field's expression yields, as far as the playground can tell
/// without cel-go's checker: a typed literal, operator or function; a path into a built-in kind's
/// resource (`${deployment.status.availableReplicas}` is an integer); else any value.
fn infer(f: &FieldTemplate, graph: &Graph) -> Json {
    let any = json!({"x-kubernetes-preserve-unknown-fields": true});
    let [Part::Expr { expr, .. }] = f.template.parts.as_slice() else {
        return json!({"type": "string"});
    };
    match &expr.kind {
        ExprKind::Bool(_) | ExprKind::Unary(UnaryOp::Not, _) => json!({"type": "boolean"}),
        ExprKind::Select { test: true, .. } => json!({"type": "boolean"}),
        ExprKind::Binary(
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::In,
            _,
            _,
        ) => json!({"type": "boolean"}),
        ExprKind::Int(_) | ExprKind::Uint(_) => json!({"type": "integer"}),
        ExprKind::Double(_) => json!({"type": "number"}),
        ExprKind::Str(_) => json!({"type": "string"}),
        ExprKind::Call(Func::Size, _) => json!({"type": "integer"}),
        ExprKind::Call(Func::String, _) => json!({"type": "string"}),
        _ => {
            let refs = expr.references();
            match refs.as_slice() {
                [p] if p.len() > 1 && matches!(expr.kind, ExprKind::Select { .. }) => {
                    path_type(graph, p).unwrap_or(any)
                }
                _ => any,
            }
        }
    }
}

/// The schema of `id.a.b` when `id` is a template of a built-in kind.
fn path_type(graph: &Graph, path: &[String]) -> Option<Json> {
    let node = graph.node(&path[0])?;
    let resource = openapi::resource(&node.api_version, &node.kind)?;
    let mut t = resource.root();
    for field in &path[1..] {
        t = t.field(field)?.0;
    }
    Some(schema_of(t))
}

fn schema_of(t: openapi::TypeRef) -> Json {
    let guess = t.type_guess();
    match guess.as_str() {
        "string" | "integer" | "number" | "boolean" => json!({"type": guess}),
        _ if guess.starts_with("[]") => json!({"type": "array", "items": match t.item() {
            Some(i) => schema_of(i),
            None => json!({"x-kubernetes-preserve-unknown-fields": true}),
        }}),
        _ => json!({"x-kubernetes-preserve-unknown-fields": true}),
    }
}

/// kro's own CRD, `resourcegraphdefinitions.kro.run`: what the API server checks of a
/// ResourceGraphDefinition before kro sees it (patterns, enums, the `kro.run` default group).
/// Written for the playground in the shape of the one kro's Helm chart installs.
pub fn rgd_crd() -> Json {
    serde_json::from_str(include_str!("rgd-crd.json")).expect("the bundled CRD parses")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kro::graph;

    #[test]
    fn plurals_follow_english_as_flect_does() {
        assert_eq!(plural("WebApp"), "webapps");
        assert_eq!(plural("Policy"), "policies");
        assert_eq!(plural("Gateway"), "gateways");
        assert_eq!(plural("Box"), "boxes");
    }

    #[test]
    fn the_generated_crd_is_named_and_typed_from_the_schema() {
        let g = graph::build(&json!({
            "schema": {"apiVersion": "v1alpha1", "kind": "WebApp",
                "spec": {"name": "string", "replicas": "integer | default=1"},
                "status": {"availableReplicas": "${deployment.status.availableReplicas}",
                           "conditions2": "${deployment.status.conditions}",
                           "ready": "${deployment.status.availableReplicas == 1}",
                           "url": "http://${deployment.metadata.name}"}},
            "resources": [{"id": "deployment", "template": {"apiVersion": "apps/v1",
                "kind": "Deployment", "metadata": {"name": "${schema.spec.name}"}}}],
        }))
        .unwrap();
        let crd = generate(&g, "webapp", "uid-1").unwrap();
        assert_eq!(crd["metadata"]["name"], "webapps.kro.run");
        assert_eq!(
            crd["metadata"]["labels"]["kro.run/resource-graph-definition-name"],
            "webapp"
        );
        let v = &crd["spec"]["versions"][0];
        let status = &v["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"];
        assert_eq!(status["availableReplicas"]["type"], "integer");
        assert_eq!(status["conditions2"]["type"], "array");
        assert_eq!(status["ready"]["type"], "boolean");
        assert_eq!(status["url"]["type"], "string");
        assert_eq!(status["state"]["type"], "string");
        let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["properties"]["replicas"]["default"], 1);
        assert_eq!(v["additionalPrinterColumns"][0]["name"], "State");
    }
}
