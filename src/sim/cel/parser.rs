//! A recursive-descent parser for CEL's grammar (langdef.md, "Syntax") that resolves calls and
//! macros as it goes and refuses, with a position, everything outside the subset.

use super::ast::{BinaryOp, Expr, ExprKind, Func, Macro, UnaryOp, FUNCTIONS};
use super::lexer::{tokenize, Tok, Token};
use super::{unsupported, Diagnostic, MAX_DEPTH};

/// Words CEL reserves as identifiers (they may still name a field after `.`).
const RESERVED: [&str; 18] = [
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

pub(crate) fn parse(src: &str) -> Result<Expr, Diagnostic> {
    let tokens = tokenize(src)?;
    let mut p = Parser {
        src,
        tokens,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    if p.peek() != &Tok::Eof {
        return Err(p.unexpected());
    }
    Ok(e)
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, n: usize) -> &Tok {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + n).min(last)].tok
    }

    fn offset(&self) -> usize {
        self.tokens[self.pos.min(self.tokens.len() - 1)].offset
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos.min(self.tokens.len() - 1)].clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is(&self, punct: &str) -> bool {
        matches!(self.peek(), Tok::Punct(p) if *p == punct)
    }

    fn eat(&mut self, punct: &str) -> bool {
        if self.is(punct) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: &str) -> Result<(), Diagnostic> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(self.error(
                self.offset(),
                format!("expected '{punct}', found {}", describe(self.peek())),
            ))
        }
    }

    fn error(&self, offset: usize, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(self.src, offset, message)
    }

    fn unexpected(&self) -> Diagnostic {
        self.error(
            self.offset(),
            format!("unexpected {}", describe(self.peek())),
        )
    }

    /// Builds a node, refusing trees taller than [`MAX_DEPTH`] so that nothing downstream
    /// recurses without bound.
    fn node(&self, offset: usize, kind: ExprKind) -> Result<Expr, Diagnostic> {
        let height = 1 + kind_children_height(&kind);
        if height > MAX_DEPTH {
            return Err(self.error(
                offset,
                format!("expression nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        Ok(Expr {
            offset,
            kind,
            height,
        })
    }

    /// `Expr = ConditionalOr ["?" ConditionalOr ":" Expr]`. The only entry point that nests
    /// (parentheses, lists, maps, arguments), so the depth is counted here.
    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(
                self.offset(),
                format!("expression nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        let result = self.conditional();
        self.depth -= 1;
        result
    }

    fn conditional(&mut self) -> Result<Expr, Diagnostic> {
        let cond = self.binary(0)?;
        if !self.is("?") {
            return Ok(cond);
        }
        let at = self.bump().offset;
        let then = self.binary(0)?;
        self.expect(":")?;
        let otherwise = self.expr()?;
        self.node(
            at,
            ExprKind::Conditional(Box::new(cond), Box::new(then), Box::new(otherwise)),
        )
    }

    /// The binary operator at the cursor with its precedence (higher binds tighter).
    fn binary_op(&self) -> Option<(BinaryOp, u8)> {
        let p = match self.peek() {
            Tok::Punct(p) => *p,
            Tok::Ident(w) if w == "in" => "in",
            _ => return None,
        };
        Some(match p {
            "||" => (BinaryOp::Or, 0),
            "&&" => (BinaryOp::And, 1),
            "==" => (BinaryOp::Eq, 2),
            "!=" => (BinaryOp::Ne, 2),
            "<" => (BinaryOp::Lt, 2),
            "<=" => (BinaryOp::Le, 2),
            ">" => (BinaryOp::Gt, 2),
            ">=" => (BinaryOp::Ge, 2),
            "in" => (BinaryOp::In, 2),
            "+" => (BinaryOp::Add, 3),
            "-" => (BinaryOp::Sub, 3),
            "*" => (BinaryOp::Mul, 4),
            "/" => (BinaryOp::Div, 4),
            "%" => (BinaryOp::Rem, 4),
            _ => return None,
        })
    }

    /// The left-associative binary levels of the grammar (`ConditionalOr` down to
    /// `Multiplication`) by precedence climbing: one frame per nesting level instead of five.
    fn binary(&mut self, min: u8) -> Result<Expr, Diagnostic> {
        let mut left = self.unary()?;
        while let Some((op, prec)) = self.binary_op().filter(|(_, p)| *p >= min) {
            let at = self.bump().offset;
            let right = self.binary(prec + 1)?;
            left = self.node(at, ExprKind::Binary(op, Box::new(left), Box::new(right)))?;
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        let mut ops = Vec::new();
        loop {
            if self.is("!") {
                ops.push((self.bump().offset, UnaryOp::Not));
            } else if self.is("-") {
                // `-` directly before a number is part of the literal, which is how
                // -9223372036854775808 can be written at all.
                let literal = match self.peek_at(1) {
                    Tok::Int(m) => Some(ExprKind::Int(if *m == 1u64 << 63 {
                        i64::MIN
                    } else {
                        match i64::try_from(*m) {
                            Ok(v) => -v,
                            Err(_) => {
                                return Err(
                                    self.error(self.offset(), "invalid int literal: out of range")
                                )
                            }
                        }
                    })),
                    Tok::Double(d) => Some(ExprKind::Double(-d)),
                    _ => None,
                };
                if let Some(kind) = literal {
                    let at = self.bump().offset;
                    self.bump();
                    let lit = self.node(at, kind)?;
                    let mut e = self.member_suffix(lit)?;
                    while let Some((at, op)) = ops.pop() {
                        e = self.node(at, ExprKind::Unary(op, Box::new(e)))?;
                    }
                    return Ok(e);
                }
                ops.push((self.bump().offset, UnaryOp::Neg));
            } else {
                break;
            }
        }
        let mut e = self.member()?;
        while let Some((at, op)) = ops.pop() {
            e = self.node(at, ExprKind::Unary(op, Box::new(e)))?;
        }
        Ok(e)
    }

    fn member(&mut self) -> Result<Expr, Diagnostic> {
        let primary = self.primary()?;
        self.member_suffix(primary)
    }

    fn member_suffix(&mut self, mut e: Expr) -> Result<Expr, Diagnostic> {
        loop {
            if self.is(".") {
                let dot = self.bump().offset;
                if self.is("?") {
                    return Err(unsupported(
                        self.src,
                        dot,
                        "optional field selection '.?' is",
                    ));
                }
                let (name, at) = self.field_name()?;
                if self.is("(") {
                    self.bump();
                    let args = self.args(")")?;
                    e = self.member_call(e, name, at, args)?;
                } else {
                    e = self.node(
                        at,
                        ExprKind::Select {
                            operand: Box::new(e),
                            field: name,
                            test: false,
                        },
                    )?;
                }
            } else if self.is("[") {
                let at = self.bump().offset;
                if self.is("?") {
                    return Err(unsupported(self.src, at, "optional index '[?' is"));
                }
                let index = self.expr()?;
                self.expect("]")?;
                e = self.node(at, ExprKind::Index(Box::new(e), Box::new(index)))?;
            } else if self.is("{") && matches!(e.kind, ExprKind::Ident(_) | ExprKind::Select { .. })
            {
                return Err(unsupported(
                    self.src,
                    self.offset(),
                    "message construction ('Type{field: ...}') is",
                ));
            } else {
                return Ok(e);
            }
        }
    }

    fn field_name(&mut self) -> Result<(String, usize), Diagnostic> {
        let at = self.offset();
        match self.bump().tok {
            Tok::Ident(name) => Ok((name, at)),
            other => Err(self.error(
                at,
                format!("expected a field name, found {}", describe(&other)),
            )),
        }
    }

    /// Comma-separated expressions up to `close` (a trailing comma is allowed).
    fn args(&mut self, close: &str) -> Result<Vec<Expr>, Diagnostic> {
        let mut out = Vec::new();
        while !self.eat(close) {
            out.push(self.expr()?);
            if !self.eat(",") {
                self.expect(close)?;
                break;
            }
        }
        Ok(out)
    }

    fn primary(&mut self) -> Result<Expr, Diagnostic> {
        let at = self.offset();
        let t = self.bump();
        match t.tok {
            Tok::Int(m) => match i64::try_from(m) {
                Ok(v) => self.node(at, ExprKind::Int(v)),
                Err(_) => Err(self.error(at, "invalid int literal: out of range")),
            },
            Tok::Uint(v) => self.node(at, ExprKind::Uint(v)),
            Tok::Double(v) => self.node(at, ExprKind::Double(v)),
            Tok::Str(s) => self.node(at, ExprKind::Str(s)),
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => {
                let items = self.args("]")?;
                self.node(at, ExprKind::List(items))
            }
            Tok::Punct("{") => self.map_literal(at),
            Tok::Punct(".") => {
                // A root-scoped name: the same thing as the plain name without a container.
                let (name, at) = self.field_name()?;
                self.ident(name, at)
            }
            Tok::Ident(name) => self.ident(name, at),
            Tok::Eof => Err(self.error(at, "unexpected end of expression")),
            other => Err(self.error(at, format!("unexpected {}", describe(&other)))),
        }
    }

    fn ident(&mut self, name: String, at: usize) -> Result<Expr, Diagnostic> {
        match name.as_str() {
            "true" => return self.node(at, ExprKind::Bool(true)),
            "false" => return self.node(at, ExprKind::Bool(false)),
            "null" => return self.node(at, ExprKind::Null),
            _ => {}
        }
        if RESERVED.contains(&name.as_str()) {
            return Err(self.error(at, format!("reserved identifier: {name}")));
        }
        if self.is("(") {
            self.bump();
            let args = self.args(")")?;
            return self.global_call(name, at, args);
        }
        self.node(at, ExprKind::Ident(name))
    }

    fn map_literal(&mut self, at: usize) -> Result<Expr, Diagnostic> {
        let mut entries = Vec::new();
        while !self.eat("}") {
            if self.is("?") {
                return Err(unsupported(
                    self.src,
                    self.offset(),
                    "optional entry '{?key: ...}' is",
                ));
            }
            let k = self.expr()?;
            self.expect(":")?;
            let v = self.expr()?;
            entries.push((k, v));
            if !self.eat(",") {
                self.expect("}")?;
                break;
            }
        }
        self.node(at, ExprKind::Map(entries))
    }

    fn global_call(
        &mut self,
        name: String,
        at: usize,
        args: Vec<Expr>,
    ) -> Result<Expr, Diagnostic> {
        if name == "has" {
            let [arg] = <[Expr; 1]>::try_from(args).map_err(|_| {
                self.error(at, "has() takes exactly one argument: a field selection")
            })?;
            return match arg.kind {
                ExprKind::Select { operand, field, .. } => self.node(
                    arg.offset,
                    ExprKind::Select {
                        operand,
                        field,
                        test: true,
                    },
                ),
                _ => Err(self.error(
                    arg.offset,
                    "invalid argument to has() macro: expected a field selection like has(a.b)",
                )),
            };
        }
        let Some(sig) = FUNCTIONS.iter().find(|s| s.name == name) else {
            return Err(unsupported_function(self.src, at, &name));
        };
        match sig.global {
            Some(n) if n == args.len() => self.call(sig.func, at, args),
            Some(n) => Err(self.error(
                at,
                format!(
                    "function '{name}' takes {n} argument(s), got {}",
                    args.len()
                ),
            )),
            None => Err(self.error(
                at,
                format!("function '{name}' is called on a receiver: write x.{name}(...)"),
            )),
        }
    }

    fn call(&self, func: Func, at: usize, args: Vec<Expr>) -> Result<Expr, Diagnostic> {
        if func == Func::Matches {
            // A literal pattern is checked now, so that a typo is a positioned parse error.
            if let Some(ExprKind::Str(pattern)) = args.get(1).map(|a| &a.kind) {
                if let Err(e) = crate::sim::api::regexp::compile(pattern) {
                    return Err(self.error(args[1].offset, e.to_string()));
                }
            }
        }
        self.node(at, ExprKind::Call(func, args))
    }

    fn member_call(
        &mut self,
        target: Expr,
        name: String,
        at: usize,
        args: Vec<Expr>,
    ) -> Result<Expr, Diagnostic> {
        let kind = match name.as_str() {
            "all" => Some(Macro::All),
            "exists" => Some(Macro::Exists),
            "exists_one" => Some(Macro::ExistsOne),
            "map" => Some(Macro::Map),
            "filter" => Some(Macro::Filter),
            _ => None,
        };
        if let Some(kind) = kind {
            return self.comprehension(kind, target, &name, at, args);
        }
        let Some(sig) = FUNCTIONS.iter().find(|s| s.name == name) else {
            // A call on one of cel-go's extension namespaces reads as the namespaced function
            // (`base64.encode`); any other unknown name as a method.
            return Err(match path_name(&target) {
                Some(ns) if NAMESPACES.contains(&ns.as_str()) => {
                    unsupported_function(self.src, target.offset, &format!("{ns}.{name}"))
                }
                _ => unsupported_function(self.src, at, &name),
            });
        };
        if !sig.receiver.contains(&args.len()) {
            return Err(if sig.receiver.is_empty() {
                self.error(
                    at,
                    format!("function '{name}' is not called on a receiver: write {name}(x)"),
                )
            } else {
                let counts: Vec<String> = sig.receiver.iter().map(|n| n.to_string()).collect();
                self.error(
                    at,
                    format!(
                        "method '{name}' takes {} argument(s), got {}",
                        counts.join(" or "),
                        args.len()
                    ),
                )
            });
        }
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(target);
        all.extend(args);
        self.call(sig.func, at, all)
    }

    fn comprehension(
        &self,
        kind: Macro,
        range: Expr,
        name: &str,
        at: usize,
        args: Vec<Expr>,
    ) -> Result<Expr, Diagnostic> {
        let arity_ok = match kind {
            Macro::Map => args.len() == 2 || args.len() == 3,
            _ => args.len() == 2,
        };
        if !arity_ok {
            let expected = if kind == Macro::Map { "2 or 3" } else { "2" };
            return Err(self.error(
                at,
                format!(
                    "macro '{name}' takes {expected} arguments, got {}",
                    args.len()
                ),
            ));
        }
        let mut args = args.into_iter();
        let var = match args.next() {
            Some(Expr {
                kind: ExprKind::Ident(v),
                ..
            }) => v,
            Some(other) => {
                return Err(self.error(
                    other.offset,
                    format!("the first argument of '{name}' must be a variable name"),
                ))
            }
            None => return Err(self.error(at, "missing arguments")),
        };
        let rest: Vec<Expr> = args.collect();
        let (filter, transform) = match <[Expr; 2]>::try_from(rest) {
            Ok([f, t]) => (Some(Box::new(f)), t),
            Err(mut rest) => match rest.pop() {
                Some(t) => (None, t),
                None => return Err(self.error(at, "missing arguments")),
            },
        };
        self.node(
            at,
            ExprKind::Comprehension {
                kind,
                range: Box::new(range),
                var,
                filter,
                transform: Box::new(transform),
            },
        )
    }
}

fn kind_children_height(kind: &ExprKind) -> usize {
    let h = |e: &Expr| e.height;
    match kind {
        ExprKind::Select { operand, .. } | ExprKind::Unary(_, operand) => h(operand),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => h(a).max(h(b)),
        ExprKind::Call(_, args) | ExprKind::List(args) => args.iter().map(h).max().unwrap_or(0),
        ExprKind::Conditional(a, b, c) => h(a).max(h(b)).max(h(c)),
        ExprKind::Map(entries) => entries
            .iter()
            .map(|(k, v)| h(k).max(h(v)))
            .max()
            .unwrap_or(0),
        ExprKind::Comprehension {
            range,
            filter,
            transform,
            ..
        } => h(range)
            .max(filter.as_deref().map_or(0, h))
            .max(h(transform)),
        _ => 0,
    }
}

/// The namespaces of cel-go's extension libraries and of kro's own (`random`, `hash`, `json`),
/// whose functions the subset leaves out.
const NAMESPACES: [&str; 9] = [
    "base64", "math", "strings", "sets", "optional", "lists", "random", "hash", "json",
];

/// The name when the expression is a plain identifier (a namespace like `base64`).
fn path_name(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n.clone()),
        _ => None,
    }
}

fn unsupported_function(src: &str, at: usize, name: &str) -> Diagnostic {
    unsupported(src, at, &format!("function '{name}' is"))
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Int(v) => format!("number {v}"),
        Tok::Uint(v) => format!("number {v}u"),
        Tok::Double(v) => format!("number {v}"),
        Tok::Str(_) => "a string".to_string(),
        Tok::Ident(n) => format!("'{n}'"),
        Tok::Punct(p) => format!("'{p}'"),
        Tok::Eof => "end of expression".to_string(),
    }
}
