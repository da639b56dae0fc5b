//! YAML in and out: the only module that knows the YAML crate (serde-saphyr).
//!
//! Reading turns user text into JSON values plus the line and column of every field, so later
//! stages (strict decoding, validation) can point at the exact place a problem was written.
//! Hostile input is refused early and cheaply: the input size, nesting depth, node count and
//! alias expansion are all capped, and every refusal is a [`Diagnostic`], never a panic.
//!
//! Writing is a small deterministic emitter in the style of `kubectl get -o yaml`: two-space
//! indentation, keys in the value's (sorted) order, list items not indented under their key, and
//! strings quoted only when they would otherwise read back as something else.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;
use serde_saphyr::{Error as YamlError, MessageFormatter, Spanned};

use super::diagnostic::{Diagnostic, Severity};

/// Largest input accepted, in bytes (1 MiB): far above any hand-written manifest.
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// Deepest nesting of mappings and sequences accepted (the deepest Pod field needs about 14).
///
/// Kept low because parsing recurses once per level: about 6 KiB of stack per level in release
/// builds and 40 KiB in debug builds, and wasm gets a 1 MiB stack.
pub const MAX_DEPTH: usize = 32;
/// Most YAML nodes (scalars, mappings, sequences, alias expansions included) in one input.
///
/// About 800 Deployments' worth; parsing costs roughly 1 µs per node, so this bounds the time
/// spent on a hostile file to a few tens of milliseconds.
pub const MAX_NODES: usize = 25_000;
/// Most events replayed by alias expansion in one input: stops "billion laughs" bombs early.
pub const MAX_ALIAS_REPLAY: usize = 10_000;
/// Most `*alias` references in one input.
pub const MAX_ALIASES: usize = 1_000;
/// Most documents in one input.
pub const MAX_DOCUMENTS: usize = 1_000;

/// A position in the source text; both numbers start at 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// One parsed YAML document: its JSON value and where each field was written.
///
/// `spans` is keyed by field path in Kubernetes' notation (`spec.template.spec.containers[0].image`,
/// map keys that are not plain identifiers in brackets: `metadata.labels[app.kubernetes.io/name]`,
/// see [`push_key`]). A mapping entry's span is where its key starts; a sequence item's span is
/// where the item starts. The root's path is the empty string.
#[derive(Clone, Debug, PartialEq)]
pub struct YamlDoc {
    /// The document as JSON, exactly as sigs.k8s.io/yaml would convert it.
    pub value: Json,
    /// Where each field path was written.
    pub spans: BTreeMap<String, Span>,
    /// Where the document's content starts (its first key, for a mapping).
    pub start: Span,
}

impl YamlDoc {
    /// The span of `path`, or of its closest ancestor that has one, or the document start.
    ///
    /// Validation errors name fields that may be absent (`Required value`); pointing at the
    /// parent is the most useful place then.
    pub fn span_of(&self, path: &str) -> Span {
        let mut p = path;
        loop {
            if let Some(s) = self.spans.get(p) {
                return *s;
            }
            match parent_path(p) {
                Some(parent) => p = parent,
                None => return self.start,
            }
        }
    }
}

/// The path one level up (`a.b[0]` → `a.b`, `a.b` → `a`, `a` → ``), or `None` at the root.
pub fn parent_path(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    if path.ends_with(']') {
        // Find the matching '[' of the last bracketed segment; keys may contain '.' but not '['.
        if let Some(i) = path.rfind('[') {
            return Some(&path[..i]);
        }
    }
    Some(path.rfind('.').map_or("", |i| &path[..i]))
}

pub use crate::sim::api::strict::{push_index, push_key};

// ---------------------------------------------------------------- reading

/// A YAML node with positions, as the YAML crate hands it over.
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<String>, Spanned<Node>)>),
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Uint(v))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(i64::try_from(v).map_or(Node::Float(v as f64), Node::Int))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Node, E> {
        Ok(u64::try_from(v).map_or(Node::Float(v as f64), Node::Uint))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Node, E> {
        Ok(Node::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            let value = map.next_value::<Spanned<Node>>()?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

fn span_from(loc: &serde_saphyr::Location) -> Span {
    Span {
        line: u32::try_from(loc.line()).unwrap_or(u32::MAX).max(1),
        col: u32::try_from(loc.column()).unwrap_or(u32::MAX).max(1),
    }
}

fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        with_snippet: false,
        // YAML 1.1 as sigs.k8s.io/yaml reads it: `010` is octal 8.
        legacy_octal_numbers: true,
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            flow_nesting_limit: MAX_DEPTH,
            max_nodes: MAX_NODES,
            max_aliases: MAX_ALIASES,
            max_anchors: MAX_ALIASES,
            max_documents: MAX_DOCUMENTS,
            max_events: 4 * MAX_NODES,
            max_recorded_anchor_events: MAX_ALIAS_REPLAY,
            max_total_scalar_bytes: 2 * MAX_INPUT_BYTES,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: MAX_ALIAS_REPLAY,
            max_replay_stack_depth: 16,
        },
    }
}

/// Parses every non-empty document of a (possibly multi-document) YAML text.
///
/// Errors read like kubectl's client-side conversion errors
/// (`error converting YAML to JSON: yaml: line 7: mapping values are not allowed in this context`)
/// and carry the line and column; the diagnostic's `file` is left empty for the caller to fill.
/// Refuses inputs over [`MAX_INPUT_BYTES`], nested deeper than [`MAX_DEPTH`], with more than
/// [`MAX_NODES`] nodes or more alias expansion than [`MAX_ALIAS_REPLAY`] events.
pub fn parse_documents(text: &str) -> Result<Vec<YamlDoc>, Diagnostic> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(yaml_error(
            Span { line: 1, col: 1 },
            format!(
                "yaml: input is {} bytes, more than the limit of {MAX_INPUT_BYTES} bytes (1 MiB)",
                text.len()
            ),
        ));
    }
    let roots: Vec<Spanned<Node>> =
        serde_saphyr::from_multiple_with_options(text, options()).map_err(|e| convert_error(&e))?;
    let mut docs = Vec::with_capacity(roots.len());
    for root in roots {
        let start = span_from(&root.referenced);
        let mut spans = BTreeMap::new();
        spans.insert(String::new(), start);
        let value = to_json(root.value, "", &mut spans)?;
        if value.is_null() {
            continue;
        }
        docs.push(YamlDoc {
            value,
            spans,
            start,
        });
    }
    Ok(docs)
}

fn to_json(node: Node, path: &str, spans: &mut BTreeMap<String, Span>) -> Result<Json, Diagnostic> {
    Ok(match node {
        Node::Null => Json::Null,
        Node::Bool(b) => Json::Bool(b),
        Node::Int(i) => Json::from(i),
        Node::Uint(u) => Json::from(u),
        Node::Float(f) => match serde_json::Number::from_f64(f) {
            Some(n) => Json::Number(n),
            None => {
                let span = spans.get(path).copied().unwrap_or_default();
                return Err(yaml_error(
                    span,
                    format!(
                        "yaml: line {}: {f} cannot be represented in JSON",
                        span.line
                    ),
                ));
            }
        },
        Node::Str(s) => Json::String(s),
        Node::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let p = push_index(path, i);
                spans.insert(p.clone(), span_from(&item.referenced));
                out.push(to_json(item.value, &p, spans)?);
            }
            Json::Array(out)
        }
        Node::Map(entries) => {
            let mut out = serde_json::Map::new();
            for (key, value) in entries {
                let p = push_key(path, &key.value);
                spans.insert(p.clone(), span_from(&key.referenced));
                let v = to_json(value.value, &p, spans)?;
                // Merge keys (`<<`) can repeat a key; like yaml.v2, the first one written wins.
                out.entry(key.value).or_insert(v);
            }
            Json::Object(out)
        }
    })
}

fn yaml_error(span: Span, message: String) -> Diagnostic {
    Diagnostic {
        file: String::new(),
        line: span.line,
        col: span.col,
        severity: Severity::Error,
        message: format!("error converting YAML to JSON: {message}"),
        field: None,
    }
}

/// Rewords the YAML crate's error as go-yaml would put it, keeping the crate's reason text.
fn convert_error(err: &YamlError) -> Diagnostic {
    let mut err = err;
    while let YamlError::AliasError { error, .. } | YamlError::WithSnippet { error, .. } = err {
        err = error;
    }
    let span = err
        .location()
        .map(|l| span_from(&l))
        .unwrap_or(Span { line: 1, col: 1 });
    let line = span.line;
    let reason = match err {
        YamlError::Budget { breach, .. } => budget_reason(breach),
        YamlError::AliasReplayLimitExceeded { .. }
        | YamlError::AliasExpansionLimitExceeded { .. }
        | YamlError::AliasReplayStackDepthExceeded { .. }
        | YamlError::AliasReplayCounterOverflow { .. } => {
            "document contains excessive aliasing".to_string()
        }
        YamlError::DuplicateMappingKey { .. } => {
            let raw = serde_saphyr::DefaultMessageFormatter
                .format_message(err)
                .into_owned();
            let key = raw
                .strip_prefix("duplicate mapping key: ")
                .and_then(|r| r.split(", set DuplicateKeyPolicy").next())
                .unwrap_or("?")
                .to_string();
            return yaml_error(
                span,
                format!("yaml: unmarshal errors: line {line}: key {key:?} already set in map"),
            );
        }
        other => {
            let raw = serde_saphyr::DefaultMessageFormatter
                .format_message(other)
                .into_owned();
            reword(&raw)
        }
    };
    yaml_error(span, format!("yaml: line {line}: {reason}"))
}

fn budget_reason(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    match breach {
        B::Depth { .. } => format!("exceeded max depth of {MAX_DEPTH}"),
        B::Nodes { .. } | B::Events { .. } => {
            format!("document is too large: more than {MAX_NODES} nodes")
        }
        B::Aliases { .. }
        | B::Anchors { .. }
        | B::AliasAnchorRatio { .. }
        | B::RecordedAnchorEvents { .. }
        | B::RecordedAnchorBytes { .. }
        | B::MergeKeys { .. } => "document contains excessive aliasing".to_string(),
        B::Documents { .. } => format!("more than {MAX_DOCUMENTS} documents"),
        B::ScalarBytes { .. } | B::InputBytes { .. } => {
            format!("input is larger than the limit of {MAX_INPUT_BYTES} bytes (1 MiB)")
        }
        other => format!("input exceeds a safety limit ({other:?})"),
    }
}

/// go-yaml drops libyaml's "while parsing ..." context; so do we. Other texts are kept.
fn reword(raw: &str) -> String {
    let raw = raw.trim();
    if raw.contains("recursion limit exceeded") {
        return format!("exceeded max depth of {MAX_DEPTH}");
    }
    if let Some(rest) = raw.strip_prefix("while ") {
        if let Some((_, reason)) = rest.split_once(", ") {
            return reason.to_string();
        }
    }
    if let Some(c) = raw.strip_prefix("unexpected character: `") {
        // The crate prints the character Debug-escaped; say what it is instead.
        let shown = c.trim_end_matches('\'');
        return format!("control characters are not allowed (found `{shown}`)");
    }
    raw.to_string()
}

// ---------------------------------------------------------------- writing

/// Renders a JSON value as YAML the way `kubectl get -o yaml` does.
///
/// Deterministic (keys in the value's order, which for `serde_json::Value` is sorted) and
/// round-trips: `parse_documents(&to_yaml(v))` yields `v` again for any JSON value whose
/// keys are shorter than 1024 characters.
pub fn to_yaml(value: &Json) -> String {
    let mut out = String::new();
    match value {
        Json::Object(m) if !m.is_empty() => write_map(&mut out, m, 0),
        Json::Array(a) if !a.is_empty() => write_seq(&mut out, a, 0),
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// The inline text of a scalar or empty collection; `None` for a non-empty collection.
fn inline(value: &Json) -> Option<String> {
    match value {
        Json::Object(m) if m.is_empty() => Some("{}".into()),
        Json::Array(a) if a.is_empty() => Some("[]".into()),
        Json::Object(_) | Json::Array(_) => None,
        scalar => Some(scalar_text(scalar)),
    }
}

fn scalar_text(value: &Json) -> String {
    match value {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => quote_if_needed(s),
        Json::Object(_) => "{}".into(),
        Json::Array(_) => "[]".into(),
    }
}

/// Writes map entries, each starting at column `ind`.
fn write_map(out: &mut String, m: &serde_json::Map<String, Json>, ind: usize) {
    let mut first = true;
    for (k, v) in m {
        if !first {
            indent(out, ind);
        }
        first = false;
        write_entry(out, k, v, ind);
    }
}

/// Writes one `key: value` entry; the caller has already indented the first line.
fn write_entry(out: &mut String, k: &str, v: &Json, ind: usize) {
    out.push_str(&quote_if_needed(k));
    out.push(':');
    match (inline(v), v) {
        (Some(text), _) => {
            out.push(' ');
            out.push_str(&text);
            out.push('\n');
        }
        (None, Json::Object(inner)) => {
            out.push('\n');
            indent(out, ind + 2);
            write_map(out, inner, ind + 2);
        }
        (None, Json::Array(items)) => {
            // kubectl style: list items sit at the key's own indentation.
            out.push('\n');
            indent(out, ind);
            write_seq(out, items, ind);
        }
        (None, _) => unreachable!("inline() is None only for non-empty collections"),
    }
}

/// Writes sequence items, each `- ` starting at column `ind`.
fn write_seq(out: &mut String, items: &[Json], ind: usize) {
    let mut first = true;
    for item in items {
        if !first {
            indent(out, ind);
        }
        first = false;
        out.push_str("- ");
        match (inline(item), item) {
            (Some(text), _) => {
                out.push_str(&text);
                out.push('\n');
            }
            (None, Json::Object(inner)) => write_map(out, inner, ind + 2),
            (None, Json::Array(inner)) => write_seq(out, inner, ind + 2),
            (None, _) => unreachable!("inline() is None only for non-empty collections"),
        }
    }
}

/// The string as a YAML scalar: plain when it reads back as the same string, else double-quoted.
fn quote_if_needed(s: &str) -> String {
    if plain_is_safe(s) {
        s.to_string()
    } else {
        double_quoted(s)
    }
}

fn plain_is_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.len() > 256 {
        // Long values (certificates, JSON blobs) are rare; quoting is always correct.
        return false;
    }
    if first.is_whitespace() || s.ends_with(|c: char| c.is_whitespace()) {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        // `-x`, `?x` and `:x` are legal plain scalars, but `-1` is a number and `- x` a list.
        let simple = matches!(first, '-' | '?' | ':')
            && s.len() > 1
            && !s[1..].starts_with(' ')
            && !s.contains([',', '[', ']', '{', '}']);
        if !simple {
            return false;
        }
    }
    if s.ends_with(':')
        || s.starts_with("<<")
        || s.contains(": ")
        || s.contains(" #")
        || s.contains(['{', '}', '[', ']', ','])
        || s.chars().any(|c| c.is_control() || is_special_unicode(c))
    {
        return false;
    }
    if looks_like_timestamp(s) {
        return false;
    }
    // Whatever YAML 1.1 or 1.2 would resolve to a non-string (numbers in every base, booleans
    // such as `yes`/`on`/`y`, nulls, `.inf`): ask the parser itself rather than guess.
    let maybe_typed = first.is_ascii_digit()
        || "+-.~".contains(first)
        || (s.len() <= 5 && first.is_ascii_alphabetic());
    if maybe_typed {
        return matches!(
            serde_saphyr::from_str_with_options::<Node>(s, options()),
            Ok(Node::Str(ref back)) if back == s
        );
    }
    true
}

/// A YAML 1.1 timestamp as go-yaml reads one (`2026-01-01`, `2026-1-1T10:00:00Z`,
/// `2026-01-01 10:00:00.5`). kubectl's YAML printer quotes a string that would read back as a
/// timestamp, so every `creationTimestamp: "2026-01-01T00:00:00Z"` is quoted, and so are ours.
fn looks_like_timestamp(s: &str) -> bool {
    /// Takes a run of `min..=max` ASCII digits from the front of `s`.
    fn digits(s: &str, min: usize, max: usize) -> Option<&str> {
        let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
        (n >= min).then(|| &s[n..])
    }
    fn then(s: Option<&str>, c: char) -> Option<&str> {
        s?.strip_prefix(c)
    }
    let date = then(
        then(digits(s, 4, 4), '-').and_then(|r| digits(r, 1, 2)),
        '-',
    )
    .and_then(|r| digits(r, 1, 2));
    let Some(rest) = date else {
        return false;
    };
    let Some(sep) = rest.chars().next() else {
        return true;
    };
    if !matches!(sep, 'T' | 't' | ' ') {
        return false;
    }
    let time = then(
        then(digits(&rest[1..], 1, 2), ':').and_then(|r| digits(r, 1, 2)),
        ':',
    )
    .and_then(|r| digits(r, 1, 2));
    let Some(mut rest) = time else {
        return false;
    };
    if let Some(frac) = rest.strip_prefix('.') {
        match digits(frac, 1, 9) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    if sep == ' ' {
        return rest.is_empty();
    }
    match rest {
        "Z" => true,
        zone => {
            let sign = zone.strip_prefix(['+', '-']);
            then(sign.and_then(|r| digits(r, 2, 2)), ':').and_then(|r| digits(r, 2, 2)) == Some("")
        }
    }
}

fn is_special_unicode(c: char) -> bool {
    matches!(
        c,
        '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c if is_special_unicode(c) || (c.is_control()) => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn parse_one(text: &str) -> YamlDoc {
        let mut docs = parse_documents(text).expect("valid YAML");
        assert_eq!(docs.len(), 1, "expected one document");
        docs.remove(0)
    }

    fn err(text: &str) -> String {
        let d = parse_documents(text).expect_err("should fail");
        format!("{}:{}: {}", d.line, d.col, d.message)
    }

    #[test]
    fn strings_that_read_as_timestamps_are_quoted_as_kubectl_prints_them() {
        for quoted in [
            "2026-01-01T00:00:00Z",
            "2026-01-01t10:00:00.123+02:00",
            "2026-1-2T3:4:5Z",
            "2026-01-01",
            "2026-01-01 10:00:00",
        ] {
            assert!(looks_like_timestamp(quoted), "{quoted}");
            assert_eq!(
                to_yaml(&json!({ "t": quoted })),
                format!("t: \"{quoted}\"\n")
            );
        }
        for plain in [
            "2026-01",
            "2026-01-01x",
            "2026-01-01T10:00",
            "2026-01-01 10:00:00Z",
            "20260-01-01",
            "web-2026-01-01",
        ] {
            assert!(!looks_like_timestamp(plain), "{plain}");
        }
    }

    #[test]
    fn scalars_keep_their_json_types() {
        let doc = parse_one(
            "int: 1\nquoted: \"1\"\nfloat: 1.5\nneg: -3\nt: true\nyes_: yes\nnull_: ~\nempty:\noctal: 010\nhex: 0x1F\nstr: nginx:1.14.2\n",
        );
        assert_eq!(
            doc.value,
            json!({"int": 1, "quoted": "1", "float": 1.5, "neg": -3, "t": true, "yes_": true,
                   "null_": null, "empty": null, "octal": 8, "hex": 31, "str": "nginx:1.14.2"})
        );
    }

    #[test]
    fn every_field_has_its_key_position() {
        let doc = parse_one(
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n",
        );
        let at = |p: &str| doc.spans.get(p).copied().map(|s| (s.line, s.col));
        assert_eq!(at("kind"), Some((2, 1)));
        assert_eq!(at("spec.template.spec.containers"), Some((6, 7)));
        assert_eq!(at("spec.template.spec.containers[0]"), Some((7, 9)));
        assert_eq!(at("spec.template.spec.containers[0].image"), Some((8, 9)));
        assert_eq!(doc.start, Span { line: 1, col: 1 });
        let missing = doc.span_of("spec.template.spec.containers[0].resources.limits");
        assert_eq!((missing.line, missing.col), (7, 9));
    }

    #[test]
    fn keys_that_are_not_identifiers_are_bracketed() {
        let doc = parse_one("metadata:\n  labels:\n    app.kubernetes.io/name: web\n");
        assert!(doc
            .spans
            .contains_key("metadata.labels[app.kubernetes.io/name]"));
        assert_eq!(
            parent_path("metadata.labels[app.kubernetes.io/name]"),
            Some("metadata.labels")
        );
        assert_eq!(parent_path("a.b[0]"), Some("a.b"));
        assert_eq!(parent_path("a"), Some(""));
        assert_eq!(parent_path(""), None);
    }

    #[test]
    fn empty_documents_are_skipped() {
        let docs = parse_documents("---\n---\na: 1\n---\n# only a comment\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].start.line, 7);
    }

    #[test]
    fn syntax_errors_read_like_kubectl() {
        let cases = [
            (
                "a:\n  b: c: d\n",
                "2:7: error converting YAML to JSON: yaml: line 2: mapping values are not allowed in this context",
            ),
            (
                "a:\n  b: 1\n c: 2\n",
                "3:2: error converting YAML to JSON: yaml: line 3: did not find expected key",
            ),
            (
                "a: 1\na: 2\n",
                "2:1: error converting YAML to JSON: yaml: unmarshal errors: line 2: key \"a\" already set in map",
            ),
            ("a: \"abc\n", "1:4: error converting YAML to JSON: yaml: line 1: unclosed quote"),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), want, "for {text:?}");
        }
    }

    #[test]
    fn oversized_input_is_refused_before_parsing() {
        let big = format!("a: \"{}\"\n", "x".repeat(MAX_INPUT_BYTES));
        assert!(err(&big).contains("more than the limit of 1048576 bytes (1 MiB)"));
    }

    #[test]
    fn deep_nesting_and_alias_bombs_are_refused() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(
            err(&deep).contains("exceeded max depth of 32"),
            "{}",
            err(&deep)
        );
        let mut bomb = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let mut prev = 'a';
        for c in "bcdefghi".chars() {
            bomb.push_str(&format!(
                "{c}: &{c} [{}]\n",
                vec![format!("*{prev}"); 9].join(",")
            ));
            prev = c;
        }
        assert!(
            err(&bomb).contains("document contains excessive aliasing"),
            "{}",
            err(&bomb)
        );
    }

    #[test]
    fn emitter_matches_kubectl_layout() {
        let v = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [
                    {"name": "nginx", "image": "nginx:1.14.2", "ports": [{"containerPort": 80}], "args": ["--port=80", "-v"]}
                ], "nodeSelector": {}, "tolerations": []}}
            },
            "status": {"matrix": [[1, 2], [{"a": "yes", "b": ""}]], "msg": "line1\nline2", "odd": " pad", "c": "a: b"}
        });
        insta::assert_snapshot!(to_yaml(&v), @r###"
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          annotations:
            deployment.kubernetes.io/revision: "1"
          labels:
            app: web
          name: web
        spec:
          replicas: 3
          selector:
            matchLabels:
              app: web
          template:
            spec:
              containers:
              - args:
                - --port=80
                - -v
                image: nginx:1.14.2
                name: nginx
                ports:
                - containerPort: 80
              nodeSelector: {}
              tolerations: []
        status:
          c: "a: b"
          matrix:
          - - 1
            - 2
          - - a: "yes"
              b: ""
          msg: "line1\nline2"
          odd: " pad"
        "###);
    }

    #[test]
    fn strings_that_look_typed_are_quoted() {
        for s in [
            "1", "1.5", "true", "yes", "Y", "on", "off", "null", "~", "0x1F", "010", "1e3", ".inf",
            "-1", "+1", "1_000", "",
        ] {
            assert_eq!(quote_if_needed(s), format!("{s:?}"), "{s}");
        }
        for s in [
            "web",
            "nginx:1.14.2",
            "1.14.2",
            "v1",
            "--port=80",
            "app.kubernetes.io/name",
            "日本",
        ] {
            assert_eq!(quote_if_needed(s), s, "{s}");
        }
    }

    fn arb_json() -> impl Strategy<Value = Json> {
        let key = prop_oneof![
            "[a-z][a-zA-Z0-9]{0,8}",
            "[ -~]{0,12}",
            Just("yes".to_string()),
            Just("1".to_string()),
            Just("<<".to_string()),
            any::<String>().prop_map(|s| s.chars().take(10).collect()),
        ];
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::from),
            any::<u64>().prop_map(Json::from),
            (-1e12f64..1e12).prop_map(Json::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Json::from),
            "[ -~]{0,20}".prop_map(Json::String),
            any::<String>().prop_map(Json::String),
            prop::sample::select(vec![
                "true", "no", "null", "~", "1.0", "0o17", "- a", "a: b", "#x", "", " ", "\n", "'",
                "\"", "-", "?", ":"
            ])
            .prop_map(|s| Json::String(s.to_string())),
        ];
        leaf.prop_recursive(6, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
                prop::collection::btree_map(key.clone(), inner, 0..5)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn emitted_yaml_parses_back_to_the_same_value(v in arb_json()) {
            let text = to_yaml(&v);
            let docs = parse_documents(&text).map_err(|d| TestCaseError::fail(format!("{d:?}\n{text}")))?;
            let back = docs.into_iter().next().map(|d| d.value).unwrap_or(Json::Null);
            prop_assert_eq!(&back, &v, "yaml was:\n{}", text);
        }

        #[test]
        fn arbitrary_text_never_panics_the_parser(text in "[ -~\n\t]{0,200}") {
            let _ = parse_documents(&text);
        }
    }
}
