//! The Job controller (`job-controller`): runs pods until enough of them succeed, or gives up, as
//! `pkg/controller/job` does.
//!
//! One pass (`syncJob`): skip a finished Job; wait for the pods it expects to see created or
//! deleted; claim its pods; count the newly finished ones exactly once (each finished pod's uid
//! goes into `status.uncountedTerminatedPods` first, then its `batch.kubernetes.io/job-tracking`
//! finalizer is removed, and only a pod seen without it is added to `succeeded` or `failed`);
//! decide whether the Job has failed (a pod failure policy's `FailJob`, `backoffLimit`,
//! `activeDeadlineSeconds`) or met its success criteria; otherwise make the number of active pods
//! `min(parallelism, completions − succeeded)`, after the failure back-off of 10 s · 2^(n−1)
//! (capped at 10 min) since the last failure; and write status. As v1.34 does (JobManagedBy and
//! JobPodReplacementPolicy are on), the terminal condition comes in two steps: `FailureTarget` or
//! `SuccessCriteriaMet` first, `Failed` or `Complete` once every finished pod is counted and none
//! is still terminating.
//!
//! Pods whose Job is gone or finished are "orphans": their tracking finalizer is removed so that
//! they can go (`syncOrphanPod`).

pub mod backoff;
pub mod indexed;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::{json, Map, Value as Json};

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::job::{self as api, TRACKING_FINALIZER};
use crate::sim::api::types::{
    find_condition, Kind, Millis, Object, ObjectKey, ObjectMeta, OwnerReference, Pod, PodStatus,
    Str, Time,
};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, StatusReason, WatchEvent};
use crate::sim::controllers::replicaset::{
    adopt_patch_for, rank_for_deletion, slow_start_batches, Expectations,
};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sort::CollectTree;
use crate::vec_map::SlotMap;
use backoff::remaining_backoff;

/// `MaxPodCreateDeletePerSync`.
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// The reason and message of a Job that reached its completions (JobSuccessPolicy is GA).
pub const COMPLETIONS_REACHED: (&str, &str) = (
    "CompletionsReached",
    "Reached expected number of succeeded pods",
);
pub const BACKOFF_LIMIT_EXCEEDED: (&str, &str) = (
    "BackoffLimitExceeded",
    "Job has reached the specified backoff limit",
);
pub const DEADLINE_EXCEEDED: (&str, &str) = (
    "DeadlineExceeded",
    "Job was active longer than specified deadline",
);

/// What the answer to a request decides, for events that need it.
#[derive(Clone, Debug)]
struct Pending {
    job: ObjectKey,
    uid: String,
    /// `(type, reason, message)` to record when the request succeeds.
    on_success: Vec<(&'static str, String, String)>,
}

/// The Job controller.
#[derive(Clone, Debug, Default)]
pub struct JobController {
    expectations: Expectations,
    pending: SlotMap<ObjectKey, Pending>,
}

impl JobController {
    pub fn new() -> Self {
        Self::default()
    }
}

fn job_key_of(pod: &Pod, kind: Kind) -> Option<(ObjectKey, &OwnerReference)> {
    let r = pod
        .metadata
        .controller_ref()
        .filter(|r| r.kind == "Job" && r.api_version.starts_with("batch/"))?;
    Some((ObjectKey::new(kind, &pod.metadata.namespace, &r.name), r))
}

/// The live Job a pod's controller reference names (same uid), if the cache has it.
fn owner_job<'a>(pod: &Pod, kind: Kind, cache: &'a Cache) -> Option<&'a CustomObject> {
    let (key, r) = job_key_of(pod, kind)?;
    cache
        .get(&key)
        .and_then(|o| o.as_custom())
        .filter(|j| j.metadata.uid == r.uid)
}

fn has_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .any(|f| f == TRACKING_FINALIZER)
}

fn pod_key(pod: &Pod) -> ObjectKey {
    ObjectKey::of(Kind::Pod, &pod.metadata)
}

/// `onlyReplaceFailedPods`: a terminating pod is not a failure yet (and blocks its replacement).
fn only_replace_failed(job: &CustomObject) -> bool {
    job.at(&["spec", "podReplacementPolicy"])
        .and_then(Json::as_str)
        == Some("Failed")
        || job.at(&["spec", "podFailurePolicy"]).is_some()
}

/// `isPodFailed`: Failed, or — unless only failed pods are replaced — deleted before it succeeded
/// (an orphan that never reaches Failed must still count).
fn is_failed(pod: &Pod, job: &CustomObject) -> bool {
    pod.status.phase == "Failed"
        || (!only_replace_failed(job)
            && pod.metadata.deletion_timestamp.is_some()
            && pod.status.phase != "Succeeded")
}

/// A pod the Job still waits on: neither finished nor being deleted.
fn is_active(pod: &Pod) -> bool {
    !matches!(pod.status.phase.as_str(), "Succeeded" | "Failed")
        && pod.metadata.deletion_timestamp.is_none()
}

fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
        && !matches!(pod.status.phase.as_str(), "Succeeded" | "Failed")
}

/// `getFinishedTime`: the last container's finish, else when Ready turned False, else the
/// deletion time less its grace period, else the creation time.
pub fn finished_time(pod: &Pod) -> Millis {
    let containers = pod
        .status
        .container_statuses
        .iter()
        .chain(&pod.status.init_container_statuses);
    let last_finish = containers
        .filter_map(|c| c.state.terminated.as_ref()?.finished_at)
        .map(|t| t.0)
        .max();
    last_finish
        .or_else(|| {
            find_condition(&pod.status.conditions, "Ready")
                .filter(|c| c.status == "False")
                .and_then(|c| c.last_transition_time)
                .map(|t| t.0)
        })
        .or_else(|| {
            let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(0);
            pod.metadata
                .deletion_timestamp
                .map(|t| t.0.saturating_sub(grace.max(0) as u64 * 1000))
        })
        .or_else(|| pod.metadata.creation_timestamp.map(|t| t.0))
        .unwrap_or(0)
}

/// The uids of `status.uncountedTerminatedPods.<which>`.
fn uncounted(job: &CustomObject, which: &str) -> BTreeSet<String> {
    job.at(&["status", "uncountedTerminatedPods", which])
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(String::from)
        .collect_set()
}

fn stamp(now: Millis) -> Json {
    json!(Time(now - now % 1000).to_rfc3339())
}

/// A Job condition as the controller writes it.
fn condition(type_: &str, status: &str, reason: &str, message: &str, now: Millis) -> Json {
    json!({
        "type": type_,
        "status": status,
        "lastProbeTime": stamp(now),
        "lastTransitionTime": stamp(now),
        "reason": reason,
        "message": message,
    })
}

/// Sets a condition in a condition list: an existing one of that type changes only when its
/// status does (then its times move too).
fn set_condition(conditions: &mut Vec<Json>, c: Json) {
    let type_ = c.get("type").cloned();
    match conditions
        .iter_mut()
        .find(|x| x.get("type") == type_.as_ref())
    {
        Some(x) if x.get("status") == c.get("status") => {}
        Some(x) => *x = c,
        None => conditions.push(c),
    }
}

fn conditions_of(job: &CustomObject) -> Vec<Json> {
    job.at(&["status", "conditions"])
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The pod failure policy's verdict on a failed pod (`matchPodFailurePolicy`).
#[derive(Debug, PartialEq)]
enum Verdict {
    Count,
    Ignore,
    FailJob(String),
}

fn match_pod_failure_policy(job: &CustomObject, pod: &Pod) -> Verdict {
    let Some(rules) = job
        .at(&["spec", "podFailurePolicy", "rules"])
        .and_then(Json::as_array)
    else {
        return Verdict::Count;
    };
    let (ns, name) = (&pod.metadata.namespace, &pod.metadata.name);
    for (i, rule) in rules.iter().enumerate() {
        let action = rule.get("action").and_then(Json::as_str).unwrap_or("");
        let matched = if let Some(codes) = rule.get("onExitCodes") {
            let only = codes.get("containerName").and_then(Json::as_str);
            let not_in = codes.get("operator").and_then(Json::as_str) == Some("NotIn");
            let values: Vec<i64> = codes
                .get("values")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(Json::as_i64)
                .collect();
            pod.status
                .init_container_statuses
                .iter()
                .chain(&pod.status.container_statuses)
                .filter(|c| only.is_none_or(|n| n == c.name))
                .filter_map(|c| Some((c, c.state.terminated.as_ref()?.exit_code)))
                .find(|(_, code)| *code != 0 && values.contains(&i64::from(*code)) != not_in)
                .map(|(c, code)| {
                    format!(
                        "Container {} for pod {ns}/{name} failed with exit code {code} matching {action} rule at index {i}",
                        c.name
                    )
                })
        } else {
            rule.get("onPodConditions")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .find_map(|p| {
                    let type_ = p.get("type").and_then(Json::as_str)?;
                    let status = p.get("status").and_then(Json::as_str).unwrap_or("True");
                    find_condition(&pod.status.conditions, type_)
                        .filter(|c| c.status == status)
                        .map(|_| {
                            format!(
                                "Pod {ns}/{name} has condition {type_} matching {action} rule at index {i}"
                            )
                        })
                })
        };
        if let Some(message) = matched {
            return match action {
                "FailJob" => Verdict::FailJob(message),
                "Ignore" => Verdict::Ignore,
                _ => Verdict::Count,
            };
        }
    }
    Verdict::Count
}

/// `pastBackoffLimitOnFailure`: under `OnFailure`, the restarts of the active pods' containers.
fn past_backoff_limit_on_failure(job: &CustomObject, pods: &[&Pod]) -> bool {
    if api::restart_policy(job) != "OnFailure" {
        return false;
    }
    let restarts: i64 = pods
        .iter()
        .filter(|p| matches!(p.status.phase.as_str(), "Pending" | "Running"))
        .flat_map(|p| {
            p.status
                .init_container_statuses
                .iter()
                .chain(&p.status.container_statuses)
        })
        .map(|c| i64::from(c.restart_count))
        .sum();
    let limit = i64::from(api::backoff_limit(job));
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// One pass's decisions, gathered before they become requests.
struct Pass<'a> {
    job: &'a CustomObject,
    key: &'a ObjectKey,
    now: Millis,
    out: Outcome,
    notes: Vec<String>,
    pending: Vec<(ObjectKey, Pending)>,
    /// Events to record once the status write succeeds.
    status_events: Vec<(&'static str, String, String)>,
}

impl Pass<'_> {
    fn pending(&self, on_success: Vec<(&'static str, String, String)>) -> Pending {
        Pending {
            job: self.key.clone(),
            uid: self.job.metadata.uid.to_string(),
            on_success,
        }
    }

    /// `removeTrackingFinalizerPatch`, guarded by the pod's resourceVersion.
    fn remove_finalizer(pod: &Pod) -> ApiRequest {
        let rest: Vec<&String> = pod
            .metadata
            .finalizers
            .iter()
            .filter(|f| *f != TRACKING_FINALIZER)
            .collect();
        ApiRequest::Patch {
            key: pod_key(pod),
            patch: json!({"metadata": {"finalizers": rest, "resourceVersion": pod.metadata.resource_version}}),
            status: false,
        }
    }

    /// `deleteJobPods`: each pod loses its tracking finalizer (a pod the controller deletes is
    /// not a failure), then is deleted.
    fn delete_pods(&mut self, pods: &[&Pod], expectations: &mut Expectations) {
        if pods.is_empty() {
            return;
        }
        let keys = pods.iter().map(|p| pod_key(p)).collect_set();
        expectations.expect_deletions(self.key, keys, self.now);
        let patches: Vec<ApiRequest> = pods
            .iter()
            .filter(|p| has_finalizer(p))
            .map(|p| Self::remove_finalizer(p))
            .collect();
        self.out.batch(patches);
        let mut deletes = Vec::new();
        for p in pods {
            let pending = self.pending(vec![(
                "Normal",
                "SuccessfulDelete".into(),
                format!("Deleted pod: {}", p.metadata.name),
            )]);
            self.pending.push((pod_key(p), pending));
            deletes.push(ApiRequest::Delete {
                key: pod_key(p),
                options: DeleteOptions::default(),
            });
        }
        self.out.batch(deletes);
    }
}

/// The pod a Job makes: the template's, named from `<job>-` (`<job>-<index>-` for an Indexed
/// Job, with its index as annotation, label, hostname and `JOB_COMPLETION_INDEX`), owned by the
/// Job, carrying the tracking finalizer.
fn new_pod(job: &CustomObject, index: Option<usize>) -> Option<Pod> {
    let t = api::template(job)?;
    let name = &job.metadata.name;
    let mut pod = Pod {
        metadata: ObjectMeta {
            generate_name: match index {
                Some(i) => format!("{name}-{i}-").into(),
                None => format!("{name}-").into(),
            },
            namespace: job.metadata.namespace.clone(),
            labels: t.metadata.labels.clone(),
            annotations: t.metadata.annotations.clone(),
            finalizers: t.metadata.finalizers.clone(),
            owner_references: vec![OwnerReference {
                api_version: "batch/v1".into(),
                kind: "Job".into(),
                name: name.clone(),
                uid: job.metadata.uid.clone(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }],
            ..Default::default()
        },
        spec: t.spec.into(),
        status: PodStatus::default(),
    };
    pod.metadata.finalizers.push(TRACKING_FINALIZER.into());
    if let Some(i) = index {
        indexed::add_index(&mut pod, name, i);
    }
    Some(pod)
}

impl JobController {
    /// `syncOrphanPod`: a pod whose Job is gone or finished keeps no tracking finalizer.
    fn sync_orphan(&self, key: &ObjectKey, cache: &Cache, kind: Kind) -> Outcome {
        let mut out = Outcome::done();
        let Some(pod) = cache.get(key).and_then(|o| o.as_pod()) else {
            return out;
        };
        let owner = owner_job(pod, kind, cache);
        if has_finalizer(pod) && owner.is_none_or(api::finished) {
            out.request(Pass::remove_finalizer(pod));
            out.record = Some(ReconcileRecord {
                observed: format!("pod {} of a gone or finished Job", pod.metadata.name),
                desired: "no tracking finalizer on it".into(),
                diff: "finalizer removed".into(),
            });
        }
        out
    }

    fn sync(&mut self, pass: &mut Pass<'_>, cache: &Cache) {
        let job = pass.job;
        let now = pass.now;
        let ns = &job.metadata.namespace;
        let selector = api::selector(job);

        // Claim: the Job's own pods, and orphans its selector matches.
        let mut pods: Vec<&Pod> = Vec::new();
        let mut adopt = Vec::new();
        for pod in cache.list_ns(Kind::Pod, ns).filter_map(|o| o.as_pod()) {
            match pod.metadata.controller_ref() {
                Some(r) if r.uid == job.metadata.uid => pods.push(pod),
                Some(_) => {}
                None if !selector.is_empty()
                    && selector.matches(&pod.metadata.labels)
                    && pod.metadata.deletion_timestamp.is_none() =>
                {
                    adopt.push(adopt_patch_for(
                        pod,
                        OwnerReference {
                            api_version: "batch/v1".into(),
                            kind: "Job".into(),
                            name: job.metadata.name.clone(),
                            uid: job.metadata.uid.clone(),
                            controller: Some(true),
                            block_owner_deletion: Some(true),
                        },
                    ));
                    pods.push(pod);
                }
                None => {}
            }
        }
        pass.out.batch(adopt);

        // Count: uncounted pods seen without their finalizer (or gone) move into the totals.
        let by_uid: BTreeMap<&str, &Pod> = pods
            .iter()
            .map(|p| (p.metadata.uid.as_str(), *p))
            .collect_map();
        let still_tracked =
            |uid: &String| by_uid.get(uid.as_str()).is_some_and(|p| has_finalizer(p));
        let int = |f: &str| job.int_at(&["status", f]).unwrap_or(0);
        let (mut counted_succeeded, mut counted_failed) = (int("succeeded"), int("failed"));
        let mut uncounted_succeeded = uncounted(job, "succeeded");
        let mut uncounted_failed = uncounted(job, "failed");
        let before = uncounted_succeeded.len() + uncounted_failed.len();
        uncounted_succeeded.retain(|u| {
            still_tracked(u) || {
                counted_succeeded += 1;
                false
            }
        });
        uncounted_failed.retain(|u| {
            still_tracked(u) || {
                counted_failed += 1;
                false
            }
        });
        let flushed = before - uncounted_succeeded.len() - uncounted_failed.len();

        // Newly finished pods, judged by the pod failure policy.
        let mut failure_target: Option<(String, String)> = api::condition(job, "FailureTarget")
            .filter(|c| c.get("status").and_then(Json::as_str) == Some("True"))
            .map(|c| {
                let s = |k: &str| c.get(k).and_then(Json::as_str).unwrap_or("").to_string();
                (s("reason"), s("message"))
            });
        let already_failing = failure_target.is_some();
        let mut ignored: Vec<&Pod> = Vec::new();
        let mut newly = 0;
        for pod in &pods {
            let uid = &pod.metadata.uid;
            if !has_finalizer(pod)
                || uncounted_succeeded.contains(uid.as_str())
                || uncounted_failed.contains(uid.as_str())
            {
                continue;
            }
            if pod.status.phase == "Succeeded" {
                uncounted_succeeded.insert(uid.to_string());
                newly += 1;
            } else if is_failed(pod, job) {
                match match_pod_failure_policy(job, pod) {
                    Verdict::Ignore => {
                        ignored.push(pod);
                        continue;
                    }
                    Verdict::FailJob(message) if failure_target.is_none() => {
                        failure_target = Some(("PodFailurePolicy".into(), message));
                    }
                    _ => {}
                }
                uncounted_failed.insert(uid.to_string());
                newly += 1;
            }
        }
        let succeeded_total = counted_succeeded + uncounted_succeeded.len() as i64;
        let failed_total = counted_failed + uncounted_failed.len() as i64;
        if newly > 0 {
            pass.notes
                .push(format!("{newly} newly finished pod(s) recorded"));
        }

        // Start time, suspension.
        let suspended = api::suspended(job);
        let mut start_time = job
            .at(&["status", "startTime"])
            .and_then(Json::as_str)
            .and_then(Time::parse_rfc3339)
            .map(|t| t.0);
        let mut conditions = conditions_of(job);
        let was_suspended = api::has_condition(job, "Suspended");
        if suspended && !was_suspended {
            set_condition(
                &mut conditions,
                condition("Suspended", "True", "JobSuspended", "Job suspended", now),
            );
            pass.status_events
                .push(("Normal", "Suspended".into(), "Job suspended".into()));
        } else if !suspended && was_suspended {
            set_condition(
                &mut conditions,
                condition("Suspended", "False", "JobResumed", "Job resumed", now),
            );
            pass.status_events
                .push(("Normal", "Resumed".into(), "Job resumed".into()));
            start_time = Some(now - now % 1000);
        }
        if start_time.is_none() && !suspended {
            start_time = Some(now - now % 1000);
        }

        // The terminal decision.
        let active: Vec<&Pod> = pods.iter().copied().filter(|p| is_active(p)).collect();
        if failure_target.is_none() {
            if failed_total > i64::from(api::backoff_limit(job))
                || past_backoff_limit_on_failure(job, &pods)
            {
                failure_target = Some(str_pair(BACKOFF_LIMIT_EXCEEDED));
            } else if let (Some(deadline), Some(start), false) =
                (api::active_deadline_seconds(job), start_time, suspended)
            {
                let end = start + deadline.max(0) as u64 * 1000;
                if now >= end {
                    failure_target = Some(str_pair(DEADLINE_EXCEEDED));
                } else {
                    pass.out.requeue(end - now);
                }
            }
        }

        let indexed = api::indexed(job);
        let completions = api::completions(job);
        let mut completed_indexes = indexed::completed_indexes(job, &pods, &uncounted_succeeded);
        if let Some(c) = completions {
            completed_indexes.retain(|i| *i < c.max(0) as usize);
        }
        let succeeded_for_completion = if indexed {
            completed_indexes.len() as i64
        } else {
            succeeded_total
        };

        let active_after = if failure_target.is_some() || suspended {
            if !active.is_empty() {
                pass.notes.push(if suspended && failure_target.is_none() {
                    "suspended: deleting active pods".to_string()
                } else {
                    format!("failing: deleting {} active pod(s)", active.len())
                });
            }
            pass.delete_pods(&active, &mut self.expectations);
            0
        } else {
            self.manage(
                pass,
                &pods,
                &active,
                completions,
                succeeded_for_completion,
                &completed_indexes,
            )
        };

        // Success criteria.
        let success_met = api::has_condition(job, "SuccessCriteriaMet");
        let complete_now = failure_target.is_none()
            && !success_met
            && active_after == 0
            && match completions {
                Some(c) => succeeded_for_completion >= i64::from(c),
                None => succeeded_total > 0,
            };
        if let Some((reason, message)) = &failure_target {
            if !already_failing {
                set_condition(
                    &mut conditions,
                    condition("FailureTarget", "True", reason, message, now),
                );
            }
        }
        if complete_now {
            let (reason, message) = COMPLETIONS_REACHED;
            set_condition(
                &mut conditions,
                condition("SuccessCriteriaMet", "True", reason, message, now),
            );
        }
        let terminating = pods.iter().filter(|p| is_terminating(p)).count() as i64;
        let all_counted = uncounted_succeeded.is_empty() && uncounted_failed.is_empty();
        let mut completion_time = job.at(&["status", "completionTime"]).cloned();
        if all_counted && terminating == 0 && active_after == 0 {
            if let Some((reason, message)) = &failure_target {
                set_condition(
                    &mut conditions,
                    condition("Failed", "True", reason, message, now),
                );
                pass.status_events
                    .push(("Warning", reason.clone(), message.clone()));
                pass.notes.push(format!("Failed: {reason}"));
            } else if success_met || complete_now {
                let (reason, message) = COMPLETIONS_REACHED;
                set_condition(
                    &mut conditions,
                    condition("Complete", "True", reason, message, now),
                );
                completion_time = Some(stamp(now));
                pass.status_events
                    .push(("Normal", "Completed".into(), "Job completed".into()));
                pass.notes.push("Complete".into());
            }
        } else if failure_target.is_some() || success_met || complete_now {
            pass.notes.push(format!(
                "finishing: {} uncounted, {terminating} terminating",
                uncounted_succeeded.len() + uncounted_failed.len()
            ));
        }

        // Status.
        let ready = active.iter().filter(|p| p.is_ready()).count() as i64;
        let mut status = Map::new();
        let mut put = |k: &str, v: Json| {
            status.insert(k.into(), v);
        };
        if !conditions.is_empty() {
            put("conditions", Json::Array(conditions));
        }
        if let Some(t) = start_time {
            put("startTime", json!(Time(t).to_rfc3339()));
        }
        if let Some(t) = completion_time {
            put("completionTime", t);
        }
        if active_after > 0 {
            put("active", json!(active_after));
        }
        // An Indexed Job's succeeded count is its completed indexes, counted or not yet.
        let succeeded_field = if indexed {
            completed_indexes.len() as i64
        } else {
            counted_succeeded
        };
        if succeeded_field > 0 {
            put("succeeded", json!(succeeded_field));
        }
        if counted_failed > 0 {
            put("failed", json!(counted_failed));
        }
        if indexed && !completed_indexes.is_empty() {
            put(
                "completedIndexes",
                json!(indexed::format_indexes(&completed_indexes)),
            );
        }
        let mut uncounted_json = Map::new();
        for (k, set) in [
            ("succeeded", &uncounted_succeeded),
            ("failed", &uncounted_failed),
        ] {
            if !set.is_empty() {
                uncounted_json.insert(k.into(), json!(set));
            }
        }
        put("uncountedTerminatedPods", Json::Object(uncounted_json));
        put("terminating", json!(terminating));
        put("ready", json!(ready));
        let status = Json::Object(status);
        if job.content.get("status") != Some(&status) {
            let mut obj = job.clone();
            obj.content.insert("status".into(), status);
            let events = std::mem::take(&mut pass.status_events);
            let pending = pass.pending(events);
            pass.pending.push((pass.key.clone(), pending));
            pass.out
                .request(ApiRequest::UpdateStatus(Object::from(obj)));
        }
        if flushed > 0 {
            pass.notes.push(format!("{flushed} pod(s) counted"));
        }

        // Finalizers: of every pod recorded as uncounted, and of ignored failures.
        let release: Vec<ApiRequest> = pods
            .iter()
            .filter(|p| has_finalizer(p))
            .filter(|p| {
                let uid = &p.metadata.uid;
                uncounted_succeeded.contains(uid.as_str())
                    || uncounted_failed.contains(uid.as_str())
                    || ignored.iter().any(|i| i.metadata.uid == *uid)
            })
            .map(|p| Pass::remove_finalizer(p))
            .collect();
        pass.out.batch(release);
    }

    /// `manageJob`: delete surplus active pods, or create missing ones after the back-off.
    /// Returns the number of active pods once its requests succeed.
    fn manage(
        &mut self,
        pass: &mut Pass<'_>,
        pods: &[&Pod],
        active: &[&Pod],
        completions: Option<i32>,
        succeeded: i64,
        completed_indexes: &BTreeSet<usize>,
    ) -> i64 {
        let job = pass.job;
        let parallelism = i64::from(api::parallelism(job).max(0));
        let n_active = active.len() as i64;
        let want = match completions {
            None if succeeded > 0 => n_active,
            None => parallelism,
            Some(c) => (i64::from(c) - succeeded).clamp(0, parallelism),
        };
        // Surplus: the cheapest pods first, plus an Indexed Job's duplicates and strays.
        let mut surplus: Vec<&Pod> = if api::indexed(job) {
            indexed::redundant(active, completions, completed_indexes)
        } else {
            Vec::new()
        };
        let remaining: Vec<&Pod> = active
            .iter()
            .copied()
            .filter(|p| !surplus.iter().any(|s| s.metadata.uid == p.metadata.uid))
            .collect();
        let excess = (remaining.len() as i64 - want).max(0) as usize;
        if excess > 0 {
            let ranked = rank_for_deletion(remaining.iter().map(|p| (*p, 0)).collect(), pass.now);
            surplus.extend(ranked.into_iter().take(excess));
        }
        surplus.truncate(MAX_POD_CREATE_DELETE_PER_SYNC);
        if !surplus.is_empty() {
            pass.notes
                .push(format!("{} active pod(s) too many: deleted", surplus.len()));
            let n = surplus.len() as i64;
            pass.delete_pods(&surplus, &mut self.expectations);
            return n_active - n;
        }
        let terminating = if only_replace_failed(job) {
            pods.iter().filter(|p| is_terminating(p)).count() as i64
        } else {
            0
        };
        if n_active + terminating >= want {
            return n_active;
        }
        if let Some(wait) = remaining_backoff(job, pods, pass.now) {
            pass.notes.push(format!(
                "back-off: next pod in {}",
                crate::sim::time::format_duration(wait)
            ));
            pass.out.requeue(wait);
            return n_active;
        }
        let mut diff =
            ((want - n_active - terminating).max(0) as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
        let indexes: Vec<Option<usize>> = match completions {
            Some(c) if api::indexed(job) => {
                let v = indexed::first_pending(pods, completed_indexes, diff, c.max(0) as usize);
                diff = v.len();
                v.into_iter().map(Some).collect()
            }
            _ => vec![None; diff],
        };
        let new_pods: Vec<Pod> = indexes.iter().filter_map(|i| new_pod(job, *i)).collect();
        if new_pods.is_empty() {
            return n_active;
        }
        self.expectations
            .expect_creations(pass.key, new_pods.len(), pass.now);
        pass.notes
            .push(format!("{} pod(s) missing: created", new_pods.len()));
        let mut it = new_pods.into_iter();
        for size in slow_start_batches(diff) {
            let batch: Vec<ApiRequest> = it
                .by_ref()
                .take(size)
                .map(|p| ApiRequest::Create(Object::from(p)))
                .collect();
            pass.out.batch(batch);
        }
        n_active + diff as i64
    }
}

fn str_pair((a, b): (&str, &str)) -> (String, String) {
    (a.to_string(), b.to_string())
}

fn event(p: &Pending, type_: &'static str, reason: String, message: String) -> EventRecord {
    EventRecord {
        type_,
        reason: reason.into(),
        message: message.into(),
        object: p.job.clone(),
        uid: p.uid.as_str().into(),
        field_path: Str::EMPTY,
    }
}

impl Controller for JobController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Job
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        static WATCHED: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        WATCHED.get_or_init(|| match api::job_kind() {
            Some(k) => vec![k, Kind::Pod],
            None => Vec::new(),
        })
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let Some(kind) = api::job_kind() else {
            return Vec::new();
        };
        // The event's key, not one built anew from the object: most events are pods'.
        if ev.key.kind == kind {
            let key = (*ev.key).clone();
            let recreated = old.is_some_and(|o| o.meta().uid != ev.object.meta().uid);
            if ev.type_ == crate::sim::api::WatchEventType::Deleted || recreated {
                self.expectations.delete(&key);
            }
            // A finished or deleted Job's pods are orphans now: release their finalizers.
            let done = ev.type_ == crate::sim::api::WatchEventType::Deleted
                || ev.object.as_custom().is_some_and(api::finished);
            let mut keys = vec![key.clone()];
            if done {
                keys.extend(
                    cache
                        .list_ns(Kind::Pod, &key.namespace)
                        .filter_map(|o| o.as_pod())
                        .filter(|p| has_finalizer(p))
                        .filter(|p| job_key_of(p, kind).is_some_and(|(k, _)| k == key))
                        .map(pod_key),
                );
            }
            return keys;
        }
        let Some(pod) = ev.object.as_pod() else {
            return Vec::new();
        };
        let deleted = ev.type_ == crate::sim::api::WatchEventType::Deleted;
        let mut keys = Vec::new();
        match job_key_of(pod, kind) {
            Some((job, _)) => {
                if ev.type_ == crate::sim::api::WatchEventType::Added && !deleted {
                    self.expectations.creation_observed(&job);
                }
                if deleted || pod.metadata.deletion_timestamp.is_some() {
                    self.expectations.deletion_observed(&job, &pod_key(pod));
                }
                if owner_job(pod, kind, cache).is_some_and(|j| !api::finished(j)) {
                    keys.push(job);
                } else if has_finalizer(pod) && !deleted {
                    keys.push(pod_key(pod));
                }
            }
            None if !deleted => keys.extend(
                cache
                    .list_ns(kind, &pod.metadata.namespace)
                    .filter_map(|o| o.as_custom())
                    .filter(|j| {
                        let s = api::selector(j);
                        !s.is_empty() && s.matches(&pod.metadata.labels)
                    })
                    .map(|j| ObjectKey::of(kind, &j.metadata)),
            ),
            None => {}
        }
        if let Some(old_job) = old
            .and_then(|o| o.as_pod())
            .and_then(|p| job_key_of(p, kind))
            .map(|(k, _)| k)
        {
            if !keys.contains(&old_job) {
                keys.push(old_job);
            }
        }
        keys
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        api::job_kind().map_or_else(Vec::new, |k| cache.list(k).map(|o| o.key()).collect())
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(kind) = api::job_kind() else {
            return Outcome::done();
        };
        if key.kind == Kind::Pod {
            return self.sync_orphan(key, ctx.cache, kind);
        }
        let Some(job) = ctx.cache.get(key).and_then(|o| o.as_custom()) else {
            self.expectations.delete(key);
            let mut out = Outcome::done();
            out.record = Some(ReconcileRecord {
                observed: "Job not in cache (deleted)".into(),
                ..Default::default()
            });
            return out;
        };
        let desired = format!(
            "completions: {}, parallelism: {}",
            api::completions(job).map_or("unset".to_string(), |c| c.to_string()),
            api::parallelism(job)
        );
        if api::finished(job) {
            // Its pods are orphans now (`enqueueOrphanPods` upstream): none keeps the tracking
            // finalizer, even when the watch event that would have shown one was lost.
            let mut out = Outcome::done();
            let tracked: Vec<ApiRequest> = ctx
                .cache
                .list_ns(Kind::Pod, &key.namespace)
                .filter_map(|o| o.as_pod())
                .filter(|p| has_finalizer(p))
                .filter(|p| {
                    p.metadata
                        .controller_ref()
                        .is_some_and(|r| r.uid == job.metadata.uid)
                })
                .map(Pass::remove_finalizer)
                .collect();
            out.batch(tracked);
            out.record = Some(ReconcileRecord {
                observed: format!(
                    "finished ({})",
                    if api::has_condition(job, "Complete") {
                        "Complete"
                    } else {
                        "Failed"
                    }
                ),
                desired,
                diff: String::new(),
            });
            return out;
        }
        if !self.expectations.satisfied(key, ctx.now) {
            let e = self.expectations.get(key).copied().unwrap_or_default();
            let mut out = Outcome::done();
            out.record = Some(ReconcileRecord {
                observed: format!("expectations pending (add {}, del {})", e.add, e.del),
                desired,
                diff: "waits to see its own creates and deletes".into(),
            });
            return out;
        }
        let mut pass = Pass {
            job,
            key,
            now: ctx.now,
            out: Outcome::done(),
            notes: Vec::new(),
            pending: Vec::new(),
            status_events: Vec::new(),
        };
        self.sync(&mut pass, ctx.cache);
        let Pass {
            mut out,
            notes,
            pending,
            ..
        } = pass;
        self.pending.extend(pending);
        let int = |f: &str| job.int_at(&["status", f]).unwrap_or(0);
        out.record = Some(ReconcileRecord {
            observed: format!(
                "{} active ({} ready), {} succeeded, {} failed",
                int("active"),
                int("ready"),
                int("succeeded"),
                int("failed")
            ),
            desired,
            diff: notes.join("; "),
        });
        out
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        let Some(kind) = api::job_kind() else {
            return;
        };
        match (req, result) {
            // The informer will never see a pod that was not created.
            (ApiRequest::Create(Object::Pod(pod)), Err(_)) => {
                if let Some((job, _)) = job_key_of(pod, kind) {
                    self.expectations.creation_observed(&job);
                }
            }
            (ApiRequest::Delete { key, .. }, Err(_)) if key.kind == Kind::Pod => {
                if let Some(p) = self.pending.get(key) {
                    let job = p.job.clone();
                    self.expectations.deletion_observed(&job, key);
                }
            }
            _ => {}
        }
    }

    fn events_for_response(&mut self, req: &ApiRequest, result: &ApiResult) -> Vec<EventRecord> {
        let Some(kind) = api::job_kind() else {
            return Vec::new();
        };
        if let ApiRequest::Create(Object::Pod(pod)) = req {
            let Some((job, r)) = job_key_of(pod, kind) else {
                return Vec::new();
            };
            let p = Pending {
                job,
                uid: r.uid.to_string(),
                on_success: Vec::new(),
            };
            return vec![match result {
                Ok(created) => event(
                    &p,
                    "Normal",
                    "SuccessfulCreate".into(),
                    format!("Created pod: {}", created.meta().name),
                ),
                Err(e) => event(
                    &p,
                    "Warning",
                    "FailedCreate".into(),
                    format!("Error creating: {}", e.message),
                ),
            }];
        }
        if !matches!(req, ApiRequest::Delete { .. } | ApiRequest::UpdateStatus(_)) {
            return Vec::new();
        }
        let Some(p) = self.pending.remove(&req.key()) else {
            return Vec::new();
        };
        match result {
            Ok(_) => p
                .on_success
                .iter()
                .map(|(t, r, m)| event(&p, t, r.clone(), m.clone()))
                .collect(),
            Err(e)
                if matches!(req, ApiRequest::Delete { .. })
                    && e.reason != StatusReason::NotFound =>
            {
                vec![event(
                    &p,
                    "Warning",
                    "FailedDelete".into(),
                    format!("Error deleting: {}", e.message),
                )]
            }
            Err(_) => Vec::new(),
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        let Some(kind) = api::job_kind() else {
            return;
        };
        match req {
            ApiRequest::Create(Object::Pod(pod)) => {
                if let Some((job, _)) = job_key_of(pod, kind) {
                    self.expectations.creation_observed(&job);
                }
            }
            ApiRequest::Delete { key, .. } => {
                if let Some(p) = self.pending.remove(key) {
                    self.expectations.deletion_observed(&p.job, key);
                }
            }
            other => {
                self.pending.remove(&other.key());
            }
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(JobController::new()))
    }
}
