//! kind's local-path provisioner (`rancher.io/local-path`), an external provisioner: for a claim
//! the PV controller handed to it, it makes a volume on the node the scheduler chose (a
//! directory there, so the volume is reachable from that node only) and leaves the binding to
//! the PV controller, as `sig-storage-lib-external-provisioner` does for it.
//!
//! A claim is provisioned over simulated time: `Provisioning` when it starts, the volume
//! [`PROVISIONING_TIME`] later (upstream runs a helper pod to make the directory), then
//! `ProvisioningSucceeded`. Local volumes need a node, so a claim without the scheduler's
//! `selected-node` annotation (a class with Immediate binding) fails as the real one does.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Map};

use super::{claim_class, claim_ref_json, claim_request, event, kinds, watched, Kinds};
use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::storage::{
    str_at, LOCAL_PATH_PROVISIONER, PROVISIONED_BY, SELECTED_NODE, STORAGE_PROVISIONER,
};
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, ObjectMeta};
use crate::sim::api::{ApiRequest, ApiResult, WatchEvent};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};

/// How long making a volume takes (the helper pod that creates its directory).
pub const PROVISIONING_TIME: Millis = 2_000;

/// Where local-path keeps its volumes on a node.
const VOLUME_DIR: &str = "/var/local-path-provisioner";

/// The local-path provisioner.
#[derive(Debug, Default)]
pub struct LocalPathProvisioner {
    /// Claims being provisioned, and when it started.
    started: BTreeMap<ObjectKey, Millis>,
}

impl LocalPathProvisioner {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The volume's name: `pvc-<claim uid>`.
pub fn volume_name(claim: &CustomObject) -> String {
    format!("pvc-{}", claim.metadata.uid)
}

/// The volume for `claim` on `node`, of `class` (its reclaim policy).
fn new_volume(
    claim: &CustomObject,
    class: &CustomObject,
    node: &str,
    k: Kinds,
) -> Option<CustomObject> {
    let name = volume_name(claim);
    let mut metadata = ObjectMeta {
        name: name.clone(),
        ..Default::default()
    };
    metadata
        .annotations
        .insert(PROVISIONED_BY.into(), LOCAL_PATH_PROVISIONER.into());
    metadata
        .annotations
        .insert("local.path.provisioner/selected-node".into(), node.into());
    let spec = claim.content.get("spec");
    let mut content = Map::new();
    content.insert(
        "spec".into(),
        json!({
            "capacity": {"storage": claim_request(claim).unwrap_or("0")},
            "accessModes": spec.and_then(|s| s.get("accessModes")).cloned().unwrap_or(json!([])),
            "persistentVolumeReclaimPolicy": str_at(class, &["reclaimPolicy"]).unwrap_or("Delete"),
            "storageClassName": claim_class(claim),
            "volumeMode": spec.and_then(|s| s.get("volumeMode")).cloned().unwrap_or(json!("Filesystem")),
            "claimRef": claim_ref_json(claim),
            "hostPath": {
                "path": format!("{VOLUME_DIR}/{name}_{}_{}", claim.metadata.namespace, claim.metadata.name),
                "type": "DirectoryOrCreate",
            },
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
            ]}]}},
        }),
    );
    Some(CustomObject {
        kind: k.volume.custom()?,
        api_version: "v1".into(),
        metadata,
        content,
    })
}

impl Controller for LocalPathProvisioner {
    fn id(&self) -> ComponentId {
        ComponentId::Provisioner
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        watched()
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Arc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        let Some(k) = kinds() else {
            return Vec::new();
        };
        let key = ev.object.key();
        (key.kind == k.claim).then_some(key).into_iter().collect()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        kinds().map_or_else(Vec::new, |k| cache.list(k.claim).map(|o| o.key()).collect())
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let Some(k) = kinds() else {
            return out;
        };
        let claim = ctx.cache.get(key).and_then(|o| o.as_custom());
        let mine = claim.is_some_and(|c| {
            c.metadata
                .annotations
                .get(STORAGE_PROVISIONER)
                .map(String::as_str)
                == Some(LOCAL_PATH_PROVISIONER)
                && str_at(c, &["spec", "volumeName"]).is_none_or(str::is_empty)
                && c.metadata.deletion_timestamp.is_none()
        });
        let (Some(claim), true) = (claim, mine) else {
            self.started.remove(key);
            return out;
        };
        if ctx
            .cache
            .get(&ObjectKey::new(k.volume, "", &volume_name(claim)))
            .is_some()
        {
            self.started.remove(key);
            return out;
        }
        let class_name = claim_class(claim);
        let class = ctx
            .cache
            .get(&ObjectKey::new(k.class, "", class_name))
            .and_then(|o| o.as_custom());
        let node = claim.metadata.annotations.get(SELECTED_NODE);
        let (Some(class), Some(node)) = (class, node) else {
            out.event(event(
                claim,
                key.clone(),
                "Warning",
                "ProvisioningFailed",
                format!("failed to provision volume with StorageClass \"{class_name}\": configuration error, no node was specified"),
            ));
            return out;
        };
        let diff = match self.started.get(key) {
            None => {
                self.started.insert(key.clone(), ctx.now);
                out.event(event(
                    claim,
                    key.clone(),
                    "Normal",
                    "Provisioning",
                    format!(
                        "External provisioner is provisioning volume for claim \"{}/{}\"",
                        claim.metadata.namespace, claim.metadata.name
                    ),
                ));
                out.requeue(PROVISIONING_TIME);
                format!("making a volume on {node}")
            }
            Some(&t) if ctx.now < t + PROVISIONING_TIME => {
                out.requeue(t + PROVISIONING_TIME - ctx.now);
                format!("making a volume on {node}")
            }
            Some(_) => match new_volume(claim, class, node, k) {
                Some(v) => {
                    out.request(ApiRequest::Create(Object::Custom(v)));
                    format!("created {} on {node}", volume_name(claim))
                }
                None => String::new(),
            },
        };
        out.record = Some(ReconcileRecord {
            observed: format!("claim {} pending", key.name),
            desired: "a volume for it".into(),
            diff,
        });
        out
    }

    fn events_for_response(&mut self, req: &ApiRequest, result: &ApiResult) -> Vec<EventRecord> {
        let (ApiRequest::Create(Object::Custom(v)), Some(k)) = (req, kinds()) else {
            return Vec::new();
        };
        let Some(claim) = v.content.get("spec").and_then(|s| s.get("claimRef")) else {
            return Vec::new();
        };
        let field = |f: &str| {
            claim
                .get(f)
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let key = ObjectKey::new(k.claim, &field("namespace"), &field("name"));
        self.started.remove(&key);
        let (type_, reason, message) = match result {
            Ok(_) => (
                "Normal",
                "ProvisioningSucceeded",
                format!("Successfully provisioned volume {}", v.metadata.name),
            ),
            Err(e) => (
                "Warning",
                "ProvisioningFailed",
                format!(
                    "failed to provision volume with StorageClass \"{}\": {}",
                    str_at(v, &["spec", "storageClassName"]).unwrap_or_default(),
                    e.message
                ),
            ),
        };
        vec![EventRecord {
            type_,
            reason: reason.into(),
            message,
            object: key,
            uid: field("uid"),
            field_path: String::new(),
        }]
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(LocalPathProvisioner::new()))
    }
}
