//! The parsed expression tree, with functions and macros resolved at parse time so that
//! evaluation never meets a name it does not know.

use crate::sort::StableSort;

/// A parsed CEL expression. Its height is bounded by the parser ([`super::MAX_DEPTH`]), so every
/// walk over it (evaluation, [`Expr::references`], drop) recurses a bounded number of times.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// Byte offset of the node in the parsed source, for messages.
    pub offset: usize,
    pub kind: ExprKind,
    pub(crate) height: usize,
}

/// The shapes an expression can take.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Ident(String),
    /// `operand.field`, or `has(operand.field)` when `test` is set.
    Select {
        operand: Box<Expr>,
        field: String,
        test: bool,
    },
    Index(Box<Expr>, Box<Expr>),
    /// A function call; a receiver-style call's receiver is the first argument.
    Call(Func, Vec<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    /// `range.all(var, ...)` and friends; `filter` is the predicate of `filter` and of the
    /// three-argument `map`, `transform` the mapped expression.
    Comprehension {
        kind: Macro,
        range: Box<Expr>,
        var: String,
        filter: Option<Box<Expr>>,
        transform: Box<Expr>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// The comprehension macros the subset implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Macro {
    All,
    Exists,
    ExistsOne,
    Map,
    Filter,
}

/// The functions the subset implements (CEL's standard ones and cel-go's string extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Size,
    Int,
    Uint,
    Double,
    String,
    Bool,
    Dyn,
    Contains,
    StartsWith,
    EndsWith,
    Matches,
    LowerAscii,
    UpperAscii,
    Split,
    Join,
    Replace,
    Trim,
    Substring,
    IndexOf,
    LastIndexOf,
    CharAt,
}

/// How a function may be called: as `f(x, ...)` (global) and/or `x.f(...)` (receiver), with how
/// many arguments besides the receiver.
pub(crate) struct Signature {
    pub func: Func,
    pub name: &'static str,
    pub global: Option<usize>,
    pub receiver: &'static [usize],
}

pub(crate) const FUNCTIONS: &[Signature] = &[
    sig(Func::Size, "size", Some(1), &[0]),
    sig(Func::Int, "int", Some(1), &[]),
    sig(Func::Uint, "uint", Some(1), &[]),
    sig(Func::Double, "double", Some(1), &[]),
    sig(Func::String, "string", Some(1), &[]),
    sig(Func::Bool, "bool", Some(1), &[]),
    sig(Func::Dyn, "dyn", Some(1), &[]),
    sig(Func::Contains, "contains", None, &[1]),
    sig(Func::StartsWith, "startsWith", None, &[1]),
    sig(Func::EndsWith, "endsWith", None, &[1]),
    sig(Func::Matches, "matches", Some(2), &[1]),
    sig(Func::LowerAscii, "lowerAscii", None, &[0]),
    sig(Func::UpperAscii, "upperAscii", None, &[0]),
    sig(Func::Split, "split", None, &[1, 2]),
    sig(Func::Join, "join", None, &[0, 1]),
    sig(Func::Replace, "replace", None, &[2, 3]),
    sig(Func::Trim, "trim", None, &[0]),
    sig(Func::Substring, "substring", None, &[1, 2]),
    sig(Func::IndexOf, "indexOf", None, &[1, 2]),
    sig(Func::LastIndexOf, "lastIndexOf", None, &[1, 2]),
    sig(Func::CharAt, "charAt", None, &[1]),
];

const fn sig(
    func: Func,
    name: &'static str,
    global: Option<usize>,
    receiver: &'static [usize],
) -> Signature {
    Signature {
        func,
        name,
        global,
        receiver,
    }
}

impl Func {
    /// The name a user writes.
    pub fn name(self) -> &'static str {
        FUNCTIONS
            .iter()
            .find(|s| s.func == self)
            .map_or("?", |s| s.name)
    }
}

impl Expr {
    /// The identifier paths the expression reads, sorted and deduplicated, without the
    /// variables macros bind: what kro builds its dependency graph from. A path stops where
    /// selection stops being static (`a.b[i].c` reads `a.b`); a string-literal index extends it.
    pub fn references(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut bound = Vec::new();
        collect(self, &mut bound, &mut out);
        out.stable_sort();
        out.dedup();
        out
    }

    pub(crate) fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Uint(_)
            | ExprKind::Double(_)
            | ExprKind::Str(_)
            | ExprKind::Ident(_) => Vec::new(),
            ExprKind::Select { operand, .. } | ExprKind::Unary(_, operand) => vec![operand],
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => vec![a, b],
            ExprKind::Call(_, args) | ExprKind::List(args) => args.iter().collect(),
            ExprKind::Conditional(a, b, c) => vec![a, b, c],
            ExprKind::Map(entries) => entries.iter().flat_map(|(k, v)| [k, v]).collect(),
            ExprKind::Comprehension {
                range,
                filter,
                transform,
                ..
            } => {
                let mut v: Vec<&Expr> = vec![range];
                v.extend(filter.as_deref());
                v.push(transform);
                v
            }
        }
    }
}

/// The static path an expression names, if it is one (`a.b["c"]`).
fn path(e: &Expr) -> Option<Vec<String>> {
    match &e.kind {
        ExprKind::Ident(name) => Some(vec![name.clone()]),
        ExprKind::Select { operand, field, .. } => {
            let mut p = path(operand)?;
            p.push(field.clone());
            Some(p)
        }
        ExprKind::Index(operand, index) => match &index.kind {
            ExprKind::Str(key) => {
                let mut p = path(operand)?;
                p.push(key.clone());
                Some(p)
            }
            _ => None,
        },
        _ => None,
    }
}

fn collect(e: &Expr, bound: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Some(p) = path(e) {
        if !bound.contains(&p[0]) {
            out.push(p);
        }
        return;
    }
    if let ExprKind::Comprehension {
        range,
        var,
        filter,
        transform,
        ..
    } = &e.kind
    {
        collect(range, bound, out);
        bound.push(var.clone());
        if let Some(f) = filter {
            collect(f, bound, out);
        }
        collect(transform, bound, out);
        bound.pop();
        return;
    }
    for c in e.children() {
        collect(c, bound, out);
    }
}
