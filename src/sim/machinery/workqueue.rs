//! A client-go style work queue: de-duplicated keys and per-key exponential back-off on failure.

use std::collections::VecDeque;

use crate::sim::api::types::{Millis, ObjectKey};
use crate::vec_map::LookupMap;

/// Base delay of the per-item rate limiter (client-go's 5 ms).
pub const BACKOFF_BASE: Millis = 5;
/// Cap of the per-item rate limiter (client-go's 1000 s).
pub const BACKOFF_MAX: Millis = 1_000_000;

/// Keys waiting to be reconciled. A key queued twice is reconciled once.
///
/// The waiting keys and the failure counts are only looked up, every time a key is queued or
/// popped, so they are found by hash; the keys' order is `order`'s.
#[derive(Clone, Default)]
pub struct WorkQueue {
    order: VecDeque<ObjectKey>,
    /// The keys in `order` (the value is unused: the one map type shared with the failures).
    queued: LookupMap<ObjectKey, u32>,
    failures: LookupMap<ObjectKey, u32>,
}

// By hand: the keys in the order they wait, the failures in key order, never the hash's.
impl std::fmt::Debug for WorkQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut failures: Vec<(&ObjectKey, &u32)> = self.failures.iter().collect();
        failures.sort_unstable();
        f.debug_struct("WorkQueue")
            .field("order", &self.order)
            .field("failures", &failures)
            .finish()
    }
}

impl WorkQueue {
    /// An empty queue.
    pub fn new() -> WorkQueue {
        WorkQueue::default()
    }

    /// Queues a key unless it is already waiting. Returns whether it was newly queued.
    pub fn add(&mut self, key: ObjectKey) -> bool {
        if self.queued.insert(key.clone(), 0).is_none() {
            self.order.push_back(key);
            true
        } else {
            false
        }
    }

    /// The next key to reconcile.
    pub fn pop(&mut self) -> Option<ObjectKey> {
        let key = self.order.pop_front()?;
        self.queued.remove(&key);
        Some(key)
    }

    /// Number of waiting keys.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether `key` is waiting.
    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.queued.contains_key(key)
    }

    /// Records a failure and returns how long to wait before retrying (5 ms doubling to 1000 s).
    pub fn backoff(&mut self, key: &ObjectKey) -> Millis {
        let n = self.failures.entry(key.clone()).or_insert(0);
        let delay = BACKOFF_BASE
            .saturating_mul(1u64 << (*n).min(40))
            .min(BACKOFF_MAX);
        *n += 1;
        delay
    }

    /// Clears a key's failure count after a clean reconcile.
    pub fn forget(&mut self, key: &ObjectKey) {
        self.failures.remove(key);
    }

    /// How many times in a row `key` has failed.
    pub fn failures(&self, key: &ObjectKey) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    /// Drops everything (a restarted process starts with an empty queue).
    pub fn clear(&mut self) {
        *self = WorkQueue::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::Kind;

    fn key(n: &str) -> ObjectKey {
        ObjectKey::new(Kind::Pod, "default", n)
    }

    #[test]
    fn a_key_queued_twice_is_popped_once() {
        let mut q = WorkQueue::new();
        assert!(q.add(key("a")));
        assert!(!q.add(key("a")));
        q.add(key("b"));
        assert_eq!(q.pop(), Some(key("a")));
        assert_eq!(q.pop(), Some(key("b")));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn it_prints_its_keys_in_waiting_order_and_its_failures_in_key_order() {
        let mut q = WorkQueue::new();
        for name in ["c", "a", "b"] {
            q.add(key(name));
            q.backoff(&key(name));
        }
        let printed = format!("{q:?}");
        let at = |name: &str| {
            printed
                .match_indices(&format!("name: \"{name}\""))
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        };
        let (a, b, c) = (at("a"), at("b"), at("c"));
        assert!(c[0] < a[0] && a[0] < b[0], "waiting order: {printed}");
        assert!(
            a[1] < b[1] && b[1] < c[1],
            "failures in key order: {printed}"
        );
    }

    #[test]
    fn backoff_doubles_until_forgotten() {
        let mut q = WorkQueue::new();
        assert_eq!(q.backoff(&key("a")), 5);
        assert_eq!(q.backoff(&key("a")), 10);
        assert_eq!(q.backoff(&key("a")), 20);
        q.forget(&key("a"));
        assert_eq!(q.backoff(&key("a")), 5);
    }
}
