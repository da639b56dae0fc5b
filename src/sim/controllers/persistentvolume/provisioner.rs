//! The cluster's external provisioners, as `sig-storage-lib-external-provisioner` runs them for
//! two drivers: kind's local-path provisioner (`rancher.io/local-path`: a directory on the node
//! the scheduler chose, reachable from that node only) and the simulated cloud's zonal disk
//! driver (`disk.csi.kubeloop.dev`: a disk in that node's zone, reachable from every node of the
//! zone), whose controller plugin also runs the CSI external-resizer and external-attacher. For a claim the PV
//! controller handed to it, a provisioner makes a volume and leaves the binding to the PV
//! controller.
//!
//! A claim is provisioned over simulated time: `Provisioning` when it starts, the volume
//! [`PROVISIONING_TIME`] later, then `ProvisioningSucceeded` (or `ProvisioningFailed` when the
//! storage system refuses, retried with the library's back-off). Both bind on first consumer:
//! a claim without the scheduler's `selected-node` annotation (a class with Immediate binding)
//! fails as the real local-path one does. Expansion is in [`super::resizer`], attaching disks to
//! nodes in [`super::attacher`].

use std::rc::Rc;

use serde_json::{json, Map};

use super::attacher::{reconcile_sync_key, Attacher, RECONCILE_SYNC_PERIOD};
use super::resizer::Resizer;
use super::{claim_class, claim_ref_json, claim_request, event, kinds, watched, Kinds};
use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::storage::{
    attachment_kind, str_at, DISK_DRIVER, LOCAL_PATH_PROVISIONER, PROVISIONED_BY, SELECTED_NODE,
    STORAGE_PROVISIONER, ZONE_LABEL,
};
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, ObjectMeta, Str};
use crate::sim::api::{ApiRequest, ApiResult, WatchEvent};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sim::machinery::storage_backend::StorageCall;
use crate::vec_map::SlotMap;

/// How long making a volume takes (local-path's helper pod, a cloud's CreateVolume).
pub const PROVISIONING_TIME: Millis = 2_000;

/// The provisioner library's first retry after a failed provisioning, doubled up to
/// [`RETRY_MAX`] (its rate limiter: 15 s… here shortened to keep faults watchable).
const RETRY_INITIAL: Millis = 5_000;
const RETRY_MAX: Millis = 300_000;

/// Where local-path keeps its volumes on a node.
const VOLUME_DIR: &str = "/var/local-path-provisioner";

/// Which storage a provisioner makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// kind's local-path: a directory on one node.
    LocalPath,
    /// The zonal disk CSI driver: a disk in one zone, growable online.
    Disk,
}

impl Driver {
    /// The provisioner name a StorageClass gives.
    pub fn name(self) -> &'static str {
        match self {
            Driver::LocalPath => LOCAL_PATH_PROVISIONER,
            Driver::Disk => DISK_DRIVER,
        }
    }
}

/// One driver's external provisioner (and, for the disk driver, its resizer).
#[derive(Clone, Debug)]
pub struct ExternalProvisioner {
    driver: Driver,
    /// Claims being provisioned: when it started, or when a failed attempt may be retried.
    started: SlotMap<ObjectKey, Attempt>,
    resizer: Resizer,
    attacher: Attacher,
}

/// Where a claim's provisioning is; `delay` is the back-off of the last failure (0: none yet).
#[derive(Clone, Copy, Debug)]
enum Attempt {
    Since { at: Millis, delay: Millis },
    RetryAt { at: Millis, delay: Millis },
}

impl ExternalProvisioner {
    pub fn new(driver: Driver) -> Self {
        ExternalProvisioner {
            driver,
            started: SlotMap::new(),
            resizer: Resizer::default(),
            attacher: Attacher::default(),
        }
    }
}

/// The volume's name: `pvc-<claim uid>`.
pub fn volume_name(claim: &CustomObject) -> String {
    format!("pvc-{}", claim.metadata.uid)
}

/// The volume for `claim` on `node`, of `class` (its reclaim policy).
fn new_volume(
    driver: Driver,
    claim: &CustomObject,
    class: &CustomObject,
    node: &str,
    zone: Option<&str>,
    k: Kinds,
) -> Option<CustomObject> {
    let name = volume_name(claim);
    let mut metadata = ObjectMeta {
        name: name.as_str().into(),
        ..Default::default()
    };
    metadata.annotations.insert(PROVISIONED_BY, driver.name());
    let spec = claim.content.get("spec");
    let mut volume = json!({
        "capacity": {"storage": claim_request(claim).unwrap_or("0")},
        "accessModes": spec.and_then(|s| s.get("accessModes")).cloned().unwrap_or(json!([])),
        "persistentVolumeReclaimPolicy": str_at(class, &["reclaimPolicy"]).unwrap_or("Delete"),
        "storageClassName": claim_class(claim),
        "volumeMode": spec.and_then(|s| s.get("volumeMode")).cloned().unwrap_or(json!("Filesystem")),
        "claimRef": claim_ref_json(claim),
    });
    let affinity = |key: &str, value: &str| {
        json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": [value]}
        ]}]}})
    };
    match driver {
        Driver::LocalPath => {
            metadata
                .annotations
                .insert("local.path.provisioner/selected-node", node);
            volume["hostPath"] = json!({
                "path": format!("{VOLUME_DIR}/{name}_{}_{}", claim.metadata.namespace, claim.metadata.name),
                "type": "DirectoryOrCreate",
            });
            volume["nodeAffinity"] = affinity("kubernetes.io/hostname", node);
        }
        Driver::Disk => {
            volume["csi"] = json!({
                "driver": DISK_DRIVER,
                "volumeHandle": format!("disk-{}", &claim.metadata.uid[..claim.metadata.uid.len().min(8)]),
                "fsType": "ext4",
            });
            // A cluster without zones is one zone: the disk is reachable from every node.
            if let Some(zone) = zone {
                volume["nodeAffinity"] = affinity(ZONE_LABEL, zone);
            }
        }
    }
    let mut content = Map::new();
    content.insert("spec".into(), volume);
    Some(CustomObject {
        kind: k.volume.custom()?,
        api_version: "v1".into(),
        metadata,
        content,
    })
}

impl ExternalProvisioner {
    /// Provisions a claim handed to this driver; None when the claim is not one to provision.
    fn provision(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>, k: Kinds) -> Option<Outcome> {
        let mut out = Outcome::done();
        let claim = ctx.cache.get(key).and_then(|o| o.as_custom());
        let mine = claim.is_some_and(|c| {
            c.metadata
                .annotations
                .get(STORAGE_PROVISIONER)
                .map(|v| v.as_str())
                == Some(self.driver.name())
                && str_at(c, &["spec", "volumeName"]).is_none_or(str::is_empty)
                && c.metadata.deletion_timestamp.is_none()
        });
        let (Some(claim), true) = (claim, mine) else {
            self.started.remove(key);
            return None;
        };
        if ctx
            .cache
            .get(&ObjectKey::new(k.volume, "", &volume_name(claim)))
            .is_some()
        {
            self.started.remove(key);
            return Some(out);
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
            return Some(out);
        };
        let starting = |out: &mut Outcome| {
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
        };
        let diff = match self.started.get(key).copied() {
            None => {
                self.started.insert(
                    key.clone(),
                    Attempt::Since {
                        at: ctx.now,
                        delay: 0,
                    },
                );
                starting(&mut out);
                format!("making a volume on {node}")
            }
            Some(Attempt::RetryAt { at, .. }) if ctx.now < at => {
                out.requeue(at - ctx.now);
                format!(
                    "retry in {}",
                    crate::sim::time::format_duration(at - ctx.now)
                )
            }
            Some(Attempt::RetryAt { delay, .. }) => {
                self.started
                    .insert(key.clone(), Attempt::Since { at: ctx.now, delay });
                starting(&mut out);
                format!("making a volume on {node} again")
            }
            Some(Attempt::Since { at: t, .. }) if ctx.now < t + PROVISIONING_TIME => {
                out.requeue(t + PROVISIONING_TIME - ctx.now);
                format!("making a volume on {node}")
            }
            Some(Attempt::Since { .. }) => {
                let refused = ctx
                    .storage
                    .as_deref_mut()
                    .is_some_and(|b| b.refuses(StorageCall::Provision, class_name));
                if refused {
                    let delay = self.retry_delay(key);
                    self.started.insert(
                        key.clone(),
                        Attempt::RetryAt {
                            at: ctx.now + delay,
                            delay,
                        },
                    );
                    out.event(event(
                        claim,
                        key.clone(),
                        "Warning",
                        "ProvisioningFailed",
                        format!(
                            "failed to provision volume with StorageClass \"{class_name}\": {}",
                            self.refusal()
                        ),
                    ));
                    out.requeue(delay);
                    format!(
                        "the storage system refused; retry in {}",
                        crate::sim::time::format_duration(delay)
                    )
                } else {
                    let zone = ctx
                        .cache
                        .get(&ObjectKey::new(Kind::Node, "", node))
                        .and_then(|o| o.meta().labels.get(ZONE_LABEL).cloned());
                    match new_volume(self.driver, claim, class, node, zone.as_deref(), k) {
                        Some(v) => {
                            out.request(ApiRequest::Create(Object::from(v)));
                            match zone {
                                Some(z) if self.driver == Driver::Disk => {
                                    format!("created {} in zone {z}", volume_name(claim))
                                }
                                _ => format!("created {} on {node}", volume_name(claim)),
                            }
                        }
                        None => String::new(),
                    }
                }
            }
        };
        out.record = Some(ReconcileRecord {
            observed: format!("claim {} pending", key.name),
            desired: "a volume for it".into(),
            diff,
        });
        Some(out)
    }

    /// The wait after this claim's next failure: the first, or twice the last.
    fn retry_delay(&self, key: &ObjectKey) -> Millis {
        match self.started.get(key) {
            Some(Attempt::Since { delay, .. } | Attempt::RetryAt { delay, .. }) if *delay > 0 => {
                (delay * 2).min(RETRY_MAX)
            }
            _ => RETRY_INITIAL,
        }
    }

    /// What the storage system answers when a fault has it refuse.
    fn refusal(&self) -> &'static str {
        match self.driver {
            Driver::LocalPath => "failed to create volume: the helper pod failed to make the directory (FailVolumeProvisioning)",
            Driver::Disk => "rpc error: code = ResourceExhausted desc = the zone is out of disk capacity (FailVolumeProvisioning)",
        }
    }
}

impl Controller for ExternalProvisioner {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        match self.driver {
            Driver::LocalPath => ComponentId::Provisioner,
            Driver::Disk => ComponentId::CsiDisk,
        }
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        // Nodes too: a zonal disk is made in the zone of the node the scheduler chose (a CSI
        // provisioner reads the node's topology). VolumeAttachments for the disk's attacher.
        static LOCAL_PATH: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        static DISK: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        let attacher = self.driver == Driver::Disk;
        (if attacher { &DISK } else { &LOCAL_PATH }).get_or_init(|| {
            let mut kinds = watched().to_vec();
            kinds.push(Kind::Node);
            if attacher {
                kinds.extend(attachment_kind());
            }
            kinds
        })
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        let Some(k) = kinds() else {
            return Vec::new();
        };
        // The event's key, not one built anew from the object: most events are pods'.
        let kind = ev.key.kind;
        let attachment = self.driver == Driver::Disk && Some(kind) == attachment_kind();
        (kind == k.claim || attachment)
            .then(|| (*ev.key).clone())
            .into_iter()
            .collect()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        let Some(k) = kinds() else {
            return Vec::new();
        };
        let mut keys: Vec<ObjectKey> = cache.list(k.claim).map(|o| o.key()).collect();
        if let (Driver::Disk, Some(va)) = (self.driver, attachment_kind()) {
            keys.extend(cache.list(va).map(|o| o.key()));
        }
        keys
    }

    fn tick(&mut self, _now: Millis) -> (Vec<ObjectKey>, Option<Millis>) {
        match self.driver {
            Driver::Disk => (
                reconcile_sync_key().into_iter().collect(),
                Some(RECONCILE_SYNC_PERIOD),
            ),
            Driver::LocalPath => (Vec::new(), None),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(k) = kinds() else {
            return Outcome::done();
        };
        if self.driver == Driver::Disk && Some(key.kind) == attachment_kind() {
            return self.attacher.sync(key, ctx, k);
        }
        if let Some(out) = self.provision(key, ctx, k) {
            return out;
        }
        if self.driver == Driver::Disk {
            return self.resizer.sync(key, ctx, k);
        }
        Outcome::done()
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        if let (ApiRequest::Patch { key, .. }, Err(_)) = (req, result) {
            self.resizer.write_failed(key);
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        if let ApiRequest::Patch { key, .. } = req {
            self.resizer.write_failed(key);
        }
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
            message: message.into(),
            object: key,
            uid: field("uid").into(),
            field_path: Str::EMPTY,
        }]
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(ExternalProvisioner::new(self.driver)))
    }
}
