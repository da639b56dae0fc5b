//! An informer's cache: a component's own, possibly stale, view of the objects it watches.
//!
//! Controllers read only this; never the API server's store. That is what makes dropped and
//! delayed watch events meaningful. Indexes by controller owner and by node keep reads cheap.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::sim::api::object_map::ObjectMap;
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Pod, SharedKey, StringMap};
use crate::sort::CollectTree;
use crate::vec_map::VecMap;

/// What a workload controller counts about the pods one owner controls that share one label set
/// (a ReplicaSet's pods all carry its template's labels), kept as pods come and go so that a pass
/// over a ReplicaSet of 10,000 pods need not look at each of them. A selector or a template
/// depends only on labels, so a group matches or fails as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodGroup {
    /// Cached pods in the group, whatever their state.
    pub pods: usize,
    /// Active pods ([`Pod::is_active`]).
    pub active: usize,
    /// Active, Ready pods by when they became Ready ([`Pod::ready_since`], in ms).
    pub ready_since: BTreeMap<Option<Millis>, usize>,
    /// Active pods by the node they are bound to (`""`: not yet scheduled). A sorted vector,
    /// though it grows with the nodes: an entry comes and goes only with a group's first and
    /// last pod on a node (a thousand inserts of a few kB moved, per group, as its pods are
    /// scheduled), and a hash map of this type would be one more copy of the hash table's code
    /// in the page.
    pub active_on_node: VecMap<String, usize>,
}

impl PodGroup {
    /// Active, Ready pods.
    pub fn ready(&self) -> usize {
        self.ready_since.values().sum()
    }

    /// Counts `pod` in (`add`) or out of the group.
    fn change(&mut self, pod: &Pod, add: bool) {
        self.count(pod, add);
        if pod.is_active() {
            self.count_on_node(&pod.spec.node_name, add);
        }
    }

    /// Moves the group's counts from `old` to `new` (the same pod). Most changes are a pod's
    /// Ready condition: its node's count stays as it is, untouched.
    fn replace(&mut self, old: &Pod, new: &Pod) {
        self.count(old, false);
        self.count(new, true);
        let (was, is) = (old.is_active(), new.is_active());
        if (was, &old.spec.node_name) != (is, &new.spec.node_name) {
            if was {
                self.count_on_node(&old.spec.node_name, false);
            }
            if is {
                self.count_on_node(&new.spec.node_name, true);
            }
        }
    }

    fn count(&mut self, pod: &Pod, add: bool) {
        step(&mut self.pods, add);
        if pod.is_active() {
            step(&mut self.active, add);
            if pod.is_ready() {
                let since = pod.ready_since().map(|t| t.0);
                let n = self.ready_since.entry(since).or_default();
                step(n, add);
                if *n == 0 {
                    self.ready_since.remove(&since);
                }
            }
        }
    }

    fn count_on_node(&mut self, node: &str, add: bool) {
        if let Some(n) = self.active_on_node.get_mut(node) {
            step(n, add);
            if *n == 0 {
                self.active_on_node.remove(node);
            }
        } else if add {
            self.active_on_node.insert(node.to_string(), 1);
        }
    }
}

/// One more, or one fewer (never below zero).
fn step(n: &mut usize, add: bool) {
    if add {
        *n += 1
    } else {
        *n = n.saturating_sub(1)
    }
}

/// What a pod adds to its group: whether it is active, when it became Ready if it is active
/// and Ready, and its node.
fn contribution(p: &Pod) -> (bool, Option<Option<Millis>>, &str) {
    let active = p.is_active();
    let ready = (active && p.is_ready()).then(|| p.ready_since().map(|t| t.0));
    (active, ready, &p.spec.node_name)
}

/// Pod groups of one owner: namespace → labels → group.
type OwnerGroups = BTreeMap<String, BTreeMap<StringMap, PodGroup>>;

/// A component's cached view plus the indexes every controller needs.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    objects: ObjectMap,
    by_controller: BTreeMap<String, BTreeSet<SharedKey>>,
    /// Objects no controller owns (orphans a controller may adopt).
    uncontrolled: BTreeSet<SharedKey>,
    /// Pods by controller uid, grouped by namespace and labels (see [`PodGroup`]).
    pod_groups: BTreeMap<String, OwnerGroups>,
    pods_by_node: BTreeMap<String, BTreeSet<SharedKey>>,
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

    /// Objects of `kind` in `namespace` that `owner_uid` controls or that no controller owns,
    /// in name order: what `list_ns` gives after dropping objects another controller owns, which
    /// is all a controller's claim (adopt orphans, keep or release its own) can act on. It costs
    /// what the owner has, not what the namespace holds.
    pub fn claimable<'a>(
        &'a self,
        kind: Kind,
        namespace: &str,
        owner_uid: &str,
    ) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        let lo = ObjectKey {
            kind,
            namespace: namespace.to_string(),
            name: String::new(),
        };
        let in_scope =
            |k: &ObjectKey, lo: &ObjectKey| k.kind == lo.kind && k.namespace == lo.namespace;
        let owned: Vec<&ObjectKey> = self
            .by_controller
            .get(owner_uid)
            .map(|set| {
                set.range::<ObjectKey, _>(&lo..)
                    .map(|k| &**k)
                    .take_while(|k| in_scope(k, &lo))
                    .collect()
            })
            .unwrap_or_default();
        let orphans: Vec<&ObjectKey> = self.orphan_keys(kind, namespace).collect();
        let mut merged = Vec::with_capacity(owned.len() + orphans.len());
        let (mut a, mut b) = (owned.into_iter().peekable(), orphans.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x <= y => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            merged.extend(next);
        }
        merged.into_iter().filter_map(|k| self.objects.get(k))
    }

    /// Keys of the objects of `kind` in `namespace` that no controller owns, in name order.
    fn orphan_keys<'a: 'n, 'n>(
        &'a self,
        kind: Kind,
        namespace: &'n str,
    ) -> impl Iterator<Item = &'a ObjectKey> + 'n {
        let lo = ObjectKey {
            kind,
            namespace: namespace.to_string(),
            name: String::new(),
        };
        self.uncontrolled
            .range::<ObjectKey, _>(lo..)
            .map(|k| &**k)
            .take_while(move |k| k.kind == kind && k.namespace == namespace)
    }

    /// Whether any object of `kind` in `namespace` has no controller (an orphan to adopt).
    pub fn has_uncontrolled(&self, kind: Kind, namespace: &str) -> bool {
        self.orphan_keys(kind, namespace).next().is_some()
    }

    /// The objects of `kind` in `namespace` that no controller owns, in name order.
    pub fn uncontrolled<'a>(
        &'a self,
        kind: Kind,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        self.orphan_keys(kind, namespace)
            .filter_map(|k| self.objects.get(k))
    }

    /// The pods `owner_uid` controls in `namespace`, counted per label set (see [`PodGroup`]).
    pub fn pod_groups<'a>(
        &'a self,
        owner_uid: &str,
        namespace: &str,
    ) -> impl Iterator<Item = (&'a StringMap, &'a PodGroup)> + 'a {
        self.pod_groups
            .get(owner_uid)
            .and_then(|by_ns| by_ns.get(namespace))
            .into_iter()
            .flatten()
    }

    /// The pods any controller controls in `namespace`, counted per owner and label set (see
    /// [`PodGroup`]), owners in uid order.
    pub fn pod_groups_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = (&'a StringMap, &'a PodGroup)> + 'a {
        self.pod_groups
            .values()
            .filter_map(move |by_ns| by_ns.get(namespace))
            .flatten()
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

    fn index_owner(&mut self, obj: &Object, key: &SharedKey, add: bool) {
        match obj.meta().controller_ref() {
            Some(r) if add => {
                if let Some(set) = self.by_controller.get_mut(&r.uid) {
                    set.insert(key.clone());
                } else {
                    self.by_controller
                        .insert(r.uid.clone(), std::iter::once(key.clone()).collect_set());
                }
            }
            Some(r) => {
                if let Some(set) = self.by_controller.get_mut(&r.uid) {
                    set.remove(&**key);
                    if set.is_empty() {
                        self.by_controller.remove(&r.uid);
                    }
                }
            }
            None if add => {
                self.uncontrolled.insert(key.clone());
            }
            None => {
                self.uncontrolled.remove(&**key);
            }
        }
    }

    fn index_node(&mut self, p: &Pod, key: &SharedKey, add: bool) {
        let node = &p.spec.node_name;
        if add {
            if node.is_empty() {
                return;
            }
            if let Some(set) = self.pods_by_node.get_mut(node) {
                set.insert(key.clone());
            } else {
                self.pods_by_node
                    .insert(node.clone(), std::iter::once(key.clone()).collect_set());
            }
        } else if let Some(set) = self.pods_by_node.get_mut(node) {
            set.remove(&**key);
            if set.is_empty() {
                self.pods_by_node.remove(node);
            }
        }
    }

    /// The pod's group, created when `create` (None when absent and not created).
    fn group_mut(&mut self, p: &Pod, create: bool) -> Option<&mut PodGroup> {
        let uid = &p.metadata.controller_ref()?.uid;
        let ns = &p.metadata.namespace;
        if create {
            if !self.pod_groups.contains_key(uid) {
                self.pod_groups.insert(uid.clone(), BTreeMap::new());
            }
            let by_ns = self.pod_groups.get_mut(uid).expect("inserted above");
            if !by_ns.contains_key(ns) {
                by_ns.insert(ns.clone(), BTreeMap::new());
            }
            let by_labels = by_ns.get_mut(ns).expect("inserted above");
            if !by_labels.contains_key(&p.metadata.labels) {
                by_labels.insert(p.metadata.labels.clone(), PodGroup::default());
            }
            by_labels.get_mut(&p.metadata.labels)
        } else {
            self.pod_groups
                .get_mut(uid)?
                .get_mut(ns)?
                .get_mut(&p.metadata.labels)
        }
    }

    fn index_group(&mut self, p: &Pod, add: bool) {
        let Some(g) = self.group_mut(p, add) else {
            return;
        };
        g.change(p, add);
        if add || g.pods > 0 {
            return;
        }
        let uid = &p.metadata.controller_ref().expect("has a group").uid;
        let ns = &p.metadata.namespace;
        let by_ns = self.pod_groups.get_mut(uid).expect("has a group");
        let by_labels = by_ns.get_mut(ns).expect("has a group");
        by_labels.remove(&p.metadata.labels);
        if by_labels.is_empty() {
            by_ns.remove(ns);
            if by_ns.is_empty() {
                self.pod_groups.remove(uid);
            }
        }
    }

    fn unindex(&mut self, obj: &Object, key: &SharedKey) {
        self.index_owner(obj, key, false);
        if let Some(p) = obj.as_pod() {
            self.index_group(p, false);
            self.index_node(p, key, false);
        }
    }

    fn index(&mut self, obj: &Object, key: &SharedKey) {
        self.index_owner(obj, key, true);
        if let Some(p) = obj.as_pod() {
            self.index_group(p, true);
            self.index_node(p, key, true);
        }
    }

    /// Moves the indexes from `old` to `new` (same key), touching only what changed: most
    /// updates (a status write) leave owner, node and labels as they were.
    fn reindex(&mut self, old: &Object, new: &Object, key: &SharedKey) {
        let old_owner = old.meta().controller_ref().map(|r| &r.uid);
        let new_owner = new.meta().controller_ref().map(|r| &r.uid);
        let same_owner = old_owner == new_owner;
        if !same_owner {
            self.index_owner(old, key, false);
            self.index_owner(new, key, true);
        }
        match (old.as_pod(), new.as_pod()) {
            (Some(o), Some(n)) => {
                if !same_owner || o.metadata.labels != n.metadata.labels {
                    self.index_group(o, false);
                    self.index_group(n, true);
                } else if contribution(o) != contribution(n) {
                    if let Some(g) = self.group_mut(o, false) {
                        g.replace(o, n);
                    }
                }
                if o.spec.node_name != n.spec.node_name {
                    self.index_node(o, key, false);
                    self.index_node(n, key, true);
                }
            }
            _ => {
                if let Some(o) = old.as_pod() {
                    self.index_group(o, false);
                    self.index_node(o, key, false);
                }
                if let Some(n) = new.as_pod() {
                    self.index_group(n, true);
                    self.index_node(n, key, true);
                }
            }
        }
    }

    /// Stores an object, returning the previous cached version.
    pub fn upsert(&mut self, obj: Arc<Object>) -> Option<Arc<Object>> {
        let key = Arc::new(obj.key());
        self.upsert_shared(obj, &key)
    }

    /// [`Cache::upsert`] under the store's allocation of the object's key (see [`SharedKey`]):
    /// a new entry and its indexes share it.
    pub fn upsert_shared(&mut self, obj: Arc<Object>, key: &SharedKey) -> Option<Arc<Object>> {
        match self.objects.replace(key.clone(), obj.clone()) {
            (shared, Some(old)) => {
                self.reindex(&old, &obj, &shared);
                Some(old)
            }
            (_, None) => {
                self.index(&obj, key);
                None
            }
        }
    }

    /// Drops an object, returning what was cached.
    pub fn remove(&mut self, key: &ObjectKey) -> Option<Arc<Object>> {
        let (shared, old) = self.objects.remove_entry(key)?;
        self.unindex(&old, &shared);
        Some(old)
    }

    /// Empties the cache (a restarted process starts with nothing).
    pub fn clear(&mut self) {
        *self = Cache::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Condition, OwnerReference, Time};

    fn pod(
        name: &str,
        owner: Option<&str>,
        app: &str,
        node: &str,
        ready_at: Option<Millis>,
    ) -> Arc<Object> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.uid = format!("uid-{name}");
        p.metadata.labels.insert("app".into(), app.into());
        if let Some(o) = owner {
            p.metadata.owner_references.push(OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: o.into(),
                uid: o.into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            });
        }
        p.spec.node_name = node.into();
        p.status.phase = "Running".into();
        if let Some(t) = ready_at {
            p.status.conditions.push(Condition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(t)),
                ..Default::default()
            });
        }
        Arc::new(Object::Pod(p))
    }

    /// The same objects indexed from scratch.
    fn rebuilt(c: &Cache) -> Cache {
        let mut fresh = Cache::new();
        for o in c.all() {
            fresh.upsert(o.clone());
        }
        fresh
    }

    fn same_indexes(a: &Cache, b: &Cache) {
        assert_eq!(a.by_controller, b.by_controller);
        assert_eq!(a.uncontrolled, b.uncontrolled);
        assert_eq!(a.pods_by_node, b.pods_by_node);
        assert_eq!(a.pod_groups, b.pod_groups);
    }

    #[test]
    fn updates_keep_every_index_as_a_fresh_build_would() {
        let mut c = Cache::new();
        c.upsert(pod("a", Some("rs1"), "web", "", None));
        c.upsert(pod("b", Some("rs1"), "web", "n1", None));
        c.upsert(pod("c", None, "web", "n2", Some(5)));
        same_indexes(&c, &rebuilt(&c));
        // Bound, became ready, relabelled, adopted, orphaned, moved: one change at a time.
        c.upsert(pod("a", Some("rs1"), "web", "n1", None));
        same_indexes(&c, &rebuilt(&c));
        c.upsert(pod("a", Some("rs1"), "web", "n1", Some(1_000)));
        same_indexes(&c, &rebuilt(&c));
        c.upsert(pod("b", Some("rs1"), "db", "n1", None));
        same_indexes(&c, &rebuilt(&c));
        c.upsert(pod("b", Some("rs1"), "db", "n2", None));
        same_indexes(&c, &rebuilt(&c));
        c.upsert(pod("c", Some("rs2"), "web", "n2", Some(5)));
        same_indexes(&c, &rebuilt(&c));
        c.upsert(pod("a", None, "web", "n3", Some(1_000)));
        same_indexes(&c, &rebuilt(&c));
        c.remove(&ObjectKey::new(Kind::Pod, "default", "b"));
        same_indexes(&c, &rebuilt(&c));
        c.remove(&ObjectKey::new(Kind::Pod, "default", "c"));
        c.remove(&ObjectKey::new(Kind::Pod, "default", "a"));
        same_indexes(&c, &Cache::new());
    }

    #[test]
    fn claimable_is_list_ns_without_what_other_controllers_own() {
        let mut c = Cache::new();
        for (name, owner) in [
            ("a", Some("rs1")),
            ("b", Some("rs2")),
            ("c", None),
            ("d", Some("rs1")),
        ] {
            c.upsert(pod(name, owner, "web", "", None));
        }
        let names: Vec<String> = c
            .claimable(Kind::Pod, "default", "rs1")
            .map(|o| o.meta().name.clone())
            .collect();
        assert_eq!(names, ["a", "c", "d"]);
        assert!(c.has_uncontrolled(Kind::Pod, "default"));
        assert!(!c.has_uncontrolled(Kind::Pod, "other"));
    }

    #[test]
    fn pod_groups_count_active_and_ready_pods_per_label_set() {
        let mut c = Cache::new();
        c.upsert(pod("a", Some("rs1"), "web", "n1", Some(1_000)));
        c.upsert(pod("b", Some("rs1"), "web", "n1", Some(1_000)));
        c.upsert(pod("c", Some("rs1"), "web", "n1", None));
        c.upsert(pod("d", Some("rs1"), "db", "n1", Some(2_000)));
        let groups: Vec<(String, usize, usize, usize)> = c
            .pod_groups("rs1", "default")
            .map(|(l, g)| (l["app"].clone(), g.pods, g.active, g.ready()))
            .collect();
        assert_eq!(groups, [("db".into(), 1, 1, 1), ("web".into(), 3, 3, 2)]);
    }

    #[test]
    fn pod_groups_count_active_pods_per_node_as_pods_are_bound_finish_and_go() {
        let mut c = Cache::new();
        c.upsert(pod("a", Some("rs1"), "web", "", None));
        c.upsert(pod("b", Some("rs1"), "web", "n1", None));
        c.upsert(pod("x", Some("rs2"), "web", "n1", None));
        let on_node = |c: &Cache| -> Vec<(String, usize)> {
            let mut counts: Vec<(String, usize)> = c
                .pod_groups_in("default")
                .flat_map(|(_, g)| g.active_on_node.iter().map(|(n, k)| (n.clone(), *k)))
                .collect();
            counts.sort();
            counts
        };
        assert_eq!(
            on_node(&c),
            [("".into(), 1), ("n1".into(), 1), ("n1".into(), 1)]
        );
        c.upsert(pod("a", Some("rs1"), "web", "n1", None));
        let mut done = pod("b", Some("rs1"), "web", "n1", None);
        if let Some(Object::Pod(p)) = Arc::get_mut(&mut done) {
            p.status.phase = "Succeeded".into();
        }
        c.upsert(done);
        assert_eq!(on_node(&c), [("n1".into(), 1), ("n1".into(), 1)]);
        c.remove(&ObjectKey::new(Kind::Pod, "default", "a"));
        assert_eq!(on_node(&c), [("n1".into(), 1)]);
        assert_eq!(c.pod_groups_in("other").count(), 0);
    }
}
