//! What a learner's return value asks for, and how a learner's word names a kind.

use serde_json::json;

use super::host::{next_of, Next};
use super::TypeName;

#[test]
fn a_return_value_decides_what_happens_next_as_a_controller_runtime_result_does() {
    assert_eq!(next_of(&json!(null)), Ok(Next::Done));
    assert_eq!(next_of(&json!({})), Ok(Next::Done));
    assert_eq!(
        next_of(&json!({"requeueAfter": "30s"})),
        Ok(Next::After(30_000))
    );
    assert_eq!(
        next_of(&json!({"requeueAfter": 1500})),
        Ok(Next::After(1_500))
    );
    assert_eq!(next_of(&json!({"requeue": true})), Ok(Next::RateLimited));
    // RequeueAfter wins over Requeue, and a zero RequeueAfter is no requeue at all.
    assert_eq!(
        next_of(&json!({"requeue": true, "requeueAfter": "1m"})),
        Ok(Next::After(60_000))
    );
    assert_eq!(next_of(&json!({"requeueAfter": 0})), Ok(Next::Done));
    assert!(next_of(&json!({"requeueAfter": "soon"})).is_err());
    assert!(next_of(&json!({"requeueAfter": -5})).is_err());
}

#[test]
fn a_kind_is_named_as_kubectl_takes_it() {
    let deployments = TypeName {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
    };
    for word in [
        "Deployment",
        "deployment",
        "deployments",
        "deployments.apps",
    ] {
        assert!(deployments.named_by(word), "{word}");
    }
    for word in ["deploymentss", "deployments.batch", "Pod"] {
        assert!(!deployments.named_by(word), "{word}");
    }
}

#[test]
fn a_controller_in_the_playground_runs_under_the_limits_of_sim_limits_which_the_engine_defaults_to()
{
    let text = include_str!("../../../../tests/fixtures/controllers/website.yaml");
    let decoded = crate::sim::input::decode::decode_manifests("website.yaml", text);
    let spec = super::ScriptSpec::of(&decoded.controllers[0]);
    assert_eq!(spec.limits.steps, crate::sim::api::limits::SCRIPT_STEPS);
    assert_eq!(spec.limits, crate::sim::script::Limits::default());
}

#[test]
fn short_names_name_built_in_kinds_as_kubectl_takes_them() {
    let t = |api_version: &str, kind: &str| TypeName {
        api_version: api_version.into(),
        kind: kind.into(),
    };
    assert!(t("v1", "Pod").named_by("po"));
    assert!(t("apps/v1", "Deployment").named_by("deploy"));
    assert!(t("apps/v1", "StatefulSet").named_by("sts"));
    assert!(t("v1", "ConfigMap").named_by("cm"));
    assert!(!t("apps/v1", "Deployment").named_by("po"));
    assert!(!t("apps/v1", "Deployment").named_by("deploy.batch"));
}
