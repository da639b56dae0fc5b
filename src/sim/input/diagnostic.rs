//! A finding about the user's input (a manifest, a scenario, a command line), at the line and
//! column it concerns: the YAML reader, the decoder, the session and every printer share it.

use std::fmt;

/// How serious a [`Diagnostic`] is: errors drop the document, warnings and infos keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The document was not loaded.
    Error,
    /// The document was skipped or loaded with a caveat the user should know about.
    Warning,
    /// Loaded as written; says what the simulation will ignore.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// One finding about the input, positioned at the line and column it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file name as the caller gave it (empty for diagnostics straight from `yaml`).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
    /// Whether the document was dropped.
    pub severity: Severity,
    /// What is wrong, in kubectl's or the API server's words.
    pub message: String,
    /// The field path the finding is about (`spec.replicas`), when there is one.
    pub field: Option<String>,
}

impl fmt::Display for Diagnostic {
    /// `FILE:LINE:COL: message`, the shape editors and compilers use.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}
