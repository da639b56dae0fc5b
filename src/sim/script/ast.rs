//! The syntax tree of the JavaScript subset, every node carrying the line and column it came from
//! so that a runtime error can say where it happened.

use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VarKind {
    Var,
    Let,
    Const,
}

#[derive(Debug)]
pub(crate) struct Stmt {
    pub kind: StmtKind,
    pub pos: Pos,
}

#[derive(Debug)]
pub(crate) enum StmtKind {
    Expr(Expr),
    Var(VarKind, Vec<(Pat, Option<Expr>)>),
    Func(Rc<FuncDef>),
    Class(Rc<ClassDef>),
    Return(Option<Expr>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    Block(Vec<Stmt>),
    For {
        init: Option<Box<Stmt>>,
        test: Option<Expr>,
        update: Option<Expr>,
        body: Box<Stmt>,
    },
    /// `for (x of xs)` when `of`, else `for (k in obj)`; `kind` is `None` for a bare target.
    ForEach {
        kind: Option<VarKind>,
        pat: Pat,
        of: bool,
        iter: Expr,
        body: Box<Stmt>,
    },
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    Break(Option<Rc<str>>),
    Continue(Option<Rc<str>>),
    Throw(Expr),
    Try {
        block: Vec<Stmt>,
        param: Option<Pat>,
        handler: Option<Vec<Stmt>>,
        finalizer: Option<Vec<Stmt>>,
    },
    Switch(Expr, Vec<(Option<Expr>, Vec<Stmt>)>),
    Labeled(Rc<str>, Box<Stmt>),
    Empty,
}

/// A binding or assignment target.
#[derive(Debug)]
pub(crate) enum Pat {
    Ident(Rc<str>, Pos),
    /// Only as an assignment target: `obj.x = ...`, `[a.b] = ...`.
    Expr(Box<Expr>),
    Object {
        props: Vec<(PropKey, Pat)>,
        rest: Option<Box<Pat>>,
    },
    Array {
        elems: Vec<Option<Pat>>,
        rest: Option<Box<Pat>>,
    },
    Default(Box<Pat>, Box<Expr>),
}

impl Pat {
    /// The names a pattern binds (iteratively: patterns nest as deep as the parser allows).
    pub fn names(&self, out: &mut Vec<Rc<str>>) {
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            match p {
                Pat::Ident(n, _) => out.push(n.clone()),
                Pat::Expr(_) => {}
                Pat::Object { props, rest } => {
                    stack.extend(props.iter().map(|(_, p)| p));
                    stack.extend(rest.as_deref());
                }
                Pat::Array { elems, rest } => {
                    stack.extend(elems.iter().flatten());
                    stack.extend(rest.as_deref());
                }
                Pat::Default(p, _) => stack.push(p),
            }
        }
    }
}

#[derive(Debug)]
pub(crate) enum PropKey {
    Static(Rc<str>),
    Computed(Expr),
}

#[derive(Debug)]
pub(crate) enum Body {
    Block(Vec<Stmt>),
    Expr(Expr),
}

#[derive(Debug)]
pub(crate) struct FuncDef {
    pub name: Option<Rc<str>>,
    pub params: Vec<Pat>,
    pub rest: Option<Pat>,
    pub body: Body,
    pub arrow: bool,
    /// `var` names declared anywhere in the body (outside nested functions): hoisted to the
    /// function's scope as `undefined` on entry, as JavaScript does.
    pub vars: Vec<Rc<str>>,
}

#[derive(Debug)]
pub(crate) struct ClassDef {
    pub name: Option<Rc<str>>,
    pub parent: Option<Expr>,
    pub ctor: Option<Rc<FuncDef>>,
    /// Methods: (static, key, function).
    pub methods: Vec<(bool, PropKey, Rc<FuncDef>)>,
    /// Instance fields, initialised in order on construction: (key, initialiser).
    pub fields: Vec<(PropKey, Option<Expr>)>,
}

#[derive(Debug)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

#[derive(Debug)]
pub(crate) enum Elem {
    Item(Expr),
    Spread(Expr),
}

#[derive(Debug)]
pub(crate) enum Prop {
    KeyValue(PropKey, Expr),
    Spread(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
    Typeof,
    Void,
    Delete,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Eq,
    Ne,
    StrictEq,
    StrictNe,
    Lt,
    Gt,
    Le,
    Ge,
    Shl,
    Shr,
    UShr,
    BitAnd,
    BitOr,
    BitXor,
    In,
    InstanceOf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogOp {
    And,
    Or,
    Nullish,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AssignOp {
    Plain,
    Op(BinOp),
    Logical(LogOp),
}

#[derive(Debug)]
pub(crate) enum ExprKind {
    Num(f64),
    Str(Rc<str>),
    Template(Vec<Rc<str>>, Vec<Expr>),
    Ident(Rc<str>),
    This,
    Null,
    Bool(bool),
    Array(Vec<Elem>),
    Object(Vec<Prop>),
    Func(Rc<FuncDef>),
    Class(Rc<ClassDef>),
    Unary(UnOp, Box<Expr>),
    Update {
        inc: bool,
        prefix: bool,
        target: Box<Expr>,
    },
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Logical(LogOp, Box<Expr>, Box<Expr>),
    Assign(AssignOp, Box<Pat>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Seq(Vec<Expr>),
    Member {
        obj: Box<Expr>,
        prop: Box<PropKey>,
        optional: bool,
    },
    SuperMember(Box<PropKey>),
    SuperCall(Vec<Elem>),
    Call {
        callee: Box<Expr>,
        args: Vec<Elem>,
        optional: bool,
    },
    New(Box<Expr>, Vec<Elem>),
    /// The end of an optional chain: a `?.` that met null or undefined inside makes the whole
    /// chain `undefined`.
    OptChain(Box<Expr>),
}
