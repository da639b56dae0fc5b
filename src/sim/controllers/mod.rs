//! One module per component. Each exposes a type implementing [`Controller`] and its `reconcile`.

pub mod attachdetach;
pub mod deployment;
pub mod disruption;
pub mod endpointslice;
pub mod garbage_collector;
pub mod job;
pub mod kro;
pub mod kubelet;
pub mod namespace;
pub mod node_lifecycle;
pub mod persistentvolume;
pub mod podgc;
pub mod postgres;
pub mod pvcprotection;
pub mod pvprotection;
pub mod replicaset;
pub mod scheduler;
pub mod script;
pub mod statefulset;
pub mod taint_eviction;
#[cfg(test)]
pub(crate) mod testing;
pub mod ttl_after_finished;

use super::machinery::controller::Controller;
use persistentvolume::provisioner::{Driver, ExternalProvisioner};

/// The control plane a fresh cluster runs: kube-controller-manager's controllers and the scheduler.
pub fn control_plane() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(deployment::DeploymentController::new()),
        Box::new(replicaset::ReplicaSetController::new()),
        Box::new(statefulset::StatefulSetController::new()),
        Box::new(job::JobController::new()),
        Box::new(ttl_after_finished::TtlAfterFinishedController::new()),
        Box::new(persistentvolume::PersistentVolumeController::new()),
        Box::new(pvcprotection::PvcProtectionController::new()),
        Box::new(pvprotection::PvProtectionController::new()),
        Box::new(attachdetach::AttachDetachController::new()),
        Box::new(podgc::PodGcController::new()),
        Box::new(garbage_collector::GarbageCollector::new()),
        Box::new(node_lifecycle::NodeLifecycleController::new()),
        Box::new(taint_eviction::TaintEvictionController::new()),
        Box::new(disruption::DisruptionController::new()),
        Box::new(endpointslice::EndpointSliceController::new()),
        Box::new(namespace::NamespaceController::new()),
        Box::new(scheduler::Scheduler::new()),
        Box::new(ExternalProvisioner::new(Driver::LocalPath)),
        Box::new(ExternalProvisioner::new(Driver::Disk)),
    ]
}

/// The kubelet of a newly booted node.
pub fn kubelet_for(node: &str) -> Box<dyn Controller> {
    Box::new(kubelet::Kubelet::new(node))
}

/// The implementation of `id` for a trigger mode, for `SetTriggerMode`: the real (level-triggered)
/// controller, or its edge-triggered teaching variant. None when `id` has no such variant.
pub fn for_trigger_mode(
    id: &super::machinery::controller::ComponentId,
    mode: super::faults::TriggerMode,
) -> Option<Box<dyn Controller>> {
    use super::faults::TriggerMode;
    use super::machinery::controller::ComponentId;
    match (id, mode) {
        (ComponentId::ReplicaSet, TriggerMode::Level) => {
            Some(Box::new(replicaset::ReplicaSetController::new()))
        }
        (ComponentId::ReplicaSet, TriggerMode::Edge) => {
            Some(Box::new(replicaset::edge::EdgeReplicaSetController::new()))
        }
        _ => None,
    }
}

/// Whether `id` has an edge-triggered teaching variant (for the UI's switch).
pub fn has_edge_variant(id: &super::machinery::controller::ComponentId) -> bool {
    matches!(id, super::machinery::controller::ComponentId::ReplicaSet)
}
