//! `kubectl rollout status|history|undo|restart|pause|resume` for Deployments, using the shared
//! helpers in `controllers::deployment::util` (the same code the Deployment controller trusts),
//! and `status|history|undo` for StatefulSets, read from their ControllerRevisions.
//!
//! `rollout status` answers with the state now and returns (as `--watch=false` does): the
//! playground never blocks the console; run it again as simulated time advances.

use serde_json::json;

use super::args::{flag, Args, Flag, FlagKind};
use super::describe::pod_template_raw;
use super::errors::finish;
use super::resources;
use super::tabwriter::describe_text;
use super::util::{error, fail, merge_patch, object_name, or_return, out};
use super::CommandOutput;
use crate::sim::api::statefulset::{StatefulSet, ROLLING_UPDATE};
use crate::sim::api::types::Object;
use crate::sim::api::types::{Deployment, Kind, ObjectKey, ReplicaSet};
use crate::sim::api::ApiRequest;
use crate::sim::controllers::deployment::util::{
    restart_annotation_patch, revision_of, rollback_template, rollout_status_message,
};
use crate::sim::controllers::statefulset::utils::{kinds, revisions_of, Revision};
use crate::sim::world::Sim;
use crate::sort::StableSort;

/// Flags of the `rollout` subcommands (each accepts the ones it documents).
pub const ROLLOUT_FLAGS: &[Flag] = &[
    flag("revision", None, FlagKind::Int),
    flag("to-revision", None, FlagKind::Int),
    flag("watch", Some('w'), FlagKind::Bool),
    flag("timeout", None, FlagKind::Duration),
    flag("selector", Some('l'), FlagKind::Str),
    flag("output", Some('o'), FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("filename", Some('f'), FlagKind::Str),
    flag("field-manager", None, FlagKind::Str),
];

/// The ReplicaSets a Deployment controls (what kubectl lists for history and undo).
fn owned_replica_sets(sim: &Sim, d: &Deployment) -> Vec<ReplicaSet> {
    sim.api()
        .list(Kind::ReplicaSet)
        .filter_map(|o| o.as_replica_set())
        .filter(|rs| {
            rs.metadata.namespace == d.metadata.namespace
                && rs
                    .metadata
                    .controller_ref()
                    .is_some_and(|r| r.uid == d.metadata.uid)
        })
        .cloned()
        .collect()
}

/// `kubectl rollout SUBCOMMAND …`.
pub fn rollout(sim: &mut Sim, args: &Args) -> CommandOutput {
    let Some(sub) = args.positional.first().cloned() else {
        return fail("error: Required subcommand not specified.\nAvailable Commands:\n  history, pause, restart, resume, status, undo\nSee 'kubectl rollout -h' for help and examples\n");
    };
    let command = format!("rollout {sub}");
    let allowed: &[&str] = match sub.as_str() {
        "status" => &["revision", "watch", "timeout", "selector", "filename"],
        "history" => &["revision", "selector", "output", "filename"],
        "undo" => &["to-revision", "selector", "dry-run", "filename"],
        "restart" | "pause" | "resume" => &["selector", "dry-run", "filename", "field-manager", "output"],
        other => {
            return error(format!(
                "unknown command \"{other}\" for \"kubectl rollout\"\n\nDid you mean this?\n\tstatus\n\thistory\n\tundo"
            ))
        }
    };
    if let Some(bad) = args
        .flags
        .keys()
        .find(|f| ROLLOUT_FLAGS.iter().any(|r| r.long == **f) && !allowed.contains(f))
    {
        return fail(format!(
            "error: unknown flag: --{bad}\nSee 'kubectl {command} --help' for usage.\n"
        ));
    }
    if args.has("filename") {
        return error(format!(
            "{command} -f is not supported in the playground; name the Deployment (deployment/web)"
        ));
    }
    let request = or_return!(resources::request_or(
        sim.api(),
        &args.positional[1..],
        "required resource not specified"
    ));
    let (keys, missing) = or_return!(resources::resolve(sim, args, &request));
    if let Some(m) = missing.first() {
        return finish(String::new(), std::slice::from_ref(m));
    }
    let mut stdout = String::new();
    let mut errs = Vec::new();
    for key in keys {
        let set = kinds().filter(|k| k.set == key.kind).is_some();
        let result = match sub.as_str() {
            "status" if set => statefulset_status(sim, &key),
            "history" if set => statefulset_history(sim, args, &key),
            "undo" if set => statefulset_undo(sim, args, &key),
            "status" => status(sim, args, &key),
            "history" => history(sim, args, &key),
            "undo" => undo(sim, args, &key),
            "restart" => restart(sim, &key),
            "pause" => pause_resume(sim, &key, true),
            _ => pause_resume(sim, &key, false),
        };
        match result {
            Ok(s) => stdout.push_str(&s),
            Err(e) => errs.push(e),
        }
    }
    CommandOutput {
        ok: errs.is_empty(),
        stdout,
        stderr: errs
            .iter()
            .map(|e| {
                if e.starts_with("error: ") {
                    format!("{e}\n")
                } else {
                    format!("error: {e}\n")
                }
            })
            .collect(),
    }
}

fn deployment(sim: &Sim, key: &ObjectKey, what: &str) -> Result<Deployment, String> {
    let o = sim
        .api()
        .get(key)
        .ok_or_else(|| format!("{} \"{}\" not found", key.kind.resource(), key.name))?;
    match o.as_deployment() {
        Some(d) => Ok(d.clone()),
        None => Err(match what {
            "status" => format!(
                "no status viewer has been implemented for {}",
                group_kind(key.kind)
            ),
            "history" => format!(
                "no history viewer has been implemented for {:?}",
                key.kind.as_str()
            ),
            "undo" => format!(
                "no rollbacker has been implemented for {}",
                group_kind(key.kind)
            ),
            _ => format!(
                "{} {:?} {what} is not supported",
                key.kind.resource(),
                key.name
            ),
        }),
    }
}

fn group_kind(k: Kind) -> String {
    match k.api_version().split_once('/') {
        Some((g, _)) => format!("{}.{g}", k.as_str()),
        None => k.as_str().to_string(),
    }
}

fn status(sim: &Sim, args: &Args, key: &ObjectKey) -> Result<String, String> {
    let d = deployment(sim, key, "status")?;
    let (msg, _done) = rollout_status_message(&d, args.int("revision"))?;
    Ok(format!("{msg}\n"))
}

fn history(sim: &Sim, args: &Args, key: &ObjectKey) -> Result<String, String> {
    let d = deployment(sim, key, "history")?;
    let mut revisions: Vec<(i64, ReplicaSet)> = owned_replica_sets(sim, &d)
        .into_iter()
        .filter_map(|rs| revision_of(&rs.metadata).ok().map(|r| (r, rs)))
        .collect();
    revisions.stable_sort_by_key(|(r, _)| *r);
    let name = object_name(Kind::Deployment, &key.name);
    if let Some(want) = args.int("revision").filter(|r| *r != 0) {
        if want < 0 {
            return Err(format!("revision must be a positive integer: {want}"));
        }
        let Some((_, rs)) = revisions.iter().find(|(r, _)| *r == want) else {
            return Err("unable to find the specified revision".into());
        };
        let mut t = rs.spec.template.clone();
        if let Some(cause) = rs.metadata.annotations.get("kubernetes.io/change-cause") {
            t.metadata
                .annotations
                .insert("kubernetes.io/change-cause", cause.clone());
        }
        return Ok(format!(
            "{name} with revision #{want}\n{}\n",
            pod_template_raw(&t)
        ));
    }
    let mut table = String::from("REVISION\tCHANGE-CAUSE\n");
    for (r, rs) in &revisions {
        let cause = rs
            .metadata
            .annotations
            .get("kubernetes.io/change-cause")
            .filter(|c| !c.is_empty())
            .map_or("<none>", |v| v.as_str());
        table.push_str(&format!("{r}\t{cause}\n"));
    }
    Ok(format!("{name} \n{}\n", describe_text(&table)))
}

fn undo(sim: &mut Sim, args: &Args, key: &ObjectKey) -> Result<String, String> {
    let d = deployment(sim, key, "undo")?;
    let rss = owned_replica_sets(sim, &d);
    let refs: Vec<&ReplicaSet> = rss.iter().collect();
    let plan = rollback_template(&d, &refs, args.int("to-revision"))?;
    let line = format!(
        "{} {}\n",
        object_name(Kind::Deployment, &key.name),
        plan.message()
    );
    if let Some(updated) = plan.apply_to(&d) {
        if args.get("dry-run").is_some_and(|v| v != "none") {
            return Ok(line.replace("rolled back", "rolled back (dry run)"));
        }
        sim.submit(ApiRequest::Update(crate::sim::api::types::Object::from(
            updated,
        )))
        .map_err(|e| e.kubectl_message())?;
    }
    Ok(line)
}

fn restart(sim: &mut Sim, key: &ObjectKey) -> Result<String, String> {
    let d = deployment(sim, key, "restart")?;
    let resource = format!("{} {:?}", key.kind.resource(), key.name);
    if d.spec.paused {
        return Err(format!(
            "error: {resource} can't restart paused deployment (run rollout resume first)"
        ));
    }
    let now = sim.now();
    let patch = restart_annotation_patch(now);
    let current = d
        .spec
        .template
        .metadata
        .annotations
        .get(crate::sim::controllers::deployment::util::RESTARTED_AT_ANNOTATION);
    let wanted = patch["spec"]["template"]["metadata"]["annotations"]
        [crate::sim::controllers::deployment::util::RESTARTED_AT_ANNOTATION]
        .as_str();
    if current.map(|v| v.as_str()) == wanted {
        return Err(format!("failed to create patch for {}: if restart has already been triggered within the past second, please wait before attempting to trigger another", key.name));
    }
    merge_patch(sim, key, patch).map_err(|e| format!("failed to patch: {}", e.message))?;
    Ok(format!(
        "{} restarted\n",
        object_name(Kind::Deployment, &key.name)
    ))
}

fn pause_resume(sim: &mut Sim, key: &ObjectKey, pause: bool) -> Result<String, String> {
    let what = if pause { "pause" } else { "resume" };
    let d = deployment(sim, key, what)?;
    let resource = format!("{} {:?}", key.kind.resource(), key.name);
    if pause && d.spec.paused {
        return Err(format!("error: {resource} is already paused"));
    }
    if !pause && !d.spec.paused {
        return Err(format!("error: {resource} is not paused"));
    }
    let paused = if pause { json!(true) } else { json!(null) };
    merge_patch(sim, key, json!({"spec": {"paused": paused}}))
        .map_err(|e| format!("failed to patch: {}", e.message))?;
    Ok(format!(
        "{} {}\n",
        object_name(Kind::Deployment, &key.name),
        if pause { "paused" } else { "resumed" }
    ))
}

/// A StatefulSet and its ControllerRevisions, oldest first.
fn stateful_set(sim: &Sim, key: &ObjectKey) -> Result<(StatefulSet, Vec<Revision>), String> {
    let not_found = || format!("{} \"{}\" not found", key.kind.resource(), key.name);
    let obj = sim.api().get(key).ok_or_else(not_found)?;
    let set = obj
        .as_custom()
        .and_then(|c| StatefulSet::from_custom(c).ok())
        .ok_or_else(not_found)?;
    let revision_kind = kinds().map(|k| k.revision).ok_or_else(not_found)?;
    let revisions = revisions_of(
        &set,
        sim.api()
            .list(revision_kind)
            .filter(|o| o.meta().namespace == key.namespace),
    );
    Ok((set, revisions))
}

/// kubectl's `StatefulSetStatusViewer`. The API server defaults a partition of 0, so a rolling
/// update reports itself as a partitioned one, as real kubectl does.
fn statefulset_status(sim: &Sim, key: &ObjectKey) -> Result<String, String> {
    let (set, _) = stateful_set(sim, key)?;
    let st = &set.status;
    if set.update_strategy() != ROLLING_UPDATE {
        return Err(format!(
            "rollout status is only available for {ROLLING_UPDATE} strategy type"
        ));
    }
    if st.observed_generation == 0 || set.metadata.generation > st.observed_generation {
        return Ok("Waiting for statefulset spec update to be observed...\n".into());
    }
    let replicas = set.replicas();
    if st.ready_replicas < replicas {
        return Ok(format!(
            "Waiting for {} pods to be ready...\n",
            replicas - st.ready_replicas
        ));
    }
    // The API server defaults `rollingUpdate.partition` to 0, so kubectl's partitioned branch is
    // the only one a v1.34 StatefulSet reaches (its plain rolling-update messages are for
    // objects without it).
    let partition = set.partition();
    if st.updated_replicas < replicas - partition {
        return Ok(format!(
            "Waiting for partitioned roll out to finish: {} out of {} new pods have been updated...\n",
            st.updated_replicas,
            replicas - partition
        ));
    }
    Ok(format!(
        "partitioned roll out complete: {} new pods have been updated...\n",
        st.updated_replicas
    ))
}

/// kubectl's `StatefulSetHistoryViewer`: a revision per ControllerRevision.
fn statefulset_history(sim: &Sim, args: &Args, key: &ObjectKey) -> Result<String, String> {
    let (_, revisions) = stateful_set(sim, key)?;
    let name = object_name(key.kind, &key.name);
    let cause = |r: &Revision| {
        r.meta
            .annotations
            .get("kubernetes.io/change-cause")
            .filter(|c| !c.is_empty())
            .map_or("<none>".to_string(), |v| v.to_string())
    };
    if let Some(want) = args.int("revision").filter(|r| *r != 0) {
        let Some(r) = revisions.iter().find(|r| r.revision == want) else {
            return Err("unable to find the specified revision".to_string());
        };
        let template = r.template().unwrap_or_default();
        return Ok(format!(
            "{name} with revision #{want}\n{}\n",
            pod_template_raw(&template)
        ));
    }
    let mut table = String::from("REVISION\tCHANGE-CAUSE\n");
    for r in &revisions {
        table.push_str(&format!("{}\t{}\n", r.revision, cause(r)));
    }
    Ok(format!("{name} \n{}\n", describe_text(&table)))
}

/// kubectl's `StatefulSetRollbacker`: the set's template goes back to a revision's (the one
/// before the newest when none is named), which the controller then rolls out.
fn statefulset_undo(sim: &mut Sim, args: &Args, key: &ObjectKey) -> Result<String, String> {
    let (set, revisions) = stateful_set(sim, key)?;
    let to = args.int("to-revision").unwrap_or(0);
    let not_found = || format!("unable to find specified revision {to} in history");
    if to < 0 {
        return Err(not_found());
    }
    let target = if to == 0 {
        (revisions.len() > 1).then(|| &revisions[revisions.len() - 2])
    } else {
        revisions.iter().find(|r| r.revision == to)
    }
    .ok_or_else(not_found)?;
    let template = target.template().ok_or_else(not_found)?;
    let name = object_name(key.kind, &key.name);
    if template == set.spec.template {
        return Ok(format!(
            "{name} skipped rollback (current template already matches revision {})\n",
            target.revision
        ));
    }
    if args.get("dry-run").is_some_and(|v| v != "none") {
        return Ok(format!("{name} rolled back (dry run)\n"));
    }
    let Some(Object::Custom(mut obj)) = sim.api().get(key).map(|o| (**o).clone()) else {
        return Err(not_found());
    };
    let mut raw = target.data["spec"]["template"].clone();
    if let Some(m) = raw.as_object_mut() {
        m.remove("$patch");
    }
    if let Some(spec) = obj.content.get_mut("spec").and_then(|s| s.as_object_mut()) {
        spec.insert("template".into(), raw);
    }
    sim.submit(ApiRequest::Update(Object::Custom(obj)))
        .map_err(|e| e.kubectl_message())?;
    Ok(format!("{name} rolled back\n"))
}

/// Prints one status line for a Deployment (used by views and tests).
pub fn status_line(sim: &Sim, name: &str, ns: &str) -> CommandOutput {
    let key = ObjectKey::new(Kind::Deployment, ns, name);
    match deployment(sim, &key, "status")
        .and_then(|d| rollout_status_message(&d, None).map(|(m, _)| m))
    {
        Ok(m) => out(m),
        Err(e) => error(e),
    }
}
