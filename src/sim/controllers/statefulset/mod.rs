//! The StatefulSet controller (`statefulset-controller`): one pod per identity, each with its own
//! claims, made and replaced in ordinal order, as `pkg/controller/statefulset` does.
//!
//! One pass (`sync` → `UpdateStatefulSet`): claim the pods whose names and labels say they belong
//! to the set, find or record the ControllerRevision of the current template, then walk the live
//! ordinals (create what is missing, claims first; replace pods that ended; fix identity and
//! storage), delete condemned pods from the highest ordinal down, replace pods at an old revision
//! from the highest ordinal down to the partition, write status when it changed, and delete
//! revisions beyond the history limit. Under `OrderedReady` each step waits for every earlier pod
//! to be Running and Ready and makes one change per pass; under `Parallel` scaling runs in
//! slow-start batches without waiting.
//!
//! Unlike a ReplicaSet the controller keeps no expectations: a pod's name is its identity, so a
//! pass that runs on a stale cache gets AlreadyExists instead of a duplicate. That is also why a
//! pod on a dead node is never replaced until its object is really gone.

pub mod utils;

#[cfg(test)]
mod tests;

use std::rc::Rc;
use std::sync::OnceLock;

use serde_json::{json, Value as Json};

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::statefulset::{StatefulSet, StatefulSetStatus, ROLLING_UPDATE};
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Pod, Str};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, StatusReason, WatchEvent};
use crate::sim::controllers::replicaset::{adopt_patch_for, release_patch, slow_start_batches};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sort::StableSort;
use crate::vec_map::SlotMap;
use utils::*;

/// An event that waits for the answer to the request it reports on.
#[derive(Clone, Debug)]
struct Pending {
    set: ObjectKey,
    set_uid: String,
    /// `create`, `delete` or `update`.
    action: &'static str,
    pod: String,
    /// The claim, for claim events.
    claim: Option<String>,
}

impl Pending {
    /// `recordPodEvent` / `recordClaimEvent`, worded as upstream words them.
    fn event(&self, result: &ApiResult) -> Option<EventRecord> {
        let (set, pod, action) = (&self.set.name, &self.pod, self.action);
        let verb = {
            let mut c = action.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        };
        let (type_, reason, message) = match (result, &self.claim) {
            (Err(e), _) if e.reason == StatusReason::AlreadyExists && action == "create" => {
                return None
            }
            (Ok(_), None) => (
                "Normal",
                format!("Successful{verb}"),
                format!("{action} Pod {pod} in StatefulSet {set} successful"),
            ),
            (Err(e), None) => (
                "Warning",
                format!("Failed{verb}"),
                format!(
                    "{action} Pod {pod} in StatefulSet {set} failed error: {}",
                    e.message
                ),
            ),
            (Ok(_), Some(claim)) => (
                "Normal",
                format!("Successful{verb}"),
                format!("{action} Claim {claim} Pod {pod} in StatefulSet {set} success"),
            ),
            (Err(e), Some(claim)) => (
                "Warning",
                format!("Failed{verb}"),
                format!(
                    "{action} Claim {claim} for Pod {pod} in StatefulSet {set} failed error: {}",
                    e.message
                ),
            ),
        };
        Some(EventRecord {
            type_,
            reason: reason.into(),
            message: message.into(),
            object: self.set.clone(),
            uid: self.set_uid.as_str().into(),
            field_path: Str::EMPTY,
        })
    }
}

/// The StatefulSet controller.
#[derive(Clone, Debug, Default)]
pub struct StatefulSetController {
    /// Per request key, the event its answer decides.
    pending: SlotMap<ObjectKey, Pending>,
}

impl StatefulSetController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The set a pod names as its controller.
fn owner_set_key(pod: &Pod, kinds: Kinds) -> Option<ObjectKey> {
    let r = pod
        .metadata
        .controller_ref()
        .filter(|r| r.kind == "StatefulSet" && r.api_version.starts_with("apps/"))?;
    Some(ObjectKey::new(kinds.set, &pod.metadata.namespace, &r.name))
}

fn read_set(obj: &Object) -> Option<StatefulSet> {
    obj.as_custom()
        .and_then(|c| StatefulSet::from_custom(c).ok())
}

/// `getPodStatefulSets`: the sets whose selector matches an orphan pod.
fn sets_selecting(pod: &Pod, cache: &Cache, kinds: Kinds) -> Vec<ObjectKey> {
    cache
        .list_ns(kinds.set, &pod.metadata.namespace)
        .filter(|o| {
            read_set(o).is_some_and(|s| {
                !s.spec.selector.is_empty() && s.spec.selector.matches(&pod.metadata.labels)
            })
        })
        .map(|o| o.key())
        .collect()
}

/// What one pass decided, built up as it walks the pods.
struct Pass<'a> {
    set: &'a StatefulSet,
    kinds: Kinds,
    cache: &'a Cache,
    now: Millis,
    out: Outcome,
    pending: Vec<(ObjectKey, Pending)>,
    /// What the pass did or waits on, for the loop panel.
    notes: Vec<String>,
}

impl Pass<'_> {
    fn pending(&mut self, key: ObjectKey, action: &'static str, pod: &str, claim: Option<String>) {
        self.pending.push((
            key,
            Pending {
                set: ObjectKey::of(self.kinds.set, &self.set.metadata),
                set_uid: self.set.metadata.uid.to_string(),
                action,
                pod: pod.to_string(),
                claim,
            },
        ));
    }

    fn claim_in_cache(&self, name: &str) -> Option<&Rc<Object>> {
        self.cache.get(&ObjectKey::new(
            self.kinds.claim,
            &self.set.metadata.namespace,
            name,
        ))
    }

    /// `createPersistentVolumeClaims` for the claims the cache does not have.
    fn missing_claims(&mut self, set: &StatefulSet, pod: &Pod) -> Vec<ApiRequest> {
        let mut reqs = Vec::new();
        for mut claim in claims_for(set, ordinal_of(pod), self.kinds.claim) {
            if self.claim_in_cache(&claim.metadata.name).is_some() {
                continue;
            }
            claim.metadata.owner_references =
                claim_owners(set, pod, false, &claim.metadata.owner_references);
            let key = ObjectKey::of(self.kinds.claim, &claim.metadata);
            self.pending(
                key,
                "create",
                &pod.metadata.name,
                Some(claim.metadata.name.to_string()),
            );
            reqs.push(ApiRequest::Create(Object::from(claim)));
        }
        reqs
    }

    /// `ClaimsMatchRetentionPolicy` / `UpdatePodClaimForRetentionPolicy`: patches the pod's
    /// claims whose owners are not what the policy wants.
    fn retention_patches(&self, pod: &Pod, condemned: bool) -> Vec<ApiRequest> {
        let mut reqs = Vec::new();
        for template in &self.set.spec.volume_claim_templates {
            let name = claim_name(self.set, &template.metadata.name, ordinal_of(pod));
            let Some(claim) = self.claim_in_cache(&name) else {
                continue;
            };
            let meta = claim.meta();
            // A claim another controller manages keeps its owners (upstream warns and moves on).
            if meta
                .controller_ref()
                .is_some_and(|r| r.uid != self.set.metadata.uid)
            {
                continue;
            }
            let wanted = claim_owners(self.set, pod, condemned, &meta.owner_references);
            if claim_owners_match(&meta.owner_references, &wanted) {
                continue;
            }
            let refs: Json = if wanted.is_empty() {
                Json::Null
            } else {
                json!(wanted)
            };
            reqs.push(ApiRequest::Patch {
                key: claim.key(),
                patch: json!({"metadata": {"ownerReferences": refs,
                    "resourceVersion": meta.resource_version}}),
                status: false,
            });
        }
        reqs
    }

    fn delete_pod(&mut self, pod: &Pod) -> ApiRequest {
        let key = ObjectKey::of(Kind::Pod, &pod.metadata);
        self.pending(key.clone(), "delete", &pod.metadata.name, None);
        ApiRequest::Delete {
            key,
            options: DeleteOptions::default(),
        }
    }
}

/// What processing one live replica asks for: requests in stages (claims before the pod), and
/// whether an ordered set must stop here.
struct Step {
    stages: Vec<Vec<ApiRequest>>,
    blocks: bool,
}

impl Step {
    fn wait() -> Step {
        Step {
            stages: Vec::new(),
            blocks: true,
        }
    }

    fn go() -> Step {
        Step {
            stages: Vec::new(),
            blocks: false,
        }
    }
}

/// One live replica: an existing pod, or the pod to make for an empty ordinal.
enum Replica<'a> {
    Existing(&'a Pod),
    New(Box<Pod>),
}

impl Replica<'_> {
    fn pod(&self) -> &Pod {
        match self {
            Replica::Existing(p) => p,
            Replica::New(p) => p,
        }
    }
}

/// `computeReplicaStatus` over the pods that exist.
fn replica_status<'a>(
    pods: impl Iterator<Item = &'a Pod>,
    min_ready: i32,
    now: Millis,
    current: &str,
    update: &str,
) -> StatefulSetStatus {
    let mut s = StatefulSetStatus::default();
    for pod in pods {
        if is_created(pod) {
            s.replicas += 1;
        }
        if is_running_and_ready(pod) {
            s.ready_replicas += 1;
            if is_running_and_available(pod, min_ready, now) {
                s.available_replicas += 1;
            }
        }
        if is_created(pod) && !is_terminating(pod) {
            let rev = pod_revision(pod);
            if rev == current {
                s.current_replicas += 1;
            }
            if rev == update {
                s.updated_replicas += 1;
            }
        }
    }
    s
}

impl StatefulSetController {
    /// `processReplica`.
    fn process_replica(pass: &mut Pass<'_>, replica: &Replica<'_>, monotonic: bool) -> Step {
        let set = pass.set;
        match replica {
            Replica::Existing(pod) if has_ended(pod) => {
                let mut step = Step::wait();
                if !is_terminating(pod) {
                    pass.notes.push(format!(
                        "{} {}: deleted to make again",
                        pod.metadata.name, pod.status.phase
                    ));
                    let req = pass.delete_pod(pod);
                    step.stages.push(vec![req]);
                }
                step
            }
            Replica::New(pod) => {
                let (_, when_scaled) = set.retention();
                if when_scaled == crate::sim::api::statefulset::DELETE {
                    let stale = set.spec.volume_claim_templates.iter().any(|t| {
                        let name = claim_name(set, &t.metadata.name, ordinal_of(pod));
                        pass.claim_in_cache(&name)
                            .is_some_and(|c| claim_is_stale(c.meta(), &pod.metadata.name, ""))
                    });
                    if stale {
                        pass.notes.push(format!(
                            "{}: a claim of its earlier pod awaits the garbage collector",
                            pod.metadata.name
                        ));
                        return Step::wait();
                    }
                }
                let claims = pass.missing_claims(set, pod);
                let key = ObjectKey::of(Kind::Pod, &pod.metadata);
                pass.pending(key, "create", &pod.metadata.name, None);
                pass.notes
                    .push(format!("{} missing: created", pod.metadata.name));
                Step {
                    stages: vec![
                        claims,
                        vec![ApiRequest::Create(Object::from((**pod).clone()))],
                    ],
                    blocks: monotonic,
                }
            }
            Replica::Existing(pod) => {
                let mut step = Step::go();
                if pod.status.phase == "Pending" {
                    step.stages.push(pass.missing_claims(set, pod));
                }
                let name = &pod.metadata.name;
                if monotonic {
                    let wait = if is_terminating(pod) {
                        Some("terminating")
                    } else if !is_running_and_ready(pod) {
                        Some("not Running and Ready")
                    } else if !is_running_and_available(pod, set.spec.min_ready_seconds, pass.now) {
                        Some("not available yet (minReadySeconds)")
                    } else {
                        None
                    };
                    if let Some(why) = wait {
                        pass.notes.push(format!("waiting: {name} is {why}"));
                        step.blocks = true;
                        return step;
                    }
                }
                if !identity_matches(set, pod) || !storage_matches(set, pod) {
                    let mut fixed = (*pod).clone();
                    update_identity(set, &mut fixed);
                    update_storage(set, &mut fixed);
                    let key = ObjectKey::of(Kind::Pod, &fixed.metadata);
                    pass.pending(key, "update", name, None);
                    step.stages
                        .push(vec![ApiRequest::Update(Object::from(fixed))]);
                }
                step.stages.push(pass.retention_patches(pod, false));
                step
            }
        }
    }

    /// `processCondemned`.
    fn process_condemned(
        pass: &mut Pass<'_>,
        pod: &Pod,
        first_unhealthy: Option<&str>,
        monotonic: bool,
    ) -> Step {
        let name = &pod.metadata.name;
        if is_terminating(pod) {
            if monotonic {
                pass.notes.push(format!("waiting: {name} is terminating"));
                return Step::wait();
            }
            return Step::go();
        }
        let first = first_unhealthy == Some(name.as_str());
        let min_ready = pass.set.spec.min_ready_seconds;
        if monotonic
            && !first
            && (!is_running_and_ready(pod) || !is_running_and_available(pod, min_ready, pass.now))
        {
            pass.notes.push(format!("waiting: {name} is not healthy"));
            return Step::wait();
        }
        pass.notes.push(format!("{name} beyond replicas: deleted"));
        let req = pass.delete_pod(pod);
        Step {
            stages: vec![vec![req]],
            blocks: true,
        }
    }
}

/// `runForAll`: in order, stopping at the first replica that blocks (ordered sets), or in
/// slow-start batches (1, 2, 4, …) where each batch's claims go before its pods (Parallel).
fn run_for_all(out: &mut Outcome, steps: Vec<Step>, monotonic: bool) -> bool {
    if monotonic {
        for step in steps {
            for stage in step.stages {
                out.batch(stage);
            }
            if step.blocks {
                return true;
            }
        }
        return false;
    }
    let mut steps = steps.into_iter();
    for size in slow_start_batches(steps.len()) {
        let group: Vec<Step> = steps.by_ref().take(size).collect();
        let depth = group.iter().map(|s| s.stages.len()).max().unwrap_or(0);
        for d in 0..depth {
            let batch: Vec<ApiRequest> = group
                .iter()
                .filter_map(|s| s.stages.get(d))
                .flatten()
                .cloned()
                .collect();
            out.batch(batch);
        }
    }
    false
}

fn watched() -> &'static [Kind] {
    static WATCHED: OnceLock<Vec<Kind>> = OnceLock::new();
    WATCHED.get_or_init(|| match kinds() {
        Some(k) => vec![Kind::Pod, k.set, k.revision, k.claim],
        None => Vec::new(),
    })
}

impl Controller for StatefulSetController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::StatefulSet
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        watched()
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let Some(kinds) = kinds() else {
            return Vec::new();
        };
        // The event's key, not one built anew from the object: most events are pods'.
        if ev.key.kind == kinds.set {
            return vec![(*ev.key).clone()];
        }
        // Revisions and claims are read from the cache, never waited on (upstream registers no
        // handlers for them).
        let Some(pod) = ev.object.as_pod() else {
            return Vec::new();
        };
        let mut keys = Vec::new();
        if let Some(old_owner) = old
            .and_then(|o| o.as_pod())
            .and_then(|p| owner_set_key(p, kinds))
        {
            keys.push(old_owner);
        }
        match owner_set_key(pod, kinds) {
            Some(k) => keys.push(k),
            None => keys.extend(sets_selecting(pod, cache, kinds)),
        }
        keys.stable_sort();
        keys.dedup();
        keys
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        kinds().map_or_else(Vec::new, |k| cache.list(k.set).map(|o| o.key()).collect())
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let (Some(kinds), Some(obj)) = (kinds(), ctx.cache.get(key)) else {
            let mut out = Outcome::done();
            out.record = Some(ReconcileRecord {
                observed: "StatefulSet not in cache (deleted)".into(),
                ..Default::default()
            });
            return out;
        };
        let (Some(custom), Some(set)) = (obj.as_custom(), read_set(obj)) else {
            return Outcome::done();
        };
        let mut pass = Pass {
            set: &set,
            kinds,
            cache: ctx.cache,
            now: ctx.now,
            out: Outcome::done(),
            pending: Vec::new(),
            notes: Vec::new(),
        };
        let status = self.sync(&mut pass, custom);
        let Pass {
            mut out,
            pending,
            notes,
            ..
        } = pass;
        self.pending.extend(pending);
        out.record = Some(ReconcileRecord {
            observed: format!(
                "{} pods ({} ready), revision {}",
                status.replicas,
                status.ready_replicas,
                if status.current_revision == status.update_revision {
                    status.update_revision.clone()
                } else {
                    format!("{} → {}", status.current_revision, status.update_revision)
                }
            ),
            desired: format!(
                "replicas: {} ({})",
                set.replicas(),
                if set.allows_burst() {
                    "Parallel"
                } else {
                    "OrderedReady"
                }
            ),
            diff: notes.join("; "),
        });
        out
    }

    fn events_for_response(&mut self, req: &ApiRequest, result: &ApiResult) -> Vec<EventRecord> {
        if !matches!(
            req,
            ApiRequest::Create(_) | ApiRequest::Delete { .. } | ApiRequest::Update(_)
        ) {
            return Vec::new();
        }
        self.pending
            .remove(&req.key())
            .and_then(|p| p.event(result))
            .into_iter()
            .collect()
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        self.pending.remove(&req.key());
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(StatefulSetController::new()))
    }
}

impl StatefulSetController {
    /// `syncStatefulSet` → `UpdateStatefulSet`; returns the status it computed.
    fn sync(&mut self, pass: &mut Pass<'_>, custom: &CustomObject) -> StatefulSetStatus {
        let set = pass.set;
        let kinds = pass.kinds;
        let ns = &set.metadata.namespace;
        let deleting = set.metadata.deletion_timestamp.is_some();

        // Claim: adopt orphans that match and are members, release owned pods that no longer do.
        let mut pods: Vec<&Pod> = Vec::new();
        let mut claims = Vec::new();
        for pod in pass.cache.list_ns(Kind::Pod, ns).filter_map(|o| o.as_pod()) {
            let matches = !set.spec.selector.is_empty()
                && set.spec.selector.matches(&pod.metadata.labels)
                && is_member_of(set, pod);
            match pod.metadata.controller_ref() {
                Some(r) if r.uid != set.metadata.uid => {}
                Some(_) if matches => pods.push(pod),
                Some(_) if !deleting => claims.push(release_patch(pod, &set.metadata.uid)),
                Some(_) => {}
                None if matches && !deleting && pod.metadata.deletion_timestamp.is_none() => {
                    claims.push(adopt_patch_for(pod, controller_ref(set)));
                    pods.push(pod);
                }
                None => {}
            }
        }
        pass.out.batch(claims);

        // Revisions.
        let revisions = revisions_of(set, pass.cache.list_ns(kinds.revision, ns));
        let template = custom
            .content
            .get("spec")
            .and_then(|s| s.get("template"))
            .cloned()
            .unwrap_or(Json::Null);
        let next = revisions.last().map_or(1, |r| r.revision + 1);
        let mut collision_count = set.status.collision_count.unwrap_or(0);
        let mut candidate = new_revision(set, &template, next, collision_count);
        let equal: Vec<&Revision> = revisions
            .iter()
            .filter(|r| r.data == candidate.data)
            .collect();
        let update = match (equal.last(), revisions.last()) {
            (Some(e), Some(last)) if e.name == last.name => (*e).clone(),
            (Some(e), _) => {
                // A rollback: the equal revision becomes the newest again.
                let mut e = (*e).clone();
                e.revision = next;
                pass.out.request(ApiRequest::Patch {
                    key: ObjectKey::new(kinds.revision, ns, &e.name),
                    patch: json!({"revision": next}),
                    status: false,
                });
                e
            }
            (None, _) => {
                // A name taken by a different revision is a hash collision: probe again.
                while revisions
                    .iter()
                    .any(|r| r.name == candidate.name && r.data != candidate.data)
                {
                    collision_count += 1;
                    candidate = new_revision(set, &template, next, collision_count);
                }
                if let Some(obj) = candidate.to_custom(kinds.revision) {
                    pass.out.request(ApiRequest::Create(Object::from(obj)));
                }
                candidate
            }
        };
        let current = revisions
            .iter()
            .find(|r| r.name == set.status.current_revision)
            .cloned()
            .unwrap_or_else(|| update.clone());
        let mut current_set = set.clone();
        if let Some(t) = current.template() {
            current_set.spec.template = t;
        }

        // Live replicas and condemned pods.
        let start = set.start_ordinal();
        let count = set.replicas().max(0) as usize;
        let mut slots: Vec<Option<&Pod>> = vec![None; count];
        let mut condemned: Vec<&Pod> = Vec::new();
        for pod in &pods {
            let ord = ordinal_of(pod);
            if in_ordinal_range(set, ord) {
                slots[(ord - start) as usize] = Some(pod);
            } else if ord >= 0 {
                condemned.push(pod);
            }
        }
        condemned.stable_sort_by_key(|p| std::cmp::Reverse(ordinal_of(p)));
        let replicas: Vec<Replica<'_>> = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| match slot {
                Some(p) => Replica::Existing(p),
                None => Replica::New(Box::new(new_versioned_pod(
                    &current_set,
                    set,
                    &current.name,
                    &update.name,
                    start + i as i32,
                ))),
            })
            .collect();
        let first_unhealthy = replicas
            .iter()
            .map(Replica::pod)
            .chain(condemned.iter().copied())
            .filter(|p| !is_healthy(p))
            .min_by_key(|p| ordinal_of(p))
            .map(|p| p.metadata.name.clone());

        let mut status = replica_status(
            pods.iter().copied(),
            set.spec.min_ready_seconds,
            pass.now,
            &current.name,
            &update.name,
        );
        if !deleting {
            self.manage(
                pass,
                &replicas,
                &condemned,
                first_unhealthy.as_deref(),
                &update.name,
                &mut status,
            );
        } else {
            pass.notes.push("being deleted: status only".into());
        }

        status.observed_generation = set.metadata.generation;
        status.current_revision = current.name.clone();
        status.update_revision = update.name.clone();
        status.collision_count = Some(collision_count);
        let spec_replicas = set.replicas();
        if set.update_strategy() == ROLLING_UPDATE
            && status.updated_replicas == spec_replicas
            && status.ready_replicas == spec_replicas
            && status.replicas == spec_replicas
        {
            status.current_replicas = status.updated_replicas;
            status.current_revision = status.update_revision.clone();
        }
        if status != set.status {
            let mut obj = custom.clone();
            obj.content.insert("status".into(), status.to_json());
            pass.out
                .request(ApiRequest::UpdateStatus(Object::from(obj)));
        }
        if set.spec.min_ready_seconds > 0 && status.available_replicas != spec_replicas {
            pass.out
                .requeue(u64::from(set.spec.min_ready_seconds.unsigned_abs()) * 1000);
        }

        // truncateHistory: non-live revisions beyond the limit, oldest first.
        let live = |name: &str| {
            name == current.name
                || name == update.name
                || name == status.current_revision
                || pods.iter().any(|p| pod_revision(p) == name)
        };
        let history: Vec<&Revision> = revisions.iter().filter(|r| !live(&r.name)).collect();
        let excess = history.len().saturating_sub(set.revision_history_limit());
        let deletes: Vec<ApiRequest> = history[..excess]
            .iter()
            .map(|r| ApiRequest::Delete {
                key: ObjectKey::new(kinds.revision, ns, &r.name),
                options: DeleteOptions::default(),
            })
            .collect();
        pass.out.batch(deletes);
        status
    }

    /// Everything `updateStatefulSet` does to pods once the revisions are known.
    fn manage(
        &mut self,
        pass: &mut Pass<'_>,
        replicas: &[Replica<'_>],
        condemned: &[&Pod],
        first_unhealthy: Option<&str>,
        update_revision: &str,
        status: &mut StatefulSetStatus,
    ) {
        let set = pass.set;
        let monotonic = !set.allows_burst();
        let steps: Vec<Step> = replicas
            .iter()
            .map(|r| Self::process_replica(pass, r, monotonic))
            .collect();
        let mut out = std::mem::take(&mut pass.out);
        let stopped = run_for_all(&mut out, steps, monotonic);
        pass.out = out;
        if stopped {
            return;
        }
        // Claims of condemned pods take the owners the retention policy gives them before the
        // pods go, so the garbage collector can follow.
        let fixes: Vec<ApiRequest> = condemned
            .iter()
            .flat_map(|p| pass.retention_patches(p, true))
            .collect();
        pass.out.batch(fixes);
        let steps: Vec<Step> = condemned
            .iter()
            .map(|p| Self::process_condemned(pass, p, first_unhealthy, monotonic))
            .collect();
        let mut out = std::mem::take(&mut pass.out);
        let stopped = run_for_all(&mut out, steps, monotonic);
        pass.out = out;
        if stopped || set.update_strategy() != ROLLING_UPDATE {
            return;
        }
        // Rolling update: from the highest index down to the partition, replace one pod at an
        // older revision, and wait while any of them is unhealthy.
        let min = set.partition().max(0) as usize;
        for replica in replicas.iter().skip(min).rev() {
            let pod = replica.pod();
            if pod_revision(pod) != update_revision && !is_terminating(pod) {
                pass.notes.push(format!(
                    "{} at an older revision: deleted",
                    pod.metadata.name
                ));
                let req = pass.delete_pod(pod);
                pass.out.request(req);
                status.current_replicas -= 1;
                return;
            }
            if !is_healthy(pod)
                || !is_running_and_available(pod, set.spec.min_ready_seconds, pass.now)
            {
                pass.notes.push(format!(
                    "rolling update waits: {} is not available",
                    pod.metadata.name
                ));
                return;
            }
        }
    }
}
