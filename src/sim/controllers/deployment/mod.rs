//! The Deployment controller (`pkg/controller/deployment`): rolls a Deployment's pod template out
//! through ReplicaSets — RollingUpdate within maxSurge/maxUnavailable, or Recreate — scales them
//! proportionally on scaling events, keeps the revision history, and reports status and conditions.
//!
//! One `reconcile` is one `syncDeployment`, in Kubernetes' order: empty selector → claim
//! ReplicaSets (adopt/release) → being deleted (status only) → paused conditions → paused (scale
//! only) → legacy rollback annotation → scaling event (proportional scale) → rollout.
//!
//! The Go controller writes as it decides; here decisions are made against the cache and returned
//! as data, so writes to one object within one pass are coalesced: at most one write per
//! ReplicaSet (an adoption is folded into a later Update of the same ReplicaSet) and one
//! `UpdateStatus` of the Deployment at the end. Kubernetes sometimes sends two status updates in
//! one sync and gets a 409 on the second; the end state is the same. `ScalingReplicaSet` events
//! are recorded when their write succeeds (through `events_for_response`), as in Kubernetes.
//!
//! Laid out as `pkg/controller/deployment`: this file is `deployment_controller.go` (the
//! controller, its event handlers, one sync pass and its outcome); `sync`, `progress`,
//! `rolling`, `recreate` and `rollback` are the Go files of those names, each an `impl` of
//! the pass. The pure helpers (fenceposts, template hash, annotations, conditions, and kubectl's
//! `rollout undo/restart/status` logic) live in [`util`] (`deployment/util`); the kubectl-facing
//! ones are re-exported here.

mod progress;
mod recreate;
mod rollback;
mod rolling;
mod sync;
pub mod util;

use std::collections::BTreeSet;
use std::rc::Rc;

use serde_json::{json, Value as Json};

use crate::sim::api::types::{
    Condition, Deployment, DeploymentStatus, Kind, Millis, Object, ObjectKey, Pod, ReplicaSet,
};
use crate::sim::api::{
    ApiError, ApiRequest, ApiResult, DeleteOptions, StatusReason, WatchEvent, WatchEventType,
};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sort::{CollectTree, StableSort};
use crate::vec_map::{SlotMap, VecMap};

/// The pace of the controller queue's rate-limited adds once the per-item back-off is
/// forgotten: client-go's default controller rate limiter includes a shared token bucket of 10
/// adds a second (burst 100), which is what bounds a requeue after every successful pass.
const QUEUE_BUCKET_INTERVAL_MS: Millis = 100;

pub use util::{
    max_surge_and_unavailable, restart_annotation_patch, restart_patch, rollback_template,
    rollout_status_message, RollbackPlan,
};

/// Why the last create of a Deployment's new ReplicaSet failed, as `on_response` saw it. The Go
/// controller inspects the error inline; here the next pass does.
#[derive(Clone, Debug, PartialEq)]
enum CreateFailure {
    /// 409 AlreadyExists: a stale cache (it is ours) or a hash collision (it is not).
    AlreadyExists,
    /// Anything else (quota, validation, API down): reported as `ReplicaSetCreateError`.
    Other(String),
}

#[derive(Clone, Debug, PartialEq)]
struct FailedCreate {
    rs_name: String,
    failure: CreateFailure,
}

/// The Deployment controller of kube-controller-manager.
#[derive(Clone, Debug, Default)]
pub struct DeploymentController {
    /// Keyed by the Deployment: the response to its last failed ReplicaSet create.
    failed_creates: SlotMap<ObjectKey, FailedCreate>,
    /// Events recorded only once their write succeeds (`ScalingReplicaSet` follows a successful
    /// scale in Kubernetes), with the request they wait for.
    pending_events: Vec<(ApiRequest, Vec<EventRecord>)>,
}

impl DeploymentController {
    /// A fresh controller with nothing remembered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the events waiting for `req`: one entry, not every equal one. Two passes that read
    /// the same cache make equal requests, each with its own entry, and one of them may be
    /// skipped (an earlier write of its pass failed) while the other succeeds and must still
    /// record its `ScalingReplicaSet` (a rollback lost its scale-down event that way).
    fn take_pending(&mut self, req: &ApiRequest) -> Option<Vec<EventRecord>> {
        let at = self.pending_events.iter().position(|(r, _)| r == req)?;
        Some(self.pending_events.remove(at).1)
    }
}

impl Controller for DeploymentController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Deployment
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Deployment, Kind::ReplicaSet, Kind::Pod]
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let keys: BTreeSet<ObjectKey> = match &*ev.object {
            Object::Deployment(d) => std::iter::once(deployment_key(d)).collect_set(),
            Object::ReplicaSet(rs) => match (ev.type_, old.and_then(|o| o.as_replica_set())) {
                (WatchEventType::Deleted, _) => delete_replica_set(rs, cache),
                (WatchEventType::Modified, Some(old_rs)) => update_replica_set(old_rs, rs, cache),
                _ => add_replica_set(rs, cache),
            },
            Object::Pod(pod) if ev.type_ == WatchEventType::Deleted => delete_pod(pod, cache),
            _ => BTreeSet::new(),
        };
        keys.into_iter().collect()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cache.list(Kind::Deployment).map(|o| o.key()).collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let failed_create = self.failed_creates.remove(key);
        let Some(obj) = ctx.cache.get(key) else {
            let mut out = Outcome::done();
            out.record = Some(ReconcileRecord {
                observed: "Deployment not in cache (deleted)".into(),
                ..Default::default()
            });
            return out;
        };
        let Some(d) = obj.as_deployment() else {
            return Outcome::done();
        };
        let mut sync = DeploymentSync::new(ctx.now, ctx.cache, obj, d, failed_create);
        let result = sync.sync_deployment();
        let (out, on_success) = sync.into_outcome(result);
        self.pending_events.extend(on_success);
        out
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        let (ApiRequest::Create(Object::ReplicaSet(rs)), Err(e)) = (req, result) else {
            return;
        };
        let Some(owner) = rs
            .metadata
            .controller_ref()
            .filter(|r| r.kind == "Deployment")
        else {
            return;
        };
        let failure = if e.reason == StatusReason::AlreadyExists {
            CreateFailure::AlreadyExists
        } else {
            CreateFailure::Other(e.message.clone())
        };
        self.failed_creates.insert(
            ObjectKey::new(Kind::Deployment, &rs.metadata.namespace, &owner.name),
            FailedCreate {
                rs_name: rs.metadata.name.to_string(),
                failure,
            },
        );
    }

    fn events_for_response(&mut self, req: &ApiRequest, result: &ApiResult) -> Vec<EventRecord> {
        match self.take_pending(req) {
            Some(events) if result.is_ok() => events,
            _ => Vec::new(),
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        self.take_pending(req);
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::new()))
    }
}

fn deployment_key(d: &Deployment) -> ObjectKey {
    ObjectKey::of(Kind::Deployment, &d.metadata)
}

// ---------------------------------------------------------------- event handlers

/// `resolveControllerRef`: the cached Deployment a controller reference names, if the uid matches.
fn resolve_controller_ref(
    namespace: &str,
    r: &crate::sim::api::types::OwnerReference,
    cache: &Cache,
) -> Option<ObjectKey> {
    if r.kind != "Deployment" {
        return None;
    }
    let key = ObjectKey::new(Kind::Deployment, namespace, &r.name);
    let d = cache.get(&key)?.as_deployment()?;
    (d.metadata.uid == r.uid).then_some(key)
}

/// `getDeploymentsForReplicaSet`: Deployments whose (non-empty) selector matches an orphan.
fn deployments_for_replica_set(rs: &ReplicaSet, cache: &Cache) -> BTreeSet<ObjectKey> {
    if rs.metadata.labels.is_empty() {
        return BTreeSet::new();
    }
    cache
        .list_ns(Kind::Deployment, &rs.metadata.namespace)
        .filter_map(|o| o.as_deployment())
        .filter(|d| !d.spec.selector.is_empty() && d.spec.selector.matches(&rs.metadata.labels))
        .map(deployment_key)
        .collect_set()
}

fn add_replica_set(rs: &ReplicaSet, cache: &Cache) -> BTreeSet<ObjectKey> {
    if rs.metadata.deletion_timestamp.is_some() {
        // Seen already being deleted (e.g. after a restart): handled like a delete.
        return delete_replica_set(rs, cache);
    }
    match rs.metadata.controller_ref() {
        Some(r) => resolve_controller_ref(&rs.metadata.namespace, r, cache)
            .into_iter()
            .collect_set(),
        None => deployments_for_replica_set(rs, cache),
    }
}

fn update_replica_set(old: &ReplicaSet, cur: &ReplicaSet, cache: &Cache) -> BTreeSet<ObjectKey> {
    // A resync redelivers the same resourceVersion: nothing changed.
    if old.metadata.resource_version == cur.metadata.resource_version {
        return BTreeSet::new();
    }
    let mut keys = BTreeSet::new();
    let (old_ref, cur_ref) = (old.metadata.controller_ref(), cur.metadata.controller_ref());
    let ref_changed = old_ref != cur_ref;
    if let (true, Some(r)) = (ref_changed, old_ref) {
        keys.extend(resolve_controller_ref(&old.metadata.namespace, r, cache));
    }
    match cur_ref {
        Some(r) => keys.extend(resolve_controller_ref(&cur.metadata.namespace, r, cache)),
        None if ref_changed || old.metadata.labels != cur.metadata.labels => {
            keys.extend(deployments_for_replica_set(cur, cache))
        }
        None => {}
    }
    keys
}

fn delete_replica_set(rs: &ReplicaSet, cache: &Cache) -> BTreeSet<ObjectKey> {
    rs.metadata
        .controller_ref()
        .and_then(|r| resolve_controller_ref(&rs.metadata.namespace, r, cache))
        .into_iter()
        .collect_set()
}

/// `deletePod`: a Recreate Deployment is woken when its last pod is gone (old pods block it).
fn delete_pod(pod: &Pod, cache: &Cache) -> BTreeSet<ObjectKey> {
    let ns = &pod.metadata.namespace;
    let Some(pref) = pod
        .metadata
        .controller_ref()
        .filter(|r| r.kind == "ReplicaSet")
    else {
        return BTreeSet::new();
    };
    let Some(rs) = cache
        .get(&ObjectKey::new(Kind::ReplicaSet, ns, &pref.name))
        .and_then(|o| o.as_replica_set())
    else {
        return BTreeSet::new();
    };
    if rs.metadata.uid != pref.uid {
        return BTreeSet::new();
    }
    let Some(key) = rs
        .metadata
        .controller_ref()
        .and_then(|r| resolve_controller_ref(ns, r, cache))
    else {
        return BTreeSet::new();
    };
    let Some(d) = cache.get(&key).and_then(|o| o.as_deployment()) else {
        return BTreeSet::new();
    };
    if util::strategy_type(d) != "Recreate" {
        return BTreeSet::new();
    }
    let owned: BTreeSet<&str> = cache
        .list_ns(Kind::ReplicaSet, ns)
        .filter_map(|o| o.as_replica_set())
        .filter(|rs| d.spec.selector.matches(&rs.metadata.labels) && util::is_controlled_by(rs, d))
        .map(|rs| rs.metadata.uid.as_str())
        .collect_set();
    let remaining = cache
        .list_ns(Kind::Pod, ns)
        .filter_map(|o| o.as_pod())
        .filter(|p| d.spec.selector.matches(&p.metadata.labels))
        .filter(|p| {
            p.metadata
                .controller_ref()
                .is_some_and(|r| owned.contains(r.uid.as_str()))
        })
        .count();
    if remaining == 0 {
        [key].into()
    } else {
        BTreeSet::new()
    }
}

/// `getRollbackTo`: the legacy `spec.rollbackTo`, round-tripped through an annotation in apps/v1.
fn rollback_to(d: &Deployment) -> Option<i64> {
    d.metadata
        .annotations
        .get(util::DEPRECATED_ROLLBACK_TO)
        .and_then(|v| v.parse::<i64>().ok())
}

// ---------------------------------------------------------------- one sync pass

/// A ReplicaSet as this pass sees it.
#[derive(Clone, Debug)]
struct WorkRs {
    /// As the pass started (the cached copy; for a create, the object as first decided). Status
    /// and cleanup decisions read this, as the Go code reads its list objects, not write results.
    orig: ReplicaSet,
    /// With this pass's changes (what gets written).
    rs: ReplicaSet,
    /// Adopted this pass: the controller reference is new.
    adopted: bool,
    /// Does not exist yet: this pass creates it.
    created: bool,
}

impl WorkRs {
    fn cached(rs: &ReplicaSet) -> WorkRs {
        WorkRs {
            orig: rs.clone(),
            rs: rs.clone(),
            adopted: false,
            created: false,
        }
    }
}

/// The state of one `syncDeployment`: the cached Deployment, a working copy, the claimed
/// ReplicaSets with their pending changes, and what to tell the world.
struct DeploymentSync<'a> {
    now: Millis,
    cache: &'a Cache,
    obj: &'a Rc<Object>,
    orig: &'a Deployment,
    /// Working copy: status, annotations (revision) and, for a legacy rollback, the template.
    d: Deployment,
    rss: Vec<WorkRs>,
    /// Indices of existing ReplicaSets changed this pass, in the order first changed.
    update_order: Vec<usize>,
    releases: Vec<ApiRequest>,
    deletes: Vec<ApiRequest>,
    events: Vec<EventRecord>,
    /// Events waiting for the write of a ReplicaSet (by index) or of the Deployment (None).
    on_success: VecMap<Option<usize>, Vec<EventRecord>>,
    requeue: Option<Millis>,
    failed_create: Option<FailedCreate>,
    /// The legacy rollback rewrote the spec: the Deployment is written with Update, not UpdateStatus.
    write_spec: bool,
    /// The last (new, old) split, for the record.
    view: Option<(Option<usize>, Vec<usize>)>,
    notes: Vec<String>,
}

impl<'a> DeploymentSync<'a> {
    fn new(
        now: Millis,
        cache: &'a Cache,
        obj: &'a Rc<Object>,
        d: &'a Deployment,
        failed_create: Option<FailedCreate>,
    ) -> Self {
        DeploymentSync {
            now,
            cache,
            obj,
            orig: d,
            d: d.clone(),
            rss: Vec::new(),
            update_order: Vec::new(),
            releases: Vec::new(),
            deletes: Vec::new(),
            events: Vec::new(),
            on_success: VecMap::new(),
            requeue: None,
            failed_create,
            write_spec: false,
            view: None,
            notes: Vec::new(),
        }
    }

    // ------------------------------------------------------------ small helpers

    fn working(&self, i: usize) -> &ReplicaSet {
        &self.rss[i].rs
    }

    fn spec_replicas(&self, i: usize) -> i32 {
        util::rs_replicas(&self.rss[i].rs)
    }

    fn write_rs(&mut self, i: usize, rs: ReplicaSet) {
        self.rss[i].rs = rs;
        if !self.rss[i].created && !self.update_order.contains(&i) {
            self.update_order.push(i);
        }
    }

    /// A Normal event recorded once the write of ReplicaSet `rs` (None: of the Deployment)
    /// succeeds.
    fn on_write(&mut self, rs: Option<usize>, reason: &str, message: String) {
        let e = EventRecord::normal(self.obj, reason, message);
        self.on_success.entry(rs).or_default().push(e);
    }

    fn warning(&mut self, reason: &str, message: String) {
        self.events
            .push(EventRecord::warning(self.obj, reason, message));
    }

    fn set_condition(&mut self, type_: &str, status: &str, reason: &str, message: String) {
        let c = util::new_condition(type_, status, reason, message, self.now);
        util::set_deployment_condition(&mut self.d.status, c);
    }

    fn name(&self) -> &str {
        &self.orig.metadata.name
    }

    // ------------------------------------------------------------ syncDeployment

    fn sync_deployment(&mut self) -> Result<(), String> {
        if self.d.spec.selector.is_empty() {
            self.warning(
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.".into(),
            );
            if self.d.status.observed_generation < self.d.metadata.generation {
                self.d.status.observed_generation = self.d.metadata.generation;
            }
            return Ok(());
        }
        self.claim_replica_sets();
        if self.d.metadata.deletion_timestamp.is_some() {
            return self.sync_status_only();
        }
        self.check_paused_conditions();
        if self.d.spec.paused {
            return self.sync();
        }
        if let Some(revision) = rollback_to(&self.d) {
            return self.rollback(revision);
        }
        if self.is_scaling_event()? {
            return self.sync();
        }
        match util::strategy_type(&self.d) {
            "Recreate" => self.rollout_recreate(),
            "RollingUpdate" => self.rollout_rolling(),
            other => Err(format!("unexpected deployment strategy type: {other}")),
        }
    }

    /// `getReplicaSetsForDeployment` + `ClaimReplicaSets`: owned ReplicaSets that match stay,
    /// owned ones that no longer match are released, matching orphans are adopted. The Go code
    /// re-reads the Deployment (quorum GET) before adopting; the cached copy stands in for it.
    fn claim_replica_sets(&mut self) {
        let d = self.orig;
        let deleting = d.metadata.deletion_timestamp.is_some();
        for obj in self.cache.list_ns(Kind::ReplicaSet, &d.metadata.namespace) {
            let Some(rs) = obj.as_replica_set() else {
                continue;
            };
            let matches = d.spec.selector.matches(&rs.metadata.labels);
            match rs.metadata.controller_ref() {
                Some(r) if r.uid == d.metadata.uid => {
                    if matches {
                        self.rss.push(WorkRs::cached(rs));
                    } else if !deleting {
                        let remaining: Vec<_> = rs
                            .metadata
                            .owner_references
                            .iter()
                            .filter(|o| o.uid != d.metadata.uid)
                            .cloned()
                            .collect();
                        let refs = if remaining.is_empty() {
                            Json::Null
                        } else {
                            serde_json::to_value(remaining).unwrap_or(Json::Null)
                        };
                        self.releases.push(ApiRequest::Patch {
                            key: obj.key(),
                            patch: json!({"metadata": {"ownerReferences": refs, "uid": rs.metadata.uid}}),
                            status: false,
                        });
                        self.notes.push(format!("release {}", rs.metadata.name));
                    }
                }
                Some(_) => {}
                None => {
                    if deleting || !matches || rs.metadata.deletion_timestamp.is_some() {
                        continue;
                    }
                    let mut adopted = rs.clone();
                    adopted
                        .metadata
                        .owner_references
                        .push(util::controller_ref(d));
                    self.rss.push(WorkRs {
                        orig: rs.clone(),
                        rs: adopted,
                        adopted: true,
                        created: false,
                    });
                    self.notes.push(format!("adopt {}", rs.metadata.name));
                }
            }
        }
    }

    /// The requests in Kubernetes' order (claims, create, scales, deletes, status) plus the
    /// events that wait for a request's success.
    fn into_outcome(
        mut self,
        result: Result<(), String>,
    ) -> (Outcome, Vec<(ApiRequest, Vec<EventRecord>)>) {
        let record = self.record(&result);
        let mut waiting = Vec::new();
        let mut attach = |req: &ApiRequest, events: Option<Vec<EventRecord>>| {
            if let Some(events) = events.filter(|e| !e.is_empty()) {
                waiting.push((req.clone(), events));
            }
        };
        let mut out = Outcome::done();
        let mut claims = self.releases;
        for w in self
            .rss
            .iter()
            .enumerate()
            .filter(|(i, w)| w.adopted && !self.update_order.contains(i))
            .map(|(_, w)| w)
        {
            claims.push(ApiRequest::Patch {
                key: ObjectKey::of(Kind::ReplicaSet, &w.rs.metadata),
                patch: json!({"metadata": {"ownerReferences": w.rs.metadata.owner_references, "uid": w.rs.metadata.uid}}),
                status: false,
            });
        }
        out.batch(claims);
        for (i, w) in self.rss.iter().enumerate().filter(|(_, w)| w.created) {
            let req = ApiRequest::Create(Object::from(w.rs.clone()));
            attach(&req, self.on_success.remove(&Some(i)));
            out.request(req);
        }
        for &i in &self.update_order {
            let req = ApiRequest::Update(Object::from(self.rss[i].rs.clone()));
            attach(&req, self.on_success.remove(&Some(i)));
            out.request(req);
        }
        for del in self.deletes {
            out.request(del);
        }
        if self.write_spec {
            let req = ApiRequest::Update(Object::from(self.d));
            attach(&req, self.on_success.remove(&None));
            out.request(req);
        } else if self.d.status != self.orig.status
            || self.d.metadata.annotations != self.orig.metadata.annotations
        {
            out.request(ApiRequest::UpdateStatus(Object::from(self.d)));
        }
        out.events = self.events;
        out.requeue_after = self.requeue;
        out.error = result.err();
        out.record = Some(record);
        (out, waiting)
    }

    /// observe → desired → diff in a few words for the loop panel.
    fn record(&self, result: &Result<(), String>) -> ReconcileRecord {
        let observed = match &self.view {
            None if self.d.spec.selector.is_empty() => "selector is empty".to_string(),
            None => format!("{} ReplicaSets", self.rss.len()),
            Some((new, old)) => {
                let new_part = match new {
                    Some(i) if !self.rss[*i].created => {
                        let rs = &self.rss[*i].orig;
                        format!(
                            "new RS {}: {}/{} available",
                            rs.metadata.name,
                            rs.status.available_replicas,
                            util::rs_replicas(rs)
                        )
                    }
                    _ => "no new RS".to_string(),
                };
                let olds: Vec<String> = old
                    .iter()
                    .map(|&i| &self.rss[i].orig)
                    .filter(|rs| util::rs_replicas(rs) > 0 || rs.status.replicas > 0)
                    .map(|rs| format!("{} {}", rs.metadata.name, util::rs_replicas(rs)))
                    .collect();
                if olds.is_empty() {
                    new_part
                } else {
                    format!("{new_part}; old: {}", olds.join(", "))
                }
            }
        };
        let revision = self.view.as_ref().and_then(|(new, _)| *new).and_then(|i| {
            self.working(i)
                .metadata
                .annotations
                .get(util::REVISION_ANNOTATION)
                .cloned()
        });
        let mut desired = format!(
            "{} replicas of template rev {}",
            util::replicas(&self.d),
            revision.unwrap_or_else(|| "?".into())
        );
        if self.d.spec.paused {
            desired.push_str(" (paused)");
        }
        let mut notes = self.notes.clone();
        if self.d.status != self.orig.status {
            notes.push(format!(
                "status: {} updated, {} available",
                self.d.status.updated_replicas, self.d.status.available_replicas
            ));
        }
        if let Err(e) = result {
            notes.push(format!("error: {e}"));
        }
        ReconcileRecord {
            observed,
            desired,
            diff: notes.join("; "),
        }
    }
}

#[cfg(test)]
mod tests;
