//! Simulated-time helpers: Go-style duration parsing (`90s`, `1h30m`) and kubectl-style ages.

use super::types::Millis;

/// One second in simulated milliseconds.
pub const SECOND: Millis = 1000;
/// One minute in simulated milliseconds.
pub const MINUTE: Millis = 60 * SECOND;
/// One hour in simulated milliseconds.
pub const HOUR: Millis = 60 * MINUTE;

/// Parses a Go `time.ParseDuration` string (`300ms`, `90s`, `1h30m`, `1.5m`) into milliseconds.
///
/// Negative durations are refused: nothing in a scenario can happen before time zero.
pub fn parse_duration(s: &str) -> Result<Millis, String> {
    let err = || format!("time: invalid duration {s:?}");
    let t = s.trim();
    if t == "0" {
        return Ok(0);
    }
    if t.is_empty() || t.starts_with('-') {
        return Err(err());
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let mut total: f64 = 0.0;
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(err());
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale = match unit {
            "ns" => 1e-6,
            "us" | "µs" => 1e-3,
            "ms" => 1.0,
            "s" => 1e3,
            "m" => 6e4,
            "h" => 3.6e6,
            "" => return Err(format!("time: missing unit in duration {s:?}")),
            _ => return Err(format!("time: unknown unit {unit:?} in duration {s:?}")),
        };
        total += value * scale;
    }
    if total > 1e15 {
        return Err(err());
    }
    Ok(total.round() as Millis)
}

/// Formats a duration the way Go's `time.Duration.String` does (`1m30s`, `500ms`, `0s`).
pub fn format_duration(ms: Millis) -> String {
    if ms == 0 {
        return "0s".into();
    }
    if ms < SECOND {
        return format!("{ms}ms");
    }
    let h = ms / HOUR;
    let m = (ms % HOUR) / MINUTE;
    let s = (ms % MINUTE) / SECOND;
    let frac = ms % SECOND;
    let secs = if frac == 0 {
        format!("{s}s")
    } else {
        format!("{s}.{}s", format!("{frac:03}").trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => secs,
        (0, m) => format!("{m}m{secs}"),
        (h, m) => format!("{h}h{m}m{secs}"),
    }
}

/// kubectl's human age (`duration.HumanDuration`): `45s`, `3m20s`, `5m`, `2h10m`, `3d`.
pub fn human_age(ms: Millis) -> String {
    let secs = ms / SECOND;
    if secs < 60 * 2 {
        return format!("{secs}s");
    }
    let mins = secs / 60;
    if mins < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{mins}m")
        } else {
            format!("{mins}m{s}s")
        };
    }
    if mins < 60 * 3 {
        return format!("{mins}m");
    }
    let hours = mins / 60;
    if hours < 8 {
        let m = mins % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    format!("{}d", hours / 24)
}

/// The simulated clock as shown in the UI and CLI: `mm:ss.t` below an hour, `h:mm:ss` above.
pub fn clock(ms: Millis) -> String {
    let h = ms / HOUR;
    let m = (ms % HOUR) / MINUTE;
    let s = (ms % MINUTE) / SECOND;
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m:02}:{s:02}.{}", (ms % SECOND) / 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse_to_milliseconds() {
        for (s, ms) in [
            ("90s", 90_000),
            ("5m", 300_000),
            ("1h30m", 5_400_000),
            ("300ms", 300),
            ("1.5m", 90_000),
            ("0", 0),
        ] {
            assert_eq!(parse_duration(s), Ok(ms), "{s}");
        }
    }

    #[test]
    fn malformed_durations_are_refused_with_go_wording() {
        assert_eq!(
            parse_duration("10"),
            Err("time: missing unit in duration \"10\"".into())
        );
        assert_eq!(
            parse_duration("3d"),
            Err("time: unknown unit \"d\" in duration \"3d\"".into())
        );
        assert!(parse_duration("-5s").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn durations_format_like_go() {
        assert_eq!(format_duration(90_000), "1m30s");
        assert_eq!(format_duration(1_500), "1.5s");
        assert_eq!(format_duration(3_600_000), "1h0m0s");
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_age(45_000), "45s");
        assert_eq!(human_age(200_000), "3m20s");
        assert_eq!(human_age(15 * MINUTE), "15m");
        assert_eq!(human_age(5 * HOUR + 7 * MINUTE), "5h7m");
    }
}
