//! A playground session: the simulation plus the loaded scenario (timeline and checks), and the
//! learner's actions — apply, delete, kubectl, faults. The UI, the CLI, the embed API and the tests
//! all act through this one type, so they cannot disagree about what an action means.

use serde_json::Value as Json;

use super::api::types::{Kind, Millis, Node, NodeStatus, Object, ObjectMeta, StringMap};
use super::api::ApiRequest;
use super::faults::Fault;
use super::input::decode;
use super::input::diagnostic::{Diagnostic, Severity};
use super::kubectl::{self, apply, misc::evaluate_wait, ApplyReport, CommandOutput};
use super::machinery::trace::TraceKind;
use super::progress::{self, LearnerAction, TriggerState, TryThisProgress};
use super::run::{Act, Entry, Moment, Replayer};
use super::scenario::{self, Scenario, StepAction, TimedAction, Trigger, Wait};
use super::time::parse_duration;
use super::world::{Sim, SimConfig};

/// The seed used when neither the scenario nor the caller names one.
pub const DEFAULT_SEED: u64 = 1;

/// A scenario check's state.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckStatus {
    pub name: String,
    /// None while undecided.
    pub passed: Option<bool>,
    pub message: String,
    /// When it was decided.
    pub decided_at: Option<Millis>,
    /// While its trigger has not happened: what it waits for, in words ("after you delete
    /// every web pod"). None once it watches.
    pub waiting_for: Option<String>,
    /// When its trigger happened (it watches from then, plus its delay).
    pub armed_at: Option<Millis>,
}

#[derive(Clone, Debug)]
struct CheckState {
    name: String,
    wait: Wait,
    /// What must have happened before it watches (all of it).
    after: Vec<Trigger>,
    /// How long after its trigger it starts watching.
    delay: Millis,
    status: CheckStatus,
}

/// A try-this step as the lesson card shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TryThisStatus {
    /// Offered now: what it waits for has happened.
    pub enabled: bool,
    /// When it was done (by its button or by anything with its effect).
    pub done_at: Option<Millis>,
    /// When the lesson's own timeline performs it.
    pub at: Option<Millis>,
    /// While not offered: what it waits for, in words.
    pub waiting_for: Option<String>,
}

/// The simulation and everything loaded into it.
pub struct Session {
    /// The simulation (read it freely; change it only through the session's methods).
    pub sim: Sim,
    /// The scenario document (defaults when the text had none).
    pub scenario: Scenario,
    /// Where the scenario came from, for diagnostics.
    pub file: String,
    steps: Vec<TimedAction>,
    next_step: usize,
    /// When each timeline step (`spec.steps[i]`) ran.
    steps_run: Vec<Option<Millis>>,
    checks: Vec<CheckState>,
    try_this: Vec<TryThisProgress>,
    /// Whether try-this steps run on the lesson's own timeline, at their `at:` (headless runs,
    /// and "play the lesson" in the page): see [`Session::script_try_this`].
    scripted: bool,
    /// Nesting of actions being performed (kubectl apply applies inside kubectl): only the
    /// outermost learner action is compared with the try-this steps.
    acting: u32,
    /// The console's kubeconfig: the namespace `kubectl config set-context` chose.
    pub kubeconfig: kubectl::config::KubeConfig,
    /// What the learner did, in order, each at its moment ([`crate::sim::run`]).
    journal: Vec<Entry>,
    /// The scenario text the session was loaded from (none: the empty playground).
    origin: Option<String>,
}

impl Session {
    /// An empty cluster of three default nodes, as the playground opens.
    pub fn new(seed: u64) -> Session {
        let mut s = Session::bare(seed, Scenario::default(), "playground.yaml");
        s.create_default_nodes(&scenario::NodeShorthand::default());
        s
    }

    fn bare(seed: u64, scenario: Scenario, file: &str) -> Session {
        Session {
            sim: Sim::new(SimConfig {
                seed,
                ..SimConfig::default()
            }),
            scenario,
            file: file.to_string(),
            steps: Vec::new(),
            next_step: 0,
            steps_run: Vec::new(),
            checks: Vec::new(),
            try_this: Vec::new(),
            scripted: false,
            acting: 0,
            kubeconfig: Default::default(),
            journal: Vec::new(),
            origin: None,
        }
    }

    /// The whole session as it is now, to go on from here more than once (time travel's
    /// snapshots); None when the simulation cannot be copied ([`Sim::snapshot`]).
    pub fn snapshot(&self) -> Option<Session> {
        Some(Session {
            sim: self.sim.snapshot()?,
            scenario: self.scenario.clone(),
            file: self.file.clone(),
            steps: self.steps.clone(),
            next_step: self.next_step,
            steps_run: self.steps_run.clone(),
            checks: self.checks.clone(),
            try_this: self.try_this.clone(),
            scripted: self.scripted,
            acting: self.acting,
            kubeconfig: self.kubeconfig.clone(),
            journal: self.journal.clone(),
            origin: self.origin.clone(),
        })
    }

    /// A session on a detached copy of this one's store (nothing runs in it): what an action
    /// would change, worked out without touching this simulation.
    fn detached(&self, sim: Sim) -> Session {
        let mut s = Session::bare(sim.config().seed, Scenario::default(), &self.file);
        s.sim = sim;
        // Never compared with steps: it has none, and nothing it does is the learner's.
        s.acting = 1;
        s
    }

    /// Loads a scenario file: its objects are applied at t=0, its steps scheduled, its checks armed.
    /// Any error diagnostic refuses the whole file (nothing half-applied).
    pub fn load(
        file: &str,
        text: &str,
        seed_override: Option<u64>,
    ) -> Result<Session, Vec<Diagnostic>> {
        let decoded = decode::decode_manifests(file, text);
        let mut diags = decoded.diagnostics.clone();
        let mut scenario = Scenario::default();
        if let Some((doc, ydoc)) = &decoded.scenario {
            match scenario::decode_scenario(doc) {
                Ok(s) => scenario = s,
                Err(e) => {
                    let span = ydoc.span_of(&e.field);
                    diags.push(Diagnostic {
                        file: file.to_string(),
                        line: span.line,
                        col: span.col,
                        severity: Severity::Error,
                        message: e.message,
                        field: Some(e.field),
                    });
                }
            }
        }
        if diags.iter().any(|d| d.severity == Severity::Error) {
            return Err(diags);
        }
        let seed = seed_override.or(scenario.spec.seed).unwrap_or(DEFAULT_SEED);
        let mut s = Session::bare(seed, scenario.clone(), file);
        s.origin = Some(text.to_string());
        // The file was decoded with the add-ons' kinds served (`decode::addon_crds`).
        for addon in &scenario.spec.addons {
            match addon.as_str() {
                "kro" => s.sim.install_kro(),
                "postgres-operator" => s.sim.install_postgres_operator(),
                _ => {}
            }
        }
        let has_nodes = decoded
            .objects
            .iter()
            .any(|o| o.object.kind() == Kind::Node);
        match (&scenario.spec.nodes, has_nodes) {
            (Some(n), _) => s.create_default_nodes(n),
            (None, false) => s.create_default_nodes(&scenario::NodeShorthand::default()),
            (None, true) => {}
        }
        let report = apply::apply_decoded(&mut s.sim, file, decoded);
        if !report.ok {
            return Err(report.diagnostics);
        }
        // decode_scenario checked all of this already; a Scenario built in code is refused here.
        let refused = |field: Option<String>, message: String| {
            vec![Diagnostic {
                file: file.to_string(),
                line: 1,
                col: 1,
                severity: Severity::Error,
                message,
                field,
            }]
        };
        s.steps = scenario
            .timeline()
            .map_err(|e| refused(Some(e.field), e.message))?;
        s.steps_run = vec![None; scenario.spec.steps.len()];
        for (i, c) in scenario.spec.checks.iter().enumerate() {
            let wait = scenario::parse_wait(&c.wait).map_err(|m| refused(None, m))?;
            let after = scenario
                .check_triggers(i)
                .map_err(|e| refused(Some(e.field), e.message))?;
            let delay = c
                .delay
                .as_deref()
                .map(parse_duration)
                .transpose()
                .map_err(|m| refused(Some(format!("spec.checks[{i}].delay")), m))?
                .unwrap_or(0);
            s.checks.push(CheckState {
                name: c.name.clone(),
                wait,
                after,
                delay,
                status: CheckStatus {
                    name: c.name.clone(),
                    passed: None,
                    message: "waiting".into(),
                    decided_at: None,
                    waiting_for: None,
                    armed_at: None,
                },
            });
        }
        for (i, t) in scenario.spec.try_this.iter().enumerate() {
            let after = scenario
                .try_this_triggers(i)
                .map_err(|e| refused(Some(e.field), e.message))?;
            s.try_this.push(TryThisProgress {
                after,
                at: t.at.as_deref().and_then(|a| parse_duration(a).ok()),
                done_at: None,
                action: t.action().ok(),
            });
        }
        s.evaluate_checks();
        Ok(s)
    }

    fn create_default_nodes(&mut self, n: &scenario::NodeShorthand) {
        // decode_scenario refuses a count over the limit; a Scenario built in code is clamped
        // here rather than looping billions of times on creates the API server would refuse.
        let count = n.count.min(super::api::limits::MAX_NODES as u32);
        for i in 1..=count {
            let name = format!("node-{i}");
            let mut labels: StringMap = n.labels.clone().into_iter().collect();
            for (k, v) in super::controllers::kubelet::default_node_labels(&name) {
                labels.insert(k, v);
            }
            if !n.zones.is_empty() {
                let zone = &n.zones[(i as usize - 1) % n.zones.len()];
                labels.insert(super::api::storage::ZONE_LABEL, zone.clone());
            }
            let resources: StringMap = [
                ("cpu".to_string(), n.cpu.clone()),
                ("memory".to_string(), n.memory.clone()),
                ("pods".to_string(), n.pods.clone()),
            ]
            .into();
            let node = Node {
                metadata: ObjectMeta {
                    name: name.into(),
                    labels,
                    ..Default::default()
                },
                status: NodeStatus {
                    capacity: resources.clone(),
                    allocatable: resources,
                    ..Default::default()
                },
                ..Default::default()
            };
            let _ = self.sim.submit(ApiRequest::Create(Object::from(node)));
        }
    }

    /// `kubectl apply -f` of the editor's text. The whole text is checked first and then applied
    /// against a dry run of the store, so a rejected document changes nothing. Recorded in the
    /// trace as an `apply -f` command.
    pub fn apply_text(&mut self, file: &str, text: &str) -> ApplyReport {
        let at = self.moment();
        let watch = self.watch_begin();
        let report = apply::apply_scenario_text(&mut self.sim, file, text);
        self.log_command("apply -f", &report);
        self.watch_end(watch, LearnerAction::Apply);
        self.journal(
            at,
            Act::Apply {
                file: file.to_string(),
                text: text.to_string(),
            },
            report.ok,
        );
        report
    }

    /// Journals a learner's action (not one a scenario's timeline performs).
    fn journal(&mut self, at: Moment, act: Act, ok: bool) {
        if self.acting == 0 {
            self.journal.push(Entry { at, act, ok });
        }
    }

    /// The scenario text this session was loaded from; `None` for the empty playground.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// What the learner did since the session started, in order ([`crate::sim::run::replay`]
    /// does it again).
    pub fn actions(&self) -> &[Entry] {
        &self.journal
    }

    fn log_command(&mut self, cmd: &str, report: &ApplyReport) {
        let mut output = report.lines.join("\n");
        for d in report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
        {
            output.push_str(&format!("\n{d}"));
        }
        let _ = self.sim.record_command(cmd, output.trim(), report.ok);
    }

    /// `kubectl delete -f` of the editor's text.
    pub fn delete_text(&mut self, file: &str, text: &str) -> ApplyReport {
        let at = self.moment();
        let watch = self.watch_begin();
        let report = apply::delete_text(&mut self.sim, file, text);
        self.log_command("delete -f", &report);
        self.watch_end(watch, LearnerAction::Delete);
        self.journal(
            at,
            Act::Delete {
                file: file.to_string(),
                text: text.to_string(),
            },
            report.ok,
        );
        report
    }

    /// Injects a fault now.
    pub fn inject(&mut self, fault: Fault) -> Result<String, String> {
        let at = self.moment();
        let watch = self.watch_begin();
        let result = self.sim.inject(fault.clone());
        self.watch_end(
            watch.filter(|_| result.is_ok()),
            LearnerAction::Fault(&fault),
        );
        self.journal(at, Act::Fault(fault), result.is_ok());
        result
    }

    /// Runs a kubectl command line with standard input (`apply -f -`), records it in the trace
    /// with its output, and, as a learner action, compares it with the lesson's try-this steps.
    pub fn kubectl_with_input(&mut self, cmd: &str, input: Option<&str>) -> CommandOutput {
        // A console command is a learner action like any other: it can do a lesson's step.
        let at = self.moment();
        let watch = self.watch_begin();
        let out = kubectl::execute_in(&mut self.sim, &mut self.kubeconfig, cmd, input);
        self.watch_end(watch.filter(|_| out.ok), LearnerAction::Kubectl(cmd));
        self.journal(
            at,
            Act::Kubectl(cmd.to_string(), input.map(str::to_string)),
            out.ok,
        );
        let text = if out.ok {
            out.stdout.clone()
        } else {
            out.stderr.clone()
        };
        let _ = self.sim.record_command(
            &format!(
                "kubectl {}",
                cmd.trim().trim_start_matches("kubectl ").trim()
            ),
            text.trim_end(),
            out.ok,
        );
        out
    }

    /// Runs a kubectl command line (the playground's subset), with no standard input: see
    /// [`Session::kubectl_with_input`], which records it and compares it with the lesson's steps.
    pub fn kubectl(&mut self, cmd: &str) -> CommandOutput {
        self.kubectl_with_input(cmd, None)
    }

    /// Advances simulated time to `t`, running the timeline on the way (scenario steps, and
    /// try-this steps when scripted) and deciding checks.
    pub fn advance_to(&mut self, t: Millis, max_events: usize) -> super::world::Advanced {
        let mut total = super::world::Advanced::default();
        loop {
            self.run_due();
            let target = self.next_due().filter(|&at| at <= t).unwrap_or(t);
            let budget = max_events.saturating_sub(total.events);
            let adv = self.sim.advance_to(target, budget);
            total.events += adv.events;
            self.evaluate_checks();
            if adv.capped {
                total.capped = true;
                return total;
            }
            if target >= t {
                self.run_due();
                return total;
            }
        }
    }

    /// Processes one simulation event (the UI's Step).
    pub fn step(&mut self) -> bool {
        self.run_due();
        let next = self.sim.next_event_time();
        if let (Some(due), Some(n)) = (self.next_due(), next) {
            if due <= n {
                self.advance_to(due, usize::MAX);
                return true;
            }
        }
        let stepped = self.sim.step();
        self.evaluate_checks();
        stepped
    }

    /// When the timeline next has something to do after now: a scenario step, or (scripted) a
    /// try-this step whose time is still to come.
    fn next_due(&self) -> Option<Millis> {
        let now = self.sim.now();
        let step = self.steps.get(self.next_step).map(|s| s.at);
        let try_this = self
            .scripted
            .then(|| {
                self.try_this
                    .iter()
                    .filter(|p| p.done_at.is_none())
                    .filter_map(|p| p.at)
                    .filter(|&at| at > now)
                    .min()
            })
            .flatten();
        step.into_iter().chain(try_this).min()
    }

    /// Runs what the timeline has due now: scenario steps first (in file order at equal times),
    /// then, when scripted, each try-this step whose time has come as soon as it is offered.
    fn run_due(&mut self) {
        let now = self.sim.now();
        while let Some(step) = self.steps.get(self.next_step).filter(|s| s.at <= now) {
            let step = step.clone();
            self.next_step += 1;
            let _ = self.perform(step.action, "step");
            if let Some(run) = self.steps_run.get_mut(step.index) {
                *run = Some(now);
            }
            self.evaluate_checks();
        }
        if !self.scripted {
            return;
        }
        // The timeline's, not the learner's: nothing here is journaled.
        self.acting += 1;
        self.run_scripted_try_this(now);
        self.acting -= 1;
    }

    fn run_scripted_try_this(&mut self, now: Millis) {
        // One at a time, in order of their times: doing one can offer the next.
        while let Some(i) = (0..self.try_this.len())
            .filter(|&i| {
                let p = &self.try_this[i];
                p.done_at.is_none() && p.at.is_some_and(|at| at <= now)
            })
            .filter(|&i| self.try_this_enabled(i))
            .min_by_key(|&i| (self.try_this[i].at, i))
        {
            if self.run_try_this(i).is_err() {
                // Refused (its target is gone): the timeline does not try again.
                self.try_this_done(i);
            }
        }
    }

    /// Runs one action now and says what it did (Ok) or why it was refused (Err).
    fn perform(&mut self, action: StepAction, origin: &str) -> Result<String, String> {
        // The timeline's own steps are the world, not the learner: no try-this step is done by
        // them (a lesson may script the very fault it later asks the learner for).
        self.acting += 1;
        let result = self.perform_unwatched(action, origin);
        self.acting -= 1;
        result
    }

    fn perform_unwatched(&mut self, action: StepAction, origin: &str) -> Result<String, String> {
        match action {
            StepAction::Fault(f) => self.inject(f),
            StepAction::Kubectl(cmd) => {
                let out = self.kubectl(&cmd);
                if out.ok {
                    Ok(out.stdout)
                } else {
                    Err(out.stderr)
                }
            }
            StepAction::Apply(text) => {
                let file = format!("{} ({origin})", self.file);
                let report = self.apply_text(&file, &text);
                if report.ok {
                    Ok(report.lines.join("\n"))
                } else {
                    Err(report
                        .diagnostics
                        .iter()
                        .filter(|d| d.severity == Severity::Error)
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join("\n"))
                }
            }
        }
    }

    /// Performs the lesson's one-click action `spec.tryThis[index]` now, as the learner's click
    /// does: what it did (Ok) or why it was refused (Err). A step not offered yet is refused
    /// with what it waits for.
    pub fn run_try_this(&mut self, index: usize) -> Result<String, String> {
        let t = self
            .scenario
            .spec
            .try_this
            .get(index)
            .ok_or_else(|| format!("this scenario has no tryThis[{index}]"))?;
        let action = t.action()?;
        if let Some(why) = self.try_this_waiting_for(index) {
            return Err(format!("not yet: this step comes {why}"));
        }
        let refused = t.refused;
        let result = match self.perform(action, "try this") {
            Err(e) if refused => Ok(e),
            r => r,
        };
        if result.is_ok() {
            self.try_this_done(index);
        }
        result
    }

    /// Records that the learner did `spec.tryThis[index]` (its button succeeded) now.
    pub fn try_this_done(&mut self, index: usize) {
        let at = self.moment();
        self.journal(at, Act::TryThisDone(index), true);
        let now = self.sim.now();
        if let Some(p) = self.try_this.get_mut(index) {
            if p.done_at.is_none() {
                p.done_at = Some(now);
                self.evaluate_checks();
            }
        }
    }

    /// From now on the lesson's own timeline performs each try-this step the learner has not
    /// done, at its `at:` (or, when that has passed, as soon as the step is offered): headless
    /// runs (`kubeloop run`, the tests) and "play the lesson" in the page. Returns how many steps
    /// the timeline will perform; calling it again changes nothing.
    pub fn script_try_this(&mut self) -> usize {
        let at = self.moment();
        self.journal(at, Act::PlayLesson, true);
        self.scripted = true;
        self.try_this
            .iter()
            .filter(|p| p.done_at.is_none() && p.at.is_some())
            .count()
    }

    /// Whether try-this steps run on the lesson's own timeline ([`Session::script_try_this`]).
    pub fn is_scripted(&self) -> bool {
        self.scripted
    }

    /// Scenario steps not yet run.
    pub fn pending_steps(&self) -> &[TimedAction] {
        &self.steps[self.next_step.min(self.steps.len())..]
    }

    /// Whether the timeline still has something to do: a scenario step, or (scripted) a try-this
    /// step that can still be offered.
    pub fn has_pending_actions(&self) -> bool {
        !self.pending_steps().is_empty()
            || (self.scripted
                && (0..self.try_this.len()).any(|i| {
                    self.try_this[i].done_at.is_none()
                        && self.try_this[i].at.is_some()
                        && !matches!(
                            self.triggers_state(&self.try_this[i].after),
                            TriggerState::Never(_)
                        )
                }))
    }

    /// The checks and their states.
    pub fn checks(&self) -> Vec<CheckStatus> {
        self.checks.iter().map(|c| c.status.clone()).collect()
    }

    /// The try-this steps' states, in order.
    pub fn try_this_statuses(&self) -> Vec<TryThisStatus> {
        (0..self.try_this.len())
            .map(|i| {
                let waiting_for = self.try_this_waiting_for(i);
                TryThisStatus {
                    enabled: waiting_for.is_none(),
                    done_at: self.try_this[i].done_at,
                    at: self.try_this[i].at,
                    waiting_for,
                }
            })
            .collect()
    }

    /// True when every check has been decided.
    pub fn checks_decided(&self) -> bool {
        self.checks.iter().all(|c| c.status.passed.is_some())
    }

    /// Whether `spec.tryThis[i]` is offered now.
    fn try_this_enabled(&self, i: usize) -> bool {
        self.try_this_waiting_for(i).is_none()
    }

    /// What `spec.tryThis[i]` still waits for, in words (None: offered now).
    fn try_this_waiting_for(&self, i: usize) -> Option<String> {
        let p = self.try_this.get(i)?;
        match self.triggers_state(&p.after) {
            TriggerState::Happened(_) => None,
            TriggerState::Pending(what) => Some(what),
            TriggerState::Never(why) => Some(format!("never: {why}")),
        }
    }

    /// Whether everything in `after` has happened (and when the last of it did).
    fn triggers_state(&self, after: &[Trigger]) -> TriggerState {
        let now = self.sim.now();
        let mut latest = 0;
        let mut first_pending = None;
        for t in after {
            let happened = match *t {
                Trigger::At(at) if at <= now => Ok(at),
                Trigger::At(at) => Err(TriggerState::Pending(format!(
                    "at {}",
                    super::time::clock(at)
                ))),
                Trigger::Step(i) => self.steps_run.get(i).copied().flatten().ok_or_else(|| {
                    let at = self.scenario.spec.steps.get(i).map(|s| s.at.clone());
                    TriggerState::Pending(format!(
                        "after the lesson's step at {}",
                        at.as_deref()
                            .and_then(|a| parse_duration(a).ok())
                            .map(super::time::clock)
                            .unwrap_or_default()
                    ))
                }),
                Trigger::TryThis(i) => {
                    self.try_this.get(i).and_then(|p| p.done_at).ok_or_else(|| {
                        let label = self
                            .scenario
                            .spec
                            .try_this
                            .get(i)
                            .map(|t| progress::lower_first(&t.label))
                            .unwrap_or_default();
                        TriggerState::Pending(format!("after you {label}"))
                    })
                }
                Trigger::Check(i) => {
                    let c = self.checks.get(i).map(|c| &c.status);
                    match c {
                        Some(CheckStatus {
                            passed: Some(true),
                            decided_at: Some(t),
                            ..
                        }) => Ok(*t),
                        Some(CheckStatus {
                            passed: Some(false),
                            name,
                            ..
                        }) => Err(TriggerState::Never(format!("“{name}” failed"))),
                        Some(c) => Err(TriggerState::Pending(format!("after “{}” passes", c.name))),
                        None => Err(TriggerState::Pending(String::new())),
                    }
                }
            };
            match happened {
                Ok(t) => latest = latest.max(t),
                // A failure anywhere decides it; otherwise the first thing still to come is
                // what the learner reads.
                Err(never @ TriggerState::Never(_)) => return never,
                Err(pending) => {
                    first_pending.get_or_insert(pending);
                }
            }
        }
        first_pending.unwrap_or(TriggerState::Happened(latest))
    }

    /// Starts a learner action: a detached copy of the simulation as it was, and the try-this
    /// steps on offer, when there is one the action could do.
    pub(crate) fn watch_begin(&mut self) -> Option<(Sim, Vec<usize>)> {
        self.acting += 1;
        if self.acting > 1 {
            return None;
        }
        let offered: Vec<usize> = (0..self.try_this.len())
            .filter(|&i| self.try_this[i].done_at.is_none() && self.try_this_enabled(i))
            .collect();
        (!offered.is_empty()).then(|| (self.sim.detached_copy(), offered))
    }

    /// Ends a learner action: each step that was on offer and whose effect the action had is
    /// done now.
    pub(crate) fn watch_end(
        &mut self,
        before: Option<(Sim, Vec<usize>)>,
        action: LearnerAction<'_>,
    ) {
        self.acting = self.acting.saturating_sub(1);
        let Some((before, offered)) = before else {
            return;
        };
        let real = progress::changes(before.api(), self.sim.api());
        let now = self.sim.now();
        let mut any = false;
        for i in offered {
            if self.has_effect_of(i, &before, &real, action) {
                self.try_this[i].done_at = Some(now);
                any = true;
            }
        }
        if any {
            self.evaluate_checks();
        }
    }

    /// Whether an action that changed `real` (from `before`) did what `spec.tryThis[i]` does.
    fn has_effect_of(
        &self,
        i: usize,
        before: &Sim,
        real: &progress::Changes,
        action: LearnerAction<'_>,
    ) -> bool {
        let Some(step) = self.try_this[i].action.clone() else {
            return false;
        };
        if let StepAction::Fault(f) = &step {
            if !progress::writes_objects(f) {
                return matches!(action, LearnerAction::Fault(g) if progress::same_target(f, g));
            }
        }
        let mut dry = self.detached(before.detached_copy());
        let _ = dry.perform_unwatched(step.clone(), "try this");
        let would = progress::changes(before.api(), dry.sim.api());
        if !would.is_empty() {
            return progress::covers(&would, real);
        }
        // The step changes nothing now (a read, or a change already made): the same command,
        // or the same fault, is what doing it means.
        match (&step, action) {
            (StepAction::Kubectl(a), LearnerAction::Kubectl(b)) => {
                let gist = progress::command_gist(a);
                gist.is_some() && gist == progress::command_gist(b)
            }
            (StepAction::Fault(f), LearnerAction::Fault(g)) => progress::same_target(f, g),
            _ => false,
        }
    }

    fn evaluate_checks(&mut self) {
        // Runs after every simulation step: with every check decided (or none, as in a run
        // without a lesson) there is nothing to arm, wait for or record.
        if self.checks.iter().all(|c| c.status.passed.is_some()) {
            return;
        }
        let now = self.sim.now();
        let mut decided = Vec::new();
        // A check can start the moment another passes: go round until nothing changes (each
        // round arms or decides at least one check, so at most twice their number).
        for _ in 0..=2 * self.checks.len() {
            let mut changed = false;
            for i in 0..self.checks.len() {
                if self.checks[i].status.passed.is_some() {
                    continue;
                }
                if self.checks[i].status.armed_at.is_none() {
                    match self.triggers_state(&self.checks[i].after) {
                        TriggerState::Happened(t) => {
                            let c = &mut self.checks[i].status;
                            c.armed_at = Some(t);
                            c.waiting_for = None;
                            changed = true;
                        }
                        TriggerState::Pending(what) => {
                            let c = &mut self.checks[i].status;
                            c.message =
                                format!("waits until {}", what.trim_start_matches("after "));
                            c.waiting_for = Some(what);
                            continue;
                        }
                        TriggerState::Never(why) => {
                            let c = &mut self.checks[i].status;
                            c.passed = Some(false);
                            c.message = format!("never started: {why}");
                            c.decided_at = Some(now);
                            c.waiting_for = None;
                            decided.push((c.name.clone(), false, c.message.clone()));
                            changed = true;
                            continue;
                        }
                    }
                }
                let c = &mut self.checks[i];
                let start = c.status.armed_at.unwrap_or(0) + c.delay;
                if now < start {
                    c.status.message = format!("starts at {}", super::time::clock(start));
                    continue;
                }
                match evaluate_wait(&self.sim, &c.wait) {
                    Ok(()) => {
                        c.status.passed = Some(true);
                        c.status.message = format!("condition met at {}", super::time::clock(now));
                        c.status.decided_at = Some(now);
                        decided.push((c.name.clone(), true, c.status.message.clone()));
                        changed = true;
                    }
                    Err(why) => {
                        if now >= start + c.wait.timeout {
                            c.status.passed = Some(false);
                            c.status.message = format!(
                                "timed out after {}: {why}",
                                super::time::format_duration(c.wait.timeout)
                            );
                            c.status.decided_at = Some(now);
                            decided.push((c.name.clone(), false, c.status.message.clone()));
                            changed = true;
                        } else {
                            c.status.message = why;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for (name, passed, message) in decided {
            self.sim.record_check(&name, passed, &message);
        }
    }

    /// The time of the latest deadline among the undecided checks that watch (the CLI runs at
    /// least until then).
    pub fn check_deadline(&self) -> Option<Millis> {
        self.checks
            .iter()
            .filter(|c| c.status.passed.is_none())
            .filter_map(|c| c.status.armed_at.map(|a| a + c.delay + c.wait.timeout))
            .max()
    }

    /// Every object as a Kubernetes `List`, as `kubectl get all -o yaml` shows it (Events excluded).
    pub fn state_json(&self) -> Json {
        let items: Vec<Json> = self
            .sim
            .api()
            .all_but_events()
            .into_iter()
            .map(|o| o.to_json())
            .collect();
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}})
    }

    /// [`Session::state_json`] as YAML.
    pub fn state_yaml(&self) -> String {
        super::input::yaml::to_yaml(&self.state_json())
    }
}

impl Sim {
    /// Records a learner command in the trace. The command and its output are clipped to
    /// [`super::api::limits::MAX_TRACE_TEXT`] so a pasted megabyte or a 20,000-row table cannot make
    /// every trace entry's memory unbounded.
    pub fn record_command(&mut self, command: &str, output: &str, ok: bool) -> u64 {
        let now = self.now();
        let max = super::api::limits::MAX_TRACE_TEXT;
        self.trace_push(
            now,
            None,
            TraceKind::Command {
                command: super::api::limits::clip(command, max).into_owned(),
                output: super::api::limits::clip(output, max).into_owned(),
                ok,
            },
        )
    }

    /// Records a decided check in the trace.
    pub fn record_check(&mut self, name: &str, passed: bool, message: &str) -> u64 {
        let now = self.now();
        self.trace_push(
            now,
            None,
            TraceKind::Check {
                name: name.into(),
                passed,
                message: message.into(),
            },
        )
    }
}

impl Session {
    /// The moment the run is at.
    pub fn moment(&self) -> Moment {
        Moment {
            time: self.sim.now(),
            events: self.sim.events_done(),
        }
    }

    /// Advances to exactly `m`: the events before it processed, the clock at its time. Fails
    /// when the run cannot be there (it is past it, or reaches the time with other events).
    pub fn advance_to_moment(&mut self, m: Moment) -> Result<(), String> {
        let here = self.moment();
        if here.events > m.events || here.time > m.time {
            return Err(format!(
                "the replay is already at {} (after {} events), past {} (after {} events)",
                super::time::clock(here.time),
                here.events,
                super::time::clock(m.time),
                m.events
            ));
        }
        let budget = usize::try_from(m.events - here.events).unwrap_or(usize::MAX);
        self.advance_to(m.time, budget);
        let there = self.moment();
        if there != m {
            return Err(format!(
                "the replay reached {} after {} events where the run was at {} after {}",
                super::time::clock(there.time),
                there.events,
                super::time::clock(m.time),
                m.events
            ));
        }
        Ok(())
    }
}

impl Replayer for Session {
    fn reach(&mut self, m: Moment) -> Result<(), String> {
        self.advance_to_moment(m)
    }

    fn perform(&mut self, act: &Act) -> bool {
        match act {
            Act::Apply { file, text } => self.apply_text(file, text).ok,
            Act::Delete { file, text } => self.delete_text(file, text).ok,
            Act::Kubectl(cmd, input) => self.kubectl_with_input(cmd, input.as_deref()).ok,
            Act::Fault(f) => self.inject(f.clone()).is_ok(),
            Act::TryThisDone(i) => {
                self.try_this_done(*i);
                true
            }
            Act::PlayLesson => {
                self.script_try_this();
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{ObjectKey, LAST_APPLIED};
    use crate::sim::kubectl::apply::three_way_patch;
    use serde_json::json;

    /// The Service `default/name` as stored.
    fn stored_service(s: &Session, name: &str) -> crate::sim::api::types::Service {
        let key = ObjectKey::new(Kind::Service, "default", name);
        s.sim
            .api()
            .get(&key)
            .and_then(|o| o.as_service().cloned())
            .expect("stored")
    }

    #[test]
    fn reapplying_resets_fields_the_manifest_sets_and_keeps_the_rest() {
        let last = json!({"spec": {"replicas": 3, "paused": true}});
        let new = json!({"spec": {"replicas": 3}});
        let live = json!({"spec": {"replicas": 5, "paused": true, "revisionHistoryLimit": 10}});
        let patch = three_way_patch(&last, &new, &live, &new);
        assert_eq!(patch, json!({"spec": {"replicas": 3, "paused": null}}));
    }

    #[test]
    fn a_field_patched_by_kubectl_and_absent_from_the_manifest_survives_a_reapply() {
        let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: nginx, image: nginx, ports: [{containerPort: 80}]}]\n";
        let mut s = Session::new(1);
        assert!(s.apply_text("web.yaml", web).ok);
        let get = |s: &mut Session, path: &str| {
            s.kubectl(&format!("get deployment web -o jsonpath={{{path}}}"))
                .stdout
        };
        // kubectl records what was written: no server defaults, the namespace, empty annotations.
        let key = ObjectKey::new(Kind::Deployment, "default", "web");
        let stored = s.sim.api().get(&key).expect("created");
        let last: Json = serde_json::from_str(&stored.meta().annotations[LAST_APPLIED])
            .expect("the annotation is JSON");
        assert_eq!(
            last["metadata"],
            serde_json::json!({"annotations": {}, "name": "web", "namespace": "default"})
        );
        assert_eq!(last["spec"].get("revisionHistoryLimit"), None);
        assert!(
            s.kubectl(r#"patch deployment web -p '{"spec":{"revisionHistoryLimit":5}}'"#)
                .ok
        );
        let report = s.apply_text("web.yaml", web);
        assert_eq!(report.lines, ["deployment.apps/web unchanged"]);
        assert_eq!(get(&mut s, ".spec.revisionHistoryLimit"), "5");
        // A field the manifest does set is put back.
        s.kubectl("scale deployment web --replicas=4");
        assert_eq!(
            s.apply_text("web.yaml", web).lines,
            ["deployment.apps/web configured"]
        );
        assert_eq!(get(&mut s, ".spec.replicas"), "2");
        assert_eq!(get(&mut s, ".spec.revisionHistoryLimit"), "5");
    }

    #[test]
    fn a_created_service_carries_the_fields_the_api_server_defaults_and_allocates() {
        let mut s = Session::new(1);
        let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec:\n  type: ExternalName\n  externalName: db.example.com\n";
        assert!(s.apply_text("svc.yaml", svc).ok);
        let get = |name: &str| {
            let key = ObjectKey::new(Kind::Service, "default", name);
            let stored = s.sim.api().get(&key).expect("created").to_json();
            (stored["spec"].clone(), stored["status"].clone())
        };
        let (spec, status) = get("web");
        let ip = spec["clusterIP"].as_str().expect("allocated").to_string();
        assert_eq!(spec["clusterIPs"], serde_json::json!([ip]));
        assert_eq!(spec["ipFamilies"], serde_json::json!(["IPv4"]));
        assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
        assert_eq!(spec["sessionAffinity"], "None");
        assert_eq!(spec["internalTrafficPolicy"], "Cluster");
        assert_eq!(spec.get("externalTrafficPolicy"), None);
        assert_eq!(status, serde_json::json!({"loadBalancer": {}}));
        // An ExternalName Service gets no address and no families.
        let (spec, _) = get("db");
        for field in [
            "clusterIP",
            "clusterIPs",
            "ipFamilies",
            "ipFamilyPolicy",
            "internalTrafficPolicy",
        ] {
            assert_eq!(spec.get(field), None, "{field}");
        }
        assert_eq!(spec["sessionAffinity"], "None");
    }

    #[test]
    fn node_port_services_get_a_free_port_in_the_range_keep_it_and_refuse_a_taken_one() {
        let mut s = Session::new(1);
        let svc = |name: &str, node_port: &str| {
            format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec:\n  type: NodePort\n  selector: {{app: web}}\n  ports: [{{port: 80{node_port}}}]\n")
        };
        let node_port = |s: &Session, name: &str| {
            stored_service(s, name).spec.ports[0]
                .node_port
                .expect("allocated")
        };
        assert!(s.apply_text("a.yaml", &svc("a", "")).ok);
        let a = node_port(&s, "a");
        assert!((30086..=32767).contains(&a), "{a} is in the dynamic band");
        let listed = s.kubectl("get svc a").stdout;
        assert!(listed.contains(&format!("80:{a}/TCP")), "{listed}");
        // Re-applied as written: unchanged, the port kept.
        assert_eq!(
            s.apply_text("a.yaml", &svc("a", "")).lines,
            ["service/a unchanged"]
        );
        assert_eq!(node_port(&s, "a"), a);
        // A chosen port must be free and in range.
        let taken = s.apply_text("b.yaml", &svc("b", &format!(", nodePort: {a}")));
        assert!(!taken.ok);
        assert!(
            taken.diagnostics[0].message.ends_with(&format!(
                "spec.ports[0].nodePort: Invalid value: {a}: provided port is already allocated"
            )),
            "{:?}",
            taken.diagnostics
        );
        let outside = s.apply_text("b.yaml", &svc("b", ", nodePort: 8080"));
        assert!(
            outside.diagnostics[0].message.ends_with(
                "provided port is not in the valid range. The range of valid ports is 30000-32767"
            ),
            "{:?}",
            outside.diagnostics
        );
        assert!(s.apply_text("b.yaml", &svc("b", ", nodePort: 30007")).ok);
        assert_eq!(node_port(&s, "b"), 30007);
        // Changed to ClusterIP, a Service gives its node port back.
        assert!(
            s.kubectl(r#"patch svc b -p '{"spec":{"type":"ClusterIP"}}'"#)
                .ok
        );
        assert_eq!(stored_service(&s, "b").spec.ports[0].node_port, None);
    }

    #[test]
    fn services_get_distinct_cluster_ips_keep_them_and_refuse_a_taken_or_foreign_one() {
        let mut s = Session::new(1);
        let svc = |name: &str, ip: &str| {
            format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec:\n  selector: {{app: web}}\n  ports: [{{port: 80}}]\n{ip}")
        };
        let cluster_ip =
            |s: &Session, name: &str| stored_service(s, name).spec.cluster_ip.expect("allocated");
        let in_dynamic_band = |ip: &str| {
            let n = u32::from(ip.parse::<std::net::Ipv4Addr>().expect("an IPv4 address"));
            (0x0A60_0100..0x0A6F_FFFF).contains(&n)
        };
        assert!(s.apply_text("a.yaml", &svc("a", "")).ok);
        assert!(s.apply_text("b.yaml", &svc("b", "")).ok);
        let (a, b) = (cluster_ip(&s, "a"), cluster_ip(&s, "b"));
        assert!(in_dynamic_band(&a) && in_dynamic_band(&b), "{a} {b}");
        // Deleting one and creating another never hands out an address still held.
        assert!(s.kubectl("delete svc a").ok);
        assert!(s.apply_text("c.yaml", &svc("c", "")).ok);
        assert_ne!(cluster_ip(&s, "c"), b);
        // Re-applied as written: unchanged, the address kept.
        assert_eq!(
            s.apply_text("b.yaml", &svc("b", "")).lines,
            ["service/b unchanged"]
        );
        assert_eq!(cluster_ip(&s, "b"), b);
        // A chosen address must be free, in the service CIDR, and an IP.
        let refused = |s: &mut Session, ip: &str| {
            let out = s.apply_text("d.yaml", &svc("d", &format!("  clusterIP: {ip}\n")));
            assert!(!out.ok);
            out.diagnostics[0].message.clone()
        };
        assert!(refused(&mut s, &b).ends_with(&format!(
            "spec.clusterIPs: Invalid value: []string{{\"{b}\"}}: failed to allocate IP {b}: provided IP is already allocated"
        )));
        assert!(refused(&mut s, "1.1.1.1").ends_with(
            "spec.clusterIPs: Invalid value: []string{\"1.1.1.1\"}: failed to allocate IP 1.1.1.1: the provided IP (1.1.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
        ));
        assert!(refused(&mut s, "banana").ends_with(
            "spec.clusterIPs[0]: Invalid value: \"banana\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
        ));
        assert!(
            s.apply_text("d.yaml", &svc("d", "  clusterIP: 10.96.0.10\n"))
                .ok
        );
        assert_eq!(cluster_ip(&s, "d"), "10.96.0.10");
        // Once set, it stays.
        let moved = s.kubectl(r#"patch svc d -p '{"spec":{"clusterIP":"10.96.0.20"}}'"#);
        assert!(
            moved.stderr.ends_with(
                "spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.20\"}: may not change once set\n"
            ),
            "{}",
            moved.stderr
        );
        assert_eq!(cluster_ip(&s, "d"), "10.96.0.10");
    }

    #[test]
    fn the_kubernetes_service_is_there_from_the_start_and_comes_back_when_deleted() {
        let mut s = Session::new(1);
        let svc = s.kubectl("get svc");
        assert_eq!(
            svc.stdout
                .lines()
                .nth(1)
                .map(|l| l.split_whitespace().collect::<Vec<_>>()),
            Some(vec![
                "kubernetes",
                "ClusterIP",
                "10.96.0.1",
                "<none>",
                "443/TCP",
                "0s"
            ]),
            "{}",
            svc.stdout
        );
        let slice = s
            .kubectl("get endpointslice kubernetes --no-headers")
            .stdout;
        assert_eq!(
            slice.split_whitespace().take(4).collect::<Vec<_>>(),
            ["kubernetes", "IPv4", "6443", "172.18.0.2"]
        );
        let label = stored_service(&s, "kubernetes").metadata.labels;
        assert_eq!(
            label.get("provider").map(|v| v.as_str()),
            Some("kubernetes")
        );
        assert!(s.kubectl("delete svc kubernetes").ok);
        assert!(s.kubectl("delete endpointslice kubernetes").ok);
        s.advance_to(s.sim.now() + 10_000, usize::MAX);
        assert_eq!(
            stored_service(&s, "kubernetes").spec.cluster_ip.as_deref(),
            Some("10.96.0.1")
        );
        assert!(s.kubectl("get endpointslice kubernetes").ok);
        // No selector: the EndpointSlice controller never adds the slice of its own.
        let slices = s.kubectl("get endpointslices --no-headers").stdout;
        assert_eq!(slices.lines().count(), 1, "{slices}");
    }

    #[test]
    fn quantities_written_as_numbers_are_accepted_stored_in_canonical_form_and_limits_default_requests(
    ) {
        let mut s = Session::new(1);
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n  - name: a\n    image: nginx\n    resources:\n      requests: {cpu: 0.5, memory: 1e9}\n      limits: {cpu: 1}\n";
        let out = s.apply_text("q.yaml", pod);
        assert!(out.ok, "{:?}", out.diagnostics);
        let got = s
            .kubectl("get pod q -o jsonpath={.spec.containers[0].resources}")
            .stdout;
        assert_eq!(
            got,
            r#"{"limits":{"cpu":"1"},"requests":{"cpu":"500m","memory":"1G"}}"#
        );
        // A Pod's limits without requests request as much (not a template's).
        let limited = "apiVersion: v1\nkind: Pod\nmetadata: {name: lim}\nspec:\n  containers:\n  - name: a\n    image: nginx\n    resources: {limits: {cpu: 1500m, memory: 1.5Gi}}\n";
        assert!(s.apply_text("lim.yaml", limited).ok);
        assert_eq!(
            s.kubectl("get pod lim -o jsonpath={.spec.containers[0].resources.requests}")
                .stdout,
            r#"{"cpu":"1500m","memory":"1536Mi"}"#
        );
        // Labels stay strings only, as in Kubernetes.
        let labelled = "apiVersion: v1\nkind: Pod\nmetadata: {name: l, labels: {tier: 1}}\nspec:\n  containers: [{name: a, image: nginx}]\n";
        let refused = s.apply_text("l.yaml", labelled);
        assert!(refused.diagnostics[0]
            .message
            .ends_with("json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"));
    }

    #[test]
    fn reapplying_leaves_fields_the_user_never_wrote_to_the_server_and_lists_whole() {
        // revisionHistoryLimit was defaulted to 10 and patched to 5: the manifest never said.
        let written = json!({"spec": {"replicas": 3, "ports": [{"port": 80}]}});
        let defaulted = json!({"spec": {"replicas": 3, "revisionHistoryLimit": 10,
            "ports": [{"port": 80, "protocol": "TCP"}]}});
        let live = json!({"spec": {"replicas": 3, "revisionHistoryLimit": 5,
            "ports": [{"port": 80, "protocol": "TCP"}]}});
        assert_eq!(
            three_way_patch(&written, &written, &live, &defaulted),
            json!({})
        );
        let changed = json!({"spec": {"replicas": 3, "ports": [{"port": 81}]}});
        let changed_defaulted = json!({"spec": {"replicas": 3, "revisionHistoryLimit": 10,
            "ports": [{"port": 81, "protocol": "TCP"}]}});
        assert_eq!(
            three_way_patch(&written, &changed, &live, &changed_defaulted),
            json!({"spec": {"ports": [{"port": 81, "protocol": "TCP"}]}})
        );
    }
}
