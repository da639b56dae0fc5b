//! An edge-triggered ReplicaSet controller: a teaching device, NOT how Kubernetes works (see
//! [`crate::sim::faults::EDGE_TRIGGERED_NOTE`]).
//!
//! It runs in place of the real controller (`replicaset/mod.rs`, which stays faithful) when the
//! learner sets `SetTriggerMode {component: replicaset, mode: edge}`. It acts only on the change
//! each watch event carries, the way a naive event-driven design would:
//! - ReplicaSet ADDED → create `spec.replicas` pods;
//! - `spec.replicas` changed from a to b → create b − a pods, or delete a − b;
//! - an owned pod DELETED (by someone else) → create one pod.
//!
//! It never lists the pods to count them, so nothing repairs a missed event: a lost pod DELETED
//! leaves the ReplicaSet one pod short for good, while the level-triggered controller heals at the
//! next event, relist or resync. The world runs it without relists' or resyncs' keys. Status is
//! still written from the cache, so the learner sees `status.replicas` stuck below `spec`.
//! Requests that fail are remembered as deltas and retried, so the only thing it loses is what it
//! never saw.

use std::rc::Rc;

use super::rs_event;
use crate::sim::api::types::{
    Kind, Object, ObjectKey, ObjectMeta, OwnerReference, Pod, PodStatus, ReplicaSet,
    ReplicaSetStatus, Str,
};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sort::StableSort;
use crate::vec_map::SlotMap;

/// One change an event carried, as the edge-triggered controller remembers it until its pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delta {
    /// The ReplicaSet appeared with this many replicas.
    Added { replicas: usize },
    /// `spec.replicas` changed.
    Scaled { from: usize, to: usize },
    /// An owned pod was deleted by someone else.
    PodDeleted { pod: String },
    /// Creates that failed and are owed.
    RetryCreate { count: usize },
    /// Deletes that failed and are owed.
    RetryDelete { count: usize },
}

impl Delta {
    /// Pods to create (positive) or delete (negative) for this change.
    fn effect(&self) -> i64 {
        match self {
            Delta::Added { replicas } => *replicas as i64,
            Delta::Scaled { from, to } => *to as i64 - *from as i64,
            Delta::PodDeleted { .. } => 1,
            Delta::RetryCreate { count } => *count as i64,
            Delta::RetryDelete { count } => -(*count as i64),
        }
    }

    fn describe(&self) -> String {
        match self {
            Delta::Added { replicas } => format!("ReplicaSet ADDED (replicas {replicas})"),
            Delta::Scaled { from, to } => format!("replicas {from}→{to}"),
            Delta::PodDeleted { pod } => format!("pod {pod} DELETED"),
            Delta::RetryCreate { count } => format!("{count} failed create(s) owed"),
            Delta::RetryDelete { count } => format!("{count} failed delete(s) owed"),
        }
    }
}

/// The edge-triggered ReplicaSet controller (component `replicaset-controller` in edge mode).
#[derive(Clone, Debug, Default)]
pub struct EdgeReplicaSetController {
    /// Changes seen per ReplicaSet and not yet acted on.
    pending: SlotMap<ObjectKey, Vec<Delta>>,
    /// Pods it deleted itself (→ for which ReplicaSet): their DELETED is not a loss to make up for.
    deleted_by_me: SlotMap<ObjectKey, ObjectKey>,
}

impl EdgeReplicaSetController {
    /// A fresh instance.
    pub fn new() -> Self {
        Self::default()
    }

    /// The changes waiting for a ReplicaSet's next pass (for tests and the UI).
    pub fn pending(&self, rs: &ObjectKey) -> &[Delta] {
        self.pending.get(rs).map_or(&[], |v| v.as_slice())
    }

    fn push(&mut self, rs: &ObjectKey, delta: Delta) {
        self.pending
            .get_or_insert_with(rs.clone(), Vec::new)
            .push(delta);
    }
}

fn replicas_of(rs: &ReplicaSet) -> usize {
    rs.spec.replicas.unwrap_or(1).max(0) as usize
}

fn pod_key(pod: &Pod) -> ObjectKey {
    ObjectKey::of(Kind::Pod, &pod.metadata)
}

/// The cached ReplicaSet a pod names as its controller, if it is still that one.
fn owner_of(pod: &Pod, cache: &Cache) -> Option<ObjectKey> {
    let r = pod
        .metadata
        .controller_ref()
        .filter(|r| r.kind == "ReplicaSet")?;
    let key = ObjectKey::new(Kind::ReplicaSet, &pod.metadata.namespace, &r.name);
    (cache.get(&key)?.meta().uid == r.uid).then_some(key)
}

/// The ReplicaSet a pod we sent names, without checking the cache.
fn owner_key(pod: &Pod) -> Option<(ObjectKey, String)> {
    let r = pod.metadata.controller_ref()?;
    Some((
        ObjectKey::shared(Kind::ReplicaSet, &pod.metadata.namespace, &r.name),
        r.uid.to_string(),
    ))
}

/// The same pod the real controller creates: template labels and annotations, `generateName:
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
            owner_references: vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: rs.metadata.name.clone(),
                uid: rs.metadata.uid.clone(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }],
            ..Default::default()
        },
        spec: t.spec.clone().into(),
        status: PodStatus::default(),
    }
}

impl Controller for EdgeReplicaSetController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::ReplicaSet
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::ReplicaSet, Kind::Pod]
    }

    /// Remembers the delta the event carries; the pass acts on it.
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
                    WatchEventType::Added => {
                        self.push(
                            &key,
                            Delta::Added {
                                replicas: replicas_of(rs),
                            },
                        );
                        vec![key]
                    }
                    WatchEventType::Modified => {
                        let before = old.and_then(|o| o.as_replica_set()).map(replicas_of);
                        if let Some(from) = before.filter(|&b| b != replicas_of(rs)) {
                            self.push(
                                &key,
                                Delta::Scaled {
                                    from,
                                    to: replicas_of(rs),
                                },
                            );
                        }
                        vec![key]
                    }
                    WatchEventType::Deleted => {
                        self.pending.remove(&key);
                        Vec::new()
                    }
                }
            }
            Object::Pod(pod) => {
                let Some(rs) = owner_of(pod, cache) else {
                    return Vec::new();
                };
                if ev.type_ == WatchEventType::Deleted
                    && self.deleted_by_me.remove(&pod_key(pod)).is_none()
                {
                    self.push(
                        &rs,
                        Delta::PodDeleted {
                            pod: pod.metadata.name.to_string(),
                        },
                    );
                }
                // Other pod changes only refresh the status.
                vec![rs]
            }
            _ => Vec::new(),
        }
    }

    /// Never: an edge-triggered controller does not look at everything again.
    fn keys_for_resync(&self, _cache: &Cache) -> Vec<ObjectKey> {
        Vec::new()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let Some(rs) = ctx.cache.get(key).and_then(|o| o.as_replica_set()) else {
            self.pending.remove(key);
            out.record = Some(ReconcileRecord {
                observed: "ReplicaSet not in cache (deleted)".into(),
                desired: String::new(),
                diff: String::new(),
            });
            return out;
        };
        let deltas = self.pending.remove(key).unwrap_or_default();
        let net: i64 = deltas.iter().map(Delta::effect).sum();
        let owned: Vec<&Pod> = ctx
            .cache
            .controlled_by(&rs.metadata.uid)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.is_active())
            .collect();
        let replicas = replicas_of(rs);
        let diff = if net > 0 && rs.metadata.deletion_timestamp.is_none() {
            let pod = pod_from_template(rs);
            out.batch(vec![ApiRequest::Create(Object::from(pod)); net as usize]);
            format!("act on the delta: create {net}")
        } else if net < 0 {
            // Newest first: the choice of victims is the only thing it reads the cache for.
            let mut victims: Vec<&Pod> = owned
                .iter()
                .copied()
                .filter(|p| !self.deleted_by_me.contains_key(&pod_key(p)))
                .collect();
            victims.stable_sort_by(|a, b| {
                b.metadata
                    .creation_timestamp
                    .cmp(&a.metadata.creation_timestamp)
                    .then_with(|| b.metadata.name.cmp(&a.metadata.name))
            });
            let mut deletes = Vec::new();
            for p in victims.into_iter().take(net.unsigned_abs() as usize) {
                self.deleted_by_me.insert(pod_key(p), key.clone());
                deletes.push(ApiRequest::Delete {
                    key: pod_key(p),
                    options: DeleteOptions::default(),
                });
            }
            let n = deletes.len();
            out.batch(deletes);
            format!("act on the delta: delete {n}")
        } else if deltas.is_empty() && owned.len() != replicas {
            // The gap is there to see, but an edge-triggered pass does not look for it.
            format!(
                "no delta to act on (the cache shows {} of {replicas} pods: not compared)",
                owned.len()
            )
        } else {
            String::new()
        };

        let status = status_from_cache(rs, &owned, ctx.now);
        if status != rs.status {
            let mut updated = rs.clone();
            updated.status = status;
            out.batch(vec![ApiRequest::UpdateStatus(Object::from(updated))]);
        }
        let observed = if deltas.is_empty() {
            "no new delta".to_string()
        } else {
            deltas
                .iter()
                .map(Delta::describe)
                .collect::<Vec<_>>()
                .join("; ")
        };
        out.record = Some(ReconcileRecord {
            observed: format!("edge-triggered: {observed}"),
            desired: format!("replicas: {replicas}"),
            diff,
        });
        out
    }

    fn on_response(
        &mut self,
        req: &ApiRequest,
        result: &ApiResult,
        _now: crate::sim::api::types::Millis,
    ) {
        let Err(e) = result else { return };
        match req {
            ApiRequest::Create(Object::Pod(pod)) => {
                if let Some((rs, _)) = owner_key(pod) {
                    self.push(&rs, Delta::RetryCreate { count: 1 });
                }
            }
            ApiRequest::Delete { key, .. } if key.kind == Kind::Pod && e.code() != 404 => {
                if let Some(rs) = self.deleted_by_me.remove(key) {
                    self.push(&rs, Delta::RetryDelete { count: 1 });
                }
            }
            _ => {}
        }
    }

    fn events_for_response(&mut self, req: &ApiRequest, result: &ApiResult) -> Vec<EventRecord> {
        match req {
            ApiRequest::Create(Object::Pod(pod)) => {
                let Some((rs, uid)) = owner_key(pod) else {
                    return Vec::new();
                };
                vec![match result {
                    Ok(created) => rs_event(
                        "Normal",
                        &rs,
                        &uid,
                        "SuccessfulCreate",
                        Str::concat(&["Created pod: ", &created.meta().name]),
                    ),
                    Err(e) => rs_event(
                        "Warning",
                        &rs,
                        &uid,
                        "FailedCreate",
                        format!("Error creating: {}", e.message),
                    ),
                }]
            }
            _ => Vec::new(),
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        match req {
            ApiRequest::Create(Object::Pod(pod)) => {
                if let Some((rs, _)) = owner_key(pod) {
                    self.push(&rs, Delta::RetryCreate { count: 1 });
                }
            }
            ApiRequest::Delete { key, .. } => {
                if let Some(rs) = self.deleted_by_me.remove(key) {
                    self.push(&rs, Delta::RetryDelete { count: 1 });
                }
            }
            _ => {}
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::default()))
    }
}

/// Counts from the cache, as the real controller's `calculateStatus` does.
fn status_from_cache(
    rs: &ReplicaSet,
    owned: &[&Pod],
    now: crate::sim::api::types::Millis,
) -> ReplicaSetStatus {
    let min_ready = rs.spec.min_ready_seconds as i64;
    let labels = &rs.spec.template.metadata.labels;
    let mut status = rs.status.clone();
    status.replicas = owned.len() as i32;
    status.fully_labeled_replicas = owned
        .iter()
        .filter(|p| {
            labels
                .iter()
                .all(|(k, v)| p.metadata.labels.get(k) == Some(v))
        })
        .count() as i32;
    status.ready_replicas = owned.iter().filter(|p| p.is_ready()).count() as i32;
    status.available_replicas = owned
        .iter()
        .filter(|p| p.is_ready() && p.is_available(min_ready, now))
        .count() as i32;
    status.observed_generation = rs.metadata.generation;
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{LabelSelector, PodTemplateSpec, ReplicaSetSpec, StringMap};
    use crate::sim::api::WatchEvent;
    use crate::sim::controllers::testing;

    fn labels() -> StringMap {
        [("app".to_string(), "web".to_string())].into()
    }

    fn rs(replicas: i32) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                name: "web".into(),
                namespace: "default".into(),
                uid: "uid-web".into(),
                resource_version: "3".into(),
                generation: 1,
                ..Default::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                selector: LabelSelector {
                    match_labels: labels(),
                    ..Default::default()
                },
                template: PodTemplateSpec {
                    metadata: ObjectMeta {
                        labels: labels(),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                ..Default::default()
            },
            status: ReplicaSetStatus::default(),
        }
    }

    fn pod_of(r: &ReplicaSet, name: &str) -> Pod {
        let mut p = pod_from_template(r);
        p.metadata.name = name.into();
        p.metadata.uid = format!("uid-{name}").into();
        p
    }

    fn ev(type_: WatchEventType, obj: Object) -> WatchEvent {
        WatchEvent::new(type_, Rc::new(obj), 10, 0)
    }

    fn run(ctrl: &mut EdgeReplicaSetController, cache: &Cache, key: &ObjectKey) -> Outcome {
        testing::reconcile_once(ctrl, cache, key, 0)
    }

    fn creates(out: &Outcome) -> usize {
        out.requests()
            .filter(|r| matches!(r, ApiRequest::Create(_)))
            .count()
    }

    #[test]
    fn a_new_replica_set_gets_spec_replicas_pods_from_its_added_event() {
        let mut ctrl = EdgeReplicaSetController::new();
        let mut cache = Cache::new();
        let r = Object::from(rs(3));
        cache.upsert(Rc::new(r.clone()));
        let keys = ctrl.keys_for_event(&ev(WatchEventType::Added, r.clone()), None, &cache);
        assert_eq!(keys, vec![r.key()]);
        assert_eq!(creates(&run(&mut ctrl, &cache, &r.key())), 3);
        // A second pass with no new delta does nothing, whatever the cache shows.
        let again = run(&mut ctrl, &cache, &r.key());
        assert_eq!(creates(&again), 0);
        assert!(again.record.unwrap().diff.contains("not compared"));
    }

    #[test]
    fn a_pod_deleted_by_someone_else_is_replaced_once_and_its_own_deletes_are_not() {
        let mut ctrl = EdgeReplicaSetController::new();
        let mut cache = Cache::new();
        let r = rs(2);
        cache.upsert(Rc::new(Object::from(r.clone())));
        let gone = Object::from(pod_of(&r, "web-a"));
        ctrl.keys_for_event(&ev(WatchEventType::Deleted, gone), None, &cache);
        let key = Object::from(r.clone()).key();

        assert_eq!(creates(&run(&mut ctrl, &cache, &key)), 1);

        ctrl.deleted_by_me
            .insert(ObjectKey::new(Kind::Pod, "default", "web-b"), key.clone());
        let mine = Object::from(pod_of(&r, "web-b"));
        ctrl.keys_for_event(&ev(WatchEventType::Deleted, mine), None, &cache);
        assert_eq!(creates(&run(&mut ctrl, &cache, &key)), 0);
    }

    #[test]
    fn scaling_down_deletes_the_difference_newest_first() {
        let mut ctrl = EdgeReplicaSetController::new();
        let mut cache = Cache::new();
        let old = rs(3);
        let new = rs(1);
        cache.upsert(Rc::new(Object::from(new.clone())));
        for (i, name) in ["web-a", "web-b", "web-c"].iter().enumerate() {
            let mut p = pod_of(&new, name);
            p.metadata.creation_timestamp = Some(crate::sim::api::types::Time(i as u64 * 1000));
            cache.upsert(Rc::new(Object::from(p)));
        }
        let old_obj = Rc::new(Object::from(old));
        ctrl.keys_for_event(
            &ev(WatchEventType::Modified, Object::from(new.clone())),
            Some(&old_obj),
            &cache,
        );
        let out = run(&mut ctrl, &cache, &Object::from(new).key());
        let deleted: Vec<String> = out
            .requests()
            .filter_map(|r| match r {
                ApiRequest::Delete { key, .. } => Some(key.name.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(deleted, ["web-c", "web-b"]);
    }
}
