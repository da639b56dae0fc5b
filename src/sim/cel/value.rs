//! CEL's runtime values, their JSON conversions, and CEL's equality, ordering and `string()` form.

use std::cmp::Ordering;
use std::rc::Rc;

use super::EvalError;
use crate::vec_map::VecMap;

/// Deeper JSON than this is refused rather than converted, so conversion recursion stays bounded.
pub const MAX_JSON_DEPTH: usize = 128;

/// A CEL value. Lists and maps are shared (`Rc`) because selection and macros hand the same
/// sub-values around many times; copying them would make cost quadratic.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Rc<str>),
    List(Rc<Vec<Value>>),
    Map(Rc<VecMap<Key, Value>>),
}

/// A map key: CEL allows only these four types.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Bool(bool),
    Int(i64),
    Uint(u64),
    String(Rc<str>),
}

impl Key {
    pub fn to_value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::String(s) => Value::String(s.clone()),
        }
    }

    /// The key a value stands for, if it can be one (an integral double finds an int key, as
    /// heterogeneous equality has it).
    pub fn from_value(v: &Value) -> Result<Key, EvalError> {
        Ok(match v {
            Value::Bool(b) => Key::Bool(*b),
            Value::Int(i) => Key::Int(*i),
            Value::Uint(u) => Key::Uint(*u),
            Value::String(s) => Key::String(s.clone()),
            other => {
                return Err(EvalError::new(format!(
                    "unsupported key type: {}",
                    other.type_name()
                )))
            }
        })
    }
}

/// Looks `key` up in `map`, treating int and uint keys of the same number as equal.
pub fn map_get<'m>(map: &'m VecMap<Key, Value>, key: &Value) -> Option<&'m Value> {
    let direct = Key::from_value(key).ok().and_then(|k| map.get(&k));
    if direct.is_some() {
        return direct;
    }
    let n = match key {
        Value::Int(i) => Some(*i as i128),
        Value::Uint(u) => Some(*u as i128),
        Value::Double(d) if d.fract() == 0.0 && d.abs() < 2e19 => Some(*d as i128),
        _ => None,
    }?;
    if let Ok(i) = i64::try_from(n) {
        if let Some(v) = map.get(&Key::Int(i)) {
            return Some(v);
        }
    }
    u64::try_from(n).ok().and_then(|u| map.get(&Key::Uint(u)))
}

impl Value {
    pub fn string(s: &str) -> Value {
        Value::String(Rc::from(s))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items))
    }

    /// CEL's name for the value's type, as messages print it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Map(_) => "map",
        }
    }

    /// Reads JSON as CEL does: integers are ints (uints past `i64::MAX`, so nothing is lost),
    /// other numbers doubles, objects string-keyed maps.
    pub fn from_json(json: &serde_json::Value) -> Result<Value, EvalError> {
        from_json_at(json, 0)
    }

    /// Writes the value as JSON. Map keys become strings; a double that is not finite has no
    /// JSON form and is an error.
    pub fn to_json(&self) -> Result<serde_json::Value, EvalError> {
        use serde_json::Value as J;
        Ok(match self {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Uint(u) => J::from(*u),
            Value::Double(d) => serde_json::Number::from_f64(*d)
                .map(J::Number)
                .ok_or_else(|| EvalError::new(format!("{} has no JSON form", format_double(*d))))?,
            Value::String(s) => J::String(s.to_string()),
            Value::List(items) => {
                J::Array(items.iter().map(Value::to_json).collect::<Result<_, _>>()?)
            }
            Value::Map(m) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m.iter() {
                    let key = match k {
                        Key::String(s) => s.to_string(),
                        other => to_cel_string(&other.to_value())?,
                    };
                    out.insert(key, v.to_json()?);
                }
                J::Object(out)
            }
        })
    }
}

fn from_json_at(json: &serde_json::Value, depth: usize) -> Result<Value, EvalError> {
    use serde_json::Value as J;
    if depth > MAX_JSON_DEPTH {
        return Err(EvalError::new(format!(
            "value nested more than {MAX_JSON_DEPTH} levels deep"
        )));
    }
    Ok(match json {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                Value::Uint(u)
            } else {
                Value::Double(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        J::String(s) => Value::string(s),
        J::Array(items) => Value::list(
            items
                .iter()
                .map(|i| from_json_at(i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(m) => {
            let mut out = VecMap::new();
            for (k, v) in m {
                out.insert(
                    Key::String(Rc::from(k.as_str())),
                    from_json_at(v, depth + 1)?,
                );
            }
            Value::Map(Rc::new(out))
        }
    })
}

/// Compares two numbers of any numeric types exactly (no rounding through `f64`); `None` for a
/// non-number or NaN.
pub fn compare_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Uint(x), Value::Uint(y)) => Some(x.cmp(y)),
        (Value::Int(x), Value::Uint(y)) => Some((*x as i128).cmp(&(*y as i128))),
        (Value::Uint(x), Value::Int(y)) => Some((*x as i128).cmp(&(*y as i128))),
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Double(y)) => cmp_int_double(*x as i128, *y),
        (Value::Uint(x), Value::Double(y)) => cmp_int_double(*x as i128, *y),
        (Value::Double(x), Value::Int(y)) => cmp_int_double(*y as i128, *x).map(Ordering::reverse),
        (Value::Double(x), Value::Uint(y)) => cmp_int_double(*y as i128, *x).map(Ordering::reverse),
        _ => None,
    }
}

fn cmp_int_double(i: i128, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d >= u64::MAX as f64 {
        return Some(Ordering::Less);
    }
    if d < i64::MIN as f64 {
        return Some(Ordering::Greater);
    }
    let t = d.trunc();
    match i.cmp(&(t as i128)) {
        Ordering::Equal => 0.0f64.partial_cmp(&(d - t)),
        o => Some(o),
    }
}

/// CEL's heterogeneous equality (numbers compare by value across types, values of different
/// types are unequal rather than an error, NaN equals nothing), spending one unit of `budget` per value visited (and one per 16 bytes of
/// string), giving `None` once it runs out: lists share their elements, so a cheaply built
/// value can be exponentially large to walk.
pub fn equals_within(a: &Value, b: &Value, budget: &mut u64) -> Option<bool> {
    *budget = budget.checked_sub(1)?;
    Some(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => {
            *budget = budget.checked_sub((x.len() / 16) as u64)?;
            x == y
        }
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (p, q) in x.iter().zip(y.iter()) {
                if !equals_within(p, q, budget)? {
                    return Some(false);
                }
            }
            true
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (k, v) in x.iter() {
                match map_get(y, &k.to_value()) {
                    Some(w) if equals_within(v, w, budget)? => {}
                    _ => return Some(false),
                }
            }
            true
        }
        _ => compare_numbers(a, b) == Some(Ordering::Equal),
    })
}

/// Whether walking `v` in full (as JSON conversion does) visits more than `limit` units, counted
/// as [`equals_within`] counts them; stops counting as soon as it knows.
pub fn weight_exceeds(v: &Value, limit: &mut u64) -> bool {
    let Some(left) = limit.checked_sub(1) else {
        return true;
    };
    *limit = left;
    match v {
        Value::String(s) => match limit.checked_sub((s.len() / 16) as u64) {
            Some(left) => {
                *limit = left;
                false
            }
            None => true,
        },
        Value::List(items) => items.iter().any(|i| weight_exceeds(i, limit)),
        Value::Map(m) => m.values().any(|i| weight_exceeds(i, limit)),
        _ => false,
    }
}

/// CEL's `string()` of a scalar; lists, maps and null have no overload.
pub fn to_cel_string(v: &Value) -> Result<String, EvalError> {
    Ok(match v {
        Value::String(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => format_double(*d),
        other => {
            return Err(EvalError::new(format!(
                "no such overload: string({})",
                other.type_name()
            )))
        }
    })
}

/// A double as cel-go prints it (Go's `%g`: shortest digits, exponent form below 1e-4 and from
/// 1e6 on, `+Inf`, `NaN`; cel-go formats with `%g`).
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // The shortest round-tripping digits, as Go's `-1` precision gives them: serde_json writes
    // them with ryu (`1e20`, `1.5e-7`, `0.001`, `123.0`), which the crate links anyway, where
    // Rust's `{:e}` would link a second float formatter.
    let Some(text) = serde_json::Number::from_f64(d.abs()).map(|n| n.to_string()) else {
        return "NaN".to_string();
    };
    let (mantissa, e) = text.split_once(['e', 'E']).unwrap_or((&text, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let first = all.find(|c: char| c != '0').unwrap_or(0);
    let exp = int.len() as i32 - 1 - first as i32 + e;
    let digits = all[first..].trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits }.to_string();
    let sign = if d < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let n = digits.len() as i32;
    let body = if exp < 0 {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    } else if exp + 1 >= n {
        format!("{digits}{}", "0".repeat((exp + 1 - n) as usize))
    } else {
        let (int, frac) = digits.split_at((exp + 1) as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}
