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
                uid: format!("u-{name}"),
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinition {
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: CustomResourceDefinitionSpec,
    #[serde(default)]
    pub status: CustomResourceDefinitionStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionSpec {
    pub group: String,
    pub names: CustomResourceDefinitionNames,
    pub scope: String,
    pub versions: Vec<CustomResourceDefinitionVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversion: Option<CustomResourceConversion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_unknown_fields: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionNames {
    pub plural: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub singular: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub list_kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceConversion {
    pub strategy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Json>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<CustomResourceValidation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<CustomResourceSubresources>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_printer_columns: Vec<CustomResourceColumnDefinition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectable_fields: Vec<SelectableField>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectableField {
    pub json_path: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceValidation {
    #[serde(
        rename = "openAPIV3Schema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_api_v3_schema: Option<JSONSchemaProps>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresources {
    /// `{}` turns the status subresource on; its content is unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<CustomResourceSubresourceScale>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresourceScale {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceColumnDefinition {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub priority: i32,
    pub json_path: String,
}

/// An OpenAPI v3 schema node as a CRD writes it. The keywords Kubernetes refuses in a
/// structural schema are kept so that they are refused with its words, not as unknown fields.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JSONSchemaProps {
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclusive_maximum: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclusive_minimum: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub unique_items: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    #[serde(rename = "enum", default, skip_serializing_if = "Vec::is_empty")]
    pub enum_: Vec<Json>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<JSONSchemaProps>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, JSONSchemaProps>,
    /// A schema for every other key, or `true`/`false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<Json>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all_of: Vec<JSONSchemaProps>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<JSONSchemaProps>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<JSONSchemaProps>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<JSONSchemaProps>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub nullable: bool,
    #[serde(
        rename = "x-kubernetes-preserve-unknown-fields",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub x_preserve_unknown_fields: Option<bool>,
    #[serde(
        rename = "x-kubernetes-embedded-resource",
        default,
        skip_serializing_if = "is_false"
    )]
    pub x_embedded_resource: bool,
    #[serde(
        rename = "x-kubernetes-int-or-string",
        default,
        skip_serializing_if = "is_false"
    )]
    pub x_int_or_string: bool,
    #[serde(
        rename = "x-kubernetes-list-type",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub x_list_type: Option<String>,
    #[serde(
        rename = "x-kubernetes-list-map-keys",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub x_list_map_keys: Vec<String>,
    #[serde(
        rename = "x-kubernetes-map-type",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub x_map_type: Option<String>,
    #[serde(
        rename = "x-kubernetes-validations",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub x_validations: Vec<ValidationRule>,
    #[serde(rename = "$ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_: Option<Json>,
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema_: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definitions: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern_properties: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_items: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_docs: Option<Json>,
}

/// One `x-kubernetes-validations` rule (CEL): stored, not yet enforced by the playground.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRule {
    pub rule: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message_expression: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional_old_self: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<CustomResourceDefinitionCondition>,
    #[serde(default)]
    pub accepted_names: CustomResourceDefinitionNames,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_versions: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
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
