//! kubectl's JSONPath templates (`get -o jsonpath=`, `-o custom-columns=`, `wait --for=jsonpath=`),
//! parsed and evaluated over an object's JSON the way client-go's `util/jsonpath` does.
//!
//! The grammar is client-go's, quirks included: text outside `{…}` is printed as written (so
//! `\n` there stays two characters and a newline is `{"\n"}`); `['a.b']` is the path `.a.b`
//! and a key holding dots is written with escapes (`.metadata.labels.kubernetes\.io/hostname`);
//! an index past the end is an error even where missing keys are not; a filter skips items
//! missing its key. Missing keys print nothing by default (`--allow-missing-template-keys`).

use serde_json::Value as Json;

/// A parsed template.
#[derive(Clone, Debug)]
pub struct Template {
    raw: String,
    items: Vec<Item>,
}

/// A template's top-level pieces, with `{range …}` … `{end}` nested.
#[derive(Clone, Debug)]
enum Item {
    /// Kept as a JSON string: it is one of the values the template selects.
    Text(Json),
    Path(Vec<Step>),
    Range(Vec<Step>, Vec<Item>),
    /// An `{end}` with no `{range}` open: client-go fails when it reaches one.
    StrayEnd,
}

/// One step of a path, applied to every value the previous steps selected.
#[derive(Clone, Debug)]
enum Step {
    Field(String),
    /// `.*`: every member of an object or element of an array.
    Wildcard,
    /// `[n]`, `[a:b]`, `[*]` (`[:]`): the end of `[n]` is derived (`n+1`).
    Slice {
        start: Option<i64>,
        end: Option<i64>,
        derived: bool,
    },
    Union(Vec<Vec<Step>>),
    /// `..`: the value and everything under it.
    Recursive,
    Filter(Box<Filter>),
    Literal(Json),
}

#[derive(Clone, Debug)]
struct Filter {
    left: Vec<Step>,
    /// `None` tests that `left` exists (`[?(@.ready)]`).
    op: Option<String>,
    right: Vec<Step>,
}

/// How a template is executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// `--allow-missing-template-keys` (kubectl's default: true): a missing key selects nothing
    /// instead of failing.
    pub allow_missing_keys: bool,
    /// `-o jsonpath-as-json`: each action's results as an indented JSON array.
    pub as_json: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            allow_missing_keys: true,
            as_json: false,
        }
    }
}

/// Values selected so far: borrowed from the document or, for literals, from the template.
type Found<'a> = Vec<&'a Json>;

/// The most values one execution may select, summed over its steps. client-go has no cap, and
/// `{..*..*..*}` multiplies a big list's values at every step: past this the command fails
/// instead of freezing the page.
pub const MAX_SELECTED: usize = 2_000_000;

/// One execution: its options and what is left of [`MAX_SELECTED`].
struct Cx {
    opts: Options,
    left: std::cell::Cell<usize>,
}

impl Cx {
    fn new(opts: Options) -> Cx {
        Cx {
            opts,
            left: std::cell::Cell::new(MAX_SELECTED),
        }
    }

    fn spend(&self, n: usize) -> Result<(), String> {
        match self.left.get().checked_sub(n) {
            Some(rest) => {
                self.left.set(rest);
                Ok(())
            }
            None => Err(format!(
                "the template selects more than {MAX_SELECTED} values, more than the playground evaluates"
            )),
        }
    }
}

impl Template {
    /// Parses a template; the error is client-go's parser message ("unclosed action").
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            pos: 0,
            depth: 0,
        };
        let mut stack: Vec<(Vec<Step>, Vec<Item>)> = Vec::new();
        let mut items: Vec<Item> = Vec::new();
        loop {
            let start = p.pos;
            while p.pos < p.s.len() && p.s[p.pos] != b'{' {
                p.pos += 1;
            }
            if p.pos > start {
                items.push(Item::Text(Json::String(text[start..p.pos].to_string())));
            }
            if p.pos >= p.s.len() {
                break;
            }
            p.pos += 1;
            let action = p.action()?;
            match action.first() {
                Some(Tok::Ident(w)) if w == "range" => {
                    let steps = to_steps(action.into_iter().skip(1).collect())?;
                    if stack.len() >= MAX_NESTING {
                        return Err(too_deep());
                    }
                    stack.push((steps, std::mem::take(&mut items)));
                }
                Some(Tok::Ident(w)) if w == "end" => match stack.pop() {
                    Some((steps, outer)) => {
                        let body = std::mem::replace(&mut items, outer);
                        items.push(Item::Range(steps, body));
                    }
                    None => items.push(Item::StrayEnd),
                },
                _ => items.push(Item::Path(to_steps(action)?)),
            }
        }
        // A range left open runs to the end of the template.
        while let Some((steps, outer)) = stack.pop() {
            let body = std::mem::replace(&mut items, outer);
            items.push(Item::Range(steps, body));
        }
        Ok(Template {
            raw: text.to_string(),
            items,
        })
    }

    /// Prints the template against `doc`; the error is the evaluator's ("x is not found").
    pub fn execute(&self, doc: &Json, opts: Options) -> Result<String, String> {
        let mut out = String::new();
        run(&self.items, doc, opts, &mut out)?;
        Ok(out)
    }

    /// Every value the template selects, in order (text pieces included, as client-go's
    /// `FindResults` returns them): what `wait --for=jsonpath` and custom columns compare.
    pub fn values(&self, doc: &Json, opts: Options) -> Result<Vec<Json>, String> {
        let mut lists = Vec::new();
        find(&self.items, doc, &Cx::new(opts), &mut lists)?;
        Ok(lists.into_iter().flatten().cloned().collect())
    }
}

/// kubectl's message for an execution error (the object is shown as JSON, not Go syntax).
pub fn execution_error(t: &Template, err: &str, doc: &Json) -> String {
    format!(
        "error executing jsonpath {:?}: Error executing template: {err}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{}\n\tobject given to jsonpath engine was:\n\t\t{doc}\n\n",
        t.raw, t.raw
    )
}

fn find<'a>(
    items: &'a [Item],
    root: &'a Json,
    cx: &Cx,
    lists: &mut Vec<Found<'a>>,
) -> Result<(), String> {
    for item in items {
        match item {
            Item::Text(t) => lists.push(vec![t]),
            Item::Path(steps) => lists.push(select(vec![root], steps, cx)?),
            Item::Range(steps, body) => {
                for v in select(vec![root], steps, cx)? {
                    find(body, v, cx, lists)?;
                }
            }
            Item::StrayEnd => return Err("not in range, nothing to end".into()),
        }
    }
    Ok(())
}

fn run(items: &[Item], root: &Json, opts: Options, out: &mut String) -> Result<(), String> {
    let mut lists = Vec::new();
    find(items, root, &Cx::new(opts), &mut lists)?;
    for list in lists {
        if opts.as_json {
            out.push_str(&indented_json(&list));
            out.push('\n');
            continue;
        }
        for (i, v) in list.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&print_value(v));
        }
    }
    Ok(())
}

/// A selected value as the jsonpath printer writes it: strings bare, objects and arrays as
/// compact JSON (Go's encoder, which escapes `<`, `>` and `&`).
pub fn print_value(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "<nil>".into(),
        Json::Object(_) | Json::Array(_) => go_json(&v.to_string()),
        other => other.to_string(),
    }
}

/// A value as Go's `%v` prints it (custom columns): `map[k:v]`, `[a b]`.
pub fn go_value(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "<nil>".into(),
        Json::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_value(v)))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
        Json::Array(a) => {
            let parts: Vec<String> = a.iter().map(go_value).collect();
            format!("[{}]", parts.join(" "))
        }
        other => other.to_string(),
    }
}

fn go_json(s: &str) -> String {
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn indented_json(values: &[&Json]) -> String {
    let array = Json::Array(values.iter().map(|v| (*v).clone()).collect());
    go_json(to_json_text(&array).trim_end())
}

/// Go's reflect type names, for "… is not array or slice".
fn go_type(v: &Json) -> &'static str {
    match v {
        Json::Object(_) => "map[string]interface {}",
        Json::Array(_) => "[]interface {}",
        Json::String(_) => "string",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_f64() => "float64",
        Json::Number(_) => "int64",
        Json::Null => "interface {}",
    }
}

/// The members of an object or the elements of an array.
fn children(v: &Json) -> Found<'_> {
    match v {
        Json::Object(m) => m.values().collect(),
        Json::Array(a) => a.iter().collect(),
        _ => Vec::new(),
    }
}

fn select<'a>(input: Found<'a>, steps: &'a [Step], cx: &Cx) -> Result<Found<'a>, String> {
    let mut cur = input;
    for step in steps {
        cur = select_step(cur, step, cx)?;
        cx.spend(cur.len())?;
    }
    Ok(cur)
}

fn select_step<'a>(input: Found<'a>, step: &'a Step, cx: &Cx) -> Result<Found<'a>, String> {
    let mut out: Found<'a> = Vec::new();
    match step {
        Step::Field(name) => {
            if input.is_empty() {
                return Ok(out);
            }
            out.extend(input.iter().filter_map(|v| v.get(name.as_str())));
            if out.is_empty() && !cx.opts.allow_missing_keys {
                return Err(format!("{name} is not found"));
            }
        }
        Step::Wildcard => {
            for v in &input {
                out.extend(children(v));
                if out.len() > cx.left.get() {
                    cx.spend(out.len())?;
                }
            }
        }
        Step::Slice {
            start,
            end,
            derived,
        } => {
            for v in &input {
                if v.is_null() {
                    continue;
                }
                let Some(len) = v.as_array().map(|a| a.len() as i64) else {
                    return Err(format!("{} is not array or slice", go_type(v)));
                };
                let mut s = start.unwrap_or(0);
                if s < 0 {
                    s += len;
                }
                let mut e = end.unwrap_or(len);
                if e < 0 || (e == 0 && *derived) {
                    e += len;
                }
                if e != s {
                    if s >= len || s < 0 {
                        return Err(format!(
                            "array index out of bounds: index {s}, length {len}"
                        ));
                    }
                    if e > len {
                        return Err(format!(
                            "array index out of bounds: index {}, length {len}",
                            e - 1
                        ));
                    }
                }
                if e > s {
                    let elems = children(v);
                    out.extend(elems.into_iter().skip(s as usize).take((e - s) as usize));
                }
            }
        }
        Step::Union(branches) => {
            for b in branches {
                out.extend(select(input.clone(), b, cx)?);
            }
        }
        Step::Recursive => {
            let mut stack: Found<'a> = input.into_iter().rev().collect();
            while let Some(v) = stack.pop() {
                let kids = children(v);
                if !kids.is_empty() {
                    out.push(v);
                    stack.extend(kids.into_iter().rev());
                    if out.len() > cx.left.get() {
                        cx.spend(out.len())?;
                    }
                }
            }
        }
        Step::Filter(f) => {
            for v in &input {
                if v.is_null() {
                    continue;
                }
                if !v.is_array() {
                    return Err(format!(
                        "{} is not array or slice and cannot be filtered",
                        go_value(v)
                    ));
                }
                for item in children(v) {
                    let lefts = select(vec![item], &f.left, cx);
                    let Some(op) = &f.op else {
                        if lefts.is_ok_and(|l| !l.is_empty()) {
                            out.push(item);
                        }
                        continue;
                    };
                    let lefts = lefts?;
                    let rights = select(vec![item], &f.right, cx)?;
                    if lefts.is_empty() || rights.is_empty() {
                        continue;
                    }
                    if lefts.len() > 1 || rights.len() > 1 {
                        return Err("can only compare one element at a time".into());
                    }
                    if compare(lefts[0], op, rights[0])? {
                        out.push(item);
                    }
                }
            }
        }
        Step::Literal(l) => out.extend(input.iter().map(|_| l)),
    }
    Ok(out)
}

/// Go template comparison (`eq`, `lt`, …): like kinds only, integers and floats apart.
fn compare(a: &Json, op: &str, b: &Json) -> Result<bool, String> {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (a, b) {
        (Json::String(x), Json::String(y)) => Some(x.cmp(y)),
        (Json::Bool(x), Json::Bool(y)) => {
            return match op {
                "==" => Ok(x == y),
                "!=" => Ok(x != y),
                "<" | ">" | "<=" | ">=" => Err("invalid type for comparison".into()),
                other => Err(format!("unrecognized filter operator {other}")),
            }
        }
        (Json::Number(x), Json::Number(y)) if x.is_f64() == y.is_f64() => {
            if x.is_f64() {
                x.as_f64()
                    .and_then(|x| y.as_f64().and_then(|y| x.partial_cmp(&y)))
            } else {
                x.as_i64().and_then(|x| y.as_i64().map(|y| x.cmp(&y)))
            }
        }
        _ => None,
    };
    let Some(ord) = ord else {
        return match op {
            "==" | "!=" | "<" | ">" | "<=" | ">=" => {
                Err("incompatible types for comparison".into())
            }
            other => Err(format!("unrecognized filter operator {other}")),
        };
    };
    match op {
        "==" => Ok(ord == Ordering::Equal),
        "!=" => Ok(ord != Ordering::Equal),
        "<" => Ok(ord == Ordering::Less),
        ">" => Ok(ord == Ordering::Greater),
        "<=" => Ok(ord != Ordering::Greater),
        ">=" => Ok(ord != Ordering::Less),
        other => Err(format!("unrecognized filter operator {other}")),
    }
}

// ------------------------------------------------------------------ parsing

/// What one action holds before `range`/`end` are told apart from paths.
#[derive(Clone, Debug)]
enum Tok {
    Ident(String),
    Step(Step),
}

fn to_steps(toks: Vec<Tok>) -> Result<Vec<Step>, String> {
    toks.into_iter()
        .map(|t| match t {
            Tok::Step(s) => Ok(s),
            Tok::Ident(w) => Err(format!("unrecognized identifier {w}")),
        })
        .collect()
}

struct Parser<'s> {
    s: &'s [u8],
    pos: usize,
    /// How deep in filters, unions and `['key']`s this text sits (see [`MAX_NESTING`]).
    depth: usize,
}

/// The deepest `{range}`s, filters and unions may nest: each level is parsed (and a range run)
/// by recursion, so a template made of thousands of them would overflow the page's stack.
pub const MAX_NESTING: usize = 32;

fn too_deep() -> String {
    format!("the template nests ranges, filters or unions more than {MAX_NESTING} deep")
}

fn is_terminator(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\r' | b'\n' | b'.' | b',' | b'[' | b']' | b'$' | b'@' | b'{' | b'}'
    )
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric()
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        std::str::from_utf8(&self.s[self.pos..]).unwrap_or("")
    }

    fn peek_char(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// The inside of one `{…}`, up to and past its `}`.
    fn action(&mut self) -> Result<Vec<Tok>, String> {
        let mut toks = Vec::new();
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                return Ok(toks);
            }
            if rest.starts_with("[?(") {
                self.pos += 3;
                toks.push(Tok::Step(Step::Filter(Box::new(self.filter()?))));
                continue;
            }
            if rest.starts_with("..") {
                if matches!(toks.last(), Some(Tok::Step(Step::Recursive))) {
                    return Err("invalid multiple recursive descent".into());
                }
                self.pos += 2;
                toks.push(Tok::Step(Step::Recursive));
                if self.peek_char().is_some_and(is_alnum) {
                    toks.push(Tok::Step(self.field()));
                }
                continue;
            }
            let Some(c) = self.peek_char() else {
                return Err("unclosed action".into());
            };
            match c {
                '\r' | '\n' => return Err("unclosed action".into()),
                ' ' | '@' | '$' => self.pos += 1,
                '[' => {
                    self.pos += 1;
                    toks.extend(self.array()?);
                }
                '"' | '\'' => {
                    self.pos += 1;
                    toks.push(Tok::Step(Step::Literal(Json::String(self.quoted(c)?))));
                }
                '.' => {
                    self.pos += 1;
                    toks.push(Tok::Step(self.field()));
                }
                '+' | '-' | '0'..='9' => toks.push(Tok::Step(self.number()?)),
                c if is_alnum(c) => {
                    let start = self.pos;
                    while self.pos < self.s.len() && !is_terminator(self.s[self.pos]) {
                        self.pos += 1;
                    }
                    let word = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                    toks.push(match word.as_str() {
                        "true" => Tok::Step(Step::Literal(Json::Bool(true))),
                        "false" => Tok::Step(Step::Literal(Json::Bool(false))),
                        _ => Tok::Ident(word),
                    });
                }
                other => {
                    return Err(format!(
                        "unrecognized character in action: U+{:04X} '{other}'",
                        other as u32
                    ))
                }
            }
        }
    }

    /// A field name up to the next unescaped terminator (escapes dropped); `*` is the wildcard.
    fn field(&mut self) -> Step {
        let start = self.pos;
        while self.pos < self.s.len() {
            let c = self.s[self.pos];
            if c == b'\\' {
                self.pos = (self.pos + 2).min(self.s.len());
            } else if is_terminator(c) {
                break;
            } else {
                self.pos += 1;
            }
        }
        let raw = String::from_utf8_lossy(&self.s[start..self.pos]).replace('\\', "");
        if raw == "*" {
            Step::Wildcard
        } else {
            Step::Field(raw)
        }
    }

    fn number(&mut self) -> Result<Step, String> {
        let start = self.pos;
        if matches!(self.s.get(self.pos), Some(b'+' | b'-')) {
            self.pos += 1;
        }
        while matches!(self.s.get(self.pos), Some(b'.' | b'0'..=b'9')) {
            self.pos += 1;
        }
        let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Step::Literal(Json::from(i)));
        }
        match text.parse::<f64>() {
            Ok(f) => Ok(Step::Literal(Json::from(f))),
            Err(_) => Err(format!("cannot parse number {text}")),
        }
    }

    /// A quoted literal after its opening quote, with Go's escapes.
    fn quoted(&mut self, q: char) -> Result<String, String> {
        let start = self.pos;
        loop {
            let Some(c) = self.peek_char() else {
                return Err("unterminated quoted string".into());
            };
            if c == '\n' {
                return Err("unterminated quoted string".into());
            }
            self.pos += c.len_utf8();
            if c == q && self.s[self.pos - 2] != b'\\' {
                break;
            }
        }
        let body = String::from_utf8_lossy(&self.s[start..self.pos - 1]).into_owned();
        unquote(&body, q).ok_or_else(|| format!("unquote string {q}{body}{q} error invalid syntax"))
    }

    /// `[…]` after its `[`: an index, a slice, `*`, a `'key'` or a union of those.
    fn array(&mut self) -> Result<Vec<Tok>, String> {
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos] != b']' {
            if self.s[self.pos] == b'\n' {
                return Err("unterminated array".into());
            }
            self.pos += 1;
        }
        if self.pos >= self.s.len() {
            return Err("unterminated array".into());
        }
        let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        self.pos += 1;
        array_contents(&text, self.depth + 1)
    }

    /// `[?(…)]` after its `[?(`.
    fn filter(&mut self) -> Result<Filter, String> {
        let start = self.pos;
        let (mut begin, mut end, mut pair) = (false, false, b'"');
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Err("unterminated filter".into());
            };
            self.pos += 1;
            match c {
                b'\n' => return Err("unterminated filter".into()),
                b'"' | b'\'' if !begin => {
                    begin = true;
                    pair = c;
                }
                b'"' | b'\'' if c == pair && self.s[self.pos - 2] != b'\\' => end = true,
                b')' if begin == end => break,
                _ => {}
            }
        }
        if self.s.get(self.pos) != Some(&b']') {
            return Err("unclosed array expect ]".into());
        }
        self.pos += 1;
        let text = String::from_utf8_lossy(&self.s[start..self.pos - 2]).into_owned();
        let op_start = text.find(['!', '<', '>', '=']);
        let split = op_start.filter(|&i| i > 0).and_then(|i| {
            let op_len = text[i..]
                .find(|c| !matches!(c, '!' | '<' | '>' | '='))
                .unwrap_or(text.len() - i);
            (i + op_len < text.len())
                .then(|| (&text[..i], &text[i..i + op_len], &text[i + op_len..]))
        });
        match split {
            None => Ok(Filter {
                left: sub_action(&text, self.depth + 1)?,
                op: None,
                right: Vec::new(),
            }),
            Some((l, op, r)) => Ok(Filter {
                left: sub_action(l, self.depth + 1)?,
                op: Some(op.to_string()),
                right: sub_action(r, self.depth + 1)?,
            }),
        }
    }
}

/// Parses `text` as the inside of an action (filter sides, union members, `['key']`).
fn sub_action(text: &str, depth: usize) -> Result<Vec<Step>, String> {
    if depth > MAX_NESTING {
        return Err(too_deep());
    }
    let wrapped = format!("{text}}}");
    let mut p = Parser {
        s: wrapped.as_bytes(),
        pos: 0,
        depth,
    };
    let toks = p.action()?;
    if p.pos != wrapped.len() {
        return Err("unclosed action".into());
    }
    to_steps(toks)
}

fn array_contents(text: &str, depth: usize) -> Result<Vec<Tok>, String> {
    let text = if text == "*" { ":" } else { text };
    if text.contains(',') {
        let branches = text
            .split(',')
            .map(|part| sub_action(&format!("[{}]", part.trim()), depth))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(vec![Tok::Step(Step::Union(branches))]);
    }
    if text.len() >= 2
        && text.starts_with('\'')
        && text.ends_with('\'')
        && !text[1..text.len() - 1].contains('\'')
    {
        return Ok(
            sub_action(&format!(".{}", &text[1..text.len() - 1]), depth)?
                .into_iter()
                .map(Tok::Step)
                .collect(),
        );
    }
    let bad = || format!("invalid array index {text}");
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return Err(bad());
    }
    let num = |s: &str| -> Result<Option<i64>, String> {
        let digits = s.strip_prefix('-').unwrap_or(s);
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        if digits.is_empty() {
            return if s.is_empty() {
                Ok(None)
            } else {
                Err(format!("array index {s} is not a number"))
            };
        }
        s.parse()
            .map(Some)
            .map_err(|_| format!("array index {s} is not a number"))
    };
    let start = num(parts[0])?;
    // `[n]` is one element: its end is derived, and `[-1]`'s derived 0 means the length.
    let (end, derived) = match parts.get(1) {
        Some(e) => (num(e)?, false),
        None => (Some(start.unwrap_or(0) + 1), true),
    };
    if let Some(step) = parts.get(2) {
        num(step)?;
    }
    Ok(vec![Tok::Step(Step::Slice {
        start,
        end,
        derived,
    })])
}

/// Go's `strconv.Unquote`, for single quotes too.
fn unquote(body: &str, q: char) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == q {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            '\'' if q == '\'' => out.push('\''),
            '"' if q == '"' => out.push('"'),
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// kubectl's `RelaxedJSONPathExpression` (custom columns, `--sort-by`): `.a.b`, `a.b`, `{a.b}`
/// and `{.a.b}` all mean `{.a.b}`.
pub fn relaxed(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Ok(String::new());
    }
    let inner = match path.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
        Some(i) => i,
        None => path,
    };
    let inner = inner.strip_prefix('.').unwrap_or(inner);
    if inner.is_empty() || inner.contains(['{', '}']) {
        return Err("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'".into());
    }
    Ok(format!("{{.{inner}}}"))
}

/// One `-o custom-columns=` column.
#[derive(Clone, Debug)]
pub struct Column {
    pub header: String,
    template: Template,
}

/// Parses a `-o custom-columns=` spec (`NAME:.metadata.name,NODE:.spec.nodeName`).
pub fn custom_columns(spec: &str) -> Result<Vec<Column>, String> {
    if spec.is_empty() {
        return Err("custom-columns format specified but no custom columns given".into());
    }
    spec.split(',')
        .map(|part| {
            let Some((header, path)) = part.split_once(':') else {
                return Err(format!(
                    "unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
                ));
            };
            let template = Template::parse(&relaxed(path)?)?;
            Ok(Column {
                header: header.to_string(),
                template,
            })
        })
        .collect()
}

impl Column {
    /// The cell for one object: every selected value (`%v`), comma-separated, or `<none>`.
    pub fn cell(&self, doc: &Json) -> Result<String, String> {
        let values = self.template.values(doc, Options::default())?;
        if values.is_empty() {
            return Ok("<none>".into());
        }
        Ok(values.iter().map(go_value).collect::<Vec<_>>().join(","))
    }
}

/// The JSON kubectl prints for `-o json`: four-space indentation.
pub fn to_json_text(v: &Json) -> String {
    use serde::Serialize;
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    if v.serialize(&mut ser).is_err() {
        return String::new();
    }
    let mut s = String::from_utf8(buf).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_list() -> Json {
        json!({"kind": "List", "items": [
            {"metadata": {"name": "a", "labels": {"app": "web", "kubernetes.io/hostname": "n1"}},
             "spec": {"nodeName": "node-1", "containers": [{"name": "c1", "image": "nginx:1.27"}, {"name": "c2", "image": "busybox"}]},
             "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}], "restarts": 2}},
            {"metadata": {"name": "b", "labels": {"app": "db"}},
             "spec": {"containers": [{"name": "c1", "image": "postgres"}]},
             "status": {"conditions": [{"type": "Ready", "status": "False"}], "restarts": 0}}
        ]})
    }

    fn run(t: &str, doc: &Json) -> Result<String, String> {
        Template::parse(t)?.execute(doc, Options::default())
    }

    #[test]
    fn plain_paths_wildcards_and_indexes_select_like_kubectl() {
        let d = pod_list();
        assert_eq!(run("{.items[*].metadata.name}", &d).unwrap(), "a b");
        assert_eq!(run("{.items[1].metadata.name}", &d).unwrap(), "b");
        assert_eq!(run("{.items[-1].metadata.name}", &d).unwrap(), "b");
        assert_eq!(run("{.items[0:1].metadata.name}", &d).unwrap(), "a");
        assert_eq!(
            run("{.items[0].spec.containers[*].image}", &d).unwrap(),
            "nginx:1.27 busybox"
        );
        assert_eq!(run("{$.kind}", &d).unwrap(), "List");
        assert_eq!(
            run("{.items[0].metadata.labels}", &d).unwrap(),
            r#"{"app":"web","kubernetes.io/hostname":"n1"}"#
        );
    }

    #[test]
    fn missing_keys_print_nothing_unless_disallowed() {
        let d = pod_list();
        assert_eq!(run("{.items[1].spec.nodeName}", &d).unwrap(), "");
        let t = Template::parse("{.items[1].spec.nodeName}").unwrap();
        let strict = Options {
            allow_missing_keys: false,
            as_json: false,
        };
        assert_eq!(t.execute(&d, strict).unwrap_err(), "nodeName is not found");
    }

    #[test]
    fn an_index_past_the_end_is_an_error_even_when_keys_may_be_missing() {
        assert_eq!(
            run("{.items[5].metadata.name}", &pod_list()).unwrap_err(),
            "array index out of bounds: index 5, length 2"
        );
        assert_eq!(
            run("{.metadata[0]}", &json!({"metadata": {}})).unwrap_err(),
            "map[string]interface {} is not array or slice"
        );
    }

    #[test]
    fn range_blocks_repeat_their_body_for_each_value_with_literal_text() {
        let d = pod_list();
        assert_eq!(
            run(
                r#"{range .items[*]}{.metadata.name}{"\t"}{.spec.nodeName}{"\n"}{end}"#,
                &d
            )
            .unwrap(),
            "a\tnode-1\nb\t\n"
        );
        assert_eq!(
            run(
                r#"{range .items[*]}[{range .spec.containers[*]}{.name}={.image} {end}]{end}"#,
                &d
            )
            .unwrap(),
            "[c1=nginx:1.27 c2=busybox ][c1=postgres ]"
        );
        // Text outside an action is written as it stands.
        assert_eq!(run(r"{.kind}\n", &d).unwrap(), r"List\n");
        assert_eq!(
            run("{end}", &d).unwrap_err(),
            "not in range, nothing to end"
        );
    }

    #[test]
    fn filters_compare_like_go_templates_and_skip_items_without_the_key() {
        let d = pod_list();
        assert_eq!(
            run(
                r#"{.items[0].status.conditions[?(@.type=="Ready")].status}"#,
                &d
            )
            .unwrap(),
            "True"
        );
        assert_eq!(
            run(
                r#"{.items[?(@.status.conditions[0].status == 'False')].metadata.name}"#,
                &d
            )
            .unwrap(),
            "b"
        );
        assert_eq!(
            run("{.items[?(@.status.restarts > 1)].metadata.name}", &d).unwrap(),
            "a"
        );
        assert_eq!(
            run("{.items[?(@.spec.nodeName)].metadata.name}", &d).unwrap(),
            "a"
        );
        assert_eq!(
            run(
                r#"{.items[?(@.spec.nodeName=="node-1")].metadata.name}"#,
                &d
            )
            .unwrap(),
            "a"
        );
        assert_eq!(
            run(r#"{.items[?(@.status.restarts=="2")].metadata.name}"#, &d).unwrap_err(),
            "incompatible types for comparison"
        );
    }

    #[test]
    fn escaped_dots_recursive_descent_and_unions_select_what_they_name() {
        let d = pod_list();
        assert_eq!(
            run(r"{.items[0].metadata.labels.kubernetes\.io/hostname}", &d).unwrap(),
            "n1"
        );
        assert_eq!(run("{.items[0]['metadata.name']}", &d).unwrap(), "a");
        assert_eq!(run("{..image}", &d).unwrap(), "nginx:1.27 busybox postgres");
        assert_eq!(
            run("{.items[*]['metadata.name', 'spec.nodeName']}", &d).unwrap(),
            "a b node-1"
        );
        assert_eq!(run("{.items[0,1].metadata.name}", &d).unwrap(), "a b");
    }

    #[test]
    fn parse_errors_use_client_go_messages() {
        assert_eq!(Template::parse("{.items").unwrap_err(), "unclosed action");
        assert_eq!(
            Template::parse("{.items[0}").unwrap_err(),
            "unterminated array"
        );
        assert_eq!(
            Template::parse("{.items[x]}").unwrap_err(),
            "invalid array index x"
        );
        assert_eq!(
            Template::parse(r#"{"abc}"#).unwrap_err(),
            "unterminated quoted string"
        );
        assert_eq!(
            Template::parse("{#}").unwrap_err(),
            "unrecognized character in action: U+0023 '#'"
        );
        assert_eq!(
            Template::parse("{.a[?(@.b==1}").unwrap_err(),
            "unterminated filter"
        );
        assert_eq!(
            Template::parse("{foo}").unwrap_err(),
            "unrecognized identifier foo"
        );
    }

    #[test]
    fn a_template_that_multiplies_values_or_nests_too_deep_fails_instead_of_hanging() {
        let doc = json!({"a": (0..3000).collect::<Vec<i32>>()});
        let union = format!("{{.a[{}]}}", vec![":"; 700].join(","));
        assert!(run(&union, &doc)
            .unwrap_err()
            .starts_with("the template selects more than 2000000 values"));
        let deep = format!(
            "{}{{.a}}{}",
            "{range .a}".repeat(MAX_NESTING + 1),
            "{end}".repeat(MAX_NESTING + 1)
        );
        assert_eq!(Template::parse(&deep).unwrap_err(), too_deep());
        let fine = format!("{}{}", "{range .a[0:1]}".repeat(3), "{end}".repeat(3));
        assert!(Template::parse(&fine).is_ok());
    }

    #[test]
    fn jsonpath_as_json_prints_each_action_as_an_indented_array() {
        let t = Template::parse("{.items[*].metadata.name}").unwrap();
        let opts = Options {
            allow_missing_keys: true,
            as_json: true,
        };
        assert_eq!(
            t.execute(&pod_list(), opts).unwrap(),
            "[\n    \"a\",\n    \"b\"\n]\n"
        );
    }

    #[test]
    fn custom_columns_print_go_values_joined_by_commas_or_none() {
        let cols = custom_columns("NAME:.metadata.name,IMAGES:.spec.containers[*].image,NODE:spec.nodeName,LABELS:{.metadata.labels}").unwrap();
        let d = pod_list();
        let a = &d["items"][0];
        let b = &d["items"][1];
        let cells = |o: &Json| cols.iter().map(|c| c.cell(o).unwrap()).collect::<Vec<_>>();
        assert_eq!(
            cells(a),
            [
                "a",
                "nginx:1.27,busybox",
                "node-1",
                "map[app:web kubernetes.io/hostname:n1]"
            ]
        );
        assert_eq!(cells(b), ["b", "postgres", "<none>", "map[app:db]"]);
        assert_eq!(
            custom_columns("NAME").unwrap_err(),
            "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"
        );
        assert_eq!(
            custom_columns("").unwrap_err(),
            "custom-columns format specified but no custom columns given"
        );
    }
}
