//! "Check my controller": a learner's controller run headless through a fixed battery of fault schedules, and judged on the course's three properties.
//!
//! - **convergent**: with ordinary disturbances (a child deleted by hand, a restart, a second
//!   writer racing its writes) it ends where the fault-free run ends;
//! - **level-triggered**: with watch events lost (a broken watch that then relists, the DELETED
//!   events of its children lost while one is deleted) it still gets there, given its resync
//!   period — a controller acting on what it remembers rather than on what its cache shows
//!   does not;
//! - **idempotent**: crashed after each request index of a pass (CrashMidReconcile), it creates
//!   no duplicates and still gets there.
//!
//! Every run is a scenario text: the learner's file with the run's faults as timeline steps,
//! loaded with [`Session::load`] exactly as a share link of it is (see [`reproduce`]), so the
//! reproducing scenario of a failure shows that failure. Runs are seeded (the file's seed, or
//! the default), read no clock and iterate no hash map: the same file gives the same report,
//! natively and in the browser.
//!
//! A run ends once it is quiet — no change to the objects of the controller's kinds and no
//! failing pass for [`quiet_window`] (a minute, or the resync period and ten seconds when that
//! is longer) after its last fault is over — or at [`RUN_CAP`] after that; its end state
//! ([`end_state`]) is then compared with the fault-free run's.
//!
//! Cost: simulated time is cheap at lesson scale (the fixture's three-node cluster simulates five
//! minutes in about 10 ms). Measured on 2026-12-04 natively in a release build, `kubeloop check
//! tests/fixtures/controllers/website.yaml` (eight runs, each to a minute's quiet, about two
//! simulated minutes) takes 0.03 s of wall clock, the failing fixtures beside it 0.00–0.04 s; a
//! debug build about 0.5 s. Not yet measured in the browser, whose main thread runs it a few
//! times slower than native. A controller that floods the API server is cut off
//! by [`RUN_WRITES`] and [`RUN_EVENTS`], not by the clock.

mod end_state;
mod reproduce;
mod schedule;
#[cfg(test)]
mod tests;

use serde::Serialize;

use super::api::types::{Kind, Millis, ObjectKey};
use super::input::controller_doc::ControllerDoc;
use super::input::decode::{self, Decoded};
use super::input::diagnostic::{Diagnostic, Severity};
use super::machinery::controller::ComponentId;
use super::machinery::trace::{ApiTrace, ReconcileTrace, TraceKind};
use super::session::Session;
use super::time::{format_duration, MINUTE, SECOND};

use end_state::EndState;
use schedule::{Child, Landmarks};

/// The shortest quiet that ends a run.
pub const QUIET: Millis = MINUTE;
/// The longest quiet asked for, whatever the resync period.
pub const MAX_QUIET: Millis = 10 * MINUTE;
/// How long after its last fault a run may go on before it counts as never settling.
pub const RUN_CAP: Millis = 10 * MINUTE;
/// How many simulation events one run may process: a controller that floods the API server
/// ends its run instead of the page's main thread.
pub const RUN_EVENTS: usize = 1_000_000;

/// How many successful writes one run may see from the controller: one that writes on every pass
/// (a field flipped, a timestamp) is told it never settles after this many, not after minutes
/// of the page's main thread. A lesson's controller writes a few dozen times.
pub const RUN_WRITES: usize = 1_000;

/// One of the course's three properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Property {
    #[serde(rename = "convergent")]
    Convergent,
    #[serde(rename = "level-triggered")]
    LevelTriggered,
    #[serde(rename = "idempotent")]
    Idempotent,
}

impl Property {
    /// Every property, in the order the report lists them.
    pub const ALL: [Property; 3] = [
        Property::Convergent,
        Property::LevelTriggered,
        Property::Idempotent,
    ];

    /// `convergent`, `level-triggered`, `idempotent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Property::Convergent => "convergent",
            Property::LevelTriggered => "level-triggered",
            Property::Idempotent => "idempotent",
        }
    }
}

/// The check's finding on one property.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub property: Property,
    pub passed: bool,
    /// One sentence a learner understands: what was tried, and on failure what went wrong
    /// ("after a crash after its 1st request, 2 Deployments are owned by Website web (the
    /// fault-free run has 1)").
    pub summary: String,
    /// On failure: the failing run's faults and when, in words.
    pub failing_schedule: Option<String>,
    /// On failure: a scenario text (the learner's file plus a Scenario document with the
    /// failing run's steps) that replays the failing run.
    pub reproduce: Option<String>,
}

/// What the check found.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The controller checked (`metadata.name` of its Controller document).
    pub controller: String,
    /// The seed every run used.
    pub seed: u64,
    /// How many runs the battery took, the fault-free one included.
    pub runs: usize,
    /// One per property, in [`Property::ALL`]'s order.
    pub verdicts: Vec<Verdict>,
}

impl Report {
    /// Whether every property holds.
    pub fn passed(&self) -> bool {
        self.verdicts.iter().all(|v| v.passed)
    }
}

/// How long a run must stay quiet to count as settled: long enough for a resync to repair
/// what a lost event hid.
pub fn quiet_window(resync: Option<Millis>) -> Millis {
    resync
        .map_or(QUIET, |r| (r + 10 * SECOND).max(QUIET))
        .min(MAX_QUIET)
}

/// Checks the controller named `controller` (or the file's only one) of the scenario file
/// `text`. A file that does not load, or has no such controller or nothing for it to
/// reconcile, is refused with diagnostics.
pub fn check_controller(
    file: &str,
    text: &str,
    controller: Option<&str>,
) -> Result<Report, Vec<Diagnostic>> {
    let decoded = decode::decode_manifests(file, text);
    if decoded.has_errors() {
        return Err(decoded
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect());
    }
    let doc = pick(file, &decoded, controller)?.clone();
    let id = ComponentId::Script(crate::sim::api::types::Str::from(doc.name.as_str()));
    let component = id.name();
    let session = Session::load(file, text, None)?;
    let seed = session.sim.config().seed;
    let refused = |message: String| vec![refusal(file, message)];
    let primary = doc.primary.resolve().ok_or_else(|| {
        refused(format!(
            "controller {}: spec.for: the server doesn't have a resource type \"{}\" in {}",
            doc.name, doc.primary.kind, doc.primary.api_version
        ))
    })?;
    let kinds = Kinds {
        primary,
        owned: doc.owns.iter().filter_map(|t| t.resolve()).collect(),
    };
    let text_of = |name: &str, steps: &[schedule::Step]| {
        reproduce::scenario_text(text, decoded.scenario.as_ref(), name, seed, steps)
    };
    let quiet = quiet_window(doc.resync);

    let base = run(session, &id, &kinds, 0, quiet);
    if base.end.primaries.is_empty() {
        return Err(refused(format!(
            "controller {}: the file has no {} for it to reconcile: add one to check it",
            doc.name, doc.primary.kind
        )));
    }
    let base_text = text_of(&format!("check-{}", doc.name), &[]);
    let mut verdicts = Vec::new();
    if let Some(why) = &base.unsettled {
        verdicts.push(Verdict {
            property: Property::Convergent,
            passed: false,
            summary: format!("Without any fault it never settles: {why}."),
            failing_schedule: Some("no faults: the fault-free run".into()),
            reproduce: Some(base_text),
        });
        for property in [Property::LevelTriggered, Property::Idempotent] {
            verdicts.push(Verdict {
                property,
                passed: false,
                summary: "Not checked: without any fault it never settles (see convergent).".into(),
                failing_schedule: None,
                reproduce: None,
            });
        }
        return Ok(Report {
            controller: doc.name,
            seed,
            runs: 1,
            verdicts,
        });
    }

    let landmarks = landmarks(&base, &component, &kinds);
    let battery = schedule::battery(&landmarks);
    let mut runs = 1;
    for property in Property::ALL {
        let mut tried = 0;
        let mut failure = None;
        for sched in battery.iter().filter(|s| s.property == property) {
            tried += 1;
            runs += 1;
            let name = format!("check-{}-{}", doc.name, property.as_str());
            let scenario = text_of(&name, &sched.steps);
            let session = Session::load(file, &scenario, None).map_err(|d| {
                // The file loaded without the steps, and they are the check's own.
                let first = d.first().map_or(String::new(), |d| d.message.clone());
                refused(format!(
                    "internal error: a run of the check was refused: {first}"
                ))
            })?;
            let r = run(session, &id, &kinds, sched.quiet_from, quiet);
            if let Some(diff) = judge(&r, &base) {
                failure = Some((sched, diff, scenario));
                break;
            }
        }
        verdicts.push(match failure {
            Some((sched, diff, scenario)) => Verdict {
                property,
                passed: false,
                summary: format!("{}, {diff}.", capitalized(&sched.context)),
                failing_schedule: Some(sched.description.clone()),
                reproduce: Some(scenario),
            },
            None => Verdict {
                property,
                passed: true,
                summary: passed_summary(property, tried, &landmarks),
                failing_schedule: None,
                reproduce: None,
            },
        });
    }
    Ok(Report {
        controller: doc.name,
        seed,
        runs,
        verdicts,
    })
}

/// The kinds a controller's end state is read from.
struct Kinds {
    primary: Kind,
    owned: Vec<Kind>,
}

fn refusal(file: &str, message: String) -> Diagnostic {
    Diagnostic {
        file: file.to_string(),
        line: 1,
        col: 1,
        severity: Severity::Error,
        message,
        field: None,
    }
}

/// The controller to check: the one named, or the file's only one.
fn pick<'a>(
    file: &str,
    decoded: &'a Decoded,
    controller: Option<&str>,
) -> Result<&'a ControllerDoc, Vec<Diagnostic>> {
    let names: Vec<&str> = decoded
        .controllers
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let message = match (controller, decoded.controllers.as_slice()) {
        (Some(name), all) => match all.iter().find(|c| c.name == name) {
            Some(c) => return Ok(c),
            None if all.is_empty() => {
                format!("the file has no Controller document (kubeloop.dev/v1alpha1), so no controller \"{name}\"")
            }
            None => format!(
                "the file has no controller \"{name}\" (it has: {})",
                names.join(", ")
            ),
        },
        (None, [only]) => return Ok(only),
        (None, []) => {
            "the file has no Controller document (kubeloop.dev/v1alpha1) to check".to_string()
        }
        (None, _) => format!(
            "the file has {} controllers ({}): name the one to check",
            names.len(),
            names.join(", ")
        ),
    };
    Err(vec![refusal(file, message)])
}

/// What one run showed.
struct RunResult {
    end: EndState,
    /// Why it never settled, in words; None when it did.
    unsettled: Option<String>,
    /// When each object of an owned kind the controller created was created, in order.
    creates: Vec<(Millis, String)>,
    first_pass: Option<Millis>,
    first_write: Option<Millis>,
    max_requests: usize,
    /// The primaries at the end, as `Kind/namespace/name`.
    primaries: Vec<String>,
    /// The objects of owned kinds a primary controls at the end (none terminating), as
    /// `Kind/namespace/name`, with that primary.
    children: Vec<(String, String)>,
}

/// What the trace says the controller did, read as the run goes (the trace is bounded).
#[derive(Default)]
struct Watcher {
    read_to: u64,
    first_pass: Option<Millis>,
    first_write: Option<Millis>,
    last_write: Option<(Millis, String)>,
    writes: usize,
    /// The error of the latest pass, when it failed.
    failing: Option<String>,
    max_requests: usize,
    creates: Vec<(Millis, String)>,
}

impl Watcher {
    fn read(&mut self, s: &Session, component: &str) {
        for e in s.sim.trace().since(self.read_to) {
            self.read_to = e.seq;
            match &e.kind {
                TraceKind::Reconcile(tr) if &*tr.component == component => {
                    let ReconcileTrace {
                        record, requests, ..
                    } = &**tr;
                    self.first_pass.get_or_insert(e.t);
                    self.max_requests = self.max_requests.max(*requests);
                    // A clean pass's record says what it returned; anything else is the
                    // error the pass ended with.
                    let decided = record.as_ref().map(|r| r.desired.as_str()).unwrap_or("");
                    if decided.starts_with(crate::sim::controllers::script::CLEAN_PASS) {
                        self.failing = None;
                    } else {
                        self.failing = Some(decided.to_string());
                    }
                }
                TraceKind::Api(tr) if &*tr.actor == component && tr.code < 300 => {
                    let ApiTrace { verb, object, .. } = &**tr;
                    self.first_write.get_or_insert(e.t);
                    self.writes += 1;
                    self.last_write = Some((e.t, format!("{verb} {object}")));
                    if *verb == "create" {
                        self.creates.push((e.t, object.to_string()));
                    }
                }
                _ => {}
            }
        }
    }
}

/// A fingerprint of the objects of the controller's kinds: it changes with every write to them.
fn activity(s: &Session, kinds: &Kinds) -> (usize, u64) {
    let api = s.sim.api();
    std::iter::once(kinds.primary)
        .chain(kinds.owned.iter().copied())
        .flat_map(|k| api.list(k))
        .fold((0, 0), |(n, rv), o| (n + 1, rv.max(o.meta().rv())))
}

/// Runs `s` until it has been quiet for `quiet` after `quiet_from`, or gives up at
/// [`RUN_CAP`] after it.
fn run(
    mut s: Session,
    id: &ComponentId,
    kinds: &Kinds,
    quiet_from: Millis,
    quiet: Millis,
) -> RunResult {
    let component = id.name();
    let component = component.as_str();
    let mut watcher = Watcher::default();
    let mut mark = activity(&s, kinds);
    let mut last_change: Millis = 0;
    let mut events = 0;
    let cap = quiet_from + RUN_CAP;
    let mut t = 0;
    let unsettled = loop {
        t += SECOND;
        let adv = s.advance_to(t, RUN_EVENTS.saturating_sub(events));
        events += adv.events;
        watcher.read(&s, component);
        let now_mark = activity(&s, kinds);
        if now_mark != mark {
            mark = now_mark;
            last_change = t;
        }
        if let Some((at, _)) = &watcher.last_write {
            last_change = last_change.max(*at);
        }
        if watcher.writes > RUN_WRITES {
            let (at, what) = watcher.last_write.clone().unwrap_or_default();
            break Some(format!(
                "it keeps writing ({} writes by {}, the last: {what})",
                watcher.writes,
                format_duration(at)
            ));
        }
        if adv.capped {
            break Some(format!(
                "it kept the cluster busy past {} simulation events by {}",
                RUN_EVENTS,
                format_duration(s.sim.now())
            ));
        }
        let calm_since = last_change.max(quiet_from);
        let running = s.sim.is_running(id);
        if t >= calm_since + quiet && watcher.failing.is_none() && running {
            break None;
        }
        if t >= cap {
            break Some(match (&watcher.failing, &watcher.last_write) {
                (Some(error), _) => format!("its passes keep failing: {error}"),
                (None, Some((at, what))) if *at + quiet > t => {
                    format!(
                        "it keeps writing (the last write: {what} at {})",
                        format_duration(*at)
                    )
                }
                _ if !running => "the controller is not running".to_string(),
                _ => format!(
                    "the objects it owns keep changing (still at {})",
                    format_duration(last_change)
                ),
            });
        }
    };
    let api = s.sim.api();
    let primaries = api
        .list(kinds.primary)
        .map(|o| o.key().to_string())
        .collect();
    let children = kinds
        .owned
        .iter()
        .flat_map(|&k| api.list(k))
        .filter(|o| o.meta().deletion_timestamp.is_none())
        .filter_map(|o| {
            let owner = o.meta().controller_ref()?;
            (owner.kind == kinds.primary.as_str()).then(|| {
                let ns = &o.meta().namespace;
                (
                    o.key().to_string(),
                    format!("{}/{ns}/{}", owner.kind, owner.name),
                )
            })
        })
        .collect();
    RunResult {
        end: EndState::of(&s, kinds.primary, &kinds.owned),
        primaries,
        children,
        unsettled,
        creates: watcher.creates,
        first_pass: watcher.first_pass,
        first_write: watcher.first_write,
        max_requests: watcher.max_requests,
    }
}

/// Why a fault run fails against the fault-free run `base`, if it does.
fn judge(r: &RunResult, base: &RunResult) -> Option<String> {
    let diff = r.end.difference(&base.end);
    // Duplicates say more than "it never settles" (duplicates often keep a status moving).
    if let Some(d) = diff
        .as_ref()
        .filter(|_| r.end.owned_count() > base.end.owned_count())
    {
        return Some(d.clone());
    }
    if let Some(why) = &r.unsettled {
        return Some(format!("it never settles: {why}"));
    }
    diff
}

/// Where the battery is placed, read from the fault-free run.
fn landmarks(base: &RunResult, component: &str, kinds: &Kinds) -> Landmarks {
    let first_pass = base.first_pass.unwrap_or(0);
    let first_write = base.first_write.unwrap_or(first_pass);
    // The first object of an owned kind it created that a primary still controls at the end.
    let child = base.creates.iter().find_map(|(at, object)| {
        let (_, owner) = base.children.iter().find(|(c, _)| c == object)?;
        let key = ObjectKey::parse_ref(object).ok()?;
        kinds.owned.contains(&key.kind).then(|| {
            (
                Child {
                    kind: key.kind,
                    namespace: key.namespace.to_string(),
                    name: key.name.to_string(),
                    created_at: *at,
                },
                owner.clone(),
            )
        })
    });
    let primary = child
        .as_ref()
        .map(|(_, owner)| owner.clone())
        .or_else(|| base.primaries.first().cloned());
    Landmarks {
        component: component.to_string(),
        first_pass,
        first_write,
        child: child.map(|(c, _)| c),
        primary,
        max_requests: base.max_requests,
    }
}

fn passed_summary(property: Property, tried: usize, m: &Landmarks) -> String {
    let runs = |n: usize| format!("{n} run{}", if n == 1 { "" } else { "s" });
    match property {
        Property::Convergent => format!(
            "Ends where the fault-free run ends{} ({}).",
            if m.child.is_some() {
                " with a child deleted by hand, after a restart and with a second writer racing its writes"
            } else {
                " after a restart and with a second writer racing its writes"
            },
            runs(tried)
        ),
        Property::LevelTriggered => format!(
            "Still gets there when its watch events are lost and its cache is relisted ({}).",
            runs(tried)
        ),
        Property::Idempotent if tried == 0 => {
            "Sends no requests, so a crash cannot leave a pass half done.".to_string()
        }
        Property::Idempotent => format!(
            "Crashed in the middle of a pass after each of its requests, it makes no duplicates and gets there ({}).",
            runs(tried)
        ),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
