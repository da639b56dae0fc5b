//! JavaScript values: primitives, shared mutable objects, and the conversions (number to string
//! above all) that must give the same bytes on every platform.

use std::cell::RefCell;
use std::rc::Rc;

use super::ast::{ClassDef, FuncDef};

pub(crate) type Obj = Rc<RefCell<Object>>;
pub(crate) type Env = Rc<RefCell<Scope>>;

#[derive(Clone, Debug, Default)]
pub(crate) enum Value {
    #[default]
    Undef,
    Null,
    Bool(bool),
    Num(f64),
    Str(Rc<str>),
    Obj(Obj),
}

#[derive(Debug, Default)]
pub(crate) struct Object {
    pub kind: Kind,
    /// Own properties in insertion order; listings put integer-like keys first, as JS does.
    pub props: Vec<(Rc<str>, Value)>,
    pub proto: Option<Obj>,
}

#[derive(Debug)]
pub(crate) struct Closure {
    pub def: Rc<FuncDef>,
    pub env: Env,
    /// The object whose prototype `super.m` reads: a class's prototype for its methods.
    pub home: Option<Obj>,
}

#[derive(Debug)]
pub(crate) struct Class {
    pub def: Rc<ClassDef>,
    pub env: Env,
    pub parent: Option<Value>,
    pub proto: Obj,
}

#[derive(Debug, Default)]
pub(crate) enum Kind {
    #[default]
    Plain,
    Array(Vec<Value>),
    Closure(Closure),
    Class(Class),
    /// A built-in function or namespace by its global name (`"Math.floor"`, `"Map"`).
    Native(&'static str),
    /// A built-in method read off a value (`arr.push`), with the value it was read from.
    Bound(Value, Rc<str>),
    /// An object served by the host: each method call goes to [`super::Host::call`].
    Host(Rc<str>),
    Map(Vec<(Value, Value)>),
    Set(Vec<Value>),
    Date(f64),
    /// An error object of this constructor name; `message` is an own property.
    Error(Rc<str>),
}

#[derive(Debug, Default)]
pub(crate) struct Scope {
    pub vars: Vec<Binding>,
    pub parent: Option<Env>,
}

#[derive(Debug)]
pub(crate) struct Binding {
    pub name: Rc<str>,
    pub value: Value,
    pub mutable: bool,
    /// False between the start of a `let`/`const`/`class` binding's block and its
    /// declaration: the temporal dead zone, where reading it is a ReferenceError.
    pub ready: bool,
}

/// What a dropped object or scope still holds, released one by one from a work list so that a
/// chain of a million nested arrays built by a loop cannot overflow the stack when it goes.
enum Garbage {
    V(Value),
    E(Env),
    O(Obj),
}

impl Object {
    fn drain(&mut self, out: &mut Vec<Garbage>) {
        out.extend(
            std::mem::take(&mut self.props)
                .into_iter()
                .map(|(_, v)| Garbage::V(v)),
        );
        if let Some(p) = self.proto.take() {
            out.push(Garbage::O(p));
        }
        match std::mem::take(&mut self.kind) {
            Kind::Array(items) | Kind::Set(items) => out.extend(items.into_iter().map(Garbage::V)),
            Kind::Map(entries) => {
                for (k, v) in entries {
                    out.push(Garbage::V(k));
                    out.push(Garbage::V(v));
                }
            }
            Kind::Closure(c) => {
                out.push(Garbage::E(c.env));
                if let Some(h) = c.home {
                    out.push(Garbage::O(h));
                }
            }
            Kind::Class(c) => {
                out.push(Garbage::E(c.env));
                out.push(Garbage::O(c.proto));
                if let Some(p) = c.parent {
                    out.push(Garbage::V(p));
                }
            }
            Kind::Bound(v, _) => out.push(Garbage::V(v)),
            _ => {}
        }
    }
}

impl Scope {
    fn drain(&mut self, out: &mut Vec<Garbage>) {
        out.extend(
            std::mem::take(&mut self.vars)
                .into_iter()
                .map(|b| Garbage::V(b.value)),
        );
        if let Some(p) = self.parent.take() {
            out.push(Garbage::E(p));
        }
    }
}

fn release(mut stack: Vec<Garbage>) {
    while let Some(g) = stack.pop() {
        match g {
            Garbage::V(Value::Obj(o)) | Garbage::O(o) => {
                if let Ok(cell) = Rc::try_unwrap(o) {
                    cell.into_inner().drain(&mut stack);
                }
            }
            Garbage::E(e) => {
                if let Ok(cell) = Rc::try_unwrap(e) {
                    cell.into_inner().drain(&mut stack);
                }
            }
            Garbage::V(_) => {}
        }
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.drain(&mut stack);
        if !stack.is_empty() {
            release(stack);
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.drain(&mut stack);
        if !stack.is_empty() {
            release(stack);
        }
    }
}

pub(crate) fn new_obj(kind: Kind, props: Vec<(Rc<str>, Value)>) -> Value {
    Value::Obj(Rc::new(RefCell::new(Object {
        kind,
        props,
        proto: None,
    })))
}

pub(crate) fn str_val(s: &str) -> Value {
    Value::Str(s.into())
}

impl Value {
    pub fn is_nullish(&self) -> bool {
        matches!(self, Value::Undef | Value::Null)
    }

    pub fn truthy(&self) -> bool {
        match self {
            Value::Undef | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Num(n) => *n != 0.0 && !n.is_nan(),
            Value::Str(s) => !s.is_empty(),
            Value::Obj(_) => true,
        }
    }

    pub fn is_callable(&self) -> bool {
        match self {
            Value::Obj(o) => matches!(
                o.borrow().kind,
                Kind::Closure(_) | Kind::Class(_) | Kind::Native(_) | Kind::Bound(..)
            ),
            _ => false,
        }
    }

    pub fn type_of(&self) -> &'static str {
        match self {
            Value::Undef => "undefined",
            Value::Null => "object",
            Value::Bool(_) => "boolean",
            Value::Num(_) => "number",
            Value::Str(_) => "string",
            Value::Obj(_) if self.is_callable() => "function",
            Value::Obj(_) => "object",
        }
    }
}

/// `===`.
pub(crate) fn strict_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Undef, Value::Undef) | (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Num(x), Value::Num(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Obj(x), Value::Obj(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// SameValueZero: `===` except that NaN equals NaN (`includes`, Map and Set keys).
pub(crate) fn same_value_zero(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Num(x), Value::Num(y)) if x.is_nan() && y.is_nan() => true,
        _ => strict_eq(a, b),
    }
}

/// JavaScript's Number::toString(10): the shortest digits that round-trip (Rust's formatting,
/// which is the same on every target), laid out by ECMA-262's rules for exponents.
pub(crate) fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n == 0.0 {
        return "0".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sign = if n < 0.0 { "-" } else { "" };
    let e = format!("{:e}", n.abs());
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let k = digits.len() as i32;
    let point = exp + 1; // the decimal point sits after `point` digits
    let body = if k <= point && point <= 21 {
        format!("{digits}{}", "0".repeat((point - k) as usize))
    } else if 0 < point && point <= 21 {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let e = point - 1;
        let es = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        if k == 1 {
            format!("{digits}e{es}")
        } else {
            format!("{}.{}e{es}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// ToNumber of a string: JavaScript's StringNumericLiteral, not Rust's float grammar (which
/// would accept `inf` and `nan`).
pub(crate) fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if t.is_empty() {
        return 0.0;
    }
    let lower = t.to_ascii_lowercase();
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = lower.strip_prefix(prefix) {
            if rest.is_empty() {
                return f64::NAN;
            }
            let mut v = 0.0;
            for c in rest.chars() {
                match c.to_digit(radix) {
                    Some(d) => v = v * radix as f64 + d as f64,
                    None => return f64::NAN,
                }
            }
            return v;
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let ok = unsigned
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && unsigned
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.')
        && unsigned != ".";
    if !ok {
        return f64::NAN;
    }
    t.parse().unwrap_or(f64::NAN)
}

/// ToInt32, for the bitwise operators.
pub(crate) fn to_int32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    n.trunc().rem_euclid(4294967296.0) as u32 as i32
}

/// `**` and `Math.pow`: integer exponents by repeated squaring, others through the pure-Rust
/// `libm::pow`, so every target gives the same bits (the platform's `powf` is not the same
/// code natively and in wasm), with JavaScript's special cases.
pub(crate) fn js_pow(base: f64, exp: f64) -> f64 {
    if exp.is_nan() || (base.abs() == 1.0 && exp.is_infinite()) {
        return f64::NAN;
    }
    if exp == 0.0 {
        return 1.0;
    }
    if exp.fract() == 0.0 && exp.abs() <= 64.0 && base.is_finite() {
        let mut result = 1.0;
        let mut b = base;
        let mut e = exp.abs() as u32;
        while e > 0 {
            if e & 1 == 1 {
                result *= b;
            }
            b *= b;
            e >>= 1;
        }
        return if exp < 0.0 { 1.0 / result } else { result };
    }
    libm::pow(base, exp)
}

/// A key that names an array index (`"0"`, `"12"`, not `"01"`).
pub(crate) fn array_index(key: &str) -> Option<usize> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|&n| n < u32::MAX as u64)
        .map(|n| n as usize)
}

/// Own keys in JavaScript's order: integer-like keys ascending, then the rest as inserted.
pub(crate) fn ordered_keys(props: &[(Rc<str>, Value)]) -> Vec<Rc<str>> {
    let mut ints: Vec<(usize, Rc<str>)> = props
        .iter()
        .filter_map(|(k, _)| array_index(k).map(|i| (i, k.clone())))
        .collect();
    ints.sort_by_key(|(i, _)| *i);
    let mut out: Vec<Rc<str>> = ints.into_iter().map(|(_, k)| k).collect();
    out.extend(
        props
            .iter()
            .filter(|(k, _)| array_index(k).is_none())
            .map(|(k, _)| k.clone()),
    );
    out
}

pub(crate) fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The UTF-16 code units `from..to` of `s` (clamped) as a string.
pub(crate) fn utf16_slice(s: &str, from: usize, to: usize) -> String {
    if s.is_ascii() {
        let to = to.min(s.len());
        return s.get(from.min(to)..to).unwrap_or("").to_string();
    }
    let units: Vec<u16> = s.encode_utf16().collect();
    let to = to.min(units.len());
    String::from_utf16_lossy(&units[from.min(to)..to])
}

/// Compares two strings by UTF-16 code units, as `<` does.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}
