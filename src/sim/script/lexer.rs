//! JavaScript's lexis: source text to tokens carrying their line and column, refusing what the
//! subset leaves out (regular expression literals, BigInt) with a position.

use std::rc::Rc;

use super::Diagnostic;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Num(f64),
    Str(Rc<str>),
    /// A piece of a template literal; `tail` when it ends at the closing backtick, so that the
    /// parser knows whether a `${...}` follows.
    Template {
        cooked: Rc<str>,
        tail: bool,
        /// The first piece (after the opening backtick), not a continuation after `}`.
        head: bool,
    },
    Ident(Rc<str>),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
    /// A line break came before this token: automatic semicolon insertion hangs on it.
    pub nl_before: bool,
}

/// Longest first, so that `===` is never read as `==` then `=`.
const PUNCTS: [&str; 52] = [
    ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=",
    "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
    "**", "<<", ">>", "{", "}", "(", ")", "[", "]", ";", ",", "<", ">", "+", "-", "*", "/", "%",
    "&", "|", "^", "!",
];
const PUNCTS1: [&str; 6] = ["~", "?", ":", "=", ".", "@"];

/// Words after which a `/` starts an expression (so would be a regular expression).
const EXPR_KEYWORDS: [&str; 11] = [
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "instanceof",
    "new",
    "delete",
    "void",
    "throw",
];

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
}

impl Lexer {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn err(&self, line: u32, col: u32, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            line,
            column: col,
            message: message.into(),
        }
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(k, c)| self.peek(k) == Some(c))
    }
}

fn is_id_start(c: char) -> bool {
    c == '_' || c == '$' || c.is_alphabetic()
}

fn is_id_part(c: char) -> bool {
    is_id_start(c) || c.is_ascii_digit() || c.is_alphanumeric()
}

/// Splits `src` into tokens ending with [`Tok::Eof`], or the first lexical error.
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token>, Diagnostic> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        i: 0,
        line: 1,
        col: 1,
    };
    let mut out: Vec<Token> = Vec::new();
    // One entry per open `{` or `${`: true for a template substitution, whose `}` resumes the
    // template text rather than closing a block.
    let mut braces: Vec<bool> = Vec::new();
    let mut nl = false;
    while let Some(c) = lx.peek(0) {
        if c == '\n' || c == '\u{2028}' || c == '\u{2029}' {
            nl = true;
            lx.bump();
            continue;
        }
        if c.is_whitespace() || c == '\u{feff}' {
            lx.bump();
            continue;
        }
        if lx.starts_with("//") {
            while lx.peek(0).is_some_and(|c| c != '\n') {
                lx.bump();
            }
            continue;
        }
        if lx.starts_with("/*") {
            let (line, col) = (lx.line, lx.col);
            lx.bump();
            lx.bump();
            loop {
                if lx.starts_with("*/") {
                    lx.bump();
                    lx.bump();
                    break;
                }
                match lx.bump() {
                    None => return Err(lx.err(line, col, "unterminated comment")),
                    Some('\n') => nl = true,
                    _ => {}
                }
            }
            continue;
        }
        let (line, col) = (lx.line, lx.col);
        let tok =
            if c.is_ascii_digit() || (c == '.' && lx.peek(1).is_some_and(|d| d.is_ascii_digit())) {
                number(&mut lx)?
            } else if is_id_start(c) || c == '\\' {
                if c == '\\' {
                    return Err(lx.err(line, col, "Invalid or unexpected token"));
                }
                let mut s = String::new();
                while let Some(c) = lx.peek(0).filter(|&c| is_id_part(c)) {
                    s.push(c);
                    lx.bump();
                }
                Tok::Ident(s.into())
            } else if c == '"' || c == '\'' {
                string(&mut lx, c)?
            } else if c == '`' {
                lx.bump();
                template(&mut lx, &mut braces, line, col, true)?
            } else if c == '}' && braces.last() == Some(&true) {
                braces.pop();
                lx.bump();
                template(&mut lx, &mut braces, line, col, false)?
            } else if c == '#' {
                return Err(lx.err(
                line,
                col,
                "private class members (#name) are not supported by the playground's JavaScript",
            ));
            } else {
                if c == '/' && regex_allowed(out.last()) {
                    return Err(lx.err(
                    line,
                    col,
                    "regular expression literals are not supported by the playground's JavaScript",
                ));
                }
                let p = if lx.starts_with("?.") && lx.peek(2).is_some_and(|d| d.is_ascii_digit()) {
                    Some("?")
                } else {
                    PUNCTS
                        .iter()
                        .chain(PUNCTS1.iter())
                        .find(|p| lx.starts_with(p))
                        .copied()
                };
                let Some(p) = p else {
                    return Err(lx.err(line, col, "Invalid or unexpected token"));
                };
                for _ in 0..p.chars().count() {
                    lx.bump();
                }
                match p {
                    "{" => braces.push(false),
                    "}" => {
                        braces.pop();
                    }
                    _ => {}
                }
                Tok::Punct(p)
            };
        out.push(Token {
            tok,
            line,
            col,
            nl_before: nl,
        });
        nl = false;
    }
    out.push(Token {
        tok: Tok::Eof,
        line: lx.line,
        col: lx.col,
        nl_before: true,
    });
    Ok(out)
}

fn regex_allowed(prev: Option<&Token>) -> bool {
    match prev.map(|t| &t.tok) {
        None => true,
        Some(Tok::Num(_)) | Some(Tok::Str(_)) => false,
        Some(Tok::Template { tail, .. }) => !tail,
        Some(Tok::Ident(w)) => EXPR_KEYWORDS.contains(&&**w),
        Some(Tok::Punct(p)) => !matches!(*p, ")" | "]" | "}" | "++" | "--"),
        Some(Tok::Eof) => false,
    }
}

fn number(lx: &mut Lexer) -> Result<Tok, Diagnostic> {
    let (line, col) = (lx.line, lx.col);
    let radix = match (lx.peek(0), lx.peek(1).map(|c| c.to_ascii_lowercase())) {
        (Some('0'), Some('x')) => 16,
        (Some('0'), Some('o')) => 8,
        (Some('0'), Some('b')) => 2,
        _ => 10,
    };
    let mut text = String::new();
    if radix != 10 {
        lx.bump();
        lx.bump();
        let mut v: f64 = 0.0;
        let mut any = false;
        while let Some(c) = lx.peek(0) {
            if c == '_' {
                lx.bump();
                continue;
            }
            let Some(d) = c.to_digit(radix) else { break };
            v = v * radix as f64 + d as f64;
            any = true;
            lx.bump();
        }
        if !any {
            return Err(lx.err(line, col, "Invalid or unexpected token"));
        }
        return finish_number(lx, v, line, col);
    }
    while let Some(c) = lx.peek(0).filter(|c| c.is_ascii_digit() || *c == '_') {
        if c != '_' {
            text.push(c);
        }
        lx.bump();
    }
    if lx.peek(0) == Some('.') {
        text.push('.');
        lx.bump();
        while let Some(c) = lx.peek(0).filter(|c| c.is_ascii_digit() || *c == '_') {
            if c != '_' {
                text.push(c);
            }
            lx.bump();
        }
    }
    if matches!(lx.peek(0), Some('e' | 'E')) {
        let sign = matches!(lx.peek(1), Some('+' | '-'));
        let digit_at = if sign { 2 } else { 1 };
        if lx.peek(digit_at).is_some_and(|c| c.is_ascii_digit()) {
            text.push('e');
            lx.bump();
            if sign {
                text.push(lx.bump().unwrap_or('+'));
            }
            while let Some(c) = lx.peek(0).filter(|c| c.is_ascii_digit()) {
                text.push(c);
                lx.bump();
            }
        }
    }
    let v: f64 = text.parse().unwrap_or(f64::NAN);
    finish_number(lx, v, line, col)
}

fn finish_number(lx: &mut Lexer, v: f64, line: u32, col: u32) -> Result<Tok, Diagnostic> {
    match lx.peek(0) {
        Some('n') => Err(lx.err(
            line,
            col,
            "BigInt literals are not supported by the playground's JavaScript",
        )),
        Some(c) if is_id_start(c) || c.is_ascii_digit() => {
            Err(lx.err(line, col, "Invalid or unexpected token"))
        }
        _ => Ok(Tok::Num(v)),
    }
}

/// Reads an escape after its backslash into `out`.
fn escape(lx: &mut Lexer, out: &mut Vec<u16>) -> Result<(), Diagnostic> {
    let (line, col) = (lx.line, lx.col);
    let bad = |lx: &Lexer| lx.err(line, col, "Invalid hexadecimal escape sequence");
    let Some(c) = lx.bump() else {
        return Err(lx.err(line, col, "Invalid or unexpected token"));
    };
    let simple = match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'v' => Some('\u{b}'),
        '0' if !lx.peek(0).is_some_and(|d| d.is_ascii_digit()) => Some('\0'),
        '\n' | '\u{2028}' | '\u{2029}' => return Ok(()),
        '\r' => {
            if lx.peek(0) == Some('\n') {
                lx.bump();
            }
            return Ok(());
        }
        'x' => {
            let mut v = 0u32;
            for _ in 0..2 {
                let d = lx
                    .bump()
                    .and_then(|c| c.to_digit(16))
                    .ok_or_else(|| bad(lx))?;
                v = v * 16 + d;
            }
            out.push(v as u16);
            return Ok(());
        }
        'u' => {
            let mut v = 0u32;
            if lx.peek(0) == Some('{') {
                lx.bump();
                let mut n = 0;
                loop {
                    match lx.bump() {
                        Some('}') if n > 0 => break,
                        Some(c) if c.is_ascii_hexdigit() && v <= 0x10ffff => {
                            v = v * 16 + c.to_digit(16).unwrap_or(0);
                            n += 1;
                        }
                        _ => return Err(bad(lx)),
                    }
                }
                if v > 0x10ffff {
                    return Err(bad(lx));
                }
            } else {
                for _ in 0..4 {
                    let d = lx
                        .bump()
                        .and_then(|c| c.to_digit(16))
                        .ok_or_else(|| bad(lx))?;
                    v = v * 16 + d;
                }
            }
            if v > 0xffff {
                let v = v - 0x10000;
                out.push(0xd800 + (v >> 10) as u16);
                out.push(0xdc00 + (v & 0x3ff) as u16);
            } else {
                out.push(v as u16);
            }
            return Ok(());
        }
        c if c.is_ascii_digit() => {
            return Err(lx.err(
                line,
                col,
                "Octal escape sequences are not allowed in strict mode.",
            ))
        }
        c => Some(c),
    };
    if let Some(c) = simple {
        let mut buf = [0u16; 2];
        out.extend_from_slice(c.encode_utf16(&mut buf));
    }
    Ok(())
}

fn push_char(out: &mut Vec<u16>, c: char) {
    let mut buf = [0u16; 2];
    out.extend_from_slice(c.encode_utf16(&mut buf));
}

fn string(lx: &mut Lexer, quote: char) -> Result<Tok, Diagnostic> {
    let (line, col) = (lx.line, lx.col);
    lx.bump();
    let mut out = Vec::new();
    loop {
        match lx.bump() {
            None | Some('\n') => return Err(lx.err(line, col, "Invalid or unexpected token")),
            Some(c) if c == quote => break,
            Some('\\') => escape(lx, &mut out)?,
            Some(c) => push_char(&mut out, c),
        }
    }
    Ok(Tok::Str(String::from_utf16_lossy(&out).into()))
}

/// Reads template text up to the closing backtick or the next `${`.
fn template(
    lx: &mut Lexer,
    braces: &mut Vec<bool>,
    line: u32,
    col: u32,
    head: bool,
) -> Result<Tok, Diagnostic> {
    let mut out = Vec::new();
    loop {
        match lx.bump() {
            None => return Err(lx.err(line, col, "Unterminated template literal")),
            Some('`') => {
                return Ok(Tok::Template {
                    cooked: String::from_utf16_lossy(&out).into(),
                    tail: true,
                    head,
                })
            }
            Some('$') if lx.peek(0) == Some('{') => {
                lx.bump();
                braces.push(true);
                return Ok(Tok::Template {
                    cooked: String::from_utf16_lossy(&out).into(),
                    tail: false,
                    head,
                });
            }
            Some('\\') => escape(lx, &mut out)?,
            Some('\r') => {
                if lx.peek(0) == Some('\n') {
                    lx.bump();
                }
                out.push(10);
            }
            Some(c) => push_char(&mut out, c),
        }
    }
}
