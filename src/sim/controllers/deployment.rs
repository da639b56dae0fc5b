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
//! The pure helpers (fenceposts, template hash, annotations, conditions, and kubectl's
//! `rollout undo/restart/status` logic) live in [`super::deployment_util`]; the kubectl-facing ones
//! are re-exported here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::deployment_util as util;
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
use crate::sort::StableSort;

/// The pace of the controller queue's rate-limited adds once the per-item back-off is
/// forgotten: client-go's default controller rate limiter includes a shared token bucket of 10
/// adds a second (burst 100), which is what bounds a requeue after every successful pass.
const QUEUE_BUCKET_INTERVAL_MS: Millis = 100;

pub use super::deployment_util::{
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
#[derive(Debug, Default)]
pub struct DeploymentController {
    /// Keyed by the Deployment: the response to its last failed ReplicaSet create.
    failed_creates: BTreeMap<ObjectKey, FailedCreate>,
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
    fn id(&self) -> ComponentId {
        ComponentId::Deployment
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Deployment, Kind::ReplicaSet, Kind::Pod]
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let keys: BTreeSet<ObjectKey> = match &*ev.object {
            Object::Deployment(d) => [deployment_key(d)].into(),
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
                rs_name: rs.metadata.name.clone(),
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
    ObjectKey::new(Kind::Deployment, &d.metadata.namespace, &d.metadata.name)
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
        .collect()
}

fn add_replica_set(rs: &ReplicaSet, cache: &Cache) -> BTreeSet<ObjectKey> {
    if rs.metadata.deletion_timestamp.is_some() {
        // Seen already being deleted (e.g. after a restart): handled like a delete.
        return delete_replica_set(rs, cache);
    }
    match rs.metadata.controller_ref() {
        Some(r) => resolve_controller_ref(&rs.metadata.namespace, r, cache)
            .into_iter()
            .collect(),
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
        .collect()
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
        .collect();
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
    obj: &'a Arc<Object>,
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
    on_success: BTreeMap<Option<usize>, Vec<EventRecord>>,
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
        obj: &'a Arc<Object>,
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
            on_success: BTreeMap::new(),
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

    /// `checkPausedConditions`: Progressing=Unknown on pause/resume, unless already timed out.
    fn check_paused_conditions(&mut self) {
        if !util::has_progress_deadline(&self.d) {
            return;
        }
        let cond = util::get_condition(&self.d.status, "Progressing");
        if cond.is_some_and(|c| c.reason.as_deref() == Some(util::TIMED_OUT_REASON)) {
            return;
        }
        let paused_cond =
            cond.is_some_and(|c| c.reason.as_deref() == Some(util::PAUSED_DEPLOY_REASON));
        if self.d.spec.paused && !paused_cond {
            self.set_condition(
                "Progressing",
                "Unknown",
                util::PAUSED_DEPLOY_REASON,
                "Deployment is paused".into(),
            );
        } else if !self.d.spec.paused && paused_cond {
            self.set_condition(
                "Progressing",
                "Unknown",
                util::RESUMED_DEPLOY_REASON,
                "Deployment is resumed".into(),
            );
        }
    }

    /// `getAllReplicaSetsAndSyncRevision`: (new, all old) with the new one's revision synced.
    fn get_all(&mut self, create: bool) -> Result<(Option<usize>, Vec<usize>), String> {
        let found = self.find_new();
        let old: Vec<usize> = (0..self.rss.len()).filter(|i| Some(*i) != found).collect();
        let new = self.get_new_replica_set(&old, create)?;
        self.view = Some((new, old.clone()));
        Ok((new, old))
    }

    fn find_new(&self) -> Option<usize> {
        let refs: Vec<&ReplicaSet> = self.rss.iter().map(|w| &w.rs).collect();
        util::find_new_replica_set(&self.d, &refs)
    }

    /// `getNewReplicaSet`: syncs the existing new ReplicaSet's annotations and the Deployment's
    /// revision, or creates the new ReplicaSet (`<name>-<hash>`) when asked to.
    fn get_new_replica_set(
        &mut self,
        old: &[usize],
        create: bool,
    ) -> Result<Option<usize>, String> {
        let existing = self.find_new();
        let max_old = util::max_revision(old.iter().map(|&i| &self.rss[i].rs));
        let new_revision = (max_old + 1).to_string();
        if let Some(i) = existing {
            let mut copy = self.working(i).clone();
            let annotations = util::set_new_replica_set_annotations(
                &self.d,
                &mut copy,
                &new_revision,
                true,
                util::MAX_REV_HISTORY_LENGTH_IN_CHARS,
            );
            let min_ready = copy.spec.min_ready_seconds != self.d.spec.min_ready_seconds;
            if annotations || min_ready {
                copy.spec.min_ready_seconds = self.d.spec.min_ready_seconds;
                self.notes
                    .push(format!("sync annotations of {}", copy.metadata.name));
                self.write_rs(i, copy);
                return Ok(Some(i));
            }
            let revision = copy
                .metadata
                .annotations
                .get(util::REVISION_ANNOTATION)
                .cloned()
                .unwrap_or_default();
            util::set_deployment_revision(&mut self.d, &revision);
            if util::has_progress_deadline(&self.d)
                && util::get_condition(&self.d.status, "Progressing").is_none()
            {
                let msg = format!("Found new replica set \"{}\"", copy.metadata.name);
                self.set_condition("Progressing", "True", util::FOUND_NEW_RS_REASON, msg);
            }
            return Ok(Some(i));
        }
        if !create {
            return Ok(None);
        }

        let d = self.orig;
        let mut template = self.d.spec.template.clone();
        let hash = util::compute_hash(&template, self.d.status.collision_count);
        template
            .metadata
            .labels
            .insert(util::POD_TEMPLATE_HASH_LABEL.into(), hash.clone());
        let name = format!("{}-{hash}", d.metadata.name);
        let mut rs = ReplicaSet::default();
        rs.metadata.name = name.clone();
        rs.metadata.namespace = d.metadata.namespace.clone();
        rs.metadata.owner_references = vec![util::controller_ref(d)];
        rs.metadata.labels = template.metadata.labels.clone();
        rs.spec.replicas = Some(0);
        rs.spec.min_ready_seconds = self.d.spec.min_ready_seconds;
        rs.spec.selector = util::selector_with_hash(&self.d.spec.selector, &hash);
        rs.spec.template = template;
        let count = {
            let all: Vec<&ReplicaSet> = old
                .iter()
                .map(|&i| self.working(i))
                .chain(std::iter::once(&rs))
                .collect();
            util::new_rs_new_replicas(&self.d, &all, &rs)?
        };
        rs.spec.replicas = Some(count);
        util::set_new_replica_set_annotations(
            &self.d,
            &mut rs,
            &new_revision,
            false,
            util::MAX_REV_HISTORY_LENGTH_IN_CHARS,
        );

        if let Some(failed) = self.failed_create.take().filter(|f| f.rs_name == name) {
            match failed.failure {
                CreateFailure::AlreadyExists => {
                    let key = ObjectKey::new(Kind::ReplicaSet, &d.metadata.namespace, &name);
                    let Some(found) = self.cache.get(&key).and_then(|o| o.as_replica_set()) else {
                        // Created but not yet in our cache: retry once the informer catches up.
                        return Err(format!("replicaset.apps \"{name}\" not found"));
                    };
                    if util::is_controlled_by(found, d)
                        && util::equal_ignore_hash(&self.d.spec.template, &found.spec.template)
                    {
                        let i = self.rss.len();
                        self.rss.push(WorkRs::cached(found));
                        util::set_deployment_revision(&mut self.d, &new_revision);
                        return Ok(Some(i));
                    }
                    // A different template hashed to the same name: bump collisionCount so the
                    // next attempt hashes differently.
                    let count = self.d.status.collision_count.unwrap_or(0).saturating_add(1);
                    self.d.status.collision_count = Some(count);
                    self.notes.push(format!(
                        "hash collision on {name}: collisionCount → {count}"
                    ));
                    return Err(ApiError::already_exists(Kind::ReplicaSet, &name).message);
                }
                CreateFailure::Other(err) => {
                    let msg = format!("Failed to create new replica set \"{name}\": {err}");
                    if util::has_progress_deadline(&self.d) {
                        self.set_condition(
                            "Progressing",
                            "False",
                            util::FAILED_RS_CREATE_REASON,
                            msg.clone(),
                        );
                    }
                    self.warning(util::FAILED_RS_CREATE_REASON, msg);
                    return Err(err);
                }
            }
        }

        let i = self.rss.len();
        self.rss.push(WorkRs {
            orig: rs.clone(),
            rs,
            adopted: false,
            created: true,
        });
        if count > 0 {
            self.on_write(
                Some(i),
                "ScalingReplicaSet",
                format!("Scaled up replica set {name} from 0 to {count}"),
            );
        }
        self.notes.push(format!("create {name} at {count}"));
        util::set_deployment_revision(&mut self.d, &new_revision);
        if util::has_progress_deadline(&self.d) {
            self.set_condition(
                "Progressing",
                "True",
                util::NEW_REPLICA_SET_REASON,
                format!("Created new replica set \"{name}\""),
            );
        }
        Ok(Some(i))
    }

    // ------------------------------------------------------------ scaling

    fn scale_and_record(&mut self, i: usize, new_scale: i32) -> bool {
        let cur = self.spec_replicas(i);
        if cur == new_scale {
            return false;
        }
        let op = if cur < new_scale { "up" } else { "down" };
        self.scale_replica_set(i, new_scale, op)
    }

    /// `scaleReplicaSet`: one write carrying the new size and the replica annotations.
    fn scale_replica_set(&mut self, i: usize, new_scale: i32, op: &str) -> bool {
        let desired = util::replicas(&self.d);
        let max = desired + util::max_surge(&self.d);
        let cur = self.spec_replicas(i);
        let size_changed = cur != new_scale;
        if !size_changed && !util::replicas_annotations_need_update(self.working(i), desired, max) {
            return false;
        }
        let mut copy = self.working(i).clone();
        copy.spec.replicas = Some(new_scale);
        util::set_replicas_annotations(&mut copy, desired, max);
        let name = copy.metadata.name.clone();
        self.write_rs(i, copy);
        if size_changed {
            self.on_write(
                Some(i),
                "ScalingReplicaSet",
                format!("Scaled {op} replica set {name} from {cur} to {new_scale}"),
            );
            self.notes.push(format!("scale {name} {cur}→{new_scale}"));
        } else {
            self.notes
                .push(format!("annotate {name} desired={desired} max={max}"));
        }
        size_changed
    }

    /// `isScalingEvent`: an active ReplicaSet records a different desired size than the spec.
    fn is_scaling_event(&mut self) -> Result<bool, String> {
        let (new, old) = self.get_all(false)?;
        let desired = util::replicas(&self.d);
        Ok(old.iter().copied().chain(new).any(|i| {
            self.spec_replicas(i) > 0
                && util::desired_replicas_annotation(self.working(i)).is_some_and(|a| a != desired)
        }))
    }

    /// `sync`: scaling events and paused Deployments — proportional scale, no rollout.
    fn sync(&mut self) -> Result<(), String> {
        let (new, old) = self.get_all(false)?;
        self.scale(new, &old);
        if self.d.spec.paused && rollback_to(&self.d).is_none() {
            self.cleanup_deployment(&old);
        }
        self.sync_deployment_status(new, &old);
        Ok(())
    }

    fn sync_status_only(&mut self) -> Result<(), String> {
        let (new, old) = self.get_all(false)?;
        self.sync_deployment_status(new, &old);
        Ok(())
    }

    /// `FindActiveOrLatest`: the only active ReplicaSet, or the latest when none is active.
    fn find_active_or_latest(&self, new: Option<usize>, old: &[usize]) -> Option<usize> {
        let mut olds = old.to_vec();
        olds.stable_sort_by(|&a, &b| util::cmp_by_creation(self.working(b), self.working(a)));
        let active: Vec<usize> = olds
            .iter()
            .copied()
            .chain(new)
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        match active.len() {
            0 => new.or(olds.first().copied()),
            1 => Some(active[0]),
            _ => None,
        }
    }

    /// `scale`: proportional scaling, so a scaling event mid-rollout neither hastens nor reverses it.
    fn scale(&mut self, new: Option<usize>, old: &[usize]) {
        let desired = util::replicas(&self.d);
        if let Some(i) = self.find_active_or_latest(new, old) {
            if self.spec_replicas(i) != desired {
                self.scale_and_record(i, desired);
            }
            return;
        }
        if util::is_saturated(&self.d, new.map(|i| self.working(i))) {
            for &i in old {
                if self.spec_replicas(i) > 0 {
                    self.scale_and_record(i, 0);
                }
            }
            return;
        }
        if !util::is_rolling_update(&self.d) {
            return;
        }
        let mut all: Vec<usize> = old
            .iter()
            .copied()
            .chain(new)
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        let current: i32 = all.iter().map(|&i| self.spec_replicas(i)).sum();
        let allowed = if desired > 0 {
            desired + util::max_surge(&self.d)
        } else {
            0
        };
        let to_add = allowed - current;
        let op = match to_add.cmp(&0) {
            std::cmp::Ordering::Greater => {
                all.stable_sort_by(|&a, &b| {
                    util::cmp_by_size_newer(self.working(a), self.working(b))
                });
                "up"
            }
            std::cmp::Ordering::Less => {
                all.stable_sort_by(|&a, &b| {
                    util::cmp_by_size_older(self.working(a), self.working(b))
                });
                "down"
            }
            std::cmp::Ordering::Equal => "",
        };
        let mut added = 0;
        let mut sizes = Vec::with_capacity(all.len());
        for &i in &all {
            let cur = self.spec_replicas(i);
            if to_add != 0 {
                let p = util::get_proportion(self.working(i), &self.d, to_add, added);
                sizes.push(cur + p);
                added += p;
            } else {
                sizes.push(cur);
            }
        }
        for (k, &i) in all.iter().enumerate() {
            if k == 0 && to_add != 0 {
                // The leftover goes to the largest ReplicaSet.
                sizes[0] = (sizes[0] + to_add - added).max(0);
            }
            self.scale_replica_set(i, sizes[k], op);
        }
    }

    /// `cleanupDeployment`: keeps `revisionHistoryLimit` old ReplicaSets, deleting the lowest
    /// revisions that are fully scaled down and observed.
    fn cleanup_deployment(&mut self, old: &[usize]) {
        if !util::has_revision_history_limit(&self.d) {
            return;
        }
        let limit = util::revision_history_limit(&self.d);
        let mut alive: Vec<usize> = old
            .iter()
            .copied()
            .filter(|&i| self.rss[i].orig.metadata.deletion_timestamp.is_none())
            .collect();
        let diff = alive.len() as i64 - limit as i64;
        if diff <= 0 {
            return;
        }
        alive.stable_sort_by(|&a, &b| util::cmp_by_revision(&self.rss[a].orig, &self.rss[b].orig));
        for &i in alive.iter().take(diff as usize) {
            let rs = &self.rss[i].orig;
            if rs.status.replicas != 0
                || util::rs_replicas(rs) != 0
                || rs.metadata.generation > rs.status.observed_generation
                || rs.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            let revision = util::revision_of(&rs.metadata).unwrap_or(0);
            self.notes.push(format!(
                "delete {} (revision {revision}; revisionHistoryLimit {limit})",
                rs.metadata.name
            ));
            self.deletes.push(ApiRequest::Delete {
                key: ObjectKey::new(Kind::ReplicaSet, &rs.metadata.namespace, &rs.metadata.name),
                options: DeleteOptions::default(),
            });
        }
    }

    // ------------------------------------------------------------ status

    /// `calculateStatus` over the ReplicaSets as the pass started (writes are not read back).
    fn calculate_status(&self, new: Option<usize>, old: &[usize]) -> DeploymentStatus {
        let all: Vec<&ReplicaSet> = old
            .iter()
            .copied()
            .chain(new)
            .map(|i| &self.rss[i].orig)
            .collect();
        util::calculate_status(&all, new.map(|i| &self.rss[i].orig), &self.d, self.now)
    }

    /// `syncDeploymentStatus`.
    fn sync_deployment_status(&mut self, new: Option<usize>, old: &[usize]) {
        let status = self.calculate_status(new, old);
        if status != self.d.status {
            self.d.status = status;
        }
    }

    /// `syncRolloutStatus`: status plus the Progressing condition and the progress-deadline timer.
    fn sync_rollout_status(&mut self, new: Option<usize>, old: &[usize]) {
        let mut ns = self.calculate_status(new, old);
        let d = &self.d;
        if !util::has_progress_deadline(d) {
            util::remove_condition(&mut ns, "Progressing");
        }
        let current = util::get_condition(&d.status, "Progressing").cloned();
        let complete_already = ns.replicas == ns.updated_replicas
            && current
                .as_ref()
                .is_some_and(|c| c.reason.as_deref() == Some(util::NEW_RS_AVAILABLE_REASON));
        let new_name = new.map(|i| self.rss[i].rs.metadata.name.clone());
        let subject = |what: &str| match &new_name {
            Some(n) => format!("ReplicaSet \"{n}\" {what}"),
            None => format!("Deployment \"{}\" {what}", d.metadata.name),
        };
        if util::has_progress_deadline(d) && !complete_already {
            if util::deployment_complete(d, &ns) {
                let c = util::new_condition(
                    "Progressing",
                    "True",
                    util::NEW_RS_AVAILABLE_REASON,
                    subject("has successfully progressed."),
                    self.now,
                );
                util::set_deployment_condition(&mut ns, c);
            } else if util::deployment_progressing(d, &ns) {
                let mut c = util::new_condition(
                    "Progressing",
                    "True",
                    util::REPLICA_SET_UPDATED_REASON,
                    subject("is progressing."),
                    self.now,
                );
                // Progress refreshes lastUpdateTime even with the same reason, which
                // SetDeploymentCondition alone would not do.
                if let Some(cur) = &current {
                    if cur.status == "True" {
                        c.last_transition_time = cur.last_transition_time;
                    }
                    util::remove_condition(&mut ns, "Progressing");
                }
                util::set_deployment_condition(&mut ns, c);
            } else if util::deployment_timed_out(d, &ns, self.now) {
                let c = util::new_condition(
                    "Progressing",
                    "False",
                    util::TIMED_OUT_REASON,
                    subject("has timed out progressing."),
                    self.now,
                );
                util::set_deployment_condition(&mut ns, c);
            }
        }
        match self.replica_failures(new, old).into_iter().next() {
            Some(c) => util::set_deployment_condition(&mut ns, c),
            None => util::remove_condition(&mut ns, "ReplicaFailure"),
        }
        if ns == self.d.status {
            self.requeue_stuck_deployment(&ns);
            return;
        }
        self.d.status = ns;
    }

    /// `getReplicaFailures`: the new ReplicaSet's ReplicaFailure condition, else any old one's.
    fn replica_failures(&self, new: Option<usize>, old: &[usize]) -> Vec<Condition> {
        let convert = |c: &Condition| Condition {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
            last_transition_time: c.last_transition_time,
            last_update_time: c.last_transition_time,
            ..Default::default()
        };
        let of = |i: usize| -> Vec<Condition> {
            self.rss[i]
                .orig
                .status
                .conditions
                .iter()
                .filter(|c| c.type_ == "ReplicaFailure")
                .map(convert)
                .collect()
        };
        if let Some(found) = new.map(of).filter(|v| !v.is_empty()) {
            return found;
        }
        old.iter().copied().chain(new).flat_map(of).collect()
    }

    /// `requeueStuckDeployment`: look again one second after the progress deadline would pass.
    fn requeue_stuck_deployment(&mut self, ns: &DeploymentStatus) {
        let d = &self.d;
        let Some(cur) = util::get_condition(&d.status, "Progressing") else {
            return;
        };
        if !util::has_progress_deadline(d)
            || util::deployment_complete(d, ns)
            || cur.reason.as_deref() == Some(util::TIMED_OUT_REASON)
        {
            return;
        }
        let deadline_at = cur.last_update_time.map_or(0, |t| t.0) + util::deadline_ms(d);
        let after = deadline_at as i64 - self.now as i64;
        // A finished rollout whose pods later became unavailable keeps NewReplicaSetAvailable,
        // which the timeout check skips, so its deadline passes and never times out: upstream
        // then re-queues it rate-limited after every pass for as long as it stays unavailable.
        // Each successful pass forgets the per-item back-off, so the pace is the controller
        // queue's shared token bucket (10 per second). A 1 ms requeue here reconciled such a
        // Deployment 500 times a simulated second, for hours.
        if after < 0 && cur.reason.as_deref() == Some(util::NEW_RS_AVAILABLE_REASON) {
            self.requeue = Some(QUEUE_BUCKET_INTERVAL_MS);
            return;
        }
        // Less than a second left: Kubernetes re-queues rate-limited (ms); the first look after
        // the deadline is what matters.
        self.requeue = Some(if after < 1000 {
            (after.max(0) + 1) as Millis
        } else {
            after as Millis + 1000
        });
    }

    // ------------------------------------------------------------ RollingUpdate

    /// `rolloutRolling`: at most one of "scale the new ReplicaSet up" and "scale old ones down".
    fn rollout_rolling(&mut self) -> Result<(), String> {
        let (new, old) = self.get_all(true)?;
        let new_i = new.ok_or_else(|| "no new replica set after creation".to_string())?;
        if self.reconcile_new_replica_set(new_i, &old)? {
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        let active_old: Vec<usize> = old
            .iter()
            .copied()
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        if self.reconcile_old_replica_sets(new_i, &old, &active_old) {
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        if util::deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old);
        }
        self.sync_rollout_status(new, &old);
        Ok(())
    }

    /// `reconcileNewReplicaSet`.
    fn reconcile_new_replica_set(&mut self, new: usize, old: &[usize]) -> Result<bool, String> {
        let desired = util::replicas(&self.d);
        let cur = self.spec_replicas(new);
        if cur == desired {
            return Ok(false);
        }
        if cur > desired {
            return Ok(self.scale_and_record(new, desired));
        }
        let count = {
            let all: Vec<&ReplicaSet> = old
                .iter()
                .copied()
                .chain([new])
                .map(|i| self.working(i))
                .collect();
            util::new_rs_new_replicas(&self.d, &all, self.working(new))?
        };
        Ok(self.scale_and_record(new, count))
    }

    /// `reconcileOldReplicaSets`: never below `replicas − maxUnavailable` available, counting the
    /// new ReplicaSet's unavailable pods against the budget.
    fn reconcile_old_replica_sets(
        &mut self,
        new: usize,
        old: &[usize],
        active_old: &[usize],
    ) -> bool {
        let old_count: i32 = active_old.iter().map(|&i| self.spec_replicas(i)).sum();
        if old_count == 0 {
            return false;
        }
        let all_count: i32 = old
            .iter()
            .copied()
            .chain([new])
            .map(|i| self.spec_replicas(i))
            .sum();
        let min_available = util::replicas(&self.d) - util::max_unavailable(&self.d);
        let new_unavailable = self.spec_replicas(new) - self.working(new).status.available_replicas;
        let max_scaled_down = all_count - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return false;
        }
        // The Go code swallows these errors and reports "nothing scaled".
        let Ok(cleaned) = self.cleanup_unhealthy_replicas(active_old, max_scaled_down) else {
            return false;
        };
        let Ok(scaled) = self.scale_down_old_replica_sets_for_rolling_update(new, active_old)
        else {
            return false;
        };
        cleaned + scaled > 0
    }

    /// `cleanupUnhealthyReplicas`: oldest first, drop replicas that are not available anyway.
    fn cleanup_unhealthy_replicas(
        &mut self,
        active_old: &[usize],
        max_cleanup: i32,
    ) -> Result<i32, String> {
        let mut olds = active_old.to_vec();
        olds.stable_sort_by(|&a, &b| util::cmp_by_creation(self.working(a), self.working(b)));
        let mut total = 0;
        for i in olds {
            if total >= max_cleanup {
                break;
            }
            let spec = self.spec_replicas(i);
            let available = self.working(i).status.available_replicas;
            if spec == 0 || spec == available {
                continue;
            }
            let down = (max_cleanup - total).min(spec - available);
            let new_count = spec - down;
            if new_count > spec {
                let rs = self.working(i);
                return Err(format!(
                    "when cleaning up unhealthy replicas, got invalid request to scale down {}/{} {spec} -> {new_count}",
                    rs.metadata.namespace, rs.metadata.name
                ));
            }
            self.scale_and_record(i, new_count);
            total += down;
        }
        Ok(total)
    }

    /// `scaleDownOldReplicaSetsForRollingUpdate`: oldest first, only what availability allows.
    fn scale_down_old_replica_sets_for_rolling_update(
        &mut self,
        new: usize,
        active_old: &[usize],
    ) -> Result<i32, String> {
        let min_available = util::replicas(&self.d) - util::max_unavailable(&self.d);
        let available: i32 = active_old
            .iter()
            .copied()
            .chain([new])
            .map(|i| self.working(i).status.available_replicas)
            .sum();
        if available <= min_available {
            return Ok(0);
        }
        let mut olds = active_old.to_vec();
        olds.stable_sort_by(|&a, &b| util::cmp_by_creation(self.working(a), self.working(b)));
        let to_scale = available - min_available;
        let mut total = 0;
        for i in olds {
            if total >= to_scale {
                break;
            }
            let spec = self.spec_replicas(i);
            if spec == 0 {
                continue;
            }
            let down = spec.min(to_scale - total);
            let new_count = spec - down;
            if new_count > spec {
                let rs = self.working(i);
                return Err(format!(
                    "when scaling down old replica set, got invalid request to scale down {}/{} {spec} -> {new_count}",
                    rs.metadata.namespace, rs.metadata.name
                ));
            }
            self.scale_and_record(i, new_count);
            total += down;
        }
        Ok(total)
    }

    // ------------------------------------------------------------ Recreate

    /// `rolloutRecreate`: old ReplicaSets to 0, wait until no old pod runs, then the new one at
    /// full size.
    fn rollout_recreate(&mut self) -> Result<(), String> {
        // Not created yet: creating first would scale up before scaling down.
        let (mut new, mut old) = self.get_all(false)?;
        let active_old: Vec<usize> = old
            .iter()
            .copied()
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        let mut scaled_down = false;
        for i in active_old {
            scaled_down |= self.scale_and_record(i, 0);
        }
        if scaled_down {
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        if self.old_pods_running(new, &old) {
            self.notes.push("wait for old pods to terminate".into());
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        if new.is_none() {
            (new, old) = self.get_all(true)?;
        }
        let new_i = new.ok_or_else(|| "no new replica set after creation".to_string())?;
        let desired = util::replicas(&self.d);
        self.scale_and_record(new_i, desired);
        if util::deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old);
        }
        self.sync_rollout_status(new, &old);
        Ok(())
    }

    /// `oldPodsRunning`: an old ReplicaSet reports pods, or an old pod is not Succeeded/Failed
    /// (terminating pods count: they may still be running).
    fn old_pods_running(&self, new: Option<usize>, old: &[usize]) -> bool {
        if old
            .iter()
            .map(|&i| self.rss[i].orig.status.replicas)
            .sum::<i32>()
            > 0
        {
            return true;
        }
        let new_uid = new.map(|i| self.rss[i].orig.metadata.uid.as_str());
        let uids: BTreeSet<&str> = self
            .rss
            .iter()
            .filter(|w| !w.created)
            .map(|w| w.orig.metadata.uid.as_str())
            .collect();
        self.cache
            .list_ns(Kind::Pod, &self.orig.metadata.namespace)
            .filter_map(|o| o.as_pod())
            .filter(|p| self.orig.spec.selector.matches(&p.metadata.labels))
            .filter_map(|p| p.metadata.controller_ref().map(|r| (p, r.uid.as_str())))
            .filter(|(_, uid)| uids.contains(uid) && Some(*uid) != new_uid)
            .any(|(p, _)| p.status.phase != "Failed" && p.status.phase != "Succeeded")
    }

    // ------------------------------------------------------------ legacy rollback

    /// `rollback`: the extensions/v1beta1 `rollbackTo`, still honoured through its annotation.
    fn rollback(&mut self, revision: i64) -> Result<(), String> {
        let (new, old) = self.get_all(true)?;
        let all: Vec<usize> = old.iter().copied().chain(new).collect();
        let mut to = revision;
        if to == 0 {
            to = util::last_revision(all.iter().map(|&i| self.working(i)));
            if to == 0 {
                self.warning(
                    util::ROLLBACK_REVISION_NOT_FOUND,
                    "Unable to find last revision.".into(),
                );
                self.clear_rollback_to();
                return Ok(());
            }
        }
        let target = all
            .iter()
            .copied()
            .find(|&i| util::revision_of(&self.working(i).metadata).ok() == Some(to));
        let Some(i) = target else {
            self.warning(
                util::ROLLBACK_REVISION_NOT_FOUND,
                "Unable to find the revision to rollback to.".into(),
            );
            self.clear_rollback_to();
            return Ok(());
        };
        let rs = self.working(i).clone();
        let name = self.name().to_string();
        if util::equal_ignore_hash(&self.d.spec.template, &rs.spec.template) {
            self.warning(
                util::ROLLBACK_TEMPLATE_UNCHANGED,
                format!("The rollback revision contains the same template as current deployment \"{name}\""),
            );
            self.clear_rollback_to();
            return Ok(());
        }
        let mut template = rs.spec.template.clone();
        template
            .metadata
            .labels
            .remove(util::POD_TEMPLATE_HASH_LABEL);
        self.d.spec.template = template;
        let mut annotations: crate::sim::api::types::StringMap = self
            .d
            .metadata
            .annotations
            .iter()
            .filter(|(k, _)| util::skip_copy_annotation(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in &rs.metadata.annotations {
            if !util::skip_copy_annotation(k) {
                annotations.insert(k.clone(), v.clone());
            }
        }
        self.d.metadata.annotations = annotations;
        self.clear_rollback_to();
        self.on_write(
            None,
            util::ROLLBACK_DONE,
            format!("Rolled back deployment \"{name}\" to revision {to}"),
        );
        Ok(())
    }

    fn clear_rollback_to(&mut self) {
        self.d
            .metadata
            .annotations
            .remove(util::DEPRECATED_ROLLBACK_TO);
        self.write_spec = true;
        self.notes.push("clear rollbackTo".into());
    }

    // ------------------------------------------------------------ the result

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
                key: ObjectKey::new(Kind::ReplicaSet, &w.rs.metadata.namespace, &w.rs.metadata.name),
                patch: json!({"metadata": {"ownerReferences": w.rs.metadata.owner_references, "uid": w.rs.metadata.uid}}),
                status: false,
            });
        }
        out.batch(claims);
        for (i, w) in self.rss.iter().enumerate().filter(|(_, w)| w.created) {
            let req = ApiRequest::Create(Object::ReplicaSet(w.rs.clone()));
            attach(&req, self.on_success.remove(&Some(i)));
            out.request(req);
        }
        for &i in &self.update_order {
            let req = ApiRequest::Update(Object::ReplicaSet(self.rss[i].rs.clone()));
            attach(&req, self.on_success.remove(&Some(i)));
            out.request(req);
        }
        for del in self.deletes {
            out.request(del);
        }
        if self.write_spec {
            let req = ApiRequest::Update(Object::Deployment(self.d));
            attach(&req, self.on_success.remove(&None));
            out.request(req);
        } else if self.d.status != self.orig.status
            || self.d.metadata.annotations != self.orig.metadata.annotations
        {
            out.request(ApiRequest::UpdateStatus(Object::Deployment(self.d)));
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
mod tests {
    use super::*;
    use crate::sim::api::types::{
        Container, DeploymentStrategy, IntOrString, LabelSelector, ObjectMeta, PodTemplateSpec,
        ReplicaSetSpec, ReplicaSetStatus, RollingUpdateDeployment, StringMap, Time,
    };
    use crate::sim::rng::Rng;
    use crate::sim::world::{Sim, SimConfig};
    use util::{
        compute_hash, controller_ref, max_surge, selector_with_hash, DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION, POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
    };

    const NOW: Millis = 1_000_000;

    fn labels(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn template(image: &str) -> PodTemplateSpec {
        let mut t = PodTemplateSpec::default();
        t.metadata.labels = labels(&[("app", "web")]);
        t.spec.containers = vec![Container {
            name: "app".into(),
            image: image.into(),
            ..Default::default()
        }];
        t
    }

    /// Deployment `default/web` at generation 1 (observed), running `image`, default strategy.
    fn deploy(replicas: i32, image: &str) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: "web".into(),
                namespace: "default".into(),
                uid: "uid-web".into(),
                resource_version: "100".into(),
                generation: 1,
                creation_timestamp: Some(Time(0)),
                ..Default::default()
            },
            spec: crate::sim::api::types::DeploymentSpec {
                replicas: Some(replicas),
                selector: LabelSelector {
                    match_labels: labels(&[("app", "web")]),
                    ..Default::default()
                },
                template: template(image),
                ..Default::default()
            },
            status: DeploymentStatus {
                observed_generation: 1,
                ..Default::default()
            },
        }
    }

    fn surge(mut d: Deployment, max_surge: i64, max_unavailable: i64) -> Deployment {
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(IntOrString::Int(max_surge)),
                max_unavailable: Some(IntOrString::Int(max_unavailable)),
            }),
        });
        d
    }

    fn recreate(mut d: Deployment) -> Deployment {
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        d
    }

    fn paused(mut d: Deployment) -> Deployment {
        d.spec.paused = true;
        d
    }

    /// ReplicaSet `name` of `d` running `image` with `replicas`, all ready and available, at
    /// revision `rev`, created at second `created`, annotated for `d`'s current size.
    fn rs(
        d: &Deployment,
        name: &str,
        image: &str,
        replicas: i32,
        rev: i64,
        created: u64,
    ) -> ReplicaSet {
        let hash = name.rsplit('-').next().unwrap_or(name).to_string();
        let mut t = template(image);
        t.metadata
            .labels
            .insert(POD_TEMPLATE_HASH_LABEL.into(), hash.clone());
        let desired = util::replicas(d);
        ReplicaSet {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                uid: format!("uid-{name}"),
                resource_version: "50".into(),
                generation: 1,
                creation_timestamp: Some(Time(created * 1000)),
                labels: t.metadata.labels.clone(),
                annotations: labels(&[
                    (REVISION_ANNOTATION, &rev.to_string()),
                    (DESIRED_REPLICAS_ANNOTATION, &desired.to_string()),
                    (
                        MAX_REPLICAS_ANNOTATION,
                        &(desired + max_surge(d)).to_string(),
                    ),
                ]),
                owner_references: vec![controller_ref(d)],
                ..Default::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                min_ready_seconds: 0,
                selector: selector_with_hash(&d.spec.selector, &hash),
                template: t,
            },
            status: ReplicaSetStatus {
                replicas,
                ready_replicas: replicas,
                available_replicas: replicas,
                observed_generation: 1,
                ..Default::default()
            },
        }
    }

    fn available(mut r: ReplicaSet, n: i32) -> ReplicaSet {
        r.status.available_replicas = n;
        r.status.ready_replicas = n;
        r
    }

    fn annotated(mut r: ReplicaSet, desired: i32, max: i32) -> ReplicaSet {
        r.metadata
            .annotations
            .insert(DESIRED_REPLICAS_ANNOTATION.into(), desired.to_string());
        r.metadata
            .annotations
            .insert(MAX_REPLICAS_ANNOTATION.into(), max.to_string());
        r
    }

    fn pod_of(r: &ReplicaSet, name: &str, phase: &str, terminating: bool) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.uid = format!("uid-{name}");
        p.metadata.labels = r.spec.template.metadata.labels.clone();
        p.metadata.owner_references = vec![crate::sim::api::types::OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: r.metadata.name.clone(),
            uid: r.metadata.uid.clone(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }];
        p.status.phase = phase.into();
        if terminating {
            p.metadata.deletion_timestamp = Some(Time(NOW + 30_000));
        }
        p
    }

    fn cache_with(d: &Deployment, rss: &[ReplicaSet], pods: &[Pod]) -> Cache {
        let mut c = Cache::new();
        c.upsert(Arc::new(Object::Deployment(d.clone())));
        for r in rss {
            c.upsert(Arc::new(Object::ReplicaSet(r.clone())));
        }
        for p in pods {
            c.upsert(Arc::new(Object::Pod(p.clone())));
        }
        c
    }

    fn web() -> ObjectKey {
        ObjectKey::new(Kind::Deployment, "default", "web")
    }

    /// One reconcile; every write is then answered with success, so the events that wait for
    /// success land in `events` after the pass's own.
    fn run_at(ctrl: &mut DeploymentController, cache: &Cache, now: Millis) -> Outcome {
        let mut out = reconcile_only(ctrl, cache, now);
        let answered: Vec<EventRecord> = out
            .requests()
            .flat_map(|r| {
                ctrl.events_for_response(
                    r,
                    &Ok(Arc::new(Object::Deployment(Deployment::default()))),
                )
            })
            .collect();
        out.events.extend(answered);
        out
    }

    fn reconcile_only(ctrl: &mut DeploymentController, cache: &Cache, now: Millis) -> Outcome {
        let mut rng = Rng::new(1);
        ctrl.reconcile(
            &web(),
            &mut Ctx {
                now,
                cache,
                rng: &mut rng,
                runtime: None,
            },
        )
    }

    fn run(d: &Deployment, rss: &[ReplicaSet]) -> Outcome {
        run_at(
            &mut DeploymentController::new(),
            &cache_with(d, rss, &[]),
            NOW,
        )
    }

    /// The name the controller gives `d`'s new ReplicaSet.
    fn new_name(d: &Deployment) -> String {
        format!(
            "web-{}",
            compute_hash(&d.spec.template, d.status.collision_count)
        )
    }

    /// Requests as short lines; the new ReplicaSet's generated name reads `NEW`.
    fn summary(out: &Outcome, d: &Deployment) -> Vec<String> {
        let new = new_name(d);
        out.requests()
            .map(|r| {
                let line = match r {
                    ApiRequest::Create(Object::ReplicaSet(rs)) => {
                        format!(
                            "create ReplicaSet {} replicas={}",
                            rs.metadata.name,
                            util::rs_replicas(rs)
                        )
                    }
                    ApiRequest::Update(Object::ReplicaSet(rs)) => {
                        format!(
                            "update ReplicaSet {} replicas={}",
                            rs.metadata.name,
                            util::rs_replicas(rs)
                        )
                    }
                    other => format!("{} {} {}", other.verb(), other.key().kind, other.key().name),
                };
                line.replace(&new, "NEW")
            })
            .collect()
    }

    fn events(out: &Outcome, d: &Deployment) -> Vec<String> {
        let new = new_name(d);
        out.events
            .iter()
            .map(|e| format!("{} {} {}", e.type_, e.reason, e.message).replace(&new, "NEW"))
            .collect()
    }

    fn written_status(out: &Outcome) -> Option<Deployment> {
        out.requests().find_map(|r| match r {
            ApiRequest::UpdateStatus(Object::Deployment(d)) => Some(d.clone()),
            _ => None,
        })
    }

    fn written_rs(out: &Outcome, name: &str) -> Option<ReplicaSet> {
        out.requests().find_map(|r| match r {
            ApiRequest::Create(Object::ReplicaSet(rs))
            | ApiRequest::Update(Object::ReplicaSet(rs))
                if rs.metadata.name == name =>
            {
                Some(rs.clone())
            }
            _ => None,
        })
    }

    fn condition<'a>(d: &'a Deployment, type_: &str) -> (&'a str, &'a str, &'a str) {
        let c = util::get_condition(&d.status, type_)
            .unwrap_or_else(|| panic!("no {type_} condition in {:?}", d.status.conditions));
        (
            c.status.as_str(),
            c.reason.as_deref().unwrap_or(""),
            c.message.as_deref().unwrap_or(""),
        )
    }

    /// `d` after the status update in `out` landed (as the informer would deliver it).
    fn after(d: &Deployment, out: &Outcome) -> Deployment {
        let mut next = d.clone();
        if let Some(w) = written_status(out) {
            next.status = w.status;
            next.metadata.annotations = w.metadata.annotations;
        }
        next
    }

    // ------------------------------------------------------------ RollingUpdate steps

    struct Step {
        name: &'static str,
        d: Deployment,
        rss: Vec<ReplicaSet>,
        requests: &'static [&'static str],
        events: &'static [&'static str],
    }

    #[test]
    fn each_rolling_update_step_sends_exactly_the_expected_requests() {
        let d10 = surge(deploy(10, "v2"), 3, 2);
        let d3 = deploy(3, "v2");
        let d4 = deploy(4, "v3");
        let steps = vec![
            Step {
                name: "ten replicas with surge 3 / unavailable 2: new RS created at 3, old scaled 10→8",
                rss: vec![rs(&d10, "web-v1", "v1", 10, 1, 1)],
                d: d10,
                requests: &["create ReplicaSet NEW replicas=3", "update ReplicaSet web-v1 replicas=8", "update/status Deployment web"],
                events: &[
                    "Normal ScalingReplicaSet Scaled up replica set NEW from 0 to 3",
                    "Normal ScalingReplicaSet Scaled down replica set web-v1 from 10 to 8",
                ],
            },
            Step {
                name: "an available new pod lets the old RS shrink by one",
                rss: vec![rs(&d3, "web-v1", "v1", 3, 1, 1), rs(&d3, "web-v2", "v2", 1, 2, 2)],
                d: d3.clone(),
                requests: &["update ReplicaSet web-v1 replicas=2", "update/status Deployment web"],
                events: &["Normal ScalingReplicaSet Scaled down replica set web-v1 from 3 to 2"],
            },
            Step {
                name: "the new RS grows while the total stays within replicas plus surge",
                rss: vec![rs(&d3, "web-v1", "v1", 2, 1, 1), rs(&d3, "web-v2", "v2", 1, 2, 2)],
                d: d3.clone(),
                requests: &["update ReplicaSet web-v2 replicas=2", "update/status Deployment web"],
                events: &["Normal ScalingReplicaSet Scaled up replica set web-v2 from 1 to 2"],
            },
            Step {
                name: "an unavailable new pod blocks any scale-down",
                rss: vec![rs(&d3, "web-v1", "v1", 3, 1, 1), available(rs(&d3, "web-v2", "v2", 1, 2, 2), 0)],
                d: d3.clone(),
                requests: &["update/status Deployment web"],
                events: &[],
            },
            Step {
                name: "unhealthy old replicas are cleaned up, oldest RS first",
                rss: vec![
                    available(rs(&d4, "web-v1", "v1", 2, 1, 1), 0),
                    rs(&d4, "web-v2", "v2", 2, 2, 2),
                    rs(&d4, "web-v3", "v3", 1, 3, 3),
                ],
                d: d4.clone(),
                requests: &["update ReplicaSet web-v1 replicas=0", "update/status Deployment web"],
                events: &["Normal ScalingReplicaSet Scaled down replica set web-v1 from 2 to 0"],
            },
            Step {
                name: "spare availability scales old RSs down, oldest first",
                rss: vec![rs(&d4, "web-v1", "v1", 1, 1, 1), rs(&d4, "web-v2", "v2", 2, 2, 2), rs(&d4, "web-v3", "v3", 2, 3, 3)],
                d: d4.clone(),
                requests: &["update ReplicaSet web-v1 replicas=0", "update ReplicaSet web-v2 replicas=1", "update/status Deployment web"],
                events: &[
                    "Normal ScalingReplicaSet Scaled down replica set web-v1 from 1 to 0",
                    "Normal ScalingReplicaSet Scaled down replica set web-v2 from 2 to 1",
                ],
            },
            Step {
                name: "a new RS larger than the spec is scaled down to it",
                rss: vec![rs(&d3, "web-v2", "v2", 4, 1, 1)],
                d: d3.clone(),
                requests: &["update ReplicaSet web-v2 replicas=3", "update/status Deployment web"],
                events: &["Normal ScalingReplicaSet Scaled down replica set web-v2 from 4 to 3"],
            },
        ];
        for s in steps {
            let out = run(&s.d, &s.rss);
            assert_eq!(summary(&out, &s.d), s.requests, "{}", s.name);
            assert_eq!(events(&out, &s.d), s.events, "{}", s.name);
            assert_eq!(out.error, None, "{}", s.name);
        }
    }

    /// A Deployment of 3 mid-rollout: web-v1 (3) is next to scale down, to 2.
    fn mid_rollout() -> Cache {
        let d = deploy(3, "v2");
        cache_with(
            &d,
            &[
                rs(&d, "web-v1", "v1", 3, 1, 1),
                rs(&d, "web-v2", "v2", 1, 2, 2),
            ],
            &[],
        )
    }

    /// Answers `scale` with success: the controller records its one pending event, then holds none.
    fn succeed_and_expect_the_scale_down_event(
        ctrl: &mut DeploymentController,
        scale: &ApiRequest,
    ) {
        let ok = Ok(Arc::new(Object::Deployment(Deployment::default())));
        let recorded: Vec<String> = ctrl
            .events_for_response(scale, &ok)
            .iter()
            .map(|e| e.message.clone())
            .collect();
        assert_eq!(recorded, ["Scaled down replica set web-v1 from 3 to 2"]);
        assert!(ctrl.pending_events.is_empty());
    }

    #[test]
    fn scaling_events_are_recorded_only_when_the_write_succeeds() {
        let cache = mid_rollout();
        let mut ctrl = DeploymentController::new();
        let out = reconcile_only(&mut ctrl, &cache, NOW);
        assert!(
            out.events.is_empty(),
            "nothing is recorded before the answer"
        );
        let scale = out.requests().next().expect("scale-down").clone();
        let conflict = Err(ApiError::conflict(Kind::ReplicaSet, "web-v1"));
        assert!(ctrl.events_for_response(&scale, &conflict).is_empty());
        let out = reconcile_only(&mut ctrl, &cache, NOW + 20);
        let scale = out.requests().next().expect("retried").clone();
        succeed_and_expect_the_scale_down_event(&mut ctrl, &scale);
    }

    #[test]
    fn a_skipped_request_does_not_take_the_event_of_an_equal_one_that_succeeds() {
        let cache = mid_rollout();
        let mut ctrl = DeploymentController::new();
        // Two passes over the same cache (a watch event and a retry): equal scale-downs.
        let first = reconcile_only(&mut ctrl, &cache, NOW);
        let second = reconcile_only(&mut ctrl, &cache, NOW);
        let scale = first.requests().next().expect("scale-down").clone();
        assert_eq!(second.requests().next(), Some(&scale));
        // The first pass's earlier write failed, so its scale-down never went out...
        ctrl.on_skipped(&scale);
        // ...and the second pass's succeeded: its event is recorded.
        succeed_and_expect_the_scale_down_event(&mut ctrl, &scale);
    }

    #[test]
    fn first_rollout_creates_the_new_replica_set_with_hash_labels_and_revision_1() {
        let d = deploy(3, "nginx:1.27");
        let out = run(&d, &[]);
        let name = new_name(&d);
        assert_eq!(
            summary(&out, &d),
            [
                "create ReplicaSet NEW replicas=3",
                "update/status Deployment web"
            ]
        );
        assert_eq!(
            events(&out, &d),
            ["Normal ScalingReplicaSet Scaled up replica set NEW from 0 to 3"]
        );
        let created = written_rs(&out, &name).expect("created");
        let hash = name.trim_start_matches("web-");
        assert!(hash.chars().all(|c| "456789bcdf".contains(c)), "{hash}");
        for l in [
            &created.metadata.labels,
            &created.spec.template.metadata.labels,
            &created.spec.selector.match_labels,
        ] {
            assert_eq!(
                l.get(POD_TEMPLATE_HASH_LABEL).map(String::as_str),
                Some(hash)
            );
        }
        assert_eq!(
            created
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("1")
        );
        assert_eq!(
            created
                .metadata
                .annotations
                .get(DESIRED_REPLICAS_ANNOTATION)
                .map(String::as_str),
            Some("3")
        );
        assert_eq!(
            created
                .metadata
                .annotations
                .get(MAX_REPLICAS_ANNOTATION)
                .map(String::as_str),
            Some("4")
        );
        let owner = created.metadata.controller_ref().expect("controller ref");
        assert_eq!(
            (
                owner.kind.as_str(),
                owner.uid.as_str(),
                owner.block_owner_deletion
            ),
            ("Deployment", "uid-web", Some(true))
        );
        let status = written_status(&out).expect("status");
        assert_eq!(
            status
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("1")
        );
        assert_eq!(
            condition(&status, "Progressing"),
            (
                "True",
                "NewReplicaSetCreated",
                &*format!("Created new replica set \"{name}\"")
            )
        );
        assert_eq!(
            condition(&status, "Available"),
            (
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability."
            )
        );
    }

    #[test]
    fn deployment_annotations_are_copied_to_the_new_replica_set_except_excluded_ones() {
        let mut d = deploy(1, "v1");
        d.metadata.annotations = labels(&[
            ("team", "blue"),
            (crate::sim::api::types::LAST_APPLIED, "{}"),
            (REVISION_ANNOTATION, "7"),
        ]);
        let out = run(&d, &[]);
        let created = written_rs(&out, &new_name(&d)).expect("created");
        assert_eq!(
            created.metadata.annotations.get("team").map(String::as_str),
            Some("blue")
        );
        assert!(!created
            .metadata
            .annotations
            .contains_key(crate::sim::api::types::LAST_APPLIED));
        assert_eq!(
            created
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("1")
        );
    }

    // ------------------------------------------------------------ Recreate

    #[test]
    fn recreate_scales_old_replica_sets_to_zero_first_and_creates_nothing() {
        let d = recreate(deploy(3, "v2"));
        let out = run(&d, &[rs(&d, "web-v1", "v1", 3, 1, 1)]);
        assert_eq!(
            summary(&out, &d),
            [
                "update ReplicaSet web-v1 replicas=0",
                "update/status Deployment web"
            ]
        );
        assert_eq!(
            events(&out, &d),
            ["Normal ScalingReplicaSet Scaled down replica set web-v1 from 3 to 0"]
        );
    }

    #[test]
    fn recreate_waits_while_an_old_pod_still_exists() {
        let d = recreate(deploy(3, "v2"));
        let old = rs(&d, "web-v1", "v1", 0, 1, 1);
        let pods = [pod_of(&old, "web-v1-abcde", "Running", true)];
        let out = run_at(
            &mut DeploymentController::new(),
            &cache_with(&d, &[old], &pods),
            NOW,
        );
        assert!(
            summary(&out, &d).iter().all(|l| !l.contains("ReplicaSet")),
            "{:?}",
            summary(&out, &d)
        );
        assert!(out
            .record
            .expect("record")
            .diff
            .contains("wait for old pods"));
    }

    #[test]
    fn recreate_creates_the_new_replica_set_at_full_size_once_old_pods_are_gone() {
        let d = recreate(deploy(3, "v2"));
        let old = rs(&d, "web-v1", "v1", 0, 1, 1);
        let failed = [pod_of(&old, "web-v1-done", "Failed", false)];
        let out = run_at(
            &mut DeploymentController::new(),
            &cache_with(&d, &[old], &failed),
            NOW,
        );
        assert_eq!(
            summary(&out, &d),
            [
                "create ReplicaSet NEW replicas=3",
                "update/status Deployment web"
            ]
        );
        assert_eq!(
            events(&out, &d),
            ["Normal ScalingReplicaSet Scaled up replica set NEW from 0 to 3"]
        );
    }

    #[test]
    fn deleting_the_last_pod_of_a_recreate_deployment_wakes_it() {
        let d = recreate(deploy(3, "v2"));
        let old = rs(&d, "web-v1", "v1", 0, 1, 1);
        let gone = pod_of(&old, "web-v1-a", "Running", true);
        let other = pod_of(&old, "web-v1-b", "Running", true);
        let ev = WatchEvent::new(WatchEventType::Deleted, Arc::new(Object::Pod(gone)), 9, 0);
        let mut ctrl = DeploymentController::new();
        let cache = cache_with(&d, std::slice::from_ref(&old), std::slice::from_ref(&other));
        assert!(
            ctrl.keys_for_event(&ev, None, &cache).is_empty(),
            "another old pod remains"
        );
        let cache = cache_with(&d, &[old], &[]);
        assert_eq!(ctrl.keys_for_event(&ev, None, &cache), [web()]);
        let rolling = deploy(3, "v2");
        let cache = cache_with(&rolling, &[rs(&rolling, "web-v1", "v1", 0, 1, 1)], &[]);
        assert!(
            ctrl.keys_for_event(&ev, None, &cache).is_empty(),
            "RollingUpdate ignores pod deletions"
        );
    }

    // ------------------------------------------------------------ scaling events

    #[test]
    fn proportional_scaling_mid_rollout_matches_the_documentation_example() {
        let d = surge(deploy(15, "v2"), 3, 2);
        let old = annotated(rs(&d, "web-v1", "v1", 8, 1, 1), 10, 13);
        let new = annotated(rs(&d, "web-v2", "v2", 5, 2, 2), 10, 13);
        let out = run(&d, &[old, new]);
        assert_eq!(
            summary(&out, &d),
            [
                "update ReplicaSet web-v1 replicas=11",
                "update ReplicaSet web-v2 replicas=7",
                "update/status Deployment web"
            ]
        );
        assert_eq!(
            events(&out, &d),
            [
                "Normal ScalingReplicaSet Scaled up replica set web-v1 from 8 to 11",
                "Normal ScalingReplicaSet Scaled up replica set web-v2 from 5 to 7",
            ]
        );
        let v1 = written_rs(&out, "web-v1").expect("v1");
        assert_eq!(
            v1.metadata
                .annotations
                .get(DESIRED_REPLICAS_ANNOTATION)
                .map(String::as_str),
            Some("15")
        );
        assert_eq!(
            v1.metadata
                .annotations
                .get(MAX_REPLICAS_ANNOTATION)
                .map(String::as_str),
            Some("18")
        );
    }

    #[test]
    fn proportional_scale_down_takes_from_the_oldest_largest_first_and_gives_it_the_leftover() {
        // 15 → 10 with surge 3: allowed 13, 18 running; old 11 and new 7 lose 8×… proportionally.
        let d = surge(deploy(10, "v2"), 3, 2);
        let old = annotated(rs(&d, "web-v1", "v1", 11, 1, 1), 15, 18);
        let new = annotated(rs(&d, "web-v2", "v2", 7, 2, 2), 15, 18);
        let out = run(&d, &[old, new]);
        // old: round(11×13/18)=8 (−3); new: round(7×13/18)=5 (−2); total −5 = 13−18.
        assert_eq!(
            summary(&out, &d),
            [
                "update ReplicaSet web-v1 replicas=8",
                "update ReplicaSet web-v2 replicas=5",
                "update/status Deployment web"
            ]
        );
    }

    #[test]
    fn scaling_a_settled_deployment_resizes_its_only_replica_set() {
        let d = deploy(5, "v1");
        let out = run(&d, &[annotated(rs(&d, "web-v1", "v1", 3, 1, 1), 3, 4)]);
        assert_eq!(
            summary(&out, &d),
            [
                "update ReplicaSet web-v1 replicas=5",
                "update/status Deployment web"
            ]
        );
        let v1 = written_rs(&out, "web-v1").expect("v1");
        assert_eq!(
            v1.metadata
                .annotations
                .get(MAX_REPLICAS_ANNOTATION)
                .map(String::as_str),
            Some("7")
        );
    }

    // ------------------------------------------------------------ revisions and history

    #[test]
    fn rolling_back_to_revision_1_makes_it_revision_3_with_history_1() {
        // The template was just set back to v1 (kubectl rollout undo); v2 still runs everything.
        let mut d = deploy(3, "v1");
        d.status = DeploymentStatus {
            observed_generation: 1,
            replicas: 3,
            ready_replicas: 3,
            available_replicas: 3,
            ..Default::default()
        };
        let out = run(
            &d,
            &[
                rs(&d, "web-v1", "v1", 0, 1, 1),
                rs(&d, "web-v2", "v2", 3, 2, 2),
            ],
        );
        assert_eq!(
            summary(&out, &d),
            [
                "update ReplicaSet web-v1 replicas=1",
                "update/status Deployment web"
            ]
        );
        let v1 = written_rs(&out, "web-v1").expect("v1");
        assert_eq!(
            v1.metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("3")
        );
        assert_eq!(
            v1.metadata
                .annotations
                .get(REVISION_HISTORY_ANNOTATION)
                .map(String::as_str),
            Some("1")
        );
        let status = written_status(&out).expect("status");
        assert_eq!(
            status
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("3")
        );
        assert_eq!(
            condition(&status, "Progressing"),
            (
                "True",
                "FoundNewReplicaSet",
                "Found new replica set \"web-v1\""
            )
        );
    }

    #[test]
    fn rollout_undo_picks_the_previous_revision_or_the_one_asked_for() {
        let d = deploy(3, "v2");
        let v1 = rs(&d, "web-v1", "v1", 0, 1, 1);
        let mut v2 = rs(&d, "web-v2", "v2", 3, 2, 2);
        v2.metadata
            .annotations
            .insert("kubernetes.io/change-cause".into(), "v2".into());
        let mut with_cause = v1.clone();
        with_cause
            .metadata
            .annotations
            .insert("kubernetes.io/change-cause".into(), "v1".into());
        let rss = [&with_cause, &v2];
        let plan = rollback_template(&d, &rss, None).expect("plan");
        let RollbackPlan::RollBack {
            revision,
            template: t,
            annotations,
        } = &plan
        else {
            panic!("{plan:?}")
        };
        assert_eq!(*revision, 1);
        assert_eq!(*t, template("v1"), "the hash label is dropped");
        assert_eq!(
            annotations
                .get("kubernetes.io/change-cause")
                .map(String::as_str),
            Some("v1")
        );
        assert_eq!(plan.message(), "rolled back");
        let cases: [(Option<i64>, Result<String, String>); 4] = [
            (
                Some(2),
                Ok("skipped rollback (current template already matches revision 2)".into()),
            ),
            (Some(1), Ok("rolled back".into())),
            (
                Some(5),
                Err("unable to find specified revision 5 in history".into()),
            ),
            (
                Some(-1),
                Err("unable to find specified revision -1 in history".into()),
            ),
        ];
        for (to, want) in cases {
            assert_eq!(
                rollback_template(&d, &[&v1, &v2], to).map(|p| p.message()),
                want,
                "{to:?}"
            );
        }
        assert_eq!(
            rollback_template(&d, &[&v2], None),
            Err("no rollout history found for deployment \"web\"".into())
        );
        assert_eq!(
            rollback_template(&paused(d.clone()), &[&v1, &v2], None),
            Err("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/web' and try again".into())
        );
    }

    /// `d` as it looks once the rollout to `rev` completed and the controller recorded it.
    fn settled(mut d: Deployment, rev: &str) -> Deployment {
        let r = util::replicas(&d);
        d.metadata
            .annotations
            .insert(REVISION_ANNOTATION.into(), rev.into());
        d.status = DeploymentStatus {
            observed_generation: d.metadata.generation,
            replicas: r,
            updated_replicas: r,
            ready_replicas: r,
            available_replicas: r,
            conditions: vec![
                util::new_condition(
                    "Available",
                    "True",
                    util::MINIMUM_REPLICAS_AVAILABLE,
                    "Deployment has minimum availability.",
                    0,
                ),
                util::new_condition(
                    "Progressing",
                    "True",
                    util::NEW_RS_AVAILABLE_REASON,
                    "ReplicaSet \"x\" has successfully progressed.",
                    0,
                ),
            ],
            ..Default::default()
        };
        d
    }

    #[test]
    fn history_cleanup_deletes_the_oldest_scaled_down_revisions_beyond_the_limit() {
        let mut d = settled(deploy(3, "v3"), "3");
        d.spec.revision_history_limit = Some(1);
        let out = run(
            &d,
            &[
                rs(&d, "web-v1", "v1", 0, 1, 1),
                rs(&d, "web-v2", "v2", 0, 2, 2),
                rs(&d, "web-v3", "v3", 3, 3, 3),
            ],
        );
        assert_eq!(summary(&out, &d), ["delete ReplicaSet web-v1"]);
        let mut busy = rs(&d, "web-v1", "v1", 0, 1, 1);
        busy.status.replicas = 1;
        let out = run(
            &d,
            &[
                busy,
                rs(&d, "web-v2", "v2", 0, 2, 2),
                rs(&d, "web-v3", "v3", 3, 3, 3),
            ],
        );
        assert!(
            summary(&out, &d).iter().all(|l| !l.starts_with("delete")),
            "an RS that still has pods is kept: {:?}",
            summary(&out, &d)
        );
    }

    #[test]
    fn history_is_not_cleaned_up_while_a_rollout_is_in_progress() {
        let mut d = deploy(3, "v3");
        d.spec.revision_history_limit = Some(0);
        let out = run(
            &d,
            &[
                rs(&d, "web-v1", "v1", 0, 1, 1),
                rs(&d, "web-v2", "v2", 3, 2, 2),
                available(rs(&d, "web-v3", "v3", 1, 3, 3), 0),
            ],
        );
        assert!(
            summary(&out, &d).iter().all(|l| !l.starts_with("delete")),
            "{:?}",
            summary(&out, &d)
        );
    }

    // ------------------------------------------------------------ conditions

    #[test]
    fn a_complete_rollout_reports_new_replica_set_available_and_minimum_availability() {
        let mut d = deploy(3, "v2");
        d.status.replicas = 3;
        d.status.updated_replicas = 2;
        d.status.available_replicas = 2;
        d.status.conditions = vec![util::new_condition(
            "Progressing",
            "True",
            util::REPLICA_SET_UPDATED_REASON,
            "x",
            500_000,
        )];
        let out = run(
            &d,
            &[
                rs(&d, "web-v1", "v1", 0, 1, 1),
                rs(&d, "web-v2", "v2", 3, 2, 2),
            ],
        );
        let s = written_status(&out).expect("status");
        assert_eq!(
            condition(&s, "Progressing"),
            (
                "True",
                "NewReplicaSetAvailable",
                "ReplicaSet \"web-v2\" has successfully progressed."
            )
        );
        assert_eq!(
            condition(&s, "Available"),
            (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability."
            )
        );
        let order: Vec<&str> = s
            .status
            .conditions
            .iter()
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(
            order,
            ["Available", "Progressing"],
            "a replaced condition moves to the end"
        );
        assert_eq!(
            (
                s.status.replicas,
                s.status.updated_replicas,
                s.status.available_replicas,
                s.status.unavailable_replicas
            ),
            (3, 3, 3, 0)
        );
    }

    #[test]
    fn observed_progress_refreshes_last_update_time_but_keeps_last_transition_time() {
        let mut d = deploy(3, "v2");
        d.status.available_replicas = 2;
        let mut c = util::new_condition(
            "Progressing",
            "True",
            util::REPLICA_SET_UPDATED_REASON,
            "x",
            100_000,
        );
        c.last_transition_time = Some(Time(50_000));
        d.status.conditions = vec![c];
        let out = run(
            &d,
            &[
                rs(&d, "web-v1", "v1", 1, 1, 1),
                available(rs(&d, "web-v2", "v2", 3, 2, 2), 2),
            ],
        );
        assert_eq!(summary(&out, &d), ["update/status Deployment web"]);
        let s = written_status(&out).expect("status");
        assert_eq!(
            condition(&s, "Progressing"),
            (
                "True",
                "ReplicaSetUpdated",
                "ReplicaSet \"web-v2\" is progressing."
            )
        );
        let p = util::get_condition(&s.status, "Progressing").expect("progressing");
        assert_eq!(
            (p.last_update_time, p.last_transition_time),
            (Some(Time(NOW)), Some(Time(50_000)))
        );
    }

    #[test]
    fn no_progress_for_the_deadline_times_out_and_otherwise_requeues_one_second_after_it() {
        let d = deploy(3, "v2");
        let rss = [
            rs(&d, "web-v1", "v1", 3, 1, 1),
            available(rs(&d, "web-v2", "v2", 1, 2, 2), 0),
        ];
        let cache = cache_with(&d, &rss, &[]);
        let first = run_at(&mut DeploymentController::new(), &cache, NOW);
        let d = after(&d, &first);
        let stuck_at = util::get_condition(&d.status, "Progressing")
            .and_then(|c| c.last_update_time)
            .expect("set")
            .0;
        // Nothing changed since: no write, a timer for the deadline.
        let again = run_at(
            &mut DeploymentController::new(),
            &cache_with(&d, &rss, &[]),
            NOW + 100_000,
        );
        assert_eq!(summary(&again, &d), Vec::<String>::new());
        assert_eq!(
            again.requeue_after,
            Some(stuck_at + 600_000 - (NOW + 100_000) + 1000)
        );
        let late = run_at(
            &mut DeploymentController::new(),
            &cache_with(&d, &rss, &[]),
            stuck_at + 600_001,
        );
        let s = written_status(&late).expect("status");
        assert_eq!(
            condition(&s, "Progressing"),
            (
                "False",
                "ProgressDeadlineExceeded",
                "ReplicaSet \"web-v2\" has timed out progressing."
            )
        );
        assert_eq!(
            rollout_status_message(&s, None),
            Err("deployment \"web\" exceeded its progress deadline".into())
        );
    }

    #[test]
    fn paused_deployment_does_not_create_a_new_replica_set_on_template_change() {
        let d = paused(settled(deploy(3, "v2"), "1"));
        let out = run(&d, &[rs(&d, "web-v1", "v1", 3, 1, 1)]);
        assert_eq!(summary(&out, &d), ["update/status Deployment web"]);
        let s = written_status(&out).expect("status");
        assert_eq!(
            condition(&s, "Progressing"),
            ("Unknown", "DeploymentPaused", "Deployment is paused")
        );
    }

    #[test]
    fn paused_deployment_still_scales() {
        let d = paused(settled(deploy(5, "v2"), "1"));
        let out = run(&d, &[annotated(rs(&d, "web-v1", "v1", 3, 1, 1), 3, 4)]);
        assert_eq!(
            summary(&out, &d),
            [
                "update ReplicaSet web-v1 replicas=5",
                "update/status Deployment web"
            ]
        );
    }

    #[test]
    fn resuming_marks_progressing_unknown_so_the_pause_does_not_count_against_the_deadline() {
        let mut d = deploy(3, "v2");
        d.status = DeploymentStatus {
            observed_generation: 1,
            replicas: 3,
            updated_replicas: 3,
            ready_replicas: 1,
            available_replicas: 1,
            ..Default::default()
        };
        d.status.conditions = vec![util::new_condition(
            "Progressing",
            "Unknown",
            util::PAUSED_DEPLOY_REASON,
            "Deployment is paused",
            0,
        )];
        let out = run(&d, &[available(rs(&d, "web-v2", "v2", 3, 1, 1), 1)]);
        let s = written_status(&out).expect("status");
        assert_eq!(
            condition(&s, "Progressing"),
            ("Unknown", "DeploymentResumed", "Deployment is resumed")
        );
    }

    #[test]
    fn an_empty_selector_warns_selecting_all_and_only_observes_the_generation() {
        let mut d = deploy(3, "v1");
        d.spec.selector = LabelSelector::default();
        d.metadata.generation = 2;
        let out = run(&d, &[]);
        assert_eq!(summary(&out, &d), ["update/status Deployment web"]);
        assert_eq!(events(&out, &d), ["Warning SelectingAll This deployment is selecting all pods. A non-empty selector is required."]);
        assert_eq!(
            written_status(&out)
                .expect("status")
                .status
                .observed_generation,
            2
        );
    }

    // ------------------------------------------------------------ ownership and failures

    #[test]
    fn orphans_matching_the_selector_are_adopted_and_non_matching_owned_sets_released() {
        let d = settled(deploy(3, "v1"), "1");
        let mut orphan = rs(&d, "web-v1", "v1", 3, 1, 1);
        orphan.metadata.owner_references.clear();
        let mut stray = rs(&d, "web-old", "v0", 0, 0, 0);
        stray.metadata.labels = labels(&[("app", "other")]);
        let out = run(&d, &[orphan, stray]);
        assert_eq!(
            summary(&out, &d),
            ["patch ReplicaSet web-old", "patch ReplicaSet web-v1"]
        );
        let patches: Vec<&Json> = out
            .requests()
            .filter_map(|r| match r {
                ApiRequest::Patch { patch, .. } => Some(patch),
                _ => None,
            })
            .collect();
        assert_eq!(patches[0]["metadata"]["ownerReferences"], Json::Null);
        let adopt = &patches[1]["metadata"]["ownerReferences"][0];
        assert_eq!(
            (
                adopt["kind"].as_str(),
                adopt["controller"].as_bool(),
                adopt["blockOwnerDeletion"].as_bool()
            ),
            (Some("Deployment"), Some(true), Some(true))
        );
    }

    #[test]
    fn replica_set_events_wake_the_owner_or_the_deployments_selecting_an_orphan() {
        let d = deploy(3, "v1");
        let owned = rs(&d, "web-v1", "v1", 3, 1, 1);
        let mut orphan = owned.clone();
        orphan.metadata.owner_references.clear();
        let cache = cache_with(&d, std::slice::from_ref(&owned), &[]);
        let mut ctrl = DeploymentController::new();
        let ev =
            |o: &ReplicaSet, t| WatchEvent::new(t, Arc::new(Object::ReplicaSet(o.clone())), 60, 0);
        let mut bumped = owned.clone();
        bumped.metadata.resource_version = "61".into();
        let old = Arc::new(Object::ReplicaSet(owned.clone()));
        assert_eq!(
            ctrl.keys_for_event(&ev(&bumped, WatchEventType::Modified), Some(&old), &cache),
            [web()]
        );
        assert!(
            ctrl.keys_for_event(&ev(&owned, WatchEventType::Modified), Some(&old), &cache)
                .is_empty(),
            "resync: same RV"
        );
        assert_eq!(
            ctrl.keys_for_event(&ev(&orphan, WatchEventType::Added), None, &cache),
            [web()]
        );
        assert_eq!(
            ctrl.keys_for_event(&ev(&owned, WatchEventType::Deleted), None, &cache),
            [web()]
        );
        let mut foreign = owned.clone();
        foreign.metadata.owner_references[0].uid = "someone-else".into();
        assert!(ctrl
            .keys_for_event(&ev(&foreign, WatchEventType::Added), None, &cache)
            .is_empty());
    }

    #[test]
    fn a_hash_collision_bumps_collision_count_and_the_next_name_differs() {
        let d = deploy(3, "v2");
        let old = rs(&d, "web-v1", "v1", 3, 1, 1);
        let mut ctrl = DeploymentController::new();
        let first = run_at(
            &mut ctrl,
            &cache_with(&d, std::slice::from_ref(&old), &[]),
            NOW,
        );
        let create = first.requests().next().expect("create").clone();
        let name = new_name(&d);
        ctrl.on_response(
            &create,
            &Err(ApiError::already_exists(Kind::ReplicaSet, &name)),
            NOW,
        );
        let mut squatter = rs(&d, &name, "something-else", 1, 0, 0);
        squatter.metadata.owner_references.clear();
        squatter.metadata.labels = labels(&[("app", "squatter")]);
        let second = run_at(
            &mut ctrl,
            &cache_with(&d, &[old.clone(), squatter.clone()], &[]),
            NOW,
        );
        assert_eq!(summary(&second, &d), ["update/status Deployment web"]);
        assert_eq!(
            second.error,
            Some(format!("replicasets.apps \"{name}\" already exists"))
        );
        let bumped = after(&d, &second);
        assert_eq!(bumped.status.collision_count, Some(1));
        let third = run_at(&mut ctrl, &cache_with(&bumped, &[old, squatter], &[]), NOW);
        let created = written_rs(&third, &new_name(&bumped)).expect("created under the new name");
        assert_ne!(created.metadata.name, name);
    }

    #[test]
    fn a_failed_create_is_reported_as_replica_set_create_error() {
        let d = deploy(3, "v2");
        let mut ctrl = DeploymentController::new();
        let cache = cache_with(&d, &[rs(&d, "web-v1", "v1", 3, 1, 1)], &[]);
        let first = run_at(&mut ctrl, &cache, NOW);
        let create = first.requests().next().expect("create").clone();
        let err = ApiError {
            reason: StatusReason::Forbidden,
            message: "exceeded quota: pods".into(),
        };
        ctrl.on_response(&create, &Err(err), NOW);
        let second = run_at(&mut ctrl, &cache, NOW + 10);
        let name = new_name(&d);
        let msg = format!("Failed to create new replica set \"{name}\": exceeded quota: pods");
        assert_eq!(summary(&second, &d), ["update/status Deployment web"]);
        assert_eq!(
            events(&second, &d),
            [format!("Warning ReplicaSetCreateError {msg}").replace(&name, "NEW")]
        );
        assert_eq!(
            condition(&written_status(&second).expect("status"), "Progressing"),
            ("False", "ReplicaSetCreateError", &*msg)
        );
        assert_eq!(second.error.as_deref(), Some("exceeded quota: pods"));
    }

    // ------------------------------------------------------------ kubectl helpers

    #[test]
    fn rollout_status_messages_follow_kubectl() {
        let base = deploy(3, "v2");
        let with = |f: &dyn Fn(&mut Deployment)| {
            let mut d = base.clone();
            f(&mut d);
            d
        };
        type Case = (Deployment, Result<(String, bool), String>);
        let cases: Vec<Case> = vec![
            (with(&|d| d.metadata.generation = 2), Ok(("Waiting for deployment spec update to be observed...".into(), false))),
            (
                with(&|d| d.status.updated_replicas = 1),
                Ok(("Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...".into(), false)),
            ),
            (
                with(&|d| {
                    d.status.updated_replicas = 3;
                    d.status.replicas = 4;
                }),
                Ok(("Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...".into(), false)),
            ),
            (
                with(&|d| {
                    d.status.updated_replicas = 3;
                    d.status.replicas = 3;
                    d.status.available_replicas = 2;
                }),
                Ok(("Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...".into(), false)),
            ),
            (settled(base.clone(), "2"), Ok(("deployment \"web\" successfully rolled out".into(), true))),
        ];
        for (d, want) in cases {
            assert_eq!(rollout_status_message(&d, None), want);
        }
        assert_eq!(
            rollout_status_message(&settled(base.clone(), "2"), Some(3)),
            Err("desired revision (3) is different from the running revision (2)".into())
        );
    }

    #[test]
    fn fencepost_table_from_the_reference() {
        for (replicas, want) in [
            (1, (1, 0)),
            (2, (1, 0)),
            (3, (1, 0)),
            (4, (1, 1)),
            (10, (3, 2)),
        ] {
            assert_eq!(
                max_surge_and_unavailable(&deploy(replicas, "v1")),
                want,
                "replicas {replicas}"
            );
        }
    }

    // ------------------------------------------------------------ through the world

    #[test]
    fn a_new_deployment_gets_its_first_replica_set_through_the_world() {
        let mut sim = Sim::new(SimConfig::default());
        let mut d = deploy(3, "nginx:1.27");
        d.metadata = ObjectMeta {
            name: "web".into(),
            namespace: "default".into(),
            ..Default::default()
        };
        d.status = DeploymentStatus::default();
        sim.submit(ApiRequest::Create(Object::Deployment(d)))
            .expect("deployment created");
        sim.advance_to(5_000, usize::MAX);
        let stored = sim
            .get(&web())
            .and_then(|o| o.as_deployment())
            .expect("stored")
            .clone();
        let rss: Vec<ReplicaSet> = sim
            .api
            .list(Kind::ReplicaSet)
            .filter_map(|o| o.as_replica_set().cloned())
            .collect();
        assert_eq!(rss.len(), 1, "{rss:?}");
        let first = &rss[0];
        assert_eq!(
            first.metadata.name,
            format!("web-{}", compute_hash(&stored.spec.template, None))
        );
        assert_eq!(first.spec.replicas, Some(3));
        assert_eq!(
            first
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("1")
        );
        assert_eq!(
            stored
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("1")
        );
        assert_eq!(
            stored.status.observed_generation,
            stored.metadata.generation
        );
        let progressing =
            util::get_condition(&stored.status, "Progressing").and_then(|c| c.reason.clone());
        assert!(
            matches!(
                progressing.as_deref(),
                Some("NewReplicaSetCreated") | Some("ReplicaSetUpdated")
            ),
            "{progressing:?}"
        );
    }

    fn cluster(nodes: &[&str]) -> Sim {
        let mut sim = Sim::new(SimConfig::default());
        for n in nodes {
            let mut node = crate::sim::api::types::Node::default();
            node.metadata.name = n.to_string();
            node.status.allocatable = labels(&[("cpu", "4"), ("memory", "8Gi"), ("pods", "110")]);
            sim.submit(ApiRequest::Create(Object::Node(node)))
                .expect("node created");
        }
        sim
    }

    fn submit_deployment(sim: &mut Sim, d: Deployment) {
        let mut d = d;
        d.metadata = ObjectMeta {
            name: "web".into(),
            namespace: "default".into(),
            ..Default::default()
        };
        d.status = DeploymentStatus::default();
        sim.submit(ApiRequest::Create(Object::Deployment(d)))
            .expect("deployment created");
    }

    fn live(sim: &Sim) -> Deployment {
        sim.get(&web())
            .and_then(|o| o.as_deployment())
            .expect("deployment exists")
            .clone()
    }

    fn live_rss(sim: &Sim) -> Vec<ReplicaSet> {
        sim.api
            .list(Kind::ReplicaSet)
            .filter_map(|o| o.as_replica_set().cloned())
            .collect()
    }

    fn set_image(sim: &mut Sim, image: &str) {
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}});
        sim.submit(ApiRequest::Patch {
            key: web(),
            patch,
            status: false,
        })
        .expect("patched");
    }

    /// ScalingReplicaSet messages in the order the controller recorded them.
    fn scaling_events(sim: &Sim) -> Vec<String> {
        sim.trace()
            .entries()
            .filter_map(|e| match &e.kind {
                crate::sim::machinery::trace::TraceKind::Event {
                    reason, message, ..
                } if reason == "ScalingReplicaSet" => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    fn rolled_out(sim: &Sim) -> bool {
        rollout_status_message(&live(sim), None).is_ok_and(|(_, done)| done)
    }

    #[test]
    fn a_rolling_update_through_the_world_stays_within_surge_and_availability_and_completes() {
        let mut sim = cluster(&["node-1", "node-2"]);
        submit_deployment(&mut sim, deploy(3, "nginx:1.27"));
        sim.advance_to(60_000, usize::MAX);
        assert!(
            rolled_out(&sim),
            "{:?}",
            rollout_status_message(&live(&sim), None)
        );
        let first = live_rss(&sim);
        assert_eq!(first.len(), 1);
        let old_name = first[0].metadata.name.clone();

        set_image(&mut sim, "nginx:1.28");
        let mut t = sim.now();
        while t < 180_000 {
            t += 250;
            sim.advance_to(t, usize::MAX);
            let rss = live_rss(&sim);
            let spec: i32 = rss.iter().map(util::rs_replicas).sum();
            let available: i32 = rss.iter().map(|r| r.status.available_replicas).sum();
            assert!(
                spec <= 4,
                "at {t} ms the ReplicaSets ask for {spec} > replicas + maxSurge"
            );
            assert!(
                available >= 3,
                "at {t} ms only {available} available < replicas - maxUnavailable"
            );
        }
        assert!(
            rolled_out(&sim),
            "{:?}",
            rollout_status_message(&live(&sim), None)
        );
        let d = live(&sim);
        let new_name = format!("web-{}", compute_hash(&d.spec.template, None));
        assert_eq!(
            d.metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("2")
        );
        assert_eq!(
            condition(&d, "Progressing"),
            (
                "True",
                "NewReplicaSetAvailable",
                &*format!("ReplicaSet \"{new_name}\" has successfully progressed.")
            )
        );
        let sizes: Vec<(String, i32)> = live_rss(&sim)
            .iter()
            .map(|r| (r.metadata.name.clone(), util::rs_replicas(r)))
            .collect();
        assert!(
            sizes.contains(&(new_name.clone(), 3)) && sizes.contains(&(old_name.clone(), 0)),
            "{sizes:?}"
        );
        let events = scaling_events(&sim);
        let rollout: Vec<&str> = events.iter().skip(1).map(String::as_str).collect();
        assert_eq!(
            rollout,
            [
                format!("Scaled up replica set {new_name} from 0 to 1"),
                format!("Scaled down replica set {old_name} from 3 to 2"),
                format!("Scaled up replica set {new_name} from 1 to 2"),
                format!("Scaled down replica set {old_name} from 2 to 1"),
                format!("Scaled up replica set {new_name} from 2 to 3"),
                format!("Scaled down replica set {old_name} from 1 to 0"),
            ]
        );
    }

    #[test]
    fn a_broken_image_stalls_the_rollout_and_the_progress_deadline_reports_it() {
        let mut sim = cluster(&["node-1"]);
        let mut d = deploy(3, "nginx:1.27");
        d.spec.progress_deadline_seconds = Some(60);
        submit_deployment(&mut sim, d);
        sim.advance_to(60_000, usize::MAX);
        assert!(rolled_out(&sim));
        sim.inject(crate::sim::faults::Fault::BreakImage {
            image: "nginx:broken".into(),
        })
        .expect("fault injected");
        set_image(&mut sim, "nginx:broken");
        let start = sim.now();
        sim.advance_to(start + 45_000, usize::MAX);
        let d = live(&sim);
        let new_name = format!("web-{}", compute_hash(&d.spec.template, None));
        let mut sizes: Vec<i32> = live_rss(&sim).iter().map(util::rs_replicas).collect();
        sizes.sort();
        assert_eq!(
            sizes,
            [1, 3],
            "the unavailable new pod blocks any scale-down"
        );
        assert_eq!(condition(&d, "Progressing").0, "True");
        sim.advance_to(start + 90_000, usize::MAX);
        let d = live(&sim);
        let msg = format!("ReplicaSet \"{new_name}\" has timed out progressing.");
        assert_eq!(
            condition(&d, "Progressing"),
            ("False", "ProgressDeadlineExceeded", msg.as_str())
        );
        assert_eq!(
            condition(&d, "Available").0,
            "True",
            "the old pods still serve"
        );
        assert_eq!(
            rollout_status_message(&d, None),
            Err("deployment \"web\" exceeded its progress deadline".into())
        );
    }

    #[test]
    fn pause_holds_template_changes_and_restart_after_resume_rolls_out_a_new_revision() {
        let mut sim = cluster(&["node-1"]);
        submit_deployment(&mut sim, deploy(2, "nginx:1.27"));
        sim.advance_to(60_000, usize::MAX);
        let pause = json!({"spec": {"paused": true}});
        sim.submit(ApiRequest::Patch {
            key: web(),
            patch: pause,
            status: false,
        })
        .expect("paused");
        set_image(&mut sim, "nginx:1.28");
        sim.advance_to(90_000, usize::MAX);
        assert_eq!(live_rss(&sim).len(), 1, "no rollout while paused");
        assert_eq!(
            condition(&live(&sim), "Progressing"),
            ("Unknown", "DeploymentPaused", "Deployment is paused")
        );
        assert_eq!(
            restart_patch(&live(&sim), sim.now()),
            Err("can't restart paused deployment (run rollout resume first)".into())
        );
        let resume = json!({"spec": {"paused": null}});
        sim.submit(ApiRequest::Patch {
            key: web(),
            patch: resume,
            status: false,
        })
        .expect("resumed");
        sim.advance_to(150_000, usize::MAX);
        assert!(
            rolled_out(&sim),
            "{:?}",
            rollout_status_message(&live(&sim), None)
        );
        assert_eq!(live_rss(&sim).len(), 2);
        let patch = restart_patch(&live(&sim), sim.now()).expect("not paused");
        sim.submit(ApiRequest::Patch {
            key: web(),
            patch,
            status: false,
        })
        .expect("restarted");
        sim.advance_to(250_000, usize::MAX);
        assert!(
            rolled_out(&sim),
            "{:?}",
            rollout_status_message(&live(&sim), None)
        );
        let d = live(&sim);
        assert_eq!(
            d.metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("3")
        );
        assert!(d
            .spec
            .template
            .metadata
            .annotations
            .contains_key(util::RESTARTED_AT_ANNOTATION));
        assert_eq!(live_rss(&sim).len(), 3);
    }

    #[test]
    fn rollout_undo_through_the_world_turns_revision_1_into_revision_3() {
        let mut sim = cluster(&["node-1"]);
        submit_deployment(&mut sim, deploy(2, "nginx:1.27"));
        sim.advance_to(60_000, usize::MAX);
        set_image(&mut sim, "nginx:1.28");
        sim.advance_to(180_000, usize::MAX);
        assert!(rolled_out(&sim));
        let rss = live_rss(&sim);
        let refs: Vec<&ReplicaSet> = rss.iter().collect();
        let plan = rollback_template(&live(&sim), &refs, None).expect("a previous revision exists");
        let undone = plan.apply_to(&live(&sim)).expect("not skipped");
        sim.submit(ApiRequest::Update(Object::Deployment(undone)))
            .expect("rolled back");
        sim.advance_to(300_000, usize::MAX);
        assert!(
            rolled_out(&sim),
            "{:?}",
            rollout_status_message(&live(&sim), None)
        );
        let d = live(&sim);
        assert_eq!(
            d.metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("3")
        );
        let current = live_rss(&sim)
            .into_iter()
            .find(|r| util::rs_replicas(r) == 2)
            .expect("one RS runs everything");
        assert_eq!(
            current
                .metadata
                .annotations
                .get(REVISION_ANNOTATION)
                .map(String::as_str),
            Some("3")
        );
        assert_eq!(
            current
                .metadata
                .annotations
                .get(REVISION_HISTORY_ANNOTATION)
                .map(String::as_str),
            Some("1")
        );
        assert_eq!(
            live_rss(&sim).len(),
            2,
            "rolling back re-uses the revision-1 ReplicaSet"
        );
    }

    #[test]
    fn recreate_through_the_world_never_runs_old_and_new_pods_together() {
        let mut sim = cluster(&["node-1"]);
        submit_deployment(&mut sim, recreate(deploy(2, "nginx:1.27")));
        sim.advance_to(60_000, usize::MAX);
        assert!(rolled_out(&sim));
        let old_hash = live_rss(&sim)[0].metadata.labels[POD_TEMPLATE_HASH_LABEL].clone();
        set_image(&mut sim, "nginx:1.28");
        let mut t = sim.now();
        while t < 200_000 {
            t += 250;
            sim.advance_to(t, usize::MAX);
            let hashes: BTreeSet<String> = sim
                .api
                .list(Kind::Pod)
                .filter_map(|o| o.as_pod())
                .filter(|p| p.status.phase != "Succeeded" && p.status.phase != "Failed")
                .filter_map(|p| p.metadata.labels.get(POD_TEMPLATE_HASH_LABEL).cloned())
                .collect();
            assert!(
                hashes.len() <= 1,
                "at {t} ms pods of two templates exist: {hashes:?}"
            );
        }
        assert!(
            rolled_out(&sim),
            "{:?}",
            rollout_status_message(&live(&sim), None)
        );
        let pods: Vec<String> = sim
            .api
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter_map(|p| p.metadata.labels.get(POD_TEMPLATE_HASH_LABEL).cloned())
            .collect();
        assert!(
            pods.len() == 2 && pods.iter().all(|h| *h != old_hash),
            "{pods:?}"
        );
    }
}
