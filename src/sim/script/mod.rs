//! A sandboxed interpreter for a subset of JavaScript, to run learner-written controllers: real
//! JavaScript semantics for what it accepts, positioned refusals at parse time for what it does
//! not, and hard bounds (steps, memory, call depth, nesting) so that no input can hang, panic or
//! overflow the host.
//!
//! Nothing reaches outside: the only effects are calls on host objects passed in as arguments
//! ([`Arg::Host`]), time is the simulated clock given per call, and `Math.random` draws from a
//! seeded generator that lives as long as the [`Instance`].
//!
//! Known differences from a real engine, all on the side of refusing or simplifying:
//! - No getters/setters, generators, async, regular expressions, Symbol, `arguments`, private
//!   `#names`, static class fields; these are refused at parse time. `Function.prototype.bind`
//!   and old-style constructor functions (`new f()` on a plain function) are not there either.
//! - `JSON.parse` returns objects with their keys in sorted order (the build's `serde_json`
//!   map), and `console.log` formats objects as JSON.
//! - Strings are kept as UTF-8; `length`, indexes and slices count UTF-16 units, but a lone
//!   surrogate half becomes U+FFFD.
//! - Every string built is counted against the per-call allocation cap at its full length, so
//!   growing one long string by many small appends counts the copies.
//! - Recursion ends with `RangeError: Maximum call stack size exceeded` at `Limits::call_depth`
//!   calls, or earlier when the evaluator's own depth bound is reached (a recursive function
//!   whose body nests loops, `try` and expressions deeply gets fewer calls). Both are the same
//!   on every target. Under them, a guard on the native stack: an unoptimised native build
//!   (tests) reaches it before 200 nested calls.

mod ast;
mod builtins;
pub mod engine;
mod interp;
mod json;
mod lexer;
mod parser;
mod value;

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::rc::{Rc, Weak};

use interp::{new_env, Ctrl, Run, Vm};
use value::{Kind, Value};

/// The bounds of one instance. Steps and allocated bytes are counted per call; the module
/// state kept between calls is measured after each and held to `memory_bytes` too. The defaults
/// are the playground's (`sim::api::limits::SCRIPT_*`; a test keeps them equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub steps: u64,
    pub memory_bytes: usize,
    pub call_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            steps: 1_000_000,
            memory_bytes: 16 * 1024 * 1024,
            call_depth: 200,
        }
    }
}

/// A parse-time finding: 1-based line and column (in characters) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (line {}, column {})",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for Diagnostic {}

/// A parsed program, shared by every instance started from it.
#[derive(Clone)]
pub struct Program {
    parsed: Rc<parser::Parsed>,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("functions", &self.functions())
            .finish()
    }
}

impl Program {
    pub fn parse(source: &str) -> Result<Program, Diagnostic> {
        Ok(Program {
            parsed: Rc::new(parser::parse(source)?),
        })
    }

    /// The names of the top-level function declarations, in source order.
    pub fn functions(&self) -> Vec<String> {
        self.parsed
            .body
            .iter()
            .filter_map(|s| match &s.kind {
                ast::StmtKind::Func(def) => def.name.as_deref().map(str::to_string),
                _ => None,
            })
            .collect()
    }
}

/// An argument to [`Instance::call`].
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A plain value, deep-copied in.
    Json(serde_json::Value),
    /// A host object with this name: every method call `obj.m(a, b)` on it becomes
    /// `host.call(name, "m", [a, b])` with the arguments as JSON.
    Host(String),
}

/// What serves the host objects. `console.log(...)` and its siblings arrive as
/// `call("console", "log", [line])` with the line already formatted.
pub trait Host {
    /// The result becomes a fresh script value; an `Err` is thrown into the script as
    /// `Error(message)`.
    fn call(
        &mut self,
        object: &str,
        method: &str,
        args: Vec<serde_json::Value>,
    ) -> Result<serde_json::Value, String>;
}

/// A host that has no objects: used while the top-level code runs.
struct NoHost;

impl Host for NoHost {
    fn call(
        &mut self,
        object: &str,
        method: &str,
        _: Vec<serde_json::Value>,
    ) -> Result<serde_json::Value, String> {
        if object == "console" {
            return Ok(serde_json::Value::Null);
        }
        Err(format!(
            "{object}.{method} is not available while the program starts"
        ))
    }
}

/// Why a call did not return a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// An uncaught exception, where it was thrown. `name` is the error's constructor name
    /// (`TypeError`), empty for a thrown value that is not an error.
    Thrown {
        name: String,
        message: String,
        line: u32,
        column: u32,
    },
    Budget {
        steps: u64,
    },
    Memory {
        bytes: usize,
    },
    NoSuchFunction(String),
    /// The engine itself failed (in the page: its module trapped or could not be reached).
    Engine(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Thrown {
                name,
                message,
                line,
                column,
            } => {
                if name.is_empty() {
                    write!(f, "Uncaught {message} (line {line}, column {column})")
                } else {
                    write!(f, "{name}: {message} (line {line}, column {column})")
                }
            }
            RunError::Budget { steps } => {
                write!(f, "reconcile exceeded its budget of {steps} steps")
            }
            RunError::Memory { bytes } => {
                write!(f, "the controller exceeded its memory cap of {bytes} bytes")
            }
            RunError::NoSuchFunction(name) => {
                write!(f, "the program defines no function named {name}")
            }
            RunError::Engine(why) => write!(f, "the JavaScript engine failed: {why}"),
        }
    }
}

impl std::error::Error for RunError {}

/// One running controller: its module-level state and its random generator.
pub struct Instance {
    vm: Vm,
    _program: Program,
    /// How many of the last call's objects and scopes outlived it (the tests' leak check).
    alive_after_call: usize,
}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Instance")
            .field("limits", &self.vm.limits)
            .finish_non_exhaustive()
    }
}

impl Instance {
    /// Runs the top-level code of the program (module-level state initialised).
    pub fn start(
        program: &Program,
        seed: u64,
        limits: Limits,
        now_ms: u64,
    ) -> Result<Instance, RunError> {
        let mut vm = Vm {
            module: new_env(None),
            rng: crate::sim::rng::Rng::new(seed),
            limits,
        };
        let mut host = NoHost;
        let (r, created, envs) = {
            let mut run = Run::new(&mut vm, &mut host, now_ms);
            let r = run.run_program(&program.parsed.body, &program.parsed.vars);
            let r = r.map_err(|c| to_run_error(&mut run, c));
            (
                r,
                std::mem::take(&mut run.created),
                std::mem::take(&mut run.created_envs),
            )
        };
        let alive = sweep(&vm, created, envs);
        let instance = Instance {
            vm,
            _program: program.clone(),
            alive_after_call: alive,
        };
        r?;
        check_retained(&instance.vm)?;
        Ok(instance)
    }

    /// Calls a top-level function with JSON arguments and host objects; returns its result as
    /// JSON (`undefined` as null, as `JSON.stringify` would write the rest).
    pub fn call(
        &mut self,
        function: &str,
        args: Vec<Arg>,
        host: &mut dyn Host,
        now_ms: u64,
    ) -> Result<serde_json::Value, RunError> {
        let f = {
            let module = self.vm.module.borrow();
            module
                .vars
                .iter()
                .find(|b| &*b.name == function)
                .map(|b| b.value.clone())
        };
        let Some(f) = f.filter(Value::is_callable) else {
            return Err(RunError::NoSuchFunction(function.to_string()));
        };
        let result = {
            let mut run = Run::new(&mut self.vm, host, now_ms);
            let r = (|| {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(match a {
                        Arg::Json(j) => json::from_json(&mut run, &j)?,
                        Arg::Host(name) => value::new_obj(Kind::Host(name.into()), Vec::new()),
                    });
                }
                let v = run.call(&f, Value::Undef, values)?;
                json::to_serde(&mut run, &v)
            })();
            let r = r.map_err(|c| to_run_error(&mut run, c));
            (
                r,
                std::mem::take(&mut run.created),
                std::mem::take(&mut run.created_envs),
            )
        };
        let (result, created, envs) = result;
        self.alive_after_call = sweep(&self.vm, created, envs);
        check_retained(&self.vm)?;
        result
    }
}

fn to_run_error(run: &mut Run, c: Ctrl) -> RunError {
    match c {
        Ctrl::Fatal(e) => e,
        Ctrl::Short => RunError::Thrown {
            name: "TypeError".into(),
            message: "optional chain escaped".into(),
            line: 0,
            column: 0,
        },
        Ctrl::Throw(v, pos) => {
            let (name, message) = match &v {
                Value::Obj(o) if matches!(o.borrow().kind, Kind::Error(_)) => {
                    let name = run.get(&v, &"name".into()).ok();
                    let message = run.get(&v, &"message".into()).ok();
                    let name = match name {
                        Some(n) => run.str_of(&n).map(|s| s.to_string()).unwrap_or_default(),
                        None => "Error".into(),
                    };
                    let message = match message {
                        Some(m) => run.str_of(&m).map(|s| s.to_string()).unwrap_or_default(),
                        None => String::new(),
                    };
                    (name, message)
                }
                Value::Str(s) => (String::new(), s.to_string()),
                other => {
                    let s = json::stringify(run, other, "")
                        .ok()
                        .flatten()
                        .or_else(|| run.str_of(other).ok().map(|s| s.to_string()))
                        .unwrap_or_default();
                    (String::new(), s)
                }
            };
            RunError::Thrown {
                name,
                message,
                line: pos.line,
                column: pos.col,
            }
        }
    }
}

/// Measures what the module state keeps reachable, so that a long-lived instance is held to
/// its cap by what it retains, not by the garbage of past calls.
fn check_retained(vm: &Vm) -> Result<(), RunError> {
    let size = walk(vm, false).bytes;
    if size > vm.limits.memory_bytes {
        return Err(RunError::Memory {
            bytes: vm.limits.memory_bytes,
        });
    }
    Ok(())
}

/// What the module scope reaches: its approximate size in bytes, the addresses of its objects
/// and scopes, and (when asked) the objects and scopes themselves.
struct Walk {
    bytes: usize,
    seen: BTreeSet<usize>,
    objs: Vec<value::Obj>,
    envs: Vec<value::Env>,
}

fn walk(vm: &Vm, collect: bool) -> Walk {
    enum Item {
        V(Value),
        E(value::Env),
    }
    let mut w = Walk {
        bytes: 0,
        seen: BTreeSet::new(),
        objs: Vec::new(),
        envs: Vec::new(),
    };
    let mut stack = vec![Item::E(vm.module.clone())];
    while let Some(item) = stack.pop() {
        match item {
            Item::E(e) => {
                if !w.seen.insert(Rc::as_ptr(&e) as *const u8 as usize) {
                    continue;
                }
                let s = e.borrow();
                for b in &s.vars {
                    w.bytes += 32 + b.name.len();
                    stack.push(Item::V(b.value.clone()));
                }
                if let Some(p) = &s.parent {
                    stack.push(Item::E(p.clone()));
                }
                drop(s);
                if collect {
                    w.envs.push(e);
                }
            }
            Item::V(Value::Str(s)) => w.bytes += 16 + s.len(),
            Item::V(Value::Obj(o)) => {
                if !w.seen.insert(Rc::as_ptr(&o) as *const u8 as usize) {
                    continue;
                }
                w.bytes += 32;
                let b = o.borrow();
                for (k, v) in &b.props {
                    w.bytes += 24 + k.len();
                    stack.push(Item::V(v.clone()));
                }
                if let Some(p) = &b.proto {
                    stack.push(Item::V(Value::Obj(p.clone())));
                }
                match &b.kind {
                    Kind::Array(items) | Kind::Set(items) => {
                        w.bytes += 16 * items.len();
                        stack.extend(items.iter().cloned().map(Item::V));
                    }
                    Kind::Map(entries) => {
                        w.bytes += 48 * entries.len();
                        for (k, v) in entries {
                            stack.push(Item::V(k.clone()));
                            stack.push(Item::V(v.clone()));
                        }
                    }
                    Kind::Closure(c) => {
                        stack.push(Item::E(c.env.clone()));
                        if let Some(h) = &c.home {
                            stack.push(Item::V(Value::Obj(h.clone())));
                        }
                    }
                    Kind::Class(c) => {
                        stack.push(Item::E(c.env.clone()));
                        stack.push(Item::V(Value::Obj(c.proto.clone())));
                        if let Some(p) = &c.parent {
                            stack.push(Item::V(p.clone()));
                        }
                    }
                    Kind::Bound(v, _) => stack.push(Item::V(v.clone())),
                    _ => {}
                }
                drop(b);
                if collect {
                    w.objs.push(o);
                }
            }
            Item::V(_) => w.bytes += 16,
        }
    }
    w
}

/// Empties an object, so that what it holds is released even when it sits in a cycle.
fn clear_obj(o: &value::Obj) {
    let taken = {
        let mut b = o.borrow_mut();
        (
            std::mem::take(&mut b.props),
            std::mem::take(&mut b.kind),
            b.proto.take(),
        )
    };
    drop(taken);
}

fn clear_env(e: &value::Env) {
    let taken = {
        let mut s = e.borrow_mut();
        (std::mem::take(&mut s.vars), s.parent.take())
    };
    drop(taken);
}

/// After a call: whatever it created that the module state cannot reach is garbage, alive
/// only if it is in a cycle (a closure and the scope holding it, `a.self = a`). Emptying it
/// breaks the cycle. Returns how many of the call's objects and scopes stay alive.
fn sweep(
    vm: &Vm,
    created: Vec<Weak<RefCell<value::Object>>>,
    envs: Vec<Weak<RefCell<value::Scope>>>,
) -> usize {
    let reachable = walk(vm, false).seen;
    let mut alive = 0;
    for w in created {
        if let Some(o) = w.upgrade() {
            if reachable.contains(&(Rc::as_ptr(&o) as *const u8 as usize)) {
                alive += 1;
            } else {
                clear_obj(&o);
            }
        }
    }
    for w in envs {
        if let Some(e) = w.upgrade() {
            if reachable.contains(&(Rc::as_ptr(&e) as *const u8 as usize)) {
                alive += 1;
            } else {
                clear_env(&e);
            }
        }
    }
    alive
}

impl Drop for Instance {
    /// The module state is full of cycles (every top-level function's scope holds the
    /// function): empty all of it so that a restarted controller frees the old one.
    fn drop(&mut self) {
        let w = walk(&self.vm, true);
        for o in &w.objs {
            clear_obj(o);
        }
        for e in &w.envs {
            clear_env(e);
        }
    }
}
