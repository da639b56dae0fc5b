//! The PostgresCluster's status as the operator reports it: `phase`, `readyReplicas`,
//! `currentVersion`, `observedGeneration`, `migrationJobs` and the `Ready` and `Migrated` conditions, each
//! condition keeping its `lastTransitionTime` while its status holds.

use serde_json::{json, Value as Json};

use crate::sim::api::conditions::{self, condition};
use crate::sim::api::types::Millis;

/// Where the migration to the spec's version stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Migration {
    /// The cluster already runs the spec's version.
    Done,
    /// A migration Job runs (or was just created: its name, when known).
    Running(String),
    /// The migration Job failed (its name, and the Job's message).
    Failed(String, String),
}

/// What a pass saw, for the status.
pub struct Observed<'a> {
    pub generation: i64,
    pub version: &'a str,
    pub replicas: i64,
    pub ready_replicas: i64,
    /// The version the cluster ran before (`status.currentVersion`), empty for none.
    pub current_version: &'a str,
    pub migration: &'a Migration,
    /// The migration Jobs of the spec's version the operator sees (`status.migrationJobs`).
    pub migration_jobs: usize,
}

/// The status a pass computes, conditions stamped against the live ones (`old`: the live status).
pub fn compute(o: &Observed, old: Option<&Json>, now: Millis) -> Json {
    let (phase, migrated) = match o.migration {
        Migration::Done => (
            if o.ready_replicas >= o.replicas {
                "Ready"
            } else {
                "Provisioning"
            },
            condition(
                "Migrated",
                true,
                "MigrationComplete",
                format!("migrated to version {}", o.version),
            ),
        ),
        Migration::Running(_) => (
            "Migrating",
            condition(
                "Migrated",
                false,
                "MigrationRunning",
                running_message(o.version),
            ),
        ),
        Migration::Failed(job, why) => (
            "Failed",
            condition(
                "Migrated",
                false,
                "MigrationFailed",
                format!("Job {job} failed: {why}"),
            ),
        ),
    };
    let ready = match phase {
        "Ready" => condition(
            "Ready",
            true,
            "ClusterReady",
            format!(
                "{}/{} replicas ready on version {}",
                o.ready_replicas, o.replicas, o.version
            ),
        ),
        "Migrating" => condition("Ready", false, "Migrating", running_message(o.version)),
        "Failed" => condition("Ready", false, "MigrationFailed", "the migration failed"),
        _ => condition(
            "Ready",
            false,
            "ReplicasNotReady",
            format!("{}/{} replicas ready", o.ready_replicas, o.replicas),
        ),
    };
    let mut conditions = vec![ready, migrated];
    conditions::stamp(
        &mut conditions,
        old.and_then(|s| s.get("conditions")),
        now,
        o.generation,
    );
    let current = if *o.migration == Migration::Done {
        o.version
    } else {
        o.current_version
    };
    let mut status = json!({
        "phase": phase,
        "readyReplicas": o.ready_replicas,
        "observedGeneration": o.generation,
        "conditions": conditions,
    });
    if !current.is_empty() {
        status["currentVersion"] = json!(current);
    }
    if o.migration_jobs > 0 {
        status["migrationJobs"] = json!(o.migration_jobs);
    }
    status
}

/// The `Migrated` message while the migration to `version` runs (the generate-name bug reads it
/// back as its memory of having started one).
pub fn running_message(version: &str) -> String {
    format!("migrating to version {version}")
}

/// The live `Migrated` condition says a migration to `version` was started.
pub fn says_migrating(live: Option<&Json>, version: &str) -> bool {
    live.and_then(|s| s.get("conditions"))
        .and_then(Json::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Json::as_str) == Some("Migrated")
                    && c.get("reason").and_then(Json::as_str) == Some("MigrationRunning")
                    && c.get("message").and_then(Json::as_str)
                        == Some(running_message(version).as_str())
            })
        })
}
