//! The PersistentVolume controller (`persistentvolume-controller`): binds claims to volumes and
//! hands the claims it cannot bind to their class's provisioner, as
//! `pkg/controller/volume/persistentvolume/pv_controller.go` does.
//!
//! `syncClaim` for a claim not yet bound: bind it to an Available volume of its class that is
//! large enough and offers its access modes (the smallest such); failing that, a claim with no
//! class waits (`FailedBinding`), a claim of a missing class fails (`ProvisioningFailed`), a
//! WaitForFirstConsumer claim waits until the scheduler names a node, and the rest are annotated
//! for the class's external provisioner (`ExternalProvisioning`). `syncVolume` moves a volume's
//! phase (Available, Bound, Released) and finishes the binding of a volume a provisioner made for
//! a claim; a Released volume whose policy is Delete is deleted. Unbound claims are looked at
//! again every 15 s (the controller's resync), which is when its events repeat.

pub mod attacher;
pub mod provisioner;
pub mod resizer;

use std::rc::Rc;
use std::sync::OnceLock;

use serde_json::{json, Value as Json};

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::quantity::parse_quantity;
use crate::sim::api::storage::{
    claim_kind, class_kind, str_at, volume_kind, BIND_COMPLETED, BOUND_BY_CONTROLLER,
    SELECTED_NODE, STORAGE_PROVISIONER, STORAGE_PROVISIONER_BETA,
};
use crate::sim::api::types::{Kind, Object, ObjectKey, Str};
use crate::sim::api::{ApiRequest, DeleteOptions, WatchEvent};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};

/// The controller's resync period for unbound claims (`--pvclaimbinder-sync-period`).
pub const SYNC_PERIOD: u64 = 15_000;

/// The kinds it reads, looked up once.
#[derive(Clone, Copy, Debug)]
pub struct Kinds {
    pub claim: Kind,
    pub volume: Kind,
    pub class: Kind,
}

pub fn kinds() -> Option<Kinds> {
    static KINDS: OnceLock<Option<Kinds>> = OnceLock::new();
    *KINDS.get_or_init(|| {
        Some(Kinds {
            claim: claim_kind()?,
            volume: volume_kind()?,
            class: class_kind()?,
        })
    })
}

/// The kinds it and the provisioner watch.
fn watched() -> &'static [Kind] {
    static WATCHED: OnceLock<Vec<Kind>> = OnceLock::new();
    WATCHED.get_or_init(|| match kinds() {
        Some(k) => vec![k.claim, k.volume, k.class],
        None => Vec::new(),
    })
}

/// A quantity in bytes (0 when absent or malformed).
pub fn bytes(q: Option<&str>) -> i64 {
    q.and_then(|q| parse_quantity(q).ok())
        .map_or(0, |q| q.value())
}

fn strings(v: Option<&Json>) -> Vec<String> {
    v.and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Json::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// A claim's class: `spec.storageClassName` ("" when none).
pub fn claim_class(claim: &CustomObject) -> &str {
    str_at(claim, &["spec", "storageClassName"]).unwrap_or("")
}

/// A claim's requested storage, as written.
pub fn claim_request(claim: &CustomObject) -> Option<&str> {
    str_at(claim, &["spec", "resources", "requests", "storage"])
}

fn access_modes(obj: &CustomObject) -> Vec<String> {
    strings(obj.content.get("spec").and_then(|s| s.get("accessModes")))
}

/// `claimRef.uid` of a volume and the claim key it names.
fn claim_ref(volume: &CustomObject, kinds: Kinds) -> Option<(ObjectKey, String)> {
    let r = volume.content.get("spec")?.get("claimRef")?;
    let ns = r.get("namespace")?.as_str()?;
    let name = r.get("name")?.as_str()?;
    let uid = r.get("uid").and_then(Json::as_str).unwrap_or_default();
    Some((ObjectKey::new(kinds.claim, ns, name), uid.to_string()))
}

fn phase(obj: &CustomObject) -> &str {
    str_at(obj, &["status", "phase"]).unwrap_or("")
}

/// The reference a volume keeps to its claim.
pub fn claim_ref_json(claim: &CustomObject) -> Json {
    json!({
        "kind": "PersistentVolumeClaim",
        "namespace": claim.metadata.namespace,
        "name": claim.metadata.name,
        "uid": claim.metadata.uid,
        "apiVersion": "v1",
        "resourceVersion": claim.metadata.resource_version,
    })
}

/// The PersistentVolume controller.
#[derive(Clone, Debug, Default)]
pub struct PersistentVolumeController;

impl PersistentVolumeController {
    pub fn new() -> Self {
        Self
    }
}

/// An event about a claim or volume.
fn event(
    obj: &CustomObject,
    kinds_key: ObjectKey,
    type_: &'static str,
    reason: &str,
    message: String,
) -> EventRecord {
    EventRecord {
        type_,
        reason: reason.into(),
        message: message.into(),
        object: kinds_key,
        uid: obj.metadata.uid.clone(),
        field_path: Str::EMPTY,
    }
}

/// The requests that bind `claim` to `volume` (`bind`: the volume's claimRef, its phase, the
/// claim's volumeName and annotations, its phase, capacity and access modes), as one batch each
/// so a conflict stops the rest and the next pass starts over.
fn bind(
    out: &mut Outcome,
    k: Kinds,
    claim: &CustomObject,
    volume: &CustomObject,
    by_controller: bool,
) {
    let mut v = volume.clone();
    let mut changed = false;
    if claim_ref(&v, k).is_none_or(|(_, uid)| uid != claim.metadata.uid) {
        if let Some(Json::Object(spec)) = v.content.get_mut("spec") {
            spec.insert("claimRef".into(), claim_ref_json(claim));
        }
        if by_controller {
            v.metadata.annotations.insert(BOUND_BY_CONTROLLER, "yes");
        }
        changed = true;
    }
    if changed {
        out.request(ApiRequest::Update(Object::from(v.clone())));
    }
    if phase(volume) != "Bound" {
        let mut s = v.clone();
        s.content.insert("status".into(), json!({"phase": "Bound"}));
        out.request(ApiRequest::UpdateStatus(Object::from(s)));
    }
    let mut c = claim.clone();
    if str_at(claim, &["spec", "volumeName"]) != Some(&volume.metadata.name) {
        if let Some(Json::Object(spec)) = c.content.get_mut("spec") {
            spec.insert("volumeName".into(), json!(volume.metadata.name));
        }
        c.metadata.annotations.insert(BIND_COMPLETED, "yes");
        c.metadata.annotations.insert(BOUND_BY_CONTROLLER, "yes");
        out.request(ApiRequest::Update(Object::from(c.clone())));
    }
    if phase(claim) != "Bound" {
        let spec = volume.content.get("spec");
        let capacity = spec
            .and_then(|s| s.get("capacity"))
            .cloned()
            .unwrap_or(json!({}));
        let modes = spec
            .and_then(|s| s.get("accessModes"))
            .cloned()
            .unwrap_or(json!([]));
        c.content.insert(
            "status".into(),
            json!({"phase": "Bound", "accessModes": modes, "capacity": capacity}),
        );
        out.request(ApiRequest::UpdateStatus(Object::from(c)));
    }
}

impl PersistentVolumeController {
    /// `syncUnboundClaim`.
    fn sync_claim(
        &self,
        claim: &CustomObject,
        k: Kinds,
        cache: &Cache,
        out: &mut Outcome,
    ) -> String {
        let key = ObjectKey::of(k.claim, &claim.metadata);
        if let Some(name) = str_at(claim, &["spec", "volumeName"]).filter(|n| !n.is_empty()) {
            // Bound, or pre-bound to a volume by name.
            let volume = cache
                .get(&ObjectKey::new(k.volume, "", name))
                .and_then(|o| o.as_custom());
            return match volume {
                Some(v) => {
                    bind(out, k, claim, v, false);
                    format!("bound to {name}")
                }
                None if phase(claim) == "Bound" => {
                    let mut c = claim.clone();
                    c.content.insert("status".into(), json!({"phase": "Lost"}));
                    out.request(ApiRequest::UpdateStatus(Object::from(c)));
                    out.event(event(
                        claim,
                        key,
                        "Warning",
                        "ClaimLost",
                        "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
                            .into(),
                    ));
                    format!("{name} is gone: Lost")
                }
                None => {
                    out.requeue(SYNC_PERIOD);
                    format!("waiting for volume {name}")
                }
            };
        }
        let class = claim_class(claim);
        let wanted = bytes(claim_request(claim));
        let modes = access_modes(claim);
        // findBestMatchForClaim: the smallest Available volume of the class that fits.
        let matched = cache
            .list(k.volume)
            .filter_map(|o| o.as_custom())
            .filter(|v| {
                str_at(v, &["spec", "storageClassName"]).unwrap_or("") == class
                    && claim_ref(v, k).is_none_or(|(c, uid)| {
                        c == key && (uid.is_empty() || uid == claim.metadata.uid)
                    })
                    && phase(v) != "Released"
                    && v.metadata.deletion_timestamp.is_none()
                    && {
                        let offered = access_modes(v);
                        modes.iter().all(|m| offered.contains(m))
                    }
                    && bytes(str_at(v, &["spec", "capacity", "storage"])) >= wanted
            })
            .min_by_key(|v| bytes(str_at(v, &["spec", "capacity", "storage"])));
        if let Some(v) = matched {
            bind(out, k, claim, v, true);
            return format!("binding to {}", v.metadata.name);
        }
        out.requeue(SYNC_PERIOD);
        if class.is_empty() {
            out.event(event(
                claim,
                key,
                "Normal",
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set".into(),
            ));
            return "no volume fits, no class to provision from".into();
        }
        let Some(sc) = cache
            .get(&ObjectKey::new(k.class, "", class))
            .and_then(|o| o.as_custom())
        else {
            out.event(event(
                claim,
                key,
                "Warning",
                "ProvisioningFailed",
                format!("storageclass.storage.k8s.io \"{class}\" not found"),
            ));
            return format!("class {class} not found");
        };
        let wffc = str_at(sc, &["volumeBindingMode"]) == Some("WaitForFirstConsumer");
        if wffc && !claim.metadata.annotations.contains_key(SELECTED_NODE) {
            out.event(event(
                claim,
                key,
                "Normal",
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding".into(),
            ));
            return "waiting for its first consumer to be scheduled".into();
        }
        let provisioner = str_at(sc, &["provisioner"]).unwrap_or_default();
        if claim
            .metadata
            .annotations
            .get(STORAGE_PROVISIONER)
            .map(|v| v.as_str())
            != Some(provisioner)
        {
            let mut c = claim.clone();
            c.metadata
                .annotations
                .insert(STORAGE_PROVISIONER, provisioner);
            c.metadata
                .annotations
                .insert(STORAGE_PROVISIONER_BETA, provisioner);
            out.request(ApiRequest::Update(Object::from(c)));
        }
        out.event(event(
            claim,
            key,
            "Normal",
            "ExternalProvisioning",
            format!(
                "Waiting for a volume to be created either by the external provisioner '{provisioner}' \
                 or manually by the system administrator. If volume creation is delayed, please \
                 verify that the provisioner is running and correctly registered."
            ),
        ));
        format!("handed to the provisioner {provisioner}")
    }

    /// `syncVolume`.
    fn sync_volume(
        &self,
        volume: &CustomObject,
        k: Kinds,
        cache: &Cache,
        out: &mut Outcome,
    ) -> String {
        let name = &volume.metadata.name;
        let Some((claim_key, uid)) = claim_ref(volume, k) else {
            if phase(volume) != "Available" {
                let mut v = volume.clone();
                v.content
                    .insert("status".into(), json!({"phase": "Available"}));
                out.request(ApiRequest::UpdateStatus(Object::from(v)));
            }
            return format!("{name}: Available");
        };
        let claim = cache.get(&claim_key).and_then(|o| o.as_custom());
        match claim {
            Some(c) if uid.is_empty() || c.metadata.uid == uid => {
                if str_at(c, &["spec", "volumeName"]).is_none_or(str::is_empty)
                    || phase(volume) != "Bound"
                {
                    bind(out, k, c, volume, false);
                }
                format!("{name}: bound to {}", claim_key.name)
            }
            _ => {
                if phase(volume) != "Released" && phase(volume) != "Failed" {
                    let mut v = volume.clone();
                    v.content
                        .insert("status".into(), json!({"phase": "Released"}));
                    out.request(ApiRequest::UpdateStatus(Object::from(v)));
                }
                let policy =
                    str_at(volume, &["spec", "persistentVolumeReclaimPolicy"]).unwrap_or("Retain");
                if policy == "Delete" && volume.metadata.deletion_timestamp.is_none() {
                    out.request(ApiRequest::Delete {
                        key: ObjectKey::new(k.volume, "", name),
                        options: DeleteOptions::default(),
                    });
                    return format!("{name}: Released, deleted (reclaimPolicy Delete)");
                }
                format!("{name}: Released, kept (reclaimPolicy {policy})")
            }
        }
    }
}

impl Controller for PersistentVolumeController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::PersistentVolume
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        watched()
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let Some(k) = kinds() else {
            return Vec::new();
        };
        // The event's key, not one built anew from the object: most events are pods'.
        let key = &*ev.key;
        if key.kind == k.claim || key.kind == k.volume {
            let mut keys = vec![key.clone()];
            // A volume's change matters to the claim it names, and a claim's to its volume.
            if let Some(c) = ev.object.as_custom() {
                if key.kind == k.volume {
                    keys.extend(claim_ref(c, k).map(|(ck, _)| ck));
                } else if let Some(v) = str_at(c, &["spec", "volumeName"]).filter(|v| !v.is_empty())
                {
                    keys.push(ObjectKey::new(k.volume, "", v));
                }
            }
            return keys;
        }
        // A new or changed class: every claim still waiting may now go on.
        cache
            .list(k.claim)
            .filter(|o| o.as_custom().is_some_and(|c| phase(c) == "Pending"))
            .map(|o| o.key())
            .collect()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        let Some(k) = kinds() else {
            return Vec::new();
        };
        cache
            .list(k.claim)
            .chain(cache.list(k.volume))
            .map(|o| o.key())
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let (Some(k), Some(obj)) = (kinds(), ctx.cache.get(key).and_then(|o| o.as_custom())) else {
            return out;
        };
        let diff = if key.kind == k.claim {
            self.sync_claim(obj, k, ctx.cache, &mut out)
        } else {
            self.sync_volume(obj, k, ctx.cache, &mut out)
        };
        out.record = Some(ReconcileRecord {
            observed: format!("{} {} ({})", key.kind.as_str(), key.name, phase(obj)),
            desired: "every claim bound to a volume".into(),
            diff,
        });
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(PersistentVolumeController::new()))
    }
}
