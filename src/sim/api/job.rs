//! batch/v1 Job: what the API server does on a write (`SetDefaults_Job`, the registry's generated
//! selector, `ValidateJob` and its update rules) and the reads of its stored JSON that the Job
//! controller, the TTL-after-finished controller and kubectl share.
//!
//! A Job is stored like every built-in kind without a typed variant (a [`CustomObject`]); fields
//! are read where they are needed, so a field the playground does not model is kept as written.

use std::cell::RefCell;

use serde_json::{json, Map, Value as Json};

use super::apiextensions::CustomObject;
use super::openapi::stored_kind;
use super::strict::{decode_at, DecodeFindings};
use super::types::{Kind, LabelSelector, PodTemplateSpec};
use super::validation::{
    go_label_selector, invalid_if_any, nonnegative, validate_selector_with_template, BadValue,
    FieldError,
};
use super::ApiError;

/// `batch.kubernetes.io/job-name`, on the pods (and, with the legacy `job-name`, on the template).
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// `batch.kubernetes.io/controller-uid`: the generated selector selects it alone.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
pub const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
/// The annotation (and, since v1.32, label) with an Indexed Job pod's index.
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The finalizer the Job controller puts on its pods until it has counted them.
pub const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
pub const NON_INDEXED: &str = "NonIndexed";
pub const INDEXED: &str = "Indexed";
/// `MaxInt32`: the backoffLimit of a Job with a per-index limit.
const MAX_INT32: i64 = 2_147_483_647;

/// The stored Job kind.
pub fn job_kind() -> Option<Kind> {
    stored_kind("batch", "Job").map(Kind::Custom)
}

/// Whether a stored object is a batch Job.
pub fn is_job(obj: &CustomObject) -> bool {
    job_kind() == Some(Kind::Custom(obj.kind))
}

/// The reads of a Job's spec, with the defaults a stored Job already carries.
pub fn completions(job: &CustomObject) -> Option<i32> {
    job.int_at(&["spec", "completions"]).map(clamp)
}

pub fn parallelism(job: &CustomObject) -> i32 {
    job.int_at(&["spec", "parallelism"]).map_or(1, clamp)
}

pub fn backoff_limit(job: &CustomObject) -> i32 {
    job.int_at(&["spec", "backoffLimit"]).map_or(6, clamp)
}

pub fn suspended(job: &CustomObject) -> bool {
    job.at(&["spec", "suspend"]).and_then(Json::as_bool) == Some(true)
}

pub fn indexed(job: &CustomObject) -> bool {
    job.at(&["spec", "completionMode"]).and_then(Json::as_str) == Some(INDEXED)
}

pub fn active_deadline_seconds(job: &CustomObject) -> Option<i64> {
    job.int_at(&["spec", "activeDeadlineSeconds"])
}

pub fn ttl_seconds_after_finished(job: &CustomObject) -> Option<i64> {
    job.int_at(&["spec", "ttlSecondsAfterFinished"])
}

/// The template's `restartPolicy` (`Never` or `OnFailure` once admitted).
pub fn restart_policy(job: &CustomObject) -> &str {
    job.at(&["spec", "template", "spec", "restartPolicy"])
        .and_then(Json::as_str)
        .unwrap_or("Never")
}

/// `spec.selector`, decoded.
pub fn selector(job: &CustomObject) -> LabelSelector {
    let findings = RefCell::new(DecodeFindings::default());
    job.at(&["spec", "selector"])
        .and_then(|v| decode_at(v, "spec.selector", "JobSpec", &findings).ok())
        .unwrap_or_default()
}

/// `spec.template`, decoded.
pub fn template(job: &CustomObject) -> Option<PodTemplateSpec> {
    let findings = RefCell::new(DecodeFindings::default());
    job.at(&["spec", "template"])
        .and_then(|v| decode_at(v, "spec.template", "JobSpec", &findings).ok())
}

/// A condition of `status.conditions` whose status is `True`.
pub fn has_condition(job: &CustomObject, type_: &str) -> bool {
    condition(job, type_).is_some_and(|c| c.get("status").and_then(Json::as_str) == Some("True"))
}

/// A condition of `status.conditions`, by type.
pub fn condition<'a>(job: &'a CustomObject, type_: &str) -> Option<&'a Json> {
    job.at(&["status", "conditions"])
        .and_then(Json::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Json::as_str) == Some(type_))
}

/// `IsJobFinished`: `Complete` or `Failed` is True.
pub fn finished(job: &CustomObject) -> bool {
    has_condition(job, "Complete") || has_condition(job, "Failed")
}

/// `printJob`'s STATUS: the first of Complete, Failed, Terminating, Suspended, FailureTarget,
/// SuccessCriteriaMet that applies, else Running.
pub fn status_word(job: &CustomObject) -> &'static str {
    if has_condition(job, "Complete") {
        "Complete"
    } else if has_condition(job, "Failed") {
        "Failed"
    } else if job.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else if has_condition(job, "Suspended") {
        "Suspended"
    } else if has_condition(job, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(job, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}

fn clamp(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// What the Job registry does with a write: defaults, the generated selector (on create, with
/// the uid the server has just given the Job), validation, and the rules of an update. A write
/// to `/status` keeps the stored spec and is not checked here.
pub fn admit(
    obj: &mut CustomObject,
    old: Option<&CustomObject>,
    status: bool,
) -> Result<(), ApiError> {
    if status {
        return Ok(());
    }
    set_defaults(obj);
    let manual = obj.at(&["spec", "manualSelector"]).and_then(Json::as_bool) == Some(true);
    if old.is_none() && !manual {
        generate_selector(obj);
    }
    let mut errs = validate(obj, manual);
    if let Some(old) = old {
        errs.extend(validate_update(obj, old));
    }
    invalid_if_any(Kind::Custom(obj.kind), &obj.metadata.name, &errs)
}

fn spec_mut(obj: &mut CustomObject) -> Option<&mut Map<String, Json>> {
    obj.content
        .entry("spec")
        .or_insert_with(|| Json::Object(Map::new()))
        .as_object_mut()
}

/// `SetDefaults_Job` (v1.34: JobPodReplacementPolicy is GA) and the pod template's defaults.
fn set_defaults(obj: &mut CustomObject) {
    let Some(spec) = spec_mut(obj) else {
        return;
    };
    if !spec.contains_key("completions") && !spec.contains_key("parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    spec.entry("parallelism").or_insert(json!(1));
    let limit = if spec.contains_key("backoffLimitPerIndex") {
        MAX_INT32
    } else {
        6
    };
    spec.entry("backoffLimit").or_insert(json!(limit));
    spec.entry("completionMode").or_insert(json!(NON_INDEXED));
    spec.entry("suspend").or_insert(json!(false));
    spec.entry("manualSelector").or_insert(json!(false));
    let replacement = if spec.contains_key("podFailurePolicy") {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    spec.entry("podReplacementPolicy")
        .or_insert(json!(replacement));
    if let Some(Json::Array(rules)) = spec
        .get_mut("podFailurePolicy")
        .and_then(|p| p.get_mut("rules"))
    {
        for pattern in rules
            .iter_mut()
            .filter_map(|r| r.get_mut("onPodConditions"))
            .filter_map(Json::as_array_mut)
            .flatten()
            .filter_map(Json::as_object_mut)
        {
            pattern.entry("status").or_insert(json!("True"));
        }
    }
    if let Some(template) = spec.get_mut("template") {
        super::admission::default_template(template, "spec.template");
    }
}

/// `generateSelector`: the template gets the job-name and controller-uid labels (both spellings)
/// where unset, and the selector matches the uid. A Job whose own labels are empty shows its
/// template's, as a read from the store defaults them.
fn generate_selector(obj: &mut CustomObject) {
    let (name, uid) = (obj.metadata.name.clone(), obj.metadata.uid.clone());
    let Some(spec) = spec_mut(obj) else {
        return;
    };
    if let Some(template) = spec.get_mut("template").and_then(Json::as_object_mut) {
        if let Some(Json::Object(meta)) = Some(template.entry("metadata").or_insert(json!({}))) {
            if let Json::Object(labels) = meta.entry("labels").or_insert(json!({})) {
                for (key, value) in [
                    (LEGACY_JOB_NAME_LABEL, &name),
                    (JOB_NAME_LABEL, &name),
                    (LEGACY_CONTROLLER_UID_LABEL, &uid),
                    (CONTROLLER_UID_LABEL, &uid),
                ] {
                    labels.entry(key).or_insert(json!(value));
                }
            }
        }
    }
    if let Json::Object(selector) = spec.entry("selector").or_insert(json!({})) {
        if let Json::Object(labels) = selector.entry("matchLabels").or_insert(json!({})) {
            labels.entry(CONTROLLER_UID_LABEL).or_insert(json!(uid));
        }
    }
    if obj.metadata.labels.is_empty() {
        if let Some(t) = template(obj) {
            obj.metadata.labels = t.metadata.labels;
        }
    }
}

/// `ValidateJob`, for the rules the playground checks (the rest is Go-decoded only).
fn validate(obj: &CustomObject, manual: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        if let Some(v) = obj.int_at(&["spec", field]) {
            errs.extend(nonnegative(v, &format!("spec.{field}")));
        }
    }
    let mode = obj
        .at(&["spec", "completionMode"])
        .and_then(Json::as_str)
        .unwrap_or(NON_INDEXED);
    if mode != NON_INDEXED && mode != INDEXED {
        errs.push(FieldError::not_supported(
            "spec.completionMode",
            mode,
            &[NON_INDEXED, INDEXED],
        ));
    }
    if mode == INDEXED && completions(obj).is_none() {
        errs.push(FieldError::required(
            "spec.completions",
            format!("when completion mode is {INDEXED}"),
        ));
    }
    let selector = selector(obj);
    let Some(template) = template(obj) else {
        errs.push(FieldError::required("spec.template", ""));
        return errs;
    };
    if !manual {
        // `validateGeneratedSelector`: the selector must be exactly the generated one.
        let uid = &obj.metadata.uid;
        let mut expected = super::string_map::StringMap::default();
        expected.insert(CONTROLLER_UID_LABEL, uid.clone());
        if !selector.matches(&expected) {
            errs.push(FieldError::invalid(
                "spec.selector",
                BadValue::Go(go_label_selector(&selector)),
                "`selector` not auto-generated",
            ));
        }
    }
    validate_selector_with_template(&selector, &template, &mut errs);
    let policy = template.spec.restart_policy.as_deref().unwrap_or("");
    let field = "spec.template.spec.restartPolicy";
    match policy {
        "Always" | "" => errs.push(FieldError::required(
            field,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" | "Never" => {
            if policy != "Never" && obj.at(&["spec", "podFailurePolicy"]).is_some() {
                errs.push(FieldError::invalid(
                    field,
                    policy,
                    "only \"Never\" is supported when podFailurePolicy is specified",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            field,
            other,
            &["OnFailure", "Never"],
        )),
    }
    errs
}

/// `ValidateJobSpecUpdate`: the selector, completion mode and failure policy are immutable;
/// `completions` too (elastic Indexed Jobs aside: changed together with `parallelism`); the
/// template only while a suspended Job has never started, and then only its scheduling
/// directives — here, not at all once the Job has started.
fn validate_update(obj: &CustomObject, old: &CustomObject) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let same = |f: &str| obj.at(&["spec", f]) == old.at(&["spec", f]);
    if !same("selector") {
        errs.push(FieldError::invalid(
            "spec.selector",
            BadValue::Go(go_label_selector(&selector(obj))),
            "field is immutable",
        ));
    }
    for f in ["completionMode", "podFailurePolicy", "backoffLimitPerIndex"] {
        if !same(f) {
            let value = obj.at(&["spec", f]).and_then(Json::as_str).map_or_else(
                || BadValue::Go("<elided>".into()),
                |s| BadValue::Str(s.into()),
            );
            errs.push(FieldError::invalid(
                format!("spec.{f}"),
                value,
                "field is immutable",
            ));
        }
    }
    if !same("completions") {
        let elastic = indexed(obj) && completions(obj) == Some(parallelism(obj));
        if !indexed(obj) {
            errs.push(FieldError::invalid(
                "spec.completions",
                BadValue::Int(completions(obj).map_or(0, i64::from)),
                "field is immutable",
            ));
        } else if !elastic {
            errs.push(FieldError::invalid(
                "spec.completions",
                BadValue::Int(completions(obj).map_or(0, i64::from)),
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    }
    if !same("template") {
        let not_started = old.at(&["status", "startTime"]).is_none();
        if !(suspended(old) && not_started) {
            // Upstream prints the whole core.PodTemplateSpec here; the playground elides it.
            errs.push(FieldError::invalid(
                "spec.template",
                BadValue::Go("core.PodTemplateSpec{…}".into()),
                "field is immutable",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Job of the Kubernetes docs' example.
    fn pi() -> CustomObject {
        let spec = json!({
            "template": {"spec": {
                "containers": [{"name": "pi", "image": "perl:5.34.0",
                                "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]}],
                "restartPolicy": "Never"}},
            "backoffLimit": 4
        });
        CustomObject::stored_for_test("batch", "Job", "pi", spec)
    }

    #[test]
    fn a_new_job_gets_the_upstream_defaults_and_a_generated_selector() {
        let mut obj = pi();
        admit(&mut obj, None, false).expect("valid");
        let spec = &obj.content["spec"];
        assert_eq!(spec["completions"], json!(1));
        assert_eq!(spec["parallelism"], json!(1));
        assert_eq!(spec["backoffLimit"], json!(4));
        assert_eq!(spec["completionMode"], json!("NonIndexed"));
        assert_eq!(spec["suspend"], json!(false));
        assert_eq!(spec["podReplacementPolicy"], json!("TerminatingOrFailed"));
        assert_eq!(
            spec["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-pi"}})
        );
        assert_eq!(
            spec["template"]["metadata"]["labels"],
            json!({"batch.kubernetes.io/controller-uid": "u-pi", "batch.kubernetes.io/job-name": "pi",
                   "controller-uid": "u-pi", "job-name": "pi"})
        );
        assert_eq!(
            obj.metadata.labels.get(JOB_NAME_LABEL).map(|v| v.as_str()),
            Some("pi")
        );
        assert_eq!(spec["template"]["spec"]["dnsPolicy"], json!("ClusterFirst"));
    }

    #[test]
    fn a_job_without_a_restart_policy_is_refused_with_the_api_servers_words() {
        let mut obj = pi();
        obj.content["spec"]["template"]["spec"]
            .as_object_mut()
            .expect("a spec")
            .remove("restartPolicy");
        let err = admit(&mut obj, None, false).expect_err("invalid");
        assert_eq!(
            err.message,
            "Job.batch \"pi\" is invalid: spec.template.spec.restartPolicy: Required value: \
             valid values: \"OnFailure\", \"Never\""
        );
    }

    #[test]
    fn a_hand_written_selector_without_manual_selector_is_refused() {
        let mut obj = pi();
        obj.content["spec"]["selector"] = json!({"matchLabels": {"app": "pi"}});
        let err = admit(&mut obj, None, false).expect_err("invalid");
        assert!(
            err.message.contains("spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"pi\", \"batch.kubernetes.io/controller-uid\":\"u-pi\"}"),
            "{}",
            err.message
        );
        assert!(err.message.contains("`selector` not auto-generated"));
    }

    #[test]
    fn a_started_jobs_template_and_completions_are_immutable() {
        let mut old = pi();
        admit(&mut old, None, false).expect("valid");
        old.content.insert(
            "status".into(),
            json!({"startTime": "2026-12-03T00:00:00Z"}),
        );
        let mut new = old.clone();
        new.content["spec"]["completions"] = json!(3);
        new.content["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl:5.40");
        let err = admit(&mut new, Some(&old), false).expect_err("immutable");
        assert_eq!(
            err.message,
            "Job.batch \"pi\" is invalid: [spec.completions: Invalid value: 3: field is immutable, \
             spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable]"
        );
        let mut raised = old.clone();
        raised.content["spec"]["backoffLimit"] = json!(10);
        raised.content["spec"]["parallelism"] = json!(2);
        admit(&mut raised, Some(&old), false).expect("backoffLimit and parallelism may change");
    }

    #[test]
    fn an_indexed_job_needs_completions() {
        let mut obj = pi();
        obj.content["spec"]["completionMode"] = json!("Indexed");
        obj.content["spec"]["parallelism"] = json!(2);
        let err = admit(&mut obj, None, false).expect_err("invalid");
        assert!(
            err.message
                .contains("spec.completions: Required value: when completion mode is Indexed"),
            "{}",
            err.message
        );
    }
}
