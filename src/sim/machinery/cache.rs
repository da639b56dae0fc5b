//! An informer's cache: a component's own, possibly stale, view of the objects it watches.
//!
//! Controllers read only this; never the API server's store. That is what makes dropped and
//! delayed watch events meaningful. Indexes by controller owner and by node keep reads cheap.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::rc::Rc;

use crate::sim::api::object_map::{file, ObjectMap, Slots, NO_SLOT};
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Pod, SharedKey, Str, StringMap};
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

/// The entries of `set` of `kind` in `namespace`, in name order.
fn in_scope<'a>(
    set: &'a Slots,
    kind: Kind,
    namespace: &str,
) -> std::collections::btree_map::Range<'a, SharedKey, u32> {
    let (lo, hi) = namespace_bounds(kind, namespace);
    set.range::<ObjectKey, _>((Bound::Included(lo), Bound::Excluded(hi)))
}

/// Bounds around every key of `kind` in `namespace`: keys order by kind, namespace, then name,
/// and `namespace` followed by a NUL, which no namespace holds, sorts after it and before any
/// other namespace it begins. A range between them compares keys only to find its ends.
fn namespace_bounds(kind: Kind, namespace: &str) -> (ObjectKey, ObjectKey) {
    let key = |namespace: String| ObjectKey::from_parts(kind, namespace.into(), Str::EMPTY);
    (key(namespace.to_string()), key(format!("{namespace}\0")))
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

/// The indexes a component's informers keep beside its objects, as upstream controllers add
/// indexers to their informers (the ReplicaSet controller's `controllerUID`, the taint eviction
/// controller's `spec.nodeName`). Each costs every write the cache takes, and more than a dozen
/// components watch pods: an index is kept only where something reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Indexers {
    /// Objects by controller uid, and the orphans: [`Cache::controlled_by`],
    /// [`Cache::claimable`], [`Cache::uncontrolled`].
    pub controller_uid: bool,
    /// [`PodGroup`]s: [`Cache::pod_groups`], [`Cache::pod_groups_in`].
    pub pod_groups: bool,
    /// Pods by the node they are bound to: [`Cache::pods_on_node`].
    pub node_name: bool,
}

impl Indexers {
    /// No index: the objects by key alone.
    pub const NONE: Indexers = Indexers {
        controller_uid: false,
        pod_groups: false,
        node_name: false,
    };
    /// Every index.
    pub const ALL: Indexers = Indexers {
        controller_uid: true,
        pod_groups: true,
        node_name: true,
    };
}

/// Says, in debug builds, that an index read is one the cache keeps: a component reads only the
/// indexes it asked for ([`Controller::indexers`](crate::sim::machinery::controller::Controller::indexers)).
fn kept(kept: bool, index: &str) {
    debug_assert!(
        kept,
        "the {index} index is read, yet this cache does not keep it"
    );
}

/// A component's cached view plus the indexes it reads.
#[derive(Clone, Debug)]
pub struct Cache {
    indexers: Indexers,
    objects: ObjectMap,
    /// The keys each controller (by uid) controls, with their objects' slots in `objects`: a
    /// claim over 10,000 pods reaches each without hashing its key, which was most of it.
    by_controller: BTreeMap<Str, Slots>,
    /// Objects no controller owns (orphans a controller may adopt).
    uncontrolled: Slots,
    /// Pods by controller uid, grouped by namespace and labels (see [`PodGroup`]).
    pod_groups: BTreeMap<Str, OwnerGroups>,
    pods_by_node: BTreeMap<Str, Slots>,
    /// The resourceVersion of the newest change this cache has seen (where a watch resumes).
    pub last_rv: u64,
}

/// Every index: whatever is read is there. A component's own cache keeps fewer
/// ([`Cache::with_indexers`]).
impl Default for Cache {
    fn default() -> Cache {
        Cache::with_indexers(Indexers::ALL)
    }
}

impl Cache {
    /// An empty cache with every index.
    pub fn new() -> Cache {
        Cache::default()
    }

    /// An empty cache that keeps `indexers`.
    pub fn with_indexers(indexers: Indexers) -> Cache {
        Cache {
            indexers,
            objects: ObjectMap::default(),
            by_controller: BTreeMap::new(),
            uncontrolled: Slots::new(),
            pod_groups: BTreeMap::new(),
            pods_by_node: BTreeMap::new(),
            last_rv: 0,
        }
    }

    /// What the cache holds, leaving it empty with the same indexers.
    pub fn take(&mut self) -> Cache {
        std::mem::replace(self, Cache::with_indexers(self.indexers))
    }

    /// The cached object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.objects.get(key)
    }

    /// Every cached object of `kind`, in namespace/name order.
    pub fn list(&self, kind: Kind) -> impl Iterator<Item = &Rc<Object>> {
        let lo = ObjectKey::from_parts(kind, Str::EMPTY, Str::EMPTY);
        self.objects.kind_from(&lo).map(|(_, o)| o)
    }

    /// Every cached object of `kind`, in no meaningful order: for a pass over a whole kind that
    /// sorts what it acts on, as the pod garbage collector does every 20 s. A cache that is never
    /// listed never builds the kind's name order ([`ObjectMap`]), and building it for 20,000
    /// pods in one pass was a 25 ms step.
    pub fn scan(&self, kind: Kind) -> impl Iterator<Item = &Rc<Object>> {
        self.objects.scan(kind)
    }

    /// Every cached object of `kind` in `namespace`.
    pub fn list_ns<'a>(
        &'a self,
        kind: Kind,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.objects
            .holds(kind)
            .then(|| {
                let lo = ObjectKey::from_parts(kind, Str::from(namespace), Str::EMPTY);
                self.objects.kind_from(&lo)
            })
            .into_iter()
            .flatten()
            .take_while(move |(k, _)| k.namespace == namespace)
            .map(|(_, o)| o)
    }

    /// Objects whose controller ownerReference points at `owner_uid` (any kind).
    pub fn controlled_by(&self, owner_uid: &str) -> impl Iterator<Item = &Rc<Object>> {
        kept(self.indexers.controller_uid, "controllerUID");
        self.by_controller
            .get(owner_uid)
            .into_iter()
            .flat_map(|owned| owned.values())
            .map(|&slot| self.objects.at(slot))
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
    ) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        kept(self.indexers.controller_uid, "controllerUID");
        // Merged as they come, not collected: a pass over 10,000 pods would take two fresh
        // vectors of 10,000 keys from the allocator for it.
        let mut owned = self
            .by_controller
            .get(owner_uid)
            .map(|owned| in_scope(owned, kind, namespace))
            .into_iter()
            .flatten()
            .peekable();
        let mut orphans = in_scope(&self.uncontrolled, kind, namespace).peekable();
        std::iter::from_fn(move || {
            let next = match (owned.peek(), orphans.peek()) {
                (Some((x, _)), Some((y, _))) if x <= y => owned.next(),
                (Some(_), Some(_)) => orphans.next(),
                (Some(_), None) => owned.next(),
                (None, _) => orphans.next(),
            };
            next.map(|(_, &slot)| self.objects.at(slot))
        })
    }

    /// Whether any object of `kind` in `namespace` has no controller (an orphan to adopt).
    pub fn has_uncontrolled(&self, kind: Kind, namespace: &str) -> bool {
        kept(self.indexers.controller_uid, "controllerUID");
        in_scope(&self.uncontrolled, kind, namespace)
            .next()
            .is_some()
    }

    /// The objects of `kind` in `namespace` that no controller owns, in name order.
    pub fn uncontrolled<'a>(
        &'a self,
        kind: Kind,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        kept(self.indexers.controller_uid, "controllerUID");
        in_scope(&self.uncontrolled, kind, namespace).map(|(_, &slot)| self.objects.at(slot))
    }

    /// The pods `owner_uid` controls in `namespace`, counted per label set (see [`PodGroup`]).
    pub fn pod_groups<'a>(
        &'a self,
        owner_uid: &str,
        namespace: &str,
    ) -> impl Iterator<Item = (&'a StringMap, &'a PodGroup)> + 'a {
        kept(self.indexers.pod_groups, "pod groups");
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
        kept(self.indexers.pod_groups, "pod groups");
        self.pod_groups
            .values()
            .filter_map(move |by_ns| by_ns.get(namespace))
            .flatten()
    }

    /// Pods bound to `node`.
    pub fn pods_on_node(&self, node: &str) -> impl Iterator<Item = &Rc<Object>> {
        kept(self.indexers.node_name, "spec.nodeName");
        self.pods_by_node
            .get(node)
            .into_iter()
            .flat_map(|set| set.values())
            .map(|&slot| self.objects.at(slot))
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
    pub fn all(&self) -> impl Iterator<Item = &Rc<Object>> {
        self.objects.values()
    }

    /// The slot of `key`'s object when filing it (`add`), None when taking it out.
    fn slot(&self, key: &SharedKey, add: bool) -> Option<u32> {
        add.then(|| {
            self.objects
                .slot_of(key)
                .expect("indexed after it is stored")
        })
    }

    fn index_owner(&mut self, obj: &Object, key: &SharedKey, add: bool) {
        if !self.indexers.controller_uid {
            return;
        }
        let slot = self.slot(key, add);
        match obj.meta().controller_ref() {
            Some(r) => file(&mut self.by_controller, &r.uid, key, slot),
            None => match slot {
                Some(slot) => {
                    self.uncontrolled.insert(key.clone(), slot);
                }
                None => {
                    self.uncontrolled.remove(&**key);
                }
            },
        }
    }

    fn index_node(&mut self, p: &Pod, key: &SharedKey, add: bool) {
        let node = &p.spec.node_name;
        if self.indexers.node_name && !(add && node.is_empty()) {
            let slot = self.slot(key, add);
            file(&mut self.pods_by_node, node, key, slot);
        }
    }

    /// The pod's group, created when `create` (None when absent and not created).
    fn group_mut(&mut self, p: &Pod, create: bool) -> Option<&mut PodGroup> {
        if !self.indexers.pod_groups {
            return None;
        }
        let uid = &p.metadata.controller_ref()?.uid;
        let ns = &p.metadata.namespace;
        if create {
            if !self.pod_groups.contains_key(uid) {
                self.pod_groups.insert(uid.clone(), BTreeMap::new());
            }
            let by_ns = self.pod_groups.get_mut(uid).expect("inserted above");
            if !by_ns.contains_key(ns.as_str()) {
                by_ns.insert(ns.to_string(), BTreeMap::new());
            }
            let by_labels = by_ns.get_mut(ns.as_str()).expect("inserted above");
            if !by_labels.contains_key(&p.metadata.labels) {
                by_labels.insert(p.metadata.labels.clone(), PodGroup::default());
            }
            by_labels.get_mut(&p.metadata.labels)
        } else {
            self.pod_groups
                .get_mut(uid)?
                .get_mut(ns.as_str())?
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
        let by_labels = by_ns.get_mut(ns.as_str()).expect("has a group");
        by_labels.remove(&p.metadata.labels);
        if by_labels.is_empty() {
            by_ns.remove(ns.as_str());
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
        let ix = self.indexers;
        if ix == Indexers::NONE {
            return;
        }
        let old_owner = old.meta().controller_ref().map(|r| &r.uid);
        let new_owner = new.meta().controller_ref().map(|r| &r.uid);
        let same_owner = old_owner == new_owner;
        if !same_owner {
            self.index_owner(old, key, false);
            self.index_owner(new, key, true);
        }
        match (old.as_pod(), new.as_pod()) {
            (Some(o), Some(n)) => {
                if ix.pod_groups {
                    if !same_owner || o.metadata.labels != n.metadata.labels {
                        self.index_group(o, false);
                        self.index_group(n, true);
                    } else if contribution(o) != contribution(n) {
                        if let Some(g) = self.group_mut(o, false) {
                            g.replace(o, n);
                        }
                    }
                }
                if ix.node_name && o.spec.node_name != n.spec.node_name {
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
    pub fn upsert(&mut self, obj: Rc<Object>) -> Option<Rc<Object>> {
        let key = Rc::new(obj.key());
        self.upsert_shared(obj, &key, NO_SLOT)
    }

    /// [`Cache::upsert`] under the store's allocation of the object's key (see [`SharedKey`]):
    /// a new entry and its indexes share it.
    /// `slot` is where the store holds it (a watch event's hint), or `object_map::NO_SLOT`.
    pub fn upsert_shared(
        &mut self,
        obj: Rc<Object>,
        key: &SharedKey,
        slot: u32,
    ) -> Option<Rc<Object>> {
        let done = self.objects.replace(key, obj.clone(), slot);
        match &done.old {
            Some(old) => {
                self.reindex(old, &obj, done.key(key));
                done.old
            }
            None => {
                self.index(&obj, key);
                None
            }
        }
    }

    /// Drops an object, returning what was cached.
    pub fn remove(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        let (shared, old, _) = self.objects.remove_entry(key)?;
        self.unindex(&old, &shared);
        Some(old)
    }

    /// Empties the cache (a restarted process starts with nothing, and adds its indexers again).
    pub fn clear(&mut self) {
        *self = Cache::with_indexers(self.indexers);
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
    ) -> Rc<Object> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.uid = format!("uid-{name}").into();
        p.metadata.labels.insert("app", app);
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
        p.spec_mut().node_name = node.into();
        p.status.phase = "Running".into();
        if let Some(t) = ready_at {
            p.status.conditions.push(Condition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(t)),
                ..Default::default()
            });
        }
        Rc::new(Object::from(p))
    }

    /// The same objects indexed from scratch.
    fn rebuilt(c: &Cache) -> Cache {
        let mut fresh = Cache::new();
        for o in c.all() {
            fresh.upsert(o.clone());
        }
        fresh
    }

    /// An index's keys, each checked against the object its slot holds (slots differ between
    /// caches filled in different orders).
    fn keys(c: &Cache, set: &Slots) -> Vec<ObjectKey> {
        for (key, &slot) in set {
            assert_eq!(c.objects.at(slot).key(), **key, "the slot of {key}");
        }
        set.keys().map(|k| (**k).clone()).collect()
    }

    fn grouped(c: &Cache, index: &BTreeMap<Str, Slots>) -> Vec<(Str, Vec<ObjectKey>)> {
        index
            .iter()
            .map(|(group, set)| (group.clone(), keys(c, set)))
            .collect()
    }

    fn same_indexes(a: &Cache, b: &Cache) {
        assert_eq!(grouped(a, &a.by_controller), grouped(b, &b.by_controller));
        assert_eq!(keys(a, &a.uncontrolled), keys(b, &b.uncontrolled));
        assert_eq!(grouped(a, &a.pods_by_node), grouped(b, &b.pods_by_node));
        assert_eq!(a.pod_groups, b.pod_groups);
    }

    /// `part`'s indexes: those it keeps as `full` (every index) has them, the others empty.
    fn kept_as_asked(part: &Cache, full: &Cache) {
        let ix = part.indexers;
        let owners = |c: &Cache| (grouped(c, &c.by_controller), keys(c, &c.uncontrolled));
        let none = (Vec::new(), Vec::new());
        assert_eq!(
            owners(part),
            if ix.controller_uid {
                owners(full)
            } else {
                none
            }
        );
        let groups = if ix.pod_groups {
            full.pod_groups.clone()
        } else {
            BTreeMap::new()
        };
        assert_eq!(part.pod_groups, groups);
        let nodes = |c: &Cache| grouped(c, &c.pods_by_node);
        assert_eq!(
            nodes(part),
            if ix.node_name {
                nodes(full)
            } else {
                Vec::new()
            }
        );
    }

    #[test]
    fn a_cache_keeps_the_indexes_its_component_asked_for_and_no_other() {
        let one = |set: fn(&mut Indexers)| {
            let mut ix = Indexers::NONE;
            set(&mut ix);
            ix
        };
        let asked = [
            Indexers::NONE,
            one(|ix| ix.controller_uid = true),
            one(|ix| ix.pod_groups = true),
            one(|ix| ix.node_name = true),
        ];
        for ix in asked {
            let (mut full, mut part) = (Cache::new(), Cache::with_indexers(ix));
            let changes = [
                pod("a", Some("rs1"), "web", "", None),
                pod("b", None, "web", "n2", Some(5)),
                pod("a", Some("rs1"), "web", "n1", Some(1_000)),
                pod("b", Some("rs2"), "db", "n2", Some(5)),
            ];
            for obj in changes {
                full.upsert(obj.clone());
                part.upsert(obj);
                kept_as_asked(&part, &full);
            }
            assert_eq!(part.len(), full.len());
            // A relist starts again from an empty cache that keeps the same indexes.
            let before = part.take();
            assert_eq!((before.len(), part.len(), part.indexers), (2, 0, ix));
            for obj in before.all() {
                part.upsert(obj.clone());
            }
            kept_as_asked(&part, &full);
        }
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
            .map(|o| o.meta().name.to_string())
            .collect();
        assert_eq!(names, ["a", "c", "d"]);
        assert!(c.has_uncontrolled(Kind::Pod, "default"));
        assert!(!c.has_uncontrolled(Kind::Pod, "other"));
    }

    #[test]
    fn a_claim_reads_the_latest_objects_of_its_namespace_alone_as_slots_are_reused() {
        let in_ns = |name: &str, ns: &str, owner: Option<&str>, node: &str| {
            let mut o = pod(name, owner, "web", node, None);
            if let Some(Object::Pod(p)) = Rc::get_mut(&mut o) {
                p.metadata.namespace = ns.into();
            }
            o
        };
        let mut c = Cache::new();
        c.upsert(in_ns("a", "default", Some("rs1"), ""));
        c.upsert(in_ns("b", "default-2", Some("rs1"), ""));
        c.upsert(in_ns("c", "defaul", Some("rs1"), ""));
        c.upsert(in_ns("d", "default", Some("rs1"), ""));
        c.remove(&ObjectKey::new(Kind::Pod, "default", "a"));
        c.upsert(in_ns("e", "default", Some("rs1"), ""));
        c.upsert(in_ns("d", "default", Some("rs1"), "n1"));
        let claimed: Vec<(String, String)> = c
            .claimable(Kind::Pod, "default", "rs1")
            .filter_map(|o| o.as_pod())
            .map(|p| (p.metadata.name.to_string(), p.spec.node_name.to_string()))
            .collect();
        assert_eq!(
            claimed,
            [("d".into(), "n1".into()), ("e".into(), "".into())]
        );
        let everywhere: Vec<String> = c
            .controlled_by("rs1")
            .map(|o| o.key().to_string())
            .collect();
        assert_eq!(
            everywhere,
            [
                "Pod/defaul/c",
                "Pod/default/d",
                "Pod/default/e",
                "Pod/default-2/b"
            ]
        );
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
            .map(|(l, g)| (l["app"].to_string(), g.pods, g.active, g.ready()))
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
        if let Some(Object::Pod(p)) = Rc::get_mut(&mut done) {
            p.status.phase = "Succeeded".into();
        }
        c.upsert(done);
        assert_eq!(on_node(&c), [("n1".into(), 1), ("n1".into(), 1)]);
        c.remove(&ObjectKey::new(Kind::Pod, "default", "a"));
        assert_eq!(on_node(&c), [("n1".into(), 1)]);
        assert_eq!(c.pod_groups_in("other").count(), 0);
    }
}
