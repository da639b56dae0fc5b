//! The built-in library a controller author reaches for: Object, Array, String, Number, Math,
//! JSON, Map, Set, Date, the Error constructors, console, and calls into the host's objects.
//! Every loop over a value's size is paid for in steps, every string or array built in bytes.

use std::rc::Rc;

use super::interp::{Ctrl, Res, Run};
use super::value::*;
use crate::sim::api::types::{civil_from_days, days_from_civil};

/// Global names that are built-in functions or namespaces.
const GLOBALS: [&str; 22] = [
    "Object",
    "Array",
    "Math",
    "JSON",
    "Number",
    "String",
    "Boolean",
    "Map",
    "Set",
    "Date",
    "Error",
    "TypeError",
    "RangeError",
    "SyntaxError",
    "ReferenceError",
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "console",
    "structuredClone",
    "Function",
];

/// Static members, by their full name.
const STATICS: [&str; 39] = [
    "Object.keys",
    "Object.values",
    "Object.entries",
    "Object.assign",
    "Object.fromEntries",
    "Object.freeze",
    "Object.isFrozen",
    "Object.hasOwn",
    "Array.isArray",
    "Array.from",
    "Array.of",
    "Number.isInteger",
    "Number.isFinite",
    "Number.isNaN",
    "Number.isSafeInteger",
    "Number.parseFloat",
    "Number.parseInt",
    "Math.floor",
    "Math.ceil",
    "Math.round",
    "Math.abs",
    "Math.min",
    "Math.max",
    "Math.pow",
    "Math.sqrt",
    "Math.trunc",
    "Math.sign",
    "Math.random",
    "Math.hypot",
    "JSON.stringify",
    "JSON.parse",
    "Date.now",
    "Date.parse",
    "String.fromCharCode",
    "console.log",
    "console.error",
    "console.warn",
    "console.info",
    "console.debug",
];

const ARRAY_METHODS: [&str; 35] = [
    "push",
    "pop",
    "shift",
    "unshift",
    "slice",
    "splice",
    "concat",
    "join",
    "indexOf",
    "lastIndexOf",
    "includes",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "filter",
    "map",
    "forEach",
    "reduce",
    "reduceRight",
    "some",
    "every",
    "sort",
    "reverse",
    "flat",
    "flatMap",
    "at",
    "keys",
    "values",
    "entries",
    "fill",
    "toString",
    "toSorted",
    "toReversed",
    "hasOwnProperty",
];

const STRING_METHODS: [&str; 28] = [
    "split",
    "trim",
    "trimStart",
    "trimEnd",
    "startsWith",
    "endsWith",
    "includes",
    "indexOf",
    "lastIndexOf",
    "slice",
    "substring",
    "substr",
    "toUpperCase",
    "toLowerCase",
    "replace",
    "replaceAll",
    "padStart",
    "padEnd",
    "repeat",
    "at",
    "charAt",
    "charCodeAt",
    "codePointAt",
    "concat",
    "localeCompare",
    "toString",
    "valueOf",
    "normalize",
];

const MAP_METHODS: [&str; 10] = [
    "get", "set", "has", "delete", "clear", "keys", "values", "entries", "forEach", "toString",
];
const SET_METHODS: [&str; 9] = [
    "add", "has", "delete", "clear", "keys", "values", "entries", "forEach", "toString",
];
const DATE_METHODS: [&str; 19] = [
    "getTime",
    "valueOf",
    "toISOString",
    "toJSON",
    "toString",
    "getFullYear",
    "getMonth",
    "getDate",
    "getDay",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    "getUTCFullYear",
    "getUTCMonth",
    "getUTCDate",
    "getUTCHours",
    "getUTCMinutes",
    "getUTCSeconds",
];
const NUMBER_METHODS: [&str; 4] = ["toFixed", "toString", "valueOf", "toPrecision"];
const OBJECT_METHODS: [&str; 2] = ["hasOwnProperty", "toString"];
const FUNCTION_METHODS: [&str; 2] = ["call", "apply"];

pub(crate) fn global(name: &str) -> Option<Value> {
    match name {
        "undefined" => return Some(Value::Undef),
        "NaN" => return Some(Value::Num(f64::NAN)),
        "Infinity" => return Some(Value::Num(f64::INFINITY)),
        _ => {}
    }
    GLOBALS
        .iter()
        .find(|g| **g == name && name != "Function")
        .map(|g| new_obj(Kind::Native(g), Vec::new()))
}

pub(crate) fn static_member(ns: &str, key: &str) -> Value {
    match (ns, key) {
        ("Math", "PI") => return Value::Num(std::f64::consts::PI),
        ("Math", "E") => return Value::Num(std::f64::consts::E),
        ("Number", "MAX_SAFE_INTEGER") => return Value::Num(9007199254740991.0),
        ("Number", "MIN_SAFE_INTEGER") => return Value::Num(-9007199254740991.0),
        ("Number", "EPSILON") => return Value::Num(f64::EPSILON),
        ("Number", "MAX_VALUE") => return Value::Num(f64::MAX),
        ("Number", "POSITIVE_INFINITY") => return Value::Num(f64::INFINITY),
        ("Number", "NEGATIVE_INFINITY") => return Value::Num(f64::NEG_INFINITY),
        ("Number", "NaN") => return Value::Num(f64::NAN),
        (_, "name") => return str_val(ns.rsplit('.').next().unwrap_or(ns)),
        _ => {}
    }
    let full = format!("{ns}.{key}");
    STATICS
        .iter()
        .find(|s| **s == full)
        .map(|s| new_obj(Kind::Native(s), Vec::new()))
        .unwrap_or_default()
}

pub(crate) fn method_of(this: &Value, ty: &str, key: &str) -> Value {
    let list: &[&str] = match ty {
        "Array" => &ARRAY_METHODS,
        "String" => &STRING_METHODS,
        "Map" => &MAP_METHODS,
        "Set" => &SET_METHODS,
        "Date" => &DATE_METHODS,
        "Number" => &NUMBER_METHODS,
        "Function" => &FUNCTION_METHODS,
        _ => &OBJECT_METHODS,
    };
    if list.contains(&key) || OBJECT_METHODS.contains(&key) {
        new_obj(Kind::Bound(this.clone(), key.into()), Vec::new())
    } else {
        Value::Undef
    }
}

fn arg(args: &[Value], i: usize) -> Value {
    args.get(i).cloned().unwrap_or_default()
}

/// ToIntegerOrInfinity, then a relative index resolved against `len` as `slice` does.
fn rel_index(r: &mut Run, v: &Value, len: usize, default: usize) -> Res<usize> {
    if matches!(v, Value::Undef) {
        return Ok(default);
    }
    let n = r.num_of(v)?;
    let n = if n.is_nan() { 0.0 } else { n.trunc() };
    Ok(if n < 0.0 {
        (len as f64 + n).max(0.0) as usize
    } else {
        n.min(len as f64) as usize
    })
}

fn int_arg(r: &mut Run, v: &Value) -> Res<f64> {
    let n = r.num_of(v)?;
    Ok(if n.is_nan() { 0.0 } else { n.trunc() })
}

// ---- global and static functions ----

pub(crate) fn call_static(
    r: &mut Run,
    name: &'static str,
    _this: Value,
    args: Vec<Value>,
) -> Res<Value> {
    let a0 = arg(&args, 0);
    Ok(match name {
        "Number" => Value::Num(if args.is_empty() { 0.0 } else { r.num_of(&a0)? }),
        "String" => {
            if args.is_empty() {
                str_val("")
            } else {
                Value::Str(r.str_of(&a0)?)
            }
        }
        "Boolean" => Value::Bool(a0.truthy()),
        "Error" | "TypeError" | "RangeError" | "SyntaxError" | "ReferenceError" => {
            return construct(r, name, args)
        }
        "Map" | "Set" => return Err(r.type_error(format!("Constructor {name} requires 'new'"))),
        "Date" => Value::Str(iso_string(r.now_ms as f64).unwrap_or_default().into()),
        "Object" => {
            if a0.is_nullish() {
                r.new_plain(Vec::new())?
            } else {
                a0
            }
        }
        "Array" => return construct(r, name, args),
        "parseInt" | "Number.parseInt" => {
            let s = r.str_of(&a0)?;
            let radix = match arg(&args, 1) {
                Value::Undef => 0,
                v => int_arg(r, &v)? as i64,
            };
            Value::Num(parse_int(&s, radix))
        }
        "parseFloat" | "Number.parseFloat" => {
            let s = r.str_of(&a0)?;
            Value::Num(parse_float(&s))
        }
        "isNaN" => Value::Bool(r.num_of(&a0)?.is_nan()),
        "isFinite" => Value::Bool(r.num_of(&a0)?.is_finite()),
        "Number.isInteger" => {
            Value::Bool(matches!(a0, Value::Num(n) if n.is_finite() && n.fract() == 0.0))
        }
        "Number.isSafeInteger" => Value::Bool(
            matches!(a0, Value::Num(n) if n.is_finite() && n.fract() == 0.0 && n.abs() <= 9007199254740991.0),
        ),
        "Number.isFinite" => Value::Bool(matches!(a0, Value::Num(n) if n.is_finite())),
        "Number.isNaN" => Value::Bool(matches!(a0, Value::Num(n) if n.is_nan())),
        "Object.keys" | "Object.values" | "Object.entries" => {
            if a0.is_nullish() {
                return Err(r.type_error("Cannot convert undefined or null to object"));
            }
            let keys = r.keys_of(&a0)?;
            let mut out = Vec::with_capacity(keys.len());
            for k in keys {
                out.push(match name {
                    "Object.keys" => Value::Str(k),
                    "Object.values" => r.get(&a0, &k)?,
                    _ => {
                        let v = r.get(&a0, &k)?;
                        r.new_array(vec![Value::Str(k), v])?
                    }
                });
            }
            r.new_array(out)?
        }
        "Object.assign" => {
            let Value::Obj(target) = &a0 else {
                return Err(r.type_error("Cannot convert undefined or null to object"));
            };
            for src in args.iter().skip(1) {
                for k in r.keys_of(src)? {
                    r.tick(1)?;
                    let v = r.get(src, &k)?;
                    r.set(&Value::Obj(target.clone()), k, v)?;
                }
            }
            a0.clone()
        }
        "Object.fromEntries" => {
            let entries = r.iterate(&a0)?;
            let o = r.new_plain(Vec::new())?;
            for e in entries {
                r.tick(1)?;
                let k = r.get(&e, &"0".into())?;
                let v = r.get(&e, &"1".into())?;
                let k = r.key_of(&k)?;
                r.set(&o, k, v)?;
            }
            o
        }
        "Object.freeze" => a0,
        "Object.isFrozen" => Value::Bool(false),
        "Object.hasOwn" => {
            let k = r.key_of(&arg(&args, 1))?;
            return object_method(r, &a0, "hasOwnProperty", vec![Value::Str(k)]);
        }
        "structuredClone" => {
            // A deep copy through JSON: plain data, which is what a controller clones.
            let j = super::json::to_serde(r, &a0)?;
            super::json::from_json(r, &j)?
        }
        "Array.isArray" => {
            Value::Bool(matches!(&a0, Value::Obj(o) if matches!(o.borrow().kind, Kind::Array(_))))
        }
        "Array.of" => r.new_array(args)?,
        "Array.from" => {
            let items = match &a0 {
                Value::Obj(o) if matches!(o.borrow().kind, Kind::Plain) => {
                    let len = r.get(&a0, &"length".into())?;
                    let n = int_arg(r, &len)?.max(0.0);
                    if n > (r.vm.limits.memory_bytes / 16) as f64 {
                        return Err(Ctrl::Fatal(super::RunError::Memory {
                            bytes: r.vm.limits.memory_bytes,
                        }));
                    }
                    let n = n as usize;
                    r.tick(n as u64)?;
                    let mut out = Vec::with_capacity(n);
                    for i in 0..n {
                        out.push(r.get(&a0, &i.to_string().into())?);
                    }
                    out
                }
                _ => r.iterate(&a0)?,
            };
            let f = arg(&args, 1);
            let items = if f.is_callable() {
                let mut out = Vec::with_capacity(items.len());
                for (i, v) in items.into_iter().enumerate() {
                    r.tick(1)?;
                    out.push(r.call(&f, Value::Undef, vec![v, Value::Num(i as f64)])?);
                }
                out
            } else {
                items
            };
            r.new_array(items)?
        }
        "Math.floor" => Value::Num(r.num_of(&a0)?.floor()),
        "Math.ceil" => Value::Num(r.num_of(&a0)?.ceil()),
        "Math.round" => Value::Num(js_round(r.num_of(&a0)?)),
        "Math.abs" => Value::Num(r.num_of(&a0)?.abs()),
        "Math.trunc" => Value::Num(r.num_of(&a0)?.trunc()),
        "Math.sign" => {
            let n = r.num_of(&a0)?;
            Value::Num(if n.is_nan() || n == 0.0 {
                n
            } else {
                n.signum()
            })
        }
        "Math.sqrt" => Value::Num(r.num_of(&a0)?.sqrt()),
        "Math.pow" => {
            let b = r.num_of(&a0)?;
            let e = r.num_of(&arg(&args, 1))?;
            Value::Num(js_pow(b, e))
        }
        "Math.hypot" => {
            let mut s = 0.0;
            for a in &args {
                let n = r.num_of(a)?;
                s += n * n;
            }
            Value::Num(s.sqrt())
        }
        "Math.min" | "Math.max" => {
            let max = name == "Math.max";
            let mut acc = if max {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            for a in &args {
                let n = r.num_of(a)?;
                if n.is_nan() {
                    acc = f64::NAN;
                } else if !acc.is_nan() {
                    let better = if max {
                        n > acc || (n == 0.0 && acc == 0.0 && acc.is_sign_negative())
                    } else {
                        n < acc || (n == 0.0 && acc == 0.0 && n.is_sign_negative())
                    };
                    if better {
                        acc = n;
                    }
                }
            }
            Value::Num(acc)
        }
        "Math.random" => Value::Num(r.vm.rng.unit()),
        "JSON.stringify" => {
            let indent = match arg(&args, 2) {
                Value::Num(n) => " ".repeat(n.clamp(0.0, 10.0) as usize),
                Value::Str(s) => s.chars().take(10).collect(),
                _ => String::new(),
            };
            match super::json::stringify(r, &a0, &indent)? {
                Some(s) => r.new_str(s)?,
                None => Value::Undef,
            }
        }
        "JSON.parse" => {
            let s = r.str_of(&a0)?;
            r.charge(s.len().saturating_mul(16))?;
            match serde_json::from_str::<serde_json::Value>(&s) {
                Ok(v) => super::json::from_json(r, &v)?,
                Err(e) => {
                    return Err(r.error(
                        "SyntaxError",
                        &format!(
                            "Unexpected token in JSON at line {} column {}",
                            e.line(),
                            e.column()
                        ),
                    ))
                }
            }
        }
        "Date.now" => Value::Num(r.now_ms as f64),
        "Date.parse" => {
            let s = r.str_of(&a0)?;
            Value::Num(parse_iso(&s).unwrap_or(f64::NAN))
        }
        "String.fromCharCode" => {
            let mut units = Vec::new();
            for a in &args {
                units.push(to_int32(r.num_of(a)?) as u16);
            }
            r.new_str(String::from_utf16_lossy(&units))?
        }
        "console.log" | "console.error" | "console.warn" | "console.info" | "console.debug" => {
            let mut parts = Vec::new();
            for a in &args {
                parts.push(match a {
                    Value::Str(s) => s.to_string(),
                    Value::Obj(o) if matches!(o.borrow().kind, Kind::Plain | Kind::Array(_)) => {
                        super::json::stringify(r, a, "")?.unwrap_or_default()
                    }
                    other => r.str_of(other)?.to_string(),
                });
            }
            let line = parts.join(" ");
            r.charge(line.len())?;
            let method = name.trim_start_matches("console.");
            if let Err(m) = r
                .host
                .call("console", method, vec![serde_json::Value::String(line)])
            {
                return Err(r.error("Error", &m));
            }
            Value::Undef
        }
        _ => {
            return Err(r.type_error(format!("{name} is not a function")));
        }
    })
}

pub(crate) fn construct(r: &mut Run, name: &str, args: Vec<Value>) -> Res<Value> {
    let a0 = arg(&args, 0);
    Ok(match name {
        "Error" | "TypeError" | "RangeError" | "SyntaxError" | "ReferenceError" => {
            let msg = match a0 {
                Value::Undef => str_val(""),
                v => Value::Str(r.str_of(&v)?),
            };
            r.charge(64)?;
            new_obj(Kind::Error(name.into()), vec![("message".into(), msg)])
        }
        "Map" => {
            let mut entries: Vec<(Value, Value)> = Vec::new();
            if !a0.is_nullish() {
                for e in r.iterate(&a0)? {
                    r.tick(1)?;
                    let k = r.get(&e, &"0".into())?;
                    let v = r.get(&e, &"1".into())?;
                    r.charge(32)?;
                    match entries.iter_mut().find(|(x, _)| same_value_zero(x, &k)) {
                        Some(slot) => slot.1 = v,
                        None => entries.push((k, v)),
                    }
                }
            }
            new_obj(Kind::Map(entries), Vec::new())
        }
        "Set" => {
            let mut items: Vec<Value> = Vec::new();
            if !a0.is_nullish() {
                for v in r.iterate(&a0)? {
                    r.tick(1)?;
                    if !items.iter().any(|x| same_value_zero(x, &v)) {
                        r.charge(16)?;
                        items.push(v);
                    }
                }
            }
            new_obj(Kind::Set(items), Vec::new())
        }
        "Date" => {
            let t = match &a0 {
                Value::Undef if args.is_empty() => r.now_ms as f64,
                Value::Str(s) => parse_iso(s).unwrap_or(f64::NAN),
                Value::Obj(_) => r.num_of(&a0)?,
                _ if args.len() >= 2 => {
                    let mut parts = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
                    for (i, a) in args.iter().take(7).enumerate() {
                        parts[i] = r.num_of(a)?;
                    }
                    // Beyond a billion of any unit the date is out of range anyway; bounding the
                    // parts keeps the integer arithmetic below from overflowing.
                    if parts.iter().any(|p| !p.is_finite() || p.abs() > 1e9) {
                        f64::NAN
                    } else {
                        let days = days_from_civil(
                            parts[0] as i64 + (parts[1] as i64).div_euclid(12),
                            (parts[1] as i64).rem_euclid(12) + 1,
                            1,
                        ) as f64
                            + parts[2]
                            - 1.0;
                        days * 86_400_000.0
                            + parts[3] * 3_600_000.0
                            + parts[4] * 60_000.0
                            + parts[5] * 1000.0
                            + parts[6]
                    }
                }
                other => r.num_of(other)?,
            };
            let t = if t.is_finite() && t.abs() <= 8.64e15 {
                t.trunc()
            } else {
                f64::NAN
            };
            new_obj(Kind::Date(t), Vec::new())
        }
        "Array" => {
            if let (1, Value::Num(n)) = (args.len(), &a0) {
                if n.fract() != 0.0 || *n < 0.0 || *n > u32::MAX as f64 {
                    return Err(r.error("RangeError", "Invalid array length"));
                }
                let n = *n as usize;
                r.charge(n.saturating_mul(16))?;
                return r.new_array(vec![Value::Undef; n]);
            }
            r.new_array(args)?
        }
        "Object" => r.new_plain(Vec::new())?,
        "Number" | "String" | "Boolean" => {
            return Err(r.type_error(format!(
                "new {name}() wrapper objects are not supported; call {name}() without new"
            )))
        }
        _ => return Err(r.type_error(format!("{name} is not a constructor"))),
    })
}

// ---- methods ----

pub(crate) fn call_method(r: &mut Run, this: &Value, m: &str, args: Vec<Value>) -> Res<Value> {
    if let Value::Obj(o) = this {
        let host = match &o.borrow().kind {
            Kind::Host(name) => Some(name.clone()),
            _ => None,
        };
        if let Some(name) = host {
            return host_call(r, &name, m, args);
        }
    }
    match this {
        Value::Str(s) => string_method(r, s, m, args),
        Value::Num(n) => number_method(r, *n, m, args),
        Value::Obj(o) => {
            enum K {
                Array,
                Map,
                Set,
                Date(f64),
                Other,
            }
            let k = match &o.borrow().kind {
                Kind::Array(_) => K::Array,
                Kind::Map(_) => K::Map,
                Kind::Set(_) => K::Set,
                Kind::Date(t) => K::Date(*t),
                _ => K::Other,
            };
            match k {
                K::Array if m != "hasOwnProperty" => array_method(r, o, this, m, args),
                K::Map if m != "toString" => map_method(r, o, m, args),
                K::Set if m != "toString" => set_method(r, o, m, args),
                K::Date(t) => date_method(r, t, m),
                _ => object_method(r, this, m, args),
            }
        }
        _ => object_method(r, this, m, args),
    }
}

fn host_call(r: &mut Run, object: &str, method: &str, args: Vec<Value>) -> Res<Value> {
    let mut json = Vec::with_capacity(args.len());
    for a in &args {
        json.push(super::json::to_serde(r, a)?);
    }
    match r.host.call(object, method, json) {
        Ok(v) => super::json::from_json(r, &v),
        Err(message) => Err(r.error("Error", &message)),
    }
}

fn object_method(r: &mut Run, this: &Value, m: &str, args: Vec<Value>) -> Res<Value> {
    if this.is_callable() && matches!(m, "call" | "apply") {
        let mut args = args.into_iter();
        let this_arg = args.next().unwrap_or_default();
        let rest: Vec<Value> = if m == "call" {
            args.collect()
        } else {
            match args.next() {
                Some(v) if !v.is_nullish() => r.iterate(&v)?,
                _ => Vec::new(),
            }
        };
        return r.call(this, this_arg, rest);
    }
    match m {
        "hasOwnProperty" => {
            let k = r.key_of(&arg(&args, 0))?;
            let Value::Obj(o) = this else {
                return Ok(Value::Bool(false));
            };
            let b = o.borrow();
            let own = b.props.iter().any(|(key, _)| *key == k)
                || matches!(&b.kind, Kind::Array(items) if array_index(&k).is_some_and(|i| i < items.len()));
            Ok(Value::Bool(own))
        }
        "toString" | "valueOf" => Ok(Value::Str(r.str_of(this)?)),
        _ => Err(r.type_error(format!("{m} is not a function"))),
    }
}

fn number_method(r: &mut Run, n: f64, m: &str, args: Vec<Value>) -> Res<Value> {
    match m {
        "toFixed" => {
            let d = int_arg(r, &arg(&args, 0))?;
            if !(0.0..=100.0).contains(&d) {
                return Err(r.error(
                    "RangeError",
                    "toFixed() digits argument must be between 0 and 100",
                ));
            }
            if !n.is_finite() || n.abs() >= 1e21 {
                return Ok(Value::Str(number_to_string(n).into()));
            }
            r.new_str(to_fixed(n, d as usize))
        }
        "toString" => {
            let radix = match arg(&args, 0) {
                Value::Undef => 10.0,
                v => int_arg(r, &v)?,
            };
            if radix == 10.0 || !n.is_finite() {
                return Ok(Value::Str(number_to_string(n).into()));
            }
            if !(2.0..=36.0).contains(&radix) {
                return Err(r.error("RangeError", "toString() radix must be between 2 and 36"));
            }
            if n.fract() != 0.0 || n.abs() > 9007199254740991.0 {
                return Err(r.error(
                    "RangeError",
                    "toString() with a radix is only supported for safe integers here",
                ));
            }
            let mut v = n.abs() as u64;
            let mut digits = Vec::new();
            loop {
                digits.push(
                    std::char::from_digit((v % radix as u64) as u32, radix as u32).unwrap_or('0'),
                );
                v /= radix as u64;
                if v == 0 {
                    break;
                }
            }
            if n < 0.0 {
                digits.push('-');
            }
            Ok(Value::Str(digits.iter().rev().collect::<String>().into()))
        }
        "toPrecision" => Ok(Value::Str(number_to_string(n).into())),
        _ => Ok(Value::Num(n)),
    }
}

fn string_method(r: &mut Run, s: &Rc<str>, m: &str, args: Vec<Value>) -> Res<Value> {
    let a0 = arg(&args, 0);
    let len = utf16_len(s);
    r.tick(1 + (s.len() / 64) as u64)?;
    Ok(match m {
        "toString" | "valueOf" | "normalize" => Value::Str(s.clone()),
        "trim" => Value::Str(s.trim().into()),
        "trimStart" => Value::Str(s.trim_start().into()),
        "trimEnd" => Value::Str(s.trim_end().into()),
        "toUpperCase" => r.new_str(s.to_uppercase())?,
        "toLowerCase" => r.new_str(s.to_lowercase())?,
        "startsWith" | "endsWith" | "includes" => {
            let p = r.str_of(&a0)?;
            Value::Bool(match m {
                "startsWith" => {
                    let from = rel_index(r, &arg(&args, 1), len, 0)?;
                    utf16_slice(s, from, len).starts_with(&*p)
                }
                "endsWith" => {
                    let to = rel_index(r, &arg(&args, 1), len, len)?;
                    utf16_slice(s, 0, to).ends_with(&*p)
                }
                _ => s.contains(&*p),
            })
        }
        "indexOf" | "lastIndexOf" => {
            let p: Vec<u16> = r.str_of(&a0)?.encode_utf16().collect();
            let units: Vec<u16> = s.encode_utf16().collect();
            let found = if p.len() > units.len() {
                None
            } else if m == "indexOf" {
                let from = rel_index(r, &arg(&args, 1), len, 0)?;
                (from..=units.len() - p.len()).find(|&i| units[i..i + p.len()] == p[..])
            } else {
                (0..=units.len() - p.len())
                    .rev()
                    .find(|&i| units[i..i + p.len()] == p[..])
            };
            Value::Num(found.map_or(-1.0, |i| i as f64))
        }
        "slice" => {
            let from = rel_index(r, &a0, len, 0)?;
            let to = rel_index(r, &arg(&args, 1), len, len)?;
            r.new_str(utf16_slice(s, from, to))?
        }
        "substring" => {
            let clamp = |r: &mut Run, v: &Value, d: usize| -> Res<usize> {
                if matches!(v, Value::Undef) {
                    return Ok(d);
                }
                Ok(int_arg(r, v)?.clamp(0.0, len as f64) as usize)
            };
            let a = clamp(r, &a0, 0)?;
            let b = clamp(r, &arg(&args, 1), len)?;
            r.new_str(utf16_slice(s, a.min(b), a.max(b)))?
        }
        "substr" => {
            let from = rel_index(r, &a0, len, 0)?;
            let n = match arg(&args, 1) {
                Value::Undef => len,
                v => int_arg(r, &v)?.max(0.0) as usize,
            };
            r.new_str(utf16_slice(s, from, from.saturating_add(n)))?
        }
        "at" | "charAt" | "charCodeAt" | "codePointAt" => {
            let i = int_arg(r, &a0)?;
            let i = if m == "at" && i < 0.0 {
                len as f64 + i
            } else {
                i
            };
            if i < 0.0 || i >= len as f64 {
                return Ok(match m {
                    "charAt" => str_val(""),
                    "charCodeAt" => Value::Num(f64::NAN),
                    _ => Value::Undef,
                });
            }
            let i = i as usize;
            match m {
                "charCodeAt" | "codePointAt" => {
                    Value::Num(s.encode_utf16().nth(i).map_or(f64::NAN, |u| u as f64))
                }
                _ => Value::Str(utf16_slice(s, i, i + 1).into()),
            }
        }
        "split" => {
            let limit = match arg(&args, 1) {
                Value::Undef => usize::MAX,
                v => int_arg(r, &v)?.max(0.0) as usize,
            };
            let parts: Vec<Value> = match a0 {
                Value::Undef => vec![Value::Str(s.clone())],
                sep => {
                    let sep = r.str_of(&sep)?;
                    // Count first, pay, then build: splitting a long string into characters
                    // makes one string per character.
                    let n = if sep.is_empty() {
                        s.len()
                    } else {
                        s.matches(&*sep).count() + 1
                    };
                    r.tick(n as u64)?;
                    r.charge(n.saturating_mul(48))?;
                    if sep.is_empty() {
                        s.encode_utf16()
                            .map(|u| Value::Str(String::from_utf16_lossy(&[u]).into()))
                            .collect()
                    } else {
                        s.split(&*sep).map(|p| Value::Str(p.into())).collect()
                    }
                }
            };
            let parts: Vec<Value> = parts.into_iter().take(limit).collect();
            r.tick(parts.len() as u64)?;
            r.charge(s.len())?;
            r.new_array(parts)?
        }
        "replace" | "replaceAll" => {
            let pat = r.str_of(&a0)?;
            let with = arg(&args, 1);
            let mut out = String::new();
            let mut rest: &str = s;
            let mut offset = 0usize;
            while let Some(i) = rest.find(&*pat) {
                out.push_str(&rest[..i]);
                let rep = if with.is_callable() {
                    let pos = utf16_len(&s[..offset + i]);
                    let v = r.call(
                        &with,
                        Value::Undef,
                        vec![
                            Value::Str(pat.clone()),
                            Value::Num(pos as f64),
                            Value::Str(s.clone()),
                        ],
                    )?;
                    r.str_of(&v)?
                } else {
                    r.str_of(&with)?
                };
                out.push_str(&rep);
                r.tick(1)?;
                r.charge(rep.len())?;
                let step = i + pat.len();
                if pat.is_empty() {
                    // An empty pattern matches between every character.
                    match rest[i..].chars().next() {
                        Some(c) if m == "replaceAll" => {
                            out.push(c);
                            offset += i + c.len_utf8();
                            rest = &rest[i + c.len_utf8()..];
                            if rest.is_empty() {
                                let rep = r.str_of(&with)?;
                                out.push_str(&rep);
                                break;
                            }
                            continue;
                        }
                        _ => {
                            rest = &rest[i..];
                            break;
                        }
                    }
                }
                offset += step;
                rest = &rest[step..];
                if m == "replace" {
                    break;
                }
            }
            out.push_str(rest);
            r.new_str(out)?
        }
        "padStart" | "padEnd" => {
            let target = int_arg(r, &a0)?;
            let fill = match arg(&args, 1) {
                Value::Undef => " ".into(),
                v => r.str_of(&v)?,
            };
            if target <= len as f64 || fill.is_empty() {
                return Ok(Value::Str(s.clone()));
            }
            let need = target as usize - len;
            r.charge(need)?;
            let pad: String = fill
                .encode_utf16()
                .cycle()
                .take(need)
                .map(|u| u as u8 as char)
                .collect();
            let pad = if fill.is_ascii() {
                pad
            } else {
                let units: Vec<u16> = fill.encode_utf16().cycle().take(need).collect();
                String::from_utf16_lossy(&units)
            };
            r.new_str(if m == "padStart" {
                format!("{pad}{s}")
            } else {
                format!("{s}{pad}")
            })?
        }
        "repeat" => {
            let n = r.num_of(&a0)?;
            if n < 0.0 || n.is_infinite() {
                return Err(r.error(
                    "RangeError",
                    &format!("Invalid count value: {}", number_to_string(n)),
                ));
            }
            let n = if n.is_nan() { 0 } else { n as usize };
            r.charge(s.len().saturating_mul(n))?;
            r.tick((s.len().saturating_mul(n) / 64) as u64)?;
            r.new_str(s.repeat(n))?
        }
        "concat" => {
            let mut out = s.to_string();
            for a in &args {
                out.push_str(&r.str_of(a)?);
            }
            r.new_str(out)?
        }
        "localeCompare" => {
            let o = r.str_of(&a0)?;
            Value::Num(match cmp_utf16(s, &o) {
                std::cmp::Ordering::Less => -1.0,
                std::cmp::Ordering::Equal => 0.0,
                std::cmp::Ordering::Greater => 1.0,
            })
        }
        _ => return Err(r.type_error(format!("{m} is not a function"))),
    })
}

fn items_of(o: &Obj) -> Vec<Value> {
    match &o.borrow().kind {
        Kind::Array(items) => items.clone(),
        _ => Vec::new(),
    }
}

fn with_items<T>(o: &Obj, f: impl FnOnce(&mut Vec<Value>) -> T) -> Option<T> {
    match &mut o.borrow_mut().kind {
        Kind::Array(items) => Some(f(items)),
        _ => None,
    }
}

fn array_method(r: &mut Run, o: &Obj, this: &Value, m: &str, args: Vec<Value>) -> Res<Value> {
    let a0 = arg(&args, 0);
    let len = items_of_len(o);
    r.tick(1)?;
    Ok(match m {
        "push" => {
            r.charge(16 * args.len())?;
            let n = with_items(o, |items| {
                items.extend(args);
                items.len()
            });
            Value::Num(n.unwrap_or(0) as f64)
        }
        "unshift" => {
            r.charge(16 * args.len())?;
            r.tick(len as u64 / 16)?;
            let n = with_items(o, |items| {
                items.splice(0..0, args);
                items.len()
            });
            Value::Num(n.unwrap_or(0) as f64)
        }
        "pop" => with_items(o, |items| items.pop())
            .flatten()
            .unwrap_or_default(),
        "shift" => {
            r.tick(len as u64 / 16)?;
            with_items(o, |items| {
                if items.is_empty() {
                    None
                } else {
                    Some(items.remove(0))
                }
            })
            .flatten()
            .unwrap_or_default()
        }
        "slice" => {
            let from = rel_index(r, &a0, len, 0)?;
            let to = rel_index(r, &arg(&args, 1), len, len)?;
            let items = items_of(o);
            let part = items
                .get(from..to.max(from))
                .map(<[Value]>::to_vec)
                .unwrap_or_default();
            r.tick(part.len() as u64)?;
            r.new_array(part)?
        }
        "splice" => {
            let start = rel_index(r, &a0, len, 0)?;
            let count = match args.len() {
                0 => 0,
                1 => len - start,
                _ => (int_arg(r, &args[1])?.max(0.0) as usize).min(len - start),
            };
            let insert: Vec<Value> = args.into_iter().skip(2).collect();
            r.charge(16 * insert.len())?;
            r.tick(len as u64 / 16 + 1)?;
            // Clamped again: converting the arguments may have run code that shrank the array.
            let removed = with_items(o, |items| {
                let from = start.min(items.len());
                let to = (start + count).min(items.len());
                items.splice(from..to, insert).collect::<Vec<_>>()
            })
            .unwrap_or_default();
            r.new_array(removed)?
        }
        "concat" => {
            let mut out = items_of(o);
            for a in &args {
                match a {
                    Value::Obj(x) if matches!(x.borrow().kind, Kind::Array(_)) => {
                        out.extend(items_of(x))
                    }
                    other => out.push(other.clone()),
                }
            }
            r.tick(out.len() as u64)?;
            r.new_array(out)?
        }
        "join" | "toString" => {
            let sep: Rc<str> = match (m, &a0) {
                ("join", Value::Undef) | ("toString", _) => ",".into(),
                _ => r.str_of(&a0)?,
            };
            if sep.as_ref() == "," {
                return Ok(Value::Str(r.str_of(this)?));
            }
            let mut out = String::new();
            for (i, v) in items_of(o).iter().enumerate() {
                r.tick(1)?;
                if i > 0 {
                    out.push_str(&sep);
                }
                if !v.is_nullish() {
                    out.push_str(&r.str_of(v)?);
                }
                r.charge(sep.len())?;
            }
            r.new_str(out)?
        }
        "indexOf" | "lastIndexOf" | "includes" => {
            let items = items_of(o);
            r.tick(items.len() as u64)?;
            match m {
                "includes" => Value::Bool(items.iter().any(|v| same_value_zero(v, &a0))),
                "indexOf" => {
                    let from = rel_index(r, &arg(&args, 1), len, 0)?;
                    Value::Num(
                        items
                            .iter()
                            .enumerate()
                            .skip(from)
                            .find(|(_, v)| strict_eq(v, &a0))
                            .map_or(-1.0, |(i, _)| i as f64),
                    )
                }
                _ => Value::Num(
                    items
                        .iter()
                        .rposition(|v| strict_eq(v, &a0))
                        .map_or(-1.0, |i| i as f64),
                ),
            }
        }
        "find" | "findIndex" | "findLast" | "findLastIndex" | "filter" | "map" | "forEach"
        | "some" | "every" | "flatMap" => {
            if !a0.is_callable() {
                let d = r.describe(&a0);
                return Err(r.type_error(format!("{d} is not a function")));
            }
            let this_arg = arg(&args, 1);
            let items = items_of(o);
            let mut order: Vec<usize> = (0..items.len()).collect();
            if m.starts_with("findLast") {
                order.reverse();
            }
            let mut out = Vec::new();
            for i in order {
                r.tick(1)?;
                let v = items[i].clone();
                let res = r.call(
                    &a0,
                    this_arg.clone(),
                    vec![v.clone(), Value::Num(i as f64), this.clone()],
                )?;
                match m {
                    "find" | "findLast" if res.truthy() => return Ok(v),
                    "findIndex" | "findLastIndex" if res.truthy() => {
                        return Ok(Value::Num(i as f64))
                    }
                    "some" if res.truthy() => return Ok(Value::Bool(true)),
                    "every" if !res.truthy() => return Ok(Value::Bool(false)),
                    "filter" if res.truthy() => out.push(v),
                    "map" => out.push(res),
                    "flatMap" => match &res {
                        Value::Obj(x) if matches!(x.borrow().kind, Kind::Array(_)) => {
                            out.extend(items_of(x))
                        }
                        _ => out.push(res),
                    },
                    _ => {}
                }
            }
            match m {
                "find" | "findLast" | "forEach" => Value::Undef,
                "findIndex" | "findLastIndex" => Value::Num(-1.0),
                "some" => Value::Bool(false),
                "every" => Value::Bool(true),
                _ => r.new_array(out)?,
            }
        }
        "reduce" | "reduceRight" => {
            if !a0.is_callable() {
                let d = r.describe(&a0);
                return Err(r.type_error(format!("{d} is not a function")));
            }
            let items = items_of(o);
            let mut order: Vec<usize> = (0..items.len()).collect();
            if m == "reduceRight" {
                order.reverse();
            }
            let mut order = order.into_iter();
            let mut acc = if args.len() >= 2 {
                args[1].clone()
            } else {
                match order.next() {
                    Some(i) => items[i].clone(),
                    None => return Err(r.type_error("Reduce of empty array with no initial value")),
                }
            };
            for i in order {
                r.tick(1)?;
                acc = r.call(
                    &a0,
                    Value::Undef,
                    vec![acc, items[i].clone(), Value::Num(i as f64), this.clone()],
                )?;
            }
            acc
        }
        "sort" | "toSorted" => {
            if !a0.is_callable() && !matches!(a0, Value::Undef) {
                return Err(
                    r.type_error("The comparison function must be either a function or undefined")
                );
            }
            let items = items_of(o);
            let sorted = merge_sort(r, items, &a0)?;
            if m == "toSorted" {
                r.new_array(sorted)?
            } else {
                with_items(o, |items| *items = sorted);
                this.clone()
            }
        }
        "reverse" => {
            with_items(o, |items| items.reverse());
            this.clone()
        }
        "toReversed" => {
            let mut items = items_of(o);
            items.reverse();
            r.new_array(items)?
        }
        "flat" => {
            let depth = match a0 {
                Value::Undef => 1.0,
                v => int_arg(r, &v)?,
            };
            let mut out = Vec::new();
            // Work list of (value, remaining depth), so no recursion however deep the nesting.
            let mut stack: Vec<(Value, f64)> =
                items_of(o).into_iter().rev().map(|v| (v, depth)).collect();
            while let Some((v, d)) = stack.pop() {
                r.tick(1)?;
                match &v {
                    Value::Obj(x) if d >= 1.0 && matches!(x.borrow().kind, Kind::Array(_)) => {
                        stack.extend(items_of(x).into_iter().rev().map(|v| (v, d - 1.0)));
                    }
                    _ => out.push(v),
                }
            }
            r.new_array(out)?
        }
        "at" => {
            let i = int_arg(r, &a0)?;
            let i = if i < 0.0 { len as f64 + i } else { i };
            if i < 0.0 || i >= len as f64 {
                Value::Undef
            } else {
                items_of(o).get(i as usize).cloned().unwrap_or_default()
            }
        }
        "fill" => {
            let from = rel_index(r, &arg(&args, 1), len, 0)?;
            let to = rel_index(r, &arg(&args, 2), len, len)?;
            r.tick(len as u64)?;
            with_items(o, |items| {
                for slot in items.iter_mut().take(to).skip(from) {
                    *slot = a0.clone();
                }
            });
            this.clone()
        }
        "keys" => {
            r.tick(len as u64)?;
            r.new_array((0..len).map(|i| Value::Num(i as f64)).collect())?
        }
        "values" => r.new_array(items_of(o))?,
        "entries" => {
            let mut out = Vec::new();
            for (i, v) in items_of(o).into_iter().enumerate() {
                r.tick(1)?;
                out.push(r.new_array(vec![Value::Num(i as f64), v])?);
            }
            r.new_array(out)?
        }
        _ => return Err(r.type_error(format!("{m} is not a function"))),
    })
}

fn items_of_len(o: &Obj) -> usize {
    match &o.borrow().kind {
        Kind::Array(items) => items.len(),
        _ => 0,
    }
}

/// A stable merge sort that tolerates any comparator (a learner's may be inconsistent; the
/// standard library's sort may panic on one). Undefined sorts last, as in JavaScript.
fn merge_sort(r: &mut Run, items: Vec<Value>, cmp: &Value) -> Res<Vec<Value>> {
    let (mut defined, undef): (Vec<Value>, Vec<Value>) =
        items.into_iter().partition(|v| !matches!(v, Value::Undef));
    // Default order compares string forms: computed once per element.
    let keys: Vec<Rc<str>> = if cmp.is_callable() {
        Vec::new()
    } else {
        let mut k = Vec::with_capacity(defined.len());
        for v in &defined {
            k.push(r.str_of(v)?);
        }
        k
    };
    let n = defined.len();
    let mut idx: Vec<usize> = (0..n).collect();
    let mut buf: Vec<usize> = Vec::with_capacity(n);
    let mut width = 1;
    while width < n {
        let mut start = 0;
        buf.clear();
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j) = (start, mid);
            while i < mid && j < end {
                r.tick(1)?;
                // Take from the right only when strictly less: equal elements keep their order.
                let right_first = if cmp.is_callable() {
                    let res = r.call(
                        cmp,
                        Value::Undef,
                        vec![defined[idx[j]].clone(), defined[idx[i]].clone()],
                    )?;
                    let v = r.num_of(&res)?;
                    v < 0.0
                } else {
                    cmp_utf16(&keys[idx[j]], &keys[idx[i]]) == std::cmp::Ordering::Less
                };
                if right_first {
                    buf.push(idx[j]);
                    j += 1;
                } else {
                    buf.push(idx[i]);
                    i += 1;
                }
            }
            buf.extend_from_slice(&idx[i..mid]);
            buf.extend_from_slice(&idx[j..end]);
            start = end;
        }
        std::mem::swap(&mut idx, &mut buf);
        width *= 2;
    }
    let mut slots: Vec<Option<Value>> = defined.drain(..).map(Some).collect();
    let mut out: Vec<Value> = idx
        .into_iter()
        .map(|i| slots[i].take().unwrap_or_default())
        .collect();
    out.extend(undef);
    Ok(out)
}

fn map_method(r: &mut Run, o: &Obj, m: &str, args: Vec<Value>) -> Res<Value> {
    let a0 = arg(&args, 0);
    let entries = match &o.borrow().kind {
        Kind::Map(e) => e.clone(),
        _ => Vec::new(),
    };
    r.tick(1 + entries.len() as u64 / 16)?;
    let pos = entries.iter().position(|(k, _)| same_value_zero(k, &a0));
    let set_entries = |e: Vec<(Value, Value)>| {
        if let Kind::Map(x) = &mut o.borrow_mut().kind {
            *x = e;
        }
    };
    Ok(match m {
        "get" => pos.map(|i| entries[i].1.clone()).unwrap_or_default(),
        "has" => Value::Bool(pos.is_some()),
        "set" => {
            let v = arg(&args, 1);
            if let Kind::Map(x) = &mut o.borrow_mut().kind {
                match pos {
                    Some(i) => x[i].1 = v,
                    None => x.push((normalize_zero(a0), v)),
                }
            }
            if pos.is_none() {
                r.charge(48)?;
            }
            Value::Obj(o.clone())
        }
        "delete" => {
            if let (Some(i), Kind::Map(x)) = (pos, &mut o.borrow_mut().kind) {
                x.remove(i);
            }
            Value::Bool(pos.is_some())
        }
        "clear" => {
            set_entries(Vec::new());
            Value::Undef
        }
        "keys" | "values" | "entries" => {
            let mut out = Vec::new();
            for (k, v) in entries {
                out.push(match m {
                    "keys" => k,
                    "values" => v,
                    _ => r.new_array(vec![k, v])?,
                });
            }
            r.new_array(out)?
        }
        "forEach" => {
            for (k, v) in entries {
                r.tick(1)?;
                r.call(&a0, Value::Undef, vec![v, k, Value::Obj(o.clone())])?;
            }
            Value::Undef
        }
        _ => return Err(r.type_error(format!("{m} is not a function"))),
    })
}

/// Map and Set keys treat -0 as +0.
fn normalize_zero(v: Value) -> Value {
    match v {
        Value::Num(n) => Value::Num(if n == 0.0 { 0.0 } else { n }),
        other => other,
    }
}

fn set_method(r: &mut Run, o: &Obj, m: &str, args: Vec<Value>) -> Res<Value> {
    let a0 = arg(&args, 0);
    let items = match &o.borrow().kind {
        Kind::Set(e) => e.clone(),
        _ => Vec::new(),
    };
    r.tick(1 + items.len() as u64 / 16)?;
    let pos = items.iter().position(|k| same_value_zero(k, &a0));
    Ok(match m {
        "has" => Value::Bool(pos.is_some()),
        "add" => {
            if pos.is_none() {
                r.charge(16)?;
                if let Kind::Set(x) = &mut o.borrow_mut().kind {
                    x.push(normalize_zero(a0));
                }
            }
            Value::Obj(o.clone())
        }
        "delete" => {
            if let (Some(i), Kind::Set(x)) = (pos, &mut o.borrow_mut().kind) {
                x.remove(i);
            }
            Value::Bool(pos.is_some())
        }
        "clear" => {
            if let Kind::Set(x) = &mut o.borrow_mut().kind {
                x.clear();
            }
            Value::Undef
        }
        "keys" | "values" => r.new_array(items)?,
        "entries" => {
            let mut out = Vec::new();
            for v in items {
                out.push(r.new_array(vec![v.clone(), v])?);
            }
            r.new_array(out)?
        }
        "forEach" => {
            for v in items {
                r.tick(1)?;
                r.call(&a0, Value::Undef, vec![v.clone(), v, Value::Obj(o.clone())])?;
            }
            Value::Undef
        }
        _ => return Err(r.type_error(format!("{m} is not a function"))),
    })
}

fn date_method(r: &mut Run, t: f64, m: &str) -> Res<Value> {
    if matches!(m, "getTime" | "valueOf") {
        return Ok(Value::Num(t));
    }
    if matches!(m, "toISOString" | "toJSON" | "toString") {
        return match iso_string(t) {
            Some(s) => Ok(Value::Str(s.into())),
            None if m == "toISOString" => Err(r.error("RangeError", "Invalid time value")),
            None if m == "toJSON" => Ok(Value::Null),
            None => Ok(str_val("Invalid Date")),
        };
    }
    if !t.is_finite() {
        return Ok(Value::Num(f64::NAN));
    }
    let ms = t as i64;
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (y, mo, d) = civil_from_days(days);
    let m = m.replace("UTC", "");
    Ok(Value::Num(match m.as_str() {
        "getFullYear" => y as f64,
        "getMonth" => (mo - 1) as f64,
        "getDate" => d as f64,
        "getDay" => (days + 4).rem_euclid(7) as f64,
        "getHours" => (in_day / 3_600_000) as f64,
        "getMinutes" => (in_day / 60_000 % 60) as f64,
        "getSeconds" => (in_day / 1000 % 60) as f64,
        "getMilliseconds" => (in_day % 1000) as f64,
        _ => return Err(r.type_error(format!("{m} is not a function"))),
    }))
}

// ---- dates and numbers from text ----

/// `Date.prototype.toISOString`, or `None` for an invalid date.
pub(crate) fn iso_string(t: f64) -> Option<String> {
    if !t.is_finite() || t.abs() > 8.64e15 {
        return None;
    }
    let ms = t as i64;
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    Some(format!(
        "{year}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    ))
}

/// The ISO 8601 forms `Date.parse` must accept (`2024-01-02`, `2024-01-02T03:04:05.678Z`,
/// with an offset), all read as UTC when no offset is given: the simulation has one clock.
pub(crate) fn parse_iso(s: &str) -> Option<f64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |from: usize, n: usize| -> Option<i64> {
        let part = s.get(from..from + n)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let y = num(0, 4)?;
    let (mut mo, mut d) = (1, 1);
    let mut i = 4;
    if b.get(i) == Some(&b'-') {
        mo = num(5, 2)?;
        i = 7;
        if b.get(i) == Some(&b'-') {
            d = num(8, 2)?;
            i = 10;
        }
    }
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = 0i64;
    if matches!(b.get(i), Some(b'T') | Some(b't') | Some(b' ')) {
        let h = num(i + 1, 2)?;
        if b.get(i + 3) != Some(&b':') {
            return None;
        }
        let mi = num(i + 4, 2)?;
        i += 6;
        let mut sec = 0;
        if b.get(i) == Some(&b':') {
            sec = num(i + 1, 2)?;
            i += 3;
            if b.get(i) == Some(&b'.') {
                let start = i + 1;
                let mut end = start;
                while b.get(end).is_some_and(|c| c.is_ascii_digit()) {
                    end += 1;
                }
                if end == start {
                    return None;
                }
                let frac = &s[start..end.min(start + 3)];
                let mut f: i64 = frac.parse().ok()?;
                for _ in frac.len()..3 {
                    f *= 10;
                }
                ms += f;
                i = end;
            }
        }
        if h > 24 || mi > 59 || sec > 59 {
            return None;
        }
        ms += h * 3_600_000 + mi * 60_000 + sec * 1000;
        match b.get(i) {
            None => {}
            Some(b'Z') | Some(b'z') if i + 1 == b.len() => {}
            Some(sign @ (b'+' | b'-')) => {
                let oh = num(i + 1, 2)?;
                let om = if b.get(i + 3) == Some(&b':') {
                    num(i + 4, 2)?
                } else {
                    num(i + 3, 2)?
                };
                let off = oh * 3_600_000 + om * 60_000;
                ms -= if *sign == b'+' { off } else { -off };
            }
            _ => return None,
        }
    } else if i != b.len() {
        return None;
    }
    Some((days_from_civil(y, mo, d) * 86_400_000 + ms) as f64)
}

fn parse_int(s: &str, radix: i64) -> f64 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut radix = radix;
    let mut t = t;
    if (radix == 0 || radix == 16) && (t.starts_with("0x") || t.starts_with("0X")) {
        t = &t[2..];
        radix = 16;
    }
    if radix == 0 {
        radix = 10;
    }
    if !(2..=36).contains(&radix) {
        return f64::NAN;
    }
    let mut v = 0.0;
    let mut any = false;
    for c in t.chars() {
        match c.to_digit(radix as u32) {
            Some(d) => {
                v = v * radix as f64 + d as f64;
                any = true;
            }
            None => break,
        }
    }
    if !any {
        return f64::NAN;
    }
    if neg {
        -v
    } else {
        v
    }
}

fn parse_float(s: &str) -> f64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    for inf in ["Infinity", "+Infinity", "-Infinity"] {
        if t.starts_with(inf) {
            return if inf.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
        }
    }
    let mut end = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    let digits_start = end;
    while b.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    if b.get(end) == Some(&b'.') {
        end += 1;
        while b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    if end == digits_start || &t[digits_start..end] == "." {
        return f64::NAN;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut e = end + 1;
        if matches!(b.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        if b.get(e).is_some_and(u8::is_ascii_digit) {
            while b.get(e).is_some_and(u8::is_ascii_digit) {
                e += 1;
            }
            end = e;
        }
    }
    t[..end].parse().unwrap_or(f64::NAN)
}

/// `Math.round`: halves go towards +Infinity, and -0.5..0 gives -0.
fn js_round(n: f64) -> f64 {
    if !n.is_finite() || n.fract() == 0.0 {
        return n;
    }
    if (-0.5..0.0).contains(&n) {
        return -0.0;
    }
    let f = n.floor();
    if n - f >= 0.5 {
        f + 1.0
    } else {
        f
    }
}

/// `Number.prototype.toFixed`: rounds the exact binary value half up (JavaScript picks the
/// larger of two equally near results), where Rust's formatting rounds half to even.
fn to_fixed(n: f64, digits: usize) -> String {
    // Every finite double has an exact decimal expansion within 1,100 fractional digits.
    let exact = format!("{:.1100}", n.abs());
    let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut kept: Vec<u8> = int.bytes().chain(frac.bytes().take(digits)).collect();
    let round_up = frac.as_bytes().get(digits).is_some_and(|d| *d >= b'5');
    if round_up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, b'1');
                break;
            }
            i -= 1;
            if kept[i] == b'9' {
                kept[i] = b'0';
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let int_len = kept.len() - digits;
    let mut out = String::new();
    if n < 0.0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&kept[..int_len]).unwrap_or("0"));
    if digits > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&kept[int_len..]).unwrap_or(""));
    }
    out
}
