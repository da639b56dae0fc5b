//! Which JavaScript engine runs learners' controllers: this crate's interpreter natively, and in
//! the page the same interpreter compiled as a second wasm module that loads only when a scenario
//! has a `Controller` document (`src/engine.rs`, `src/ui/engine.rs`).
//!
//! The simulation reaches the engine only through [`Engine`] and [`Running`], so the page's first
//! download holds none of the interpreter: on wasm32 nothing is installed until the UI installs
//! its bridge. The wire types below are what crosses between the two modules, as JSON text.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value as Json;

use super::{Arg, Diagnostic, Host, Limits, RunError};

/// Parses programs and starts instances of them.
pub trait Engine {
    /// Parses `source`: the names of its top-level functions, or where it is wrong.
    fn check(&self, source: &str) -> Result<Vec<String>, Diagnostic>;
    /// Runs the top-level code of `source` (which [`Engine::check`] accepted).
    fn start(
        &self,
        source: &str,
        seed: u64,
        limits: Limits,
        now_ms: u64,
    ) -> Result<Box<dyn Running>, RunError>;
}

/// One started program: its module state lives as long as this value.
pub trait Running {
    /// Calls a top-level function, as [`super::Instance::call`].
    fn call(
        &mut self,
        function: &str,
        args: Vec<Arg>,
        host: &mut dyn Host,
        now_ms: u64,
    ) -> Result<Json, RunError>;
}

/// This crate's interpreter, called directly.
pub struct Builtin;

impl Engine for Builtin {
    fn check(&self, source: &str) -> Result<Vec<String>, Diagnostic> {
        super::Program::parse(source).map(|p| p.functions())
    }

    fn start(
        &self,
        source: &str,
        seed: u64,
        limits: Limits,
        now_ms: u64,
    ) -> Result<Box<dyn Running>, RunError> {
        let program = super::Program::parse(source).map_err(|d| RunError::Thrown {
            name: "SyntaxError".into(),
            message: d.message,
            line: d.line,
            column: d.column,
        })?;
        Ok(Box::new(super::Instance::start(
            &program, seed, limits, now_ms,
        )?))
    }
}

impl Running for super::Instance {
    fn call(
        &mut self,
        function: &str,
        args: Vec<Arg>,
        host: &mut dyn Host,
        now_ms: u64,
    ) -> Result<Json, RunError> {
        super::Instance::call(self, function, args, host, now_ms)
    }
}

thread_local! {
    static INSTALLED: RefCell<Option<Rc<dyn Engine>>> = RefCell::new(default_engine());
}

#[cfg(not(target_arch = "wasm32"))]
fn default_engine() -> Option<Rc<dyn Engine>> {
    Some(Rc::new(Builtin))
}

/// In the page the interpreter is a separate download, installed once loaded.
#[cfg(target_arch = "wasm32")]
fn default_engine() -> Option<Rc<dyn Engine>> {
    None
}

/// The engine controllers run on, if one is there.
pub fn installed() -> Option<Rc<dyn Engine>> {
    INSTALLED.with(|e| e.borrow().clone())
}

/// Makes `engine` the one controllers run on from now on.
pub fn install(engine: Rc<dyn Engine>) {
    INSTALLED.with(|e| *e.borrow_mut() = Some(engine));
}

/// A value as it crosses between the two modules: JSON built by hand rather than by serde
/// derives, because the page already carries `serde_json::Value`'s own code and each derived
/// type would add its decoder to the first paint.
pub trait Wire: Sized {
    fn to_wire(&self) -> Json;
    fn from_wire(v: &Json) -> Option<Self>;
}

impl Wire for Json {
    fn to_wire(&self) -> Json {
        self.clone()
    }
    fn from_wire(v: &Json) -> Option<Self> {
        Some(v.clone())
    }
}

impl Wire for String {
    fn to_wire(&self) -> Json {
        Json::String(self.clone())
    }
    fn from_wire(v: &Json) -> Option<Self> {
        v.as_str().map(str::to_string)
    }
}

impl Wire for u32 {
    fn to_wire(&self) -> Json {
        Json::from(*self)
    }
    fn from_wire(v: &Json) -> Option<Self> {
        v.as_u64().and_then(|n| u32::try_from(n).ok())
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn to_wire(&self) -> Json {
        Json::Array(self.iter().map(Wire::to_wire).collect())
    }
    fn from_wire(v: &Json) -> Option<Self> {
        v.as_array()?.iter().map(T::from_wire).collect()
    }
}

fn field<T: Wire>(v: &Json, name: &str) -> Option<T> {
    T::from_wire(v.get(name)?)
}

fn number(v: &Json, name: &str) -> Option<u64> {
    v.get(name)?.as_u64()
}

impl Wire for Arg {
    fn to_wire(&self) -> Json {
        match self {
            Arg::Json(v) => serde_json::json!({ "json": v }),
            Arg::Host(name) => serde_json::json!({ "host": name }),
        }
    }
    fn from_wire(v: &Json) -> Option<Self> {
        match (v.get("json"), v.get("host")) {
            (Some(j), None) => Some(Arg::Json(j.clone())),
            (None, Some(h)) => Some(Arg::Host(h.as_str()?.to_string())),
            _ => None,
        }
    }
}

impl Wire for Limits {
    fn to_wire(&self) -> Json {
        serde_json::json!({
            "steps": self.steps,
            "memoryBytes": self.memory_bytes,
            "callDepth": self.call_depth,
        })
    }
    fn from_wire(v: &Json) -> Option<Self> {
        Some(Limits {
            steps: number(v, "steps")?,
            memory_bytes: usize::try_from(number(v, "memoryBytes")?).ok()?,
            call_depth: usize::try_from(number(v, "callDepth")?).ok()?,
        })
    }
}

impl Wire for Diagnostic {
    fn to_wire(&self) -> Json {
        serde_json::json!({ "line": self.line, "column": self.column, "message": self.message })
    }
    fn from_wire(v: &Json) -> Option<Self> {
        Some(Diagnostic {
            line: u32::from_wire(v.get("line")?)?,
            column: u32::from_wire(v.get("column")?)?,
            message: field(v, "message")?,
        })
    }
}

impl Wire for RunError {
    fn to_wire(&self) -> Json {
        match self {
            RunError::Thrown {
                name,
                message,
                line,
                column,
            } => serde_json::json!({
                "thrown": { "name": name, "message": message, "line": line, "column": column }
            }),
            RunError::Budget { steps } => serde_json::json!({ "budget": steps }),
            RunError::Memory { bytes } => serde_json::json!({ "memory": bytes }),
            RunError::NoSuchFunction(name) => serde_json::json!({ "noSuchFunction": name }),
            RunError::Engine(why) => serde_json::json!({ "engine": why }),
        }
    }
    fn from_wire(v: &Json) -> Option<Self> {
        if let Some(t) = v.get("thrown") {
            return Some(RunError::Thrown {
                name: field(t, "name")?,
                message: field(t, "message")?,
                line: field(t, "line")?,
                column: field(t, "column")?,
            });
        }
        if let Some(steps) = number(v, "budget") {
            return Some(RunError::Budget { steps });
        }
        if let Some(bytes) = number(v, "memory") {
            return Some(RunError::Memory {
                bytes: usize::try_from(bytes).ok()?,
            });
        }
        if let Some(name) = field(v, "noSuchFunction") {
            return Some(RunError::NoSuchFunction(name));
        }
        field(v, "engine").map(RunError::Engine)
    }
}

/// Writes an answer as JSON text: `{"ok": value}` or `{"err": why}`.
pub fn encode<T: Wire, E: Wire>(r: Result<T, E>) -> String {
    let answer = match r {
        Ok(v) => serde_json::json!({ "ok": v.to_wire() }),
        Err(e) => serde_json::json!({ "err": e.to_wire() }),
    };
    answer.to_string()
}

/// Reads an answer written by [`encode`]; text that is not one becomes `Err(fail(why))`.
pub fn decode<T: Wire, E: Wire>(text: &str, fail: impl FnOnce(String) -> E) -> Result<T, E> {
    let answer = serde_json::from_str::<Json>(text).ok();
    let read = answer
        .as_ref()
        .and_then(|a| match (a.get("ok"), a.get("err")) {
            (Some(v), None) => T::from_wire(v).map(Ok),
            (None, Some(e)) => E::from_wire(e).map(Err),
            _ => None,
        });
    read.unwrap_or_else(|| {
        let shown: String = text.chars().take(200).collect();
        Err(fail(format!("unreadable answer: {shown}")))
    })
}

/// The JSON text of a value that crosses the boundary.
pub fn to_text<T: Wire>(v: &T) -> String {
    v.to_wire().to_string()
}

/// A value read back from [`to_text`]'s text.
pub fn from_text<T: Wire>(text: &str) -> Option<T> {
    T::from_wire(&serde_json::from_str::<Json>(text).ok()?)
}

/// A host call as it crosses the boundary: `[object, method, args]`, answered by an encoded
/// `Result<Json, String>`.
pub fn host_answer(host: &mut dyn Host, object: &str, method: &str, args: &str) -> String {
    match from_text::<Vec<Json>>(args) {
        Some(args) => encode(host.call(object, method, args)),
        None => encode::<Json, String>(Err("unreadable arguments".into())),
    }
}

/// A [`Host`] on the far side of the boundary, reached through `call(object, method, args)`
/// returning an encoded answer.
pub struct RemoteHost<F: FnMut(&str, &str, &str) -> String>(pub F);

impl<F: FnMut(&str, &str, &str) -> String> Host for RemoteHost<F> {
    fn call(&mut self, object: &str, method: &str, args: Vec<Json>) -> Result<Json, String> {
        decode(&(self.0)(object, method, &to_text(&args)), |why| why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;
    impl Host for Echo {
        fn call(&mut self, object: &str, method: &str, args: Vec<Json>) -> Result<Json, String> {
            if method == "fail" {
                return Err("no".into());
            }
            Ok(serde_json::json!({"object": object, "method": method, "args": args}))
        }
    }

    #[test]
    fn a_call_through_the_wire_gives_what_a_direct_call_gives() {
        let program =
            "let n = 0; function f(x, ctx) { n += 1; return [n, ctx.m(x.a, 2), Math.random()]; }";
        let direct = {
            let mut i = Builtin.start(program, 7, Limits::default(), 0).unwrap();
            let args = vec![
                Arg::Json(serde_json::json!({"a": 1.5})),
                Arg::Host("ctx".into()),
            ];
            i.call("f", args.clone(), &mut Echo, 0).unwrap();
            i.call("f", args, &mut Echo, 0).unwrap()
        };
        let wired = {
            let mut i = Builtin.start(program, 7, Limits::default(), 0).unwrap();
            let args = to_text(&vec![
                Arg::Json(serde_json::json!({"a": 1.5})),
                Arg::Host("ctx".into()),
            ]);
            let mut last = String::new();
            for _ in 0..2 {
                let args: Vec<Arg> = from_text(&args).unwrap();
                let mut echo = Echo;
                let mut remote =
                    RemoteHost(|o: &str, m: &str, a: &str| host_answer(&mut echo, o, m, a));
                last = encode(i.call("f", args, &mut remote, 0));
            }
            decode::<Json, RunError>(&last, RunError::Engine).unwrap()
        };
        assert_eq!(direct, wired);
    }

    #[test]
    fn a_host_error_and_a_thrown_error_cross_the_wire_as_themselves() {
        let mut i = Builtin
            .start("function f(ctx) { try { ctx.fail(); } catch (e) { throw new TypeError(e.message); } }", 1, Limits::default(), 0)
            .unwrap();
        let mut echo = Echo;
        let mut remote = RemoteHost(|o: &str, m: &str, a: &str| host_answer(&mut echo, o, m, a));
        let out = encode(i.call("f", vec![Arg::Host("ctx".into())], &mut remote, 0));
        let err = decode::<Json, RunError>(&out, RunError::Engine).unwrap_err();
        assert_eq!(err.to_string(), "TypeError: no (line 1, column 51)");
    }

    #[test]
    fn every_error_limit_and_diagnostic_reads_back_as_itself() {
        let errors = [
            RunError::Thrown {
                name: "TypeError".into(),
                message: "x".into(),
                line: 3,
                column: 9,
            },
            RunError::Budget { steps: 1_000_000 },
            RunError::Memory { bytes: 16 << 20 },
            RunError::NoSuchFunction("reconcile".into()),
            RunError::Engine("trapped".into()),
        ];
        for e in errors {
            assert_eq!(from_text::<RunError>(&to_text(&e)), Some(e));
        }
        let limits = Limits::default();
        assert_eq!(from_text::<Limits>(&to_text(&limits)), Some(limits));
        let d = Diagnostic {
            line: 2,
            column: 5,
            message: "Unexpected token".into(),
        };
        assert_eq!(from_text::<Diagnostic>(&to_text(&d)), Some(d));
    }

    #[test]
    fn an_unreadable_answer_is_an_engine_failure_not_a_panic() {
        let err = decode::<Json, RunError>("<html>", RunError::Engine).unwrap_err();
        assert!(
            matches!(err, RunError::Engine(ref m) if m.starts_with("unreadable answer")),
            "{err:?}"
        );
    }
}
