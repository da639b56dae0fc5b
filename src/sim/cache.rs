//! An informer's cache: a component's own, possibly stale, view of the objects it watches.
//!
//! Controllers read only this; never the API server's store. That is what makes dropped and
//! delayed watch events meaningful. Indexes by controller owner and by node keep reads cheap.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::api::{WatchEvent, WatchEventType};
use super::types::{Kind, Object, ObjectKey};

/// A component's cached view plus the indexes every controller needs.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    objects: BTreeMap<ObjectKey, Arc<Object>>,
    by_controller: BTreeMap<String, BTreeSet<ObjectKey>>,
    pods_by_node: BTreeMap<String, BTreeSet<ObjectKey>>,
    /// The resourceVersion of the newest change this cache has seen (where a watch resumes).
    pub last_rv: u64,
}

impl Cache {
    /// An empty cache.
    pub fn new() -> Cache {
        Cache::default()
    }

    /// The cached object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&Arc<Object>> {
        self.objects.get(key)
    }

    /// Every cached object of `kind`, in namespace/name order.
    pub fn list(&self, kind: Kind) -> impl Iterator<Item = &Arc<Object>> {
        let lo = ObjectKey {
            kind,
            namespace: String::new(),
            name: String::new(),
        };
        self.objects
            .range(lo..)
            .take_while(move |(k, _)| k.kind == kind)
            .map(|(_, o)| o)
    }

    /// Every cached object of `kind` in `namespace`.
    pub fn list_ns<'a>(
        &'a self,
        kind: Kind,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        let lo = ObjectKey {
            kind,
            namespace: namespace.to_string(),
            name: String::new(),
        };
        self.objects
            .range(lo..)
            .take_while(move |(k, _)| k.kind == kind && k.namespace == namespace)
            .map(|(_, o)| o)
    }

    /// Objects whose controller ownerReference points at `owner_uid` (any kind).
    pub fn controlled_by(&self, owner_uid: &str) -> impl Iterator<Item = &Arc<Object>> {
        self.by_controller
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter_map(|k| self.objects.get(k))
    }

    /// Pods bound to `node`.
    pub fn pods_on_node(&self, node: &str) -> impl Iterator<Item = &Arc<Object>> {
        self.pods_by_node
            .get(node)
            .into_iter()
            .flatten()
            .filter_map(|k| self.objects.get(k))
    }

    /// Number of cached objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Every cached object.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Object>> {
        self.objects.values()
    }

    fn unindex(&mut self, obj: &Object) {
        let key = obj.key();
        if let Some(r) = obj.meta().controller_ref() {
            if let Some(set) = self.by_controller.get_mut(&r.uid) {
                set.remove(&key);
                if set.is_empty() {
                    self.by_controller.remove(&r.uid);
                }
            }
        }
        if let Some(p) = obj.as_pod() {
            if let Some(set) = self.pods_by_node.get_mut(&p.spec.node_name) {
                set.remove(&key);
                if set.is_empty() {
                    self.pods_by_node.remove(&p.spec.node_name);
                }
            }
        }
    }

    fn index(&mut self, obj: &Object) {
        let key = obj.key();
        if let Some(r) = obj.meta().controller_ref() {
            self.by_controller
                .entry(r.uid.clone())
                .or_default()
                .insert(key.clone());
        }
        if let Some(p) = obj.as_pod() {
            if !p.spec.node_name.is_empty() {
                self.pods_by_node
                    .entry(p.spec.node_name.clone())
                    .or_default()
                    .insert(key);
            }
        }
    }

    /// Stores an object, returning the previous cached version.
    pub fn upsert(&mut self, obj: Arc<Object>) -> Option<Arc<Object>> {
        let key = obj.key();
        let old = self.objects.insert(key, obj.clone());
        if let Some(o) = &old {
            self.unindex(o);
        }
        self.index(&obj);
        old
    }

    /// Drops an object, returning what was cached.
    pub fn remove(&mut self, key: &ObjectKey) -> Option<Arc<Object>> {
        let old = self.objects.remove(key);
        if let Some(o) = &old {
            self.unindex(o);
        }
        old
    }

    /// Applies a watch event; returns the previously cached version for the handlers.
    pub fn apply(&mut self, ev: &WatchEvent) -> Option<Arc<Object>> {
        self.last_rv = self.last_rv.max(ev.resource_version);
        match ev.type_ {
            WatchEventType::Added | WatchEventType::Modified => self.upsert(ev.object.clone()),
            WatchEventType::Deleted => self.remove(&ev.object.key()),
        }
    }

    /// Empties the cache (a restarted process starts with nothing).
    pub fn clear(&mut self) {
        *self = Cache::default();
    }
}
