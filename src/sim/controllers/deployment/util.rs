//! Pure helpers of the Deployment controller (`pkg/controller/deployment/util`) and of kubectl's
//! `rollout` commands (`undo`, `restart`, `status`), shared by the controller and the kubectl layer.
//!
//! Everything here is a function of its arguments: no cache, no clock except a `now` passed in.
//! Defaults that apps/v1 admission would have filled in (`replicas: 1`, RollingUpdate 25%/25%,
//! `revisionHistoryLimit: 10`, `progressDeadlineSeconds: 600`) are applied on read, so a manifest
//! that skipped admission still behaves like the defaulted object would.

use std::cmp::Ordering;

use serde_json::{json, Value as Json};

use crate::sim::api::types::{
    Condition, Deployment, DeploymentStatus, IntOrString, LabelSelector, Millis, ObjectMeta,
    OwnerReference, PodTemplateSpec, ReplicaSet, Str, StringMap, Time, LAST_APPLIED,
};
use crate::sort::StableSort;

/// The revision of a ReplicaSet in its Deployment's rollout history (copied to the Deployment).
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// Earlier revisions a re-used ReplicaSet had, comma-separated (a rollback makes an old RS new again).
pub const REVISION_HISTORY_ANNOTATION: &str = "deployment.kubernetes.io/revision-history";
/// `spec.replicas` of the Deployment when the RS was last scaled: how scaling events are detected.
pub const DESIRED_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/desired-replicas";
/// `replicas + maxSurge` when the RS was last scaled: the denominator of proportional scaling.
pub const MAX_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/max-replicas";
/// The label that keeps the ReplicaSets of one Deployment from selecting each other's pods.
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
/// The annotation apps/v1 uses to round-trip extensions/v1beta1's `spec.rollbackTo`.
pub const DEPRECATED_ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";
/// Set on the pod template by `kubectl rollout restart`: a new template hash, hence a rollout.
pub const RESTARTED_AT_ANNOTATION: &str = "kubectl.kubernetes.io/restartedAt";
/// `revision-history` is capped at this many characters (`maxRevHistoryLengthInChars`).
pub const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

/// Progressing=True: the sync observed progress (more updated/ready/available, fewer old).
pub const REPLICA_SET_UPDATED_REASON: &str = "ReplicaSetUpdated";
/// Progressing=False: creating the new ReplicaSet failed (quota, validation, …).
pub const FAILED_RS_CREATE_REASON: &str = "ReplicaSetCreateError";
/// Progressing=True: this sync created the new ReplicaSet.
pub const NEW_REPLICA_SET_REASON: &str = "NewReplicaSetCreated";
/// Progressing=True: the new ReplicaSet already existed when progress tracking started.
pub const FOUND_NEW_RS_REASON: &str = "FoundNewReplicaSet";
/// Progressing=True: the rollout is complete.
pub const NEW_RS_AVAILABLE_REASON: &str = "NewReplicaSetAvailable";
/// Progressing=False: no progress for `progressDeadlineSeconds`.
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";
/// Progressing=Unknown while paused, so a long pause is not reported as lack of progress.
pub const PAUSED_DEPLOY_REASON: &str = "DeploymentPaused";
/// Progressing=Unknown right after a resume, for the same reason.
pub const RESUMED_DEPLOY_REASON: &str = "DeploymentResumed";
/// Available=True.
pub const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// Available=False.
pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";
/// Event reason of the legacy server-side rollback when the revision does not exist.
pub const ROLLBACK_REVISION_NOT_FOUND: &str = "DeploymentRollbackRevisionNotFound";
/// Event reason of the legacy server-side rollback when the template already matches.
pub const ROLLBACK_TEMPLATE_UNCHANGED: &str = "DeploymentRollbackTemplateUnchanged";
/// Event reason of a successful legacy server-side rollback.
pub const ROLLBACK_DONE: &str = "DeploymentRollback";

/// Annotations never copied from a Deployment to its ReplicaSets (nor back by a rollback).
pub const ANNOTATIONS_TO_SKIP: [&str; 6] = [
    LAST_APPLIED,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    DEPRECATED_ROLLBACK_TO,
];

/// Whether an annotation stays where it is rather than flowing between Deployment and ReplicaSet.
pub fn skip_copy_annotation(key: &str) -> bool {
    ANNOTATIONS_TO_SKIP.contains(&key)
}

// ---------------------------------------------------------------- defaults and fenceposts

/// `spec.replicas`, defaulted to 1 as apps/v1 does.
pub fn replicas(d: &Deployment) -> i32 {
    d.spec.replicas.unwrap_or(1)
}

/// A ReplicaSet's `spec.replicas`, defaulted to 1 as apps/v1 does.
pub fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

/// `spec.strategy.type`, defaulted to `RollingUpdate`.
pub fn strategy_type(d: &Deployment) -> &str {
    d.spec
        .strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or("RollingUpdate")
}

/// True for the RollingUpdate strategy (the only one with surge and unavailability budgets).
pub fn is_rolling_update(d: &Deployment) -> bool {
    strategy_type(d) == "RollingUpdate"
}

/// `maxSurge` and `maxUnavailable` as written, each defaulted to `25%`.
pub fn rolling_update_params(d: &Deployment) -> (IntOrString, IntOrString) {
    let ru = d
        .spec
        .strategy
        .as_ref()
        .and_then(|s| s.rolling_update.as_ref());
    let pct = || IntOrString::String("25%".into());
    (
        ru.and_then(|r| r.max_surge.clone()).unwrap_or_else(pct),
        ru.and_then(|r| r.max_unavailable.clone())
            .unwrap_or_else(pct),
    )
}

/// `revisionHistoryLimit`, defaulted to 10.
pub fn revision_history_limit(d: &Deployment) -> i32 {
    d.spec.revision_history_limit.unwrap_or(10)
}

/// Cleanup runs only with a limit other than MaxInt32 (`HasRevisionHistoryLimit`).
pub fn has_revision_history_limit(d: &Deployment) -> bool {
    revision_history_limit(d) != i32::MAX
}

/// `progressDeadlineSeconds`, defaulted to 600.
pub fn progress_deadline_seconds(d: &Deployment) -> i32 {
    d.spec.progress_deadline_seconds.unwrap_or(600)
}

/// Progress is tracked only with a deadline other than MaxInt32 (`HasProgressDeadline`).
pub fn has_progress_deadline(d: &Deployment) -> bool {
    progress_deadline_seconds(d) != i32::MAX
}

/// `ResolveFenceposts`: surge rounds up, unavailable rounds down, both 0 forces unavailable to 1.
pub fn resolve_fenceposts(
    max_surge: &IntOrString,
    max_unavailable: &IntOrString,
    desired: i32,
) -> Result<(i32, i32), String> {
    let surge = max_surge.scaled_value(desired as i64, true)?;
    let mut unavailable = max_unavailable.scaled_value(desired as i64, false)?;
    if surge == 0 && unavailable == 0 {
        // "Validation should never allow the user to explicitly use zero values for both maxSurge
        // maxUnavailable. Due to rounding down maxUnavailable though, it may resolve to zero."
        unavailable = 1;
    }
    Ok((clamp_i32(surge), clamp_i32(unavailable)))
}

fn clamp_i32(v: i64) -> i32 {
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

/// The resolved `(maxSurge, maxUnavailable)` of a Deployment's rolling-update parameters against
/// `spec.replicas`, whatever the strategy (see [`max_surge`] / [`max_unavailable`] for the values
/// the controller actually uses). An unparsable value resolves to `(0, 0)`, as the controller's
/// `MaxSurge`/`MaxUnavailable` ignore the error.
pub fn max_surge_and_unavailable(d: &Deployment) -> (i32, i32) {
    let (surge, unavailable) = rolling_update_params(d);
    resolve_fenceposts(&surge, &unavailable, replicas(d)).unwrap_or((0, 0))
}

/// `MaxSurge`: 0 unless RollingUpdate.
pub fn max_surge(d: &Deployment) -> i32 {
    if !is_rolling_update(d) {
        return 0;
    }
    max_surge_and_unavailable(d).0
}

/// `MaxUnavailable`: 0 unless RollingUpdate or when scaled to 0; never more than `spec.replicas`.
pub fn max_unavailable(d: &Deployment) -> i32 {
    let r = replicas(d);
    if !is_rolling_update(d) || r == 0 {
        return 0;
    }
    max_surge_and_unavailable(d).1.min(r)
}

// ---------------------------------------------------------------- template hash

/// `controller.ComputeHash`: FNV-32a over the template (plus the collision count, little-endian in
/// an 8-byte buffer), printed in decimal and mapped onto the safe alphabet.
///
/// The template is serialised with serde_json (deterministic: struct order and sorted maps), not
/// with Go's `DeepHashObject` (spew), so the hash has the real shape (`7d4b9c8f6`) but not the
/// value a real cluster would compute for the same template.
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut h: u32 = 0x811c_9dc5;
    let mut write = |bytes: &[u8]| {
        for b in bytes {
            h ^= *b as u32;
            h = h.wrapping_mul(0x0100_0193);
        }
    };
    write(&serde_json::to_vec(template).unwrap_or_default());
    if let Some(c) = collision_count {
        let mut buf = [0u8; 8];
        buf[..4].copy_from_slice(&(c as u32).to_le_bytes());
        write(&buf);
    }
    safe_encode_string(&h.to_string())
}

/// `rand.SafeEncodeString`: each byte indexes the vowel-free alphabet modulo its length.
pub fn safe_encode_string(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| ALPHANUMS[b as usize % ALPHANUMS.len()] as char)
        .collect()
}

/// `EqualIgnoreHash`: template equality ignoring the `pod-template-hash` label.
pub fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    let strip = |t: &PodTemplateSpec| {
        let mut t = t.clone();
        t.metadata.labels.remove(POD_TEMPLATE_HASH_LABEL);
        t
    };
    strip(a) == strip(b)
}

// ---------------------------------------------------------------- conditions

/// `NewDeploymentCondition`: both timestamps are `now`.
pub fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: impl Into<String>,
    now: Millis,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(Str::from(message.into())),
        last_update_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        ..Default::default()
    }
}

/// `GetDeploymentCondition`.
pub fn get_condition<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a Condition> {
    status.conditions.iter().find(|c| c.type_ == type_)
}

/// `SetDeploymentCondition`: same status and reason changes nothing (not even the message); same
/// status keeps `lastTransitionTime`; the condition moves to the end of the list.
pub fn set_deployment_condition(status: &mut DeploymentStatus, mut cond: Condition) {
    if let Some(cur) = get_condition(status, &cond.type_) {
        if cur.status == cond.status && cur.reason == cond.reason {
            return;
        }
        if cur.status == cond.status {
            cond.last_transition_time = cur.last_transition_time;
        }
    }
    remove_condition(status, &cond.type_.clone());
    status.conditions.push(cond);
}

/// `RemoveDeploymentCondition`.
pub fn remove_condition(status: &mut DeploymentStatus, type_: &str) {
    status.conditions.retain(|c| c.type_ != type_);
}

// ---------------------------------------------------------------- revisions and annotations

/// `Revision`: the revision annotation, 0 when absent, an error when unparsable.
pub fn revision_of(meta: &ObjectMeta) -> Result<i64, String> {
    match meta.annotations.get(REVISION_ANNOTATION) {
        None => Ok(0),
        Some(v) => v
            .parse::<i64>()
            .map_err(|e| format!("strconv.ParseInt: parsing {v:?}: {e}")),
    }
}

/// `MaxRevision`: the highest parsable revision (0 for none).
pub fn max_revision<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i64 {
    rss.into_iter()
        .filter_map(|rs| revision_of(&rs.metadata).ok())
        .max()
        .unwrap_or(0)
        .max(0)
}

/// `LastRevision`: the second-highest revision (what `undo` with no revision goes back to).
pub fn last_revision<'a>(rss: impl IntoIterator<Item = &'a ReplicaSet>) -> i64 {
    let (mut max, mut sec) = (0i64, 0i64);
    for v in rss
        .into_iter()
        .filter_map(|rs| revision_of(&rs.metadata).ok())
    {
        if v >= max {
            sec = max;
            max = v;
        } else if v > sec {
            sec = v;
        }
    }
    sec
}

/// `SetDeploymentRevision`: writes the revision annotation on the Deployment; true if it changed.
pub fn set_deployment_revision(d: &mut Deployment, revision: &str) -> bool {
    if d.metadata
        .annotations
        .get(REVISION_ANNOTATION)
        .map(|v| v.as_str())
        != Some(revision)
    {
        d.metadata.annotations.insert(REVISION_ANNOTATION, revision);
        return true;
    }
    false
}

fn copy_deployment_annotations_to_replica_set(d: &Deployment, rs: &mut ReplicaSet) -> bool {
    let mut changed = false;
    for (k, v) in &d.metadata.annotations {
        if skip_copy_annotation(k) || rs.metadata.annotations.get(k) == Some(v) {
            continue;
        }
        rs.metadata.annotations.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// `SetNewReplicaSetAnnotations`: copies the Deployment's annotations, raises the revision to
/// `new_revision` (recording the previous one in `revision-history` when the RS is re-used), and
/// for a ReplicaSet about to be created (`exists == false`) sets the replica annotations.
pub fn set_new_replica_set_annotations(
    d: &Deployment,
    rs: &mut ReplicaSet,
    new_revision: &str,
    exists: bool,
    max_history_chars: usize,
) -> bool {
    let mut changed = copy_deployment_annotations_to_replica_set(d, rs);
    let old_revision = rs.metadata.annotations.get(REVISION_ANNOTATION).cloned();
    let old_int = match old_revision.as_deref() {
        None | Some("") => 0,
        Some(s) => match s.parse::<i64>() {
            Ok(v) => v,
            Err(_) => return false,
        },
    };
    let Ok(new_int) = new_revision.parse::<i64>() else {
        return false;
    };
    if old_int < new_int {
        rs.metadata
            .annotations
            .insert(REVISION_ANNOTATION, new_revision);
        changed = true;
    }
    if let Some(old) = old_revision.filter(|_| old_int < new_int) {
        let history = rs
            .metadata
            .annotations
            .get(REVISION_HISTORY_ANNOTATION)
            .cloned()
            .unwrap_or_default();
        let parts: Vec<&str> = history.split(',').collect();
        if parts[0].is_empty() {
            rs.metadata
                .annotations
                .insert(REVISION_HISTORY_ANNOTATION, old);
        } else {
            let mut total = history.len() + old.len() + 1;
            let mut start = 0;
            while total > max_history_chars && start < parts.len() {
                total -= parts[start].len() + 1;
                start += 1;
            }
            if total <= max_history_chars {
                let mut kept: Vec<&str> = parts[start..].to_vec();
                kept.push(&old);
                rs.metadata
                    .annotations
                    .insert(REVISION_HISTORY_ANNOTATION, kept.join(","));
            }
        }
    }
    if !exists && set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)) {
        changed = true;
    }
    changed
}

/// `SetReplicasAnnotations`: desired-replicas and max-replicas; true if either changed.
pub fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i32, max: i32) -> bool {
    let mut updated = false;
    for (k, v) in [
        (DESIRED_REPLICAS_ANNOTATION, desired),
        (MAX_REPLICAS_ANNOTATION, max),
    ] {
        let v = v.to_string();
        if rs.metadata.annotations.get(k).map(|x| x.as_str()) != Some(v.as_str()) {
            rs.metadata.annotations.insert(k, v);
            updated = true;
        }
    }
    updated
}

/// `ReplicasAnnotationsNeedUpdate`.
pub fn replicas_annotations_need_update(rs: &ReplicaSet, desired: i32, max: i32) -> bool {
    rs.metadata
        .annotations
        .get(DESIRED_REPLICAS_ANNOTATION)
        .map(|x| x.as_str())
        != Some(desired.to_string().as_str())
        || rs
            .metadata
            .annotations
            .get(MAX_REPLICAS_ANNOTATION)
            .map(|x| x.as_str())
            != Some(max.to_string().as_str())
}

fn int_annotation(rs: &ReplicaSet, key: &str) -> Option<i32> {
    rs.metadata
        .annotations
        .get(key)
        .and_then(|v| v.parse::<i32>().ok())
}

/// `GetDesiredReplicasAnnotation`.
pub fn desired_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
}

/// `getMaxReplicasAnnotation`.
pub fn max_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    int_annotation(rs, MAX_REPLICAS_ANNOTATION)
}

// ---------------------------------------------------------------- ReplicaSet ordering and selection

/// `ReplicaSetsByCreationTimestamp.Less`: older first, then by name. A ReplicaSet not created yet
/// (no timestamp) sorts as the newest.
pub fn cmp_by_creation(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    let t = |rs: &ReplicaSet| rs.metadata.creation_timestamp.map_or(u64::MAX, |t| t.0);
    t(a).cmp(&t(b))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// `ReplicaSetsBySizeOlder`: larger first; equal sizes older first (scale-down order).
pub fn cmp_by_size_older(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| cmp_by_creation(a, b))
}

/// `ReplicaSetsBySizeNewer`: larger first; equal sizes newer first (scale-up order).
pub fn cmp_by_size_newer(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| cmp_by_creation(b, a))
}

/// `ReplicaSetsByRevision`: lower revision first; equal revisions by creation.
pub fn cmp_by_revision(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    let r = |rs: &ReplicaSet| revision_of(&rs.metadata).unwrap_or(0);
    r(a).cmp(&r(b)).then_with(|| cmp_by_creation(a, b))
}

/// `FindNewReplicaSet`: the oldest ReplicaSet whose template equals the Deployment's (ignoring
/// the hash label). Returns its index in `rss`.
pub fn find_new_replica_set(d: &Deployment, rss: &[&ReplicaSet]) -> Option<usize> {
    let mut idx: Vec<usize> = (0..rss.len()).collect();
    idx.stable_sort_by(|&a, &b| cmp_by_creation(rss[a], rss[b]));
    idx.into_iter()
        .find(|&i| equal_ignore_hash(&rss[i].spec.template, &d.spec.template))
}

/// Whether `rs`'s controller reference points at this Deployment (`metav1.IsControlledBy`).
pub fn is_controlled_by(rs: &ReplicaSet, d: &Deployment) -> bool {
    rs.metadata
        .controller_ref()
        .is_some_and(|r| r.uid == d.metadata.uid)
}

/// `metav1.NewControllerRef(d, apps/v1 Deployment)`.
pub fn controller_ref(d: &Deployment) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: d.metadata.name.clone(),
        uid: d.metadata.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `IsSaturated`: the new RS runs exactly `spec.replicas`, all available, recorded in its annotation.
pub fn is_saturated(d: &Deployment, rs: Option<&ReplicaSet>) -> bool {
    let Some(rs) = rs else { return false };
    let Some(desired) = desired_replicas_annotation(rs) else {
        return false;
    };
    let r = replicas(d);
    rs_replicas(rs) == r && desired == r && rs.status.available_replicas == r
}

/// `NewRSNewReplicas`: how big the new ReplicaSet may be now. RollingUpdate grows it within
/// `replicas + maxSurge` in total; Recreate jumps straight to `replicas`.
pub fn new_rs_new_replicas(
    d: &Deployment,
    all_rss: &[&ReplicaSet],
    new_rs: &ReplicaSet,
) -> Result<i32, String> {
    match strategy_type(d) {
        "RollingUpdate" => {
            let r = replicas(d);
            let surge = clamp_i32(rolling_update_params(d).0.scaled_value(r as i64, true)?);
            let current: i32 = all_rss.iter().map(|rs| rs_replicas(rs)).sum();
            let max_total = r + surge;
            if current >= max_total {
                return Ok(rs_replicas(new_rs));
            }
            let up = (max_total - current).min(r - rs_replicas(new_rs));
            Ok(rs_replicas(new_rs) + up)
        }
        "Recreate" => Ok(replicas(d)),
        other => Err(format!("deployment type {other} isn't supported")),
    }
}

/// `GetProportion`: this ReplicaSet's share of `to_add`, bounded by what is still left to add.
pub fn get_proportion(rs: &ReplicaSet, d: &Deployment, to_add: i32, added: i32) -> i32 {
    if rs_replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = get_replica_set_fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `getReplicaSetFraction`: `round(spec × (replicas + maxSurge) / max-replicas annotation) − spec`.
pub fn get_replica_set_fraction(rs: &ReplicaSet, d: &Deployment) -> i32 {
    let r = replicas(d);
    if r == 0 {
        return -rs_replicas(rs);
    }
    let max_now = r + max_surge(d);
    let before = match max_replicas_annotation(rs) {
        Some(v) if v != 0 => v,
        // Someone edited the annotation away: fall back to the current size.
        _ => d.status.replicas,
    };
    if before == 0 {
        return 0;
    }
    let size = (rs_replicas(rs) as f64 * max_now as f64) / before as f64;
    clamp_i32(size.round() as i64) - rs_replicas(rs)
}

// ---------------------------------------------------------------- status

/// `calculateStatus`: counts summed over the ReplicaSets plus the Available condition. The other
/// conditions are carried over from `d.status`.
pub fn calculate_status(
    all: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    d: &Deployment,
    now: Millis,
) -> DeploymentStatus {
    let available: i32 = all.iter().map(|rs| rs.status.available_replicas).sum();
    let total_spec: i32 = all.iter().map(|rs| rs_replicas(rs)).sum();
    let terminating: Vec<i32> = all
        .iter()
        .filter_map(|rs| rs.status.terminating_replicas)
        .collect();
    let mut status = DeploymentStatus {
        observed_generation: d.metadata.generation,
        replicas: all.iter().map(|rs| rs.status.replicas).sum(),
        updated_replicas: new_rs.map_or(0, |rs| rs.status.replicas),
        ready_replicas: all.iter().map(|rs| rs.status.ready_replicas).sum(),
        available_replicas: available,
        // Uses spec, so it is non-zero while pods are still being created.
        unavailable_replicas: (total_spec - available).max(0),
        terminating_replicas: if terminating.is_empty() {
            None
        } else {
            Some(terminating.iter().sum())
        },
        conditions: d.status.conditions.clone(),
        collision_count: d.status.collision_count,
    };
    let cond = if available >= replicas(d) - max_unavailable(d) {
        new_condition(
            "Available",
            "True",
            MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.",
            now,
        )
    } else {
        new_condition(
            "Available",
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    };
    set_deployment_condition(&mut status, cond);
    status
}

/// `DeploymentComplete`: every replica updated and available, and the spec observed.
pub fn deployment_complete(d: &Deployment, s: &DeploymentStatus) -> bool {
    let r = replicas(d);
    s.updated_replicas == r
        && s.replicas == r
        && s.available_replicas == r
        && s.observed_generation >= d.metadata.generation
}

/// `DeploymentProgressing`: more updated, fewer old, more ready or more available than before.
pub fn deployment_progressing(d: &Deployment, new: &DeploymentStatus) -> bool {
    let old = &d.status;
    let old_old = old.replicas - old.updated_replicas;
    let new_old = new.replicas - new.updated_replicas;
    new.updated_replicas > old.updated_replicas
        || new_old < old_old
        || new.ready_replicas > old.ready_replicas
        || new.available_replicas > old.available_replicas
}

/// `DeploymentTimedOut`: the Progressing condition's `lastUpdateTime + deadline` is before `now`.
pub fn deployment_timed_out(d: &Deployment, new: &DeploymentStatus, now: Millis) -> bool {
    if !has_progress_deadline(d) {
        return false;
    }
    let Some(cond) = get_condition(new, "Progressing") else {
        return false;
    };
    match cond.reason.as_deref() {
        Some(NEW_RS_AVAILABLE_REASON) => return false,
        Some(TIMED_OUT_REASON) => return true,
        _ => {}
    }
    let from = cond.last_update_time.map_or(0, |t| t.0);
    from + deadline_ms(d) < now
}

/// The progress deadline in milliseconds.
pub fn deadline_ms(d: &Deployment) -> Millis {
    progress_deadline_seconds(d).max(0) as Millis * 1000
}

// ---------------------------------------------------------------- kubectl rollout helpers

/// What `kubectl rollout undo` decides, client-side, before it patches the Deployment.
#[derive(Clone, Debug, PartialEq)]
// Built once per `kubectl rollout undo`; boxing the template would only cost readability.
#[allow(clippy::large_enum_variant)]
pub enum RollbackPlan {
    /// Replace `spec.template` with `template` and `metadata.annotations` with `annotations`
    /// (kubectl sends a JSON patch doing exactly that); prints `deployment.apps/<name> rolled back`.
    RollBack {
        /// The revision the template comes from (it becomes max+1 once the controller syncs).
        revision: i64,
        /// The ReplicaSet's template without its `pod-template-hash` label.
        template: PodTemplateSpec,
        /// The Deployment's own revision/replica annotations plus the ReplicaSet's others.
        annotations: StringMap,
    },
    /// The template already matches: nothing is sent. `revision` is what kubectl prints, i.e. the
    /// `--to-revision` value (0 when none was given, as kubectl does).
    AlreadyMatches { revision: i64 },
}

impl RollbackPlan {
    /// The text after `deployment.apps/<name> `: `rolled back` or the skip message.
    pub fn message(&self) -> String {
        match self {
            RollbackPlan::RollBack { .. } => "rolled back".into(),
            RollbackPlan::AlreadyMatches { revision } => {
                format!("skipped rollback (current template already matches revision {revision})")
            }
        }
    }

    /// The Deployment after the patch, for sending as an Update (None when skipped).
    pub fn apply_to(&self, d: &Deployment) -> Option<Deployment> {
        match self {
            RollbackPlan::RollBack {
                template,
                annotations,
                ..
            } => {
                let mut out = d.clone();
                out.spec.template = template.clone();
                out.metadata.annotations = annotations.clone();
                Some(out)
            }
            RollbackPlan::AlreadyMatches { .. } => None,
        }
    }
}

/// `kubectl rollout undo deployment/<name> [--to-revision=N]`, decided from the Deployment and the
/// ReplicaSets kubectl would list (those it controls that match its selector; others are ignored).
/// Errors are worded as kubectl prints them after `error: `.
pub fn rollback_template(
    d: &Deployment,
    rss: &[&ReplicaSet],
    to_revision: Option<i64>,
) -> Result<RollbackPlan, String> {
    let to = to_revision.unwrap_or(0);
    if to < 0 {
        return Err(revision_not_found(to));
    }
    let owned: Vec<&ReplicaSet> = rss
        .iter()
        .copied()
        .filter(|rs| {
            rs.metadata.namespace == d.metadata.namespace
                && is_controlled_by(rs, d)
                && d.spec.selector.matches(&rs.metadata.labels)
        })
        .collect();
    let target = if to == 0 {
        let (mut latest, mut latest_rev, mut previous, mut previous_rev) =
            (None, -1i64, None, -1i64);
        for rs in &owned {
            let Ok(v) = revision_of(&rs.metadata) else {
                continue;
            };
            if latest_rev < v {
                previous = latest;
                previous_rev = latest_rev;
                latest = Some(*rs);
                latest_rev = v;
            } else if previous_rev < v {
                previous = Some(*rs);
                previous_rev = v;
            }
        }
        previous.ok_or_else(|| {
            format!(
                "no rollout history found for deployment \"{}\"",
                d.metadata.name
            )
        })?
    } else {
        *owned
            .iter()
            .find(|rs| revision_of(&rs.metadata).ok() == Some(to))
            .ok_or_else(|| revision_not_found(to))?
    };
    if d.spec.paused {
        return Err(format!(
            "you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/{}' and try again",
            d.metadata.name
        ));
    }
    if equal_ignore_hash(&target.spec.template, &d.spec.template) {
        return Ok(RollbackPlan::AlreadyMatches { revision: to });
    }
    let mut template = target.spec.template.clone();
    template.metadata.labels.remove(POD_TEMPLATE_HASH_LABEL);
    let mut annotations: StringMap = d
        .metadata
        .annotations
        .iter()
        .filter(|(k, _)| skip_copy_annotation(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in &target.metadata.annotations {
        if !skip_copy_annotation(k) {
            annotations.insert(k.clone(), v.clone());
        }
    }
    Ok(RollbackPlan::RollBack {
        revision: revision_of(&target.metadata).unwrap_or(0),
        template,
        annotations,
    })
}

fn revision_not_found(r: i64) -> String {
    format!("unable to find specified revision {r} in history")
}

/// The merge patch `kubectl rollout restart` sends: the template annotation
/// `kubectl.kubernetes.io/restartedAt` set to `now` in RFC 3339, which changes the template hash.
pub fn restart_annotation_patch(now: Millis) -> Json {
    json!({"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT_ANNOTATION: Time(now).to_rfc3339()}}}}})
}

/// [`restart_annotation_patch`] with kubectl's refusal for a paused Deployment.
pub fn restart_patch(d: &Deployment, now: Millis) -> Result<Json, String> {
    if d.spec.paused {
        return Err("can't restart paused deployment (run rollout resume first)".into());
    }
    Ok(restart_annotation_patch(now))
}

/// One poll of `kubectl rollout status deployment/<name> [--revision=N]`: the line kubectl prints
/// (without the trailing newline) and whether it stops watching. `Err` is what kubectl prints after
/// `error: ` (progress deadline exceeded, revision mismatch).
pub fn rollout_status_message(
    d: &Deployment,
    revision: Option<i64>,
) -> Result<(String, bool), String> {
    let name = &d.metadata.name;
    if let Some(want) = revision.filter(|r| *r > 0) {
        let have = revision_of(&d.metadata)
            .map_err(|e| format!("cannot get the revision of deployment \"{name}\": {e}"))?;
        if have != want {
            return Err(format!(
                "desired revision ({want}) is different from the running revision ({have})"
            ));
        }
    }
    if d.metadata.generation > d.status.observed_generation {
        return Ok((
            "Waiting for deployment spec update to be observed...".into(),
            false,
        ));
    }
    if get_condition(&d.status, "Progressing").and_then(|c| c.reason.as_deref())
        == Some(TIMED_OUT_REASON)
    {
        return Err(format!(
            "deployment \"{name}\" exceeded its progress deadline"
        ));
    }
    let s = &d.status;
    if let Some(r) = d.spec.replicas.filter(|r| s.updated_replicas < *r) {
        return Ok((
            format!("Waiting for deployment \"{name}\" rollout to finish: {} out of {r} new replicas have been updated...", s.updated_replicas),
            false,
        ));
    }
    if s.replicas > s.updated_replicas {
        return Ok((
            format!("Waiting for deployment \"{name}\" rollout to finish: {} old replicas are pending termination...", s.replicas - s.updated_replicas),
            false,
        ));
    }
    if s.available_replicas < s.updated_replicas {
        return Ok((
            format!(
                "Waiting for deployment \"{name}\" rollout to finish: {} of {} updated replicas are available...",
                s.available_replicas, s.updated_replicas
            ),
            false,
        ));
    }
    Ok((
        format!("deployment \"{name}\" successfully rolled out"),
        true,
    ))
}

/// The selector with the `pod-template-hash` requirement added (`CloneSelectorAndAddLabel`).
pub fn selector_with_hash(sel: &LabelSelector, hash: &str) -> LabelSelector {
    let mut s = sel.clone();
    s.match_labels.insert(POD_TEMPLATE_HASH_LABEL, hash);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{DeploymentStrategy, RollingUpdateDeployment};

    fn with_strategy(
        replicas: i32,
        surge: Option<IntOrString>,
        unavailable: Option<IntOrString>,
    ) -> Deployment {
        let mut d = Deployment::default();
        d.spec.replicas = Some(replicas);
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: surge,
                max_unavailable: unavailable,
            }),
        });
        d
    }

    #[test]
    fn default_fenceposts_match_the_reference_table() {
        for (replicas, surge, unavailable) in
            [(1, 1, 0), (2, 1, 0), (3, 1, 0), (4, 1, 1), (10, 3, 2)]
        {
            let d = with_strategy(replicas, None, None);
            assert_eq!(
                max_surge_and_unavailable(&d),
                (surge, unavailable),
                "replicas {replicas}"
            );
            assert_eq!(
                (max_surge(&d), max_unavailable(&d)),
                (surge, unavailable),
                "replicas {replicas}"
            );
        }
    }

    #[test]
    fn both_fenceposts_resolving_to_zero_force_one_unavailable() {
        let d = with_strategy(
            3,
            Some(IntOrString::String("10%".into())),
            Some(IntOrString::String("10%".into())),
        );
        // 10% of 3 rounds up to 1 for surge, so only the all-integer zero case forces it.
        assert_eq!(max_surge_and_unavailable(&d), (1, 0));
        assert_eq!(
            resolve_fenceposts(&IntOrString::Int(0), &IntOrString::String("10%".into()), 3),
            Ok((0, 1))
        );
    }

    #[test]
    fn recreate_has_no_surge_and_no_unavailability_budget() {
        let mut d = with_strategy(4, None, None);
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        assert_eq!((max_surge(&d), max_unavailable(&d)), (0, 0));
    }

    #[test]
    fn safe_encoding_maps_decimal_digits_onto_consonants_and_digits() {
        assert_eq!(safe_encode_string("0123456789"), "456789bcdf");
        let h = compute_hash(&PodTemplateSpec::default(), None);
        assert!(h.chars().all(|c| "456789bcdf".contains(c)), "{h}");
        assert_ne!(h, compute_hash(&PodTemplateSpec::default(), Some(1)));
        assert_eq!(h, compute_hash(&PodTemplateSpec::default(), None));
    }

    #[test]
    fn reused_replica_set_records_its_previous_revision_in_history() {
        let d = Deployment::default();
        let mut rs = ReplicaSet::default();
        rs.metadata.annotations.insert(REVISION_ANNOTATION, "1");
        assert!(set_new_replica_set_annotations(
            &d,
            &mut rs,
            "3",
            true,
            MAX_REV_HISTORY_LENGTH_IN_CHARS
        ));
        assert_eq!(rs.metadata.annotations[REVISION_ANNOTATION], "3");
        assert_eq!(rs.metadata.annotations[REVISION_HISTORY_ANNOTATION], "1");
        rs.metadata.annotations.insert(REVISION_ANNOTATION, "5");
        set_new_replica_set_annotations(&d, &mut rs, "7", true, MAX_REV_HISTORY_LENGTH_IN_CHARS);
        assert_eq!(rs.metadata.annotations[REVISION_HISTORY_ANNOTATION], "1,5");
    }

    #[test]
    fn condition_with_same_status_and_reason_is_left_untouched() {
        let mut s = DeploymentStatus::default();
        set_deployment_condition(
            &mut s,
            new_condition("Progressing", "True", NEW_REPLICA_SET_REASON, "a", 1000),
        );
        set_deployment_condition(
            &mut s,
            new_condition("Progressing", "True", NEW_REPLICA_SET_REASON, "b", 2000),
        );
        assert_eq!(s.conditions[0].message.as_deref(), Some("a"));
        set_deployment_condition(
            &mut s,
            new_condition("Progressing", "True", REPLICA_SET_UPDATED_REASON, "c", 3000),
        );
        assert_eq!(s.conditions[0].last_transition_time, Some(Time(1000)));
        assert_eq!(s.conditions[0].last_update_time, Some(Time(3000)));
        set_deployment_condition(
            &mut s,
            new_condition("Progressing", "False", TIMED_OUT_REASON, "d", 4000),
        );
        assert_eq!(s.conditions[0].last_transition_time, Some(Time(4000)));
    }

    #[test]
    fn restart_patch_sets_the_restarted_at_template_annotation() {
        let p = restart_annotation_patch(61_000);
        assert_eq!(
            p["spec"]["template"]["metadata"]["annotations"][RESTARTED_AT_ANNOTATION],
            "2026-01-01T00:01:01Z"
        );
        let mut d = Deployment::default();
        d.spec.paused = true;
        assert_eq!(
            restart_patch(&d, 0),
            Err("can't restart paused deployment (run rollout resume first)".into())
        );
    }
}
