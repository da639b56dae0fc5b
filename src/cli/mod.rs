//! The native command line (not part of the deterministic core: it reads files and, for `bench`, the wall clock): `kubeloop run`, `kubeloop validate`, `kubeloop check`. Headless runs for course authors.
//!
//! Exit codes are a contract scripts rely on: 0 success (every check passed), 1 a check failed,
//! 2 invalid input. Diagnostics go to stderr as `FILE:LINE:COL: message`.

pub mod bench;

use std::io::{Read, Write};

use crate::sim::api::types::Kind;
use crate::sim::input::decode;
use crate::sim::input::diagnostic::Severity;
use crate::sim::kubectl::printers::print_table;
use crate::sim::session::Session;
use crate::sim::time::{format_duration, parse_duration, HOUR, SECOND};

/// How long `run` goes on without `--until` when nothing settles: one simulated hour.
pub const DEFAULT_MAX_RUN: u64 = HOUR;
/// The cluster counts as settled after this long without a change to any watched object.
pub const SETTLE_WINDOW: u64 = 60 * SECOND;

const USAGE: &str = "kubeloop — a Kubernetes reconciliation playground

Usage:
  kubeloop run FILE|- [--seed N] [--until DURATION] [--trace OUT.jsonl] [--final OUT.yaml]
  kubeloop run URL [--seed N] ...      (a share link, or #example/<name>; a link to a moment
                                        replays its actions and stops there, or goes on --until)
  kubeloop validate FILE...
  kubeloop check FILE|URL [--controller NAME]
                                      (runs a learner's controller through faults: convergent,
                                       level-triggered, idempotent; exit 1 if one fails)
  kubeloop link FILE|- [--base URL] [--at DURATION]
                                      (prints a share link for a scenario file; --at: a link to
                                        that moment of its run, lessons' steps done on time)
  kubeloop bench [--quick|--full] [--only TEXT] [--memory]
                                      (wall-clock benchmarks; `make bench`)
  kubeloop help

Exit codes: 0 success (every check passed), 1 a check failed, 2 invalid input.
";

/// Runs the CLI with `args` (without the program name). Returns the exit code.
pub fn main(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..], out, err),
        Some("validate") => validate(&args[1..], out, err),
        Some("check") => check(&args[1..], out, err),
        Some("link") => link(&args[1..], out, err),
        Some("bench") => bench::main(&args[1..], out, err),
        Some("help") | Some("--help") | Some("-h") | None => {
            let _ = write!(out, "{USAGE}");
            0
        }
        Some("version") | Some("--version") => {
            let _ = writeln!(out, "kubeloop {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Some(other) => {
            let _ = write!(err, "error: unknown command \"{other}\"\n\n{USAGE}");
            2
        }
    }
}

/// The default base URL of printed share links.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080/";

/// Whether a `run` argument is a link rather than a file path.
fn is_link(arg: &str) -> bool {
    arg.starts_with("http://")
        || arg.starts_with("https://")
        || arg.starts_with('#')
        || arg.starts_with("k1:")
        || arg.starts_with("k2:")
}

/// What a `run` argument names: a scenario text and its seed, and for a link to a moment the
/// run to replay.
type Opened = (String, Option<u64>, Option<crate::sim::share::RunLink>);

/// Reads a scenario from a link: an encoded scenario (or run) or a built-in example.
fn read_link(arg: &str) -> Result<Opened, String> {
    match crate::sim::share::decode(arg).map_err(|e| format!("error: {e}"))? {
        crate::sim::share::Link::Scenario(s) => Ok((s.text, s.seed, s.run)),
        crate::sim::share::Link::Example(name) => crate::sim::examples::by_name(&name)
            .map(|t| (t.to_string(), None, None))
            .ok_or_else(|| format!("error: there is no built-in example named \"{name}\"")),
    }
}

/// The session a link to a moment shows: its start, its actions replayed, stopped at its
/// moment (or where it stops reproducing, which `err` is told).
fn replayed(run: &crate::sim::share::RunLink, err: &mut dyn Write) -> Result<(Session, bool), i32> {
    let mut session = match &run.base {
        None => Session::new(run.seed),
        Some(text) => match Session::load(crate::sim::run::DEFAULT_FILE, text, Some(run.seed)) {
            Ok(s) => s,
            Err(diags) => {
                for d in diags.iter().filter(|d| d.severity == Severity::Error) {
                    let _ = writeln!(err, "{d}");
                }
                return Err(2);
            }
        },
    };
    let entries = run.entries().map_err(|e| {
        let _ = writeln!(err, "error: {e}");
        2
    })?;
    let reproduced = match crate::sim::run::replay(&mut session, &entries, run.moment()) {
        Ok(()) => true,
        Err(d) => {
            let _ = writeln!(
                err,
                "warning: the run no longer reproduces past {}: {}",
                crate::sim::time::clock(session.sim.now()),
                d.message
            );
            false
        }
    };
    Ok((session, reproduced))
}

fn read_input(path: &str) -> Result<String, String> {
    if path == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("error: reading stdin: {e}"))?;
        return Ok(s);
    }
    let bytes = std::fs::read(path)
        .map_err(|e| format!("error: the path \"{path}\" does not exist or cannot be read: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        let upto = e.utf8_error().valid_up_to();
        format!("{path}: invalid UTF-8 at byte {upto}")
    })
}

struct RunOpts {
    file: String,
    seed: Option<u64>,
    until: Option<u64>,
    trace: Option<String>,
    final_: Option<String>,
}

fn parse_run(args: &[String]) -> Result<RunOpts, String> {
    let mut opts = RunOpts {
        file: String::new(),
        seed: None,
        until: None,
        trace: None,
        final_: None,
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("error: flag needs an argument: {name}"))
        };
        match flag.as_str() {
            "--seed" => {
                let v = value("--seed")?;
                opts.seed =
                    Some(v.parse().map_err(|_| {
                        format!("error: invalid argument \"{v}\" for \"--seed\" flag")
                    })?);
            }
            "--until" => opts.until = Some(parse_duration(&value("--until")?)?),
            "--trace" => opts.trace = Some(value("--trace")?),
            "--final" => opts.final_ = Some(value("--final")?),
            f if f.starts_with('-') && f != "-" => return Err(format!("error: unknown flag: {f}")),
            _ if opts.file.is_empty() => opts.file = a.clone(),
            _ => return Err(format!("error: unexpected argument \"{a}\"")),
        }
        i += 1;
    }
    if opts.file.is_empty() {
        return Err("error: kubeloop run needs a scenario file (or - for stdin)".into());
    }
    Ok(opts)
}

/// How many writes anything but heartbeats (Leases) and Events has seen: what "settled" watches.
/// The store counts its writes as it makes them, so this costs nothing at any scale (a scan of
/// the objects' resourceVersions after each simulated second was a twelfth of a 10,000-pod
/// run), and a delete counts as the change it is.
fn activity_mark(session: &Session) -> u64 {
    let api = session.sim.api();
    api.all_writes() - api.writes(Kind::Lease) - api.writes(Kind::Event)
}

fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let opts = match parse_run(args) {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 2;
        }
    };
    let read = if is_link(&opts.file) {
        read_link(&opts.file)
    } else {
        read_input(&opts.file).map(|t| (t, None, None))
    };
    let (text, link_seed, run) = match read {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 2;
        }
    };
    let opts = RunOpts {
        seed: opts.seed.or(link_seed),
        ..opts
    };
    let name = if opts.file == "-" {
        "<stdin>"
    } else if is_link(&opts.file) {
        "<link>"
    } else {
        opts.file.as_str()
    };
    let (mut session, reproduced) = match &run {
        Some(run) => match replayed(run, err) {
            Ok(r) => r,
            Err(code) => return code,
        },
        None => match Session::load(name, &text, opts.seed) {
            // A headless run does what the lesson's "try this" buttons would, at their `at:`.
            Ok(mut s) => {
                s.script_try_this();
                (s, true)
            }
            Err(diags) => {
                for d in diags.iter().filter(|d| d.severity == Severity::Error) {
                    let _ = writeln!(err, "{d}");
                }
                return 2;
            }
        },
    };
    let mut trace_file = match &opts.trace {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Some(std::io::BufWriter::new(f)),
            Err(e) => {
                let _ = writeln!(err, "error: cannot write {p}: {e}");
                return 2;
            }
        },
        None => None,
    };
    let mut written = 0u64;
    let mut last_mark = activity_mark(&session);
    let mut last_change = 0u64;
    // A link to a moment stops at its moment unless told to go on.
    let limit = match (&run, opts.until) {
        (_, Some(until)) => until,
        (Some(_), None) => session.sim.now(),
        (None, None) => DEFAULT_MAX_RUN,
    };
    let mut t = session.sim.now();
    loop {
        let settled = opts.until.is_none()
            && !session.has_pending_actions()
            && session.checks_decided()
            && t >= last_change + SETTLE_WINDOW;
        if t >= limit || settled {
            break;
        }
        t = (t + SECOND).min(limit);
        session.advance_to(t, usize::MAX);
        let mark = activity_mark(&session);
        if mark != last_mark {
            last_mark = mark;
            last_change = t;
        }
        if let Some(f) = trace_file.as_mut() {
            for e in session.sim.trace().since(written) {
                let _ = writeln!(f, "{}", e.to_json());
                written = e.seq;
            }
        }
    }
    if let Some(mut f) = trace_file {
        let _ = f.flush();
    }
    if let Some(p) = &opts.final_ {
        let mut doc = session.state_json();
        let events: Vec<serde_json::Value> = session
            .sim
            .api()
            .list(Kind::Event)
            .map(|o| o.to_json())
            .collect();
        if let Some(items) = doc.get_mut("items").and_then(|i| i.as_array_mut()) {
            items.extend(events);
        }
        if let Err(e) = std::fs::write(p, crate::sim::input::yaml::to_yaml(&doc)) {
            let _ = writeln!(err, "error: cannot write {p}: {e}");
            return 2;
        }
    }
    let now = session.sim.now();
    let _ = writeln!(
        out,
        "Simulated {} (seed {}).\n",
        format_duration(now),
        session.sim.config().seed
    );
    let stored = |group: &str, kind: &str| {
        crate::sim::api::openapi::stored_kind(group, kind).map(Kind::Custom)
    };
    let kinds = [
        Some(Kind::Node),
        Some(Kind::Deployment),
        Some(Kind::ReplicaSet),
        stored("apps", "StatefulSet"),
        stored("batch", "Job"),
        Some(Kind::Pod),
        Some(Kind::Service),
        stored("", "PersistentVolumeClaim"),
        Some(Kind::PodDisruptionBudget),
    ];
    for kind in kinds.into_iter().flatten() {
        let objs: Vec<_> = session.sim.api().list(kind).cloned().collect();
        if !objs.is_empty() {
            let _ = writeln!(out, "{}", print_table(now, kind, &objs, false, true));
        }
    }
    let checks = session.checks();
    let mut failed = false;
    if !checks.is_empty() {
        let _ = writeln!(out, "CHECKS");
        for c in &checks {
            // A link to a moment may stop before a check is decided: only its failures count.
            let (mark, ok) = match c.passed {
                Some(true) => ("PASS", true),
                Some(false) => ("FAIL", false),
                None => ("UNDECIDED", run.is_some()),
            };
            failed |= !ok;
            let _ = writeln!(out, "{mark:<9} {} — {}", c.name, c.message);
        }
    }
    if failed || !reproduced {
        1
    } else {
        0
    }
}

fn validate(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.is_empty() {
        let _ = writeln!(err, "error: kubeloop validate needs at least one file");
        return 2;
    }
    let mut code = 0;
    for path in args {
        let text = match read_input(path) {
            Ok(t) => t,
            Err(e) => {
                let _ = writeln!(err, "{e}");
                code = 2;
                continue;
            }
        };
        let decoded = decode::decode_manifests(path, &text);
        let mut errors = 0;
        for d in &decoded.diagnostics {
            if d.severity == Severity::Error {
                errors += 1;
            }
            let _ = writeln!(err, "{d}");
        }
        if let Some((doc, ydoc)) = &decoded.scenario {
            if let Err(e) = crate::sim::scenario::decode_scenario(doc) {
                let span = ydoc.span_of(&e.field);
                let _ = writeln!(err, "{path}:{}:{}: {}", span.line, span.col, e.message);
                errors += 1;
            }
        }
        if errors > 0 {
            code = 2;
        } else {
            let _ = writeln!(
                out,
                "{path}: valid ({} objects{})",
                decoded.objects.len(),
                if decoded.scenario.is_some() {
                    " and a Scenario"
                } else {
                    ""
                }
            );
        }
    }
    code
}

/// `kubeloop check FILE [--controller NAME]`: the controller checker
/// (`sim::controller_check`), one line per property and, for a failure, its schedule and a
/// link that replays it.
fn check(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut file = None;
    let mut controller = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--controller" => {
                i += 1;
                match args.get(i) {
                    Some(c) => controller = Some(c.clone()),
                    None => {
                        let _ = writeln!(err, "error: flag needs an argument: --controller");
                        return 2;
                    }
                }
            }
            _ if a.starts_with("--controller=") => {
                controller = Some(a["--controller=".len()..].to_string())
            }
            _ if a.starts_with('-') && a != "-" => {
                let _ = writeln!(err, "error: unknown flag: {a}");
                return 2;
            }
            _ if file.is_none() => file = Some(a.to_string()),
            _ => {
                let _ = writeln!(err, "error: unexpected argument \"{a}\"");
                return 2;
            }
        }
        i += 1;
    }
    let Some(file) = file else {
        let _ = writeln!(
            err,
            "error: kubeloop check needs a file with a Controller document (or - for stdin)"
        );
        return 2;
    };
    let read = if is_link(&file) {
        read_link(&file).map(|(t, _, _)| t)
    } else {
        read_input(&file)
    };
    let text = match read {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 2;
        }
    };
    let name = if file == "-" {
        "<stdin>"
    } else if is_link(&file) {
        "<link>"
    } else {
        file.as_str()
    };
    let report =
        match crate::sim::controller_check::check_controller(name, &text, controller.as_deref()) {
            Ok(r) => r,
            Err(diags) => {
                for d in diags.iter().filter(|d| d.severity == Severity::Error) {
                    let _ = writeln!(err, "{d}");
                }
                return 2;
            }
        };
    let _ = writeln!(
        out,
        "Checked controller {} ({} run{}, seed {}).\n",
        report.controller,
        report.runs,
        if report.runs == 1 { "" } else { "s" },
        report.seed
    );
    for v in &report.verdicts {
        let mark = if v.passed { "PASS" } else { "FAIL" };
        let _ = writeln!(out, "{mark:<9} {} — {}", v.property.as_str(), v.summary);
        if let Some(schedule) = &v.failing_schedule {
            let _ = writeln!(out, "          schedule: {schedule}");
        }
        if let Some(text) = &v.reproduce {
            let url = crate::sim::share::share_url(
                DEFAULT_BASE_URL,
                &crate::sim::share::Shared {
                    text: text.clone(),
                    ..Default::default()
                },
            );
            let _ = writeln!(out, "          reproduce: kubeloop run '{url}'");
        }
    }
    if report.passed() {
        0
    } else {
        1
    }
}

/// The run of a scenario text up to `at` as a link carries it, its lessons' steps done at their
/// times as `kubeloop run` does them (the page's "play the lesson").
fn run_to(
    text: &str,
    at: u64,
) -> Result<crate::sim::share::RunLink, Vec<crate::sim::input::diagnostic::Diagnostic>> {
    let mut session = Session::load(crate::sim::run::DEFAULT_FILE, text, None)?;
    session.script_try_this();
    session.advance_to(at, usize::MAX);
    Ok(crate::sim::share::RunLink::of(&session))
}

fn link(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut base = DEFAULT_BASE_URL.to_string();
    let mut file = None;
    let mut at = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--at" => {
                i += 1;
                match args.get(i).map(|v| parse_duration(v)) {
                    Some(Ok(ms)) => at = Some(ms),
                    Some(Err(e)) => {
                        let _ = writeln!(err, "error: --at: {e}");
                        return 2;
                    }
                    None => {
                        let _ = writeln!(err, "error: flag needs an argument: --at");
                        return 2;
                    }
                }
            }
            a if a.starts_with("--at=") => match parse_duration(&a["--at=".len()..]) {
                Ok(ms) => at = Some(ms),
                Err(e) => {
                    let _ = writeln!(err, "error: --at: {e}");
                    return 2;
                }
            },
            "--base" => {
                i += 1;
                match args.get(i) {
                    Some(b) => base = b.clone(),
                    None => {
                        let _ = writeln!(err, "error: flag needs an argument: --base");
                        return 2;
                    }
                }
            }
            a if a.starts_with("--base=") => base = a["--base=".len()..].to_string(),
            a if a.starts_with('-') && a != "-" => {
                let _ = writeln!(err, "error: unknown flag: {a}");
                return 2;
            }
            a => file = Some(a.to_string()),
        }
        i += 1;
    }
    let Some(file) = file else {
        let _ = writeln!(
            err,
            "error: kubeloop link needs a scenario file (or - for stdin)"
        );
        return 2;
    };
    let text = match read_input(&file) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 2;
        }
    };
    let decoded = decode::decode_manifests(&file, &text);
    let errors: Vec<_> = decoded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if !errors.is_empty() {
        for d in errors {
            let _ = writeln!(err, "{d}");
        }
        return 2;
    }
    let run = match at {
        None => None,
        Some(at) => match run_to(&text, at) {
            Ok(run) => Some(run),
            Err(diags) => {
                for d in diags.iter().filter(|d| d.severity == Severity::Error) {
                    let _ = writeln!(err, "{d}");
                }
                return 2;
            }
        },
    };
    let url = crate::sim::share::share_url(
        &base,
        &crate::sim::share::Shared {
            text,
            run,
            ..Default::default()
        },
    );
    if url.len() > crate::sim::share::LONG_LINK_WARNING {
        let _ = writeln!(err, "warning: this link is {} characters long; chat tools and servers often cut links past 8 KB", url.len());
    }
    let _ = writeln!(out, "{url}");
    0
}
