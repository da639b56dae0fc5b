//! What the operator makes of a PostgresCluster: its StatefulSet, headless Service, backup
//! ConfigMap and migration Job, as the JSON a kubebuilder operator would build, each owned by the
//! cluster (a controller ownerReference with `blockOwnerDeletion`), so the garbage collector
//! takes them once the cluster is gone.

use serde_json::{json, Value as Json};

use crate::sim::api::openapi::stored_kind;
use crate::sim::api::quantity::parse_quantity;
use crate::sim::api::types::{Kind, Object, ObjectKey};

use super::{API_VERSION, KIND, LABEL_CLUSTER, LABEL_VERSION};

/// The PostgreSQL port, named `postgres` on the Service and the container.
const PORT: u16 = 5432;

/// How long the simulated migration runs (`docs/containers.md`: a script's `sleep` adds up).
const MIGRATION_SECONDS: u32 = 3;

/// The parts of a cluster's spec the operator acts on, with the CRD's defaults for what a
/// stored object lacks (an object written before the defaults, or by hand in a test).
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub version: String,
    pub replicas: i64,
    pub storage: String,
}

impl Spec {
    /// Reads `spec` from a cluster's JSON.
    pub fn read(cluster: &Json) -> Spec {
        let spec = cluster.get("spec");
        Spec {
            version: spec
                .and_then(|s| s.get("version"))
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string(),
            replicas: spec
                .and_then(|s| s.get("replicas"))
                .and_then(Json::as_i64)
                .unwrap_or(1)
                .max(1),
            storage: spec
                .and_then(|s| s.get("storage"))
                .and_then(Json::as_str)
                .unwrap_or("1Gi")
                .to_string(),
        }
    }

    /// The database image.
    pub fn image(&self) -> String {
        format!("postgres:{}", self.version)
    }
}

/// What the operator needs of the cluster it builds for.
pub struct Owner<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub uid: &'a str,
}

impl<'a> Owner<'a> {
    /// The cluster whose metadata this is.
    pub fn of(meta: &'a crate::sim::api::types::ObjectMeta) -> Owner<'a> {
        Owner {
            name: &meta.name,
            namespace: &meta.namespace,
            uid: &meta.uid,
        }
    }

    fn reference(&self) -> Json {
        json!([{
            "apiVersion": API_VERSION,
            "kind": KIND,
            "name": self.name,
            "uid": self.uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }])
    }

    fn metadata(&self, name: &str, extra_labels: &[(&str, &str)]) -> Json {
        let mut labels = json!({ LABEL_CLUSTER: self.name });
        for (k, v) in extra_labels {
            labels[*k] = json!(v);
        }
        json!({
            "name": name,
            "namespace": self.namespace,
            "labels": labels,
            "ownerReferences": self.reference(),
        })
    }
}

/// The stored StatefulSet kind.
pub fn statefulset_kind() -> Option<Kind> {
    stored_kind("apps", "StatefulSet").map(Kind::Custom)
}

/// The stored ConfigMap kind.
pub fn configmap_kind() -> Option<Kind> {
    stored_kind("", "ConfigMap").map(Kind::Custom)
}

/// The backup ConfigMap's name: what the finalizer's cleanup deletes.
pub fn backup_name(cluster: &str) -> String {
    format!("{cluster}-backup")
}

/// The deterministic name of the migration Job for `version`, so a retry of its create meets
/// 409 AlreadyExists instead of starting a second migration.
pub fn migration_job_name(cluster: &str, version: &str) -> String {
    format!("{cluster}-migrate-{version}")
}

/// The database container, as the StatefulSet's template holds it.
pub fn container(spec: &Spec) -> Json {
    json!({
        "name": "postgres",
        "image": spec.image(),
        "ports": [{"name": "postgres", "containerPort": PORT}],
        "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql/data"}],
    })
}

/// The claim template `data` of `storage`.
pub fn claim_template(storage: &str) -> Json {
    json!({
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": storage}},
        },
    })
}

/// The StatefulSet `<name>`: one database pod per replica, each with its `data` claim.
pub fn statefulset(owner: &Owner, spec: &Spec) -> Json {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": owner.metadata(owner.name, &[]),
        "spec": {
            "serviceName": owner.name,
            "replicas": spec.replicas,
            "selector": {"matchLabels": {LABEL_CLUSTER: owner.name}},
            "template": {
                "metadata": {"labels": {LABEL_CLUSTER: owner.name}},
                "spec": {"containers": [container(spec)]},
            },
            "volumeClaimTemplates": [claim_template(&spec.storage)],
        },
    })
}

/// The headless Service `<name>` that gives each replica its DNS name.
pub fn service(owner: &Owner) -> Json {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": owner.metadata(owner.name, &[]),
        "spec": {
            "clusterIP": "None",
            "selector": {LABEL_CLUSTER: owner.name},
            "ports": [{"name": "postgres", "port": PORT, "targetPort": PORT}],
        },
    })
}

/// The ConfigMap `<name>-backup`, standing in for the backups an operator keeps outside the
/// cluster: what its finalizer exists to clean up.
pub fn backup(owner: &Owner) -> Json {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": owner.metadata(&backup_name(owner.name), &[]),
        "data": {
            "schedule": "0 3 * * *",
            "location": format!("s3://backups/{}/{}", owner.namespace, owner.name),
        },
    })
}

/// The migration Job for the spec's version: named `<name>-migrate-<version>`, or given
/// `generateName: <name>-migrate-` when the generate-name bug is on.
pub fn migration_job(owner: &Owner, spec: &Spec, generate_name: bool) -> Json {
    let mut metadata = owner.metadata(
        &migration_job_name(owner.name, &spec.version),
        &[(LABEL_VERSION, &spec.version)],
    );
    if generate_name {
        if let Some(m) = metadata.as_object_mut() {
            m.remove("name");
            m.insert(
                "generateName".into(),
                json!(format!("{}-migrate-", owner.name)),
            );
        }
    }
    let script = format!(
        "echo migrating to PostgreSQL {}; sleep {MIGRATION_SECONDS}",
        spec.version
    );
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": 2,
            "template": {
                "metadata": {"labels": {LABEL_CLUSTER: owner.name}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "migrate",
                        "image": spec.image(),
                        "command": ["sh", "-c", script],
                    }],
                },
            },
        },
    })
}

/// An object of `kind` from its JSON, or why not (a version that makes an invalid name is the
/// API server's to refuse, but a JSON the types cannot hold is refused here, as a client would).
pub fn build(kind: Option<Kind>, json: Json) -> Result<Object, String> {
    let kind = kind.ok_or("the kind is not served")?;
    Object::from_json(kind, json).map_err(|e| e.to_string())
}

/// The key of an object named `name` next to the cluster.
pub fn key(kind: Kind, owner: &Owner, name: &str) -> ObjectKey {
    ObjectKey::new(kind, owner.namespace, name)
}

/// Whether quantity `a` is smaller than `b` (unparseable sizes compare as equal: nothing to do).
pub fn smaller(a: &str, b: &str) -> bool {
    match (parse_quantity(a), parse_quantity(b)) {
        (Ok(a), Ok(b)) => a < b,
        _ => false,
    }
}

/// Whether two quantities differ in value (`1Gi` and `1024Mi` do not).
pub fn differ(a: &str, b: &str) -> bool {
    match (parse_quantity(a), parse_quantity(b)) {
        (Ok(a), Ok(b)) => a != b,
        _ => a != b,
    }
}
