//! The interpreter: walks a parsed [`Expr`] over an activation, counting steps against a cost
//! limit, with CEL's error semantics (errors are values; `&&`, `||` and the quantifier macros
//! absorb an error when the other side decides the result).

use std::cmp::Ordering;
use std::rc::Rc;

use super::ast::{BinaryOp, Expr, ExprKind, Func, Macro, UnaryOp};
use super::value::{
    compare_numbers, equals_within, format_double, map_get, to_cel_string, Key, Value,
};
use super::{Activation, EvalError};
use crate::vec_map::VecMap;

pub(crate) struct Evaluator<'a> {
    activation: &'a Activation,
    roots: VecMap<String, Value>,
    locals: Vec<(String, Value)>,
    steps: u64,
    limit: u64,
}

fn no_overload(what: String) -> EvalError {
    EvalError::new(format!("no such overload: {what}"))
}

impl<'a> Evaluator<'a> {
    pub(crate) fn new(activation: &'a Activation, limit: u64) -> Self {
        Evaluator {
            activation,
            roots: VecMap::new(),
            locals: Vec::new(),
            steps: 0,
            limit,
        }
    }

    /// Adds `n` steps to the running cost, failing once the limit is passed.
    fn charge(&mut self, n: usize) -> Result<(), EvalError> {
        self.steps = self.steps.saturating_add(n as u64);
        if self.steps > self.limit {
            return Err(self.limit_error());
        }
        Ok(())
    }

    fn limit_error(&self) -> EvalError {
        EvalError::new(format!(
            "evaluation cost limit of {} steps exceeded",
            self.limit
        ))
    }

    /// CEL equality, paid for by the values it visits.
    fn equals(&mut self, a: &Value, b: &Value) -> Result<bool, EvalError> {
        let mut budget = self.limit.saturating_sub(self.steps);
        let start = budget;
        let result = equals_within(a, b, &mut budget);
        self.steps = self.steps.saturating_add(start - budget);
        result.ok_or_else(|| self.limit_error())
    }

    fn lookup(&mut self, name: &str) -> Result<Value, EvalError> {
        if let Some((_, v)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return Ok(v.clone());
        }
        if let Some(v) = self.roots.get(name) {
            return Ok(v.clone());
        }
        let json = self
            .activation
            .get(name)
            .ok_or_else(|| EvalError::new(format!("undeclared reference to '{name}'")))?;
        let v = Value::from_json(json)?;
        self.roots.insert(name.to_string(), v.clone());
        Ok(v)
    }

    /// Evaluates `e`; an error is placed at the innermost node it came from.
    pub(crate) fn eval(&mut self, e: &Expr) -> Result<Value, EvalError> {
        self.eval_node(e).map_err(|mut err| {
            err.offset.get_or_insert(e.offset);
            err
        })
    }

    fn eval_node(&mut self, e: &Expr) -> Result<Value, EvalError> {
        self.charge(1)?;
        match &e.kind {
            ExprKind::Null => Ok(Value::Null),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Int(i) => Ok(Value::Int(*i)),
            ExprKind::Uint(u) => Ok(Value::Uint(*u)),
            ExprKind::Double(d) => Ok(Value::Double(*d)),
            ExprKind::Str(s) => Ok(Value::string(s)),
            ExprKind::Ident(name) => self.lookup(name),
            ExprKind::Select {
                operand,
                field,
                test,
            } => {
                let v = self.eval(operand)?;
                match v {
                    Value::Map(m) => {
                        let found = m.get(&Key::String(Rc::from(field.as_str())));
                        match (found, test) {
                            (found, true) => Ok(Value::Bool(found.is_some())),
                            (Some(v), false) => Ok(v.clone()),
                            (None, false) => Err(EvalError::new(format!("no such key: {field}"))),
                        }
                    }
                    other => Err(EvalError::new(format!(
                        "type '{}' does not support field selection",
                        other.type_name()
                    ))),
                }
            }
            ExprKind::Index(operand, index) => {
                let v = self.eval(operand)?;
                let i = self.eval(index)?;
                index_value(&v, &i)
            }
            ExprKind::Unary(op, operand) => {
                let v = self.eval(operand)?;
                unary(*op, v)
            }
            ExprKind::Binary(BinaryOp::And, a, b) => self.logic(a, b, false),
            ExprKind::Binary(BinaryOp::Or, a, b) => self.logic(a, b, true),
            ExprKind::Binary(op, a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                self.binary(*op, x, y)
            }
            ExprKind::Conditional(c, t, f) => match self.eval(c)? {
                Value::Bool(true) => self.eval(t),
                Value::Bool(false) => self.eval(f),
                other => Err(no_overload(format!("{} ? _ : _", other.type_name()))),
            },
            ExprKind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.eval(i)?);
                }
                Ok(Value::list(out))
            }
            ExprKind::Map(entries) => {
                let mut out = VecMap::new();
                for (k, v) in entries {
                    let key = Key::from_value(&self.eval(k)?)?;
                    let value = self.eval(v)?;
                    if map_get(&out, &key.to_value()).is_some() {
                        let shown = to_cel_string(&key.to_value())?;
                        return Err(EvalError::new(format!(
                            "repeated key in map literal: {shown}"
                        )));
                    }
                    out.insert(key, value);
                }
                Ok(Value::Map(Rc::new(out)))
            }
            ExprKind::Call(func, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a)?);
                }
                self.call(*func, &values)
            }
            ExprKind::Comprehension {
                kind,
                range,
                var,
                filter,
                transform,
            } => self.comprehension(*kind, range, var, filter.as_deref(), transform),
        }
    }

    /// `&&` (`decisive` false) and `||` (`decisive` true): the decisive value on either side wins
    /// over an error or a non-bool on the other, so the operators commute with respect to errors.
    fn logic(&mut self, a: &Expr, b: &Expr, decisive: bool) -> Result<Value, EvalError> {
        let op = if decisive { "||" } else { "&&" };
        let as_bool = |r: Result<Value, EvalError>| match r {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(no_overload(format!("{} {op} _", other.type_name()))),
            Err(e) => Err(e),
        };
        let left = as_bool(self.eval(a));
        if let Err(e) = &left {
            if e.is_cost_limit() {
                return Err(e.clone());
            }
        }
        if left == Ok(decisive) {
            return Ok(Value::Bool(decisive));
        }
        let right = as_bool(self.eval(b));
        if let Err(e) = &right {
            if e.is_cost_limit() {
                return Err(e.clone());
            }
        }
        if right == Ok(decisive) {
            return Ok(Value::Bool(decisive));
        }
        left?;
        right?;
        Ok(Value::Bool(!decisive))
    }

    fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Result<Value, EvalError> {
        let cmp = |want: fn(Ordering) -> bool, sym: &str| -> Result<Value, EvalError> {
            let ord = match (&a, &b) {
                (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
                (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
                _ => match compare_numbers(&a, &b) {
                    Some(o) => Some(o),
                    None if is_number(&a) && is_number(&b) => None,
                    None => {
                        return Err(no_overload(format!(
                            "{} {sym} {}",
                            a.type_name(),
                            b.type_name()
                        )))
                    }
                },
            };
            Ok(Value::Bool(ord.is_some_and(want)))
        };
        match op {
            BinaryOp::Eq => Ok(Value::Bool(self.equals(&a, &b)?)),
            BinaryOp::Ne => Ok(Value::Bool(!self.equals(&a, &b)?)),
            BinaryOp::Lt => cmp(|o| o == Ordering::Less, "<"),
            BinaryOp::Le => cmp(|o| o != Ordering::Greater, "<="),
            BinaryOp::Gt => cmp(|o| o == Ordering::Greater, ">"),
            BinaryOp::Ge => cmp(|o| o != Ordering::Less, ">="),
            BinaryOp::In => match &b {
                Value::List(items) => {
                    for i in items.iter() {
                        if self.equals(&a, i)? {
                            return Ok(Value::Bool(true));
                        }
                    }
                    Ok(Value::Bool(false))
                }
                Value::Map(m) => Ok(Value::Bool(map_get(m, &a).is_some())),
                other => Err(no_overload(format!(
                    "{} in {}",
                    a.type_name(),
                    other.type_name()
                ))),
            },
            BinaryOp::Add => {
                match (&a, &b) {
                    (Value::String(x), Value::String(y)) => {
                        self.charge((x.len() + y.len()) / 16)?;
                        return Ok(Value::string(&format!("{x}{y}")));
                    }
                    (Value::List(x), Value::List(y)) => {
                        self.charge(x.len() + y.len())?;
                        let mut out = Vec::with_capacity(x.len() + y.len());
                        out.extend(x.iter().cloned());
                        out.extend(y.iter().cloned());
                        return Ok(Value::list(out));
                    }
                    _ => {}
                }
                arithmetic(op, &a, &b)
            }
            _ => arithmetic(op, &a, &b),
        }
    }

    fn comprehension(
        &mut self,
        kind: Macro,
        range: &Expr,
        var: &str,
        filter: Option<&Expr>,
        transform: &Expr,
    ) -> Result<Value, EvalError> {
        let items: Vec<Value> = match self.eval(range)? {
            Value::List(items) => items.iter().cloned().collect(),
            Value::Map(m) => m.keys().map(Key::to_value).collect(),
            other => {
                return Err(no_overload(format!(
                    "{}.{}(...)",
                    other.type_name(),
                    macro_name(kind)
                )))
            }
        };
        let mut out = Vec::new();
        let mut count = 0usize;
        let mut deferred: Option<EvalError> = None;
        for item in items {
            self.charge(1)?;
            self.locals.push((var.to_string(), item.clone()));
            let result = self.iteration(kind, filter, transform);
            self.locals.pop();
            if kind == Macro::Map {
                if let Some(v) = result? {
                    out.push(v);
                }
                continue;
            }
            let result = result.map(|o| o.unwrap_or(Value::Null));
            match kind {
                Macro::All | Macro::Exists => {
                    let decisive = kind == Macro::Exists;
                    match result {
                        Ok(Value::Bool(b)) if b == decisive => return Ok(Value::Bool(decisive)),
                        Ok(Value::Bool(_)) => {}
                        Ok(other) => {
                            deferred.get_or_insert(no_overload(format!(
                                "{}(bool expected, got {})",
                                macro_name(kind),
                                other.type_name()
                            )));
                        }
                        Err(e) if e.is_cost_limit() => return Err(e),
                        Err(e) => {
                            deferred.get_or_insert(e);
                        }
                    }
                }
                Macro::ExistsOne => match result? {
                    Value::Bool(true) => count += 1,
                    Value::Bool(false) => {}
                    other => {
                        return Err(no_overload(format!(
                            "exists_one(bool expected, got {})",
                            other.type_name()
                        )))
                    }
                },
                Macro::Filter => match result? {
                    Value::Bool(true) => out.push(item),
                    Value::Bool(false) => {}
                    other => {
                        return Err(no_overload(format!(
                            "filter(bool expected, got {})",
                            other.type_name()
                        )))
                    }
                },
                Macro::Map => {}
            }
        }
        match kind {
            Macro::All | Macro::Exists => match deferred {
                Some(e) => Err(e),
                None => Ok(Value::Bool(kind == Macro::All)),
            },
            Macro::ExistsOne => Ok(Value::Bool(count == 1)),
            Macro::Filter | Macro::Map => Ok(Value::list(out)),
        }
    }

    /// One step of a comprehension; `map` yields `None` for an element its filter drops.
    fn iteration(
        &mut self,
        kind: Macro,
        filter: Option<&Expr>,
        transform: &Expr,
    ) -> Result<Option<Value>, EvalError> {
        if kind == Macro::Map {
            if let Some(f) = filter {
                match self.eval(f)? {
                    Value::Bool(true) => {}
                    Value::Bool(false) => return Ok(None),
                    other => {
                        return Err(no_overload(format!(
                            "map(bool filter expected, got {})",
                            other.type_name()
                        )))
                    }
                }
            }
        }
        self.eval(transform).map(Some)
    }

    fn call(&mut self, func: Func, args: &[Value]) -> Result<Value, EvalError> {
        let bad = || {
            let types: Vec<&str> = args.iter().map(Value::type_name).collect();
            no_overload(format!("{}({})", func.name(), types.join(", ")))
        };
        let cost: usize = args
            .iter()
            .map(|a| match a {
                Value::String(s) => s.len() / 16,
                Value::List(l) => l.len(),
                _ => 0,
            })
            .sum();
        self.charge(cost)?;
        let arg = |i: usize| args.get(i).ok_or_else(bad);
        let text = |i: usize| match args.get(i) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(bad()),
        };
        let int = |i: usize| match args.get(i) {
            Some(Value::Int(n)) => Ok(*n),
            _ => Err(bad()),
        };
        match func {
            Func::Size => match arg(0)? {
                Value::String(s) => Ok(Value::Int(s.chars().count() as i64)),
                Value::List(l) => Ok(Value::Int(l.len() as i64)),
                Value::Map(m) => Ok(Value::Int(m.len() as i64)),
                _ => Err(bad()),
            },
            Func::Dyn => Ok(arg(0)?.clone()),
            Func::Int => to_int(arg(0)?).ok_or_else(bad)?,
            Func::Uint => to_uint(arg(0)?).ok_or_else(bad)?,
            Func::Double => match arg(0)? {
                Value::Double(d) => Ok(Value::Double(*d)),
                Value::Int(i) => Ok(Value::Double(*i as f64)),
                Value::Uint(u) => Ok(Value::Double(*u as f64)),
                Value::String(s) => s
                    .parse::<f64>()
                    .map(Value::Double)
                    .map_err(|_| conversion_error("string", "double")),
                _ => Err(bad()),
            },
            Func::String => to_cel_string(arg(0)?).map(|s| Value::string(&s)),
            Func::Bool => match arg(0)? {
                Value::Bool(b) => Ok(Value::Bool(*b)),
                Value::String(s) => match &**s {
                    "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(Value::Bool(true)),
                    "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(Value::Bool(false)),
                    _ => Err(conversion_error("string", "bool")),
                },
                _ => Err(bad()),
            },
            Func::Contains => Ok(Value::Bool(text(0)?.contains(&*text(1)?))),
            Func::StartsWith => Ok(Value::Bool(text(0)?.starts_with(&*text(1)?))),
            Func::EndsWith => Ok(Value::Bool(text(0)?.ends_with(&*text(1)?))),
            Func::Matches => {
                let (s, pattern) = (text(0)?, text(1)?);
                let re = crate::sim::api::regexp::compile(&pattern)
                    .map_err(|e| EvalError::new(e.to_string()))?;
                // The Pike VM runs in time proportional to text times pattern.
                self.charge((s.len() + 1).saturating_mul(pattern.len() + 1) / 64)?;
                Ok(Value::Bool(re.is_match(&s)))
            }
            Func::LowerAscii => Ok(Value::string(&text(0)?.to_ascii_lowercase())),
            Func::UpperAscii => Ok(Value::string(&text(0)?.to_ascii_uppercase())),
            Func::Trim => Ok(Value::string(text(0)?.trim())),
            Func::Split => {
                let (s, sep) = (text(0)?, text(1)?);
                let limit = if args.len() > 2 { int(2)? } else { -1 };
                Ok(Value::list(
                    split(&s, &sep, limit)
                        .into_iter()
                        .map(|p| Value::string(&p))
                        .collect(),
                ))
            }
            Func::Join => {
                let Value::List(items) = arg(0)? else {
                    return Err(bad());
                };
                let sep = if args.len() > 1 {
                    text(1)?
                } else {
                    Rc::from("")
                };
                let mut parts = Vec::with_capacity(items.len());
                for i in items.iter() {
                    match i {
                        Value::String(s) => parts.push(s.to_string()),
                        other => {
                            return Err(no_overload(format!(
                                "join(list with {} element)",
                                other.type_name()
                            )))
                        }
                    }
                }
                let total: usize = parts.iter().map(|p| p.len() + sep.len()).sum();
                self.charge(total / 16)?;
                Ok(Value::string(&parts.join(&sep)))
            }
            Func::Replace => {
                let (s, from, to) = (text(0)?, text(1)?, text(2)?);
                let n = if args.len() > 3 { int(3)? } else { -1 };
                // Charged for what it writes: an empty `from` matches between every character.
                let matches = if from.is_empty() {
                    s.chars().count() + 1
                } else {
                    s.matches(&*from).count()
                };
                let matches = usize::try_from(n).map_or(matches, |n| matches.min(n));
                self.charge(matches.saturating_mul(to.len()) / 16)?;
                Ok(Value::string(&match usize::try_from(n) {
                    Ok(n) => s.replacen(&*from, &to, n),
                    Err(_) => s.replace(&*from, &to),
                }))
            }
            Func::Substring => {
                let s = text(0)?;
                let chars: Vec<char> = s.chars().collect();
                let start = int(1)?;
                let end = if args.len() > 2 {
                    int(2)?
                } else {
                    chars.len() as i64
                };
                let len = chars.len() as i64;
                if start < 0 || start > len {
                    return Err(EvalError::new(format!("index out of range: {start}")));
                }
                if end < 0 || end > len {
                    return Err(EvalError::new(format!("index out of range: {end}")));
                }
                if start > end {
                    return Err(EvalError::new(format!(
                        "invalid substring range. start: {start}, end: {end}"
                    )));
                }
                Ok(Value::string(
                    &chars[start as usize..end as usize]
                        .iter()
                        .collect::<String>(),
                ))
            }
            Func::CharAt => {
                let s = text(0)?;
                let i = int(1)?;
                let len = s.chars().count() as i64;
                if i < 0 || i > len {
                    return Err(EvalError::new(format!("index out of range: {i}")));
                }
                Ok(Value::string(
                    &s.chars()
                        .nth(i as usize)
                        .map(String::from)
                        .unwrap_or_default(),
                ))
            }
            Func::IndexOf | Func::LastIndexOf => {
                let (s, sub) = (text(0)?, text(1)?);
                let hay: Vec<char> = s.chars().collect();
                let needle: Vec<char> = sub.chars().collect();
                let len = hay.len() as i64;
                let last = func == Func::LastIndexOf;
                let from = if args.len() > 2 {
                    int(2)?
                } else if last {
                    len
                } else {
                    0
                };
                if from < 0 || from > len {
                    return Err(EvalError::new(format!("index out of range: {from}")));
                }
                self.charge(hay.len().saturating_mul(needle.len()) / 64)?;
                let at = |i: usize| hay.get(i..i + needle.len()) == Some(&needle[..]);
                let from = from as usize;
                let found = if last {
                    (0..=from.min(hay.len().saturating_sub(needle.len())))
                        .rev()
                        .find(|i| at(*i))
                } else {
                    (from..=hay.len()).find(|i| at(*i))
                };
                Ok(Value::Int(found.map_or(-1, |i| i as i64)))
            }
        }
    }
}

/// -2^63 and 2^64, exactly representable, as the bounds of conversions to int and uint.
const TWO_63_NEG: f64 = i64::MIN as f64;
const TWO_64: f64 = u64::MAX as f64;

fn macro_name(kind: Macro) -> &'static str {
    match kind {
        Macro::All => "all",
        Macro::Exists => "exists",
        Macro::ExistsOne => "exists_one",
        Macro::Map => "map",
        Macro::Filter => "filter",
    }
}

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Uint(_) | Value::Double(_))
}

fn conversion_error(from: &str, to: &str) -> EvalError {
    EvalError::new(format!("type conversion error from '{from}' to '{to}'"))
}

fn range_error(v: &Value, to: &str) -> EvalError {
    let shown = match v {
        Value::Double(d) => format_double(*d),
        other => to_cel_string(other).unwrap_or_default(),
    };
    EvalError::new(format!("range error converting {shown} to {to}"))
}

/// `int(x)`; `None` when no overload takes `x`.
fn to_int(v: &Value) -> Option<Result<Value, EvalError>> {
    Some(match v {
        Value::Int(i) => Ok(Value::Int(*i)),
        Value::Uint(u) => i64::try_from(*u)
            .map(Value::Int)
            .map_err(|_| range_error(v, "int")),
        // Both ends are exclusive: -2^63 as a double is exact, but cel-go refuses it too.
        Value::Double(d) if *d > TWO_63_NEG && *d < -TWO_63_NEG => Ok(Value::Int(*d as i64)),
        Value::Double(_) => Err(range_error(v, "int")),
        Value::String(s) => s
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| conversion_error("string", "int")),
        _ => return None,
    })
}

/// `uint(x)`; `None` when no overload takes `x`.
fn to_uint(v: &Value) -> Option<Result<Value, EvalError>> {
    Some(match v {
        Value::Uint(u) => Ok(Value::Uint(*u)),
        Value::Int(i) => u64::try_from(*i)
            .map(Value::Uint)
            .map_err(|_| range_error(v, "uint")),
        // cel-go refuses any negative double, even one that truncates to 0.
        Value::Double(d) if *d >= 0.0 && *d < TWO_64 => Ok(Value::Uint(*d as u64)),
        Value::Double(_) => Err(range_error(v, "uint")),
        Value::String(s) => s
            .parse::<u64>()
            .map(Value::Uint)
            .map_err(|_| conversion_error("string", "uint")),
        _ => return None,
    })
}

fn unary(op: UnaryOp, v: Value) -> Result<Value, EvalError> {
    match (op, &v) {
        (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        (UnaryOp::Neg, Value::Int(i)) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| EvalError::new("integer overflow")),
        (UnaryOp::Neg, Value::Double(d)) => Ok(Value::Double(-d)),
        (UnaryOp::Not, _) => Err(no_overload(format!("!{}", v.type_name()))),
        (UnaryOp::Neg, _) => Err(no_overload(format!("-{}", v.type_name()))),
    }
}

fn index_value(v: &Value, i: &Value) -> Result<Value, EvalError> {
    match v {
        Value::List(items) => {
            let n: i128 = match i {
                Value::Int(n) => *n as i128,
                Value::Uint(n) => *n as i128,
                Value::Double(d) if d.fract() == 0.0 && d.abs() < 1e19 => *d as i128,
                other => {
                    return Err(EvalError::new(format!(
                        "unsupported index type '{}' in list",
                        other.type_name()
                    )))
                }
            };
            usize::try_from(n)
                .ok()
                .and_then(|n| items.get(n))
                .cloned()
                .ok_or_else(|| {
                    EvalError::new(format!(
                        "index '{n}' out of range in list size '{}'",
                        items.len()
                    ))
                })
        }
        Value::Map(m) => {
            if let Value::Null | Value::List(_) | Value::Map(_) = i {
                return Err(EvalError::new(format!(
                    "unsupported key type: {}",
                    i.type_name()
                )));
            }
            map_get(m, i).cloned().ok_or_else(|| {
                let shown = to_cel_string(i).unwrap_or_default();
                EvalError::new(format!("no such key: {shown}"))
            })
        }
        other => Err(no_overload(format!(
            "{}[{}]",
            other.type_name(),
            i.type_name()
        ))),
    }
}

fn arithmetic(op: BinaryOp, a: &Value, b: &Value) -> Result<Value, EvalError> {
    let overflow = || EvalError::new("integer overflow");
    let uoverflow = || EvalError::new("unsigned integer overflow");
    let sym = match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        _ => "%",
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            let (x, y) = (*x, *y);
            let r = match op {
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                BinaryOp::Mul => x.checked_mul(y),
                BinaryOp::Div if y == 0 => return Err(EvalError::new("division by zero")),
                BinaryOp::Div => x.checked_div(y),
                _ if y == 0 => return Err(EvalError::new("modulus by zero")),
                _ => x.checked_rem(y),
            };
            r.map(Value::Int).ok_or_else(overflow)
        }
        (Value::Uint(x), Value::Uint(y)) => {
            let (x, y) = (*x, *y);
            let r = match op {
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                BinaryOp::Mul => x.checked_mul(y),
                BinaryOp::Div if y == 0 => return Err(EvalError::new("division by zero")),
                BinaryOp::Div => x.checked_div(y),
                _ if y == 0 => return Err(EvalError::new("modulus by zero")),
                _ => x.checked_rem(y),
            };
            r.map(Value::Uint).ok_or_else(uoverflow)
        }
        (Value::Double(x), Value::Double(y)) if op != BinaryOp::Rem => {
            Ok(Value::Double(match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                _ => x / y,
            }))
        }
        _ => Err(no_overload(format!(
            "{} {sym} {}",
            a.type_name(),
            b.type_name()
        ))),
    }
}

/// Go's `strings.SplitN`: a negative limit splits everywhere, zero gives nothing, an empty
/// separator splits between characters.
fn split(s: &str, sep: &str, limit: i64) -> Vec<String> {
    if limit == 0 {
        return Vec::new();
    }
    let max = usize::try_from(limit).unwrap_or(usize::MAX);
    if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let mut out: Vec<String> = Vec::new();
        for (i, c) in chars.iter().enumerate() {
            if out.len() + 1 == max {
                out.push(chars[i..].iter().collect());
                return out;
            }
            out.push(c.to_string());
        }
        return out;
    }
    s.splitn(max, sep).map(str::to_string).collect()
}
