//! Validation as the Kubernetes API server does it, with Kubernetes' exact messages.
//!
//! [`validate`] runs after defaulting (see `admission`) and returns every problem at once, each a
//! [`FieldError`] whose `Display` is what `kubectl` prints after "is invalid:". The name checks
//! (`is_dns1123_label`, `is_qualified_name`, …) return Kubernetes' message strings and are
//! usable on their own, e.g. by the UI while the user types.
//!
//! Coverage: object metadata for every kind, Deployments, ReplicaSets, Pods and pod templates,
//! Nodes, Services and PodDisruptionBudgets. Pod spec changes on update are not restricted
//! (Kubernetes forbids most of them); selectors and names are immutable.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::limits;
use super::quantity::parse_quantity;
use super::types::{
    Container, Deployment, IntOrString, Kind, LabelSelector, Namespace, Node,
    NodeSelectorRequirement, Object, ObjectMeta, Pod, PodDisruptionBudget, PodSpec,
    PodTemplateSpec, Probe, ReplicaSet, Service, StringMap, Toleration,
};

// ---------------------------------------------------------------- field errors

/// The offending value, printed the way Go's `field.Error` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadValue {
    /// Printed bare: `-1`.
    Int(i64),
    /// Printed bare: `true`.
    Bool(bool),
    /// Printed Go-quoted: `"web"`.
    Str(String),
    /// Printed as given; used for Go `%#v` renderings such as `map[string]string{"app":"web"}`.
    Go(String),
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::Int(i) => write!(f, "{i}"),
            BadValue::Bool(b) => write!(f, "{b}"),
            BadValue::Str(s) => f.write_str(&go_quote(s)),
            BadValue::Go(s) => f.write_str(s),
        }
    }
}

impl From<&str> for BadValue {
    fn from(s: &str) -> Self {
        BadValue::Str(s.to_string())
    }
}

impl From<String> for BadValue {
    fn from(s: String) -> Self {
        BadValue::Str(s)
    }
}

impl From<i64> for BadValue {
    fn from(i: i64) -> Self {
        BadValue::Int(i)
    }
}

impl From<i32> for BadValue {
    fn from(i: i32) -> Self {
        BadValue::Int(i64::from(i))
    }
}

impl From<&IntOrString> for BadValue {
    fn from(v: &IntOrString) -> Self {
        match v {
            IntOrString::Int(i) => BadValue::Int(*i),
            IntOrString::String(s) => BadValue::Str(s.clone()),
        }
    }
}

/// What is wrong with a field; mirrors `field.ErrorType`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// `Invalid value`: the value is malformed or out of range.
    Invalid {
        /// The rejected value.
        value: BadValue,
    },
    /// `Required value`: the field must be set.
    Required,
    /// `Unsupported value`: not one of an enumeration.
    Unsupported {
        /// The rejected value.
        value: BadValue,
        /// The values that would be accepted.
        supported: Vec<String>,
    },
    /// `Forbidden`: the field may not be set here.
    Forbidden,
    /// `Duplicate value`: must be unique within its list.
    Duplicate {
        /// The repeated value.
        value: BadValue,
    },
    /// `Not found`: refers to something that does not exist.
    NotFound {
        /// The missing reference.
        value: BadValue,
    },
    /// `Too long`: over a size limit.
    TooLong,
    /// `Too many`: a list longer than allowed.
    TooMany {
        /// How many there are.
        value: BadValue,
    },
}

/// One validation problem: the field path (`spec.replicas`), what kind of problem, and detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field path, as Kubernetes prints it: `spec.template.spec.containers[0].image`.
    pub field: String,
    /// The kind of problem, with the offending value where there is one.
    pub kind: FieldErrorKind,
    /// The explanation after the value; may be empty.
    pub detail: String,
}

impl FieldError {
    /// `field: Invalid value: value: detail`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<BadValue>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Invalid {
                value: value.into(),
            },
            detail: detail.into(),
        }
    }

    /// `field: Required value` (with `: detail` when detail is not empty).
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Required,
            detail: detail.into(),
        }
    }

    /// `field: Unsupported value: "x": supported values: "A", "B"`.
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<BadValue>,
        supported: &[&str],
    ) -> Self {
        let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Unsupported {
                value: value.into(),
                supported: supported.iter().map(|s| s.to_string()).collect(),
            },
            detail: format!("supported values: {}", quoted.join(", ")),
        }
    }

    /// `field: Forbidden: detail`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Forbidden,
            detail: detail.into(),
        }
    }

    /// `field: Duplicate value: value`.
    pub fn duplicate(field: impl Into<String>, value: impl Into<BadValue>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Duplicate {
                value: value.into(),
            },
            detail: String::new(),
        }
    }

    /// `field: Not found: value`.
    pub fn not_found(field: impl Into<String>, value: impl Into<BadValue>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::NotFound {
                value: value.into(),
            },
            detail: String::new(),
        }
    }

    /// `field: Too long: may not be more than N bytes`.
    pub fn too_long(field: impl Into<String>, max_bytes: usize) -> Self {
        let unit = if max_bytes == 1 { "byte" } else { "bytes" };
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::TooLong,
            detail: format!("may not be more than {max_bytes} {unit}"),
        }
    }

    /// `field: Too many: n: must have at most max items`.
    pub fn too_many(field: impl Into<String>, n: usize, max: i64) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::TooMany {
                value: BadValue::Int(i64::try_from(n).unwrap_or(i64::MAX)),
            },
            detail: format!("must have at most {max} items"),
        }
    }

    /// `field: Too long: detail`, for limits not counted in bytes.
    pub fn too_long_with(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::TooLong,
            detail: detail.into(),
        }
    }

    /// The `details.causes[].reason` Kubernetes reports for this kind of error.
    pub fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrorKind::Invalid { .. } => "FieldValueInvalid",
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Unsupported { .. } => "FieldValueNotSupported",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::Duplicate { .. } => "FieldValueDuplicate",
            FieldErrorKind::NotFound { .. } => "FieldValueNotFound",
            FieldErrorKind::TooLong => "FieldValueTooLong",
            FieldErrorKind::TooMany { .. } => "FieldValueTooMany",
        }
    }

    /// The offending value, when the error carries one.
    pub fn value(&self) -> Option<&BadValue> {
        match &self.kind {
            FieldErrorKind::Invalid { value }
            | FieldErrorKind::Unsupported { value, .. }
            | FieldErrorKind::Duplicate { value }
            | FieldErrorKind::NotFound { value }
            | FieldErrorKind::TooMany { value } => Some(value),
            _ => None,
        }
    }
}

impl fmt::Display for FieldError {
    /// Exactly `field.Error.Error()`: `spec.replicas: Invalid value: -1: must be greater than or equal to 0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.field)?;
        match &self.kind {
            FieldErrorKind::Invalid { value } => write!(f, "Invalid value: {value}")?,
            FieldErrorKind::Required => f.write_str("Required value")?,
            FieldErrorKind::Unsupported { value, .. } => write!(f, "Unsupported value: {value}")?,
            FieldErrorKind::Forbidden => f.write_str("Forbidden")?,
            FieldErrorKind::Duplicate { value } => write!(f, "Duplicate value: {value}")?,
            FieldErrorKind::NotFound { value } => write!(f, "Not found: {value}")?,
            FieldErrorKind::TooLong => f.write_str("Too long")?,
            FieldErrorKind::TooMany { value } => write!(f, "Too many: {value}")?,
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// The kind with its API group, as error messages print it: `Deployment.apps`, `Pod`.
pub fn qualified_kind(kind: Kind) -> String {
    match kind.api_version().rsplit_once('/') {
        Some((group, _)) => format!("{}.{group}", kind.as_str()),
        None => kind.as_str().to_string(),
    }
}

/// The API server's 422 message: `Deployment.apps "web" is invalid: spec.replicas: ...`.
///
/// Several errors are joined as Kubernetes' aggregate error joins them (`[a, b]`), with
/// duplicate messages dropped.
/// Ok when there are no errors, else the 422 `Invalid` the API server answers with them.
pub fn invalid_if_any(kind: Kind, name: &str, errs: &[FieldError]) -> Result<(), super::ApiError> {
    if errs.is_empty() {
        return Ok(());
    }
    Err(super::ApiError {
        reason: super::StatusReason::Invalid,
        message: invalid_status_message(kind, name, errs),
    })
}

pub fn invalid_status_message(kind: Kind, name: &str, errs: &[FieldError]) -> String {
    let mut seen = BTreeSet::new();
    let msgs: Vec<String> = errs
        .iter()
        .map(|e| e.to_string())
        .filter(|m| seen.insert(m.clone()))
        .collect();
    let body = match msgs.len() {
        0 => "<nil>".to_string(),
        1 => msgs[0].clone(),
        _ => format!("[{}]", msgs.join(", ")),
    };
    format!(
        "{} {} is invalid: {body}",
        qualified_kind(kind),
        go_quote(name)
    )
}

/// Go's `%q`: double quotes with backslash escapes, so hostile names print harmlessly.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let n = c as u32;
                if n < 0x80 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else {
                    out.push_str(&format!("\\u{n:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn go_string_map(m: &StringMap) -> String {
    if m.is_empty() {
        return "map[string]string(nil)".into();
    }
    let entries: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v)))
        .collect();
    format!("map[string]string{{{}}}", entries.join(", "))
}

pub(crate) fn go_label_selector(s: &LabelSelector) -> String {
    let exprs = if s.match_expressions.is_empty() {
        "[]v1.LabelSelectorRequirement(nil)".to_string()
    } else {
        let items: Vec<String> = s
            .match_expressions
            .iter()
            .map(|e| {
                let values = if e.values.is_empty() {
                    "[]string(nil)".to_string()
                } else {
                    let v: Vec<String> = e.values.iter().map(|v| go_quote(v)).collect();
                    format!("[]string{{{}}}", v.join(", "))
                };
                format!(
                    "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                    go_quote(&e.key),
                    go_quote(&e.operator)
                )
            })
            .collect();
        format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_string_map(&s.match_labels)
    )
}

// ---------------------------------------------------------------- names and labels

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const PERCENT_MSG: &str =
    "a valid percent string must be a numeric string followed by an ending '%'";

/// Total bytes of all annotation keys and values an object may carry (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// Kubernetes' `RegexError` text, including its quirky double space between examples.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = msg.to_string();
    if examples.is_empty() {
        out.push_str(&format!(" (regex used for validation is '{fmt}')"));
        return out;
    }
    out.push_str(" (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_lower_alnum(b[0])
        && is_lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
}

fn matches_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(matches_dns1123_label)
}

/// RFC 1123 label (container names, namespaces, port names on Services): `IsDNS1123Label`.
pub fn is_dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !matches_dns1123_label(s) {
        if matches_dns1123_subdomain(s) {
            errs.push("must not contain dots".into());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// RFC 1123 subdomain (most object names): `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".into());
    }
    if !matches_dns1123_subdomain(s) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// RFC 1035 label (Service names): `IsDNS1035Label`.
pub fn is_dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && is_lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| is_lower_alnum(c) || c == b'-');
    if !ok {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

fn matches_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.')
}

/// A label or annotation key, optionally prefixed (`app.kubernetes.io/name`): `IsQualifiedName`.
pub fn is_qualified_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".into());
            } else {
                for msg in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {msg}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".into());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !name.is_empty() && !matches_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// A label value (may be empty): `IsValidLabelValue`.
pub fn is_valid_label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !s.is_empty() && !matches_qualified_name_part(s) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// A port number: `IsValidPortNum`.
pub fn is_valid_port_num(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".into()]
    }
}

/// A named port (IANA service name): `IsValidPortName`.
pub fn is_valid_port_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 15 {
        errs.push(max_len_error(15));
    }
    if s.is_empty() || !s.bytes().all(|c| is_lower_alnum(c) || c == b'-') {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !s.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if s.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if s.starts_with('-') || s.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// Labels: every key a qualified name, every value a label value (`ValidateLabels`).
pub fn validate_labels(labels: &StringMap, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels {
        for msg in is_qualified_name(k) {
            errs.push(FieldError::invalid(field, k.as_str(), msg));
        }
        for msg in is_valid_label_value(v) {
            errs.push(FieldError::invalid(field, v.as_str(), msg));
        }
    }
    errs
}

/// Annotations: qualified-name keys and at most 256 KiB in total (`ValidateAnnotations`).
pub fn validate_annotations(annotations: &StringMap, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(field, k.as_str(), msg));
        }
        total += k.len() + v.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errs
}

/// A label selector's keys, values and operators (`ValidateLabelSelector`).
pub fn validate_label_selector(sel: &LabelSelector, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, e) in sel.match_expressions.iter().enumerate() {
        let p = format!("{field}.matchExpressions[{i}]");
        match e.operator.as_str() {
            "In" | "NotIn" => {
                if e.values.is_empty() {
                    errs.push(FieldError::required(
                        format!("{p}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !e.values.is_empty() {
                    errs.push(FieldError::forbidden(
                        format!("{p}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errs.push(FieldError::invalid(
                format!("{p}.operator"),
                other,
                "not a valid selector operator",
            )),
        }
        for msg in is_qualified_name(&e.key) {
            errs.push(FieldError::invalid(format!("{p}.key"), e.key.as_str(), msg));
        }
    }
    errs.extend(validate_labels(
        &sel.match_labels,
        &format!("{field}.matchLabels"),
    ));
    errs
}

fn selector_is_parseable(sel: &LabelSelector) -> bool {
    sel.match_expressions
        .iter()
        .all(|e| match e.operator.as_str() {
            "In" | "NotIn" => !e.values.is_empty(),
            "Exists" | "DoesNotExist" => e.values.is_empty(),
            _ => false,
        })
}

pub(crate) fn nonnegative(v: i64, field: &str) -> Option<FieldError> {
    (v < 0).then(|| FieldError::invalid(field, v, "must be greater than or equal to 0"))
}

/// `ValidatePositiveIntOrPercent` plus `IsNotMoreThan100Percent`.
fn validate_int_or_percent(v: &IntOrString, field: &str, at_most_100: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match v {
        IntOrString::Int(i) => errs.extend(nonnegative(*i, field)),
        IntOrString::String(s) => {
            let ok = s
                .strip_suffix('%')
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            if !ok {
                errs.push(FieldError::invalid(
                    field,
                    v,
                    regex_error(PERCENT_MSG, "[0-9]+%", &["1%", "93%"]),
                ));
            } else if at_most_100 && percent_value(v).is_some_and(|p| p > 100) {
                errs.push(FieldError::invalid(
                    field,
                    v,
                    "must not be greater than 100%",
                ));
            }
        }
    }
    errs
}

fn percent_value(v: &IntOrString) -> Option<i64> {
    match v {
        IntOrString::Int(i) => Some(*i),
        IntOrString::String(s) => s.strip_suffix('%').and_then(|d| d.parse().ok()),
    }
}

// ---------------------------------------------------------------- per kind

/// Validates an object as the API server would on create (`old: None`) or update.
///
/// Call after `admission::apply_defaults`: like Kubernetes, validation assumes defaults are
/// in place (an unset `restartPolicy` is an error here, not `Always`).
pub fn validate(obj: &Object, old: Option<&Object>) -> Vec<FieldError> {
    validate_known(obj, old, None)
}

/// [`validate`], told of a pod spec already found valid: a pod whose spec equals it (a
/// comparison that settles on shared strings) skips the spec's checks, whose result would be
/// the same. Debug builds check anyway.
pub fn validate_known(
    obj: &Object,
    old: Option<&Object>,
    valid_pod_spec: Option<&PodSpec>,
) -> Vec<FieldError> {
    let kind = obj.kind();
    let mut errs = validate_object_meta(obj.meta(), kind);
    if let Some(old) = old {
        errs.extend(validate_meta_update(obj.meta(), old.meta(), kind));
    }
    match obj {
        Object::Deployment(d) => {
            errs.extend(validate_deployment(d));
            if let Some(Object::Deployment(o)) = old {
                if d.spec.selector != o.spec.selector {
                    errs.push(FieldError::invalid(
                        "spec.selector",
                        BadValue::Go(go_label_selector(&d.spec.selector)),
                        "field is immutable",
                    ));
                }
            }
        }
        Object::ReplicaSet(rs) => {
            errs.extend(validate_replica_set(rs));
            if let Some(Object::ReplicaSet(o)) = old {
                if rs.spec.selector != o.spec.selector {
                    errs.push(FieldError::invalid(
                        "spec.selector",
                        BadValue::Go(go_label_selector(&rs.spec.selector)),
                        "field is immutable",
                    ));
                }
            }
        }
        Object::Pod(p) => {
            let known = valid_pod_spec.is_some_and(|s| std::ptr::eq(s, &*p.spec) || *s == *p.spec);
            if known {
                debug_assert!(validate_pod(p).is_empty(), "a valid spec was rejected");
            } else {
                errs.extend(validate_pod(p));
            }
        }
        Object::Node(n) => errs.extend(validate_node(n)),
        Object::Service(s) => {
            errs.extend(validate_service(s));
            if let Some(Object::Service(o)) = old {
                errs.extend(validate_cluster_ip_update(s, o));
            }
        }
        Object::PodDisruptionBudget(p) => errs.extend(validate_pdb(p)),
        Object::CustomResourceDefinition(c) => {
            let old = old.and_then(Object::as_crd);
            errs.extend(super::crd_validation::validate_crd(c, old));
        }
        // A custom object's schema lives in its CRD: the API server checks it there.
        Object::Namespace(n) => errs.extend(validate_namespace(n)),
        Object::Lease(_) | Object::EndpointSlice(_) | Object::Event(_) | Object::Custom(_) => {}
    }
    errs
}

fn name_errors(kind: Kind, name: &str, prefix: bool) -> Vec<String> {
    // generateName is a prefix: a trailing dash is fine there (`web-` + random suffix).
    let masked;
    let name = if prefix && name.ends_with('-') {
        masked = crate::sim::text::concat(&[&name[..name.len() - 1], "a"]);
        masked.as_str()
    } else {
        name
    };
    match kind {
        Kind::Service => is_dns1035_label(name),
        Kind::Namespace => is_dns1123_label(name),
        _ => is_dns1123_subdomain(name),
    }
}

/// `ValidateObjectMeta`: name or generateName, namespace, labels, annotations.
pub fn validate_object_meta(meta: &ObjectMeta, kind: Kind) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !meta.generate_name.is_empty() {
        for msg in name_errors(kind, &meta.generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                meta.generate_name.as_str(),
                msg,
            ));
        }
    }
    if meta.name.is_empty() {
        if meta.generate_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        for msg in name_errors(kind, &meta.name, false) {
            errs.push(FieldError::invalid(
                "metadata.name",
                meta.name.as_str(),
                msg,
            ));
        }
    }
    if kind.namespaced() {
        if meta.namespace.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in is_dns1123_label(&meta.namespace) {
                errs.push(FieldError::invalid(
                    "metadata.namespace",
                    meta.namespace.as_str(),
                    msg,
                ));
            }
        }
    } else if !meta.namespace.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    errs.extend(validate_labels(&meta.labels, "metadata.labels"));
    errs.extend(validate_annotations(
        &meta.annotations,
        "metadata.annotations",
    ));
    errs
}

fn validate_meta_update(new: &ObjectMeta, old: &ObjectMeta, _kind: Kind) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if new.name != old.name {
        errs.push(FieldError::invalid(
            "metadata.name",
            new.name.as_str(),
            "field is immutable",
        ));
    }
    if new.namespace != old.namespace {
        errs.push(FieldError::invalid(
            "metadata.namespace",
            new.namespace.as_str(),
            "field is immutable",
        ));
    }
    if !old.uid.is_empty() && !new.uid.is_empty() && new.uid != old.uid {
        errs.push(FieldError::invalid(
            "metadata.uid",
            new.uid.as_str(),
            "field is immutable",
        ));
    }
    errs
}

/// The selector, the template's labels and the pod template of a workload whose pods always
/// restart; `workload` names it in the activeDeadlineSeconds refusal (Deployments say
/// ReplicaSet, as upstream's shared check does).
pub(crate) fn validate_selector_and_template(
    selector: &LabelSelector,
    template: &PodTemplateSpec,
    workload: &str,
    errs: &mut Vec<FieldError>,
) {
    if !validate_selector_with_template(selector, template, errs) {
        return;
    }
    let policy = template.spec.restart_policy.as_deref().unwrap_or("");
    if policy != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    if template.spec.active_deadline_seconds.is_some() {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            format!("activeDeadlineSeconds in {workload} is not Supported"),
        ));
    }
}

/// The selector, that it selects the template's labels, and the pod template; false when the
/// selector does not parse (and nothing after it was checked).
pub(crate) fn validate_selector_with_template(
    selector: &LabelSelector,
    template: &PodTemplateSpec,
    errs: &mut Vec<FieldError>,
) -> bool {
    if selector.is_empty() {
        errs.push(FieldError::required("spec.selector", ""));
    } else {
        errs.extend(validate_label_selector(selector, "spec.selector"));
    }
    if !selector_is_parseable(selector) {
        errs.push(FieldError::invalid(
            "spec.selector",
            BadValue::Go(go_label_selector(selector)),
            "invalid label selector",
        ));
        return false;
    }
    if !selector.is_empty() && !selector.matches(&template.metadata.labels) {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            BadValue::Go(go_string_map(&template.metadata.labels)),
            "`selector` does not match template `labels`",
        ));
    }
    errs.extend(validate_pod_template(template, "spec.template"));
    true
}

fn validate_deployment(d: &Deployment) -> Vec<FieldError> {
    let spec = &d.spec;
    let mut errs = Vec::new();
    errs.extend(nonnegative(
        i64::from(spec.replicas.unwrap_or(1)),
        "spec.replicas",
    ));
    errs.extend(check_replicas(
        i64::from(spec.replicas.unwrap_or(1)),
        "spec.replicas",
    ));
    validate_selector_and_template(&spec.selector, &spec.template, "ReplicaSet", &mut errs);

    let strategy = spec.strategy.clone().unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or("") {
        "Recreate" => {
            if strategy.rolling_update.is_some() {
                errs.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match &strategy.rolling_update {
            None => errs.push(FieldError::required(
                "spec.strategy.rollingUpdate",
                "this should be defaulted and never be nil",
            )),
            Some(ru) => {
                let mu = ru.max_unavailable.clone().unwrap_or(IntOrString::Int(0));
                let ms = ru.max_surge.clone().unwrap_or(IntOrString::Int(0));
                errs.extend(validate_int_or_percent(
                    &mu,
                    "spec.strategy.rollingUpdate.maxUnavailable",
                    false,
                ));
                errs.extend(validate_int_or_percent(
                    &ms,
                    "spec.strategy.rollingUpdate.maxSurge",
                    false,
                ));
                if percent_value(&mu) == Some(0) && percent_value(&ms) == Some(0) {
                    errs.push(FieldError::invalid(
                        "spec.strategy.rollingUpdate.maxUnavailable",
                        &mu,
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
                if matches!(mu, IntOrString::String(_))
                    && percent_value(&mu).is_some_and(|p| p > 100)
                {
                    errs.push(FieldError::invalid(
                        "spec.strategy.rollingUpdate.maxUnavailable",
                        &mu,
                        "must not be greater than 100%",
                    ));
                }
            }
        },
        other => errs.push(FieldError::not_supported(
            "spec.strategy.type",
            other,
            &["Recreate", "RollingUpdate"],
        )),
    }
    errs.extend(nonnegative(
        i64::from(spec.min_ready_seconds),
        "spec.minReadySeconds",
    ));
    if let Some(limit) = spec.revision_history_limit {
        errs.extend(nonnegative(i64::from(limit), "spec.revisionHistoryLimit"));
    }
    if let Some(deadline) = spec.progress_deadline_seconds {
        errs.extend(nonnegative(
            i64::from(deadline),
            "spec.progressDeadlineSeconds",
        ));
        if deadline <= spec.min_ready_seconds {
            errs.push(FieldError::invalid(
                "spec.progressDeadlineSeconds",
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

fn validate_replica_set(rs: &ReplicaSet) -> Vec<FieldError> {
    let spec = &rs.spec;
    let mut errs = Vec::new();
    errs.extend(nonnegative(
        i64::from(spec.replicas.unwrap_or(1)),
        "spec.replicas",
    ));
    errs.extend(check_replicas(
        i64::from(spec.replicas.unwrap_or(1)),
        "spec.replicas",
    ));
    errs.extend(nonnegative(
        i64::from(spec.min_ready_seconds),
        "spec.minReadySeconds",
    ));
    validate_selector_and_template(&spec.selector, &spec.template, "ReplicaSet", &mut errs);
    errs
}

/// A pod template's labels, annotations and pod spec (`ValidatePodTemplateSpec`).
fn validate_pod_template(t: &PodTemplateSpec, field: &str) -> Vec<FieldError> {
    let mut errs = validate_labels(&t.metadata.labels, &format!("{field}.metadata.labels"));
    errs.extend(validate_annotations(
        &t.metadata.annotations,
        &format!("{field}.metadata.annotations"),
    ));
    errs.extend(validate_pod_spec(&t.spec, &format!("{field}.spec")));
    errs
}

fn validate_pod(p: &Pod) -> Vec<FieldError> {
    validate_pod_spec(&p.spec, "spec")
}

fn validate_pod_spec(spec: &PodSpec, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, c) in spec.init_containers.iter().enumerate() {
        errs.extend(validate_container(
            c,
            &format!("{field}.initContainers[{i}]"),
            true,
            &mut names,
        ));
    }
    if spec.containers.is_empty() {
        errs.push(FieldError::required(format!("{field}.containers"), ""));
    }
    for (i, c) in spec.containers.iter().enumerate() {
        errs.extend(validate_container(
            c,
            &format!("{field}.containers[{i}]"),
            false,
            &mut names,
        ));
    }
    match spec.restart_policy.as_deref() {
        Some("Always" | "OnFailure" | "Never") => {}
        None | Some("") => errs.push(FieldError::required(format!("{field}.restartPolicy"), "")),
        Some(other) => errs.push(FieldError::not_supported(
            format!("{field}.restartPolicy"),
            other,
            &["Always", "OnFailure", "Never"],
        )),
    }
    match spec.dns_policy.as_deref() {
        None | Some("ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None") => {}
        Some(other) => errs.push(FieldError::not_supported(
            format!("{field}.dnsPolicy"),
            other,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        )),
    }
    if let Some(g) = spec.termination_grace_period_seconds {
        errs.extend(nonnegative(
            g,
            &format!("{field}.terminationGracePeriodSeconds"),
        ));
    }
    errs.extend(validate_labels(
        &spec.node_selector,
        &format!("{field}.nodeSelector"),
    ));
    for (i, t) in spec.tolerations.iter().enumerate() {
        errs.extend(validate_toleration(t, &format!("{field}.tolerations[{i}]")));
    }
    if let Some(na) = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
    {
        let base = format!("{field}.affinity.nodeAffinity");
        if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
            let p =
                format!("{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
            if req.node_selector_terms.is_empty() {
                errs.push(FieldError::required(
                    p.clone(),
                    "must have at least one node selector term",
                ));
            }
            for (i, term) in req.node_selector_terms.iter().enumerate() {
                for (j, r) in term.match_expressions.iter().enumerate() {
                    errs.extend(validate_node_selector_requirement(
                        r,
                        &format!("{p}[{i}].matchExpressions[{j}]"),
                    ));
                }
            }
        }
        for (i, pref) in na
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .enumerate()
        {
            let p = format!("{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
            if !(1..=100).contains(&pref.weight) {
                errs.push(FieldError::invalid(
                    format!("{p}.weight"),
                    pref.weight,
                    "must be in the range 1-100",
                ));
            }
            for (j, r) in pref.preference.match_expressions.iter().enumerate() {
                errs.extend(validate_node_selector_requirement(
                    r,
                    &format!("{p}.preference.matchExpressions[{j}]"),
                ));
            }
        }
    }
    errs
}

fn validate_node_selector_requirement(r: &NodeSelectorRequirement, p: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match r.operator.as_str() {
        "In" | "NotIn" => {
            if r.values.is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !r.values.is_empty() {
                errs.push(FieldError::forbidden(
                    format!("{p}.values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        "Gt" | "Lt" => {
            if r.values.len() != 1 {
                errs.push(FieldError::required(
                    format!("{p}.values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                ));
            }
        }
        other => errs.push(FieldError::invalid(
            format!("{p}.operator"),
            other,
            "not a valid selector operator",
        )),
    }
    for msg in is_qualified_name(&r.key) {
        errs.push(FieldError::invalid(format!("{p}.key"), r.key.as_str(), msg));
    }
    errs
}

fn validate_container(
    c: &Container,
    p: &str,
    init: bool,
    names: &mut BTreeSet<String>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if c.name.is_empty() {
        errs.push(FieldError::required(format!("{p}.name"), ""));
    } else {
        let msgs = is_dns1123_label(&c.name);
        for msg in &msgs {
            errs.push(FieldError::invalid(
                format!("{p}.name"),
                c.name.as_str(),
                msg.clone(),
            ));
        }
        if msgs.is_empty() && !names.insert(c.name.to_string()) {
            errs.push(FieldError::duplicate(format!("{p}.name"), c.name.as_str()));
        }
    }
    if c.image.is_empty() {
        errs.push(FieldError::required(format!("{p}.image"), ""));
    } else if c.image.trim() != c.image {
        errs.push(FieldError::invalid(
            format!("{p}.image"),
            c.image.as_str(),
            "must not have leading or trailing whitespace",
        ));
    }
    if let Some(policy) = c.image_pull_policy.as_deref() {
        if !matches!(policy, "Always" | "IfNotPresent" | "Never") {
            errs.push(FieldError::not_supported(
                format!("{p}.imagePullPolicy"),
                policy,
                &["Always", "IfNotPresent", "Never"],
            ));
        }
    }
    if let Some(rp) = c.restart_policy.as_deref() {
        if !init {
            errs.push(FieldError::forbidden(
                format!("{p}.restartPolicy"),
                "may not be set for non-init containers",
            ));
        } else if rp != "Always" {
            errs.push(FieldError::not_supported(
                format!("{p}.restartPolicy"),
                rp,
                &["Always"],
            ));
        }
    }
    let mut port_names = BTreeSet::new();
    for (i, port) in c.ports.iter().enumerate() {
        let pp = format!("{p}.ports[{i}]");
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            let msgs = is_valid_port_name(name);
            for msg in &msgs {
                errs.push(FieldError::invalid(format!("{pp}.name"), name, msg.clone()));
            }
            if msgs.is_empty() && !port_names.insert(name.to_string()) {
                errs.push(FieldError::duplicate(format!("{pp}.name"), name));
            }
        }
        if port.container_port == 0 {
            errs.push(FieldError::required(format!("{pp}.containerPort"), ""));
        } else {
            for msg in is_valid_port_num(port.container_port) {
                errs.push(FieldError::invalid(
                    format!("{pp}.containerPort"),
                    port.container_port,
                    msg,
                ));
            }
        }
        if let Some(hp) = port.host_port.filter(|&h| h != 0) {
            for msg in is_valid_port_num(hp) {
                errs.push(FieldError::invalid(format!("{pp}.hostPort"), hp, msg));
            }
        }
        match port.protocol.as_deref() {
            Some("TCP" | "UDP" | "SCTP") => {}
            None | Some("") => errs.push(FieldError::required(format!("{pp}.protocol"), "")),
            Some(other) => errs.push(FieldError::not_supported(
                format!("{pp}.protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
    if let Some(res) = &c.resources {
        errs.extend(validate_resources(
            &res.requests,
            &res.limits,
            &format!("{p}.resources"),
        ));
    }
    let probes = [
        (&c.readiness_probe, "readinessProbe"),
        (&c.liveness_probe, "livenessProbe"),
        (&c.startup_probe, "startupProbe"),
    ];
    for (probe, name) in probes {
        if let Some(probe) = probe {
            errs.extend(validate_probe(probe, &format!("{p}.{name}"), name));
        }
    }
    errs
}

fn validate_resource_name(name: &str, field: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = is_qualified_name(name)
        .into_iter()
        .map(|m| FieldError::invalid(field, name, m))
        .collect();
    if errs.is_empty()
        && !name.contains('/')
        && !matches!(name, "cpu" | "memory" | "ephemeral-storage")
        && !name.starts_with("hugepages-")
    {
        errs.push(FieldError::invalid(
            field,
            name,
            "must be a standard resource for containers",
        ));
    }
    errs
}

/// Requests and limits: known resource names, parseable non-negative quantities, request ≤ limit.
fn validate_resources(requests: &StringMap, limits: &StringMap, p: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut parsed_limits = BTreeMap::new();
    for (name, value) in limits {
        let f = format!("{p}.limits[{name}]");
        errs.extend(validate_resource_name(name, &f));
        match parse_quantity(value) {
            Err(msg) => errs.push(FieldError::invalid(f, value.as_str(), msg)),
            Ok(q) if q.is_negative() => errs.push(FieldError::invalid(
                f,
                q.to_string(),
                "must be greater than or equal to 0",
            )),
            Ok(q) => {
                parsed_limits.insert(name.as_str(), q);
            }
        }
    }
    for (name, value) in requests {
        let f = format!("{p}.requests[{name}]");
        errs.extend(validate_resource_name(name, &f));
        match parse_quantity(value) {
            Err(msg) => errs.push(FieldError::invalid(f, value.as_str(), msg)),
            Ok(q) if q.is_negative() => errs.push(FieldError::invalid(
                f,
                q.to_string(),
                "must be greater than or equal to 0",
            )),
            Ok(q) => {
                if let Some(limit) = parsed_limits.get(name.as_str()) {
                    let overcommit = !name.starts_with("hugepages-");
                    if !overcommit && q.nanos() != limit.nanos() {
                        errs.push(FieldError::invalid(
                            format!("{p}.requests"),
                            q.to_string(),
                            format!("must be equal to {name} limit of {limit}"),
                        ));
                    } else if q.nanos() > limit.nanos() {
                        errs.push(FieldError::invalid(
                            format!("{p}.requests"),
                            q.to_string(),
                            format!("must be less than or equal to {name} limit of {limit}"),
                        ));
                    }
                }
            }
        }
    }
    errs
}

fn validate_probe(probe: &Probe, p: &str, which: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let handlers = [
        ("httpGet", probe.http_get.is_some()),
        ("tcpSocket", probe.tcp_socket.is_some()),
        ("exec", probe.exec.is_some()),
        ("grpc", probe.grpc.is_some()),
    ];
    let mut set = handlers.iter().filter(|(_, on)| *on).map(|(n, _)| *n);
    match (set.next(), set.next()) {
        (None, _) => errs.push(FieldError::required(p, "must specify a handler type")),
        (Some(_), Some(second)) => errs.push(FieldError::forbidden(
            format!("{p}.{second}"),
            "may not specify more than 1 handler type",
        )),
        _ => {}
    }
    if let Some(h) = &probe.http_get {
        let port_field = format!("{p}.httpGet.port");
        match &h.port {
            IntOrString::Int(n) => {
                for msg in is_valid_port_num(*n) {
                    errs.push(FieldError::invalid(&port_field, *n, msg));
                }
            }
            IntOrString::String(s) => {
                for msg in is_valid_port_name(s) {
                    errs.push(FieldError::invalid(&port_field, s.as_str(), msg));
                }
            }
        }
        if let Some(scheme) = h.scheme.as_deref() {
            if !matches!(scheme, "HTTP" | "HTTPS") {
                errs.push(FieldError::not_supported(
                    format!("{p}.httpGet.scheme"),
                    scheme,
                    &["HTTP", "HTTPS"],
                ));
            }
        }
    }
    let fields = [
        (probe.initial_delay_seconds, "initialDelaySeconds"),
        (probe.timeout_seconds, "timeoutSeconds"),
        (probe.period_seconds, "periodSeconds"),
        (probe.success_threshold, "successThreshold"),
        (probe.failure_threshold, "failureThreshold"),
    ];
    for (v, name) in fields {
        if let Some(v) = v {
            errs.extend(nonnegative(v, &format!("{p}.{name}")));
        }
    }
    if which != "readinessProbe" {
        if let Some(s) = probe.success_threshold.filter(|&s| s != 1 && s >= 0) {
            errs.push(FieldError::invalid(
                format!("{p}.successThreshold"),
                s,
                "must be 1",
            ));
        }
    }
    if let Some(g) = probe.termination_grace_period_seconds {
        if which == "readinessProbe" {
            errs.push(FieldError::invalid(
                format!("{p}.terminationGracePeriodSeconds"),
                g,
                "must not be set for readinessProbes",
            ));
        } else if g <= 0 {
            errs.push(FieldError::invalid(
                format!("{p}.terminationGracePeriodSeconds"),
                g,
                "must be greater than 0",
            ));
        }
    }
    errs
}

const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

fn validate_toleration(t: &Toleration, p: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let key = t.key.as_deref().unwrap_or("");
    let op = t.operator.as_deref().unwrap_or("");
    let effect = t.effect.as_deref().unwrap_or("");
    let value = t.value.as_deref().unwrap_or("");
    if !key.is_empty() {
        for msg in is_qualified_name(key) {
            errs.push(FieldError::invalid(format!("{p}.key"), key, msg));
        }
    }
    if key.is_empty() && op != "Exists" {
        errs.push(FieldError::invalid(
            format!("{p}.operator"),
            op,
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
        ));
    }
    if t.toleration_seconds.is_some() && effect != "NoExecute" {
        errs.push(FieldError::invalid(
            format!("{p}.effect"),
            effect,
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ));
    }
    match op {
        "Equal" | "" => {
            let msgs = is_valid_label_value(value);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{p}.operator"),
                    value,
                    msgs.join(";"),
                ));
            }
        }
        "Exists" => {
            if !value.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{p}.operator"),
                    BadValue::Go(format!(
                        "core.Toleration{{Key:{}, Operator:\"Exists\", Value:{}}}",
                        go_quote(key),
                        go_quote(value)
                    )),
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{p}.operator"),
            other,
            &["Equal", "Exists"],
        )),
    }
    if !effect.is_empty() && !TAINT_EFFECTS.contains(&effect) {
        errs.push(FieldError::not_supported(
            format!("{p}.effect"),
            effect,
            &TAINT_EFFECTS,
        ));
    }
    errs
}

fn validate_node(n: &Node) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, t) in n.spec.taints.iter().enumerate() {
        let p = format!("spec.taints[{i}]");
        for msg in is_qualified_name(&t.key) {
            errs.push(FieldError::invalid(format!("{p}.key"), t.key.as_str(), msg));
        }
        if let Some(v) = t.value.as_deref() {
            for msg in is_valid_label_value(v) {
                errs.push(FieldError::invalid(format!("{p}.value"), v, msg));
            }
        }
        if t.effect.is_empty() {
            errs.push(FieldError::required(format!("{p}.effect"), ""));
        } else if !TAINT_EFFECTS.contains(&t.effect.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{p}.effect"),
                t.effect.as_str(),
                &TAINT_EFFECTS,
            ));
        }
        if !seen.insert((t.key.clone(), t.effect.clone())) {
            errs.push(FieldError::duplicate(
                p,
                BadValue::Go(format!(
                    "core.Taint{{Key:{}, Effect:{}}}",
                    go_quote(&t.key),
                    go_quote(&t.effect)
                )),
            ));
        }
    }
    for (which, list) in [
        ("capacity", &n.status.capacity),
        ("allocatable", &n.status.allocatable),
    ] {
        for (name, value) in list {
            let f = format!("status.{which}[{name}]");
            match parse_quantity(value) {
                Err(msg) => errs.push(FieldError::invalid(f, value.as_str(), msg)),
                Ok(q) if q.is_negative() => errs.push(FieldError::invalid(
                    f,
                    q.to_string(),
                    "must be greater than or equal to 0",
                )),
                Ok(_) => {}
            }
        }
    }
    errs
}

/// A Service's cluster IP as `[]string{"10.96.0.1"}`, the form its errors print (they quote the
/// `clusterIPs` list).
pub fn go_cluster_ips(s: &Service) -> BadValue {
    let ips: Vec<String> = s.spec.cluster_ip.iter().map(|ip| go_quote(ip)).collect();
    BadValue::Go(format!("[]string{{{}}}", ips.join(", ")))
}

/// `validateUpgradeDowngradeClusterIPs`: a cluster IP, once set, stays; only a change to or from
/// ExternalName (which holds none) may drop or gain one.
fn validate_cluster_ip_update(s: &Service, old: &Service) -> Vec<FieldError> {
    let external = |s: &Service| s.spec.type_.as_deref() == Some("ExternalName");
    if external(s) || external(old) {
        return Vec::new();
    }
    match (&old.spec.cluster_ip, &s.spec.cluster_ip) {
        (Some(before), Some(now)) if before != now => vec![FieldError::invalid(
            "spec.clusterIPs[0]",
            go_cluster_ips(s),
            "may not change once set",
        )],
        (Some(_), None) => vec![FieldError::invalid(
            "spec.clusterIPs[0]",
            go_cluster_ips(s),
            "primary clusterIP can not be unset",
        )],
        _ => Vec::new(),
    }
}

fn validate_service(s: &Service) -> Vec<FieldError> {
    let spec = &s.spec;
    let mut errs = Vec::new();
    if let Some(ip) = spec.cluster_ip.as_deref() {
        if ip != "None" && !ip.is_empty() && ip.parse::<std::net::IpAddr>().is_err() {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ));
        }
    }
    let ty = spec.type_.as_deref().unwrap_or("ClusterIP");
    if !matches!(
        ty,
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
    ) {
        errs.push(FieldError::not_supported(
            "spec.type",
            ty,
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        ));
    }
    let headless = spec.cluster_ip.as_deref() == Some("None");
    if spec.ports.is_empty() && ty != "ExternalName" && !headless {
        errs.push(FieldError::required("spec.ports", ""));
    }
    let require_name = spec.ports.len() > 1;
    let mut names = BTreeSet::new();
    for (i, port) in spec.ports.iter().enumerate() {
        let p = format!("spec.ports[{i}]");
        let name = port.name.as_deref().unwrap_or("");
        if require_name && name.is_empty() {
            errs.push(FieldError::required(format!("{p}.name"), ""));
        } else if !name.is_empty() {
            for msg in is_dns1123_label(name) {
                errs.push(FieldError::invalid(format!("{p}.name"), name, msg));
            }
            if !names.insert(name.to_string()) {
                errs.push(FieldError::duplicate(format!("{p}.name"), name));
            }
        }
        for msg in is_valid_port_num(port.port) {
            errs.push(FieldError::invalid(format!("{p}.port"), port.port, msg));
        }
        match port.protocol.as_deref() {
            Some("TCP" | "UDP" | "SCTP") => {}
            None | Some("") => errs.push(FieldError::required(format!("{p}.protocol"), "")),
            Some(other) => errs.push(FieldError::not_supported(
                format!("{p}.protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
        match &port.target_port {
            Some(IntOrString::Int(n)) => {
                for msg in is_valid_port_num(*n) {
                    errs.push(FieldError::invalid(format!("{p}.targetPort"), *n, msg));
                }
            }
            Some(IntOrString::String(t)) => {
                for msg in is_valid_port_name(t) {
                    errs.push(FieldError::invalid(
                        format!("{p}.targetPort"),
                        t.as_str(),
                        msg,
                    ));
                }
            }
            None => {}
        }
        if let Some(np) = port.node_port.filter(|&n| n != 0) {
            if ty == "ClusterIP" {
                errs.push(FieldError::forbidden(
                    format!("{p}.nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            } else {
                for msg in is_valid_port_num(np) {
                    errs.push(FieldError::invalid(format!("{p}.nodePort"), np, msg));
                }
            }
        }
    }
    errs.extend(validate_labels(&spec.selector, "spec.selector"));
    errs
}

/// `ValidateNamespace`: each of `spec.finalizers` a qualified name (`kubernetes`,
/// `example.com/cleanup`).
fn validate_namespace(ns: &Namespace) -> Vec<FieldError> {
    ns.spec
        .finalizers
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            is_qualified_name(f).into_iter().map(move |msg| {
                FieldError::invalid(format!("spec.finalizers[{i}]"), f.as_str(), msg)
            })
        })
        .collect()
}

fn validate_pdb(pdb: &PodDisruptionBudget) -> Vec<FieldError> {
    let spec = &pdb.spec;
    let mut errs = Vec::new();
    if let (Some(min), Some(max)) = (&spec.min_available, &spec.max_unavailable) {
        let show = |v: &IntOrString| match v {
            IntOrString::Int(i) => i.to_string(),
            IntOrString::String(s) => go_quote(s),
        };
        errs.push(FieldError::invalid(
            "spec",
            BadValue::Go(format!(
                "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, MaxUnavailable:{}}}",
                show(min),
                show(max)
            )),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    if let Some(min) = &spec.min_available {
        errs.extend(validate_int_or_percent(min, "spec.minAvailable", true));
    }
    if let Some(max) = &spec.max_unavailable {
        errs.extend(validate_int_or_percent(max, "spec.maxUnavailable", true));
    }
    if let Some(sel) = &spec.selector {
        errs.extend(validate_label_selector(sel, "spec.selector"));
    }
    if let Some(policy) = spec.unhealthy_pod_eviction_policy.as_deref() {
        if !matches!(policy, "AlwaysAllow" | "IfHealthyBudget") {
            errs.push(FieldError::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                policy,
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    errs
}

/// `spec.replicas: Invalid value: 1000000: must be less than or equal to 20000 in the playground
/// (a simulated cluster's limit)` when `value` is over [`limits::MAX_REPLICAS`].
pub fn check_replicas(value: i64, field: &str) -> Option<FieldError> {
    (value > limits::MAX_REPLICAS).then(|| {
        FieldError::invalid(
            field,
            value,
            format!(
                "must be less than or equal to {} {}",
                limits::MAX_REPLICAS,
                limits::LIMIT_NOTE
            ),
        )
    })
}

/// The same for a Scenario's `spec.nodes.count` against [`limits::MAX_NODES`].
pub fn check_node_count(count: u64, field: &str) -> Option<FieldError> {
    (count > limits::MAX_NODES as u64).then(|| {
        FieldError::invalid(
            field,
            count as i64,
            format!(
                "must be less than or equal to {} {}",
                limits::MAX_NODES,
                limits::LIMIT_NOTE
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_over_the_cap_read_like_a_kubernetes_validation_error() {
        assert_eq!(check_replicas(limits::MAX_REPLICAS, "spec.replicas"), None);
        assert_eq!(
            check_replicas(1_000_000, "spec.replicas").map(|e| e.to_string()),
            Some("spec.replicas: Invalid value: 1000000: must be less than or equal to 20000 in the playground (a simulated cluster's limit)".into())
        );
    }
    use crate::sim::api::types::*;

    fn labels(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn container(name: &str, image: &str) -> Container {
        Container {
            name: name.into(),
            image: image.into(),
            ..Default::default()
        }
    }

    /// A valid, already-defaulted Deployment to break one field at a time.
    fn deployment() -> Deployment {
        let mut d = Deployment::default();
        d.metadata.name = "web".into();
        d.metadata.namespace = "default".into();
        d.spec.replicas = Some(3);
        d.spec.selector.match_labels = labels(&[("app", "web")]);
        d.spec.template.metadata.labels = labels(&[("app", "web")]);
        d.spec.template.spec.containers = vec![container("nginx", "nginx:1.14.2")];
        d.spec.template.spec.restart_policy = Some("Always".into());
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_unavailable: Some(IntOrString::String("25%".into())),
                max_surge: Some(IntOrString::String("25%".into())),
            }),
        });
        d.spec.revision_history_limit = Some(10);
        d.spec.progress_deadline_seconds = Some(600);
        d
    }

    fn messages(obj: &Object) -> Vec<String> {
        validate(obj, None).iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn a_valid_deployment_has_no_errors() {
        assert_eq!(messages(&Object::from(deployment())), Vec::<String>::new());
    }

    #[test]
    fn deployment_errors_use_kubernetes_wording() {
        type Edit = fn(&mut Deployment);
        let cases: Vec<(Edit, &str)> = vec![
            (|d| d.spec.replicas = Some(-1), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
            (|d| d.spec.template.spec.containers[0].image = Default::default(), "spec.template.spec.containers[0].image: Required value"),
            (
                |d| d.spec.strategy.as_mut().unwrap().type_ = Some("Sometimes".into()),
                "spec.strategy.type: Unsupported value: \"Sometimes\": supported values: \"Recreate\", \"RollingUpdate\"",
            ),
            (
                |d| d.spec.template.metadata.labels = labels(&[("app", "x")]),
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: `selector` does not match template `labels`",
            ),
            (|d| d.spec.selector = LabelSelector::default(), "spec.selector: Required value"),
            (
                |d| {
                    let ru = d.spec.strategy.as_mut().unwrap().rolling_update.as_mut().unwrap();
                    ru.max_surge = Some(IntOrString::Int(0));
                    ru.max_unavailable = Some(IntOrString::Int(0));
                },
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
            ),
            (
                |d| d.spec.strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().max_surge = Some(IntOrString::String("abc".into())),
                "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"abc\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            ),
            (
                |d| d.spec.strategy.as_mut().unwrap().rolling_update.as_mut().unwrap().max_unavailable = Some(IntOrString::String("150%".into())),
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%",
            ),
            (
                |d| d.spec.strategy = Some(DeploymentStrategy { type_: Some("Recreate".into()), rolling_update: Some(Default::default()) }),
                "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
            ),
            (
                |d| d.spec.template.spec.restart_policy = Some("OnFailure".into()),
                "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"",
            ),
            (
                |d| {
                    d.spec.min_ready_seconds = 600;
                }
                ,
                "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds",
            ),
            (|d| d.spec.revision_history_limit = Some(-2), "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0"),
            (
                |d| d.metadata.name = "Web_1".into(),
                "metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
            (|d| d.metadata.name = Default::default(), "metadata.name: Required value: name or generateName is required"),
        ];
        for (edit, want) in cases {
            let mut d = deployment();
            edit(&mut d);
            let got = messages(&Object::from(d));
            assert_eq!(got, vec![want.to_string()]);
        }
    }

    #[test]
    fn changing_a_deployment_selector_is_rejected() {
        let old = Object::from(deployment());
        let mut d = deployment();
        d.spec.selector.match_labels = labels(&[("app", "web2")]);
        d.spec.template.metadata.labels = labels(&[("app", "web2")]);
        let errs = validate(&Object::from(d), Some(&old));
        assert_eq!(
            errs.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            vec!["spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]
        );
    }

    #[test]
    fn status_messages_aggregate_like_the_api_server() {
        let mut d = deployment();
        d.spec.replicas = Some(-1);
        d.spec.revision_history_limit = Some(-1);
        let errs = validate(&Object::from(d), None);
        insta::assert_snapshot!(invalid_status_message(Kind::Deployment, "web", &errs[..1]), @r###"Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"###);
        insta::assert_snapshot!(invalid_status_message(Kind::Deployment, "web", &errs), @r###"Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0]"###);
        assert_eq!(qualified_kind(Kind::Pod), "Pod");
        assert_eq!(
            qualified_kind(Kind::PodDisruptionBudget),
            "PodDisruptionBudget.policy"
        );
    }

    #[test]
    fn name_checks_match_kubernetes_messages() {
        assert!(is_dns1123_label("web-1").is_empty());
        assert_eq!(is_dns1123_label("a.b"), vec!["must not contain dots"]);
        assert_eq!(
            is_dns1123_label("Web"),
            vec!["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]
        );
        assert_eq!(
            is_dns1123_label(&"a".repeat(64)),
            vec!["must be no more than 63 characters"]
        );
        assert!(is_dns1123_subdomain("example.com").is_empty());
        assert_eq!(is_dns1123_subdomain(&"a".repeat(254)).len(), 1);
        assert!(is_dns1035_label("web").is_empty());
        assert_eq!(
            is_dns1035_label("1web"),
            vec!["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]
        );
        assert!(is_qualified_name("app.kubernetes.io/name").is_empty());
        assert_eq!(
            is_qualified_name("/x"),
            vec!["prefix part must be non-empty"]
        );
        assert_eq!(is_qualified_name("a/"), vec!["name part must be non-empty"]);
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert_eq!(
            is_qualified_name("-x"),
            vec!["name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
        );
        assert!(is_valid_label_value("").is_empty());
        assert_eq!(is_valid_label_value("a b").len(), 1);
        assert_eq!(is_valid_port_name("http").len(), 0);
        assert_eq!(
            is_valid_port_name("a--b"),
            vec!["must not contain consecutive hyphens"]
        );
        assert_eq!(
            is_valid_port_name("80"),
            vec!["must contain at least one letter (a-z)"]
        );
    }

    #[test]
    fn hostile_names_are_quoted_not_interpreted() {
        let mut d = deployment();
        d.metadata.name = "<script>alert(\"x\")</script>\u{1}".into();
        let msg = messages(&Object::from(d)).remove(0);
        assert!(msg.starts_with("metadata.name: Invalid value: \"<script>alert(\\\"x\\\")</script>\\x01\": a lowercase RFC 1123 subdomain"), "{msg}");
    }

    fn pod() -> Pod {
        let mut p = Pod::default();
        p.metadata.name = "p".into();
        p.metadata.namespace = "default".into();
        p.spec_mut().containers = vec![container("app", "busybox")];
        p.spec_mut().restart_policy = Some("Always".into());
        p
    }

    #[test]
    fn pod_errors_use_kubernetes_wording() {
        type Edit = fn(&mut Pod);
        let cases: Vec<(Edit, Vec<&str>)> = vec![
            (|p| p.spec_mut().containers.clear(), vec!["spec.containers: Required value"]),
            (|p| p.spec_mut().containers.push(container("app", "x")), vec!["spec.containers[1].name: Duplicate value: \"app\""]),
            (|p| p.spec_mut().containers[0].name = String::new().into(), vec!["spec.containers[0].name: Required value"]),
            (
                |p| p.spec_mut().restart_policy = Some("Sometimes".into()),
                vec!["spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""],
            ),
            (
                |p| {
                    p.spec_mut().containers[0].resources = Some(ResourceRequirements {
                        requests: labels(&[("cpu", "2")]),
                        limits: labels(&[("cpu", "1")]),
                        claims: None,
                    })
                },
                vec!["spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"],
            ),
            (
                |p| {
                    p.spec_mut().containers[0].resources = Some(ResourceRequirements {
                        requests: labels(&[("memory", "lots")]),
                        ..Default::default()
                    })
                },
                vec!["spec.containers[0].resources.requests[memory]: Invalid value: \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
            ),
            (
                |p| {
                    p.spec_mut().containers[0].readiness_probe = Some(Box::new(Probe {
                        http_get: Some(HttpGetAction { port: IntOrString::Int(8080), ..Default::default() }),
                        failure_threshold: Some(-1),
                        ..Default::default()
                    }))
                },
                vec!["spec.containers[0].readinessProbe.failureThreshold: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                |p| p.spec_mut().containers[0].liveness_probe = Some(Box::new(Probe::default())),
                vec!["spec.containers[0].livenessProbe: Required value: must specify a handler type"],
            ),
            (
                |p| p.spec_mut().tolerations.push(Toleration { key: Some("k".into()), operator: Some("Maybe".into()), effect: Some("NoRun".into()), ..Default::default() }),
                vec![
                    "spec.tolerations[0].operator: Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\"",
                    "spec.tolerations[0].effect: Unsupported value: \"NoRun\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                ],
            ),
            (
                |p| p.spec_mut().node_selector = labels(&[("disk", "ssd fast")]),
                vec!["spec.nodeSelector: Invalid value: \"ssd fast\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
            ),
            (
                |p| p.spec_mut().containers[0].ports.push(ContainerPort { container_port: 70000, protocol: Some("TCP".into()), ..Default::default() }),
                vec!["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
            ),
        ];
        for (edit, want) in cases {
            let mut p = pod();
            edit(&mut p);
            assert_eq!(messages(&Object::from(p)), want);
        }
    }

    #[test]
    fn service_and_pdb_and_node_errors_use_kubernetes_wording() {
        let mut s = Service::default();
        s.metadata.name = "my.svc".into();
        s.metadata.namespace = "default".into();
        s.spec.ports = vec![ServicePort {
            port: 0,
            protocol: Some("TCP".into()),
            ..Default::default()
        }];
        let got = messages(&Object::from(s));
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].starts_with("metadata.name: Invalid value: \"my.svc\": a DNS-1035 label"));
        assert_eq!(
            got[1],
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"
        );

        let mut pdb = PodDisruptionBudget::default();
        pdb.metadata.name = "web".into();
        pdb.metadata.namespace = "default".into();
        pdb.spec.min_available = Some(IntOrString::Int(2));
        pdb.spec.max_unavailable = Some(IntOrString::String("25%".into()));
        assert_eq!(
            messages(&Object::from(pdb)),
            vec!["spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:2, MaxUnavailable:\"25%\"}: minAvailable and maxUnavailable cannot be both set"]
        );

        let mut n = Node::default();
        n.metadata.name = "node-1".into();
        n.spec.taints.push(Taint {
            key: "k".into(),
            value: None,
            effect: "Sometimes".into(),
            time_added: None,
        });
        n.status.capacity = labels(&[("cpu", "four")]);
        let got = messages(&Object::from(n));
        assert_eq!(got[0], "spec.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
        assert!(got[1]
            .starts_with("status.capacity[cpu]: Invalid value: \"four\": quantities must match"));
    }

    #[test]
    fn annotations_over_256_kib_are_too_long() {
        let mut d = deployment();
        d.metadata.annotations = labels(&[("big", &"x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT))]);
        assert_eq!(
            messages(&Object::from(d)),
            vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}
