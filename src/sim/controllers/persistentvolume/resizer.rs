//! The CSI external-resizer of the zonal disk driver, shaped like `kubernetes-csi/external-resizer`'s
//! `pkg/controller`: a bound claim of the driver whose request exceeds its volume's size is grown
//! in two steps, as on a real cluster.
//!
//! `syncPVC` → `resizePVC`: the claim is marked `ControllerResizeInProgress` with a `Resizing`
//! condition and `status.allocatedResources` set to the request (event `Resizing`); the storage
//! system's ControllerExpandVolume takes [`EXPAND_TIME`]; then the volume's `spec.capacity` is
//! the new size and the claim waits for a node (`NodeResizePending`, condition
//! `FileSystemResizePending`, event `FileSystemResizeRequired`). The kubelet of a node running a
//! pod that mounts the claim grows the filesystem online and writes `status.capacity`
//! (`kubelet::volumes`). A refused expansion is `ControllerResizeFailed` with a
//! `ControllerResizeError` condition and a `VolumeResizeFailed` Warning, retried with the
//! resizer's exponential back-off (1 s doubling to 5 min). Simplified: kube-controller-manager's
//! expand controller, which only says it leaves CSI volumes to the external resizer
//! (`ExternalExpanding`), is not simulated.

use serde_json::{json, Map};

use super::{bytes, claim_class, claim_request, event, Kinds};
use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::storage::{
    resize_status, resize_step_patch, str_at, CONTROLLER_RESIZE_FAILED,
    CONTROLLER_RESIZE_IN_PROGRESS, DISK_DRIVER, FILE_SYSTEM_RESIZE_PENDING,
    FILE_SYSTEM_RESIZE_PENDING_MESSAGE, NODE_RESIZE_PENDING,
};
use crate::sim::api::types::{Millis, ObjectKey, Time};
use crate::sim::api::ApiRequest;
use crate::sim::machinery::controller::{Ctx, Outcome, ReconcileRecord};
use crate::sim::machinery::storage_backend::StorageCall;
use crate::vec_map::SlotMap;

/// How long the storage system's ControllerExpandVolume takes.
pub const EXPAND_TIME: Millis = 4_000;
/// The resizer's retry interval after a failure (`--retry-interval-start`), doubled up to
/// `--retry-interval-max`.
const RETRY_START: Millis = 1_000;
const RETRY_MAX: Millis = 300_000;

/// Where one claim's controller expansion is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// ControllerExpandVolume to `size` runs until `due`.
    Expanding {
        size: i64,
        due: Millis,
        retry: Millis,
    },
    /// It failed; tried again at `at`.
    Failed {
        size: i64,
        at: Millis,
        retry: Millis,
    },
    /// It succeeded; the volume's new size is on its way to the cache.
    Expanded { size: i64 },
}

/// The resizer's state: the expansions under way.
#[derive(Clone, Debug, Default)]
pub struct Resizer {
    steps: SlotMap<ObjectKey, Step>,
    /// The claim each volume under way belongs to, to forget its step when a write fails.
    claim_of: SlotMap<String, ObjectKey>,
}

/// The claim's request as written.
fn now_request(claim: &CustomObject) -> &str {
    claim_request(claim).unwrap_or_default()
}

fn stamp(now: Millis) -> String {
    Time(now - now % 1000).to_rfc3339()
}

impl Resizer {
    /// `syncPVC` for one claim.
    pub fn sync(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>, k: Kinds) -> Outcome {
        let mut out = Outcome::done();
        let Some(claim) = ctx.cache.get(key).and_then(|o| o.as_custom()) else {
            self.steps.remove(key);
            return out;
        };
        let volume_name = str_at(claim, &["spec", "volumeName"]).unwrap_or_default();
        let volume = ctx
            .cache
            .get(&ObjectKey::new(k.volume, "", volume_name))
            .and_then(|o| o.as_custom());
        let Some(volume) = volume.filter(|v| {
            str_at(v, &["spec", "csi", "driver"]) == Some(DISK_DRIVER)
                && str_at(claim, &["status", "phase"]) == Some("Bound")
        }) else {
            self.steps.remove(key);
            return out;
        };
        let requested = bytes(claim_request(claim));
        let size = bytes(str_at(volume, &["spec", "capacity", "storage"]));
        if requested <= size {
            self.steps.remove(key);
            // The volume has grown but the claim does not say so (that write failed, or the
            // resizer restarted in between): `markForFSResize` again.
            if matches!(
                resize_status(claim),
                Some(CONTROLLER_RESIZE_IN_PROGRESS | CONTROLLER_RESIZE_FAILED)
            ) {
                out.request(Self::node_pending(key, claim, now_request(claim), ctx.now));
                out.record = Some(ReconcileRecord {
                    observed: format!(
                        "claim {}'s volume has grown; the claim says it is still resizing",
                        key.name
                    ),
                    desired: "the claim waits for a node to grow its filesystem".into(),
                    diff: "mark it NodeResizePending".into(),
                });
            }
            // Otherwise nothing for the controller to do (a node may still have to grow the
            // filesystem).
            return out;
        }
        let request = now_request(claim).to_string();
        let now = ctx.now;
        let step = match self.steps.get(key).copied() {
            Some(Step::Expanded { size: s }) if s == requested => {
                return out;
            }
            // A new request, or a request changed while a step ran (lowered after a failure, as
            // RecoverVolumeExpansionFailure allows): start over with it.
            Some(step @ (Step::Expanding { size: s, .. } | Step::Failed { size: s, .. }))
                if s == requested =>
            {
                Some(step)
            }
            _ => None,
        };
        let diff = match step {
            Some(Step::Failed { at, .. }) if now < at => {
                out.requeue(at - now);
                format!(
                    "retry the expansion in {}",
                    crate::sim::time::format_duration(at - now)
                )
            }
            None | Some(Step::Failed { .. }) => {
                let (retry, again) = match step {
                    Some(Step::Failed { retry, .. }) => (retry, " again"),
                    _ => (RETRY_START, ""),
                };
                let call = (volume_name, request.as_str(), requested);
                self.start(key, claim, call, retry, now, &mut out);
                format!("expand {volume_name} to {request}{again}")
            }
            Some(Step::Expanding { due, .. }) if now < due => {
                out.requeue(due - now);
                format!("expanding {volume_name} to {request}")
            }
            Some(Step::Expanding { retry, .. }) => {
                let refused = ctx
                    .storage
                    .as_deref_mut()
                    .is_some_and(|b| b.refuses(StorageCall::Expand, claim_class(claim)));
                if refused {
                    let message = format!(
                        "resize volume {volume_name:?} by resizer {DISK_DRIVER:?} failed: rpc \
                         error: code = Internal desc = the disk could not be grown \
                         (FailVolumeExpansion)"
                    );
                    out.event(event(
                        claim,
                        key.clone(),
                        "Warning",
                        "VolumeResizeFailed",
                        message.clone(),
                    ));
                    out.request(ApiRequest::Patch {
                        key: key.clone(),
                        patch: resize_step_patch(
                            claim,
                            Some(CONTROLLER_RESIZE_FAILED),
                            Some(("ControllerResizeError", &message)),
                            &stamp(now),
                            Map::new(),
                        ),
                        status: true,
                    });
                    self.steps.insert(
                        key.clone(),
                        Step::Failed {
                            size: requested,
                            at: now + retry,
                            retry: (retry * 2).min(RETRY_MAX),
                        },
                    );
                    out.requeue(retry);
                    format!(
                        "the storage system refused; retry in {}",
                        crate::sim::time::format_duration(retry)
                    )
                } else {
                    out.request(ApiRequest::Patch {
                        key: ObjectKey::new(k.volume, "", volume_name),
                        patch: json!({"spec": {"capacity": {"storage": request}}}),
                        status: false,
                    });
                    out.request(Self::node_pending(key, claim, &request, now));
                    out.event(event(
                        claim,
                        key.clone(),
                        "Normal",
                        "FileSystemResizeRequired",
                        "Require file system resize of volume on node".into(),
                    ));
                    self.steps
                        .insert(key.clone(), Step::Expanded { size: requested });
                    format!("{volume_name} is {request}; a node must grow its filesystem")
                }
            }
            Some(Step::Expanded { .. }) => String::new(),
        };
        out.record = Some(ReconcileRecord {
            observed: format!(
                "claim {} requests {request}, its volume has {}{}",
                key.name,
                str_at(volume, &["spec", "capacity", "storage"]).unwrap_or("0"),
                resize_status(claim).map_or(String::new(), |s| format!(" ({s})"))
            ),
            desired: format!("a {request} volume"),
            diff,
        });
        out
    }

    /// `markForFSResize`: the controller's part is done; a node must grow the filesystem.
    fn node_pending(
        key: &ObjectKey,
        claim: &CustomObject,
        request: &str,
        now: Millis,
    ) -> ApiRequest {
        let mut extra = Map::new();
        extra.insert("allocatedResources".into(), json!({"storage": request}));
        ApiRequest::Patch {
            key: key.clone(),
            patch: resize_step_patch(
                claim,
                Some(NODE_RESIZE_PENDING),
                Some((
                    FILE_SYSTEM_RESIZE_PENDING,
                    FILE_SYSTEM_RESIZE_PENDING_MESSAGE,
                )),
                &stamp(now),
                extra,
            ),
            status: true,
        }
    }

    /// A write of this resizer failed (or was skipped after one did): the step it belonged to is
    /// forgotten, and the claim's retry starts it again from what the cache then shows.
    pub fn write_failed(&mut self, key: &ObjectKey) {
        if let Some(claim) = self.claim_of.remove(key.name.as_str()) {
            self.steps.remove(&claim);
        }
        self.steps.remove(key);
    }

    /// `markPVCResizeInProgress` and the `Resizing` event; ControllerExpandVolume ends
    /// [`EXPAND_TIME`] later.
    /// `call` is the volume, the request as written and in bytes.
    fn start(
        &mut self,
        key: &ObjectKey,
        claim: &CustomObject,
        (volume_name, request, requested): (&str, &str, i64),
        retry: Millis,
        now: Millis,
        out: &mut Outcome,
    ) {
        let mut extra = Map::new();
        extra.insert("allocatedResources".into(), json!({"storage": request}));
        out.request(ApiRequest::Patch {
            key: key.clone(),
            patch: resize_step_patch(
                claim,
                Some(CONTROLLER_RESIZE_IN_PROGRESS),
                Some(("Resizing", "")),
                &stamp(now),
                extra,
            ),
            status: true,
        });
        out.event(event(
            claim,
            key.clone(),
            "Normal",
            "Resizing",
            format!("External resizer is resizing volume {volume_name}"),
        ));
        self.claim_of.insert(volume_name.to_string(), key.clone());
        self.steps.insert(
            key.clone(),
            Step::Expanding {
                size: requested,
                due: now + EXPAND_TIME,
                retry,
            },
        );
        out.requeue(EXPAND_TIME);
    }
}
