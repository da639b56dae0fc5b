//! Simulated-time helpers: Go-style duration parsing (`90s`, `1h30m`) and kubectl-style ages
//! (`duration.HumanDuration`, the one implementation the UI and the kubectl printers share).

use super::api::types::Millis;

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

/// apimachinery's `duration.HumanDuration`, which kubectl uses for every AGE and LAST SEEN
/// column and for `describe`'s relative times: about two significant figures (`45s`, `3m20s`,
/// `15m`, `5h7m`, `30h`, `2d2h`, `10d`, `2y3d`). The duration is signed because a timestamp can
/// be in the future (a terminating pod's deletionTimestamp): Go truncates toward zero, allows a
/// second of clock skew as `0s`, and prints anything further ahead as `<invalid>`.
pub fn human_duration(ms: i64) -> String {
    let seconds = ms / 1000;
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return with_remainder(years, "y", days % 365, "d");
    }
    format!("{years}y")
}

/// `3m20s`, or `3m` when the smaller unit is zero, as `HumanDuration` writes two-unit values.
fn with_remainder(big: i64, big_unit: &str, small: i64, small_unit: &str) -> String {
    if small == 0 {
        format!("{big}{big_unit}")
    } else {
        format!("{big}{big_unit}{small}{small_unit}")
    }
}

/// [`human_duration`] of an elapsed time: what the UI shows as an age (`3m20s ago`).
pub fn human_age(ms: Millis) -> String {
    human_duration(i64::try_from(ms).unwrap_or(i64::MAX))
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

/// Reads a moment the way [`clock`] writes it (`01:30.5`, `1:02:03`), or a Go duration
/// (`90s`): what a learner types for a time of the run.
pub fn parse_clock(s: &str) -> Result<Millis, String> {
    let t = s.trim();
    if !t.contains(':') {
        return parse_duration(t);
    }
    let err = || {
        format!("{s:?} is not a time of the run: write it as mm:ss (01:30) or as a duration (90s)")
    };
    let parts: Vec<&str> = t.split(':').collect();
    let whole = |p: &str| -> Result<Millis, String> {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 6 {
            return Err(err());
        }
        p.parse().map_err(|_| err())
    };
    let (h, m, sec) = match parts.as_slice() {
        [m, sec] => (0, whole(m)?, *sec),
        [h, m, sec] => (whole(h)?, whole(m)?, *sec),
        _ => return Err(err()),
    };
    let (secs, tenths) = sec.split_once('.').unwrap_or((sec, ""));
    let secs = whole(secs)?;
    let ms = match tenths {
        "" => 0,
        d if d.len() <= 3 && d.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{d:0<3}").parse::<Millis>().map_err(|_| err())?
        }
        _ => return Err(err()),
    };
    if m >= 60 && parts.len() == 3 || secs >= 60 {
        return Err(err());
    }
    Ok(h * HOUR + m * MINUTE + secs * SECOND + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_of_the_run_reads_back_as_the_clock_writes_it_or_as_a_duration() {
        for ms in [
            0,
            29_900,
            90_500,
            59 * MINUTE + 59_900,
            HOUR + 2 * MINUTE + 3_000,
        ] {
            assert_eq!(parse_clock(&clock(ms)), Ok(ms), "{}", clock(ms));
        }
        assert_eq!(parse_clock("1:30"), Ok(90_000));
        assert_eq!(parse_clock(" 90s "), Ok(90_000));
        assert_eq!(parse_clock("75:00"), Ok(75 * MINUTE));
        for bad in ["1:75", "a:10", "1:2:3:4", "01:30.5x", ":30", "1:-5"] {
            assert_eq!(
                parse_clock(bad),
                Err(format!("{bad:?} is not a time of the run: write it as mm:ss (01:30) or as a duration (90s)")),
                "{bad}"
            );
        }
        assert!(parse_clock("soon").is_err());
    }

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

    #[test]
    fn human_durations_change_shape_exactly_where_apimachinery_does() {
        const DAY: i64 = 24 * 3_600_000;
        const S: i64 = 1000;
        const M: i64 = 60 * S;
        const H: i64 = 60 * M;
        for (ms, want) in [
            (-2 * S, "<invalid>"),
            (-1999, "0s"),
            (-S, "0s"),
            (0, "0s"),
            (999, "0s"),
            (59 * S, "59s"),
            (60 * S, "60s"),
            (119 * S, "119s"),
            (2 * M, "2m"),
            (2 * M + 5 * S, "2m5s"),
            (9 * M + 59 * S, "9m59s"),
            (10 * M, "10m"),
            (10 * M + 59 * S, "10m"),
            (119 * M, "119m"),
            (179 * M + 59 * S, "179m"),
            (3 * H, "3h"),
            (2 * H, "120m"),
            (3 * H + 2 * M, "3h2m"),
            (7 * H + 59 * M, "7h59m"),
            (8 * H, "8h"),
            (8 * H + 59 * M, "8h"),
            (47 * H + 59 * M, "47h"),
            (48 * H, "2d"),
            (50 * H, "2d2h"),
            (7 * DAY + 23 * H, "7d23h"),
            (8 * DAY, "8d"),
            (365 * DAY, "365d"),
            (729 * DAY + 23 * H, "729d"),
            (730 * DAY, "2y"),
            (733 * DAY, "2y3d"),
            (8 * 365 * DAY - DAY, "7y364d"),
            (8 * 365 * DAY, "8y"),
            (40 * 365 * DAY + 100 * DAY, "40y"),
        ] {
            assert_eq!(human_duration(ms), want, "{ms} ms");
        }
    }

    #[test]
    fn an_age_too_large_for_a_signed_duration_still_prints_in_years() {
        assert!(human_age(u64::MAX).ends_with('y'));
    }
}
