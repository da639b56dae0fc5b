//! core/v1 PersistentVolumeClaim and PersistentVolume, storage.k8s.io/v1 StorageClass: what the
//! API server stores for them (the defaults Kubernetes applies when it decodes one, and the
//! DefaultStorageClass admission plugin), the annotations the volume controllers write, and the
//! reads of their stored JSON the controllers and the scheduler share.

use serde_json::{json, Map, Value as Json};

use super::apiextensions::CustomObject;
use super::openapi::stored_kind;
use super::types::{Kind, ObjectMeta, Pod};

/// The annotation that makes a StorageClass the default (`storageclass.kubernetes.io/is-default-class`).
pub const IS_DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// Its older, beta spelling, still honoured.
pub const IS_DEFAULT_CLASS_BETA: &str = "storageclass.beta.kubernetes.io/is-default-class";
/// Written on a claim by the scheduler: the node its first consumer was scheduled to, which lets
/// a WaitForFirstConsumer provisioner make the volume there.
pub const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// Written on a claim by the PV controller when it hands the claim to a provisioner.
pub const STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
/// The beta twin of [`STORAGE_PROVISIONER`], still written.
pub const STORAGE_PROVISIONER_BETA: &str = "volume.beta.kubernetes.io/storage-provisioner";
/// On a bound claim: the binding is complete.
pub const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// On a claim (and volume) the PV controller bound.
pub const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
/// On a volume a provisioner made: which one.
pub const PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";

/// The default class a fresh cluster has, as kind's default storage installs it.
pub const STANDARD_CLASS: &str = "standard";
/// Its provisioner: kind's local-path provisioner, which makes each volume on one node.
pub const LOCAL_PATH_PROVISIONER: &str = "rancher.io/local-path";
/// The simulated cloud's block-storage CSI driver: zonal disks that grow online, a stand-in for
/// a cloud's (GCE PD, EBS, Azure Disk). Every cluster runs it; a StorageClass names it.
pub const DISK_DRIVER: &str = "disk.csi.kubeloop.dev";
/// The well-known label of a node's (and a zonal volume's) zone.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// `status.allocatedResourceStatuses["storage"]` while a claim grows (core/v1's
/// ClaimResourceStatus values, RecoverVolumeExpansionFailure being GA in v1.34).
pub const CONTROLLER_RESIZE_IN_PROGRESS: &str = "ControllerResizeInProgress";
pub const CONTROLLER_RESIZE_FAILED: &str = "ControllerResizeFailed";
pub const NODE_RESIZE_PENDING: &str = "NodeResizePending";
/// The condition a claim shows while its filesystem waits for a node to grow it, and its message.
pub const FILE_SYSTEM_RESIZE_PENDING: &str = "FileSystemResizePending";
pub const FILE_SYSTEM_RESIZE_PENDING_MESSAGE: &str =
    "Waiting for user to (re-)start a pod to finish file system resize of volume on node.";
/// The conditions resizing writes; a new step replaces the last one's.
const RESIZE_CONDITIONS: [&str; 4] = [
    "Resizing",
    FILE_SYSTEM_RESIZE_PENDING,
    "ControllerResizeError",
    "NodeResizeError",
];

/// The stored kinds of the storage wing.
pub fn claim_kind() -> Option<Kind> {
    stored_kind("", "PersistentVolumeClaim").map(Kind::Custom)
}

pub fn volume_kind() -> Option<Kind> {
    stored_kind("", "PersistentVolume").map(Kind::Custom)
}

pub fn class_kind() -> Option<Kind> {
    stored_kind("storage.k8s.io", "StorageClass").map(Kind::Custom)
}

/// The string at a path of a stored object's JSON (`["spec", "storageClassName"]`).
pub fn str_at<'a>(obj: &'a CustomObject, path: &[&str]) -> Option<&'a str> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(obj.content.get(*first)?, |v, k| v.get(k))
        .and_then(Json::as_str)
}

/// The claims a pod mounts (`spec.volumes[].persistentVolumeClaim.claimName`), in order.
pub fn pod_claims(pod: &Pod) -> Vec<&str> {
    let Some(Json::Array(volumes)) = pod.spec.volumes.as_deref() else {
        return Vec::new();
    };
    volumes
        .iter()
        .filter_map(|v| v.get("persistentVolumeClaim")?.get("claimName")?.as_str())
        .collect()
}

/// The finalizer that keeps a claim while a pod uses it (`kubernetes.io/pvc-protection`).
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// The finalizer that keeps a volume while it is bound (`kubernetes.io/pv-protection`).
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

/// The StorageObjectInUseProtection admission plugin: every new claim and volume gets its
/// protection finalizer, which the protection controllers remove once nothing uses it.
pub fn protect(meta: &mut ObjectMeta, finalizer: &str) {
    if !meta.finalizers.iter().any(|f| f == finalizer) {
        meta.finalizers.push(finalizer.into());
    }
}

/// Whether a pod counts as using a claim for its protection (`podUsesPVC`): it names the claim
/// and is scheduled (the kubelet refuses to start a pod on a claim being deleted, so an
/// unscheduled one never will), and it has not terminated.
pub fn pod_uses_claim(pod: &Pod, claim: &str) -> bool {
    !pod.spec.node_name.is_empty()
        && !matches!(pod.status.phase.as_str(), "Succeeded" | "Failed")
        && pod_claims(pod).contains(&claim)
}

/// The VolumeAttachment kind (storage.k8s.io/v1): the attach/detach controller's request that a
/// CSI driver's external-attacher attach a volume to a node.
pub fn attachment_kind() -> Option<Kind> {
    stored_kind("storage.k8s.io", "VolumeAttachment").map(Kind::Custom)
}

/// The finalizer the disk driver's external-attacher puts on a VolumeAttachment it attached,
/// removed once the disk is detached (`external-attacher/<driver with dots as dashes>`).
pub fn attacher_finalizer() -> String {
    format!("external-attacher/{}", DISK_DRIVER.replace('.', "-"))
}

/// A CSI volume's `volumeHandle` when its driver needs attaching (the disk driver's CSIDriver has
/// `attachRequired: true`; local-path is a directory and attaches nothing).
pub fn attachable_handle(volume: &CustomObject) -> Option<&str> {
    (str_at(volume, &["spec", "csi", "driver"]) == Some(DISK_DRIVER))
        .then(|| str_at(volume, &["spec", "csi", "volumeHandle"]))
        .flatten()
}

/// The name the node status and the volume managers know a CSI volume by:
/// `kubernetes.io/csi/<driver>^<volumeHandle>`.
pub fn unique_volume_name(handle: &str) -> String {
    format!("kubernetes.io/csi/{DISK_DRIVER}^{handle}")
}

/// The CSI volume plugin's name for the VolumeAttachment of a volume to a node:
/// `csi-` and the SHA-256 of handle, driver and node, in hex.
pub fn attachment_name(handle: &str, node: &str) -> String {
    format!(
        "csi-{}",
        super::sha256::hex(format!("{handle}{DISK_DRIVER}{node}").as_bytes())
    )
}

/// Whether a volume may be attached to one node only (`isMultiAttachForbidden`): unless its
/// access modes allow many readers or writers.
pub fn multi_attach_forbidden(volume: &CustomObject) -> bool {
    let modes = volume
        .content
        .get("spec")
        .and_then(|s| s.get("accessModes"))
        .and_then(Json::as_array);
    !modes.is_some_and(|m| {
        m.iter()
            .any(|x| matches!(x.as_str(), Some("ReadWriteMany" | "ReadOnlyMany")))
    })
}

/// Whether a StorageClass is marked default.
pub fn is_default_class(meta: &ObjectMeta) -> bool {
    [IS_DEFAULT_CLASS, IS_DEFAULT_CLASS_BETA]
        .iter()
        .any(|a| meta.annotations.get(a).map(|v| v.as_str()) == Some("true"))
}

/// Fills in a claim's defaults, in place: a Filesystem volume, `Pending` until bound, and — on
/// create, when it names no class — the default class (`default_class`, which the
/// DefaultStorageClass admission plugin finds). `storageClassName: ""` opts out and stays.
pub fn default_claim(obj: &mut CustomObject, create: bool, default_class: Option<&str>) {
    if let Json::Object(spec) = obj
        .content
        .entry("spec")
        .or_insert_with(|| Json::Object(Map::new()))
    {
        spec.entry("volumeMode").or_insert(json!("Filesystem"));
        if let (true, Some(class)) = (create, default_class) {
            spec.entry("storageClassName").or_insert(json!(class));
        }
    }
    if let Json::Object(status) = obj
        .content
        .entry("status")
        .or_insert_with(|| Json::Object(Map::new()))
    {
        status.entry("phase").or_insert(json!("Pending"));
    }
}

/// The bytes of a storage quantity at a path of a claim (0 when absent or malformed).
pub fn storage_at(obj: &CustomObject, path: &[&str]) -> i64 {
    str_at(obj, path)
        .and_then(|q| super::quantity::parse_quantity(q).ok())
        .map_or(0, |q| q.value())
}

/// What an update of a claim's requested size meets: validation's rule that the request never
/// drops below what the volume already has (`status.capacity`; RecoverVolumeExpansionFailure
/// lets it come back down to there), then the PersistentVolumeClaimResize admission plugin: only
/// a bound claim whose class allows expansion may grow. `class` is the claim's StorageClass.
pub fn admit_claim_resize(
    obj: &CustomObject,
    old: &CustomObject,
    class: Option<&CustomObject>,
) -> Result<(), super::ApiError> {
    const REQUEST: [&str; 4] = ["spec", "resources", "requests", "storage"];
    let (requested, before) = (storage_at(obj, &REQUEST), storage_at(old, &REQUEST));
    if requested == before {
        return Ok(());
    }
    let capacity = storage_at(old, &["status", "capacity", "storage"]);
    if capacity > 0 && requested < capacity {
        let err = super::validation::FieldError::forbidden(
            "spec.resources.requests.storage",
            "field can not be less than status.capacity",
        );
        return super::validation::invalid_if_any(
            Kind::Custom(obj.kind),
            &obj.metadata.name,
            &[err],
        );
    }
    if requested < before {
        return Ok(());
    }
    let forbidden = |why: &str| super::ApiError {
        reason: super::StatusReason::Forbidden,
        message: format!(
            "persistentvolumeclaims {:?} is forbidden: {why}",
            obj.metadata.name
        ),
    };
    if str_at(old, &["status", "phase"]) != Some("Bound") {
        return Err(forbidden(
            "Only bound persistent volume claims can be expanded",
        ));
    }
    let expandable = class
        .and_then(|c| c.content.get("allowVolumeExpansion"))
        .and_then(Json::as_bool)
        == Some(true);
    if !expandable {
        return Err(forbidden(
            "only dynamically provisioned pvc can be resized and the storageclass that provisions \
             the pvc must support resize",
        ));
    }
    Ok(())
}

/// Where a claim's expansion is: `status.allocatedResourceStatuses["storage"]`.
pub fn resize_status(claim: &CustomObject) -> Option<&str> {
    str_at(claim, &["status", "allocatedResourceStatuses", "storage"])
}

/// The status merge patch of a claim's next resize step: its resize status (`None` clears it)
/// and the condition that says so (`(type, message)`), replacing the last step's condition.
/// `extra` adds fields (`allocatedResources`, `capacity`).
pub fn resize_step_patch(
    claim: &CustomObject,
    resize_status: Option<&str>,
    condition: Option<(&str, &str)>,
    stamp: &str,
    extra: Map<String, Json>,
) -> Json {
    let mut conditions: Vec<Json> = claim
        .content
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|c| {
            !c.get("type")
                .and_then(Json::as_str)
                .is_some_and(|t| RESIZE_CONDITIONS.contains(&t))
        })
        .cloned()
        .collect();
    if let Some((type_, message)) = condition {
        let mut c = json!({"type": type_, "status": "True", "lastProbeTime": null, "lastTransitionTime": stamp});
        if !message.is_empty() {
            c["message"] = json!(message);
        }
        conditions.push(c);
    }
    let mut status = extra;
    status.insert(
        "allocatedResourceStatuses".into(),
        resize_status.map_or(Json::Null, |s| json!({"storage": s})),
    );
    status.insert(
        "conditions".into(),
        if conditions.is_empty() {
            Json::Null
        } else {
            Json::Array(conditions)
        },
    );
    json!({"status": status})
}

/// `SetDefaults_PersistentVolume`: `Retain`, Filesystem, `Pending` until the controller looks.
pub fn default_volume(obj: &mut CustomObject) {
    if let Json::Object(spec) = obj
        .content
        .entry("spec")
        .or_insert_with(|| Json::Object(Map::new()))
    {
        spec.entry("persistentVolumeReclaimPolicy")
            .or_insert(json!("Retain"));
        spec.entry("volumeMode").or_insert(json!("Filesystem"));
    }
    if let Json::Object(status) = obj
        .content
        .entry("status")
        .or_insert_with(|| Json::Object(Map::new()))
    {
        status.entry("phase").or_insert(json!("Pending"));
    }
}

/// `SetDefaults_StorageClass`: `Delete` and `Immediate`.
pub fn default_class(obj: &mut CustomObject) {
    obj.content
        .entry("reclaimPolicy")
        .or_insert(json!("Delete"));
    obj.content
        .entry("volumeBindingMode")
        .or_insert(json!("Immediate"));
}

/// The default StorageClass of a fresh cluster: kind's `standard` (local-path volumes, made on
/// the node of their first consumer, deleted with their claim).
pub fn standard_class() -> Option<CustomObject> {
    let mut metadata = ObjectMeta {
        name: STANDARD_CLASS.into(),
        ..Default::default()
    };
    metadata.annotations.insert(IS_DEFAULT_CLASS, "true");
    let mut content = Map::new();
    content.insert("provisioner".into(), json!(LOCAL_PATH_PROVISIONER));
    content.insert("reclaimPolicy".into(), json!("Delete"));
    content.insert("volumeBindingMode".into(), json!("WaitForFirstConsumer"));
    Some(CustomObject {
        kind: class_kind()?.custom()?,
        api_version: "storage.k8s.io/v1".into(),
        metadata,
        content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(spec: Json) -> CustomObject {
        let mut content = Map::new();
        content.insert("spec".into(), spec);
        CustomObject {
            kind: claim_kind()
                .and_then(|k| k.custom())
                .expect("PVC is stored"),
            api_version: "v1".into(),
            metadata: ObjectMeta::default(),
            content,
        }
    }

    #[test]
    fn a_new_claim_without_a_class_gets_the_default_one_and_an_empty_class_opts_out() {
        let mut c = claim(json!({}));
        default_claim(&mut c, true, Some("standard"));
        assert_eq!(str_at(&c, &["spec", "storageClassName"]), Some("standard"));
        assert_eq!(str_at(&c, &["status", "phase"]), Some("Pending"));
        assert_eq!(str_at(&c, &["spec", "volumeMode"]), Some("Filesystem"));
        let mut none = claim(json!({"storageClassName": ""}));
        default_claim(&mut none, true, Some("standard"));
        assert_eq!(str_at(&none, &["spec", "storageClassName"]), Some(""));
        let mut later = claim(json!({}));
        default_claim(&mut later, false, Some("standard"));
        assert_eq!(str_at(&later, &["spec", "storageClassName"]), None);
    }
}
