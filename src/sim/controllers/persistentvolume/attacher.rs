//! The CSI external-attacher of the zonal disk driver, shaped like `kubernetes-csi/external-attacher`'s
//! `pkg/controller`: it acts on the VolumeAttachments the attach/detach controller writes for the
//! driver. A new one gets the attacher's finalizer, the storage system's ControllerPublishVolume
//! takes [`ATTACH_TIME`], and then `status.attached` is true; one being deleted is detached
//! (ControllerUnpublishVolume) and loses its finalizer.
//!
//! Every [`RECONCILE_SYNC_PERIOD`] it also asks the storage system which disks are really attached
//! (`--reconcile-sync`, ListVolumes): a VolumeAttachment whose disk fell off its node behind the
//! cluster's back (the `DetachVolume` fault) is marked `attached: false`, and attached again.

use serde_json::json;

use super::Kinds;
use crate::sim::api::storage::{
    attachable_handle, attacher_finalizer, attachment_kind, str_at, DISK_DRIVER,
};
use crate::sim::api::types::{Millis, ObjectKey};
use crate::sim::api::ApiRequest;
use crate::sim::machinery::controller::{Ctx, Outcome, ReconcileRecord};
use crate::vec_map::VecMap;

/// How long the storage system's ControllerPublishVolume takes.
pub const ATTACH_TIME: Millis = 2_000;
/// The external-attacher's `--reconcile-sync` default: how often it checks attachments against
/// the storage system.
pub const RECONCILE_SYNC_PERIOD: Millis = 60_000;

/// The key of the periodic check: no VolumeAttachment has an empty name.
pub fn reconcile_sync_key() -> Option<ObjectKey> {
    attachment_kind().map(|k| ObjectKey::new(k, "", ""))
}

/// The attacher's state: the attachments under way and when each is done.
#[derive(Clone, Debug, Default)]
pub struct Attacher {
    attaching: VecMap<String, Millis>,
}

impl Attacher {
    /// `syncVA` for one VolumeAttachment, or the periodic check for the sync key.
    pub fn sync(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>, k: Kinds) -> Outcome {
        if key.name.is_empty() {
            return self.reconcile_sync(ctx, k);
        }
        let mut out = Outcome::done();
        let Some(obj) = ctx.cache.get(key) else {
            self.attaching.remove(key.name.as_str());
            return out;
        };
        let Some(va) = obj.as_custom() else {
            return out;
        };
        if str_at(va, &["spec", "attacher"]) != Some(DISK_DRIVER) {
            return out;
        }
        let node = str_at(va, &["spec", "nodeName"]).unwrap_or_default();
        let volume = str_at(va, &["spec", "source", "persistentVolumeName"]).unwrap_or_default();
        let handle = ctx
            .cache
            .get(&ObjectKey::new(k.volume, "", volume))
            .and_then(|o| o.as_custom())
            .and_then(attachable_handle)
            .map(str::to_string);
        let finalizer = attacher_finalizer();
        let has_finalizer = va.metadata.finalizers.contains(&finalizer);
        let attached = va
            .content
            .get("status")
            .and_then(|s| s.get("attached"))
            .and_then(|a| a.as_bool())
            == Some(true);
        let observed = format!(
            "{} ({volume} on {node}): attached={attached}{}",
            key.name,
            if va.metadata.deletion_timestamp.is_some() {
                ", being deleted"
            } else {
                ""
            }
        );
        let diff = if va.metadata.deletion_timestamp.is_some() {
            self.attaching.remove(key.name.as_str());
            if !has_finalizer {
                return out;
            }
            if let (Some(h), Some(storage)) = (&handle, ctx.storage.as_deref_mut()) {
                storage.detach(h, node);
            }
            let rest: Vec<&String> = va
                .metadata
                .finalizers
                .iter()
                .filter(|f| **f != finalizer)
                .collect();
            out.request(ApiRequest::Patch {
                key: key.clone(),
                patch: json!({"metadata": {"finalizers": rest}}),
                status: false,
            });
            format!("ControllerUnpublishVolume from {node}; remove the finalizer")
        } else if attached {
            return out;
        } else if !has_finalizer {
            // The finalizer first, so that a deletion cannot forget a disk being attached.
            let mut all = va.metadata.finalizers.clone();
            all.push(finalizer);
            out.request(ApiRequest::Patch {
                key: key.clone(),
                patch: json!({"metadata": {"finalizers": all}}),
                status: false,
            });
            "add the attacher's finalizer".to_string()
        } else {
            let due = *self
                .attaching
                .entry(key.name.to_string())
                .or_insert(ctx.now + ATTACH_TIME);
            if ctx.now < due {
                out.requeue(due - ctx.now);
                format!("ControllerPublishVolume to {node} under way")
            } else {
                self.attaching.remove(key.name.as_str());
                let Some(h) = &handle else {
                    return out;
                };
                if let Some(storage) = ctx.storage.as_deref_mut() {
                    storage.attach(h, node);
                }
                out.request(ApiRequest::Patch {
                    key: key.clone(),
                    patch: json!({"status": {"attached": true}}),
                    status: true,
                });
                format!("{h} attached to {node}: mark attached")
            }
        };
        out.record = Some(ReconcileRecord {
            observed,
            desired: "attached while it exists, detached before it goes".into(),
            diff,
        });
        out
    }

    /// `ReconcileVA`: an attachment the storage system no longer has is marked detached.
    fn reconcile_sync(&mut self, ctx: &mut Ctx<'_>, k: Kinds) -> Outcome {
        let mut out = Outcome::done();
        let (Some(kind), Some(storage)) = (attachment_kind(), ctx.storage.as_deref()) else {
            return out;
        };
        let mut lost = Vec::new();
        for o in ctx.cache.list(kind) {
            let Some(va) = o.as_custom() else { continue };
            let attached = va
                .content
                .get("status")
                .and_then(|s| s.get("attached"))
                .and_then(|a| a.as_bool())
                == Some(true);
            if !attached
                || va.metadata.deletion_timestamp.is_some()
                || str_at(va, &["spec", "attacher"]) != Some(DISK_DRIVER)
            {
                continue;
            }
            let node = str_at(va, &["spec", "nodeName"]).unwrap_or_default();
            let handle = str_at(va, &["spec", "source", "persistentVolumeName"])
                .and_then(|v| ctx.cache.get(&ObjectKey::new(k.volume, "", v)))
                .and_then(|o| o.as_custom())
                .and_then(attachable_handle);
            if handle.is_some_and(|h| !storage.is_attached(h, node)) {
                out.request(ApiRequest::Patch {
                    key: o.key(),
                    patch: json!({"status": {"attached": false}}),
                    status: true,
                });
                lost.push(format!("{} on {node}", handle.unwrap_or_default()));
            }
        }
        if !lost.is_empty() {
            out.record = Some(ReconcileRecord {
                observed: format!("ListVolumes: not attached: {}", lost.join(", ")),
                desired: "every attached VolumeAttachment's disk attached to its node".into(),
                diff: "mark them detached, to attach them again".into(),
            });
        }
        out
    }
}
