//! The ReplicaSet controller: keeps `spec.replicas` active pods per ReplicaSet, as
//! `pkg/controller/replicaset/replica_set.go` and `pkg/controller/controller_utils.go` do.
//!
//! One pass (`syncReplicaSet`): check expectations, list the namespace's active pods, claim them
//! (adopt matching orphans, release owned pods whose labels no longer match), create or delete
//! pods when expectations are satisfied (slow-start batches, burst limit, deletion ranking), and
//! write status when it changed. Expectations live in this struct and are lost on restart.
//!
//! This is the level-triggered controller Kubernetes runs; [`edge`] is its edge-triggered
//! variant, a teaching device that acts on watch events alone.

pub mod edge;

use crate::scratch::Recycled;
use crate::sort::CollectTree;
use crate::vec_map::{LookupMap, SlotMap};
use std::collections::BTreeSet;
use std::rc::Rc;

use serde_json::{json, Value as Json};

use crate::sim::api::types::{
    Condition, Kind, LabelSelector, Millis, Object, ObjectKey, ObjectMeta, OwnerReference, Pod,
    PodStatus, ReplicaSet, ReplicaSetStatus, Str, StringMap, Time,
};
use crate::sim::api::{
    ApiRequest, ApiResult, DeleteOptions, StatusReason, WatchEvent, WatchEventType,
};
use crate::sim::machinery::cache::{Cache, Indexers};
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};

/// `BurstReplicas`: at most this many creates or deletes per sync.
pub const BURST_REPLICAS: usize = 500;
/// `ExpectationsTimeout`: unobserved expectations stop blocking a sync after 5 minutes.
pub const EXPECTATIONS_TIMEOUT: Millis = 300_000;
/// `SlowStartInitialBatchSize`: the first create batch; each later batch doubles.
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;
/// The annotation that lets users say which pods are cheaper to delete (feature PodDeletionCost).
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// The status condition set when creating or deleting pods failed.
pub const REPLICA_FAILURE: &str = "ReplicaFailure";

// ------------------------------------------------------------------ expectations

/// `ControlleeExpectations`: creates and deletes one ReplicaSet still waits to observe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlleeExpectations {
    pub add: i64,
    pub del: i64,
    /// When the expectations were set (lowering them does not refresh it).
    pub timestamp: Millis,
}

impl ControlleeExpectations {
    /// Both counters reached zero (or below): every expected watch event arrived.
    pub fn fulfilled(&self) -> bool {
        self.add <= 0 && self.del <= 0
    }

    /// Older than [`EXPECTATIONS_TIMEOUT`] at `now`: the sync proceeds anyway.
    pub fn is_expired(&self, now: Millis) -> bool {
        now.saturating_sub(self.timestamp) > EXPECTATIONS_TIMEOUT
    }
}

/// `UIDTrackingControllerExpectations`: per-ReplicaSet counters plus the pod keys whose deletion is
/// expected, so that a pod seen terminating and then deleted is counted once.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    counts: SlotMap<ObjectKey, ControlleeExpectations>,
    delete_keys: SlotMap<ObjectKey, BTreeSet<ObjectKey>>,
}

impl Expectations {
    /// The expectations recorded for a ReplicaSet, if any.
    pub fn get(&self, rs: &ObjectKey) -> Option<&ControlleeExpectations> {
        self.counts.get(rs)
    }

    /// `SatisfiedExpectations`: true when none were recorded, they were fulfilled, or they expired.
    pub fn satisfied(&self, rs: &ObjectKey, now: Millis) -> bool {
        self.counts
            .get(rs)
            .is_none_or(|e| e.fulfilled() || e.is_expired(now))
    }

    /// `ExpectCreations`: forgets earlier counters and waits for `adds` pod ADD events.
    pub fn expect_creations(&mut self, rs: &ObjectKey, adds: usize, now: Millis) {
        self.counts.insert(
            rs.clone(),
            ControlleeExpectations {
                add: adds as i64,
                del: 0,
                timestamp: now,
            },
        );
    }

    /// `ExpectDeletions`: waits for these pods to be seen terminating or deleted.
    pub fn expect_deletions(&mut self, rs: &ObjectKey, pods: BTreeSet<ObjectKey>, now: Millis) {
        let del = pods.len() as i64;
        self.delete_keys.insert(rs.clone(), pods);
        self.counts.insert(
            rs.clone(),
            ControlleeExpectations {
                add: 0,
                del,
                timestamp: now,
            },
        );
    }

    /// `CreationObserved`: one expected create was seen (or will never happen).
    pub fn creation_observed(&mut self, rs: &ObjectKey) {
        if let Some(e) = self.counts.get_mut(rs) {
            e.add -= 1;
        }
    }

    /// `DeletionObserved`: lowers `del` only the first time a pod we deleted is seen going.
    pub fn deletion_observed(&mut self, rs: &ObjectKey, pod: &ObjectKey) {
        if self
            .delete_keys
            .get_mut(rs)
            .is_some_and(|keys| keys.remove(pod))
        {
            if let Some(e) = self.counts.get_mut(rs) {
                e.del -= 1;
            }
        }
    }

    /// `DeleteExpectations`: the ReplicaSet is gone; a new one with its name starts clean.
    pub fn delete(&mut self, rs: &ObjectKey) {
        self.counts.remove(rs);
        self.delete_keys.remove(rs);
    }

    /// Which ReplicaSet expects `pod` to be deleted.
    pub fn deleter_of(&self, pod: &ObjectKey) -> Option<ObjectKey> {
        self.delete_keys
            .iter()
            .find(|(_, keys)| keys.contains(pod))
            .map(|(rs, _)| rs.clone())
    }
}

// ------------------------------------------------------------------ the controller

/// The most recent `manageReplicas` failure of one ReplicaSet, for its ReplicaFailure condition.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ManageError {
    /// `FailedCreate` or `FailedDelete`.
    reason: &'static str,
    message: String,
}

/// The ReplicaSet controller (component `replicaset-controller`).
#[derive(Clone, Debug, Default)]
pub struct ReplicaSetController {
    expectations: Expectations,
    /// Pods whose DELETE is in flight → the ReplicaSet (key, uid) that sent it, for its events.
    deleting: SlotMap<ObjectKey, (ObjectKey, String)>,
    /// Last create/delete failure per ReplicaSet; cleared by a clean pass.
    manage_errors: SlotMap<ObjectKey, ManageError>,
    /// ReplicaSets whose current create/delete pass has already seen a failure.
    pass_failed: BTreeSet<ObjectKey>,
    scratch: PassScratch,
}

impl ReplicaSetController {
    /// A fresh instance with no expectations.
    pub fn new() -> Self {
        Self::default()
    }

    /// The expectations (for the UI's "what the controller waits for" view and tests).
    pub fn expectations(&self) -> &Expectations {
        &self.expectations
    }

    fn on_manage_result(&mut self, rs: &ObjectKey, failure: Option<ManageError>) {
        match failure {
            Some(err) => {
                self.pass_failed.insert(rs.clone());
                self.manage_errors.insert(rs.clone(), err);
            }
            None => {
                if !self.pass_failed.contains(rs) {
                    self.manage_errors.remove(rs);
                }
            }
        }
    }

    fn add_pod(&mut self, pod: &Pod, cache: &Cache) -> Vec<ObjectKey> {
        if pod.metadata.deletion_timestamp.is_some() {
            // A pod that shows up already terminating (e.g. after a restart) is not a creation.
            return self.delete_pod(pod, cache);
        }
        if let Some(r) = pod.metadata.controller_ref() {
            let Some(rs) = resolve_controller_ref(&pod.metadata.namespace, r, cache) else {
                return Vec::new();
            };
            self.expectations.creation_observed(&rs);
            return vec![rs];
        }
        // An orphan: wake every ReplicaSet that might adopt it, without observing a creation.
        replica_sets_selecting(pod, cache)
    }

    fn update_pod(&mut self, old: &Pod, cur: &Pod, cache: &Cache) -> Vec<ObjectKey> {
        if cur.metadata.resource_version == old.metadata.resource_version {
            return Vec::new();
        }
        let label_changed = cur.metadata.labels != old.metadata.labels;
        if cur.metadata.deletion_timestamp.is_some() {
            // Graceful deletion started: act now rather than when the kubelet finishes.
            let mut keys = self.delete_pod(cur, cache);
            if label_changed {
                keys.extend(self.delete_pod(old, cache));
            }
            keys.dedup();
            return keys;
        }
        let cur_ref = cur.metadata.controller_ref();
        let old_ref = old.metadata.controller_ref();
        let ref_changed = cur_ref != old_ref;
        let mut keys = Vec::new();
        if ref_changed {
            if let Some(rs) =
                old_ref.and_then(|r| resolve_controller_ref(&old.metadata.namespace, r, cache))
            {
                keys.push(rs);
            }
        }
        if let Some(r) = cur_ref {
            if let Some(rs) = resolve_controller_ref(&cur.metadata.namespace, r, cache) {
                if !keys.contains(&rs) {
                    keys.push(rs);
                }
            }
            return keys;
        }
        if label_changed || ref_changed {
            for rs in replica_sets_selecting(cur, cache) {
                if !keys.contains(&rs) {
                    keys.push(rs);
                }
            }
        }
        keys
    }

    fn delete_pod(&mut self, pod: &Pod, cache: &Cache) -> Vec<ObjectKey> {
        let Some(r) = pod.metadata.controller_ref() else {
            return Vec::new();
        };
        let Some(rs) = resolve_controller_ref(&pod.metadata.namespace, r, cache) else {
            return Vec::new();
        };
        self.expectations.deletion_observed(&rs, &pod_key(pod));
        vec![rs]
    }
}

impl Controller for ReplicaSetController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::ReplicaSet
    }

    /// Upstream's `controllerUID` pod indexer, and the pod groups its passes count with.
    fn indexers(&self) -> Indexers {
        Indexers {
            controller_uid: true,
            pod_groups: true,
            node_name: false,
        }
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::ReplicaSet, Kind::Pod]
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        match &*ev.object {
            Object::ReplicaSet(rs) => {
                let key = ev.object.key();
                match ev.type_ {
                    WatchEventType::Added => {}
                    WatchEventType::Modified => {
                        // A re-created ReplicaSet under the same name must not inherit expectations.
                        if old.is_some_and(|o| o.meta().uid != rs.metadata.uid) {
                            self.expectations.delete(&key);
                        }
                    }
                    WatchEventType::Deleted => self.expectations.delete(&key),
                }
                vec![key]
            }
            Object::Pod(pod) => match ev.type_ {
                WatchEventType::Added => self.add_pod(pod, cache),
                WatchEventType::Modified => match old.and_then(|o| o.as_pod()) {
                    Some(old_pod) => self.update_pod(old_pod, pod, cache),
                    None => self.add_pod(pod, cache),
                },
                WatchEventType::Deleted => self.delete_pod(pod, cache),
            },
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cache.list(Kind::ReplicaSet).map(|o| o.key()).collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let Some(rs) = ctx.cache.get(key).and_then(|o| o.as_replica_set()) else {
            self.expectations.delete(key);
            self.manage_errors.remove(key);
            self.pass_failed.remove(key);
            out.record = Some(ReconcileRecord {
                observed: "ReplicaSet not in cache (deleted)".into(),
                desired: String::new(),
                diff: "forgot its expectations".into(),
            });
            return out;
        };
        let now = ctx.now;
        let needs_sync = self.expectations.satisfied(key, now);
        if let Some(op) = invalid_selector_operator(&rs.spec.selector) {
            // LabelSelectorAsSelector fails: upstream logs the error and does nothing else.
            out.record = Some(ReconcileRecord {
                observed: format!("invalid selector operator {op:?}"),
                desired: String::new(),
                diff: "cannot select pods: nothing done".into(),
            });
            return out;
        }

        // Claim: adopt matching orphans, release owned pods that no longer match.
        let being_deleted = rs.metadata.deletion_timestamp.is_some();
        let replicas = rs.spec.replicas.unwrap_or(1).max(0) as usize;
        // With no orphan to adopt and every owned pod still matching, the claim changes nothing
        // and the pass needs only counts, which the cache keeps per label set; choosing pods to
        // delete needs the pods themselves (though not to count them).
        let grouped = count_groups(rs, ctx.cache, now);
        let counted = grouped.filter(|c| !(needs_sync && !being_deleted && c.claimed > replicas));
        let mut claimed: Vec<&Pod> = self.scratch.claimed.take();
        let mut claim_patches = Vec::new();
        let (mut adopted, mut released) = (0usize, 0usize);
        // Pods another controller owns are skipped below anyway; the cache's claim index
        // leaves them out, so a pass costs what this ReplicaSet owns, not the namespace.
        let scan = counted.is_none() || cfg!(debug_assertions);
        let candidates = scan
            .then(|| {
                ctx.cache
                    .claimable(Kind::Pod, &rs.metadata.namespace, &rs.metadata.uid)
            })
            .into_iter()
            .flatten()
            .filter_map(|o| o.as_pod());
        // Where the groups count, they vouch that every candidate is this ReplicaSet's own and
        // matches its selector: a scale-down pass keeps the active ones without reading each
        // pod's labels and owners (debug builds read them, and compare the counts below).
        let vouched = grouped.is_some() && !cfg!(debug_assertions);
        for pod in candidates {
            if !pod.is_active() {
                continue;
            }
            if vouched {
                claimed.push(pod);
                continue;
            }
            let matches = rs.spec.selector.matches(&pod.metadata.labels);
            match pod.metadata.controller_ref() {
                Some(r) if r.uid != rs.metadata.uid => {}
                Some(_) if matches => claimed.push(pod),
                Some(_) => {
                    if !being_deleted {
                        claim_patches.push(release_patch(pod, &rs.metadata.uid));
                        released += 1;
                    }
                }
                None => {
                    // An empty selector would adopt the whole namespace; validation forbids it, and
                    // the controller refuses it here too rather than trust that.
                    if being_deleted || !matches || rs.spec.selector.is_empty() {
                        continue;
                    }
                    claim_patches.push(adopt_patch(pod, rs));
                    adopted += 1;
                    claimed.push(pod);
                }
            }
        }
        // Where the groups count (nothing to adopt or release), the scan claimed exactly the pods
        // they count: counting them again was a sixth of a 10,000-pod scale-down pass.
        let counts = match grouped {
            Some(c) => {
                debug_assert_eq!(c, count_pods(rs, &claimed, now), "claim counts for {key}");
                debug_assert!(claim_patches.is_empty());
                c
            }
            None => count_pods(rs, &claimed, now),
        };
        out.batch(claim_patches);

        // manageReplicas.
        let diff_text;
        if !needs_sync {
            let e = self.expectations.get(key).copied().unwrap_or_default();
            diff_text = format!(
                "expectations pending (add {}, del {})",
                e.add.max(0),
                e.del.max(0)
            );
            // Stands in for kube-controller-manager's 12–24 h informer resync: wake up when the
            // expectations expire, so a lost watch event heals after ExpectationsTimeout.
            out.requeue(
                (e.timestamp + EXPECTATIONS_TIMEOUT + 1)
                    .saturating_sub(now)
                    .max(1),
            );
        } else if being_deleted {
            diff_text = "being deleted: no pods created or deleted".into();
        } else if counts.claimed < replicas {
            let missing = replicas - counts.claimed;
            let n = missing.min(BURST_REPLICAS);
            if rs.spec.template.metadata.labels.is_empty() {
                let err = ManageError {
                    reason: "FailedCreate",
                    message: "unable to create pods, no labels".into(),
                };
                self.pass_failed.remove(key);
                self.on_manage_result(key, Some(err.clone()));
                out.error = Some(err.message);
                diff_text = format!("{missing} missing → cannot create: no labels");
            } else {
                self.expectations.expect_creations(key, n, now);
                self.pass_failed.remove(key);
                let pod = pod_from_template(rs);
                for size in slow_start_batches(n) {
                    out.batch(vec![ApiRequest::Create(Object::from(pod.clone())); size]);
                }
                diff_text = if n < missing {
                    format!("{missing} missing → create {n} (burst limit {BURST_REPLICAS})")
                } else {
                    format!("{missing} missing → create {n}")
                };
            }
        } else if counts.claimed > replicas {
            let extra = counts.claimed - replicas;
            let n = extra.min(BURST_REPLICAS);
            let scratch = &mut self.scratch;
            related_pods_per_node(rs, ctx.cache, &mut scratch.related);
            let victims = pods_to_delete(&claimed, &scratch.related, n, now, &mut scratch.rank);
            let keys: BTreeSet<ObjectKey> = victims.iter().map(|p| pod_key(p)).collect_set();
            self.expectations.expect_deletions(key, keys, now);
            self.pass_failed.remove(key);
            let mut deletes = Vec::with_capacity(victims.len());
            for pod in &victims {
                self.deleting
                    .insert(pod_key(pod), (key.clone(), rs.metadata.uid.to_string()));
                deletes.push(ApiRequest::Delete {
                    key: pod_key(pod),
                    options: DeleteOptions::default(),
                });
            }
            out.batch(deletes);
            diff_text = if n < extra {
                format!("{extra} extra → delete {n} (burst limit {BURST_REPLICAS})")
            } else {
                format!("{extra} extra → delete {n}")
            };
        } else {
            // A clean manageReplicas: the ReplicaFailure condition goes away.
            self.manage_errors.remove(key);
            self.pass_failed.remove(key);
            diff_text = String::new();
        }
        self.scratch.claimed.keep(claimed);

        // Status.
        let new_status = calculate_status(rs, &counts, self.manage_errors.get(key), now);
        let ready = new_status.ready_replicas;
        if status_differs(rs, &new_status) {
            let mut updated = rs.clone();
            updated.status = ReplicaSetStatus {
                observed_generation: rs.metadata.generation,
                ..new_status
            };
            out.batch(vec![ApiRequest::UpdateStatus(Object::from(updated))]);
        }
        if let Some(wait) = counts.next_available {
            out.requeue(wait);
        }

        let mut observed = format!(
            "{} active pod{} ({ready} ready)",
            counts.claimed,
            plural(counts.claimed)
        );
        if adopted > 0 {
            observed.push_str(&format!(", adopting {adopted} orphan{}", plural(adopted)));
        }
        if released > 0 {
            observed.push_str(&format!(
                ", releasing {released} pod{} whose labels no longer match",
                plural(released)
            ));
        }
        out.record = Some(ReconcileRecord {
            observed,
            desired: format!("replicas: {replicas}"),
            diff: diff_text,
        });
        out
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        match req {
            ApiRequest::Create(Object::Pod(pod)) => {
                let Some(rs) = owner_rs_key(pod) else { return };
                match result {
                    Ok(_) => self.on_manage_result(&rs, None),
                    Err(e) => {
                        // The informer will never see this pod: stop waiting for it.
                        self.expectations.creation_observed(&rs);
                        self.on_manage_result(
                            &rs,
                            Some(ManageError {
                                reason: "FailedCreate",
                                message: e.message.clone(),
                            }),
                        );
                    }
                }
            }
            ApiRequest::Delete { key, .. } if key.kind == Kind::Pod => {
                let Some(rs) = self
                    .deleting
                    .get(key)
                    .map(|(rs, _)| rs.clone())
                    .or_else(|| self.expectations.deleter_of(key))
                else {
                    return;
                };
                match result {
                    Ok(_) => self.on_manage_result(&rs, None),
                    Err(e) => {
                        self.expectations.deletion_observed(&rs, key);
                        if e.reason == StatusReason::NotFound {
                            self.on_manage_result(&rs, None);
                        } else {
                            let message = format!("unable to delete pods: {}", e.message);
                            self.on_manage_result(
                                &rs,
                                Some(ManageError {
                                    reason: "FailedDelete",
                                    message,
                                }),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn events_for_response(&mut self, req: &ApiRequest, result: &ApiResult) -> Vec<EventRecord> {
        match req {
            ApiRequest::Create(Object::Pod(pod)) => {
                let (Some(rs), Some(r)) = (owner_rs_key(pod), pod.metadata.controller_ref()) else {
                    return Vec::new();
                };
                let ev = match result {
                    Ok(created) => rs_event(
                        "Normal",
                        &rs,
                        &r.uid,
                        "SuccessfulCreate",
                        Str::concat(&["Created pod: ", &created.meta().name]),
                    ),
                    Err(e) => rs_event(
                        "Warning",
                        &rs,
                        &r.uid,
                        "FailedCreate",
                        format!("Error creating: {}", e.message),
                    ),
                };
                vec![ev]
            }
            ApiRequest::Delete { key, .. } if key.kind == Kind::Pod => {
                let Some((rs, uid)) = self.deleting.remove(key) else {
                    return Vec::new();
                };
                match result {
                    Ok(_) => vec![rs_event(
                        "Normal",
                        &rs,
                        &uid,
                        "SuccessfulDelete",
                        format!("Deleted pod: {}", key.name),
                    )],
                    Err(e) if e.reason == StatusReason::NotFound => Vec::new(),
                    Err(e) => vec![rs_event(
                        "Warning",
                        &rs,
                        &uid,
                        "FailedDelete",
                        format!("Error deleting: {}", e.message),
                    )],
                }
            }
            _ => Vec::new(),
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        match req {
            ApiRequest::Create(Object::Pod(pod)) => {
                if let Some(rs) = owner_rs_key(pod) {
                    // Slow start skipped it: it will never be observed.
                    self.expectations.creation_observed(&rs);
                }
            }
            ApiRequest::Delete { key, .. } if key.kind == Kind::Pod => {
                let rs = self
                    .deleting
                    .remove(key)
                    .map(|(rs, _)| rs)
                    .or_else(|| self.expectations.deleter_of(key));
                if let Some(rs) = rs {
                    self.expectations.deletion_observed(&rs, key);
                }
            }
            _ => {}
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::default()))
    }
}

// ------------------------------------------------------------------ helpers

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn pod_key(pod: &Pod) -> ObjectKey {
    ObjectKey::of(Kind::Pod, &pod.metadata)
}

/// The ReplicaSet a pod we created names as its controller.
fn owner_rs_key(pod: &Pod) -> Option<ObjectKey> {
    let r = pod
        .metadata
        .controller_ref()
        .filter(|r| r.kind == "ReplicaSet")?;
    Some(ObjectKey::shared(
        Kind::ReplicaSet,
        &pod.metadata.namespace,
        &r.name,
    ))
}

/// An Event about ReplicaSet `rs`, for both the controller and its edge-triggered variant.
fn rs_event(
    type_: &'static str,
    rs: &ObjectKey,
    uid: &str,
    reason: &str,
    message: impl Into<Str>,
) -> EventRecord {
    EventRecord {
        type_,
        reason: reason.into(),
        message: message.into(),
        object: rs.clone(),
        uid: Str::from(uid),
        field_path: Str::EMPTY,
    }
}

/// `resolveControllerRef`: the cached ReplicaSet a controllerRef points at, if it is still that one.
fn resolve_controller_ref(namespace: &Str, r: &OwnerReference, cache: &Cache) -> Option<ObjectKey> {
    if r.kind != "ReplicaSet" {
        return None;
    }
    let key = ObjectKey::shared(Kind::ReplicaSet, namespace, &r.name);
    let rs = cache.get(&key)?;
    (rs.meta().uid == r.uid).then_some(key)
}

/// `GetPodReplicaSets`: ReplicaSets whose selector matches an orphan (an empty selector matches none).
fn replica_sets_selecting(pod: &Pod, cache: &Cache) -> Vec<ObjectKey> {
    cache
        .list_ns(Kind::ReplicaSet, &pod.metadata.namespace)
        .filter_map(|o| o.as_replica_set())
        .filter(|rs| !rs.spec.selector.is_empty() && rs.spec.selector.matches(&pod.metadata.labels))
        .map(|rs| ObjectKey::of(Kind::ReplicaSet, &rs.metadata))
        .collect()
}

fn invalid_selector_operator(sel: &LabelSelector) -> Option<String> {
    sel.match_expressions
        .iter()
        .find(|e| {
            !matches!(
                e.operator.as_str(),
                "In" | "NotIn" | "Exists" | "DoesNotExist"
            )
        })
        .map(|e| e.operator.clone())
}

/// `metav1.NewControllerRef(rs, apps/v1 ReplicaSet)`.
fn controller_ref(rs: &ReplicaSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: rs.metadata.name.clone(),
        uid: rs.metadata.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Adoption as a JSON merge patch. A merge patch replaces the whole list, so it carries the
/// pod's other references and its resourceVersion: a concurrent change makes it a 409, never a
/// silent overwrite (upstream's strategic merge patch keys the list by uid instead).
fn adopt_patch(pod: &Pod, rs: &ReplicaSet) -> ApiRequest {
    adopt_patch_for(pod, controller_ref(rs))
}

/// [`adopt_patch`] for any controller: `owner` becomes the pod's controller reference.
pub(crate) fn adopt_patch_for(pod: &Pod, owner: OwnerReference) -> ApiRequest {
    let mut refs: Vec<OwnerReference> = pod
        .metadata
        .owner_references
        .iter()
        .filter(|r| r.uid != owner.uid)
        .cloned()
        .collect();
    refs.push(owner);
    ApiRequest::Patch {
        key: pod_key(pod),
        patch: json!({"metadata": {"ownerReferences": refs, "resourceVersion": pod.metadata.resource_version}}),
        status: false,
    }
}

/// Release: removes the ownerReference to `owner_uid` (the same merge-patch care as adoption).
pub(crate) fn release_patch(pod: &Pod, owner_uid: &str) -> ApiRequest {
    let refs: Vec<&OwnerReference> = pod
        .metadata
        .owner_references
        .iter()
        .filter(|r| r.uid != owner_uid)
        .collect();
    let refs = if refs.is_empty() {
        Json::Null
    } else {
        json!(refs)
    };
    ApiRequest::Patch {
        key: pod_key(pod),
        patch: json!({"metadata": {"ownerReferences": refs, "resourceVersion": pod.metadata.resource_version}}),
        status: false,
    }
}

/// `GetPodFromTemplate`: labels, annotations and finalizers from the template, `generateName:
/// <rs>-`, and the controller reference.
fn pod_from_template(rs: &ReplicaSet) -> Pod {
    let t = &rs.spec.template;
    Pod {
        metadata: ObjectMeta {
            generate_name: format!("{}-", rs.metadata.name).into(),
            namespace: rs.metadata.namespace.clone(),
            labels: t.metadata.labels.clone(),
            annotations: t.metadata.annotations.clone(),
            finalizers: t.metadata.finalizers.clone(),
            owner_references: vec![controller_ref(rs)],
            ..Default::default()
        },
        spec: t.spec.clone().into(),
        status: PodStatus::default(),
    }
}

/// `slowStartBatch` sizes: 1, 2, 4, 8, … with the remainder last (10 → 1, 2, 4, 3).
pub fn slow_start_batches(count: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut remaining = count;
    let mut size = remaining.min(SLOW_START_INITIAL_BATCH_SIZE);
    while size > 0 {
        sizes.push(size);
        remaining -= size;
        size = (2 * size).min(remaining);
    }
    sizes
}

/// Active related pods per node name (a [`LookupMap`]: its order shows nowhere). A B-tree of
/// a thousand node names cost a dozen string comparisons per pod, twice per pass (counting, then
/// ranking), which was a third of a ReplicaSet pass scaling down 10,000 pods. The table is kept
/// for the next pass, its counts zeroed: the node names stay from pass to pass, and a fresh
/// table at each pass was a tenth of it (the kernel zeroing its new pages, natively).
type PodsPerNode = LookupMap<String, usize>;

/// What a pass works in, kept for the next pass (a ReplicaSet's scale-down at 10,000 pods needs
/// about a megabyte: see [`Recycled`]). Scratch only: a copy, as a controller's snapshot makes,
/// starts empty.
#[derive(Default)]
struct PassScratch {
    /// The claimed pods.
    claimed: Recycled<Pod>,
    related: PodsPerNode,
    rank: RankScratch,
}

impl Clone for PassScratch {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for PassScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassScratch").finish_non_exhaustive()
    }
}

/// `getIndirectlyRelatedPods`, counted per node as the ranking uses it: how many active pods
/// selected by a ReplicaSet with the same controller as this one (all ReplicaSets of one
/// Deployment) each node runs, each pod once however many of them select it. Without a
/// controller: none.
fn related_pods_per_node(rs: &ReplicaSet, cache: &Cache, on_node: &mut PodsPerNode) {
    // The counts start again from zero; a node that had none in the last pass (gone, or not
    // this Deployment's) is forgotten.
    on_node.retain(|_, n| std::mem::take(n) > 0);
    let Some(owner) = rs.metadata.controller_ref() else {
        return;
    };
    let ns = &rs.metadata.namespace;
    let selectors: Vec<&LabelSelector> = cache
        .controlled_by(&owner.uid)
        .filter_map(|o| o.as_replica_set())
        .filter(|r| &r.metadata.namespace == ns)
        .map(|r| &r.spec.selector)
        .collect();
    if selectors.is_empty() {
        return;
    }
    // Every pod with a controller is in one of the cache's groups (its owner's pods with its
    // labels), which count their active pods per node, and the rest are orphans: a pass reads a
    // thousand nodes' counts and the few orphans instead of 10,000 pods (debug builds read the
    // pods too, and compare).
    let mut add = |node: &str, n: usize| match on_node.get_mut(node) {
        Some(count) => *count += n,
        None => {
            on_node.insert(node.to_owned(), n);
        }
    };
    let selected = |labels: &StringMap| selectors.iter().any(|s| s.matches(labels));
    for (labels, group) in cache.pod_groups_in(ns) {
        if group.active > 0 && selected(labels) {
            for (node, &n) in &group.active_on_node {
                add(node, n);
            }
        }
    }
    for pod in cache.uncontrolled(Kind::Pod, ns).filter_map(|o| o.as_pod()) {
        if pod.is_active() && selected(&pod.metadata.labels) {
            add(&pod.spec.node_name, 1);
        }
    }
    #[cfg(debug_assertions)]
    {
        let mut scanned = LookupMap::<&str, usize>::default();
        for pod in cache.list_ns(Kind::Pod, ns).filter_map(|o| o.as_pod()) {
            if pod.is_active() && selected(&pod.metadata.labels) {
                *scanned.entry(pod.spec.node_name.as_str()).or_default() += 1;
            }
        }
        let counted: LookupMap<&str, usize> = on_node
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(node, &n)| (node.as_str(), n))
            .collect();
        debug_assert_eq!(counted, scanned, "related pods of {}", rs.metadata.name);
    }
}

/// `getPodsToDelete`: ranks the candidates (unless all go) and takes the first `diff`.
fn pods_to_delete<'a>(
    pods: &[&'a Pod],
    related_on_node: &PodsPerNode,
    diff: usize,
    now: Millis,
    scratch: &mut RankScratch,
) -> Vec<&'a Pod> {
    if diff >= pods.len() {
        return pods.to_vec();
    }
    let related = |i: usize| {
        related_on_node
            .get(pods[i].spec.node_name.as_str())
            .copied()
            .unwrap_or(0)
    };
    scratch
        .rank(pods, &related, now)
        .iter()
        .take(diff)
        .map(|&i| pods[i as usize])
        .collect()
}

/// Sorts pods so the first is the one to delete first, by `ActivePodsWithRanks.Less` with
/// PodDeletionCost and LogarithmicScaleDown on (their defaults). `rank` is the number of active
/// related pods on the pod's node.
pub fn rank_for_deletion(pods: Vec<(&Pod, usize)>, now: Millis) -> Vec<&Pod> {
    let (refs, related): (Vec<&Pod>, Vec<usize>) = pods.into_iter().unzip();
    let mut scratch = RankScratch::default();
    let order = scratch.rank(&refs, &|i| related[i], now);
    order.iter().map(|&i| refs[i as usize]).collect()
}

/// The buffers a ranking works in (what each comparison reads of 10,000 pods is about a
/// megabyte), kept from one scale-down pass to the next in [`PassScratch`].
#[derive(Default)]
struct RankScratch {
    facts: Vec<DeletionFacts>,
    order: Vec<u32>,
    merge: Vec<u32>,
}

impl RankScratch {
    /// The order to delete `pods` in, as indices into `pods`, first to delete first.
    /// `related(i)` is the number of active related pods on the pod's node. The comparison is
    /// not a strict weak order (log buckets and the UID tie-break can form cycles), so a merge
    /// sort that tolerates that is used; it is stable, so full ties keep the given (name) order.
    fn rank(&mut self, pods: &[&Pod], related: &dyn Fn(usize) -> usize, now: Millis) -> &[u32] {
        // What each comparison reads, read once per pod: scaling down 10,000 pods compares about
        // 130,000 times, and reading conditions, annotations and logarithms at each was most of
        // a pass (over 50 ms in the browser).
        self.facts.clear();
        self.facts.extend(
            pods.iter()
                .enumerate()
                .map(|(i, &p)| DeletionFacts::of(p, related(i), now)),
        );
        self.order.clear();
        self.order.extend(0..pods.len() as u32);
        let facts = &self.facts;
        merge_sort(&mut self.order, &mut self.merge, &|&i: &u32, &j: &u32| {
            let (i, j) = (i as usize, j as usize);
            facts[i].less(&facts[j], || (&pods[i].metadata.uid, &pods[j].metadata.uid))
        });
        &self.order
    }
}

/// A top-down merge sort, splitting at half the length rounded down and taking from the right
/// half only when it is strictly less: stable, and defined for any comparison (the result of a
/// comparison that is not a strict weak order depends on the algorithm, so it must not change).
fn merge_sort<T: Copy, F: Fn(&T, &T) -> bool>(items: &mut [T], scratch: &mut Vec<T>, less: &F) {
    if items.len() <= 1 {
        return;
    }
    let mid = items.len() / 2;
    merge_sort(&mut items[..mid], scratch, less);
    merge_sort(&mut items[mid..], scratch, less);
    scratch.clear();
    let (left, right) = items.split_at(mid);
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        if less(&right[j], &left[i]) {
            scratch.push(right[j]);
            j += 1;
        } else {
            scratch.push(left[i]);
            i += 1;
        }
    }
    scratch.extend_from_slice(&left[i..]);
    scratch.extend_from_slice(&right[j..]);
    items.copy_from_slice(scratch);
}

/// What `ActivePodsWithRanks.Less` compares of one pod, in the units it compares them in.
struct DeletionFacts {
    /// Rules 1-5 (assigned, phase, ready, deletion cost, related pods on its node) packed into
    /// one number that orders as those rules do: most comparisons end there, in one comparison.
    head: u64,
    ready: bool,
    /// When it became Ready (seconds) and that age's log2 bucket at `now`.
    ready_time: Option<(u64, i64)>,
    restarts: i32,
    /// Its creationTimestamp (seconds) and that age's log2 bucket at `now`.
    created: Option<(u64, i64)>,
    uid: UidKey,
}

/// Rules 1-5 of `ActivePodsWithRanks.Less` as one number, smaller first: unassigned before
/// assigned (bit 63), Pending before Unknown before Running (bits 61-62), not ready before ready
/// (bit 60), lower pod-deletion-cost first (bits 28-59, offset to unsigned), then more related
/// pods on the node first (bits 0-27, inverted; a count past 2^28 - 1, a quarter of a billion
/// pods on one node, ranks as that).
fn rank_head(assigned: bool, phase: u8, ready: bool, cost: i32, related: usize) -> u64 {
    const RELATED_MAX: u64 = (1 << 28) - 1;
    let cost = (i64::from(cost) - i64::from(i32::MIN)) as u64;
    let related = RELATED_MAX - (related as u64).min(RELATED_MAX);
    (u64::from(assigned) << 63)
        | (u64::from(phase & 0b11) << 61)
        | (u64::from(ready) << 60)
        | (cost << 28)
        | related
}

/// A pod's uid's first 16 bytes as a number that orders as the string does until those tie:
/// pods created within the same log2 age bucket (a whole rollout's) are ranked by uid, and
/// reading two pods' uid strings at each of a 10,000-pod ranking's 130,000 comparisons was most
/// of it. Only equal prefixes read the strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct UidKey {
    /// The first 16 bytes, big-endian, padded with zeros.
    prefix: u128,
}

impl UidKey {
    fn of(uid: &str) -> Self {
        let mut head = [0u8; 16];
        let n = uid.len().min(16);
        head[..n].copy_from_slice(&uid.as_bytes()[..n]);
        UidKey {
            prefix: u128::from_be_bytes(head),
        }
    }

    /// How the uid this key was made of (`uids().0`) orders against `other`'s (`uids().1`).
    fn cmp_uids<'u>(
        self,
        other: Self,
        uids: impl FnOnce() -> (&'u str, &'u str),
    ) -> std::cmp::Ordering {
        // Padding compares as the smallest byte, as a string's end does, so unequal prefixes
        // order as the strings; equal ones leave it to the strings.
        self.prefix.cmp(&other.prefix).then_with(|| {
            let (a, b) = uids();
            a.cmp(b)
        })
    }
}

impl DeletionFacts {
    fn of(pod: &Pod, related: usize, now: Millis) -> Self {
        let with_bucket = |t: Option<u64>| t.map(|t| (t, log2_age_bucket(t, now)));
        let ready = pod.is_ready();
        Self {
            head: rank_head(
                !pod.spec.node_name.is_empty(),
                phase_ordinal(&pod.status.phase),
                ready,
                deletion_cost(pod),
                related,
            ),
            ready,
            ready_time: with_bucket(ready_time(pod)),
            restarts: pod.max_restarts(),
            created: with_bucket(api_seconds(pod.metadata.creation_timestamp)),
            uid: UidKey::of(&pod.metadata.uid),
        }
    }

    /// True when this pod should be deleted before `b`; `uids()` gives their uids, read only
    /// when a tie comes down to them.
    fn less<'u>(&self, b: &Self, uids: impl Fn() -> (&'u str, &'u str)) -> bool {
        let a = self;
        // 1. Unassigned < assigned. 2. Pending < Unknown < Running. 3. Not ready < ready.
        // 4. Lower pod-deletion-cost first. 5. More related pods on the same node first (spreads
        // the survivors). All in the head.
        if a.head != b.head {
            return a.head < b.head;
        }
        // 6. Both ready (equal heads: both or neither): ready for less time first.
        if a.ready && b.ready {
            if let Some(r) = time_rule(a.ready_time, b.ready_time, || a.uid_less(b, &uids)) {
                return r;
            }
        }
        // 7. More container restarts first.
        if a.restarts != b.restarts {
            return a.restarts > b.restarts;
        }
        // 8. Newer first.
        time_rule(a.created, b.created, || a.uid_less(b, &uids)).unwrap_or(false)
    }

    fn uid_less<'u>(&self, b: &Self, uids: &impl Fn() -> (&'u str, &'u str)) -> bool {
        self.uid.cmp_uids(b.uid, uids).is_lt()
    }
}

fn phase_ordinal(phase: &str) -> u8 {
    match phase {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0, // Pending, and anything else, as a Go map lookup miss
    }
}

/// `GetDeletionCostFromPodAnnotations`: invalid values ("+1", "007", junk) count as 0.
fn deletion_cost(pod: &Pod) -> i32 {
    let Some(v) = pod.metadata.annotations.get(POD_DELETION_COST) else {
        return 0;
    };
    let b = v.as_bytes();
    let valid_first = match b.first() {
        Some(b'-') => true,
        Some(b'0') => v == "0",
        Some(c) => c.is_ascii_digit(),
        None => false,
    };
    if !valid_first {
        return 0;
    }
    v.parse::<i32>().unwrap_or(0)
}

/// Timestamps as the API serves them: whole seconds (metav1.Time is RFC 3339 without fractions).
fn api_seconds(t: Option<Time>) -> Option<u64> {
    t.map(|t| t.0 / 1000)
}

fn ready_time(pod: &Pod) -> Option<u64> {
    api_seconds(pod.ready_since())
}

/// `afterOrZero`: a missing time sorts first, otherwise the later time first.
fn after_or_zero(t1: Option<u64>, t2: Option<u64>) -> bool {
    match (t1, t2) {
        (None, _) | (_, None) => t1.is_none(),
        (Some(a), Some(b)) => a > b,
    }
}

/// floor(log2(age in nanoseconds)) of a time in seconds at `now`, -1 when not in the past:
/// what `logarithmicRankDiff` compares.
fn log2_age_bucket(t: u64, now: Millis) -> i64 {
    let d = now as i128 * 1_000_000 - t as i128 * 1_000_000_000;
    if d > 0 {
        (d as f64).log2().floor() as i64
    } else {
        -1
    }
}

/// One time-based rule (6: ready time, 8: creation time) under LogarithmicScaleDown, over
/// (seconds, log2 age bucket) pairs: None when the times are equal.
fn time_rule(
    t1: Option<(u64, i64)>,
    t2: Option<(u64, i64)>,
    uid_less: impl FnOnce() -> bool,
) -> Option<bool> {
    if t1.map(|t| t.0) == t2.map(|t| t.0) {
        return None;
    }
    let (Some((_, a)), Some((_, b))) = (t1, t2) else {
        return Some(after_or_zero(t1.map(|t| t.0), t2.map(|t| t.0)));
    };
    Some(if a == b { uid_less() } else { a < b })
}

fn template_labels_match(template: &StringMap, labels: &StringMap) -> bool {
    template.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// What `calculateStatus` and the availability requeue need from the claimed pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ClaimCounts {
    claimed: usize,
    fully_labeled: i32,
    ready: i32,
    available: i32,
    /// When the next ready-but-not-yet-available pod becomes available (minReadySeconds).
    next_available: Option<Millis>,
}

/// Counts over the claimed pods, one by one.
fn count_pods(rs: &ReplicaSet, pods: &[&Pod], now: Millis) -> ClaimCounts {
    let min_ready = rs.spec.min_ready_seconds as i64;
    let mut c = ClaimCounts {
        claimed: pods.len(),
        next_available: next_availability(rs, pods, now),
        ..ClaimCounts::default()
    };
    for pod in pods {
        if template_labels_match(&rs.spec.template.metadata.labels, &pod.metadata.labels) {
            c.fully_labeled += 1;
        }
        if pod.is_ready() {
            c.ready += 1;
            if pod.is_available(min_ready, now) {
                c.available += 1;
            }
        }
    }
    c
}

/// The same counts from the cache's per-label-set groups of the pods this ReplicaSet controls,
/// when the claim would change nothing: no orphan in the namespace to adopt, and every active
/// owned pod still matching the selector. None otherwise (the pass then claims pod by pod).
fn count_groups(rs: &ReplicaSet, cache: &Cache, now: Millis) -> Option<ClaimCounts> {
    let ns = &rs.metadata.namespace;
    if cache.has_uncontrolled(Kind::Pod, ns) {
        return None;
    }
    let min_ready = rs.spec.min_ready_seconds as i64;
    let mut c = ClaimCounts::default();
    for (labels, g) in cache.pod_groups(&rs.metadata.uid, ns) {
        if g.active == 0 {
            continue;
        }
        if !rs.spec.selector.matches(labels) {
            return None;
        }
        c.claimed += g.active;
        if template_labels_match(&rs.spec.template.metadata.labels, labels) {
            c.fully_labeled += g.active as i32;
        }
        for (since, &n) in &g.ready_since {
            c.ready += n as i32;
            // `Pod::is_available` and `next_availability`, per distinct Ready time.
            let available =
                min_ready == 0 || since.is_some_and(|t| t + (min_ready as u64) * 1000 <= now);
            if available {
                c.available += n as i32;
            } else if min_ready > 0 {
                if let Some(t) = since {
                    let wait = (t + min_ready as u64 * 1000).saturating_sub(now).max(1);
                    c.next_available = Some(c.next_available.map_or(wait, |w| w.min(wait)));
                }
            }
        }
    }
    Some(c)
}

/// `calculateStatus`: counts over the claimed pods plus the ReplicaFailure condition.
fn calculate_status(
    rs: &ReplicaSet,
    counts: &ClaimCounts,
    failure: Option<&ManageError>,
    now: Millis,
) -> ReplicaSetStatus {
    let mut status = rs.status.clone();
    let existing = status
        .conditions
        .iter()
        .position(|c| c.type_ == REPLICA_FAILURE);
    match (failure, existing) {
        (Some(err), _) => {
            // SetCondition: an existing condition with the same status and reason stays as it is.
            let same = existing
                .map(|i| &status.conditions[i])
                .is_some_and(|c| c.status == "True" && c.reason.as_deref() == Some(err.reason));
            if !same {
                status.conditions.retain(|c| c.type_ != REPLICA_FAILURE);
                status.conditions.push(Condition {
                    type_: REPLICA_FAILURE.into(),
                    status: "True".into(),
                    reason: Some(err.reason.into()),
                    message: Some(Str::from(err.message.as_str())),
                    last_transition_time: Some(Time(now)),
                    ..Default::default()
                });
            }
        }
        (None, Some(_)) => status.conditions.retain(|c| c.type_ != REPLICA_FAILURE),
        (None, None) => {}
    }
    status.replicas = counts.claimed as i32;
    status.fully_labeled_replicas = counts.fully_labeled;
    status.ready_replicas = counts.ready;
    status.available_replicas = counts.available;
    status
}

/// `updateReplicaSetStatus`'s early return: nothing to write when counts, conditions and
/// observedGeneration are already current.
fn status_differs(rs: &ReplicaSet, new: &ReplicaSetStatus) -> bool {
    let s = &rs.status;
    !(s.replicas == new.replicas
        && s.fully_labeled_replicas == new.fully_labeled_replicas
        && s.ready_replicas == new.ready_replicas
        && s.available_replicas == new.available_replicas
        && s.terminating_replicas == new.terminating_replicas
        && rs.metadata.generation == s.observed_generation
        && s.conditions == new.conditions)
}

/// When the next ready-but-not-yet-available pod becomes available (minReadySeconds).
fn next_availability(rs: &ReplicaSet, pods: &[&Pod], now: Millis) -> Option<Millis> {
    let min_ready = rs.spec.min_ready_seconds as i64;
    if min_ready <= 0 {
        return None;
    }
    pods.iter()
        .filter(|p| p.is_ready() && !p.is_available(min_ready, now))
        .filter_map(|p| p.ready_since())
        .map(|t| (t.0 + min_ready as u64 * 1000).saturating_sub(now).max(1))
        .min()
}

#[cfg(test)]
mod tests;
