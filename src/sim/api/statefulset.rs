//! apps/v1 StatefulSet: the typed view the StatefulSet controller reads, and what the API server
//! does on a write (`SetDefaults_StatefulSet`, `ValidateStatefulSet` and its update rule).
//!
//! A StatefulSet is stored like every built-in kind without a typed variant (a [`CustomObject`]:
//! typed metadata, the rest as JSON, Go-decoded on the way in); this module reads its own fields
//! from that JSON by hand (the selector, pod template and claim metadata, types other kinds
//! share, through the one strict decoder) and writes defaults back into the JSON, so fields it
//! does not model (a volume claim template's `dataSource`) are kept as written.

use std::cell::RefCell;

use serde_json::{json, Map, Value as Json};

use super::admission::default_template;
use super::apiextensions::CustomObject;
use super::fields::Fields;
use super::strict::{decode_at, DecodeError, DecodeFindings};
use super::types::{IntOrString, Kind, LabelSelector, ObjectMeta, PodTemplateSpec};
use super::validation::{
    check_replicas, invalid_if_any, nonnegative, validate_selector_and_template, FieldError,
};
use super::ApiError;

/// `OrderedReady`: one pod at a time, each after its predecessors are Running and Ready.
pub const ORDERED_READY: &str = "OrderedReady";
/// `Parallel`: pods created and deleted without waiting for each other.
pub const PARALLEL: &str = "Parallel";
/// The default update strategy: the controller replaces pods, highest ordinal first.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// Pods are replaced only when someone deletes them.
pub const ON_DELETE: &str = "OnDelete";
/// A retention policy's `Retain`: claims outlive their pods and the set.
pub const RETAIN: &str = "Retain";
/// A retention policy's `Delete`: the garbage collector deletes the claims.
pub const DELETE: &str = "Delete";

/// The kind, for [`Fields`]' errors.
const SET: &str = "StatefulSet";

/// The fields of `spec` an update may change; any other change is refused whole.
const UPDATABLE: [&str; 7] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// `spec.volumeClaimTemplates[i]`: what each pod's claim is made from. The claim's spec is kept
/// as written; the storage wing reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClaimTemplate {
    pub metadata: ObjectMeta,
    pub spec: Json,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RollingUpdateStatefulSetStrategy {
    pub partition: Option<i32>,
    /// Accepted and ignored: the MaxUnavailableStatefulSet gate is off in v1.34.
    pub max_unavailable: Option<IntOrString>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatefulSetUpdateStrategy {
    pub type_: Option<String>,
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RetentionPolicy {
    pub when_deleted: Option<String>,
    pub when_scaled: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ordinals {
    pub start: i32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatefulSetSpec {
    pub replicas: Option<i32>,
    pub selector: LabelSelector,
    pub template: PodTemplateSpec,
    pub volume_claim_templates: Vec<ClaimTemplate>,
    pub service_name: String,
    pub pod_management_policy: Option<String>,
    pub update_strategy: Option<StatefulSetUpdateStrategy>,
    pub revision_history_limit: Option<i32>,
    pub min_ready_seconds: i32,
    pub persistent_volume_claim_retention_policy: Option<RetentionPolicy>,
    pub ordinals: Option<Ordinals>,
}

/// `status`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatefulSetStatus {
    pub observed_generation: i64,
    pub replicas: i32,
    pub ready_replicas: i32,
    pub current_replicas: i32,
    pub updated_replicas: i32,
    pub current_revision: String,
    pub update_revision: String,
    pub collision_count: Option<i32>,
    pub available_replicas: i32,
}

impl StatefulSetStatus {
    /// The stored form, with upstream's omitempty rules (replicas and availableReplicas always
    /// written).
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        if self.observed_generation != 0 {
            m.insert(
                "observedGeneration".into(),
                Json::from(self.observed_generation),
            );
        }
        m.insert("replicas".into(), Json::from(self.replicas));
        for (name, n) in [
            ("readyReplicas", self.ready_replicas),
            ("currentReplicas", self.current_replicas),
            ("updatedReplicas", self.updated_replicas),
        ] {
            if n != 0 {
                m.insert(name.into(), Json::from(n));
            }
        }
        for (name, rev) in [
            ("currentRevision", &self.current_revision),
            ("updateRevision", &self.update_revision),
        ] {
            if !rev.is_empty() {
                m.insert(name.into(), Json::String(rev.clone()));
            }
        }
        if let Some(c) = self.collision_count {
            m.insert("collisionCount".into(), Json::from(c));
        }
        m.insert(
            "availableReplicas".into(),
            Json::from(self.available_replicas),
        );
        Json::Object(m)
    }
}

/// A StatefulSet read from the store.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatefulSet {
    pub metadata: ObjectMeta,
    pub spec: StatefulSetSpec,
    pub status: StatefulSetStatus,
}

fn read_spec(
    spec: Fields<'_>,
    findings: &RefCell<DecodeFindings>,
) -> Result<StatefulSetSpec, DecodeError> {
    let mut volume_claim_templates = Vec::new();
    match spec.get("volumeClaimTemplates") {
        None => {}
        Some(Json::Array(items)) => {
            for item in items {
                let t = Fields::of(item, SET, "spec")?;
                let metadata = match t.get("metadata") {
                    Some(v) => decode_at(
                        v,
                        "spec.volumeClaimTemplates",
                        "PersistentVolumeClaim",
                        findings,
                    )?,
                    None => ObjectMeta::default(),
                };
                volume_claim_templates.push(ClaimTemplate {
                    metadata,
                    spec: t.get("spec").cloned().unwrap_or(Json::Null),
                });
            }
        }
        Some(_) => return Err(spec.not_one()),
    }
    let update_strategy = match spec.object("updateStrategy")? {
        None => None,
        Some(s) => Some(StatefulSetUpdateStrategy {
            type_: s.string("type")?,
            rolling_update: match s.object("rollingUpdate")? {
                None => None,
                Some(r) => Some(RollingUpdateStatefulSetStrategy {
                    partition: r.int32("partition")?,
                    max_unavailable: match r.get("maxUnavailable") {
                        None => None,
                        Some(Json::String(s)) => Some(IntOrString::String(s.clone())),
                        Some(v) => {
                            Some(IntOrString::Int(v.as_i64().ok_or_else(|| spec.not_one())?))
                        }
                    },
                }),
            },
        }),
    };
    let persistent_volume_claim_retention_policy =
        match spec.object("persistentVolumeClaimRetentionPolicy")? {
            None => None,
            Some(p) => Some(RetentionPolicy {
                when_deleted: p.string("whenDeleted")?,
                when_scaled: p.string("whenScaled")?,
            }),
        };
    let ordinals = match spec.object("ordinals")? {
        None => None,
        Some(o) => Some(Ordinals {
            start: o.int32("start")?.unwrap_or(0),
        }),
    };
    Ok(StatefulSetSpec {
        replicas: spec.int32("replicas")?,
        selector: spec.typed("selector", "StatefulSetSpec", findings)?,
        template: spec.typed("template", "StatefulSetSpec", findings)?,
        volume_claim_templates,
        service_name: spec.string("serviceName")?.unwrap_or_default(),
        pod_management_policy: spec.string("podManagementPolicy")?,
        update_strategy,
        revision_history_limit: spec.int32("revisionHistoryLimit")?,
        min_ready_seconds: spec.int32("minReadySeconds")?.unwrap_or(0),
        persistent_volume_claim_retention_policy,
        ordinals,
    })
}

fn read_status(status: Fields<'_>) -> Result<StatefulSetStatus, DecodeError> {
    Ok(StatefulSetStatus {
        observed_generation: status.int("observedGeneration")?.unwrap_or(0),
        replicas: status.int32("replicas")?.unwrap_or(0),
        ready_replicas: status.int32("readyReplicas")?.unwrap_or(0),
        current_replicas: status.int32("currentReplicas")?.unwrap_or(0),
        updated_replicas: status.int32("updatedReplicas")?.unwrap_or(0),
        current_revision: status.string("currentRevision")?.unwrap_or_default(),
        update_revision: status.string("updateRevision")?.unwrap_or_default(),
        collision_count: status.int32("collisionCount")?,
        available_replicas: status.int32("availableReplicas")?.unwrap_or(0),
    })
}

impl StatefulSet {
    /// Reads a stored StatefulSet (Go's decoding has already checked its types, so an error here
    /// means the object is not one).
    pub fn from_custom(obj: &CustomObject) -> Result<StatefulSet, DecodeError> {
        let findings = RefCell::new(DecodeFindings::default());
        let null = Json::Null;
        let part = |name: &str| obj.content.get(name).unwrap_or(&null);
        Ok(StatefulSet {
            metadata: obj.metadata.clone(),
            spec: read_spec(Fields::of(part("spec"), SET, "spec")?, &findings)?,
            status: read_status(Fields::of(part("status"), SET, "status")?)?,
        })
    }

    pub fn replicas(&self) -> i32 {
        self.spec.replicas.unwrap_or(1)
    }

    /// `getStartOrdinal`.
    pub fn start_ordinal(&self) -> i32 {
        self.spec.ordinals.as_ref().map_or(0, |o| o.start)
    }

    /// Whether pods come and go without waiting for each other (`allowsBurst`).
    pub fn allows_burst(&self) -> bool {
        self.spec.pod_management_policy.as_deref() == Some(PARALLEL)
    }

    pub fn update_strategy(&self) -> &str {
        self.spec
            .update_strategy
            .as_ref()
            .and_then(|s| s.type_.as_deref())
            .unwrap_or(ROLLING_UPDATE)
    }

    /// The rolling update's partition: ordinals below `start + partition` stay at the current
    /// revision.
    pub fn partition(&self) -> i32 {
        self.spec
            .update_strategy
            .as_ref()
            .and_then(|s| s.rolling_update.as_ref())
            .and_then(|r| r.partition)
            .unwrap_or(0)
    }

    /// `whenDeleted` and `whenScaled`, `Retain` where unset.
    pub fn retention(&self) -> (&str, &str) {
        let p = self.spec.persistent_volume_claim_retention_policy.as_ref();
        (
            p.and_then(|p| p.when_deleted.as_deref()).unwrap_or(RETAIN),
            p.and_then(|p| p.when_scaled.as_deref()).unwrap_or(RETAIN),
        )
    }

    pub fn revision_history_limit(&self) -> usize {
        self.spec.revision_history_limit.unwrap_or(10).max(0) as usize
    }
}

/// What the StatefulSet registry does with a write: defaults and validation on create and on
/// update of the main resource, then the rule that an update may change only a few fields of
/// `spec`. A write to `/status` keeps the stored spec and is not checked here.
pub fn admit(
    obj: &mut CustomObject,
    old: Option<&CustomObject>,
    status: bool,
) -> Result<(), ApiError> {
    if status {
        return Ok(());
    }
    set_defaults(obj);
    let mut errs = validate(obj);
    if let Some(old) = old {
        errs.extend(validate_update(obj, old));
    }
    invalid_if_any(Kind::Custom(obj.kind), &obj.metadata.name, &errs)
}

/// `SetDefaults_StatefulSet` (v1.34: the MaxUnavailableStatefulSet gate is off, so
/// `maxUnavailable` gets no default), the pod template's defaults and the claim templates'.
fn set_defaults(obj: &mut CustomObject) {
    let spec = obj
        .content
        .entry("spec")
        .or_insert_with(|| Json::Object(Map::new()));
    let Json::Object(spec) = spec else {
        return;
    };
    spec.entry("replicas").or_insert(json!(1));
    spec.entry("podManagementPolicy")
        .or_insert(json!(ORDERED_READY));
    spec.entry("revisionHistoryLimit").or_insert(json!(10));
    if let Json::Object(strategy) = spec.entry("updateStrategy").or_insert_with(|| json!({})) {
        strategy.entry("type").or_insert(json!(ROLLING_UPDATE));
        if strategy.get("type") == Some(&json!(ROLLING_UPDATE)) {
            if let Json::Object(ru) = strategy.entry("rollingUpdate").or_insert_with(|| json!({})) {
                ru.entry("partition").or_insert(json!(0));
            }
        }
    }
    if let Json::Object(policy) = spec
        .entry("persistentVolumeClaimRetentionPolicy")
        .or_insert_with(|| json!({}))
    {
        policy.entry("whenDeleted").or_insert(json!(RETAIN));
        policy.entry("whenScaled").or_insert(json!(RETAIN));
    }
    if let Some(template) = spec.get_mut("template") {
        default_template(template, "spec.template");
    }
    if let Some(Json::Array(claims)) = spec.get_mut("volumeClaimTemplates") {
        for claim in claims.iter_mut().filter_map(Json::as_object_mut) {
            if let Json::Object(cs) = claim.entry("spec").or_insert_with(|| json!({})) {
                cs.entry("volumeMode").or_insert(json!("Filesystem"));
            }
            if let Json::Object(st) = claim.entry("status").or_insert_with(|| json!({})) {
                st.entry("phase").or_insert(json!("Pending"));
            }
        }
    }
}

/// `ValidateStatefulSetSpec`, for the rules the playground checks (the rest is Go-decoded only).
fn validate(obj: &CustomObject) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Ok(set) = StatefulSet::from_custom(obj) else {
        return errs;
    };
    let spec = &set.spec;
    match spec.pod_management_policy.as_deref().unwrap_or("") {
        ORDERED_READY | PARALLEL => {}
        "" => errs.push(FieldError::required("spec.podManagementPolicy", "")),
        other => errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            other,
            format!("must be '{ORDERED_READY}' or '{PARALLEL}'"),
        )),
    }
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or("") {
        ROLLING_UPDATE => {
            if let Some(p) = strategy.rolling_update.as_ref().and_then(|r| r.partition) {
                errs.extend(nonnegative(
                    i64::from(p),
                    "spec.updateStrategy.rollingUpdate.partition",
                ));
            }
        }
        ON_DELETE => {
            if strategy.rolling_update.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.updateStrategy.rollingUpdate",
                    format!("only allowed for updateStrategy '{ROLLING_UPDATE}'"),
                ));
            }
        }
        "" => errs.push(FieldError::required("spec.updateStrategy", "")),
        other => errs.push(FieldError::invalid(
            "spec.updateStrategy",
            other,
            format!("must be '{ROLLING_UPDATE}' or '{ON_DELETE}'"),
        )),
    }
    let (when_deleted, when_scaled) = set.retention();
    for (field, value) in [("whenDeleted", when_deleted), ("whenScaled", when_scaled)] {
        if value != RETAIN && value != DELETE {
            errs.push(FieldError::not_supported(
                format!("spec.persistentVolumeClaimRetentionPolicy.{field}"),
                value,
                &[RETAIN, DELETE],
            ));
        }
    }
    if let Some(o) = &spec.ordinals {
        errs.extend(nonnegative(i64::from(o.start), "spec.ordinals.start"));
    }
    let replicas = i64::from(set.replicas());
    errs.extend(nonnegative(replicas, "spec.replicas"));
    errs.extend(check_replicas(replicas, "spec.replicas"));
    errs.extend(nonnegative(
        i64::from(spec.min_ready_seconds),
        "spec.minReadySeconds",
    ));
    validate_selector_and_template(&spec.selector, &spec.template, "StatefulSet", &mut errs);
    errs
}

/// `ValidateStatefulSetUpdate`: outside the updatable fields, the spec is frozen (so a claim
/// template's size cannot be raised through the set).
fn validate_update(obj: &CustomObject, old: &CustomObject) -> Vec<FieldError> {
    let frozen = |o: &CustomObject| {
        let mut spec = o.content.get("spec").cloned().unwrap_or(Json::Null);
        if let Json::Object(m) = &mut spec {
            for f in UPDATABLE {
                m.remove(f);
            }
        }
        spec
    };
    if frozen(obj) == frozen(old) {
        return Vec::new();
    }
    let fields: Vec<String> = UPDATABLE.iter().map(|f| format!("'{f}'")).collect();
    let (last, rest) = fields.split_last().expect("UPDATABLE is not empty");
    vec![FieldError::forbidden(
        "spec",
        format!(
            "updates to statefulset spec for fields other than {} and {last} are forbidden",
            rest.join(", ")
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(spec: Json) -> CustomObject {
        CustomObject::stored_for_test("apps", "StatefulSet", "web", spec)
    }

    fn web() -> CustomObject {
        set(json!({
            "selector": {"matchLabels": {"app": "web"}},
            "serviceName": "web",
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
        }))
    }

    #[test]
    fn the_view_reads_what_is_stored_and_refuses_what_a_set_cannot_hold() {
        let mut obj = web();
        admit(&mut obj, None, false).expect("valid");
        obj.content["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!("50%");
        obj.content.insert(
            "status".into(),
            json!({"replicas": 2, "currentRevision": "web-1", "collisionCount": 0}),
        );
        let set = StatefulSet::from_custom(&obj).expect("a set");
        assert_eq!(set.replicas(), 1);
        assert_eq!(
            set.spec
                .selector
                .match_labels
                .get("app")
                .map(|v| v.as_str()),
            Some("web")
        );
        assert_eq!(set.spec.volume_claim_templates[0].metadata.name, "www");
        assert_eq!(set.spec.service_name, "web");
        assert_eq!(
            (set.update_strategy(), set.partition()),
            (ROLLING_UPDATE, 0)
        );
        assert_eq!(set.retention(), (RETAIN, RETAIN));
        assert_eq!(set.status.replicas, 2);
        assert_eq!(set.status.collision_count, Some(0));
        for (field, bad) in [
            ("replicas", json!("three")),
            ("replicas", json!(1.5)),
            ("minReadySeconds", json!(1_i64 << 40)),
            ("serviceName", json!(1)),
            ("volumeClaimTemplates", json!({})),
            ("ordinals", json!([])),
        ] {
            let mut o = obj.clone();
            o.content["spec"][field] = bad;
            assert!(StatefulSet::from_custom(&o).is_err(), "{field}");
        }
        let mut o = obj.clone();
        o.content["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!(true);
        assert!(StatefulSet::from_custom(&o).is_err());
    }

    #[test]
    fn the_status_is_written_with_upstreams_omitempty_rules() {
        let status = StatefulSetStatus {
            replicas: 0,
            current_replicas: 2,
            update_revision: "web-2".into(),
            collision_count: Some(0),
            ..Default::default()
        };
        assert_eq!(
            status.to_json(),
            json!({"replicas": 0, "currentReplicas": 2, "updateRevision": "web-2",
                   "collisionCount": 0, "availableReplicas": 0})
        );
    }

    #[test]
    fn a_new_statefulset_gets_the_upstream_defaults() {
        let mut obj = web();
        admit(&mut obj, None, false).expect("valid");
        let spec = &obj.content["spec"];
        assert_eq!(spec["replicas"], json!(1));
        assert_eq!(spec["podManagementPolicy"], json!("OrderedReady"));
        assert_eq!(spec["revisionHistoryLimit"], json!(10));
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(spec["template"]["spec"]["restartPolicy"], json!("Always"));
        assert_eq!(
            spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
            json!("IfNotPresent")
        );
        assert_eq!(
            spec["volumeClaimTemplates"][0]["spec"]["volumeMode"],
            json!("Filesystem")
        );
        assert_eq!(
            spec["volumeClaimTemplates"][0]["status"],
            json!({"phase": "Pending"})
        );
    }

    #[test]
    fn raising_a_claim_templates_storage_is_refused_with_the_api_servers_words() {
        let mut old = web();
        admit(&mut old, None, false).expect("valid");
        let mut new = old.clone();
        new.content["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]
            ["storage"] = json!("2Gi");
        let err = admit(&mut new, Some(&old), false).expect_err("forbidden");
        assert_eq!(err.reason, crate::sim::api::StatusReason::Invalid);
        assert_eq!(
            err.message,
            "StatefulSet.apps \"web\" is invalid: spec: Forbidden: updates to statefulset spec \
             for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', \
             'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and \
             'minReadySeconds' are forbidden"
        );
    }

    #[test]
    fn replicas_template_and_partition_may_change() {
        let mut old = web();
        admit(&mut old, None, false).expect("valid");
        let mut new = old.clone();
        new.content["spec"]["replicas"] = json!(5);
        new.content["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
        new.content["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(2);
        admit(&mut new, Some(&old), false).expect("allowed");
    }

    #[test]
    fn a_selector_that_misses_the_template_and_an_unknown_policy_are_refused() {
        let mut obj = web();
        obj.content["spec"]["selector"] = json!({"matchLabels": {"app": "db"}});
        obj.content["spec"]["podManagementPolicy"] = json!("Burst");
        let err = admit(&mut obj, None, false).expect_err("invalid");
        assert_eq!(
            err.message,
            "StatefulSet.apps \"web\" is invalid: [spec.podManagementPolicy: Invalid value: \
             \"Burst\": must be 'OrderedReady' or 'Parallel', spec.template.metadata.labels: \
             Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match \
             template `labels`]"
        );
    }
}
