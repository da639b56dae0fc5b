//! Resolving `TYPE`, `TYPE NAME…`, `TYPE/NAME…` and `TYPE1,TYPE2` arguments the way kubectl's
//! resource builder does, and listing objects with label and field selectors.

use std::rc::Rc;

use super::args::Args;
use super::errors::CmdError;
use super::util::error;
use crate::sim::api::apiserver::ApiServer;
use crate::sim::api::openapi;
use crate::sim::api::types::{CustomKind, Kind, LabelSelector, Object, ObjectKey};
use crate::sim::kubectl::CommandOutput;
use crate::sim::scenario::json_path;
use crate::sim::world::Sim;

/// What the resource arguments ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// Every object of these kinds (subject to selectors).
    Types(Vec<Kind>),
    /// These objects, in the order given.
    Names(Vec<(Kind, String)>),
}

/// The kinds of the `all` category, in discovery order (the core group first): what
/// `kubectl get all` lists.
pub fn all_category() -> Vec<Kind> {
    openapi::resources()
        .iter()
        .filter(|r| r.categories.iter().any(|c| c == "all"))
        .filter_map(|r| Kind::of_type(&r.api_version(), &r.kind))
        .collect()
}

/// Resolves one resource type word, with kubectl's error for an unknown one: a built-in kind's
/// names, then a served custom kind's plural, singular, kind, short names (`crontabs`, `ct`,
/// `crontabs.stable.example.com`).
pub fn kind_of(api: &ApiServer, word: &str) -> Result<Kind, String> {
    Kind::from_resource_name(word)
        .or_else(|| stored_kind_of(word))
        .or_else(|| custom_kind_of(api, word))
        .ok_or_else(|| unknown_type(word))
}

/// Resolves a word to a built-in kind only (where no cluster is at hand).
pub fn builtin_kind_of(word: &str) -> Result<Kind, String> {
    Kind::from_resource_name(word)
        .or_else(|| stored_kind_of(word))
        .ok_or_else(|| unknown_type(word))
}

/// A built-in kind the playground stores without simulating it, by its plural, singular, kind
/// or short names, alone or with its group (`configmaps`, `cm`, `statefulsets.apps`,
/// `statefulsets.v1.apps`).
fn stored_kind_of(word: &str) -> Option<Kind> {
    let lower = word.to_ascii_lowercase();
    let (name, group) = match lower.split_once('.') {
        Some((n, g)) => (n, Some(g)),
        None => (lower.as_str(), None),
    };
    openapi::stored_kinds()
        .iter()
        .find(|(_, r)| {
            let named = r.plural == name
                || r.kind.to_ascii_lowercase() == name
                || r.short_names.iter().any(|s| s == name);
            let grouped = group.is_none_or(|g| {
                g == r.group || g.split_once('.') == Some((r.version.as_str(), r.group.as_str()))
            });
            named && grouped
        })
        .map(|(k, _)| Kind::Custom(*k))
}

fn custom_kind_of(api: &ApiServer, word: &str) -> Option<Kind> {
    let lower = word.to_ascii_lowercase();
    let (name, group) = match lower.split_once('.') {
        Some((n, g)) => (n, Some(g)),
        None => (lower.as_str(), None),
    };
    api.served_crds()
        .iter()
        .find(|c| {
            let n = &c.spec.names;
            let named = n.plural == name
                || n.singular == name
                || n.kind.to_ascii_lowercase() == name
                || n.short_names.iter().any(|s| s == name);
            // `crontabs.v1.stable.example.com` names a version too.
            let grouped = group.is_none_or(|g| {
                g == c.spec.group
                    || g.split_once('.').is_some_and(|(v, rest)| {
                        rest == c.spec.group && c.served_version(v).is_some()
                    })
            });
            named && grouped
        })
        .and_then(CustomKind::of)
        .map(Kind::Custom)
}

/// The served custom kinds whose CRD lists `word` among its `names.categories`, in CRD name
/// order: kubectl expands a category before it looks for a resource of that name (`all`, and a
/// CRD's own categories such as kro's `kro`).
fn category(api: &ApiServer, word: &str) -> Vec<Kind> {
    api.served_crds()
        .iter()
        .filter(|crd| crd.spec.names.categories.iter().any(|c| c == word))
        .filter_map(CustomKind::of)
        .map(Kind::Custom)
        .collect()
}

/// kubectl's error for a type the server does not serve.
fn unknown_type(word: &str) -> String {
    format!("the server doesn't have a resource type \"{word}\"")
}

/// Parses the positional arguments (`None` when there are none). `allow_all` accepts `all`.
pub fn parse_request(
    api: &ApiServer,
    positional: &[String],
    allow_all: bool,
) -> Result<Option<Request>, String> {
    let Some(first) = positional.first() else {
        return Ok(None);
    };
    if positional.iter().any(|p| p.contains('/')) {
        if !first.contains('/') {
            return Err("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'".into());
        }
        let mut names = Vec::new();
        for p in positional {
            let (k, n) = p.split_once('/').ok_or_else(|| {
                "arguments in resource/name form must have a single resource and name".to_string()
            })?;
            if n.is_empty() || n.contains('/') {
                return Err(
                    "arguments in resource/name form must have a single resource and name".into(),
                );
            }
            names.push((kind_of(api, k)?, n.to_string()));
        }
        return Ok(Some(Request::Names(names)));
    }
    let mut kinds = Vec::new();
    for part in first.split(',').filter(|p| !p.is_empty()) {
        let in_category = category(api, part);
        if part == "all" && allow_all || !in_category.is_empty() {
            let builtin = if part == "all" {
                all_category()
            } else {
                Vec::new()
            };
            for k in builtin.into_iter().chain(in_category) {
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
        } else {
            let k = kind_of(api, part)?;
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    if kinds.is_empty() {
        return Err(format!(
            "the server doesn't have a resource type \"{first}\""
        ));
    }
    if positional.len() == 1 {
        return Ok(Some(Request::Types(kinds)));
    }
    let mut names = Vec::new();
    for k in &kinds {
        for n in &positional[1..] {
            names.push((*k, n.clone()));
        }
    }
    Ok(Some(Request::Names(names)))
}

/// One `--field-selector` requirement.
#[derive(Clone, Debug, PartialEq)]
struct FieldReq {
    path: String,
    /// The path, when it is one the typed object holds (named once, not per object listed).
    typed: Option<TypedField>,
    value: String,
    equal: bool,
}

/// The string fields selected most, read where they are stored.
#[derive(Clone, Copy, Debug, PartialEq)]
enum TypedField {
    Name,
    Namespace,
    /// A pod's; other kinds' read from their JSON form.
    PodNodeName,
    /// A pod's; other kinds' read from their JSON form.
    PodPhase,
}

impl TypedField {
    fn of(path: &str) -> Option<TypedField> {
        match path {
            "metadata.name" => Some(TypedField::Name),
            "metadata.namespace" => Some(TypedField::Namespace),
            "spec.nodeName" => Some(TypedField::PodNodeName),
            "status.phase" => Some(TypedField::PodPhase),
            _ => None,
        }
    }
}

/// `-l` and `--field-selector`, applied to listed objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub labels: Option<LabelSelector>,
    fields: Vec<FieldReq>,
}

impl Filter {
    /// Reads `-l/--selector` and `--field-selector`.
    pub fn from_args(args: &Args) -> Result<Filter, String> {
        let labels = args.get("selector").map(LabelSelector::parse).transpose()?;
        let mut fields = Vec::new();
        if let Some(fs) = args.get("field-selector") {
            for part in fs.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let (path, value, equal) = if let Some((p, v)) = part.split_once("!=") {
                    (p, v, false)
                } else if let Some((p, v)) = part.split_once("==") {
                    (p, v, true)
                } else if let Some((p, v)) = part.split_once('=') {
                    (p, v, true)
                } else {
                    return Err(format!(
                        "invalid selector: '{fs}'; can't understand '{part}'"
                    ));
                };
                fields.push(FieldReq {
                    path: path.trim().to_string(),
                    typed: TypedField::of(path.trim()),
                    value: value.trim().to_string(),
                    equal,
                });
            }
        }
        Ok(Filter { labels, fields })
    }

    /// Whether an object passes both selectors.
    pub fn matches(&self, o: &Object) -> bool {
        if let Some(sel) = &self.labels {
            if !sel.matches(&o.meta().labels) {
                return false;
            }
        }
        if self.fields.is_empty() {
            return true;
        }
        // The fields selected most often are read where they are stored; any other path reads
        // the object's JSON form, once per object and only when needed (a `kubectl get pods
        // --field-selector=spec.nodeName=` over 10,000 pods serialised all of them: 0.1 s).
        let mut doc = None;
        self.fields.iter().all(|f| {
            let same = match f.typed.and_then(|t| typed_field(o, t)) {
                Some(v) => v == f.value,
                None => json_field(doc.get_or_insert_with(|| o.to_json()), &f.path) == f.value,
            };
            same == f.equal
        })
    }

    /// The node a `spec.nodeName=<node>` requirement selects pods on ("" for the unscheduled),
    /// which the API server answers from its index of pods by node.
    fn pod_node(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.equal && f.typed == Some(TypedField::PodNodeName))
            .map(|f| f.value.as_str())
    }

    /// True when neither selector was given.
    pub fn is_empty(&self) -> bool {
        self.labels.is_none() && self.fields.is_empty()
    }
}

/// A field selector's value read from an object's JSON form (absent reads as empty).
fn json_field(doc: &serde_json::Value, path: &str) -> String {
    json_path(doc, &format!(".{path}")).map_or(String::new(), |v| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// A field selector's value for the string fields it is given most, read from the typed object
/// (None: read it from the JSON form). Each reads as its JSON form would: an empty string is
/// what an omitted field reads as.
fn typed_field(o: &Object, field: TypedField) -> Option<&str> {
    let meta = o.meta();
    match (field, o.as_pod()) {
        (TypedField::Name, _) => Some(&meta.name),
        (TypedField::Namespace, _) => Some(&meta.namespace),
        (TypedField::PodNodeName, Some(p)) => Some(&p.spec.node_name),
        (TypedField::PodPhase, Some(p)) => Some(&p.status.phase),
        _ => None,
    }
}

/// Objects of `kind` in `ns` (or every namespace), in the API server's list order.
pub fn list(sim: &Sim, kind: Kind, ns: &str, all_ns: bool, filter: &Filter) -> Vec<Rc<Object>> {
    let api = sim.api();
    let mut listed = Vec::new();
    let mut keep = |o: &Rc<Object>| {
        if (all_ns || !kind.namespaced() || o.meta().namespace == ns) && filter.matches(o) {
            listed.push(o.clone());
        }
    };
    match filter.pod_node().filter(|_| kind == Kind::Pod) {
        Some(node) => api.list_pods_on_node(node).for_each(&mut keep),
        None => api.list(kind).for_each(&mut keep),
    }
    listed
}

/// The keys a mutating command (`delete`, `label`, `scale`, …) acts on: named objects (missing
/// ones reported with kubectl's NotFound line), or with `-l`/`--all` every matching object.
pub fn targets(
    sim: &Sim,
    args: &Args,
    request: &Request,
    select_all: bool,
) -> Result<(Vec<ObjectKey>, Vec<String>), String> {
    let ns = args.namespace();
    let all_ns = args.bool("all-namespaces");
    let filter = Filter::from_args(args)?;
    let mut keys = Vec::new();
    let mut missing = Vec::new();
    match request {
        Request::Names(names) => {
            if !filter.is_empty() {
                return Err("name cannot be provided when a selector is specified".into());
            }
            for (kind, name) in names {
                let key = ObjectKey::new(*kind, &ns, name);
                if sim.api().get(&key).is_some() {
                    keys.push(key);
                } else {
                    missing.push(format!(
                        "Error from server (NotFound): {} \"{name}\" not found",
                        kind.resource()
                    ));
                }
            }
        }
        Request::Types(kinds) => {
            if filter.is_empty() && !select_all {
                return Err("resource(s) were provided, but no name was specified".into());
            }
            for kind in kinds {
                keys.extend(
                    list(sim, *kind, &ns, all_ns, &filter)
                        .iter()
                        .map(|o| o.key()),
                );
            }
        }
    }
    Ok((keys, missing))
}

/// [`parse_request`] for a command that needs resource arguments: `none` is the command's own
/// error when there are none. Errors come back as the output that ends the command.
pub fn request_or(api: &ApiServer, words: &[String], none: &str) -> Result<Request, CommandOutput> {
    match parse_request(api, words, false) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(error(none)),
        Err(e) => Err(error(e)),
    }
}

/// [`targets`] for a command that gathers its errors: the keys (every object of the types with
/// `--all`, for commands that have the flag), and one NotFound error per named object that does
/// not exist, as kubectl's `ContinueOnError` visitor gathers them.
pub fn resolve(
    sim: &Sim,
    args: &Args,
    request: &Request,
) -> Result<(Vec<ObjectKey>, Vec<CmdError>), CommandOutput> {
    let (keys, missing) = targets(sim, args, request, args.bool("all")).map_err(error)?;
    Ok((keys, missing.into_iter().map(CmdError::Line).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(s: &str) -> Result<Option<Request>, String> {
        let words: Vec<String> = s.split_whitespace().map(String::from).collect();
        parse_request(&ApiServer::new(1), &words, true)
    }

    #[test]
    fn resource_arguments_resolve_like_kubectls_builder() {
        assert_eq!(req("").unwrap(), None);
        assert_eq!(
            req("deploy").unwrap(),
            Some(Request::Types(vec![Kind::Deployment]))
        );
        assert_eq!(
            req("pods,svc").unwrap(),
            Some(Request::Types(vec![Kind::Pod, Kind::Service]))
        );
        let names: Vec<&str> = all_category().iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "Pod",
                "ReplicationController",
                "Service",
                "DaemonSet",
                "Deployment",
                "ReplicaSet",
                "StatefulSet",
                "HorizontalPodAutoscaler",
                "CronJob",
                "Job"
            ]
        );
        assert_eq!(req("all").unwrap(), Some(Request::Types(all_category())));
        assert_eq!(
            req("deployments.apps web api").unwrap(),
            Some(Request::Names(vec![
                (Kind::Deployment, "web".into()),
                (Kind::Deployment, "api".into())
            ]))
        );
        assert_eq!(
            req("deploy/web po/x").unwrap(),
            Some(Request::Names(vec![
                (Kind::Deployment, "web".into()),
                (Kind::Pod, "x".into())
            ]))
        );
        assert_eq!(
            req("deploymentz").unwrap_err(),
            "the server doesn't have a resource type \"deploymentz\""
        );
        assert!(req("pods deploy/web")
            .unwrap_err()
            .starts_with("there is no need to specify a resource type"));
    }

    #[test]
    fn a_field_read_from_the_typed_object_reads_as_its_json_form_would() {
        let mut bound = crate::sim::api::types::Pod::default();
        bound.metadata.name = "web-1".into();
        bound.metadata.namespace = "default".into();
        bound.spec_mut().node_name = "node-1".into();
        bound.status.phase = "Running".into();
        let mut pending = crate::sim::api::types::Pod::default();
        pending.metadata.name = "web-2".into();
        pending.metadata.namespace = "team-a".into();
        let node = Object::from(crate::sim::api::types::Node {
            metadata: crate::sim::api::types::ObjectMeta {
                name: "node-1".into(),
                ..Default::default()
            },
            ..Default::default()
        });
        let paths = [
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "status.phase",
        ];
        for o in [Object::from(bound), Object::from(pending), node] {
            let doc = o.to_json();
            for path in paths {
                let field = TypedField::of(path).expect("a typed path");
                let Some(typed) = typed_field(&o, field) else {
                    continue;
                };
                assert_eq!(typed, json_field(&doc, path), "{path} of {}", o.meta().name);
            }
        }
    }
}
