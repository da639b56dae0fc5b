//! The storage system behind the cluster's volume drivers, as far as faults reach it: the cloud
//! API or the node-local disk a provisioner and a resizer call. Like the node's container
//! runtime, it is the world's, and a driver's reconcile is handed it for the calls it makes.

use std::collections::BTreeMap;

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
    failing: BTreeMap<(StorageCall, String), u32>,
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
    fn a_failure_for_any_class_hits_every_class() {
        let mut b = StorageBackend::default();
        b.fail_next(StorageCall::Provision, "", 1);
        assert!(b.refuses(StorageCall::Provision, "standard"));
        assert!(!b.refuses(StorageCall::Provision, "standard"));
    }
}
