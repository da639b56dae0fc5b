//! The playground's kubectl: parses a command line and runs it against a session.
//!
//! Output and error messages follow kubectl's own shapes, so what a learner practises here is
//! what they will type and read on a real cluster.

pub mod printers;

use super::api::{ApiRequest, DeleteOptions, PropagationPolicy};
use super::scenario::split_words;
use super::session::{CommandOutput, Session};
use super::types::{Kind, ObjectKey};

/// Runs one command line (`kubectl` prefix optional).
pub fn execute(session: &mut Session, line: &str) -> CommandOutput {
    let words = match split_words(line) {
        Ok(w) => w,
        Err(e) => return CommandOutput::err(format!("error: {e}")),
    };
    let mut words: Vec<String> = words;
    if words.first().map(String::as_str) == Some("kubectl") {
        words.remove(0);
    }
    let Some(verb) = words.first().cloned() else {
        return CommandOutput::err("error: a command is required (try: kubectl get pods)");
    };
    let args = Args::parse(&words[1..]);
    let args = match args {
        Ok(a) => a,
        Err(e) => return CommandOutput::err(e),
    };
    match verb.as_str() {
        "get" => printers::get(session, &args),
        "scale" => scale(session, &args),
        "delete" => delete(session, &args),
        other => CommandOutput::err(format!(
            "error: \"{other}\" is not supported in the playground yet"
        )),
    }
}

/// Parsed positional arguments and flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    pub positional: Vec<String>,
    pub flags: Vec<(String, Option<String>)>,
}

/// Flags that take a value when written as `--flag value`.
const VALUE_FLAGS: &[&str] = &[
    "-n",
    "--namespace",
    "-o",
    "--output",
    "-l",
    "--selector",
    "--replicas",
    "--cascade",
    "--grace-period",
    "--timeout",
    "--for",
    "--image",
    "-p",
    "--patch",
    "--type",
    "--to-revision",
    "-f",
    "--filename",
];

impl Args {
    /// Splits words into positionals and flags (`--x=y`, `--x y` for value flags, `-A`).
    pub fn parse(words: &[String]) -> Result<Args, String> {
        let mut a = Args::default();
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            if w.starts_with('-') && w.len() > 1 {
                if let Some((f, v)) = w.split_once('=') {
                    a.flags.push((f.to_string(), Some(v.to_string())));
                } else if VALUE_FLAGS.contains(&w.as_str()) {
                    i += 1;
                    let v = words
                        .get(i)
                        .ok_or_else(|| format!("error: flag needs an argument: {w}"))?;
                    a.flags.push((w.clone(), Some(v.clone())));
                } else {
                    a.flags.push((w.clone(), None));
                }
            } else {
                a.positional.push(w.clone());
            }
            i += 1;
        }
        Ok(a)
    }

    /// The value of the first of `names` present.
    pub fn value(&self, names: &[&str]) -> Option<&str> {
        self.flags
            .iter()
            .find(|(f, _)| names.contains(&f.as_str()))
            .and_then(|(_, v)| v.as_deref())
    }

    /// Whether any of `names` is present.
    pub fn has(&self, names: &[&str]) -> bool {
        self.flags.iter().any(|(f, _)| names.contains(&f.as_str()))
    }

    /// The namespace (`-n`), `default` when absent.
    pub fn namespace(&self) -> String {
        self.value(&["-n", "--namespace"])
            .unwrap_or("default")
            .to_string()
    }
}

/// Resolves `TYPE NAME` or `TYPE/NAME` positionals into keys.
pub fn resolve_targets(args: &Args, ns: &str) -> Result<Vec<ObjectKey>, String> {
    let mut out = Vec::new();
    let mut kind: Option<Kind> = None;
    for p in &args.positional {
        if let Some((k, n)) = p.split_once('/') {
            let kind = Kind::from_resource_name(k)
                .ok_or_else(|| format!("error: the server doesn't have a resource type \"{k}\""))?;
            out.push(ObjectKey::new(kind, ns, n));
        } else if let Some(k) = kind {
            out.push(ObjectKey::new(k, ns, p));
        } else {
            kind = Some(Kind::from_resource_name(p).ok_or_else(|| {
                format!("error: the server doesn't have a resource type \"{p}\"")
            })?);
        }
    }
    Ok(out)
}

fn scale(session: &mut Session, args: &Args) -> CommandOutput {
    let Some(replicas) = args.value(&["--replicas"]) else {
        return CommandOutput::err("error: required flag(s) \"replicas\" not set");
    };
    let Ok(n) = replicas.parse::<i32>() else {
        return CommandOutput::err(format!("error: invalid argument \"{replicas}\" for \"--replicas\" flag: strconv.ParseInt: parsing \"{replicas}\": invalid syntax"));
    };
    let targets = match resolve_targets(args, &args.namespace()) {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => {
            return CommandOutput::err(
                "error: resource(s) were provided, but no name was specified",
            )
        }
        Err(e) => return CommandOutput::err(e),
    };
    let mut out = String::new();
    for key in targets {
        let patch = serde_json::json!({"spec": {"replicas": n}});
        match session.sim.submit(ApiRequest::Patch {
            key: key.clone(),
            patch,
            status: false,
        }) {
            Ok(o) => out.push_str(&format!("{} scaled\n", super::session::kubectl_name(&o))),
            Err(e) => {
                return CommandOutput {
                    stdout: out,
                    stderr: e.kubectl_message(),
                    ok: false,
                }
            }
        }
    }
    CommandOutput::ok(out)
}

fn delete(session: &mut Session, args: &Args) -> CommandOutput {
    let ns = args.namespace();
    let policy = match args.value(&["--cascade"]) {
        Some(v) => match PropagationPolicy::parse(v) {
            Some(p) => Some(p),
            None => return CommandOutput::err(format!("error: invalid cascade value ({v}). Must be \"background\", \"foreground\", or \"orphan\"")),
        },
        None => None,
    };
    let grace = args
        .value(&["--grace-period"])
        .and_then(|g| g.parse::<i64>().ok());
    let grace = if args.has(&["--force"]) && grace.is_none() {
        Some(0)
    } else {
        grace
    };
    let targets = match resolve_targets(args, &ns) {
        Ok(t) => t,
        Err(e) => return CommandOutput::err(e),
    };
    let targets = if let Some(sel) = args.value(&["-l", "--selector"]) {
        let kind = args
            .positional
            .first()
            .and_then(|p| Kind::from_resource_name(p));
        let Some(kind) = kind else {
            return CommandOutput::err(
                "error: resource(s) were provided, but no name was specified",
            );
        };
        let sel = match super::world::parse_label_selector(sel) {
            Ok(s) => s,
            Err(e) => return CommandOutput::err(format!("error: {e}")),
        };
        session
            .sim
            .api
            .list(kind)
            .filter(|o| o.meta().namespace == ns && sel.matches(&o.meta().labels))
            .map(|o| o.key())
            .collect()
    } else {
        targets
    };
    if targets.is_empty() {
        return CommandOutput::ok("No resources found\n");
    }
    let mut out = String::new();
    let mut err = String::new();
    for key in targets {
        let options = DeleteOptions {
            grace_period_seconds: grace,
            propagation_policy: policy,
            ..Default::default()
        };
        match session.sim.submit(ApiRequest::Delete {
            key: key.clone(),
            options,
        }) {
            Ok(o) => out.push_str(&format!(
                "{} \"{}\" deleted\n",
                o.kind().as_str().to_ascii_lowercase(),
                key.name
            )),
            Err(e) => err.push_str(&format!("{}\n", e.kubectl_message())),
        }
    }
    CommandOutput {
        ok: err.is_empty(),
        stdout: out,
        stderr: err,
    }
}
