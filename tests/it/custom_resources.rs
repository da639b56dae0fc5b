//! Custom resources end to end: a CustomResourceDefinition served by the API server, its objects
//! checked by its schema at their lines, listed with its printer columns, and deleted with it.

use kubeloop::sim::api::types::{Kind, Object};
use kubeloop::sim::input::diagnostic::{Diagnostic, Severity};
use kubeloop::sim::kubectl::apply::ApplyReport;
use kubeloop::sim::session::Session;
use kubeloop::viewmodel::inspect::InspectorData;

/// The CronTab of the Kubernetes documentation's CRD walkthrough, with printer columns and the
/// status subresource.
const CRONTAB_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              cronSpec:
                type: string
              image:
                type: string
              replicas:
                type: integer
                minimum: 1
                maximum: 10
                default: 1
          status:
            type: object
            properties:
              ready:
                type: integer
"#;

const CRONTAB: &str = r#"apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
"#;

fn both() -> String {
    format!("{CRONTAB_CRD}---\n{CRONTAB}")
}

/// The first error of a report that must have one.
fn first_error(report: &ApplyReport) -> &Diagnostic {
    report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error")
}

fn crontabs(s: &Session) -> Vec<Object> {
    s.sim
        .api()
        .all()
        .filter(|o| matches!(o.kind(), Kind::Custom(c) if c.names().kind == "CronTab"))
        .map(|o| (**o).clone())
        .collect()
}

#[test]
fn the_editor_applies_a_crd_and_its_custom_resource_in_one_go_and_says_kubectl_would_not() {
    let mut s = Session::new(1);
    let report = s.apply_text("crontab.yaml", &both());
    assert!(report.ok, "{:?}", report.diagnostics);
    assert_eq!(
        report.lines,
        [
            "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created",
            "crontab.stable.example.com/my-new-cron-object created"
        ]
    );
    let note = report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Info && d.message.contains("plain kubectl apply"))
        .expect("a note that kubectl would refuse it the first time");
    assert_eq!(note.line, 54, "the note sits at the custom resource's kind");
    let tabs = crontabs(&s);
    assert_eq!(tabs.len(), 1);
    let json = tabs[0].to_json();
    assert_eq!(
        json["spec"]["replicas"], 1,
        "the schema's default is applied"
    );
    assert_eq!(json["metadata"]["generation"], 1);
}

#[test]
fn a_scenario_loads_custom_resources_before_their_crd_in_the_file() {
    let text = format!("{CRONTAB}---\n{CRONTAB_CRD}");
    let s = Session::load("scenario.yaml", &text, None).expect("loads");
    assert_eq!(crontabs(&s).len(), 1);
}

#[test]
fn kubectl_apply_refuses_the_custom_resource_the_first_time_and_creates_it_the_second() {
    let mut s = Session::new(1);
    let text = both();
    let first = s.kubectl_with_input("apply -f crontab.yaml", Some(&text));
    assert!(!first.ok);
    assert_eq!(
        first.stdout,
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n"
    );
    assert!(
        first.stderr.contains(
            r#"resource mapping not found for name: "my-new-cron-object" namespace: "" from "crontab.yaml": no matches for kind "CronTab" in version "stable.example.com/v1""#
        ) && first.stderr.contains("ensure CRDs are installed first"),
        "{}",
        first.stderr
    );
    assert!(crontabs(&s).is_empty());
    let second = s.kubectl_with_input("apply -f crontab.yaml", Some(&text));
    assert!(second.ok, "{}", second.stderr);
    assert_eq!(
        second.stdout,
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com unchanged\ncrontab.stable.example.com/my-new-cron-object created\n"
    );
}

#[test]
fn kubectl_get_prints_the_crds_printer_columns_by_every_name_of_the_kind() {
    let mut s = Session::new(1);
    assert!(s.apply_text("crontab.yaml", &both()).ok);
    s.advance_to(7_000, usize::MAX);
    for word in [
        "crontabs",
        "crontab",
        "ct",
        "CronTab",
        "crontabs.stable.example.com",
    ] {
        let out = s.kubectl(&format!("get {word}"));
        assert!(out.ok, "{word}: {}", out.stderr);
        assert_eq!(
            out.stdout,
            "NAME                 SPEC          REPLICAS   AGE\nmy-new-cron-object   * * * * */5   1          7s\n",
            "kubectl get {word}"
        );
    }
    let crds = s.kubectl("get crd");
    assert_eq!(
        crds.stdout,
        "NAME                          CREATED AT\ncrontabs.stable.example.com   2026-01-01T00:00:00Z\n"
    );
    let resources = s.kubectl("api-resources --api-group=stable.example.com");
    assert_eq!(
        resources.stdout,
        "NAME       SHORTNAMES   APIVERSION              NAMESPACED   KIND\ncrontabs   ct           stable.example.com/v1   true         CronTab\n"
    );
    let versions = s.kubectl("api-versions");
    assert!(
        versions
            .stdout
            .contains("apiextensions.k8s.io/v1\napiregistration.k8s.io/v1\napps/v1\n"),
        "{}",
        versions.stdout
    );
    assert!(
        versions
            .stdout
            .contains("stable.example.com/v1\nstorage.k8s.io/v1\nv1"),
        "{}",
        versions.stdout
    );
    let described = s.kubectl("describe crontab my-new-cron-object");
    assert!(described.ok, "{}", described.stderr);
    for line in [
        "Name:",
        "API Version:  stable.example.com/v1",
        "Kind:         CronTab",
        "Cron Spec:",
        "Replicas:",
        "  UID:",
    ] {
        assert!(
            described.stdout.contains(line),
            "{line:?} in\n{}",
            described.stdout
        );
    }
}

#[test]
fn a_type_error_in_a_custom_resource_is_refused_at_its_line_in_the_api_servers_words() {
    let mut s = Session::new(1);
    assert!(s.apply_text("crd.yaml", CRONTAB_CRD).ok);
    let bad = CRONTAB.replace(
        "  image: my-awesome-cron-image\n",
        "  image: my-awesome-cron-image\n  replicas: three\n",
    );
    let report = s.apply_text("cron.yaml", &bad);
    assert!(!report.ok);
    let e = first_error(&report);
    assert_eq!((e.line, e.col), (8, 3));
    assert_eq!(
        e.message,
        r#"CronTab.stable.example.com "my-new-cron-object" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
    );
    assert_eq!(e.field.as_deref(), Some("spec.replicas"));

    let unknown = CRONTAB.replace("  cronSpec:", "  cronspec:");
    let report = s.apply_text("cron.yaml", &unknown);
    let e = first_error(&report);
    assert_eq!(e.line, 6);
    assert_eq!(
        e.message,
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.cronspec""#
    );
    assert!(crontabs(&s).is_empty(), "nothing half-applied");
}

#[test]
fn a_crd_that_breaks_the_api_servers_rules_is_refused_with_its_words() {
    let mut s = Session::new(1);
    let misnamed = CRONTAB_CRD.replace("name: crontabs.stable.example.com", "name: crontabs");
    let report = s.apply_text("crd.yaml", &misnamed);
    let e = first_error(&report);
    assert_eq!(
        e.message,
        r#"CustomResourceDefinition.apiextensions.k8s.io "crontabs" is invalid: metadata.name: Invalid value: "crontabs": must be spec.names.plural+"."+spec.group"#
    );
    let untyped = CRONTAB_CRD.replace(
        "              cronSpec:\n                type: string\n",
        "              cronSpec:\n                description: when\n",
    );
    let report = s.apply_text("crd.yaml", &untyped);
    let e = first_error(&report);
    assert!(
        e.message.ends_with("spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[cronSpec].type: Required value: must not be empty for specified object fields"),
        "{}",
        e.message
    );
}

#[test]
fn a_crd_without_its_group_is_refused_by_validation_with_the_api_servers_words() {
    let mut s = Session::new(1);
    let groupless = CRONTAB_CRD.replace("  group: stable.example.com\n", "");
    assert_ne!(groupless, CRONTAB_CRD);
    let report = s.apply_text("crd.yaml", &groupless);
    let errors: Vec<(&str, &str)> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.field.as_deref().unwrap_or(""), d.message.as_str()))
        .collect();
    let invalid =
        r#"CustomResourceDefinition.apiextensions.k8s.io "crontabs.stable.example.com" is invalid"#;
    assert_eq!(
        errors,
        vec![
            (
                "metadata.name",
                format!(r#"{invalid}: metadata.name: Invalid value: "crontabs.stable.example.com": must be spec.names.plural+"."+spec.group"#).as_str()
            ),
            ("spec.group", format!("{invalid}: spec.group: Required value").as_str()),
        ]
    );
}

#[test]
fn status_writes_go_through_the_status_subresource_and_leave_the_generation() {
    let mut s = Session::new(1);
    assert!(s.apply_text("crontab.yaml", &both()).ok);
    let patched = s.kubectl(r#"patch crontab my-new-cron-object --subresource=status --type=merge -p '{"status":{"ready":2}}'"#);
    assert!(patched.ok, "{}", patched.stderr);
    let tabs = crontabs(&s);
    let json = tabs[0].to_json();
    assert_eq!(json["status"]["ready"], 2);
    assert_eq!(json["metadata"]["generation"], 1);
    let strategic = s.kubectl(r#"patch crontab my-new-cron-object -p '{"spec":{"replicas":3}}'"#);
    assert_eq!(
        strategic.stderr,
        "error: application/strategic-merge-patch+json is not supported by stable.example.com/v1, Kind=CronTab: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml\n",
        "custom kinds have no Go types to merge lists by"
    );
    let spec = s.kubectl(r#"patch crontab my-new-cron-object --type=merge -p '{"spec":{"replicas":3},"status":{"ready":0}}'"#);
    assert!(spec.ok, "{}", spec.stderr);
    let json = crontabs(&s)[0].to_json();
    assert_eq!(json["spec"]["replicas"], 3);
    assert_eq!(
        json["status"]["ready"], 2,
        "the main resource ignores status"
    );
    assert_eq!(json["metadata"]["generation"], 2);
}

#[test]
fn deleting_the_crd_deletes_its_custom_resources_and_stops_serving_the_kind() {
    let mut s = Session::new(1);
    assert!(s.apply_text("crontab.yaml", &both()).ok);
    let out = s.kubectl("delete crd crontabs.stable.example.com");
    assert!(out.ok, "{}", out.stderr);
    assert!(crontabs(&s).is_empty());
    assert_eq!(s.sim.api().count(Kind::CustomResourceDefinition), 0);
    let get = s.kubectl("get crontabs");
    assert!(!get.ok);
    assert!(
        get.stderr
            .contains(r#"the server doesn't have a resource type "crontabs""#),
        "{}",
        get.stderr
    );
}

#[test]
fn the_inspector_says_no_controller_acts_on_a_custom_object_and_which_rules_it_does_not_enforce() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "              cronSpec:\n                type: string\n",
        "              cronSpec:\n                type: string\n                x-kubernetes-validations:\n                - rule: self.size() > 0\n",
    );
    assert!(
        s.apply_text("crontab.yaml", &format!("{crd}---\n{CRONTAB}"))
            .ok
    );
    let tab = crontabs(&s).remove(0).key();
    let data = InspectorData::of(&s.sim, tab, s.sim.now());
    assert_eq!(
        data.notes,
        [
            "Stored; no controller acts on it in the playground: the API server validates and keeps this CronTab, and only the garbage collector reads it (for its ownerReferences).",
            "Its CustomResourceDefinition's x-kubernetes-validations rules are stored but not enforced by the playground yet."
        ]
    );
    let pod_free = InspectorData::of(
        &s.sim,
        kubeloop::sim::api::types::ObjectKey::new(
            Kind::CustomResourceDefinition,
            "",
            "crontabs.stable.example.com",
        ),
        s.sim.now(),
    );
    assert!(
        pod_free.notes.is_empty(),
        "built-in kinds carry no such note"
    );
}

#[test]
fn kubectl_scale_writes_a_custom_resource_through_its_crds_scale_subresource() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "      status: {}\n",
        "      status: {}\n      scale:\n        specReplicasPath: .spec.replicas\n        statusReplicasPath: .status.ready\n",
    );
    let applied = s.apply_text("crontab.yaml", &format!("{crd}---\n{CRONTAB}"));
    assert!(applied.ok, "{:?}", applied.diagnostics);
    let wrong = s.kubectl("scale ct my-new-cron-object --current-replicas=2 --replicas=3");
    assert_eq!(wrong.stderr, "error: Expected replicas to be 2, was 1\n");
    let out = s.kubectl("scale ct my-new-cron-object --current-replicas=1 --replicas=3");
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "crontab.stable.example.com/my-new-cron-object scaled\n"
    );
    let json = crontabs(&s)[0].to_json();
    assert_eq!(json["spec"]["replicas"], 3);
    assert_eq!(json["metadata"]["generation"], 2);
    let too_many = s.kubectl("scale ct my-new-cron-object --replicas=11");
    assert!(
        too_many.stderr.contains("spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        "the schema still applies: {}",
        too_many.stderr
    );
}

#[test]
fn kubectl_scale_on_a_custom_kind_without_the_scale_subresource_is_not_found() {
    let mut s = Session::new(1);
    assert!(s.apply_text("crontab.yaml", &both()).ok);
    let out = s.kubectl("scale crontab my-new-cron-object --replicas=3");
    assert!(!out.ok);
    assert_eq!(
        out.stderr,
        "Error from server (NotFound): the server could not find the requested resource\n"
    );
    assert_eq!(crontabs(&s)[0].to_json()["spec"]["replicas"], 1);
}

#[test]
fn kubectl_label_and_annotate_write_a_custom_resources_metadata() {
    let mut s = Session::new(1);
    assert!(s.apply_text("crontab.yaml", &both()).ok);
    let labelled = s.kubectl("label ct my-new-cron-object tier=batch");
    assert_eq!(
        (labelled.stdout.as_str(), labelled.stderr.as_str()),
        (
            "crontab.stable.example.com/my-new-cron-object labeled\n",
            ""
        )
    );
    let annotated = s.kubectl("annotate crontabs.stable.example.com/my-new-cron-object owner=ops");
    assert_eq!(
        annotated.stdout,
        "crontab.stable.example.com/my-new-cron-object annotated\n"
    );
    let listed = s.kubectl("get ct -l tier=batch -o name");
    assert_eq!(
        listed.stdout,
        "crontab.stable.example.com/my-new-cron-object\n"
    );
    let json = crontabs(&s)[0].to_json();
    assert_eq!(json["metadata"]["labels"]["tier"], "batch");
    assert_eq!(json["metadata"]["annotations"]["owner"], "ops");
    assert_eq!(
        json["metadata"]["generation"], 1,
        "metadata is not the spec"
    );
}

#[test]
fn kubectl_get_all_and_a_crds_own_category_list_the_custom_kinds_in_them() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "    shortNames:\n    - ct\n",
        "    shortNames:\n    - ct\n    categories: [all, schedules]\n",
    );
    assert!(
        s.apply_text("crontab.yaml", &format!("{crd}---\n{CRONTAB}"))
            .ok
    );
    let all = s.kubectl("get all");
    assert!(all.ok, "{}", all.stderr);
    assert!(
        all.stdout
            .contains("crontab.stable.example.com/my-new-cron-object   * * * * */5"),
        "{}",
        all.stdout
    );
    assert!(all.stdout.contains("service/kubernetes"), "{}", all.stdout);
    let own = s.kubectl("get schedules -o name");
    assert_eq!(
        own.stdout,
        "crontab.stable.example.com/my-new-cron-object\n"
    );
    let mut uncategorised = Session::new(1);
    assert!(uncategorised.apply_text("crontab.yaml", &both()).ok);
    let plain = uncategorised.kubectl("get all -o name");
    assert!(
        plain.ok && !plain.stdout.contains("crontab"),
        "without the category a custom kind is not in all: {}",
        plain.stdout
    );
}

#[test]
fn list_type_set_and_map_refuse_repeats_with_the_api_servers_duplicate_errors_at_their_lines() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "              replicas:\n",
        "              tags:\n                type: array\n                x-kubernetes-list-type: set\n                items: {type: string}\n              ports:\n                type: array\n                x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys: [name]\n                items:\n                  type: object\n                  properties:\n                    name: {type: string}\n                    port: {type: integer}\n              replicas:\n",
    );
    assert!(s.apply_text("crd.yaml", &crd).ok);
    let tab = format!(
        "{CRONTAB}  tags: [a, b, a]\n  ports:\n  - {{name: http, port: 80}}\n  - {{name: http, port: 8080}}\n"
    );
    let report = s.apply_text("crontab.yaml", &tab);
    assert!(!report.ok);
    let found: Vec<(u32, String)> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.line, d.message.clone()))
        .collect();
    assert!(
        found
            .iter()
            .any(|(line, m)| *line == 8 && m.contains(r#"spec.tags[2]: Duplicate value: "a""#)),
        "{found:?}"
    );
    assert!(
        found.iter().any(|(line, m)| *line == 11
            && m.contains(
                r#"spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}"#
            )),
        "{found:?}"
    );
    let fine = s.apply_text(
        "crontab.yaml",
        &format!("{CRONTAB}  tags: [a, b]\n  ports:\n  - {{name: http, port: 80}}\n  - {{name: https, port: 443}}\n"),
    );
    assert!(fine.ok, "{:?}", fine.diagnostics);
}

#[test]
fn a_string_in_the_wrong_format_is_refused_in_the_api_servers_words() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "              image:\n                type: string\n",
        "              image:\n                type: string\n              owner:\n                type: string\n                format: email\n",
    );
    assert!(s.apply_text("crd.yaml", &crd).ok);
    let report = s.apply_text(
        "crontab.yaml",
        &format!("{CRONTAB}  owner: ops at example\n"),
    );
    assert!(!report.ok);
    let error = first_error(&report);
    assert_eq!(error.line, 8);
    assert!(
        error.message.contains(r#"spec.owner: Invalid value: "ops at example": spec.owner in body must be of type email: "ops at example""#),
        "{}",
        error.message
    );
    assert!(
        s.apply_text(
            "crontab.yaml",
            &format!("{CRONTAB}  owner: ops@example.com\n")
        )
        .ok
    );
}

const CRON_PATTERN: &str = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$";

#[test]
fn a_string_that_misses_its_pattern_is_refused_at_its_line_with_the_pattern() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "              cronSpec:\n                type: string\n",
        &format!("              cronSpec:\n                type: string\n                pattern: '{CRON_PATTERN}'\n"),
    );
    assert!(s.apply_text("crd.yaml", &crd).ok);
    assert!(
        s.apply_text("crontab.yaml", CRONTAB).ok,
        "five fields match"
    );
    let report = s.apply_text(
        "crontab.yaml",
        &CRONTAB.replace("\"* * * * */5\"", "\"* * * *\""),
    );
    assert!(!report.ok);
    let error = first_error(&report);
    assert_eq!((error.line, error.col), (6, 3));
    assert_eq!(
        error.message,
        format!(
            r#"CronTab.stable.example.com "my-new-cron-object" is invalid: spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '{CRON_PATTERN}'"#
        )
    );
    assert!(
        !report
            .diagnostics
            .iter()
            .any(|d| d.message.contains("not enforced")),
        "pattern is enforced, so no note says otherwise"
    );
}

#[test]
fn a_crd_whose_pattern_go_cannot_compile_is_refused_with_gos_regexp_error() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "              cronSpec:\n                type: string\n",
        "              cronSpec:\n                type: string\n                pattern: '+'\n",
    );
    let report = s.apply_text("crd.yaml", &crd);
    assert!(!report.ok);
    let error = first_error(&report);
    assert!(
        error.message.ends_with(
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[cronSpec].pattern: Invalid value: \"+\": must be a valid regular expression, but isn't: error parsing regexp: missing argument to repetition operator: `+`"
        ),
        "{}",
        error.message
    );
}

#[test]
fn kubectl_wait_knows_a_custom_kind_by_its_names_and_reads_its_conditions() {
    let mut s = Session::new(1);
    let crd = CRONTAB_CRD.replace(
        "              ready:\n                type: integer\n",
        "              ready:\n                type: integer\n              conditions:\n                type: array\n                items:\n                  type: object\n                  x-kubernetes-preserve-unknown-fields: true\n",
    );
    assert!(
        s.apply_text("crontab.yaml", &format!("{crd}---\n{CRONTAB}"))
            .ok
    );
    let waiting = s.kubectl("wait --for=condition=Ready ct/my-new-cron-object --timeout=1s");
    assert!(!waiting.ok, "{}", waiting.stdout);
    assert!(
        !waiting.stderr.contains("doesn't have a resource type"),
        "{}",
        waiting.stderr
    );
    let patched = s.kubectl(r#"patch crontab my-new-cron-object --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}'"#);
    assert!(patched.ok, "{}", patched.stderr);
    let met = s.kubectl("wait --for=condition=Ready crontab/my-new-cron-object --timeout=1s");
    assert_eq!(
        (met.stdout.as_str(), met.stderr.as_str()),
        (
            "crontab.stable.example.com/my-new-cron-object condition met\n",
            ""
        )
    );
}

#[test]
fn an_unknown_metadata_field_of_a_custom_object_says_it_cannot_be_handled_as_its_kind() {
    let mut s = Session::new(1);
    assert!(s.apply_text("crd.yaml", CRONTAB_CRD).ok);
    let report = s.apply_text(
        "crontab.yaml",
        &CRONTAB.replace(
            "  name: my-new-cron-object\n",
            "  name: my-new-cron-object\n  labelz: {}\n",
        ),
    );
    assert!(!report.ok);
    let error = &report.diagnostics[0];
    assert_eq!((error.line, error.col), (5, 3));
    assert_eq!(
        error.message,
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "metadata.labelz""#
    );
}

#[test]
fn kubectl_apply_validate_warn_prunes_unknown_fields_with_a_warning_and_ignore_prunes_them_silently(
) {
    let mut s = Session::new(1);
    assert!(s.apply_text("crd.yaml", CRONTAB_CRD).ok);
    let tab = format!("{CRONTAB}  colour: blue\n");
    let strict = s.kubectl_with_input("apply -f cron.yaml", Some(&tab));
    assert!(!strict.ok, "strict is kubectl's default");
    assert!(strict
        .stderr
        .contains(r#"strict decoding error: unknown field "spec.colour""#));

    let warned = s.kubectl_with_input("apply -f cron.yaml --validate=warn", Some(&tab));
    assert!(warned.ok, "{}", warned.stderr);
    assert_eq!(warned.stderr, "Warning: unknown field \"spec.colour\"\n");
    assert_eq!(
        warned.stdout,
        "crontab.stable.example.com/my-new-cron-object created\n"
    );
    let stored = s.kubectl("get crontab my-new-cron-object -o jsonpath={.spec}");
    assert!(
        !stored.stdout.contains("colour"),
        "pruned: {}",
        stored.stdout
    );

    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\nextra: 1\n";
    let ignored = s.kubectl_with_input("apply -f cm.yaml --validate=false", Some(config_map));
    assert!(ignored.ok, "{}", ignored.stderr);
    assert_eq!(ignored.stderr, "");
    let cm = s.kubectl("get cm settings -o json");
    assert!(
        !cm.stdout.contains("\"extra\": 1"),
        "pruned (only the last-applied annotation keeps what was written): {}",
        cm.stdout
    );

    let bad = s.kubectl_with_input("apply -f cm.yaml --validate=loose", Some(config_map));
    assert_eq!(
        bad.stderr,
        "error: invalid - validate option \"loose\"; must be one of: strict (or true), warn, ignore (or false)\n"
    );
}
