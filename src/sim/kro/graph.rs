//! kro's graph builder (`pkg/graph/builder.go`): a ResourceGraphDefinition checked and compiled
//! into nodes in topological order, each with its parsed `${…}` expressions and the resources it
//! depends on, or refused with kro's message and the field it is about.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::sim::cel::{self, template, Expr};
use crate::vec_map::VecMap;

/// Ids kro keeps for itself (`pkg/graph/validation.go`).
const RESERVED: [&str; 9] = [
    "schema",
    "spec",
    "status",
    "metadata",
    "each",
    "item",
    "runtime",
    "instance",
    "namespace",
];

/// The most resources one graph may hold (bounds every per-node walk of a reconcile).
pub const MAX_RESOURCES: usize = 256;
/// The most items one `forEach` expands to (kro's default collection limit).
pub const MAX_COLLECTION: usize = 1000;
/// The most `forEach` dimensions one resource may have (kro's limit).
pub const MAX_DIMENSIONS: usize = 10;

/// A graph kro refuses: the field (`spec.resources[1].template.metadata.name`) and kro's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for GraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One step of a path into a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A string field holding `${…}`: where it is and what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldTemplate {
    pub path: Vec<Seg>,
    pub source: String,
    pub template: template::Template,
}

/// A standalone `${expr}` (readyWhen, includeWhen, forEach): its source and parse.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    pub source: String,
    pub expr: Expr,
}

/// `externalRef`: an object kro reads and never writes.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
}

/// One resource of the graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub id: String,
    /// Its place in `spec.resources`.
    pub index: usize,
    pub api_version: String,
    pub kind: String,
    /// The template (None for an external reference).
    pub template: Option<Json>,
    pub external: Option<ExternalRef>,
    /// The template's (or the external reference's) expression fields.
    pub fields: Vec<FieldTemplate>,
    pub ready_when: Vec<Condition>,
    pub include_when: Vec<Condition>,
    /// `forEach` dimensions: a variable and the list it ranges over.
    pub for_each: Vec<(String, Condition)>,
    /// The resources it reads, in id order.
    pub dependencies: Vec<String>,
}

impl Node {
    /// Whether this node expands into a collection.
    pub fn is_collection(&self) -> bool {
        !self.for_each.is_empty()
    }
}

/// The instance API a graph declares (`spec.schema`).
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    pub api_version: String,
    pub kind: String,
    pub group: String,
    pub namespaced: bool,
    pub spec: Json,
    pub types: Option<Json>,
    pub status: Json,
    pub additional_printer_columns: Option<Json>,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
}

/// A checked, compiled graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub schema: Schema,
    /// The nodes in topological order.
    pub nodes: Vec<Node>,
    /// `status` fields with expressions.
    pub status: Vec<FieldTemplate>,
}

impl Graph {
    /// The ids in topological order (`status.topologicalOrder`).
    pub fn order(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.id.clone()).collect()
    }

    /// The node with `id`.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// kro's apply waves: one-based, a node one past the deepest of its dependencies. Deletion
    /// runs them from the highest down.
    pub fn waves(&self) -> VecMap<String, usize> {
        let mut out: VecMap<String, usize> = VecMap::new();
        for n in &self.nodes {
            let w = n
                .dependencies
                .iter()
                .filter_map(|d| out.get(d))
                .max()
                .map_or(1, |m| m + 1);
            out.insert(n.id.clone(), w);
        }
        out
    }
}

fn err(field: impl Into<String>, message: impl Into<String>) -> GraphError {
    GraphError {
        field: field.into(),
        message: message.into(),
    }
}

fn str_at<'a>(v: &'a Json, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Json::as_str)
}

/// Checks and compiles the `spec` of a ResourceGraphDefinition.
pub fn build(spec: &Json) -> Result<Graph, GraphError> {
    let schema = read_schema(spec)?;
    let empty = Vec::new();
    let resources = spec
        .get("resources")
        .and_then(Json::as_array)
        .unwrap_or(&empty);
    if resources.len() > MAX_RESOURCES {
        return Err(err(
            "spec.resources",
            format!(
                "the playground runs graphs of at most {MAX_RESOURCES} resources; this one has {}",
                resources.len()
            ),
        ));
    }
    let mut ids: BTreeSet<String> = BTreeSet::new();
    for (i, r) in resources.iter().enumerate() {
        let id = str_at(r, "id").unwrap_or_default();
        let at = format!("spec.resources[{i}].id");
        if RESERVED.contains(&id) {
            return Err(err(at, format!("id {id} is a reserved keyword in KRO")));
        }
        if !is_lower_camel(id) {
            return Err(err(
                at,
                format!("id {id} is not a valid KRO resource id: must be lower camelCase"),
            ));
        }
        if !ids.insert(id.to_string()) {
            return Err(err(at, format!("found duplicate resource IDs: {id}")));
        }
    }
    let mut nodes = Vec::new();
    for (i, r) in resources.iter().enumerate() {
        nodes.push(read_node(i, r, &ids)?);
    }
    // Dependencies: every resource id an expression of the template, includeWhen or forEach reads.
    for n in &mut nodes {
        let mut deps: BTreeSet<String> = BTreeSet::new();
        let refs = n
            .fields
            .iter()
            .flat_map(|f| f.template.references())
            .chain(n.include_when.iter().flat_map(|c| c.expr.references()))
            .chain(n.for_each.iter().flat_map(|(_, c)| c.expr.references()));
        for r in refs {
            if ids.contains(&r[0]) {
                deps.insert(r[0].clone());
            }
        }
        n.dependencies = deps.into_iter().collect();
    }
    let nodes = topological(nodes)?;
    let status = status_fields(&schema.status, &ids)?;
    Ok(Graph {
        schema,
        nodes,
        status,
    })
}

fn is_lower_camel(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some('a'..='z')) && chars.all(|c| c.is_ascii_alphanumeric())
}

fn read_schema(spec: &Json) -> Result<Schema, GraphError> {
    let s = spec
        .get("schema")
        .ok_or_else(|| err("spec.schema", "schema is required"))?;
    let kind = str_at(s, "kind").unwrap_or_default().to_string();
    let api_version = str_at(s, "apiVersion").unwrap_or_default().to_string();
    let group = str_at(s, "group")
        .filter(|g| !g.is_empty())
        .unwrap_or(super::DEFAULT_GROUP)
        .to_string();
    let namespaced = str_at(s, "scope") != Some("Cluster");
    let strings = |key: &str| -> Vec<String> {
        s.get(key)
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(Schema {
        api_version,
        kind,
        group,
        namespaced,
        spec: s
            .get("spec")
            .cloned()
            .unwrap_or(Json::Object(Default::default())),
        types: s.get("types").cloned(),
        status: s
            .get("status")
            .cloned()
            .unwrap_or(Json::Object(Default::default())),
        additional_printer_columns: s.get("additionalPrinterColumns").cloned(),
        short_names: strings("shortNames"),
        categories: strings("categories"),
    })
}

/// The roots an expression of a resource may read: `schema`, the resource ids and, in a
/// collection, its `forEach` variables.
fn check_roots(
    refs: &[Vec<String>],
    ids: &BTreeSet<String>,
    vars: &[String],
    field: &str,
) -> Result<(), GraphError> {
    for r in refs {
        let root = &r[0];
        if root != "schema" && !ids.contains(root) && !vars.contains(root) {
            return Err(err(
                field,
                format!(
                    "failed to type-check template expression: undeclared reference to '{root}'"
                ),
            ));
        }
    }
    Ok(())
}

/// A standalone `${expr}` condition.
fn condition(src: &str, field: &str) -> Result<Condition, GraphError> {
    let t = template::parse(src).map_err(|d| err(field, format!("{field}: {}", d.message)))?;
    match t.parts.as_slice() {
        [template::Part::Expr { source, expr, .. }] => Ok(Condition {
            source: source.clone(),
            expr: expr.clone(),
        }),
        _ => Err(err(
            field,
            format!("only standalone expressions are allowed: {src:?} must be a single ${{…}}"),
        )),
    }
}

fn conditions(r: &Json, key: &str, i: usize) -> Result<Vec<Condition>, GraphError> {
    let Some(list) = r.get(key) else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err(err(
            format!("spec.resources[{i}].{key}"),
            format!("{key} must be a list of expressions"),
        ));
    };
    list.iter()
        .enumerate()
        .map(|(j, v)| {
            let field = format!("spec.resources[{i}].{key}[{j}]");
            condition(v.as_str().unwrap_or_default(), &field)
        })
        .collect()
}

fn read_node(i: usize, r: &Json, ids: &BTreeSet<String>) -> Result<Node, GraphError> {
    let id = str_at(r, "id").unwrap_or_default().to_string();
    let at = format!("spec.resources[{i}]");
    let template = r.get("template").filter(|t| !t.is_null()).cloned();
    let external_json = r.get("externalRef").filter(|t| !t.is_null());
    if template.is_some() == external_json.is_some() {
        return Err(err(
            at,
            "exactly one of template or externalRef must be provided",
        ));
    }
    let for_each = match r.get("forEach").and_then(Json::as_array) {
        None => Vec::new(),
        Some(dims) => {
            if external_json.is_some() {
                return Err(err(
                    format!("{at}.forEach"),
                    "forEach cannot be combined with externalRef",
                ));
            }
            if dims.len() > MAX_DIMENSIONS {
                return Err(err(
                    format!("{at}.forEach"),
                    format!("forEach may have at most {MAX_DIMENSIONS} dimensions"),
                ));
            }
            let mut out = Vec::new();
            for (j, d) in dims.iter().enumerate() {
                let field = format!("{at}.forEach[{j}]");
                let Some(m) = d.as_object().filter(|m| m.len() == 1) else {
                    return Err(err(
                        field,
                        "each forEach dimension must have exactly one variable",
                    ));
                };
                let (var, src) = m.iter().next().expect("one entry");
                if RESERVED.contains(&var.as_str()) || ids.contains(var) {
                    return Err(err(
                        field,
                        format!(
                            "forEach variable {var} conflicts with a reserved word or resource id"
                        ),
                    ));
                }
                let c = condition(src.as_str().unwrap_or_default(), &format!("{field}.{var}"))?;
                check_roots(&c.expr.references(), ids, &[], &field)?;
                out.push((var.clone(), c));
            }
            out
        }
    };
    let vars: Vec<String> = for_each.iter().map(|(v, _)| v.clone()).collect();
    let mut fields = Vec::new();
    let (api_version, kind, external) = match (&template, external_json) {
        (Some(t), _) => {
            let api_version = str_at(t, "apiVersion").unwrap_or_default().to_string();
            let kind = str_at(t, "kind").unwrap_or_default().to_string();
            if api_version.is_empty() || kind.is_empty() {
                return Err(err(
                    format!("{at}.template"),
                    format!("resource {id}: template must have apiVersion and kind"),
                ));
            }
            collect_templates(t, &mut Vec::new(), &format!("{at}.template"), &mut fields)?;
            (api_version, kind, None)
        }
        (None, Some(e)) => {
            let meta = e.get("metadata").cloned().unwrap_or(Json::Null);
            let ext = ExternalRef {
                api_version: str_at(e, "apiVersion").unwrap_or_default().to_string(),
                kind: str_at(e, "kind").unwrap_or_default().to_string(),
                name: str_at(&meta, "name").unwrap_or_default().to_string(),
                namespace: str_at(&meta, "namespace").map(str::to_string),
            };
            if ext.name.is_empty() {
                return Err(err(
                    format!("{at}.externalRef.metadata.name"),
                    "externalRef needs metadata.name (selectors are not simulated)",
                ));
            }
            collect_templates(
                e,
                &mut Vec::new(),
                &format!("{at}.externalRef"),
                &mut fields,
            )?;
            (ext.api_version.clone(), ext.kind.clone(), Some(ext))
        }
        (None, None) => unreachable!("checked above"),
    };
    let base = if external.is_some() {
        "externalRef"
    } else {
        "template"
    };
    for f in &fields {
        let field = format!("{at}.{base}.{}", show_path(&f.path));
        check_roots(&f.template.references(), ids, &vars, &field)?;
    }
    let include_when = conditions(r, "includeWhen", i)?;
    for (j, c) in include_when.iter().enumerate() {
        check_roots(
            &c.expr.references(),
            ids,
            &[],
            &format!("{at}.includeWhen[{j}]"),
        )?;
    }
    let ready_when = conditions(r, "readyWhen", i)?;
    for (j, c) in ready_when.iter().enumerate() {
        let field = format!("{at}.readyWhen[{j}]");
        for r in c.expr.references() {
            let own = if for_each.is_empty() { &id } else { "each" };
            if r[0] != own {
                return Err(err(
                    field,
                    format!(
                        "readyWhen expressions for resource {id} can only refer to {own}, not {}",
                        r[0]
                    ),
                ));
            }
        }
    }
    Ok(Node {
        id,
        index: i,
        api_version,
        kind,
        template,
        external,
        fields,
        ready_when,
        include_when,
        for_each,
        dependencies: Vec::new(),
    })
}

/// `spec.resources[0].template.spec.containers[0].image` style, from a path.
pub fn show_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Every string under `v` that holds `${…}`, parsed. Depth is bounded by the YAML reader.
fn collect_templates(
    v: &Json,
    path: &mut Vec<Seg>,
    base: &str,
    out: &mut Vec<FieldTemplate>,
) -> Result<(), GraphError> {
    match v {
        Json::String(s) if s.contains("${") => {
            let t = template::parse(s).map_err(|d| {
                let field = format!("{base}.{}", show_path(path));
                err(field.clone(), format!("{field}: {}", d.message))
            })?;
            out.push(FieldTemplate {
                path: path.clone(),
                source: s.clone(),
                template: t,
            });
        }
        Json::Object(m) => {
            for (k, x) in m {
                path.push(Seg::Key(k.clone()));
                collect_templates(x, path, base, out)?;
                path.pop();
            }
        }
        Json::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                collect_templates(x, path, base, out)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// The status fields' expressions (a status field without one is refused, as kro types every
/// status field from its expression).
fn status_fields(status: &Json, ids: &BTreeSet<String>) -> Result<Vec<FieldTemplate>, GraphError> {
    let mut out = Vec::new();
    collect_templates(status, &mut Vec::new(), "spec.schema.status", &mut out)?;
    for f in &out {
        let field = format!("spec.schema.status.{}", show_path(&f.path));
        for r in f.template.references() {
            if r[0] == "schema" {
                continue;
            }
            if !ids.contains(&r[0]) {
                return Err(err(
                    field,
                    format!(
                        "failed to type-check status expression: undeclared reference to '{}'",
                        r[0]
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Kahn's algorithm, always taking the ready node with the lowest declaration index (kro's
/// `TopologicalSort`); a cycle is refused naming it.
fn topological(mut nodes: Vec<Node>) -> Result<Vec<Node>, GraphError> {
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(nodes.len());
    while !nodes.is_empty() {
        let Some(pos) = nodes
            .iter()
            .position(|n| n.dependencies.iter().all(|d| done.contains(d)))
        else {
            let cycle = find_cycle(&nodes);
            let first = nodes
                .iter()
                .find(|n| n.id == cycle[0])
                .map_or(0, |n| n.index);
            return Err(err(
                format!("spec.resources[{first}]"),
                format!("graph contains a cycle: {}", cycle.join(" -> ")),
            ));
        };
        let n = nodes.remove(pos);
        done.insert(n.id.clone());
        out.push(n);
    }
    Ok(out)
}

/// A cycle among nodes none of which is ready, starting from the first declared.
fn find_cycle(nodes: &[Node]) -> Vec<String> {
    let mut path: Vec<String> = vec![nodes[0].id.clone()];
    loop {
        let cur = path.last().expect("non-empty");
        let node = nodes.iter().find(|n| &n.id == cur).expect("in the set");
        // Some dependency of a stuck node is stuck too.
        let next = node
            .dependencies
            .iter()
            .find(|d| nodes.iter().any(|n| &n.id == *d))
            .cloned()
            .unwrap_or_else(|| cur.clone());
        if let Some(start) = path.iter().position(|p| *p == next) {
            let mut cycle = path[start..].to_vec();
            cycle.push(next);
            return cycle;
        }
        path.push(next);
    }
}

/// Whether an evaluation error means the data is not there yet (kro requeues and waits) rather
/// than a broken expression (`pkg/runtime/errors.go`).
pub fn is_data_pending(e: &cel::EvalError) -> bool {
    [
        "no such key",
        "no such field",
        "no such attribute",
        "index out of range",
        "index out of bounds",
    ]
    .iter()
    .any(|p| e.message.contains(p))
}

/// Writes `value` at `path` inside `root` (the path exists: it was read from the same shape).
pub fn set_at(root: &mut Json, path: &[Seg], value: Json) {
    let mut cur = root;
    for s in path {
        let next = match (s, cur) {
            (Seg::Key(k), Json::Object(m)) => m.get_mut(k),
            (Seg::Index(i), Json::Array(a)) => a.get_mut(*i),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    *cur = value;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(resources: Json) -> Json {
        json!({
            "schema": {"apiVersion": "v1alpha1", "kind": "App", "spec": {"name": "string"}},
            "resources": resources,
        })
    }

    fn deployment(name: &str) -> Json {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}})
    }

    #[test]
    fn dependencies_come_from_references_and_order_follows_them() {
        let g = build(&spec(json!([
            {"id": "service", "template": {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "${deployment.metadata.name}"}}},
            {"id": "deployment", "template": deployment("${schema.spec.name}")},
            {"id": "config", "template": {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cfg"}}},
        ])))
        .unwrap();
        assert_eq!(g.order(), ["deployment", "service", "config"]);
        assert_eq!(g.node("service").unwrap().dependencies, ["deployment"]);
        assert_eq!(g.waves()["service"], 2);
        assert_eq!(g.waves()["config"], 1);
    }

    #[test]
    fn a_cycle_is_refused_naming_it_at_its_first_resource() {
        let e = build(&spec(json!([
            {"id": "a", "template": deployment("${b.metadata.name}")},
            {"id": "b", "template": deployment("${a.metadata.name}")},
        ])))
        .unwrap_err();
        assert_eq!(e.message, "graph contains a cycle: a -> b -> a");
        assert_eq!(e.field, "spec.resources[0]");
    }

    #[test]
    fn a_resource_reading_itself_is_a_cycle() {
        let e = build(&spec(json!([
            {"id": "a", "template": deployment("${a.metadata.uid}")},
        ])))
        .unwrap_err();
        assert_eq!(e.message, "graph contains a cycle: a -> a");
    }

    #[test]
    fn ids_must_be_lower_camel_case_unique_and_not_reserved() {
        let bad = |id: &str| {
            build(&spec(json!([{"id": id, "template": deployment("x")}])))
                .unwrap_err()
                .message
        };
        assert_eq!(bad("schema"), "id schema is a reserved keyword in KRO");
        assert_eq!(
            bad("My-App"),
            "id My-App is not a valid KRO resource id: must be lower camelCase"
        );
        let dup = build(&spec(json!([
            {"id": "a", "template": deployment("x")},
            {"id": "a", "template": deployment("y")},
        ])))
        .unwrap_err();
        assert_eq!(dup.field, "spec.resources[1].id");
    }

    #[test]
    fn template_and_external_ref_are_exclusive() {
        let e = build(&spec(json!([{"id": "a"}]))).unwrap_err();
        assert_eq!(
            e.message,
            "exactly one of template or externalRef must be provided"
        );
    }

    #[test]
    fn an_unknown_root_is_an_undeclared_reference_at_its_field() {
        let e = build(&spec(json!([
            {"id": "a", "template": deployment("${databse.metadata.name}")},
        ])))
        .unwrap_err();
        assert_eq!(e.field, "spec.resources[0].template.metadata.name");
        assert!(e.message.ends_with("undeclared reference to 'databse'"));
    }

    #[test]
    fn a_function_outside_the_subset_is_refused_naming_it() {
        let e = build(&spec(json!([
            {"id": "a", "template": deployment("${random.seededString(8, schema.spec.name)}")},
        ])))
        .unwrap_err();
        assert!(e.message.contains("not supported"), "{}", e.message);
        assert!(e
            .message
            .starts_with("spec.resources[0].template.metadata.name"));
    }

    #[test]
    fn ready_when_may_read_only_its_own_resource() {
        let e = build(&spec(json!([
            {"id": "a", "template": deployment("x")},
            {"id": "b", "template": deployment("y"), "readyWhen": ["${a.status.ready}"]},
        ])))
        .unwrap_err();
        assert_eq!(e.field, "spec.resources[1].readyWhen[0]");
    }

    #[test]
    fn for_each_dimensions_bind_variables_the_template_may_read() {
        let g = build(&spec(json!([
            {"id": "workers", "forEach": [{"region": "${schema.spec.regions}"}],
             "template": deployment("${schema.spec.name}-${region}"),
             "readyWhen": ["${each.status.readyReplicas == 1}"]},
        ])))
        .unwrap();
        assert!(g.node("workers").unwrap().is_collection());
    }

    #[test]
    fn status_expressions_may_read_only_schema_and_resources() {
        let mut s = spec(json!([{"id": "a", "template": deployment("x")}]));
        s["schema"]["status"] = json!({"ready": "${b.status.ready}"});
        let e = build(&s).unwrap_err();
        assert_eq!(e.field, "spec.schema.status.ready");
    }
}
