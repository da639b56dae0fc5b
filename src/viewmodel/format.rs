//! Small formatting helpers the views share: quantities, object names, percentages.
//!
//! Quantities are parsed here only to draw bars. The scheduler decides fit with its own arithmetic;
//! a bar that rounds differently from the scheduler would be a cosmetic bug, never a wrong verdict.

/// Millicores in a CPU quantity (`100m`, `0.5`, `2`), or `None` when it is not a CPU quantity.
pub fn parse_cpu_millis(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(m) = s.strip_suffix('m') {
        return m
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| v.ceil() as u64);
    }
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| (v * 1000.0).ceil() as u64)
}

/// Bytes in a memory quantity (`128Mi`, `1G`, `512k`, `1e3`, plain bytes).
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    const SUFFIXES: [(&str, f64); 13] = [
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
        ("m", 1e-3),
    ];
    for (suffix, scale) in SUFFIXES {
        if let Some(n) = s.strip_suffix(suffix) {
            return n
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| (v * scale).ceil() as u64);
        }
    }
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v.ceil() as u64)
}

/// A CPU amount the way a person reads it: `250m`, `2`, `1.5`.
pub fn format_cpu(millis: u64) -> String {
    if millis % 1000 == 0 {
        format!("{}", millis / 1000)
    } else if millis >= 1000 {
        let s = format!("{:.2}", millis as f64 / 1000.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{millis}m")
    }
}

/// A memory amount in the largest binary unit that keeps it readable: `128Mi`, `7.5Gi`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if bytes >= size {
            let v = bytes as f64 / size as f64;
            let s = if (v - v.round()).abs() < 0.05 {
                format!("{}", v.round() as u64)
            } else {
                format!("{v:.1}")
            };
            return format!("{s}{unit}");
        }
    }
    format!("{bytes}")
}

/// Percentage of `used` in `total`, rounded, capped at 100 (a bar cannot overflow its track).
pub fn percent(used: u64, total: u64) -> u32 {
    if total == 0 {
        return if used == 0 { 0 } else { 100 };
    }
    let p = (used as f64 * 100.0 / total as f64).round();
    p.min(100.0) as u32
}

/// `Pod/default/web-abc` (the trace's notation) → `pod/web-abc` (kubectl's), keeping a
/// non-default namespace as a prefix (`kube-system/pod/x`).
pub fn short_object(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    push_short_object(&mut out, key);
    out
}

/// `words`, a space and [`short_object`]'s form of `key` (`get pod/web-abc`), in one allocation:
/// the sequence diagram and the loop cards label every trace line they take in.
pub fn labelled(words: &str, key: &str) -> String {
    let mut out = String::with_capacity(words.len() + 1 + key.len());
    out.push_str(words);
    out.push(' ');
    push_short_object(&mut out, key);
    out
}

fn push_short_object(out: &mut String, key: &str) {
    let Some((kind, rest)) = key.split_once('/') else {
        return out.push_str(key);
    };
    let (ns, name) = match rest.split_once('/') {
        None => ("", rest),
        Some((_, name)) if name.contains('/') => return out.push_str(key),
        Some(("default", name)) => ("", name),
        Some((ns, name)) => (ns, name),
    };
    if !ns.is_empty() {
        out.push_str(ns);
        out.push('/');
    }
    let at = out.len();
    out.push_str(kind);
    out[at..].make_ascii_lowercase();
    out.push('/');
    out.push_str(name);
}

/// The name part of a trace object key (`Pod/default/x` → `x`).
pub fn object_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// The short suffix a generated pod name ends with (`web-7d4b9c8f6-x2k9q` → `x2k9q`), which is
/// what a person uses to tell replicas apart on a small chip.
pub fn pod_suffix(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((_, tail)) if !tail.is_empty() => tail,
        _ => name,
    }
}

/// Shortens text to at most `max` characters with an ellipsis.
pub fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `key=value:Effect` cut where a narrow node card may wrap it: after each `/` of the key's
/// prefix and before the `:` of the effect, so that `node.kubernetes.io/unreachable:NoExecute`
/// breaks between its words rather than inside one. The pieces join back to `taint`.
pub fn taint_pieces(taint: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in taint.char_indices() {
        let cut = match c {
            '/' => i + 1,
            ':' => i,
            _ => continue,
        };
        if cut > start {
            pieces.push(&taint[start..cut]);
            start = cut;
        }
    }
    if start < taint.len() || pieces.is_empty() {
        pieces.push(&taint[start..]);
    }
    pieces
}

/// A speed factor for the toolbar: `0.25×`, `1×`, `100×`.
pub fn format_speed(speed: f64) -> String {
    if (speed - speed.round()).abs() < 1e-9 {
        format!("{}×", speed.round() as i64)
    } else {
        let s = format!("{speed:.2}");
        format!("{}×", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// The offset of `line:col` (both from 1) in `text`, in UTF-16 code units as the DOM counts them
/// (for putting the editor's cursor where a diagnostic points).
pub fn utf16_offset(text: &str, line: u32, col: u32) -> u32 {
    let mut units = 0u32;
    for (i, l) in text.split('\n').enumerate() {
        if i + 1 == line as usize {
            let col_units: u32 = l
                .chars()
                .take(col.saturating_sub(1) as usize)
                .map(|c| c.len_utf16() as u32)
                .sum();
            return units + col_units;
        }
        units += l.chars().map(|c| c.len_utf16() as u32).sum::<u32>() + 1;
    }
    units
}

/// A timestamp with millisecond precision (`00:45.012`, `1:02:03.004`), for the sequence diagram,
/// where a whole exchange often fits in one tenth of a second.
pub fn clock_ms(ms: u64) -> String {
    let h = ms / 3_600_000;
    let m = (ms % 3_600_000) / 60_000;
    let s = (ms % 60_000) / 1000;
    let frac = ms % 1000;
    if h > 0 {
        format!("{h}:{m:02}:{s:02}.{frac:03}")
    } else {
        format!("{m:02}:{s:02}.{frac:03}")
    }
}

/// The speeds the toolbar offers, slowest first.
pub const SPEEDS: [f64; 8] = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 100.0];

#[cfg(test)]
mod tests {

    #[test]
    fn a_taint_wraps_between_its_prefix_its_name_and_its_effect() {
        assert_eq!(
            taint_pieces("node.kubernetes.io/unreachable:NoExecute"),
            ["node.kubernetes.io/", "unreachable", ":NoExecute"]
        );
        assert_eq!(
            taint_pieces("dedicated=gpu:NoSchedule"),
            ["dedicated=gpu", ":NoSchedule"]
        );
        assert_eq!(taint_pieces("plain"), ["plain"]);
        assert_eq!(taint_pieces(":x/"), [":x/"]);
        assert_eq!(taint_pieces(""), [""]);
    }

    use super::*;

    #[test]
    fn cpu_quantities_become_millicores() {
        assert_eq!(parse_cpu_millis("100m"), Some(100));
        assert_eq!(parse_cpu_millis("0.5"), Some(500));
        assert_eq!(parse_cpu_millis("2"), Some(2000));
        assert_eq!(parse_cpu_millis("lots"), None);
        assert_eq!(parse_cpu_millis("-1"), None);
    }

    #[test]
    fn memory_quantities_become_bytes() {
        assert_eq!(parse_bytes("128Mi"), Some(128 * 1024 * 1024));
        assert_eq!(parse_bytes("1G"), Some(1_000_000_000));
        assert_eq!(parse_bytes("8Gi"), Some(8 << 30));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("1e3"), Some(1000));
        assert_eq!(parse_bytes("x"), None);
    }

    #[test]
    fn amounts_format_for_people() {
        assert_eq!(format_cpu(250), "250m");
        assert_eq!(format_cpu(2000), "2");
        assert_eq!(format_cpu(1500), "1.5");
        assert_eq!(format_bytes(128 << 20), "128Mi");
        assert_eq!(format_bytes(8 << 30), "8Gi");
        assert_eq!(format_bytes((15 << 30) / 2), "7.5Gi");
        assert_eq!(format_bytes(512), "512");
    }

    #[test]
    fn percentages_round_and_never_overflow_the_bar() {
        assert_eq!(percent(100, 4000), 3);
        assert_eq!(percent(5000, 4000), 100);
        assert_eq!(percent(0, 0), 0);
        assert_eq!(percent(1, 0), 100);
    }

    #[test]
    fn trace_keys_read_like_kubectl_names() {
        assert_eq!(short_object("Pod/default/web-abc"), "pod/web-abc");
        assert_eq!(short_object("Node/node-1"), "node/node-1");
        assert_eq!(
            short_object("Lease/kube-node-lease/node-1"),
            "kube-node-lease/lease/node-1"
        );
        assert_eq!(object_name("Pod/default/web-abc"), "web-abc");
    }

    #[test]
    fn keys_that_are_not_kind_namespace_name_are_shown_as_they_are() {
        assert_eq!(short_object("Pod//web-abc"), "pod/web-abc");
        assert_eq!(short_object("cluster"), "cluster");
        assert_eq!(short_object("a/b/c/d"), "a/b/c/d");
        assert_eq!(short_object("Widget.example.com/x"), "widget.example.com/x");
        assert_eq!(labelled("get", "Pod/team-a/web"), "get team-a/pod/web");
        assert_eq!(labelled("get", "a/b/c/d"), "get a/b/c/d");
    }

    #[test]
    fn pod_suffixes_tell_replicas_apart() {
        assert_eq!(pod_suffix("web-7d4b9c8f6-x2k9q"), "x2k9q");
        assert_eq!(pod_suffix("solo"), "solo");
    }

    #[test]
    fn line_and_column_map_to_dom_offsets() {
        assert_eq!(utf16_offset("ab\ncd", 2, 2), 4);
        assert_eq!(utf16_offset("ab\ncd", 1, 1), 0);
        assert_eq!(utf16_offset("é\nx", 2, 1), 2);
        assert_eq!(utf16_offset("ab", 9, 1), 3, "past the end: the end");
    }

    #[test]
    fn diagram_times_keep_milliseconds() {
        assert_eq!(clock_ms(45_012), "00:45.012");
        assert_eq!(clock_ms(3_723_004), "1:02:03.004");
    }

    #[test]
    fn speeds_print_without_trailing_zeros() {
        assert_eq!(format_speed(0.25), "0.25×");
        assert_eq!(format_speed(1.0), "1×");
        assert_eq!(format_speed(100.0), "100×");
        assert_eq!(ellipsize("abcdef", 4), "abc…");
    }
}

/// A moment of the run as a lesson names it: `0:40`, `2:31`, `1:05:00`.
pub fn moment(ms: crate::sim::api::types::Millis) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod moment_tests {
    #[test]
    fn moments_read_as_minutes_and_seconds() {
        assert_eq!(super::moment(40_000), "0:40");
        assert_eq!(super::moment(151_500), "2:31");
        assert_eq!(super::moment(3_900_000), "1:05:00");
    }
}
