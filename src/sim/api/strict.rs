//! Strict decoding of JSON into the playground's typed objects, with Go's words: a deserializer
//! over `&serde_json::Value` that knows the Kubernetes field path and the Go struct it fills, so
//! a type error reads `json: cannot unmarshal string into Go struct field
//! Container.spec.containers.ports.containerPort of type int32`, and unknown and opaque fields
//! are collected as findings.
//!
//! It is the one JSON decoder of the typed kinds: the editor's documents, the API server's
//! patches and merges, and kubectl's client-side merge all read objects through it. Each serde
//! `Deserialize` impl is compiled once per deserializer it meets, so a second decoder (serde_json's
//! own) would compile every Kubernetes type's decoding twice into the page.

use std::cell::RefCell;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value as Json;

/// What strict decoding noticed besides the object itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodeFindings {
    /// Fields the typed structs do not have (`spec.replicass`), in document order.
    pub unknown: Vec<String>,
    /// Fields accepted as opaque JSON: present in the object but not simulated.
    pub opaque: Vec<String>,
}

/// Why strict decoding failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// A JSON type the field cannot hold (`replicas: "three"`); Go's wording.
    Type,
    /// A field without a default is absent (a container without `name`).
    Required,
    /// Anything else a field's own parser rejected (a malformed timestamp).
    Other,
}

/// A strict-decoding failure at a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// What went wrong.
    pub kind: DecodeErrorKind,
    /// Where, as a field path (`spec.replicas`); empty at the top level.
    pub path: String,
    /// Go's wording for type errors, the field parser's for the rest.
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub fn decode_as<T: DeserializeOwned>(
    value: &Json,
    findings: &RefCell<DecodeFindings>,
) -> Result<T, DecodeError> {
    decode_at(value, "", "", findings)
}

/// [`decode_as`] for a part of an object: `value` sits at `path` (both Kubernetes' and Go's
/// path) and fills the Go struct `parent` (`metadata`, `ObjectMeta`).
pub fn decode_at<T: DeserializeOwned>(
    value: &Json,
    path: &str,
    parent: &'static str,
    findings: &RefCell<DecodeFindings>,
) -> Result<T, DecodeError> {
    match T::deserialize(StrictDe::root(value, path, parent, findings)) {
        Ok(v) => Ok(v),
        Err(e) => Err(e.into_decode_error()),
    }
}

impl DeError {
    #[inline(never)]
    fn into_decode_error(self) -> DecodeError {
        DecodeError {
            kind: self.kind,
            path: self.path.unwrap_or_default(),
            message: self.message,
        }
    }

    /// A missing field's error, which serde raises without a place, gets the struct's path.
    #[inline(never)]
    fn in_struct(mut self, path: &str) -> DeError {
        if let (None, Some(field)) = (&self.path, self.missing) {
            self.path = Some(push_key(path, field));
        }
        self
    }
}

#[derive(Debug)]
struct DeError {
    kind: DecodeErrorKind,
    message: String,
    path: Option<String>,
    missing: Option<&'static str>,
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            kind: DecodeErrorKind::Other,
            message: msg.to_string(),
            path: None,
            missing: None,
        }
    }

    fn missing_field(field: &'static str) -> Self {
        DeError {
            kind: DecodeErrorKind::Required,
            message: "Required value".into(),
            path: None,
            missing: Some(field),
        }
    }
}

/// A deserializer over `&serde_json::Value` that knows where it is, so errors and findings
/// carry Kubernetes field paths and Go struct names.
struct StrictDe<'v, 'f> {
    value: &'v Json,
    /// Kubernetes path with indices: `spec.template.spec.containers[0].image`.
    path: String,
    /// Go's error path, struct fields only: `spec.template.spec.containers.image`.
    go_path: String,
    /// The Go name of the innermost struct being filled.
    parent: &'static str,
    findings: &'f RefCell<DecodeFindings>,
}

/// Fields whose type is `IntOrString` (an untagged enum, which serde reads through
/// `deserialize_any`): not opaque even though they look like it.
const INT_OR_STRING_FIELDS: [&str; 5] = [
    "maxSurge",
    "maxUnavailable",
    "minAvailable",
    "port",
    "targetPort",
];

fn go_struct_name(rust: &'static str) -> &'static str {
    match rust {
        "HttpGetAction" => "HTTPGetAction",
        other => other,
    }
}

pub fn json_type_for_go(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(_) => "bool".into(),
        Json::Number(n) if n.is_f64() => format!("number {n}"),
        Json::Number(_) => "number".into(),
        Json::String(_) => "string".into(),
        Json::Array(_) => "array".into(),
        Json::Object(_) => "object".into(),
    }
}

fn last_segment(go_path: &str) -> &str {
    go_path.rsplit('.').next().unwrap_or(go_path)
}

// The generic methods below are compiled once per type they decode, so what does not depend on
// the type is kept out of them, in plain functions compiled once.
impl<'v, 'f> StrictDe<'v, 'f> {
    #[inline(never)]
    fn root(
        value: &'v Json,
        path: &str,
        parent: &'static str,
        findings: &'f RefCell<DecodeFindings>,
    ) -> StrictDe<'v, 'f> {
        StrictDe {
            value,
            path: path.to_string(),
            go_path: path.to_string(),
            parent,
            findings,
        }
    }

    /// The fields of a Go struct that the object holds (nulls dropped), and its Go name; the
    /// rest are recorded as unknown (a document's own `apiVersion` and `kind` aside).
    #[inline(never)]
    fn struct_entries(
        &self,
        name: &'static str,
        fields: &'static [&'static str],
    ) -> Result<(Entries<'v>, &'static str), DeError> {
        let go_name = go_struct_name(name);
        let map = match self.value {
            Json::Object(m) => Some(m),
            Json::Null => None,
            _ => return Err(self.mismatch(&format!("v1.{go_name}"))),
        };
        let mut entries = Vec::new();
        for (k, v) in map.into_iter().flatten() {
            let root_type_field = self.path.is_empty() && (k == "apiVersion" || k == "kind");
            if fields.contains(&k.as_str()) {
                if !v.is_null() {
                    entries.push((k, v));
                }
            } else if !root_type_field {
                self.findings
                    .borrow_mut()
                    .unknown
                    .push(push_key(&self.path, k));
            }
        }
        Ok((entries, go_name))
    }

    #[inline(never)]
    fn at(&self, place: &Place<'v>) -> StrictDe<'v, 'f> {
        self.child(
            place.value,
            place.path.clone(),
            place.go_path.clone(),
            place.parent,
        )
    }

    #[inline(never)]
    fn attach_at(&self, e: DeError, place: &Place<'v>) -> DeError {
        attach(e, &place.path, &self.at(place))
    }

    /// Whether this value is one of a `ResourceList`'s (requests, limits, capacity,
    /// allocatable), whose values are Quantities rather than plain strings.
    fn in_resource_list(&self) -> bool {
        matches!(
            (self.parent, last_segment(&self.go_path)),
            ("ResourceRequirements", "requests" | "limits")
                | ("NodeStatus", "capacity" | "allocatable")
        )
    }

    fn mismatch_with(&self, json_type: &str, go_type: &str) -> DeError {
        let message = if self.go_path.is_empty() {
            format!("json: cannot unmarshal {json_type} into Go value of type {go_type}")
        } else {
            format!(
                "json: cannot unmarshal {json_type} into Go struct field {}.{} of type {go_type}",
                self.parent, self.go_path
            )
        };
        DeError {
            kind: DecodeErrorKind::Type,
            message,
            path: Some(self.path.clone()),
            missing: None,
        }
    }

    fn mismatch(&self, go_type: &str) -> DeError {
        self.mismatch_with(&json_type_for_go(self.value), go_type)
    }

    fn slice_type(&self) -> &'static str {
        match (self.parent, last_segment(&self.go_path)) {
            (_, "containers" | "initContainers") => "[]v1.Container",
            (_, "tolerations") => "[]v1.Toleration",
            ("Container", "ports") => "[]v1.ContainerPort",
            ("ServiceSpec", "ports") => "[]v1.ServicePort",
            (_, "taints") => "[]v1.Taint",
            (_, "ownerReferences") => "[]v1.OwnerReference",
            ("LabelSelector", "matchExpressions") => "[]v1.LabelSelectorRequirement",
            (_, "matchExpressions" | "matchFields") => "[]v1.NodeSelectorRequirement",
            (_, "nodeSelectorTerms") => "[]v1.NodeSelectorTerm",
            (_, "preferredDuringSchedulingIgnoredDuringExecution") => {
                "[]v1.PreferredSchedulingTerm"
            }
            (_, "conditions") => "[]v1.Condition",
            (_, "containerStatuses" | "initContainerStatuses") => "[]v1.ContainerStatus",
            (_, "endpoints") => "[]v1.Endpoint",
            _ => "[]string",
        }
    }

    fn child(
        &self,
        value: &'v Json,
        path: String,
        go_path: String,
        parent: &'static str,
    ) -> StrictDe<'v, 'f> {
        StrictDe {
            value,
            path,
            go_path,
            parent,
            findings: self.findings,
        }
    }

    fn integer(&self, go_type: &str, min: i128, max: i128) -> Result<i128, DeError> {
        let Json::Number(n) = self.value else {
            return Err(self.mismatch(go_type));
        };
        let v = n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from));
        match v {
            Some(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(self.mismatch_with(&format!("number {n}"), go_type)),
        }
    }
}

macro_rules! int_methods {
    ($($method:ident, $visit:ident, $ty:ty, $go:literal);* $(;)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let v = self.integer($go, i128::from(<$ty>::MIN), i128::from(<$ty>::MAX))?;
            visitor.$visit(v as $ty)
        }
    )*};
}

impl<'de, 'v: 'de, 'f> de::Deserializer<'de> for StrictDe<'v, 'f> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        // Only opaque `Json` fields and `IntOrString` ask for "anything".
        let scalar = matches!(self.value, Json::String(_) | Json::Number(_));
        let int_or_string = scalar && INT_OR_STRING_FIELDS.contains(&last_segment(&self.path));
        // A schema's `default`, `enum` and `example` are any JSON by design, and so are the CRD
        // fields that hold a schema or an empty object: nothing there is "not simulated".
        let json_by_design = matches!(
            self.parent,
            "JSONSchemaProps" | "CustomResourceSubresources" | "CustomResourceConversion"
        );
        if !int_or_string && !json_by_design && !self.path.is_empty() {
            self.findings.borrow_mut().opaque.push(self.path.clone());
        }
        de::Deserializer::deserialize_any(self.value, visitor).map_err(|e| DeError {
            kind: DecodeErrorKind::Other,
            message: e.to_string(),
            path: Some(self.path.clone()),
            missing: None,
        })
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::Bool(b) => visitor.visit_bool(*b),
            _ => Err(self.mismatch("bool")),
        }
    }

    int_methods! {
        deserialize_i8, visit_i8, i8, "int8";
        deserialize_i16, visit_i16, i16, "int16";
        deserialize_i32, visit_i32, i32, "int32";
        deserialize_i64, visit_i64, i64, "int64";
        deserialize_u8, visit_u8, u8, "uint8";
        deserialize_u16, visit_u16, u16, "uint16";
        deserialize_u32, visit_u32, u32, "uint32";
        deserialize_u64, visit_u64, u64, "uint64";
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::Number(n) => visitor.visit_f64(n.as_f64().unwrap_or(0.0)),
            _ => Err(self.mismatch("float64")),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::String(s) => visitor.visit_str(s),
            // A resource list holds Quantities, which Kubernetes also reads from JSON numbers
            // (`cpu: 1`, `memory: 1e9`); the API server then stores them in canonical form.
            Json::Number(n) if self.in_resource_list() => visitor.visit_str(&n.to_string()),
            _ => Err(self.mismatch("string")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        static EMPTY: Vec<Json> = Vec::new();
        let items = match self.value {
            Json::Array(items) => items,
            Json::Null => &EMPTY,
            _ => return Err(self.mismatch(self.slice_type())),
        };
        visitor.visit_seq(StrictSeq {
            de: &self,
            items: items.iter().enumerate(),
        })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let entries: Vec<(&String, &Json)> = match self.value {
            Json::Object(m) => m.iter().filter(|(_, v)| !v.is_null()).collect(),
            Json::Null => Vec::new(),
            _ => {
                let go = if last_segment(&self.go_path) == "disruptedPods" {
                    "map[string]v1.Time"
                } else {
                    "map[string]string"
                };
                return Err(self.mismatch(go));
            }
        };
        visitor.visit_map(StrictMap {
            de: &self,
            entries: entries.into_iter(),
            pending: None,
            parent: None,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let (entries, go_name) = self.struct_entries(name, fields)?;
        let result = visitor.visit_map(StrictMap {
            de: &self,
            entries: entries.into_iter(),
            pending: None,
            parent: Some(go_name),
        });
        match result {
            Ok(v) => Ok(v),
            Err(e) => Err(e.in_struct(&self.path)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_enum(self.value, name, variants, visitor).map_err(|e| {
            DeError {
                kind: DecodeErrorKind::Other,
                message: e.to_string(),
                path: Some(self.path.clone()),
                missing: None,
            }
        })
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

struct StrictSeq<'a, 'v, 'f> {
    de: &'a StrictDe<'v, 'f>,
    items: std::iter::Enumerate<std::slice::Iter<'v, Json>>,
}

impl<'de, 'v: 'de> SeqAccess<'de> for StrictSeq<'_, 'v, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(place) = self.next_place() else {
            return Ok(None);
        };
        match seed.deserialize(self.de.at(&place)) {
            Ok(v) => Ok(Some(v)),
            Err(e) => Err(self.de.attach_at(e, &place)),
        }
    }

    /// Exact: a decoded list gets the capacity it needs, not a doubling's slack (a pod's
    /// decoded spec is shared by its later versions, so its slack stays as long as the pod).
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

impl<'v> StrictSeq<'_, 'v, '_> {
    #[inline(never)]
    fn next_place(&mut self) -> Option<Place<'v>> {
        let (i, item) = self.items.next()?;
        Some(Place {
            value: item,
            path: push_index(&self.de.path, i),
            go_path: self.de.go_path.clone(),
            parent: self.de.parent,
        })
    }
}

/// Where a value sits, kept apart from its deserializer so that an error from it can be placed.
struct Place<'v> {
    value: &'v Json,
    path: String,
    go_path: String,
    parent: &'static str,
}

/// An object's entries in the order they are served.
type Entries<'v> = Vec<(&'v String, &'v Json)>;

/// Serves a JSON object as a Go struct (`parent: Some(name)`) or a Go map (`parent: None`).
struct StrictMap<'a, 'v, 'f> {
    de: &'a StrictDe<'v, 'f>,
    entries: std::vec::IntoIter<(&'v String, &'v Json)>,
    pending: Option<(&'v String, &'v Json)>,
    parent: Option<&'static str>,
}

impl<'de, 'v: 'de> MapAccess<'de> for StrictMap<'_, 'v, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some((k, v)) = self.entries.next() else {
            return Ok(None);
        };
        self.pending = Some((k, v));
        seed.deserialize(k.as_str().into_deserializer()).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, DeError> {
        let place = self.value_place()?;
        match seed.deserialize(self.de.at(&place)) {
            Ok(v) => Ok(v),
            Err(e) => Err(self.de.attach_at(e, &place)),
        }
    }

    /// Exact, as a list's (a map decodes into a sorted vector).
    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

impl<'v> StrictMap<'_, 'v, '_> {
    #[inline(never)]
    fn value_place(&mut self) -> Result<Place<'v>, DeError> {
        let Some((k, v)) = self.pending.take() else {
            return Err(de::Error::custom("value requested before key"));
        };
        // Struct fields extend Go's error path and become the parent; map values do neither.
        let (go_path, parent) = match self.parent {
            Some(parent) if self.de.go_path.is_empty() => (k.clone(), parent),
            Some(parent) => (format!("{}.{k}", self.de.go_path), parent),
            None => (self.de.go_path.clone(), self.de.parent),
        };
        Ok(Place {
            value: v,
            path: push_key(&self.de.path, k),
            go_path,
            parent,
        })
    }
}

/// Gives an error from a field's own deserializer the field's path, and rewords serde's
/// untagged-enum failure as Go's type error.
fn attach(mut e: DeError, path: &str, ctx: &StrictDe<'_, '_>) -> DeError {
    if e.path.is_some() {
        return e;
    }
    if e.message.contains("untagged enum IntOrString") {
        return ctx.mismatch("intstr.IntOrString");
    }
    e.path = Some(match e.missing {
        Some(field) => push_key(path, field),
        None => path.to_string(),
    });
    e
}

/// Appends a map key to a field path the way Kubernetes' `field.Path` prints it.
///
/// Identifier-like keys become `.key` (or just `key` at the root); anything else (dots, slashes,
/// spaces: label and annotation keys) becomes `[key]`, so paths stay unambiguous.
pub fn push_key(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'$');
    if !plain {
        format!("{parent}[{key}]")
    } else if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Appends a sequence index to a field path: `containers` → `containers[0]`.
pub fn push_index(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}
