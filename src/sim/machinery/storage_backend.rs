//! The storage system behind the cluster's volume drivers: the cloud API or the node-local disk a
//! provisioner, a resizer and an attacher call, with the faults set on it and the disks it has
//! attached to machines. Like the node's container runtime, it is the world's, and a driver's
//! reconcile is handed it for the calls it makes.

use crate::vec_map::VecMap;
use std::collections::BTreeSet;

/// A call a volume driver makes to its storage system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StorageCall {
    /// CreateVolume (a provisioner making a volume).
    Provision,
    /// ControllerExpandVolume (a resizer growing one).
    Expand,
}

/// The failures a fault has set up, per call and StorageClass ("" = any class).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StorageBackend {
    failing: VecMap<(StorageCall, String), u32>,
    /// Which disk is attached to which machine: `<volume handle>\n<node name>` (one string, so
    /// that the set shares the code of the crate's other string sets).
    attached: BTreeSet<String>,
}

impl StorageBackend {
    /// The next `count` calls of `call` for volumes of `class` ("" = any) fail.
    pub fn fail_next(&mut self, call: StorageCall, class: &str, count: u32) {
        *self.failing.entry((call, class.to_string())).or_default() += count;
    }

    /// Makes a call: whether a fault has it refused (counting the refusal off).
    pub fn refuses(&mut self, call: StorageCall, class: &str) -> bool {
        for key in [(call, class.to_string()), (call, String::new())] {
            if let Some(left) = self.failing.get_mut(&key) {
                *left -= 1;
                if *left == 0 {
                    self.failing.remove(&key);
                }
                return true;
            }
        }
        false
    }

    /// ControllerPublishVolume: the disk is attached to the node's machine.
    pub fn attach(&mut self, handle: &str, node: &str) {
        self.attached.insert(format!("{handle}\n{node}"));
    }

    /// ControllerUnpublishVolume: the disk is detached from the node's machine.
    pub fn detach(&mut self, handle: &str, node: &str) {
        self.attached.remove(&format!("{handle}\n{node}"));
    }

    /// Whether the disk is attached to the node's machine (what ListVolumes reports).
    pub fn is_attached(&self, handle: &str, node: &str) -> bool {
        self.attached.contains(&format!("{handle}\n{node}"))
    }

    /// The `DetachVolume` fault: the disk falls off every machine it was attached to, behind the
    /// cluster's back. The nodes it was on, in order.
    pub fn lose(&mut self, handle: &str) -> Vec<String> {
        let prefix = format!("{handle}\n");
        let lost: Vec<String> = self
            .attached
            .iter()
            .filter(|k| k.starts_with(&prefix))
            .cloned()
            .collect();
        for l in &lost {
            self.attached.remove(l);
        }
        lost.into_iter()
            .map(|k| k[prefix.len()..].to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_fails_as_many_calls_as_the_fault_asked_then_succeeds() {
        let mut b = StorageBackend::default();
        b.fail_next(StorageCall::Expand, "zonal", 2);
        assert!(!b.refuses(StorageCall::Provision, "zonal"));
        assert!(!b.refuses(StorageCall::Expand, "standard"));
        assert!(b.refuses(StorageCall::Expand, "zonal"));
        assert!(b.refuses(StorageCall::Expand, "zonal"));
        assert!(!b.refuses(StorageCall::Expand, "zonal"));
    }

    #[test]
    fn a_lost_disk_is_attached_nowhere_until_attached_again() {
        let mut b = StorageBackend::default();
        b.attach("disk-1", "node-1");
        b.attach("disk-2", "node-1");
        assert_eq!(b.lose("disk-1"), vec!["node-1".to_string()]);
        assert!(!b.is_attached("disk-1", "node-1"));
        assert!(b.is_attached("disk-2", "node-1"));
        b.attach("disk-1", "node-1");
        assert!(b.is_attached("disk-1", "node-1"));
    }

    #[test]
    fn a_failure_for_any_class_hits_every_class() {
        let mut b = StorageBackend::default();
        b.fail_next(StorageCall::Provision, "", 1);
        assert!(b.refuses(StorageCall::Provision, "standard"));
        assert!(!b.refuses(StorageCall::Provision, "standard"));
    }
}
