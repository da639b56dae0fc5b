//! The taint eviction controller (`taint-eviction-controller`): deletes pods from nodes with
//! NoExecute taints they do not tolerate, or once their `tolerationSeconds` run out.
//!
//! Modelled on `pkg/controller/tainteviction/taint_eviction.go` (the NoExecuteTaintManager that
//! lived inside the node lifecycle controller until 1.29):
//! - For each pod on a node with NoExecute taints, `GetMatchingTolerations` picks, per taint, the
//!   first toleration that tolerates it. Any untolerated taint: delete now. Otherwise the smallest
//!   `tolerationSeconds` of those tolerations decides (≤ 0 means now); none set means never.
//! - The clock starts when *this controller* first sees the pod under the taints (its in-memory
//!   `TimedWorkerQueue`), not at the taint's `timeAdded`; a restarted controller starts over.
//! - When the work fires: Normal `TaintManagerEviction` "Marking for deletion Pod ns/name", the
//!   `DisruptionTarget` condition (`DeletionByTaintManager`), then a plain DELETE — PDBs are not
//!   consulted. Work cancelled before it fires (taints gone, toleration now forever, pod gone)
//!   records "Cancelling deletion of Pod ns/name".
//!
//! Deliberate simplifications: the condition is written with `UpdateStatus` and the cached
//! resourceVersion (Kubernetes patches it after a fresh GET, so it never conflicts); the Event
//! carries the pod's uid when known (Kubernetes' reference has none, which hides these events from
//! `kubectl describe pod` in some versions).

use std::rc::Rc;

use crate::sim::api::types::{
    set_condition, Condition, Kind, Millis, Node, Object, ObjectKey, Pod, Str, Taint, Time,
    Toleration,
};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::{Cache, Indexers};
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::vec_map::SlotMap;

/// The reason of the `DisruptionTarget` condition this controller adds.
pub const DELETION_BY_TAINT_MANAGER: &str = "DeletionByTaintManager";

/// A node's NoExecute taints (`getNoExecuteTaints`).
pub fn no_execute_taints(node: &Node) -> Vec<&Taint> {
    node.spec
        .taints
        .iter()
        .filter(|t| t.effect == "NoExecute")
        .collect()
}

/// `GetMatchingTolerations`: whether every taint is tolerated, and the first toleration per taint.
pub fn matching_tolerations<'a>(
    taints: &[&Taint],
    tolerations: &'a [Toleration],
) -> (bool, Vec<&'a Toleration>) {
    let mut used = Vec::new();
    for taint in taints {
        match tolerations.iter().find(|t| t.tolerates(taint)) {
            Some(t) => used.push(t),
            None => return (false, Vec::new()),
        }
    }
    (true, used)
}

/// `getMinTolerationTime`: Some(ms) to wait (0 when any is ≤ 0), or None for "tolerate forever".
pub fn min_toleration_time(used: &[&Toleration]) -> Option<Millis> {
    if used.is_empty() {
        return Some(0);
    }
    let mut min: Option<i64> = None;
    for t in used {
        if let Some(s) = t.toleration_seconds {
            if s <= 0 {
                return Some(0);
            }
            min = Some(min.map_or(s, |m| m.min(s)));
        }
    }
    // Clamped: tolerationSeconds is an int64, and a deadline must not overflow.
    min.map(crate::sim::api::limits::seconds_to_millis)
}

/// One pod's entry in the timed work queue.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Work {
    /// Deletion scheduled: `created_at` is when it was first scheduled.
    Scheduled { created_at: Millis, fire_at: Millis },
    /// The deletion fired; `in_flight` while its requests await their responses.
    Firing { in_flight: bool },
    /// The delete succeeded (`TimedWorkerQueue` keeps a nil worker so it is not scheduled again).
    Done,
}

/// The taint eviction controller. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct TaintEvictionController {
    work: SlotMap<ObjectKey, Work>,
}

fn pod_event(key: &ObjectKey, uid: &str, message: String) -> EventRecord {
    EventRecord {
        type_: "Normal",
        reason: "TaintManagerEviction".into(),
        message: message.into(),
        object: key.clone(),
        uid: Str::from(uid),
        field_path: Str::EMPTY,
    }
}

impl TaintEvictionController {
    /// A fresh instance with an empty work queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// When the pod's deletion is due, if one is scheduled (for the UI's countdown).
    pub fn scheduled_eviction(&self, pod: &ObjectKey) -> Option<Millis> {
        match self.work.get(pod) {
            Some(Work::Scheduled { fire_at, .. }) => Some(*fire_at),
            _ => None,
        }
    }

    /// `cancelWorkWithEvent`: only work that had not fired yet is announced as cancelled.
    fn cancel(&mut self, key: &ObjectKey, uid: &str, out: &mut Outcome) -> bool {
        match self.work.remove(key) {
            Some(Work::Scheduled { .. }) => {
                out.event(pod_event(
                    key,
                    uid,
                    format!("Cancelling deletion of Pod {}/{}", key.namespace, key.name),
                ));
                true
            }
            _ => false,
        }
    }

    /// The deletion handler: mark the pod as a disruption target, then delete it.
    fn fire(&mut self, key: &ObjectKey, pod: &Pod, announce: bool, now: Millis, out: &mut Outcome) {
        if announce {
            out.event(pod_event(
                key,
                &pod.metadata.uid,
                format!("Marking for deletion Pod {}/{}", key.namespace, key.name),
            ));
        }
        self.work
            .insert(key.clone(), Work::Firing { in_flight: true });
        let mut marked = pod.clone();
        // set_condition keeps an existing True condition's lastTransitionTime, as UpdatePodCondition.
        set_condition(
            &mut marked.status.conditions,
            Condition {
                type_: "DisruptionTarget".into(),
                status: "True".into(),
                reason: Some(DELETION_BY_TAINT_MANAGER.into()),
                message: Some("Taint manager: deleting due to NoExecute taint".into()),
                last_transition_time: Some(Time(now)),
                ..Default::default()
            },
        );
        if marked != *pod {
            out.request(ApiRequest::UpdateStatus(Object::from(marked)));
        }
        out.request(ApiRequest::Delete {
            key: key.clone(),
            options: DeleteOptions::default(),
        });
    }
}

impl Controller for TaintEvictionController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::TaintEviction
    }

    /// Its pods by node (upstream's `spec.nodeName` indexer): the pods a tainted node evicts.
    fn indexers(&self) -> Indexers {
        Indexers {
            node_name: true,
            ..Indexers::NONE
        }
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Node, Kind::Pod]
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        match &*ev.object {
            Object::Node(n) => {
                let new: Vec<&Taint> = if ev.type_ == WatchEventType::Deleted {
                    Vec::new()
                } else {
                    no_execute_taints(n)
                };
                let old_taints: Vec<&Taint> = old
                    .and_then(|o| o.as_node())
                    .map(no_execute_taints)
                    .unwrap_or_default();
                if new == old_taints {
                    return Vec::new();
                }
                cache
                    .pods_on_node(&n.metadata.name)
                    .map(|p| p.key())
                    .collect()
            }
            Object::Pod(p) => {
                if ev.type_ == WatchEventType::Deleted {
                    return vec![ev.object.key()];
                }
                let unchanged = old.and_then(|o| o.as_pod()).is_some_and(|o| {
                    o.spec.tolerations == p.spec.tolerations && o.spec.node_name == p.spec.node_name
                });
                if unchanged || p.spec.node_name.is_empty() {
                    Vec::new()
                } else {
                    vec![ev.object.key()]
                }
            }
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        let mut keys = Vec::new();
        for node in cache.list(Kind::Node) {
            let Some(n) = node.as_node() else { continue };
            if !no_execute_taints(n).is_empty() {
                keys.extend(cache.pods_on_node(&n.metadata.name).map(|p| p.key()));
            }
        }
        keys
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let now = ctx.now;
        let mut out = Outcome::default();
        let Some(obj) = ctx.cache.get(key).cloned() else {
            if self.cancel(key, "", &mut out) {
                out.record = Some(ReconcileRecord {
                    observed: "pod is gone".into(),
                    desired: String::new(),
                    diff: "scheduled deletion cancelled".into(),
                });
            } else {
                self.work.remove(key);
            }
            return out;
        };
        let Some(pod) = obj.as_pod() else { return out };
        let uid = pod.metadata.uid.clone();
        // A deletion that already fired completes whatever happened to the taints meanwhile.
        if let Some(Work::Firing { in_flight }) = self.work.get(key) {
            if !in_flight {
                self.fire(key, pod, false, now, &mut out);
                out.record = Some(ReconcileRecord {
                    observed: "an earlier deletion attempt failed".into(),
                    desired: "pod deleted".into(),
                    diff: "retrying the deletion".into(),
                });
            }
            return out;
        }
        if pod.spec.node_name.is_empty() {
            return out;
        }
        // The node as the cache shares it: a pass per pod write copied the whole Node (its
        // images, conditions, addresses), 1.8% of converging 10,000 replicas in the page.
        let node_key = ObjectKey::from_parts(Kind::Node, Str::EMPTY, pod.spec.node_name.clone());
        let node_obj = ctx
            .cache
            .get(&node_key)
            .filter(|o| o.as_node().is_some())
            .cloned();
        let Some(node) = node_obj.as_deref().and_then(Object::as_node) else {
            // The node is gone: nothing new is scheduled, but work already scheduled still fires.
            if let Some(Work::Scheduled { fire_at, .. }) = self.work.get(key).cloned() {
                if now >= fire_at {
                    self.fire(key, pod, true, now, &mut out);
                } else {
                    out.requeue(fire_at - now);
                }
            }
            return out;
        };
        let taints = no_execute_taints(node);
        let taint_text: Vec<String> = taints
            .iter()
            .map(|t| format!("{}:NoExecute", t.key))
            .collect();
        let mut record = ReconcileRecord {
            observed: if taints.is_empty() {
                format!("node {} has no NoExecute taints", node.metadata.name)
            } else {
                format!("node {} has {}", node.metadata.name, taint_text.join(", "))
            },
            desired: String::new(),
            diff: String::new(),
        };
        if taints.is_empty() {
            record.desired = "pod stays".into();
            if self.cancel(key, &uid, &mut out) {
                record.diff = "taint removed: scheduled deletion cancelled".into();
            } else {
                self.work.remove(key);
            }
            out.record = Some(record);
            return out;
        }
        let (all_tolerated, used) = matching_tolerations(&taints, &pod.spec.tolerations);
        if !all_tolerated {
            record.desired = "pod deleted now (a NoExecute taint is not tolerated)".into();
            if matches!(self.work.get(key), Some(Work::Done)) {
                out.record = Some(record);
                return out;
            }
            self.cancel(key, &uid, &mut out);
            self.fire(key, pod, true, now, &mut out);
            record.diff = "deleting".into();
            out.record = Some(record);
            return out;
        }
        let Some(wait) = min_toleration_time(&used) else {
            record.desired = "pod stays (tolerated forever)".into();
            if self.cancel(key, &uid, &mut out) {
                record.diff = "scheduled deletion cancelled".into();
            }
            out.record = Some(record);
            return out;
        };
        let fire_at = match self.work.get(key) {
            Some(Work::Scheduled { fire_at, .. }) => *fire_at,
            Some(Work::Done) => {
                record.desired = "pod deleted".into();
                out.record = Some(record);
                return out;
            }
            _ => {
                self.work.insert(
                    key.clone(),
                    Work::Scheduled {
                        created_at: now,
                        fire_at: now + wait,
                    },
                );
                now + wait
            }
        };
        record.desired = format!(
            "pod deleted {}s after the taint was seen (tolerationSeconds)",
            wait / 1000
        );
        if now >= fire_at {
            self.fire(key, pod, true, now, &mut out);
            record.diff = "toleration expired: deleting".into();
        } else {
            out.requeue(fire_at - now);
            record.diff = format!("deletion in {}s", (fire_at - now).div_ceil(1000));
        }
        out.record = Some(record);
        out
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        let (key, is_delete) = match req {
            ApiRequest::Delete { key, .. } => (key.clone(), true),
            ApiRequest::UpdateStatus(o) if o.kind() == Kind::Pod => (o.key(), false),
            _ => return,
        };
        if !matches!(self.work.get(&key), Some(Work::Firing { .. })) {
            return;
        }
        match result {
            Ok(_) if is_delete => {
                self.work.insert(key, Work::Done);
            }
            Err(e) if is_delete && e.code() == 404 => {
                self.work.insert(key, Work::Done);
            }
            Err(_) => {
                self.work.insert(key, Work::Firing { in_flight: false });
            }
            Ok(_) => {}
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        if let ApiRequest::Delete { key, .. } = req {
            if matches!(self.work.get(key), Some(Work::Firing { .. })) {
                self.work
                    .insert(key.clone(), Work::Firing { in_flight: false });
            }
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{ObjectMeta, PodSpec};
    use crate::sim::api::ApiError;
    use crate::sim::controllers::testing;

    fn taint(key: &str) -> Taint {
        Taint {
            key: key.into(),
            value: None,
            effect: "NoExecute".into(),
            time_added: Some(Time(0)),
        }
    }

    fn node(taints: Vec<Taint>) -> Node {
        let mut n = Node::default();
        n.metadata.name = "node-1".into();
        n.metadata.resource_version = "3".into();
        n.spec.taints = taints;
        n
    }

    fn toleration(key: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            effect: Some("NoExecute".into()),
            toleration_seconds: seconds,
            ..Default::default()
        }
    }

    fn pod(name: &str, tolerations: Vec<Toleration>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                uid: format!("uid-{name}").into(),
                resource_version: "5".into(),
                ..Default::default()
            },
            spec: PodSpec {
                node_name: "node-1".into(),
                tolerations,
                ..Default::default()
            }
            .into(),
            ..Default::default()
        }
    }

    fn cache_of(objs: Vec<Object>) -> Cache {
        testing::cache_of(objs)
    }

    fn run(c: &mut TaintEvictionController, name: &str, now: Millis, cache: &Cache) -> Outcome {
        let key = ObjectKey::new(Kind::Pod, "default", name);
        testing::reconcile_once(c, cache, &key, now)
    }

    fn deletes(out: &Outcome) -> Vec<String> {
        out.requests()
            .filter_map(|r| match r {
                ApiRequest::Delete { key, .. } => Some(key.name.to_string()),
                _ => None,
            })
            .collect()
    }

    const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

    #[test]
    fn a_pod_without_a_matching_toleration_is_marked_and_deleted_at_once() {
        let cache = cache_of(vec![
            Object::from(node(vec![taint(UNREACHABLE)])),
            Object::from(pod("web", vec![])),
        ]);
        let mut c = TaintEvictionController::new();
        let out = run(&mut c, "web", 1_000, &cache);
        assert_eq!(out.events.len(), 1);
        assert_eq!(
            (
                out.events[0].reason.as_str(),
                out.events[0].message.as_str()
            ),
            (
                "TaintManagerEviction",
                "Marking for deletion Pod default/web"
            )
        );
        let ApiRequest::UpdateStatus(Object::Pod(marked)) = &out.batches[0][0] else {
            panic!("status first: {:?}", out.batches)
        };
        let cond = marked
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == "DisruptionTarget")
            .unwrap();
        assert_eq!(cond.reason.as_deref(), Some(DELETION_BY_TAINT_MANAGER));
        assert_eq!(
            cond.message.as_deref(),
            Some("Taint manager: deleting due to NoExecute taint")
        );
        assert_eq!(marked.metadata.resource_version, "5");
        assert_eq!(
            out.batches[1],
            vec![ApiRequest::Delete {
                key: ObjectKey::new(Kind::Pod, "default", "web"),
                options: DeleteOptions::default()
            }]
        );
    }

    #[test]
    fn a_tolerated_taint_schedules_deletion_after_the_smallest_toleration_seconds() {
        let p = pod(
            "web",
            vec![toleration(UNREACHABLE, Some(300)), toleration("", Some(60))],
        );
        let cache = cache_of(vec![
            Object::from(node(vec![taint(UNREACHABLE)])),
            Object::from(p),
        ]);
        let mut c = TaintEvictionController::new();
        let out = run(&mut c, "web", 1_000, &cache);
        assert!(deletes(&out).is_empty());
        assert_eq!(
            out.requeue_after,
            Some(300_000),
            "the first matching toleration per taint decides"
        );
        assert_eq!(
            c.scheduled_eviction(&ObjectKey::new(Kind::Pod, "default", "web")),
            Some(301_000)
        );
        let again = run(&mut c, "web", 200_000, &cache);
        assert_eq!(
            again.requeue_after,
            Some(101_000),
            "a later look keeps the first schedule"
        );
        let due = run(&mut c, "web", 301_000, &cache);
        assert_eq!(deletes(&due), vec!["web"]);
        c.on_response(
            &due.batches[1][0],
            &Ok(Rc::new(Object::from(pod("web", vec![])))),
            301_005,
        );
        let after = run(&mut c, "web", 302_000, &cache);
        assert!(
            deletes(&after).is_empty() && after.events.is_empty(),
            "a done deletion is not repeated"
        );
    }

    #[test]
    fn tolerating_forever_never_schedules_a_deletion() {
        let cache = cache_of(vec![
            Object::from(node(vec![taint(UNREACHABLE)])),
            Object::from(pod("ds", vec![toleration(UNREACHABLE, None)])),
        ]);
        let out = run(&mut TaintEvictionController::new(), "ds", 1_000, &cache);
        assert!(deletes(&out).is_empty() && out.requeue_after.is_none() && out.events.is_empty());
    }

    #[test]
    fn removing_the_taint_before_the_deadline_cancels_with_an_event() {
        let p = pod("web", vec![toleration(UNREACHABLE, Some(300))]);
        let mut c = TaintEvictionController::new();
        run(
            &mut c,
            "web",
            1_000,
            &cache_of(vec![
                Object::from(node(vec![taint(UNREACHABLE)])),
                Object::from(p.clone()),
            ]),
        );
        let out = run(
            &mut c,
            "web",
            50_000,
            &cache_of(vec![Object::from(node(vec![])), Object::from(p)]),
        );
        assert_eq!(out.events.len(), 1);
        assert_eq!(
            out.events[0].message,
            "Cancelling deletion of Pod default/web"
        );
        assert!(deletes(&out).is_empty());
        assert_eq!(
            c.scheduled_eviction(&ObjectKey::new(Kind::Pod, "default", "web")),
            None
        );
    }

    #[test]
    fn a_failed_delete_is_retried_without_a_second_marking_event() {
        let cache = cache_of(vec![
            Object::from(node(vec![taint("dedicated")])),
            Object::from(pod("web", vec![])),
        ]);
        let mut c = TaintEvictionController::new();
        let out = run(&mut c, "web", 1_000, &cache);
        let conflict = ApiError::conflict(Kind::Pod, "web");
        c.on_response(&out.batches[0][0], &Err(conflict), 1_005);
        c.on_skipped(&out.batches[1][0]);
        let retry = run(&mut c, "web", 1_010, &cache);
        assert!(retry.events.is_empty());
        assert_eq!(deletes(&retry), vec!["web"]);
    }

    #[test]
    fn min_toleration_time_treats_non_positive_seconds_as_now() {
        let t = |s| toleration(UNREACHABLE, s);
        assert_eq!(
            min_toleration_time(&[&t(Some(30)), &t(Some(10))]),
            Some(10_000)
        );
        assert_eq!(min_toleration_time(&[&t(Some(30)), &t(Some(-1))]), Some(0));
        assert_eq!(min_toleration_time(&[&t(None), &t(Some(20))]), Some(20_000));
        assert_eq!(min_toleration_time(&[&t(None)]), None);
    }
}
