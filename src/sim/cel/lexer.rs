//! CEL's lexis: source text to positioned tokens, refusing what the subset leaves out (bytes).

use super::{unsupported, Diagnostic};

/// A token's kind. Integer literals keep their magnitude unsigned so that the parser can fold
/// `-9223372036854775808`, whose magnitude does not fit an `i64`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Int(u64),
    Uint(u64),
    Double(f64),
    Str(String),
    Ident(String),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub offset: usize,
}

/// Longest first, so that `==` is never read as two `=`.
const PUNCTS: [&str; 24] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", ",",
    "(", ")", "[", "]", "{", "}",
];

/// Splits `src` into tokens ending with [`Tok::Eof`], or the first lexical error.
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token>, Diagnostic> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') {
            i += 1;
            continue;
        }
        if src[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            // A string prefix (r, b, rb, br in any case) directly before a quote.
            let mut j = i;
            while j < bytes.len() && j - i < 2 && matches!(bytes[j], b'r' | b'R' | b'b' | b'B') {
                j += 1;
            }
            if j > i && j < bytes.len() && matches!(bytes[j], b'"' | b'\'') {
                let prefix = src[i..j].to_ascii_lowercase();
                if prefix.contains('b') {
                    return Err(unsupported(src, start, "bytes literals are"));
                }
                if prefix == "r" {
                    let (s, end) = string(src, j, true)?;
                    out.push(Token {
                        tok: Tok::Str(s),
                        offset: start,
                    });
                    i = end;
                    continue;
                }
            }
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(src[start..i].to_string()),
                offset: start,
            });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, end) = number(src, i)?;
            out.push(Token { tok, offset: start });
            i = end;
            continue;
        }
        if c == b'"' || c == b'\'' {
            let (s, end) = string(src, i, false)?;
            out.push(Token {
                tok: Tok::Str(s),
                offset: start,
            });
            i = end;
            continue;
        }
        if src[i..].starts_with("?.")
            && bytes
                .get(i + 2)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            return Err(unsupported(src, start, "optional syntax '?.' is"));
        }
        match PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
            Some(p) => {
                out.push(Token {
                    tok: Tok::Punct(p),
                    offset: start,
                });
                i += p.len();
            }
            None => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(Diagnostic::at(
                    src,
                    start,
                    format!("unexpected character '{}'", ch.escape_default()),
                ));
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        offset: src.len(),
    });
    Ok(out)
}

fn number(src: &str, start: usize) -> Result<(Tok, usize), Diagnostic> {
    let bytes = src.as_bytes();
    let mut i = start;
    let digits = |i: &mut usize, hex: bool| {
        while *i < bytes.len()
            && (bytes[*i].is_ascii_digit() || (hex && bytes[*i].is_ascii_hexdigit()))
        {
            *i += 1;
        }
    };
    if src[i..].starts_with("0x") || src[i..].starts_with("0X") {
        i += 2;
        let from = i;
        digits(&mut i, true);
        let value = u64::from_str_radix(&src[from..i], 16)
            .map_err(|_| Diagnostic::at(src, start, "invalid int literal"))?;
        return Ok(int_suffix(src, value, i));
    }
    digits(&mut i, false);
    let mut float = false;
    if i < bytes.len() && bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        float = true;
        i += 1;
        digits(&mut i, false);
    }
    if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < bytes.len() && matches!(bytes[j], b'+' | b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            float = true;
            i = j;
            digits(&mut i, false);
        }
    }
    if float {
        let value: f64 = src[start..i]
            .parse()
            .map_err(|_| Diagnostic::at(src, start, "invalid double literal"))?;
        return Ok((Tok::Double(value), i));
    }
    let value: u64 = src[start..i]
        .parse()
        .map_err(|_| Diagnostic::at(src, start, "invalid int literal: out of range"))?;
    Ok(int_suffix(src, value, i))
}

fn int_suffix(src: &str, value: u64, i: usize) -> (Tok, usize) {
    match src.as_bytes().get(i) {
        Some(b'u' | b'U') => (Tok::Uint(value), i + 1),
        _ => (Tok::Int(value), i),
    }
}

/// Reads a quoted string starting at the quote `open`; returns its value and the offset after it.
fn string(src: &str, open: usize, raw: bool) -> Result<(String, usize), Diagnostic> {
    let quote = &src[open..open + 1];
    let triple = quote.repeat(3);
    let (delim, mut i) = if src[open..].starts_with(&triple) {
        (triple.as_str(), open + 3)
    } else {
        (quote, open + 1)
    };
    let mut out = String::new();
    loop {
        let Some(ch) = src[i..].chars().next() else {
            return Err(Diagnostic::at(src, open, "unterminated string literal"));
        };
        if src[i..].starts_with(delim) {
            return Ok((out, i + delim.len()));
        }
        if delim.len() == 1 && (ch == '\n' || ch == '\r') {
            return Err(Diagnostic::at(src, open, "unterminated string literal"));
        }
        if ch == '\\' && !raw {
            let (c, len) = escape(src, i)?;
            out.push(c);
            i += len;
            continue;
        }
        out.push(ch);
        i += ch.len_utf8();
    }
}

/// Decodes the escape sequence at `at` (a backslash); returns the character and its length.
fn escape(src: &str, at: usize) -> Result<(char, usize), Diagnostic> {
    let bad = || Diagnostic::at(src, at, "invalid escape sequence");
    let rest = &src[at + 1..];
    let c = rest.chars().next().ok_or_else(bad)?;
    let simple = match c {
        '\\' => Some('\\'),
        '?' => Some('?'),
        '"' => Some('"'),
        '\'' => Some('\''),
        '`' => Some('`'),
        'a' => Some('\x07'),
        'b' => Some('\x08'),
        'f' => Some('\x0c'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\x0b'),
        _ => None,
    };
    if let Some(s) = simple {
        return Ok((s, 2));
    }
    let (radix, len) = match c {
        'x' | 'X' => (16, 2),
        'u' => (16, 4),
        'U' => (16, 8),
        '0'..='3' => (8, 3),
        _ => return Err(bad()),
    };
    let skip = usize::from(radix == 16);
    let digits = rest.get(skip..skip + len).ok_or_else(bad)?;
    if !digits.chars().all(|d| d.is_digit(radix)) {
        return Err(bad());
    }
    let code = u32::from_str_radix(digits, radix).map_err(|_| bad())?;
    let ch = char::from_u32(code).ok_or_else(bad)?;
    Ok((ch, 1 + skip + len))
}
