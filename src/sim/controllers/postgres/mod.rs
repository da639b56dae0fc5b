//! An example operator, written as a kubebuilder or kube-rs operator is, for a `PostgresCluster`
//! custom resource (`db.kubeloop.dev/v1alpha1`, an add-on: `addons: [postgres-operator]`).
//!
//! For each cluster it owns a StatefulSet `<name>` (one `postgres:<version>` pod per replica,
//! each with a `data` claim of `spec.storage`), a headless Service `<name>`, a backup ConfigMap
//! `<name>-backup` and, per version, a migration Job `<name>-migrate-<version>`. It holds the
//! cluster with the finalizer `db.kubeloop.dev/finalizer` until it has deleted the backup, and
//! reports `phase`, `readyReplicas`, `currentVersion`, `observedGeneration` and the `Ready` and
//! `Migrated` conditions through the status subresource, only when they changed.
//!
//! It is level-triggered: every event only names a cluster (owned objects map to their owner),
//! and every pass compares the whole cached state with the spec. Four switches
//! ([`OperatorBug`], set with the `SetOperatorBug` fault) each turn on a deliberate bug real
//! operators have had; each one's doc says what the fix is. `edge.rs` is the edge-triggered one.

pub mod edge;
pub mod objects;
pub mod status;
#[cfg(test)]
mod tests;

use std::rc::Rc;

use serde_json::{json, Value as Json};

use crate::sim::api::job;
use crate::sim::api::storage::claim_kind;
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Str};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, WatchEvent};
use crate::sim::faults::OperatorBug;
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};

use crate::vec_map::SlotMap;
use objects::{Owner, Spec};
use status::Migration;

/// The API group of the operator's kind.
pub const GROUP: &str = "db.kubeloop.dev";
/// `apiVersion` of a PostgresCluster.
pub const API_VERSION: &str = "db.kubeloop.dev/v1alpha1";
/// The kind the operator serves.
pub const KIND: &str = "PostgresCluster";
/// The CRD's name.
pub const CRD_NAME: &str = "postgresclusters.db.kubeloop.dev";
/// The finalizer that keeps a deleted cluster until the operator has cleaned up after it.
pub const FINALIZER: &str = "db.kubeloop.dev/finalizer";
/// The label on everything the operator makes: the cluster's name.
pub const LABEL_CLUSTER: &str = "db.kubeloop.dev/cluster";
/// The label on a migration Job: the version it migrates to.
pub const LABEL_VERSION: &str = "db.kubeloop.dev/version";

/// The kind of a PostgresCluster, once its CRD is served.
pub fn cluster_kind() -> Option<Kind> {
    Kind::of_type(API_VERSION, KIND)
}

/// The operator's CRD, with the status subresource or (the status-on-main-resource bug's
/// install) without it.
pub fn crd(status_subresource: bool) -> Json {
    let mut crd = crate::sim::addons::postgres_crd();
    if !status_subresource {
        if let Some(v) = crd.pointer_mut("/spec/versions/0") {
            if let Some(m) = v.as_object_mut() {
                m.remove("subresources");
            }
        }
    }
    crd
}

/// What installing the add-on creates before the operator starts: its CRD.
pub fn install_objects() -> Vec<Object> {
    Object::from_json(Kind::CustomResourceDefinition, crd(true))
        .into_iter()
        .collect()
}

/// The operator (component `postgres-operator`).
#[derive(Clone, Default)]
pub struct PostgresOperator {
    /// Its configuration: the deliberate bugs switched on. The only thing a restart keeps.
    bugs: Vec<OperatorBug>,
    /// generate-name bug: the migrations this process created, by cluster uid and version, until
    /// its status says so (what a restart forgets).
    started: Vec<(Str, String)>,
    /// edge-triggered bug: the changes events carried, per cluster, not yet acted on.
    pending: SlotMap<ObjectKey, Vec<edge::Delta>>,
}

impl PostgresOperator {
    /// The operator as installed: no bug switched on.
    pub fn new() -> Self {
        Self::default()
    }

    /// The operator with these deliberate bugs on.
    pub fn with_bugs(bugs: impl IntoIterator<Item = OperatorBug>) -> Self {
        PostgresOperator {
            bugs: {
                // At most four, kept sorted and unique: a list, not another B-tree type.
                let mut v: Vec<OperatorBug> = Vec::new();
                for b in bugs {
                    if let Err(i) = v.binary_search(&b) {
                        v.insert(i, b);
                    }
                }
                v
            },
            ..Self::default()
        }
    }

    /// The deliberate bugs switched on.
    pub fn bugs(&self) -> &[OperatorBug] {
        &self.bugs
    }

    fn has(&self, bug: OperatorBug) -> bool {
        self.bugs.contains(&bug)
    }

    /// The changes waiting for a cluster's next pass (edge-triggered bug only).
    pub fn pending(&self, key: &ObjectKey) -> &[edge::Delta] {
        self.pending.get(key).map_or(&[], |v| v.as_slice())
    }
}

/// The kinds the operator makes, other than the built-in Service (stored built-in kinds, the
/// same for the whole process: looked up once, as the world asks on every watch event).
fn owned_kinds() -> &'static [Kind] {
    static KINDS: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        [
            objects::statefulset_kind(),
            objects::configmap_kind(),
            job::job_kind(),
            claim_kind(),
        ]
        .into_iter()
        .flatten()
        .collect()
    })
}

/// The cluster an object belongs to: its controller's, or (a claim the StatefulSet made, which
/// carries the set's selector labels) the one its label names.
pub fn owner_key(obj: &Object) -> Option<ObjectKey> {
    let kind = cluster_kind()?;
    let meta = obj.meta();
    if let Some(r) = meta.controller_ref() {
        let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
        return (r.kind == KIND && group == GROUP)
            .then(|| ObjectKey::new(kind, &meta.namespace, &r.name));
    }
    if Some(obj.kind()) == claim_kind() {
        return meta
            .labels
            .get(LABEL_CLUSTER)
            .map(|n| ObjectKey::new(kind, &meta.namespace, n));
    }
    None
}

/// Whether `obj` is controlled by the cluster with this uid.
/// The cluster's migration Jobs of `version`, whatever their names.
fn version_jobs<'c>(
    cache: &'c Cache,
    kind: Kind,
    owner: &'c Owner<'c>,
    version: &'c str,
) -> impl Iterator<Item = &'c Rc<Object>> + 'c {
    cache.list(kind).filter(move |j| {
        j.meta().namespace == owner.namespace
            && owned_by(j, owner.uid)
            && j.meta().labels.get(LABEL_VERSION).map(|v| v.as_str()) == Some(version)
    })
}

fn owned_by(obj: &Object, uid: &str) -> bool {
    obj.meta().controller_ref().is_some_and(|r| r.uid == uid)
}

/// Whether every field `status` sets holds the same value in `live`.
fn status_current(live: Option<&Json>, status: &Json) -> bool {
    let (Some(live), Some(want)) = (live, status.as_object()) else {
        return false;
    };
    want.iter().all(|(k, v)| live.get(k) == Some(v))
}

fn finalizers_without(meta: &crate::sim::api::types::ObjectMeta) -> Vec<String> {
    meta.finalizers
        .iter()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect()
}

/// A pass's writes and the words for them, built up as the pass goes.
#[derive(Default)]
struct Writes {
    requests: Vec<ApiRequest>,
    acts: Vec<String>,
    /// Writes to send after the status (ones that may fail without holding the status back).
    last: Vec<ApiRequest>,
}

impl Writes {
    fn create(&mut self, kind: Option<Kind>, json: Json, what: &str, out: &mut Outcome) {
        match objects::build(kind, json) {
            Ok(o) => {
                self.acts.push(format!("create {what}"));
                self.requests.push(ApiRequest::Create(o));
            }
            Err(e) => out.error = Some(format!("cannot build {what}: {e}")),
        }
    }

    fn patch(&mut self, key: ObjectKey, patch: Json, what: String) {
        self.acts.push(what);
        self.requests.push(ApiRequest::Patch {
            key,
            patch,
            status: false,
        });
    }
}

impl PostgresOperator {
    /// The level-triggered pass over one cluster.
    fn sync(&mut self, cluster: &Rc<Object>, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let meta = cluster.meta();
        if !meta.finalizers.iter().any(|f| f == FINALIZER) {
            // As kubebuilder's operators do: claim the object first, act on the next pass.
            let mut finalizers = meta.finalizers.clone();
            finalizers.push(FINALIZER.into());
            out.request(ApiRequest::Patch {
                key: cluster.key(),
                patch: json!({"metadata": {"finalizers": finalizers}}),
                status: false,
            });
            out.record = Some(ReconcileRecord {
                observed: "cluster without the operator's finalizer".into(),
                desired: format!("finalizer {FINALIZER}"),
                diff: "add finalizer".into(),
            });
            return out;
        }
        let json = cluster.to_json();
        let spec = Spec::read(&json);
        let owner = Owner::of(meta);
        let cache = ctx.cache;
        let mut w = Writes::default();
        let mut observed = Vec::new();
        let sts = objects::statefulset_kind()
            .and_then(|k| cache.get(&objects::key(k, &owner, owner.name)))
            .cloned();
        match &sts {
            None => {
                observed.push("no StatefulSet".to_string());
                w.create(
                    objects::statefulset_kind(),
                    objects::statefulset(&owner, &spec),
                    &format!("StatefulSet {}", owner.name),
                    &mut out,
                );
            }
            Some(live) if !owned_by(live, owner.uid) => {
                observed.push("a StatefulSet it does not own".to_string());
                out.event(EventRecord::warning(
                    cluster,
                    "ResourceExists",
                    format!(
                        "StatefulSet {} exists and is not owned by this cluster",
                        owner.name
                    ),
                ));
            }
            Some(live) => {
                observed.push("StatefulSet".to_string());
                self.update_statefulset(live, &owner, &spec, cache, &mut w);
            }
        }
        let svc_key = objects::key(Kind::Service, &owner, owner.name);
        if cache.get(&svc_key).is_none() {
            w.create(
                Some(Kind::Service),
                objects::service(&owner),
                &format!("Service {}", owner.name),
                &mut out,
            );
        }
        let backup = objects::backup_name(owner.name);
        let has_backup = objects::configmap_kind()
            .is_some_and(|k| cache.get(&objects::key(k, &owner, &backup)).is_some());
        if !has_backup {
            w.create(
                objects::configmap_kind(),
                objects::backup(&owner),
                &format!("ConfigMap {backup}"),
                &mut out,
            );
        }
        let migration = self.migrate(&json, &owner, &spec, cache, &mut w, &mut out);
        observed.push(match &migration {
            Migration::Done => format!("version {}", spec.version),
            Migration::Running(j) => format!("migration {j} running"),
            Migration::Failed(j, _) => format!("migration {j} failed"),
        });
        let status = self.status_of(
            &json,
            &spec,
            sts.as_deref(),
            &migration,
            (&owner, cache),
            ctx.now,
        );
        let mut status_write = None;
        if !status_current(json.get("status"), &status) {
            w.acts.push("write status".into());
            status_write = Some(self.status_request(cluster, &json, status));
        }
        out.batch(std::mem::take(&mut w.requests));
        if let Some(r) = status_write {
            out.request(r);
        }
        out.batch(std::mem::take(&mut w.last));
        out.record = Some(ReconcileRecord {
            observed: observed.join(", "),
            desired: format!(
                "{} × postgres:{}, {} each",
                spec.replicas, spec.version, spec.storage
            ),
            diff: w.acts.join("; "),
        });
        out
    }

    /// Replicas and image go into the StatefulSet; storage goes into each claim (the fix), or
    /// into its `volumeClaimTemplates` (the volume-via-template bug).
    fn update_statefulset(
        &self,
        live: &Object,
        owner: &Owner,
        spec: &Spec,
        cache: &Cache,
        w: &mut Writes,
    ) {
        let live = live.to_json();
        let replicas = live.pointer("/spec/replicas").and_then(Json::as_i64);
        let image = live
            .pointer("/spec/template/spec/containers/0/image")
            .and_then(Json::as_str);
        if replicas != Some(spec.replicas) || image != Some(spec.image().as_str()) {
            let key = live_key(objects::statefulset_kind(), owner, owner.name);
            if let Some(key) = key {
                w.patch(
                    key,
                    json!({"spec": {
                        "replicas": spec.replicas,
                        "template": {"spec": {"containers": [objects::container(spec)]}},
                    }}),
                    format!(
                        "patch StatefulSet {}: replicas {}, image {}",
                        owner.name,
                        spec.replicas,
                        spec.image()
                    ),
                );
            }
        }
        let template_storage = live
            .pointer("/spec/volumeClaimTemplates/0/spec/resources/requests/storage")
            .and_then(Json::as_str)
            .unwrap_or_default();
        self.resize(template_storage, owner, spec, cache, w);
    }

    /// A storage change: into each claim the StatefulSet made (the fix), or into its
    /// `volumeClaimTemplates` (the volume-via-template bug). `template_storage` is what the
    /// StatefulSet's template asks for now.
    fn resize(
        &self,
        template_storage: &str,
        owner: &Owner,
        spec: &Spec,
        cache: &Cache,
        w: &mut Writes,
    ) {
        if self.has(OperatorBug::VolumeViaTemplate) {
            // The bug: the template is frozen after create, so this is refused with 422 on
            // every retry. The fix is the branch below.
            if objects::differ(template_storage, &spec.storage) {
                if let Some(key) = live_key(objects::statefulset_kind(), owner, owner.name) {
                    w.acts.push(format!(
                        "patch StatefulSet {} volumeClaimTemplates: storage {}",
                        owner.name, spec.storage
                    ));
                    w.last.push(ApiRequest::Patch {
                        key,
                        patch: json!({"spec": {
                            "volumeClaimTemplates": [objects::claim_template(&spec.storage)],
                        }}),
                        status: false,
                    });
                }
            }
            return;
        }
        let Some(claims) = claim_kind() else { return };
        let prefix = format!("data-{}-", owner.name);
        for claim in cache.list(claims) {
            let m = claim.meta();
            if m.namespace != owner.namespace
                || !m.name.starts_with(&prefix)
                || m.labels.get(LABEL_CLUSTER).map(|v| v.as_str()) != Some(owner.name)
                || m.deletion_timestamp.is_some()
            {
                continue;
            }
            let requested = claim
                .to_json()
                .pointer("/spec/resources/requests/storage")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string();
            if objects::smaller(&requested, &spec.storage) {
                w.acts.push(format!(
                    "patch PersistentVolumeClaim {}: storage {}",
                    m.name, spec.storage
                ));
                w.last.push(ApiRequest::Patch {
                    key: claim.key(),
                    patch: json!({"spec": {"resources": {"requests": {"storage": spec.storage}}}}),
                    status: false,
                });
            }
        }
    }

    /// Where the migration to the spec's version stands, creating its Job when none runs.
    fn migrate(
        &mut self,
        cluster: &Json,
        owner: &Owner,
        spec: &Spec,
        cache: &Cache,
        w: &mut Writes,
        out: &mut Outcome,
    ) -> Migration {
        let generate_name = self.has(OperatorBug::GenerateName);
        if generate_name {
            // The bug: whether a migration was started is read from the status (and this
            // process's memory), not from the Jobs, which have no name to look up. A crash
            // between the create below and the status write forgets it. Once it believes one
            // runs, it follows the Jobs by their labels.
            let current = cluster
                .pointer("/status/currentVersion")
                .and_then(Json::as_str)
                .unwrap_or_default();
            let remembered = self
                .started
                .iter()
                .any(|(uid, version)| *uid == owner.uid && *version == spec.version);
            if current == spec.version
                || remembered
                || status::says_migrating(cluster.get("status"), &spec.version)
            {
                return self
                    .migration_state(cluster, owner, spec, cache)
                    .unwrap_or(Migration::Running(String::new()));
            }
        } else if let Some(state) = self.migration_state(cluster, owner, spec, cache) {
            return state;
        }
        let name = objects::migration_job_name(owner.name, &spec.version);
        w.create(
            job::job_kind(),
            objects::migration_job(owner, spec, generate_name),
            &if generate_name {
                format!("Job {}-migrate-… (generateName)", owner.name)
            } else {
                format!("Job {name}")
            },
            out,
        );
        Migration::Running(if generate_name { String::new() } else { name })
    }

    /// The migration's state from the cache, or None when no Job for the spec's version exists
    /// yet (by its name; with the generate-name bug, by its labels).
    fn migration_state(
        &self,
        cluster: &Json,
        owner: &Owner,
        spec: &Spec,
        cache: &Cache,
    ) -> Option<Migration> {
        let current = cluster
            .pointer("/status/currentVersion")
            .and_then(Json::as_str)
            .unwrap_or_default();
        if current == spec.version {
            return Some(Migration::Done);
        }
        let kind = job::job_kind()?;
        let jobs: Vec<&Rc<Object>> = if self.has(OperatorBug::GenerateName) {
            version_jobs(cache, kind, owner, &spec.version).collect()
        } else {
            let name = objects::migration_job_name(owner.name, &spec.version);
            cache
                .get(&objects::key(kind, owner, &name))
                .filter(|j| owned_by(j, owner.uid))
                .into_iter()
                .collect()
        };
        let mut failed = None;
        let mut running = None;
        for j in &jobs {
            let Some(c) = j.as_custom() else { continue };
            if job::has_condition(c, "Complete") {
                return Some(Migration::Done);
            }
            if job::has_condition(c, "Failed") {
                let why = job::condition(c, "Failed")
                    .and_then(|c| c.get("message"))
                    .and_then(Json::as_str)
                    .unwrap_or("the Job failed")
                    .to_string();
                failed = Some(Migration::Failed(j.meta().name.to_string(), why));
            } else {
                running = Some(Migration::Running(j.meta().name.to_string()));
            }
        }
        running.or(failed)
    }

    fn status_of(
        &self,
        cluster: &Json,
        spec: &Spec,
        sts: Option<&Object>,
        migration: &Migration,
        (owner, cache): (&Owner, &Cache),
        now: Millis,
    ) -> Json {
        // How many migration Jobs of this version exist: more than one means a migration ran
        // twice (the generate-name bug after a crash), which the status makes visible.
        let migration_jobs =
            job::job_kind().map_or(0, |k| version_jobs(cache, k, owner, &spec.version).count());
        let ready = sts
            .map(|s| s.to_json())
            .and_then(|s| s.pointer("/status/readyReplicas").and_then(Json::as_i64))
            .unwrap_or(0);
        let generation = cluster
            .pointer("/metadata/generation")
            .and_then(Json::as_i64)
            .unwrap_or(0);
        let current = cluster
            .pointer("/status/currentVersion")
            .and_then(Json::as_str)
            .unwrap_or_default();
        status::compute(
            &status::Observed {
                generation,
                version: &spec.version,
                replicas: spec.replicas,
                ready_replicas: ready,
                current_version: current,
                migration,
                migration_jobs,
            },
            cluster.get("status"),
            now,
        )
    }

    /// The status write: a patch of the status subresource, or (the status-on-main-resource
    /// bug) a plain Update of the whole object, status included.
    fn status_request(&self, cluster: &Object, json: &Json, status: Json) -> ApiRequest {
        if self.has(OperatorBug::StatusOnMainResource) {
            // The bug: with no status subresource in the CRD, status is part of the object, so
            // this write moves metadata.generation and the status it carries is already stale.
            // The fix: the status subresource, written through /status.
            let mut whole = json.clone();
            whole["status"] = status.clone();
            return match Object::from_json(cluster.kind(), whole) {
                Ok(o) => ApiRequest::Update(o),
                // What was read from the store decodes again; were it not to, the same write
                // as a merge patch.
                Err(_) => ApiRequest::Patch {
                    key: cluster.key(),
                    patch: json!({ "status": status }),
                    status: false,
                },
            };
        }
        ApiRequest::Patch {
            key: cluster.key(),
            patch: json!({ "status": status }),
            status: true,
        }
    }

    /// A deleted cluster: the cleanup its finalizer waits for (the backup goes), then the
    /// finalizer. The garbage collector then takes what the cluster owned.
    fn finalize(&self, cluster: &Rc<Object>, cache: &Cache) -> Outcome {
        let mut out = Outcome::done();
        let meta = cluster.meta();
        if !meta.finalizers.iter().any(|f| f == FINALIZER) {
            return out;
        }
        let backup = objects::backup_name(&meta.name);
        let live = objects::configmap_kind()
            .and_then(|k| cache.get(&ObjectKey::new(k, &meta.namespace, &backup)))
            .filter(|cm| owned_by(cm, &meta.uid));
        match live {
            Some(cm) if cm.meta().deletion_timestamp.is_none() => {
                out.request(ApiRequest::Delete {
                    key: cm.key(),
                    options: DeleteOptions {
                        precondition_uid: Some(cm.meta().uid.to_string()),
                        ..Default::default()
                    },
                });
                out.event(EventRecord::normal(
                    cluster,
                    "Cleanup",
                    format!("Deleting backup ConfigMap {backup}"),
                ));
                out.record = Some(ReconcileRecord {
                    observed: "cluster deleting, backup still there".into(),
                    desired: "backup deleted, then the finalizer removed".into(),
                    diff: format!("delete ConfigMap {backup}"),
                });
            }
            Some(_) => {
                out.record = Some(ReconcileRecord {
                    observed: "cluster deleting, backup going".into(),
                    desired: "backup deleted, then the finalizer removed".into(),
                    diff: String::new(),
                });
            }
            None => {
                out.request(ApiRequest::Patch {
                    key: cluster.key(),
                    patch: json!({"metadata": {"finalizers": finalizers_without(meta)}}),
                    status: false,
                });
                out.event(EventRecord::normal(
                    cluster,
                    "Cleanup",
                    format!("Backup deleted, removing finalizer {FINALIZER}"),
                ));
                out.record = Some(ReconcileRecord {
                    observed: "cluster deleting, backup gone".into(),
                    desired: "cluster gone".into(),
                    diff: format!("remove finalizer {FINALIZER}"),
                });
            }
        }
        out
    }
}

/// The key of an object of `kind` named `name` next to the cluster.
fn live_key(kind: Option<Kind>, owner: &Owner, name: &str) -> Option<ObjectKey> {
    kind.map(|k| objects::key(k, owner, name))
}

impl Controller for PostgresOperator {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::PostgresOperator
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Service]
    }

    fn watches_custom_kinds(&self) -> bool {
        true
    }

    fn watches(&self, kind: Kind) -> bool {
        kind == Kind::Service || Some(kind) == cluster_kind() || owned_kinds().contains(&kind)
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        if self.has(OperatorBug::EdgeTriggered) {
            return self.edge_keys_for_event(ev, old, cache);
        }
        let o = &ev.object;
        if Some(o.kind()) == cluster_kind() {
            return vec![o.key()];
        }
        owner_key(o).into_iter().collect()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        if self.has(OperatorBug::EdgeTriggered) {
            return Vec::new();
        }
        cluster_kind()
            .map(|k| cache.list(k).map(|o| o.key()).collect())
            .unwrap_or_default()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        if Some(key.kind) != cluster_kind() {
            return Outcome::done();
        }
        if self.has(OperatorBug::EdgeTriggered) {
            return self.edge_reconcile(key, ctx);
        }
        let Some(cluster) = ctx.cache.get(key).cloned() else {
            return Outcome::done();
        };
        if cluster.meta().deletion_timestamp.is_some() {
            return self.finalize(&cluster, ctx.cache);
        }
        let out = self.sync(&cluster, ctx);
        // What the generate-name bug remembers stops mattering once the status says it.
        let uid = cluster.meta().uid.clone();
        let status = cluster.to_json().get("status").cloned();
        let current = status
            .as_ref()
            .and_then(|s| s.get("currentVersion"))
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string();
        self.started.retain(|(u, v)| {
            *u != uid || (*v != current && !status::says_migrating(status.as_ref(), v))
        });
        out
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        let ApiRequest::Create(sent) = req else {
            return;
        };
        match result {
            Ok(made) if Some(made.kind()) == job::job_kind() => {
                if let (Some(r), Some(v)) = (
                    made.meta().controller_ref(),
                    made.meta().labels.get(LABEL_VERSION),
                ) {
                    let started = (r.uid.clone(), v.to_string());
                    if !self.started.contains(&started) {
                        self.started.push(started);
                    }
                }
            }
            Err(e) if self.has(OperatorBug::EdgeTriggered) && e.code() != 409 => {
                // The edge-triggered operator owes what it failed to create.
                if let Some(cluster) = owner_key(sent) {
                    let delta = edge::Delta::Lost(sent.kind().as_str().to_string());
                    self.pending
                        .get_or_insert_with(cluster, Vec::new)
                        .push(delta);
                }
            }
            _ => {}
        }
    }

    fn events_for_response(&mut self, req: &ApiRequest, result: &ApiResult) -> Vec<EventRecord> {
        let Some(cluster) = cluster_kind() else {
            return Vec::new();
        };
        let about = |o: &Object| {
            let r = o.meta().controller_ref()?;
            Some((
                ObjectKey::new(cluster, &o.meta().namespace, &r.name),
                r.uid.clone(),
            ))
        };
        let record = |type_, reason: &str, message: String, (object, uid)| EventRecord {
            type_,
            reason: reason.into(),
            message: message.into(),
            object,
            uid,
            field_path: Str::EMPTY,
        };
        match (req, result) {
            (ApiRequest::Create(_), Ok(made)) => about(made)
                .map(|at| {
                    let m = made.meta();
                    record(
                        "Normal",
                        "Created",
                        format!("Created {} {}", made.kind().as_str(), m.name),
                        at,
                    )
                })
                .into_iter()
                .collect(),
            (ApiRequest::Create(_) | ApiRequest::Patch { .. }, Err(e)) if e.code() != 409 => {
                let target = req.key();
                vec![EventRecord {
                    type_: "Warning",
                    reason: "UpdateFailed".into(),
                    message: e.message.clone().into(),
                    object: target,
                    uid: Str::EMPTY,
                    field_path: Str::EMPTY,
                }]
            }
            _ => Vec::new(),
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(PostgresOperator::with_bugs(
            self.bugs.iter().copied(),
        )))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}
