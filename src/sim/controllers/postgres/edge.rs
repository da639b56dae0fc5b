//! The edge-triggered bug (`SetOperatorBug {bug: edge-triggered}`): a deliberate bug, NOT how
//! an operator should work (see [`crate::sim::faults::OperatorBug::note`]).
//!
//! The operator acts only on the change each watch event carries, as a naive event-driven
//! design would: a cluster ADDED → claim it and create its objects; its spec changed from a to b
//! → patch what differs; one of its objects DELETED → create it again; its deletion started →
//! clean up. It never relists or resyncs (the world queues no keys for it then), so nothing
//! repairs a missed event: a dropped ADDED leaves a cluster with nothing, a dropped spec change
//! leaves the old spec in force for good. Status is still computed from the cache, as the
//! edge-triggered ReplicaSet controller's is. Creates that fail are owed and retried; the only
//! thing it loses is what it never saw (and, on a restart, what it had not yet done).
//!
//! The fix: be level-triggered (`mod.rs`): an event only names a cluster, and every pass
//! compares the whole cached state with the spec.

use std::rc::Rc;

use serde_json::{json, Value as Json};

use crate::sim::api::job;
use crate::sim::api::types::{Kind, Object, ObjectKey};
use crate::sim::api::{ApiRequest, DeleteOptions, WatchEvent, WatchEventType};
use crate::sim::faults::OperatorBug;
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{Ctx, Outcome, ReconcileRecord};

use super::objects::{self, Owner, Spec};
use super::status::Migration;
use super::{cluster_kind, finalizers_without, owner_key, PostgresOperator, Writes, FINALIZER};

/// One change an event carried, remembered until the cluster's next pass.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    /// The cluster appeared.
    Added,
    /// Its spec changed.
    Changed { from: Spec, to: Spec },
    /// Its deletion started.
    Deleting,
    /// One of its objects was deleted, or a create of one failed: the kind to create again.
    Lost(String),
}

impl Delta {
    fn describe(&self) -> String {
        match self {
            Delta::Added => "cluster ADDED".into(),
            Delta::Changed { from, to } => {
                let mut parts = Vec::new();
                if from.replicas != to.replicas {
                    parts.push(format!("replicas {}→{}", from.replicas, to.replicas));
                }
                if from.version != to.version {
                    parts.push(format!("version {}→{}", from.version, to.version));
                }
                if from.storage != to.storage {
                    parts.push(format!("storage {}→{}", from.storage, to.storage));
                }
                parts.join(", ")
            }
            Delta::Deleting => "deletion started".into(),
            Delta::Lost(kind) => format!("{kind} DELETED"),
        }
    }
}

impl PostgresOperator {
    /// The event handler of the edge-triggered bug: remembers the change, then names the
    /// cluster (so its status is written from the cache).
    pub(super) fn edge_keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let o = &ev.object;
        if Some(o.kind()) == cluster_kind() {
            let key = o.key();
            let delta = match (ev.type_, old) {
                (WatchEventType::Deleted, _) => {
                    self.pending.remove(&key);
                    return Vec::new();
                }
                (WatchEventType::Added, _) | (WatchEventType::Modified, None) => Some(Delta::Added),
                (WatchEventType::Modified, Some(prev)) => {
                    if o.meta().deletion_timestamp.is_some()
                        && prev.meta().deletion_timestamp.is_none()
                    {
                        Some(Delta::Deleting)
                    } else {
                        let from = Spec::read(&prev.to_json());
                        let to = Spec::read(&o.to_json());
                        (from != to).then_some(Delta::Changed { from, to })
                    }
                }
            };
            if let Some(d) = delta {
                self.pending.entry(key.clone()).or_default().push(d);
            }
            return vec![key];
        }
        let Some(cluster) = owner_key(o) else {
            return Vec::new();
        };
        let recreated = [objects::statefulset_kind(), objects::configmap_kind()]
            .contains(&Some(o.kind()))
            || o.kind() == Kind::Service;
        let deleting = cache
            .get(&cluster)
            .is_none_or(|c| c.meta().deletion_timestamp.is_some());
        if ev.type_ == WatchEventType::Deleted && recreated && !deleting {
            let lost = Delta::Lost(o.kind().as_str().to_string());
            self.pending.entry(cluster.clone()).or_default().push(lost);
        }
        vec![cluster]
    }

    /// The edge-triggered pass: the remembered changes, acted on one by one, and the status.
    pub(super) fn edge_reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let deltas = self.pending.remove(key).unwrap_or_default();
        let mut out = Outcome::done();
        let Some(cluster) = ctx.cache.get(key).cloned() else {
            return out;
        };
        let meta = cluster.meta();
        let json = cluster.to_json();
        let spec = Spec::read(&json);
        let owner = Owner::of(meta);
        let cache = ctx.cache;
        let mut w = Writes::default();
        let generate_name = self.has(OperatorBug::GenerateName);
        for d in &deltas {
            match d {
                Delta::Added => {
                    if !meta.finalizers.iter().any(|f| f == FINALIZER) {
                        let mut f = meta.finalizers.clone();
                        f.push(FINALIZER.into());
                        w.patch(
                            key.clone(),
                            json!({"metadata": {"finalizers": f}}),
                            "add finalizer".into(),
                        );
                    }
                    for kind in ["StatefulSet", "Service", "ConfigMap", "Job"] {
                        self.edge_create(kind, &owner, &spec, generate_name, &mut w, &mut out);
                    }
                }
                Delta::Changed { from, to } => {
                    if from.replicas != to.replicas || from.version != to.version {
                        if let Some(k) = objects::statefulset_kind() {
                            w.patch(
                                objects::key(k, &owner, owner.name),
                                json!({"spec": {
                                    "replicas": to.replicas,
                                    "template": {"spec": {"containers": [objects::container(to)]}},
                                }}),
                                format!("patch StatefulSet {}: {}", owner.name, d.describe()),
                            );
                        }
                    }
                    if from.version != to.version {
                        self.edge_create("Job", &owner, to, generate_name, &mut w, &mut out);
                    }
                    if from.storage != to.storage {
                        self.resize(&from.storage, &owner, to, cache, &mut w);
                    }
                }
                Delta::Lost(kind) => {
                    self.edge_create(kind, &owner, &spec, generate_name, &mut w, &mut out);
                }
                Delta::Deleting => {
                    let backup = objects::backup_name(owner.name);
                    if let Some(cm) = objects::configmap_kind()
                        .and_then(|k| cache.get(&objects::key(k, &owner, &backup)))
                    {
                        w.acts.push(format!("delete ConfigMap {backup}"));
                        w.requests.push(ApiRequest::Delete {
                            key: cm.key(),
                            options: DeleteOptions {
                                precondition_uid: Some(cm.meta().uid.to_string()),
                                ..Default::default()
                            },
                        });
                    }
                    w.patch(
                        key.clone(),
                        json!({"metadata": {"finalizers": finalizers_without(meta)}}),
                        format!("remove finalizer {FINALIZER}"),
                    );
                }
            }
        }
        let mut status_write = None;
        if meta.deletion_timestamp.is_none() {
            let migration = self
                .migration_state(&json, &owner, &spec, cache)
                .unwrap_or(Migration::Running(String::new()));
            let sts = objects::statefulset_kind()
                .and_then(|k| cache.get(&objects::key(k, &owner, owner.name)))
                .cloned();
            let status = self.status_of(
                &json,
                &spec,
                sts.as_deref(),
                &migration,
                (&owner, cache),
                ctx.now,
            );
            if !super::status_current(json.get("status"), &status) {
                w.acts.push("write status".into());
                status_write = Some(self.status_request(&cluster, &json, status));
            }
        }
        out.batch(std::mem::take(&mut w.requests));
        if let Some(r) = status_write {
            out.request(r);
        }
        out.batch(std::mem::take(&mut w.last));
        let seen: Vec<String> = deltas.iter().map(Delta::describe).collect();
        out.record = Some(ReconcileRecord {
            observed: if seen.is_empty() {
                "no change carried by the event (edge-triggered)".into()
            } else {
                format!("events: {}", seen.join("; "))
            },
            desired: format!(
                "{} × postgres:{}, {} each",
                spec.replicas, spec.version, spec.storage
            ),
            diff: w.acts.join("; "),
        });
        out
    }

    /// Creates the cluster's object of `kind` (what an ADDED or a DELETED asks for).
    fn edge_create(
        &self,
        kind: &str,
        owner: &Owner,
        spec: &Spec,
        generate_name: bool,
        w: &mut Writes,
        out: &mut Outcome,
    ) {
        let (k, body, what): (Option<Kind>, Json, String) = match kind {
            "StatefulSet" => (
                objects::statefulset_kind(),
                objects::statefulset(owner, spec),
                format!("StatefulSet {}", owner.name),
            ),
            "Service" => (
                Some(Kind::Service),
                objects::service(owner),
                format!("Service {}", owner.name),
            ),
            "ConfigMap" => (
                objects::configmap_kind(),
                objects::backup(owner),
                format!("ConfigMap {}", objects::backup_name(owner.name)),
            ),
            "Job" => (
                job::job_kind(),
                objects::migration_job(owner, spec, generate_name),
                format!("migration Job for version {}", spec.version),
            ),
            _ => return,
        };
        w.create(k, body, &what, out);
    }
}
