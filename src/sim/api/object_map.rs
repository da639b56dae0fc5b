//! `ObjectMap`: objects by key, listed in name order and found by hash, for the store and every cache.
//!
//! The API server's store and each informer cache map [`SharedKey`]s to objects. Lists need name
//! order (a B-tree); a write needs only to find its entry. At 10,000 pods a B-tree descent is a
//! dozen key comparisons, each a chain of pointer hops through the `Arc` and two strings, and a
//! pod write descends the store and a dozen caches: replacing entries was a tenth of a
//! converging cluster's time (issue #33's profile). Here the tree maps keys to slot numbers and
//! a hash index finds the slot of a key, so an update (nearly every write: a pod is created once
//! and written a dozen times) is one hash of the key; only a create or a delete walks the tree.
//! The index is looked up, never iterated, so its order shows nowhere.

use std::collections::BTreeMap;
use std::ops::RangeBounds;
use std::sync::Arc;

use crate::sim::api::types::{Kind, Object, ObjectKey, SharedKey};
use crate::vec_map::{LookupMap, VecMap};

/// Objects by key: name order for lists, a hash lookup for reads and writes of one object.
#[derive(Clone, Default)]
pub struct ObjectMap {
    order: BTreeMap<SharedKey, u32>,
    index: LookupMap<SharedKey, u32>,
    slots: Vec<Option<Arc<Object>>>,
    free: Vec<u32>,
    /// How many objects of each kind: a list of a kind the map holds none of (a pod's watch
    /// event makes four controllers look for PodDisruptionBudgets, Services, StatefulSets and
    /// Jobs) answers without descending the tree.
    kinds: VecMap<Kind, u32>,
}

// By hand, in key order: the derive would compile the hash map's and the slots' `Debug` into the
// page for nothing a reader needs.
impl std::fmt::Debug for ObjectMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.order.iter().map(|(k, &i)| (k, self.at(i))))
            .finish()
    }
}

impl ObjectMap {
    /// An empty map.
    pub fn new() -> ObjectMap {
        ObjectMap::default()
    }

    /// The object in `slot`, a slot [`ObjectMap::slot_of`] gave for a key still in the map.
    pub fn at(&self, slot: u32) -> &Arc<Object> {
        self.slots[slot as usize]
            .as_ref()
            .expect("an indexed slot holds an object")
    }

    /// The slot that holds `key`'s object: it stays the object's while the key is in the map,
    /// through every replace, so an index kept beside the map can hold slots and reach the
    /// object without hashing its key (see [`ObjectMap::at`]).
    pub fn slot_of(&self, key: &ObjectKey) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// The object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&Arc<Object>> {
        // One lookup function for every read (get, contains_key, replace): one copy in the page.
        self.index.get_key_value(key).map(|(_, &i)| self.at(i))
    }

    /// Whether `key` has an object.
    pub fn contains_key(&self, key: &ObjectKey) -> bool {
        self.get(key).is_some()
    }

    /// Entries whose keys fall in `range`, in key order.
    pub fn range<R: RangeBounds<ObjectKey>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = (&SharedKey, &Arc<Object>)> {
        self.order
            .range::<ObjectKey, R>(range)
            .map(|(k, &i)| (k, self.at(i)))
    }

    /// Every object, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Arc<Object>> {
        self.order.values().map(|&i| self.at(i))
    }

    /// Whether any object of `kind` is in the map.
    pub fn holds(&self, kind: Kind) -> bool {
        self.kinds.contains_key(&kind)
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Puts `obj` under `key` and returns the map's allocation of the key (`key` itself for a
    /// new entry) with the object it replaced, if any: the store hands that allocation to the
    /// watch event and the caches' indexes share it (see [`SharedKey`]).
    pub fn replace(
        &mut self,
        key: SharedKey,
        obj: Arc<Object>,
    ) -> (SharedKey, Option<Arc<Object>>) {
        if let Some((shared, &i)) = self.index.get_key_value(&*key) {
            let old = self.slots[i as usize].replace(obj);
            return (shared.clone(), old);
        }
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(obj);
                i
            }
            None => {
                self.slots.push(Some(obj));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 objects")
            }
        };
        self.order.insert(key.clone(), i);
        self.index.insert(key.clone(), i);
        match self.kinds.get_mut(&key.kind) {
            Some(n) => *n += 1,
            None => {
                self.kinds.insert(key.kind, 1);
            }
        }
        (key, None)
    }

    /// Takes the entry under `key` out, with the map's allocation of the key.
    pub fn remove_entry(&mut self, key: &ObjectKey) -> Option<(SharedKey, Arc<Object>)> {
        let (shared, i) = self.index.remove_entry(key)?;
        self.order.remove(key);
        if let Some(n) = self.kinds.get_mut(&key.kind) {
            *n -= 1;
            if *n == 0 {
                self.kinds.remove(&key.kind);
            }
        }
        let obj = self.slots[i as usize]
            .take()
            .expect("an indexed slot holds an object");
        self.free.push(i);
        Some((shared, obj))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Kind, Pod};

    fn pod(name: &str, image: &str) -> (SharedKey, Arc<Object>) {
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
        (Arc::new(obj.key()), Arc::new(obj))
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
                    let (_, old) = m.replace(key, obj);
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
        let from_c: Vec<String> = m.range(lo..).map(|(k, _)| k.name.to_string()).collect();
        assert_eq!(from_c, ["c", "d", "e"]);
    }

    #[test]
    fn it_knows_which_kinds_it_holds_as_objects_come_and_go() {
        let mut m = ObjectMap::new();
        assert!(!m.holds(Kind::Pod));
        let (a, pa) = pod("a", "nginx");
        let (b, pb) = pod("b", "nginx");
        m.replace(a.clone(), pa.clone());
        m.replace(b.clone(), pb);
        m.replace(a.clone(), pa);
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
        m.replace(first.clone(), obj);
        let (second, obj) = pod("a", "2");
        let (shared, old) = m.replace(second.clone(), obj);
        assert!(old.is_some());
        assert!(Arc::ptr_eq(&shared, &first));
        assert!(!Arc::ptr_eq(&shared, &second));
        let (removed, _) = m.remove_entry(&second).unwrap();
        assert!(Arc::ptr_eq(&removed, &first));
        assert!(m.is_empty());
    }
}
