//! YAML syntax highlighting for the editor: a small, total tokenizer that turns each line into
//! coloured spans, and where each diagnostic's wavy underline goes on its line.
//!
//! The editor draws a `<pre>` under a transparent `<textarea>` (src/ui/editor.rs), so the spans
//! must cover every byte of every line exactly, in order and on character boundaries, or the two
//! layers drift apart. YAML needs a little state across lines (a block scalar's content, a quoted
//! string or a flow collection spanning lines); it fits in a small [`LineState`], so a long file
//! is scanned once for the state at every [`CHECKPOINT`]th line and only the lines on screen are
//! split into spans ([`Highlight`]). This is a highlighter, not a parser: invalid YAML is coloured
//! as well as it can be and never fails — the decoder (src/sim/input/yaml.rs) is the judge of validity.

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;

use crate::sim::input::diagnostic::Severity;
use crate::sort::StableSort;

/// What a span of a line is, which decides its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tok {
    /// Spaces, tabs and carriage returns: indentation and gaps between tokens.
    Space,
    /// A mapping key, plain or quoted (quotes included).
    Key,
    /// A quoted string with its quotes, or the part of one between escapes.
    Str,
    /// An escape inside a quoted string: `\n`, `\"`, `\u00e9`, or `''` in single quotes.
    Escape,
    /// An unquoted value that is not a number, boolean or null (`nginx:1.27`, `500m`, `web`).
    Plain,
    /// A YAML 1.2 core-schema number: `3`, `-1.5e3`, `0x1F`, `0o17`, `.inf`, `.nan`.
    Number,
    /// `true` or `false` (any of the three core-schema spellings).
    Bool,
    /// `null`, `Null`, `NULL` or `~`.
    Null,
    /// A `#` comment to the end of the line.
    Comment,
    /// `---` or `...` at the start of a line.
    DocMarker,
    /// A `%YAML` or `%TAG` directive.
    Directive,
    /// `&name`: an anchor.
    Anchor,
    /// `*name`: an alias.
    Alias,
    /// `!tag`, `!!str`, `!<verbatim>`.
    Tag,
    /// `|` or `>` with its indentation and chomping indicators (`|2-`, `>+`).
    BlockIndicator,
    /// A content line of a block scalar (everything after its indentation).
    BlockText,
    /// The `-` of a block sequence entry.
    Dash,
    /// `:`, `?`, `,`, `[`, `]`, `{`, `}`.
    Punct,
    /// A JavaScript keyword in a controller's `source:` block (`function`, `const`, `return`).
    Keyword,
}

impl Tok {
    /// The CSS class the editor gives the token; `None` for whitespace and plain values, which
    /// take the text colour (fewer elements on screen).
    pub fn class(self) -> Option<&'static str> {
        Some(match self {
            Tok::Space | Tok::Plain => return None,
            Tok::Key => "t-key",
            Tok::Str => "t-str",
            Tok::Escape => "t-esc",
            Tok::Number => "t-num",
            Tok::Bool => "t-bool",
            Tok::Null => "t-null",
            Tok::Comment => "t-comment",
            Tok::DocMarker => "t-doc",
            Tok::Directive => "t-directive",
            Tok::Anchor => "t-anchor",
            Tok::Alias => "t-alias",
            Tok::Tag => "t-tag",
            Tok::BlockIndicator => "t-block",
            Tok::BlockText => "t-blocktext",
            Tok::Keyword => "t-kw",
            Tok::Dash => "t-dash",
            Tok::Punct => "t-punct",
        })
    }
}

/// A token of one line: byte offsets into the line (without its `\n`), always on character
/// boundaries and never empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub start: usize,
    pub end: usize,
    pub tok: Tok,
}

/// What an earlier line left open, which changes how the next line reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineState {
    /// Ordinary YAML; `flow_depth` counts `[` and `{` still open from earlier lines.
    Normal { flow_depth: u32 },
    /// Inside a `"…"` string that continues on the next line.
    DoubleQuoted { flow_depth: u32 },
    /// Inside a `'…'` string that continues on the next line.
    SingleQuoted { flow_depth: u32 },
    /// Inside a `|` or `>` block scalar: its content is indented more than `parent_indent` (the
    /// column of the key or `-` that owns it, -1 at the top level), and once the first content
    /// line is seen (or an indentation indicator says so), by exactly `content_indent` or more.
    BlockScalar {
        parent_indent: i32,
        content_indent: Option<u32>,
        /// The scalar is the JavaScript of a `source:` key (a `Controller`'s), coloured as code.
        code: bool,
    },
}

impl Default for LineState {
    fn default() -> Self {
        LineState::Normal { flow_depth: 0 }
    }
}

/// Splits one line (without its `\n`) into spans, given the state the previous line left, and
/// returns the state for the next line. Total: any string gives spans covering it exactly.
pub fn tokenize_line(line: &str, state: LineState) -> (Vec<Token>, LineState) {
    let mut spans = Vec::new();
    let next = scan_line(line, state, |s| spans.push(s));
    (spans, next)
}

/// The state after `line` without building its spans: the fast pass over a whole file.
pub fn next_state(line: &str, state: LineState) -> LineState {
    // Most lines of a manifest change nothing: no quote, bracket or block indicator opens.
    let quiet = state == LineState::default()
        && !line
            .bytes()
            .any(|c| matches!(c, b'"' | b'\'' | b'|' | b'>' | b'[' | b']' | b'{' | b'}'));
    if quiet {
        return state;
    }
    scan_line(line, state, |_| {})
}

/// Every line of `text` (split on `\n` after [`normalize_newlines`]) as spans. For tests and
/// small texts; the editor uses [`Highlight`], which tokenizes only the lines it is asked for.
pub fn tokenize(text: &str) -> Vec<Vec<Token>> {
    let text = normalize_newlines(text);
    let mut state = LineState::default();
    text.split('\n')
        .map(|line| {
            let (spans, next) = tokenize_line(line, state);
            state = next;
            spans
        })
        .collect()
}

/// `\r\n` and a lone `\r` as `\n`: what a textarea shows (and what YAML counts as one line
/// break), so the highlighted lines and the diagnostics' line numbers match the text area's.
pub fn normalize_newlines(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Lines between the line states a [`Highlight`] keeps: the most lines it rescans to tokenize
/// any one line, against the memory of a state for every line of a 1 MiB paste of newlines.
pub const CHECKPOINT: usize = 64;

/// A text ready to highlight any window of lines. It remembers the state at every
/// [`CHECKPOINT`]th line, found lazily: showing lines 9,000–9,060 of a 10,000-line paste scans
/// the lines before them once (without building their spans) and tokenizes only those 60, and
/// [`Highlight::update`] keeps every state before the first edited byte, so typing costs the
/// lines on screen, not the file.
#[derive(Clone, Debug)]
pub struct Highlight {
    text: String,
    line_count: usize,
    /// Byte offset and starting state of lines 0, CHECKPOINT, 2·CHECKPOINT, … as far as known.
    checkpoints: RefCell<Vec<(usize, LineState)>>,
}

/// One line of a [`Highlight`], tokenized.
#[derive(Clone, Debug, PartialEq)]
pub struct HighlightedLine<'a> {
    /// 0-based line index.
    pub index: usize,
    /// The line's text, without its `\n`.
    pub text: &'a str,
    pub spans: Vec<Token>,
}

impl Highlight {
    /// Takes `text` (after [`normalize_newlines`]); scanning happens when lines are asked for.
    pub fn new(text: &str) -> Self {
        Self::with_checkpoints(
            normalize_newlines(text).into_owned(),
            vec![(0, LineState::default())],
        )
    }

    fn with_checkpoints(text: String, checkpoints: Vec<(usize, LineState)>) -> Self {
        let line_count = text.bytes().filter(|&b| b == b'\n').count() + 1;
        Highlight {
            text,
            line_count,
            checkpoints: RefCell::new(checkpoints),
        }
    }

    /// The highlight of `text`, an edit of this one: the states before the first changed byte
    /// are kept (they depend only on the text before them).
    pub fn update(&self, text: &str) -> Self {
        let text = normalize_newlines(text);
        let same = common_prefix(self.text.as_bytes(), text.as_bytes());
        let mut kept: Vec<(usize, LineState)> = self
            .checkpoints
            .borrow()
            .iter()
            .take_while(|(start, _)| *start <= same)
            .copied()
            .collect();
        if kept.is_empty() {
            kept.push((0, LineState::default()));
        }
        Self::with_checkpoints(text.into_owned(), kept)
    }

    /// True when this is the highlight of `text` (before newline normalization).
    pub fn is_of(&self, text: &str) -> bool {
        *normalize_newlines(text) == *self.text
    }

    /// The text as highlighted (newlines normalized): what line and column numbers refer to.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many lines the text area shows (a trailing `\n` starts an empty last line).
    pub fn line_count(&self) -> usize {
        self.line_count
    }

    /// The checkpoint at or before 0-based `line`, scanning forward from the last known one.
    fn checkpoint(&self, line: usize) -> (usize, LineState) {
        let want = line.min(self.line_count.saturating_sub(1)) / CHECKPOINT;
        let mut cps = self.checkpoints.borrow_mut();
        while cps.len() <= want {
            let Some(&(start, mut state)) = cps.last() else {
                cps.push((0, LineState::default()));
                continue;
            };
            let mut offset = start;
            let mut lines = self.text.get(start..).unwrap_or("").split('\n');
            for _ in 0..CHECKPOINT {
                let Some(l) = lines.next() else { break };
                state = next_state(l, state);
                offset += l.len() + 1;
            }
            if offset > self.text.len() {
                // Fewer lines than counted: cannot happen, but never loop or slice past the end.
                break;
            }
            cps.push((offset, state));
        }
        cps.get(want)
            .or(cps.last())
            .copied()
            .unwrap_or((0, LineState::default()))
    }

    /// The lines in `range` (0-based, clipped to the text) with their spans.
    pub fn lines(&self, range: Range<usize>) -> Vec<HighlightedLine<'_>> {
        let end = range.end.min(self.line_count);
        let first = range.start.min(end);
        if first == end {
            return Vec::new();
        }
        let (offset, mut state) = self.checkpoint(first);
        let base = first / CHECKPOINT * CHECKPOINT;
        let mut out = Vec::with_capacity(end - first);
        let rest = self.text.get(offset..).unwrap_or("");
        for (i, line) in rest.split('\n').enumerate().take(end - base) {
            let index = base + i;
            if index < first {
                state = next_state(line, state);
                continue;
            }
            let (spans, next) = tokenize_line(line, state);
            state = next;
            out.push(HighlightedLine {
                index,
                text: line,
                spans,
            });
        }
        out
    }
}

/// How many leading bytes `a` and `b` share (whole blocks compared first: a typed character in
/// a 1 MiB text is found with a few hundred block comparisons).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

// ---------------------------------------------------------------------------------- scanner

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r')
}

fn is_flow(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

fn ws_or_end(b: &[u8], i: usize) -> bool {
    b.get(i).is_none_or(|&c| is_ws(c))
}

/// `---` or `...` at the start of a line, followed by whitespace or nothing.
fn doc_marker(b: &[u8]) -> Option<&'static [u8]> {
    let head = b.get(..3)?;
    let marker: &'static [u8] = match head {
        b"---" => b"---",
        b"..." => b"...",
        _ => return None,
    };
    ws_or_end(b, 3).then_some(marker)
}

/// The index just after the closing quote of a string whose body starts at `from`, or `None`
/// when the string runs past the end of the line.
fn quoted_end(b: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        let c = b[i];
        if quote == b'"' && c == b'\\' {
            i += 2;
        } else if c == quote {
            if quote == b'\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
            } else {
                return Some(i + 1);
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The end of a plain scalar starting at `p` (trailing whitespace left out) and whether it is a
/// key (a `:` follows that is an indicator, not part of the text as in `nginx:1.27`).
fn plain_end(b: &[u8], p: usize, flow: bool) -> (usize, bool) {
    // The first character is always the scalar's: every indicator that could stop it was taken
    // by the caller. Only ASCII bytes stop the scan, so the end is on a character boundary.
    let mut i = p + 1;
    let mut key = false;
    while i < b.len() {
        let c = b[i];
        if c == b':' && (ws_or_end(b, i + 1) || (flow && is_flow(b[i + 1]))) {
            key = true;
            break;
        }
        if c == b'#' && is_ws(b[i - 1]) {
            break;
        }
        if flow && is_flow(c) {
            break;
        }
        i += 1;
    }
    while i > p + 1 && is_ws(b[i - 1]) {
        i -= 1;
    }
    (i.min(b.len()), key)
}

/// Number, boolean, null or plain, by the YAML 1.2 core schema.
fn classify(s: &[u8]) -> Tok {
    match s {
        b"~" | b"null" | b"Null" | b"NULL" => Tok::Null,
        b"true" | b"True" | b"TRUE" | b"false" | b"False" | b"FALSE" => Tok::Bool,
        _ if is_number(s) => Tok::Number,
        _ => Tok::Plain,
    }
}

fn is_number(s: &[u8]) -> bool {
    if matches!(s, b".nan" | b".NaN" | b".NAN") {
        return true;
    }
    let all = |t: &[u8], f: fn(&u8) -> bool| !t.is_empty() && t.iter().all(f);
    if let Some(h) = s.strip_prefix(b"0x") {
        return all(h, u8::is_ascii_hexdigit);
    }
    if let Some(o) = s.strip_prefix(b"0o") {
        return all(o, |c| (b'0'..=b'7').contains(c));
    }
    let unsigned = s.strip_prefix(b"-").or(s.strip_prefix(b"+")).unwrap_or(s);
    if matches!(unsigned, b".inf" | b".Inf" | b".INF") {
        return true;
    }
    let (mantissa, exponent) = match unsigned.iter().position(|&c| c == b'e' || c == b'E') {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = match mantissa.iter().position(|&c| c == b'.') {
        Some(i) => (&mantissa[..i], Some(&mantissa[i + 1..])),
        None => (mantissa, None),
    };
    let digits = |t: &[u8]| t.iter().all(u8::is_ascii_digit);
    let mantissa_ok = digits(int)
        && frac.is_none_or(digits)
        && (!int.is_empty() || frac.is_some_and(|f| !f.is_empty()));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(b"-").or(e.strip_prefix(b"+")).unwrap_or(e);
        all(e, u8::is_ascii_digit)
    });
    mantissa_ok && exponent_ok
}

/// One line's scan. Spans go to `sink` as they are found, adjacent spans of the same kind merged.
struct Scanner<'a, F: FnMut(Token)> {
    line: &'a str,
    pos: usize,
    depth: u32,
    pending: Option<Token>,
    sink: F,
}

fn scan_line<F: FnMut(Token)>(line: &str, state: LineState, sink: F) -> LineState {
    let mut sc = Scanner {
        line,
        pos: 0,
        depth: 0,
        pending: None,
        sink,
    };
    let next = sc.scan(state);
    // Whatever the scan left (it should leave nothing) is still covered.
    sc.emit(line.len(), Tok::Plain);
    if let Some(p) = sc.pending.take() {
        (sc.sink)(p);
    }
    next
}

impl<F: FnMut(Token)> Scanner<'_, F> {
    /// Covers `pos..end` with `tok` and moves on. `end` must be a character boundary.
    fn emit(&mut self, end: usize, tok: Tok) {
        let end = end.min(self.line.len());
        if end <= self.pos {
            return;
        }
        let span = Token {
            start: self.pos,
            end,
            tok,
        };
        self.pos = end;
        match &mut self.pending {
            Some(p) if p.tok == tok && p.end == span.start => p.end = end,
            _ => {
                if let Some(p) = self.pending.replace(span) {
                    (self.sink)(p);
                }
            }
        }
    }

    fn scan(&mut self, state: LineState) -> LineState {
        let b = self.line.as_bytes();
        if let Some(marker) = doc_marker(b) {
            // A document marker ends whatever was open (YAML forbids one inside a scalar).
            self.emit(3, Tok::DocMarker);
            return self.nodes(marker == b"---", -1);
        }
        let indent = b.iter().take_while(|&&c| c == b' ').count();
        match state {
            LineState::BlockScalar {
                parent_indent,
                content_indent,
                code,
            } => {
                if b[indent..].iter().all(|&c| is_ws(c)) {
                    self.emit(b.len(), Tok::Space);
                    return state;
                }
                let inside = match content_indent {
                    Some(c) => indent >= c as usize,
                    None => indent as i64 > i64::from(parent_indent),
                };
                if inside {
                    self.emit(indent, Tok::Space);
                    if code {
                        self.code(indent);
                    } else {
                        self.emit(b.len(), Tok::BlockText);
                    }
                    return LineState::BlockScalar {
                        parent_indent,
                        content_indent: Some(content_indent.unwrap_or(indent as u32)),
                        code,
                    };
                }
                // A less indented line ends the scalar and is ordinary YAML.
            }
            LineState::DoubleQuoted { flow_depth } | LineState::SingleQuoted { flow_depth } => {
                self.depth = flow_depth;
                let quote = if matches!(state, LineState::DoubleQuoted { .. }) {
                    b'"'
                } else {
                    b'\''
                };
                match quoted_end(b, 0, quote) {
                    Some(end) => self.quoted(end, quote, false, true, Tok::Str),
                    None => {
                        self.quoted(b.len(), quote, false, false, Tok::Str);
                        return state;
                    }
                }
                return self.nodes(false, indent as i32 - 1);
            }
            LineState::Normal { flow_depth } => self.depth = flow_depth,
        }
        if b.first() == Some(&b'%') && self.depth == 0 {
            let end = comment_start(b, 0).unwrap_or(b.len());
            let end = trim_end(b, 0, end);
            self.emit(end, Tok::Directive);
        }
        self.nodes(true, indent as i32 - 1)
    }

    /// Covers a quoted string from `pos` to `end` (just after its closing quote, or the line's
    /// end), with its escapes as [`Tok::Escape`]. `open`: `pos` is at the opening quote.
    fn quoted(&mut self, end: usize, quote: u8, open: bool, closed: bool, tok: Tok) {
        let b = self.line.as_bytes();
        let body_end = if closed { end - 1 } else { end };
        let mut i = self.pos + usize::from(open);
        while i < body_end {
            if quote == b'"' && b[i] == b'\\' {
                self.emit(i, tok);
                let width = self.line[i + 1..].chars().next().map_or(0, char::len_utf8);
                let mut e = i + 1 + width;
                let hex = match b.get(i + 1) {
                    Some(b'x') => 2,
                    Some(b'u') => 4,
                    Some(b'U') => 8,
                    _ => 0,
                };
                for _ in 0..hex {
                    if e < body_end && b[e].is_ascii_hexdigit() {
                        e += 1;
                    }
                }
                let e = e.min(body_end);
                self.emit(e, Tok::Escape);
                i = e;
            } else if quote == b'\'' && b[i] == b'\'' && i + 1 < body_end && b[i + 1] == b'\'' {
                self.emit(i, tok);
                self.emit(i + 2, Tok::Escape);
                i += 2;
            } else {
                i += 1;
            }
        }
        self.emit(end, tok);
    }

    /// A line of JavaScript from `from` to its end ([`js_tokens`]).
    fn code(&mut self, from: usize) {
        for (end, tok) in js_tokens(self.line, from) {
            self.emit(end, tok);
        }
    }

    /// The rest of the line: nodes, indicators and comments. `node_start`: a block indicator
    /// (`- `, `? `, `|`, `>`) may come next. `parent`: the column that owns a block scalar.
    fn nodes(&mut self, mut node_start: bool, mut parent: i32) -> LineState {
        let b = self.line.as_bytes();
        let len = b.len();
        // Some(explicit indentation) once a block scalar header is seen on this line.
        let mut block: Option<Option<u32>> = None;
        // Whether the last key on the line is `source` (whose block is a controller's code).
        let mut source_key = false;
        while self.pos < len {
            let p = self.pos;
            let c = b[p];
            let flow = self.depth > 0;
            match c {
                _ if is_ws(c) => {
                    let e = p + b[p..].iter().take_while(|&&c| is_ws(c)).count();
                    self.emit(e, Tok::Space);
                }
                b'#' if p == 0 || is_ws(b[p - 1]) => self.emit(len, Tok::Comment),
                b'-' if node_start && !flow && ws_or_end(b, p + 1) => {
                    self.emit(p + 1, Tok::Dash);
                    parent = p as i32;
                }
                b'?' if node_start && ws_or_end(b, p + 1) => self.emit(p + 1, Tok::Punct),
                b':' if ws_or_end(b, p + 1) || (flow && is_flow(b[p + 1])) => {
                    self.emit(p + 1, Tok::Punct);
                    node_start = true;
                }
                b',' if flow => {
                    self.emit(p + 1, Tok::Punct);
                    node_start = true;
                }
                b'[' | b'{' => {
                    self.emit(p + 1, Tok::Punct);
                    self.depth = self.depth.saturating_add(1);
                    node_start = true;
                }
                b']' | b'}' => {
                    self.emit(p + 1, Tok::Punct);
                    self.depth = self.depth.saturating_sub(1);
                    node_start = false;
                }
                b'&' | b'*' | b'!' => {
                    let e = if c == b'!' && b.get(p + 1) == Some(&b'<') {
                        b[p..]
                            .iter()
                            .position(|&x| x == b'>')
                            .map_or(len, |i| p + i + 1)
                    } else {
                        p + 1
                            + b[p + 1..]
                                .iter()
                                .take_while(|&&x| !is_ws(x) && !is_flow(x))
                                .count()
                    };
                    let tok = match c {
                        b'&' => Tok::Anchor,
                        b'*' => Tok::Alias,
                        _ => Tok::Tag,
                    };
                    self.emit(e, tok);
                    // Properties come before their node: `key: &a |` is still a block scalar.
                    if c == b'*' {
                        node_start = false;
                    }
                }
                b'|' | b'>' if node_start && !flow => {
                    let mut e = p + 1;
                    let mut explicit = None;
                    for _ in 0..2 {
                        match b.get(e) {
                            Some(&d @ b'1'..=b'9') => {
                                explicit = Some(u32::from(d - b'0'));
                                e += 1;
                            }
                            Some(b'+' | b'-') => e += 1,
                            _ => break,
                        }
                    }
                    self.emit(e, Tok::BlockIndicator);
                    if ws_or_end(b, e) {
                        block = Some(explicit);
                    }
                    node_start = false;
                }
                b'"' | b'\'' => match quoted_end(b, p + 1, c) {
                    Some(end) => {
                        let colon = end + b[end..].iter().take_while(|&&x| is_ws(x)).count();
                        let key = b.get(colon) == Some(&b':') && (flow || ws_or_end(b, colon + 1));
                        if key {
                            parent = p as i32;
                            self.quoted(end, c, true, true, Tok::Key);
                            self.emit(colon, Tok::Space);
                            self.emit(colon + 1, Tok::Punct);
                            node_start = true;
                        } else {
                            self.quoted(end, c, true, true, Tok::Str);
                            node_start = false;
                        }
                    }
                    None => {
                        self.quoted(len, c, true, false, Tok::Str);
                        let flow_depth = self.depth;
                        return if c == b'"' {
                            LineState::DoubleQuoted { flow_depth }
                        } else {
                            LineState::SingleQuoted { flow_depth }
                        };
                    }
                },
                _ => {
                    let (end, key) = plain_end(b, p, flow);
                    if key {
                        parent = p as i32;
                        source_key = &b[p..end] == b"source";
                        self.emit(end, Tok::Key);
                    } else {
                        self.emit(end, classify(&b[p..end]));
                    }
                    node_start = false;
                }
            }
            if self.pos == p {
                // Never stall: take one character as plain text.
                let w = self.line[p..].chars().next().map_or(1, char::len_utf8);
                self.emit(p + w, Tok::Plain);
            }
        }
        match block {
            Some(explicit) if self.depth == 0 => LineState::BlockScalar {
                parent_indent: parent,
                content_indent: explicit.map(|d| (parent + d as i32).max(0) as u32),
                code: source_key,
            },
            _ => LineState::Normal {
                flow_depth: self.depth,
            },
        }
    }
}

/// The spans of a line of JavaScript from `from` to its end, as `(end, token)`: keywords,
/// strings, numbers, comments; the rest (names, operators) as block text. Line by line, without
/// state: a comment or template literal spanning lines is coloured as code after its first line.
/// Not a method of the scanner, which is compiled once per sink: this is compiled once.
fn js_tokens(line: &str, from: usize) -> Vec<(usize, Tok)> {
    let mut out = Vec::new();
    let mut emit = |end: usize, tok: Tok| out.push((end, tok));
    let b = line.as_bytes();
    let len = b.len();
    let mut i = from;
    while i < len {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            emit(i, Tok::BlockText);
            emit(len, Tok::Comment);
            return out;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = line[i + 2..].find("*/").map_or(len, |e| i + 2 + e + 2);
            emit(i, Tok::BlockText);
            emit(end, Tok::Comment);
            i = end;
            continue;
        }
        if matches!(c, b'"' | b'\'' | b'`') {
            let mut e = i + 1;
            while e < len && b[e] != c {
                e += if b[e] == b'\\' { 2 } else { 1 };
            }
            let end = (e + 1).min(len);
            // Never split a character: an escape before a multi-byte one steps onto it.
            let end = (end..=len)
                .find(|&x| line.is_char_boundary(x))
                .unwrap_or(len);
            emit(i, Tok::BlockText);
            emit(end, Tok::Str);
            i = end;
            continue;
        }
        let word_start = c.is_ascii_alphabetic() || c == b'_' || c == b'$';
        let prev_word =
            i > 0 && (b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'$' | b'.'));
        if (word_start || c.is_ascii_digit()) && !prev_word {
            let end = i + b[i..]
                .iter()
                .take_while(|&&x| x.is_ascii_alphanumeric() || matches!(x, b'_' | b'$'))
                .count();
            let end = if c.is_ascii_digit() {
                end + b[end..]
                    .iter()
                    .take_while(|&&x| x == b'.' || x.is_ascii_digit())
                    .count()
            } else {
                end
            };
            let tok = match &b[i..end] {
                _ if c.is_ascii_digit() => Some(Tok::Number),
                b"true" | b"false" => Some(Tok::Bool),
                b"null" | b"undefined" => Some(Tok::Null),
                w if JS_KEYWORDS.contains(&w) => Some(Tok::Keyword),
                _ => None,
            };
            if let Some(tok) = tok {
                emit(i, Tok::BlockText);
                emit(end, tok);
            }
            i = end;
            continue;
        }
        i += line[i..].chars().next().map_or(1, char::len_utf8);
    }
    emit(len, Tok::BlockText);
    out
}

/// The reserved words coloured as keywords in a controller's source.
const JS_KEYWORDS: &[&[u8]] = &[
    b"async",
    b"await",
    b"break",
    b"case",
    b"catch",
    b"class",
    b"const",
    b"continue",
    b"default",
    b"delete",
    b"do",
    b"else",
    b"extends",
    b"finally",
    b"for",
    b"function",
    b"if",
    b"in",
    b"instanceof",
    b"let",
    b"new",
    b"of",
    b"return",
    b"switch",
    b"this",
    b"throw",
    b"try",
    b"typeof",
    b"var",
    b"void",
    b"while",
];

/// Where a `#` comment starts on the line (a `#` at the start or after whitespace), from `from`.
fn comment_start(b: &[u8], from: usize) -> Option<usize> {
    (from..b.len()).find(|&i| b[i] == b'#' && (i == 0 || is_ws(b[i - 1])))
}

fn trim_end(b: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && is_ws(b[end - 1]) {
        end -= 1;
    }
    end
}

// ---------------------------------------------------------------------------------- marks

/// A diagnostic to put on a line: its 1-based column (in characters, as the decoder counts),
/// severity, and an id the caller uses to find its message again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    pub col: u32,
    pub severity: Severity,
    pub id: usize,
}

/// One wavy underline on a line: the bytes it covers, the most severe of its diagnostics, and
/// their ids (several diagnostics on overlapping text share one underline). `start == end ==
/// line.len()` means "at the end of the line" (a YAML error after the last character): the
/// editor underlines one blank cell there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub start: usize,
    pub end: usize,
    pub severity: Severity,
    pub ids: Vec<usize>,
}

impl Mark {
    /// True for a mark past the line's last character.
    pub fn at_end(&self) -> bool {
        self.start == self.end
    }
}

/// Where a diagnostic at `col` is underlined: from its column to the end of the token there —
/// for a key, to the end of its value on the line (`replicas: three`), for a quoted string, the
/// whole string; from whitespace, the next token.
fn mark_range(line: &str, spans: &[Token], col: u32) -> (usize, usize) {
    let off = line
        .char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i);
    let Some(mut k) = spans.iter().position(|s| s.start <= off && off < s.end) else {
        return (line.len(), line.len());
    };
    let mut start = off;
    if spans[k].tok == Tok::Space {
        match spans[k + 1..].iter().position(|s| s.tok != Tok::Space) {
            Some(j) => {
                k += 1 + j;
                start = spans[k].start;
            }
            None => return (off, line.len()),
        }
    }
    let end = match spans[k].tok {
        Tok::Key => spans[k..]
            .iter()
            .rev()
            .find(|s| !matches!(s.tok, Tok::Space | Tok::Comment))
            .map_or(spans[k].end, |s| s.end),
        Tok::Str | Tok::Escape => spans[k..]
            .iter()
            .take_while(|s| matches!(s.tok, Tok::Str | Tok::Escape))
            .last()
            .map_or(spans[k].end, |s| s.end),
        _ => spans[k].end,
    };
    (start, end)
}

/// The underlines of one line, in order and never overlapping, for its diagnostics `pins`.
pub fn line_marks(line: &str, spans: &[Token], pins: &[Pin]) -> Vec<Mark> {
    let mut raw: Vec<Mark> = pins
        .iter()
        .map(|pin| {
            let (start, end) = mark_range(line, spans, pin.col);
            Mark {
                start,
                end,
                severity: pin.severity,
                ids: vec![pin.id],
            }
        })
        .collect();
    raw.stable_sort_by_key(|m| (m.start, m.end));
    let mut out: Vec<Mark> = Vec::with_capacity(raw.len());
    for m in raw {
        match out.last_mut() {
            Some(last)
                if (m.at_end() && last.at_end() && m.start == last.start)
                    || (!m.at_end() && m.start < last.end) =>
            {
                last.end = last.end.max(m.end);
                last.severity = last.severity.min(m.severity);
                last.ids.extend(m.ids);
            }
            _ => out.push(m),
        }
    }
    out
}

/// A piece of a line to draw: a token, or the part of one inside an underline (`mark` indexes
/// the line's marks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub tok: Tok,
    pub mark: Option<usize>,
}

/// The spans cut at the marks' edges, so each piece is wholly inside one underline or outside
/// all. End-of-line marks cover nothing here; the editor draws them after the last segment.
pub fn segments(spans: &[Token], marks: &[Mark]) -> Vec<Segment> {
    let mut out = Vec::with_capacity(spans.len() + 2 * marks.len());
    for s in spans {
        let mut a = s.start;
        while a < s.end {
            let inside = marks.iter().position(|m| m.start <= a && a < m.end);
            let b = match inside {
                Some(i) => marks[i].end.min(s.end),
                None => marks
                    .iter()
                    .filter(|m| m.start > a && m.start < m.end)
                    .map(|m| m.start)
                    .min()
                    .map_or(s.end, |x| x.min(s.end)),
            };
            out.push(Segment {
                start: a,
                end: b,
                tok: s.tok,
                mark: inside,
            });
            a = b;
        }
    }
    out
}

// ---------------------------------------------------------------------------------- positions

/// Where the lines of the text a set of diagnostics was computed for are in the text now being
/// edited: lines above the first change keep their number, lines below the last change move by
/// the lines added or removed, and lines in the changed region have no place (their diagnostic
/// may no longer be true, so the editor stops underlining it until the next Apply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineMap {
    /// Lines 1..=prefix are unchanged.
    prefix: u32,
    /// Old lines after this one (1-based) are unchanged, `shift` lines further down.
    tail_after: u32,
    shift: i64,
    /// Lines in the new text.
    new_lines: u32,
}

impl LineMap {
    /// The identity for a text of `lines` lines (nothing edited).
    pub fn identity(lines: u32) -> Self {
        LineMap {
            prefix: lines,
            tail_after: lines,
            shift: 0,
            new_lines: lines,
        }
    }

    /// Compares the two texts line by line (a common prefix and a common suffix).
    pub fn between(old: &str, new: &str) -> Self {
        let old_lines: Vec<&str> = old.split('\n').collect();
        let new_lines: Vec<&str> = new.split('\n').collect();
        let prefix = old_lines
            .iter()
            .zip(&new_lines)
            .take_while(|(a, b)| a == b)
            .count();
        let room = old_lines.len().min(new_lines.len()) - prefix;
        let suffix = old_lines
            .iter()
            .rev()
            .zip(new_lines.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        LineMap {
            prefix: to_u32(prefix),
            tail_after: to_u32(old_lines.len() - suffix),
            shift: new_lines.len() as i64 - old_lines.len() as i64,
            new_lines: to_u32(new_lines.len()),
        }
    }

    /// Where old line `line` (1-based) is now, if it is unchanged.
    pub fn map(&self, line: u32) -> Option<u32> {
        let now = if line <= self.prefix {
            i64::from(line)
        } else if line > self.tail_after {
            i64::from(line) + self.shift
        } else {
            return None;
        };
        (1..=i64::from(self.new_lines))
            .contains(&now)
            .then_some(now as u32)
    }
}

/// The 1-based line and column (in characters) of a caret at `utf16` code units into `text`,
/// as the DOM counts a textarea's selection; the inverse of `format::utf16_offset`.
pub fn line_col_at(text: &str, utf16: u32) -> (u32, u32) {
    // ASCII (most manifests): code units are bytes, and std's newline search is fast even in a
    // debug build, which matters on every keystroke of a long file.
    let ascii_end = (utf16 as usize).min(text.len());
    if let Some(before) = text.get(..ascii_end).filter(|t| t.is_ascii()) {
        let line = before.matches('\n').count() + 1;
        let col = ascii_end - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        if ascii_end == utf16 as usize || ascii_end == text.len() {
            return (
                u32::try_from(line).unwrap_or(u32::MAX),
                u32::try_from(col).unwrap_or(u32::MAX),
            );
        }
    }
    let (mut line, mut col, mut units) = (1u32, 1u32, 0u32);
    for c in text.chars() {
        if units >= utf16 {
            break;
        }
        units += c.len_utf16() as u32;
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The non-space tokens of `text` as (text, kind), line after line.
    fn toks(text: &str) -> Vec<(String, Tok)> {
        let text = normalize_newlines(text).into_owned();
        text.split('\n')
            .zip(tokenize(&text))
            .flat_map(|(line, spans)| {
                spans
                    .into_iter()
                    .filter(|s| s.tok != Tok::Space)
                    .map(|s| (line[s.start..s.end].to_string(), s.tok))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn check(text: &str, expect: &[(&str, Tok)]) {
        let want: Vec<(String, Tok)> = expect.iter().map(|(s, t)| (s.to_string(), *t)).collect();
        assert_eq!(toks(text), want, "tokens of {text:?}");
    }

    /// Spans cover each line exactly, in order, non-empty, on character boundaries.
    fn assert_covers(text: &str) {
        let norm = normalize_newlines(text).into_owned();
        let lines: Vec<&str> = norm.split('\n').collect();
        let all = tokenize(text);
        assert_eq!(lines.len(), all.len());
        for (line, spans) in lines.iter().zip(&all) {
            let mut at = 0;
            for s in spans {
                assert_eq!(s.start, at, "contiguous on {line:?}: {spans:?}");
                assert!(s.end > s.start, "non-empty on {line:?}: {spans:?}");
                assert!(line.is_char_boundary(s.start) && line.is_char_boundary(s.end));
                at = s.end;
            }
            assert_eq!(at, line.len(), "covers {line:?}: {spans:?}");
        }
    }

    use Tok::*;

    #[test]
    fn a_controllers_source_block_is_coloured_as_javascript() {
        let text = "spec:\n  source: |\n    const n = 2; // two\n    if (x.if) return \"a\\\"b\";\n  resync: 30s";
        let all = tokenize(text);
        let line = |i: usize| -> Vec<(String, Tok)> {
            let l = text.split('\n').nth(i).unwrap();
            all[i]
                .iter()
                .map(|s| (l[s.start..s.end].to_string(), s.tok))
                .collect()
        };
        assert_eq!(
            line(2),
            vec![
                ("    ".into(), Space),
                ("const".into(), Keyword),
                (" n = ".into(), BlockText),
                ("2".into(), Number),
                ("; ".into(), BlockText),
                ("// two".into(), Comment),
            ]
        );
        assert_eq!(
            line(3),
            vec![
                ("    ".into(), Space),
                ("if".into(), Keyword),
                (" (x.if) ".into(), BlockText),
                ("return".into(), Keyword),
                (" ".into(), BlockText),
                ("\"a\\\"b\"".into(), Str),
                (";".into(), BlockText),
            ]
        );
        assert_eq!(
            line(4)[1],
            ("resync".into(), Key),
            "the block ends at the key"
        );
        let other = tokenize("script: |\n  const x = 1");
        assert!(
            other[1].iter().all(|s| s.tok != Keyword),
            "only a source block is code"
        );
    }

    #[test]
    fn keys_plain_values_and_colons_are_told_apart() {
        check(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web",
            &[
                ("apiVersion", Key),
                (":", Punct),
                ("apps/v1", Plain),
                ("kind", Key),
                (":", Punct),
                ("Deployment", Plain),
                ("metadata", Key),
                (":", Punct),
                ("name", Key),
                (":", Punct),
                ("web", Plain),
            ],
        );
        // A colon not followed by a space belongs to the value.
        check(
            "image: nginx:1.27\nurl: http://x/y",
            &[
                ("image", Key),
                (":", Punct),
                ("nginx:1.27", Plain),
                ("url", Key),
                (":", Punct),
                ("http://x/y", Plain),
            ],
        );
        check(
            "my key: two words",
            &[("my key", Key), (":", Punct), ("two words", Plain)],
        );
    }

    #[test]
    fn quoted_strings_keep_their_escapes_and_can_be_keys() {
        check(
            r#"a: "say \"hi\"\n""#,
            &[
                ("a", Key),
                (":", Punct),
                ("\"say ", Str),
                ("\\\"", Escape),
                ("hi", Str),
                ("\\\"\\n", Escape),
                ("\"", Str),
            ],
        );
        check(
            "b: 'it''s # not a comment'",
            &[
                ("b", Key),
                (":", Punct),
                ("'it", Str),
                ("''", Escape),
                ("s # not a comment'", Str),
            ],
        );
        check(
            r#""quoted key": "\u00e9\x41""#,
            &[
                ("\"quoted key\"", Key),
                (":", Punct),
                ("\"", Str),
                ("\\u00e9\\x41", Escape),
                ("\"", Str),
            ],
        );
        check("e: ''", &[("e", Key), (":", Punct), ("''", Str)]);
        check(
            "c: \"\\é\"",
            &[
                ("c", Key),
                (":", Punct),
                ("\"", Str),
                ("\\é", Escape),
                ("\"", Str),
            ],
        );
    }

    #[test]
    fn numbers_booleans_and_nulls_follow_the_core_schema() {
        for n in [
            "3", "-1", "+2", "1.5", "-1.5e3", ".5", "1e10", "0x1F", "0o17", ".inf", "-.Inf", ".NaN",
        ] {
            check(&format!("v: {n}"), &[("v", Key), (":", Punct), (n, Number)]);
        }
        for p in [
            "500m", "8Gi", "1.2.3", "0x", "-x", "e3", "1e", "1_000", "yes", "on",
        ] {
            check(&format!("v: {p}"), &[("v", Key), (":", Punct), (p, Plain)]);
        }
        for b in ["true", "False", "TRUE"] {
            check(&format!("v: {b}"), &[("v", Key), (":", Punct), (b, Bool)]);
        }
        for z in ["null", "Null", "~"] {
            check(&format!("v: {z}"), &[("v", Key), (":", Punct), (z, Null)]);
        }
    }

    #[test]
    fn comments_start_at_a_hash_after_whitespace_only() {
        check(
            "# whole line\nreplicas: 3 # trailing\ncolor: a#b",
            &[
                ("# whole line", Comment),
                ("replicas", Key),
                (":", Punct),
                ("3", Number),
                ("# trailing", Comment),
                ("color", Key),
                (":", Punct),
                ("a#b", Plain),
            ],
        );
        check(
            "s: \"# no\" # yes",
            &[
                ("s", Key),
                (":", Punct),
                ("\"# no\"", Str),
                ("# yes", Comment),
            ],
        );
    }

    #[test]
    fn document_markers_and_directives_are_marked() {
        check(
            "%YAML 1.2\n---\na: 1\n...\n--- # next\nb: 2",
            &[
                ("%YAML 1.2", Directive),
                ("---", DocMarker),
                ("a", Key),
                (":", Punct),
                ("1", Number),
                ("...", DocMarker),
                ("---", DocMarker),
                ("# next", Comment),
                ("b", Key),
                (":", Punct),
                ("2", Number),
            ],
        );
        // Not markers: more dashes, or text straight after.
        check("----", &[("----", Plain)]);
        check("---x", &[("---x", Plain)]);
    }

    #[test]
    fn anchors_aliases_and_tags_are_marked() {
        check(
            "base: &b {cpu: 1}\nuse: *b\nn: !!str 3\nv: !<tag:x.y> z\n<<: *b",
            &[
                ("base", Key),
                (":", Punct),
                ("&b", Anchor),
                ("{", Punct),
                ("cpu", Key),
                (":", Punct),
                ("1", Number),
                ("}", Punct),
                ("use", Key),
                (":", Punct),
                ("*b", Alias),
                ("n", Key),
                (":", Punct),
                ("!!str", Tag),
                ("3", Number),
                ("v", Key),
                (":", Punct),
                ("!<tag:x.y>", Tag),
                ("z", Plain),
                ("<<", Key),
                (":", Punct),
                ("*b", Alias),
            ],
        );
    }

    #[test]
    fn block_scalars_own_their_more_indented_lines() {
        check(
            "script: |\n  echo # not a comment\n\n    key: not a key\nnext: 1",
            &[
                ("script", Key),
                (":", Punct),
                ("|", BlockIndicator),
                ("echo # not a comment", BlockText),
                ("key: not a key", BlockText),
                ("next", Key),
                (":", Punct),
                ("1", Number),
            ],
        );
        // In a sequence entry, with a chomping indicator and a comment on the header.
        check(
            "args:\n- >- # folded\n  one\n  two\n- three",
            &[
                ("args", Key),
                (":", Punct),
                ("-", Dash),
                (">-", BlockIndicator),
                ("# folded", Comment),
                ("one", BlockText),
                ("two", BlockText),
                ("-", Dash),
                ("three", Plain),
            ],
        );
        // A key inside a sequence entry owns the scalar: content must be indented past the key.
        check(
            "- name: |\n    a\n  next: b",
            &[
                ("-", Dash),
                ("name", Key),
                (":", Punct),
                ("|", BlockIndicator),
                ("a", BlockText),
                ("next", Key),
                (":", Punct),
                ("b", Plain),
            ],
        );
        // An explicit indentation indicator; a top-level scalar after `---`, ended by `---`.
        check(
            "k: |2+\n    deep\n  x\nj: 1",
            &[
                ("k", Key),
                (":", Punct),
                ("|2+", BlockIndicator),
                ("deep", BlockText),
                ("x", BlockText),
                ("j", Key),
                (":", Punct),
                ("1", Number),
            ],
        );
        check(
            "--- |\nline: 1\n---\na: 1",
            &[
                ("---", DocMarker),
                ("|", BlockIndicator),
                ("line: 1", BlockText),
                ("---", DocMarker),
                ("a", Key),
                (":", Punct),
                ("1", Number),
            ],
        );
    }

    #[test]
    fn dashes_are_entries_only_when_followed_by_space() {
        check(
            "- a\n- - b\n-\n- -1",
            &[
                ("-", Dash),
                ("a", Plain),
                ("-", Dash),
                ("-", Dash),
                ("b", Plain),
                ("-", Dash),
                ("-", Dash),
                ("-1", Number),
            ],
        );
    }

    #[test]
    fn flow_collections_continue_across_lines() {
        check(
            "ports: [80,\n  \"x\", {a: b}]\nafter: 1",
            &[
                ("ports", Key),
                (":", Punct),
                ("[", Punct),
                ("80", Number),
                (",", Punct),
                ("\"x\"", Str),
                (",", Punct),
                ("{", Punct),
                ("a", Key),
                (":", Punct),
                ("b", Plain),
                ("}]", Punct),
                ("after", Key),
                (":", Punct),
                ("1", Number),
            ],
        );
        check(
            "{\"json\":1}",
            &[
                ("{", Punct),
                ("\"json\"", Key),
                (":", Punct),
                ("1", Number),
                ("}", Punct),
            ],
        );
    }

    #[test]
    fn quoted_strings_continue_across_lines_until_closed() {
        check(
            "a: \"one\n  two \\\" still\n  end\"\nb: 'x\ny'",
            &[
                ("a", Key),
                (":", Punct),
                ("\"one", Str),
                ("  two ", Str),
                ("\\\"", Escape),
                (" still", Str),
                ("  end\"", Str),
                ("b", Key),
                (":", Punct),
                ("'x", Str),
                ("y'", Str),
            ],
        );
        // A document marker ends a runaway string (YAML forbids one inside it).
        check(
            "a: \"open\n---\nb: 1",
            &[
                ("a", Key),
                (":", Punct),
                ("\"open", Str),
                ("---", DocMarker),
                ("b", Key),
                (":", Punct),
                ("1", Number),
            ],
        );
    }

    #[test]
    fn unicode_and_crlf_keep_lines_and_boundaries() {
        check(
            "名前: \"é\"\r\nwave: 👋 hi\r\n",
            &[
                ("名前", Key),
                (":", Punct),
                ("\"é\"", Str),
                ("wave", Key),
                (":", Punct),
                ("👋 hi", Plain),
            ],
        );
        assert_covers("名前: \"é\u{301}\\é\"\r\n\t- é: |\n   ü\n");
        assert_eq!(tokenize("a\r\nb\rc").len(), 3);
    }

    #[test]
    fn highlight_windows_match_a_whole_file_tokenize_across_checkpoints() {
        // Block scalars, flow and strings straddling checkpoint boundaries.
        let mut text = String::new();
        for i in 0..300 {
            match i % 7 {
                0 => text.push_str(&format!("k{i}: |\n")),
                1 => text.push_str("  body # text\n"),
                2 => text.push_str(&format!("f{i}: [1,\n")),
                3 => text.push_str("  2]\n"),
                4 => text.push_str(&format!("s{i}: \"open\n")),
                5 => text.push_str("  closed\"\n"),
                _ => text.push_str("- x: 1\n"),
            }
        }
        let whole = tokenize(&text);
        let hl = Highlight::new(&text);
        assert_eq!(hl.line_count(), whole.len());
        for (first, count) in [(0, 10), (60, 10), (63, 3), (64, 1), (127, 70), (295, 50)] {
            let got = hl.lines(first..first + count);
            let want_end = (first + count).min(whole.len());
            assert_eq!(got.len(), want_end - first);
            for l in got {
                assert_eq!(l.spans, whole[l.index], "line {}", l.index);
            }
        }
        assert!(hl.lines(400..410).is_empty());
        assert!(hl.lines(5..5).is_empty());
    }

    #[test]
    fn a_ten_thousand_line_paste_is_highlighted_in_windows() {
        let doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # c\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers: [{name: a, image: \"nginx:1.27\"}]\n      args:\n      - |\n        echo hi\n---\n";
        let text = doc.repeat(800);
        let hl = Highlight::new(&text);
        assert!(hl.line_count() > 10_000);
        let window = hl.lines(9_990..10_050);
        assert_eq!(window.len(), 60);
        let whole = tokenize(&text);
        for l in &window {
            assert_eq!(l.spans, whole[l.index]);
        }
        // The states kept are a small fraction of the lines, found only as far as asked.
        assert_eq!(hl.checkpoints.borrow().len(), 9_990 / CHECKPOINT + 1);
        let fresh = Highlight::new(&text);
        assert_eq!(fresh.lines(0..60).len(), 60);
        assert_eq!(fresh.checkpoints.borrow().len(), 1);
        // Typing on line 9,000 keeps every state before it.
        let mut edited = text.clone();
        let at = edited.match_indices('\n').nth(8_999).map_or(0, |(i, _)| i);
        edited.insert_str(at, " # typed");
        let after = hl.update(&edited);
        assert_eq!(after.checkpoints.borrow().len(), 8_999 / CHECKPOINT + 1);
        assert!(after.is_of(&edited) && !after.is_of(&text));
        let whole = tokenize(&edited);
        for l in after.lines(8_990..9_010) {
            assert_eq!(l.spans, whole[l.index]);
        }
    }

    #[test]
    fn every_builtin_scenario_colours_its_keys_and_leaves_no_key_in_a_value() {
        for (name, text) in crate::sim::examples::ALL {
            assert_covers(text);
            let norm = normalize_newlines(text);
            for (n, (line, spans)) in norm.split('\n').zip(tokenize(text)).enumerate() {
                let words: Vec<(&str, Tok)> = spans
                    .iter()
                    .map(|s| (&line[s.start..s.end], s.tok))
                    .collect();
                // A plain value holding ": " means a key was missed.
                let missed = words.iter().any(|(w, t)| *t == Plain && w.contains(": "));
                assert!(!missed, "{name}:{}: {words:?}", n + 1);
                let trimmed = line.trim_start().trim_start_matches("- ");
                let looks_like_key = trimmed.split_once(':').is_some_and(|(k, rest)| {
                    !k.is_empty()
                        && k.chars().all(|c| c.is_ascii_alphanumeric())
                        && (rest.is_empty() || rest.starts_with(' '))
                });
                let in_block = spans.iter().any(|s| s.tok == BlockText);
                if looks_like_key && !in_block && !trimmed.starts_with('#') {
                    assert!(
                        words.iter().any(|(_, t)| *t == Key),
                        "{name}:{}: {words:?}",
                        n + 1
                    );
                }
            }
        }
    }

    fn pin(col: u32, severity: Severity, id: usize) -> Pin {
        Pin { col, severity, id }
    }

    fn marked(line: &str, pins: &[Pin]) -> Vec<(String, Severity, Vec<usize>)> {
        let (spans, _) = tokenize_line(line, LineState::default());
        line_marks(line, &spans, pins)
            .into_iter()
            .map(|m| (line[m.start..m.end].to_string(), m.severity, m.ids))
            .collect()
    }

    #[test]
    fn a_mark_on_a_key_covers_the_key_and_its_value() {
        assert_eq!(
            marked("  replicas: three # why", &[pin(3, Severity::Error, 0)]),
            vec![("replicas: three".into(), Severity::Error, vec![0])]
        );
        // On a value: that value; mid-token: from the column; on whitespace: the next token.
        assert_eq!(
            marked("image: \"nginx:1.27\"", &[pin(8, Severity::Warning, 1)]),
            vec![("\"nginx:1.27\"".into(), Severity::Warning, vec![1])]
        );
        assert_eq!(
            marked("name: abcdef", &[pin(9, Severity::Info, 2)]),
            vec![("cdef".into(), Severity::Info, vec![2])]
        );
        assert_eq!(
            marked("name:    x", &[pin(7, Severity::Error, 3)]),
            vec![("x".into(), Severity::Error, vec![3])]
        );
    }

    #[test]
    fn a_mark_past_the_end_of_a_line_sits_at_its_end() {
        let (spans, _) = tokenize_line("key:", LineState::default());
        let marks = line_marks("key:", &spans, &[pin(9, Severity::Error, 0)]);
        assert_eq!(marks.len(), 1);
        assert!(marks[0].at_end());
        assert_eq!(marks[0].start, 4);
        let marks = line_marks("", &[], &[pin(1, Severity::Error, 0)]);
        assert!(marks[0].at_end());
        // Trailing whitespace is underlined as it is.
        assert_eq!(
            marked("a: 1   ", &[pin(6, Severity::Error, 0)]),
            vec![("  ".into(), Severity::Error, vec![0])]
        );
    }

    #[test]
    fn overlapping_marks_merge_and_keep_the_worst_severity() {
        assert_eq!(
            marked(
                "replicas: three",
                &[pin(11, Severity::Info, 0), pin(1, Severity::Error, 1)]
            ),
            vec![("replicas: three".into(), Severity::Error, vec![1, 0])]
        );
        let two = marked(
            "a: x, b: y",
            &[pin(1, Severity::Warning, 0), pin(1, Severity::Warning, 1)],
        );
        assert_eq!(two.len(), 1);
        assert_eq!(two[0].2, vec![0, 1]);
    }

    #[test]
    fn segments_cut_tokens_at_mark_edges() {
        let line = "name: abcdef";
        let (spans, _) = tokenize_line(line, LineState::default());
        let marks = line_marks(line, &spans, &[pin(9, Severity::Error, 0)]);
        let segs = segments(&spans, &marks);
        let parts: Vec<(&str, Tok, Option<usize>)> = segs
            .iter()
            .map(|s| (&line[s.start..s.end], s.tok, s.mark))
            .collect();
        assert_eq!(
            parts,
            vec![
                ("name", Key, None),
                (":", Punct, None),
                (" ", Space, None),
                ("ab", Plain, None),
                ("cdef", Plain, Some(0)),
            ]
        );
    }

    #[test]
    fn diagnostics_follow_their_lines_through_edits_elsewhere() {
        let old = "a: 1\nb: 2\nc: 3\nd: 4";
        assert_eq!(LineMap::between(old, old), LineMap::identity(4));
        // Two lines inserted at the top: everything moves down two.
        let m = LineMap::between(old, "# x\n# y\na: 1\nb: 2\nc: 3\nd: 4");
        assert_eq!((m.map(1), m.map(4)), (Some(3), Some(6)));
        // Line 2 edited: it has no place; the others keep theirs.
        let m = LineMap::between(old, "a: 1\nb: 22\nc: 3\nd: 4");
        assert_eq!((m.map(1), m.map(2), m.map(3)), (Some(1), None, Some(3)));
        // Line 3 removed: line 4 moves up; a line past the end has no place.
        let m = LineMap::between(old, "a: 1\nb: 2\nd: 4");
        assert_eq!(
            (m.map(2), m.map(3), m.map(4), m.map(9)),
            (Some(2), None, Some(3), None)
        );
        assert_eq!(LineMap::identity(2).map(3), None);
    }

    #[test]
    fn the_caret_offset_counts_utf16_units_like_the_dom() {
        assert_eq!(line_col_at("ab\ncd", 0), (1, 1));
        assert_eq!(line_col_at("ab\ncd", 2), (1, 3));
        assert_eq!(line_col_at("ab\ncd", 3), (2, 1));
        assert_eq!(line_col_at("ab\ncd", 99), (2, 3));
        assert_eq!(line_col_at("", 5), (1, 1));
        assert_eq!(line_col_at("ab\n", 3), (2, 1));
        // 👋 is two UTF-16 units and one character.
        assert_eq!(line_col_at("👋x\ny", 3), (1, 3));
        let text = "a: 1\n名前: 👋 x";
        let off = crate::viewmodel::format::utf16_offset(text, 2, 6);
        assert_eq!(line_col_at(text, off), (2, 6));
    }

    /// Strings over YAML's special characters, so the odd paths are hit far more often than by
    /// arbitrary Unicode.
    fn yamlish() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop::sample::select(vec![
                " ",
                "  ",
                "\t",
                "\n",
                "\r",
                "\r\n",
                ":",
                ": ",
                "- ",
                "-",
                "#",
                " #",
                "\"",
                "'",
                "''",
                "\\",
                "\\u12",
                "|",
                ">",
                "|2-",
                "[",
                "]",
                "{",
                "}",
                ",",
                "&a",
                "*a",
                "!",
                "!<",
                ">",
                "?",
                "%",
                "---",
                "...",
                "a",
                "key",
                "1",
                "0x",
                "é",
                "👋",
                "\u{0}",
                "source: |\n  ",
                "`",
                "/*",
                "*/",
                "//",
                "const",
                "x.if",
                "0.5",
            ]),
            0..60,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn tokens_cover_any_text_exactly(text in any::<String>()) {
            assert_covers(&text);
        }

        #[test]
        fn tokens_cover_any_yamlish_text_exactly_and_windows_agree(text in yamlish(), first in 0usize..80, count in 0usize..80) {
            assert_covers(&text);
            let whole = tokenize(&text);
            let hl = Highlight::new(&text);
            prop_assert_eq!(hl.line_count(), whole.len());
            for l in hl.lines(first..first + count) {
                prop_assert_eq!(&l.spans, &whole[l.index]);
            }
        }

        #[test]
        fn an_updated_highlight_equals_a_fresh_one(a in yamlish(), b in yamlish(), seen in 0usize..80) {
            let old = Highlight::new(&a);
            let _ = old.lines(seen..seen + 1);
            let updated = old.update(&b);
            let fresh = Highlight::new(&b);
            prop_assert_eq!(updated.line_count(), fresh.line_count());
            prop_assert_eq!(updated.lines(0..200), fresh.lines(0..200));
        }

        #[test]
        fn the_caret_line_and_column_round_trip_with_utf16_offsets(text in yamlish(), line in 1u32..12, col in 1u32..30) {
            let text = normalize_newlines(&text).into_owned();
            let line = line.min(text.split('\n').count() as u32);
            let off = crate::viewmodel::format::utf16_offset(&text, line, col);
            let (l, c) = line_col_at(&text, off);
            // Past the end of a line, the caret stops at its end.
            prop_assert_eq!(l, line);
            prop_assert_eq!(crate::viewmodel::format::utf16_offset(&text, l, c), off);
        }

        #[test]
        fn the_quick_state_pass_agrees_with_the_full_scan(line in yamlish()) {
            let line = line.replace(['\n', '\r'], " ");
            let states = [
                LineState::default(),
                LineState::Normal { flow_depth: 2 },
                LineState::DoubleQuoted { flow_depth: 0 },
                LineState::SingleQuoted { flow_depth: 1 },
                LineState::BlockScalar { parent_indent: 0, content_indent: None, code: false },
                LineState::BlockScalar { parent_indent: -1, content_indent: Some(2), code: false },
                LineState::BlockScalar { parent_indent: 2, content_indent: Some(4), code: true },
            ];
            for state in states {
                prop_assert_eq!(next_state(&line, state), tokenize_line(&line, state).1);
            }
        }

        #[test]
        fn marks_stay_inside_their_line_on_char_boundaries(text in yamlish(), col in 0u32..90, col2 in 0u32..90) {
            for line in tokenize(&text).iter().zip(normalize_newlines(&text).split('\n')) {
                let (spans, line) = line;
                let marks = line_marks(line, spans, &[pin(col, Severity::Error, 0), pin(col2, Severity::Info, 1)]);
                let mut last_end = 0;
                for m in &marks {
                    prop_assert!(m.start <= m.end && m.end <= line.len());
                    prop_assert!(line.is_char_boundary(m.start) && line.is_char_boundary(m.end));
                    prop_assert!(m.start >= last_end || m.at_end());
                    last_end = m.end;
                }
                let segs = segments(spans, &marks);
                let mut at = 0;
                for s in &segs {
                    prop_assert_eq!(s.start, at);
                    prop_assert!(line.is_char_boundary(s.end));
                    at = s.end;
                }
                prop_assert_eq!(at, line.len());
            }
        }
    }
}
