//! Text the simulation builds for every object and Event (uids, Event names, trace names), made
//! without `core::fmt`.
//!
//! A `format!` walks its arguments through dynamic dispatch and padding code and grows its
//! string as it goes: about a tenth of a converging cluster's instructions were formatting,
//! a third of that the strings' reallocations (issue #33's callgrind profile). These build the
//! same text into one allocation of the right size.

/// Appends `v` in lower-case hexadecimal, zero-padded to `width` digits: what `{v:0width$x}`
/// writes (more digits than `width` when `v` needs them).
pub fn push_hex(out: &mut String, v: u64, width: usize) {
    let digits = (16 - v.leading_zeros() as usize / 4).max(1);
    out.extend(std::iter::repeat_n('0', width.saturating_sub(digits)));
    let mut buf = [0u8; 16];
    out.push_str(hex_into(&mut buf[..digits], v));
}

/// Fills `out` with the last `out.len()` (at most 16) lower-case hexadecimal digits of `v`,
/// zero-padded: a uid's or an Event name's fixed-width fields, written without a loop that
/// depends on the value or a string that grows.
pub fn hex_into(out: &mut [u8], v: u64) -> &str {
    hex_digits(out, v);
    std::str::from_utf8(out).expect("ASCII hexadecimal digits")
}

/// [`hex_into`] without reading the digits back as text: for a caller that fills several
/// fields of one buffer and validates it once (a uid's five).
pub fn hex_digits(out: &mut [u8], v: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in out.iter_mut().rev().enumerate() {
        *b = DIGITS[((v >> (4 * i)) & 0xf) as usize];
    }
}

/// `n` in decimal, as `{n}` writes it, in `buf`.
pub fn decimal_into(buf: &mut [u8; 20], n: u64) -> &str {
    let mut at = buf.len();
    let mut rest = n;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[at..]).expect("ASCII digits")
}

/// Appends `s` as `{s:?}` writes it: in double quotes, escaped as `Debug` escapes. Most names
/// (images, containers) need no escape and are copied as they are.
pub fn push_quoted(out: &mut String, s: &str) {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&format!("{s:?}"));
    }
}

/// The parts one after another, in one allocation of their total length.
pub fn concat(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.push_str(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_read_as_format_writes_them() {
        for n in [0, 7, 10, 99, 1_000, 4_294_967_296, u64::MAX] {
            assert_eq!(decimal_into(&mut [0; 20], n), n.to_string());
        }
    }

    proptest::proptest! {
        #[test]
        fn hexadecimal_digits_are_what_format_writes(v in proptest::prelude::any::<u64>(), width in 0usize..20) {
            let mut out = String::from("x");
            push_hex(&mut out, v, width);
            proptest::prop_assert_eq!(out, format!("x{v:0width$x}"));
        }
    }

    proptest::proptest! {
        #[test]
        fn quoting_is_what_debug_writes(s in "\\PC{0,12}|[ -~]{0,12}|(?s).{0,8}") {
            let mut out = String::new();
            push_quoted(&mut out, &s);
            proptest::prop_assert_eq!(out, format!("{s:?}"));
        }
    }

    proptest::proptest! {
        #[test]
        fn fixed_width_hexadecimal_is_the_last_digits_of_what_format_writes(v in proptest::prelude::any::<u64>(), width in 1usize..=16) {
            let mut buf = [0u8; 16];
            let full = format!("{v:016x}");
            proptest::prop_assert_eq!(hex_into(&mut buf[..width], v), &full[16 - width..]);
        }
    }

    #[test]
    fn zero_in_hexadecimal_is_one_digit_or_the_padding() {
        for width in 0..4 {
            let mut out = String::new();
            push_hex(&mut out, 0, width);
            assert_eq!(out, format!("{:0width$x}", 0));
        }
    }

    #[test]
    fn parts_are_joined_in_order_into_an_exact_allocation() {
        let text = concat(&["Pod", "/", "default", "/", "web-1"]);
        assert_eq!(text, "Pod/default/web-1");
        assert_eq!(text.capacity(), text.len());
    }
}
