//! The playground's `kubeloop.dev/v1alpha1` `Controller` document: a learner's controller, read with positioned errors, its JavaScript checked where it was written.
//!
//! ```yaml
//! apiVersion: kubeloop.dev/v1alpha1
//! kind: Controller
//! metadata: {name: website}
//! spec:
//!   for: {apiVersion: example.com/v1, kind: Website}
//!   owns: [{apiVersion: apps/v1, kind: Deployment}]
//!   watches: []
//!   resyncPeriod: 30s
//!   language: javascript
//!   source: |
//!     function reconcile(req, ctx) { ... }
//! ```
//!
//! Errors read as the API server's strict field validation reads them (`unknown field
//! "spec.foo"`, `spec.language: Unsupported value: ...`), and a syntax error in `source` is
//! reported at its line and column in the YAML file, mapped through the block scalar.

use serde_json::Value as Json;

use super::yaml::{Span, YamlDoc};
use crate::sim::api::types::{Kind, Millis};

/// The `kind` of the document.
pub const CONTROLLER_KIND: &str = "Controller";

/// A kind the document names by `apiVersion` and `kind` (`for`, `owns`, `watches`), matched by
/// group and kind as the REST mapper matches an ownerReference, so a CRD applied after the
/// controller still serves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeName {
    pub api_version: String,
    pub kind: String,
}

impl TypeName {
    fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }

    /// Whether `kind` is this type.
    pub fn is(&self, kind: Kind) -> bool {
        kind.as_str() == self.kind && kind.group() == self.group()
    }

    /// The kind, once the API serves it.
    pub fn resolve(&self) -> Option<Kind> {
        Kind::of_type(&self.api_version, &self.kind)
    }

    /// Whether a learner's word names this type as kubectl would take it: the kind in any case,
    /// its plural or singular, a built-in kind's short names, alone or with the group
    /// (`Deployment`, `deployments`, `deploy`, `deployments.apps`, `sts`). A custom kind's short
    /// names are its CustomResourceDefinition's, which a controller's cache does not hold.
    pub fn named_by(&self, word: &str) -> bool {
        let lower = word.to_ascii_lowercase();
        let (name, group) = match lower.split_once('.') {
            Some((n, g)) => (n, Some(g)),
            None => (lower.as_str(), None),
        };
        if group.is_some_and(|g| g != self.group()) {
            return false;
        }
        let kind = self.kind.to_ascii_lowercase();
        let resolved = self.resolve();
        let plural = resolved.map(|k| k.plural().to_string());
        let short = resolved.is_some_and(|k| {
            Kind::from_resource_name(name) == Some(k)
                || crate::sim::api::openapi::stored_kinds()
                    .iter()
                    .any(|(ck, r)| {
                        Kind::Custom(*ck) == k && r.short_names.iter().any(|s| s == name)
                    })
        });
        name == kind || plural.as_deref() == Some(name) || short
    }
}

/// Why a `Controller` document is refused where no engine is installed: the page loads its
/// engine before it applies or opens a text with one, so a learner meets this only when that
/// download failed.
pub const NO_ENGINE: &str =
    "this page could not load the JavaScript engine that runs Controller documents: reload the page to try again";

/// Whether `text` looks like it holds a `Controller` document: what tells the page to load its
/// engine before it decodes the text. A false positive only costs that download.
pub fn mentioned_in(text: &str) -> bool {
    text.contains("kubeloop.dev/")
        && text.lines().any(|l| {
            let l = l.trim_end();
            l == "kind: Controller" || l == "kind: \"Controller\"" || l == "kind: 'Controller'"
        })
}

/// Where line `line`, column `column` of `source`, run by the Controller named `name`, is in
/// `text`: only if the file's document for it holds that very source (an edited one would put
/// the mark on other code).
pub fn position_in(text: &str, name: &str, source: &str, line: u32, column: u32) -> Option<Span> {
    let docs = super::yaml::parse_documents(text).ok()?;
    let doc = docs.iter().find(|d| {
        d.value.get("kind").and_then(Json::as_str) == Some("Controller")
            && d.value.pointer("/metadata/name").and_then(Json::as_str) == Some(name)
            && d.value.pointer("/spec/source").and_then(Json::as_str) == Some(source)
    })?;
    Some(source_position(doc, text, line, column))
}

/// A `Controller` document, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerDoc {
    pub name: String,
    pub primary: TypeName,
    pub owns: Vec<TypeName>,
    pub watches: Vec<TypeName>,
    pub resync: Option<Millis>,
    /// `spec.source` as written (the engine accepted it).
    pub source: String,
}

/// One problem with a document, where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub span: Span,
    pub field: Option<String>,
    pub message: String,
}

/// The supported `spec.language`s.
const LANGUAGES: [&str; 1] = ["javascript"];

/// Reads a `Controller` document; `text` is the whole file (to find where `source`'s lines
/// start, for positions inside it).
pub fn read(doc: &YamlDoc, text: &str) -> Result<ControllerDoc, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut problem = |path: &str, message: String| {
        problems.push(Problem {
            span: doc.span_of(path),
            field: Some(path.to_string()).filter(|p| !p.is_empty()),
            message,
        });
    };
    let v = &doc.value;
    unknown_fields(
        v,
        "",
        &["apiVersion", "kind", "metadata", "spec"],
        &mut problem,
    );
    let meta = v.get("metadata").cloned().unwrap_or(Json::Null);
    unknown_fields(
        &meta,
        "metadata",
        &["name", "namespace", "labels", "annotations"],
        &mut problem,
    );
    let name = meta
        .get("name")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        problem(
            "metadata.name",
            "metadata.name: Required value: name is required".into(),
        );
    } else {
        for msg in crate::sim::api::validation::is_dns1123_label(&name) {
            problem(
                "metadata.name",
                format!("metadata.name: Invalid value: {name:?}: {msg}"),
            );
        }
    }
    let spec = v.get("spec").cloned().unwrap_or(Json::Null);
    unknown_fields(
        &spec,
        "spec",
        &[
            "for",
            "owns",
            "watches",
            "resyncPeriod",
            "language",
            "source",
        ],
        &mut problem,
    );
    let primary = match spec.get("for") {
        None | Some(Json::Null) => {
            problem(
                "spec.for",
                "spec.for: Required value: the kind whose objects this controller reconciles"
                    .into(),
            );
            None
        }
        Some(t) => type_name(t, "spec.for", &mut problem),
    };
    let list = |field: &str, problem: &mut dyn FnMut(&str, String)| -> Vec<TypeName> {
        match spec.get(field) {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, t)| type_name(t, &format!("spec.{field}[{i}]"), problem))
                .collect(),
            Some(_) => {
                problem(
                    &format!("spec.{field}"),
                    format!("spec.{field}: Invalid value: a list of {{apiVersion, kind}}"),
                );
                Vec::new()
            }
        }
    };
    let owns = list("owns", &mut problem);
    let watches = list("watches", &mut problem);
    let resync = match spec.get("resyncPeriod") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => match crate::sim::time::parse_duration(s) {
            Ok(ms) if ms >= 1_000 => Some(ms),
            Ok(_) => {
                problem(
                    "spec.resyncPeriod",
                    format!("spec.resyncPeriod: Invalid value: {s:?}: must be at least 1s"),
                );
                None
            }
            Err(e) => {
                problem(
                    "spec.resyncPeriod",
                    format!("spec.resyncPeriod: Invalid value: {s:?}: {e}"),
                );
                None
            }
        },
        Some(other) => {
            problem(
                "spec.resyncPeriod",
                format!("spec.resyncPeriod: Invalid value: {other}: a duration such as \"30s\""),
            );
            None
        }
    };
    match spec.get("language") {
        None | Some(Json::Null) => {}
        Some(Json::String(l)) if LANGUAGES.contains(&l.as_str()) => {}
        Some(other) => problem(
            "spec.language",
            format!("spec.language: Unsupported value: {other}: supported values: \"javascript\""),
        ),
    }
    let source = match spec.get("source") {
        Some(Json::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Json::String(_)) | None | Some(Json::Null) => {
            problem("spec.source", "spec.source: Required value: the controller's JavaScript, with a function reconcile(req, ctx)".into());
            None
        }
        Some(_) => {
            problem(
                "spec.source",
                "spec.source: Invalid value: a string (write it as a block: `source: |`)".into(),
            );
            None
        }
    };
    let mut checked = None;
    if let Some(src) = &source {
        match crate::sim::script::engine::installed().map(|e| e.check(src)) {
            None => problems.push(Problem {
                span: doc.span_of("kind"),
                field: Some("kind".into()),
                message: NO_ENGINE.into(),
            }),
            Some(Ok(functions)) if !functions.iter().any(|f| f == "reconcile") => problems
                .push(Problem {
                span: doc.span_of("spec.source"),
                field: Some("spec.source".into()),
                message:
                    "spec.source: Invalid value: the source defines no function reconcile(req, ctx)"
                        .into(),
            }),
            Some(Ok(_)) => checked = Some(()),
            Some(Err(d)) => problems.push(Problem {
                span: source_position(doc, text, d.line, d.column),
                field: Some("spec.source".into()),
                message: format!("spec.source: {}", d.message),
            }),
        }
    }
    match (problems.is_empty(), primary, source, checked) {
        (true, Some(primary), Some(source), Some(())) => Ok(ControllerDoc {
            name,
            primary,
            owns,
            watches,
            resync,
            source,
        }),
        _ => Err(problems),
    }
}

fn unknown_fields(v: &Json, at: &str, known: &[&str], problem: &mut dyn FnMut(&str, String)) {
    let Some(map) = v.as_object() else { return };
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            problem(&path, format!("unknown field {path:?}"));
        }
    }
}

fn type_name(v: &Json, at: &str, problem: &mut dyn FnMut(&str, String)) -> Option<TypeName> {
    unknown_fields(v, at, &["apiVersion", "kind"], problem);
    let field = |f: &str| v.get(f).and_then(Json::as_str).filter(|s| !s.is_empty());
    match (field("apiVersion"), field("kind")) {
        (Some(api_version), Some(kind)) => Some(TypeName {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        }),
        (None, _) => {
            problem(
                &format!("{at}.apiVersion"),
                format!("{at}.apiVersion: Required value"),
            );
            None
        }
        (_, None) => {
            problem(&format!("{at}.kind"), format!("{at}.kind: Required value"));
            None
        }
    }
}

/// Where line `line`, column `column` of `spec.source` sits in the file: for a block scalar
/// (`source: |`) its text starts on the line after the key, indented; otherwise the key's
/// position is the best there is.
pub fn source_position(doc: &YamlDoc, text: &str, line: u32, column: u32) -> Span {
    let key = doc.span_of("spec.source");
    let lines: Vec<&str> = text.lines().collect();
    let key_line = lines
        .get(key.line.saturating_sub(1) as usize)
        .copied()
        .unwrap_or("");
    let after_key = key_line
        .chars()
        .skip(key.col.saturating_sub(1) as usize)
        .collect::<String>();
    let block = after_key
        .split_once(':')
        .map(|(_, rest)| rest.trim_start())
        .is_some_and(|rest| rest.starts_with('|') || rest.starts_with('>'));
    if !block {
        return key;
    }
    // The block's indentation is that of its first non-empty line.
    let first = key.line as usize; // 0-based index of the line after the key
    let indent = lines
        .iter()
        .skip(first)
        .find(|l| !l.trim().is_empty())
        .map(|l| l.chars().take_while(|c| *c == ' ').count())
        .unwrap_or(0) as u32;
    Span {
        line: key.line + line,
        col: indent + column,
    }
}
