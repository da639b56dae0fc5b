//! `kubectl explain` against the built-in kinds' v1.34 definitions and a CRD's schema, in the
//! layout of kubectl's OpenAPI v3 plaintext template.

use kubeloop::sim::session::Session;

fn explain(s: &mut Session, cmd: &str) -> String {
    let out = s.kubectl(cmd);
    assert!(out.ok, "{cmd}: {}", out.stderr);
    out.stdout
}

#[test]
fn explain_of_a_kind_prints_its_header_description_and_fields_as_kubectl_does() {
    let mut s = Session::new(1);
    let out = explain(&mut s, "explain deploy");
    assert!(
        out.starts_with(
            "GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nDESCRIPTION:\n    Deployment enables declarative updates for Pods and ReplicaSets.\n    \nFIELDS:\n  apiVersion\t<string>\n    APIVersion defines the versioned schema of this representation of an object.\n    Servers should convert recognized schemas to the latest internal value, and\n    may reject unrecognized values. More info:\n    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources\n\n  kind\t<string>\n"
        ),
        "{out}"
    );
    assert!(out.contains("\n  spec\t<DeploymentSpec>\n    Specification of the desired behavior of the Deployment.\n\n"));
    let pod = explain(&mut s, "explain pods");
    assert!(
        pod.starts_with("KIND:       Pod\nVERSION:    v1\n\n"),
        "the core group prints no GROUP line: {pod}"
    );
}

#[test]
fn explain_of_a_field_path_looks_through_lists_and_marks_required_fields() {
    let mut s = Session::new(1);
    let out = explain(&mut s, "explain pods.spec.containers");
    assert!(
        out.contains(
            "FIELD: containers <[]Container>\n\n\nDESCRIPTION:\n    List of containers belonging to the pod. Containers cannot currently be\n    added or removed. There must be at least one container in a Pod. Cannot be\n    updated.\n    A single application container that you want to run within a pod.\n    \nFIELDS:\n  args\t<[]string>\n"
        ),
        "{out}"
    );
    assert!(out.contains(
        "\n  name\t<string> -required-\n    Name of the container specified as a DNS_LABEL."
    ));
    let name = explain(&mut s, "explain po.spec.containers.name");
    assert!(
        name.contains("FIELD: name <string>\n\n\nDESCRIPTION:\n    Name of the container"),
        "{name}"
    );
    assert!(!name.contains("FIELDS:"), "a string has no fields");
    let limits = explain(
        &mut s,
        "explain deployments.apps.spec.template.spec.containers.resources",
    );
    assert!(
        limits.contains("\n  limits\t<map[string]Quantity>\n"),
        "{limits}"
    );
    let port = explain(&mut s, "explain svc.spec.ports");
    assert!(port.contains("\n  targetPort\t<IntOrString>\n"), "{port}");
}

#[test]
fn explain_recursive_lists_nested_fields_one_per_line() {
    let mut s = Session::new(1);
    let out = explain(&mut s, "explain configmaps --recursive");
    assert!(
        out.contains(
            "FIELDS:\n  apiVersion\t<string>\n  binaryData\t<map[string]string>\n  data\t<map[string]string>\n  immutable\t<boolean>\n  kind\t<string>\n  metadata\t<ObjectMeta>\n    annotations\t<map[string]string>\n"
        ),
        "{out}"
    );
    assert!(out.contains(
        "\n    ownerReferences\t<[]OwnerReference>\n      apiVersion\t<string> -required-\n"
    ));
    // JSONSchemaProps refers to itself: the walk stops where a type repeats on its own path.
    let crd = explain(&mut s, "explain crd --recursive");
    assert!(crd.contains("openAPIV3Schema\t<JSONSchemaProps>"), "{crd}");
}

#[test]
fn explain_refuses_what_kubectl_refuses_in_its_words() {
    let mut s = Session::new(1);
    for (cmd, message) in [
        (
            "explain",
            "error: You must specify the type of resource to explain. Use \"kubectl api-resources\" for a complete list of supported resources.\n",
        ),
        ("explain pods svc", "error: We accept only this format: explain RESOURCE\n"),
        ("explain pods.spec.nope.deeper", "error: field \"deeper\" does not exist\n"),
        ("explain widgets", "error: the server doesn't have a resource type \"widgets\"\n"),
        (
            "explain deploy --api-version=apps/v1beta1",
            "error: couldn't find resource for \"apps/v1beta1, Resource=deployments\"\n",
        ),
    ] {
        let out = s.kubectl(cmd);
        assert!(!out.ok, "{cmd}");
        assert_eq!(out.stderr, message, "{cmd}");
    }
    assert!(s.kubectl("explain deploy --api-version=apps/v1").ok);
}

const WIDGET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: A Widget is what the shop sells.
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size:
                description: How big the widget is.
                type: string
                enum: [S, M, L, XL, XXL]
              parts:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
"#;

#[test]
fn explain_of_a_custom_kind_reads_its_crds_schema_with_the_published_type_meta() {
    let mut s = Session::new(1);
    assert!(s.apply_text("widget-crd.yaml", WIDGET_CRD).ok);
    let out = explain(&mut s, "explain widgets");
    assert!(
        out.starts_with(
            "GROUP:      example.com\nKIND:       Widget\nVERSION:    v1alpha1\n\nDESCRIPTION:\n    A Widget is what the shop sells.\n    \nFIELDS:\n  apiVersion\t<string>\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("\n  metadata\t<ObjectMeta>\n    Standard object's metadata."),
        "{out}"
    );
    assert!(
        out.contains("\n  spec\t<Object>\n    <no description>\n\n"),
        "{out}"
    );
    let spec = explain(&mut s, "explain widget.spec");
    assert!(
        spec.contains(
            "FIELDS:\n  parts\t<[]Object>\n    <no description>\n\n  size\t<string> -required-\n  enum: S, M, L, XL, ....\n    How big the widget is.\n\n"
        ),
        "{spec}"
    );
    let size = explain(&mut s, "explain widgets.example.com.spec.size");
    assert!(
        size.contains("FIELD: size <string>\nENUM:\n    S\n    M\n    L\n    XL\n    XXL\n\nDESCRIPTION:\n    How big the widget is.\n"),
        "{size}"
    );
    let parts = explain(&mut s, "explain widgets.spec.parts.name");
    assert!(parts.contains("FIELD: name <string>"), "{parts}");
}
