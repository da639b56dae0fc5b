//! A node's container runtime: the machine-side state a kubelet observes and acts on.
//!
//! It belongs to the world, not to the kubelet: a restarted kubelet finds its containers still
//! running, while a node that goes down loses them. Faults act here; the kubelet notices.

use std::collections::{BTreeMap, BTreeSet};

use super::types::Millis;

/// One simulated machine's runtime.
#[derive(Clone, Debug, Default)]
pub struct NodeRuntime {
    /// Images already pulled on this node.
    pub images: BTreeSet<String>,
    /// Sandboxes by pod uid.
    pub pods: BTreeMap<String, PodSandbox>,
}

/// The containers of one pod on this node.
#[derive(Clone, Debug, Default)]
pub struct PodSandbox {
    pub containers: BTreeMap<String, ContainerRuntimeState>,
}

/// One container as the runtime sees it.
#[derive(Clone, Debug, Default)]
pub struct ContainerRuntimeState {
    pub started_at: Option<Millis>,
    pub running: bool,
}
