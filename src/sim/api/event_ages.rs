//! `EventAges`: the store's Events by age, oldest first, for the cap and TTL expiry to take.
//!
//! Expiry takes the oldest Events by age (`lastTimestamp`, else creation), ties in key order. An
//! ordered set of `(age, key)` kept that order on every write, but a converging cluster records
//! Events a few thousand a simulated second, most in the same millisecond as others, so each
//! insert descended the tree comparing key strings (1.2% of converging 1,000 replicas), for an
//! order read only at the front, 500 at a time. Here a write appends the key to its age's bucket
//! (the newest, nearly always) and nothing else: an Event removed or seen again at a new age
//! leaves its old entry behind, and a reader keeps only the entries that still name a stored
//! Event of that age, in key order, one bucket at a time. Entries left behind are swept when
//! they outnumber the Events, so memory stays within a constant factor of the cap.

use std::collections::BTreeMap;

use crate::sim::api::types::{Millis, SharedKey};
use crate::sort::StableSort;

/// How many entries beyond twice the live Events trigger a sweep.
const SWEEP_SLACK: usize = 1024;

/// Keys of stored Events by age (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct EventAges {
    buckets: BTreeMap<Millis, Vec<SharedKey>>,
    /// Entries in all buckets, the left-behind ones included.
    entries: usize,
}

impl EventAges {
    /// Files `key`, stored now with age `age`. `live` counts the stored Events and `age_of`
    /// tells a stored Event's age (None: not stored), for the sweep.
    pub fn insert(
        &mut self,
        age: Millis,
        key: SharedKey,
        live: usize,
        age_of: impl Fn(&SharedKey) -> Option<Millis>,
    ) {
        match self.buckets.last_entry() {
            Some(mut newest) if *newest.key() == age => newest.get_mut().push(key),
            _ => self.buckets.entry(age).or_default().push(key),
        }
        self.entries += 1;
        if self.entries > 2 * live + SWEEP_SLACK {
            self.sweep(age_of);
        }
    }

    /// Keeps only the entries that name a stored Event of their bucket's age, once each.
    fn sweep(&mut self, age_of: impl Fn(&SharedKey) -> Option<Millis>) {
        let mut entries = 0;
        self.buckets.retain(|&age, keys| {
            *keys = current(std::mem::take(keys), age, &age_of);
            entries += keys.len();
            !keys.is_empty()
        });
        self.entries = entries;
    }

    /// Takes out up to `n` of the oldest stored Events' keys, oldest first (ties in key order):
    /// the caller removes them from the store.
    pub fn take_oldest(
        &mut self,
        n: usize,
        age_of: impl Fn(&SharedKey) -> Option<Millis>,
    ) -> Vec<SharedKey> {
        let mut taken = Vec::new();
        while taken.len() < n {
            let Some(mut oldest) = self.buckets.first_entry() else {
                break;
            };
            let age = *oldest.key();
            let keys = std::mem::take(oldest.get_mut());
            self.entries -= keys.len();
            let mut keys = current(keys, age, &age_of);
            let rest = keys.split_off(keys.len().min(n - taken.len()));
            taken.append(&mut keys);
            if rest.is_empty() {
                oldest.remove();
            } else {
                self.entries += rest.len();
                *oldest.get_mut() = rest;
            }
        }
        taken
    }

    /// The stored Events aged before `before`, oldest first (ties in key order), with their
    /// ages.
    pub fn before(
        &self,
        before: Millis,
        age_of: impl Fn(&SharedKey) -> Option<Millis>,
    ) -> Vec<(Millis, SharedKey)> {
        self.buckets
            .range(..before)
            .flat_map(|(&age, keys)| {
                current(keys.clone(), age, &age_of)
                    .into_iter()
                    .map(move |k| (age, k))
            })
            .collect()
    }
}

/// The keys among `keys` whose Event is stored with age `age`, in key order, each once.
fn current(
    mut keys: Vec<SharedKey>,
    age: Millis,
    age_of: impl Fn(&SharedKey) -> Option<Millis>,
) -> Vec<SharedKey> {
    keys.retain(|k| age_of(k) == Some(age));
    keys.stable_sort();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Kind, ObjectKey};
    use std::rc::Rc;

    fn key(name: &str) -> SharedKey {
        Rc::new(ObjectKey::new(Kind::Event, "default", name))
    }

    fn names(keys: &[SharedKey]) -> Vec<&str> {
        keys.iter().map(|k| k.name.as_str()).collect()
    }

    #[test]
    fn the_oldest_come_first_ties_in_key_order_and_a_partly_taken_age_keeps_the_rest() {
        let mut ages = EventAges::default();
        let stored = |k: &SharedKey| match k.name.as_str() {
            "a" | "c" | "e" => Some(5),
            "b" | "d" => Some(3),
            _ => None,
        };
        for (age, name) in [(5, "e"), (5, "a"), (3, "d"), (5, "c"), (3, "b")] {
            ages.insert(age, key(name), 5, stored);
        }
        assert_eq!(names(&ages.take_oldest(3, stored)), ["b", "d", "a"]);
        assert_eq!(names(&ages.take_oldest(5, stored)), ["c", "e"]);
        assert!(ages.take_oldest(1, stored).is_empty());
    }

    #[test]
    fn an_entry_left_behind_by_a_new_age_or_a_removal_is_never_taken_and_is_swept() {
        let mut ages = EventAges::default();
        // `x` was filed at 1, then seen again at 9; `gone` was removed; `y` is stored twice
        // over at 4 (removed, then created again with the same age).
        let stored = |k: &SharedKey| match k.name.as_str() {
            "x" => Some(9),
            "y" => Some(4),
            _ => None,
        };
        for (age, name) in [(1, "x"), (2, "gone"), (4, "y"), (4, "y"), (9, "x")] {
            ages.insert(age, key(name), 2, stored);
        }
        let before = ages.before(9, stored);
        assert_eq!(before.len(), 1);
        assert_eq!((before[0].0, before[0].1.name.as_str()), (4, "y"));
        ages.sweep(stored);
        assert_eq!(ages.entries, 2);
        assert_eq!(names(&ages.take_oldest(5, stored)), ["y", "x"]);
    }

    #[test]
    fn entries_left_behind_stay_within_a_constant_factor_of_the_stored_events() {
        let mut ages = EventAges::default();
        // One Event seen again at each of 10,000 moments: one entry is current at a time.
        for t in 0..10_000 {
            ages.insert(t, key("again"), 1, |_| Some(t));
        }
        assert!(ages.entries <= 2 + SWEEP_SLACK + 1, "{}", ages.entries);
    }
}
