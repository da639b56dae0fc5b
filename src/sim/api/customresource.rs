//! The API server's strategy for CustomResourceDefinitions and the custom objects they serve:
//! what a create or update stores (`apiextensions-apiserver`'s registry strategies), as pure
//! functions the store calls.
//!
//! Simplification (said in ARCHITECTURE.md): the naming and establishing controllers that run
//! inside a real API server answer within milliseconds; here a CRD's `NamesAccepted` and
//! `Established` conditions are decided as it is stored, so its kind is served from the next
//! request on.

use serde_json::Value as Json;

use super::apiextensions::{
    CustomObject, CustomResourceDefinition, CustomResourceDefinitionCondition,
};
use super::schema;
use super::types::{Kind, Time};
use super::validation::invalid_status_message;
use super::{ApiError, StatusReason};

fn condition(
    type_: &str,
    ok: bool,
    reason: &str,
    message: &str,
    now: Time,
) -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition {
        type_: type_.into(),
        status: if ok { "True" } else { "False" }.into(),
        last_transition_time: Some(now),
        reason: reason.into(),
        message: message.into(),
    }
}

/// A new CRD as the registry stores it: no status but what the server decides, its storage
/// version recorded, and its names accepted unless another CRD of the group holds them.
pub fn prepare_crd_create<'a>(
    crd: &mut CustomResourceDefinition,
    others: impl Iterator<Item = &'a CustomResourceDefinition>,
    now: Time,
) {
    crd.status = Default::default();
    if let Some(v) = crd.storage_version() {
        crd.status.stored_versions = vec![v.name.clone()];
    }
    let names = &crd.spec.names;
    let mut conflict = None;
    for o in others.filter(|o| o.spec.group == crd.spec.group) {
        let taken = &o.status.accepted_names;
        if taken.plural == names.plural || taken.singular == names.plural {
            conflict = Some((
                "PluralConflict",
                format!("{:?} is already in use", names.plural),
            ));
        } else if taken.kind == names.kind {
            conflict = Some((
                "KindConflict",
                format!("{:?} is already in use", names.kind),
            ));
        }
        if conflict.is_some() {
            break;
        }
    }
    match conflict {
        None => {
            crd.status.accepted_names = names.clone();
            crd.status.conditions = vec![
                condition(
                    "NamesAccepted",
                    true,
                    "NoConflicts",
                    "no conflicts found",
                    now,
                ),
                condition(
                    "Established",
                    true,
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                    now,
                ),
            ];
        }
        Some((reason, message)) => {
            crd.status.conditions = vec![
                condition("NamesAccepted", false, reason, &message, now),
                condition(
                    "Established",
                    false,
                    "NotAccepted",
                    "not all names are accepted",
                    now,
                ),
            ];
        }
    }
}

/// 404 for a kind or version the server does not serve.
pub fn not_served() -> ApiError {
    ApiError {
        reason: StatusReason::NotFound,
        message: "the server could not find the requested resource".into(),
    }
}

/// Whether the CRD serves objects now: Established and not being deleted.
pub fn serving(crd: &CustomResourceDefinition) -> bool {
    crd.established() && crd.metadata.deletion_timestamp.is_none()
}

/// Checks and completes a custom object for storage: a served version, the status subresource's
/// rules (`old` is the stored object on an update, `status` a write to `/status`), pruning,
/// schema defaults and validation. Returns the fields pruned (the API server's warnings).
pub fn admit(
    obj: &mut CustomObject,
    crd: &CustomResourceDefinition,
    old: Option<&CustomObject>,
    status: bool,
) -> Result<Vec<String>, ApiError> {
    if crd.metadata.deletion_timestamp.is_some() && old.is_none() {
        return Err(ApiError {
            reason: StatusReason::MethodNotAllowed,
            message: "create not allowed while custom resource definition is terminating".into(),
        });
    }
    if !crd.established() {
        return Err(not_served());
    }
    let version = obj
        .api_version
        .rsplit_once('/')
        .map_or("", |(_, v)| v)
        .to_string();
    let group_ok = obj
        .api_version
        .rsplit_once('/')
        .is_some_and(|(g, _)| g == crd.spec.group);
    let Some(served) = crd.served_version(&version).filter(|_| group_ok) else {
        return Err(not_served());
    };
    let subresource = crd.has_status_subresource();
    if status && !subresource {
        return Err(not_served());
    }
    split_status(obj, old, status, subresource);
    let mut pruned = Vec::new();
    let Some(schema) = served
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
    else {
        return Ok(pruned);
    };
    let mut doc = Json::Object(std::mem::take(&mut obj.content));
    pruned = schema::prune(&mut doc, schema);
    schema::apply_defaults(&mut doc, schema);
    let errs = schema::validate_value(&doc, schema);
    if let Json::Object(m) = doc {
        obj.content = m;
    }
    if !errs.is_empty() {
        return Err(ApiError {
            reason: StatusReason::Invalid,
            message: invalid_status_message(Kind::Custom(obj.kind), &obj.metadata.name, &errs),
        });
    }
    obj.metadata.generation = next_generation(obj, old, subresource);
    Ok(pruned)
}

/// The status subresource's rules: a write to `/status` (`status`) changes only status and keeps
/// the rest of the stored object (`old`); any other write keeps the stored status.
fn split_status(
    obj: &mut CustomObject,
    old: Option<&CustomObject>,
    status: bool,
    subresource: bool,
) {
    match (old, status) {
        (Some(old), true) => {
            let new_status = obj.content.get("status").cloned();
            obj.content = old.content.clone();
            match new_status {
                Some(s) => obj.content.insert("status".into(), s),
                None => obj.content.remove("status"),
            };
            obj.metadata.labels = old.metadata.labels.clone();
            obj.metadata.annotations = old.metadata.annotations.clone();
            obj.metadata.finalizers = old.metadata.finalizers.clone();
            obj.metadata.owner_references = old.metadata.owner_references.clone();
        }
        (Some(old), false) if subresource => match old.content.get("status") {
            Some(s) => {
                obj.content.insert("status".into(), s.clone());
            }
            None => {
                obj.content.remove("status");
            }
        },
        (None, _) if subresource => {
            obj.content.remove("status");
        }
        _ => {}
    }
}

/// `metadata.generation` after a write: 1 on create, one more on any change outside metadata
/// (and status, with the subresource).
fn next_generation(obj: &CustomObject, old: Option<&CustomObject>, subresource: bool) -> i64 {
    let Some(old) = old else {
        return 1;
    };
    let outside = |o: &CustomObject| {
        let mut c = o.content.clone();
        if subresource {
            c.remove("status");
        }
        c
    };
    if outside(old) != outside(obj) {
        old.metadata.generation + 1
    } else {
        old.metadata.generation
    }
}

/// Completes an object of a built-in kind the playground stores without simulating it
/// ([`super::openapi::stored_kinds`]): the status subresource where the kind has a `status`,
/// a generation where it has a `spec`, and the conversions its registry makes on every write
/// (a Secret's `stringData` merged into `data`, its `type` defaulted to `Opaque`). Its value
/// validation is not simulated, except for the kinds a controller acts on (a StatefulSet's
/// defaults and rules; a claim's, with `default_class` from the DefaultStorageClass admission
/// plugin); Go's decoding already checked its types.
pub fn admit_builtin(
    obj: &mut CustomObject,
    old: Option<&CustomObject>,
    status: bool,
    default_class: Option<&str>,
) -> Result<(), ApiError> {
    let Some(resource) = super::openapi::resource_of(obj.kind) else {
        return Err(not_served());
    };
    let subresource = resource.has_field("status");
    if status && !subresource {
        return Err(not_served());
    }
    split_status(obj, old, status, subresource);
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("", "Secret") => secret_conversions(obj),
        ("apps", "StatefulSet") => super::statefulset::admit(obj, old, status)?,
        ("batch", "Job") => super::job::admit(obj, old, status)?,
        ("", "PersistentVolumeClaim") => {
            super::storage::default_claim(obj, old.is_none(), default_class);
            if old.is_none() {
                super::storage::protect(&mut obj.metadata, super::storage::PVC_PROTECTION);
            }
        }
        ("", "PersistentVolume") => {
            super::storage::default_volume(obj);
            if old.is_none() {
                super::storage::protect(&mut obj.metadata, super::storage::PV_PROTECTION);
            }
        }
        ("storage.k8s.io", "StorageClass") => super::storage::default_class(obj),
        _ => {}
    }
    if resource.has_field("spec") {
        obj.metadata.generation = next_generation(obj, old, subresource);
    }
    Ok(())
}

/// What converting a v1 Secret stores: `stringData` is write-only, its values base64-encoded
/// into `data` over any of the same key; `type` defaults to `Opaque`.
fn secret_conversions(obj: &mut CustomObject) {
    if let Some(Json::Object(strings)) = obj.content.remove("stringData") {
        let data = obj
            .content
            .entry("data")
            .or_insert_with(|| Json::Object(Default::default()));
        if !data.is_object() {
            *data = Json::Object(Default::default());
        }
        if let Json::Object(data) = data {
            for (k, v) in strings {
                let text = v.as_str().unwrap_or_default();
                data.insert(k, Json::String(super::base64::encode_std(text.as_bytes())));
            }
        }
    }
    let typed = obj
        .content
        .get("type")
        .and_then(Json::as_str)
        .is_some_and(|t| !t.is_empty());
    if !typed {
        obj.content
            .insert("type".into(), Json::String("Opaque".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::apiextensions::CustomKind;

    fn crd(yaml_json: Json) -> CustomResourceDefinition {
        CustomResourceDefinition::from_json(&yaml_json).expect("a CRD")
    }

    fn crontab_crd(status_subresource: bool) -> CustomResourceDefinition {
        let mut c = crd(serde_json::json!({
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {
                "group": "stable.example.com",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "listKind": "CronTabList"},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {
                                "cronSpec": {"type": "string"},
                                "image": {"type": "string"},
                                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}
                            }, "required": ["image"]},
                            "status": {"type": "object", "properties": {"ready": {"type": "integer"}}}
                        }
                    }},
                    "subresources": if status_subresource { serde_json::json!({"status": {}}) } else { serde_json::json!({}) }
                }]
            }
        }));
        prepare_crd_create(&mut c, std::iter::empty(), Time(0));
        c
    }

    fn crontab(spec: Json, status: Option<Json>) -> CustomObject {
        let kind = CustomKind::intern("stable.example.com", "CronTab", "crontabs", true, "v1")
            .expect("interned");
        let mut content = serde_json::Map::new();
        content.insert("spec".into(), spec);
        if let Some(s) = status {
            content.insert("status".into(), s);
        }
        CustomObject {
            kind,
            api_version: "stable.example.com/v1".into(),
            metadata: crate::sim::api::types::ObjectMeta {
                name: "my-cron".into(),
                namespace: "default".into(),
                ..Default::default()
            },
            content,
        }
    }

    #[test]
    fn a_new_crd_is_established_with_its_names_accepted_and_its_storage_version_recorded() {
        let c = crontab_crd(false);
        assert!(c.established());
        assert_eq!(c.status.stored_versions, ["v1"]);
        let names = c.condition("NamesAccepted").expect("a condition");
        assert_eq!(
            (names.reason.as_str(), names.message.as_str()),
            ("NoConflicts", "no conflicts found")
        );
        assert_eq!(c.status.accepted_names.kind, "CronTab");
    }

    #[test]
    fn a_crd_whose_plural_another_crd_of_the_group_holds_is_not_established() {
        let first = crontab_crd(false);
        let mut second = first.clone();
        second.spec.names.kind = "OtherTab".into();
        prepare_crd_create(&mut second, std::iter::once(&first), Time(0));
        assert!(!second.established());
        let c = second.condition("NamesAccepted").expect("a condition");
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "PluralConflict")
        );
    }

    #[test]
    fn the_schema_defaults_prunes_and_validates_with_the_api_servers_words() {
        let c = crontab_crd(false);
        let mut o = crontab(serde_json::json!({"image": "x", "extra": 1}), None);
        let pruned = admit(&mut o, &c, None, false).expect("admitted");
        assert_eq!(pruned, ["spec.extra"]);
        assert_eq!(o.content["spec"]["replicas"], 1);
        assert_eq!(o.metadata.generation, 1);

        let mut bad = crontab(serde_json::json!({"image": "x", "replicas": "three"}), None);
        let e = admit(&mut bad, &c, None, false).expect_err("refused");
        assert_eq!(e.reason, StatusReason::Invalid);
        assert_eq!(
            e.message,
            r#"CronTab.stable.example.com "my-cron" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        );
        let mut big = crontab(serde_json::json!({"image": "x", "replicas": 15}), None);
        let e = admit(&mut big, &c, None, false).expect_err("refused");
        assert!(e.message.ends_with("spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10"), "{}", e.message);
        let mut missing = crontab(serde_json::json!({}), None);
        let e = admit(&mut missing, &c, None, false).expect_err("refused");
        assert!(
            e.message.ends_with("spec.image: Required value"),
            "{}",
            e.message
        );
    }

    #[test]
    fn with_the_status_subresource_the_main_resource_ignores_status_and_status_ignores_the_rest() {
        let c = crontab_crd(true);
        let mut created = crontab(
            serde_json::json!({"image": "x"}),
            Some(serde_json::json!({"ready": 3})),
        );
        admit(&mut created, &c, None, false).expect("admitted");
        assert!(
            !created.content.contains_key("status"),
            "create drops status"
        );

        let mut old = created.clone();
        old.content
            .insert("status".into(), serde_json::json!({"ready": 1}));
        let mut main = crontab(
            serde_json::json!({"image": "y"}),
            Some(serde_json::json!({"ready": 9})),
        );
        admit(&mut main, &c, Some(&old), false).expect("admitted");
        assert_eq!(
            main.content["status"]["ready"], 1,
            "the main resource keeps the old status"
        );
        assert_eq!(
            main.metadata.generation, 2,
            "a spec change moves the generation"
        );

        let mut status = crontab(
            serde_json::json!({"image": "z"}),
            Some(serde_json::json!({"ready": 2})),
        );
        admit(&mut status, &c, Some(&old), true).expect("admitted");
        assert_eq!(
            status.content["spec"]["image"], "x",
            "/status keeps the spec"
        );
        assert_eq!(status.content["status"]["ready"], 2);
        assert_eq!(
            status.metadata.generation, 1,
            "a status write keeps the generation"
        );
    }

    #[test]
    fn without_the_status_subresource_status_is_part_of_the_object_and_moves_the_generation() {
        let c = crontab_crd(false);
        let mut old = crontab(serde_json::json!({"image": "x"}), None);
        admit(&mut old, &c, None, false).expect("admitted");
        let mut new = old.clone();
        new.content
            .insert("status".into(), serde_json::json!({"ready": 1}));
        admit(&mut new, &c, Some(&old), false).expect("admitted");
        assert_eq!(new.metadata.generation, 2);
        let mut to_status = new.clone();
        let e = admit(&mut to_status, &c, Some(&new), true).expect_err("no /status endpoint");
        assert_eq!(e.reason, StatusReason::NotFound);
    }

    #[test]
    fn an_unserved_version_or_a_terminating_crd_refuses_creates() {
        let mut c = crontab_crd(false);
        let mut o = crontab(serde_json::json!({"image": "x"}), None);
        o.api_version = "stable.example.com/v2".into();
        assert_eq!(
            admit(&mut o, &c, None, false).expect_err("404").reason,
            StatusReason::NotFound
        );
        c.metadata.deletion_timestamp = Some(Time(1000));
        let mut o = crontab(serde_json::json!({"image": "x"}), None);
        let e = admit(&mut o, &c, None, false).expect_err("405");
        assert_eq!(e.reason, StatusReason::MethodNotAllowed);
    }
}
