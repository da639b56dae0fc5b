//! Command-line parsing with pflag's rules and error messages: `--flag=value`, `--flag value`,
//! `-n value`, `-nvalue`, `-o=wide`, boolean flags with optional `=false`, flags anywhere among
//! the arguments, and `--` ending the flags. Each command declares the flags it accepts, so an
//! unknown one gets kubectl's `error: unknown flag: --foo`.

use crate::sim::api::types::Millis;
use crate::sim::time::parse_duration;
use crate::vec_map::VecMap;

/// How a flag takes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagKind {
    /// `--force`, `--force=false`.
    Bool,
    /// `--output wide`, `-o wide`, `--output=wide`.
    Str,
    /// Like [`FlagKind::Str`], checked as an integer at parse time.
    Int,
    /// Like [`FlagKind::Str`], checked as a Go duration at parse time.
    Duration,
    /// A value flag that may also be given bare (pflag's `NoOptDefVal`): `--cascade` means
    /// `--cascade=background`.
    OptionalValue(&'static str),
}

/// One flag a command accepts.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    pub long: &'static str,
    pub short: Option<char>,
    pub kind: FlagKind,
}

/// Shorthand for building flag tables.
pub const fn flag(long: &'static str, short: Option<char>, kind: FlagKind) -> Flag {
    Flag { long, short, kind }
}

/// kubectl's persistent flags, accepted by every command (all but `-n` are ignored here).
pub const GLOBAL: &[Flag] = &[
    flag("namespace", Some('n'), FlagKind::Str),
    flag("context", None, FlagKind::Str),
    flag("cluster", None, FlagKind::Str),
    flag("user", None, FlagKind::Str),
    flag("kubeconfig", None, FlagKind::Str),
    flag("server", Some('s'), FlagKind::Str),
    flag("token", None, FlagKind::Str),
    flag("as", None, FlagKind::Str),
    flag("v", Some('v'), FlagKind::Int),
    flag("request-timeout", None, FlagKind::Str),
    flag("insecure-skip-tls-verify", None, FlagKind::Bool),
    flag("warnings-as-errors", None, FlagKind::Bool),
    flag("match-server-version", None, FlagKind::Bool),
];

/// Parsed arguments: positionals in order, flag values by long name (repeats kept in order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    /// The command path used in usage hints (`get`, `rollout status`).
    pub command: String,
    pub positional: Vec<String>,
    pub flags: VecMap<&'static str, Vec<String>>,
    /// Words after `--`.
    pub after_dashdash: Vec<String>,
    /// The kubeconfig context's namespace, what `-n` defaults to (`default` when unset).
    pub context_namespace: Option<String>,
}

impl Args {
    /// Parses `words` against the command's flags plus [`GLOBAL`]. The error is the whole text
    /// kubectl prints (`error: …` and the usage hint).
    pub fn parse(command: &str, words: &[String], spec: &[Flag]) -> Result<Args, String> {
        let mut a = Args {
            command: command.to_string(),
            ..Default::default()
        };
        let lookup_long = |name: &str| -> Option<Flag> {
            spec.iter()
                .chain(GLOBAL.iter())
                .find(|f| f.long == name)
                .copied()
        };
        let lookup_short = |c: char| -> Option<Flag> {
            spec.iter()
                .chain(GLOBAL.iter())
                .find(|f| f.short == Some(c))
                .copied()
        };
        let usage =
            |msg: String| format!("error: {msg}\nSee 'kubectl {command} --help' for usage.");
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            if w == "--" {
                a.after_dashdash = words[i + 1..].to_vec();
                break;
            }
            if let Some(body) = w.strip_prefix("--") {
                let (name, inline) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (body, None),
                };
                let f =
                    lookup_long(name).ok_or_else(|| usage(format!("unknown flag: --{name}")))?;
                let value = match (f.kind, inline) {
                    (_, Some(v)) => v,
                    (FlagKind::Bool, None) => "true".into(),
                    (FlagKind::OptionalValue(d), None) => d.into(),
                    (_, None) => {
                        i += 1;
                        words
                            .get(i)
                            .cloned()
                            .ok_or_else(|| usage(format!("flag needs an argument: --{name}")))?
                    }
                };
                a.set(f, &format!("--{}", f.long), value).map_err(usage)?;
            } else if w.len() > 1 && w.starts_with('-') && !is_negative_number(w) {
                // A run of shorthands: booleans may be grouped (`-Aw`); a value shorthand takes
                // the rest of the word (`-nkube-system`, `-o=wide`) or the next word.
                let chars: Vec<char> = w[1..].chars().collect();
                let mut k = 0;
                while k < chars.len() {
                    let c = chars[k];
                    let f = lookup_short(c)
                        .ok_or_else(|| usage(format!("unknown shorthand flag: '{c}' in {w}")))?;
                    let rest: String = chars[k + 1..].iter().collect();
                    match f.kind {
                        FlagKind::Bool => {
                            if let Some(v) = rest.strip_prefix('=') {
                                a.set(f, &format!("-{c}"), v.to_string()).map_err(usage)?;
                                break;
                            }
                            a.set(f, &format!("-{c}"), "true".into()).map_err(usage)?;
                            k += 1;
                        }
                        _ => {
                            let value = if let Some(v) = rest.strip_prefix('=') {
                                v.to_string()
                            } else if !rest.is_empty() {
                                rest
                            } else if let FlagKind::OptionalValue(d) = f.kind {
                                d.to_string()
                            } else {
                                i += 1;
                                words.get(i).cloned().ok_or_else(|| {
                                    usage(format!("flag needs an argument: '{c}' in -{c}"))
                                })?
                            };
                            a.set(f, &format!("-{c}"), value).map_err(usage)?;
                            break;
                        }
                    }
                }
            } else {
                a.positional.push(w.clone());
            }
            i += 1;
        }
        Ok(a)
    }

    fn set(&mut self, f: Flag, spelled: &str, value: String) -> Result<(), String> {
        let invalid = |why: String| {
            format!(
                "invalid argument {value:?} for \"{spelled}\" flag: {why}",
                spelled = if spelled.starts_with("--") {
                    spelled.to_string()
                } else {
                    format!("{spelled}, --{}", f.long)
                }
            )
        };
        match f.kind {
            FlagKind::Bool => {
                parse_bool(&value).ok_or_else(|| {
                    invalid(format!(
                        "strconv.ParseBool: parsing {value:?}: invalid syntax"
                    ))
                })?;
            }
            FlagKind::Int => {
                value.parse::<i64>().map_err(|_| {
                    invalid(format!(
                        "strconv.ParseInt: parsing {value:?}: invalid syntax"
                    ))
                })?;
            }
            FlagKind::Duration => {
                parse_go_duration(&value).map_err(invalid)?;
            }
            FlagKind::Str | FlagKind::OptionalValue(_) => {}
        }
        self.flags.entry(f.long).or_default().push(value);
        Ok(())
    }

    /// The last value given for a flag.
    pub fn get(&self, long: &str) -> Option<&str> {
        self.flags
            .get(long)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Every value given for a repeatable flag, in order.
    pub fn all(&self, long: &str) -> &[String] {
        self.flags.get(long).map_or(&[], |v| v.as_slice())
    }

    /// Whether a flag was given at all.
    pub fn has(&self, long: &str) -> bool {
        self.flags.contains_key(long)
    }

    /// A boolean flag's value (false when absent).
    pub fn bool(&self, long: &str) -> bool {
        self.get(long).and_then(parse_bool).unwrap_or(false)
    }

    /// A boolean flag's value with a default for when it is absent.
    pub fn bool_or(&self, long: &str, default: bool) -> bool {
        self.get(long).and_then(parse_bool).unwrap_or(default)
    }

    /// An integer flag's value (validated at parse time).
    pub fn int(&self, long: &str) -> Option<i64> {
        self.get(long).and_then(|v| v.parse().ok())
    }

    /// A duration flag's value in ms (validated at parse time).
    pub fn duration(&self, long: &str) -> Option<Millis> {
        self.get(long).and_then(|v| parse_go_duration(v).ok())
    }

    /// `-n`, defaulting to the kubeconfig context's namespace, or `default`.
    pub fn namespace(&self) -> String {
        self.get("namespace")
            .or(self.context_namespace.as_deref())
            .unwrap_or("default")
            .to_string()
    }

    /// `error: … See 'kubectl <cmd> --help' for usage.` for a usage mistake.
    pub fn usage_error(&self, msg: &str) -> String {
        format!(
            "error: {msg}\nSee 'kubectl {} -h' for help and examples",
            self.command
        )
    }
}

fn is_negative_number(w: &str) -> bool {
    w[1..].chars().all(|c| c.is_ascii_digit()) && w.len() > 1
}

/// `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// `time.ParseDuration`, where a bare `0` is allowed and a plain number is not.
pub fn parse_go_duration(s: &str) -> Result<Millis, String> {
    parse_duration(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &[Flag] = &[
        flag("output", Some('o'), FlagKind::Str),
        flag("all-namespaces", Some('A'), FlagKind::Bool),
        flag("watch", Some('w'), FlagKind::Bool),
        flag("replicas", None, FlagKind::Int),
        flag("timeout", None, FlagKind::Duration),
        flag("cascade", None, FlagKind::OptionalValue("background")),
    ];

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn parse(s: &str) -> Result<Args, String> {
        Args::parse("get", &words(s), SPEC)
    }

    #[test]
    fn flags_parse_in_every_pflag_spelling() {
        let cases: &[(&str, &str, &str)] = &[
            ("pods -o wide", "output", "wide"),
            ("pods -owide", "output", "wide"),
            ("pods -o=wide", "output", "wide"),
            ("pods --output wide", "output", "wide"),
            ("pods --output=wide", "output", "wide"),
            ("-n kube-system pods", "namespace", "kube-system"),
            ("pods -nkube-system", "namespace", "kube-system"),
            ("pods -A", "all-namespaces", "true"),
            ("pods -Aw", "watch", "true"),
            ("pods --all-namespaces=false", "all-namespaces", "false"),
            ("x --replicas=3", "replicas", "3"),
            ("x --timeout 90s", "timeout", "90s"),
            ("x --cascade", "cascade", "background"),
            ("x --cascade=orphan", "cascade", "orphan"),
        ];
        for (line, flag, value) in cases {
            let a = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(a.get(flag), Some(*value), "{line}");
        }
        assert_eq!(
            parse("pods -o wide web").unwrap().positional,
            ["pods", "web"]
        );
    }

    #[test]
    fn bad_flags_get_pflags_messages() {
        let cases: &[(&str, &str)] = &[
            ("pods --foo", "error: unknown flag: --foo\nSee 'kubectl get --help' for usage."),
            ("pods -x", "error: unknown shorthand flag: 'x' in -x\nSee 'kubectl get --help' for usage."),
            ("pods -o", "error: flag needs an argument: 'o' in -o\nSee 'kubectl get --help' for usage."),
            ("pods --output", "error: flag needs an argument: --output\nSee 'kubectl get --help' for usage."),
            (
                "x --replicas=abc",
                "error: invalid argument \"abc\" for \"--replicas\" flag: strconv.ParseInt: parsing \"abc\": invalid syntax\nSee 'kubectl get --help' for usage.",
            ),
            (
                "x --timeout=5x",
                "error: invalid argument \"5x\" for \"--timeout\" flag: time: unknown unit \"x\" in duration \"5x\"\nSee 'kubectl get --help' for usage.",
            ),
            (
                "x -A=maybe",
                "error: invalid argument \"maybe\" for \"-A, --all-namespaces\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\nSee 'kubectl get --help' for usage.",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line).unwrap_err(), *want, "{line}");
        }
    }

    #[test]
    fn a_double_dash_ends_the_flags() {
        let a = parse("x -- -o wide").unwrap();
        assert_eq!(a.positional, ["x"]);
        assert_eq!(a.after_dashdash, ["-o", "wide"]);
    }
}
