//! One module per component. Each exposes a type implementing [`Controller`] and its `reconcile`.

pub mod deployment;
pub mod deployment_util;
pub mod disruption;
pub mod endpointslice;
pub mod garbage_collector;
pub mod kubelet;
pub mod node_lifecycle;
pub mod replicaset;
pub mod scheduler;
pub mod taint_eviction;

use super::controller::Controller;

/// The control plane a fresh cluster runs: kube-controller-manager's controllers and the scheduler.
pub fn control_plane() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(deployment::DeploymentController::new()),
        Box::new(replicaset::ReplicaSetController::new()),
        Box::new(garbage_collector::GarbageCollector::new()),
        Box::new(node_lifecycle::NodeLifecycleController::new()),
        Box::new(taint_eviction::TaintEvictionController::new()),
        Box::new(disruption::DisruptionController::new()),
        Box::new(endpointslice::EndpointSliceController::new()),
        Box::new(scheduler::Scheduler::new()),
    ]
}

/// The kubelet of a newly booted node.
pub fn kubelet_for(node: &str) -> Box<dyn Controller> {
    Box::new(kubelet::Kubelet::new(node))
}
