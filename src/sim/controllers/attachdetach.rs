//! The attach/detach controller (`attachdetach-controller`), as `pkg/controller/volume/attachdetach`
//! runs it for CSI volumes: a disk that a scheduled pod mounts is attached to the pod's node
//! through a VolumeAttachment, which the driver's external-attacher acts on; a disk no pod on a
//! node wants any more is detached once that node's kubelet stops reporting it in use — or, when
//! the node is unhealthy, after `maxWaitForUnmountDuration` (6 min), or at once when the node is
//! tainted `node.kubernetes.io/out-of-service`. A disk only one node may hold (ReadWriteOnce) is
//! never attached to a second node: the pod there gets the Multi-Attach error and waits.
//!
//! Simplified: upstream keeps a desired and an actual state of the world and reconciles them every
//! 100 ms, checking its attachments against the VolumeAttachments once a minute. Here `reconcile`
//! takes one volume, woken by the pods, claims, nodes and VolumeAttachments that concern it, and
//! reads what is attached from the VolumeAttachments themselves (a lost attachment is seen at once).

use std::collections::BTreeSet;
use std::rc::Rc;

use serde_json::json;

use crate::sort::StableSort;

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::storage::{
    attachable_handle, attachment_kind, attachment_name, claim_kind, multi_attach_forbidden,
    pod_claims, str_at, unique_volume_name, volume_kind, DISK_DRIVER,
};
use crate::sim::api::types::{Kind, Millis, Node, Object, ObjectKey, ObjectMeta, Pod};
use crate::sim::api::{ApiRequest, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::vec_map::VecMap;

/// `ReconcilerMaxWaitForUnmountDuration`: how long a volume still mounted on an unhealthy node
/// is left attached before it is force-detached.
pub const MAX_WAIT_FOR_UNMOUNT: Millis = 6 * 60 * 1000;

/// The taint that tells the controller a node is shut down for good (non-graceful node shutdown,
/// GA since v1.28): its volumes are detached without waiting.
pub const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";

/// The attach/detach controller.
#[derive(Clone, Debug, Default)]
pub struct AttachDetachController {
    /// When the reconciler first found a volume attached to a node that no longer wants it
    /// (`SetDetachRequestTime`), by (volume, node).
    detach_requested: VecMap<String, Millis>,
    /// The attachments whose success was reported on their pods, by (volume, node).
    reported: BTreeSet<String>,
    /// The (volume, node) pairs whose Multi-Attach error was reported (`MultiAttachErrorReported`).
    multi_attach_reported: BTreeSet<String>,
    /// What each node last reported in use, kept after its Node is deleted (as the actual state
    /// of the world keeps `MountedByNode`).
    in_use: VecMap<String, Vec<String>>,
}

impl AttachDetachController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The key of a (volume, node) pair in the controller's bookkeeping: one string, so that its maps
/// share the code of the crate's other string-keyed ones.
fn pair(volume: &str, node: &str) -> String {
    format!("{volume}\n{node}")
}

/// One VolumeAttachment of the volume being reconciled.
struct Attachment<'a> {
    object: &'a Rc<Object>,
    node: String,
    attached: bool,
    deleting: bool,
}

/// The pods that want a volume attached, by node: scheduled to a node that exists, not finished,
/// and mounting a claim bound to the volume (the desired state of the world's populator).
fn desired<'a>(cache: &'a Cache, volume: &str) -> VecMap<String, Vec<&'a Pod>> {
    let Some(claim) = claim_kind() else {
        return VecMap::new();
    };
    let mut out: VecMap<String, Vec<&Pod>> = VecMap::new();
    for pod in cache.list(Kind::Pod).filter_map(|o| o.as_pod()) {
        if pod.spec.node_name.is_empty()
            || matches!(pod.status.phase.as_str(), "Succeeded" | "Failed")
            || cache
                .get(&ObjectKey::new(Kind::Node, "", &pod.spec.node_name))
                .is_none()
        {
            continue;
        }
        let wants = pod_claims(pod).into_iter().any(|c| {
            cache
                .get(&ObjectKey::new(claim, &pod.metadata.namespace, c))
                .and_then(|o| o.as_custom())
                .and_then(|c| str_at(c, &["spec", "volumeName"]))
                == Some(volume)
        });
        if wants {
            out.entry(pod.spec.node_name.to_string())
                .or_default()
                .push(pod);
        }
    }
    out
}

/// The VolumeAttachments of a volume, in name order.
fn attachments<'a>(cache: &'a Cache, volume: &str) -> Vec<Attachment<'a>> {
    let Some(kind) = attachment_kind() else {
        return Vec::new();
    };
    cache
        .list(kind)
        .filter_map(|o| {
            let va = o.as_custom()?;
            (str_at(va, &["spec", "source", "persistentVolumeName"]) == Some(volume)).then(|| {
                Attachment {
                    object: o,
                    node: str_at(va, &["spec", "nodeName"])
                        .unwrap_or_default()
                        .to_string(),
                    attached: va
                        .content
                        .get("status")
                        .and_then(|s| s.get("attached"))
                        .and_then(|a| a.as_bool())
                        == Some(true),
                    deleting: va.metadata.deletion_timestamp.is_some(),
                }
            })
        })
        .collect()
}

/// A new VolumeAttachment asking the disk driver to attach `volume` (handle `handle`) to `node`.
fn new_attachment(volume: &str, handle: &str, node: &str) -> Option<Object> {
    let kind = attachment_kind()?.custom()?;
    let mut content = serde_json::Map::new();
    content.insert(
        "spec".into(),
        json!({
            "attacher": DISK_DRIVER,
            "nodeName": node,
            "source": {"persistentVolumeName": volume},
        }),
    );
    Some(Object::from(CustomObject {
        kind,
        api_version: "storage.k8s.io/v1".into(),
        metadata: ObjectMeta {
            name: attachment_name(handle, node).into(),
            ..Default::default()
        },
        content,
    }))
}

/// The patch that makes a node's `status.volumesAttached` list `unique` or not (`attached`);
/// None when it already does.
fn node_status_patch(node: &Node, unique: &str, attached: bool) -> Option<ApiRequest> {
    let listed = node.status.attached_volumes().any(|v| v == unique);
    if listed == attached {
        return None;
    }
    let mut volumes: Vec<serde_json::Value> = node
        .status
        .volumes_attached
        .as_deref()
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("name").and_then(serde_json::Value::as_str) != Some(unique))
        .cloned()
        .collect();
    if attached {
        volumes.push(json!({"name": unique, "devicePath": ""}));
    }
    Some(ApiRequest::Patch {
        key: ObjectKey::new(Kind::Node, "", &node.metadata.name),
        patch: json!({"status": {"volumesAttached": volumes}}),
        status: true,
    })
}

impl AttachDetachController {
    /// Whether the node still has the volume mounted, as its kubelet last reported; a node never
    /// heard of is assumed to (the actual state of the world's default).
    fn mounted_by_node(&self, node: Option<&Node>, name: &str, unique: &str) -> bool {
        match node {
            Some(n) => n.status.volumes_in_use.iter().any(|v| v == unique),
            None => self
                .in_use
                .get(name)
                .is_none_or(|l| l.iter().any(|v| v == unique)),
        }
    }

    /// `reportMultiAttachError`: each pod on `node` hears which pods hold the volume elsewhere
    /// (those in its own namespace by name), or that it is attached elsewhere when none does.
    fn multi_attach_errors(
        pods: &[&Pod],
        elsewhere: &[&Pod],
        volume: &str,
        cache: &Cache,
        out: &mut Outcome,
    ) {
        for pod in pods {
            let Some(obj) = cache.get(&ObjectKey::of(Kind::Pod, &pod.metadata)) else {
                continue;
            };
            let local: Vec<&str> = elsewhere
                .iter()
                .filter(|p| p.metadata.namespace == pod.metadata.namespace)
                .map(|p| p.metadata.name.as_str())
                .collect();
            let others = elsewhere.len() - local.len();
            let suffix = match (local.is_empty(), others) {
                (true, 0) => {
                    "Volume is already exclusively attached to one node and can't be attached to another"
                        .to_string()
                }
                (true, n) => format!("Volume is already used by {n} pod(s) in different namespaces"),
                (false, 0) => format!("Volume is already used by pod(s) {}", local.join(", ")),
                (false, n) => format!(
                    "Volume is already used by pod(s) {} and {n} pod(s) in different namespaces",
                    local.join(", ")
                ),
            };
            out.event(EventRecord::warning(
                obj,
                "FailedAttachVolume",
                format!("Multi-Attach error for volume {volume:?} {suffix}"),
            ));
        }
    }
}

impl Controller for AttachDetachController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::AttachDetach
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        static KINDS: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        KINDS.get_or_init(|| {
            let mut kinds = vec![Kind::Pod, Kind::Node];
            kinds.extend(
                [claim_kind(), volume_kind(), attachment_kind()]
                    .into_iter()
                    .flatten(),
            );
            kinds
        })
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let Some(pv) = volume_kind() else {
            return Vec::new();
        };
        let volume_key = |name: &str| ObjectKey::new(pv, "", name);
        match &*ev.object {
            Object::Pod(p) => {
                let Some(claim) = claim_kind() else {
                    return Vec::new();
                };
                let mut claims: Vec<&str> = pod_claims(p);
                if let Some(o) = old.and_then(|o| o.as_pod()) {
                    claims.extend(pod_claims(o));
                }
                let mut keys: Vec<ObjectKey> = claims
                    .into_iter()
                    .filter_map(|c| {
                        let claim = cache.get(&ObjectKey::new(claim, &p.metadata.namespace, c))?;
                        str_at(claim.as_custom()?, &["spec", "volumeName"]).map(volume_key)
                    })
                    .collect();
                keys.stable_sort();
                keys.dedup();
                keys
            }
            Object::Node(n) => {
                // A deleted Node's last report is kept: its volumes stay mounted as far as the
                // controller knows.
                self.in_use
                    .insert(n.metadata.name.to_string(), n.status.volumes_in_use.clone());
                // What a detach decision reads of a node: its volumes in use and attached, its
                // health and its out-of-service taint; heartbeats alone change none of them.
                let unchanged = old.and_then(|o| o.as_node()).is_some_and(|o| {
                    ev.type_ == WatchEventType::Modified
                        && o.status.volumes_in_use == n.status.volumes_in_use
                        && o.status.volumes_attached == n.status.volumes_attached
                        && o.ready_status() == n.ready_status()
                        && o.spec.taints == n.spec.taints
                });
                if unchanged {
                    return Vec::new();
                }
                cache
                    .list(pv)
                    .filter(|o| o.as_custom().and_then(attachable_handle).is_some())
                    .map(|o| o.key())
                    .collect()
            }
            Object::Custom(c) if Some(Kind::Custom(c.kind)) == attachment_kind() => {
                str_at(c, &["spec", "source", "persistentVolumeName"])
                    .map(volume_key)
                    .into_iter()
                    .collect()
            }
            Object::Custom(c) if Some(Kind::Custom(c.kind)) == claim_kind() => {
                str_at(c, &["spec", "volumeName"])
                    .map(volume_key)
                    .into_iter()
                    .collect()
            }
            Object::Custom(c) if Kind::Custom(c.kind) == pv => vec![ev.object.key()],
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        let (Some(pv), Some(va)) = (volume_kind(), attachment_kind()) else {
            return Vec::new();
        };
        let mut keys: Vec<ObjectKey> = cache
            .list(pv)
            .filter(|o| o.as_custom().and_then(attachable_handle).is_some())
            .map(|o| o.key())
            .chain(cache.list(va).filter_map(|o| {
                str_at(o.as_custom()?, &["spec", "source", "persistentVolumeName"])
                    .map(|v| ObjectKey::new(pv, "", v))
            }))
            .collect();
        keys.stable_sort();
        keys.dedup();
        keys
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let cache = ctx.cache;
        let now = ctx.now;
        let volume = key.name.as_str();
        let handle = cache
            .get(key)
            .and_then(|o| o.as_custom())
            .and_then(attachable_handle)
            .map(str::to_string);
        let unique = handle
            .as_deref()
            .map(unique_volume_name)
            .unwrap_or_default();
        // A volume gone from the API is wanted nowhere.
        let wanted = match &handle {
            Some(_) => desired(cache, volume),
            None => VecMap::new(),
        };
        let current = attachments(cache, volume);
        let node_of = |name: &str| {
            cache
                .get(&ObjectKey::new(Kind::Node, "", name))
                .and_then(|o| o.as_node())
        };
        let mut diffs: Vec<String> = Vec::new();

        // Detaches come first, so that a pod rescheduled elsewhere finds its disk free.
        for a in current.iter().filter(|a| !wanted.contains_key(&a.node)) {
            let pair = pair(volume, &a.node);
            self.reported.remove(&pair);
            if a.deleting {
                diffs.push(format!("detaching from {}", a.node));
                continue;
            }
            let requested = *self.detach_requested.entry(pair.clone()).or_insert(now);
            let elapsed = now.saturating_sub(requested);
            let node = node_of(&a.node);
            let healthy = node.is_some_and(|n| n.ready_status() == "True");
            let out_of_service =
                node.is_some_and(|n| n.spec.taints.iter().any(|t| t.key == OUT_OF_SERVICE_TAINT));
            let force = !healthy && elapsed > MAX_WAIT_FOR_UNMOUNT;
            if self.mounted_by_node(node, &a.node, &unique) && !force && !out_of_service {
                if healthy {
                    diffs.push(format!("wait for {} to unmount it", a.node));
                } else {
                    let left = (MAX_WAIT_FOR_UNMOUNT + 1).saturating_sub(elapsed);
                    out.requeue(left);
                    diffs.push(format!(
                        "still mounted on unhealthy {}: force-detach in {}",
                        a.node,
                        crate::sim::time::format_duration(left)
                    ));
                }
                continue;
            }
            // The node stops listing the volume before the detach starts, so that no kubelet
            // mounts what is about to go.
            let mut batch: Vec<ApiRequest> = node
                .and_then(|n| node_status_patch(n, &unique, false))
                .into_iter()
                .collect();
            batch.push(ApiRequest::Delete {
                key: a.object.key(),
                options: Default::default(),
            });
            out.batch(batch);
            self.detach_requested.remove(&pair);
            diffs.push(if force {
                format!(
                    "detach from {} (maxWaitForUnmountDuration expired: force detach)",
                    a.node
                )
            } else if out_of_service {
                format!("detach from {} (node is out of service)", a.node)
            } else {
                format!("detach from {}", a.node)
            });
        }
        self.multi_attach_reported.retain(|p| {
            p.split_once('\n')
                .is_none_or(|(v, n)| v != volume || wanted.contains_key(n))
        });

        if let Some(handle) = &handle {
            let forbidden = cache
                .get(key)
                .and_then(|o| o.as_custom())
                .is_some_and(multi_attach_forbidden);
            for (node, pods) in &wanted {
                let pair = pair(volume, node);
                self.detach_requested.remove(&pair);
                let Some(n) = node_of(node) else { continue };
                match current.iter().find(|a| &a.node == node) {
                    Some(a) if a.deleting => {
                        diffs.push(format!("wait: still detaching from {node}"))
                    }
                    Some(a) => {
                        if let Some(patch) = node_status_patch(n, &unique, a.attached) {
                            out.request(patch);
                        }
                        if a.attached && self.reported.insert(pair.clone()) {
                            for pod in pods {
                                if let Some(obj) =
                                    cache.get(&ObjectKey::of(Kind::Pod, &pod.metadata))
                                {
                                    out.event(EventRecord::normal(
                                        obj,
                                        "SuccessfulAttachVolume",
                                        format!(
                                            "AttachVolume.Attach succeeded for volume {volume:?} "
                                        ),
                                    ));
                                }
                            }
                            diffs.push(format!("attached to {node}: report it"));
                        } else if !a.attached {
                            self.reported.remove(&pair);
                            diffs.push(format!("wait for the attacher to attach it to {node}"));
                        }
                    }
                    None => {
                        let holders: Vec<&Attachment> =
                            current.iter().filter(|a| &a.node != node).collect();
                        if forbidden && !holders.is_empty() {
                            if self.multi_attach_reported.insert(pair.clone()) {
                                let elsewhere: Vec<&Pod> = holders
                                    .iter()
                                    .filter_map(|a| wanted.get(&a.node))
                                    .flatten()
                                    .copied()
                                    .collect();
                                Self::multi_attach_errors(
                                    pods, &elsewhere, volume, cache, &mut out,
                                );
                            }
                            diffs.push(format!(
                                "Multi-Attach: still attached to {}",
                                holders
                                    .iter()
                                    .map(|a| a.node.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ));
                            continue;
                        }
                        if let Some(va) = new_attachment(volume, handle, node) {
                            out.request(ApiRequest::Create(va));
                            diffs.push(format!("attach to {node}"));
                        }
                    }
                }
            }
        }
        if current.is_empty() && wanted.is_empty() {
            return out;
        }
        let describe = |nodes: Vec<&str>| {
            if nodes.is_empty() {
                "no node".to_string()
            } else {
                nodes.join(", ")
            }
        };
        out.record = Some(ReconcileRecord {
            observed: format!(
                "volume {volume}: attached to {}",
                describe(
                    current
                        .iter()
                        .filter(|a| a.attached)
                        .map(|a| a.node.as_str())
                        .collect()
                )
            ),
            desired: format!(
                "attached where its pods run: {}",
                describe(wanted.keys().map(String::as_str).collect())
            ),
            diff: diffs.join("; "),
        });
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(AttachDetachController::new()))
    }
}
