//! A CRD's OpenAPI v3 schema at work: checking that it is structural, then pruning, defaulting
//! and validating custom objects against it, with the API server's messages and field paths.
//!
//! The subset follows `apiextensions-apiserver`: structural rules and forbidden keywords from
//! `pkg/apis/apiextensions/validation`, value errors as go-openapi words them ("spec.replicas in
//! body must be of type integer: \"string\""); `pattern` with Go's regexp syntax (`regexp.rs`).
//! `x-kubernetes-validations` (CEL) rules are stored but not enforced: the editor says so.

use serde_json::Value as Json;

use super::apiextensions::JSONSchemaProps;
use super::validation::{BadValue, FieldError};
use crate::sort::CollectTree;

/// Deepest schema the playground accepts (a generated CRD nests a pod template about 15 deep).
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// Most schema nodes in one CRD version.
pub const MAX_SCHEMA_NODES: usize = 5_000;

/// The structural-schema errors of a version's `openAPIV3Schema` at `path`.
pub fn structural_errors(root: &JSONSchemaProps, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if root.type_.is_empty() {
        if !root.x_int_or_string && root.x_preserve_unknown_fields != Some(true) {
            errs.push(FieldError::required(
                format!("{path}.type"),
                "must not be empty at the root",
            ));
        }
    } else if root.type_ != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            root.type_.as_str(),
            "must be object at the root",
        ));
    }
    let mut nodes = 0;
    node_errors(root, path, 0, &mut nodes, &mut errs);
    if nodes > MAX_SCHEMA_NODES {
        errs.push(FieldError::forbidden(
            path,
            format!(
                "the playground accepts at most {MAX_SCHEMA_NODES} schema nodes per version; this one has {nodes}"
            ),
        ));
    }
    errs
}

fn node_errors(
    s: &JSONSchemaProps,
    path: &str,
    depth: usize,
    nodes: &mut usize,
    errs: &mut Vec<FieldError>,
) {
    *nodes += 1;
    if depth > MAX_SCHEMA_DEPTH {
        errs.push(FieldError::forbidden(
            path,
            format!("the playground accepts schemas at most {MAX_SCHEMA_DEPTH} levels deep"),
        ));
        return;
    }
    let refused: [(&str, bool); 7] = [
        ("$ref", s.ref_.is_some()),
        ("id", s.id.is_some()),
        ("definitions", s.definitions.is_some()),
        ("dependencies", s.dependencies.is_some()),
        ("patternProperties", s.pattern_properties.is_some()),
        ("additionalItems", s.additional_items.is_some()),
        ("$schema", s.schema_.is_some()),
    ];
    for (word, set) in refused {
        if set {
            errs.push(FieldError::forbidden(
                format!("{path}.{word}"),
                format!("{word} is not supported"),
            ));
        }
    }
    pattern_errors(s, path, errs);
    if s.type_ == "null" {
        errs.push(FieldError::forbidden(
            format!("{path}.type"),
            "type cannot be set to null",
        ));
    }
    if s.unique_items {
        errs.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let additional = additional_schema(s);
    if s.additional_properties.is_some() && !s.properties.is_empty() {
        let allows_all = matches!(s.additional_properties, Some(Json::Bool(true)));
        if !allows_all {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
    }
    for (name, p) in &s.properties {
        let at = format!("{path}.properties[{name}]");
        if p.type_.is_empty() && !p.x_int_or_string && p.x_preserve_unknown_fields != Some(true) {
            errs.push(FieldError::required(
                format!("{at}.type"),
                "must not be empty for specified object fields",
            ));
        }
        node_errors(p, &at, depth + 1, nodes, errs);
    }
    if let Some(items) = &s.items {
        let at = format!("{path}.items");
        if items.type_.is_empty()
            && !items.x_int_or_string
            && items.x_preserve_unknown_fields != Some(true)
        {
            errs.push(FieldError::required(
                format!("{at}.type"),
                "must not be empty for specified array items",
            ));
        }
        node_errors(items, &at, depth + 1, nodes, errs);
    } else if s.type_ == "array" {
        errs.push(FieldError::required(
            format!("{path}.items"),
            "must be specified",
        ));
    }
    if let Some(a) = additional {
        node_errors(
            &a,
            &format!("{path}.additionalProperties"),
            depth + 1,
            nodes,
            errs,
        );
    }
    for (word, list) in [
        ("allOf", &s.all_of),
        ("oneOf", &s.one_of),
        ("anyOf", &s.any_of),
    ] {
        if word == "anyOf" && int_or_string_spelled_out(s) {
            continue;
        }
        for (i, j) in list.iter().enumerate() {
            junctor_errors(j, &format!("{path}.{word}[{i}]"), errs);
        }
    }
    if let Some(n) = &s.not {
        junctor_errors(n, &format!("{path}.not"), errs);
    }
}

/// `x-kubernetes-int-or-string: true` with `anyOf: [{type: integer}, {type: string}]`: the one
/// place a structural schema may name types inside a junctor (apiextensions'
/// `isIntOrStringAnyOfPattern`; generated CRDs such as prometheus-operator's spell it out).
fn int_or_string_spelled_out(s: &JSONSchemaProps) -> bool {
    let typed = |t: &str| JSONSchemaProps {
        type_: t.to_string(),
        ..JSONSchemaProps::default()
    };
    s.x_int_or_string && s.any_of == [typed("integer"), typed("string")]
}

/// A `pattern` Go's `regexp.Compile` refuses, with apiextensions' words.
fn pattern_errors(s: &JSONSchemaProps, path: &str, errs: &mut Vec<FieldError>) {
    if let Err(e) = super::regexp::compile(&s.pattern) {
        errs.push(FieldError::invalid(
            format!("{path}.pattern"),
            s.pattern.as_str(),
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
}

/// Inside `allOf`/`anyOf`/`oneOf`/`not` a structural schema only restricts values.
fn junctor_errors(s: &JSONSchemaProps, path: &str, errs: &mut Vec<FieldError>) {
    pattern_errors(s, path, errs);
    let set: [(&str, bool); 5] = [
        ("type", !s.type_.is_empty()),
        ("default", s.default.is_some()),
        ("description", !s.description.is_empty()),
        ("additionalProperties", s.additional_properties.is_some()),
        ("nullable", s.nullable),
    ];
    for (word, on) in set {
        if on {
            errs.push(FieldError::forbidden(
                format!("{path}.{word}"),
                "must be empty to be structural",
            ));
        }
    }
}

/// The schema `additionalProperties` gives every other key, when it is a schema.
fn additional_schema(s: &JSONSchemaProps) -> Option<JSONSchemaProps> {
    match &s.additional_properties {
        Some(v @ Json::Object(_)) => JSONSchemaProps::from_json(v).ok(),
        _ => None,
    }
}

/// Whether unknown keys are kept under this node.
fn preserves(s: &JSONSchemaProps) -> bool {
    s.x_preserve_unknown_fields == Some(true)
}

/// Drops the fields the schema does not know, as the API server prunes before storing, and
/// returns their paths (`spec.foo`). At the root, `apiVersion`, `kind` and `metadata` stay.
pub fn prune(value: &mut Json, schema: &JSONSchemaProps) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_at(value, schema, "", true, &mut pruned);
    pruned
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn prune_at(value: &mut Json, s: &JSONSchemaProps, path: &str, root: bool, out: &mut Vec<String>) {
    match value {
        Json::Object(map) => {
            let additional = additional_schema(s);
            let keep_all =
                preserves(s) || matches!(s.additional_properties, Some(Json::Bool(true)));
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let at = join(path, &k);
                if let Some(p) = s.properties.get(&k) {
                    if let Some(v) = map.get_mut(&k) {
                        prune_at(v, p, &at, false, out);
                    }
                } else if let Some(a) = &additional {
                    if let Some(v) = map.get_mut(&k) {
                        prune_at(v, a, &at, false, out);
                    }
                } else if !keep_all {
                    map.remove(&k);
                    out.push(at);
                }
            }
        }
        Json::Array(items) => {
            if let Some(item) = &s.items {
                for (i, v) in items.iter_mut().enumerate() {
                    prune_at(v, item, &format!("{path}[{i}]"), false, out);
                }
            }
        }
        _ => {}
    }
}

/// Fills in the schema's `default`s where a field is missing (or null and not nullable).
pub fn apply_defaults(value: &mut Json, s: &JSONSchemaProps) {
    match value {
        Json::Object(map) => {
            for (k, p) in &s.properties {
                let missing = match map.get(k) {
                    None => true,
                    Some(Json::Null) => !p.nullable,
                    Some(_) => false,
                };
                if missing {
                    if let Some(d) = &p.default {
                        map.insert(k.clone(), d.clone());
                    }
                }
                if let Some(v) = map.get_mut(k) {
                    apply_defaults(v, p);
                }
            }
            if let Some(a) = additional_schema(s) {
                for (k, v) in map.iter_mut() {
                    if !s.properties.contains_key(k) {
                        apply_defaults(v, &a);
                    }
                }
            }
        }
        Json::Array(items) => {
            if let Some(item) = &s.items {
                for v in items {
                    apply_defaults(v, item);
                }
            }
        }
        _ => {}
    }
}

/// Every value error of `value` against the schema, in go-openapi's words.
pub fn validate_value(value: &Json, s: &JSONSchemaProps) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_at(value, s, "", true, &mut errs);
    errs
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// The value as `field.Error` prints it: numbers and booleans bare, strings quoted.
fn bad_value(v: &Json) -> BadValue {
    match v {
        Json::String(s) => BadValue::Str(s.clone()),
        Json::Bool(b) => BadValue::Bool(*b),
        Json::Number(n) => BadValue::Go(n.to_string()),
        other => BadValue::Str(json_type(other).to_string()),
    }
}

/// A value as Go's `%#v` prints it from an unstructured object, as `field.Duplicate` shows a
/// list-map key: `map[string]interface {}{"name":"http", "port":80}`.
fn go_unstructured(v: &Json) -> String {
    match v {
        Json::Null => "interface {}(nil)".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => super::validation::go_quote(s),
        Json::Array(items) => format!(
            "[]interface {{}}{{{}}}",
            items
                .iter()
                .map(go_unstructured)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Json::Object(m) => format!(
            "map[string]interface {{}}{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}:{}", super::validation::go_quote(k), go_unstructured(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `x-kubernetes-list-type`: a `set` holds each value once; a `map` holds objects, each
/// `x-kubernetes-list-map-keys` combination once (the listtype validation's errors, on each
/// repeat).
fn list_type_errors(items: &[Json], s: &JSONSchemaProps, path: &str, errs: &mut Vec<FieldError>) {
    let list_type = s.x_list_type.as_deref().unwrap_or_default();
    if !matches!(list_type, "set" | "map") {
        return;
    }
    // Keyed by the value's JSON text (maps print their keys sorted), so a long list is checked
    // in n log n rather than by comparing every pair.
    let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let key = match (list_type, item) {
            ("set", _) => item.clone(),
            (_, Json::Object(m)) => Json::Object(
                s.x_list_map_keys
                    .iter()
                    .filter_map(|k| m.get(k).map(|v| (k.clone(), v.clone())))
                    .collect_object(),
            ),
            _ => {
                errs.push(FieldError::invalid(
                    format!("{path}[{i}]"),
                    bad_value(item),
                    "must be an object for an array of list-type map",
                ));
                continue;
            }
        };
        if !seen.insert(key.to_string()) {
            let shown = match &key {
                Json::Object(_) | Json::Array(_) | Json::Null => {
                    BadValue::Go(go_unstructured(&key))
                }
                other => bad_value(other),
            };
            errs.push(FieldError::duplicate(format!("{path}[{i}]"), shown));
        }
    }
}

/// Whether `text` is a `format` the API server checks (go-openapi's strfmt, the common ones);
/// None for a format the playground stores without checking.
fn format_holds(format: &str, text: &str) -> Option<bool> {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date = |d: &str| {
        let mut p = d.split('-');
        matches!((p.next(), p.next(), p.next(), p.next()), (Some(y), Some(m), Some(day), None)
            if digits(y, 4) && digits(m, 2) && digits(day, 2)
                && (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
                && (1..=31).contains(&day.parse::<u32>().unwrap_or(0)))
    };
    let hostname = |h: &str| {
        !h.is_empty()
            && h.len() <= 255
            && h.trim_end_matches('.').split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            })
    };
    Some(match format {
        "date" => date(text),
        "date-time" | "datetime" => {
            let Some((d, rest)) = text.split_once(['T', 't']) else {
                return Some(false);
            };
            let (clock, zone) = match rest.find(['Z', 'z', '+', '-']) {
                Some(i) => rest.split_at(i),
                None => return Some(false),
            };
            let hms: Vec<&str> = clock.splitn(3, ':').collect();
            let seconds = hms.get(2).map(|s| s.split('.').next().unwrap_or(""));
            date(d)
                && hms.len() == 3
                && digits(hms[0], 2)
                && digits(hms[1], 2)
                && seconds.is_some_and(|s| digits(s, 2))
                && (zone.eq_ignore_ascii_case("z")
                    || (zone.len() == 6 && zone.as_bytes()[3] == b':'))
        }
        "email" => text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !local.contains(char::is_whitespace) && hostname(domain)
        }),
        "hostname" => hostname(text),
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => text.split_once('/').is_some_and(|(ip, bits)| {
            let bits = bits.parse::<u8>().ok();
            match ip.parse::<std::net::IpAddr>() {
                Ok(std::net::IpAddr::V4(_)) => bits.is_some_and(|b| b <= 32),
                Ok(std::net::IpAddr::V6(_)) => bits.is_some_and(|b| b <= 128),
                Err(_) => false,
            }
        }),
        "uuid" => {
            let groups: Vec<&str> = text.split('-').collect();
            groups.len() == 5
                && groups
                    .iter()
                    .zip([8, 4, 4, 4, 12])
                    .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
        }
        "byte" => {
            text.len() % 4 == 0
                && text
                    .trim_end_matches('=')
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
                && text.len() - text.trim_end_matches('=').len() <= 2
        }
        _ => return None,
    })
}

fn type_matches(want: &str, v: &Json) -> bool {
    match (want, v) {
        ("", _) => true,
        ("integer", Json::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("number", Json::Number(_)) => true,
        ("string", Json::String(_)) => true,
        ("boolean", Json::Bool(_)) => true,
        ("object", Json::Object(_)) => true,
        ("array", Json::Array(_)) => true,
        _ => false,
    }
}

fn format_number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn validate_at(v: &Json, s: &JSONSchemaProps, path: &str, root: bool, errs: &mut Vec<FieldError>) {
    let shown = if path.is_empty() { "body" } else { path };
    if v.is_null() && s.nullable {
        return;
    }
    if s.x_int_or_string {
        if !matches!(v, Json::String(_)) && !type_matches("integer", v) {
            errs.push(FieldError::invalid(
                shown,
                bad_value(v),
                format!(
                    "{shown} in body must be of type integer,string: \"{}\"",
                    json_type(v)
                ),
            ));
            return;
        }
    } else if !type_matches(&s.type_, v) {
        errs.push(FieldError::invalid(
            shown,
            json_type(v),
            format!(
                "{shown} in body must be of type {}: \"{}\"",
                s.type_,
                json_type(v)
            ),
        ));
        return;
    }
    if !s.enum_.is_empty() && !s.enum_.contains(v) {
        let supported: Vec<String> = s
            .enum_
            .iter()
            .map(|e| match e {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let refs: Vec<&str> = supported.iter().map(String::as_str).collect();
        errs.push(FieldError::not_supported(shown, bad_value(v), &refs));
    }
    match v {
        Json::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            if let Some(min) = s.minimum {
                if f < min || (s.exclusive_minimum && f <= min) {
                    let cmp = if s.exclusive_minimum {
                        "greater than"
                    } else {
                        "greater than or equal to"
                    };
                    errs.push(FieldError::invalid(
                        shown,
                        bad_value(v),
                        format!("{shown} in body should be {cmp} {}", format_number(min)),
                    ));
                }
            }
            if let Some(max) = s.maximum {
                if f > max || (s.exclusive_maximum && f >= max) {
                    let cmp = if s.exclusive_maximum {
                        "less than"
                    } else {
                        "less than or equal to"
                    };
                    errs.push(FieldError::invalid(
                        shown,
                        bad_value(v),
                        format!("{shown} in body should be {cmp} {}", format_number(max)),
                    ));
                }
            }
            if let Some(m) = s.multiple_of.filter(|m| *m > 0.0) {
                if (f / m).fract() != 0.0 {
                    errs.push(FieldError::invalid(
                        shown,
                        bad_value(v),
                        format!(
                            "{shown} in body should be a multiple of {}",
                            format_number(m)
                        ),
                    ));
                }
            }
        }
        Json::String(text) => {
            let chars = text.chars().count() as i64;
            if let Some(max) = s.max_length.filter(|m| chars > *m) {
                errs.push(FieldError::too_long_with(
                    shown,
                    format!("may not be longer than {max}"),
                ));
            }
            if let Some(min) = s.min_length.filter(|m| chars < *m) {
                errs.push(FieldError::invalid(
                    shown,
                    bad_value(v),
                    format!("{shown} in body should be at least {min} chars long"),
                ));
            }
            let pattern = (!s.pattern.is_empty())
                .then(|| super::regexp::compile(&s.pattern).ok())
                .flatten();
            if pattern.is_some_and(|re| !re.is_match(text)) {
                errs.push(FieldError::invalid(
                    shown,
                    bad_value(v),
                    format!("{shown} in body should match '{}'", s.pattern),
                ));
            }
            if format_holds(&s.format, text) == Some(false) {
                errs.push(FieldError::invalid(
                    shown,
                    bad_value(v),
                    format!(
                        "{shown} in body must be of type {}: {}",
                        s.format,
                        super::validation::go_quote(text)
                    ),
                ));
            }
        }
        Json::Array(items) => {
            if let Some(max) = s.max_items.filter(|m| items.len() as i64 > *m) {
                errs.push(FieldError::too_many(shown, items.len(), max));
            }
            if let Some(min) = s.min_items.filter(|m| (items.len() as i64) < *m) {
                errs.push(FieldError::invalid(
                    shown,
                    BadValue::Int(items.len() as i64),
                    format!("{shown} in body should have at least {min} items"),
                ));
            }
            if let Some(item) = &s.items {
                for (i, e) in items.iter().enumerate() {
                    validate_at(e, item, &format!("{path}[{i}]"), false, errs);
                }
            }
            list_type_errors(items, s, path, errs);
        }
        Json::Object(map) => {
            for r in &s.required {
                if !map.contains_key(r) {
                    errs.push(FieldError::required(join(path, r), ""));
                }
            }
            if let Some(max) = s.max_properties.filter(|m| map.len() as i64 > *m) {
                errs.push(FieldError::too_many(shown, map.len(), max));
            }
            let additional = additional_schema(s);
            for (k, e) in map {
                if root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(p) = s.properties.get(k) {
                    validate_at(e, p, &join(path, k), false, errs);
                } else if let Some(a) = &additional {
                    validate_at(e, a, &join(path, k), false, errs);
                }
            }
        }
        _ => {}
    }
}

/// Whether the schema (any node) carries `x-kubernetes-validations`: CEL rules the playground
/// stores but does not enforce yet.
pub fn has_cel_rules(s: &JSONSchemaProps) -> bool {
    let mut visit = vec![s];
    while let Some(n) = visit.pop() {
        if !n.x_validations.is_empty() {
            return true;
        }
        visit.extend(n.properties.values());
        visit.extend(n.items.as_deref());
    }
    false
}

#[cfg(test)]
mod tests {
    use super::format_holds;

    #[test]
    fn the_common_formats_hold_for_good_values_and_not_for_bad_ones() {
        for (format, good, bad) in [
            ("date", "2026-12-02", "2026-13-02"),
            ("date-time", "2026-12-02T10:00:00Z", "2026-12-02 10:00"),
            (
                "date-time",
                "2026-12-02T10:00:00.5+01:00",
                "2026-12-02T10:00Z",
            ),
            ("email", "ops@example.com", "ops at example.com"),
            ("hostname", "db-0.example.com", "-db.example.com"),
            ("ipv4", "10.0.0.1", "10.0.0.256"),
            ("ipv6", "fd00::1", "fd00:::1"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            (
                "uuid",
                "123e4567-e89b-12d3-a456-426614174000",
                "123e4567e89b12d3",
            ),
            ("byte", "aGVsbG8=", "hello!"),
        ] {
            assert_eq!(format_holds(format, good), Some(true), "{format} {good}");
            assert_eq!(format_holds(format, bad), Some(false), "{format} {bad}");
        }
        assert_eq!(
            format_holds("int-or-anything", "x"),
            None,
            "unknown formats are stored"
        );
        assert_eq!(format_holds("", "x"), None);
    }
}
