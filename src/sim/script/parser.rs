//! Recursive descent from tokens to the syntax tree, with automatic semicolon insertion, a
//! nesting bound (so that no input, however deep, can overflow the native stack while parsing,
//! evaluating or dropping the tree) and positioned refusals of what the subset leaves out.

use std::rc::Rc;

use super::ast::*;
use super::lexer::{tokenize, Tok, Token};
use super::value::number_to_string;
use super::Diagnostic;

/// The deepest the tree may nest: brackets, operators chained on one line, blocks. Every
/// recursive walk of the tree (evaluation, drop) stays within this many levels.
pub(crate) const MAX_NESTING: usize = 200;

/// Names the subset refuses wherever they appear as an identifier: they would reach outside the
/// sandbox, or are features it does not have.
const REFUSED_NAMES: [(&str, &str); 8] = [
    ("eval", "eval"),
    ("Function", "the Function constructor"),
    ("Proxy", "Proxy"),
    ("Reflect", "Reflect"),
    ("globalThis", "globalThis"),
    ("arguments", "the arguments object (use rest parameters)"),
    ("Symbol", "Symbol"),
    ("WeakMap", "WeakMap"),
];

/// Words that cannot name a variable.
const RESERVED: [&str; 36] = [
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "export",
    "extends",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "null",
    "true",
    "false",
    "let",
];

pub(crate) struct Parsed {
    pub body: Vec<Stmt>,
    pub vars: Vec<Rc<str>>,
}

pub(crate) fn parse(src: &str) -> Result<Parsed, Diagnostic> {
    let toks = tokenize(src)?;
    let mut p = Parser {
        toks,
        i: 0,
        depth: 0,
        vars: vec![Vec::new()],
        no_in: false,
        in_function: false,
        stack_base: super::interp::stack_mark(),
        jumps: Vec::new(),
    };
    let mut body = Vec::new();
    while p.peek() != &Tok::Eof {
        body.push(p.statement()?);
    }
    let vars = p.vars.pop().unwrap_or_default();
    Ok(Parsed { body, vars })
}

struct Parser {
    toks: Vec<Token>,
    i: usize,
    depth: usize,
    /// One list per function being parsed: the `var` names it declares.
    vars: Vec<Vec<Rc<str>>>,
    /// Inside a `for (` head, where `in` ends the target rather than being an operator.
    no_in: bool,
    in_function: bool,
    stack_base: usize,
    /// What a `break` or `continue` here could leave, innermost last.
    jumps: Vec<Jump>,
}

enum Jump {
    Loop,
    Switch,
    /// A label, and whether it names a loop (`continue` needs one).
    Label(Rc<str>, bool),
}

fn unsupported(t: &Token, what: &str) -> Diagnostic {
    Diagnostic {
        line: t.line,
        column: t.col,
        message: format!("{what} not supported by the playground's JavaScript"),
    }
}

type R<T> = Result<T, Diagnostic>;

impl Parser {
    fn tok(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    fn peek(&self) -> &Tok {
        &self.tok().tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        let t = self.tok();
        Pos {
            line: t.line,
            col: t.col,
        }
    }

    fn advance(&mut self) -> Token {
        let t = self.tok().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if &**s == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn unexpected(&self) -> Diagnostic {
        let t = self.tok();
        let message = match &t.tok {
            Tok::Eof => "SyntaxError: Unexpected end of input".to_string(),
            Tok::Num(_) => "SyntaxError: Unexpected number".to_string(),
            Tok::Str(_) => "SyntaxError: Unexpected string".to_string(),
            Tok::Template { .. } => "SyntaxError: Unexpected template string".to_string(),
            Tok::Ident(w) if RESERVED.contains(&&**w) => {
                format!("SyntaxError: Unexpected token '{w}'")
            }
            Tok::Ident(w) => format!("SyntaxError: Unexpected identifier '{w}'"),
            Tok::Punct(p) => format!("SyntaxError: Unexpected token '{p}'"),
        };
        Diagnostic {
            line: t.line,
            column: t.col,
            message,
        }
    }

    fn expect(&mut self, p: &str) -> R<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        let used = self.stack_base.saturating_sub(super::interp::stack_mark());
        if self.depth > MAX_NESTING || used > super::interp::STACK_BUDGET {
            let t = self.tok();
            return Err(Diagnostic {
                line: t.line,
                column: t.col,
                message: format!(
                    "the program nests deeper than {MAX_NESTING} levels here; split it into smaller functions"
                ),
            });
        }
        Ok(())
    }

    /// One level of a rule that can nest, held to the nesting limit.
    fn nested<T>(&mut self, inner: fn(&mut Self) -> R<T>) -> R<T> {
        self.enter()?;
        let r = inner(self);
        self.depth -= 1;
        r
    }

    /// A rule that enters one level per link of a chain (`a.b.c`, `f()()`): the depth it
    /// added is given back when the chain ends, whatever its length.
    fn chained<T>(&mut self, inner: fn(&mut Self) -> R<T>) -> R<T> {
        let start = self.depth;
        let r = inner(self);
        self.depth = start;
        r
    }

    /// Automatic semicolon insertion: a statement may end without `;` before `}`, at the end,
    /// or at a line break.
    fn semi(&mut self) -> R<()> {
        if self.eat(";") || self.is("}") || self.peek() == &Tok::Eof || self.tok().nl_before {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn ident_name(&mut self) -> R<Rc<str>> {
        match self.peek().clone() {
            Tok::Ident(w) => {
                self.advance();
                Ok(w)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// A name being bound or read as a variable: refuses reserved words and the refused names.
    fn binding_name(&mut self) -> R<Rc<str>> {
        let t = self.tok().clone();
        match &t.tok {
            Tok::Ident(w) if RESERVED.contains(&&**w) => Err(self.unexpected()),
            Tok::Ident(w) => {
                self.check_refused(&t, w)?;
                self.advance();
                Ok(w.clone())
            }
            _ => Err(self.unexpected()),
        }
    }

    fn check_refused(&self, t: &Token, w: &str) -> R<()> {
        if let Some((_, what)) = REFUSED_NAMES.iter().find(|(n, _)| *n == w) {
            return Err(unsupported(t, &format!("{what} is")));
        }
        match w {
            "async" => Err(unsupported(t, "async functions are")),
            "await" => Err(unsupported(t, "await is")),
            "yield" => Err(unsupported(t, "generators are")),
            _ => Ok(()),
        }
    }

    // ---- statements ----

    fn statement(&mut self) -> R<Stmt> {
        self.nested(Self::statement_inner)
    }

    fn block_body(&mut self) -> R<Vec<Stmt>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.is("}") {
            if self.peek() == &Tok::Eof {
                return Err(self.unexpected());
            }
            out.push(self.statement()?);
        }
        self.advance();
        Ok(out)
    }

    fn statement_inner(&mut self) -> R<Stmt> {
        let pos = self.pos();
        let t = self.tok().clone();
        let kind = match &t.tok {
            Tok::Punct("{") => StmtKind::Block(self.block_body()?),
            Tok::Punct(";") => {
                self.advance();
                StmtKind::Empty
            }
            Tok::Ident(w) => match &**w {
                "var" | "let" | "const" => {
                    let s = self.var_decl()?;
                    self.semi()?;
                    s
                }
                "function" => {
                    self.advance();
                    if self.is("*") {
                        return Err(unsupported(self.tok(), "generators are"));
                    }
                    let name = self.binding_name()?;
                    StmtKind::Func(self.function_rest(Some(name))?)
                }
                "async" => return Err(unsupported(&t, "async functions are")),
                "class" => {
                    self.advance();
                    let name = self.binding_name()?;
                    StmtKind::Class(self.class_rest(Some(name))?)
                }
                "if" => {
                    self.advance();
                    self.expect("(")?;
                    let test = self.expression()?;
                    self.expect(")")?;
                    let cons = Box::new(self.statement()?);
                    let alt = if self.eat_word("else") {
                        Some(Box::new(self.statement()?))
                    } else {
                        None
                    };
                    StmtKind::If(test, cons, alt)
                }
                "for" => self.for_statement()?,
                "while" => {
                    self.advance();
                    self.expect("(")?;
                    let test = self.expression()?;
                    self.expect(")")?;
                    StmtKind::While(test, Box::new(self.loop_body()?))
                }
                "do" => {
                    self.advance();
                    let body = Box::new(self.loop_body()?);
                    if !self.eat_word("while") {
                        return Err(self.unexpected());
                    }
                    self.expect("(")?;
                    let test = self.expression()?;
                    self.expect(")")?;
                    self.eat(";");
                    StmtKind::DoWhile(body, test)
                }
                "return" => {
                    if !self.in_function {
                        return Err(Diagnostic {
                            line: t.line,
                            column: t.col,
                            message: "SyntaxError: Illegal return statement".into(),
                        });
                    }
                    self.advance();
                    let value = if self.is(";")
                        || self.is("}")
                        || self.peek() == &Tok::Eof
                        || self.tok().nl_before
                    {
                        None
                    } else {
                        Some(self.expression()?)
                    };
                    self.semi()?;
                    StmtKind::Return(value)
                }
                "break" | "continue" => {
                    self.advance();
                    let label = match self.peek().clone() {
                        Tok::Ident(l) if !self.tok().nl_before && !RESERVED.contains(&&*l) => {
                            self.advance();
                            Some(l)
                        }
                        _ => None,
                    };
                    self.semi()?;
                    self.check_jump(&t, &**w == "break", label.as_ref())?;
                    if &**w == "break" {
                        StmtKind::Break(label)
                    } else {
                        StmtKind::Continue(label)
                    }
                }
                "throw" => {
                    self.advance();
                    if self.tok().nl_before {
                        return Err(Diagnostic {
                            line: t.line,
                            column: t.col,
                            message: "SyntaxError: Illegal newline after throw".into(),
                        });
                    }
                    let e = self.expression()?;
                    self.semi()?;
                    StmtKind::Throw(e)
                }
                "try" => self.try_statement()?,
                "switch" => self.switch_statement()?,
                "import" => return Err(unsupported(&t, "import is")),
                "export" => return Err(unsupported(&t, "export is")),
                "with" => return Err(unsupported(&t, "with statements are")),
                "debugger" => return Err(unsupported(&t, "debugger is")),
                _ if matches!(self.peek_at(1), Tok::Punct(":")) && !RESERVED.contains(&&**w) => {
                    let label = w.clone();
                    self.advance();
                    self.advance();
                    StmtKind::Labeled(label.clone(), Box::new(self.labelled(&label)?))
                }
                _ => self.expression_statement()?,
            },
            _ => self.expression_statement()?,
        };
        Ok(Stmt { kind, pos })
    }

    fn loop_body(&mut self) -> R<Stmt> {
        self.jumps.push(Jump::Loop);
        let r = self.statement();
        self.jumps.pop();
        r
    }

    fn in_switch(&mut self) -> R<Stmt> {
        self.jumps.push(Jump::Switch);
        let r = self.statement();
        self.jumps.pop();
        r
    }

    fn labelled(&mut self, label: &Rc<str>) -> R<Stmt> {
        let is_loop =
            matches!(self.peek(), Tok::Ident(w) if matches!(&**w, "for" | "while" | "do"));
        self.jumps.push(Jump::Label(label.clone(), is_loop));
        let r = self.statement();
        self.jumps.pop();
        r
    }

    /// Checks a `break` or `continue` against what encloses it, as a JavaScript parser does.
    fn check_jump(&self, t: &Token, is_break: bool, label: Option<&Rc<str>>) -> R<()> {
        let ok = match label {
            Some(l) => self.jumps.iter().any(|j| match j {
                Jump::Label(name, is_loop) => name == l && (is_break || *is_loop),
                _ => false,
            }),
            None => self
                .jumps
                .iter()
                .any(|j| matches!(j, Jump::Loop) || (is_break && matches!(j, Jump::Switch))),
        };
        if ok {
            return Ok(());
        }
        let message = match (label, is_break) {
            (Some(l), _) => format!("SyntaxError: Undefined label '{l}'"),
            (None, true) => "SyntaxError: Illegal break statement".to_string(),
            (None, false) => {
                "SyntaxError: Illegal continue statement: no surrounding iteration statement"
                    .to_string()
            }
        };
        Err(Diagnostic {
            line: t.line,
            column: t.col,
            message,
        })
    }

    fn expression_statement(&mut self) -> R<StmtKind> {
        let e = self.expression()?;
        self.semi()?;
        Ok(StmtKind::Expr(e))
    }

    fn var_kind(&mut self) -> R<VarKind> {
        let k = match self.peek() {
            Tok::Ident(w) if &**w == "var" => VarKind::Var,
            Tok::Ident(w) if &**w == "let" => VarKind::Let,
            Tok::Ident(w) if &**w == "const" => VarKind::Const,
            _ => return Err(self.unexpected()),
        };
        self.advance();
        Ok(k)
    }

    fn var_decl(&mut self) -> R<StmtKind> {
        let kind = self.var_kind()?;
        let mut decls = Vec::new();
        loop {
            let pat = self.binding_pattern()?;
            if kind == VarKind::Var {
                self.hoist(&pat);
            }
            let init = if self.eat("=") {
                Some(self.assign()?)
            } else {
                if kind == VarKind::Const || !matches!(pat, Pat::Ident(..)) {
                    return Err(Diagnostic {
                        line: self.tok().line,
                        column: self.tok().col,
                        message:
                            "SyntaxError: Missing initializer in destructuring or const declaration"
                                .into(),
                    });
                }
                None
            };
            decls.push((pat, init));
            if !self.eat(",") {
                break;
            }
        }
        Ok(StmtKind::Var(kind, decls))
    }

    fn hoist(&mut self, pat: &Pat) {
        let mut names = Vec::new();
        pat.names(&mut names);
        if let Some(top) = self.vars.last_mut() {
            for n in names {
                if !top.contains(&n) {
                    top.push(n);
                }
            }
        }
    }

    fn for_statement(&mut self) -> R<StmtKind> {
        self.advance();
        if self.is_word("await") {
            return Err(unsupported(self.tok(), "for await is"));
        }
        self.expect("(")?;
        let init_pos = self.pos();
        let mut init = None;
        if self.is_word("var") || self.is_word("let") || self.is_word("const") {
            if matches!(self.peek_at(2), Tok::Ident(w) if &**w == "of" || &**w == "in") || {
                // A destructuring target: look past it for `of`/`in`.
                matches!(self.peek_at(1), Tok::Punct("[") | Tok::Punct("{"))
                    && self.pattern_then_of_in()
            } {
                let kind = self.var_kind()?;
                let pat = self.binding_pattern()?;
                if kind == VarKind::Var {
                    self.hoist(&pat);
                }
                return self.for_each_rest(Some(kind), pat);
            }
            self.no_in = true;
            let d = self.var_decl();
            self.no_in = false;
            init = Some(Box::new(Stmt {
                kind: d?,
                pos: init_pos,
            }));
        } else if !self.is(";") {
            self.no_in = true;
            let e = self.expression();
            self.no_in = false;
            let e = e?;
            if self.is_word("of") || self.is_word("in") {
                let pat = self.to_pattern(e)?;
                return self.for_each_rest(None, pat);
            }
            init = Some(Box::new(Stmt {
                kind: StmtKind::Expr(e),
                pos: init_pos,
            }));
        }
        self.expect(";")?;
        let test = if self.is(";") {
            None
        } else {
            Some(self.expression()?)
        };
        self.expect(";")?;
        let update = if self.is(")") {
            None
        } else {
            Some(self.expression()?)
        };
        self.expect(")")?;
        let body = Box::new(self.loop_body()?);
        Ok(StmtKind::For {
            init,
            test,
            update,
            body,
        })
    }

    /// From a `var`/`let`/`const` followed by a bracket: whether `of` or `in` follows the
    /// matching bracket (a for-each head) rather than `=` (a plain declaration).
    fn pattern_then_of_in(&self) -> bool {
        let mut depth = 0usize;
        let mut k = self.i + 1;
        while k < self.toks.len() {
            match &self.toks[k].tok {
                Tok::Punct("[" | "{" | "(") => depth += 1,
                Tok::Punct("]" | "}" | ")") => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return matches!(self.toks.get(k + 1).map(|t| &t.tok), Some(Tok::Ident(w)) if &**w == "of" || &**w == "in");
                    }
                }
                Tok::Eof => return false,
                _ => {}
            }
            k += 1;
        }
        false
    }

    fn for_each_rest(&mut self, kind: Option<VarKind>, pat: Pat) -> R<StmtKind> {
        let of = self.is_word("of");
        self.advance();
        let iter = if of {
            self.assign()?
        } else {
            self.expression()?
        };
        self.expect(")")?;
        let body = Box::new(self.loop_body()?);
        Ok(StmtKind::ForEach {
            kind,
            pat,
            of,
            iter,
            body,
        })
    }

    fn try_statement(&mut self) -> R<StmtKind> {
        self.advance();
        let block = self.block_body()?;
        let mut param = None;
        let mut handler = None;
        let mut finalizer = None;
        if self.eat_word("catch") {
            if self.eat("(") {
                param = Some(self.binding_pattern()?);
                self.expect(")")?;
            }
            handler = Some(self.block_body()?);
        }
        if self.eat_word("finally") {
            finalizer = Some(self.block_body()?);
        }
        if handler.is_none() && finalizer.is_none() {
            return Err(Diagnostic {
                line: self.tok().line,
                column: self.tok().col,
                message: "SyntaxError: Missing catch or finally after try".into(),
            });
        }
        Ok(StmtKind::Try {
            block,
            param,
            handler,
            finalizer,
        })
    }

    fn switch_statement(&mut self) -> R<StmtKind> {
        self.advance();
        self.expect("(")?;
        let disc = self.expression()?;
        self.expect(")")?;
        self.expect("{")?;
        let mut cases = Vec::new();
        while !self.eat("}") {
            let test = if self.eat_word("case") {
                Some(self.expression()?)
            } else if self.eat_word("default") {
                None
            } else {
                return Err(self.unexpected());
            };
            self.expect(":")?;
            let mut body = Vec::new();
            while !self.is("}") && !self.is_word("case") && !self.is_word("default") {
                if self.peek() == &Tok::Eof {
                    return Err(self.unexpected());
                }
                body.push(self.in_switch()?);
            }
            cases.push((test, body));
        }
        Ok(StmtKind::Switch(disc, cases))
    }

    // ---- functions and classes ----

    fn params(&mut self) -> R<(Vec<Pat>, Option<Pat>)> {
        self.expect("(")?;
        let mut params = Vec::new();
        let mut rest = None;
        while !self.eat(")") {
            if self.eat("...") {
                rest = Some(self.binding_pattern()?);
                self.eat(",");
                self.expect(")")?;
                break;
            }
            let mut p = self.binding_pattern()?;
            if self.eat("=") {
                p = Pat::Default(Box::new(p), Box::new(self.assign()?));
            }
            params.push(p);
            if !self.is(")") {
                self.expect(",")?;
            }
        }
        Ok((params, rest))
    }

    fn function_rest(&mut self, name: Option<Rc<str>>) -> R<Rc<FuncDef>> {
        let (params, rest) = self.params()?;
        let (body, vars) = self.function_body()?;
        Ok(Rc::new(FuncDef {
            name,
            params,
            rest,
            body: Body::Block(body),
            arrow: false,
            vars,
        }))
    }

    fn function_body(&mut self) -> R<(Vec<Stmt>, Vec<Rc<str>>)> {
        self.vars.push(Vec::new());
        let was = std::mem::replace(&mut self.in_function, true);
        let no_in = std::mem::replace(&mut self.no_in, false);
        // `break`, `continue` and labels do not reach across a function boundary.
        let jumps = std::mem::take(&mut self.jumps);
        let body = self.block_body();
        self.jumps = jumps;
        self.in_function = was;
        self.no_in = no_in;
        let vars = self.vars.pop().unwrap_or_default();
        Ok((body?, vars))
    }

    fn arrow_rest(&mut self, params: Vec<Pat>, rest: Option<Pat>, pos: Pos) -> R<Expr> {
        self.expect("=>")?;
        let (body, vars) = if self.is("{") {
            let (b, v) = self.function_body()?;
            (Body::Block(b), v)
        } else {
            let no_in = std::mem::replace(&mut self.no_in, false);
            let e = self.assign();
            self.no_in = no_in;
            (Body::Expr(e?), Vec::new())
        };
        Ok(Expr {
            kind: ExprKind::Func(Rc::new(FuncDef {
                name: None,
                params,
                rest,
                body,
                arrow: true,
                vars,
            })),
            pos,
        })
    }

    fn property_key(&mut self) -> R<PropKey> {
        let at = self.i;
        let t = self.advance();
        Ok(match t.tok {
            Tok::Ident(w) => PropKey::Static(w),
            Tok::Str(s) => PropKey::Static(s),
            Tok::Num(n) => PropKey::Static(number_to_string(n).into()),
            Tok::Punct("[") => {
                let e = self.assign()?;
                self.expect("]")?;
                PropKey::Computed(e)
            }
            _ => {
                self.i = at;
                return Err(self.unexpected());
            }
        })
    }

    /// Refuses `get x()`, `set x(v)`, `async m()` and `*m()` in object literals and classes,
    /// while `get(k)` stays an ordinary method named `get`.
    fn check_accessor(&self) -> R<()> {
        let t = self.tok();
        if self.is("*") {
            return Err(unsupported(t, "generator methods are"));
        }
        if let Tok::Ident(w) = &t.tok {
            let next_is_key = matches!(
                self.peek_at(1),
                Tok::Ident(_) | Tok::Str(_) | Tok::Num(_) | Tok::Punct("[")
            );
            if next_is_key && !self.toks[(self.i + 1).min(self.toks.len() - 1)].nl_before {
                match &**w {
                    "get" | "set" => return Err(unsupported(t, "getters and setters are")),
                    "async" => return Err(unsupported(t, "async functions are")),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn class_rest(&mut self, name: Option<Rc<str>>) -> R<Rc<ClassDef>> {
        let parent = if self.eat_word("extends") {
            Some(self.lhs_no_call()?)
        } else {
            None
        };
        self.expect("{")?;
        let mut ctor = None;
        let mut methods = Vec::new();
        let mut fields = Vec::new();
        while !self.eat("}") {
            if self.eat(";") {
                continue;
            }
            let is_static = self.is_word("static")
                && !matches!(self.peek_at(1), Tok::Punct("(" | "=" | ";" | "}"));
            if is_static {
                self.advance();
                if self.is("{") {
                    return Err(unsupported(self.tok(), "static blocks are"));
                }
            }
            self.check_accessor()?;
            let key = self.property_key()?;
            if self.is("(") {
                let f = self.function_rest(static_name(&key))?;
                if !is_static && matches!(&key, PropKey::Static(k) if &**k == "constructor") {
                    ctor = Some(f);
                } else {
                    methods.push((is_static, key, f));
                }
            } else {
                if is_static {
                    return Err(unsupported(self.tok(), "static class fields are"));
                }
                let init = if self.eat("=") {
                    let was = std::mem::replace(&mut self.in_function, true);
                    let e = self.assign();
                    self.in_function = was;
                    Some(e?)
                } else {
                    None
                };
                self.semi()?;
                fields.push((key, init));
            }
        }
        Ok(Rc::new(ClassDef {
            name,
            parent,
            ctor,
            methods,
            fields,
        }))
    }

    // ---- patterns ----

    fn binding_pattern(&mut self) -> R<Pat> {
        self.nested(Self::binding_pattern_inner)
    }

    fn binding_pattern_inner(&mut self) -> R<Pat> {
        let pos = self.pos();
        if self.eat("[") {
            let mut elems = Vec::new();
            let mut rest = None;
            while !self.eat("]") {
                if self.eat(",") {
                    elems.push(None);
                    continue;
                }
                if self.eat("...") {
                    rest = Some(Box::new(self.binding_pattern()?));
                    self.expect("]")?;
                    break;
                }
                let mut p = self.binding_pattern()?;
                if self.eat("=") {
                    p = Pat::Default(Box::new(p), Box::new(self.assign()?));
                }
                elems.push(Some(p));
                if !self.is("]") {
                    self.expect(",")?;
                }
            }
            return Ok(Pat::Array { elems, rest });
        }
        if self.eat("{") {
            let mut props = Vec::new();
            let mut rest = None;
            while !self.eat("}") {
                if self.eat("...") {
                    rest = Some(Box::new(Pat::Ident(self.binding_name()?, self.pos())));
                    self.eat(",");
                    self.expect("}")?;
                    break;
                }
                let kpos = self.pos();
                let shorthand = matches!(self.peek(), Tok::Ident(_))
                    && !matches!(self.peek_at(1), Tok::Punct(":"));
                let (key, mut p) = if shorthand {
                    let n = self.binding_name()?;
                    (PropKey::Static(n.clone()), Pat::Ident(n, kpos))
                } else {
                    let key = self.property_key()?;
                    self.expect(":")?;
                    (key, self.binding_pattern()?)
                };
                if self.eat("=") {
                    p = Pat::Default(Box::new(p), Box::new(self.assign()?));
                }
                props.push((key, p));
                if !self.is("}") {
                    self.expect(",")?;
                }
            }
            return Ok(Pat::Object { props, rest });
        }
        Ok(Pat::Ident(self.binding_name()?, pos))
    }

    /// An expression read before `=` (or `of`) reinterpreted as an assignment target.
    fn to_pattern(&self, e: Expr) -> R<Pat> {
        let bad = |pos: Pos| Diagnostic {
            line: pos.line,
            column: pos.col,
            message: "SyntaxError: Invalid left-hand side in assignment".into(),
        };
        let pos = e.pos;
        Ok(match e.kind {
            ExprKind::Ident(n) => Pat::Ident(n, pos),
            ExprKind::Member {
                optional: false, ..
            }
            | ExprKind::SuperMember(_) => Pat::Expr(Box::new(e)),
            ExprKind::Array(elems) => {
                let mut out = Vec::new();
                let mut rest = None;
                let n = elems.len();
                for (k, el) in elems.into_iter().enumerate() {
                    match el {
                        Elem::Item(Expr {
                            kind: ExprKind::Ident(ref h),
                            ..
                        }) if &**h == "\u{0}hole" => out.push(None),
                        Elem::Item(x) => out.push(Some(self.to_pattern(x)?)),
                        Elem::Spread(x) if k + 1 == n => rest = Some(Box::new(self.to_pattern(x)?)),
                        Elem::Spread(_) => return Err(bad(pos)),
                    }
                }
                Pat::Array { elems: out, rest }
            }
            ExprKind::Object(props) => {
                let mut out = Vec::new();
                let mut rest = None;
                for p in props {
                    match p {
                        Prop::KeyValue(k, v) => out.push((k, self.to_pattern(v)?)),
                        Prop::Spread(x) => rest = Some(Box::new(self.to_pattern(x)?)),
                    }
                }
                Pat::Object { props: out, rest }
            }
            ExprKind::Assign(AssignOp::Plain, target, value) => Pat::Default(target, value),
            _ => return Err(bad(pos)),
        })
    }

    // ---- expressions ----

    fn expression(&mut self) -> R<Expr> {
        let pos = self.pos();
        let first = self.assign()?;
        if !self.is(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(",") {
            items.push(self.assign()?);
        }
        Ok(Expr {
            kind: ExprKind::Seq(items),
            pos,
        })
    }

    fn assign(&mut self) -> R<Expr> {
        self.nested(Self::assign_inner)
    }

    /// Whether the `(` at the cursor opens an arrow function's parameters: its matching `)` is
    /// followed by `=>` on the same line.
    fn paren_is_arrow(&self) -> bool {
        let mut depth = 0usize;
        let mut k = self.i;
        while k < self.toks.len() {
            match &self.toks[k].tok {
                Tok::Punct("(" | "[" | "{") => depth += 1,
                Tok::Punct(")" | "]" | "}") => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return matches!(self.toks.get(k + 1), Some(t) if t.tok == Tok::Punct("=>") && !t.nl_before);
                    }
                }
                Tok::Eof => return false,
                _ => {}
            }
            k += 1;
        }
        false
    }

    fn assign_inner(&mut self) -> R<Expr> {
        let pos = self.pos();
        let t = self.tok().clone();
        if let Tok::Ident(w) = &t.tok {
            if &**w == "async"
                && matches!(self.peek_at(1), Tok::Ident(_) | Tok::Punct("("))
                && !self.toks[(self.i + 1).min(self.toks.len() - 1)].nl_before
            {
                return Err(unsupported(&t, "async functions are"));
            }
            if self.peek_at(1) == &Tok::Punct("=>") && !RESERVED.contains(&&**w) {
                let name = self.binding_name()?;
                return self.arrow_rest(vec![Pat::Ident(name, pos)], None, pos);
            }
        }
        if self.is("(") && self.paren_is_arrow() {
            let (params, rest) = self.params()?;
            return self.arrow_rest(params, rest, pos);
        }
        let left = self.conditional()?;
        let op = match self.peek() {
            Tok::Punct(p) => match *p {
                "=" => Some(AssignOp::Plain),
                "+=" => Some(AssignOp::Op(BinOp::Add)),
                "-=" => Some(AssignOp::Op(BinOp::Sub)),
                "*=" => Some(AssignOp::Op(BinOp::Mul)),
                "/=" => Some(AssignOp::Op(BinOp::Div)),
                "%=" => Some(AssignOp::Op(BinOp::Rem)),
                "**=" => Some(AssignOp::Op(BinOp::Pow)),
                "<<=" => Some(AssignOp::Op(BinOp::Shl)),
                ">>=" => Some(AssignOp::Op(BinOp::Shr)),
                ">>>=" => Some(AssignOp::Op(BinOp::UShr)),
                "&=" => Some(AssignOp::Op(BinOp::BitAnd)),
                "|=" => Some(AssignOp::Op(BinOp::BitOr)),
                "^=" => Some(AssignOp::Op(BinOp::BitXor)),
                "&&=" => Some(AssignOp::Logical(LogOp::And)),
                "||=" => Some(AssignOp::Logical(LogOp::Or)),
                "??=" => Some(AssignOp::Logical(LogOp::Nullish)),
                _ => None,
            },
            _ => None,
        };
        let Some(op) = op else { return Ok(left) };
        let op_tok = self.advance();
        let target = if op == AssignOp::Plain {
            self.to_pattern(left)?
        } else {
            match left.kind {
                ExprKind::Ident(..)
                | ExprKind::Member {
                    optional: false, ..
                }
                | ExprKind::SuperMember(_) => self.to_pattern(left)?,
                _ => {
                    return Err(Diagnostic {
                        line: op_tok.line,
                        column: op_tok.col,
                        message: "SyntaxError: Invalid left-hand side in assignment".into(),
                    })
                }
            }
        };
        let value = self.assign()?;
        Ok(Expr {
            kind: ExprKind::Assign(op, Box::new(target), Box::new(value)),
            pos,
        })
    }

    fn conditional(&mut self) -> R<Expr> {
        let pos = self.pos();
        let test = self.binary(0)?;
        if !self.eat("?") {
            return Ok(test);
        }
        let no_in = std::mem::replace(&mut self.no_in, false);
        let cons = self.assign();
        self.no_in = no_in;
        let cons = cons?;
        self.expect(":")?;
        let alt = self.assign()?;
        Ok(Expr {
            kind: ExprKind::Cond(Box::new(test), Box::new(cons), Box::new(alt)),
            pos,
        })
    }

    fn binop(&self) -> Option<(u8, Result<BinOp, LogOp>)> {
        let p = match self.peek() {
            Tok::Punct(p) => *p,
            Tok::Ident(w) if &**w == "instanceof" => "instanceof",
            Tok::Ident(w) if &**w == "in" && !self.no_in => "in",
            _ => return None,
        };
        use BinOp::*;
        Some(match p {
            "??" => (1, Err(LogOp::Nullish)),
            "||" => (2, Err(LogOp::Or)),
            "&&" => (3, Err(LogOp::And)),
            "|" => (4, Ok(BitOr)),
            "^" => (5, Ok(BitXor)),
            "&" => (6, Ok(BitAnd)),
            "==" => (7, Ok(Eq)),
            "!=" => (7, Ok(Ne)),
            "===" => (7, Ok(StrictEq)),
            "!==" => (7, Ok(StrictNe)),
            "<" => (8, Ok(Lt)),
            ">" => (8, Ok(Gt)),
            "<=" => (8, Ok(Le)),
            ">=" => (8, Ok(Ge)),
            "instanceof" => (8, Ok(InstanceOf)),
            "in" => (8, Ok(In)),
            "<<" => (9, Ok(Shl)),
            ">>" => (9, Ok(Shr)),
            ">>>" => (9, Ok(UShr)),
            "+" => (10, Ok(Add)),
            "-" => (10, Ok(Sub)),
            "*" => (11, Ok(Mul)),
            "/" => (11, Ok(Div)),
            "%" => (11, Ok(Rem)),
            "**" => (12, Ok(Pow)),
            _ => return None,
        })
    }

    /// Precedence climbing; each operator folded into the left operand counts one level of
    /// nesting, since `a + b + c + ...` builds a tree as deep as it is long.
    fn binary(&mut self, min: u8) -> R<Expr> {
        let start_depth = self.depth;
        let mut left = self.unary()?;
        let r = loop {
            let Some((prec, op)) = self.binop() else {
                break Ok(left);
            };
            if prec < min {
                break Ok(left);
            }
            let op_tok = self.advance();
            if let Err(e) = self.enter() {
                break Err(e);
            }
            let next = if op == Ok(BinOp::Pow) { prec } else { prec + 1 };
            let right = match self.binary(next) {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            let pos = Pos {
                line: op_tok.line,
                col: op_tok.col,
            };
            let kind = match op {
                Ok(b) => ExprKind::Binary(b, Box::new(left), Box::new(right)),
                Err(l) => ExprKind::Logical(l, Box::new(left), Box::new(right)),
            };
            left = Expr { kind, pos };
        };
        self.depth = start_depth;
        r
    }

    fn unary(&mut self) -> R<Expr> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> R<Expr> {
        let pos = self.pos();
        let t = self.tok().clone();
        let op = match &t.tok {
            Tok::Punct("-") => Some(UnOp::Neg),
            Tok::Punct("+") => Some(UnOp::Plus),
            Tok::Punct("!") => Some(UnOp::Not),
            Tok::Punct("~") => Some(UnOp::BitNot),
            Tok::Ident(w) if &**w == "typeof" => Some(UnOp::Typeof),
            Tok::Ident(w) if &**w == "void" => Some(UnOp::Void),
            Tok::Ident(w) if &**w == "delete" => Some(UnOp::Delete),
            Tok::Ident(w) if &**w == "await" => return Err(unsupported(&t, "await is")),
            _ => None,
        };
        if let Some(op) = op {
            self.advance();
            let arg = self.unary()?;
            if self.is("**") {
                return Err(Diagnostic {
                    line: self.tok().line,
                    column: self.tok().col,
                    message: "SyntaxError: Unary operator used immediately before exponentiation expression. Parenthesis must be used to disambiguate operator precedence".into(),
                });
            }
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(arg)),
                pos,
            });
        }
        if self.is("++") || self.is("--") {
            let inc = self.is("++");
            self.advance();
            let target = self.unary()?;
            self.check_update_target(&target)?;
            return Ok(Expr {
                kind: ExprKind::Update {
                    inc,
                    prefix: true,
                    target: Box::new(target),
                },
                pos,
            });
        }
        let e = self.postfix()?;
        if (self.is("++") || self.is("--")) && !self.tok().nl_before {
            let inc = self.is("++");
            self.check_update_target(&e)?;
            self.advance();
            return Ok(Expr {
                kind: ExprKind::Update {
                    inc,
                    prefix: false,
                    target: Box::new(e),
                },
                pos,
            });
        }
        Ok(e)
    }

    fn check_update_target(&self, e: &Expr) -> R<()> {
        match e.kind {
            ExprKind::Ident(_)
            | ExprKind::Member {
                optional: false, ..
            }
            | ExprKind::SuperMember(_) => Ok(()),
            _ => Err(Diagnostic {
                line: e.pos.line,
                column: e.pos.col,
                message: "SyntaxError: Invalid left-hand side expression in postfix operation"
                    .into(),
            }),
        }
    }

    fn args(&mut self) -> R<Vec<Elem>> {
        self.expect("(")?;
        let no_in = std::mem::replace(&mut self.no_in, false);
        let r = self.args_inner();
        self.no_in = no_in;
        r
    }

    fn args_inner(&mut self) -> R<Vec<Elem>> {
        let mut out = Vec::new();
        while !self.eat(")") {
            if self.eat("...") {
                out.push(Elem::Spread(self.assign()?));
            } else {
                out.push(Elem::Item(self.assign()?));
            }
            if !self.is(")") {
                self.expect(",")?;
            }
        }
        Ok(out)
    }

    /// `new`'s callee: a primary with member accesses but no call.
    fn lhs_no_call(&mut self) -> R<Expr> {
        self.chained(Self::lhs_no_call_inner)
    }

    fn lhs_no_call_inner(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        loop {
            let pos = self.pos();
            let kind = if self.eat(".") {
                self.member(e, false, false)?
            } else if self.eat("[") {
                self.member(e, true, false)?
            } else {
                return Ok(e);
            };
            self.enter()?;
            e = Expr { kind, pos };
        }
    }

    /// `obj.name` or `obj[expr]` (the `.` or `[` already read).
    fn member(&mut self, obj: Expr, computed: bool, optional: bool) -> R<ExprKind> {
        let prop = if computed {
            let k = self.expression()?;
            self.expect("]")?;
            PropKey::Computed(k)
        } else {
            PropKey::Static(self.ident_name()?)
        };
        Ok(ExprKind::Member {
            obj: Box::new(obj),
            prop: Box::new(prop),
            optional,
        })
    }

    /// `callee(args)`.
    fn call(&mut self, callee: Expr, optional: bool) -> R<ExprKind> {
        Ok(ExprKind::Call {
            callee: Box::new(callee),
            args: self.args()?,
            optional,
        })
    }

    fn postfix(&mut self) -> R<Expr> {
        self.chained(Self::postfix_inner)
    }

    fn postfix_inner(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        let mut chained = false;
        loop {
            let pos = self.pos();
            let kind = if self.eat("?.") {
                chained = true;
                if self.is("(") {
                    self.call(e, true)?
                } else {
                    let computed = self.eat("[");
                    self.member(e, computed, true)?
                }
            } else if self.eat(".") {
                self.member(e, false, false)?
            } else if self.eat("[") {
                self.member(e, true, false)?
            } else if self.is("(") {
                self.call(e, false)?
            } else if matches!(self.peek(), Tok::Template { head: true, .. }) {
                return Err(unsupported(self.tok(), "tagged templates are"));
            } else {
                break;
            };
            self.enter()?;
            e = Expr { kind, pos };
        }
        if chained {
            let pos = e.pos;
            e = Expr {
                kind: ExprKind::OptChain(Box::new(e)),
                pos,
            };
        }
        Ok(e)
    }

    fn primary(&mut self) -> R<Expr> {
        let pos = self.pos();
        let t = self.tok().clone();
        let kind = match &t.tok {
            Tok::Num(n) => {
                self.advance();
                ExprKind::Num(*n)
            }
            Tok::Str(s) => {
                self.advance();
                ExprKind::Str(s.clone())
            }
            Tok::Template {
                cooked,
                tail,
                head: true,
            } => {
                self.advance();
                let mut strs = vec![cooked.clone()];
                let mut exprs = Vec::new();
                let mut tail = *tail;
                while !tail {
                    let no_in = std::mem::replace(&mut self.no_in, false);
                    let e = self.expression();
                    self.no_in = no_in;
                    exprs.push(e?);
                    match self.peek().clone() {
                        Tok::Template {
                            cooked,
                            tail: t,
                            head: false,
                        } => {
                            self.advance();
                            strs.push(cooked);
                            tail = t;
                        }
                        _ => return Err(self.unexpected()),
                    }
                }
                ExprKind::Template(strs, exprs)
            }
            Tok::Punct("(") => {
                self.advance();
                let no_in = std::mem::replace(&mut self.no_in, false);
                let e = self.expression();
                self.no_in = no_in;
                let e = e?;
                self.expect(")")?;
                return Ok(e);
            }
            Tok::Punct("[") => {
                self.advance();
                let no_in = std::mem::replace(&mut self.no_in, false);
                let r = self.array_literal();
                self.no_in = no_in;
                r?
            }
            Tok::Punct("{") => {
                self.advance();
                let no_in = std::mem::replace(&mut self.no_in, false);
                let r = self.object_literal();
                self.no_in = no_in;
                r?
            }
            Tok::Punct("/" | "/=") => {
                return Err(unsupported(&t, "regular expression literals are"));
            }
            Tok::Ident(w) => match &**w {
                "true" => {
                    self.advance();
                    ExprKind::Bool(true)
                }
                "false" => {
                    self.advance();
                    ExprKind::Bool(false)
                }
                "null" => {
                    self.advance();
                    ExprKind::Null
                }
                "this" => {
                    self.advance();
                    ExprKind::This
                }
                "function" => {
                    self.advance();
                    if self.is("*") {
                        return Err(unsupported(self.tok(), "generators are"));
                    }
                    let name = if matches!(self.peek(), Tok::Ident(_)) {
                        Some(self.binding_name()?)
                    } else {
                        None
                    };
                    ExprKind::Func(self.function_rest(name)?)
                }
                "class" => {
                    self.advance();
                    let name = if matches!(self.peek(), Tok::Ident(w) if &**w != "extends") {
                        Some(self.binding_name()?)
                    } else {
                        None
                    };
                    ExprKind::Class(self.class_rest(name)?)
                }
                "new" => {
                    self.advance();
                    if self.is(".") {
                        return Err(unsupported(&t, "new.target is"));
                    }
                    self.enter()?;
                    let callee = self.lhs_no_call();
                    self.depth -= 1;
                    let callee = callee?;
                    let args = if self.is("(") {
                        self.args()?
                    } else {
                        Vec::new()
                    };
                    ExprKind::New(Box::new(callee), args)
                }
                "super" => {
                    self.advance();
                    if self.is("(") {
                        ExprKind::SuperCall(self.args()?)
                    } else if self.eat(".") {
                        ExprKind::SuperMember(Box::new(PropKey::Static(self.ident_name()?)))
                    } else if self.eat("[") {
                        let k = self.expression()?;
                        self.expect("]")?;
                        ExprKind::SuperMember(Box::new(PropKey::Computed(k)))
                    } else {
                        return Err(Diagnostic {
                            line: t.line,
                            column: t.col,
                            message: "SyntaxError: 'super' keyword unexpected here".into(),
                        });
                    }
                }
                "import" => return Err(unsupported(&t, "import is")),
                _ => ExprKind::Ident(self.binding_name()?),
            },
            _ => return Err(self.unexpected()),
        };
        Ok(Expr { kind, pos })
    }

    fn array_literal(&mut self) -> R<ExprKind> {
        let mut out = Vec::new();
        while !self.eat("]") {
            if self.is(",") {
                // A hole: kept as a marker only destructuring may use.
                let pos = self.pos();
                self.advance();
                out.push(Elem::Item(Expr {
                    kind: ExprKind::Ident("\u{0}hole".into()),
                    pos,
                }));
                continue;
            }
            if self.eat("...") {
                out.push(Elem::Spread(self.assign()?));
            } else {
                out.push(Elem::Item(self.assign()?));
            }
            if !self.is("]") {
                self.expect(",")?;
            }
        }
        Ok(ExprKind::Array(out))
    }

    fn object_literal(&mut self) -> R<ExprKind> {
        let mut out = Vec::new();
        while !self.eat("}") {
            if self.eat("...") {
                out.push(Prop::Spread(self.assign()?));
            } else {
                self.check_accessor()?;
                let kpos = self.pos();
                let t = self.tok().clone();
                let key = self.property_key()?;
                if self.eat(":") {
                    out.push(Prop::KeyValue(key, self.assign()?));
                } else if self.is("(") {
                    let f = self.function_rest(static_name(&key))?;
                    out.push(Prop::KeyValue(
                        key,
                        Expr {
                            kind: ExprKind::Func(f),
                            pos: kpos,
                        },
                    ));
                } else if let (PropKey::Static(name), Tok::Ident(_)) = (&key, &t.tok) {
                    if RESERVED.contains(&&**name) {
                        return Err(self.unexpected());
                    }
                    self.check_refused(&t, name)?;
                    let mut value = Expr {
                        kind: ExprKind::Ident(name.clone()),
                        pos: kpos,
                    };
                    // `{a = 1}` is only valid as a destructuring target; kept as an assignment
                    // that `to_pattern` turns into a default.
                    if self.eat("=") {
                        let d = self.assign()?;
                        value = Expr {
                            kind: ExprKind::Assign(
                                AssignOp::Plain,
                                Box::new(Pat::Ident(name.clone(), kpos)),
                                Box::new(d),
                            ),
                            pos: kpos,
                        };
                    }
                    out.push(Prop::KeyValue(key, value));
                } else {
                    return Err(self.unexpected());
                }
            }
            if !self.is("}") {
                self.expect(",")?;
            }
        }
        Ok(ExprKind::Object(out))
    }
}

fn static_name(k: &PropKey) -> Option<Rc<str>> {
    match k {
        PropKey::Static(s) => Some(s.clone()),
        PropKey::Computed(_) => None,
    }
}
