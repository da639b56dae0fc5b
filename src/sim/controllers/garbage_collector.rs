//! The garbage collector: deletes dependents whose owners are gone and carries out Foreground and
//! Orphan deletion, as `pkg/controller/garbagecollector` does for the kinds the simulation stores.
//!
//! It keeps a dependency graph (owner uid → dependents) built from the ownerReferences it
//! observes. A key is processed like upstream's `attemptToDeleteItem` (and `attemptToOrphan` for
//! an owner with the `orphan` finalizer). Upstream confirms an absent owner with a live GET; a
//! sans-IO component cannot, so an owner counts as absent only when the GC *observed* it go (a
//! DELETED event, a relist that no longer has it, its name now held by another uid) or when a
//! consistent relist shows a reference to it and no owner. A stale cache therefore makes the GC
//! wait, never delete, and every delete carries uid and resourceVersion preconditions.

use std::collections::BTreeSet;
use std::rc::Rc;

use serde_json::{json, Value as Json};

use crate::sim::api::types::{Kind, Object, ObjectKey, ObjectMeta, OwnerReference, Str};
use crate::sim::api::types::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
use crate::sim::api::{ApiRequest, DeleteOptions, PropagationPolicy, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sort::{CollectTree, StableSort};
use crate::vec_map::LookupSlots;

/// The built-in kinds whose objects the GC watches, as owners and as dependents; it watches
/// every custom kind as well ([`Controller::watches_custom_kinds`]).
const WATCHED: [Kind; 4] = [Kind::Deployment, Kind::ReplicaSet, Kind::Pod, Kind::Service];

/// Above this many remembered absent uids, forget those nothing refers to any more.
const ABSENT_PRUNE_THRESHOLD: usize = 4096;

/// One node of the dependency graph: an object's uid and the owners it names.
#[derive(Clone, Debug, PartialEq)]
struct GraphNode {
    uid: Str,
    owners: Vec<OwnerReference>,
}

/// What an ownerReference points at, as far as the GC can tell from what it observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OwnerState {
    /// The owner exists and is not waiting for its dependents.
    Solid,
    /// The owner is being deleted in the foreground (`foregroundDeletion` finalizer).
    Waiting,
    /// The owner is verifiably gone.
    Dangling,
    /// Not in the cache and never seen go: upstream would GET it; the GC treats it as present.
    Unverified,
    /// A kind the GC does not watch: it cannot check, so it trusts the reference.
    Unwatched,
    /// A cluster-scoped dependent names a namespaced kind: upstream's
    /// `namespacedOwnerOfClusterScopedObjectErr`, which never resolves, so it is never collected.
    Unresolvable,
}

impl OwnerState {
    fn label(self) -> &'static str {
        match self {
            OwnerState::Solid => "exists",
            OwnerState::Waiting => "deleting in foreground",
            OwnerState::Dangling => "absent",
            OwnerState::Unverified => "not observed",
            OwnerState::Unwatched => "not watched",
            OwnerState::Unresolvable => "unresolvable (a namespaced kind)",
        }
    }
}

/// The garbage collector (component `garbage-collector-controller`).
#[derive(Clone, Debug)]
pub struct GarbageCollector {
    // Found by hash: every watch event of every kind looks its object up in these three. None
    // is walked in its own order (a relist sorts what it finds gone), so they keep none: a tree
    // of keys cost descents of string comparisons for each object observed and forgotten.
    nodes: LookupSlots<ObjectKey, GraphNode>,
    /// Owner uid → the keys of objects whose ownerReferences name it.
    dependents: LookupSlots<Str, BTreeSet<ObjectKey>>,
    /// Uids verified absent (upstream's `absentOwnerCache`).
    absent: BTreeSet<Str>,
    /// Where each observed uid lives, to tell an owner named from another namespace.
    by_uid: LookupSlots<Str, ObjectKey>,
    /// The cache resourceVersion the graph reflects; a mismatch means the informer relisted.
    synced_rv: u64,
    /// Set by a restart: the next look at the cache is a fresh, consistent list.
    needs_full_sync: bool,
}

impl Default for GarbageCollector {
    fn default() -> Self {
        GarbageCollector {
            nodes: LookupSlots::default(),
            dependents: LookupSlots::default(),
            absent: BTreeSet::new(),
            by_uid: LookupSlots::default(),
            synced_rv: 0,
            needs_full_sync: true,
        }
    }
}

pub(crate) fn has_finalizer(meta: &ObjectMeta, f: &str) -> bool {
    meta.finalizers.iter().any(|x| x == f)
}

/// Being deleted and still held by finalizer `f`: what a finalizer's controller acts on.
pub(crate) fn held_by(obj: &Object, f: &str) -> bool {
    obj.meta().deletion_timestamp.is_some() && has_finalizer(obj.meta(), f)
}

/// The keys of the cached objects of `kind` that `pred` picks (a resync's list).
pub(crate) fn cached_keys(
    cache: &Cache,
    kind: Option<Kind>,
    pred: impl Fn(&Object) -> bool,
) -> Vec<ObjectKey> {
    kind.map_or_else(Vec::new, |k| {
        cache.list(k).filter(|o| pred(o)).map(|o| o.key()).collect()
    })
}

/// Being deleted in the foreground: the owner waits for its blocking dependents.
fn is_deleting_dependents(meta: &ObjectMeta) -> bool {
    meta.deletion_timestamp.is_some() && has_finalizer(meta, FOREGROUND_FINALIZER)
}

/// `deletionStartsWithFinalizer`: the object just entered deletion with finalizer `f`.
fn starts_deletion_with(old: Option<&ObjectMeta>, new: &ObjectMeta, f: &str) -> bool {
    if new.deletion_timestamp.is_none() || !has_finalizer(new, f) {
        return false;
    }
    !old.is_some_and(|o| o.deletion_timestamp.is_some() && has_finalizer(o, f))
}

/// The kind a reference names, when the GC watches it.
fn watched_kind(r: &OwnerReference) -> Option<Kind> {
    Kind::of_type(&r.api_version, &r.kind).filter(|k| WATCHED.contains(k) || k.custom().is_some())
}

/// Where the owner a dependent in `namespace` names must be: in that namespace, or at cluster
/// scope for a cluster-scoped kind (ownerReferences carry no namespace). None when the GC does
/// not watch the kind or a cluster-scoped dependent names a namespaced one.
fn owner_key(namespace: &Str, r: &OwnerReference) -> Option<ObjectKey> {
    let kind = watched_kind(r)?;
    // Sharing the dependent's and the reference's strings: every pod event looks its owners up.
    match (kind.namespaced(), namespace.is_empty()) {
        (true, true) => None,
        (true, false) => Some(ObjectKey::shared(kind, namespace, &r.name)),
        (false, _) => Some(ObjectKey::shared(kind, &Str::EMPTY, &r.name)),
    }
}

/// The Warning upstream's graph builder records on a dependent whose owner was observed in
/// another namespace than the dependent's (`reportInvalidNamespaceOwnerRef`).
fn invalid_namespace_message(namespace: &str, r: &OwnerReference) -> String {
    format!(
        "ownerRef [{}/{}, namespace: {namespace}, name: {}, uid: {}] does not exist in namespace {namespace:?}",
        r.api_version, r.kind, r.name, r.uid
    )
}

/// The cached owner a reference points at, if the cache holds that very incarnation.
fn cached_owner<'a>(
    namespace: &Str,
    r: &OwnerReference,
    cache: &'a Cache,
) -> Option<&'a Rc<Object>> {
    cache
        .get(&owner_key(namespace, r)?)
        .filter(|o| o.meta().uid == r.uid)
}

/// A JSON merge patch that drops the references to `uids`. A merge patch replaces the whole
/// list, so it carries the resourceVersion (as upstream's `deleteOwnerRefJSONMergePatch` does).
fn remove_refs_patch(obj: &Object, uids: &BTreeSet<Str>) -> ApiRequest {
    let meta = obj.meta();
    let kept: Vec<&OwnerReference> = meta
        .owner_references
        .iter()
        .filter(|r| !uids.contains(r.uid.as_str()))
        .collect();
    let refs = if kept.is_empty() {
        Json::Null
    } else {
        json!(kept)
    };
    ApiRequest::Patch {
        key: obj.key(),
        patch: json!({"metadata": {"ownerReferences": refs, "resourceVersion": meta.resource_version}}),
        status: false,
    }
}

/// `removeFinalizer`: an update with the cached resourceVersion; the API server completes the
/// deletion when the last finalizer goes.
pub(crate) fn remove_finalizer(obj: &Object, f: &str) -> ApiRequest {
    let mut updated = obj.clone();
    updated.meta_mut().finalizers.retain(|x| x != f);
    ApiRequest::Update(updated)
}

/// `deleteObject`: uid and resourceVersion preconditions, so a re-created or re-owned object is
/// never deleted on the strength of a stale view.
fn delete_object(obj: &Object, policy: PropagationPolicy) -> ApiRequest {
    ApiRequest::Delete {
        key: obj.key(),
        options: DeleteOptions {
            propagation_policy: Some(policy),
            precondition_uid: Some(obj.meta().uid.to_string()),
            precondition_resource_version: Some(obj.meta().resource_version.to_string()),
            ..Default::default()
        },
    }
}

fn policy_name(p: PropagationPolicy) -> &'static str {
    match p {
        PropagationPolicy::Background => "Background",
        PropagationPolicy::Foreground => "Foreground",
        PropagationPolicy::Orphan => "Orphan",
    }
}

fn push_unique(keys: &mut Vec<ObjectKey>, key: ObjectKey) {
    if !keys.contains(&key) {
        keys.push(key);
    }
}

impl GarbageCollector {
    /// A fresh instance with an empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// The keys of the objects that name `owner_uid` as an owner (for the UI and tests).
    pub fn dependents_of(&self, owner_uid: &str) -> Vec<ObjectKey> {
        self.dependents
            .get(owner_uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether the GC has verified that `uid` no longer exists.
    pub fn knows_absent(&self, uid: &str) -> bool {
        self.absent.contains(uid)
    }

    fn unlink(&mut self, key: &ObjectKey, owners: &[OwnerReference]) {
        for r in owners {
            if let Some(set) = self.dependents.get_mut(&r.uid) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(&r.uid);
                }
            }
        }
    }

    fn observe(&mut self, obj: &Object) {
        let key = obj.key();
        // Most changes (a status write) leave the identity and owners as they were: the graph
        // would be rebuilt exactly as it is.
        if self
            .nodes
            .get(&key)
            .is_some_and(|n| n.uid == obj.meta().uid && n.owners == obj.meta().owner_references)
        {
            return;
        }
        let node = GraphNode {
            uid: obj.meta().uid.clone(),
            owners: obj.meta().owner_references.clone(),
        };
        if let Some(prev) = self.nodes.remove(&key) {
            self.unlink(&key, &prev.owners);
            self.by_uid.remove(prev.uid.as_str());
        }
        self.by_uid.insert(node.uid.clone(), key.clone());
        for r in &node.owners {
            self.dependents
                .get_or_insert_with(r.uid.clone(), BTreeSet::new)
                .insert(key.clone());
        }
        self.nodes.insert(key, node);
    }

    /// The object left the graph: its uid is now known to be absent.
    fn forget(&mut self, key: &ObjectKey) -> Option<GraphNode> {
        let node = self.nodes.remove(key)?;
        self.unlink(key, &node.owners);
        self.by_uid.remove(node.uid.as_str());
        self.absent.insert(node.uid.clone());
        Some(node)
    }

    fn prune_absent(&mut self) {
        let referenced = &self.dependents;
        self.absent.retain(|uid| referenced.contains_key(uid));
    }

    /// Brings the graph in line with the cache after a (re)list, as the informer's relist
    /// tombstones would. With `snapshot` (a restart), or when the relist changed anything, the
    /// cache is one consistent list: an owner it references but does not hold is absent.
    fn full_sync(&mut self, cache: &Cache, snapshot: bool) {
        let mut changed = false;
        let mut present = BTreeSet::new();
        for obj in cache.all() {
            let key = obj.key();
            present.insert(key.clone());
            match self.nodes.get(&key) {
                Some(n) if n.uid == obj.meta().uid && n.owners == obj.meta().owner_references => {
                    continue
                }
                Some(n) if n.uid != obj.meta().uid => {
                    self.forget(&key);
                }
                _ => {}
            }
            self.observe(obj);
            changed = true;
        }
        let mut vanished: Vec<ObjectKey> = self
            .nodes
            .keys()
            .filter(|k| !present.contains(*k))
            .cloned()
            .collect();
        vanished.stable_sort();
        for key in vanished {
            self.forget(&key);
            changed = true;
        }
        if snapshot || changed {
            for obj in cache.all() {
                let ns = &obj.meta().namespace;
                for r in &obj.meta().owner_references {
                    if owner_key(ns, r).is_some() && cached_owner(ns, r, cache).is_none() {
                        self.absent.insert(r.uid.clone());
                    }
                }
            }
        }
        self.prune_absent();
        self.synced_rv = cache.last_rv;
        self.needs_full_sync = false;
    }

    fn sync_graph(&mut self, cache: &Cache) {
        if self.needs_full_sync {
            self.full_sync(cache, true);
        } else if cache.last_rv != self.synced_rv {
            self.full_sync(cache, false);
        }
    }

    fn classify(&self, namespace: &Str, r: &OwnerReference, cache: &Cache) -> OwnerState {
        let Some(key) = owner_key(namespace, r) else {
            return match watched_kind(r) {
                Some(_) => OwnerState::Unresolvable,
                None => OwnerState::Unwatched,
            };
        };
        match cache.get(&key) {
            Some(o) if o.meta().uid == r.uid => {
                if is_deleting_dependents(o.meta()) {
                    OwnerState::Waiting
                } else {
                    OwnerState::Solid
                }
            }
            // The name now belongs to another object: the one referenced is gone.
            Some(_) => OwnerState::Dangling,
            None if self.absent.contains(&r.uid) => OwnerState::Dangling,
            // Uids are unique: observed in another namespace, it is not in this one.
            None if self.observed_elsewhere(namespace, r) => OwnerState::Dangling,
            None => OwnerState::Unverified,
        }
    }

    /// Whether the owner `r` names was observed in a namespace other than the dependent's.
    fn observed_elsewhere(&self, namespace: &str, r: &OwnerReference) -> bool {
        self.by_uid
            .get(&r.uid)
            .is_some_and(|k| !k.namespace.is_empty() && k.namespace != namespace)
    }

    /// The `OwnerRefInvalidNamespace` Warnings a dependent earns: one per owner it names that
    /// was observed in another namespace.
    fn invalid_namespace_events(&self, obj: &Object) -> Vec<EventRecord> {
        let ns = &obj.meta().namespace;
        obj.meta()
            .owner_references
            .iter()
            .filter(|r| watched_kind(r).is_some() && self.observed_elsewhere(ns, r))
            .map(|r| {
                EventRecord::warning(
                    obj,
                    "OwnerRefInvalidNamespace",
                    invalid_namespace_message(ns, r),
                )
            })
            .collect()
    }

    /// Cached dependents of `owner`: objects in the graph whose cached ownerReferences name it.
    fn cached_dependents<'a>(&self, owner_uid: &str, cache: &'a Cache) -> Vec<&'a Rc<Object>> {
        self.dependents
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter_map(|k| cache.get(k))
            .filter(|o| o.meta().owner_references.iter().any(|r| r.uid == owner_uid))
            .collect()
    }

    /// `attemptToOrphan`: strip the owner from every dependent, then drop the `orphan` finalizer.
    fn orphan_dependents(&self, owner: &Object, cache: &Cache, out: &mut Outcome) {
        let uid = owner.meta().uid.clone();
        let deps = self.cached_dependents(&uid, cache);
        let only = std::iter::once(uid).collect_set();
        out.batch(deps.iter().map(|d| remove_refs_patch(d, &only)).collect());
        out.batch(vec![remove_finalizer(owner, ORPHAN_FINALIZER)]);
        out.record = Some(ReconcileRecord {
            observed: format!(
                "{} being deleted with the orphan finalizer; {} dependent{}",
                owner.key(),
                deps.len(),
                plural(deps.len())
            ),
            desired: "dependents keep running without this owner".into(),
            diff: format!(
                "remove the ownerReference from {} dependent{}, then the orphan finalizer",
                deps.len(),
                plural(deps.len())
            ),
        });
    }

    /// `processDeletingDependentsItem`: the finalizer goes once no blocking dependent remains.
    fn process_deleting_dependents(&self, owner: &Object, cache: &Cache, out: &mut Outcome) {
        let uid = &owner.meta().uid;
        let blocking = self
            .cached_dependents(uid, cache)
            .into_iter()
            .filter(|d| {
                d.meta()
                    .owner_references
                    .iter()
                    .any(|r| &r.uid == uid && r.block_owner_deletion == Some(true))
            })
            .count();
        let observed = format!(
            "{} deleting in foreground; {blocking} blocking dependent{}",
            owner.key(),
            plural(blocking)
        );
        let desired = "blocking dependents deleted first, then the owner".to_string();
        if blocking == 0 {
            out.request(remove_finalizer(owner, FOREGROUND_FINALIZER));
            out.record = Some(ReconcileRecord {
                observed,
                desired,
                diff: "none left → remove the foregroundDeletion finalizer".into(),
            });
        } else {
            // Their deletion was started when the owner entered foreground deletion; each DELETED
            // event brings the owner back here.
            out.record = Some(ReconcileRecord {
                observed,
                desired,
                diff: format!("waiting for {blocking} dependent{} to go", plural(blocking)),
            });
        }
    }

    /// `attemptToDeleteItem` for an object that is not itself being deleted.
    fn attempt_to_delete(&self, obj: &Object, cache: &Cache, out: &mut Outcome) {
        let meta = obj.meta();
        let states: Vec<(&OwnerReference, OwnerState)> = meta
            .owner_references
            .iter()
            .map(|r| (r, self.classify(&meta.namespace, r, cache)))
            .collect();
        let observed = states
            .iter()
            .map(|(r, s)| format!("owner {}/{} {}", r.kind, r.name, s.label()))
            .collect::<Vec<_>>()
            .join(", ");
        let desired = "every dependent has an existing owner".to_string();
        let solid = states
            .iter()
            .filter(|(_, s)| {
                matches!(
                    s,
                    OwnerState::Solid
                        | OwnerState::Unverified
                        | OwnerState::Unwatched
                        | OwnerState::Unresolvable
                )
            })
            .count();
        let gone: BTreeSet<Str> = states
            .iter()
            .filter(|(_, s)| matches!(s, OwnerState::Dangling | OwnerState::Waiting))
            .map(|(r, _)| r.uid.clone())
            .collect_set();
        let waiting = states.iter().any(|(_, s)| *s == OwnerState::Waiting);
        let diff = if solid > 0 {
            if gone.is_empty() {
                String::new()
            } else {
                out.request(remove_refs_patch(obj, &gone));
                format!(
                    "{} owner{} gone or deleting → remove {} reference{}",
                    gone.len(),
                    plural(gone.len()),
                    if gone.len() == 1 { "that" } else { "those" },
                    plural(gone.len())
                )
            }
        } else if waiting
            && self
                .dependents
                .get(&meta.uid)
                .is_some_and(|d| !d.is_empty())
        {
            // Its own dependents must go first too: delete it in the foreground as well.
            out.request(delete_object(obj, PropagationPolicy::Foreground));
            "owner deleting in foreground and this has dependents → delete (Foreground)".into()
        } else {
            let policy = if has_finalizer(meta, ORPHAN_FINALIZER) {
                PropagationPolicy::Orphan
            } else if has_finalizer(meta, FOREGROUND_FINALIZER) {
                PropagationPolicy::Foreground
            } else {
                PropagationPolicy::Background
            };
            out.request(delete_object(obj, policy));
            if waiting {
                format!(
                    "owner deleting in foreground → delete ({})",
                    policy_name(policy)
                )
            } else {
                format!("no owner left → delete ({})", policy_name(policy))
            }
        };
        out.record = Some(ReconcileRecord {
            observed,
            desired,
            diff,
        });
    }

    /// Whether an object needs a look: it waits on the GC, or one of its owners is gone or
    /// deleting in the foreground.
    fn needs_attention(&self, obj: &Object, cache: &Cache, snapshot: bool) -> bool {
        let meta = obj.meta();
        if meta.deletion_timestamp.is_some() {
            return has_finalizer(meta, ORPHAN_FINALIZER)
                || has_finalizer(meta, FOREGROUND_FINALIZER);
        }
        meta.owner_references
            .iter()
            .any(|r| match self.classify(&meta.namespace, r, cache) {
                OwnerState::Dangling | OwnerState::Waiting => true,
                // In a consistent list an owner that is not there is gone.
                OwnerState::Unverified => snapshot,
                // Never collected, but reported once its owner is seen elsewhere.
                OwnerState::Unresolvable => self.observed_elsewhere(&meta.namespace, r),
                OwnerState::Solid | OwnerState::Unwatched => false,
            })
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl Controller for GarbageCollector {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::GarbageCollector
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &WATCHED
    }

    fn watches_custom_kinds(&self) -> bool {
        true
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        if self.needs_full_sync {
            self.full_sync(cache, true);
        }
        let obj = &ev.object;
        let key = obj.key();
        let uid = obj.meta().uid.clone();
        let ns = obj.meta().namespace.clone();
        let mut keys = Vec::new();
        match ev.type_ {
            WatchEventType::Deleted => {
                if self.nodes.get(&key).is_some_and(|n| n.uid == uid) {
                    self.forget(&key);
                } else {
                    self.absent.insert(uid.clone());
                }
                // Its dependents may now be garbage; its owners may have been waiting for it.
                for k in self.dependents_of(&uid) {
                    push_unique(&mut keys, k);
                }
                for r in &obj.meta().owner_references {
                    if let Some(owner) = cached_owner(&ns, r, cache) {
                        if is_deleting_dependents(owner.meta()) {
                            push_unique(&mut keys, owner.key());
                        }
                    }
                }
            }
            WatchEventType::Added | WatchEventType::Modified => {
                // Owners it had before, when they changed: an owner left as it was unblocks
                // nothing (most events are status writes, which leave them as they were).
                let mut prev_owners = Vec::new();
                let mut replaced = None;
                if let Some(p) = self.nodes.get(&key) {
                    if p.uid != uid {
                        replaced = Some(p.uid.clone());
                    } else if p.owners != obj.meta().owner_references {
                        prev_owners = p.owners.clone();
                    }
                }
                if let Some(old_uid) = replaced {
                    // A new incarnation under the same name: the old one is gone.
                    self.forget(&key);
                    for k in self.dependents_of(&old_uid) {
                        push_unique(&mut keys, k);
                    }
                }
                let first_sight = !self.nodes.contains_key(&key);
                self.observe(obj);
                // Dependents that name it from another namespace: upstream's "bad child, good
                // parent" order, where observing the owner shows their references invalid.
                if first_sight && !ns.is_empty() {
                    for k in self.dependents_of(&uid) {
                        if k.namespace != ns {
                            push_unique(&mut keys, k);
                        }
                    }
                }
                let old_meta = old.map(|o| o.meta()).filter(|m| m.uid == uid);
                if starts_deletion_with(old_meta, obj.meta(), FOREGROUND_FINALIZER) {
                    push_unique(&mut keys, key.clone());
                    for k in self.dependents_of(&uid) {
                        push_unique(&mut keys, k);
                    }
                }
                if starts_deletion_with(old_meta, obj.meta(), ORPHAN_FINALIZER) {
                    push_unique(&mut keys, key.clone());
                }
                // An owner waiting for us is unblocked when we drop it or stop blocking it.
                for r in &prev_owners {
                    let now = obj.meta().owner_references.iter().find(|n| n.uid == r.uid);
                    let unblocked = r.block_owner_deletion == Some(true)
                        && now.is_none_or(|n| n.block_owner_deletion != Some(true));
                    if unblocked {
                        if let Some(owner) = cached_owner(&ns, r, cache) {
                            if is_deleting_dependents(owner.meta()) {
                                push_unique(&mut keys, owner.key());
                            }
                        }
                    }
                }
                if obj.meta().deletion_timestamp.is_none()
                    && self.needs_attention(obj, cache, false)
                {
                    push_unique(&mut keys, key.clone());
                }
            }
        }
        if self.absent.len() > ABSENT_PRUNE_THRESHOLD {
            self.prune_absent();
        }
        self.synced_rv = cache.last_rv;
        keys
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        // After a relist the cache is one consistent list (the graph may not know it yet).
        cache
            .all()
            .filter(|o| self.needs_attention(o, cache, true))
            .map(|o| o.key())
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        self.sync_graph(ctx.cache);
        let mut out = Outcome::done();
        let Some(obj) = ctx.cache.get(key) else {
            out.record = Some(ReconcileRecord {
                observed: format!("{key} is gone"),
                desired: String::new(),
                diff: "its dependents were queued when it went".into(),
            });
            return out;
        };
        let meta = obj.meta();
        if meta.deletion_timestamp.is_some() {
            if has_finalizer(meta, ORPHAN_FINALIZER) {
                self.orphan_dependents(obj, ctx.cache, &mut out);
            } else if has_finalizer(meta, FOREGROUND_FINALIZER) {
                self.process_deleting_dependents(obj, ctx.cache, &mut out);
            } else {
                // "Being deleted" is a one-way trip: wait for the final DELETED.
                out.record = Some(ReconcileRecord {
                    observed: format!("{key} is being deleted"),
                    desired: String::new(),
                    diff: "wait for the final deletion".into(),
                });
            }
            return out;
        }
        if meta.owner_references.is_empty() {
            out.record = Some(ReconcileRecord {
                observed: format!("{key} has no owners"),
                desired: String::new(),
                diff: String::new(),
            });
            return out;
        }
        for e in self.invalid_namespace_events(obj) {
            out.event(e);
        }
        self.attempt_to_delete(obj, ctx.cache, &mut out);
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Deployment, Pod, ReplicaSet, Time};
    use crate::sim::controllers::testing;

    const NS: &str = "default";

    fn meta(name: &str) -> ObjectMeta {
        ObjectMeta {
            name: name.into(),
            namespace: NS.into(),
            uid: format!("uid-{name}").into(),
            resource_version: "7".into(),
            ..Default::default()
        }
    }

    fn owner_ref(kind: &str, name: &str) -> OwnerReference {
        OwnerReference {
            api_version: if kind == "Pod" {
                "v1".into()
            } else {
                "apps/v1".into()
            },
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}").into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }

    fn deploy(name: &str) -> Object {
        Object::from(Deployment {
            metadata: meta(name),
            ..Default::default()
        })
    }

    fn rs_owned(name: &str, owners: Vec<OwnerReference>) -> Object {
        let mut m = meta(name);
        m.owner_references = owners;
        Object::from(ReplicaSet {
            metadata: m,
            ..Default::default()
        })
    }

    fn pod_owned(name: &str, owners: Vec<OwnerReference>) -> Object {
        let mut m = meta(name);
        m.owner_references = owners;
        Object::from(Pod {
            metadata: m,
            ..Default::default()
        })
    }

    fn deleting(mut o: Object, finalizer: &str) -> Object {
        let m = o.meta_mut();
        m.deletion_timestamp = Some(Time(1));
        m.finalizers.push(finalizer.into());
        o
    }

    fn cache_with(objs: &[Object]) -> Cache {
        let mut c = testing::cache_of(objs.iter().cloned());
        c.last_rv = 100;
        c
    }

    fn run(gc: &mut (impl Controller + ?Sized), cache: &Cache, key: &ObjectKey) -> Outcome {
        testing::reconcile_once(gc, cache, key, 1_000)
    }

    fn key(kind: Kind, name: &str) -> ObjectKey {
        ObjectKey::new(kind, NS, name)
    }

    /// Delivers a watch event the way an informer does: cache first, then the handler.
    fn deliver(
        gc: &mut GarbageCollector,
        cache: &mut Cache,
        type_: WatchEventType,
        obj: Object,
    ) -> Vec<ObjectKey> {
        let obj = Rc::new(obj);
        cache.last_rv += 1;
        let old = match type_ {
            WatchEventType::Deleted => cache.remove(&obj.key()),
            _ => cache.upsert(obj.clone()),
        };
        let ev = WatchEvent::new(type_, obj, cache.last_rv, 0);
        gc.keys_for_event(&ev, old.as_ref(), cache)
    }

    fn describe(out: &Outcome) -> Vec<String> {
        out.requests()
            .map(|r| match r {
                ApiRequest::Delete { key, options } => format!(
                    "delete {key} {} uid={} rv={}",
                    options.propagation_policy.map_or("-", policy_name),
                    options.precondition_uid.as_deref().unwrap_or("-"),
                    options
                        .precondition_resource_version
                        .as_deref()
                        .unwrap_or("-"),
                ),
                ApiRequest::Patch { key, patch, .. } => {
                    let refs: Vec<String> = patch["metadata"]["ownerReferences"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|r| r["name"].as_str().unwrap_or("?").to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    format!(
                        "patch {key} refs={refs:?} rv={}",
                        patch["metadata"]["resourceVersion"].as_str().unwrap_or("-")
                    )
                }
                ApiRequest::Update(o) => {
                    format!("update {} finalizers={:?}", o.key(), o.meta().finalizers)
                }
                other => format!("{} {}", other.verb(), other.key()),
            })
            .collect()
    }

    #[test]
    fn a_dependent_whose_only_owner_was_seen_deleted_is_deleted_in_the_background() {
        let mut gc = GarbageCollector::new();
        let mut cache = cache_with(&[
            deploy("web"),
            rs_owned("web-1", vec![owner_ref("Deployment", "web")]),
        ]);
        let out = run(&mut gc, &cache, &key(Kind::ReplicaSet, "web-1"));
        assert!(out.batches.is_empty(), "the owner exists");
        let keys = deliver(&mut gc, &mut cache, WatchEventType::Deleted, deploy("web"));
        assert_eq!(keys, vec![key(Kind::ReplicaSet, "web-1")]);
        let out = run(&mut gc, &cache, &key(Kind::ReplicaSet, "web-1"));
        assert_eq!(
            describe(&out),
            vec!["delete ReplicaSet/default/web-1 Background uid=uid-web-1 rv=7"]
        );
        assert_eq!(
            out.record.map(|r| r.observed).as_deref(),
            Some("owner Deployment/web absent")
        );
    }

    /// (case, cached objects besides the pod "p", its owners, uids the GC saw go, requests).
    type OwnerCase = (
        &'static str,
        Vec<Object>,
        Vec<OwnerReference>,
        Vec<&'static str>,
        Vec<&'static str>,
    );

    #[test]
    fn owner_states_decide_what_happens_to_a_dependent() {
        // (case, cached objects besides the pod "p", its owners, uids the GC saw go, requests)
        let web = || rs_owned("web", vec![]);
        let other = || rs_owned("other", vec![]);
        let mut reused = rs_owned("web", vec![]);
        reused.meta_mut().uid = "uid-new".into();
        let loose_other = || OwnerReference {
            controller: None,
            ..owner_ref("ReplicaSet", "other")
        };
        let cases: Vec<OwnerCase> = vec![
            (
                "owner exists",
                vec![web()],
                vec![owner_ref("ReplicaSet", "web")],
                vec![],
                vec![],
            ),
            (
                "owner seen deleted",
                vec![],
                vec![owner_ref("ReplicaSet", "web")],
                vec!["uid-web"],
                vec!["delete Pod/default/p Background uid=uid-p rv=7"],
            ),
            (
                "owner's name now held by another uid",
                vec![reused],
                vec![owner_ref("ReplicaSet", "web")],
                vec![],
                vec!["delete Pod/default/p Background uid=uid-p rv=7"],
            ),
            (
                "one owner gone, one alive: only the dangling reference goes",
                vec![other()],
                vec![owner_ref("ReplicaSet", "web"), loose_other()],
                vec!["uid-web"],
                vec![r#"patch Pod/default/p refs=["other"] rv=7"#],
            ),
            (
                "owner deleting in the foreground, another owner alive: the waiting reference goes",
                vec![deleting(web(), FOREGROUND_FINALIZER), other()],
                vec![owner_ref("ReplicaSet", "web"), loose_other()],
                vec![],
                vec![r#"patch Pod/default/p refs=["other"] rv=7"#],
            ),
            (
                "owner deleting in the foreground, dependent without dependents: background delete",
                vec![deleting(web(), FOREGROUND_FINALIZER)],
                vec![owner_ref("ReplicaSet", "web")],
                vec![],
                vec!["delete Pod/default/p Background uid=uid-p rv=7"],
            ),
            (
                "owner never observed: trusted until verified",
                vec![],
                vec![owner_ref("ReplicaSet", "web")],
                vec![],
                vec![],
            ),
            (
                "owner of a kind the GC does not watch: trusted",
                vec![],
                vec![owner_ref("StatefulSet", "db")],
                vec![],
                vec![],
            ),
        ];
        for (case, others, owners, seen_gone, want) in cases {
            let mut objs = others;
            objs.push(pod_owned("p", owners));
            let cache = cache_with(&objs);
            let mut gc = GarbageCollector::new();
            // The graph as watch events built it (not a fresh list), plus what the GC saw go.
            for o in &objs {
                gc.observe(o);
            }
            gc.synced_rv = cache.last_rv;
            gc.needs_full_sync = false;
            gc.absent.extend(seen_gone.iter().map(|u| Str::from(*u)));
            let out = run(&mut gc, &cache, &key(Kind::Pod, "p"));
            assert_eq!(describe(&out), want, "case: {case}");
        }
    }

    #[test]
    fn an_owner_with_the_orphan_finalizer_makes_a_fully_orphaned_dependent_honour_it() {
        let mut gc = GarbageCollector::new();
        let mut p = pod_owned("p", vec![owner_ref("ReplicaSet", "web")]);
        p.meta_mut().finalizers.push(ORPHAN_FINALIZER.into());
        let cache = cache_with(&[p]);
        gc.full_sync(&cache, true);
        let out = run(&mut gc, &cache, &key(Kind::Pod, "p"));
        assert_eq!(
            describe(&out),
            vec!["delete Pod/default/p Orphan uid=uid-p rv=7"]
        );
    }

    #[test]
    fn partially_dangling_owner_references_are_removed_without_deleting_the_dependent() {
        let mut gc = GarbageCollector::new();
        let other = OwnerReference {
            controller: None,
            ..owner_ref("ReplicaSet", "other")
        };
        let mut cache = cache_with(&[
            rs_owned("web", vec![]),
            rs_owned("other", vec![]),
            pod_owned("p", vec![owner_ref("ReplicaSet", "web"), other]),
        ]);
        assert!(run(&mut gc, &cache, &key(Kind::Pod, "p"))
            .batches
            .is_empty());
        let keys = deliver(
            &mut gc,
            &mut cache,
            WatchEventType::Deleted,
            rs_owned("web", vec![]),
        );
        assert_eq!(keys, vec![key(Kind::Pod, "p")]);
        let out = run(&mut gc, &cache, &key(Kind::Pod, "p"));
        assert_eq!(
            describe(&out),
            vec![r#"patch Pod/default/p refs=["other"] rv=7"#]
        );
        assert_eq!(
            out.record.map(|r| r.diff).as_deref(),
            Some("1 owner gone or deleting → remove that reference")
        );
    }

    #[test]
    fn foreground_deletion_deletes_dependents_and_removes_the_finalizer_only_after_they_are_gone() {
        let mut gc = GarbageCollector::new();
        let web = rs_owned("web", vec![]);
        let mut cache = cache_with(&[
            web.clone(),
            pod_owned("a", vec![owner_ref("ReplicaSet", "web")]),
            pod_owned("b", vec![owner_ref("ReplicaSet", "web")]),
        ]);
        gc.full_sync(&cache, true);
        // The API server sets deletionTimestamp and the foregroundDeletion finalizer.
        let keys = deliver(
            &mut gc,
            &mut cache,
            WatchEventType::Modified,
            deleting(web.clone(), FOREGROUND_FINALIZER),
        );
        assert_eq!(
            keys,
            vec![
                key(Kind::ReplicaSet, "web"),
                key(Kind::Pod, "a"),
                key(Kind::Pod, "b")
            ]
        );
        let out = run(&mut gc, &cache, &key(Kind::ReplicaSet, "web"));
        assert!(out.batches.is_empty(), "two blocking dependents remain");
        assert_eq!(
            out.record.map(|r| r.diff).as_deref(),
            Some("waiting for 2 dependents to go")
        );
        let out = run(&mut gc, &cache, &key(Kind::Pod, "a"));
        assert_eq!(
            describe(&out),
            vec!["delete Pod/default/a Background uid=uid-a rv=7"]
        );
        // One goes: the owner is woken but still waits.
        let keys = deliver(
            &mut gc,
            &mut cache,
            WatchEventType::Deleted,
            pod_owned("a", vec![owner_ref("ReplicaSet", "web")]),
        );
        assert_eq!(keys, vec![key(Kind::ReplicaSet, "web")]);
        assert!(run(&mut gc, &cache, &key(Kind::ReplicaSet, "web"))
            .batches
            .is_empty());
        // The last goes: the finalizer is removed with the cached resourceVersion.
        deliver(
            &mut gc,
            &mut cache,
            WatchEventType::Deleted,
            pod_owned("b", vec![owner_ref("ReplicaSet", "web")]),
        );
        let out = run(&mut gc, &cache, &key(Kind::ReplicaSet, "web"));
        assert_eq!(
            describe(&out),
            vec!["update ReplicaSet/default/web finalizers=[]"]
        );
        let ApiRequest::Update(o) = out.requests().next().expect("one request") else {
            panic!("an update")
        };
        assert_eq!(o.meta().resource_version, "7");
    }

    #[test]
    fn a_non_blocking_dependent_does_not_hold_up_foreground_deletion() {
        let mut gc = GarbageCollector::new();
        let loose = OwnerReference {
            block_owner_deletion: None,
            ..owner_ref("ReplicaSet", "web")
        };
        let cache = cache_with(&[
            deleting(rs_owned("web", vec![]), FOREGROUND_FINALIZER),
            pod_owned("a", vec![loose]),
        ]);
        let out = run(&mut gc, &cache, &key(Kind::ReplicaSet, "web"));
        assert_eq!(
            describe(&out),
            vec!["update ReplicaSet/default/web finalizers=[]"]
        );
    }

    #[test]
    fn a_dependent_with_dependents_of_its_own_is_deleted_in_the_foreground_too() {
        let mut gc = GarbageCollector::new();
        let cache = cache_with(&[
            deleting(deploy("web"), FOREGROUND_FINALIZER),
            rs_owned("web-1", vec![owner_ref("Deployment", "web")]),
            pod_owned("p", vec![owner_ref("ReplicaSet", "web-1")]),
        ]);
        let out = run(&mut gc, &cache, &key(Kind::ReplicaSet, "web-1"));
        assert_eq!(
            describe(&out),
            vec!["delete ReplicaSet/default/web-1 Foreground uid=uid-web-1 rv=7"]
        );
    }

    #[test]
    fn orphan_deletion_removes_owner_references_then_the_finalizer() {
        let mut gc = GarbageCollector::new();
        let other = OwnerReference {
            controller: None,
            ..owner_ref("Deployment", "keep")
        };
        let mut cache = cache_with(&[
            deploy("keep"),
            deploy("web"),
            rs_owned("web-1", vec![owner_ref("Deployment", "web"), other]),
            rs_owned("web-2", vec![owner_ref("Deployment", "web")]),
        ]);
        gc.full_sync(&cache, true);
        let keys = deliver(
            &mut gc,
            &mut cache,
            WatchEventType::Modified,
            deleting(deploy("web"), ORPHAN_FINALIZER),
        );
        assert_eq!(keys, vec![key(Kind::Deployment, "web")]);
        let out = run(&mut gc, &cache, &key(Kind::Deployment, "web"));
        assert_eq!(
            out.batches.len(),
            2,
            "patches first; the finalizer only if they all succeed"
        );
        assert_eq!(
            describe(&out),
            vec![
                r#"patch ReplicaSet/default/web-1 refs=["keep"] rv=7"#,
                r#"patch ReplicaSet/default/web-2 refs=[] rv=7"#,
                "update Deployment/default/web finalizers=[]",
            ]
        );
    }

    #[test]
    fn a_stale_cache_never_makes_the_gc_delete() {
        // The GC missed the Deployment's ADD (a dropped watch event): the RS names an owner the GC
        // never saw. Upstream would GET it; the GC waits instead of deleting.
        let mut gc = GarbageCollector::new();
        let mut cache = cache_with(&[]);
        gc.full_sync(&cache, true);
        let keys = deliver(
            &mut gc,
            &mut cache,
            WatchEventType::Added,
            rs_owned("web-1", vec![owner_ref("Deployment", "web")]),
        );
        assert!(keys.is_empty());
        let out = run(&mut gc, &cache, &key(Kind::ReplicaSet, "web-1"));
        assert!(out.batches.is_empty());
        assert_eq!(
            out.record.map(|r| r.observed).as_deref(),
            Some("owner Deployment/web not observed")
        );
    }

    #[test]
    fn after_a_restart_a_consistent_list_without_the_owner_proves_it_absent() {
        let gc = GarbageCollector::new();
        let cache = cache_with(&[rs_owned("web-1", vec![owner_ref("Deployment", "web")])]);
        let mut gc = gc.restarted().expect("a control-plane process");
        assert_eq!(
            gc.keys_for_resync(&cache),
            vec![key(Kind::ReplicaSet, "web-1")]
        );
        let out = run(&mut *gc, &cache, &key(Kind::ReplicaSet, "web-1"));
        assert_eq!(
            describe(&out),
            vec!["delete ReplicaSet/default/web-1 Background uid=uid-web-1 rv=7"]
        );
    }

    #[test]
    fn a_relist_that_no_longer_holds_an_owner_acts_as_its_tombstone() {
        let mut gc = GarbageCollector::new();
        let cache = cache_with(&[
            deploy("web"),
            rs_owned("web-1", vec![owner_ref("Deployment", "web")]),
        ]);
        gc.full_sync(&cache, true);
        // The informer relisted (410 Gone) while the Deployment was deleted: no DELETED event.
        let mut relisted = cache_with(&[rs_owned("web-1", vec![owner_ref("Deployment", "web")])]);
        relisted.last_rv = 500;
        let out = run(&mut gc, &relisted, &key(Kind::ReplicaSet, "web-1"));
        assert_eq!(
            describe(&out),
            vec!["delete ReplicaSet/default/web-1 Background uid=uid-web-1 rv=7"]
        );
        assert!(gc.knows_absent("uid-web"));
    }

    #[test]
    fn dropping_a_blocking_reference_wakes_the_waiting_owner() {
        let mut gc = GarbageCollector::new();
        let web = deleting(rs_owned("web", vec![]), FOREGROUND_FINALIZER);
        let mut cache = cache_with(&[web, pod_owned("a", vec![owner_ref("ReplicaSet", "web")])]);
        gc.full_sync(&cache, true);
        let keys = deliver(
            &mut gc,
            &mut cache,
            WatchEventType::Modified,
            pod_owned("a", vec![]),
        );
        assert_eq!(keys, vec![key(Kind::ReplicaSet, "web")]);
        assert!(gc.dependents_of("uid-web").is_empty());
    }

    #[test]
    fn an_object_being_deleted_without_gc_finalizers_is_left_alone() {
        let mut gc = GarbageCollector::new();
        let mut p = pod_owned("p", vec![owner_ref("ReplicaSet", "gone")]);
        p.meta_mut().deletion_timestamp = Some(Time(5));
        let cache = cache_with(&[p]);
        let out = run(&mut gc, &cache, &key(Kind::Pod, "p"));
        assert!(out.batches.is_empty());
    }

    // ------------------------------------------------------------------ through the world

    mod world {
        use super::*;
        use crate::sim::api::types::{
            Container, LabelSelector, PodSpec, PodTemplateSpec, ReplicaSetSpec, StringMap,
        };
        use crate::sim::api::ApiResult;
        use crate::sim::faults::Fault;
        use crate::sim::world::{Sim, SimConfig};

        fn app() -> StringMap {
            [("app".to_string(), "web".to_string())].into()
        }

        fn template() -> PodTemplateSpec {
            PodTemplateSpec {
                metadata: ObjectMeta {
                    labels: app(),
                    ..Default::default()
                },
                spec: PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: "nginx".into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            }
        }

        fn bare(name: &str) -> ObjectMeta {
            ObjectMeta {
                name: name.into(),
                namespace: NS.into(),
                ..Default::default()
            }
        }

        /// A Deployment object and a ReplicaSet it owns, made by hand: the Deployment controller
        /// is stopped so these tests exercise only the ReplicaSet controller and the GC.
        fn cluster() -> (Sim, Rc<Object>) {
            let mut sim = Sim::new(SimConfig::default());
            sim.inject(Fault::StopComponent {
                component: "deployment-controller".into(),
            })
            .expect("stopped");
            let mut d = Deployment {
                metadata: bare("web"),
                ..Default::default()
            };
            d.spec.replicas = Some(2);
            d.spec.selector = LabelSelector {
                match_labels: app(),
                ..Default::default()
            };
            d.spec.template = template();
            let d = sim
                .submit(ApiRequest::Create(Object::from(d)))
                .expect("deployment created");
            let mut rs_meta = bare("web-1");
            rs_meta.owner_references = vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: "web".into(),
                uid: d.meta().uid.clone(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }];
            let rs = ReplicaSet {
                metadata: rs_meta,
                spec: ReplicaSetSpec {
                    replicas: Some(2),
                    selector: LabelSelector {
                        match_labels: app(),
                        ..Default::default()
                    },
                    template: template(),
                    ..Default::default()
                },
                ..Default::default()
            };
            sim.submit(ApiRequest::Create(Object::from(rs)))
                .expect("rs created");
            sim.advance_to(5_000, usize::MAX);
            assert_eq!(
                sim.api().list(Kind::Pod).count(),
                2,
                "the ReplicaSet controller made its pods"
            );
            (sim, d)
        }

        fn delete(sim: &mut Sim, kind: Kind, name: &str, policy: PropagationPolicy) -> ApiResult {
            sim.submit(ApiRequest::Delete {
                key: ObjectKey::new(kind, NS, name),
                options: DeleteOptions {
                    propagation_policy: Some(policy),
                    ..Default::default()
                },
            })
        }

        #[test]
        fn background_cascade_removes_the_replica_set_and_its_pods() {
            let (mut sim, _) = cluster();
            delete(
                &mut sim,
                Kind::Deployment,
                "web",
                PropagationPolicy::Background,
            )
            .expect("deleted");
            assert!(
                sim.get(&key(Kind::Deployment, "web")).is_none(),
                "the owner goes at once"
            );
            sim.advance_to(10_000, usize::MAX);
            assert!(sim.get(&key(Kind::ReplicaSet, "web-1")).is_none());
            assert_eq!(sim.api().list(Kind::Pod).count(), 0);
        }

        #[test]
        fn foreground_deletion_keeps_the_owner_until_its_dependents_are_gone() {
            let (mut sim, _) = cluster();
            delete(
                &mut sim,
                Kind::Deployment,
                "web",
                PropagationPolicy::Foreground,
            )
            .expect("deleted");
            let d = sim
                .get(&key(Kind::Deployment, "web"))
                .cloned()
                .expect("still there, deletion in progress");
            assert!(d.meta().deletion_timestamp.is_some());
            assert_eq!(d.meta().finalizers, vec![FOREGROUND_FINALIZER.to_string()]);
            sim.advance_to(10_000, usize::MAX);
            assert!(sim.get(&key(Kind::Deployment, "web")).is_none());
            assert!(sim.get(&key(Kind::ReplicaSet, "web-1")).is_none());
            assert_eq!(sim.api().list(Kind::Pod).count(), 0);
            // The finalizer came off only after the last dependent was gone: the Deployment's
            // removal is the last deletion in the trace.
            let deletions: Vec<String> = sim
                .trace()
                .entries()
                .filter_map(|e| match &e.kind {
                    crate::sim::machinery::trace::TraceKind::Api(tr)
                        if &*tr.actor == "garbage-collector-controller" && tr.code < 300 =>
                    {
                        Some(format!("{} {}", tr.verb, tr.object))
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(
                deletions.last().map(String::as_str),
                Some("update Deployment/default/web"),
                "{deletions:?}"
            );
        }

        #[test]
        fn orphan_deletion_leaves_the_replica_set_and_pods_running_without_an_owner() {
            let (mut sim, _) = cluster();
            delete(&mut sim, Kind::Deployment, "web", PropagationPolicy::Orphan).expect("deleted");
            sim.advance_to(10_000, usize::MAX);
            assert!(sim.get(&key(Kind::Deployment, "web")).is_none());
            let rs = sim
                .get(&key(Kind::ReplicaSet, "web-1"))
                .cloned()
                .expect("the ReplicaSet survives");
            assert!(rs.meta().owner_references.is_empty());
            assert_eq!(
                sim.api().list(Kind::Pod).count(),
                2,
                "its pods survive and stay owned by it"
            );
        }

        #[test]
        fn a_restarted_gc_collects_dependents_of_an_owner_deleted_while_it_was_down() {
            let (mut sim, _) = cluster();
            sim.inject(Fault::StopComponent {
                component: "garbage-collector-controller".into(),
            })
            .expect("stopped");
            delete(
                &mut sim,
                Kind::Deployment,
                "web",
                PropagationPolicy::Background,
            )
            .expect("deleted");
            sim.advance_to(10_000, usize::MAX);
            assert!(
                sim.get(&key(Kind::ReplicaSet, "web-1")).is_some(),
                "nobody collected it"
            );
            sim.inject(Fault::StartComponent {
                component: "garbage-collector-controller".into(),
            })
            .expect("started");
            sim.advance_to(15_000, usize::MAX);
            assert!(sim.get(&key(Kind::ReplicaSet, "web-1")).is_none());
            assert_eq!(sim.api().list(Kind::Pod).count(), 0);
        }
    }
}
