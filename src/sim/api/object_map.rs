//! `ObjectMap`: objects by key, listed in name order and found by hash, for the store and every cache.
//!
//! The API server's store and each informer cache map [`SharedKey`]s to objects. Lists need name
//! order (a B-tree); a write needs only to find its entry. At 10,000 pods a B-tree descent is a
//! dozen key comparisons, each a chain of pointer hops through the `Rc` and two strings, and a
//! pod write descends the store and a dozen caches: replacing entries was a tenth of a
//! converging cluster's time (issue #33's profile). Here the tree maps keys to slot numbers and
//! a hash index finds the slot of a key, so an update (nearly every write: a pod is created once
//! and written a dozen times) is one hash of the key; only a create or a delete walks the tree.
//! The index is iterated only to build a kind's name order, which sorts it, so its order shows
//! nowhere; `scan` walks the slots for a caller that orders what it keeps itself.
//!
//! A kind's name order is built on the first list of that kind and kept from then on: a dozen
//! controllers each cache every pod and most never list them (they reach pods through their
//! indexes), and nothing lists the store's Events, tens of thousands created and expired (the
//! page's views scan them and order what they show); filing each in a tree (a descent of string
//! comparisons per create and delete) was paid for nothing. Built, a tree is sorted from the
//! index, so lists see the same order.
//!
//! A cache is told where the store holds each object it hears of (a watch event's `slot`): the
//! slot a cache filed that store slot's key under is remembered, and an update checks that slot
//! first. Found by hash, a cache's entry cost three memory reads that missed the processor's
//! caches (the hash's control bytes, the bucket, the slot), the most of any step of a converging
//! cluster's deliveries (a dozen caches each hold every pod); the remembered slot is a small
//! dense array. It is only a hint: a hit is checked against the key's allocation, and a miss
//! falls back to the hash, so a stale or absent hint (a dropped event, a relist, a reused store
//! slot) costs a lookup, never a wrong answer.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::sim::api::types::{Kind, Object, ObjectKey, SharedKey, Str};
use crate::vec_map::{LookupMap, VecMap};

/// No hint: a watch event that did not come from the store (tests, the playground's own).
pub const NO_SLOT: u32 = u32::MAX;

/// How many hint entries a map keeps per slot of its own, at most (see `remember`).
const HINTS_PER_SLOT: usize = 4;

/// Keys with their objects' slots in an `ObjectMap`: an index kept beside the map (a cache's by
/// controller or node, the store's pods by node) holds the slot, so it reaches an object without
/// hashing its key (a claim over 10,000 pods did that for each), and all of them are one B-tree
/// type with the map's own key order (one copy of its code in the page).
pub type Slots = BTreeMap<SharedKey, u32>;

/// Files `key` (in `slot`) under `group` of `index`, or takes it out; a group left empty goes.
pub fn file(index: &mut BTreeMap<Str, Slots>, group: &str, key: &SharedKey, slot: Option<u32>) {
    match slot {
        Some(slot) => {
            if let Some(set) = index.get_mut(group) {
                set.insert(key.clone(), slot);
            } else {
                let mut set = Slots::new();
                set.insert(key.clone(), slot);
                index.insert(Str::from(group), set);
            }
        }
        None => {
            if let Some(set) = index.get_mut(group) {
                set.remove(&**key);
                if set.is_empty() {
                    index.remove(group);
                }
            }
        }
    }
}

/// What [`ObjectMap::replace`] did: the map's allocation of the key where it is not the one
/// given (`None` for a new entry or a hinted slot, which hold that one), the object replaced, if
/// any, and the slot that holds the new one.
pub struct Replaced {
    pub key: Option<SharedKey>,
    pub old: Option<Rc<Object>>,
    pub slot: u32,
}

impl Replaced {
    /// The map's allocation of the key: [`Replaced::key`], or `given`, the one passed in.
    pub fn key<'a>(&'a self, given: &'a SharedKey) -> &'a SharedKey {
        self.key.as_ref().unwrap_or(given)
    }
}

/// Objects by key: name order for lists, a hash lookup for reads and writes of one object.
#[derive(Clone, Default)]
pub struct ObjectMap {
    index: LookupMap<SharedKey, u32>,
    /// Each object beside its key, so a hinted slot is checked without the index.
    slots: Vec<Option<(SharedKey, Rc<Object>)>>,
    free: Vec<u32>,
    /// Hint (another map's slot: the store's, for a cache) → the slot here that last held that
    /// slot's key, or [`NO_SLOT`]. Grown on demand; empty in the store itself.
    by_hint: Vec<u32>,
    /// The kinds held, in kind order (the keys' first field): a list of a kind the map holds
    /// none of (a pod's watch event makes four controllers look for PodDisruptionBudgets,
    /// Services, StatefulSets and Jobs) answers at once.
    kinds: VecMap<Kind, KindEntries>,
}

/// One kind's objects in an [`ObjectMap`].
#[derive(Clone, Default)]
struct KindEntries {
    count: u32,
    /// The kind's keys in name order, once anything has listed the kind.
    order: OnceCell<BTreeMap<SharedKey, u32>>,
}

// By hand, in key order: the derive would compile the hash map's and the slots' `Debug` into the
// page for nothing a reader needs.
impl std::fmt::Debug for ObjectMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.entries()).finish()
    }
}

impl ObjectMap {
    /// An empty map.
    pub fn new() -> ObjectMap {
        ObjectMap::default()
    }

    /// `kind`'s keys in name order, sorted from the index the first time they are asked for.
    fn order<'a>(&'a self, kind: Kind, entries: &'a KindEntries) -> &'a BTreeMap<SharedKey, u32> {
        entries.order.get_or_init(|| {
            // Insert by insert, not `collect`: a sort and a bulk build instantiated for these
            // keys cost the page's download more than the once-per-kind sort costs here.
            let mut order = BTreeMap::new();
            for (k, &i) in self.index.iter().filter(|(k, _)| k.kind == kind) {
                order.insert(k.clone(), i);
            }
            order
        })
    }

    /// The object in `slot`, a slot [`ObjectMap::slot_of`] gave for a key still in the map.
    pub fn at(&self, slot: u32) -> &Rc<Object> {
        &self.slots[slot as usize]
            .as_ref()
            .expect("an indexed slot holds an object")
            .1
    }

    /// The slot that holds `key`'s object: it stays the object's while the key is in the map,
    /// through every replace, so an index kept beside the map can hold slots and reach the
    /// object without hashing its key (see [`ObjectMap::at`]).
    pub fn slot_of(&self, key: &ObjectKey) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// The map's allocation of `key` and the slot that holds its object.
    pub fn shared_key(&self, key: &ObjectKey) -> Option<(&SharedKey, u32)> {
        self.index.get_key_value(key).map(|(k, &i)| (k, i))
    }

    /// The object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        // One lookup function for every read (get, contains_key, replace): one copy in the page.
        self.index.get_key_value(key).map(|(_, &i)| self.at(i))
    }

    /// Whether `key` has an object.
    pub fn contains_key(&self, key: &ObjectKey) -> bool {
        self.get(key).is_some()
    }

    /// The entries of `from`'s kind whose keys are `from` or after it, in key order (`from`
    /// with an empty name starts at its namespace, with both empty at the kind's first).
    pub fn kind_from<'a>(
        &'a self,
        from: &ObjectKey,
    ) -> impl DoubleEndedIterator<Item = (&'a SharedKey, &'a Rc<Object>)> + 'a {
        self.kinds
            .get(&from.kind)
            .map(|e| self.order(from.kind, e).range::<ObjectKey, _>(from..))
            .into_iter()
            .flatten()
            .map(|(k, &i)| (k, self.at(i)))
    }

    /// Every entry, in key order.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = (&SharedKey, &Rc<Object>)> {
        self.kinds
            .iter()
            .flat_map(|(&kind, e)| self.order(kind, e).iter())
            .map(|(k, &i)| (k, self.at(i)))
    }

    /// Every object of `kind`, in no meaningful order (where the map happens to hold it): for a
    /// pass that orders what it keeps itself, without the kind's name order being built for it.
    pub fn scan(&self, kind: Kind) -> impl Iterator<Item = &Rc<Object>> {
        self.holds(kind)
            .then_some(&self.slots)
            .into_iter()
            .flatten()
            .filter_map(move |s| s.as_ref().filter(|(k, _)| k.kind == kind).map(|(_, o)| o))
    }

    /// Every object, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Rc<Object>> {
        self.entries().map(|(_, o)| o)
    }

    /// The kinds the map holds, in key order.
    pub fn kinds(&self) -> impl Iterator<Item = Kind> + '_ {
        self.kinds
            .iter()
            .filter(|(_, e)| e.count > 0)
            .map(|(&kind, _)| kind)
    }

    /// Whether `kind`'s name order has been built (something listed the kind), for the tests
    /// that check a view leaves it unbuilt.
    pub fn name_ordered(&self, kind: Kind) -> bool {
        self.kinds
            .get(&kind)
            .is_some_and(|e| e.order.get().is_some())
    }

    /// Whether any object of `kind` is in the map.
    pub fn holds(&self, kind: Kind) -> bool {
        self.kinds.get(&kind).is_some_and(|e| e.count > 0)
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The slot `hint` was last seen under, if it still holds `key`'s allocation.
    fn hinted(&self, key: &SharedKey, hint: u32) -> Option<u32> {
        let i = *self.by_hint.get(hint as usize)?;
        match self.slots.get(i as usize) {
            Some(Some((held, _))) if Rc::ptr_eq(held, key) => Some(i),
            _ => None,
        }
    }

    fn remember(&mut self, hint: u32, slot: u32) {
        let at = hint as usize;
        // Hints range over the store's slots: a map holding a few of them (a kubelet's cache,
        // one of a thousand, holds its node's pods) keeps none, or its array would be the
        // store's size (80 MB over 1,000 kubelets at 10,000 pods). A small map's index is
        // small enough to stay in the processor's caches anyway.
        if at >= HINTS_PER_SLOT * self.slots.len() {
            return;
        }
        if at >= self.by_hint.len() {
            self.by_hint.resize(at + 1, NO_SLOT);
        }
        self.by_hint[at] = slot;
    }

    /// Puts `obj` under `key`; `hint` is where another map (the store) holds the key, or
    /// [`NO_SLOT`]. The map's allocation of the key is the one the watch event and the caches'
    /// indexes share (see [`SharedKey`]). The key is borrowed and cloned only for a new entry, so
    /// a watch delivery under its hint leaves the key's reference count alone.
    pub fn replace(&mut self, key: &SharedKey, obj: Rc<Object>, hint: u32) -> Replaced {
        if let Some(i) = self.hinted(key, hint) {
            debug_assert_eq!(
                self.index.get(&**key),
                Some(&i),
                "a hint names the key's slot"
            );
            let (_, held) = self.slots[i as usize]
                .as_mut()
                .expect("a hinted slot holds an object");
            let old = std::mem::replace(held, obj);
            return Replaced {
                key: None,
                old: Some(old),
                slot: i,
            };
        }
        if let Some((shared, &i)) = self.index.get_key_value(&**key) {
            let shared = (!Rc::ptr_eq(shared, key)).then(|| shared.clone());
            let (_, held) = self.slots[i as usize]
                .as_mut()
                .expect("an indexed slot holds an object");
            let old = std::mem::replace(held, obj);
            self.remember(hint, i);
            return Replaced {
                key: shared,
                old: Some(old),
                slot: i,
            };
        }
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some((key.clone(), obj));
                i
            }
            None => {
                self.slots.push(Some((key.clone(), obj)));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 objects")
            }
        };
        self.index.insert(key.clone(), i);
        match self.kinds.get_mut(&key.kind) {
            Some(e) => {
                e.count += 1;
                if let Some(order) = e.order.get_mut() {
                    order.insert(key.clone(), i);
                }
            }
            None => {
                self.kinds.insert(
                    key.kind,
                    KindEntries {
                        count: 1,
                        order: OnceCell::new(),
                    },
                );
            }
        }
        self.remember(hint, i);
        Replaced {
            key: None,
            old: None,
            slot: i,
        }
    }

    /// Takes the entry under `key` out, with the map's allocation of the key and the slot it
    /// leaves (free for the next new key: a hint to it is checked, see [`ObjectMap::replace`]).
    pub fn remove_entry(&mut self, key: &ObjectKey) -> Option<(SharedKey, Rc<Object>, u32)> {
        let (shared, i) = self.index.remove_entry(key)?;
        if let Some(e) = self.kinds.get_mut(&key.kind) {
            e.count -= 1;
            match e.order.get_mut() {
                Some(order) => {
                    // Kept, empty, while listed: a kind that comes and goes is not sorted anew
                    // from the whole index each time it comes back.
                    order.remove(key);
                }
                None if e.count == 0 => {
                    self.kinds.remove(&key.kind);
                }
                None => {}
            }
        }
        let (_, obj) = self.slots[i as usize]
            .take()
            .expect("an indexed slot holds an object");
        self.free.push(i);
        Some((shared, obj, i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Kind, Pod};

    fn pod(name: &str, image: &str) -> (SharedKey, Rc<Object>) {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.spec_mut()
            .containers
            .push(crate::sim::api::types::Container {
                name: "app".into(),
                image: image.into(),
                ..Default::default()
            });
        let obj = Object::from(p);
        (Rc::new(obj.key()), Rc::new(obj))
    }

    fn names(m: &ObjectMap) -> Vec<String> {
        m.values().map(|o| o.meta().name.to_string()).collect()
    }

    #[test]
    fn lists_in_name_order_whatever_order_objects_came_and_went_in() {
        let mut m = ObjectMap::new();
        let mut model: BTreeMap<String, String> = BTreeMap::new();
        // A fixed shuffle of creates, updates and deletes, checked against a B-tree after each.
        let script = [
            ("c", Some("1")),
            ("a", Some("1")),
            ("b", Some("1")),
            ("a", Some("2")),
            ("c", None),
            ("d", Some("1")),
            ("c", Some("3")),
            ("a", None),
            ("b", Some("2")),
            ("e", Some("1")),
        ];
        for (name, image) in script {
            let (key, obj) = pod(name, image.unwrap_or(""));
            match image {
                Some(image) => {
                    let old = m.replace(&key, obj, NO_SLOT).old;
                    assert_eq!(
                        old.is_some(),
                        model.insert(name.into(), image.into()).is_some()
                    );
                }
                None => {
                    assert!(m.remove_entry(&key).is_some());
                    model.remove(name);
                }
            }
            assert_eq!(names(&m), model.keys().cloned().collect::<Vec<_>>());
            for (n, image) in &model {
                let got = m.get(&ObjectKey::new(Kind::Pod, "default", n)).unwrap();
                assert_eq!(&got.as_pod().unwrap().spec.containers[0].image, image);
            }
        }
        assert_eq!(m.len(), model.len());
        let lo = ObjectKey::new(Kind::Pod, "default", "c");
        let from_c: Vec<String> = m.kind_from(&lo).map(|(k, _)| k.name.to_string()).collect();
        assert_eq!(from_c, ["c", "d", "e"]);
    }

    #[test]
    fn it_knows_which_kinds_it_holds_as_objects_come_and_go() {
        let mut m = ObjectMap::new();
        assert!(!m.holds(Kind::Pod));
        let (a, pa) = pod("a", "nginx");
        let (b, pb) = pod("b", "nginx");
        m.replace(&a, pa.clone(), NO_SLOT);
        m.replace(&b, pb, NO_SLOT);
        m.replace(&a, pa, NO_SLOT);
        assert!(m.holds(Kind::Pod));
        assert!(!m.holds(Kind::Service));
        m.remove_entry(&a);
        assert!(m.holds(Kind::Pod), "b is still there");
        m.remove_entry(&b);
        assert!(!m.holds(Kind::Pod));
    }

    #[test]
    fn an_update_keeps_the_first_allocation_of_the_key() {
        let mut m = ObjectMap::new();
        let (first, obj) = pod("a", "1");
        m.replace(&first, obj, NO_SLOT);
        let (second, obj) = pod("a", "2");
        let done = m.replace(&second, obj, NO_SLOT);
        assert!(done.old.is_some());
        assert!(Rc::ptr_eq(done.key(&second), &first));
        assert!(!Rc::ptr_eq(done.key(&second), &second));
        let again = m.replace(&first, pod("a", "3").1, NO_SLOT);
        assert!(
            again.key.is_none(),
            "the map's own allocation is not cloned back"
        );
        let (removed, _, _) = m.remove_entry(&second).unwrap();
        assert!(Rc::ptr_eq(&removed, &first));
        assert!(m.is_empty());
    }

    #[test]
    fn an_update_under_its_hint_finds_the_slot_the_key_was_filed_in() {
        let mut m = ObjectMap::new();
        let (a, pa) = pod("a", "1");
        let (b, pb) = pod("b", "1");
        let slot_a = m.replace(&a, pa, 2).slot;
        m.replace(&b, pb, 3);
        assert_eq!(m.hinted(&a, 2), Some(slot_a));
        assert_eq!(m.hinted(&a, 3), None, "hint 3 names b's slot");
        let (_, newer) = pod("a", "2");
        let done = m.replace(&a, newer, 2);
        assert_eq!(done.slot, slot_a);
        let old = done.old.expect("a was there");
        assert_eq!(old.as_pod().unwrap().spec.containers[0].image, "1");
        let got = m.get(&a).unwrap().as_pod().unwrap();
        assert_eq!(got.spec.containers[0].image, "2");
    }

    #[test]
    fn a_hint_to_a_slot_that_now_holds_another_key_is_not_trusted() {
        let mut m = ObjectMap::new();
        let (a, pa) = pod("a", "1");
        m.replace(&a, pa, 0);
        m.remove_entry(&a);
        // b takes a's freed slot; the store's slot 0 (a's hint) now points at b.
        let (b, pb) = pod("b", "1");
        m.replace(&b, pb, 1);
        let (a_again, pa) = pod("a", "2");
        let done = m.replace(&a_again, pa, 0);
        assert!(done.old.is_none(), "a is new again, not b's entry");
        assert_eq!(names(&m), ["a", "b"]);
        let b_now = m.get(&b).unwrap().as_pod().unwrap();
        assert_eq!(b_now.spec.containers[0].image, "1");
        // A hint to a key the map holds under another allocation falls back to the index.
        let (b_copy, pb2) = pod("b", "2");
        assert_eq!(m.hinted(&b_copy, 1), None);
        assert!(m.replace(&b_copy, pb2, 1).old.is_some());
    }

    #[test]
    fn a_small_map_keeps_no_hints_from_a_large_store() {
        let mut m = ObjectMap::new();
        let (a, pa) = pod("a", "1");
        m.replace(&a, pa, 20_000);
        assert_eq!(m.hinted(&a, 20_000), None);
        assert!(m.by_hint.len() < 100);
    }

    #[test]
    fn a_kinds_name_order_is_built_on_its_first_list_and_kept_in_step_after() {
        let mut m = ObjectMap::new();
        for name in ["d", "b", "e", "a", "c"] {
            let (k, o) = pod(name, "1");
            m.replace(&k, o, NO_SLOT);
        }
        let (k, _) = pod("e", "");
        m.remove_entry(&k);
        let built = |m: &ObjectMap| {
            m.kinds
                .get(&Kind::Pod)
                .is_some_and(|e| e.order.get().is_some())
        };
        assert!(!built(&m), "nothing listed, nothing sorted");
        assert_eq!(m.len(), 4);
        assert_eq!(names(&m), ["a", "b", "c", "d"]);
        assert!(built(&m));
        let (k, o) = pod("bb", "1");
        m.replace(&k, o, NO_SLOT);
        let (k, _) = pod("a", "");
        m.remove_entry(&k);
        assert_eq!(names(&m), ["b", "bb", "c", "d"]);
        let copy = m.clone();
        assert_eq!(names(&copy), ["b", "bb", "c", "d"]);
        // Emptied while listed, the kind keeps its (empty) order and is held no more.
        for name in ["b", "bb", "c", "d"] {
            m.remove_entry(&pod(name, "").0);
        }
        assert!(!m.holds(Kind::Pod));
        assert_eq!(m.kinds().count(), 0);
        assert!(built(&m));
        m.replace(&pod("z", "1").0, pod("z", "1").1, NO_SLOT);
        assert_eq!(names(&m), ["z"]);
    }

    #[test]
    fn objects_of_several_kinds_list_in_key_order() {
        let mut m = ObjectMap::new();
        let svc = |name: &str| {
            let mut s = crate::sim::api::types::Service::default();
            s.metadata.name = name.into();
            s.metadata.namespace = "default".into();
            let o = Object::from(s);
            (Rc::new(o.key()), Rc::new(o))
        };
        for (k, o) in [svc("s2"), pod("p2", "1"), svc("s1"), pod("p1", "1")] {
            m.replace(&k, o, NO_SLOT);
        }
        let keys: Vec<&SharedKey> = m.entries().map(|(k, _)| k).collect();
        assert_eq!(keys.len(), 4);
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        assert_ne!(keys[0].kind, keys[3].kind);
        let pods: Vec<String> = m
            .kind_from(&ObjectKey::new(Kind::Pod, "", ""))
            .map(|(k, _)| k.name.to_string())
            .collect();
        assert_eq!(pods, ["p1", "p2"]);
    }
}
