//! Machines: a Node object brings a machine (container runtime and kubelet) with it, and deleting it decommissions both.

use super::*;

/// A simulated machine.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// Powered on (booting or booted).
    pub up: bool,
    pub runtime: NodeRuntime,
    /// While it boots after a NodeUp: when its kubelet starts.
    pub kubelet_starts_at: Option<Millis>,
}

/// How long a machine powered on by NodeUp takes before its kubelet runs: firmware, kernel and
/// systemd, then the container runtime and the kubelet (ARCHITECTURE.md, "Deliberate
/// simplifications", says where the figure comes from). The kubelet then posts the node Ready
/// within a second, as its fast status update on start does.
pub const MACHINE_BOOT_MS: Millis = 30_000;

impl Sim {
    /// The machines (for the cluster view: which nodes are up).
    pub fn machines(&self) -> &SlotMap<Str, Machine> {
        &self.machines
    }

    /// Changes whenever [`Sim::machines`] gains or loses a machine or one is powered off or on,
    /// so a view can tell that nothing changed without comparing a thousand names every frame.
    pub fn machines_generation(&self) -> u64 {
        self.machines_generation
    }

    pub(super) fn maybe_boot_machine(&mut self, ev: &WatchEvent) {
        let Object::Node(node) = &*ev.object else {
            return;
        };
        let name = node.metadata.name.clone();
        match ev.type_ {
            WatchEventType::Added if !self.machines.contains_key(name.as_str()) => {
                self.machines.insert(
                    name.clone(),
                    Machine {
                        up: true,
                        runtime: NodeRuntime::booted(&self.broken_images),
                        kubelet_starts_at: None,
                    },
                );
                self.machines_generation += 1;
                let id = ComponentId::Kubelet(name.clone());
                let kubelet = controllers::kubelet_for(&name);
                let c = Component::new(kubelet, self.config.seed, &mut self.lines);
                self.components.insert(id.clone(), c);
                self.start_component(&id, "start");
            }
            WatchEventType::Deleted => {
                // Deleting the Node object decommissions the machine (a deliberate simplification:
                // a real kubelet would re-register its node).
                if self.machines.remove(name.as_str()).is_some() {
                    self.machines_generation += 1;
                }
                let id = ComponentId::Kubelet(name.clone());
                if let Some(c) = self.components.remove(&id) {
                    if let Some(node) = routing_of(&id, c.ctrl.as_ref()) {
                        for key in &c.selected {
                            release(&mut self.routed_selected, key, node);
                        }
                    }
                }
                self.refresh_watchers(&id);
            }
            _ => {}
        }
    }
}
