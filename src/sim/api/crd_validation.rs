//! What the API server checks on a CustomResourceDefinition (`apiextensions/validation`), in its
//! words: names, scope, versions, the structural schema, subresources and printer columns.

use super::apiextensions::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
};
use super::schema;
use super::validation::{is_dns1035_label, is_dns1123_subdomain, BadValue, FieldError};

/// The printer column types a CRD may declare.
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
/// The printer column formats a CRD may declare.
const COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];

/// The groups reserved for Kubernetes' own APIs: a CRD there needs an approval annotation.
fn protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.ends_with(&format!(".{g}")))
}

/// `ValidateCustomResourceDefinition` (create) or `…Update` when `old` is given.
pub fn validate_crd(
    crd: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &crd.spec;
    let required = format!("{}.{}", spec.names.plural, spec.group);
    if crd.metadata.name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            crd.metadata.name.as_str(),
            r#"must be spec.names.plural+"."+spec.group"#,
        ));
    }
    if protected_group(&spec.group)
        && !crd
            .metadata
            .annotations
            .contains_key("api-approved.kubernetes.io")
    {
        errs.push(FieldError::required(
            "metadata.annotations[api-approved.kubernetes.io]",
            "protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111",
        ));
    }
    errs.extend(validate_spec(spec));
    if let Some(old) = old {
        let o = &old.spec;
        let immutable = |field: &str, new: &str, was: &str, errs: &mut Vec<FieldError>| {
            if new != was {
                errs.push(FieldError::invalid(field, new, "field is immutable"));
            }
        };
        immutable("spec.group", &spec.group, &o.group, &mut errs);
        immutable(
            "spec.names.plural",
            &spec.names.plural,
            &o.names.plural,
            &mut errs,
        );
        if old.established() {
            immutable("spec.scope", &spec.scope, &o.scope, &mut errs);
            immutable(
                "spec.names.kind",
                &spec.names.kind,
                &o.names.kind,
                &mut errs,
            );
        }
        // The playground keys a custom kind by its storage version (see ARCHITECTURE.md).
        let storage = |s: &CustomResourceDefinitionSpec| {
            s.versions
                .iter()
                .find(|v| v.storage)
                .map(|v| v.name.clone())
        };
        if let (Some(new), Some(was)) = (storage(spec), storage(o)) {
            if new != was {
                errs.push(FieldError::forbidden(
                    "spec.versions",
                    format!(
                        "the playground cannot migrate stored objects: the storage version stays {was}"
                    ),
                ));
            }
        }
    }
    errs
}

fn validate_spec(spec: &CustomResourceDefinitionSpec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec.group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let bad = is_dns1123_subdomain(&spec.group);
        if !bad.is_empty() {
            errs.push(FieldError::invalid(
                "spec.group",
                spec.group.as_str(),
                bad.join(","),
            ));
        } else if !spec.group.contains('.') {
            errs.push(FieldError::invalid(
                "spec.group",
                spec.group.as_str(),
                "should be a domain with at least one dot",
            ));
        }
    }
    match spec.scope.as_str() {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    if spec.versions.is_empty() {
        errs.push(FieldError::invalid(
            "spec.versions",
            BadValue::Go("[]apiextensions.CustomResourceDefinitionVersion(nil)".into()),
            "must have exactly one version marked as storage version",
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut unique = true;
    let mut storage = 0;
    for (i, v) in spec.versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        if !seen.insert(v.name.as_str()) {
            unique = false;
        }
        if v.storage {
            storage += 1;
        }
        let bad = is_dns1035_label(&v.name);
        if !bad.is_empty() {
            errs.push(FieldError::invalid(
                format!("{at}.name"),
                v.name.as_str(),
                bad.join(","),
            ));
        }
        match v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        {
            None => errs.push(FieldError::required(
                format!("{at}.schema.openAPIV3Schema"),
                "schemas are required",
            )),
            Some(s) => errs.extend(schema::structural_errors(
                s,
                &format!("{at}.schema.openAPIV3Schema"),
            )),
        }
        if let Some(scale) = v.subresources.as_ref().and_then(|s| s.scale.as_ref()) {
            let sub = format!("{at}.subresources.scale");
            for (field, value, under) in [
                ("specReplicasPath", &scale.spec_replicas_path, ".spec."),
                (
                    "statusReplicasPath",
                    &scale.status_replicas_path,
                    ".status.",
                ),
            ] {
                if value.is_empty() {
                    errs.push(FieldError::required(format!("{sub}.{field}"), ""));
                } else if !value.starts_with(under) {
                    let place = under.trim_matches('.');
                    errs.push(FieldError::invalid(
                        format!("{sub}.{field}"),
                        value.as_str(),
                        format!("should be a json path under .{place}"),
                    ));
                }
            }
        }
        for (j, c) in v.additional_printer_columns.iter().enumerate() {
            let col = format!("{at}.additionalPrinterColumns[{j}]");
            if c.name.is_empty() {
                errs.push(FieldError::required(format!("{col}.name"), ""));
            }
            let types = format!("must be one of {}", COLUMN_TYPES.join(","));
            if c.type_.is_empty() {
                errs.push(FieldError::required(format!("{col}.type"), types));
            } else if !COLUMN_TYPES.contains(&c.type_.as_str()) {
                errs.push(FieldError::invalid(
                    format!("{col}.type"),
                    c.type_.as_str(),
                    types,
                ));
            }
            if !c.format.is_empty() && !COLUMN_FORMATS.contains(&c.format.as_str()) {
                errs.push(FieldError::invalid(
                    format!("{col}.format"),
                    c.format.as_str(),
                    format!("must be one of {}", COLUMN_FORMATS.join(",")),
                ));
            }
            if c.json_path.is_empty() {
                errs.push(FieldError::required(format!("{col}.jsonPath"), ""));
            } else if !c.json_path.starts_with('.') {
                errs.push(FieldError::invalid(
                    format!("{col}.jsonPath"),
                    c.json_path.as_str(),
                    "must be a simple json path starting with .",
                ));
            }
        }
    }
    if !unique {
        errs.push(FieldError::invalid(
            "spec.versions",
            BadValue::Go("[]apiextensions.CustomResourceDefinitionVersion{…}".into()),
            "must contain unique version names",
        ));
    }
    if storage != 1 && !spec.versions.is_empty() {
        errs.push(FieldError::invalid(
            "spec.versions",
            BadValue::Go("[]apiextensions.CustomResourceDefinitionVersion{…}".into()),
            "must have exactly one version marked as storage version",
        ));
    }
    if let Some(c) = &spec.conversion {
        if c.strategy == "Webhook" {
            errs.push(FieldError::forbidden(
                "spec.conversion.strategy",
                "the playground runs no conversion webhooks: use strategy None",
            ));
        } else if c.strategy != "None" {
            errs.push(FieldError::not_supported(
                "spec.conversion.strategy",
                c.strategy.as_str(),
                &["None", "Webhook"],
            ));
        }
    }
    if spec.preserve_unknown_fields == Some(true) {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            BadValue::Bool(true),
            "must be false in order to use defaults in the schema",
        ));
    }
    for (field, value) in [
        ("spec.names.plural", &spec.names.plural),
        ("spec.names.singular", &spec.names.singular),
        ("spec.names.kind", &spec.names.kind),
        ("spec.names.listKind", &spec.names.list_kind),
    ] {
        if value.is_empty() {
            errs.push(FieldError::required(field, ""));
        }
    }
    errs.extend(validate_names(&spec.names, "spec.names"));
    errs
}

/// `ValidateCustomResourceDefinitionNames`.
pub fn validate_names(names: &CustomResourceDefinitionNames, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let label = |field: &str, value: &str, errs: &mut Vec<FieldError>| {
        let bad = is_dns1035_label(value);
        if !value.is_empty() && !bad.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                value,
                bad.join(","),
            ));
        }
    };
    label("plural", &names.plural, &mut errs);
    label("singular", &names.singular, &mut errs);
    for (field, value) in [("kind", &names.kind), ("listKind", &names.list_kind)] {
        let bad = is_dns1035_label(&value.to_ascii_lowercase());
        if !value.is_empty() && !bad.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                value.as_str(),
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    bad.join(",")
                ),
            ));
        }
    }
    for (i, s) in names.short_names.iter().enumerate() {
        label(&format!("shortNames[{i}]"), s, &mut errs);
    }
    if !names.kind.is_empty() && names.kind == names.list_kind {
        errs.push(FieldError::invalid(
            format!("{path}.listKind"),
            names.list_kind.as_str(),
            "kind and listKind may not be the same",
        ));
    }
    for (i, c) in names.categories.iter().enumerate() {
        label(&format!("categories[{i}]"), c, &mut errs);
    }
    errs
}
