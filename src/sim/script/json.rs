//! JSON in and out: `JSON.stringify` with JavaScript's rules (undefined and functions omitted,
//! NaN as null, `toJSON`), and the conversions to and from the host's `serde_json` values,
//! which always copy so that a script can never alias the host's data.

use std::rc::Rc;

use super::interp::{Ctrl, Res, Run};
use super::value::*;

/// How deep a value may nest when written or read; deeper is a RangeError, as a real engine's
/// stack would give, instead of a native stack overflow.
const MAX_JSON_DEPTH: usize = 120;

pub(crate) fn stringify(r: &mut Run, v: &Value, indent: &str) -> Res<Option<String>> {
    let mut out = String::new();
    let mut seen = Vec::new();
    let wrote = write(r, v, indent, &mut seen, &mut out)?;
    Ok(wrote.then_some(out))
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn newline(indent: &str, level: usize, out: &mut String) {
    if !indent.is_empty() {
        out.push('\n');
        for _ in 0..level {
            out.push_str(indent);
        }
    }
}

/// Writes `v`; returns false when it has no JSON form (undefined, functions).
fn write(r: &mut Run, v: &Value, indent: &str, seen: &mut Vec<Obj>, out: &mut String) -> Res<bool> {
    r.tick(1)?;
    if out.len() > r.vm.limits.memory_bytes {
        return Err(Ctrl::Fatal(super::RunError::Memory {
            bytes: r.vm.limits.memory_bytes,
        }));
    }
    match v {
        Value::Undef => return Ok(false),
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Num(n) if n.is_finite() => out.push_str(&number_to_string(*n)),
        Value::Num(_) => out.push_str("null"),
        Value::Str(s) => quote(s, out),
        Value::Obj(o) => {
            if v.is_callable() {
                return Ok(false);
            }
            if let Kind::Date(t) = o.borrow().kind {
                match super::builtins::iso_string(t) {
                    Some(s) => quote(&s, out),
                    None => out.push_str("null"),
                }
                return Ok(true);
            }
            if seen.iter().any(|s| Rc::ptr_eq(s, o)) {
                return Err(r.type_error("Converting circular structure to JSON"));
            }
            if seen.len() >= MAX_JSON_DEPTH {
                return Err(r.error("RangeError", "Maximum call stack size exceeded"));
            }
            let level = seen.len() + 1;
            seen.push(o.clone());
            let items = match &o.borrow().kind {
                Kind::Array(items) => Some(items.clone()),
                _ => None,
            };
            if let Some(items) = items {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(indent, level, out);
                    if !write(r, item, indent, seen, out)? {
                        out.push_str("null");
                    }
                }
                if !items.is_empty() {
                    newline(indent, level - 1, out);
                }
                out.push(']');
            } else {
                let is_error = matches!(o.borrow().kind, Kind::Error(_));
                let keys: Vec<Rc<str>> = match &o.borrow().kind {
                    Kind::Plain | Kind::Error(_) => ordered_keys(&o.borrow().props),
                    _ => Vec::new(),
                };
                out.push('{');
                let mut first = true;
                for k in keys {
                    if is_error && &*k == "message" {
                        continue;
                    }
                    let item = r.get(v, &k)?;
                    let mark = out.len();
                    if !first {
                        out.push(',');
                    }
                    newline(indent, level, out);
                    quote(&k, out);
                    out.push(':');
                    if !indent.is_empty() {
                        out.push(' ');
                    }
                    if write(r, &item, indent, seen, out)? {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                if !first {
                    newline(indent, level - 1, out);
                }
                out.push('}');
            }
            seen.pop();
        }
    }
    Ok(true)
}

/// A script value as the host sees it: what `JSON.stringify` would give, read back (undefined
/// becomes null).
pub(crate) fn to_serde(r: &mut Run, v: &Value) -> Res<serde_json::Value> {
    let Some(text) = stringify(r, v, "")? else {
        return Ok(serde_json::Value::Null);
    };
    match serde_json::from_str(&text) {
        Ok(v) => Ok(v),
        Err(_) => Err(r.error(
            "RangeError",
            "the value nests too deeply to pass to the host",
        )),
    }
}

/// A host value as a fresh script value (deep copy).
pub(crate) fn from_json(r: &mut Run, v: &serde_json::Value) -> Res<Value> {
    from_json_at(r, v, 0)
}

fn from_json_at(r: &mut Run, v: &serde_json::Value, depth: usize) -> Res<Value> {
    if depth > MAX_JSON_DEPTH {
        return Err(r.error("RangeError", "Maximum call stack size exceeded"));
    }
    r.tick(1)?;
    Ok(match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Num(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => r.new_str(s.clone())?,
        serde_json::Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for i in items {
                out.push(from_json_at(r, i, depth + 1)?);
            }
            r.new_array(out)?
        }
        serde_json::Value::Object(map) => {
            let mut props = Vec::with_capacity(map.len());
            for (k, v) in map {
                props.push((Rc::from(k.as_str()), from_json_at(r, v, depth + 1)?));
            }
            r.new_plain(props)?
        }
    })
}
