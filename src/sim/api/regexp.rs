//! Go's `regexp` as a CRD `pattern` needs it: RE2 syntax parsed with Go's error messages, and a
//! Pike VM that answers `MatchString` in time linear in the text, so no learner's pattern can
//! make the API server backtrack forever.
//!
//! What differs from Go, deliberately: Unicode classes (`\pL`, `\p{Lu}`) know the general
//! categories L, Lu, Ll, N, Nd, P, S and Z through Rust's char classification (P and S for ASCII
//! only, all of them below U+0800) and no scripts; case folding is Rust's simple
//! lowercase/uppercase mapping. Captures are parsed and ignored: `pattern` only asks "does it
//! match?".

use crate::sort::StableSort;
use std::fmt;

/// Go's `syntax.MaxNesting`: deeper groups are refused.
const MAX_NESTING: usize = 1000;
/// Go's `{n,m}` limit.
const MAX_REPEAT: u32 = 1000;
/// Compiled instructions one pattern may take; Go's own limit is far higher, but a pattern
/// this size in a CRD is a mistake.
const MAX_PROGRAM: usize = 20_000;

/// A compile error, printed as Go prints `*syntax.Error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: &'static str,
    pub expr: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error parsing regexp: {}: `{}`", self.code, self.expr)
    }
}

const MISSING_PAREN: &str = "missing closing )";
const UNEXPECTED_PAREN: &str = "unexpected )";
const MISSING_BRACKET: &str = "missing closing ]";
const MISSING_REPEAT_ARG: &str = "missing argument to repetition operator";
const NESTED_REPEAT: &str = "invalid nested repetition operator";
const REPEAT_SIZE: &str = "invalid repeat count";
const ESCAPE: &str = "invalid escape sequence";
const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const CLASS_RANGE: &str = "invalid character class range";
const PERL_OP: &str = "invalid or unsupported Perl syntax";
const NAMED_CAPTURE: &str = "invalid named capture";
const NESTING: &str = "expression nests too deeply";
const TOO_LARGE: &str = "expression too large";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Look {
    BeginText,
    EndText,
    BeginLine,
    EndLine,
    WordBoundary,
    NotWordBoundary,
}

#[derive(Clone, Debug, Default)]
struct Class {
    ranges: Vec<(char, char)>,
    negated: bool,
    fold: bool,
}

impl Class {
    fn of(ranges: &[(char, char)]) -> Class {
        Class {
            ranges: ranges.to_vec(),
            ..Class::default()
        }
    }

    fn holds(&self, c: char) -> bool {
        let inside = |c: char| self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
        let found = inside(c)
            || (self.fold && (c.to_lowercase().any(inside) || c.to_uppercase().any(inside)));
        found != self.negated
    }
}

#[derive(Clone, Debug)]
enum Node {
    Empty,
    Char(Class),
    Look(Look),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
}

#[derive(Clone, Copy, Default)]
struct Flags {
    fold: bool,
    multi_line: bool,
    dot_nl: bool,
}

const DIGIT: &[(char, char)] = &[('0', '9')];
const SPACE: &[(char, char)] = &[('\t', '\n'), ('\x0c', '\r'), (' ', ' ')];
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];

fn posix(name: &str) -> Option<&'static [(char, char)]> {
    Some(match name {
        "alnum" => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
        "alpha" => &[('A', 'Z'), ('a', 'z')],
        "ascii" => &[('\0', '\x7f')],
        "blank" => &[('\t', '\t'), (' ', ' ')],
        "cntrl" => &[('\0', '\x1f'), ('\x7f', '\x7f')],
        "digit" => DIGIT,
        "graph" => &[('!', '~')],
        "print" => &[(' ', '~')],
        "lower" => &[('a', 'z')],
        "punct" => &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "space" => &[('\t', '\r'), (' ', ' ')],
        "upper" => &[('A', 'Z')],
        "word" => WORD,
        "xdigit" => &[('0', '9'), ('A', 'F'), ('a', 'f')],
        _ => return None,
    })
}

/// A Unicode general category `\p{…}` names, as Rust's char classification sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Category {
    Letter,
    Upper,
    Lower,
    Number,
    Punct,
    Symbol,
    Separator,
}

impl Category {
    fn named(name: &str) -> Option<Category> {
        Some(match name {
            "L" => Category::Letter,
            "Lu" => Category::Upper,
            "Ll" => Category::Lower,
            "N" | "Nd" => Category::Number,
            "P" => Category::Punct,
            "S" => Category::Symbol,
            "Z" | "Zs" => Category::Separator,
            _ => return None,
        })
    }

    fn holds(self, c: char) -> bool {
        match self {
            Category::Letter => c.is_alphabetic(),
            Category::Upper => c.is_uppercase(),
            Category::Lower => c.is_lowercase(),
            Category::Number => c.is_numeric(),
            Category::Punct => c.is_ascii_punctuation() && !"$+<=>^`|~".contains(c),
            Category::Symbol => "$+<=>^`|~".contains(c),
            Category::Separator => c.is_whitespace() && !c.is_control(),
        }
    }

    /// The category's members below U+0800 as ranges; enough for every pattern a CRD has.
    fn ranges(self) -> Vec<(char, char)> {
        let mut out: Vec<(char, char)> = Vec::new();
        for c in (0u32..0x800).filter_map(char::from_u32) {
            if self.holds(c) {
                match out.last_mut() {
                    Some((_, hi)) if *hi as u32 + 1 == c as u32 => *hi = c,
                    _ => out.push((c, c)),
                }
            }
        }
        out
    }
}

struct Parser<'a> {
    whole: &'a str,
    rest: &'a str,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, code: &'static str, expr: &str) -> Error {
        Error {
            code,
            expr: expr.to_string(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.rest = &self.rest[c.len_utf8()..];
        Some(c)
    }

    fn alternation(&mut self, flags: &mut Flags) -> Result<Node, Error> {
        let mut branches = vec![self.concat(flags)?];
        while self.peek() == Some('|') {
            self.bump();
            branches.push(self.concat(flags)?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    fn concat(&mut self, flags: &mut Flags) -> Result<Node, Error> {
        let mut items: Vec<Node> = Vec::new();
        // Where the last repetition operator began, to word Go's "nested repetition" error.
        let mut last_repeat: Option<&'a str> = None;
        loop {
            let before = self.rest;
            let Some(c) = self.peek() else { break };
            match c {
                '|' | ')' => break,
                '*' | '+' | '?' | '{' => {
                    let Some((min, max)) = self.repeat_op()? else {
                        // `{` that opens no valid repeat is a literal, as in Go.
                        self.bump();
                        items.push(literal('{', flags));
                        last_repeat = None;
                        continue;
                    };
                    if self.peek() == Some('?') {
                        self.bump();
                    }
                    let op = &before[..before.len() - self.rest.len()];
                    if let Some(prev) = last_repeat {
                        return Err(
                            self.error(NESTED_REPEAT, &prev[..prev.len() - self.rest.len()])
                        );
                    }
                    let Some(operand) = items.pop() else {
                        return Err(self.error(MISSING_REPEAT_ARG, op));
                    };
                    items.push(Node::Repeat(Box::new(operand), min, max));
                    last_repeat = Some(before);
                    continue;
                }
                _ => {}
            }
            last_repeat = None;
            let atom = self.atom(flags)?;
            if let Some(a) = atom {
                items.push(a);
            }
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    /// `*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}`; `None` when `{` starts no repeat.
    fn repeat_op(&mut self) -> Result<Option<(u32, Option<u32>)>, Error> {
        let start = self.rest;
        match self.bump() {
            Some('*') => return Ok(Some((0, None))),
            Some('+') => return Ok(Some((1, None))),
            Some('?') => return Ok(Some((0, Some(1)))),
            _ => {}
        }
        let digits = |p: &mut Parser| -> Option<u32> {
            let n = p.rest.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            let v = p.rest[..n].parse::<u32>().unwrap_or(u32::MAX);
            p.rest = &p.rest[n..];
            Some(v)
        };
        let parsed = (|| {
            let min = digits(self)?;
            let max = if self.peek() == Some(',') {
                self.bump();
                if self.peek() == Some('}') {
                    None
                } else {
                    Some(digits(self)?)
                }
            } else {
                Some(min)
            };
            (self.bump() == Some('}')).then_some((min, max))
        })();
        let Some((min, max)) = parsed else {
            self.rest = start;
            return Ok(None);
        };
        if min > MAX_REPEAT || max.is_some_and(|m| m > MAX_REPEAT || m < min) {
            let op = &start[..start.len() - self.rest.len()];
            return Err(self.error(REPEAT_SIZE, op));
        }
        Ok(Some((min, max)))
    }

    fn atom(&mut self, flags: &mut Flags) -> Result<Option<Node>, Error> {
        let start = self.rest;
        let c = self.bump().unwrap_or('\0');
        Ok(Some(match c {
            '(' => return self.group(start, flags),
            '[' => Node::Char(self.class(start, flags)?),
            '.' => {
                let mut cl = Class::of(&[('\n', '\n')]);
                cl.negated = !flags.dot_nl;
                if flags.dot_nl {
                    cl.ranges = vec![('\0', char::MAX)];
                }
                Node::Char(cl)
            }
            '^' => Node::Look(if flags.multi_line {
                Look::BeginLine
            } else {
                Look::BeginText
            }),
            '$' => Node::Look(if flags.multi_line {
                Look::EndLine
            } else {
                Look::EndText
            }),
            '\\' => return self.escape(start, flags),
            c => literal(c, flags),
        }))
    }

    fn group(&mut self, start: &'a str, flags: &mut Flags) -> Result<Option<Node>, Error> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(NESTING, self.whole));
        }
        let mut inner = *flags;
        if self.rest.starts_with('?') {
            self.bump();
            let named = if self.rest.starts_with("P<") {
                self.bump();
                self.bump();
                true
            } else if self.rest.starts_with('<') {
                self.bump();
                true
            } else {
                false
            };
            if named {
                let Some(end) = self.rest.find('>') else {
                    return Err(self.error(NAMED_CAPTURE, start));
                };
                let name = &self.rest[..end];
                self.rest = &self.rest[end + 1..];
                let ok =
                    !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
                if !ok {
                    let shown = &start[..start.len() - self.rest.len()];
                    return Err(self.error(NAMED_CAPTURE, shown));
                }
            } else {
                // Flags: `(?i)` sets them for the rest of the group, `(?i:…)` for the inside.
                let mut on = true;
                loop {
                    let c = self.bump();
                    let op = || &start[..start.len() - self.rest.len()];
                    match c {
                        Some('i') => inner.fold = on,
                        Some('m') => inner.multi_line = on,
                        Some('s') => inner.dot_nl = on,
                        Some('U') => {}
                        Some('-') if on => on = false,
                        Some(')') => {
                            *flags = inner;
                            self.depth -= 1;
                            return Ok(None);
                        }
                        Some(':') => break,
                        _ => return Err(self.error(PERL_OP, op())),
                    }
                }
            }
        }
        let node = self.alternation(&mut inner)?;
        if self.bump() != Some(')') {
            return Err(self.error(MISSING_PAREN, self.whole));
        }
        self.depth -= 1;
        Ok(Some(node))
    }

    fn escape(&mut self, start: &'a str, flags: &Flags) -> Result<Option<Node>, Error> {
        let Some(c) = self.bump() else {
            return Err(self.error(TRAILING_BACKSLASH, ""));
        };
        let look = match c {
            'A' => Some(Look::BeginText),
            'z' => Some(Look::EndText),
            'b' => Some(Look::WordBoundary),
            'B' => Some(Look::NotWordBoundary),
            _ => None,
        };
        if let Some(l) = look {
            return Ok(Some(Node::Look(l)));
        }
        if c == 'Q' {
            let (lit, rest) = match self.rest.find("\\E") {
                Some(i) => (&self.rest[..i], &self.rest[i + 2..]),
                None => (self.rest, ""),
            };
            self.rest = rest;
            let chars: Vec<Node> = lit.chars().map(|c| literal(c, flags)).collect();
            return Ok(Some(Node::Concat(chars)));
        }
        self.rest = &start[1..];
        let mut cl = self.class_escape(start)?;
        cl.fold |= flags.fold;
        Ok(Some(Node::Char(cl)))
    }

    /// An escape that stands for characters (inside or outside brackets), the `\` already seen
    /// at `start`; `self.rest` is just past the backslash.
    fn class_escape(&mut self, start: &'a str) -> Result<Class, Error> {
        let c = self
            .bump()
            .ok_or_else(|| self.error(TRAILING_BACKSLASH, ""))?;
        let bad = |p: &Parser| p.error(ESCAPE, &start[..start.len() - p.rest.len()]);
        let one = |c: char| Class::of(&[(c, c)]);
        Ok(match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => {
                let set = match c.to_ascii_lowercase() {
                    'd' => DIGIT,
                    's' => SPACE,
                    _ => WORD,
                };
                let mut cl = Class::of(set);
                cl.negated = c.is_ascii_uppercase();
                cl
            }
            'p' | 'P' => {
                let name: String = if self.rest.starts_with('{') {
                    let Some(end) = self.rest.find('}') else {
                        return Err(bad(self));
                    };
                    let n = self.rest[1..end].to_string();
                    self.rest = &self.rest[end + 1..];
                    n
                } else {
                    self.bump().map(String::from).unwrap_or_default()
                };
                let (negate, name) = match name.strip_prefix('^') {
                    Some(n) => (true, n.to_string()),
                    None => (false, name),
                };
                let Some(cat) = Category::named(&name) else {
                    let shown = &start[..start.len() - self.rest.len()];
                    return Err(self.error(CLASS_RANGE, shown));
                };
                let mut cl = Class::of(&cat.ranges());
                cl.negated = negate != (c == 'P');
                cl
            }
            'a' => one('\x07'),
            'f' => one('\x0c'),
            't' => one('\t'),
            'n' => one('\n'),
            'r' => one('\r'),
            'v' => one('\x0b'),
            '0'..='7' => {
                // Octal: up to three digits; `\1`–`\9` would be backreferences, which RE2 refuses.
                if c != '0' && !self.rest.starts_with(|d: char| d.is_digit(8)) {
                    return Err(bad(self));
                }
                let mut v = c.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.bump();
                        }
                        None => break,
                    }
                }
                one(char::from_u32(v).unwrap_or('\0'))
            }
            'x' => {
                let hex = if self.rest.starts_with('{') {
                    let Some(end) = self.rest.find('}') else {
                        return Err(bad(self));
                    };
                    let h = &self.rest[1..end];
                    self.rest = &self.rest[end + 1..];
                    h
                } else {
                    let n = self.rest.len().min(2);
                    let h = self.rest.get(..n).unwrap_or("");
                    self.rest = self.rest.get(n..).unwrap_or("");
                    if h.len() < 2 {
                        return Err(bad(self));
                    }
                    h
                };
                match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
                    Some(v) if !hex.is_empty() => one(v),
                    _ => return Err(bad(self)),
                }
            }
            c if c.is_ascii_punctuation() => one(c),
            _ => return Err(bad(self)),
        })
    }

    /// A bracket class; `start` is at the `[`.
    fn class(&mut self, start: &'a str, flags: &Flags) -> Result<Class, Error> {
        let mut cl = Class {
            fold: flags.fold,
            ..Class::default()
        };
        if self.peek() == Some('^') {
            self.bump();
            cl.negated = true;
        }
        let missing = |p: &Parser| p.error(MISSING_BRACKET, start);
        let mut first = true;
        loop {
            let item_start = self.rest;
            let c = self.peek().ok_or_else(|| missing(self))?;
            if c == ']' && !first {
                self.bump();
                return Ok(cl);
            }
            first = false;
            if let Some(body) = self.rest.strip_prefix("[:") {
                if let Some(end) = body.find(":]") {
                    let name = &body[..end];
                    let (negate, name) = match name.strip_prefix('^') {
                        Some(n) => (true, n),
                        None => (false, name),
                    };
                    let Some(set) = posix(name) else {
                        return Err(self.error(CLASS_RANGE, &self.rest[..end + 4]));
                    };
                    self.rest = &body[end + 2..];
                    push_set(&mut cl.ranges, set, negate);
                    continue;
                }
            }
            let lo = self.class_char(start)?;
            let lo = match lo {
                ClassItem::Set(set) => {
                    push_set(&mut cl.ranges, &set.ranges, set.negated);
                    continue;
                }
                ClassItem::Char(c) => c,
            };
            let mut hi = lo;
            if self.rest.starts_with('-') && !self.rest[1..].starts_with(']') && self.rest.len() > 1
            {
                self.bump();
                hi = match self.class_char(start)? {
                    ClassItem::Char(c) => c,
                    ClassItem::Set(_) => {
                        let shown = &item_start[..item_start.len() - self.rest.len()];
                        return Err(self.error(CLASS_RANGE, shown));
                    }
                };
                if hi < lo {
                    let shown = &item_start[..item_start.len() - self.rest.len()];
                    return Err(self.error(CLASS_RANGE, shown));
                }
            }
            cl.ranges.push((lo, hi));
        }
    }

    fn class_char(&mut self, start: &'a str) -> Result<ClassItem, Error> {
        let at = self.rest;
        match self.bump() {
            None => Err(self.error(MISSING_BRACKET, start)),
            Some('\\') => {
                let cl = self.class_escape(at)?;
                if cl.ranges.len() == 1 && cl.ranges[0].0 == cl.ranges[0].1 && !cl.negated {
                    Ok(ClassItem::Char(cl.ranges[0].0))
                } else {
                    Ok(ClassItem::Set(cl))
                }
            }
            Some(c) => Ok(ClassItem::Char(c)),
        }
    }
}

enum ClassItem {
    Char(char),
    Set(Class),
}

fn push_set(into: &mut Vec<(char, char)>, set: &[(char, char)], negate: bool) {
    if !negate {
        into.extend_from_slice(set);
        return;
    }
    let mut sorted = set.to_vec();
    sorted.stable_sort();
    let mut next = 0u32;
    for (lo, hi) in sorted {
        if (lo as u32) > next {
            if let (Some(a), Some(b)) = (char::from_u32(next), char::from_u32(lo as u32 - 1)) {
                into.push((a, b));
            }
        }
        next = next.max(hi as u32 + 1);
    }
    if let Some(a) = char::from_u32(next) {
        into.push((a, char::MAX));
    }
}

fn literal(c: char, flags: &Flags) -> Node {
    let mut cl = Class::of(&[(c, c)]);
    cl.fold = flags.fold;
    Node::Char(cl)
}

#[derive(Clone, Debug)]
enum Inst {
    Char(Class),
    Look(Look),
    Split(usize, usize),
    Jmp(usize),
    Match,
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Regexp {
    prog: Vec<Inst>,
}

/// Compiles `pattern` as Go's `regexp.Compile` does, or says why Go would refuse it.
pub fn compile(pattern: &str) -> Result<Regexp, Error> {
    let mut p = Parser {
        whole: pattern,
        rest: pattern,
        depth: 0,
    };
    let mut flags = Flags::default();
    let node = p.alternation(&mut flags)?;
    if p.peek() == Some(')') {
        return Err(p.error(UNEXPECTED_PAREN, pattern));
    }
    let mut prog = Vec::new();
    emit(&node, &mut prog).ok_or_else(|| p.error(TOO_LARGE, pattern))?;
    prog.push(Inst::Match);
    Ok(Regexp { prog })
}

fn emit(node: &Node, prog: &mut Vec<Inst>) -> Option<()> {
    if prog.len() > MAX_PROGRAM {
        return None;
    }
    match node {
        Node::Empty => {}
        Node::Char(c) => prog.push(Inst::Char(c.clone())),
        Node::Look(l) => prog.push(Inst::Look(*l)),
        Node::Concat(items) => {
            for n in items {
                emit(n, prog)?;
            }
        }
        Node::Alt(branches) => {
            let mut jumps = Vec::new();
            for (i, b) in branches.iter().enumerate() {
                if i + 1 < branches.len() {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(b, prog)?;
                    jumps.push(prog.len());
                    prog.push(Inst::Jmp(0));
                    let next = prog.len();
                    prog[split] = Inst::Split(split + 1, next);
                } else {
                    emit(b, prog)?;
                }
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat(n, min, max) => {
            for _ in 0..*min {
                emit(n, prog)?;
            }
            match max {
                None => {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(n, prog)?;
                    prog.push(Inst::Jmp(split));
                    let end = prog.len();
                    prog[split] = Inst::Split(split + 1, end);
                }
                Some(max) => {
                    let mut splits = Vec::new();
                    for _ in *min..*max {
                        splits.push(prog.len());
                        prog.push(Inst::Split(0, 0));
                        emit(n, prog)?;
                        if prog.len() > MAX_PROGRAM {
                            return None;
                        }
                    }
                    let end = prog.len();
                    for s in splits {
                        prog[s] = Inst::Split(s + 1, end);
                    }
                }
            }
        }
    }
    (prog.len() <= MAX_PROGRAM).then_some(())
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c == '_' || c.is_ascii_alphanumeric())
}

impl Regexp {
    /// Go's `MatchString`: whether the pattern matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        let n = self.prog.len();
        let mut current: Vec<usize> = Vec::new();
        let mut next: Vec<usize> = Vec::new();
        let mut on_list = vec![usize::MAX; n];
        for i in 0..=chars.len() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let here = chars.get(i).copied();
            // Unanchored search: a thread starts at every position.
            if self.add(&mut current, &mut on_list, 0, i, prev, here) {
                return true;
            }
            let Some(c) = here else { break };
            for &pc in &current {
                if let Inst::Char(cl) = &self.prog[pc] {
                    if cl.holds(c) {
                        let after = chars.get(i + 1).copied();
                        if self.add(&mut next, &mut on_list, pc + 1, i + 1, Some(c), after) {
                            return true;
                        }
                    }
                }
            }
            std::mem::swap(&mut current, &mut next);
            next.clear();
        }
        false
    }

    /// Follows jumps, splits and assertions from `pc` at position `at`, adding the character
    /// steps it reaches to `list`; true when it reaches `Match`.
    fn add(
        &self,
        list: &mut Vec<usize>,
        on_list: &mut [usize],
        pc: usize,
        at: usize,
        prev: Option<char>,
        here: Option<char>,
    ) -> bool {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if on_list[pc] == at {
                continue;
            }
            on_list[pc] = at;
            match &self.prog[pc] {
                Inst::Match => return true,
                Inst::Jmp(t) => stack.push(*t),
                Inst::Split(a, b) => {
                    stack.push(*b);
                    stack.push(*a);
                }
                Inst::Look(l) => {
                    let holds = match l {
                        Look::BeginText => prev.is_none(),
                        Look::EndText => here.is_none(),
                        Look::BeginLine => prev.is_none() || prev == Some('\n'),
                        Look::EndLine => here.is_none() || here == Some('\n'),
                        Look::WordBoundary => is_word(prev) != is_word(here),
                        Look::NotWordBoundary => is_word(prev) == is_word(here),
                    };
                    if holds {
                        stack.push(pc + 1);
                    }
                }
                Inst::Char(_) => list.push(pc),
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::compile;

    fn matches(pattern: &str, text: &str) -> bool {
        compile(pattern)
            .unwrap_or_else(|e| panic!("{pattern}: {e}"))
            .is_match(text)
    }

    #[test]
    fn patterns_from_real_crds_match_as_go_matches_them() {
        let cron = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$";
        assert!(matches(cron, "* * * * */5"));
        assert!(!matches(cron, "* * * *"));
        let host = r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
        assert!(matches(host, "*.example.com"));
        assert!(!matches(host, ".;'.';[]"));
        let uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
        assert!(matches(uuid, "id: 123e4567-e89b-12d3-a456-426614174000!"));
        assert!(!matches(uuid, "123e4567e89b12d3"));
        assert!(matches(
            "^client\\.oauth\\.pinniped\\.dev-",
            "client.oauth.pinniped.dev-x"
        ));
        assert!(!matches(
            "^client\\.oauth\\.pinniped\\.dev-",
            "client0oauth1pinniped2dev-x"
        ));
    }

    #[test]
    fn an_unanchored_pattern_matches_anywhere_and_dollar_means_the_very_end() {
        assert!(matches("b+", "abbbc"));
        assert!(!matches("^b", "ab"));
        assert!(
            !matches("a$", "a\n"),
            "without (?m), $ is the end of the text"
        );
        assert!(matches("(?m)a$", "a\nb"));
        assert!(matches("", "anything"));
        assert!(matches("a|", "zzz"));
    }

    #[test]
    fn classes_flags_and_escapes_behave_as_in_re2() {
        assert!(matches("^[[:alpha:]_][[:word:]]*$", "_x9"));
        assert!(!matches("^[^a-z]+$", "ABc"));
        assert!(matches("(?i)^abc$", "AbC"));
        assert!(!matches("^(?i:a)b$", "AB"));
        assert!(matches(r"^\x41\x{42}\103$", "ABC"));
        assert!(matches(r"^\Q.*\E$", ".*"));
        assert!(matches(r"\bword\b", "a word here"));
        assert!(!matches(r"\bword\b", "swordfish"));
        assert!(matches(r"^\pL+$", "héllo"));
        assert!(!matches("^.$", "\n"));
        assert!(matches("(?s)^.$", "\n"));
        assert!(matches("^a{2,3}$", "aaa"));
        assert!(!matches("^a{2,3}$", "aaaa"));
        assert!(
            matches("^a{,2}$", "a{,2}"),
            "a brace that opens no repeat is literal"
        );
        assert!(matches("^(?P<year>[0-9]{4})$", "2026"));
    }

    #[test]
    fn refused_patterns_get_gos_error_messages() {
        for (pattern, message) in [
            (
                "+",
                "error parsing regexp: missing argument to repetition operator: `+`",
            ),
            ("(", "error parsing regexp: missing closing ): `(`"),
            ("a)b", "error parsing regexp: unexpected ): `a)b`"),
            ("[a", "error parsing regexp: missing closing ]: `[a`"),
            (
                "a**",
                "error parsing regexp: invalid nested repetition operator: `**`",
            ),
            (
                "a{1001}",
                "error parsing regexp: invalid repeat count: `{1001}`",
            ),
            (
                "a{3,2}",
                "error parsing regexp: invalid repeat count: `{3,2}`",
            ),
            (
                r"\q",
                "error parsing regexp: invalid escape sequence: `\\q`",
            ),
            (
                r"(a)\1",
                "error parsing regexp: invalid escape sequence: `\\1`",
            ),
            (
                "a\\",
                "error parsing regexp: trailing backslash at end of expression: ``",
            ),
            (
                "[z-a]",
                "error parsing regexp: invalid character class range: `z-a`",
            ),
            (
                "(?=a)",
                "error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
            ),
            (
                "(?P<>a)",
                "error parsing regexp: invalid named capture: `(?P<>`",
            ),
        ] {
            match compile(pattern) {
                Ok(_) => panic!("{pattern} compiled"),
                Err(e) => assert_eq!(e.to_string(), message, "{pattern}"),
            }
        }
    }

    #[test]
    fn a_pathological_pattern_matches_in_linear_time() {
        let re = compile("^(a+)+$").unwrap();
        let text = format!("{}b", "a".repeat(20_000));
        assert!(!re.is_match(&text));
    }
}
