//! The volume manager's part in starting a pod: a pod's `configMap` and `secret` volumes must
//! mount before its sandbox is created (`WaitForAttachAndMount`), and one whose object does not
//! exist stays `ContainerCreating` with a `FailedMount` Warning per failed attempt, retried with
//! the operation executor's exponential back-off.
//!
//! The kubelet watches the ConfigMaps and Secrets its pods reference (the default `Watch`
//! change-detection strategy); here it watches them all, and an object's arrival wakes the pods
//! that wait for it, which still keep to their back-off, as upstream's do.
//!
//! A `persistentVolumeClaim` volume waits until its claim is Bound, and a disk (an attachable CSI
//! volume) until the attach/detach controller lists it in the Node's `status.volumesAttached`
//! (`VerifyControllerAttachedVolume`); the kubelet reports the disks its pods use in
//! `status.volumesInUse`, which keeps them from being detached under it. The pod waits in
//! `ContainerCreating` without events of the kubelet's, as in v1.34: `WaitForAttachAndMount` gives
//! up after 2m3s with a wrapped `context deadline exceeded`, which `syncPod` treats as an
//! interruption and does not record (kubernetes/kubernetes#127004), so the claim's events and the
//! attach/detach controller's (`FailedAttachVolume`) say why. Simplified: the scheduler binds the
//! pod before its claims are bound, where upstream's VolumeBinding PreBind waits for them.

use super::*;
use crate::sim::api::openapi;
use crate::sort::StableSort;

/// How long growing a mounted filesystem takes (NodeExpandVolume, `resize2fs` online).
pub(super) const NODE_EXPAND_TIME: Millis = 2_000;

/// nestedpendingoperations' first wait after a failed mount, doubled after each failure.
pub(super) const MOUNT_RETRY_INITIAL: Millis = 500;
/// …up to `maxDurationBeforeRetry`, 2m2s.
pub(super) const MOUNT_RETRY_MAX: Millis = 122_000;

/// The kinds whose objects a pod's volumes mount.
pub(super) fn mounted_kinds() -> [Option<Kind>; 3] {
    [
        openapi::stored_kind("", "ConfigMap").map(Kind::Custom),
        openapi::stored_kind("", "Secret").map(Kind::Custom),
        openapi::stored_kind("", "PersistentVolumeClaim").map(Kind::Custom),
    ]
}

/// The resource name of a claim volume's source.
const CLAIM: &str = "persistentvolumeclaim";

/// One ConfigMap or Secret a volume mounts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct VolumeSource {
    /// The pod's name for the volume.
    pub volume: String,
    /// `configmap` or `secret`, as the not-found error names the resource.
    pub resource: &'static str,
    pub kind: Kind,
    pub name: String,
    /// `optional: true`: a missing object mounts as an empty volume.
    pub optional: bool,
}

/// The ConfigMaps and Secrets a pod's volumes mount, in volume order.
pub(super) fn volume_sources(pod: &Pod) -> Vec<VolumeSource> {
    let [Some(cm), Some(secret), Some(claim)] = mounted_kinds() else {
        return Vec::new();
    };
    let Some(Json::Array(volumes)) = pod.spec.volumes.as_deref() else {
        return Vec::new();
    };
    volumes
        .iter()
        .filter_map(|v| {
            let volume = v.get("name")?.as_str()?.to_string();
            let (resource, kind, source, name_field) = if let Some(s) = v.get("configMap") {
                ("configmap", cm, s, "name")
            } else if let Some(s) = v.get("secret") {
                ("secret", secret, s, "secretName")
            } else if let Some(s) = v.get("persistentVolumeClaim") {
                (CLAIM, claim, s, "claimName")
            } else {
                return None;
            };
            Some(VolumeSource {
                volume,
                resource,
                kind,
                name: source
                    .get(name_field)
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string(),
                optional: source.get("optional").and_then(Json::as_bool) == Some(true),
            })
        })
        .collect()
}

/// A pod's mounts that fail now: each volume whose object is missing, with the operation
/// executor's message.
pub(super) fn failed_mounts(pod: &Pod, cache: &Cache) -> Vec<(String, String)> {
    volume_sources(pod)
        .into_iter()
        .filter(|s| !s.optional && s.resource != CLAIM)
        .filter(|s| {
            cache
                .get(&ObjectKey::new(s.kind, &pod.metadata.namespace, &s.name))
                .is_none()
        })
        .map(|s| {
            let message = format!(
                "MountVolume.SetUp failed for volume {:?} : {} {:?} not found",
                s.volume, s.resource, s.name
            );
            (s.volume, message)
        })
        .collect()
}

/// The claims a pod mounts that are missing or not yet Bound, by volume name.
pub(super) fn unbound_claims(pod: &Pod, cache: &Cache) -> Vec<String> {
    volume_sources(pod)
        .into_iter()
        .filter(|s| s.resource == CLAIM)
        .filter(|s| {
            let claim = cache.get(&ObjectKey::new(s.kind, &pod.metadata.namespace, &s.name));
            claim
                .and_then(|o| o.as_custom())
                .and_then(|c| crate::sim::api::storage::str_at(c, &["status", "phase"]))
                != Some("Bound")
        })
        .map(|s| s.volume)
        .collect()
}

/// A pod's disks that its node does not have attached yet (bound claims whose volume needs
/// attaching and is missing from the Node's `status.volumesAttached`), by volume name.
pub(super) fn unattached_disks(pod: &Pod, cache: &Cache, node: Option<&Node>) -> Vec<String> {
    use crate::sim::api::storage::{attachable_handle, unique_volume_name, volume_kind};
    let Some(pv) = volume_kind() else {
        return Vec::new();
    };
    volume_sources(pod)
        .into_iter()
        .filter(|s| s.resource == CLAIM)
        .filter(|s| {
            let handle = cache
                .get(&ObjectKey::new(s.kind, &pod.metadata.namespace, &s.name))
                .and_then(|o| o.as_custom())
                .and_then(|c| crate::sim::api::storage::str_at(c, &["spec", "volumeName"]))
                .and_then(|v| cache.get(&ObjectKey::new(pv, "", v)))
                .and_then(|o| o.as_custom())
                .and_then(attachable_handle);
            handle.is_some_and(|h| {
                let unique = unique_volume_name(h);
                !node.is_some_and(|n| n.status.attached_volumes().any(|v| v == unique))
            })
        })
        .map(|s| s.volume)
        .collect()
}

/// The disks the pods on this node use, unique names sorted: the node's `status.volumesInUse`
/// (`GetVolumesInUse`: from the moment a pod wants one until it is unmounted).
pub(super) fn volumes_in_use(cache: &Cache, node: &str) -> Vec<String> {
    use crate::sim::api::storage::{
        attachable_handle, claim_kind, str_at, unique_volume_name, volume_kind,
    };
    let (Some(claim), Some(pv)) = (claim_kind(), volume_kind()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = cache
        .list(Kind::Pod)
        .filter_map(|o| o.as_pod())
        .filter(|p| {
            p.spec.node_name == node && !matches!(p.status.phase.as_str(), "Succeeded" | "Failed")
        })
        .flat_map(|p| {
            crate::sim::api::storage::pod_claims(p)
                .into_iter()
                .filter_map(|c| {
                    let claim = cache.get(&ObjectKey::new(claim, &p.metadata.namespace, c))?;
                    let volume = str_at(claim.as_custom()?, &["spec", "volumeName"])?;
                    let volume = cache.get(&ObjectKey::new(pv, "", volume))?;
                    attachable_handle(volume.as_custom()?).map(unique_volume_name)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    names.stable_sort();
    names.dedup();
    names
}

/// When a pod's mounts may be tried again, and the wait after the next failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MountRetry {
    pub not_before: Millis,
    pub delay: Millis,
}

impl Kubelet {
    /// Mounts a new pod's volumes before its sandbox exists. `None` when they are mounted (or
    /// there are none to wait for); otherwise the pod waits, and the reconcile is done here:
    /// an event per failed attempt, the status (`ContainerCreating`), and a requeue for when the
    /// back-off allows the next attempt.
    pub(super) fn wait_for_mounts(
        &mut self,
        obj: &Rc<Object>,
        pod: &Pod,
        cache: &Cache,
        node: Option<&Node>,
        now: Millis,
        out: &mut Outcome,
    ) -> Option<()> {
        let uid = pod.metadata.uid.clone();
        let failed = failed_mounts(pod, cache);
        let unbound = unbound_claims(pod, cache);
        let unattached = unattached_disks(pod, cache, node);
        let retry = self.mount_retry.get(&uid).copied();
        if failed.is_empty()
            && unbound.is_empty()
            && unattached.is_empty()
            && retry.is_none_or(|r| now >= r.not_before)
        {
            self.mount_retry.remove(&uid);
            return None;
        }
        // A claim not bound yet, or a disk not attached yet: the claim's events and the
        // attach/detach controller's say why, and the claim's binding or the Node's update wakes
        // the pod.
        let waits_for = if !failed.is_empty() {
            None
        } else if !unbound.is_empty() {
            Some((
                format!(
                    "Pending; claim(s) of volume(s) [{}] not bound",
                    unbound.join(" ")
                ),
                "wait for the claims to be bound",
            ))
        } else if !unattached.is_empty() {
            Some((
                format!(
                    "Pending; volume(s) [{}] not in {}'s status.volumesAttached",
                    unattached.join(" "),
                    self.node
                ),
                "wait for the attach/detach controller to attach them",
            ))
        } else {
            None
        };
        if let Some((observed, diff)) = waits_for {
            let host_ip = self.pod_host_ip(node);
            let status = self.generate_status(pod, None, &host_ip, now, false);
            if status != pod.status {
                let req = self.update_status(pod, status);
                out.request(req);
            }
            out.record = Some(ReconcileRecord {
                observed,
                desired: "every volume mounted, then the pod sandbox and its containers".into(),
                diff: diff.into(),
            });
            return Some(());
        }
        let waiting = match retry {
            // Still in back-off from the last failure: nothing is tried before it ends.
            Some(r) if now < r.not_before => r.not_before,
            _ => {
                for (_, message) in &failed {
                    out.event(EventRecord::warning(obj, "FailedMount", message.clone()));
                }
                let delay =
                    retry.map_or(MOUNT_RETRY_INITIAL, |r| (r.delay * 2).min(MOUNT_RETRY_MAX));
                self.mount_retry.insert(
                    uid.clone(),
                    MountRetry {
                        not_before: now + delay,
                        delay,
                    },
                );
                now + delay
            }
        };
        let host_ip = self.pod_host_ip(node);
        let status = self.generate_status(pod, None, &host_ip, now, false);
        if status != pod.status {
            let req = self.update_status(pod, status);
            out.request(req);
        }
        out.requeue(waiting.saturating_sub(now).max(1));
        let volumes: Vec<&str> = failed.iter().map(|(v, _)| v.as_str()).collect();
        out.record = Some(ReconcileRecord {
            observed: if volumes.is_empty() {
                "Pending; the volumes' objects exist now, the mount back-off has not ended".into()
            } else {
                format!(
                    "Pending; {}",
                    failed
                        .iter()
                        .map(|(_, m)| m.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            },
            desired: "every volume mounted, then the pod sandbox and its containers".into(),
            diff: format!(
                "wait for volume(s) [{}]; next mount attempt in {}",
                volumes.join(" "),
                crate::sim::time::format_duration(waiting.saturating_sub(now))
            ),
        });
        Some(())
    }

    /// The volume manager's online expansion (`NodeExpandVolume`): a claim this running pod
    /// mounts that waits for a node (`NodeResizePending`) has its filesystem grown
    /// [`NODE_EXPAND_TIME`] later, and its `status.capacity` becomes the allocated size; the
    /// resize conditions go, and `FileSystemResizeSuccessful` is recorded on the claim and the pod.
    pub(super) fn expand_filesystems(
        &mut self,
        obj: &Rc<Object>,
        pod: &Pod,
        cache: &Cache,
        now: Millis,
        out: &mut Outcome,
    ) {
        use crate::sim::api::storage::{
            resize_status, resize_step_patch, str_at, NODE_RESIZE_PENDING,
        };
        for s in volume_sources(pod)
            .into_iter()
            .filter(|s| s.resource == CLAIM)
        {
            let key = ObjectKey::new(s.kind, &pod.metadata.namespace, &s.name);
            let Some(claim_obj) = cache.get(&key) else {
                continue;
            };
            let Some(claim) = claim_obj.as_custom() else {
                continue;
            };
            if resize_status(claim) != Some(NODE_RESIZE_PENDING) {
                self.expanding.remove(&key);
                continue;
            }
            let due = match self.expanding.get(&key) {
                Some(due) => *due,
                None => {
                    self.expanding.insert(key.clone(), now + NODE_EXPAND_TIME);
                    now + NODE_EXPAND_TIME
                }
            };
            if now < due {
                out.requeue(due - now);
                continue;
            }
            // Sent, but a lost write leaves the claim waiting: the volume manager retries an
            // operation whose result it has not seen, as it would after the pod worker's back-off.
            self.expanding
                .insert(key.clone(), now + super::env::SYNC_RETRY);
            out.requeue(super::env::SYNC_RETRY);
            // What the resizer allocated; the request, should that write have been lost.
            let allocated = str_at(claim, &["status", "allocatedResources", "storage"])
                .or_else(|| str_at(claim, &["spec", "resources", "requests", "storage"]))
                .unwrap_or_default();
            let mut extra = serde_json::Map::new();
            extra.insert(
                "capacity".into(),
                serde_json::json!({ "storage": allocated }),
            );
            out.request(ApiRequest::Patch {
                key,
                patch: resize_step_patch(claim, None, None, &ts(now).to_rfc3339(), extra),
                status: true,
            });
            let message = format!(
                "MountVolume.NodeExpandVolume succeeded for volume {:?} {}",
                str_at(claim, &["spec", "volumeName"]).unwrap_or_default(),
                self.node
            );
            out.event(EventRecord::normal(
                claim_obj,
                "FileSystemResizeSuccessful",
                message.clone(),
            ));
            out.event(EventRecord::normal(
                obj,
                "FileSystemResizeSuccessful",
                message,
            ));
        }
    }

    /// The pods on this node in `namespace` whose volumes mount `kind`/`name`: what a ConfigMap
    /// or Secret event wakes.
    pub(super) fn pods_mounting(
        &self,
        cache: &Cache,
        kind: Kind,
        namespace: &str,
        name: &str,
    ) -> Vec<ObjectKey> {
        cache
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.metadata.namespace == namespace && p.spec.node_name == self.node)
            .filter(|p| {
                volume_sources(p)
                    .iter()
                    .any(|s| s.kind == kind && s.name == name)
            })
            .map(|p| ObjectKey::new(Kind::Pod, namespace, &p.metadata.name))
            .collect()
    }
}
