//! The fault panel's form model: which fields each fault takes, and how the form's strings become
//! a [`Fault`] — through the fault's serde form, the same path the JS API and scenarios use.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::sim::faults::Fault;

/// What kind of input a field needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A pod name (offered from the live pods).
    Pod,
    /// A node name (offered from the live nodes).
    Node,
    /// A component name (offered from the running components).
    Component,
    Text,
    /// A whole number.
    Integer,
    /// A probability between 0 and 1.
    Fraction,
    /// A Go duration (`30s`).
    Duration,
    /// A JSON merge patch.
    Json,
}

/// One form field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpec {
    /// The key in the fault's serde form.
    pub name: &'static str,
    pub label: &'static str,
    pub kind: FieldKind,
    pub required: bool,
    pub placeholder: &'static str,
}

const fn f(
    name: &'static str,
    label: &'static str,
    kind: FieldKind,
    required: bool,
    placeholder: &'static str,
) -> FieldSpec {
    FieldSpec {
        name,
        label,
        kind,
        required,
        placeholder,
    }
}

const POD: FieldSpec = f("pod", "Pod", FieldKind::Pod, false, "a pod name");
const SELECTOR: FieldSpec = f(
    "selector",
    "or label selector",
    FieldKind::Text,
    false,
    "app=web",
);
const CONTAINER: FieldSpec = f(
    "container",
    "Container",
    FieldKind::Text,
    false,
    "first container",
);
const EXIT: FieldSpec = f("exitCode", "Exit code", FieldKind::Integer, false, "1");
const DURATION: FieldSpec = f(
    "duration",
    "For how long",
    FieldKind::Duration,
    false,
    "forever, or 30s",
);
const NODE: FieldSpec = f("node", "Node", FieldKind::Node, true, "node-1");
const COMPONENT: FieldSpec = f(
    "component",
    "Component",
    FieldKind::Component,
    true,
    "replicaset-controller",
);
const IMAGE: FieldSpec = f("image", "Image", FieldKind::Text, true, "nginx:1.27");
const OBJECT: FieldSpec = f(
    "object",
    "Object",
    FieldKind::Text,
    true,
    "Deployment/default/web",
);

/// One fault in the panel's catalogue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaultSpec {
    /// The serde tag (`NodeDown`).
    pub type_: &'static str,
    /// A group for the picker.
    pub group: &'static str,
    /// What it does and what to watch for, in a sentence or two.
    pub help: &'static str,
    pub fields: &'static [FieldSpec],
}

/// Every fault, grouped for the picker.
pub const FAULTS: &[FaultSpec] = &[
    FaultSpec { type_: "DeletePod", group: "Pods", help: "Deletes pods, as kubectl delete pod does. Watch the ReplicaSet controller notice the missing replica and create a replacement with a new name.", fields: &[POD, SELECTOR] },
    FaultSpec { type_: "CrashContainer", group: "Pods", help: "The container exits once. The kubelet restarts it in place (same pod, restart count +1): no controller is involved.", fields: &[POD, SELECTOR, CONTAINER, EXIT] },
    FaultSpec { type_: "CrashLoop", group: "Pods", help: "The container keeps exiting right after it starts. Watch the kubelet's back-off grow: CrashLoopBackOff.", fields: &[POD, SELECTOR, CONTAINER, EXIT, DURATION] },
    FaultSpec { type_: "OomKill", group: "Pods", help: "The container is killed for exceeding its memory limit (exit 137, OOMKilled) and restarted.", fields: &[POD, SELECTOR, CONTAINER] },
    FaultSpec { type_: "FailReadiness", group: "Pods", help: "The readiness probe fails: the pod keeps running but stops counting as ready, and leaves its Service's endpoints.", fields: &[POD, SELECTOR, CONTAINER, DURATION] },
    FaultSpec { type_: "FailLiveness", group: "Pods", help: "The liveness probe fails: the kubelet kills and restarts the container.", fields: &[POD, SELECTOR, CONTAINER, DURATION] },
    FaultSpec { type_: "FailJobPods", group: "Pods", help: "The Job's next pods each exit non-zero once. Watch the Job controller count each failure, wait 10 s, then 20 s, before the next pod, and give up past backoffLimit.", fields: &[f("job", "Job", FieldKind::Text, true, "pi"), f("count", "How many pods", FieldKind::Integer, false, "1"), EXIT] },
    FaultSpec { type_: "FailVolumeProvisioning", group: "Storage", help: "The storage system refuses the next volumes a provisioner asks it for. Watch the claim stay Pending with ProvisioningFailed, the provisioner retry with back-off, and the claim bind once the refusals are used up.", fields: &[f("storageClass", "Only of StorageClass", FieldKind::Text, false, "standard"), f("count", "How many", FieldKind::Integer, false, "1")] },
    FaultSpec { type_: "FailVolumeExpansion", group: "Storage", help: "The storage system refuses the next expansions a resizer asks for (the zonal disk driver's). Watch the claim show ControllerResizeFailed and VolumeResizeFailed, and the resizer retry until the volume grows.", fields: &[f("storageClass", "Only of StorageClass", FieldKind::Text, false, "zonal"), f("count", "How many", FieldKind::Integer, false, "1")] },
    FaultSpec { type_: "DetachVolume", group: "Storage", help: "The disk bound to the claim falls off its node behind the cluster's back. Within a minute the disk driver's external-attacher finds out from the storage system, marks its VolumeAttachment detached, and attaches it again.", fields: &[f("claim", "PersistentVolumeClaim", FieldKind::Text, true, "data-db-0")] },
    FaultSpec { type_: "BreakImage", group: "Images", help: "The registry stops serving this image: new pulls fail with ErrImagePull, then ImagePullBackOff.", fields: &[IMAGE] },
    FaultSpec { type_: "FixImage", group: "Images", help: "The registry serves the image again: the kubelet's next retry succeeds.", fields: &[IMAGE] },
    FaultSpec { type_: "NodeDown", group: "Nodes", help: "The machine dies. Heartbeats stop; after the grace period the node controller marks it Unknown and its pods are evicted and replaced elsewhere.", fields: &[NODE] },
    FaultSpec { type_: "NodeUp", group: "Nodes", help: "The machine boots: its kubelet starts, relists and reconciles its pods.", fields: &[NODE] },
    FaultSpec { type_: "PartitionNode", group: "Nodes", help: "The kubelet is cut off from the API server. Its containers keep running, but nobody can see them: the status goes stale, and its Events are lost (simplified: a real kubelet retries them for about two minutes).", fields: &[NODE] },
    FaultSpec { type_: "HealNode", group: "Nodes", help: "The partition ends: the kubelet resumes its watch (or relists after 410 Gone) and reconciles.", fields: &[NODE] },
    FaultSpec { type_: "DropWatchEvents", group: "Control plane", help: "A component misses watch events: its cache goes stale. Level-triggered reconciliation recovers at the next event or resync.", fields: &[COMPONENT, f("count", "How many", FieldKind::Integer, false, "1"), f("probability", "or probability", FieldKind::Fraction, false, "0.5"), f("kind", "Only of kind", FieldKind::Text, false, "Pod"), f("eventType", "Only of type", FieldKind::Text, false, "DELETED"), DURATION] },
    FaultSpec { type_: "DelayWatchEvents", group: "Control plane", help: "A component's watch lags: it acts on a stale view and its writes may conflict (409).", fields: &[COMPONENT, f("delay", "Delay", FieldKind::Duration, true, "2s"), DURATION] },
    FaultSpec { type_: "RestartController", group: "Control plane", help: "The process restarts: caches, queues and expectations are lost; it relists and reconciles everything.", fields: &[COMPONENT] },
    FaultSpec { type_: "CrashMidReconcile", group: "Control plane", help: "The component's next pass that sends more requests than this dies after sending that many: what it sent is written, the rest is lost with its memory. It starts again 10 s later and relists. A controller of kube-controller-manager takes the whole process down, as a kro instance controller takes kro down. Level-triggered controllers finish the job; watch for writes done twice.", fields: &[COMPONENT, f("afterRequests", "Requests sent before the crash", FieldKind::Integer, true, "1")] },
    FaultSpec { type_: "StopComponent", group: "Control plane", help: "Stops a component (kube-apiserver too: every client gets 503 and retries). Nothing reconciles what it owns until it starts again.", fields: &[COMPONENT] },
    FaultSpec { type_: "StartComponent", group: "Control plane", help: "Starts a stopped component: it lists the current state and catches up.", fields: &[COMPONENT] },
    FaultSpec { type_: "ConflictingWriter", group: "Objects", help: "A second writer races the object's owner: updates fail with 409 Conflict and are retried from a fresh read.", fields: &[OBJECT, DURATION] },
    FaultSpec { type_: "EditObject", group: "Objects", help: "Edits a live object directly, bypassing its owner. Does the owner revert it? Only if it compares that field.", fields: &[OBJECT, f("patch", "Merge patch (JSON)", FieldKind::Json, true, "{\"metadata\":{\"labels\":{\"app\":\"other\"}}}")] },
];

/// The catalogue entry of a fault type.
pub fn fault_spec(type_: &str) -> Option<&'static FaultSpec> {
    FAULTS.iter().find(|f| f.type_ == type_)
}

/// Builds a fault from the form's strings. Empty optional fields are left out.
pub fn build_fault(type_: &str, values: &BTreeMap<String, String>) -> Result<Fault, String> {
    let spec = fault_spec(type_).ok_or_else(|| format!("unknown fault {type_:?}"))?;
    let mut obj = Map::new();
    obj.insert("type".into(), Json::String(type_.into()));
    for field in spec.fields {
        let raw = values.get(field.name).map(|s| s.trim()).unwrap_or("");
        if raw.is_empty() {
            if field.required {
                return Err(format!("{} is required", field.label));
            }
            continue;
        }
        let v = match field.kind {
            FieldKind::Integer => Json::from(
                raw.parse::<i64>()
                    .map_err(|_| format!("{}: expected a whole number", field.label))?,
            ),
            FieldKind::Fraction => {
                let p: f64 = raw
                    .parse()
                    .map_err(|_| format!("{}: expected a number between 0 and 1", field.label))?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(format!(
                        "{}: expected a number between 0 and 1",
                        field.label
                    ));
                }
                Json::from(p)
            }
            FieldKind::Json => {
                serde_json::from_str(raw).map_err(|e| format!("{}: {e}", field.label))?
            }
            _ => Json::String(raw.into()),
        };
        obj.insert(field.name.into(), v);
    }
    let has_target = spec.fields.iter().any(|f| f.name == "pod");
    if has_target && !obj.contains_key("pod") && !obj.contains_key("selector") {
        return Err("name a pod or a label selector".into());
    }
    serde_json::from_value(Json::Object(obj)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::faults::PodTarget;

    fn vals(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_fault_variant_is_in_the_catalogue_once() {
        let names: std::collections::BTreeSet<&str> = FAULTS.iter().map(|f| f.type_).collect();
        assert_eq!(names.len(), FAULTS.len());
        assert_eq!(FAULTS.len(), 24, "one entry per Fault variant");
    }

    #[test]
    fn a_form_becomes_a_fault_through_its_serde_form() {
        let f = build_fault(
            "CrashLoop",
            &vals(&[("pod", "web-1"), ("exitCode", "2"), ("duration", "30s")]),
        )
        .expect("valid");
        assert_eq!(
            f,
            Fault::CrashLoop {
                target: PodTarget {
                    pod: Some("web-1".into()),
                    namespace: "default".into(),
                    ..Default::default()
                },
                exit_code: 2,
                duration: Some(30_000)
            }
        );
        assert_eq!(
            build_fault("NodeDown", &vals(&[("node", "node-2")])),
            Ok(Fault::NodeDown {
                node: "node-2".into()
            })
        );
    }

    #[test]
    fn missing_and_malformed_fields_are_explained() {
        assert_eq!(
            build_fault("NodeDown", &vals(&[])),
            Err("Node is required".into())
        );
        assert_eq!(
            build_fault("DeletePod", &vals(&[])),
            Err("name a pod or a label selector".into())
        );
        assert!(build_fault(
            "DropWatchEvents",
            &vals(&[("component", "x"), ("probability", "2")])
        )
        .is_err());
        assert!(build_fault(
            "EditObject",
            &vals(&[("object", "Pod/a"), ("patch", "{oops")])
        )
        .is_err());
        assert!(build_fault("Nope", &vals(&[])).is_err());
    }

    #[test]
    fn every_catalogued_fault_can_be_built_from_placeholders() {
        for spec in FAULTS {
            let mut v = BTreeMap::new();
            for field in spec.fields {
                if field.required || field.name == "pod" {
                    let sample = match field.kind {
                        FieldKind::Pod => "web-1",
                        FieldKind::Node => "node-1",
                        FieldKind::Component => "replicaset-controller",
                        FieldKind::Duration => "2s",
                        _ => field.placeholder,
                    };
                    v.insert(field.name.to_string(), sample.to_string());
                }
            }
            let built = build_fault(spec.type_, &v);
            assert!(built.is_ok(), "{}: {built:?}", spec.type_);
            assert_eq!(built.map(|f| f.name()), Ok(spec.type_));
        }
    }
}
