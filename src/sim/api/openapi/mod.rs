//! The built-in kinds of a v1.34 API server and the Go types their JSON decodes into, read from
//! the upstream OpenAPI definitions (compacted by `scripts/gen-openapi.py` into `v1.34.json`), and
//! the check that refuses what Go's JSON decoder would refuse, in its words.
//!
//! Every built-in resource `kubectl api-resources` lists is here, simulated or not. The check is
//! what the API server's strict decoding does before any validation: a value of the wrong JSON
//! type (`env: [{name: PORT, value: 8080}]`) is refused with `json: cannot unmarshal number into
//! Go struct field EnvVar.spec.template.spec.containers.env.value of type string`, and a field the
//! Go struct does not have is an unknown field. Validation of values (names, enums, ranges) is the
//! kind's own: for the kinds the playground only stores, it is not done (ARCHITECTURE.md says so).

pub mod docs;

use std::sync::OnceLock;

use serde_json::Value as Json;

use super::apiextensions::CustomKind;
use super::quantity::ERR_FORMAT_WRONG;
use super::types::{Kind, Time};

/// The compacted definitions, made by `scripts/gen-openapi.py` (`make openapi`).
const DATA: &str = include_str!("v1.34.json");

/// A built-in resource: its names as `kubectl api-resources` prints them, and its Go type.
#[derive(Debug)]
pub struct Resource {
    /// API group; empty for the core group.
    pub group: String,
    /// The version served (the storage version: one per resource here).
    pub version: String,
    /// `ConfigMap`.
    pub kind: String,
    /// `configmaps`.
    pub plural: String,
    /// `cm`.
    pub short_names: Vec<String>,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// `all` for the kinds `kubectl get all` lists.
    pub categories: Vec<String>,
    root: usize,
}

impl Resource {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether the resource's Go type has a top-level `field` (`spec`, `status`).
    pub fn has_field(&self, field: &str) -> bool {
        let table = table();
        matches!(&table.types[self.root], Type::Struct { fields, .. } if fields.iter().any(|f| f.name == field))
    }
}

#[derive(Debug)]
struct Field {
    name: String,
    ty: usize,
    /// `x-kubernetes-patch-strategy` (`merge`, `retainKeys`, `merge,retainKeys`), if any.
    strategy: Option<String>,
    /// `x-kubernetes-patch-merge-key`, if any.
    merge_key: Option<String>,
}

#[derive(Debug)]
enum Type {
    /// A Go struct: `v1.EnvVar` and its JSON fields.
    Struct {
        go: String,
        fields: Vec<Field>,
    },
    /// `map[string]T`.
    Map(usize),
    /// `[]T`.
    List(usize),
    Prim(Prim),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prim {
    String,
    Int32,
    Int64,
    Float64,
    Bool,
    Bytes,
    Time,
    MicroTime,
    IntOrString,
    Quantity,
    Any,
}

impl Prim {
    fn parse(s: &str) -> Prim {
        match s {
            "string" => Prim::String,
            "int32" => Prim::Int32,
            "int64" => Prim::Int64,
            "float64" => Prim::Float64,
            "bool" => Prim::Bool,
            "[]byte" => Prim::Bytes,
            "v1.Time" => Prim::Time,
            "v1.MicroTime" => Prim::MicroTime,
            "intstr.IntOrString" => Prim::IntOrString,
            "resource.Quantity" => Prim::Quantity,
            _ => Prim::Any,
        }
    }

    /// Go's name of the type, as `reflect` prints it in an `UnmarshalTypeError`.
    fn go(self) -> &'static str {
        match self {
            Prim::String => "string",
            Prim::Int32 => "int32",
            Prim::Int64 => "int64",
            Prim::Float64 => "float64",
            Prim::Bool => "bool",
            Prim::Bytes => "[]uint8",
            Prim::Time => "v1.Time",
            Prim::MicroTime => "v1.MicroTime",
            Prim::IntOrString => "intstr.IntOrString",
            Prim::Quantity => "resource.Quantity",
            Prim::Any => "interface {}",
        }
    }
}

struct Table {
    resources: Vec<Resource>,
    types: Vec<Type>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| parse(DATA))
}

fn parse(data: &str) -> Table {
    // The data is generated and committed; a malformed file is a build defect that every test
    // would show, so reading it may assume its shape.
    let json: Json = serde_json::from_str(data).unwrap_or_default();
    let strings = |v: &Json| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(str::to_string)
            .collect()
    };
    let text = |v: &Json| v.as_str().unwrap_or_default().to_string();
    let index = |v: &Json| usize::try_from(v.as_u64().unwrap_or_default()).unwrap_or_default();
    let resources = json["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| Resource {
            group: text(&r[0]),
            version: text(&r[1]),
            kind: text(&r[2]),
            plural: text(&r[3]),
            short_names: strings(&r[4]),
            namespaced: r[5].as_bool().unwrap_or(true),
            categories: strings(&r[6]),
            root: index(&r[7]),
        })
        .collect();
    let types = json["types"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| match t {
            Json::String(s) => Type::Prim(Prim::parse(s)),
            Json::Object(o) if o.contains_key("m") => Type::Map(index(&o["m"])),
            Json::Object(o) if o.contains_key("l") => Type::List(index(&o["l"])),
            Json::Object(o) => Type::Struct {
                go: text(&o["s"]),
                fields: o["f"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|f| {
                        let opt =
                            |v: &Json| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
                        Field {
                            name: text(&f[0]),
                            ty: index(&f[1]),
                            strategy: opt(&f[2]),
                            merge_key: opt(&f[3]),
                        }
                    })
                    .collect(),
            },
            _ => Type::Prim(Prim::Any),
        })
        .collect();
    Table { resources, types }
}

/// Every built-in resource of a v1.34 cluster that stores objects, in `kubectl api-resources`
/// order (core group first, then by group).
pub fn resources() -> &'static [Resource] {
    &table().resources
}

/// The resource of `kind` at `api_version` (`apps/v1`, `v1`).
pub fn resource(api_version: &str, kind: &str) -> Option<&'static Resource> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    resources()
        .iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)
}

/// The built-in resources the playground stores and serves without simulating them: every one
/// but the simulated kinds (`Kind::ALL`) and `events.k8s.io` Events (the same objects as the core
/// Events upstream; here `kubectl get events` reads the core ones). Each is interned once, as a
/// [`CustomKind`] marked built-in, so that storage, watches, the garbage collector, namespace
/// deletion and kubectl treat it like any served kind.
pub fn stored_kinds() -> &'static [(CustomKind, &'static Resource)] {
    static KINDS: OnceLock<Vec<(CustomKind, &'static Resource)>> = OnceLock::new();
    KINDS.get_or_init(|| {
        resources()
            .iter()
            .filter(|r| {
                let simulated = Kind::ALL
                    .into_iter()
                    .any(|k| k.as_str() == r.kind && k.group() == r.group);
                !simulated && r.group != "events.k8s.io"
            })
            .filter_map(|r| {
                CustomKind::intern_with(
                    &r.group,
                    &r.kind,
                    &r.plural,
                    r.namespaced,
                    &r.version,
                    true,
                )
                .ok()
                .map(|k| (k, r))
            })
            .collect()
    })
}

/// The stored built-in kind of `group` named `kind`.
/// The controller that acts on a stored built-in kind, if the playground simulates one (the
/// rest are stored, listed and watched, and only the garbage collector reads them).
pub fn controller_of(kind: CustomKind) -> Option<&'static str> {
    let n = kind.names();
    if !kind.is_builtin() {
        return None;
    }
    match (n.group, n.kind) {
        ("apps", "StatefulSet" | "ControllerRevision") => Some("statefulset-controller"),
        ("batch", "Job") => Some("job-controller"),
        ("", "PersistentVolumeClaim" | "PersistentVolume") | ("storage.k8s.io", "StorageClass") => {
            Some("persistentvolume-controller")
        }
        _ => None,
    }
}

pub fn stored_kind(group: &str, kind: &str) -> Option<CustomKind> {
    stored_kinds()
        .iter()
        .find(|(k, _)| k.names().group == group && k.names().kind == kind)
        .map(|(k, _)| *k)
}

/// The resource a stored built-in kind is served from.
pub fn resource_of(kind: CustomKind) -> Option<&'static Resource> {
    stored_kinds()
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, r)| *r)
}

/// A place in a resource's Go types, for walking a patch alongside the object it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeRef(usize);

/// How a list field is patched by a strategic merge patch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatchMeta {
    /// `x-kubernetes-patch-strategy` contains `merge`: items merge (by `merge_key` when set,
    /// as a set of values otherwise) instead of the list being replaced.
    pub merge: bool,
    /// `x-kubernetes-patch-merge-key`.
    pub merge_key: Option<String>,
}

impl Resource {
    /// The resource's own Go type.
    pub fn root(&self) -> TypeRef {
        TypeRef(self.root)
    }
}

impl TypeRef {
    /// A struct field's type and patch strategy; for a map, its values' type.
    pub fn field(self, name: &str) -> Option<(TypeRef, PatchMeta)> {
        match &table().types[self.0] {
            Type::Struct { fields, .. } => fields.iter().find(|f| f.name == name).map(|f| {
                let meta = PatchMeta {
                    merge: f
                        .strategy
                        .as_deref()
                        .is_some_and(|s| s.split(',').any(|p| p == "merge")),
                    merge_key: f.merge_key.clone(),
                };
                (TypeRef(f.ty), meta)
            }),
            Type::Map(v) => Some((TypeRef(*v), PatchMeta::default())),
            _ => None,
        }
    }

    /// A list's item type.
    pub fn item(self) -> Option<TypeRef> {
        match &table().types[self.0] {
            Type::List(v) => Some(TypeRef(*v)),
            _ => None,
        }
    }

    /// A list's items or a map's values: what `kubectl explain` looks inside.
    pub fn element(self) -> Option<TypeRef> {
        match &table().types[self.0] {
            Type::List(v) | Type::Map(v) => Some(TypeRef(*v)),
            _ => None,
        }
    }

    /// A struct's JSON fields in name order; none for any other type.
    pub fn fields(self) -> Vec<(&'static str, TypeRef)> {
        match &table().types[self.0] {
            Type::Struct { fields, .. } => fields
                .iter()
                .map(|f| (f.name.as_str(), TypeRef(f.ty)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether this is a Go struct (a named type with fields).
    pub fn is_struct(self) -> bool {
        matches!(&table().types[self.0], Type::Struct { .. })
    }

    /// The type as `kubectl explain` names it (its template's `typeGuess`): `[]Container`,
    /// `map[string]string`, `ObjectMeta`, `integer`, and the names of types the OpenAPI v3
    /// document gives no single type (`Quantity`, `IntOrString`).
    pub fn type_guess(self) -> String {
        match &table().types[self.0] {
            Type::Struct { go, .. } => go.rsplit('.').next().unwrap_or(go).to_string(),
            Type::List(v) => format!("[]{}", TypeRef(*v).type_guess()),
            Type::Map(v) => format!("map[string]{}", TypeRef(*v).type_guess()),
            Type::Prim(p) => match p {
                Prim::String | Prim::Bytes | Prim::Time | Prim::MicroTime => "string",
                Prim::Int32 | Prim::Int64 => "integer",
                Prim::Float64 => "number",
                Prim::Bool => "boolean",
                Prim::IntOrString => "IntOrString",
                Prim::Quantity => "Quantity",
                Prim::Any => "Object",
            }
            .to_string(),
        }
    }
}

/// Why Go's JSON decoder refused a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoDecodeError {
    /// Where, as a Kubernetes field path with indices (`spec.containers[0].env[0].value`).
    pub path: String,
    /// The decoder's words (`json: cannot unmarshal number into Go struct field …`).
    pub message: String,
}

/// Decodes `value` as Go would into `resource`'s type: the first type error, or the fields the
/// Go structs do not have (strict decoding's unknown fields, with indices, in document order).
pub fn check(resource: &Resource, value: &Json) -> Result<Vec<String>, GoDecodeError> {
    let mut walk = Walk {
        types: &table().types,
        unknown: Vec::new(),
    };
    let at = At {
        path: String::new(),
        go_path: String::new(),
        parent: "",
    };
    walk.value(resource.root, value, &at)?;
    Ok(walk.unknown)
}

/// Where the walk is: the Kubernetes path, Go's error path (struct fields only, no indices) and
/// the innermost Go struct.
struct At<'a> {
    path: String,
    go_path: String,
    parent: &'a str,
}

struct Walk<'t> {
    types: &'t [Type],
    unknown: Vec<String>,
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

impl<'t> Walk<'t> {
    fn go_type(&self, ty: usize) -> String {
        match &self.types[ty] {
            Type::Struct { go, .. } => go.clone(),
            Type::Map(v) => format!("map[string]{}", self.go_type(*v)),
            Type::List(v) => format!("[]{}", self.go_type(*v)),
            Type::Prim(p) => p.go().to_string(),
        }
    }

    fn mismatch(at: &At, json: &str, go_type: &str) -> GoDecodeError {
        let message = if at.go_path.is_empty() {
            format!("json: cannot unmarshal {json} into Go value of type {go_type}")
        } else {
            format!(
                "json: cannot unmarshal {json} into Go struct field {}.{} of type {go_type}",
                at.parent, at.go_path
            )
        };
        GoDecodeError {
            path: at.path.clone(),
            message,
        }
    }

    fn value(&mut self, ty: usize, v: &Json, at: &At) -> Result<(), GoDecodeError> {
        // `null` leaves any Go value at its zero value.
        if v.is_null() {
            return Ok(());
        }
        let types = self.types;
        match &types[ty] {
            Type::Struct { go, fields } => {
                let Json::Object(map) = v else {
                    return Err(Self::mismatch(at, json_type(v), go));
                };
                let parent = go.rsplit('.').next().unwrap_or(go);
                for (key, child) in map {
                    let path = join(&at.path, key);
                    let Some(field) = fields.iter().find(|f| f.name == *key) else {
                        self.unknown.push(path);
                        continue;
                    };
                    let next = At {
                        path,
                        go_path: join(&at.go_path, key),
                        parent,
                    };
                    self.value(field.ty, child, &next)?;
                }
                Ok(())
            }
            Type::Map(item) => {
                let Json::Object(map) = v else {
                    return Err(Self::mismatch(at, json_type(v), &self.go_type(ty)));
                };
                for (key, child) in map {
                    let next = At {
                        path: format!("{}[{key}]", at.path),
                        go_path: at.go_path.clone(),
                        parent: at.parent,
                    };
                    self.value(*item, child, &next)?;
                }
                Ok(())
            }
            Type::List(item) => {
                let Json::Array(items) = v else {
                    return Err(Self::mismatch(at, json_type(v), &self.go_type(ty)));
                };
                for (i, child) in items.iter().enumerate() {
                    let next = At {
                        path: format!("{}[{i}]", at.path),
                        go_path: at.go_path.clone(),
                        parent: at.parent,
                    };
                    self.value(*item, child, &next)?;
                }
                Ok(())
            }
            Type::Prim(p) => prim(*p, v, at),
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn prim(p: Prim, v: &Json, at: &At) -> Result<(), GoDecodeError> {
    let mismatch = |json: &str, go: &str| Err(Walk::mismatch(at, json, go));
    let bare = |message: String| {
        Err(GoDecodeError {
            path: at.path.clone(),
            message,
        })
    };
    match (p, v) {
        (Prim::Any, _)
        | (Prim::String, Json::String(_))
        | (Prim::Bool, Json::Bool(_))
        | (Prim::Float64, Json::Number(_))
        | (Prim::IntOrString, Json::String(_))
        | (Prim::Quantity, Json::String(_) | Json::Number(_)) => Ok(()),
        (Prim::Int32 | Prim::Int64, Json::Number(n)) => {
            let fits = match p {
                Prim::Int32 => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
                _ => n.as_i64().is_some(),
            };
            if fits {
                Ok(())
            } else {
                mismatch(&format!("number {n}"), p.go())
            }
        }
        // `IntOrString.UnmarshalJSON` decodes anything but a string into its int32, so the error
        // names int32.
        (Prim::IntOrString, Json::Number(n)) => {
            if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) {
                Ok(())
            } else {
                mismatch(&format!("number {n}"), "int32")
            }
        }
        (Prim::IntOrString, _) => mismatch(json_type(v), "int32"),
        // `Quantity.UnmarshalJSON` parses whatever is not a string as a quantity's text.
        (Prim::Quantity, _) => bare(ERR_FORMAT_WRONG.to_string()),
        // `Time.UnmarshalJSON` decodes a string first, then parses it.
        (Prim::Time | Prim::MicroTime, Json::String(s)) => {
            if Time::parse_rfc3339(s).is_some() {
                Ok(())
            } else {
                bare(format!(
                    "parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse"
                ))
            }
        }
        (Prim::Time | Prim::MicroTime, _) => mismatch(json_type(v), "string"),
        (Prim::Bytes, Json::String(s)) => match base64_error(s) {
            None => Ok(()),
            Some(at_byte) => bare(format!("illegal base64 data at input byte {at_byte}")),
        },
        _ => mismatch(json_type(v), p.go()),
    }
}

/// Where Go's `base64.StdEncoding` stops decoding `s` (the byte offset its `CorruptInputError`
/// reports), or `None` when it decodes. Go skips `\r` and `\n`.
fn base64_error(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let is_alpha = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let mut quantum = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\r' || b == b'\n' {
            i += 1;
            continue;
        }
        if b == b'=' {
            // Padding may only complete a quantum of two or three characters, and nothing but
            // padding and newlines may follow it.
            let need = match quantum {
                2 => 2,
                3 => 1,
                _ => return Some(i),
            };
            let mut seen = 0;
            let mut j = i;
            while j < bytes.len() {
                match bytes[j] {
                    b'\r' | b'\n' => {}
                    b'=' if seen < need => seen += 1,
                    _ => return Some(j),
                }
                j += 1;
            }
            return if seen == need {
                None
            } else {
                Some(bytes.len())
            };
        }
        if !is_alpha(b) {
            return Some(i);
        }
        quantum = (quantum + 1) % 4;
        i += 1;
    }
    match quantum {
        0 => None,
        // A partial quantum without padding: Go reports the end of the input.
        _ => Some(bytes.len() - (bytes.len() % 4).min(bytes.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check_kind(api_version: &str, kind: &str, value: Json) -> Result<Vec<String>, String> {
        let r = resource(api_version, kind).expect("a built-in resource");
        check(r, &value).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    #[test]
    fn every_resource_kubectl_api_resources_lists_as_stored_is_in_the_table() {
        let kinds: Vec<_> = resources()
            .iter()
            .map(|r| format!("{}/{}", r.api_version(), r.kind))
            .collect();
        assert_eq!(kinds.len(), 57);
        for k in [
            "v1/ConfigMap",
            "v1/Secret",
            "v1/ServiceAccount",
            "apps/v1/StatefulSet",
            "batch/v1/Job",
            "networking.k8s.io/v1/Ingress",
            "rbac.authorization.k8s.io/v1/Role",
            "autoscaling/v2/HorizontalPodAutoscaler",
            "resource.k8s.io/v1/ResourceClaim",
        ] {
            assert!(kinds.contains(&k.to_string()), "{k} missing");
        }
        let cm = resource("v1", "ConfigMap").unwrap();
        assert_eq!(
            (cm.plural.as_str(), cm.short_names.clone(), cm.namespaced),
            ("configmaps", vec!["cm".to_string()], true)
        );
        assert!(
            !resource("rbac.authorization.k8s.io/v1", "ClusterRole")
                .unwrap()
                .namespaced
        );
    }

    #[test]
    fn a_number_as_an_env_value_is_refused_in_go_decoders_words() {
        let deploy = json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": "nginx", "env": [{"name": "PORT", "value": 8080}]}
            ]}}}
        });
        assert_eq!(
            check_kind("apps/v1", "Deployment", deploy),
            Err("spec.template.spec.containers[0].env[0].value: json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string".into())
        );
    }

    #[test]
    fn unknown_fields_are_listed_with_their_indices() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labelz": {}},
            "data": {"a": "1"}, "datas": {}});
        assert_eq!(
            check_kind("v1", "ConfigMap", cm),
            Ok(vec!["datas".to_string(), "metadata.labelz".to_string()])
        );
        let pod = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "imagePullPolicyy": "x"}]}});
        assert_eq!(
            check_kind("v1", "Pod", pod),
            Ok(vec!["spec.containers[1].imagePullPolicyy".to_string()])
        );
    }

    #[test]
    fn maps_lists_and_structs_name_their_go_types() {
        assert_eq!(
            check_kind("v1", "ConfigMap", json!({"data": ["a"]})),
            Err("data: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string".into())
        );
        assert_eq!(
            check_kind("v1", "ConfigMap", json!({"data": {"port": 80}})),
            Err("data[port]: json: cannot unmarshal number into Go struct field ConfigMap.data of type string".into())
        );
        assert_eq!(
            check_kind("v1", "Pod", json!({"spec": {"containers": {"name": "a"}}})),
            Err("spec.containers: json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container".into())
        );
        assert_eq!(
            check_kind("v1", "Pod", json!({"metadata": "web"})),
            Err("metadata: json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta".into())
        );
        assert_eq!(
            check_kind("v1", "Pod", json!([])),
            Err(": json: cannot unmarshal array into Go value of type v1.Pod".into())
        );
    }

    #[test]
    fn integers_must_be_whole_and_fit_their_go_width() {
        let port = |v: Json| {
            check_kind(
                "v1",
                "Pod",
                json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": v}]}]}}),
            )
        };
        assert_eq!(port(json!(80)), Ok(vec![]));
        assert_eq!(
            port(json!(1.5)),
            Err("spec.containers[0].ports[0].containerPort: json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32".into())
        );
        assert_eq!(
            port(json!(3_000_000_000u64)),
            Err("spec.containers[0].ports[0].containerPort: json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32".into())
        );
        assert_eq!(
            port(json!("80")),
            Err("spec.containers[0].ports[0].containerPort: json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32".into())
        );
    }

    #[test]
    fn int_or_string_quantity_time_and_bytes_decode_as_their_go_unmarshalers_do() {
        let surge = |v: Json| {
            check_kind(
                "apps/v1",
                "Deployment",
                json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": v}}}}),
            )
        };
        assert_eq!(surge(json!("25%")), Ok(vec![]));
        assert_eq!(surge(json!(2)), Ok(vec![]));
        assert_eq!(
            surge(json!(true)),
            Err("spec.strategy.rollingUpdate.maxSurge: json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32".into())
        );
        let cpu = |v: Json| {
            check_kind(
                "v1",
                "Pod",
                json!({"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": v}}}]}}),
            )
        };
        assert_eq!(cpu(json!(1)), Ok(vec![]));
        assert_eq!(cpu(json!("100m")), Ok(vec![]));
        assert_eq!(
            cpu(json!(true)),
            Err(format!(
                "spec.containers[0].resources.requests[cpu]: {ERR_FORMAT_WRONG}"
            ))
        );
        assert_eq!(
            check_kind("v1", "Pod", json!({"metadata": {"creationTimestamp": "yesterday"}})),
            Err("metadata.creationTimestamp: parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse".into())
        );
        let secret = |v: &str| check_kind("v1", "Secret", json!({"data": {"k": v}}));
        assert_eq!(secret("aGVsbG8="), Ok(vec![]));
        assert_eq!(secret("aGVsbG8\n="), Ok(vec![]));
        assert_eq!(
            secret("hello!"),
            Err("data[k]: illegal base64 data at input byte 5".into())
        );
        assert_eq!(
            secret("abc"),
            Err("data[k]: illegal base64 data at input byte 0".into())
        );
    }
}
