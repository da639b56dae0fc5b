//! What `pkg/controller/statefulset/stateful_set_utils.go` knows: a pod's identity (name,
//! ordinal, hostname, labels), its claims and volumes, the claims' owners under the retention
//! policy, the pod states the controller waits on, and ControllerRevisions.

use std::sync::OnceLock;

use serde_json::{json, Map, Value as Json};

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::openapi::stored_kind;
use crate::sim::api::statefulset::{StatefulSet, DELETE};
use crate::sim::api::types::{Kind, Millis, ObjectMeta, OwnerReference, Pod, PodTemplateSpec};
use crate::sim::controllers::deployment::util::safe_encode_string;
use crate::sort::StableSort;

/// The label naming a pod of a StatefulSet (lets a Service select one replica).
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label holding a pod's ordinal (PodIndexLabel, GA in 1.32).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label naming the ControllerRevision a pod was made from.
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";

/// The kinds the controller reads besides pods, served as stored built-in kinds.
#[derive(Clone, Copy, Debug)]
pub struct Kinds {
    pub set: Kind,
    pub revision: Kind,
    pub claim: Kind,
}

/// The stored kinds, looked up once (the upstream definitions are compiled in, so they are
/// always found; None only if the definitions lost them, and then the controller does nothing).
pub fn kinds() -> Option<Kinds> {
    static KINDS: OnceLock<Option<Kinds>> = OnceLock::new();
    *KINDS.get_or_init(|| {
        Some(Kinds {
            set: Kind::Custom(stored_kind("apps", "StatefulSet")?),
            revision: Kind::Custom(stored_kind("apps", "ControllerRevision")?),
            claim: Kind::Custom(stored_kind("", "PersistentVolumeClaim")?),
        })
    })
}

/// `getParentNameAndOrdinal`: `web-2` is pod 2 of `web`; a name without `-<digits>` at its end
/// belongs to no set.
pub fn parent_and_ordinal(name: &str) -> Option<(&str, i32)> {
    let (parent, digits) = name.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, digits.parse().ok()?))
}

/// The ordinal of a pod, as `getOrdinal` (-1 for a name that does not parse).
pub fn ordinal_of(pod: &Pod) -> i32 {
    parent_and_ordinal(&pod.metadata.name).map_or(-1, |(_, o)| o)
}

pub fn pod_name(set: &StatefulSet, ordinal: i32) -> String {
    format!("{}-{ordinal}", set.metadata.name)
}

/// `getPersistentVolumeClaimName`: `<template>-<set>-<ordinal>`.
pub fn claim_name(set: &StatefulSet, template: &str, ordinal: i32) -> String {
    format!("{template}-{}-{ordinal}", set.metadata.name)
}

/// `isMemberOf`: the pod's name says it belongs to this set.
pub fn is_member_of(set: &StatefulSet, pod: &Pod) -> bool {
    parent_and_ordinal(&pod.metadata.name).is_some_and(|(p, _)| p == set.metadata.name)
}

/// `podInOrdinalRange`: `start ≤ ordinal < start + replicas`.
pub fn in_ordinal_range(set: &StatefulSet, ordinal: i32) -> bool {
    let start = set.start_ordinal();
    ordinal >= start && ordinal < start + set.replicas()
}

/// `identityMatches`.
pub fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    parent_and_ordinal(&pod.metadata.name).is_some_and(|(parent, ord)| {
        ord >= 0
            && parent == set.metadata.name
            && pod.metadata.name == pod_name(set, ord)
            && pod.metadata.namespace == set.metadata.namespace
            && pod
                .metadata
                .labels
                .get(POD_NAME_LABEL)
                .is_some_and(|v| *v == pod.metadata.name)
    })
}

/// The pod's volumes as JSON objects (the typed pod keeps them opaque).
fn volumes(pod: &Pod) -> Vec<Json> {
    match pod.spec.volumes.as_deref() {
        Some(Json::Array(v)) => v.clone(),
        _ => Vec::new(),
    }
}

/// `storageMatches`: each claim template is mounted from this pod's own claim.
pub fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some((_, ordinal)) = parent_and_ordinal(&pod.metadata.name) else {
        return false;
    };
    let vols = volumes(pod);
    set.spec.volume_claim_templates.iter().all(|t| {
        let name = &t.metadata.name;
        vols.iter().any(|v| {
            v["name"] == json!(name)
                && v["persistentVolumeClaim"]["claimName"] == json!(claim_name(set, name, ordinal))
        })
    })
}

/// `updateIdentity`: the name, namespace and the two identity labels.
pub fn update_identity(set: &StatefulSet, pod: &mut Pod) {
    let ordinal = ordinal_of(pod);
    pod.metadata.name = pod_name(set, ordinal).into();
    pod.metadata.namespace = set.metadata.namespace.clone();
    pod.metadata
        .labels
        .insert(POD_NAME_LABEL, pod.metadata.name.clone());
    pod.metadata
        .labels
        .insert(POD_INDEX_LABEL, ordinal.to_string());
}

/// `updateStorage`: a volume per claim template, mounted from the pod's claim, replacing any
/// volume of that name; the template's other volumes after them. Claims come in template order
/// (upstream ranges over a map, so its order varies from pass to pass).
pub fn update_storage(set: &StatefulSet, pod: &mut Pod) {
    let ordinal = ordinal_of(pod);
    let templates = &set.spec.volume_claim_templates;
    if templates.is_empty() {
        return;
    }
    let mut vols: Vec<Json> = templates
        .iter()
        .map(|t| {
            json!({"name": t.metadata.name, "persistentVolumeClaim":
                {"claimName": claim_name(set, &t.metadata.name, ordinal)}})
        })
        .collect();
    vols.extend(volumes(pod).into_iter().filter(|v| {
        !templates
            .iter()
            .any(|t| v["name"] == json!(t.metadata.name))
    }));
    pod.spec_mut().volumes = Some(Box::new(Json::Array(vols)));
}

/// `metav1.NewControllerRef(set, apps/v1 StatefulSet)`.
pub fn controller_ref(set: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: set.metadata.name.clone(),
        uid: set.metadata.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `newStatefulSetPod`: the template's pod with the set as controller, its identity (hostname =
/// pod name, subdomain = the governing Service) and its claims' volumes.
pub fn new_pod(set: &StatefulSet, ordinal: i32) -> Pod {
    let t = &set.spec.template;
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: pod_name(set, ordinal).into(),
            namespace: set.metadata.namespace.clone(),
            labels: t.metadata.labels.clone(),
            annotations: t.metadata.annotations.clone(),
            finalizers: t.metadata.finalizers.clone(),
            owner_references: vec![controller_ref(set)],
            ..Default::default()
        },
        spec: t.spec.clone().into(),
        status: Default::default(),
    };
    update_identity(set, &mut pod);
    pod.spec_mut().hostname = Some(Box::new(json!(pod.metadata.name)));
    if !set.spec.service_name.is_empty() {
        pod.spec_mut().subdomain = Some(Box::new(json!(set.spec.service_name)));
    }
    update_storage(set, &mut pod);
    pod
}

/// `newVersionedStatefulSetPod`: ordinals below the partition are made at the current revision,
/// the rest at the update revision.
pub fn new_versioned_pod(
    current: &StatefulSet,
    update: &StatefulSet,
    current_revision: &str,
    update_revision: &str,
    ordinal: i32,
) -> Pod {
    let below_partition = current.update_strategy() == crate::sim::api::statefulset::ROLLING_UPDATE
        && ordinal < current.start_ordinal() + current.partition();
    let (set, revision) = if below_partition {
        (current, current_revision)
    } else {
        (update, update_revision)
    };
    let mut pod = new_pod(set, ordinal);
    pod.metadata
        .labels
        .insert(CONTROLLER_REVISION_HASH, revision.to_string());
    pod
}

/// The revision a pod was made from (`getPodRevision`).
pub fn pod_revision(pod: &Pod) -> &str {
    pod.metadata
        .labels
        .get(CONTROLLER_REVISION_HASH)
        .map_or("", |v| v.as_str())
}

// ---------------------------------------------------------------- pod states

/// `isCreated`: the API server has given it a phase.
pub fn is_created(pod: &Pod) -> bool {
    !pod.status.phase.is_empty()
}

pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// `isRunningAndReady`.
pub fn is_running_and_ready(pod: &Pod) -> bool {
    pod.status.phase == "Running" && pod.is_ready()
}

/// `isRunningAndAvailable`: ready for `minReadySeconds`.
pub fn is_running_and_available(pod: &Pod, min_ready_seconds: i32, now: Millis) -> bool {
    pod.status.phase == "Running" && pod.is_available(i64::from(min_ready_seconds), now)
}

/// `isHealthy`.
pub fn is_healthy(pod: &Pod) -> bool {
    is_running_and_ready(pod) && !is_terminating(pod)
}

/// `isFailed` or `isSucceeded`: a pod the controller deletes to make it again.
pub fn has_ended(pod: &Pod) -> bool {
    matches!(pod.status.phase.as_str(), "Failed" | "Succeeded")
}

// ---------------------------------------------------------------- claims

/// `getPersistentVolumeClaims`: each claim template copied into the set's namespace under the
/// pod's claim name, with the set's `matchLabels` added to its labels.
pub fn claims_for(set: &StatefulSet, ordinal: i32, kind: Kind) -> Vec<CustomObject> {
    let Some(ck) = kind.custom() else {
        return Vec::new();
    };
    set.spec
        .volume_claim_templates
        .iter()
        .map(|t| {
            let mut metadata = t.metadata.clone();
            metadata.name = claim_name(set, &t.metadata.name, ordinal).into();
            metadata.namespace = set.metadata.namespace.clone();
            for (k, v) in set.spec.selector.match_labels.iter() {
                metadata.labels.insert(k.clone(), v.clone());
            }
            let mut content = Map::new();
            content.insert("spec".into(), t.spec.clone());
            CustomObject {
                kind: ck,
                api_version: "v1".into(),
                metadata,
                content,
            }
        })
        .collect()
}

/// The ownerReferences the retention policy wants on a pod's claim
/// (`updateClaimOwnerRefForSetAndPod`): the set's when `whenDeleted` is Delete and the pod is in
/// range, the pod's when `whenScaled` is Delete and the pod is condemned; the claim's other
/// owners are kept.
pub fn claim_owners(
    set: &StatefulSet,
    pod: &Pod,
    condemned: bool,
    current: &[OwnerReference],
) -> Vec<OwnerReference> {
    let (when_deleted, when_scaled) = set.retention();
    let mut refs: Vec<OwnerReference> = current
        .iter()
        .filter(|r| r.uid != set.metadata.uid && !(r.kind == "Pod" && r.name == pod.metadata.name))
        .cloned()
        .collect();
    let set_owns = when_deleted == DELETE && !(condemned && when_scaled == DELETE);
    if set_owns {
        refs.push(controller_ref(set));
    }
    if condemned && when_scaled == DELETE && !pod.metadata.uid.is_empty() {
        refs.push(OwnerReference {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            controller: None,
            block_owner_deletion: None,
        });
    }
    refs
}

/// `isClaimOwnerUpToDate`: the claim's owners are the ones the policy wants (in any order).
pub fn claim_owners_match(current: &[OwnerReference], wanted: &[OwnerReference]) -> bool {
    current.len() == wanted.len()
        && wanted
            .iter()
            .all(|w| current.iter().any(|c| c.uid == w.uid))
}

/// `PodClaimIsStale`: under `whenScaled: Delete` a claim still owned by an earlier pod of the
/// same name is waiting for the garbage collector; the pod must not be made with it.
pub fn claim_is_stale(claim: &ObjectMeta, pod_name: &str, pod_uid: &str) -> bool {
    claim
        .owner_references
        .iter()
        .any(|r| r.kind == "Pod" && r.name == pod_name && r.uid != pod_uid)
}

// ---------------------------------------------------------------- revisions

/// One ControllerRevision of a set, as the controller reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Revision {
    pub name: String,
    pub revision: i64,
    pub data: Json,
    pub meta: ObjectMeta,
}

impl Revision {
    /// Reads a stored ControllerRevision.
    pub fn from_custom(obj: &CustomObject) -> Revision {
        Revision {
            name: obj.metadata.name.to_string(),
            revision: obj
                .content
                .get("revision")
                .and_then(Json::as_i64)
                .unwrap_or(0),
            data: obj.content.get("data").cloned().unwrap_or(Json::Null),
            meta: obj.metadata.clone(),
        }
    }

    /// The pod template this revision records (`ApplyRevision`'s effect on the template).
    pub fn template(&self) -> Option<PodTemplateSpec> {
        let mut t = self.data.get("spec")?.get("template")?.clone();
        if let Json::Object(m) = &mut t {
            m.remove("$patch");
        }
        let findings = Default::default();
        crate::sim::api::strict::decode_as(&t, &findings).ok()
    }

    /// The object to create.
    pub fn to_custom(&self, kind: Kind) -> Option<CustomObject> {
        let mut content = Map::new();
        content.insert("data".into(), self.data.clone());
        content.insert("revision".into(), json!(self.revision));
        Some(CustomObject {
            kind: kind.custom()?,
            api_version: "apps/v1".into(),
            metadata: self.meta.clone(),
            content,
        })
    }
}

/// The ControllerRevisions among `objects` that `set` controls, in history order
/// (`SortControllerRevisions`: by revision number, then creation time, then name).
pub fn revisions_of<'a>(
    set: &StatefulSet,
    objects: impl Iterator<Item = &'a std::rc::Rc<crate::sim::api::types::Object>>,
) -> Vec<Revision> {
    let mut revisions: Vec<Revision> = objects
        .filter(|o| {
            o.meta()
                .controller_ref()
                .is_some_and(|r| r.uid == set.metadata.uid)
        })
        .filter_map(|o| o.as_custom().map(Revision::from_custom))
        .collect();
    revisions.stable_sort_by(|a, b| {
        (a.revision, a.meta.creation_timestamp, &a.name).cmp(&(
            b.revision,
            b.meta.creation_timestamp,
            &b.name,
        ))
    });
    revisions
}

/// `getPatch`: the set's template under `spec`, marked to replace what it patches. Maps are
/// written in key order, as Go's encoder writes them.
pub fn revision_data(template: &Json) -> Json {
    let mut t = template.clone();
    if let Json::Object(m) = &mut t {
        m.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": t}})
}

/// `HashControllerRevision`: FNV-32 (not 32a) over the data and the collision count in decimal,
/// printed in decimal and mapped onto the safe alphabet. The bytes are serde_json's, so the
/// hash has the real shape but not the value a real cluster would compute.
pub fn hash_revision(data: &Json, collision_count: i32) -> String {
    let mut h: u32 = 0x811c_9dc5;
    let bytes = serde_json::to_vec(data).unwrap_or_default();
    for b in bytes
        .iter()
        .chain(collision_count.to_string().as_bytes().iter())
    {
        h = h.wrapping_mul(0x0100_0193);
        h ^= u32::from(*b);
    }
    safe_encode_string(&h.to_string())
}

/// `newRevision`: the set's current template as revision `number`, named `<set>-<hash>`, with the
/// template's labels, the set's annotations and the set as controller.
pub fn new_revision(
    set: &StatefulSet,
    template: &Json,
    number: i64,
    collision_count: i32,
) -> Revision {
    let data = revision_data(template);
    let name = format!(
        "{}-{}",
        set.metadata.name,
        hash_revision(&data, collision_count)
    );
    Revision {
        meta: ObjectMeta {
            name: name.as_str().into(),
            namespace: set.metadata.namespace.clone(),
            labels: set.spec.template.metadata.labels.clone(),
            annotations: set.metadata.annotations.clone(),
            owner_references: vec![controller_ref(set)],
            ..Default::default()
        },
        name,
        revision: number,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pods_ordinal_is_the_number_after_its_last_dash() {
        assert_eq!(parent_and_ordinal("web-0"), Some(("web", 0)));
        assert_eq!(parent_and_ordinal("my-db-12"), Some(("my-db", 12)));
        assert_eq!(parent_and_ordinal("web"), None);
        assert_eq!(parent_and_ordinal("web-x1"), None);
        assert_eq!(parent_and_ordinal("web-"), None);
    }

    #[test]
    fn revision_hashes_are_fnv32_in_the_safe_alphabet_and_move_with_the_collision_count() {
        let data = json!({"spec": {"template": {"$patch": "replace"}}});
        let a = hash_revision(&data, 0);
        assert!(a
            .bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)));
        assert_ne!(a, hash_revision(&data, 1));
        assert_eq!(a, hash_revision(&data, 0));
    }
}
