//! `apiextensions.k8s.io/v1`: the CustomResourceDefinition, the kinds it serves and the custom
//! objects of those kinds, shaped as the API serves them.
//!
//! A served kind is a [`CustomKind`]: its group, kind, plural, scope and storage version, interned
//! once per process so that a [`super::types::Kind`] stays `Copy` like the built-in kinds. Two
//! CRDs that say the same thing share one interned name; order and equality compare the names,
//! never the addresses, so nothing observable depends on which session interned a name first.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::fields::Fields;
use super::strict::{decode_at, DecodeError};
use super::types::{ObjectMeta, Time};

/// `apiextensions.k8s.io/v1`, the only version of the CRD API a v1.34 cluster serves.
pub const CRD_API_VERSION: &str = "apiextensions.k8s.io/v1";
/// The finalizer a CRD carries until its custom objects are deleted.
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

/// The names a served custom kind is known by, fixed for the life of its CRD.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CustomKindName {
    pub group: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    /// `group/version` of the storage version.
    pub api_version: &'static str,
    /// A built-in kind the playground stores without simulating it (`ConfigMap`): served from
    /// the upstream definitions ([`super::openapi`]), not from a CRD.
    pub builtin: bool,
}

/// A kind served from a CustomResourceDefinition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CustomKind(&'static CustomKindName);

/// How many distinct custom kind names one process interns. Each is a few short strings; the cap
/// keeps a page that applies thousands of generated CRDs from growing without bound.
pub const MAX_INTERNED_KINDS: usize = 4096;

static INTERNED: Mutex<Vec<&'static CustomKindName>> = Mutex::new(Vec::new());

impl CustomKind {
    /// The kind for these names, interning them on first use.
    pub fn intern(
        group: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        version: &str,
    ) -> Result<CustomKind, String> {
        // The built-in kinds come first, so that lookups by group and kind find them.
        super::openapi::stored_kinds();
        Self::intern_with(group, kind, plural, namespaced, version, false)
    }

    /// Interns a kind of either source; [`super::openapi::stored_kinds`] interns the built-in ones.
    pub(super) fn intern_with(
        group: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        version: &str,
        builtin: bool,
    ) -> Result<CustomKind, String> {
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let mut table = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = table.iter().find(|n| {
            n.group == group
                && n.kind == kind
                && n.plural == plural
                && n.namespaced == namespaced
                && n.api_version == api_version
                && n.builtin == builtin
        }) {
            return Ok(CustomKind(found));
        }
        if table.len() >= MAX_INTERNED_KINDS {
            return Err(format!(
                "the playground serves at most {MAX_INTERNED_KINDS} distinct custom kinds per page; reload the page to start afresh"
            ));
        }
        let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
        let name: &'static CustomKindName = Box::leak(Box::new(CustomKindName {
            group: leak(group),
            kind: leak(kind),
            plural: leak(plural),
            namespaced,
            api_version: leak(&api_version),
            builtin,
        }));
        table.push(name);
        Ok(CustomKind(name))
    }

    /// The kind a CRD serves, if its names are complete enough to name one.
    pub fn of(crd: &CustomResourceDefinition) -> Option<CustomKind> {
        let s = &crd.spec;
        let storage = s.versions.iter().find(|v| v.storage)?;
        if s.group.is_empty() || s.names.kind.is_empty() || s.names.plural.is_empty() {
            return None;
        }
        CustomKind::intern(
            &s.group,
            &s.names.kind,
            &s.names.plural,
            s.scope != "Cluster",
            &storage.name,
        )
        .ok()
    }

    /// The newest kind interned as `kind` in `group`: what an ownerReference's `apiVersion` and
    /// `kind` resolve to (the REST mapper's lookup by group and kind; the version may differ).
    pub fn find(group: &str, kind: &str) -> Option<CustomKind> {
        super::openapi::stored_kinds();
        let table = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        table
            .iter()
            .rev()
            .find(|n| n.group == group && n.kind == kind)
            .map(|n| CustomKind(n))
    }

    pub fn names(self) -> &'static CustomKindName {
        self.0
    }

    /// `plural.group`: how API errors and kubectl name the resource (`crontabs.stable.example.com`,
    /// `configmaps` in the core group).
    pub fn resource(self) -> String {
        if self.0.group.is_empty() {
            self.0.plural.to_string()
        } else {
            format!("{}.{}", self.0.plural, self.0.group)
        }
    }

    /// Whether it is a built-in kind the playground stores without simulating it.
    pub fn is_builtin(self) -> bool {
        self.0.builtin
    }
}

impl Serialize for CustomKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.0;
        (n.group, n.kind, n.plural, n.namespaced, n.api_version).serialize(s)
    }
}

impl<'de> Deserialize<'de> for CustomKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (group, kind, plural, namespaced, api_version): (String, String, String, bool, String) =
            Deserialize::deserialize(d)?;
        if let Some(k) = super::openapi::stored_kind(&group, &kind) {
            return Ok(k);
        }
        let version = api_version.rsplit('/').next().unwrap_or_default();
        CustomKind::intern(&group, &kind, &plural, namespaced, version)
            .map_err(serde::de::Error::custom)
    }
}

/// An object of a custom kind: its metadata typed like every object's, the rest as written
/// (pruned, defaulted and validated against its CRD's schema by the API server).
#[derive(Clone, Debug, PartialEq)]
pub struct CustomObject {
    pub kind: CustomKind,
    /// The `apiVersion` it was written in (one of its CRD's served versions).
    pub api_version: String,
    pub metadata: ObjectMeta,
    /// Every top-level field but `apiVersion`, `kind` and `metadata` (`spec`, `status`, …).
    pub content: serde_json::Map<String, Json>,
}

impl Serialize for CustomObject {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl CustomObject {
    /// A stored built-in object in `default` with this spec, for tests.
    #[cfg(test)]
    pub fn stored_for_test(group: &str, kind: &str, name: &str, spec: Json) -> CustomObject {
        let kind = super::openapi::stored_kind(group, kind).expect("a stored kind");
        let version = if group.is_empty() {
            "v1".to_string()
        } else {
            format!("{group}/v1")
        };
        let mut content = serde_json::Map::new();
        content.insert("spec".into(), spec);
        CustomObject {
            kind,
            api_version: version,
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                uid: format!("u-{name}").into(),
                ..Default::default()
            },
            content,
        }
    }

    /// The value at a path of its JSON (`["spec", "completions"]`).
    pub fn at(&self, path: &[&str]) -> Option<&Json> {
        let (first, rest) = path.split_first()?;
        rest.iter()
            .try_fold(self.content.get(*first)?, |v, k| v.get(k))
    }

    /// The integer at a path.
    pub fn int_at(&self, path: &[&str]) -> Option<i64> {
        self.at(path).and_then(Json::as_i64)
    }

    /// The object as the API serves it.
    pub fn to_json(&self) -> Json {
        let mut map = serde_json::Map::new();
        map.insert("apiVersion".into(), Json::String(self.api_version.clone()));
        map.insert("kind".into(), Json::String(self.kind.0.kind.into()));
        map.insert(
            "metadata".into(),
            serde_json::to_value(&self.metadata).unwrap_or(Json::Null),
        );
        for (k, v) in &self.content {
            map.insert(k.clone(), v.clone());
        }
        Json::Object(map)
    }

    /// The object from its JSON: the metadata typed, the rest kept.
    pub fn from_json(
        kind: CustomKind,
        value: Json,
    ) -> Result<CustomObject, super::strict::DecodeError> {
        let Json::Object(mut map) = value else {
            return Err(super::strict::DecodeError {
                kind: super::strict::DecodeErrorKind::Type,
                path: String::new(),
                message: "an object must be a JSON object".into(),
            });
        };
        let api_version = match map.remove("apiVersion") {
            Some(Json::String(s)) => s,
            _ => kind.0.api_version.to_string(),
        };
        map.remove("kind");
        let metadata = match map.remove("metadata") {
            Some(m) => super::strict::decode_at(&m, "metadata", "ObjectMeta", &Default::default())?,
            None => ObjectMeta::default(),
        };
        Ok(CustomObject {
            kind,
            api_version,
            metadata,
            content: map,
        })
    }
}

// ---------------------------------------------------------------- The CRD itself

/// `apiextensions.k8s.io/v1` `CustomResourceDefinition`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinition {
    pub metadata: ObjectMeta,
    pub spec: CustomResourceDefinitionSpec,
    pub status: CustomResourceDefinitionStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionSpec {
    pub group: String,
    pub names: CustomResourceDefinitionNames,
    pub scope: String,
    pub versions: Vec<CustomResourceDefinitionVersion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversion: Option<CustomResourceConversion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preserve_unknown_fields: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionNames {
    pub plural: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub singular: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub list_kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceConversion {
    pub strategy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Json>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<CustomResourceValidation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresources: Option<CustomResourceSubresources>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additional_printer_columns: Vec<CustomResourceColumnDefinition>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub selectable_fields: Vec<SelectableField>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectableField {
    pub json_path: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceValidation {
    #[serde(rename = "openAPIV3Schema", skip_serializing_if = "Option::is_none")]
    pub open_api_v3_schema: Option<JSONSchemaProps>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresources {
    /// `{}` turns the status subresource on; its content is unused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<CustomResourceSubresourceScale>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresourceScale {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceColumnDefinition {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "is_zero_i32")]
    pub priority: i32,
    pub json_path: String,
}

/// An OpenAPI v3 schema node as a CRD writes it. The keywords Kubernetes refuses in a
/// structural schema are kept so that they are refused with its words, not as unknown fields.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JSONSchemaProps {
    #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    #[serde(skip_serializing_if = "is_false")]
    pub exclusive_maximum: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(skip_serializing_if = "is_false")]
    pub exclusive_minimum: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    #[serde(skip_serializing_if = "is_false")]
    pub unique_items: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    #[serde(rename = "enum", skip_serializing_if = "Vec::is_empty")]
    pub enum_: Vec<Json>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<JSONSchemaProps>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, JSONSchemaProps>,
    /// A schema for every other key, or `true`/`false`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<Json>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub all_of: Vec<JSONSchemaProps>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<JSONSchemaProps>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<JSONSchemaProps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<JSONSchemaProps>>,
    #[serde(skip_serializing_if = "is_false")]
    pub nullable: bool,
    #[serde(
        rename = "x-kubernetes-preserve-unknown-fields",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_preserve_unknown_fields: Option<bool>,
    #[serde(
        rename = "x-kubernetes-embedded-resource",
        skip_serializing_if = "is_false"
    )]
    pub x_embedded_resource: bool,
    #[serde(
        rename = "x-kubernetes-int-or-string",
        skip_serializing_if = "is_false"
    )]
    pub x_int_or_string: bool,
    #[serde(
        rename = "x-kubernetes-list-type",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_list_type: Option<String>,
    #[serde(
        rename = "x-kubernetes-list-map-keys",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub x_list_map_keys: Vec<String>,
    #[serde(
        rename = "x-kubernetes-map-type",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_map_type: Option<String>,
    #[serde(
        rename = "x-kubernetes-validations",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub x_validations: Vec<ValidationRule>,
    #[serde(rename = "$ref", skip_serializing_if = "Option::is_none")]
    pub ref_: Option<Json>,
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema_: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definitions: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_properties: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_items: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_docs: Option<Json>,
}

/// One `x-kubernetes-validations` rule (CEL): stored, not yet enforced by the playground.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRule {
    pub rule: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message_expression: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub field_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optional_old_self: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionStatus {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<CustomResourceDefinitionCondition>,
    pub accepted_names: CustomResourceDefinitionNames,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stored_versions: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl CustomResourceDefinition {
    /// The version objects are stored in (validation guarantees exactly one).
    pub fn storage_version(&self) -> Option<&CustomResourceDefinitionVersion> {
        self.spec.versions.iter().find(|v| v.storage)
    }

    /// A served version by name.
    pub fn served_version(&self, name: &str) -> Option<&CustomResourceDefinitionVersion> {
        self.spec
            .versions
            .iter()
            .find(|v| v.served && v.name == name)
    }

    /// Whether the `Established` condition is True: the API server then serves the kind.
    pub fn established(&self) -> bool {
        self.condition("Established")
            .is_some_and(|c| c.status == "True")
    }

    pub fn condition(&self, type_: &str) -> Option<&CustomResourceDefinitionCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Whether the storage version turns the status subresource on.
    pub fn has_status_subresource(&self) -> bool {
        self.storage_version()
            .and_then(|v| v.subresources.as_ref())
            .is_some_and(|s| s.status.is_some())
    }
}

// ---------------------------------------------------------------- Reading a CRD from its JSON

/// The kind, for [`Fields`]' errors.
const CRD: &str = "CustomResourceDefinition";

impl CustomResourceDefinition {
    /// Reads a CRD from its JSON (Go's decoding has already checked its types and found its
    /// unknown fields). Absent fields read as Go's zero values, so a CRD without `spec.group`
    /// is refused by validation with the API server's words, not by the reader.
    pub fn from_json(value: &Json) -> Result<CustomResourceDefinition, DecodeError> {
        let part =
            |name: &'static str| Fields::of(value.get(name).unwrap_or(&Json::Null), CRD, name);
        Fields::of(value, CRD, "")?;
        let metadata = match value.get("metadata") {
            Some(m) if !m.is_null() => decode_at(m, "metadata", "ObjectMeta", &Default::default())?,
            _ => ObjectMeta::default(),
        };
        Ok(CustomResourceDefinition {
            metadata,
            spec: read_spec(part("spec")?)?,
            status: read_status(part("status")?)?,
        })
    }
}

impl JSONSchemaProps {
    /// Reads one schema node (and its children) from its JSON.
    pub fn from_json(value: &Json) -> Result<JSONSchemaProps, DecodeError> {
        read_schema(Fields::of(value, CRD, "spec")?)
    }
}

fn read_names(n: Fields<'_>) -> Result<CustomResourceDefinitionNames, DecodeError> {
    Ok(CustomResourceDefinitionNames {
        plural: n.string("plural")?.unwrap_or_default(),
        singular: n.string("singular")?.unwrap_or_default(),
        kind: n.string("kind")?.unwrap_or_default(),
        list_kind: n.string("listKind")?.unwrap_or_default(),
        short_names: n.strings("shortNames")?,
        categories: n.strings("categories")?,
    })
}

fn read_spec(s: Fields<'_>) -> Result<CustomResourceDefinitionSpec, DecodeError> {
    let mut versions = Vec::new();
    for v in s.objects("versions")? {
        versions.push(read_version(v)?);
    }
    Ok(CustomResourceDefinitionSpec {
        group: s.string("group")?.unwrap_or_default(),
        names: match s.object("names")? {
            Some(n) => read_names(n)?,
            None => CustomResourceDefinitionNames::default(),
        },
        scope: s.string("scope")?.unwrap_or_default(),
        versions,
        conversion: match s.object("conversion")? {
            Some(c) => Some(CustomResourceConversion {
                strategy: c.string("strategy")?.unwrap_or_default(),
                webhook: c.json("webhook"),
            }),
            None => None,
        },
        preserve_unknown_fields: s.boolean("preserveUnknownFields")?,
    })
}

fn read_version(v: Fields<'_>) -> Result<CustomResourceDefinitionVersion, DecodeError> {
    let mut additional_printer_columns = Vec::new();
    for c in v.objects("additionalPrinterColumns")? {
        additional_printer_columns.push(CustomResourceColumnDefinition {
            name: c.string("name")?.unwrap_or_default(),
            type_: c.string("type")?.unwrap_or_default(),
            format: c.string("format")?.unwrap_or_default(),
            description: c.string("description")?.unwrap_or_default(),
            priority: c.int32("priority")?.unwrap_or(0),
            json_path: c.string("jsonPath")?.unwrap_or_default(),
        });
    }
    let mut selectable_fields = Vec::new();
    for f in v.objects("selectableFields")? {
        selectable_fields.push(SelectableField {
            json_path: f.string("jsonPath")?.unwrap_or_default(),
        });
    }
    Ok(CustomResourceDefinitionVersion {
        name: v.string("name")?.unwrap_or_default(),
        served: v.boolean("served")?.unwrap_or(false),
        storage: v.boolean("storage")?.unwrap_or(false),
        deprecated: v.boolean("deprecated")?,
        deprecation_warning: v.string("deprecationWarning")?,
        schema: match v.object("schema")? {
            Some(s) => Some(CustomResourceValidation {
                open_api_v3_schema: match s.object("openAPIV3Schema")? {
                    Some(root) => Some(read_schema(root)?),
                    None => None,
                },
            }),
            None => None,
        },
        subresources: match v.object("subresources")? {
            Some(s) => Some(CustomResourceSubresources {
                status: s.json("status"),
                scale: match s.object("scale")? {
                    Some(sc) => Some(CustomResourceSubresourceScale {
                        spec_replicas_path: sc.string("specReplicasPath")?.unwrap_or_default(),
                        status_replicas_path: sc.string("statusReplicasPath")?.unwrap_or_default(),
                        label_selector_path: sc.string("labelSelectorPath")?,
                    }),
                    None => None,
                },
            }),
            None => None,
        },
        additional_printer_columns,
        selectable_fields,
    })
}

fn read_schemas(s: Fields<'_>, name: &str) -> Result<Vec<JSONSchemaProps>, DecodeError> {
    s.objects(name)?.into_iter().map(read_schema).collect()
}

fn read_boxed(s: Fields<'_>, name: &str) -> Result<Option<Box<JSONSchemaProps>>, DecodeError> {
    match s.object(name)? {
        Some(child) => Ok(Some(Box::new(read_schema(child)?))),
        None => Ok(None),
    }
}

fn read_schema(s: Fields<'_>) -> Result<JSONSchemaProps, DecodeError> {
    let mut properties = BTreeMap::new();
    if let Some(props) = s.object("properties")? {
        for (name, child) in props.entries() {
            properties.insert(name.clone(), read_schema(Fields::of(child, CRD, "spec")?)?);
        }
    }
    let mut x_validations = Vec::new();
    for r in s.objects("x-kubernetes-validations")? {
        x_validations.push(ValidationRule {
            rule: r.string("rule")?.unwrap_or_default(),
            message: r.string("message")?.unwrap_or_default(),
            message_expression: r.string("messageExpression")?.unwrap_or_default(),
            reason: r.string("reason")?,
            field_path: r.string("fieldPath")?.unwrap_or_default(),
            optional_old_self: r.boolean("optionalOldSelf")?,
        });
    }
    let enum_ = match s.get("enum") {
        None => Vec::new(),
        Some(Json::Array(values)) => values.clone(),
        Some(_) => return Err(s.not_one()),
    };
    Ok(JSONSchemaProps {
        type_: s.string("type")?.unwrap_or_default(),
        format: s.string("format")?.unwrap_or_default(),
        title: s.string("title")?.unwrap_or_default(),
        description: s.string("description")?.unwrap_or_default(),
        default: s.json("default"),
        example: s.json("example"),
        maximum: s.number("maximum")?,
        exclusive_maximum: s.boolean("exclusiveMaximum")?.unwrap_or(false),
        minimum: s.number("minimum")?,
        exclusive_minimum: s.boolean("exclusiveMinimum")?.unwrap_or(false),
        multiple_of: s.number("multipleOf")?,
        max_length: s.int("maxLength")?,
        min_length: s.int("minLength")?,
        pattern: s.string("pattern")?.unwrap_or_default(),
        max_items: s.int("maxItems")?,
        min_items: s.int("minItems")?,
        unique_items: s.boolean("uniqueItems")?.unwrap_or(false),
        max_properties: s.int("maxProperties")?,
        min_properties: s.int("minProperties")?,
        enum_,
        required: s.strings("required")?,
        items: read_boxed(s, "items")?,
        properties,
        additional_properties: s.json("additionalProperties"),
        all_of: read_schemas(s, "allOf")?,
        one_of: read_schemas(s, "oneOf")?,
        any_of: read_schemas(s, "anyOf")?,
        not: read_boxed(s, "not")?,
        nullable: s.boolean("nullable")?.unwrap_or(false),
        x_preserve_unknown_fields: s.boolean("x-kubernetes-preserve-unknown-fields")?,
        x_embedded_resource: s
            .boolean("x-kubernetes-embedded-resource")?
            .unwrap_or(false),
        x_int_or_string: s.boolean("x-kubernetes-int-or-string")?.unwrap_or(false),
        x_list_type: s.string("x-kubernetes-list-type")?,
        x_list_map_keys: s.strings("x-kubernetes-list-map-keys")?,
        x_map_type: s.string("x-kubernetes-map-type")?,
        x_validations,
        ref_: s.json("$ref"),
        schema_: s.json("$schema"),
        id: s.json("id"),
        definitions: s.json("definitions"),
        dependencies: s.json("dependencies"),
        pattern_properties: s.json("patternProperties"),
        additional_items: s.json("additionalItems"),
        external_docs: s.json("externalDocs"),
    })
}

fn read_status(s: Fields<'_>) -> Result<CustomResourceDefinitionStatus, DecodeError> {
    let mut conditions = Vec::new();
    for c in s.objects("conditions")? {
        conditions.push(CustomResourceDefinitionCondition {
            type_: c.string("type")?.unwrap_or_default(),
            status: c.string("status")?.unwrap_or_default(),
            last_transition_time: match c.string("lastTransitionTime")? {
                Some(t) => Some(Time::parse_rfc3339(&t).ok_or_else(|| c.not_one())?),
                None => None,
            },
            reason: c.string("reason")?.unwrap_or_default(),
            message: c.string("message")?.unwrap_or_default(),
        });
    }
    Ok(CustomResourceDefinitionStatus {
        conditions,
        accepted_names: match s.object("acceptedNames")? {
            Some(n) => read_names(n)?,
            None => CustomResourceDefinitionNames::default(),
        },
        stored_versions: s.strings("storedVersions")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every keyword a CRD's schema node may hold; LEAF stands for a small child schema.
    const SCHEMA: &str = r##"{
        "type": "object", "format": "f", "title": "t", "description": "d",
        "default": {"a": 1}, "example": [1], "maximum": 9.5, "exclusiveMaximum": true,
        "minimum": -1.5, "exclusiveMinimum": true, "multipleOf": 0.5, "maxLength": 4,
        "minLength": 2, "pattern": "x", "maxItems": 5, "minItems": 1, "uniqueItems": true,
        "maxProperties": 7, "minProperties": 1, "enum": ["a", 1, null],
        "required": ["spec"], "items": LEAF, "properties": {"b": LEAF, "a": {"type": "integer"}},
        "additionalProperties": false, "allOf": [LEAF], "oneOf": [LEAF], "anyOf": [LEAF],
        "not": LEAF, "nullable": true, "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-embedded-resource": true, "x-kubernetes-int-or-string": true,
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-map-type": "atomic",
        "x-kubernetes-validations": [{"rule": "self.a > 0", "message": "m",
            "messageExpression": "'m'", "reason": "FieldValueInvalid", "fieldPath": ".a",
            "optionalOldSelf": true}],
        "$ref": "#/r", "$schema": "s", "id": "i", "definitions": {}, "dependencies": {},
        "patternProperties": {}, "additionalItems": true, "externalDocs": {"url": "u"}
    }"##;

    #[test]
    fn every_schema_keyword_reads_back_as_it_was_written() {
        let leaf = json!({"type": "string", "pattern": "^a+$", "maxLength": 3, "minLength": 1});
        let schema: Json =
            serde_json::from_str(&SCHEMA.replace("LEAF", &leaf.to_string())).unwrap();
        let read = JSONSchemaProps::from_json(&schema).unwrap();
        assert_eq!(serde_json::to_value(&read).unwrap(), schema);
    }

    #[test]
    fn a_whole_crd_reads_back_as_it_was_written() {
        let crd = json!({
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {
                "group": "stable.example.com", "scope": "Namespaced",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab",
                    "listKind": "CronTabList", "shortNames": ["ct"], "categories": ["all"]},
                "conversion": {"strategy": "None"},
                "preserveUnknownFields": false,
                "versions": [{
                    "name": "v1", "served": true, "storage": true, "deprecated": true,
                    "deprecationWarning": "old",
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.r",
                        "statusReplicasPath": ".status.r", "labelSelectorPath": ".status.s"}},
                    "additionalPrinterColumns": [{"name": "Spec", "type": "string",
                        "format": "f", "description": "d", "priority": 1, "jsonPath": ".spec"}],
                    "selectableFields": [{"jsonPath": ".spec.a"}],
                }],
            },
            "status": {
                "conditions": [{"type": "Established", "status": "True",
                    "lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "InitialNamesAccepted",
                    "message": "the initial names have been accepted"}],
                "acceptedNames": {"plural": "crontabs", "kind": "CronTab"},
                "storedVersions": ["v1"],
            },
        });
        let read = CustomResourceDefinition::from_json(&crd).unwrap();
        assert_eq!(serde_json::to_value(&read).unwrap(), crd);
    }

    #[test]
    fn absent_fields_read_as_gos_zero_values_and_a_wrong_type_is_refused() {
        let read = CustomResourceDefinition::from_json(&json!({"spec": {"versions": [{}]}}));
        let crd = read.unwrap();
        assert_eq!(crd.spec.group, "");
        assert!(!crd.spec.versions[0].served);
        let e = CustomResourceDefinition::from_json(&json!({"spec": {"group": 1}})).unwrap_err();
        assert_eq!(e.message, "spec: not a CustomResourceDefinition's spec");
    }
}
