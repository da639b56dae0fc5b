//! From manifest text to validated, defaulted objects, with diagnostics that say what and where.

use std::fmt;

/// How serious a [`Diagnostic`] is: errors drop the document, warnings and infos keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// One finding about the input, positioned at the line and column it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub severity: Severity,
    pub message: String,
    pub field: Option<String>,
}

impl fmt::Display for Diagnostic {
    /// `FILE:LINE:COL: message`, the shape editors and compilers use.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
    }
}

// ---- TEMPORARY stand-in below (the input-layer engineer replaces it; keep these names) ----

use super::types::{Kind, Object};
use super::yaml::{self, Span, YamlDoc};

/// One decoded object and where its document starts.
#[derive(Clone, Debug)]
pub struct DecodedObject {
    pub object: Object,
    pub span: Span,
    pub doc_index: usize,
}

/// Everything decoded from one file.
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    pub objects: Vec<DecodedObject>,
    pub scenario: Option<(serde_json::Value, YamlDoc)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Decodes every document of a manifest file.
pub fn decode_manifests(file: &str, text: &str) -> Decoded {
    let mut out = Decoded::default();
    let docs = match yaml::parse_documents(text) {
        Ok(d) => d,
        Err(mut d) => {
            d.file = file.to_string();
            out.diagnostics.push(d);
            return out;
        }
    };
    for (i, doc) in docs.into_iter().enumerate() {
        let kind_s = doc.value.get("kind").and_then(|k| k.as_str()).unwrap_or("").to_string();
        if kind_s == "Scenario" {
            out.scenario = Some((doc.value.clone(), doc));
            continue;
        }
        let err = |m: String| Diagnostic { file: file.into(), line: doc.start.line, col: doc.start.col, severity: Severity::Error, message: m, field: None };
        let Some(kind) = Kind::from_kind_str(&kind_s) else {
            out.diagnostics.push(err(format!("no matches for kind \"{kind_s}\"")));
            continue;
        };
        match Object::from_json(kind, doc.value.clone()) {
            Ok(mut o) => {
                super::admission::apply_defaults(&mut o);
                out.objects.push(DecodedObject { object: o, span: doc.start, doc_index: i });
            }
            Err(e) => out.diagnostics.push(err(e.to_string())),
        }
    }
    out
}
