//! A subset of CEL, the expression language of kro's ResourceGraphDefinitions (`${...}` in YAML
//! strings): pure, deterministic and bounded (nesting depth, evaluation steps), refusing what it
//! leaves out at parse time with a positioned diagnostic.
//!
//! Semantics follow cel-spec's langdef.md and cel-go (which kro runs): heterogeneous equality,
//! no implicit numeric conversions in arithmetic, overflow and division by zero as errors, and
//! `&&`/`||` commutative with respect to errors. See ARCHITECTURE.md for what is in and out.

mod ast;
mod eval;
mod lexer;
mod parser;
pub mod template;
mod value;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

pub use ast::{BinaryOp, Expr, ExprKind, Func, Macro, UnaryOp};
pub use value::{Key, Value};

/// The deepest expression tree the parser builds. cel-spec asks for at least 32 levels; the
/// bound keeps every recursive walk (parse, evaluation, drop) well inside a wasm stack.
pub const MAX_DEPTH: usize = 64;

/// The steps an evaluation may take by default: each node visited is one step, and functions
/// add steps in proportion to the size of what they touch.
pub const COST_LIMIT: u64 = 100_000;

/// The most values (strings count one per 16 bytes) a result may hold once written out.
pub const MAX_RESULT_WEIGHT: u64 = 1_000_000;

/// The root identifiers an expression may read (kro's `schema` and resource ids), as JSON.
pub type Activation = BTreeMap<String, serde_json::Value>;

/// A parse-time finding: where (byte offset, 1-based line and column in characters) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub offset: usize,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at byte `offset` of `src`, with its line and column computed from `src`.
    pub fn at(src: &str, offset: usize, message: impl Into<String>) -> Diagnostic {
        let offset = offset.min(src.len());
        let mut start = offset;
        while !src.is_char_boundary(start) {
            start -= 1;
        }
        let before = &src[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        Diagnostic {
            offset,
            line,
            col,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// An evaluation error, worded as cel-go words it where it has words for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub message: String,
    /// Byte offset of the node that failed in the parsed source (in the whole string for a
    /// template), so that a learner sees which part of a long expression went wrong.
    pub offset: Option<usize>,
}

impl EvalError {
    pub fn new(message: impl Into<String>) -> EvalError {
        EvalError {
            message: message.into(),
            offset: None,
        }
    }

    /// The error as a positioned finding in `src`, the text it was parsed from.
    pub fn to_diagnostic(&self, src: &str) -> Diagnostic {
        Diagnostic::at(src, self.offset.unwrap_or(0), self.message.clone())
    }

    /// The cost limit ends an evaluation outright: `false && <too costly>` must not hide it.
    fn is_cost_limit(&self) -> bool {
        self.message.starts_with("evaluation cost limit")
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}

/// The message for a construct outside the subset.
pub(crate) fn unsupported(src: &str, offset: usize, what: &str) -> Diagnostic {
    Diagnostic::at(
        src,
        offset,
        format!("{what} not supported by this playground's CEL subset"),
    )
}

/// Parses `src`, refusing syntax errors and anything outside the subset with a position.
pub fn parse(src: &str) -> Result<Expr, Diagnostic> {
    parser::parse(src)
}

/// Evaluates `expr` over `activation` within [`COST_LIMIT`] steps.
pub fn eval(expr: &Expr, activation: &Activation) -> Result<Value, EvalError> {
    eval_with_limit(expr, activation, COST_LIMIT)
}

/// Evaluates `expr` within `limit` steps; exceeding it is an error naming the limit.
pub fn eval_with_limit(
    expr: &Expr,
    activation: &Activation,
    limit: u64,
) -> Result<Value, EvalError> {
    let value = eval::Evaluator::new(activation, limit).eval(expr)?;
    // Lists share their elements, so a result cheap to build can be huge to write out.
    if value::weight_exceeds(&value, &mut { MAX_RESULT_WEIGHT }) {
        return Err(EvalError::new(format!(
            "result too large: more than {MAX_RESULT_WEIGHT} values"
        )));
    }
    Ok(value)
}
