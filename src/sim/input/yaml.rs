//! YAML in and out: the only module that knows the YAML crate (serde-saphyr).
//!
//! Reading turns user text into JSON values plus the line and column of every field, so later
//! stages (strict decoding, validation) can point at the exact place a problem was written. It
//! reads the events of the crate's parser and resolves scalars as sigs.k8s.io/yaml does (go-yaml
//! v2, YAML 1.1), rather than going through the crate's serde deserializer.
//! Hostile input is refused early and cheaply: the input size, nesting depth, node count and
//! alias expansion are all capped, and every refusal is a [`Diagnostic`], never a panic.
//!
//! Writing is a small deterministic emitter in the style of `kubectl get -o yaml`: two-space
//! indentation, keys in the value's (sorted) order, list items not indented under their key, and
//! strings quoted only when they would otherwise read back as something else.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value as Json;

use super::diagnostic::{Diagnostic, Severity};

/// Largest input accepted, in bytes (1 MiB): far above any hand-written manifest.
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// Deepest nesting of mappings and sequences accepted (the deepest Pod field needs about 14).
///
/// Kept low because building the document recurses once per level, and wasm gets a 1 MiB stack;
/// the parser is told the same limit, so it stops scanning there too.
pub const MAX_DEPTH: usize = 32;
/// Most YAML nodes (scalars, mappings, sequences, alias expansions included) in one input.
///
/// About 800 Deployments' worth; parsing costs roughly 1 µs per node, so this bounds the time
/// spent on a hostile file to a few tens of milliseconds.
pub const MAX_NODES: usize = 25_000;
/// Most nodes copied by alias expansion in one input: stops "billion laughs" bombs early.
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

use serde_saphyr::granit_parser::{
    ErrorKind, Event, Marker, Parser, ScalarStyle, ScanError, Span as ParserSpan, Tag,
};

/// A YAML node with where it was written.
#[derive(Clone)]
struct Node {
    at: Span,
    value: Value,
}

#[derive(Clone)]
enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Entries as written, keys with their positions; merge keys (`<<`) already merged.
    Map(Vec<(String, Span, Node)>),
}

fn span_at(span: &ParserSpan) -> Span {
    mark_at(&span.start)
}

/// The parser's lines count from 1, its columns from 0.
fn mark_at(mark: &Marker) -> Span {
    Span {
        line: u32::try_from(mark.line()).unwrap_or(u32::MAX).max(1),
        col: u32::try_from(mark.col() + 1).unwrap_or(u32::MAX),
    }
}

/// Builds nodes from the parser's events: the YAML crate's own parser (serde-saphyr's
/// `granit_parser`), read event by event rather than through its serde deserializer, whose code
/// (with its error renderer, annotate-snippets) weighed about 310 kB of the page's wasm. The
/// budgets that bound a hostile input are counted here.
struct Builder<'a> {
    parser: Parser<'a, serde_saphyr::granit_parser::StrInput<'a>>,
    /// Anchored nodes sorted by the parser's anchor id (ids count up in the order the anchors are
    /// written), with how many nodes each holds.
    anchors: Vec<(usize, Node, usize)>,
    nodes: usize,
    aliases: usize,
    replayed: usize,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str) -> Builder<'a> {
        let mut options = serde_saphyr::granit_parser::Options::default();
        options.flow_nesting_limit = MAX_DEPTH;
        options.block_nesting_limit = MAX_DEPTH;
        options.emit_unresolved_aliases = true;
        options.set_emit_comments(false);
        Builder {
            parser: Parser::new_from_str_with_options(text, options),
            anchors: Vec::new(),
            nodes: 0,
            aliases: 0,
            replayed: 0,
        }
    }

    fn next(&mut self) -> Result<Option<(Event<'a>, ParserSpan)>, Diagnostic> {
        self.parser
            .next_event()
            .transpose()
            .map_err(|e| scan_error(&e))
    }

    fn expect(&mut self, at: Span) -> Result<(Event<'a>, ParserSpan), Diagnostic> {
        self.next()?
            .ok_or_else(|| line_error(at, "unexpected end of stream"))
    }

    /// The documents' root nodes, empty documents included (as null).
    fn documents(mut self) -> Result<Vec<Node>, Diagnostic> {
        let mut roots = Vec::new();
        while let Some((ev, span)) = self.next()? {
            match ev {
                Event::DocumentStart(..) => {
                    if roots.len() == MAX_DOCUMENTS {
                        let at = span_at(&span);
                        return Err(line_error(
                            at,
                            format!("more than {MAX_DOCUMENTS} documents"),
                        ));
                    }
                    self.anchors.clear();
                    let (ev, span) = self.expect(span_at(&span))?;
                    if matches!(ev, Event::DocumentEnd) {
                        roots.push(Node {
                            at: span_at(&span),
                            value: Value::Null,
                        });
                        continue;
                    }
                    roots.push(self.node(ev, &span, 0)?);
                    // The document's end follows its one node.
                    self.expect(span_at(&span))?;
                }
                Event::StreamEnd => break,
                _ => {}
            }
        }
        Ok(roots)
    }

    fn node(&mut self, ev: Event<'a>, span: &ParserSpan, depth: usize) -> Result<Node, Diagnostic> {
        let at = span_at(span);
        if depth > MAX_DEPTH {
            return Err(line_error(at, format!("exceeded max depth of {MAX_DEPTH}")));
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(line_error(
                at,
                format!("document is too large: more than {MAX_NODES} nodes"),
            ));
        }
        let (value, anchor) = match ev {
            Event::Scalar(text, style, anchor, tag) => (
                scalar(text.into_owned(), style, tag.as_deref(), at)?,
                anchor,
            ),
            Event::SequenceStart(_, anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (ev, span) = self.expect(at)?;
                    if matches!(ev, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(ev, &span, depth + 1)?);
                }
                (Value::Seq(items), anchor)
            }
            Event::MappingStart(_, anchor, _) => (self.mapping(at, depth)?, anchor),
            Event::Alias(id) => return self.alias(id, at),
            Event::UnresolvedAlias(name) => {
                return Err(yaml_error(
                    at,
                    format!("yaml: unknown anchor '{name}' referenced"),
                ))
            }
            _ => return Err(line_error(at, "did not find expected node content")),
        };
        let node = Node { at, value };
        if anchor != 0 {
            // Kept in id order: a node's id is older than those of the anchors inside it, which
            // are filed first, so it moves in front of them (at most 32 levels of them).
            let at = self.anchors.partition_point(|(a, ..)| *a < anchor);
            self.anchors.insert(at, (anchor, node.clone(), size(&node)));
        }
        Ok(node)
    }

    /// A mapping's entries, merge keys merged as go-yaml merges them: keys written in the mapping
    /// win over merged ones, and an earlier merged mapping over a later one.
    fn mapping(&mut self, at: Span, depth: usize) -> Result<Value, Diagnostic> {
        let mut entries: Vec<(String, Span, Node)> = Vec::new();
        let mut merged: Vec<(String, Span, Node)> = Vec::new();
        // Keys seen, written and merged: a mapping may hold thousands (a ConfigMap's data).
        let mut written = BTreeSet::new();
        let mut merged_keys = BTreeSet::new();
        loop {
            let (ev, span) = self.expect(at)?;
            if matches!(ev, Event::MappingEnd) {
                break;
            }
            let key_at = span_at(&span);
            let merge = matches!(&ev, Event::Scalar(k, ScalarStyle::Plain, _, None) if k == "<<");
            // The text of a key that may be a number, which a float key keeps.
            let spelled = match &ev {
                Event::Scalar(k, ScalarStyle::Plain, _, _)
                    if k.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c)) =>
                {
                    Some(k.to_string())
                }
                _ => None,
            };
            let key = self.node(ev, &span, depth + 1)?;
            let (ev, span) = self.expect(key_at)?;
            let value = self.node(ev, &span, depth + 1)?;
            if merge {
                merge_into(&mut merged, &mut merged_keys, value, key_at)?;
                continue;
            }
            let key = map_key(&key, spelled, &value)?;
            if !written.insert(key.clone()) {
                return Err(yaml_error(
                    key_at,
                    format!(
                        "yaml: unmarshal errors: line {}: key {key:?} already set in map",
                        key_at.line
                    ),
                ));
            }
            entries.push((key, key_at, value));
        }
        entries.extend(merged.into_iter().filter(|(k, ..)| !written.contains(k)));
        Ok(Value::Map(entries))
    }

    /// A copy of the anchored node `id`, placed where the alias is written; each copy counts
    /// against the budgets, so an alias bomb is refused after a bounded amount of work.
    fn alias(&mut self, id: usize, at: Span) -> Result<Node, Diagnostic> {
        let aliasing = || line_error(at, "document contains excessive aliasing");
        self.aliases += 1;
        let found = self.anchors.binary_search_by_key(&id, |(a, ..)| *a);
        let Some((_, node, nodes)) = found.ok().map(|i| &self.anchors[i]) else {
            return Err(line_error(at, "unknown anchor referenced"));
        };
        self.replayed += nodes;
        self.nodes += nodes;
        if self.aliases > MAX_ALIASES || self.replayed > MAX_ALIAS_REPLAY {
            return Err(aliasing());
        }
        if self.nodes > MAX_NODES {
            return Err(line_error(
                at,
                format!("document is too large: more than {MAX_NODES} nodes"),
            ));
        }
        let mut node = node.clone();
        relocate(&mut node, at);
        Ok(node)
    }
}

/// Places a copy where its alias is written: every field of an expanded alias points there.
fn relocate(node: &mut Node, at: Span) {
    node.at = at;
    match &mut node.value {
        Value::Seq(items) => items.iter_mut().for_each(|n| relocate(n, at)),
        Value::Map(entries) => entries.iter_mut().for_each(|(_, k, v)| {
            *k = at;
            relocate(v, at);
        }),
        _ => {}
    }
}

/// A mapping key as sigs.k8s.io/yaml spells it in JSON: a string as it is, a boolean as
/// `true`/`false`, an integer in decimal (`010:` is `"8"`), a finite float as `spelled`; a null
/// or an integer past int64 is refused in its words, a sequence or mapping in go-yaml's.
fn map_key(key: &Node, spelled: Option<String>, value: &Node) -> Result<String, Diagnostic> {
    Ok(match &key.value {
        Value::Str(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if f.is_nan() => ".nan".into(),
        Value::Float(f) if f.is_infinite() => if *f > 0.0 { ".inf" } else { "-.inf" }.into(),
        // Go respells a float key as the shortest float32 (`1.50:` is `"1.5"`); the formatting
        // code for that weighed 15 kB of the page's wasm, so the key keeps the text written.
        Value::Float(f) => spelled.unwrap_or_else(|| json_float(*f)),
        Value::Null => return Err(unsupported_key("%!s(<nil>)", "<nil>", value, key.at)),
        Value::Uint(u) => {
            return Err(unsupported_key(
                "uint64",
                &format!("0x{u:x}"),
                value,
                key.at,
            ))
        }
        // go-yaml refuses these before sigs.k8s.io/yaml sees them: Go maps cannot have them.
        Value::Seq(_) => return Err(invalid_key("[]interface {}", key.at)),
        Value::Map(_) => return Err(invalid_key("map[interface {}]interface {}", key.at)),
    })
}

/// A finite float as serde_json writes it (its formatter is in the page already; Rust's is not).
fn json_float(f: f64) -> String {
    serde_json::Number::from_f64(f).map_or_else(String::new, |n| n.to_string())
}

fn invalid_key(type_: &str, at: Span) -> Diagnostic {
    yaml_error(at, format!("yaml: invalid map key: {type_}{{…}}"))
}

/// sigs.k8s.io/yaml's refusal of a key JSON cannot have (`%+#v` of the key and value, as Go
/// prints scalars; collections abridged).
fn unsupported_key(type_: &str, key: &str, value: &Node, at: Span) -> Diagnostic {
    let value = match &value.value {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => format!("0x{u:x}"),
        Value::Float(f) => json_float(*f),
        Value::Str(s) => format!("{s:?}"),
        Value::Seq(_) => "[]interface {}{…}".to_string(),
        Value::Map(_) => "map[interface {}]interface {}{…}".to_string(),
    };
    yaml_error(
        at,
        format!("Unsupported map key of type: {type_}, key: {key}, value: {value}"),
    )
}

/// Adds the entries of a merge key's value (a mapping or a sequence of them) whose keys are not
/// in `keys` yet.
fn merge_into(
    merged: &mut Vec<(String, Span, Node)>,
    keys: &mut BTreeSet<String>,
    value: Node,
    at: Span,
) -> Result<(), Diagnostic> {
    let sources = match value.value {
        Value::Seq(items) => items,
        other => vec![Node {
            at: value.at,
            value: other,
        }],
    };
    for source in sources {
        let Value::Map(source) = source.value else {
            return Err(line_error(
                at,
                "map merge requires map or sequence of maps as the value",
            ));
        };
        for entry in source {
            if keys.insert(entry.0.clone()) {
                merged.push(entry);
            }
        }
    }
    Ok(())
}

/// How many nodes `node` holds, itself included.
fn size(node: &Node) -> usize {
    1 + match &node.value {
        Value::Seq(items) => items.iter().map(size).sum(),
        Value::Map(entries) => entries.iter().map(|(.., v)| 1 + size(v)).sum(),
        _ => 0,
    }
}

/// A scalar's value as sigs.k8s.io/yaml reads it (go-yaml v2, YAML 1.1): quoted and block
/// scalars are strings; a plain one is resolved to null, a boolean, an integer or a float when
/// it spells one, else kept as a string. `!!str` keeps any scalar a string.
fn scalar(
    text: String,
    style: ScalarStyle,
    tag: Option<&Tag>,
    at: Span,
) -> Result<Value, Diagnostic> {
    let core = tag.and_then(Tag::core_suffix);
    match core {
        Some("null") => return Ok(Value::Null),
        Some("bool" | "int" | "float") => {}
        // go-yaml resolves only untagged plain scalars and the core scalar tags: `!`, `!!str`,
        // `!!binary`, `!!timestamp` and tags of one's own keep the text.
        Some(_) => return Ok(Value::Str(text)),
        None if tag.is_some() || style != ScalarStyle::Plain => return Ok(Value::Str(text)),
        None => {}
    }
    let value = resolve_plain(&text);
    let Some(want @ ("bool" | "int" | "float")) = core else {
        return Ok(value.unwrap_or(Value::Str(text)));
    };
    match value {
        Some(v @ Value::Bool(_)) if want == "bool" => Ok(v),
        Some(v @ (Value::Int(_) | Value::Uint(_))) if want != "bool" => Ok(v),
        Some(v @ Value::Float(_)) if want == "float" => Ok(v),
        _ => Err(line_error(
            at,
            format!("cannot decode `{text}` as !!{want}"),
        )),
    }
}

/// go-yaml v2's resolution of a plain scalar: its typed value, or `None` for a string.
fn resolve_plain(text: &str) -> Option<Value> {
    let typed = match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Value::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Value::Bool(false)
        }
        ".nan" | ".NaN" | ".NAN" => Value::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Value::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Value::Float(f64::NEG_INFINITY),
        _ if text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) => {
            let plain = text.replace('_', "");
            match parse_int(&plain) {
                Some(v) => v,
                // Past f64's range Go's ParseFloat fails, and go-yaml keeps the text.
                None if is_float(&plain) => {
                    Value::Float(plain.parse().ok().filter(|f: &f64| f.is_finite())?)
                }
                None => return None,
            }
        }
        _ => return None,
    };
    Some(typed)
}

/// Go's `strconv.ParseInt(s, 0, 64)`, then `ParseUint` for what only fits unsigned: an optional
/// sign, then `0x`, `0o`, `0b` or a leading `0` (octal) picks the base.
fn parse_int(s: &str) -> Option<Value> {
    let (negative, unsigned) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = |p: &str| unsigned.get(..2).is_some_and(|h| h.eq_ignore_ascii_case(p));
    let (radix, digits) = if lower("0x") {
        (16, &unsigned[2..])
    } else if lower("0o") {
        (8, &unsigned[2..])
    } else if lower("0b") {
        (2, &unsigned[2..])
    } else if unsigned.len() > 1 && unsigned.starts_with('0') {
        (8, &unsigned[1..])
    } else {
        (10, unsigned)
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        let v = 0i64.checked_sub_unsigned(magnitude)?;
        Some(Value::Int(v))
    } else {
        Some(i64::try_from(magnitude).map_or(Value::Uint(magnitude), Value::Int))
    }
}

/// go-yaml v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_float(s: &str) -> bool {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let rest = if let Some(frac) = s.strip_prefix('.') {
        let n = digits(frac);
        if n == 0 {
            return false;
        }
        &frac[n..]
    } else {
        let n = digits(s);
        if n == 0 {
            return false;
        }
        let rest = &s[n..];
        match rest.strip_prefix('.') {
            Some(frac) => &frac[digits(frac)..],
            None => rest,
        }
    };
    match rest.strip_prefix(['e', 'E']) {
        None => rest.is_empty(),
        Some(exp) => {
            let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            !exp.is_empty() && digits(exp) == exp.len()
        }
    }
}

/// Parses every non-empty document of a (possibly multi-document) YAML text.
///
/// Errors read like kubectl's client-side conversion errors
/// (`error converting YAML to JSON: yaml: line 7: mapping values are not allowed in this context`)
/// and carry the line and column; the diagnostic's `file` is left empty for the caller to fill.
/// Refuses inputs over [`MAX_INPUT_BYTES`], nested deeper than [`MAX_DEPTH`], with more than
/// [`MAX_NODES`] nodes, [`MAX_ALIASES`] aliases or [`MAX_ALIAS_REPLAY`] nodes copied by them, or
/// more than [`MAX_DOCUMENTS`] documents.
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
    let roots = Builder::new(text).documents()?;
    let mut docs = Vec::with_capacity(roots.len());
    for root in roots {
        let start = root.at;
        let mut spans = BTreeMap::new();
        spans.insert(String::new(), start);
        let value = to_json(root, "", &mut spans)?;
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
    Ok(match node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(b),
        Value::Int(i) => Json::from(i),
        Value::Uint(u) => Json::from(u),
        Value::Float(f) => match serde_json::Number::from_f64(f) {
            Some(n) => Json::Number(n),
            None => {
                // JSON has no infinities or NaN: Go's encoder refuses them in its own words.
                let go = match f {
                    f if f.is_nan() => "NaN",
                    f if f > 0.0 => "+Inf",
                    _ => "-Inf",
                };
                return Err(yaml_error(
                    node.at,
                    format!("json: unsupported value: {go}"),
                ));
            }
        },
        Value::Str(s) => Json::String(s),
        Value::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let p = push_index(path, i);
                spans.insert(p.clone(), item.at);
                out.push(to_json(item, &p, spans)?);
            }
            Json::Array(out)
        }
        Value::Map(entries) => {
            let mut out = serde_json::Map::new();
            for (key, at, value) in entries {
                let p = push_key(path, &key);
                spans.insert(p.clone(), at);
                let v = to_json(value, &p, spans)?;
                out.insert(key, v);
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

/// go-yaml's form of an error with a line: `yaml: line N: <reason>`.
fn line_error(at: Span, reason: impl fmt::Display) -> Diagnostic {
    yaml_error(at, format!("yaml: line {}: {reason}", at.line))
}

/// The parser's error as go-yaml words it: `yaml: line N: <reason>`.
fn scan_error(err: &ScanError) -> Diagnostic {
    line_error(mark_at(err.marker()), reason(err.kind()))
}

/// The parser's reason in libyaml's words, which go-yaml (a port of libyaml) prints, where the
/// two parsers name the same mistake differently: a tab in the indentation, a character no token
/// starts with, a quote or bracket never closed. go-yaml drops libyaml's "while parsing ..."
/// context; so do we. Other texts are the parser's.
fn reason(kind: &ErrorKind) -> String {
    const NO_TOKEN: &str = "found character that cannot start any token";
    match kind {
        ErrorKind::TabInBlockIndentation | ErrorKind::TabInIndentation => NO_TOKEN.into(),
        ErrorKind::UnexpectedCharacter { character } if character.is_control() => {
            // libyaml's reader refuses these before any token; say which one it was.
            let shown = character.escape_default();
            format!("control characters are not allowed (found `{shown}`)")
        }
        ErrorKind::UnexpectedCharacter { .. } => NO_TOKEN.into(),
        ErrorKind::UnclosedQuotedScalar => "found unexpected end of stream".into(),
        ErrorKind::UnclosedFlowCollection { open: '[' } => {
            "did not find expected ',' or ']'".into()
        }
        ErrorKind::UnclosedFlowCollection { .. } => "did not find expected ',' or '}'".into(),
        ErrorKind::RecursionLimitExceeded => format!("exceeded max depth of {MAX_DEPTH}"),
        other => {
            let raw = other.to_string();
            match raw.strip_prefix("while ").and_then(|r| r.split_once(", ")) {
                Some((_, reason)) => reason.to_string(),
                None => raw,
            }
        }
    }
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
            parse_documents(s).as_deref(),
            Ok([YamlDoc { value: Json::String(back), .. }]) if back == s
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
            (
                "a: \"abc\n",
                "1:4: error converting YAML to JSON: yaml: line 1: found unexpected end of stream",
            ),
            (
                "a:\n\tb: 1\n",
                "2:2: error converting YAML to JSON: yaml: line 2: found character that cannot start any token",
            ),
            (
                "a: @x\n",
                "1:4: error converting YAML to JSON: yaml: line 1: found character that cannot start any token",
            ),
            (
                "a: [1, 2\n",
                "1:4: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'",
            ),
            (
                "a: {b: 1\n",
                "1:4: error converting YAML to JSON: yaml: line 1: did not find expected ',' or '}'",
            ),
            (
                "- a\nb: c\n",
                "2:1: error converting YAML to JSON: yaml: line 2: did not find expected '-' indicator",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), want, "for {text:?}");
        }
    }

    #[test]
    fn plain_scalars_resolve_as_go_yaml_v2_resolves_them() {
        let doc = parse_one(
            "hex: 0X1F\nmixed: tRuE\nupper: NULL\nunder: 1_000\noctal: 0o17\nbin: 0b101\nplus: +1\n\
             exp: 1e3\nlead: 08\nbig: 18446744073709551615\nversion: 1.14.2\ndate: 2026-01-01\n\
             huge: 1e999\n",
        );
        assert_eq!(
            doc.value,
            json!({"hex": 31, "mixed": "tRuE", "upper": null, "under": 1000, "octal": 15, "bin": 5,
                   "plus": 1, "exp": 1000.0, "lead": 8.0, "big": 18446744073709551615u64,
                   "version": "1.14.2", "date": "2026-01-01", "huge": "1e999"})
        );
    }

    #[test]
    fn tags_pick_a_type_only_among_yamls_core_ones() {
        let doc = parse_one(
            "str: !!str 1\nint: !!int \"7\"\nmine: !thing 1\nbare: ! 2\nnull_: !!null x\nquoted: \"~\"\n",
        );
        assert_eq!(
            doc.value,
            json!({"str": "1", "int": 7, "mine": "1", "bare": "2", "null_": null, "quoted": "~"})
        );
        assert_eq!(
            err("a: !!int abc\n"),
            "1:10: error converting YAML to JSON: yaml: line 1: cannot decode `abc` as !!int"
        );
    }

    #[test]
    fn keys_are_spelled_as_sigs_k8s_io_yaml_spells_them_in_json() {
        let doc = parse_one("1: a\nyes: b\n010: c\n\"\": d\n1.50: e\n.Inf: h\n'on': i\n");
        assert_eq!(
            doc.value,
            json!({"1": "a", "true": "b", "8": "c", "": "d", "1.50": "e", ".inf": "h", "on": "i"})
        );
        assert_eq!(
            err("a: 1\n~: 2\n"),
            "2:1: error converting YAML to JSON: Unsupported map key of type: %!s(<nil>), key: <nil>, value: 2"
        );
        assert_eq!(
            err("? [a]\n: 1\n"),
            "1:3: error converting YAML to JSON: yaml: invalid map key: []interface {}{…}"
        );
    }

    #[test]
    fn merge_keys_merge_under_the_keys_written_beside_them() {
        let doc = parse_one(
            "base: &b {host: 1, port: 2}\nd:\n  port: 3\n  <<: [*b, {host: 9, path: 5}]\n",
        );
        assert_eq!(
            doc.value,
            json!({"base": {"host": 1, "port": 2}, "d": {"host": 1, "port": 3, "path": 5}})
        );
        let at = |p: &str| doc.spans.get(p).map(|s| (s.line, s.col));
        assert_eq!(at("d.port"), Some((3, 3)));
        // Merged from an alias: where the alias is written.
        assert_eq!(at("d.host"), Some((4, 8)));
        // Merged from a mapping written in place: its key.
        assert_eq!(at("d.path"), Some((4, 22)));
        assert_eq!(
            err("a:\n  <<: 1\n"),
            "2:3: error converting YAML to JSON: yaml: line 2: map merge requires map or sequence of maps as the value"
        );
    }

    #[test]
    fn the_fields_of_an_alias_point_where_the_alias_is_written() {
        let doc = parse_one("a: &x {b: 1}\nc: *x\n");
        assert_eq!(doc.value, json!({"a": {"b": 1}, "c": {"b": 1}}));
        assert_eq!(doc.spans["a.b"], Span { line: 1, col: 8 });
        assert_eq!(doc.spans["c.b"], Span { line: 2, col: 4 });
    }

    #[test]
    fn an_alias_finds_its_anchor_when_anchors_nest_and_repeat_names() {
        let doc = parse_one(
            "outer: &o {inner: &i [1, 2], more: &m x}\ncopy: *o\nlist: *i\nword: *m\nagain: &i 3\nlast: *i\n",
        );
        assert_eq!(doc.value["copy"], json!({"inner": [1, 2], "more": "x"}));
        assert_eq!(doc.value["list"], json!([1, 2]));
        assert_eq!(doc.value["word"], json!("x"));
        // A repeated name means its newest anchor.
        assert_eq!(doc.value["last"], json!(3));
    }

    #[test]
    fn what_json_cannot_hold_is_refused_in_gos_words() {
        assert_eq!(
            err("a: *nope\n"),
            "1:4: error converting YAML to JSON: yaml: unknown anchor 'nope' referenced"
        );
        assert_eq!(
            err("a:\n  b: .inf\n"),
            "2:6: error converting YAML to JSON: json: unsupported value: +Inf"
        );
        assert_eq!(
            err("a: -.Inf\n"),
            "1:4: error converting YAML to JSON: json: unsupported value: -Inf"
        );
        assert_eq!(
            err("a: .NaN\n"),
            "1:4: error converting YAML to JSON: json: unsupported value: NaN"
        );
    }

    #[test]
    fn documents_of_only_comments_are_skipped_and_a_bare_tag_reads_as_an_empty_string() {
        assert!(parse_documents("").unwrap().is_empty());
        assert!(parse_documents("# nothing\n").unwrap().is_empty());
        assert_eq!(parse_one("--- 1\n").value, json!(1));
        assert_eq!(parse_one("--- !\n").value, json!(""));
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
