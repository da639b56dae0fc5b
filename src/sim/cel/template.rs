//! kro's string templates: a YAML string split into literal text and `${expr}` parts, evaluated
//! to the expression's own value when the string is one expression, else to interpolated text.

use super::value::{to_cel_string, Value};
use super::{Activation, Diagnostic, EvalError, Expr};
use crate::sort::StableSort;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Literal(String),
    /// An expression; `offset` is where its source starts (after `${`) in the whole string.
    Expr {
        offset: usize,
        source: String,
        expr: Expr,
    },
}

/// A parsed template string.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub parts: Vec<Part>,
}

/// Splits `s` into literal and `${...}` parts and parses each expression. The closing `}` is
/// found by tracking braces and quoted strings, so `${ {"a": "}"}["a"] }` is one expression.
/// Diagnostics are positioned in `s`.
pub fn parse(s: &str) -> Result<Template, Diagnostic> {
    let mut parts = Vec::new();
    let mut rest_start = 0;
    while let Some(found) = s[rest_start..].find("${") {
        let dollar = rest_start + found;
        if dollar > rest_start {
            parts.push(Part::Literal(s[rest_start..dollar].to_string()));
        }
        let start = dollar + 2;
        let end = closing_brace(s, start).ok_or_else(|| {
            Diagnostic::at(s, dollar, "unterminated '${': missing its closing '}'")
        })?;
        let source = &s[start..end];
        let expr =
            super::parse(source).map_err(|d| Diagnostic::at(s, start + d.offset, d.message))?;
        parts.push(Part::Expr {
            offset: start,
            source: source.to_string(),
            expr,
        });
        rest_start = end + 1;
    }
    if rest_start < s.len() {
        parts.push(Part::Literal(s[rest_start..].to_string()));
    }
    Ok(Template { parts })
}

/// The offset of the `}` that closes an expression starting at `start`.
fn closing_brace(s: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = s[start..].char_indices();
    while let Some((i, c)) = chars.next() {
        match quote {
            Some(q) => {
                if c == '\\' {
                    chars.next();
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '{' => depth += 1,
                '}' if depth == 0 => return Some(start + i),
                '}' => depth -= 1,
                _ => {}
            },
        }
    }
    None
}

impl Template {
    /// Whether the string holds no expression at all.
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// The identifier paths all the expressions read, sorted and deduplicated.
    pub fn references(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = self
            .parts
            .iter()
            .flat_map(|p| match p {
                Part::Expr { expr, .. } => expr.references(),
                Part::Literal(_) => Vec::new(),
            })
            .collect();
        out.stable_sort();
        out.dedup();
        out
    }

    /// A string that is exactly one `${...}` evaluates to that expression's value (an int stays
    /// an int); otherwise each value is written into the text in its `string()` form, and a
    /// list, map or null there is an error.
    pub fn eval(&self, activation: &Activation) -> Result<Value, EvalError> {
        // Expression offsets are relative to the expression; errors report them in the string.
        let shift = |offset: usize| {
            move |mut e: EvalError| {
                e.offset = e.offset.map(|o| o + offset);
                e
            }
        };
        if let [Part::Expr { expr, offset, .. }] = self.parts.as_slice() {
            return super::eval(expr, activation).map_err(shift(*offset));
        }
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Literal(text) => out.push_str(text),
                Part::Expr {
                    expr,
                    source,
                    offset,
                } => {
                    let v = super::eval(expr, activation).map_err(shift(*offset))?;
                    match v {
                        Value::List(_) | Value::Map(_) | Value::Null => {
                            let mut e = EvalError::new(format!(
                                "${{{source}}} is a {}, which cannot be interpolated into a string",
                                v.type_name()
                            ));
                            e.offset = Some(*offset);
                            return Err(e);
                        }
                        other => out.push_str(&to_cel_string(&other)?),
                    }
                }
            }
        }
        Ok(Value::string(&out))
    }
}
