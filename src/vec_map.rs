//! `VecMap` and `VecSet`: ordered maps and sets of a few entries, as sorted vectors, for the web build's size.
//!
//! A `BTreeMap` compiles its insert, search, merge, steal and remove paths once per key and value
//! type: about 5 kB of wasm each, over a hundred times in the web build (issue #33). Most of the
//! crate's maps hold a handful of entries (a pod's containers, a graph's resources, a lesson's
//! findings), and for those a sorted `Vec` does the same job with a binary search and one
//! `memmove`, in a few hundred bytes per type, and uses less memory too. Iteration is in key
//! order and equality and ordering are the entries', exactly as the B-tree's, so swapping one for
//! the other changes nothing observable.
//!
//! They are not for collections that grow with the cluster (objects, pods, nodes): an insert in
//! the middle moves every later entry. Those stay B-trees.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;

use crate::sort::StableSort;

/// An ordered map over a sorted `Vec` of entries, with `BTreeMap`'s methods and iteration order.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VecMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

type Pair<'a, K, V> = (&'a K, &'a V);

impl<K, V> VecMap<K, V> {
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (&K, &mut V)> + ExactSizeIterator {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        self.entries.into_iter().map(|(k, _)| k)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }

    pub fn first_key_value(&self) -> Option<Pair<'_, K, V>> {
        self.entries.first().map(|(k, v)| (k, v))
    }

    pub fn last_key_value(&self) -> Option<Pair<'_, K, V>> {
        self.entries.last().map(|(k, v)| (k, v))
    }

    pub fn pop_first(&mut self) -> Option<(K, V)> {
        (!self.entries.is_empty()).then(|| self.entries.remove(0))
    }

    pub fn pop_last(&mut self) -> Option<(K, V)> {
        self.entries.pop()
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    /// The entries as a slice, in key order.
    pub fn as_slice(&self) -> &[(K, V)] {
        &self.entries
    }
}

impl<K: Ord, V> VecMap<K, V> {
    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_key_value<Q>(&self, key: &Q) -> Option<Pair<'_, K, V>>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| {
            let (k, v) = &self.entries[i];
            (k, v)
        })
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).is_ok()
    }

    /// Like `BTreeMap::insert`: the old value comes back, and the old key stays.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.remove_entry(key).map(|(_, v)| v)
    }

    pub fn remove_entry<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| self.entries.remove(i))
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        match self.find(&key) {
            Ok(index) => Entry::Occupied(OccupiedEntry { map: self, index }),
            Err(index) => Entry::Vacant(VacantEntry {
                map: self,
                index,
                key,
            }),
        }
    }

    /// The entries whose keys fall in `range`, in key order.
    pub fn range<Q, R>(&self, range: R) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
        R: std::ops::RangeBounds<Q>,
    {
        use std::ops::Bound;
        let position = |bound: Bound<&Q>, after_equal: bool| match bound {
            Bound::Unbounded => None,
            Bound::Included(q) | Bound::Excluded(q) => {
                let past = after_equal == matches!(bound, Bound::Included(_));
                Some(
                    self.entries
                        .partition_point(|(k, _)| match k.borrow().cmp(q) {
                            Ordering::Less => true,
                            Ordering::Equal => past,
                            Ordering::Greater => false,
                        }),
                )
            }
        };
        let start = position(range.start_bound(), false).unwrap_or(0);
        let end = position(range.end_bound(), true)
            .unwrap_or(self.entries.len())
            .max(start);
        self.entries[start..end].iter().map(|(k, v)| (k, v))
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for VecMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

/// A place in a [`VecMap`] for one key, as `btree_map::Entry` is.
pub enum Entry<'a, K, V> {
    Occupied(OccupiedEntry<'a, K, V>),
    Vacant(VacantEntry<'a, K, V>),
}

pub struct OccupiedEntry<'a, K, V> {
    map: &'a mut VecMap<K, V>,
    index: usize,
}

pub struct VacantEntry<'a, K, V> {
    map: &'a mut VecMap<K, V>,
    index: usize,
    key: K,
}

impl<'a, K, V> Entry<'a, K, V> {
    pub fn or_insert(self, default: V) -> &'a mut V {
        self.or_insert_with(|| default)
    }

    pub fn or_insert_with(self, default: impl FnOnce() -> V) -> &'a mut V {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(default()),
        }
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }

    pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
        if let Entry::Occupied(o) = &mut self {
            f(o.get_mut());
        }
        self
    }

    pub fn key(&self) -> &K {
        match self {
            Entry::Occupied(o) => o.key(),
            Entry::Vacant(v) => &v.key,
        }
    }
}

impl<'a, K, V> OccupiedEntry<'a, K, V> {
    pub fn key(&self) -> &K {
        &self.map.entries[self.index].0
    }

    pub fn get(&self) -> &V {
        &self.map.entries[self.index].1
    }

    pub fn get_mut(&mut self) -> &mut V {
        &mut self.map.entries[self.index].1
    }

    pub fn into_mut(self) -> &'a mut V {
        &mut self.map.entries[self.index].1
    }

    pub fn insert(&mut self, value: V) -> V {
        std::mem::replace(self.get_mut(), value)
    }

    pub fn remove(self) -> V {
        self.map.entries.remove(self.index).1
    }
}

impl<'a, K, V> VacantEntry<'a, K, V> {
    pub fn key(&self) -> &K {
        &self.key
    }

    pub fn insert(self, value: V) -> &'a mut V {
        self.map.entries.insert(self.index, (self.key, value));
        &mut self.map.entries[self.index].1
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    /// As `BTreeMap`'s: of entries under equal keys the last one wins.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(items: I) -> Self {
        let mut entries: Vec<(K, V)> = items.into_iter().collect();
        entries.stable_sort_by(|a, b| a.0.cmp(&b.0));
        // Keep the last of each run of equal keys: dedup keeps the first, so look from the end.
        entries.reverse();
        entries.dedup_by(|later, kept| later.0 == kept.0);
        entries.reverse();
        Self { entries }
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, items: I) {
        for (k, v) in items {
            self.insert(k, v);
        }
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(items: [(K, V); N]) -> Self {
        items.into_iter().collect()
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl<'a, K, V> IntoIterator for &'a mut VecMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter =
        std::iter::Map<std::slice::IterMut<'a, (K, V)>, fn(&'a mut (K, V)) -> (&'a K, &'a mut V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for VecMap<K, V> {
    type Output = V;

    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

/// An ordered set over a sorted `Vec`, with `BTreeSet`'s methods and iteration order.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VecSet<T> {
    items: Vec<T>,
}

impl<T> Default for VecSet<T> {
    fn default() -> Self {
        Self { items: Vec::new() }
    }
}

impl<T: fmt::Debug> fmt::Debug for VecSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T> VecSet<T> {
    pub const fn new() -> Self {
        Self { items: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    pub fn first(&self) -> Option<&T> {
        self.items.first()
    }

    pub fn last(&self) -> Option<&T> {
        self.items.last()
    }

    pub fn pop_first(&mut self) -> Option<T> {
        (!self.items.is_empty()).then(|| self.items.remove(0))
    }

    pub fn pop_last(&mut self) -> Option<T> {
        self.items.pop()
    }

    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.items.retain(keep);
    }

    /// The members as a slice, in order.
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }
}

impl<T: Ord> VecSet<T> {
    fn find<Q>(&self, value: &Q) -> Result<usize, usize>
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.items.binary_search_by(|t| t.borrow().cmp(value))
    }

    pub fn contains<Q>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(value).is_ok()
    }

    pub fn get<Q>(&self, value: &Q) -> Option<&T>
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(value).ok().map(|i| &self.items[i])
    }

    /// Like `BTreeSet::insert`: false, and the set unchanged, when an equal value is there.
    pub fn insert(&mut self, value: T) -> bool {
        match self.find(&value) {
            Ok(_) => false,
            Err(i) => {
                self.items.insert(i, value);
                true
            }
        }
    }

    pub fn remove<Q>(&mut self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.take(value).is_some()
    }

    pub fn take<Q>(&mut self, value: &Q) -> Option<T>
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(value).ok().map(|i| self.items.remove(i))
    }

    /// The members not in `other`, in order.
    pub fn difference<'a>(&'a self, other: &'a VecSet<T>) -> impl Iterator<Item = &'a T> {
        self.items.iter().filter(|t| !other.contains(*t))
    }

    /// The members also in `other`, in order.
    pub fn intersection<'a>(&'a self, other: &'a VecSet<T>) -> impl Iterator<Item = &'a T> {
        self.items.iter().filter(|t| other.contains(*t))
    }

    pub fn is_subset(&self, other: &VecSet<T>) -> bool {
        self.items.iter().all(|t| other.contains(t))
    }
}

impl<T: Ord> FromIterator<T> for VecSet<T> {
    /// As `BTreeSet`'s: of equal values the first is kept.
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut items: Vec<T> = items.into_iter().collect();
        items.stable_sort_by(T::cmp);
        items.dedup();
        Self { items }
    }
}

impl<T: Ord> Extend<T> for VecSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for t in items {
            self.insert(t);
        }
    }
}

impl<T: Ord, const N: usize> From<[T; N]> for VecSet<T> {
    fn from(items: [T; N]) -> Self {
        items.into_iter().collect()
    }
}

impl<T> IntoIterator for VecSet<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a VecSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

/// An ordered map for collections that grow with the cluster (pods, nodes), whose B-tree is
/// shared with every other `SlotMap` of the same key type: the tree maps keys to slot numbers and
/// the values sit in a `Vec` of slots, so a new value type adds a few hundred bytes of code where
/// a `BTreeMap` adds its whole insert/merge/steal/remove set. Lookups and inserts stay
/// logarithmic, iteration is in key order, and freed slots are reused.
#[derive(Clone)]
pub struct SlotMap<K, V> {
    index: std::collections::BTreeMap<K, u32>,
    slots: Vec<Option<V>>,
    free: Vec<u32>,
}

impl<K, V> Default for SlotMap<K, V> {
    fn default() -> Self {
        Self {
            index: std::collections::BTreeMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SlotMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: PartialEq, V: PartialEq> PartialEq for SlotMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<K, V> SlotMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub fn clear(&mut self) {
        self.index.clear();
        self.slots.clear();
        self.free.clear();
    }

    fn slot(&self, i: u32) -> &V {
        self.slots[i as usize]
            .as_ref()
            .expect("an indexed slot holds a value")
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>> + ExactSizeIterator {
        self.index.iter().map(|(k, &i)| (k, self.slot(i)))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.index.keys()
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.index.values().map(|&i| self.slot(i))
    }

    /// Every key in order with the slot of its value: the slot stays the value's while its key is
    /// in the map, so a list kept beside the map can reach values by [`SlotMap::at`] without
    /// walking the tree.
    pub fn slots(&self) -> impl Iterator<Item = (&K, u32)> {
        self.index.iter().map(|(k, &i)| (k, i))
    }

    /// The value in `slot`, one [`SlotMap::slots`] gave for a key still in the map.
    pub fn at(&self, slot: u32) -> &V {
        self.slot(slot)
    }

    /// Every entry in key order, with its value mutable (what `iter_mut` is for a `BTreeMap`).
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&K, &mut V)) {
        for (k, &i) in &self.index {
            f(
                k,
                self.slots[i as usize]
                    .as_mut()
                    .expect("an indexed slot holds a value"),
            );
        }
    }
}

impl<K: Ord, V> SlotMap<K, V> {
    pub fn first_key_value(&self) -> Option<Pair<'_, K, V>> {
        self.index
            .first_key_value()
            .map(|(k, &i)| (k, self.slot(i)))
    }
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.index.get(key).map(|&i| self.slot(i))
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.get_mut_at(key).map(|(_, v)| v)
    }

    /// [`SlotMap::get_mut`] with the value's slot, for a list kept beside the map.
    pub fn get_mut_at<Q>(&mut self, key: &Q) -> Option<(u32, &mut V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = *self.index.get(key)?;
        self.slots[i as usize].as_mut().map(|v| (i, v))
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.index.contains_key(key)
    }

    /// Like `BTreeMap::insert`: the old value comes back, and the old key stays.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        use std::collections::btree_map::Entry;
        match self.index.entry(key) {
            Entry::Occupied(o) => self.slots[*o.get() as usize].replace(value),
            Entry::Vacant(v) => {
                v.insert(place(&mut self.slots, &mut self.free, value));
                None
            }
        }
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.index.remove(key)?;
        self.free.push(i);
        self.slots[i as usize].take()
    }

    /// The value under `key`, made with `default` first when there is none (what
    /// `entry(key).or_insert_with(default)` is for a `BTreeMap`).
    pub fn get_or_insert_with(&mut self, key: K, default: impl FnOnce() -> V) -> &mut V {
        self.get_or_insert_at(key, default).1
    }

    /// [`SlotMap::get_or_insert_with`] with the value's slot, for a list kept beside the map.
    pub fn get_or_insert_at(&mut self, key: K, default: impl FnOnce() -> V) -> (u32, &mut V) {
        use std::collections::btree_map::Entry;
        let i = match self.index.entry(key) {
            Entry::Occupied(o) => *o.get(),
            Entry::Vacant(v) => *v.insert(place(&mut self.slots, &mut self.free, default())),
        };
        let v = self.slots[i as usize]
            .as_mut()
            .expect("an indexed slot holds a value");
        (i, v)
    }

    /// The place for `key`, filled on demand as a `BTreeMap` entry's `or_insert*` fill it.
    pub fn entry(&mut self, key: K) -> SlotEntry<'_, K, V> {
        SlotEntry { map: self, key }
    }

    /// Keeps the entries `keep` says to, visiting them in key order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool)
    where
        K: Clone,
    {
        let mut gone = Vec::new();
        self.for_each_mut(|k, v| {
            if !keep(k, v) {
                gone.push(k.clone());
            }
        });
        for k in gone {
            self.remove(&k);
        }
    }

    pub fn pop_first(&mut self) -> Option<(K, V)> {
        let (k, i) = self.index.pop_first()?;
        self.free.push(i);
        Some((
            k,
            self.slots[i as usize]
                .take()
                .expect("an indexed slot holds a value"),
        ))
    }
}

/// Puts `value` in a free slot, or a new one, and says which.
fn place<V>(slots: &mut Vec<Option<V>>, free: &mut Vec<u32>, value: V) -> u32 {
    match free.pop() {
        Some(i) => {
            slots[i as usize] = Some(value);
            i
        }
        None => {
            slots.push(Some(value));
            u32::try_from(slots.len() - 1).expect("fewer than 2^32 entries")
        }
    }
}

/// A [`SlotMap`]'s place for one key (see [`SlotMap::entry`]).
pub struct SlotEntry<'a, K, V> {
    map: &'a mut SlotMap<K, V>,
    key: K,
}

impl<'a, K: Ord, V> SlotEntry<'a, K, V> {
    pub fn or_insert_with(self, default: impl FnOnce() -> V) -> &'a mut V {
        self.map.get_or_insert_with(self.key, default)
    }

    pub fn or_insert(self, default: V) -> &'a mut V {
        self.or_insert_with(|| default)
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }
}

impl<'a, K, V> IntoIterator for &'a SlotMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = SlotIter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        SlotIter {
            index: self.index.iter(),
            slots: &self.slots,
        }
    }
}

impl<K, V> IntoIterator for SlotMap<K, V> {
    type Item = (K, V);
    type IntoIter = SlotIntoIter<K, V>;

    fn into_iter(self) -> Self::IntoIter {
        SlotIntoIter {
            index: self.index.into_iter(),
            slots: self.slots,
        }
    }
}

/// A [`SlotMap`]'s entries in key order, moved out.
pub struct SlotIntoIter<K, V> {
    index: std::collections::btree_map::IntoIter<K, u32>,
    slots: Vec<Option<V>>,
}

impl<K, V> Iterator for SlotIntoIter<K, V> {
    type Item = (K, V);

    fn next(&mut self) -> Option<Self::Item> {
        let (k, i) = self.index.next()?;
        Some((
            k,
            self.slots[i as usize]
                .take()
                .expect("an indexed slot holds a value"),
        ))
    }
}

/// A [`SlotMap`]'s entries in key order.
pub struct SlotIter<'a, K, V> {
    index: std::collections::btree_map::Iter<'a, K, u32>,
    slots: &'a [Option<V>],
}

impl<'a, K, V> Iterator for SlotIter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        let (k, &i) = self.index.next()?;
        Some((
            k,
            self.slots[i as usize]
                .as_ref()
                .expect("an indexed slot holds a value"),
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.index.size_hint()
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for SlotMap<K, V> {
    type Output = V;

    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: Ord, V> Extend<(K, V)> for SlotMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, items: I) {
        for (k, v) in items {
            self.insert(k, v);
        }
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SlotMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(items: I) -> Self {
        let mut map = Self::default();
        map.extend(items);
        map
    }
}

/// A [`SlotMap`] whose keys are also found by hash: iteration stays in key order, and a lookup
/// by key hashes it instead of descending the tree. For a map read many times per simulation
/// step by a key with a long shared prefix: the world's components (a thousand kubelets), found
/// by id for every watch delivery and every work item.
#[derive(Clone)]
pub struct HashedSlotMap<K, V> {
    map: SlotMap<K, V>,
    slots: LookupMap<K, u32>,
}

impl<K, V> Default for HashedSlotMap<K, V> {
    fn default() -> Self {
        Self {
            map: SlotMap::default(),
            slots: LookupMap::default(),
        }
    }
}

// In key order, as the map it stands in for shows itself.
impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for HashedSlotMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.map.fmt(f)
    }
}

impl<K: Ord + std::hash::Hash + Clone, V> HashedSlotMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The value under `key`, inserted from `default` first when there is none.
    pub fn get_or_insert_with(&mut self, key: K, default: impl FnOnce() -> V) -> &mut V {
        let i = match self.slots.get(&key) {
            Some(&i) => i,
            None => self.add(key, default()),
        };
        self.map.slots[i as usize]
            .as_mut()
            .expect("an indexed slot holds a value")
    }

    pub fn get<Q: Ord + std::hash::Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.slots.get(key).map(|&i| self.map.slot(i))
    }

    pub fn get_mut<Q: Ord + std::hash::Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let i = *self.slots.get(key)?;
        self.map.slots[i as usize].as_mut()
    }

    pub fn contains_key<Q: Ord + std::hash::Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.slots.contains_key(key)
    }

    /// Like `BTreeMap::insert`: the old value comes back, and the old key stays.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(&i) = self.slots.get(&key) {
            return self.map.slots[i as usize].replace(value);
        }
        self.add(key, value);
        None
    }

    /// Files a new key's value; returns its slot.
    fn add(&mut self, key: K, value: V) -> u32 {
        let i = place(&mut self.map.slots, &mut self.map.free, value);
        self.map.index.insert(key.clone(), i);
        self.slots.insert(key, i);
        i
    }

    pub fn remove<Q: Ord + std::hash::Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        // Most removes in a converging cluster are of keys that are not there (a bound pod
        // leaving a scheduling queue it already left): the hash answers those without the
        // ordered index's descent of string comparisons.
        self.slots.remove(key)?;
        self.map.remove(key)
    }

    /// Keeps the entries `keep` says to, visiting them in key order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        // Each key dropped leaves the hash as it goes: checking every hashed key against the
        // ordered index afterwards was a descent of string comparisons per entry kept (the
        // recorder's 4,096 similar-event windows, at each eviction).
        let slots = &mut self.slots;
        self.map.retain(|k, v| {
            let kept = keep(k, v);
            if !kept {
                slots.remove(k);
            }
            kept
        });
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>> + ExactSizeIterator {
        self.map.iter()
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.map.keys()
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.map.values()
    }

    /// Every entry in key order, with its value mutable.
    pub fn for_each_mut(&mut self, f: impl FnMut(&K, &mut V)) {
        self.map.for_each_mut(f);
    }
}

impl<K: Ord + std::hash::Hash + Clone, V> std::ops::Index<&K> for HashedSlotMap<K, V> {
    type Output = V;

    fn index(&self, key: &K) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

/// A map that is looked up, and iterated only where the order cannot show (what is found goes
/// into an ordered set, or is sorted): a hash map with [`FxHasher`]. Its order would be the
/// table's (which can differ between native and wasm builds: its probe groups and bucket
/// indices depend on the target), so it must show nowhere (the clippy configuration forbids hash
/// maps elsewhere); its hasher has no keys, so nothing about it varies from run to run either.
#[allow(clippy::disallowed_types)]
pub type LookupMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

/// A map found by hash that keeps no order: a [`LookupMap`] of keys to slots, the values in a
/// vector. What [`HashedSlotMap`] is without its B-tree, for maps never walked in key order, and
/// for the download what a `LookupMap<K, V>` is not: the hash table's code (insert, remove,
/// growth) is compiled once per key type and shared by every value type, as [`SlotMap`]'s tree
/// is. Walked ([`LookupSlots::iter`], [`LookupSlots::keys`]) only where the order cannot show.
#[derive(Clone)]
pub struct LookupSlots<K, V> {
    index: LookupMap<K, u32>,
    slots: Vec<Option<V>>,
    free: Vec<u32>,
}

impl<K, V> Default for LookupSlots<K, V> {
    fn default() -> Self {
        Self {
            index: LookupMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

// In the hash's order: a debugging aid, shown nowhere a learner looks.
impl<K: fmt::Debug + std::hash::Hash + Eq, V: fmt::Debug> fmt::Debug for LookupSlots<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: std::hash::Hash + Eq, V> LookupSlots<K, V> {
    fn slot(&self, i: u32) -> &V {
        self.slots[i as usize]
            .as_ref()
            .expect("an indexed slot holds a value")
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub fn get<Q: std::hash::Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.index.get(key).map(|&i| self.slot(i))
    }

    pub fn get_mut<Q: std::hash::Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let i = *self.index.get(key)?;
        self.slots[i as usize].as_mut()
    }

    pub fn contains_key<Q: std::hash::Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.index.contains_key(key)
    }

    /// Like `HashMap::insert`: the old value comes back, and the old key stays.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(&i) = self.index.get(&key) {
            return self.slots[i as usize].replace(value);
        }
        let i = place(&mut self.slots, &mut self.free, value);
        self.index.insert(key, i);
        None
    }

    /// The value under `key`, inserted from `default` first when there is none.
    pub fn get_or_insert_with(&mut self, key: K, default: impl FnOnce() -> V) -> &mut V {
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                let i = place(&mut self.slots, &mut self.free, default());
                self.index.insert(key, i);
                i
            }
        };
        self.slots[i as usize]
            .as_mut()
            .expect("an indexed slot holds a value")
    }

    pub fn remove<Q: std::hash::Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.index.remove(key)?;
        self.free.push(i);
        self.slots[i as usize].take()
    }

    /// Every key, in the hash's order: only where the order cannot show.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.index.keys()
    }

    /// Every entry, in the hash's order: only where the order cannot show.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.index.iter().map(|(k, &i)| (k, self.slot(i)))
    }
}

/// [`LookupMap`]'s set: looked up, and iterated only where what is done with each member does
/// not depend on the order.
#[allow(clippy::disallowed_types)]
pub type LookupSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<FxHasher>>;

/// The rustc compiler's hash ("Fx"): a rotate, an xor and a multiply per word. Keys here are
/// short names, hashed on every lookup, where SipHash's per-call rounds would cost as much as the
/// B-tree comparisons a [`LookupMap`] replaces. Not resistant to chosen keys; the names a
/// learner types are bounded by the playground's limits (`sim::api::limits`).
#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("eight bytes")));
        }
        let rest = chunks.remainder();
        // The tail as a little-endian word from two overlapping reads (copying it into a zeroed
        // array was a `memcpy` call per key hashed).
        let n = rest.len();
        let word = match n {
            0 => return,
            1..=3 => {
                u64::from(rest[0])
                    | u64::from(rest[n / 2]) << (8 * (n / 2))
                    | u64::from(rest[n - 1]) << (8 * (n - 1))
            }
            _ => {
                let four = |at: usize| {
                    u64::from(u32::from_le_bytes(
                        rest[at..at + 4].try_into().expect("four bytes"),
                    ))
                };
                four(0) | four(n - 4) << (8 * (n - 4))
            }
        };
        self.add(word);
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        fold(self.hash)
    }
}

/// The hash a map is given: hashbrown picks the bucket from its low bits, and a product's low
/// bits depend only on the low bits of what was multiplied, so the keys of pods named `p-0` …
/// `p-9999` shared 32 buckets between 10,000 of them and every lookup walked the cluster,
/// comparing keys. MurmurHash3's finaliser folds the high bits into the low ones, which spreads
/// names numbered in any way as random hashes would, for one more multiply. Out of line: every
/// lookup of every map type ends here, and inlined into each it weighed on the page's download.
#[inline(never)]
fn fold(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::hash::Hasher;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn hashing_bytes_reads_them_as_zero_padded_little_endian_words(
            bytes in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut fast = FxHasher::default();
            fast.write(&bytes);
            let mut words = FxHasher::default();
            for chunk in bytes.chunks(8) {
                let mut word = [0u8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                words.add(u64::from_le_bytes(word));
            }
            prop_assert_eq!(fast.finish(), words.finish());
        }
    }

    #[test]
    fn names_that_differ_only_in_their_last_bytes_spread_over_the_buckets_as_random_hashes_do() {
        use std::hash::BuildHasher;
        let hasher = std::hash::BuildHasherDefault::<FxHasher>::default();
        // A table of 10,000 keys has 16,384 buckets and takes the bucket from the low 14 bits;
        // 10,000 random hashes land in about 7,500 of them.
        let buckets = |names: &[String]| {
            let low: BTreeSet<u64> = names
                .iter()
                .map(|n| hasher.hash_one(n.as_str()) & 0x3fff)
                .collect();
            low.len()
        };
        let pods: Vec<String> = (0..10_000).map(|i| format!("p-{i}")).collect();
        let nodes: Vec<String> = (0..10_000).map(|i| format!("node-{i}")).collect();
        let padded: Vec<String> = (0..10_000).map(|i| format!("node-{i:05}")).collect();
        for names in [&pods, &nodes, &padded] {
            let used = buckets(names);
            assert!(
                used > 7_000,
                "{} … {}: {used} buckets",
                names[0],
                names[9_999]
            );
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u16),
        Remove(u8),
        Entry(u8, u16),
        PopFirst,
        PopLast,
        Retain(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<u8>(), any::<u16>()).prop_map(|(k, v)| Op::Insert(k % 32, v)),
            any::<u8>().prop_map(|k| Op::Remove(k % 32)),
            (any::<u8>(), any::<u16>()).prop_map(|(k, v)| Op::Entry(k % 32, v)),
            Just(Op::PopFirst),
            Just(Op::PopLast),
            any::<u8>().prop_map(|m| Op::Retain(m % 5 + 2)),
        ]
    }

    proptest! {
        #[test]
        fn a_vec_map_answers_every_operation_as_a_btree_map_does(ops in prop::collection::vec(op(), 0..80), from in prop::collection::vec((0u8..40, any::<u16>()), 0..20)) {
            let mut tree: BTreeMap<u8, u16> = from.iter().copied().collect();
            let mut vec: VecMap<u8, u16> = from.iter().copied().collect();
            prop_assert_eq!(vec.iter().collect::<Vec<_>>(), tree.iter().collect::<Vec<_>>());
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(vec.insert(k, v), tree.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(vec.remove(&k), tree.remove(&k)),
                    Op::Entry(k, v) => {
                        let x = vec.entry(k).or_insert(v);
                        *x = x.wrapping_add(1);
                        let x = tree.entry(k).or_insert(v);
                        *x = x.wrapping_add(1);
                    }
                    Op::PopFirst => prop_assert_eq!(vec.pop_first(), tree.pop_first()),
                    Op::PopLast => prop_assert_eq!(vec.pop_last(), tree.pop_last()),
                    Op::Retain(m) => {
                        vec.retain(|k, _| k % m != 0);
                        tree.retain(|k, _| k % m != 0);
                    }
                }
                prop_assert_eq!(vec.iter().collect::<Vec<_>>(), tree.iter().collect::<Vec<_>>());
                prop_assert_eq!(vec.len(), tree.len());
            }
            for k in 0..40u8 {
                prop_assert_eq!(vec.get(&k), tree.get(&k));
                prop_assert_eq!(vec.range(k..).collect::<Vec<_>>(), tree.range(k..).collect::<Vec<_>>());
                prop_assert_eq!(vec.range(..k).collect::<Vec<_>>(), tree.range(..k).collect::<Vec<_>>());
                prop_assert_eq!(vec.range(..=k).collect::<Vec<_>>(), tree.range(..=k).collect::<Vec<_>>());
                let hi = k.saturating_add(7);
                prop_assert_eq!(vec.range(k..=hi).collect::<Vec<_>>(), tree.range(k..=hi).collect::<Vec<_>>());
                prop_assert_eq!(vec.range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded)).collect::<Vec<_>>(),
                    tree.range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded)).collect::<Vec<_>>());
            }
        }

        #[test]
        fn a_vec_set_answers_every_operation_as_a_btree_set_does(ops in prop::collection::vec((any::<bool>(), 0u8..32), 0..80), from in prop::collection::vec(0u8..40, 0..20)) {
            let mut tree: BTreeSet<u8> = from.iter().copied().collect();
            let mut vec: VecSet<u8> = from.iter().copied().collect();
            for (insert, k) in ops {
                if insert {
                    prop_assert_eq!(vec.insert(k), tree.insert(k));
                } else {
                    prop_assert_eq!(vec.remove(&k), tree.remove(&k));
                }
                prop_assert_eq!(vec.iter().collect::<Vec<_>>(), tree.iter().collect::<Vec<_>>());
            }
            let other: VecSet<u8> = (0..40).step_by(3).collect();
            let other_tree: BTreeSet<u8> = (0..40).step_by(3).collect();
            prop_assert_eq!(vec.difference(&other).collect::<Vec<_>>(), tree.difference(&other_tree).collect::<Vec<_>>());
            prop_assert_eq!(vec.intersection(&other).collect::<Vec<_>>(), tree.intersection(&other_tree).collect::<Vec<_>>());
            prop_assert_eq!(vec.is_subset(&other), tree.is_subset(&other_tree));
        }
    }

    proptest! {
        #[test]
        fn a_slot_map_answers_every_operation_as_a_btree_map_does(ops in prop::collection::vec(op(), 0..80)) {
            let mut tree: BTreeMap<u8, u16> = BTreeMap::new();
            let mut slots: SlotMap<u8, u16> = SlotMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(slots.insert(k, v), tree.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(slots.remove(&k), tree.remove(&k)),
                    Op::Entry(k, v) => {
                        let x = slots.get_or_insert_with(k, || v);
                        *x = x.wrapping_add(1);
                        let x = tree.entry(k).or_insert(v);
                        *x = x.wrapping_add(1);
                    }
                    Op::PopFirst | Op::PopLast => prop_assert_eq!(slots.pop_first(), tree.pop_first()),
                    Op::Retain(m) => {
                        slots.retain(|k, _| k % m != 0);
                        tree.retain(|k, _| k % m != 0);
                    }
                }
                prop_assert_eq!(slots.iter().collect::<Vec<_>>(), tree.iter().collect::<Vec<_>>());
                prop_assert_eq!(slots.values().collect::<Vec<_>>(), tree.values().collect::<Vec<_>>());
                prop_assert!(slots.slots.len() <= 32, "freed slots are reused");
            }
        }
    }

    proptest! {
        #[test]
        fn hashed_slot_maps_and_lookup_slots_answer_every_operation_as_a_btree_map_does(ops in prop::collection::vec(op(), 0..80)) {
            let mut tree: BTreeMap<u8, u16> = BTreeMap::new();
            let mut map: HashedSlotMap<u8, u16> = HashedSlotMap::new();
            // The same, without an order of its own: compared sorted.
            let mut lookup: LookupSlots<u8, u16> = LookupSlots::default();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        prop_assert_eq!(lookup.insert(k, v), tree.get(&k).copied());
                        prop_assert_eq!(map.insert(k, v), tree.insert(k, v));
                    }
                    Op::Entry(k, v) => {
                        let x = map.get_or_insert_with(k, || v);
                        *x = x.wrapping_add(1);
                        let x = lookup.get_or_insert_with(k, || v);
                        *x = x.wrapping_add(1);
                        let x = tree.entry(k).or_insert(v);
                        *x = x.wrapping_add(1);
                    }
                    Op::Remove(k) => {
                        prop_assert_eq!(lookup.remove(&k), tree.get(&k).copied());
                        prop_assert_eq!(map.remove(&k), tree.remove(&k));
                    }
                    Op::PopFirst | Op::PopLast => {
                        let first = tree.first_key_value().map(|(k, _)| *k);
                        if let Some(k) = first {
                            prop_assert_eq!(lookup.remove(&k), tree.get(&k).copied());
                            prop_assert_eq!(map.remove(&k), tree.remove(&k));
                        }
                    }
                    Op::Retain(m) => {
                        map.retain(|k, _| k % m != 0);
                        for k in tree.keys().filter(|k| *k % m == 0) {
                            lookup.remove(k);
                        }
                        tree.retain(|k, _| k % m != 0);
                    }
                }
                prop_assert_eq!(map.iter().collect::<Vec<_>>(), tree.iter().collect::<Vec<_>>());
                let mut unordered: Vec<(&u8, &u16)> = lookup.iter().collect();
                unordered.sort();
                prop_assert_eq!(unordered, tree.iter().collect::<Vec<_>>());
                let mut keys: Vec<&u8> = lookup.keys().collect();
                keys.sort();
                prop_assert_eq!(keys, tree.keys().collect::<Vec<_>>());
                prop_assert_eq!(map.is_empty(), tree.is_empty());
                prop_assert_eq!((lookup.len(), lookup.is_empty()), (tree.len(), tree.is_empty()));
                for k in 0..40u8 {
                    prop_assert_eq!(map.get(&k), tree.get(&k));
                    prop_assert_eq!(map.contains_key(&k), tree.contains_key(&k));
                    prop_assert_eq!(lookup.get(&k), tree.get(&k));
                    prop_assert_eq!(lookup.contains_key(&k), tree.contains_key(&k));
                }
                if let Some(v) = map.get_mut(&3) {
                    *v = v.wrapping_add(1);
                    *tree.get_mut(&3).expect("the same keys") = *v;
                    *lookup.get_mut(&3).expect("the same keys") = *v;
                }
                prop_assert!(lookup.slots.len() <= 32, "freed slots are reused");
            }
        }
    }

    #[test]
    fn collecting_keeps_the_last_value_under_a_repeated_key_as_a_btree_map_does() {
        let map: VecMap<&str, i32> = [("b", 1), ("a", 2), ("b", 3)].into_iter().collect();
        assert_eq!(map.iter().collect::<Vec<_>>(), [(&"a", &2), (&"b", &3)]);
    }
}
