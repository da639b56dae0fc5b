//! kro's SimpleSchema, turned into the OpenAPI v3 schema of the CRD kro generates for a
//! ResourceGraphDefinition, as `pkg/simpleschema` does: `name: string | required=true`,
//! `replicas: integer | default=1 minimum=1`, `[]string`, `map[string]integer`, nested objects,
//! `object` (unstructured), and custom types from `spec.schema.types`.
//!
//! Simplified: `float` becomes OpenAPI's `number` (kro lists it among its atomic types; the CRD
//! API only knows `number`), and `required` lists are sorted, as Go map order would otherwise
//! make them arbitrary.

use std::collections::BTreeSet;

use crate::vec_map::VecMap;
use serde_json::{json, Map, Value as Json};

/// A schema kro refuses: where (`spec.schema.spec.replicas`) and why, in kro's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// One `key=value` of a field's markers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub key: &'static str,
    pub value: String,
}

const MARKERS: [&str; 14] = [
    "required",
    "default",
    "description",
    "minimum",
    "maximum",
    "validation",
    "enum",
    "immutable",
    "pattern",
    "uniqueItems",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

/// `ParseMarkers`: `required=true description="The name" enum="a,b"`. Values may be quoted
/// (with `\"` and `\\` escapes) and may hold brackets and braces with spaces inside.
pub fn parse_markers(text: &str) -> Result<Vec<Marker>, String> {
    let mut out = Vec::new();
    let mut key: Option<&'static str> = None;
    let mut buffer = String::new();
    let (mut quoted, mut escaped, mut depth) = (false, false, 0i32);
    for c in text.chars() {
        match c {
            '=' if key.is_none() && !quoted && depth == 0 => {
                let k = buffer.trim();
                if k.is_empty() {
                    return Err("empty marker key".into());
                }
                key =
                    Some(
                        MARKERS.iter().copied().find(|m| *m == k).ok_or_else(|| {
                            format!("invalid marker key {k:?}: unknown marker: {k}")
                        })?,
                    );
                buffer.clear();
            }
            '"' if !escaped => {
                quoted = !quoted;
                buffer.push(c);
            }
            '\\' if quoted && !escaped => {
                escaped = true;
                buffer.push(c);
            }
            '{' | '[' if !quoted => {
                depth += 1;
                buffer.push(c);
            }
            '}' | ']' if !quoted => {
                depth -= 1;
                buffer.push(c);
                if depth < 0 {
                    return Err("unmatched closing bracket/brace".into());
                }
            }
            c if c.is_whitespace() && !quoted && depth == 0 => {
                if let Some(k) = key.take() {
                    out.push(Marker {
                        key: k,
                        value: marker_value(&buffer),
                    });
                    buffer.clear();
                }
            }
            c => {
                escaped = false;
                buffer.push(c);
            }
        }
    }
    match key {
        Some(k) => out.push(Marker {
            key: k,
            value: marker_value(&buffer),
        }),
        None => return Err(format!("marker key '{buffer}' without a value")),
    }
    if quoted {
        return Err("unclosed quote".into());
    }
    if depth > 0 {
        return Err("unclosed bracket/brace".into());
    }
    Ok(out)
}

/// A marker's value: a quoted one unquoted and unescaped, any other trimmed.
fn marker_value(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return raw.trim().to_string();
    };
    let mut out = String::new();
    let mut escaped = false;
    for c in inner.chars() {
        if escaped {
            if c != '"' && c != '\\' {
                out.push('\\');
            }
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// `parseFieldSchema`: a field's type and its markers (`string | default=nginx`).
pub fn parse_field(text: &str) -> Result<(String, Vec<Marker>), String> {
    match text.split_once('|') {
        None => Ok((text.trim().to_string(), Vec::new())),
        Some((ty, markers)) => {
            let ty = ty.trim();
            if ty.is_empty() {
                return Err("empty type".into());
            }
            Ok((ty.to_string(), parse_markers(markers.trim())?))
        }
    }
}

fn atomic(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "string" => "string",
        "integer" => "integer",
        "boolean" => "boolean",
        "number" | "float" => "number",
        _ => return None,
    })
}

/// A custom type: its schema and whether its own markers made it required.
#[derive(Clone, Debug)]
struct Predefined {
    schema: Json,
    required: bool,
}

/// The transformer: the custom types it knows.
struct Transformer {
    types: VecMap<String, Predefined>,
}

/// The OpenAPI schema of a SimpleSchema object (`spec.schema.spec`, or `status` when its
/// fields are typed), with `types` the custom types of `spec.schema.types`. `path` names where
/// the object is, for errors.
pub fn to_openapi(obj: &Json, types: Option<&Json>, path: &str) -> Result<Json, SchemaError> {
    let mut t = Transformer {
        types: VecMap::new(),
    };
    if let Some(types) = types {
        t.load_types(types, "spec.schema.types")?;
    }
    t.object(obj, path)
}

impl Transformer {
    /// `loadPreDefinedTypes`: each type built after those it uses; a cycle is refused.
    fn load_types(&mut self, types: &Json, path: &str) -> Result<(), SchemaError> {
        let Json::Object(defs) = types else {
            return Err(SchemaError {
                path: path.into(),
                message: "types must be an object of type definitions".into(),
            });
        };
        let mut done = BTreeSet::new();
        for name in defs.keys() {
            self.load_type(name, defs, &mut done, &mut Vec::new(), path)?;
        }
        Ok(())
    }

    fn load_type(
        &mut self,
        name: &str,
        defs: &Map<String, Json>,
        done: &mut BTreeSet<String>,
        visiting: &mut Vec<String>,
        path: &str,
    ) -> Result<(), SchemaError> {
        if done.contains(name) {
            return Ok(());
        }
        let at = format!("{path}.{name}");
        if visiting.iter().any(|v| v == name) {
            visiting.push(name.to_string());
            return Err(SchemaError {
                path: at,
                message: format!(
                    "cyclic dependency detected loading type {name}: {}",
                    visiting.join(" -> ")
                ),
            });
        }
        visiting.push(name.to_string());
        let def = &defs[name];
        let mut uses = BTreeSet::new();
        dependencies(def, &mut uses).map_err(|message| SchemaError {
            path: at.clone(),
            message: format!("failed to extract dependencies for type {name}: {message}"),
        })?;
        for u in &uses {
            if defs.contains_key(u) {
                self.load_type(u, defs, done, visiting, path)?;
            }
        }
        visiting.pop();
        let mut holder = json!({"type": "object", "properties": {}});
        let schema = self.field(name, def, &mut holder, &at)?;
        let required = holder
            .get("required")
            .and_then(Json::as_array)
            .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(name)));
        self.types
            .insert(name.to_string(), Predefined { schema, required });
        done.insert(name.to_string());
        Ok(())
    }

    /// `buildOpenAPISchema`: an object of fields; one whose fields have defaults defaults to `{}`
    /// so that they apply when it is left out.
    fn object(&self, obj: &Json, path: &str) -> Result<Json, SchemaError> {
        let Json::Object(fields) = obj else {
            return Err(SchemaError {
                path: path.into(),
                message: format!("unknown type in schema: {obj}"),
            });
        };
        let mut schema = json!({"type": "object", "properties": {}});
        let mut defaulted = false;
        for (key, value) in fields {
            let field = self.field(key, value, &mut schema, &format!("{path}.{key}"))?;
            defaulted |= field.get("default").is_some();
            schema["properties"][key] = field;
        }
        if defaulted {
            schema["default"] = json!({});
        }
        if let Some(Json::Array(required)) = schema.get_mut("required") {
            use crate::sort::StableSort;
            required.stable_sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            required.dedup();
        }
        Ok(schema)
    }

    /// `transformField`: a nested object, or a `type | markers` string.
    fn field(
        &self,
        key: &str,
        value: &Json,
        parent: &mut Json,
        path: &str,
    ) -> Result<Json, SchemaError> {
        let err = |message: String| SchemaError {
            path: path.into(),
            message,
        };
        match value {
            Json::Object(_) => self.object(value, path),
            Json::String(text) => {
                let (ty, markers) = parse_field(text)
                    .map_err(|e| err(format!("failed to parse field schema for {key}: {e}")))?;
                let mut schema = self.type_schema(&ty, parent, key).map_err(err)?;
                for m in &markers {
                    apply_marker(&mut schema, m, key, parent)
                        .map_err(|e| err(format!("failed to apply markers: {e}")))?;
                }
                Ok(schema)
            }
            other => Err(err(format!(
                "unknown type in schema: key: {key}, value: {other}"
            ))),
        }
    }

    /// The schema of a type name: atomic, `object`, `[]T`, `map[string]T`, or a custom type.
    fn type_schema(&self, ty: &str, parent: &mut Json, key: &str) -> Result<Json, String> {
        if let Some(a) = atomic(ty) {
            return Ok(json!({"type": a}));
        }
        if ty == "object" {
            return Ok(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
        }
        if let Some(element) = ty.strip_prefix("[]") {
            if element.is_empty() {
                return Err(format!(
                    "failed to parse slice type for {key}: empty slice type"
                ));
            }
            let mut holder = json!({});
            let items = self.type_schema(element, &mut holder, key)?;
            return Ok(json!({"type": "array", "items": items}));
        }
        if ty.starts_with("map") {
            let (k, v) = parse_map_type(ty)
                .map_err(|e| format!("failed to parse map type for {key}: {e}"))?;
            if k != "string" {
                return Err(format!(
                    "unsupported key type for maps, only strings are supported key types: {k}"
                ));
            }
            let mut holder = json!({});
            let values = self.type_schema(&v, &mut holder, key)?;
            return Ok(json!({"type": "object", "additionalProperties": values}));
        }
        let custom = self
            .types
            .get(ty)
            .ok_or_else(|| format!("unknown type: {ty}"))?;
        if custom.required {
            push_required(parent, key);
        }
        Ok(custom.schema.clone())
    }
}

/// `parseMapType`: `map[string]integer` → (`string`, `integer`), brackets nesting.
fn parse_map_type(ty: &str) -> Result<(String, String), String> {
    let rest = ty
        .strip_prefix("map[")
        .ok_or_else(|| format!("invalid map type: {ty}"))?;
    let mut depth = 1;
    let end = rest
        .char_indices()
        .find(|(_, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            depth == 0
        })
        .map(|(i, _)| i)
        .ok_or_else(|| format!("invalid map key type: {rest}"))?;
    let (k, v) = (&rest[..end], &rest[end + 1..]);
    if k.is_empty() {
        return Err("empty map key type".into());
    }
    if v.is_empty() {
        return Err("empty map value type".into());
    }
    Ok((k.to_string(), v.to_string()))
}

/// The custom types a definition names (`extractDependenciesFromMap`).
fn dependencies(def: &Json, out: &mut BTreeSet<String>) -> Result<(), String> {
    match def {
        Json::Object(fields) => fields.values().try_for_each(|v| dependencies(v, out)),
        Json::String(text) => {
            let (ty, _) = parse_field(text)?;
            let mut ty = ty.as_str();
            loop {
                if atomic(ty).is_some() || ty == "object" {
                    return Ok(());
                }
                if let Some(e) = ty.strip_prefix("[]") {
                    ty = e;
                    continue;
                }
                if ty.starts_with("map") {
                    let (_, v) = parse_map_type(ty)?;
                    return dependencies(&Json::String(v), out);
                }
                out.insert(ty.to_string());
                return Ok(());
            }
        }
        other => Err(format!(
            "pre-defined type must be an object or string alias, got {other}"
        )),
    }
}

fn push_required(parent: &mut Json, key: &str) {
    if let Some(p) = parent.as_object_mut() {
        let list = p
            .entry("required")
            .or_insert_with(|| Json::Array(Vec::new()));
        if let Json::Array(l) = list {
            l.push(Json::String(key.to_string()));
        }
    }
}

fn parse_bool(v: &str, what: &str) -> Result<bool, String> {
    match v {
        "true" | "1" | "t" | "T" | "TRUE" | "True" => Ok(true),
        "false" | "0" | "f" | "F" | "FALSE" | "False" => Ok(false),
        _ => Err(format!(
            "failed to parse {what} marker value: strconv.ParseBool: parsing {v:?}: invalid syntax"
        )),
    }
}

fn parse_int(v: &str, what: &str) -> Result<i64, String> {
    v.parse::<i64>().map_err(|_| {
        format!("failed to parse {what} value: strconv.ParseInt: parsing {v:?}: invalid syntax")
    })
}

/// `applyMarker`: one marker onto a field's schema (or, `required`, onto its parent's).
fn apply_marker(schema: &mut Json, m: &Marker, key: &str, parent: &mut Json) -> Result<(), String> {
    let ty = schema
        .get("type")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let only = |want: &str, what: &str| {
        if ty == want {
            Ok(())
        } else {
            Err(format!(
                "{what} marker is only valid for {want} types, got type: {ty}"
            ))
        }
    };
    let v = m.value.as_str();
    match m.key {
        "required" => {
            if parse_bool(v, "required")? {
                push_required(parent, key);
            }
        }
        "default" => {
            schema["default"] = if ty == "string" {
                Json::String(v.to_string())
            } else {
                serde_json::from_str(v).map_err(|e| format!("invalid default value {v:?}: {e}"))?
            };
        }
        "description" => schema["description"] = json!(v),
        "minimum" | "maximum" => {
            let n: f64 = v.parse().map_err(|_| {
                format!(
                    "failed to parse {} enum value: strconv.ParseFloat: parsing {v:?}: invalid syntax",
                    m.key
                )
            })?;
            schema[m.key] = json!(n);
        }
        "validation" => {
            if v.trim().is_empty() {
                return Err("validation failed".into());
            }
            schema["x-kubernetes-validations"] =
                json!([{"rule": v, "message": "validation failed"}]);
        }
        "immutable" => {
            if parse_bool(v, "immutable")? {
                let rules = schema
                    .as_object_mut()
                    .map(|s| {
                        s.entry("x-kubernetes-validations")
                            .or_insert_with(|| json!([]))
                    })
                    .and_then(Json::as_array_mut);
                if let Some(rules) = rules {
                    rules.push(json!({"rule": "self == oldSelf", "message": "field is immutable"}));
                }
            }
        }
        "enum" => {
            let mut values = Vec::new();
            for raw in v.split(',') {
                let raw = raw.trim();
                if raw.is_empty() {
                    return Err("empty enum values are not allowed".into());
                }
                values.push(match ty.as_str() {
                    "string" => json!(raw),
                    "integer" => json!(parse_int(raw, "integer enum")?),
                    _ => {
                        return Err(format!(
                        "enum values only supported for string and integer types, got type: {ty}"
                    ))
                    }
                });
            }
            schema["enum"] = Json::Array(values);
        }
        "pattern" => {
            if v.is_empty() {
                return Err("pattern marker value cannot be empty".into());
            }
            only("string", "pattern")?;
            crate::sim::api::regexp::compile(v)
                .map_err(|e| format!("invalid pattern regex: {e}"))?;
            schema["pattern"] = json!(v);
        }
        "minLength" | "maxLength" => {
            only("string", m.key)?;
            schema[m.key] = json!(parse_int(v, m.key)?);
        }
        "minItems" | "maxItems" => {
            only("array", m.key)?;
            schema[m.key] = json!(parse_int(v, m.key)?);
        }
        "uniqueItems" => {
            let unique = parse_bool(v, "uniqueItems")?;
            only("array", "uniqueItems")?;
            if unique {
                schema["x-kubernetes-list-type"] = json!("set");
            }
        }
        _ => return Err(format!("unknown marker: {}", m.key)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(yaml: &str) -> Result<Json, SchemaError> {
        let doc = crate::sim::input::yaml::parse_documents(yaml).expect("yaml")[0]
            .value
            .clone();
        to_openapi(&doc["spec"], doc.get("types"), "spec.schema.spec")
    }

    #[test]
    fn atomic_fields_take_their_markers_as_kros_transformer_does() {
        let s = schema(
            r#"
spec:
  name: string | required=true description="My Name"
  replicas: integer | default=1 minimum=1 maximum=100
  enabled: boolean | default=false
  price: float
"#,
        )
        .expect("valid");
        assert_eq!(s["required"], json!(["name"]));
        assert_eq!(
            s["properties"]["name"],
            json!({"type": "string", "description": "My Name"})
        );
        assert_eq!(
            s["properties"]["replicas"],
            json!({"type": "integer", "default": 1, "minimum": 1.0, "maximum": 100.0})
        );
        assert_eq!(s["properties"]["enabled"]["default"], json!(false));
        assert_eq!(s["properties"]["price"], json!({"type": "number"}));
        // A field has a default, so the object defaults to {} and the defaults apply.
        assert_eq!(s["default"], json!({}));
    }

    #[test]
    fn nested_objects_collections_and_unstructured_objects_become_their_openapi_shapes() {
        let s = schema(
            r#"
spec:
  ingress:
    enabled: boolean | default=false
    host: string | default="example.com"
  ports: "[]integer"
  env: "map[string]string"
  matrix: "[][]string"
  values: object | required=true
"#,
        )
        .expect("valid");
        let p = &s["properties"];
        assert_eq!(p["ingress"]["type"], "object");
        assert_eq!(p["ingress"]["properties"]["host"]["default"], "example.com");
        assert_eq!(p["ingress"]["default"], json!({}));
        assert_eq!(
            p["ports"],
            json!({"type": "array", "items": {"type": "integer"}})
        );
        assert_eq!(
            p["env"],
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
        assert_eq!(p["matrix"]["items"]["items"], json!({"type": "string"}));
        assert_eq!(
            p["values"],
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(s["required"], json!(["values"]));
    }

    #[test]
    fn enum_pattern_lengths_items_and_immutability_map_to_their_keywords() {
        let s = schema(
            r#"
spec:
  size: string | enum="small,medium,large" default=small
  level: integer | enum="1,2,3"
  id: string | pattern="^[a-z]+$" minLength=2 maxLength=10 immutable=true
  tags: "[]string | uniqueItems=true minItems=1 maxItems=5"
  check: integer | validation="self > 0"
"#,
        )
        .expect("valid");
        let p = &s["properties"];
        assert_eq!(p["size"]["enum"], json!(["small", "medium", "large"]));
        assert_eq!(p["level"]["enum"], json!([1, 2, 3]));
        assert_eq!(p["id"]["pattern"], "^[a-z]+$");
        assert_eq!(
            p["id"]["x-kubernetes-validations"],
            json!([{"rule": "self == oldSelf", "message": "field is immutable"}])
        );
        assert_eq!(p["tags"]["x-kubernetes-list-type"], "set");
        assert_eq!(p["tags"]["minItems"], 1);
        assert_eq!(
            p["check"]["x-kubernetes-validations"],
            json!([{"rule": "self > 0", "message": "validation failed"}])
        );
    }

    #[test]
    fn custom_types_resolve_in_dependency_order_and_carry_their_required_marker() {
        let s = schema(
            r#"
spec:
  primary: Server
  replicas: "[]Server"
  byName: "map[string]Port"
types:
  Server:
    host: string | required=true
    port: Port
  Port: integer | default=80 required=true
"#,
        )
        .expect("valid");
        let p = &s["properties"];
        assert_eq!(p["primary"]["required"], json!(["host", "port"]));
        assert_eq!(
            p["primary"]["properties"]["port"],
            json!({"type": "integer", "default": 80})
        );
        assert_eq!(p["replicas"]["items"]["type"], "object");
        assert_eq!(
            p["byName"]["additionalProperties"],
            json!({"type": "integer", "default": 80})
        );
    }

    #[test]
    fn what_kro_refuses_is_refused_at_its_field_with_kros_words() {
        let cases = [
            (
                "spec:\n  a: strng\n",
                "spec.schema.spec.a: unknown type: strng",
            ),
            (
                "spec:\n  a: string | requird=true\n",
                "spec.schema.spec.a: failed to parse field schema for a: invalid marker key \"requird\": unknown marker: requird",
            ),
            (
                "spec:\n  a: string | required\n",
                "spec.schema.spec.a: failed to parse field schema for a: marker key 'required' without a value",
            ),
            (
                "spec:\n  a: boolean | enum=\"a,b\"\n",
                "spec.schema.spec.a: failed to apply markers: enum values only supported for string and integer types, got type: boolean",
            ),
            (
                "spec:\n  a: integer | minLength=1\n",
                "spec.schema.spec.a: failed to apply markers: minLength marker is only valid for string types, got type: integer",
            ),
            (
                "spec:\n  a: map[integer]string\n",
                "spec.schema.spec.a: unsupported key type for maps, only strings are supported key types: integer",
            ),
            (
                "spec:\n  a: string | description=\"open\n",
                "spec.schema.spec.a: failed to parse field schema for a: unclosed quote",
            ),
        ];
        for (yaml, want) in cases {
            assert_eq!(schema(yaml).expect_err(yaml).to_string(), want, "{yaml}");
        }
        let cycle =
            schema("spec:\n  a: A\ntypes:\n  A:\n    b: B\n  B:\n    a: A\n").expect_err("a cycle");
        assert!(
            cycle
                .message
                .starts_with("cyclic dependency detected loading type A"),
            "{cycle}"
        );
    }

    #[test]
    fn quoted_marker_values_keep_spaces_equals_and_escaped_quotes() {
        let m =
            parse_markers(r#"description="a = \"b\" c" default="x y" validation="size(self) > 0""#)
                .expect("valid");
        assert_eq!(
            m.iter()
                .map(|m| (m.key, m.value.as_str()))
                .collect::<Vec<_>>(),
            [
                ("description", r#"a = "b" c"#),
                ("default", "x y"),
                ("validation", "size(self) > 0")
            ]
        );
    }
}
