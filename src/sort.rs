//! Stable sorting, and collecting into B-trees, that cost the web build one copy of the standard library's sort, not one per call site.
//!
//! `slice::sort_by` is generic over the element type and the comparator, so every call site
//! compiles its own copy of the stable sort (about 6 kB of wasm each before wasm-opt: 61 copies,
//! 363 kB, in the web build that issue #10 wants smaller). [`StableSort`] gives the same results through one
//! instantiation in the web build: it sorts positions (`usize`) with the comparator behind a
//! `dyn`, then moves the elements into that order. A stable sort's result is fully determined by
//! the comparator (equal elements keep their order), so the output is identical to
//! `sort_by`'s; the simulation stays deterministic and byte-for-byte the same. Native builds
//! (the CLI, `kubeloop bench`, the integration tests) keep the standard sort: size does not
//! matter there, and the indirection costs a little speed; the crate's unit tests take the web
//! build's path, so both are checked against the same expectations.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// `sort`, `sort_by` and `sort_by_key` under names that cannot be confused with the inherent
/// methods, with the same (stable) results.
pub trait StableSort<T> {
    /// Like `slice::sort_by`.
    fn stable_sort_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering);

    /// Like `slice::sort_by_key` (the key is computed per comparison, as there).
    fn stable_sort_by_key<K: Ord>(&mut self, mut key: impl FnMut(&T) -> K) {
        self.stable_sort_by(|a, b| key(a).cmp(&key(b)));
    }

    /// Like `slice::sort`.
    fn stable_sort(&mut self)
    where
        T: Ord,
    {
        self.stable_sort_by(T::cmp);
    }
}

impl<T> StableSort<T> for [T] {
    // The crate's own unit tests take the web build's path too, so every simulation they run
    // checks it against their expectations; the integration tests take the standard one.
    #[cfg(any(target_arch = "wasm32", test))]
    fn stable_sort_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering) {
        by_positions(self, compare);
    }

    #[cfg(not(any(target_arch = "wasm32", test)))]
    fn stable_sort_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering) {
        self.sort_by(compare);
    }
}

/// `collect()` into a `BTreeMap` or `BTreeSet` under names of their own, with the same result.
///
/// `FromIterator` for the B-trees sorts the items (a stable sort) before building the tree, so
/// each key type and call site compiles its own copy of the sort into the web build, as
/// `sort_by` does; the web build inserts the items one by one instead. A later value replaces an
/// earlier one under the same key, as with `collect()`; of two equal keys the first is kept
/// where `collect()` keeps the last, which no caller can tell apart (their keys are strings,
/// numbers and object keys, whose equal values are identical).
pub trait CollectTree: Iterator + Sized {
    /// Like `collect::<BTreeMap<_, _>>()`.
    fn collect_map<K: Ord, V>(self) -> BTreeMap<K, V>
    where
        Self: Iterator<Item = (K, V)>,
    {
        #[cfg(any(target_arch = "wasm32", test))]
        {
            let mut map = BTreeMap::new();
            map.extend(self);
            map
        }
        #[cfg(not(any(target_arch = "wasm32", test)))]
        {
            self.collect()
        }
    }

    /// Like `collect::<BTreeSet<_>>()`.
    fn collect_set(self) -> BTreeSet<Self::Item>
    where
        Self::Item: Ord,
    {
        #[cfg(any(target_arch = "wasm32", test))]
        {
            let mut set = BTreeSet::new();
            set.extend(self);
            set
        }
        #[cfg(not(any(target_arch = "wasm32", test)))]
        {
            self.collect()
        }
    }

    /// Like `collect::<serde_json::Map<_, _>>()`, whose map is a `BTreeMap` built the same way.
    fn collect_object(self) -> serde_json::Map<String, serde_json::Value>
    where
        Self: Iterator<Item = (String, serde_json::Value)>,
    {
        #[cfg(any(target_arch = "wasm32", test))]
        {
            let mut map = serde_json::Map::new();
            map.extend(self);
            map
        }
        #[cfg(not(any(target_arch = "wasm32", test)))]
        {
            self.collect()
        }
    }
}

impl<I: Iterator> CollectTree for I {}

/// The web build's sort: the order of the positions, then the elements moved into it.
#[cfg_attr(not(any(target_arch = "wasm32", test)), allow(dead_code))]
fn by_positions<T>(v: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = {
        let items: &[T] = v;
        sorted_positions(items.len(), &mut |a, b| compare(&items[a], &items[b]))
    };
    permute(v, order);
}

/// The positions `0..n` sorted stably by `compare`: the one instantiation of the stable sort.
#[inline(never)]
fn sorted_positions(n: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| compare(*a, *b));
    order
}

/// Rearranges `v` so that its element `i` is the one that was at `order[i]`, in place, one cycle
/// of the permutation at a time (`order` must be a permutation of `0..v.len()`).
fn permute<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            // Marks `at` done; a position already done (or in place) ends its cycle at once.
            order[at] = at;
            if from == start {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn positions_sort_keeps_equal_elements_in_their_order() {
        let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (0, 'd'), (1, 'e')];
        by_positions(&mut v, |a, b| a.0.cmp(&b.0));
        assert_eq!(v, [(0, 'd'), (1, 'b'), (1, 'e'), (2, 'a'), (2, 'c')]);
    }

    #[test]
    fn the_trait_sorts_like_the_standard_methods() {
        let mut v = vec!["pear", "fig", "apple", "kiwi"];
        v.stable_sort();
        assert_eq!(v, ["apple", "fig", "kiwi", "pear"]);
        v.stable_sort_by_key(|s| s.len());
        assert_eq!(v, ["fig", "kiwi", "pear", "apple"]);
        v.stable_sort_by(|a, b| b.cmp(a));
        assert_eq!(v, ["pear", "kiwi", "fig", "apple"]);
    }

    proptest! {
        #[test]
        fn positions_sort_gives_exactly_the_standard_stable_sort(
            v in prop::collection::vec((0u8..6, any::<u16>()), 0..200)
        ) {
            let mut ours = v.clone();
            by_positions(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std_sorted = v;
            std_sorted.sort_by_key(|a| a.0);
            prop_assert_eq!(ours, std_sorted);
        }
    }
}
