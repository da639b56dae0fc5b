//! The pod garbage collector (`pod-garbage-collector-controller`): force-deletes the pods nobody
//! else will, every 20 s, as `pkg/controller/podgc/gc_controller.go` does.
//!
//! One pass, in upstream's order: terminated pods beyond the threshold (oldest first); pods
//! terminating on a node that is not Ready and carries the `node.kubernetes.io/out-of-service`
//! taint (the documented way to release a dead node's StatefulSet pods); pods bound to a node
//! that no longer exists, once it has been missing for the 40 s quarantine; and terminating pods
//! that were never scheduled. Each is first marked `Failed` (a pod on a gone node has no kubelet
//! to say so), then deleted with a grace period of 0.

use std::rc::Rc;

use serde_json::json;

use crate::sim::api::types::{
    find_condition, Condition, Kind, Millis, Object, ObjectKey, Pod, Time,
};
use crate::sim::api::{ApiRequest, DeleteOptions, WatchEvent};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{ComponentId, Controller, Ctx, Outcome, ReconcileRecord};
use crate::sort::StableSort;
use crate::vec_map::VecMap;

/// `gcCheckPeriod`.
pub const GC_CHECK_PERIOD: Millis = 20_000;
/// `quarantineTime`: how long a node must be missing before its pods are deleted.
pub const QUARANTINE_TIME: Millis = 40_000;
/// kube-controller-manager's `--terminated-pod-gc-threshold` default.
pub const TERMINATED_POD_THRESHOLD: usize = 12_500;
/// The taint that says a node is shut down for good (`v1.TaintNodeOutOfService`).
pub const TAINT_OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";

/// The pod garbage collector.
#[derive(Clone, Debug, Default)]
pub struct PodGcController {
    /// Nodes that pods are bound to but the cache lacks, and since when.
    quarantine: VecMap<String, Millis>,
}

impl PodGcController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The key of the periodic pass (the controller has no per-object work).
fn pass_key() -> ObjectKey {
    ObjectKey::new(Kind::Pod, "", "")
}

fn terminated(pod: &Pod) -> bool {
    !matches!(pod.status.phase.as_str(), "Pending" | "Running" | "Unknown")
}

/// `pods` in namespace/name order, as a list of the cache gives them.
fn in_name_order(mut pods: Vec<&Pod>) -> Vec<&Pod> {
    pods.stable_sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    pods
}

/// `byEvictionAndCreationTimestamp`: evicted pods first, then the oldest, then by name.
fn eviction_then_age(a: &&Pod, b: &&Pod) -> std::cmp::Ordering {
    let evicted = |p: &Pod| p.status.reason.as_deref() == Some("Evicted");
    evicted(b)
        .cmp(&evicted(a))
        .then(
            a.metadata
                .creation_timestamp
                .cmp(&b.metadata.creation_timestamp),
        )
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// `markFailedAndDeletePodWithCondition`: the status patch (when the pod is not terminal
/// already; a merge patch carries the whole condition list), then the grace-0 delete.
fn mark_failed_and_delete(out: &mut Outcome, pod: &Pod, condition: Option<Condition>, now: Millis) {
    let key = ObjectKey::of(Kind::Pod, &pod.metadata);
    if !terminated(pod) {
        let mut conditions = pod.status.conditions.clone();
        if let Some(mut c) = condition {
            c.last_transition_time = Some(Time(now - now % 1000));
            match conditions.iter_mut().find(|x| x.type_ == c.type_) {
                Some(x) => *x = c,
                None => conditions.push(c),
            }
        }
        out.request(ApiRequest::Patch {
            key: key.clone(),
            patch: json!({"status": {"phase": "Failed", "conditions": conditions}}),
            status: true,
        });
    }
    out.request(ApiRequest::Delete {
        key,
        options: DeleteOptions {
            grace_period_seconds: Some(0),
            precondition_uid: Some(pod.metadata.uid.to_string()),
            ..Default::default()
        },
    });
}

impl Controller for PodGcController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::PodGc
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Pod, Kind::Node]
    }

    fn keys_for_event(
        &mut self,
        _ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        Vec::new()
    }

    fn keys_for_resync(&self, _cache: &Cache) -> Vec<ObjectKey> {
        Vec::new()
    }

    fn tick(&mut self, _now: Millis) -> (Vec<ObjectKey>, Option<Millis>) {
        (vec![pass_key()], Some(GC_CHECK_PERIOD))
    }

    fn reconcile(&mut self, _key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let now = ctx.now;
        let mut out = Outcome::done();
        // Scanned, not listed: each pass below puts what it keeps in name order itself, so the
        // cache never sorts every pod for a pass that acts on a few.
        let pods: Vec<&Pod> = ctx
            .cache
            .scan(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .collect();
        let node = |name: &str| {
            ctx.cache
                .get(&ObjectKey::new(Kind::Node, "", name))
                .and_then(|o| o.as_node())
        };
        let mut done: Vec<String> = Vec::new();

        // gcTerminated.
        let mut ended = in_name_order(pods.iter().copied().filter(|p| terminated(p)).collect());
        if ended.len() > TERMINATED_POD_THRESHOLD {
            ended.stable_sort_by(eviction_then_age);
            for p in &ended[..ended.len() - TERMINATED_POD_THRESHOLD] {
                mark_failed_and_delete(&mut out, p, None, now);
                done.push(format!("{} terminated", p.metadata.name));
            }
        }

        // gcTerminating: terminating pods on an out-of-service node that is not Ready.
        let mut stranded = in_name_order(
            pods.iter()
                .copied()
                .filter(|p| p.metadata.deletion_timestamp.is_some())
                .filter(|p| {
                    node(&p.spec.node_name).is_some_and(|n| {
                        let ready = find_condition(&n.status.conditions, "Ready")
                            .is_some_and(|c| c.status == "True");
                        !ready && n.spec.taints.iter().any(|t| t.key == TAINT_OUT_OF_SERVICE)
                    })
                })
                .collect(),
        );
        stranded.stable_sort_by(eviction_then_age);
        for p in stranded {
            mark_failed_and_delete(&mut out, p, None, now);
            done.push(format!(
                "{} terminating on out-of-service {}",
                p.metadata.name, p.spec.node_name
            ));
        }

        // gcOrphaned: quarantine the missing nodes, then delete the pods of those still missing.
        let missing: Vec<&str> = pods
            .iter()
            .map(|p| p.spec.node_name.as_str())
            .filter(|n| !n.is_empty() && node(n).is_none())
            .collect();
        self.quarantine.retain(|n, _| missing.contains(&n.as_str()));
        for n in &missing {
            self.quarantine.entry(n.to_string()).or_insert(now);
        }
        let gone: Vec<String> = self
            .quarantine
            .iter()
            .filter(|(_, since)| now >= **since + QUARANTINE_TIME)
            .map(|(n, _)| n.clone())
            .collect();
        let orphaned = in_name_order(
            pods.iter()
                .copied()
                .filter(|p| gone.iter().any(|n| *n == p.spec.node_name))
                .collect(),
        );
        for p in orphaned {
            let condition = Condition {
                type_: "DisruptionTarget".into(),
                status: "True".into(),
                reason: Some("DeletionByPodGC".into()),
                message: Some("PodGC: node no longer exists".into()),
                ..Default::default()
            };
            mark_failed_and_delete(&mut out, p, Some(condition), now);
            done.push(format!(
                "{} on gone node {}",
                p.metadata.name, p.spec.node_name
            ));
        }
        for n in &gone {
            self.quarantine.remove(n);
        }

        // gcUnscheduledTerminating.
        let unscheduled = in_name_order(
            pods.iter()
                .copied()
                .filter(|p| p.metadata.deletion_timestamp.is_some() && p.spec.node_name.is_empty())
                .collect(),
        );
        for p in unscheduled {
            mark_failed_and_delete(&mut out, p, None, now);
            done.push(format!("{} terminating, never scheduled", p.metadata.name));
        }

        let quarantined: Vec<&str> = self.quarantine.keys().map(String::as_str).collect();
        out.record = Some(ReconcileRecord {
            observed: format!(
                "{} pods{}",
                pods.len(),
                if quarantined.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; node(s) [{}] missing, in quarantine",
                        quarantined.join(" ")
                    )
                }
            ),
            desired: "no pod left that no kubelet will finish".into(),
            diff: if done.is_empty() {
                String::new()
            } else {
                format!("force-deleted {}", done.join(", "))
            },
        });
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(PodGcController::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::ObjectMeta;
    use crate::sim::controllers::testing::{cache_of, reconcile_once};

    fn pod(name: &str, node: &str, terminating: bool) -> Object {
        Object::from(Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                uid: format!("uid-{name}").into(),
                deletion_timestamp: terminating.then_some(Time(1_000)),
                ..Default::default()
            },
            spec: crate::sim::api::types::PodSpec {
                node_name: node.into(),
                ..Default::default()
            }
            .into(),
            status: crate::sim::api::types::PodStatus {
                phase: "Pending".into(),
                ..Default::default()
            },
        })
    }

    fn acts(out: &Outcome) -> Vec<String> {
        out.requests()
            .map(|r| format!("{} {}", r.verb(), r.key().name))
            .collect()
    }

    #[test]
    fn an_unscheduled_terminating_pod_is_marked_failed_and_force_deleted() {
        let cache = cache_of([pod("stuck", "", true), pod("waiting", "", false)]);
        let out = reconcile_once(&mut PodGcController::new(), &cache, &pass_key(), 5_000);
        assert_eq!(acts(&out), ["patch/status stuck", "delete stuck"]);
    }

    #[test]
    fn a_pod_on_a_missing_node_waits_out_the_quarantine_then_goes() {
        let cache = cache_of([pod("orphan", "node-9", false)]);
        let mut gc = PodGcController::new();
        assert!(acts(&reconcile_once(&mut gc, &cache, &pass_key(), 0)).is_empty());
        assert!(acts(&reconcile_once(&mut gc, &cache, &pass_key(), 20_000)).is_empty());
        let out = reconcile_once(&mut gc, &cache, &pass_key(), 40_000);
        assert_eq!(acts(&out), ["patch/status orphan", "delete orphan"]);
        let patch = out.requests().next().expect("a patch");
        let ApiRequest::Patch { patch, .. } = patch else {
            panic!("a status patch");
        };
        assert_eq!(
            patch["status"]["conditions"][0]["reason"],
            "DeletionByPodGC"
        );
        assert_eq!(
            patch["status"]["conditions"][0]["message"],
            "PodGC: node no longer exists"
        );
    }

    #[test]
    fn a_pass_acts_on_pods_in_name_order_whatever_order_the_cache_filed_them_in() {
        // Filed in reverse name order, and with a gap left by a removed pod refilled last.
        let mut cache = cache_of([
            pod("d", "", true),
            pod("c", "node-9", false),
            pod("x", "", true),
            pod("b", "", true),
            pod("a", "node-9", false),
        ]);
        cache.remove(&ObjectKey::new(Kind::Pod, "default", "x"));
        cache.upsert(Rc::new(pod("aa", "", true)));
        let mut gc = PodGcController::new();
        let out = reconcile_once(&mut gc, &cache, &pass_key(), 0);
        assert_eq!(
            acts(&out),
            [
                "patch/status aa",
                "delete aa",
                "patch/status b",
                "delete b",
                "patch/status d",
                "delete d"
            ]
        );
        let out = reconcile_once(&mut gc, &cache, &pass_key(), 40_000);
        let orphans: Vec<String> = acts(&out)
            .into_iter()
            .filter(|a| a.starts_with("delete"))
            .collect();
        assert_eq!(
            orphans,
            ["delete a", "delete c", "delete aa", "delete b", "delete d"]
        );
    }
}
