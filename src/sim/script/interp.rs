//! The tree-walking evaluator: statements, expressions, scopes, calls and classes, with every
//! step counted against the budget and every recursion counted against a depth bound.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use super::ast::*;
use super::value::*;
use super::{Host, Limits, RunError};
use crate::sim::rng::Rng;

/// How deep the evaluator itself may recurse (statements, expressions and calls together): the
/// deterministic bound that keeps deep programs and deep recursion inside the native stack. An
/// optimised build uses about 660 bytes of stack per level (measured on x86-64 by
/// `an_optimised_build_hits_the_deterministic_limits_before_the_stack_guard`), so this many
/// levels fit the wasm budget below with room to spare, and native and wasm builds stop a
/// program at the same point. A simple recursive function gets about 190 calls deep.
const MAX_NATIVE_DEPTH: usize = 1_000;

/// The native stack one call may use on wasm, where the whole stack is 1 MB: a safety net
/// under the deterministic limits, for frames larger than measured.
pub(crate) const WASM_STACK_BUDGET: usize = 800 * 1024;

/// The native stack one call may use, measured from where it started. On native targets it
/// also covers unoptimised builds (tests), whose frames are several times larger: there it is
/// this guard, not the depth bound, that ends a deep recursion (a test thread has 2 MB).
#[cfg(target_arch = "wasm32")]
pub(crate) const STACK_BUDGET: usize = WASM_STACK_BUDGET;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) const STACK_BUDGET: usize = WASM_STACK_BUDGET + 600 * 1024;

#[cfg(test)]
thread_local! {
    /// The most native stack any call on this thread used (tests measure frame sizes with it).
    pub(crate) static MAX_STACK_USED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The address of a local of the caller's frame: comparing two tells how much stack lies
/// between them (the stack grows down on every target we build for).
#[inline(always)]
pub(crate) fn stack_mark() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

/// Why evaluation stopped early.
pub(crate) enum Ctrl {
    /// A JavaScript exception, catchable by `try`.
    Throw(Value, Pos),
    /// A limit: not catchable, ends the call.
    Fatal(RunError),
    /// A `?.` met null or undefined: the enclosing chain is `undefined`.
    Short,
}

pub(crate) type Res<T> = Result<T, Ctrl>;

/// A place to read and write: a variable, or an object's property.
enum Place {
    Var(Rc<str>, Pos),
    Prop(Value, Rc<str>, Pos),
}

pub(crate) enum Flow {
    Normal,
    Return(Value),
    Break(Option<Rc<str>>),
    Continue(Option<Rc<str>>),
}

/// What outlives one call: the module scope and the random generator.
pub(crate) struct Vm {
    pub module: Env,
    pub rng: Rng,
    pub limits: Limits,
}

/// One call in progress.
pub(crate) struct Run<'a> {
    pub vm: &'a mut Vm,
    pub host: &'a mut dyn Host,
    pub now_ms: u64,
    pub steps: u64,
    pub alloc: usize,
    depth: usize,
    calls: usize,
    pub env: Env,
    /// Where the evaluator is, for errors raised by built-ins.
    pub pos: Pos,
    stack_base: usize,
    /// What this call created, by weak reference: swept after the call (see [`Run::track`]).
    pub created: Vec<Weak<RefCell<Object>>>,
    pub created_envs: Vec<Weak<RefCell<Scope>>>,
}

pub(crate) fn new_env(parent: Option<Env>) -> Env {
    Rc::new(RefCell::new(Scope {
        vars: Vec::new(),
        parent,
    }))
}

const THIS: &str = "this";
const HOME: &str = "\u{0}home";
const NEW_CLASS: &str = "\u{0}class";

impl<'a> Run<'a> {
    pub fn new(vm: &'a mut Vm, host: &'a mut dyn Host, now_ms: u64) -> Run<'a> {
        let env = vm.module.clone();
        Run {
            vm,
            host,
            now_ms,
            steps: 0,
            alloc: 0,
            depth: 0,
            calls: 0,
            env,
            pos: Pos::default(),
            stack_base: stack_mark(),
            created: Vec::new(),
            created_envs: Vec::new(),
        }
    }

    // ---- limits ----

    pub fn tick(&mut self, n: u64) -> Res<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.vm.limits.steps {
            return Err(Ctrl::Fatal(RunError::Budget {
                steps: self.vm.limits.steps,
            }));
        }
        Ok(())
    }

    /// Counts `bytes` allocated by this call; the cap ends it before the host runs out.
    pub fn charge(&mut self, bytes: usize) -> Res<()> {
        self.alloc = self.alloc.saturating_add(bytes);
        if self.alloc > self.vm.limits.memory_bytes {
            return Err(Ctrl::Fatal(RunError::Memory {
                bytes: self.vm.limits.memory_bytes,
            }));
        }
        Ok(())
    }

    fn enter(&mut self) -> Res<()> {
        self.depth += 1;
        let used = self.stack_base.saturating_sub(stack_mark());
        #[cfg(test)]
        MAX_STACK_USED.with(|m| m.set(m.get().max(used)));
        if self.depth > MAX_NATIVE_DEPTH || used > STACK_BUDGET {
            self.depth -= 1;
            return Err(self.error("RangeError", "Maximum call stack size exceeded"));
        }
        Ok(())
    }

    // ---- errors ----

    pub fn make_error(&mut self, name: &str, message: &str) -> Value {
        new_obj(
            Kind::Error(name.into()),
            vec![("message".into(), str_val(message))],
        )
    }

    pub fn error(&mut self, name: &str, message: &str) -> Ctrl {
        Ctrl::Throw(self.make_error(name, message), self.pos)
    }

    pub fn type_error(&mut self, message: impl AsRef<str>) -> Ctrl {
        self.error("TypeError", message.as_ref())
    }

    // ---- strings ----

    pub fn new_str(&mut self, s: String) -> Res<Value> {
        self.charge(s.len() + 16)?;
        Ok(Value::Str(s.into()))
    }

    pub fn new_array(&mut self, items: Vec<Value>) -> Res<Value> {
        self.charge(items.len().saturating_mul(16).saturating_add(32))?;
        let v = new_obj(Kind::Array(items), Vec::new());
        self.track(&v);
        Ok(v)
    }

    pub fn new_plain(&mut self, props: Vec<(Rc<str>, Value)>) -> Res<Value> {
        self.charge(props.iter().map(|(k, _)| k.len() + 24).sum::<usize>() + 32)?;
        let v = new_obj(Kind::Plain, props);
        self.track(&v);
        Ok(v)
    }

    // ---- scopes ----

    pub fn declare(&mut self, name: Rc<str>, value: Value, mutable: bool) {
        let mut env = self.env.borrow_mut();
        if let Some(b) = env.vars.iter_mut().find(|b| b.name == name) {
            b.value = value;
            b.mutable = mutable;
            b.ready = true;
        } else {
            env.vars.push(Binding {
                name,
                value,
                mutable,
                ready: true,
            });
        }
    }

    /// Opens the temporal dead zone of a `let`/`const`/`class` name at the top of its block.
    fn declare_pending(&mut self, name: &Rc<str>) {
        let mut env = self.env.borrow_mut();
        if !env.vars.iter().any(|b| b.name == *name) {
            env.vars.push(Binding {
                name: name.clone(),
                value: Value::Undef,
                mutable: true,
                ready: false,
            });
        }
    }

    fn lookup(&self, name: &str) -> Option<Value> {
        self.find(name).map(|(v, _)| v)
    }

    /// A binding's value and whether it is initialised.
    fn find(&self, name: &str) -> Option<(Value, bool)> {
        let mut env = self.env.clone();
        loop {
            let next = {
                let e = env.borrow();
                if let Some(b) = e.vars.iter().find(|b| &*b.name == name) {
                    return Some((b.value.clone(), b.ready));
                }
                e.parent.clone()
            };
            env = next?;
        }
    }

    fn tdz_error(&mut self, name: &str) -> Ctrl {
        self.error(
            "ReferenceError",
            &format!("Cannot access '{name}' before initialization"),
        )
    }

    fn assign_var(&mut self, name: &Rc<str>, value: Value) -> Res<()> {
        let mut env = self.env.clone();
        loop {
            let next = {
                let mut e = env.borrow_mut();
                if let Some(b) = e.vars.iter_mut().find(|b| b.name == *name) {
                    if !b.ready {
                        drop(e);
                        return Err(self.tdz_error(name));
                    }
                    if !b.mutable {
                        drop(e);
                        return Err(self.type_error("Assignment to constant variable."));
                    }
                    b.value = value;
                    return Ok(());
                }
                e.parent.clone()
            };
            match next {
                Some(n) => env = n,
                None => return Err(self.error("ReferenceError", &format!("{name} is not defined"))),
            }
        }
    }

    fn read_var(&mut self, name: &Rc<str>) -> Res<Value> {
        match self.find(name) {
            Some((v, true)) => return Ok(v),
            Some((_, false)) => return Err(self.tdz_error(name)),
            None => {}
        }
        match super::builtins::global(name) {
            Some(v) => Ok(v),
            None => Err(self.error("ReferenceError", &format!("{name} is not defined"))),
        }
    }

    // ---- statements ----

    pub fn run_program(&mut self, body: &[Stmt], vars: &[Rc<str>]) -> Res<()> {
        for v in vars {
            if self.lookup(v).is_none() {
                self.declare(v.clone(), Value::Undef, true);
            }
        }
        self.hoist_functions(body);
        for s in body {
            match self.exec(s)? {
                Flow::Normal => {}
                _ => break,
            }
        }
        Ok(())
    }

    /// At the top of a block: function declarations are defined, `let`, `const` and class
    /// names enter their temporal dead zone.
    fn hoist_functions(&mut self, body: &[Stmt]) {
        for s in body {
            match &s.kind {
                StmtKind::Func(def) => {
                    let f = self.closure(def.clone(), None);
                    if let Some(name) = &def.name {
                        self.declare(name.clone(), f, true);
                    }
                }
                StmtKind::Var(VarKind::Let | VarKind::Const, decls) => {
                    let mut names = Vec::new();
                    for (p, _) in decls {
                        p.names(&mut names);
                    }
                    for n in &names {
                        self.declare_pending(n);
                    }
                }
                StmtKind::Class(def) => {
                    if let Some(n) = &def.name {
                        self.declare_pending(n);
                    }
                }
                _ => {}
            }
        }
    }

    fn closure(&mut self, def: Rc<FuncDef>, home: Option<Obj>) -> Value {
        let f = new_obj(
            Kind::Closure(Closure {
                def,
                env: self.env.clone(),
                home,
            }),
            Vec::new(),
        );
        self.track(&f);
        f
    }

    /// A new scope under `parent`, remembered for the sweep after the call.
    fn scope(&mut self, parent: Env) -> Env {
        let e = new_env(Some(parent));
        self.created_envs.push(Rc::downgrade(&e));
        e
    }

    /// Remembers an object this call made, for the sweep after it: reference counting alone
    /// would never free a closure and the scope that holds it, or an object that points to
    /// itself.
    pub fn track(&mut self, v: &Value) {
        if let Value::Obj(o) = v {
            self.created.push(Rc::downgrade(o));
        }
    }

    /// Runs `body` in a fresh block scope.
    fn block(&mut self, body: &[Stmt]) -> Res<Flow> {
        let scope = self.scope(self.env.clone());
        let saved = std::mem::replace(&mut self.env, scope);
        self.hoist_functions(body);
        let r = self.stmts(body);
        self.env = saved;
        r
    }

    fn stmts(&mut self, body: &[Stmt]) -> Res<Flow> {
        for s in body {
            match self.exec(s)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, s: &Stmt) -> Res<Flow> {
        self.enter()?;
        self.pos = s.pos;
        let r = self.tick(1).and_then(|_| self.exec_inner(s));
        self.depth -= 1;
        r
    }

    fn exec_inner(&mut self, s: &Stmt) -> Res<Flow> {
        match &s.kind {
            StmtKind::Expr(e) => {
                self.eval(e)?;
                Ok(Flow::Normal)
            }
            StmtKind::Var(kind, decls) => self.exec_var(*kind, decls),
            StmtKind::Func(_) | StmtKind::Empty => Ok(Flow::Normal),
            StmtKind::Class(def) => self.exec_class(def),
            StmtKind::Return(e) => self.exec_return(e.as_ref()),
            StmtKind::If(test, cons, alt) => self.exec_if(test, cons, alt.as_deref()),
            StmtKind::Block(body) => self.block(body),
            StmtKind::Break(l) => Ok(Flow::Break(l.clone())),
            StmtKind::Continue(l) => Ok(Flow::Continue(l.clone())),
            StmtKind::Throw(e) => self.exec_throw(e, s.pos),
            StmtKind::Try {
                block,
                param,
                handler,
                finalizer,
            } => self.try_stmt(
                block,
                param.as_ref(),
                handler.as_deref(),
                finalizer.as_deref(),
            ),
            StmtKind::Switch(disc, cases) => self.switch(disc, cases),
            _ => self.exec_loop(s, None),
        }
    }

    #[inline(never)]
    fn exec_var(&mut self, kind: VarKind, decls: &[(Pat, Option<Expr>)]) -> Res<Flow> {
        for (pat, init) in decls {
            let v = match init {
                Some(e) => self.eval(e)?,
                None if kind == VarKind::Var => continue,
                None => Value::Undef,
            };
            self.bind(pat, v, Some(kind))?;
        }
        Ok(Flow::Normal)
    }

    #[inline(never)]
    fn exec_class(&mut self, def: &Rc<ClassDef>) -> Res<Flow> {
        let c = self.class(def)?;
        if let Some(n) = &def.name {
            self.declare(n.clone(), c, true);
        }
        Ok(Flow::Normal)
    }

    #[inline(never)]
    fn exec_return(&mut self, e: Option<&Expr>) -> Res<Flow> {
        let v = match e {
            Some(e) => self.eval(e)?,
            None => Value::Undef,
        };
        Ok(Flow::Return(v))
    }

    #[inline(never)]
    fn exec_if(&mut self, test: &Expr, cons: &Stmt, alt: Option<&Stmt>) -> Res<Flow> {
        if self.eval(test)?.truthy() {
            self.exec(cons)
        } else if let Some(alt) = alt {
            self.exec(alt)
        } else {
            Ok(Flow::Normal)
        }
    }

    #[inline(never)]
    fn exec_throw(&mut self, e: &Expr, pos: Pos) -> Res<Flow> {
        let v = self.eval(e)?;
        Err(Ctrl::Throw(v, pos))
    }

    /// Loops, and labelled statements (a label names the loop it wraps).
    #[inline(never)]
    fn exec_loop(&mut self, s: &Stmt, label: Option<&Rc<str>>) -> Res<Flow> {
        match &s.kind {
            StmtKind::For {
                init,
                test,
                update,
                body,
            } => self.for_loop(init.as_deref(), test.as_ref(), update.as_ref(), body, label),
            StmtKind::ForEach {
                kind,
                pat,
                of,
                iter,
                body,
            } => self.for_each(*kind, pat, *of, iter, body, label),
            StmtKind::While(test, body) => self.while_loop(Some(test), body, false, label),
            StmtKind::DoWhile(body, test) => self.while_loop(Some(test), body, true, label),
            StmtKind::Labeled(l, body) => {
                let r = match &body.kind {
                    StmtKind::For { .. }
                    | StmtKind::ForEach { .. }
                    | StmtKind::While(..)
                    | StmtKind::DoWhile(..) => {
                        self.enter()?;
                        let r = self.exec_loop(body, Some(l));
                        self.depth -= 1;
                        r?
                    }
                    _ => self.exec(body)?,
                };
                Ok(match r {
                    Flow::Break(Some(b)) if b == *l => Flow::Normal,
                    other => other,
                })
            }
            _ => Ok(Flow::Normal),
        }
    }

    /// Decides what a loop does after its body: `Some(flow)` leaves the loop with `flow`.
    fn loop_flow(flow: Flow, label: Option<&Rc<str>>) -> Option<Flow> {
        match flow {
            Flow::Normal => None,
            Flow::Break(None) => Some(Flow::Normal),
            Flow::Break(Some(l)) if Some(&l) == label => Some(Flow::Normal),
            Flow::Continue(None) => None,
            Flow::Continue(Some(l)) if Some(&l) == label => None,
            other => Some(other),
        }
    }

    fn for_loop(
        &mut self,
        init: Option<&Stmt>,
        test: Option<&Expr>,
        update: Option<&Expr>,
        body: &Stmt,
        label: Option<&Rc<str>>,
    ) -> Res<Flow> {
        let scope = self.scope(self.env.clone());
        let saved = std::mem::replace(&mut self.env, scope);
        let r = self.for_loop_inner(init, test, update, body, label);
        self.env = saved;
        r
    }

    fn for_loop_inner(
        &mut self,
        init: Option<&Stmt>,
        test: Option<&Expr>,
        update: Option<&Expr>,
        body: &Stmt,
        label: Option<&Rc<str>>,
    ) -> Res<Flow> {
        if let Some(init) = init {
            self.exec(init)?;
        }
        let per_iteration = matches!(init.map(|s| &s.kind), Some(StmtKind::Var(VarKind::Let, _)));
        loop {
            self.tick(1)?;
            if let Some(t) = test {
                if !self.eval(t)?.truthy() {
                    return Ok(Flow::Normal);
                }
            }
            let flow = self.exec(body)?;
            if let Some(f) = Self::loop_flow(flow, label) {
                return Ok(f);
            }
            if per_iteration {
                // A fresh copy of the `let` bindings per iteration, so that closures made in
                // the body keep the value of their own iteration.
                let vars = self
                    .env
                    .borrow()
                    .vars
                    .iter()
                    .map(|b| Binding {
                        name: b.name.clone(),
                        value: b.value.clone(),
                        mutable: b.mutable,
                        ready: b.ready,
                    })
                    .collect();
                let parent = self.env.borrow().parent.clone();
                let fresh = Rc::new(RefCell::new(Scope { vars, parent }));
                self.created_envs.push(Rc::downgrade(&fresh));
                self.env = fresh;
            }
            if let Some(u) = update {
                self.eval(u)?;
            }
        }
    }

    fn while_loop(
        &mut self,
        test: Option<&Expr>,
        body: &Stmt,
        do_first: bool,
        label: Option<&Rc<str>>,
    ) -> Res<Flow> {
        let mut first = do_first;
        loop {
            self.tick(1)?;
            if !first {
                if let Some(t) = test {
                    if !self.eval(t)?.truthy() {
                        return Ok(Flow::Normal);
                    }
                }
            }
            first = false;
            let flow = self.exec(body)?;
            if let Some(f) = Self::loop_flow(flow, label) {
                return Ok(f);
            }
        }
    }

    fn for_each(
        &mut self,
        kind: Option<VarKind>,
        pat: &Pat,
        of: bool,
        iter: &Expr,
        body: &Stmt,
        label: Option<&Rc<str>>,
    ) -> Res<Flow> {
        let target = self.eval(iter)?;
        // Arrays are read by index as the loop goes, so that pushes in the body are seen as in
        // JavaScript; everything else is listed up front.
        let live_array = match (&target, of) {
            (Value::Obj(o), true) if matches!(o.borrow().kind, Kind::Array(_)) => Some(o.clone()),
            _ => None,
        };
        let items = if live_array.is_some() {
            Vec::new()
        } else if of {
            self.iterate(&target)?
        } else {
            self.for_in_keys(&target)?
        };
        let mut i = 0;
        loop {
            self.tick(1)?;
            let item = match &live_array {
                Some(a) => match &a.borrow().kind {
                    Kind::Array(v) if i < v.len() => v[i].clone(),
                    _ => return Ok(Flow::Normal),
                },
                None => match items.get(i) {
                    Some(v) => v.clone(),
                    None => return Ok(Flow::Normal),
                },
            };
            i += 1;
            let scope = self.scope(self.env.clone());
            let saved = std::mem::replace(&mut self.env, scope);
            let r = self.bind(pat, item, kind).and_then(|_| self.exec(body));
            self.env = saved;
            if let Some(f) = Self::loop_flow(r?, label) {
                return Ok(f);
            }
        }
    }

    fn for_in_keys(&mut self, v: &Value) -> Res<Vec<Value>> {
        self.keys_of(v)?;
        Ok(match v {
            Value::Obj(o) => {
                let o = o.borrow();
                let mut keys: Vec<Value> = match &o.kind {
                    Kind::Array(items) => {
                        (0..items.len()).map(|i| str_val(&i.to_string())).collect()
                    }
                    _ => Vec::new(),
                };
                keys.extend(ordered_keys(&o.props).into_iter().map(Value::Str));
                keys
            }
            Value::Str(s) => (0..utf16_len(s)).map(|i| str_val(&i.to_string())).collect(),
            _ => Vec::new(),
        })
    }

    /// The values `for...of` and spread go through.
    pub fn iterate(&mut self, v: &Value) -> Res<Vec<Value>> {
        if let Value::Str(s) = v {
            // One string per character: paid for before it is built.
            self.tick(s.len() as u64)?;
            self.charge(s.len().saturating_mul(48))?;
            return Ok(s
                .chars()
                .map(|c| Value::Str(c.to_string().into()))
                .collect());
        }
        if let Value::Obj(o) = v {
            let o = o.borrow();
            match &o.kind {
                Kind::Array(items) | Kind::Set(items) => return Ok(items.clone()),
                Kind::Map(entries) => {
                    let pairs: Vec<(Value, Value)> = entries.clone();
                    drop(o);
                    let mut out = Vec::new();
                    for (k, v) in pairs {
                        out.push(self.new_array(vec![k, v])?);
                    }
                    return Ok(out);
                }
                _ => {}
            }
        }
        let d = self.describe(v);
        Err(self.type_error(format!("{d} is not iterable")))
    }

    /// How V8 names a value in "is not iterable"/"is not a function" messages.
    pub fn describe(&self, v: &Value) -> String {
        match v {
            Value::Str(s) => format!("\"{s}\""),
            Value::Obj(o) if matches!(o.borrow().kind, Kind::Plain) => "object".into(),
            Value::Obj(_) => "object".into(),
            Value::Num(n) => number_to_string(*n),
            Value::Bool(b) => b.to_string(),
            Value::Undef => "undefined".into(),
            Value::Null => "null".into(),
        }
    }

    fn try_stmt(
        &mut self,
        block: &[Stmt],
        param: Option<&Pat>,
        handler: Option<&[Stmt]>,
        finalizer: Option<&[Stmt]>,
    ) -> Res<Flow> {
        let mut r = self.block(block);
        if let (Err(Ctrl::Throw(v, _)), Some(h)) = (&r, handler) {
            let v = v.clone();
            let scope = self.scope(self.env.clone());
            let saved = std::mem::replace(&mut self.env, scope);
            r = match param {
                Some(p) => self.bind(p, v, Some(VarKind::Let)),
                None => Ok(()),
            }
            .and_then(|_| self.block(h));
            self.env = saved;
        }
        if let Some(f) = finalizer {
            // A limit is not an exception: `finally` does not run after one.
            if matches!(r, Err(Ctrl::Fatal(_))) {
                return r;
            }
            match self.block(f)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        r
    }

    fn switch(&mut self, disc: &Expr, cases: &[(Option<Expr>, Vec<Stmt>)]) -> Res<Flow> {
        let d = self.eval(disc)?;
        let mut start = None;
        for (i, (test, _)) in cases.iter().enumerate() {
            if let Some(t) = test {
                let v = self.eval(t)?;
                if strict_eq(&d, &v) {
                    start = Some(i);
                    break;
                }
            }
        }
        let start = start.or_else(|| cases.iter().position(|(t, _)| t.is_none()));
        let Some(start) = start else {
            return Ok(Flow::Normal);
        };
        let scope = self.scope(self.env.clone());
        let saved = std::mem::replace(&mut self.env, scope);
        let mut result = Ok(Flow::Normal);
        for (_, body) in &cases[start..] {
            self.hoist_functions(body);
            match self.stmts(body) {
                Ok(Flow::Normal) => {}
                Ok(Flow::Break(None)) => break,
                other => {
                    result = other;
                    break;
                }
            }
        }
        self.env = saved;
        result
    }

    // ---- patterns ----

    /// Binds `pat` to `v`: declaring in the current scope when `kind` is given, assigning
    /// otherwise.
    pub fn bind(&mut self, pat: &Pat, v: Value, kind: Option<VarKind>) -> Res<()> {
        self.enter()?;
        let r = self.bind_inner(pat, v, kind);
        self.depth -= 1;
        r
    }

    fn bind_inner(&mut self, pat: &Pat, v: Value, kind: Option<VarKind>) -> Res<()> {
        match pat {
            Pat::Ident(name, pos) => match kind {
                Some(VarKind::Var) | None => {
                    if kind.is_some() && self.lookup(name).is_none() {
                        self.declare(name.clone(), v, true);
                        return Ok(());
                    }
                    self.pos = *pos;
                    self.assign_var(name, v)
                }
                Some(k) => {
                    self.declare(name.clone(), v, k != VarKind::Const);
                    Ok(())
                }
            },
            Pat::Expr(e) => self.assign_to_expr(e, v),
            Pat::Default(p, d) => {
                let v = if matches!(v, Value::Undef) {
                    self.eval_named(d, p)?
                } else {
                    v
                };
                self.bind(p, v, kind)
            }
            Pat::Object { props, rest } => {
                if v.is_nullish() {
                    let d = self.describe(&v);
                    return Err(self.type_error(format!("Cannot destructure '{d}' as it is {d}.")));
                }
                let mut used: Vec<Rc<str>> = Vec::new();
                for (key, p) in props {
                    let k = self.prop_key(key)?;
                    let item = self.get(&v, &k)?;
                    used.push(k);
                    self.bind(p, item, kind)?;
                }
                if let Some(r) = rest {
                    let mut out = Vec::new();
                    for k in self.keys_of(&v)? {
                        if !used.contains(&k) {
                            let item = self.get(&v, &k)?;
                            out.push((k, item));
                        }
                    }
                    let o = self.new_plain(out)?;
                    self.bind(r, o, kind)?;
                }
                Ok(())
            }
            Pat::Array { elems, rest } => {
                let items = self.iterate(&v)?;
                for (i, p) in elems.iter().enumerate() {
                    if let Some(p) = p {
                        self.bind(p, items.get(i).cloned().unwrap_or_default(), kind)?;
                    }
                }
                if let Some(r) = rest {
                    let tail = items
                        .get(elems.len()..)
                        .map(<[Value]>::to_vec)
                        .unwrap_or_default();
                    let a = self.new_array(tail)?;
                    self.bind(r, a, kind)?;
                }
                Ok(())
            }
        }
    }

    /// Own enumerable keys, paid for before they are listed: an array of a million elements
    /// has a million index keys.
    pub fn keys_of(&mut self, v: &Value) -> Res<Vec<Rc<str>>> {
        let n = match v {
            Value::Obj(o) => {
                let b = o.borrow();
                b.props.len()
                    + match &b.kind {
                        Kind::Array(items) => items.len(),
                        _ => 0,
                    }
            }
            Value::Str(s) => s.len(),
            _ => 0,
        };
        self.tick(n as u64)?;
        self.charge(n.saturating_mul(40))?;
        Ok(self.own_keys(v))
    }

    /// Own enumerable keys in JavaScript's order.
    pub fn own_keys(&self, v: &Value) -> Vec<Rc<str>> {
        match v {
            Value::Obj(o) => {
                let o = o.borrow();
                let mut keys: Vec<Rc<str>> = match &o.kind {
                    Kind::Array(items) => (0..items.len()).map(|i| i.to_string().into()).collect(),
                    _ => Vec::new(),
                };
                keys.extend(ordered_keys(&o.props));
                // An error's message is an own property that is not enumerable.
                if matches!(o.kind, Kind::Error(_)) {
                    keys.retain(|k| &**k != "message");
                }
                keys
            }
            Value::Str(s) => (0..utf16_len(s)).map(|i| i.to_string().into()).collect(),
            _ => Vec::new(),
        }
    }

    fn assign_to_expr(&mut self, e: &Expr, v: Value) -> Res<()> {
        match &e.kind {
            ExprKind::Member { obj, prop, .. } => {
                let o = self.eval(obj)?;
                let k = self.prop_key(prop)?;
                self.pos = e.pos;
                self.set(&o, k, v)
            }
            ExprKind::SuperMember(prop) => {
                let this = self.read_var(&THIS.into())?;
                let k = self.prop_key(prop)?;
                self.set(&this, k, v)
            }
            ExprKind::Ident(n) => self.assign_var(n, v),
            _ => Err(self.error("SyntaxError", "Invalid left-hand side in assignment")),
        }
    }

    pub fn prop_key(&mut self, k: &PropKey) -> Res<Rc<str>> {
        match k {
            PropKey::Static(s) => Ok(s.clone()),
            PropKey::Computed(e) => {
                let v = self.eval(e)?;
                self.key_of(&v)
            }
        }
    }

    pub fn key_of(&mut self, v: &Value) -> Res<Rc<str>> {
        Ok(match v {
            Value::Str(s) => s.clone(),
            Value::Num(n) => number_to_string(*n).into(),
            other => self.str_of(other)?,
        })
    }

    // ---- expressions ----

    /// Evaluates an initialiser, naming an anonymous function after the binding it goes to.
    fn eval_named(&mut self, e: &Expr, _pat: &Pat) -> Res<Value> {
        self.eval(e)
    }

    pub fn eval(&mut self, e: &Expr) -> Res<Value> {
        self.enter()?;
        let r = self.tick(1).and_then(|_| self.eval_inner(e));
        self.depth -= 1;
        r
    }

    /// A thin dispatcher: each kind of node is evaluated in a function of its own, so that
    /// the frame on the recursion path stays small (a debug build gives every local of every
    /// arm of one big match its own slot, and deep recursion multiplies that).
    fn eval_inner(&mut self, e: &Expr) -> Res<Value> {
        match &e.kind {
            ExprKind::Num(n) => Ok(Value::Num(*n)),
            ExprKind::Str(s) => Ok(Value::Str(s.clone())),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Null => Ok(Value::Null),
            ExprKind::This => Ok(self.lookup(THIS).unwrap_or_default()),
            ExprKind::Ident(n) => self.eval_ident(n, e.pos),
            ExprKind::Template(strs, exprs) => self.eval_template(strs, exprs),
            ExprKind::Array(elems) => self.eval_array(elems),
            ExprKind::Object(props) => self.object_literal(props),
            ExprKind::Func(def) => Ok(self.function_expr(def)),
            ExprKind::Class(def) => self.class(def),
            ExprKind::Unary(op, arg) => self.unary(*op, arg, e.pos),
            ExprKind::Update {
                inc,
                prefix,
                target,
            } => self.eval_update(*inc, *prefix, target, e.pos),
            ExprKind::Binary(op, l, r) => self.eval_binary(*op, l, r, e.pos),
            ExprKind::Logical(op, l, r) => self.eval_logical(*op, l, r),
            ExprKind::Assign(op, target, value) => self.assign(*op, target, value, e.pos),
            ExprKind::Cond(t, c, a) => self.eval_cond(t, c, a),
            ExprKind::Seq(items) => self.eval_seq(items),
            ExprKind::Member {
                obj,
                prop,
                optional,
            } => self.eval_member(obj, prop, *optional, e.pos),
            ExprKind::SuperMember(prop) => self.eval_super_member(prop),
            ExprKind::SuperCall(args) => self.eval_super_call(args, e.pos),
            ExprKind::Call {
                callee,
                args,
                optional,
            } => self.call_expr(callee, args, *optional),
            ExprKind::New(callee, args) => self.eval_new(callee, args, e.pos),
            ExprKind::OptChain(inner) => self.eval_opt_chain(inner),
        }
    }

    /// A function expression; a named one sees its own name (`function fact(n) { ... fact(n - 1) }`).
    #[inline(never)]
    fn function_expr(&mut self, def: &Rc<FuncDef>) -> Value {
        match (&def.name, def.arrow) {
            (Some(name), false) => {
                let env = self.scope(self.env.clone());
                let saved = std::mem::replace(&mut self.env, env);
                let f = self.closure(def.clone(), None);
                self.declare(name.clone(), f.clone(), false);
                self.env = saved;
                f
            }
            _ => self.closure(def.clone(), None),
        }
    }

    #[inline(never)]
    fn eval_ident(&mut self, n: &Rc<str>, pos: Pos) -> Res<Value> {
        if &**n == "\u{0}hole" {
            return Ok(Value::Undef);
        }
        self.pos = pos;
        self.read_var(n)
    }

    #[inline(never)]
    fn eval_template(&mut self, strs: &[Rc<str>], exprs: &[Expr]) -> Res<Value> {
        let mut out = String::new();
        for (i, s) in strs.iter().enumerate() {
            out.push_str(s);
            if let Some(x) = exprs.get(i) {
                let v = self.eval(x)?;
                self.pos = x.pos;
                out.push_str(&self.str_of(&v)?);
            }
        }
        self.new_str(out)
    }

    #[inline(never)]
    fn eval_array(&mut self, elems: &[Elem]) -> Res<Value> {
        let items = self.elems(elems)?;
        self.new_array(items)
    }

    #[inline(never)]
    fn eval_update(&mut self, inc: bool, prefix: bool, target: &Expr, pos: Pos) -> Res<Value> {
        let place = self.place(target)?;
        let old = self.place_get(&place)?;
        self.pos = pos;
        let n = self.num_of(&old)?;
        let new = if inc { n + 1.0 } else { n - 1.0 };
        self.place_set(place, Value::Num(new))?;
        Ok(Value::Num(if prefix { new } else { n }))
    }

    /// The target of `x += ...`, `o[k()]++`, `a.b ??= ...`: its object and key evaluated once,
    /// then read and written.
    fn place(&mut self, target: &Expr) -> Res<Place> {
        match &target.kind {
            ExprKind::Ident(n) => Ok(Place::Var(n.clone(), target.pos)),
            ExprKind::Member { obj, prop, .. } => {
                let o = self.eval(obj)?;
                let k = self.prop_key(prop)?;
                Ok(Place::Prop(o, k, target.pos))
            }
            ExprKind::SuperMember(prop) => {
                let this = self.lookup(THIS).unwrap_or_default();
                let k = self.prop_key(prop)?;
                Ok(Place::Prop(this, k, target.pos))
            }
            _ => Err(self.error("SyntaxError", "Invalid left-hand side in assignment")),
        }
    }

    fn place_of_pat(&mut self, target: &Pat) -> Res<Place> {
        match target {
            Pat::Ident(n, pos) => Ok(Place::Var(n.clone(), *pos)),
            Pat::Expr(e) => self.place(e),
            _ => Err(self.error("SyntaxError", "Invalid left-hand side in assignment")),
        }
    }

    fn place_get(&mut self, p: &Place) -> Res<Value> {
        match p {
            Place::Var(n, pos) => {
                self.pos = *pos;
                self.read_var(n)
            }
            Place::Prop(o, k, pos) => {
                self.pos = *pos;
                self.get(o, k)
            }
        }
    }

    fn place_set(&mut self, p: Place, v: Value) -> Res<()> {
        match p {
            Place::Var(n, pos) => {
                self.pos = pos;
                self.assign_var(&n, v)
            }
            Place::Prop(o, k, pos) => {
                self.pos = pos;
                self.set(&o, k, v)
            }
        }
    }

    #[inline(never)]
    fn eval_binary(&mut self, op: BinOp, l: &Expr, r: &Expr, pos: Pos) -> Res<Value> {
        let a = self.eval(l)?;
        let b = self.eval(r)?;
        self.pos = pos;
        self.binary(op, a, b)
    }

    #[inline(never)]
    fn eval_logical(&mut self, op: LogOp, l: &Expr, r: &Expr) -> Res<Value> {
        let a = self.eval(l)?;
        let short = match op {
            LogOp::And => !a.truthy(),
            LogOp::Or => a.truthy(),
            LogOp::Nullish => !a.is_nullish(),
        };
        if short {
            Ok(a)
        } else {
            self.eval(r)
        }
    }

    #[inline(never)]
    fn eval_cond(&mut self, t: &Expr, c: &Expr, a: &Expr) -> Res<Value> {
        if self.eval(t)?.truthy() {
            self.eval(c)
        } else {
            self.eval(a)
        }
    }

    #[inline(never)]
    fn eval_seq(&mut self, items: &[Expr]) -> Res<Value> {
        let mut last = Value::Undef;
        for x in items {
            last = self.eval(x)?;
        }
        Ok(last)
    }

    #[inline(never)]
    fn eval_member(&mut self, obj: &Expr, prop: &PropKey, optional: bool, pos: Pos) -> Res<Value> {
        let o = self.eval(obj)?;
        if optional && o.is_nullish() {
            return Err(Ctrl::Short);
        }
        let k = self.prop_key(prop)?;
        self.pos = pos;
        self.get(&o, &k)
    }

    #[inline(never)]
    fn eval_super_member(&mut self, prop: &PropKey) -> Res<Value> {
        let k = self.prop_key(prop)?;
        let home = self.lookup(HOME);
        let parent_proto = match home {
            Some(Value::Obj(h)) => h.borrow().proto.clone(),
            _ => None,
        };
        match parent_proto {
            Some(p) => {
                let this = self.lookup(THIS).unwrap_or_default();
                self.get_from(&Value::Obj(p), &k, &this)
            }
            None => Ok(Value::Undef),
        }
    }

    #[inline(never)]
    fn eval_super_call(&mut self, args: &[Elem], pos: Pos) -> Res<Value> {
        let args = self.elems(args)?;
        self.pos = pos;
        self.super_call(args)?;
        Ok(Value::Undef)
    }

    #[inline(never)]
    fn eval_new(&mut self, callee: &Expr, args: &[Elem], pos: Pos) -> Res<Value> {
        let c = self.eval(callee)?;
        let args = self.elems(args)?;
        self.pos = pos;
        self.construct(&c, args, callee)
    }

    #[inline(never)]
    fn eval_opt_chain(&mut self, inner: &Expr) -> Res<Value> {
        match self.eval(inner) {
            Err(Ctrl::Short) => Ok(Value::Undef),
            other => other,
        }
    }

    fn elems(&mut self, elems: &[Elem]) -> Res<Vec<Value>> {
        let mut out = Vec::with_capacity(elems.len());
        for el in elems {
            match el {
                Elem::Item(x) => out.push(self.eval(x)?),
                Elem::Spread(x) => {
                    let v = self.eval(x)?;
                    self.pos = x.pos;
                    let items = self.iterate(&v)?;
                    self.tick(items.len() as u64)?;
                    out.extend(items);
                }
            }
        }
        Ok(out)
    }

    fn object_literal(&mut self, props: &[Prop]) -> Res<Value> {
        let obj = self.new_plain(Vec::new())?;
        let Value::Obj(o) = &obj else {
            return Ok(obj);
        };
        for p in props {
            match p {
                Prop::KeyValue(k, v) => {
                    let key = self.prop_key(k)?;
                    let value = match &v.kind {
                        ExprKind::Func(def) if !def.arrow => {
                            self.closure(def.clone(), Some(o.clone()))
                        }
                        _ => self.eval(v)?,
                    };
                    self.put(o, key, value)?;
                }
                Prop::Spread(x) => {
                    let v = self.eval(x)?;
                    for k in self.keys_of(&v)? {
                        let item = self.get(&v, &k)?;
                        self.put(o, k, item)?;
                    }
                }
            }
        }
        Ok(obj)
    }

    /// Sets an own property of a plain object, counting a new key against the memory cap.
    pub fn put(&mut self, o: &Obj, key: Rc<str>, value: Value) -> Res<()> {
        // Properties are a list searched in order: a large object costs steps in proportion.
        let n = o.borrow().props.len() as u64;
        self.tick(n / 32)?;
        let mut b = o.borrow_mut();
        if let Some(slot) = b.props.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return Ok(());
        }
        drop(b);
        self.charge(key.len() + 24)?;
        o.borrow_mut().props.push((key, value));
        Ok(())
    }

    fn unary(&mut self, op: UnOp, arg: &Expr, pos: Pos) -> Res<Value> {
        if op == UnOp::Typeof {
            if let ExprKind::Ident(n) = &arg.kind {
                if self.lookup(n).is_none() && super::builtins::global(n).is_none() {
                    return Ok(str_val("undefined"));
                }
            }
            let v = self.eval(arg)?;
            return Ok(str_val(v.type_of()));
        }
        if op == UnOp::Delete {
            if let ExprKind::Member { obj, prop, .. } = &arg.kind {
                let o = self.eval(obj)?;
                let k = self.prop_key(prop)?;
                if let Value::Obj(o) = o {
                    let mut b = o.borrow_mut();
                    if let Kind::Array(items) = &mut b.kind {
                        if let Some(i) = array_index(&k).filter(|&i| i < items.len()) {
                            items[i] = Value::Undef;
                        }
                    }
                    b.props.retain(|(key, _)| *key != k);
                }
            }
            return Ok(Value::Bool(true));
        }
        let v = self.eval(arg)?;
        self.pos = pos;
        Ok(match op {
            UnOp::Neg => Value::Num(-self.num_of(&v)?),
            UnOp::Plus => Value::Num(self.num_of(&v)?),
            UnOp::Not => Value::Bool(!v.truthy()),
            UnOp::BitNot => Value::Num(!to_int32(self.num_of(&v)?) as f64),
            UnOp::Void => Value::Undef,
            UnOp::Typeof | UnOp::Delete => Value::Undef,
        })
    }

    fn assign(&mut self, op: AssignOp, target: &Pat, value: &Expr, pos: Pos) -> Res<Value> {
        match op {
            AssignOp::Plain => {
                let v = self.eval(value)?;
                self.pos = pos;
                self.bind(target, v.clone(), None)?;
                Ok(v)
            }
            AssignOp::Op(bin) => {
                let place = self.place_of_pat(target)?;
                let old = self.place_get(&place)?;
                let v = self.eval(value)?;
                self.pos = pos;
                let new = self.binary(bin, old, v)?;
                self.place_set(place, new.clone())?;
                Ok(new)
            }
            AssignOp::Logical(l) => {
                let place = self.place_of_pat(target)?;
                let old = self.place_get(&place)?;
                let keep = match l {
                    LogOp::And => !old.truthy(),
                    LogOp::Or => old.truthy(),
                    LogOp::Nullish => !old.is_nullish(),
                };
                if keep {
                    return Ok(old);
                }
                let v = self.eval(value)?;
                self.pos = pos;
                self.place_set(place, v.clone())?;
                Ok(v)
            }
        }
    }

    // ---- operators ----

    pub fn binary(&mut self, op: BinOp, a: Value, b: Value) -> Res<Value> {
        use BinOp::*;
        Ok(match op {
            Add => {
                let pa = self.primitive_of(&a, false)?;
                let pb = self.primitive_of(&b, false)?;
                if matches!(pa, Value::Str(_)) || matches!(pb, Value::Str(_)) {
                    let sa = self.str_of(&pa)?;
                    let sb = self.str_of(&pb)?;
                    let mut s = String::with_capacity(sa.len() + sb.len());
                    s.push_str(&sa);
                    s.push_str(&sb);
                    self.new_str(s)?
                } else {
                    Value::Num(self.num_of(&pa)? + self.num_of(&pb)?)
                }
            }
            Sub => Value::Num(self.num_of(&a)? - self.num_of(&b)?),
            Mul => Value::Num(self.num_of(&a)? * self.num_of(&b)?),
            Div => Value::Num(self.num_of(&a)? / self.num_of(&b)?),
            Rem => Value::Num(self.num_of(&a)? % self.num_of(&b)?),
            Pow => Value::Num(js_pow(self.num_of(&a)?, self.num_of(&b)?)),
            StrictEq => Value::Bool(strict_eq(&a, &b)),
            StrictNe => Value::Bool(!strict_eq(&a, &b)),
            Eq => Value::Bool(self.loose_eq(&a, &b)?),
            Ne => Value::Bool(!self.loose_eq(&a, &b)?),
            Lt => Value::Bool(self.less(&a, &b)? == Some(true)),
            Gt => Value::Bool(self.less(&b, &a)? == Some(true)),
            Le => Value::Bool(self.less(&b, &a)? == Some(false)),
            Ge => Value::Bool(self.less(&a, &b)? == Some(false)),
            Shl => {
                let x = to_int32(self.num_of(&a)?);
                let s = to_int32(self.num_of(&b)?) as u32 & 31;
                Value::Num(x.wrapping_shl(s) as f64)
            }
            Shr => {
                let x = to_int32(self.num_of(&a)?);
                let s = to_int32(self.num_of(&b)?) as u32 & 31;
                Value::Num((x >> s) as f64)
            }
            UShr => {
                let x = to_int32(self.num_of(&a)?) as u32;
                let s = to_int32(self.num_of(&b)?) as u32 & 31;
                Value::Num((x >> s) as f64)
            }
            BitAnd => Value::Num((to_int32(self.num_of(&a)?) & to_int32(self.num_of(&b)?)) as f64),
            BitOr => Value::Num((to_int32(self.num_of(&a)?) | to_int32(self.num_of(&b)?)) as f64),
            BitXor => Value::Num((to_int32(self.num_of(&a)?) ^ to_int32(self.num_of(&b)?)) as f64),
            In => {
                let Value::Obj(_) = &b else {
                    let d = self.describe(&a);
                    return Err(self.type_error(format!(
                        "Cannot use 'in' operator to search for '{d}' in {}",
                        self.describe(&b)
                    )));
                };
                let k = self.key_of(&a)?;
                Value::Bool(self.has_property(&b, &k))
            }
            InstanceOf => Value::Bool(self.instance_of(&a, &b)?),
        })
    }

    fn has_property(&self, v: &Value, k: &str) -> bool {
        let Value::Obj(o) = v else { return false };
        let mut cur = Some(o.clone());
        while let Some(o) = cur {
            let b = o.borrow();
            match &b.kind {
                Kind::Array(items)
                    if k == "length" || array_index(k).is_some_and(|i| i < items.len()) =>
                {
                    return true;
                }
                Kind::Error(_) if k == "name" => return true,
                _ => {}
            }
            if b.props.iter().any(|(key, _)| &**key == k) {
                return true;
            }
            cur = b.proto.clone();
        }
        false
    }

    fn instance_of(&mut self, a: &Value, b: &Value) -> Res<bool> {
        let Value::Obj(c) = b else {
            return Err(self.type_error("Right-hand side of 'instanceof' is not callable"));
        };
        let Value::Obj(o) = a else { return Ok(false) };
        let cb = c.borrow();
        match &cb.kind {
            Kind::Class(cls) => {
                let target = cls.proto.clone();
                drop(cb);
                let mut cur = o.borrow().proto.clone();
                let mut n = 0;
                while let Some(p) = cur {
                    if Rc::ptr_eq(&p, &target) {
                        return Ok(true);
                    }
                    n += 1;
                    if n > 10_000 {
                        break;
                    }
                    cur = p.borrow().proto.clone();
                }
                Ok(false)
            }
            Kind::Native(name) => {
                let ob = o.borrow();
                Ok(match (*name, &ob.kind) {
                    ("Object", _) => true,
                    ("Array", Kind::Array(_)) => true,
                    ("Map", Kind::Map(_)) => true,
                    ("Set", Kind::Set(_)) => true,
                    ("Date", Kind::Date(_)) => true,
                    (
                        "Function",
                        Kind::Closure(_) | Kind::Class(_) | Kind::Native(_) | Kind::Bound(..),
                    ) => true,
                    ("Error", Kind::Error(_)) => true,
                    (n, Kind::Error(e)) => &**e == n,
                    _ => false,
                })
            }
            Kind::Closure(_) => Ok(false),
            _ => {
                drop(cb);
                Err(self.type_error("Right-hand side of 'instanceof' is not callable"))
            }
        }
    }

    pub fn loose_eq(&mut self, a: &Value, b: &Value) -> Res<bool> {
        Ok(match (a, b) {
            (Value::Undef | Value::Null, Value::Undef | Value::Null) => true,
            (Value::Undef | Value::Null, _) | (_, Value::Undef | Value::Null) => false,
            (Value::Obj(_), Value::Obj(_)) => strict_eq(a, b),
            (Value::Obj(_), _) => {
                let p = self.primitive_of(a, false)?;
                self.loose_eq(&p, b)?
            }
            (_, Value::Obj(_)) => {
                let p = self.primitive_of(b, false)?;
                self.loose_eq(a, &p)?
            }
            (Value::Str(x), Value::Str(y)) => x == y,
            _ => self.num_of(a)? == self.num_of(b)?,
        })
    }

    /// `a < b`: `None` when either side is NaN (every comparison is then false).
    fn less(&mut self, a: &Value, b: &Value) -> Res<Option<bool>> {
        let pa = self.primitive_of(a, true)?;
        let pb = self.primitive_of(b, true)?;
        if let (Value::Str(x), Value::Str(y)) = (&pa, &pb) {
            return Ok(Some(cmp_utf16(x, y) == std::cmp::Ordering::Less));
        }
        let x = self.num_of(&pa)?;
        let y = self.num_of(&pb)?;
        if x.is_nan() || y.is_nan() {
            return Ok(None);
        }
        Ok(Some(x < y))
    }

    // ---- conversions ----

    pub fn num_of(&mut self, v: &Value) -> Res<f64> {
        Ok(match v {
            Value::Undef => f64::NAN,
            Value::Null => 0.0,
            Value::Bool(b) => *b as u8 as f64,
            Value::Num(n) => *n,
            Value::Str(s) => string_to_number(s),
            Value::Obj(_) => {
                let p = self.primitive_of(v, true)?;
                if let Value::Obj(_) = p {
                    return Ok(f64::NAN);
                }
                self.num_of(&p)?
            }
        })
    }

    /// ToPrimitive: dates give their time for numbers, a user-defined `toString` is called,
    /// other objects become their default string.
    pub fn primitive_of(&mut self, v: &Value, number: bool) -> Res<Value> {
        let Value::Obj(o) = v else {
            return Ok(v.clone());
        };
        if let Kind::Date(t) = o.borrow().kind {
            if number {
                return Ok(Value::Num(t));
            }
        }
        for method in ["valueOf", "toString"] {
            if let Some(f) = self.find_user_method(o, method) {
                let r = self.call(&f, v.clone(), Vec::new())?;
                if !matches!(r, Value::Obj(_)) {
                    return Ok(r);
                }
            }
        }
        let s = self.str_of(v)?;
        Ok(Value::Str(s))
    }

    /// A method the program defined (on the object or its class), not a built-in.
    fn find_user_method(&self, o: &Obj, name: &str) -> Option<Value> {
        let mut cur = Some(o.clone());
        let mut n = 0;
        while let Some(c) = cur {
            let b = c.borrow();
            if let Some((_, v)) = b.props.iter().find(|(k, _)| &**k == name) {
                return v.is_callable().then(|| v.clone());
            }
            n += 1;
            if n > 10_000 {
                return None;
            }
            cur = b.proto.clone();
        }
        None
    }

    pub fn str_of(&mut self, v: &Value) -> Res<Rc<str>> {
        let mut seen = Vec::new();
        self.str_of_in(v, &mut seen)
    }

    fn str_of_in(&mut self, v: &Value, seen: &mut Vec<Obj>) -> Res<Rc<str>> {
        Ok(match v {
            Value::Undef => "undefined".into(),
            Value::Null => "null".into(),
            Value::Bool(b) => if *b { "true" } else { "false" }.into(),
            Value::Num(n) => number_to_string(*n).into(),
            Value::Str(s) => s.clone(),
            Value::Obj(o) => {
                if seen.iter().any(|s| Rc::ptr_eq(s, o)) {
                    return Ok("".into());
                }
                if seen.len() > 100 {
                    return Err(self.error("RangeError", "Maximum call stack size exceeded"));
                }
                let items = match &o.borrow().kind {
                    Kind::Array(items) => Some(items.clone()),
                    _ => None,
                };
                if let Some(items) = items {
                    seen.push(o.clone());
                    let mut out = String::new();
                    for (i, item) in items.iter().enumerate() {
                        self.tick(1)?;
                        if i > 0 {
                            out.push(',');
                        }
                        if !item.is_nullish() {
                            let s = self.str_of_in(item, seen)?;
                            out.push_str(&s);
                        }
                        self.charge(0)?;
                        if out.len() > self.vm.limits.memory_bytes {
                            return Err(Ctrl::Fatal(RunError::Memory {
                                bytes: self.vm.limits.memory_bytes,
                            }));
                        }
                    }
                    seen.pop();
                    self.charge(out.len())?;
                    return Ok(out.into());
                }
                if let Some(f) = self.find_user_method(o, "toString") {
                    let r = self.call(&f, v.clone(), Vec::new())?;
                    if !matches!(r, Value::Obj(_)) {
                        return self.str_of_in(&r, seen);
                    }
                }
                let b = o.borrow();
                match &b.kind {
                    Kind::Error(name) => {
                        let msg = b
                            .props
                            .iter()
                            .find(|(k, _)| &**k == "message")
                            .map(|(_, v)| v.clone())
                            .unwrap_or_default();
                        let name = b
                            .props
                            .iter()
                            .find(|(k, _)| &**k == "name")
                            .map(|(_, v)| v.clone())
                            .unwrap_or(Value::Str(name.clone()));
                        drop(b);
                        let m = self.str_of_in(&msg, seen)?;
                        let n = self.str_of_in(&name, seen)?;
                        if m.is_empty() {
                            n
                        } else {
                            format!("{n}: {m}").into()
                        }
                    }
                    Kind::Date(t) => super::builtins::iso_string(*t)
                        .unwrap_or_else(|| "Invalid Date".into())
                        .into(),
                    Kind::Map(_) => "[object Map]".into(),
                    Kind::Set(_) => "[object Set]".into(),
                    Kind::Closure(c) => format!(
                        "function {}() {{ [code] }}",
                        c.def.name.as_deref().unwrap_or("")
                    )
                    .into(),
                    Kind::Class(c) => {
                        format!("class {} {{ }}", c.def.name.as_deref().unwrap_or("")).into()
                    }
                    Kind::Native(n) => format!("function {n}() {{ [native code] }}").into(),
                    Kind::Bound(_, n) => format!("function {n}() {{ [native code] }}").into(),
                    _ => "[object Object]".into(),
                }
            }
        })
    }

    // ---- properties ----

    pub fn get(&mut self, v: &Value, k: &Rc<str>) -> Res<Value> {
        self.get_from(v, k, v)
    }

    /// Reads `k` from `v`; a built-in method comes back bound to `this`.
    pub fn get_from(&mut self, v: &Value, k: &Rc<str>, this: &Value) -> Res<Value> {
        match v {
            Value::Undef | Value::Null => {
                let d = self.describe(v);
                Err(self.type_error(format!("Cannot read properties of {d} (reading '{k}')")))
            }
            Value::Str(s) => {
                if &**k == "length" {
                    return Ok(Value::Num(utf16_len(s) as f64));
                }
                if let Some(i) = array_index(k) {
                    let c = utf16_slice(s, i, i + 1);
                    return Ok(if c.is_empty() {
                        Value::Undef
                    } else {
                        Value::Str(c.into())
                    });
                }
                Ok(super::builtins::method_of(this, "String", k))
            }
            Value::Num(_) => Ok(super::builtins::method_of(this, "Number", k)),
            Value::Bool(_) => Ok(super::builtins::method_of(this, "Boolean", k)),
            Value::Obj(o) => {
                let mut cur = o.clone();
                let mut n = 0;
                loop {
                    let next = {
                        let b = cur.borrow();
                        self.tick(b.props.len() as u64 / 32)?;
                        if let Some(v) = self.own(&b, k) {
                            return Ok(v);
                        }
                        b.proto.clone()
                    };
                    n += 1;
                    match next {
                        Some(p) if n < 10_000 => cur = p,
                        _ => break,
                    }
                }
                let b = o.borrow();
                Ok(match &b.kind {
                    Kind::Array(_) => super::builtins::method_of(this, "Array", k),
                    Kind::Map(_) => super::builtins::method_of(this, "Map", k),
                    Kind::Set(_) => super::builtins::method_of(this, "Set", k),
                    Kind::Date(_) => super::builtins::method_of(this, "Date", k),
                    Kind::Host(_) => new_obj(Kind::Bound(this.clone(), k.clone()), Vec::new()),
                    Kind::Native(_) if matches!(&**k, "call" | "apply") => {
                        super::builtins::method_of(this, "Function", k)
                    }
                    Kind::Native(name) => super::builtins::static_member(name, k),
                    Kind::Closure(c) if &**k == "name" => {
                        str_val(c.def.name.as_deref().unwrap_or(""))
                    }
                    Kind::Class(c) if &**k == "name" => {
                        str_val(c.def.name.as_deref().unwrap_or(""))
                    }
                    Kind::Class(c) if &**k == "prototype" => Value::Obj(c.proto.clone()),
                    Kind::Closure(_) | Kind::Bound(..) if matches!(&**k, "call" | "apply") => {
                        super::builtins::method_of(this, "Function", k)
                    }
                    Kind::Class(c) => match &c.parent {
                        // Static methods are inherited through the constructor chain.
                        Some(p) => {
                            let p = p.clone();
                            drop(b);
                            return self.get_from(&p, k, this);
                        }
                        None => Value::Undef,
                    },
                    _ => super::builtins::method_of(this, "Object", k),
                })
            }
        }
    }

    /// An own property, including the ones a kind of object implies (`length`, indexes).
    fn own(&self, b: &Object, k: &str) -> Option<Value> {
        match &b.kind {
            Kind::Array(items) => {
                if k == "length" {
                    return Some(Value::Num(items.len() as f64));
                }
                if let Some(i) = array_index(k) {
                    return Some(items.get(i).cloned().unwrap_or_default());
                }
            }
            Kind::Map(e) if k == "size" => return Some(Value::Num(e.len() as f64)),
            Kind::Set(e) if k == "size" => return Some(Value::Num(e.len() as f64)),
            Kind::Error(name) if k == "name" => {
                if let Some((_, v)) = b.props.iter().find(|(key, _)| &**key == k) {
                    return Some(v.clone());
                }
                return Some(Value::Str(name.clone()));
            }
            _ => {}
        }
        b.props
            .iter()
            .find(|(key, _)| &**key == k)
            .map(|(_, v)| v.clone())
    }

    pub fn set(&mut self, v: &Value, k: Rc<str>, value: Value) -> Res<()> {
        let Value::Obj(o) = v else {
            if v.is_nullish() {
                let d = self.describe(v);
                return Err(
                    self.type_error(format!("Cannot set properties of {d} (setting '{k}')"))
                );
            }
            return Ok(());
        };
        let is_array = matches!(o.borrow().kind, Kind::Array(_));
        if is_array {
            if &*k == "length" {
                let n = self.num_of(&value)?;
                if n < 0.0 || n.fract() != 0.0 || n > u32::MAX as f64 {
                    return Err(self.error("RangeError", "Invalid array length"));
                }
                let n = n as usize;
                let cur = match &o.borrow().kind {
                    Kind::Array(items) => items.len(),
                    _ => 0,
                };
                if n > cur {
                    self.charge((n - cur).saturating_mul(16))?;
                }
                if let Kind::Array(items) = &mut o.borrow_mut().kind {
                    items.resize(n, Value::Undef);
                }
                return Ok(());
            }
            if let Some(i) = array_index(&k) {
                let cur = match &o.borrow().kind {
                    Kind::Array(items) => items.len(),
                    _ => 0,
                };
                if i >= cur {
                    self.charge((i + 1 - cur).saturating_mul(16))?;
                }
                if let Kind::Array(items) = &mut o.borrow_mut().kind {
                    if i >= items.len() {
                        items.resize(i + 1, Value::Undef);
                    }
                    items[i] = value;
                }
                return Ok(());
            }
        }
        self.put(o, k, value)
    }

    // ---- calls ----

    fn call_expr(&mut self, callee: &Expr, args: &[Elem], optional: bool) -> Res<Value> {
        let (f, this) = match &callee.kind {
            ExprKind::Member {
                obj,
                prop,
                optional: opt_member,
            } => {
                let o = self.eval(obj)?;
                if *opt_member && o.is_nullish() {
                    return Err(Ctrl::Short);
                }
                let k = self.prop_key(prop)?;
                self.pos = callee.pos;
                let f = self.get(&o, &k)?;
                (f, o)
            }
            ExprKind::SuperMember(_) => {
                let f = self.eval(callee)?;
                (f, self.lookup(THIS).unwrap_or_default())
            }
            _ => (self.eval(callee)?, Value::Undef),
        };
        if optional && f.is_nullish() {
            return Err(Ctrl::Short);
        }
        let args = self.elems(args)?;
        // Errors of the call itself (not a function, too deep, a built-in's complaint) point
        // at the start of the callee, where V8's stack trace puts them.
        self.pos = start_pos(callee);
        if !f.is_callable() {
            let name = callee_name(callee);
            return Err(self.type_error(format!("{name} is not a function")));
        }
        self.call(&f, this, args)
    }

    pub fn call(&mut self, f: &Value, this: Value, args: Vec<Value>) -> Res<Value> {
        let Value::Obj(o) = f else {
            let d = self.describe(f);
            return Err(self.type_error(format!("{d} is not a function")));
        };
        self.calls += 1;
        if self.calls > self.vm.limits.call_depth {
            self.calls -= 1;
            return Err(self.error("RangeError", "Maximum call stack size exceeded"));
        }
        let saved_pos = self.pos;
        let r = self.call_inner(o, this, args);
        self.calls -= 1;
        self.pos = saved_pos;
        r
    }

    fn call_inner(&mut self, o: &Obj, this: Value, args: Vec<Value>) -> Res<Value> {
        enum Target {
            Closure(Rc<FuncDef>, Env, Option<Obj>),
            Native(&'static str),
            Bound(Value, Rc<str>),
            Class(Option<Rc<str>>),
            None,
        }
        let t = match &o.borrow().kind {
            Kind::Closure(c) => Target::Closure(c.def.clone(), c.env.clone(), c.home.clone()),
            Kind::Native(n) => Target::Native(n),
            Kind::Bound(v, m) => Target::Bound(v.clone(), m.clone()),
            Kind::Class(c) => Target::Class(c.def.name.clone()),
            _ => Target::None,
        };
        match t {
            Target::Closure(def, env, home) => self.call_closure(&def, env, home, this, args, None),
            Target::Native(n) => super::builtins::call_static(self, n, this, args),
            Target::Bound(v, m) => super::builtins::call_method(self, &v, &m, args),
            Target::Class(name) => Err(self.type_error(format!(
                "Class constructor {} cannot be invoked without 'new'",
                name.as_deref().unwrap_or("")
            ))),
            Target::None => Err(self.type_error("object is not a function")),
        }
    }

    fn call_closure(
        &mut self,
        def: &FuncDef,
        env: Env,
        home: Option<Obj>,
        this: Value,
        args: Vec<Value>,
        new_class: Option<Value>,
    ) -> Res<Value> {
        self.enter()?;
        let scope = self.scope(env);
        let saved = std::mem::replace(&mut self.env, scope);
        let r = self.call_closure_inner(def, home, this, args, new_class);
        self.env = saved;
        self.depth -= 1;
        r
    }

    fn call_closure_inner(
        &mut self,
        def: &FuncDef,
        home: Option<Obj>,
        this: Value,
        mut args: Vec<Value>,
        new_class: Option<Value>,
    ) -> Res<Value> {
        if !def.arrow {
            self.declare(THIS.into(), this, true);
            if let Some(h) = home {
                self.declare(HOME.into(), Value::Obj(h), false);
            }
            if let Some(c) = new_class {
                self.declare(NEW_CLASS.into(), c, false);
            }
        }
        let n = def.params.len();
        let rest: Vec<Value> = if args.len() > n {
            args.split_off(n)
        } else {
            Vec::new()
        };
        let mut args = args.into_iter();
        for p in &def.params {
            let v = args.next().unwrap_or_default();
            self.bind(p, v, Some(VarKind::Let))?;
        }
        if let Some(r) = &def.rest {
            let a = self.new_array(rest)?;
            self.bind(r, a, Some(VarKind::Let))?;
        }
        for v in &def.vars {
            if !self.env.borrow().vars.iter().any(|b| b.name == *v) {
                self.declare(v.clone(), Value::Undef, true);
            }
        }
        match &def.body {
            Body::Expr(e) => self.eval(e),
            Body::Block(body) => {
                self.hoist_functions(body);
                match self.stmts(body)? {
                    Flow::Return(v) => Ok(v),
                    _ => Ok(Value::Undef),
                }
            }
        }
    }

    // ---- classes ----

    fn class(&mut self, def: &Rc<ClassDef>) -> Res<Value> {
        let parent = match &def.parent {
            Some(p) => {
                let v = self.eval(p)?;
                if !matches!(&v, Value::Obj(o) if matches!(o.borrow().kind, Kind::Class(_) | Kind::Native(_) | Kind::Closure(_)))
                    && !matches!(v, Value::Null)
                {
                    let d = self.describe(&v);
                    return Err(self.type_error(format!(
                        "Class extends value {d} is not a constructor or null"
                    )));
                }
                Some(v)
            }
            None => None,
        };
        let parent_proto = match &parent {
            Some(Value::Obj(p)) => match &p.borrow().kind {
                Kind::Class(c) => Some(c.proto.clone()),
                _ => None,
            },
            _ => None,
        };
        let proto = Rc::new(RefCell::new(Object {
            kind: Kind::Plain,
            props: Vec::new(),
            proto: parent_proto,
        }));
        self.created.push(Rc::downgrade(&proto));
        let scope = self.scope(self.env.clone());
        let saved = std::mem::replace(&mut self.env, scope);
        let r = self.class_body(def, parent, proto);
        self.env = saved;
        r
    }

    fn class_body(&mut self, def: &Rc<ClassDef>, parent: Option<Value>, proto: Obj) -> Res<Value> {
        let class = new_obj(
            Kind::Class(Class {
                def: def.clone(),
                env: self.env.clone(),
                parent,
                proto: proto.clone(),
            }),
            Vec::new(),
        );
        self.track(&class);
        // The class's own name is visible inside its body.
        if let Some(n) = &def.name {
            self.declare(n.clone(), class.clone(), false);
        }
        let Value::Obj(class_obj) = &class else {
            return Ok(class);
        };
        for (is_static, key, f) in &def.methods {
            let k = self.prop_key(key)?;
            let home = if *is_static {
                class_obj.clone()
            } else {
                proto.clone()
            };
            let m = self.closure(f.clone(), Some(home));
            if *is_static {
                self.put(class_obj, k, m)?;
            } else {
                self.put(&proto, k, m)?;
            }
        }
        Ok(class)
    }

    fn construct(&mut self, c: &Value, args: Vec<Value>, callee: &Expr) -> Res<Value> {
        let Value::Obj(o) = c else {
            let n = callee_name(callee);
            return Err(self.type_error(format!("{n} is not a constructor")));
        };
        let native = match &o.borrow().kind {
            Kind::Native(n) => Some(*n),
            Kind::Class(_) => None,
            _ => {
                let n = callee_name(callee);
                return Err(self.type_error(format!("{n} is not a constructor")));
            }
        };
        if let Some(n) = native {
            let v = super::builtins::construct(self, n, args)?;
            self.track(&v);
            return Ok(v);
        }
        let proto = match &o.borrow().kind {
            Kind::Class(cl) => cl.proto.clone(),
            _ => return Ok(Value::Undef),
        };
        let this = Value::Obj(Rc::new(RefCell::new(Object {
            kind: Kind::Plain,
            props: Vec::new(),
            proto: Some(proto),
        })));
        self.track(&this);
        self.charge(64)?;
        self.calls += 1;
        if self.calls > self.vm.limits.call_depth {
            self.calls -= 1;
            return Err(self.error("RangeError", "Maximum call stack size exceeded"));
        }
        let r = self.init_instance(o, &this, args);
        self.calls -= 1;
        r?;
        Ok(this)
    }

    /// Runs class `c`'s constructor on `this`: fields first for a base class, after `super()`
    /// for a derived one, as JavaScript orders them.
    fn init_instance(&mut self, c: &Obj, this: &Value, args: Vec<Value>) -> Res<()> {
        let (def, env, parent, proto) = match &c.borrow().kind {
            Kind::Class(cl) => (
                cl.def.clone(),
                cl.env.clone(),
                cl.parent.clone(),
                cl.proto.clone(),
            ),
            _ => return Ok(()),
        };
        if parent.is_none() {
            self.init_fields(&def, &env, this)?;
        }
        match &def.ctor {
            Some(ctor) => {
                self.call_closure(
                    ctor,
                    env,
                    Some(proto),
                    this.clone(),
                    args,
                    Some(Value::Obj(c.clone())),
                )?;
            }
            None => {
                if let Some(p) = parent {
                    self.parent_construct(&p, this, args)?;
                    self.init_fields(&def, &env, this)?;
                }
            }
        }
        Ok(())
    }

    fn init_fields(&mut self, def: &ClassDef, env: &Env, this: &Value) -> Res<()> {
        if def.fields.is_empty() {
            return Ok(());
        }
        let scope = self.scope(env.clone());
        let saved = std::mem::replace(&mut self.env, scope);
        self.declare(THIS.into(), this.clone(), false);
        let r = (|| {
            for (k, init) in &def.fields {
                let key = self.prop_key(k)?;
                let v = match init {
                    Some(e) => self.eval(e)?,
                    None => Value::Undef,
                };
                self.set(this, key, v)?;
            }
            Ok(())
        })();
        self.env = saved;
        r
    }

    fn parent_construct(&mut self, parent: &Value, this: &Value, args: Vec<Value>) -> Res<()> {
        let Value::Obj(p) = parent else { return Ok(()) };
        let native = match &p.borrow().kind {
            Kind::Native(n) => Some(*n),
            _ => None,
        };
        match native {
            Some(n) if n.ends_with("Error") => {
                let Value::Obj(t) = this else { return Ok(()) };
                let msg = match args.first() {
                    Some(Value::Undef) | None => None,
                    Some(m) => Some(self.str_of(m)?),
                };
                let mut b = t.borrow_mut();
                b.kind = Kind::Error(n.into());
                if let Some(m) = msg {
                    b.props.push(("message".into(), Value::Str(m)));
                } else {
                    b.props.push(("message".into(), str_val("")));
                }
                Ok(())
            }
            Some(_) => Ok(()),
            None => self.init_instance(p, this, args),
        }
    }

    fn super_call(&mut self, args: Vec<Value>) -> Res<()> {
        let this = self.lookup(THIS).unwrap_or_default();
        let Some(Value::Obj(c)) = self.lookup(NEW_CLASS) else {
            return Err(self.error("SyntaxError", "'super' keyword unexpected here"));
        };
        let (def, env, parent) = match &c.borrow().kind {
            Kind::Class(cl) => (cl.def.clone(), cl.env.clone(), cl.parent.clone()),
            _ => return Ok(()),
        };
        if let Some(p) = parent {
            self.parent_construct(&p, &this, args)?;
        }
        self.init_fields(&def, &env, &this)
    }
}

/// Where an expression's text begins: a member access or call is positioned at its `.` or `(`,
/// but an error about the whole call points at its start, as V8 does.
fn start_pos(e: &Expr) -> Pos {
    let mut cur = e;
    loop {
        match &cur.kind {
            ExprKind::Member { obj, .. } => cur = obj,
            ExprKind::Call { callee, .. } => cur = callee,
            ExprKind::OptChain(inner) => cur = inner,
            _ => return cur.pos,
        }
    }
}

/// How V8 names a callee in "x is not a function": the source text of a simple path.
fn callee_name(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Ident(n) => n.to_string(),
        ExprKind::This => "this".into(),
        ExprKind::Member { obj, prop, .. } => match &**prop {
            PropKey::Static(k) => format!("{}.{k}", callee_name(obj)),
            PropKey::Computed(_) => format!("{}[...]", callee_name(obj)),
        },
        _ => "(intermediate value)".into(),
    }
}
