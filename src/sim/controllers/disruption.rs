//! The disruption controller (`disruption-controller`): keeps each PodDisruptionBudget's status —
//! how many pods are expected, healthy and required, and how many disruptions the Eviction API may
//! allow right now.
//!
//! Modelled on `pkg/controller/disruption/disruption.go`:
//! - `expectedPods`/`desiredHealthy`: `minAvailable` as an integer counts the matching pods;
//!   a percentage or any `maxUnavailable` uses the summed scale of the pods' controllers, found by
//!   following each pod's controllerRef (ReplicaSet → its Deployment's `spec.replicas`, or the
//!   ReplicaSet's own). Pods without a controller are skipped with an `UnmanagedPods` warning; a
//!   controller that cannot be found fails the sync (`CalculateExpectedPodCountFailed`, condition
//!   False/`SyncFailed`, `disruptionsAllowed` forced to 0).
//! - `currentHealthy`: matching pods that are Ready, not terminating, and not in `disruptedPods`.
//! - `disruptedPods` (written by the Eviction API) entries are dropped when the pod is seen
//!   terminating or gone, and after `DeletionTimeout` (2 min) with a `NotDeleted` warning; the PDB
//!   is rechecked when the earliest entry expires.
//! - `disruptionsAllowed = max(0, currentHealthy − desiredHealthy)`, 0 when `expectedPods ≤ 0`;
//!   condition `DisruptionAllowed` True/`SufficientPods` or False/`InsufficientPods`.
//! - A pod whose `DisruptionTarget` condition went stale (no deletion 2 min later) gets it set False.
//!
//! Like Kubernetes, the controller does not react to ReplicaSet or Deployment changes by
//! themselves (it only reads them); pod changes trigger the recount. Its Events carry the source
//! [`DISRUPTION_EVENT_SOURCE`](crate::sim::machinery::controller::DISRUPTION_EVENT_SOURCE)
//! (`controllermanager`), as upstream's recorder writes them, while the trace names the
//! component `disruption-controller`. Deliberate simplifications: the
//! `MultiplePodDisruptionBudgets` warning on pods is not recorded; controllers other than
//! ReplicaSets and Deployments (StatefulSets, ReplicationControllers, custom `/scale`) do not
//! exist in the simulation and count as "not found".

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::sim::api::types::{
    find_condition, set_condition, Condition, IntOrString, Kind, LabelSelector, Millis, Object,
    ObjectKey, Pod, PodDisruptionBudget, Str, Time,
};
use crate::sim::api::{ApiRequest, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::vec_map::VecMap;

/// `DeletionTimeout`: how long an Eviction API entry in `disruptedPods` keeps a pod out of the count.
pub const DELETION_TIMEOUT: Millis = 120_000;
/// `stalePodDisruptionTimeout`: after this a `DisruptionTarget` without a deletion is reset.
pub const STALE_POD_DISRUPTION_TIMEOUT: Millis = 120_000;

/// What `getExpectedPodCount` computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedCount {
    pub expected: i32,
    pub desired_healthy: i32,
    /// Matching pods without a controllerRef.
    pub unmanaged: Vec<String>,
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → "").
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The scale of the controller a pod's controllerRef points at, as the disruption controller's
/// finders (`getPodDeployment`, `getPodReplicaSet`, the `/scale` fallback) resolve it.
fn controller_scale(
    cache: &Cache,
    namespace: &str,
    pod: &Pod,
) -> Result<Option<(String, i32)>, String> {
    let Some(r) = pod.metadata.controller_ref() else {
        return Ok(None);
    };
    let group = group_of(&r.api_version);
    let lookup = |kind: Kind, name: &str, uid: &str| {
        cache
            .get(&ObjectKey::new(kind, namespace, name))
            .filter(|o| o.meta().uid == uid)
            .cloned()
    };
    match (r.kind.as_str(), group) {
        ("ReplicaSet", "apps" | "extensions") => {
            let Some(rs_obj) = lookup(Kind::ReplicaSet, &r.name, &r.uid) else {
                return Err(format!(
                    "found no controllers for pod {:?}",
                    pod.metadata.name
                ));
            };
            let rs = rs_obj.as_replica_set().expect("looked up as a ReplicaSet");
            if let Some(d_ref) = rs.metadata.controller_ref() {
                if d_ref.kind == "Deployment"
                    && matches!(group_of(&d_ref.api_version), "apps" | "extensions")
                {
                    if let Some(d) = lookup(Kind::Deployment, &d_ref.name, &d_ref.uid) {
                        let d = d.as_deployment().expect("looked up as a Deployment");
                        return Ok(Some((
                            d.metadata.uid.to_string(),
                            d.spec.replicas.unwrap_or(1),
                        )));
                    }
                }
            }
            // A ReplicaSet without a live Deployment counts with its own scale.
            Ok(Some((
                rs.metadata.uid.to_string(),
                rs.spec.replicas.unwrap_or(1),
            )))
        }
        ("Deployment", "apps" | "extensions") => match lookup(Kind::Deployment, &r.name, &r.uid) {
            Some(d) => {
                let d = d.as_deployment().expect("looked up as a Deployment");
                Ok(Some((
                    d.metadata.uid.to_string(),
                    d.spec.replicas.unwrap_or(1),
                )))
            }
            None => Err(format!(
                "found no controllers for pod {:?}",
                pod.metadata.name
            )),
        },
        ("DaemonSet", "apps") => {
            Err("daemonsets.apps does not implement the scale subresource".into())
        }
        ("Job", "batch") => Err("jobs.batch does not implement the scale subresource".into()),
        ("StatefulSet", "apps") | ("ReplicationController", "") => Err(format!(
            "found no controllers for pod {:?}",
            pod.metadata.name
        )),
        (kind, _) => Err(format!(
            "no matches for kind {kind:?} in version {:?}",
            r.api_version
        )),
    }
}

/// `getExpectedScale`: the summed scale of every distinct controller of the pods.
fn expected_scale(
    cache: &Cache,
    namespace: &str,
    pods: &[&Pod],
) -> Result<(i32, Vec<String>), String> {
    let mut scales: VecMap<String, i32> = VecMap::new();
    let mut unmanaged = Vec::new();
    for pod in pods {
        if pod.metadata.controller_ref().is_none() {
            unmanaged.push(pod.metadata.name.to_string());
            continue;
        }
        if let Some((uid, scale)) = controller_scale(cache, namespace, pod)? {
            scales.insert(uid, scale);
        }
    }
    Ok((scales.values().sum(), unmanaged))
}

/// `getExpectedPodCount` for a PDB over its matching pods.
pub fn expected_pod_count(
    cache: &Cache,
    pdb: &PodDisruptionBudget,
    pods: &[&Pod],
) -> Result<ExpectedCount, String> {
    let ns = &pdb.metadata.namespace;
    if let Some(max_unavailable) = &pdb.spec.max_unavailable {
        let (expected, unmanaged) = expected_scale(cache, ns, pods)?;
        let max = max_unavailable.scaled_value(expected as i64, true)?;
        let desired = (expected as i64 - max).max(0) as i32;
        return Ok(ExpectedCount {
            expected,
            desired_healthy: desired,
            unmanaged,
        });
    }
    match &pdb.spec.min_available {
        Some(IntOrString::Int(n)) => Ok(ExpectedCount {
            expected: pods.len() as i32,
            desired_healthy: *n as i32,
            unmanaged: Vec::new(),
        }),
        Some(pct @ IntOrString::String(_)) => {
            let (expected, unmanaged) = expected_scale(cache, ns, pods)?;
            let desired = pct.scaled_value(expected as i64, true)? as i32;
            Ok(ExpectedCount {
                expected,
                desired_healthy: desired,
                unmanaged,
            })
        }
        None => Ok(ExpectedCount {
            expected: 0,
            desired_healthy: 0,
            unmanaged: Vec::new(),
        }),
    }
}

/// Whether a PDB selects a pod: in policy/v1 a nil selector selects nothing, an empty one everything.
pub fn pdb_selects(pdb: &PodDisruptionBudget, pod: &Pod) -> bool {
    pdb.metadata.namespace == pod.metadata.namespace
        && pdb
            .spec
            .selector
            .as_ref()
            .is_some_and(|s| s.matches(&pod.metadata.labels))
}

/// A label selector as Go's `%v` prints a `*metav1.LabelSelector` (the `UnmanagedPods` message).
fn go_selector(sel: Option<&LabelSelector>) -> String {
    let Some(sel) = sel else { return "nil".into() };
    let labels: Vec<String> = sel
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let exprs: Vec<String> = sel
        .match_expressions
        .iter()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e.key,
                e.operator,
                e.values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{}}},MatchExpressions:[]LabelSelectorRequirement{{{}}},}}",
        labels.join(""),
        exprs.join("")
    )
}

/// `UpdateDisruptionAllowedCondition`: True/SufficientPods or False/InsufficientPods.
pub fn set_disruption_allowed_condition(pdb: &mut PodDisruptionBudget, now: Millis) {
    let (status, reason) = if pdb.status.disruptions_allowed > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    set_condition(
        &mut pdb.status.conditions,
        Condition {
            type_: "DisruptionAllowed".into(),
            status: status.into(),
            reason: Some(reason.into()),
            message: Some(Str::EMPTY),
            last_transition_time: Some(Time(now)),
            observed_generation: Some(pdb.status.observed_generation),
            ..Default::default()
        },
    );
}

/// `ConditionsAreUpToDate`.
fn conditions_up_to_date(pdb: &PodDisruptionBudget) -> bool {
    let Some(c) = find_condition(&pdb.status.conditions, "DisruptionAllowed") else {
        return false;
    };
    if pdb.status.observed_generation != pdb.metadata.generation {
        return false;
    }
    if pdb.status.disruptions_allowed > 0 {
        c.status == "True" && c.reason.as_deref() == Some("SufficientPods")
    } else {
        c.status == "False" && c.reason.as_deref() == Some("InsufficientPods")
    }
}

/// `nonTerminatingPodHasStaleDisruptionCondition`: Some(ms left) when the pod carries a
/// `DisruptionTarget` that no deletion followed.
fn stale_disruption_condition(pod: &Pod, now: Millis) -> Option<Millis> {
    if pod.metadata.deletion_timestamp.is_some()
        || matches!(pod.status.phase.as_str(), "Succeeded" | "Failed")
    {
        return None;
    }
    let c = find_condition(&pod.status.conditions, "DisruptionTarget")?;
    if c.status != "True" || c.reason.as_deref() == Some("TerminationByKubelet") {
        return None;
    }
    let since = c.last_transition_time.map_or(0, |t| t.0);
    Some((since + STALE_POD_DISRUPTION_TIMEOUT).saturating_sub(now))
}

/// The disruption controller. Stateless: everything it needs is in the cache.
#[derive(Clone, Debug, Default)]
pub struct DisruptionController {}

impl DisruptionController {
    /// A fresh instance.
    pub fn new() -> Self {
        Self {}
    }

    /// `getPdbForPod`: the first PDB (in name order) selecting the pod.
    fn pdb_for_pod(cache: &Cache, pod: &Pod) -> Option<ObjectKey> {
        cache
            .list_ns(Kind::PodDisruptionBudget, &pod.metadata.namespace)
            .find(|o| o.as_pdb().is_some_and(|pdb| pdb_selects(pdb, pod)))
            .map(|o| o.key())
    }

    fn sync_pdb(&mut self, obj: &Rc<Object>, ctx: &mut Ctx<'_>) -> Outcome {
        let now = ctx.now;
        let mut out = Outcome::default();
        let pdb = obj.as_pdb().expect("called with a PDB");
        let pods: Vec<&Pod> = ctx
            .cache
            .list_ns(Kind::Pod, &pdb.metadata.namespace)
            .filter_map(|o| o.as_pod())
            .filter(|p| pdb_selects(pdb, p))
            .collect();
        if pods.is_empty() {
            out.event(EventRecord::normal(obj, "NoPods", "No matching pods found"));
        }
        let count = match expected_pod_count(ctx.cache, pdb, &pods) {
            Ok(c) => c,
            Err(err) => {
                out.event(EventRecord::warning(
                    obj,
                    "CalculateExpectedPodCountFailed",
                    format!("Failed to calculate the number of expected pods: {err}"),
                ));
                // failSafe: at least stop the Eviction API from approving anything.
                let mut failed = pdb.clone();
                failed.status.disruptions_allowed = 0;
                set_condition(
                    &mut failed.status.conditions,
                    Condition {
                        type_: "DisruptionAllowed".into(),
                        status: "False".into(),
                        reason: Some("SyncFailed".into()),
                        message: Some(Str::from(err.as_str())),
                        last_transition_time: Some(Time(now)),
                        observed_generation: Some(failed.status.observed_generation),
                        ..Default::default()
                    },
                );
                if failed != *pdb {
                    out.request(ApiRequest::UpdateStatus(Object::from(failed)));
                }
                out.record = Some(ReconcileRecord {
                    observed: format!("{} matching pods", pods.len()),
                    desired: "a budget computed from the pods' controllers".into(),
                    diff: format!("sync failed: {err}"),
                });
                return out;
            }
        };
        if !count.unmanaged.is_empty() {
            out.event(EventRecord::warning(
                obj,
                "UnmanagedPods",
                format!(
                    "Pods selected by this PodDisruptionBudget (selector: {}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.",
                    go_selector(pdb.spec.selector.as_ref())
                ),
            ));
        }
        // buildDisruptedPodMap: keep entries of live, not-yet-terminating pods within the timeout.
        let mut disrupted = BTreeMap::new();
        let mut recheck: Option<Millis> = None;
        for pod in &pods {
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let Some(t) = pdb.status.disrupted_pods.get(pod.metadata.name.as_str()) else {
                continue;
            };
            let expected_deletion = t.0 + DELETION_TIMEOUT;
            if expected_deletion < now {
                let pod_obj = ctx.cache.get(&ObjectKey::of(Kind::Pod, &pod.metadata));
                if let Some(pod_obj) = pod_obj {
                    // Kubernetes prints the PDB's namespace twice here; kept verbatim.
                    out.event(EventRecord::warning(
                        pod_obj,
                        "NotDeleted",
                        format!(
                            "Pod was expected by PDB {}/{} to be deleted but it wasn't",
                            pdb.metadata.namespace, pdb.metadata.namespace
                        ),
                    ));
                }
            } else {
                recheck = Some(recheck.map_or(expected_deletion, |r| r.min(expected_deletion)));
                disrupted.insert(pod.metadata.name.to_string(), *t);
            }
        }
        let current_healthy = pods
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter(|p| {
                disrupted
                    .get(p.metadata.name.as_str())
                    .is_none_or(|t| t.0 + DELETION_TIMEOUT <= now)
            })
            .filter(|p| p.is_ready())
            .count() as i32;
        let mut allowed = current_healthy - count.desired_healthy;
        if count.expected <= 0 || allowed <= 0 {
            allowed = 0;
        }
        let s = &pdb.status;
        let up_to_date = s.current_healthy == current_healthy
            && s.desired_healthy == count.desired_healthy
            && s.expected_pods == count.expected
            && s.disruptions_allowed == allowed
            && s.disrupted_pods == disrupted
            && s.observed_generation == pdb.metadata.generation
            && conditions_up_to_date(pdb);
        out.record = Some(ReconcileRecord {
            observed: format!("{} matching pods, {current_healthy} healthy", pods.len()),
            desired: format!(
                "{} healthy of {} expected",
                count.desired_healthy, count.expected
            ),
            diff: if up_to_date {
                String::new()
            } else {
                format!("status update: disruptionsAllowed={allowed}")
            },
        });
        if !up_to_date {
            let mut updated = pdb.clone();
            updated.status.current_healthy = current_healthy;
            updated.status.desired_healthy = count.desired_healthy;
            updated.status.expected_pods = count.expected;
            updated.status.disruptions_allowed = allowed;
            updated.status.disrupted_pods = disrupted;
            updated.status.observed_generation = pdb.metadata.generation;
            set_disruption_allowed_condition(&mut updated, now);
            out.request(ApiRequest::UpdateStatus(Object::from(updated)));
        }
        if let Some(at) = recheck {
            // Strictly after the deadline, when the entry is no longer counted.
            out.requeue(at.saturating_sub(now) + 1);
        }
        out
    }

    /// `syncStalePodDisruption`: a `DisruptionTarget` nobody acted on is set to False.
    fn sync_pod(&mut self, obj: &Rc<Object>, now: Millis) -> Outcome {
        let mut out = Outcome::default();
        let Some(pod) = obj.as_pod() else { return out };
        let Some(left) = stale_disruption_condition(pod, now) else {
            return out;
        };
        if left > 0 {
            out.requeue(left);
            return out;
        }
        let mut updated = pod.clone();
        if let Some(c) = updated
            .status
            .conditions
            .iter_mut()
            .find(|c| c.type_ == "DisruptionTarget")
        {
            *c = Condition {
                type_: "DisruptionTarget".into(),
                status: "False".into(),
                last_transition_time: Some(Time(now)),
                ..Default::default()
            };
        }
        out.request(ApiRequest::UpdateStatus(Object::from(updated)));
        out.record = Some(ReconcileRecord {
            observed: "DisruptionTarget=True but the pod was not deleted".into(),
            desired: "no stale DisruptionTarget".into(),
            diff: "resetting DisruptionTarget to False".into(),
        });
        out
    }
}

impl Controller for DisruptionController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Disruption
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[
            Kind::Pod,
            Kind::PodDisruptionBudget,
            Kind::ReplicaSet,
            Kind::Deployment,
        ]
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        match &*ev.object {
            Object::PodDisruptionBudget(_) => vec![ev.object.key()],
            Object::Pod(p) => {
                let mut keys: Vec<ObjectKey> = Self::pdb_for_pod(cache, p).into_iter().collect();
                if ev.type_ != WatchEventType::Deleted && stale_disruption_condition(p, 0).is_some()
                {
                    keys.push(ev.object.key());
                }
                keys
            }
            // ReplicaSets and Deployments are only read (their listers), never trigger a sync.
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        let mut keys: Vec<ObjectKey> = cache
            .list(Kind::PodDisruptionBudget)
            .map(|o| o.key())
            .collect();
        keys.extend(
            cache
                .list(Kind::Pod)
                .filter(|o| {
                    o.as_pod()
                        .is_some_and(|p| stale_disruption_condition(p, 0).is_some())
                })
                .map(|o| o.key()),
        );
        keys
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(obj) = ctx.cache.get(key).cloned() else {
            return Outcome::done();
        };
        match key.kind {
            Kind::PodDisruptionBudget => self.sync_pdb(&obj, ctx),
            Kind::Pod => self.sync_pod(&obj, ctx.now),
            _ => Outcome::done(),
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{
        Container, Deployment, DeploymentSpec, ObjectMeta, OwnerReference, PodDisruptionBudgetSpec,
        PodDisruptionBudgetStatus, PodSpec, PodStatus, ReplicaSet, ReplicaSetSpec,
    };
    use crate::sim::api::{ApiError, DeleteOptions, StatusReason};
    use crate::sim::machinery::trace::TraceKind;
    use crate::sim::rng::Rng;
    use crate::sim::world::{Sim, SimConfig};

    fn web_selector() -> LabelSelector {
        LabelSelector {
            match_labels: [("app".to_string(), "web".to_string())].into(),
            ..Default::default()
        }
    }

    fn owner(kind: &str, api_version: &str, name: &str, uid: &str) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }

    fn meta(name: &str, uid: &str) -> ObjectMeta {
        ObjectMeta {
            name: name.into(),
            namespace: "default".into(),
            uid: uid.into(),
            resource_version: "4".into(),
            generation: 1,
            ..Default::default()
        }
    }

    fn deployment(replicas: i32) -> Deployment {
        Deployment {
            metadata: meta("web", "uid-deploy"),
            spec: DeploymentSpec {
                replicas: Some(replicas),
                selector: web_selector(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn replica_set(replicas: i32) -> ReplicaSet {
        let mut m = meta("web-7d4b9c8f6", "uid-rs");
        m.owner_references = vec![owner("Deployment", "apps/v1", "web", "uid-deploy")];
        ReplicaSet {
            metadata: m,
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                selector: web_selector(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn pod(name: &str, ready: bool, controlled: bool) -> Pod {
        let mut m = meta(name, &format!("uid-{name}"));
        m.generation = 0;
        m.labels = [("app".to_string(), "web".to_string())].into();
        if controlled {
            m.owner_references = vec![owner("ReplicaSet", "apps/v1", "web-7d4b9c8f6", "uid-rs")];
        }
        Pod {
            metadata: m,
            spec: PodSpec {
                node_name: "node-1".into(),
                containers: vec![Container {
                    name: "app".into(),
                    image: "nginx:1.27".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }
            .into(),
            status: PodStatus {
                phase: "Running".into(),
                conditions: vec![Condition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        }
    }

    fn pdb(min: Option<IntOrString>, max: Option<IntOrString>) -> PodDisruptionBudget {
        PodDisruptionBudget {
            metadata: meta("web-pdb", "uid-pdb"),
            spec: PodDisruptionBudgetSpec {
                min_available: min,
                max_unavailable: max,
                selector: Some(web_selector()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn sync(pdb: &PodDisruptionBudget, objs: Vec<Object>, now: Millis) -> Outcome {
        let mut cache = Cache::new();
        cache.upsert(Rc::new(Object::from(pdb.clone())));
        for o in objs {
            cache.upsert(Rc::new(o));
        }
        let mut rng = Rng::new(1);
        let mut ctx = Ctx {
            now,
            cache: &cache,
            rng: &mut rng,
            runtime: None,
            storage: None,
        };
        let key = ObjectKey::of(Kind::PodDisruptionBudget, &pdb.metadata);
        DisruptionController::new().reconcile(&key, &mut ctx)
    }

    fn written(out: &Outcome) -> PodDisruptionBudget {
        out.requests()
            .find_map(|r| match r {
                ApiRequest::UpdateStatus(Object::PodDisruptionBudget(p)) => {
                    Some(PodDisruptionBudget::clone(p))
                }
                _ => None,
            })
            .expect("a status write")
    }

    fn managed(replicas: i32, ready: usize, not_ready: usize) -> Vec<Object> {
        let mut objs = vec![
            Object::from(deployment(replicas)),
            Object::from(replica_set(replicas)),
        ];
        for i in 0..ready + not_ready {
            objs.push(Object::from(pod(&format!("web-{i}"), i < ready, true)));
        }
        objs
    }

    #[test]
    fn pdb_status_follows_the_budget_arithmetic() {
        let int = |i| Some(IntOrString::Int(i));
        let pct = |s: &str| Some(IntOrString::String(s.into()));
        // (minAvailable, maxUnavailable, replicas, ready, not ready) → (expected, desired, healthy, allowed, reason)
        let table = [
            (int(2), None, 3, 3, 0, (3, 2, 3, 1, "SufficientPods")),
            (pct("50%"), None, 3, 3, 0, (3, 2, 3, 1, "SufficientPods")),
            (None, int(1), 3, 3, 0, (3, 2, 3, 1, "SufficientPods")),
            (int(10), None, 5, 5, 0, (5, 10, 5, 0, "InsufficientPods")),
            (None, pct("50%"), 4, 3, 1, (4, 2, 3, 1, "SufficientPods")),
            (pct("100%"), None, 3, 3, 0, (3, 3, 3, 0, "InsufficientPods")),
            (None, int(0), 3, 3, 0, (3, 3, 3, 0, "InsufficientPods")),
            (int(2), None, 3, 2, 1, (3, 2, 2, 0, "InsufficientPods")),
        ];
        for (min, max, replicas, ready, not_ready, want) in table {
            let p = pdb(min.clone(), max.clone());
            let out = sync(&p, managed(replicas, ready, not_ready), 1_000);
            let s = written(&out).status;
            let cond = find_condition(&s.conditions, "DisruptionAllowed").unwrap();
            let got = (
                s.expected_pods,
                s.desired_healthy,
                s.current_healthy,
                s.disruptions_allowed,
                cond.reason.clone().unwrap(),
            );
            assert_eq!(
                got,
                (want.0, want.1, want.2, want.3, want.4.into()),
                "min {min:?} max {max:?} replicas {replicas}"
            );
            assert_eq!(cond.status, if want.3 > 0 { "True" } else { "False" });
            assert_eq!(s.observed_generation, 1);
        }
    }

    #[test]
    fn an_up_to_date_status_is_not_written_again() {
        let p = pdb(Some(IntOrString::Int(2)), None);
        let first = written(&sync(&p, managed(3, 3, 0), 1_000));
        let again = sync(&first, managed(3, 3, 0), 2_000);
        assert_eq!(again.requests().count(), 0);
    }

    #[test]
    fn a_budget_without_pods_records_no_pods() {
        let out = sync(&pdb(Some(IntOrString::Int(1)), None), vec![], 1_000);
        assert_eq!(
            (
                out.events[0].reason.as_str(),
                out.events[0].message.as_str()
            ),
            ("NoPods", "No matching pods found")
        );
        assert_eq!(written(&out).status.disruptions_allowed, 0);
    }

    #[test]
    fn unmanaged_pods_are_reported_and_left_out_of_a_percentage() {
        let objs = vec![
            Object::from(pod("bare-1", true, false)),
            Object::from(pod("bare-2", true, false)),
        ];
        let out = sync(
            &pdb(Some(IntOrString::String("50%".into())), None),
            objs,
            1_000,
        );
        let e = out
            .events
            .iter()
            .find(|e| e.reason == "UnmanagedPods")
            .expect("warning");
        assert_eq!(e.type_, "Warning");
        assert!(e.message.starts_with("Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged."), "{}", e.message);
        let s = written(&out).status;
        assert_eq!(
            (s.expected_pods, s.current_healthy, s.disruptions_allowed),
            (0, 2, 0),
            "no controller, no expected pods"
        );
    }

    #[test]
    fn a_missing_controller_fails_the_sync_safely() {
        let out = sync(
            &pdb(None, Some(IntOrString::Int(1))),
            vec![Object::from(pod("web-1", true, true))],
            1_000,
        );
        let e = out
            .events
            .iter()
            .find(|e| e.reason == "CalculateExpectedPodCountFailed")
            .expect("warning");
        assert_eq!(e.message, "Failed to calculate the number of expected pods: found no controllers for pod \"web-1\"");
        let s = written(&out).status;
        let cond = find_condition(&s.conditions, "DisruptionAllowed").unwrap();
        assert_eq!(
            (cond.status.as_str(), cond.reason.as_deref()),
            ("False", Some("SyncFailed"))
        );
        assert_eq!(
            cond.message.as_deref(),
            Some("found no controllers for pod \"web-1\"")
        );
        assert_eq!(s.disruptions_allowed, 0);
    }

    #[test]
    fn disrupted_pods_stop_counting_until_deleted_or_timed_out() {
        let mut p = pdb(Some(IntOrString::Int(1)), None);
        p.status.disrupted_pods = [
            ("web-0".to_string(), Time(100_000)), // recent: not healthy
            ("web-1".to_string(), Time(0)),       // past DeletionTimeout: NotDeleted
            ("gone".to_string(), Time(100_000)),  // no such pod any more
        ]
        .into();
        let out = sync(&p, managed(3, 3, 0), 150_000);
        let s = written(&out).status;
        assert_eq!(s.disrupted_pods.keys().collect::<Vec<_>>(), vec!["web-0"]);
        assert_eq!((s.current_healthy, s.disruptions_allowed), (2, 1));
        let e = out
            .events
            .iter()
            .find(|e| e.reason == "NotDeleted")
            .expect("warning on the pod");
        assert_eq!(e.object.name, "web-1");
        assert_eq!(
            e.message,
            "Pod was expected by PDB default/default to be deleted but it wasn't"
        );
        assert_eq!(
            out.requeue_after,
            Some(220_000 - 150_000 + 1),
            "rechecked when web-0's entry expires"
        );
    }

    // ------------------------------------------------------------------ through the Eviction API

    fn world_with_pods(names: &[&str]) -> Sim {
        let mut sim = Sim::new(SimConfig::default());
        for name in names {
            let mut p = pod(name, true, false);
            p.metadata.uid = Default::default();
            p.metadata.resource_version = Default::default();
            let status = p.status.clone();
            let created = sim
                .submit(ApiRequest::Create(Object::from(p)))
                .expect("pod created");
            let mut running = created.as_pod().cloned().unwrap();
            running.status = status;
            sim.submit(ApiRequest::UpdateStatus(Object::from(running)))
                .expect("pod running");
        }
        sim
    }

    fn create_pdb(sim: &mut Sim, name: &str, min: i64) {
        let mut p = pdb(Some(IntOrString::Int(min)), None);
        p.metadata = ObjectMeta {
            name: name.into(),
            namespace: "default".into(),
            ..Default::default()
        };
        sim.submit(ApiRequest::Create(Object::from(p)))
            .expect("pdb created");
    }

    fn evict(sim: &mut Sim, name: &str) -> Result<(), ApiError> {
        sim.submit(ApiRequest::Evict {
            key: ObjectKey::new(Kind::Pod, "default", name),
            options: DeleteOptions::default(),
        })
        .map(|_| ())
    }

    fn status(sim: &Sim) -> PodDisruptionBudgetStatus {
        sim.get(&ObjectKey::new(
            Kind::PodDisruptionBudget,
            "default",
            "web-pdb",
        ))
        .and_then(|o| o.as_pdb())
        .unwrap()
        .status
        .clone()
    }

    #[test]
    fn the_eviction_api_spends_the_budget_then_answers_429() {
        let mut sim = world_with_pods(&["web-1", "web-2", "web-3"]);
        create_pdb(&mut sim, "web-pdb", 2);
        let too_early =
            evict(&mut sim, "web-1").expect_err("the controller has not computed the budget yet");
        assert_eq!(too_early.code(), 429);
        sim.advance_to(1_000, usize::MAX);
        let s = status(&sim);
        assert_eq!(
            (
                s.expected_pods,
                s.desired_healthy,
                s.current_healthy,
                s.disruptions_allowed
            ),
            (3, 2, 3, 1)
        );

        evict(&mut sim, "web-1").expect("one disruption allowed");
        let answered: Vec<u16> = sim
            .trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Api(tr) if tr.verb == "create/eviction" => Some(tr.code),
                _ => None,
            })
            .collect();
        assert_eq!(answered, vec![429, 201]);
        let s = status(&sim);
        assert_eq!(s.disruptions_allowed, 0);
        assert!(s.disrupted_pods.contains_key("web-1"));
        assert_eq!(
            find_condition(&s.conditions, "DisruptionAllowed")
                .unwrap()
                .reason
                .as_deref(),
            Some("InsufficientPods")
        );
        let evicted = sim
            .get(&ObjectKey::new(Kind::Pod, "default", "web-1"))
            .and_then(|o| o.as_pod().cloned())
            .unwrap();
        assert!(evicted.metadata.deletion_timestamp.is_some());
        assert_eq!(
            find_condition(&evicted.status.conditions, "DisruptionTarget")
                .unwrap()
                .reason
                .as_deref(),
            Some("EvictionByEvictionAPI")
        );

        let refused = evict(&mut sim, "web-2").expect_err("budget exhausted");
        assert_eq!(refused.reason, StatusReason::TooManyRequests);
        assert_eq!(
            refused.message,
            "Cannot evict pod as it would violate the pod's disruption budget."
        );
        assert_eq!(
            refused.kubectl_message(),
            "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget."
        );

        sim.advance_to(2_000, usize::MAX);
        let s = status(&sim);
        assert_eq!(
            (s.current_healthy, s.disruptions_allowed),
            (2, 0),
            "web-1 is terminating"
        );
        assert!(
            s.disrupted_pods.is_empty(),
            "the entry is dropped once the pod is seen terminating"
        );
    }

    #[test]
    fn unready_and_pending_pods_can_be_evicted_without_spending_the_budget() {
        let mut sim = world_with_pods(&["web-1", "web-2", "web-3", "web-4"]);
        let key = ObjectKey::new(Kind::Pod, "default", "web-4");
        let mut unready = sim.get(&key).and_then(|o| o.as_pod().cloned()).unwrap();
        unready.status.conditions[0].status = "False".into();
        sim.submit(ApiRequest::UpdateStatus(Object::from(unready)))
            .unwrap();
        create_pdb(&mut sim, "web-pdb", 3);
        sim.advance_to(1_000, usize::MAX);
        assert_eq!(status(&sim).disruptions_allowed, 0);
        evict(&mut sim, "web-4").expect("an unready pod costs nothing while the budget is healthy");
        assert!(status(&sim).disrupted_pods.is_empty());

        let pending_key = ObjectKey::new(Kind::Pod, "default", "web-3");
        let mut pending = sim
            .get(&pending_key)
            .and_then(|o| o.as_pod().cloned())
            .unwrap();
        pending.status.phase = "Pending".into();
        sim.submit(ApiRequest::UpdateStatus(Object::from(pending)))
            .unwrap();
        evict(&mut sim, "web-3").expect("a pending pod is deleted without a PDB check");
    }

    #[test]
    fn a_pod_under_two_budgets_cannot_be_evicted() {
        let mut sim = world_with_pods(&["web-1"]);
        create_pdb(&mut sim, "web-pdb", 0);
        create_pdb(&mut sim, "web-pdb-2", 0);
        sim.advance_to(1_000, usize::MAX);
        let err = evict(&mut sim, "web-1").expect_err("500");
        assert_eq!(err.code(), 500);
        assert_eq!(err.message, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
    }
}
