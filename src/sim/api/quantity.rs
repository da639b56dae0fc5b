//! Kubernetes `resource.Quantity`: parsing `500m`, `1.5Gi`, `1e3` exactly, and printing them back.
//!
//! Quantities stay strings in the object types (as in the API) and are parsed where they are
//! used: by validation, the scheduler's fit checks and the kubelet's accounting. The value is
//! held exactly as an integer count of nano-units, which covers every suffix from `n` to `E`
//! without floating-point drift; finer values round up to `1n`, as Kubernetes rounds them.

use std::cmp::Ordering;
use std::fmt;

/// The message Kubernetes gives for text that is not a quantity at all.
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// The message Kubernetes gives when the number before the suffix does not parse.
pub const ERR_NUMERIC: &str = "unable to parse quantity's numeric part";
/// The message Kubernetes gives for an unknown suffix.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// How a quantity was written, which decides how it is printed back (as Kubernetes does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantityFormat {
    /// Powers of 1000: `m`, `k`, `M`, `G`, … (and plain numbers).
    DecimalSI,
    /// Powers of 1024: `Ki`, `Mi`, `Gi`, ….
    BinarySI,
    /// Scientific notation: `1e3`.
    DecimalExponent,
}

/// An exact resource quantity; compare and add these rather than floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Quantity {
    nanos: i128,
    format: QuantityFormat,
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    /// Orders by value only: `1Gi` and `1073741824` are equal in value and order.
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos
            .cmp(&other.nanos)
            .then_with(|| fmt_rank(self.format).cmp(&fmt_rank(other.format)))
    }
}

fn fmt_rank(f: QuantityFormat) -> u8 {
    match f {
        QuantityFormat::DecimalSI => 0,
        QuantityFormat::BinarySI => 1,
        QuantityFormat::DecimalExponent => 2,
    }
}

impl Quantity {
    /// A quantity of whole units (bytes, cores, pods) in decimal form.
    pub fn from_units(units: i64) -> Quantity {
        Quantity {
            nanos: i128::from(units) * NANOS_PER_UNIT,
            format: QuantityFormat::DecimalSI,
        }
    }

    /// A quantity of thousandths (CPU millicores), in decimal form.
    pub fn from_millis(millis: i64) -> Quantity {
        Quantity {
            nanos: i128::from(millis) * 1_000_000,
            format: QuantityFormat::DecimalSI,
        }
    }

    /// The exact value in nano-units.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// How it was written.
    pub fn format(&self) -> QuantityFormat {
        self.format
    }

    /// The value in thousandths, rounded up as `Quantity.MilliValue()` does (CPU uses this).
    pub fn to_millis(&self) -> i64 {
        saturate(div_ceil(self.nanos, 1_000_000))
    }

    /// The value in whole units, rounded up as `Quantity.Value()` does (memory bytes, pods).
    pub fn value(&self) -> i64 {
        saturate(div_ceil(self.nanos, NANOS_PER_UNIT))
    }

    /// Same as [`Quantity::value`]; reads better for memory.
    pub fn to_bytes(&self) -> i64 {
        self.value()
    }

    /// Whether the value is below zero (resources must not be).
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// Division rounding away from zero (Kubernetes rounds quantities up in magnitude).
fn div_ceil(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d != 0 {
        q + n.signum()
    } else {
        q
    }
}

impl fmt::Display for Quantity {
    /// The canonical form Kubernetes prints: `1536Mi` for `1.5Gi`, `500m` for `0.5`, `1k` for `1000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&canonical(self.nanos, self.format))
    }
}

/// How many quantities [`parse_quantity`] remembers, and the longest text it remembers.
const RECENT: usize = 8;
const RECENT_TEXT: usize = 15;

/// A quantity's text, up to [`RECENT_TEXT`] bytes, held inline.
type ShortText = ([u8; RECENT_TEXT], u8);

/// The quantities remembered, and the slot the next one takes.
type Recent = ([Option<(ShortText, Quantity)>; RECENT], usize);

thread_local! {
    /// The quantities parsed last, by their text, taken round-robin: a cluster's pods repeat a
    /// handful (`100m`, `128Mi`), and the scheduler, the kubelet's admission and its QoS class
    /// each read a pod's requests and limits anew, about 17 parses a pod converging a cluster
    /// (1.2% of it). A pure function's answers, so nothing observable depends on them.
    static RECENT_QUANTITIES: std::cell::RefCell<Recent> =
        const { std::cell::RefCell::new(([None; RECENT], 0)) };
}

fn short_text(s: &str) -> Option<ShortText> {
    let len = u8::try_from(s.len())
        .ok()
        .filter(|&n| usize::from(n) <= RECENT_TEXT)?;
    let mut text = [0u8; RECENT_TEXT];
    text[..s.len()].copy_from_slice(s.as_bytes());
    Some((text, len))
}

/// Parses a quantity the way `resource.ParseQuantity` does, with Kubernetes' error messages.
pub fn parse_quantity(s: &str) -> Result<Quantity, String> {
    let Some(text) = short_text(s) else {
        return parse(s);
    };
    let known = RECENT_QUANTITIES.with_borrow(|(recent, _)| {
        recent
            .iter()
            .flatten()
            .find(|(t, _)| *t == text)
            .map(|&(_, q)| q)
    });
    if let Some(q) = known {
        return Ok(q);
    }
    let q = parse(s)?;
    RECENT_QUANTITIES.with_borrow_mut(|(recent, next)| {
        recent[*next] = Some((text, q));
        *next = (*next + 1) % RECENT;
    });
    Ok(q)
}

fn parse(s: &str) -> Result<Quantity, String> {
    if s.is_empty() {
        return Err(ERR_FORMAT_WRONG.to_string());
    }
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b[0] {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let num_start = i;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    let number = &s[num_start..i];
    // The suffix: letters from the allowed set, then an optional signed integer.
    let suffix_start = i;
    while i < b.len() && b"eEinumkKMGTP".contains(&b[i]) {
        i += 1;
    }
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if number.is_empty() || i != b.len() {
        return Err(ERR_FORMAT_WRONG.to_string());
    }
    let suffix = &s[suffix_start..];

    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(ERR_NUMERIC.to_string());
    }
    // The scheduler and kubelet parse every request of every pod they look at, so the digits are
    // read in place rather than joined into a new string first.
    let mut significant = 0usize;
    let mut mantissa: i128 = 0;
    for d in int_part.bytes().chain(frac_part.bytes()) {
        if significant == 0 && d == b'0' {
            continue;
        }
        significant += 1;
        if significant > 30 {
            return Err(ERR_NUMERIC.to_string());
        }
        mantissa = mantissa * 10 + i128::from(d - b'0');
    }

    let (format, pow10, pow2) = match suffix {
        "" => (QuantityFormat::DecimalSI, 0, 0),
        "n" => (QuantityFormat::DecimalSI, -9, 0),
        "u" => (QuantityFormat::DecimalSI, -6, 0),
        "m" => (QuantityFormat::DecimalSI, -3, 0),
        "k" => (QuantityFormat::DecimalSI, 3, 0),
        "M" => (QuantityFormat::DecimalSI, 6, 0),
        "G" => (QuantityFormat::DecimalSI, 9, 0),
        "T" => (QuantityFormat::DecimalSI, 12, 0),
        "P" => (QuantityFormat::DecimalSI, 15, 0),
        "E" => (QuantityFormat::DecimalSI, 18, 0),
        "Ki" => (QuantityFormat::BinarySI, 0, 10),
        "Mi" => (QuantityFormat::BinarySI, 0, 20),
        "Gi" => (QuantityFormat::BinarySI, 0, 30),
        "Ti" => (QuantityFormat::BinarySI, 0, 40),
        "Pi" => (QuantityFormat::BinarySI, 0, 50),
        "Ei" => (QuantityFormat::BinarySI, 0, 60),
        other if other.len() > 1 && (other.starts_with('e') || other.starts_with('E')) => {
            let exp: i64 = other[1..].parse().map_err(|_| ERR_SUFFIX.to_string())?;
            (QuantityFormat::DecimalExponent, exp, 0)
        }
        _ => return Err(ERR_SUFFIX.to_string()),
    };

    // value = mantissa × 2^pow2 × 10^(pow10 − frac digits), in nanos: × 10^9.
    let too_large = || "quantity is too large".to_string();
    let scaled = mantissa.checked_mul(1i128 << pow2).ok_or_else(too_large)?;
    let exp10 = pow10
        .saturating_sub(frac_part.len() as i64)
        .saturating_add(9);
    let nanos = if mantissa == 0 {
        0
    } else if exp10 >= 0 {
        let factor = 10i128
            .checked_pow(u32::try_from(exp10).map_err(|_| too_large())?)
            .ok_or_else(too_large)?;
        scaled.checked_mul(factor).ok_or_else(too_large)?
    } else if -exp10 > 38 {
        1 // far below a nano-unit: rounds up to the smallest representable value
    } else {
        div_ceil(scaled, 10i128.pow((-exp10) as u32))
    };
    Ok(Quantity {
        nanos: if negative { -nanos } else { nanos },
        format,
    })
}

fn canonical(nanos: i128, format: QuantityFormat) -> String {
    if nanos == 0 {
        return "0".into();
    }
    if format == QuantityFormat::BinarySI && nanos % NANOS_PER_UNIT == 0 {
        let units = nanos / NANOS_PER_UNIT;
        if units.abs() >= 1024 {
            let mut v = units;
            let mut k = 0;
            while k < 6 && v % 1024 == 0 {
                v /= 1024;
                k += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k];
            return format!("{v}{suffix}");
        }
    }
    // Decimal: the largest power of 1000 (down to nano) that keeps the number whole.
    let mut exp = 27; // 10^27 nanos = 10^18 units = E
    loop {
        let div = 10i128.pow(exp as u32);
        if nanos % div == 0 || exp == 0 {
            let v = nanos / div;
            let unit_exp = exp - 9;
            let suffix = if format == QuantityFormat::DecimalExponent {
                if unit_exp == 0 {
                    String::new()
                } else {
                    format!("e{unit_exp}")
                }
            } else {
                match unit_exp {
                    -9 => "n",
                    -6 => "u",
                    -3 => "m",
                    0 => "",
                    3 => "k",
                    6 => "M",
                    9 => "G",
                    12 => "T",
                    15 => "P",
                    _ => "E",
                }
                .to_string()
            };
            return format!("{v}{suffix}");
        }
        exp -= 3;
    }
}

/// CPU in millicores as `kubectl describe` prints it: `500m`, `1`, `1500m`.
pub fn format_cpu_millis(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

/// Bytes in the largest binary suffix that keeps the number whole: `1536Mi`, `1Gi`, `1000`.
pub fn format_bytes(bytes: i64) -> String {
    canonical(i128::from(bytes) * NANOS_PER_UNIT, QuantityFormat::BinarySI)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_to_exact_values() {
        // (input, millis, value (rounded up), canonical)
        let cases: &[(&str, i64, i64, &str)] = &[
            ("500m", 500, 1, "500m"),
            ("0.5", 500, 1, "500m"),
            ("1", 1000, 1, "1"),
            ("1.5", 1500, 2, "1500m"),
            ("2", 2000, 2, "2"),
            ("100n", 1, 1, "100n"),
            ("1u", 1, 1, "1u"),
            ("1k", 1_000_000, 1000, "1k"),
            ("1000", 1_000_000, 1000, "1k"),
            ("128M", 128_000_000_000, 128_000_000, "128M"),
            ("1Ki", 1_024_000, 1024, "1Ki"),
            ("128Mi", 134_217_728_000, 134_217_728, "128Mi"),
            ("1.5Gi", 1_610_612_736_000, 1_610_612_736, "1536Mi"),
            ("0.5Gi", 536_870_912_000, 536_870_912, "512Mi"),
            ("1Ti", 1_099_511_627_776_000, 1_099_511_627_776, "1Ti"),
            ("1e3", 1_000_000, 1000, "1e3"),
            ("1E3", 1_000_000, 1000, "1e3"),
            ("1.5e3", 1_500_000, 1500, "1500"),
            ("1e-3", 1, 1, "1e-3"),
            ("+1", 1000, 1, "1"),
            ("-1", -1000, -1, "-1"),
            ("0", 0, 0, "0"),
            ("0.0001n", 1, 1, "1n"),
            (".5", 500, 1, "500m"),
            ("5.", 5000, 5, "5"),
            ("1E", i64::MAX, 1_000_000_000_000_000_000, "1E"), // millis saturate
        ];
        for &(input, millis, value, canon) in cases {
            let q = parse_quantity(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(q.to_millis(), millis, "millis of {input}");
            assert_eq!(q.value(), value, "value of {input}");
            assert_eq!(q.to_string(), canon, "canonical form of {input}");
        }
    }

    #[test]
    fn malformed_quantities_get_kubernetes_messages() {
        let cases = [
            ("", ERR_FORMAT_WRONG),
            ("abc", ERR_FORMAT_WRONG),
            ("1 Gi", ERR_FORMAT_WRONG),
            ("Gi", ERR_FORMAT_WRONG),
            ("1Gb", ERR_FORMAT_WRONG),
            ("1x", ERR_FORMAT_WRONG),
            ("1.2.3", ERR_NUMERIC),
            (".", ERR_NUMERIC),
            ("1ki", ERR_SUFFIX),
            ("1KiB", ERR_FORMAT_WRONG),
            ("1mm", ERR_SUFFIX),
            ("1e", ERR_SUFFIX),
        ];
        for (input, want) in cases {
            assert_eq!(parse_quantity(input).unwrap_err(), want, "for {input:?}");
        }
    }

    #[test]
    fn huge_exponents_are_errors_not_panics() {
        assert!(parse_quantity("1e99999999999999999999").is_err());
        assert!(parse_quantity("1e9223372036854775807").is_err());
        assert_eq!(parse_quantity("1e-9223372036854775808").unwrap().nanos(), 1);
        assert!(parse_quantity("9999999999999999999999999999999999999Ei").is_err());
        assert_eq!(parse_quantity("1e-99999").unwrap().nanos(), 1);
    }

    #[test]
    fn values_compare_across_suffixes() {
        let a = parse_quantity("1Gi").unwrap();
        let b = parse_quantity("1073741824").unwrap();
        assert_eq!(a.nanos(), b.nanos());
        assert!(parse_quantity("500m").unwrap() < parse_quantity("1").unwrap());
    }

    #[test]
    fn cpu_and_memory_print_like_kubectl() {
        assert_eq!(format_cpu_millis(500), "500m");
        assert_eq!(format_cpu_millis(2000), "2");
        assert_eq!(format_cpu_millis(1500), "1500m");
        assert_eq!(format_bytes(1_610_612_736), "1536Mi");
        assert_eq!(format_bytes(4 * 1024 * 1024 * 1024), "4Gi");
        assert_eq!(format_bytes(1000), "1k");
        assert_eq!(format_bytes(0), "0");
    }

    #[test]
    fn a_quantity_parsed_again_reads_as_its_text_does_however_many_were_parsed_between() {
        // Twenty-one texts, past the eight remembered, each parsed twice: one written twice
        // (`100m`) and once differently (`0.1`, which prints back differently), one too long to
        // remember, two that do not parse.
        let mut texts: Vec<String> = (1..=16).map(|i| format!("{i}00m")).collect();
        texts.extend(["0.1", "100m", "1.000000000000000000001Ki", "1x", ""].map(String::from));
        for round in 0..2 {
            for t in &texts {
                let q = parse_quantity(t);
                assert_eq!(q, parse(t), "{t:?}, round {round}");
                if let Ok(q) = q {
                    assert_eq!(q.to_string(), parse(t).unwrap().to_string(), "{t:?}");
                }
            }
        }
    }
}
