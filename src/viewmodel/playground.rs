//! The playground's model: the session plus what the page adds around it (play/pause, speed,
//! notices, the trackers behind the loop panel, sequence diagram and chart).
//!
//! It knows nothing of Yew or the DOM, like `examples/game_of_life`'s model: the component owns
//! the animation frame and maps it to [`Playground::frame`]; buttons map to the other methods.
//! That keeps the whole behaviour testable natively.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

mod runs;
pub use runs::Opened;

use super::cluster::{ClusterCache, ClusterView};
use super::console::Console;
use super::events::{event_rows, EventRow};
use super::fault_timeline::FaultTimeline;
use super::history::History;
use super::inspect::OwnershipView;
use super::moments::Moments;
use super::trace_views::{is_heartbeat, LoopTracker, PassBatch, RowBatch, SequenceLog};
use crate::sim::api::types::{Kind, Millis, ObjectKey};
use crate::sim::faults::{Fault, PodTarget};
use crate::sim::handoff::{HandOff, HandOffSearch, HAND_OFF_MAX_EVENTS};
use crate::sim::input::diagnostic::{Diagnostic, Severity};
use crate::sim::kubectl::{ApplyReport, CommandOutput};
use crate::sim::scenario::StepAction;
use crate::sim::session::Session;
use crate::sim::world::Advanced;

/// Most simulation events processed in one animation frame, so the tab never freezes: a frame
/// that hits it leaves the clock behind, and the page says the simulation is lagging.
pub const FRAME_EVENT_BUDGET: usize = 20_000;
/// Simulation events processed between two looks at the frame's time budget
/// ([`Playground::frame_within`]): small enough that a chunk never costs a visible stall, large
/// enough that asking the clock costs nothing. In a 10,000-pod cluster one event (a scheduling
/// cycle over 1,000 nodes, a ReplicaSet pass) can take a millisecond or more in the browser, so
/// 64 events between looks overshot the 8-ms budget by tens of milliseconds.
pub const FRAME_EVENT_CHUNK: usize = 8;
/// A frame longer than this (a background tab, a debugger pause) counts as this long, so the
/// simulation never leaps ahead after the page was hidden. Longer than a tenth of a second, so
/// that the idle loop's sleep to the clock's next tenth ([`IDLE_SLEEP_MS`]) counts in full.
pub const MAX_FRAME_MS: f64 = 150.0;
/// How long the page's frame loop may sleep at most between two frames when nothing but the
/// clock moves (see [`Playground::frame_delay_ms`]): a tenth of a second and a little, so one
/// sleep reaches the clock's next tenth at 1×, and under [`MAX_FRAME_MS`] with a late timer and
/// the frame that ends the sleep to spare.
pub const IDLE_SLEEP_MS: f64 = 110.0;
/// Frames in a row in which nothing but the clock changed before the frame loop starts sleeping.
/// A change often brings more within milliseconds (a pod created, then scheduled, then started),
/// which the page shows frame by frame.
pub const QUIET_FRAMES: u32 = 6;
/// A sleep shorter than a frame at 60 Hz is not worth a timer.
const FRAME_MS: f64 = 1000.0 / 60.0;
/// While playing, the events list (and the inspector's events) follow new Events at most this
/// often, in real milliseconds. A rollout of a few hundred pods records hundreds of Events a
/// second: redrawing the table for each frame's dozen new rows cost a third of the page's frame
/// time, for rows that scroll past faster than anyone reads them. Paused, stepped or advanced,
/// the list is always current.
pub const EVENTS_REFRESH_MS: f64 = 250.0;
/// How long a notice stays on screen, in real milliseconds: long enough to read a line, short
/// enough not to sit over the page while the learner looks at what it reports (what it says is
/// also under the editor, in the console or in the cluster itself).
pub const NOTICE_MS: f64 = 3_000.0;
/// How long an error's notice stays: it may be the only place that says why nothing happened.
pub const ERROR_NOTICE_MS: f64 = 6_000.0;
/// The longest the boot phase waits for the nodes to report Ready, in simulated ms.
pub const BOOT_LIMIT_MS: Millis = 5_000;
/// The file name diagnostics of the editor's text carry.
pub const EDITOR_FILE: &str = "playground.yaml";

/// The manifest the editor opens with: the engine's built-in `playground` example (a small
/// Deployment, ready to apply), so the page, `#example/playground` links and the CLI agree.
pub const DEFAULT_MANIFEST: &str = crate::sim::examples::DEFAULT_MANIFEST;

/// How a notice is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Error,
    /// Work under way (loading the engine, checking a controller): it stays until its outcome
    /// arrives, which replaces it.
    Progress,
}

/// A short message about what the learner's action did ("pod "web-…" deleted").
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    pub id: u64,
    pub text: String,
    pub kind: NoticeKind,
    /// Real time it was raised (the model's real clock), for expiry.
    born: f64,
}

/// The whole page's state.
pub struct Playground {
    /// The simulation and everything applied to it.
    pub session: Session,
    seed: u64,
    pub playing: bool,
    /// Simulated milliseconds per real millisecond.
    pub speed: f64,
    /// The result of the last Apply (the diagnostics under the editor).
    pub last_apply: Option<ApplyReport>,
    /// The text that apply read: the diagnostics' lines and columns are positions in it, which
    /// is not always the editor's text (the JS API's `apply(yaml)`, a shared scenario).
    pub last_apply_text: Option<std::rc::Rc<str>>,
    /// The card of the last "Check my controller", until closed.
    pub controller_check: Option<crate::viewmodel::check::CheckView>,
    /// The simulated time of the last Apply that changed the cluster (see [`Playground::play_hint`]).
    applied_at: Option<Millis>,
    notices: VecDeque<Notice>,
    next_id: u64,
    pub loops: LoopTracker,
    pub sequence: SequenceLog,
    pub history: History,
    /// Each fault, what it hit and when the system recovered.
    pub fault_timeline: FaultTimeline,
    /// The object the inspector shows.
    pub selected: Option<ObjectKey>,
    /// The kubectl console's transcript.
    pub console: Console,
    /// The last trace entry already fed to the trackers.
    trace_seq: u64,
    /// Trace entries seen that are not node heartbeats ([`Playground::fingerprint`]).
    visible_entries: u64,
    /// Frames in a row that changed nothing but the clock ([`Playground::frame_delay_ms`]).
    quiet_frames: u32,
    /// Fractional simulated milliseconds not yet advanced (slow speeds move < 1 ms per frame).
    carry: f64,
    /// The last frame hit [`FRAME_EVENT_BUDGET`].
    pub lagging: bool,
    /// Pausing when a check changes and slow motion after the learner acts.
    pub moments: Moments,
    /// Real milliseconds seen by [`Playground::frame`] (drives notice expiry).
    real_clock: f64,
    /// Bumped on every change a view might show.
    pub version: u64,
    /// The scenario text and seed override last opened, so Reset starts the lesson over; or
    /// the text of an Apply that held another Scenario document, which Reset then opens.
    loaded: Option<(String, Option<u64>)>,
    /// The last Apply held a Scenario document that is not the one running
    /// ([`Playground::scenario_applied`]).
    scenario_applied: bool,
    /// The cluster view, followed incrementally (updated lazily by [`Playground::cluster_view`]).
    cluster_cache: RefCell<ClusterCache>,
    /// The events key the page last drew while playing, and when (real ms); None after anything
    /// but a frame, which draws the live one: see [`Playground::events_key`].
    events_drawn: Option<(EventsKey, f64)>,
    /// Where the run started (after the boot, or at a loaded scenario's t=0): a share link
    /// carries the run only once something happened since.
    start: crate::sim::run::Moment,
    /// The whole run while the clock is behind its end (time travel): what playing or dragging
    /// forward replays; any new action branches from here and drops the rest.
    tape: Option<runs::Tape>,
    /// The last console command wrote nothing: time travel keeps the run's later actions.
    last_read_only: bool,
    /// The "what changes" card: the objects that differ between now and the run's end.
    pub changes: Option<crate::viewmodel::changes::ChangesView>,
    /// The run as it was at earlier moments, so time travel restores the nearest one and
    /// replays only from there.
    snapshots: runs::Snapshots,
}

/// What changes the events list: the Event kind's revision, how many Events there are (an
/// expiry removes some without a new write), and the simulated second (the rows' ages).
pub type EventsKey = (u64, usize, Millis);

impl Playground {
    /// A fresh three-node cluster.
    pub fn new(seed: u64) -> Playground {
        let mut p = Playground::unbooted(seed);
        p.boot();
        p
    }

    /// A playground that opens `text` as a scenario from the start, for a page loaded from a
    /// share link: the same model as [`Playground::new`] then [`Playground::load_scenario`], but
    /// the default cluster is never booted only to be replaced (the page's first render can show
    /// the link at once; issue #10's start time). `seed` is the link's override, `default_seed`
    /// the page's seed, which a scenario that fails to load leaves in place.
    pub fn opened(
        text: &str,
        seed: Option<u64>,
        default_seed: u64,
    ) -> (Playground, Result<(), Vec<Diagnostic>>) {
        let mut p = Playground::unbooted(default_seed);
        if p.load_scenario(text, seed).is_ok() {
            return (p, Ok(()));
        }
        // Errors leave the default cluster running, with the diagnostics under the editor.
        let mut p = Playground::new(default_seed);
        let result = p.load_scenario(text, seed);
        (p, result)
    }

    /// The three-node cluster before its kubelets have registered.
    fn unbooted(seed: u64) -> Playground {
        Playground {
            session: Session::new(seed),
            seed,
            playing: false,
            speed: 1.0,
            last_apply: None,
            last_apply_text: None,
            controller_check: None,
            applied_at: None,
            notices: VecDeque::new(),
            next_id: 1,
            loops: LoopTracker::default(),
            sequence: SequenceLog::default(),
            history: History::default(),
            fault_timeline: FaultTimeline::default(),
            selected: None,
            console: Console::default(),
            trace_seq: 0,
            visible_entries: 0,
            quiet_frames: 0,
            carry: 0.0,
            lagging: false,
            moments: Moments::default(),
            real_clock: 0.0,
            version: 0,
            loaded: None,
            scenario_applied: false,
            cluster_cache: RefCell::default(),
            events_drawn: None,
            start: crate::sim::run::Moment::default(),
            tape: None,
            last_read_only: false,
            changes: None,
            snapshots: runs::Snapshots::default(),
        }
    }

    /// Lets the fresh cluster come up (each kubelet registers and reports its node Ready, which
    /// takes a few simulated milliseconds), so the page opens on a working cluster, as a real one
    /// would be by the time anyone looks at it. Bounded: a node that never turns Ready stays as is.
    fn boot(&mut self) {
        let all_ready = |p: &Playground| {
            let nodes: Vec<_> = p
                .session
                .sim
                .api()
                .list(Kind::Node)
                .filter_map(|o| o.as_node())
                .collect();
            !nodes.is_empty() && nodes.iter().all(|n| n.ready_status() == "True")
        };
        for _ in 0..BOOT_LIMIT_MS / 10 {
            if all_ready(self) {
                break;
            }
            let t = self.now() + 10;
            self.session.advance_to(t, usize::MAX);
        }
        self.start = self.session.moment();
        self.sync();
    }

    /// The seed the cluster was built with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The simulated clock.
    pub fn now(&self) -> Millis {
        self.session.sim.now()
    }

    /// True from an Apply that changed the cluster until the clock moves: on a paused clock no
    /// controller acts, so the page points at Play (a first-time learner who pressed Apply and
    /// saw nothing happen would not know why). Playing or stepping moves the clock and ends it.
    pub fn play_hint(&self) -> bool {
        !self.playing && self.applied_at == Some(self.now())
    }

    /// Throws the cluster away and starts again: the open lesson from its beginning, or three
    /// empty nodes (same seed, same speed).
    /// [`Playground::reset`] with another seed: the same cluster (or lesson) from the start, with
    /// other pod names, other placements among equal nodes and other timings.
    pub fn reset_with_seed(&mut self, seed: u64) {
        self.seed = seed;
        if let Some((_, loaded_seed)) = self.loaded.as_mut() {
            *loaded_seed = Some(seed);
        }
        self.reset();
    }

    pub fn reset(&mut self) {
        if let Some((text, seed)) = self.loaded.clone() {
            // Restarting the same lesson keeps the learner's choice of pausing on its checks.
            let pause_on_check = self.moments.pause_on_check;
            if self.load_scenario(&text, seed).is_ok() {
                self.moments.pause_on_check = pause_on_check;
                let what = if crate::sim::examples::ALL.iter().any(|(_, t)| *t == text) {
                    "Lesson"
                } else {
                    "Scenario"
                };
                // One notice, not two: this one replaces the "Opened …" the load just raised.
                self.notices.pop_back();
                self.notify(
                    &format!("{what} restarted from the beginning"),
                    NoticeKind::Info,
                );
                return;
            }
        }
        self.session = Session::new(self.seed);
        self.drop_snapshots();
        self.console.fold();
        self.cluster_cache.get_mut().invalidate();
        self.last_apply = None;
        self.applied_at = None;
        self.selected = None;
        self.loops.clear();
        self.sequence.clear();
        self.history.clear();
        self.fault_timeline.clear();
        self.trace_seq = 0;
        self.carry = 0.0;
        self.lagging = false;
        self.moments.restart();
        self.boot();
        self.notify("Cluster reset: three empty nodes", NoticeKind::Info);
    }

    /// Opens a scenario file the way a share link or an embed hands it over: its objects are
    /// applied at t=0, its steps scheduled and its checks armed, exactly as `kubeloop run` starts
    /// it (no boot phase), so the same text and seed give the same run. `seed` overrides the
    /// scenario's. A text with errors changes nothing but the diagnostics under the editor.
    pub fn load_scenario(&mut self, text: &str, seed: Option<u64>) -> Result<(), Vec<Diagnostic>> {
        match Session::load(EDITOR_FILE, text, seed) {
            Ok(session) => {
                self.console.fold();
                self.loaded = Some((text.to_string(), seed));
                self.scenario_applied = false;
                self.seed = session.sim.config().seed;
                self.session = session;
                self.drop_snapshots();
                self.start = self.session.moment();
                self.cluster_cache.get_mut().invalidate();
                self.playing = false;
                self.last_apply = None;
                self.applied_at = None;
                self.selected = None;
                self.loops.clear();
                self.sequence.clear();
                self.history.clear();
                self.fault_timeline.clear();
                self.trace_seq = 0;
                self.carry = 0.0;
                self.lagging = false;
                // A lesson pauses on its checks by default; the plain playground has none.
                self.moments.restart();
                self.moments.pause_on_check = !self.session.checks().is_empty();
                self.sync();
                let name = self.session.scenario.metadata.name.clone();
                let what = if name.is_empty() {
                    "the shared scenario".to_string()
                } else {
                    format!("scenario \"{name}\"")
                };
                self.notify(&format!("Opened {what}"), NoticeKind::Info);
                Ok(())
            }
            Err(diagnostics) => {
                self.last_apply_text = Some(text.into());
                self.last_apply = Some(ApplyReport {
                    ok: false,
                    diagnostics: diagnostics.clone(),
                    ..Default::default()
                });
                self.notify(
                    "This scenario has errors; nothing was loaded",
                    NoticeKind::Error,
                );
                self.version += 1;
                Err(diagnostics)
            }
        }
    }

    /// One animation frame of `real_ms` real milliseconds: advances the clock by `real_ms × speed`
    /// when playing, within the event budget. Returns true when anything visible changed.
    pub fn frame(&mut self, real_ms: f64) -> bool {
        self.frame_within(real_ms, &mut || false)
    }

    /// [`Playground::frame`] with a time budget: `out_of_time` is asked after every
    /// [`FRAME_EVENT_CHUNK`] events and stops the frame's simulation work when it says so (the page
    /// asks the browser's clock, so input and drawing always get their share of the frame). What
    /// is left carries over to the next frame in the event queue, which runs in (time, sequence)
    /// order however it is sliced: frame timing decides only how fast the simulation gets
    /// somewhere, never where it goes.
    pub fn frame_within(&mut self, real_ms: f64, out_of_time: &mut dyn FnMut() -> bool) -> bool {
        let changed = self.advance_frame(real_ms, out_of_time);
        let events_due = self.playing
            && match self.events_drawn {
                // The last render (of an action, not a frame) drew the live list.
                None => {
                    self.events_drawn = Some((self.events_now(), self.real_clock));
                    false
                }
                Some((drawn, at)) => {
                    let now = self.events_now();
                    let due = now != drawn && self.real_clock - at >= EVENTS_REFRESH_MS;
                    if due {
                        self.events_drawn = Some((now, self.real_clock));
                    }
                    due
                }
            };
        changed || events_due
    }

    /// The memo key of the events list and the inspector's events: the live one, except while
    /// playing, when it moves on at most every [`EVENTS_REFRESH_MS`] of real time (a frame
    /// reports a change when it does).
    pub fn events_key(&self) -> EventsKey {
        match self.events_drawn {
            Some((drawn, _)) if self.playing => drawn,
            _ => self.events_now(),
        }
    }

    fn events_now(&self) -> EventsKey {
        (
            self.revision(Kind::Event),
            self.session.sim.api().count(Kind::Event),
            self.now() / 1000,
        )
    }

    /// [`Playground::frame_within`] without the events list's pace.
    fn advance_frame(&mut self, real_ms: f64, out_of_time: &mut dyn FnMut() -> bool) -> bool {
        let real_ms = if real_ms.is_finite() {
            real_ms.clamp(0.0, MAX_FRAME_MS)
        } else {
            0.0
        };
        self.real_clock += real_ms;
        let expired = self.expire_notices();
        // Counted as quiet until something other than the clock shows a change, below.
        self.quiet_frames = if expired {
            0
        } else {
            self.quiet_frames.saturating_add(1)
        };
        if !self.playing {
            return expired;
        }
        let at = self.now() as f64 + self.carry;
        self.carry += self.moments.simulated_ms(real_ms, at, self.speed);
        let whole = self.carry.floor();
        if whole < 1.0 {
            return expired;
        }
        self.carry -= whole;
        let before = self.fingerprint();
        let was_lagging = self.lagging;
        let target = self.now() + whole as Millis;
        self.replay_tape_until(target);
        let mut adv = Advanced::default();
        let mut paused = false;
        loop {
            let chunk = FRAME_EVENT_CHUNK.min(FRAME_EVENT_BUDGET - adv.events);
            let step = self.session.advance_to(target, chunk);
            adv.events += step.events;
            if self.pause_on_check_change() {
                paused = true;
                break;
            }
            if !step.capped {
                break;
            }
            if adv.events >= FRAME_EVENT_BUDGET || out_of_time() {
                adv.capped = true;
                break;
            }
        }
        self.lagging = adv.capped;
        self.follow_tape();
        if adv.capped || paused {
            // Don't let the debt grow without bound while the simulation catches up.
            self.carry = 0.0;
        }
        self.sync_trackers();
        // Re-render only when something on screen changed (`fingerprint`). At 1× most frames
        // change nothing a person can see; those that change only the clock keep the loop quiet.
        let after = self.fingerprint();
        if self.lagging || (before.0, before.1) != (after.0, after.1) {
            self.quiet_frames = 0;
        }
        expired || paused || was_lagging != self.lagging || before != after
    }

    /// While playing with pausing on checks on: when a check just passed or failed, stops the
    /// clock there and says which one. True when it paused.
    fn pause_on_check_change(&mut self) -> bool {
        if !self.moments.pause_on_check {
            return false;
        }
        let Some(change) = self.moments.check_changed(&self.session.checks()) else {
            return false;
        };
        self.playing = false;
        self.notify(&change.notice(self.now()), NoticeKind::Info);
        true
    }

    /// The learner acted (applied, deleted, injected a fault, ran a kubectl that wrote): the
    /// clock runs in slow motion for a while, so what the controllers do next can be seen.
    fn acted(&mut self) {
        self.moments.acted(self.now());
    }

    /// How long the page may sleep before its next frame, in real milliseconds: 0 for the next
    /// animation frame. After [`QUIET_FRAMES`] frames that changed nothing but the clock, the
    /// loop sleeps until the clock's next tenth of a second is due (at most [`IDLE_SLEEP_MS`]),
    /// so an idle cluster at 1× is drawn ten times a second, not sixty, and the browser is asked
    /// for no frame in between. Paused, it looks in every [`IDLE_SLEEP_MS`] (notices expire).
    /// Whatever happens in the simulation during a sleep is shown at its end, at most one tenth
    /// of simulated time (or [`IDLE_SLEEP_MS`]) late, and the clock shows the moment it is drawn.
    pub fn frame_delay_ms(&self) -> f64 {
        if self.quiet_frames < QUIET_FRAMES {
            return 0.0;
        }
        if !self.playing {
            return IDLE_SLEEP_MS;
        }
        let now = self.now();
        let to_tenth = (100 - now % 100) as f64 - self.carry;
        // A millisecond past it, so that the frame ending the sleep surely shows the new tenth.
        let speed = self.slowed().unwrap_or(self.speed);
        let sleep = (to_tenth / speed + 1.0).min(IDLE_SLEEP_MS);
        if sleep < FRAME_MS {
            0.0
        } else {
            sleep
        }
    }

    /// The speed the clock runs at now while slow motion holds it back from the chosen one (the
    /// toolbar shows it beside the clock); None at the chosen speed.
    pub fn slowed(&self) -> Option<f64> {
        self.moments.slowed(self.now(), self.speed)
    }

    /// Ends any quiet spell: an action just changed something, and the frames after it are
    /// drawn one by one again.
    pub fn wake(&mut self) {
        self.quiet_frames = 0;
    }

    /// What the page shows changes only when one of these does: a trace entry or a write that
    /// some view shows, or the clock's tenth of a second. Node heartbeats (Lease renewals and
    /// their trace entries) count only while a view shows them: the API conversation with
    /// heartbeats on, or the inspector on a Lease or a Node (whose description has its Lease).
    /// An idle 1,000-node cluster renews a hundred Leases a second, which otherwise redrew the
    /// page on nearly every frame for nothing.
    fn fingerprint(&self) -> (u64, u64, Millis) {
        let sim = &self.session.sim;
        let tenth = self.now() / 100;
        if self.heartbeats_visible() {
            return (sim.trace().next_seq(), sim.api().resource_version(), tenth);
        }
        // The fault timeline follows incidents through every entry, heartbeats included.
        let entries = self.visible_entries + self.fault_timeline.version;
        let writes = sim.api().resource_version() - sim.api().writes(Kind::Lease);
        (entries, writes, tenth)
    }

    /// True when a view shows node heartbeats (see [`Playground::fingerprint`]).
    fn heartbeats_visible(&self) -> bool {
        self.sequence.show_heartbeats
            || self
                .selected
                .as_ref()
                .is_some_and(|k| matches!(k.kind, Kind::Lease | Kind::Node))
    }

    /// Deterministic fast-forward by `ms` of simulated time (the JS API's `advance`), in
    /// quarter-second slices so the chart gets its samples on the way.
    pub fn advance_by(&mut self, ms: Millis) -> Advanced {
        let end = self.now().saturating_add(ms);
        let mut total = Advanced::default();
        while self.now() < end {
            let slice = (self.now() + 250).min(end);
            // Behind a run's end (time travel), its own actions happen on the way.
            self.replay_tape_until(slice);
            let adv = self.session.advance_to(slice, usize::MAX);
            total.events += adv.events;
            self.sync();
        }
        total
    }

    /// Runs until the next thing worth seeing happens (a request, a watch delivery, a reconcile
    /// pass: one row of the sequence diagram), so each click of Step shows one move of the loop.
    pub fn step(&mut self) -> bool {
        let start = self.session.sim.trace().next_seq();
        let mut stepped = false;
        for _ in 0..10_000 {
            if !self.session.step() {
                break;
            }
            stepped = true;
            let visible = self
                .session
                .sim
                .trace()
                .since(start.saturating_sub(1))
                .any(|e| !is_heartbeat(e));
            if visible {
                break;
            }
        }
        self.sync();
        stepped
    }

    /// True after an Apply of a text holding a Scenario document other than the one running:
    /// Apply applied its objects and left the rest (nodes, seed, steps, checks), as its note
    /// says; Reset, or the editor's "Run this scenario", opens the whole scenario from t=0.
    pub fn scenario_applied(&self) -> bool {
        self.scenario_applied
    }

    /// The Scenario document in `text`, when it has a valid one.
    fn scenario_in(text: &str) -> Option<crate::sim::scenario::Scenario> {
        if !text.contains("Scenario") {
            return None;
        }
        let (doc, _) = crate::sim::input::decode::decode_manifests(EDITOR_FILE, text).scenario?;
        crate::sim::scenario::decode_scenario(&doc).ok()
    }

    /// Runs until the next hand-off ([`crate::sim::handoff`]): one component's write answered
    /// by another, or a watched object changed by a timer or a fault, with whatever else
    /// happened in that same simulated millisecond; each press shows one move of the chain
    /// (ReplicaSet created, pods created, bound, started) where Step shows every heartbeat and
    /// cache delivery. Says what it found, or why it stopped.
    pub fn step_to_hand_off(&mut self) -> HandOff {
        let mut search = HandOffSearch::start(&self.session.sim);
        let mut idle = false;
        while !search.exhausted(&self.session.sim) {
            if !self.session.step() {
                idle = true;
                break;
            }
            if let Some(at) = search.after_event(&self.session.sim) {
                self.session.advance_to(at, HAND_OFF_MAX_EVENTS);
                break;
            }
        }
        let outcome = search.finish(&self.session.sim, idle);
        self.notify(&outcome.message(), NoticeKind::Info);
        self.sync();
        outcome
    }

    /// `kubectl apply -f` of the editor's text. A Scenario document in it is left to Reset (the
    /// session's note under the editor says so), which from now on opens this text.
    pub fn apply(&mut self, text: &str) -> ApplyReport {
        let report = self.session.apply_text(EDITOR_FILE, text);
        if report.ok {
            // The running lesson's own document (its text, edited or not) changes nothing:
            // Reset still starts the lesson as it was opened.
            let other = Self::scenario_in(text)
                .filter(|s| self.loaded.is_none() || *s != self.session.scenario);
            if other.is_some() {
                self.loaded = Some((text.to_string(), None));
                self.scenario_applied = true;
            }
        }
        let errors = report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        if report.ok && errors == 0 {
            let summary = if report.lines.is_empty() {
                "nothing to apply".to_string()
            } else {
                summarise_lines(&report.lines)
            };
            self.notify(&summary, NoticeKind::Info);
            if report.lines.iter().any(|l| !l.ends_with(" unchanged")) {
                self.applied_at = Some(self.now());
                self.acted();
            }
        } else {
            self.notify(
                &format!("Apply refused: {errors} error(s), nothing was changed"),
                NoticeKind::Error,
            );
        }
        self.last_apply = Some(report.clone());
        self.last_apply_text = Some(text.into());
        self.sync();
        report
    }

    /// Runs the checker's battery on the learner's controller in `text` (headless runs of their
    /// own, seeded: the cluster on screen is not touched) and shows its card. The page runs the
    /// checker in its own module (`src/lab.rs`, loaded on first use) and hands the card to
    /// [`Playground::show_check`]; linking it here would put it in the first download.
    pub fn check_controller(&mut self, text: &str) {
        #[cfg(not(target_arch = "wasm32"))]
        let view = crate::viewmodel::check::CheckView::of(
            &crate::sim::controller_check::check_controller(EDITOR_FILE, text, None),
        );
        #[cfg(target_arch = "wasm32")]
        let view = {
            // Only an action dispatched before the app is mounted gets here.
            let _ = text;
            crate::viewmodel::check::CheckView::from_json(&serde_json::json!({"err": [{
                "file": EDITOR_FILE, "line": 1, "col": 1,
                "message": "the checker is not loaded yet: press Check my controller again",
            }]}))
        };
        self.show_check(view);
    }

    /// Shows a check's card, with a notice of its verdict.
    pub fn show_check(&mut self, view: crate::viewmodel::check::CheckView) {
        use crate::viewmodel::check::CheckView;
        let (message, kind) = match &view {
            CheckView::Refused(_) => (
                "Check my controller: the text has errors, nothing was checked".to_string(),
                NoticeKind::Error,
            ),
            v if v.passed() => (
                "Check my controller: convergent, level-triggered and idempotent".to_string(),
                NoticeKind::Info,
            ),
            CheckView::Report { rows, .. } => {
                let failed: Vec<&str> = rows
                    .iter()
                    .filter(|r| !r.passed)
                    .map(|r| r.property)
                    .collect();
                (
                    format!("Check my controller: not {}", failed.join(", not ")),
                    NoticeKind::Error,
                )
            }
        };
        self.notify(&message, kind);
        self.controller_check = Some(view);
    }

    /// What the editor underlines: the last apply's diagnostics, and where each learner's
    /// controller whose last pass threw was in its source (placed in the text last applied).
    pub fn editor_diagnostics(&self) -> Vec<Diagnostic> {
        use crate::sim::controllers::script::ScriptController;
        use crate::sim::machinery::controller::ComponentId;
        use crate::sim::script::RunError;
        let mut out = self
            .last_apply
            .as_ref()
            .map(|r| r.diagnostics.clone())
            .unwrap_or_default();
        let Some(text) = &self.last_apply_text else {
            return out;
        };
        let sim = &self.session.sim;
        for id in sim.component_ids() {
            let ComponentId::Script(name) = &id else {
                continue;
            };
            let Some(c) = sim
                .component(&id)
                .and_then(|c| c.as_any())
                .and_then(|a| a.downcast_ref::<ScriptController>())
            else {
                continue;
            };
            let Some(e @ RunError::Thrown { line, column, .. }) = c.failure() else {
                continue;
            };
            if *line == 0 {
                continue;
            }
            let source = &c.spec().doc.source;
            let Some(at) =
                crate::sim::input::controller_doc::position_in(text, name, source, *line, *column)
            else {
                continue;
            };
            out.push(Diagnostic {
                file: EDITOR_FILE.to_string(),
                line: at.line,
                col: at.col,
                severity: Severity::Error,
                message: format!("controller/{name}: its last pass threw {e}"),
                field: Some("spec.source".into()),
            });
        }
        out
    }

    /// `kubectl delete -f` of the editor's text.
    pub fn delete(&mut self, text: &str) -> ApplyReport {
        let report = self.session.delete_text(EDITOR_FILE, text);
        if report.ok && !report.lines.is_empty() {
            self.acted();
        }
        let summary = if report.lines.is_empty() {
            "nothing to delete".to_string()
        } else {
            summarise_lines(&report.lines)
        };
        self.notify(
            &summary,
            if report.ok {
                NoticeKind::Info
            } else {
                NoticeKind::Error
            },
        );
        self.last_apply = Some(report.clone());
        self.last_apply_text = Some(text.into());
        self.sync();
        report
    }

    /// Injects a fault and says what it did.
    pub fn inject(&mut self, fault: Fault) -> Result<String, String> {
        let result = self.session.inject(fault);
        match &result {
            Ok(m) => {
                self.acted();
                self.notify(m, NoticeKind::Info)
            }
            Err(e) => self.notify(e, NoticeKind::Error),
        }
        self.sync();
        result
    }

    /// The per-pod "Delete pod" action: a `DeletePod` fault, as `kubectl delete pod` would do.
    pub fn delete_pod(&mut self, namespace: &str, name: &str) -> Result<String, String> {
        self.inject(Fault::DeletePod {
            target: PodTarget {
                pod: Some(name.to_string()),
                namespace: namespace.to_string(),
                ..Default::default()
            },
        })
    }

    /// The console's Tab: `line` with its last word completed against the cluster now.
    pub fn complete(&self, line: &str) -> crate::sim::kubectl::complete::Completion {
        crate::sim::kubectl::complete::complete(&self.session.sim, line)
    }

    /// Runs a kubectl command line and keeps it in the console.
    pub fn kubectl(&mut self, cmd: &str) -> CommandOutput {
        self.kubectl_with_input(cmd, None)
    }

    /// [`Playground::kubectl`] with standard input (`apply -f -` reads it; a here-document in
    /// `cmd` replaces it).
    pub fn kubectl_with_input(&mut self, cmd: &str, stdin: Option<&str>) -> CommandOutput {
        let before = Console::commands_before(&self.session);
        // No simulated time passes during a command: any write to the store is the command's.
        let written = self.session.sim.api().resource_version();
        let out = self.session.kubectl_with_input(cmd, stdin);
        self.last_read_only = self.session.sim.api().resource_version() == written;
        if !self.last_read_only {
            self.acted();
        }
        self.console.push(cmd, out.clone(), &before, &self.session);
        self.sync();
        out
    }

    /// Runs a kubectl command whose output is what the learner asked to see (a lesson's "try
    /// this" step): it goes to the console, which the page opens and scrolls to.
    pub fn run_in_console(&mut self, cmd: &str) -> CommandOutput {
        let out = self.kubectl(cmd);
        self.console.reveal += 1;
        out
    }

    /// Runs a kubectl command from a button or menu (cordon, drain…) and says what it did, since
    /// the console that also keeps it may not be on screen.
    pub fn run_command(&mut self, cmd: &str) -> CommandOutput {
        let out = self.kubectl(cmd);
        let text = if out.ok { &out.stdout } else { &out.stderr };
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or(if out.ok { "done" } else { "failed" });
        let kind = if out.ok {
            NoticeKind::Info
        } else {
            NoticeKind::Error
        };
        self.notify(&format!("kubectl {}: {first}", cmd.trim()), kind);
        out
    }

    /// The loaded lesson's card, if any.
    pub fn lesson(&self) -> Option<super::lesson::LessonView> {
        super::lesson::LessonView::of(&self.session)
    }

    /// Runs the lesson's `index`-th "try this" action now.
    pub fn try_this(&mut self, index: usize) -> Result<String, String> {
        let Some(t) = self.session.scenario.spec.try_this.get(index).cloned() else {
            return Err(format!("this lesson has no action #{index}"));
        };
        let status = self.session.try_this_statuses().get(index).cloned();
        if let Some(why) = status.and_then(|s| s.waiting_for) {
            let text = format!("Not yet: this step comes {why}");
            self.notify(&text, NoticeKind::Info);
            return Err(text);
        }
        let result = self.try_this_action(t.action()?);
        if result.is_ok() || t.refused {
            self.session.try_this_done(index);
            self.version += 1;
        }
        result
    }

    /// From now on the lesson's own timeline performs the steps the learner has not done, at
    /// the times it gives them ("play the lesson"), and the clock runs.
    pub fn play_lesson(&mut self) {
        if self.session.script_try_this() > 0 {
            self.notify(
                "Playing the lesson: its timeline does the steps you have not done",
                NoticeKind::Info,
            );
        }
        self.playing = true;
        self.version += 1;
    }

    fn try_this_action(&mut self, action: StepAction) -> Result<String, String> {
        match action {
            StepAction::Fault(f) => self.inject(f),
            StepAction::Kubectl(cmd) => {
                let out = self.run_in_console(&cmd);
                if out.ok {
                    Ok(out.stdout)
                } else {
                    Err(out.stderr)
                }
            }
            StepAction::Apply(text) => {
                let report = self.apply(&text);
                if report.ok {
                    Ok(report.lines.join("\n"))
                } else {
                    Err("the lesson's manifest was refused".into())
                }
            }
        }
    }

    /// Shows a notice.
    pub fn notify(&mut self, text: &str, kind: NoticeKind) {
        self.end_progress();
        let id = self.next_id;
        self.next_id += 1;
        self.notices.push_back(Notice {
            id,
            text: text.to_string(),
            kind,
            born: self.real_clock,
        });
        while self.notices.len() > 2 {
            self.notices.pop_front();
        }
        self.version += 1;
    }

    /// Takes down the notice of work under way: its outcome has arrived.
    pub fn end_progress(&mut self) {
        let before = self.notices.len();
        self.notices.retain(|n| n.kind != NoticeKind::Progress);
        if self.notices.len() != before {
            self.version += 1;
        }
    }

    /// Dismisses a notice.
    pub fn dismiss(&mut self, id: u64) {
        self.notices.retain(|n| n.id != id);
        self.version += 1;
    }

    /// The notices on screen, oldest first.
    pub fn notices(&self) -> impl Iterator<Item = &Notice> {
        self.notices.iter()
    }

    fn expire_notices(&mut self) -> bool {
        let before = self.notices.len();
        let now = self.real_clock;
        self.notices.retain(|n| {
            let life = match n.kind {
                NoticeKind::Info => NOTICE_MS,
                NoticeKind::Error => ERROR_NOTICE_MS,
                NoticeKind::Progress => f64::INFINITY,
            };
            n.born + life > now
        });
        let changed = self.notices.len() != before;
        if changed {
            self.version += 1;
        }
        changed
    }

    /// Shows or hides heartbeats in the sequence diagram (rebuilt from the recent trace).
    pub fn set_show_heartbeats(&mut self, show: bool) {
        self.sequence.show_heartbeats = show;
        self.rebuild_sequence();
    }

    /// Shows or hides reconcile passes that found no gap.
    pub fn set_show_idle(&mut self, show: bool) {
        self.sequence.show_idle_reconciles = show;
        self.rebuild_sequence();
    }

    fn rebuild_sequence(&mut self) {
        self.sequence.clear();
        let trace = self.session.sim.trace();
        let recent: Vec<_> = trace.entries().rev().take(4_000).collect();
        self.sequence.ingest(recent.into_iter().rev());
        self.version += 1;
    }

    /// After anything but a frame: the trackers, and the events list current at once.
    fn sync(&mut self) {
        self.sync_trackers();
        self.events_drawn = None;
    }

    /// Feeds new trace entries to the trackers and samples the chart.
    fn sync_trackers(&mut self) {
        let trace = self.session.sim.trace();
        // One walk over the new lines, each asked once whether it is a heartbeat: at 10,000
        // pods a simulated second is tens of thousands of them.
        let (mut passes, mut rows) = (PassBatch::default(), RowBatch::default());
        for e in trace.since(self.trace_seq) {
            let heartbeat = is_heartbeat(e);
            self.visible_entries += u64::from(!heartbeat);
            self.loops.take(&mut passes, e, heartbeat, self.real_clock);
            self.sequence.take(&mut rows, e, heartbeat);
        }
        self.loops.finish(passes);
        self.sequence.finish(rows);
        self.trace_seq = trace.next_seq().saturating_sub(1);
        let now = self.now();
        let deployments = self.session.sim.api().list(Kind::Deployment);
        self.history
            .record_deployments(now, deployments.filter_map(|o| o.as_deployment()));
        self.fault_timeline.observe(&self.session.sim);
        self.console.follow(&self.session);
        // Taken in silently: a check decided by a step, an advance or an action is no moment
        // to pause at (the clock is not playing), and must not pause the next frame either.
        let checks = self.session.checks();
        self.moments.check_changed(&checks);
        if let Some(k) = &self.selected {
            if self.session.sim.api().get(k).is_none() && k.kind != Kind::Pod {
                // Keep a deleted pod selected (its card says it is gone); other kinds just close.
                self.selected = None;
            }
        }
        self.version += 1;
        self.keep_snapshot();
    }

    /// The cluster view's model.
    pub fn cluster(&self) -> ClusterView {
        ClusterView::of(&self.session.sim)
    }

    /// The cluster view as the page draws it every frame: kept up to date incrementally (see
    /// [`ClusterCache`]), so an unchanged node keeps its `Rc` and an idle frame costs almost
    /// nothing. [`Playground::cluster`] builds a fresh one from scratch.
    pub fn cluster_view(&self) -> Rc<ClusterView> {
        match self.cluster_cache.try_borrow_mut() {
            Ok(mut c) => {
                c.update(&self.session.sim);
                c.view()
            }
            Err(_) => Rc::new(self.cluster()),
        }
    }

    /// How many times objects of `kind` changed as far as the page has looked (a memo key for
    /// views that show one kind, cheaper than the store-wide resourceVersion, which every
    /// heartbeat bumps).
    pub fn revision(&self, kind: Kind) -> u64 {
        match self.cluster_cache.try_borrow_mut() {
            Ok(mut c) => {
                c.update(&self.session.sim);
                c.kind_revision(kind)
            }
            Err(_) => self.session.sim.api().resource_version(),
        }
    }

    /// The events list, newest first.
    pub fn events(&self) -> Vec<EventRow> {
        event_rows(
            self.session
                .sim
                .api()
                .scan(Kind::Event)
                .filter_map(|o| o.as_event()),
            self.now(),
        )
    }

    /// The events panel's rows: the newest `limit` Events and `limit` warnings about the
    /// objects `filter` matches (see [`crate::viewmodel::events::newest_event_rows`]).
    pub fn newest_events(&self, filter: &str, limit: usize) -> crate::viewmodel::events::EventList {
        use crate::viewmodel::events::{matches_object, newest_event_rows};
        newest_event_rows(
            self.session
                .sim
                .api()
                .scan(Kind::Event)
                .filter_map(|o| o.as_event())
                .filter(|e| matches_object(e, filter)),
            self.now(),
            limit,
        )
    }

    /// The ownership forest.
    pub fn ownership(&self) -> OwnershipView {
        let api = self.session.sim.api();
        OwnershipView::build(api.all_but_events(), Some(api), self.now())
    }

    /// The last apply's error and warning diagnostics.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.last_apply
            .as_ref()
            .map_or(&[], |r| r.diagnostics.as_slice())
    }
}

/// kubectl's per-object lines (`node/n-1 created`) as one notice: all of them when there are a
/// few, else the first three and the rest counted by outcome, so that applying 500 Nodes gives a
/// toast a person can read instead of one that covers the page.
pub fn summarise_lines(lines: &[String]) -> String {
    const SHOWN: usize = 3;
    if lines.len() <= SHOWN + 1 {
        return lines.join(", ");
    }
    let mut outcomes: Vec<(&str, usize)> = Vec::new();
    for l in lines {
        let outcome = l.rsplit(' ').next().unwrap_or("");
        match outcomes.iter_mut().find(|(o, _)| *o == outcome) {
            Some((_, n)) => *n += 1,
            None => outcomes.push((outcome, 1)),
        }
    }
    let counted: Vec<String> = outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
    format!(
        "{}, and {} more ({} objects: {})",
        lines[..SHOWN].join(", "),
        lines.len() - SHOWN,
        lines.len(),
        counted.join(", ")
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_reset_with_another_seed_replays_the_cluster_with_other_names_and_keeps_the_seed() {
        let run = |seed: u64| {
            let mut p = Playground::new(1);
            p.reset_with_seed(seed);
            p.apply(DEFAULT_MANIFEST);
            p.advance_by(30_000);
            let mut pods: Vec<String> = p
                .session
                .sim
                .api()
                .list(crate::sim::api::types::Kind::Pod)
                .map(|o| o.meta().name.to_string())
                .collect();
            pods.sort();
            (p.seed(), pods)
        };
        let (seed, a) = run(42);
        assert_eq!(seed, 42);
        assert_eq!(run(42).1, a, "the same seed replays the same run");
        assert_ne!(run(7).1, a, "another seed names the pods differently");
        // A lesson restarts with the new seed too.
        let mut p = Playground::new(1);
        let lesson = crate::sim::examples::ALL[1].1;
        assert!(p.load_scenario(lesson, None).is_ok());
        p.reset_with_seed(99);
        assert_eq!(p.seed(), 99);
        assert!(p.lesson().is_some());
    }

    use super::*;

    #[test]
    fn a_controller_whose_pass_throws_is_underlined_in_the_editor_where_it_threw() {
        let file = include_str!("../../tests/fixtures/controllers/website.yaml");
        let broken = file.replace(
            "  const want = site.spec.replicas ?? 1;",
            "  const want = site.spec.nothing.replicas;",
        );
        assert_ne!(broken, file, "the fixture has the line this test breaks");
        let mut p = Playground::new(1);
        assert!(p.apply(&broken).ok);
        let threw = |p: &Playground| {
            p.editor_diagnostics()
                .into_iter()
                .filter(|d| d.message.contains("its last pass threw"))
                .count()
        };
        assert_eq!(threw(&p), 0, "nothing ran yet");
        p.advance_by(20_000);
        let diags = p.editor_diagnostics();
        let thrown = diags
            .iter()
            .find(|d| {
                d.message
                    .starts_with("controller/website: its last pass threw TypeError")
            })
            .unwrap_or_else(|| panic!("underlined: {diags:?}"));
        let line = 1 + broken
            .lines()
            .position(|l| l.contains("site.spec.nothing.replicas"))
            .expect("the broken line") as u32;
        assert_eq!(thrown.line, line, "{thrown:?}");
        let text_line = broken.lines().nth(line as usize - 1).unwrap();
        let at = &text_line[thrown.col as usize - 1..];
        assert!(
            at.starts_with("site.spec.nothing.replicas") || at.starts_with(".replicas"),
            "column {} points at {at:?}",
            thrown.col
        );
    }

    #[test]
    fn a_few_applied_objects_are_listed_and_many_are_counted_by_outcome() {
        let few: Vec<String> = ["deployment.apps/web created", "service/web unchanged"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            summarise_lines(&few),
            "deployment.apps/web created, service/web unchanged"
        );
        let mut many: Vec<String> = (1..=130)
            .map(|i| format!("node/n-{i:03} created"))
            .collect();
        many.push("deployment.apps/web configured".into());
        assert_eq!(
            summarise_lines(&many),
            "node/n-001 created, node/n-002 created, node/n-003 created, and 128 more \
             (131 objects: 130 created, 1 configured)"
        );
    }

    fn ready_pods(p: &Playground) -> Vec<String> {
        p.cluster()
            .all_pods()
            .filter(|v| v.phase == "Running" && v.ready)
            .map(|v| v.name.to_string())
            .collect()
    }

    #[test]
    fn the_playground_opens_on_three_ready_nodes_and_a_stopped_clock() {
        let mut p = Playground::new(1);
        let cluster = p.cluster();
        assert_eq!(cluster.nodes.len(), 3);
        assert!(
            cluster.nodes.iter().all(|n| n.ready == "True"),
            "{cluster:#?}"
        );
        assert!(p.now() < BOOT_LIMIT_MS, "booted in {} ms", p.now());
        let t = p.now();
        assert!(!p.frame(16.0), "paused: nothing moves");
        assert_eq!(p.now(), t);
    }

    #[test]
    fn playing_advances_by_real_time_times_speed_and_caps_long_frames() {
        let mut p = Playground::new(1);
        p.playing = true;
        p.speed = 10.0;
        let t0 = p.now();
        p.frame(16.0);
        assert_eq!(p.now(), t0 + 160);
        p.frame(5_000.0);
        assert_eq!(p.now(), t0 + 160 + (MAX_FRAME_MS * 10.0) as Millis);
    }

    #[test]
    fn a_quiet_frame_asks_for_no_re_render() {
        let mut p = Playground::new(1);
        p.playing = true;
        // Let the boot traffic settle, then frames within one tenth of a second change nothing.
        p.advance_by(1_000);
        let t = p.now() - p.now() % 100 + 100;
        p.advance_by(t - p.now());
        assert!(!p.frame(16.0), "16 ms of an idle cluster is invisible");
        let mut changed = false;
        for _ in 0..10 {
            changed |= p.frame(16.0);
        }
        assert!(changed, "the clock's tenth ticks over within 160 ms");
    }

    /// Plays an idle cluster in 1-ms frames for 20 simulated seconds (two rounds of Lease
    /// renewals) and counts the frames that ran something yet asked for no re-render.
    fn silent_busy_frames(p: &mut Playground) -> usize {
        p.playing = true;
        let mut silent = 0;
        for _ in 0..20_000 {
            let before = p.session.sim.trace().next_seq();
            let changed = p.frame(1.0);
            let ran = p.session.sim.trace().next_seq() != before;
            if ran && !changed {
                silent += 1;
            }
        }
        silent
    }

    #[test]
    fn a_frame_that_only_renewed_leases_redraws_nothing_unless_a_view_shows_them() {
        let mut hidden = Playground::new(1);
        hidden.advance_by(1_000);
        let renewals = hidden.session.sim.api().writes(Kind::Lease);
        assert!(silent_busy_frames(&mut hidden) > 0);
        assert!(
            hidden.session.sim.api().writes(Kind::Lease) >= renewals + 6,
            "3 nodes, 20 s"
        );
        // The API conversation with heartbeats on, or the inspector on a node, shows them.
        let mut shown = Playground::new(1);
        shown.advance_by(1_000);
        shown.set_show_heartbeats(true);
        assert_eq!(silent_busy_frames(&mut shown), 0);
        let mut inspecting = Playground::new(1);
        inspecting.advance_by(1_000);
        inspecting.selected = Some(ObjectKey::new(Kind::Node, "", "node-1"));
        assert_eq!(silent_busy_frames(&mut inspecting), 0);
    }

    #[test]
    fn an_idle_cluster_sleeps_until_the_clocks_next_tenth_and_an_action_wakes_it() {
        let mut p = Playground::new(1);
        p.advance_by(1_000);
        assert_eq!(p.frame_delay_ms(), 0.0, "paused, but not yet quiet");
        for _ in 0..QUIET_FRAMES {
            p.frame(16.0);
        }
        assert_eq!(
            p.frame_delay_ms(),
            IDLE_SLEEP_MS,
            "paused: a look now and then"
        );
        p.playing = true;
        for _ in 0..QUIET_FRAMES {
            p.frame(1.0);
        }
        // Sleeping as told for two simulated seconds: every tenth is drawn, mostly in one frame
        // (a frame that lands just short of a tenth takes a frame more).
        let start = p.now() / 100;
        let (mut frames, mut drawn) = (0, 0);
        while p.now() / 100 < start + 20 {
            let sleep = p.frame_delay_ms();
            assert!(
                sleep == 0.0 || (FRAME_MS..=IDLE_SLEEP_MS).contains(&sleep),
                "{sleep}"
            );
            let tenth = p.now() / 100;
            drawn += usize::from(p.frame(sleep.max(FRAME_MS)));
            assert!(p.now() / 100 <= tenth + 1, "a sleep never skips a tenth");
            frames += 1;
        }
        assert_eq!(drawn, 20);
        assert!(frames <= 24, "{frames} frames for 20 tenths");
        p.speed = 0.25;
        assert_eq!(
            p.frame_delay_ms(),
            IDLE_SLEEP_MS,
            "slow motion: never longer than this"
        );
        p.wake();
        assert_eq!(p.frame_delay_ms(), 0.0);
    }

    #[test]
    fn while_the_cluster_changes_every_frame_is_drawn() {
        let mut p = Playground::new(1);
        p.advance_by(1_000);
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        // At the chosen speed from the start (slow motion is `moments`' own test).
        p.moments.slow_motion = false;
        p.playing = true;
        let mut busy = 0;
        for _ in 0..600 {
            let seen = p.visible_entries;
            p.frame(16.0);
            if p.visible_entries != seen {
                busy += 1;
                assert_eq!(p.frame_delay_ms(), 0.0, "at {} ms", p.now());
            }
        }
        assert!(busy > 10, "the rollout took {busy} frames");
        assert_eq!(ready_pods(&p).len(), 3);
        assert!(p.frame_delay_ms() > 0.0, "converged: the loop sleeps again");
    }

    #[test]
    fn a_frame_loop_cut_short_by_its_time_budget_ends_where_one_long_advance_does() {
        let mut sliced = Playground::new(7);
        let mut whole = Playground::new(7);
        assert!(sliced.apply(DEFAULT_MANIFEST).ok);
        assert!(whole.apply(DEFAULT_MANIFEST).ok);
        sliced.playing = true;
        sliced.speed = 100.0;
        // A budget that runs out after every chunk: the most a frame loop can be sliced.
        let (mut frames, mut lagged) = (0, false);
        while sliced.now() < 40_000 {
            sliced.frame_within(16.0, &mut || true);
            lagged |= sliced.lagging;
            frames += 1;
            assert!(frames < 100_000, "the frame loop makes progress");
        }
        assert!(lagged, "some frames had more than one chunk of work");
        sliced.playing = false;
        let end = 45_000;
        sliced.advance_by(end - sliced.now());
        whole.advance_by(end - whole.now());
        assert_eq!(sliced.session.state_json(), whole.session.state_json());
        assert_eq!(
            sliced.session.sim.trace().next_seq(),
            whole.session.sim.trace().next_seq()
        );
    }

    /// The default Deployment just applied, playing at 10×: Events on most frames.
    fn playing_a_rollout() -> Playground {
        let mut p = Playground::new(1);
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        p.moments.slow_motion = false;
        p.playing = true;
        p.speed = 10.0;
        p
    }

    #[test]
    fn the_pages_views_of_events_leave_the_stores_name_order_of_events_unbuilt() {
        // Kept once built, that order cost a B-tree insert and remove of string comparisons for
        // each of the tens of thousands of Events a big run creates and expires.
        let mut p = playing_a_rollout();
        for _ in 0..125 {
            p.frame(16.0);
        }
        let api = p.session.sim.api();
        let pod = api.list(Kind::Pod).next().expect("a pod").key();
        assert!(api.count(Kind::Event) > 5);
        let events = p.events();
        let newest = p.newest_events("", 300);
        let inspected = crate::viewmodel::inspect::InspectorData::of(&p.session.sim, pod, p.now());
        drop((p.cluster_view(), p.ownership(), p.session.state_json()));
        drop(crate::sim::progress::changes(api, api));
        assert_eq!(events.len(), api.count(Kind::Event));
        assert_eq!(newest.rows.first(), events.first());
        assert!(!inspected.events.is_empty());
        assert!(!api.name_ordered(Kind::Event));
        assert!(api.name_ordered(Kind::Pod), "a list builds it");
    }

    #[test]
    fn while_playing_the_events_list_follows_new_events_at_most_four_times_a_second() {
        let mut p = playing_a_rollout();
        let (mut live, mut drawn) = (Vec::new(), Vec::new());
        // Two real seconds of 16 ms frames while three pods are created, scheduled and started.
        for _ in 0..125 {
            p.frame(16.0);
            for (seen, key) in [(&mut live, p.events_now()), (&mut drawn, p.events_key())] {
                if seen.last() != Some(&key) {
                    seen.push(key);
                }
            }
        }
        assert!(
            live.len() > 20,
            "the rollout writes Events on many frames: {live:?}"
        );
        let most = (2_000.0 / EVENTS_REFRESH_MS) as usize + 1;
        assert!(
            drawn.len() <= most,
            "{} refreshes in 2 s, at most {most} allowed",
            drawn.len()
        );
        p.playing = false;
        assert_eq!(
            p.events_key(),
            p.events_now(),
            "paused, the list is current"
        );
    }

    #[test]
    fn a_frame_asks_for_a_re_render_when_pending_events_come_due() {
        let mut p = playing_a_rollout();
        let mut frames = 0;
        while p.events_key() == p.events_now() {
            p.frame(16.0);
            frames += 1;
            assert!(frames < 1_000, "new Events wait for the next refresh");
        }
        // Now almost frozen: the clock no longer moves, yet the pending Events must show.
        p.speed = 0.000_1;
        frames = 0;
        while p.events_key() != p.events_now() {
            let changed = p.frame(16.0);
            frames += 1;
            assert!(
                frames * 16 <= 2 * EVENTS_REFRESH_MS as usize,
                "shown within the pace"
            );
            assert_eq!(changed, p.events_key() == p.events_now(), "frame {frames}");
        }
    }

    #[test]
    fn slow_speeds_carry_fractions_of_a_millisecond() {
        let mut p = Playground::new(1);
        p.playing = true;
        p.speed = 0.25;
        let t0 = p.now();
        for _ in 0..8 {
            p.frame(1.0);
        }
        assert_eq!(p.now(), t0 + 2);
    }

    #[test]
    fn the_default_manifest_applies_cleanly() {
        let mut p = Playground::new(1);
        let report = p.apply(DEFAULT_MANIFEST);
        assert!(report.ok, "{:?}", report.diagnostics);
        assert_eq!(report.lines, ["deployment.apps/web created"]);
    }

    #[test]
    fn a_rollback_right_after_a_rollout_started_records_the_scale_down_of_the_abandoned_replica_set(
    ) {
        // Two Deployment passes race here (a watch event and a retry after a 409) and make the
        // same scale-down; the first is skipped, the second succeeds and must record its Event.
        let mut p = Playground::new(1);
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        p.advance_by(60_000);
        p.kubectl("set image deployment/web nginx=nginx:1.28");
        p.advance_by(2_000);
        p.kubectl("rollout undo deployment/web");
        p.advance_by(1_000);
        let events = p
            .kubectl("get events --field-selector involvedObject.kind=Deployment")
            .stdout;
        let scaled: Vec<&str> = events
            .lines()
            .filter_map(|l| l.split("   ").last())
            .filter(|m| m.starts_with("Scaled"))
            .collect();
        assert_eq!(scaled.len(), 3, "{events}");
        assert!(
            scaled[2].starts_with("Scaled down replica set web-")
                && scaled[2].ends_with(" from 1 to 0"),
            "{events}"
        );
    }

    #[test]
    fn after_an_apply_on_a_paused_clock_the_page_points_at_play_until_the_clock_moves() {
        let mut p = Playground::new(1);
        assert!(
            !p.play_hint(),
            "nothing applied yet: the Apply button has the hint"
        );
        // Refused or unchanged: nothing new for the controllers to do.
        p.apply("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: three\n");
        assert!(!p.play_hint());
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        assert!(p.play_hint());
        assert!(p.apply(DEFAULT_MANIFEST).lines[0].ends_with("unchanged"));
        assert!(p.play_hint(), "an unchanged re-apply keeps the hint it had");
        // Playing ends it, and so does any move of the clock (here a step).
        p.playing = true;
        assert!(!p.play_hint());
        p.playing = false;
        assert!(p.step());
        assert!(!p.play_hint());
        // Applying a change while paused brings it back; playing at the time keeps it away.
        assert!(
            p.apply(&DEFAULT_MANIFEST.replace("replicas: 3", "replicas: 4"))
                .ok
        );
        assert!(p.play_hint());
        p.playing = true;
        assert!(
            p.apply(&DEFAULT_MANIFEST.replace("replicas: 3", "replicas: 5"))
                .ok
        );
        assert!(!p.play_hint());
        // A reset starts over: nothing applied.
        p.playing = false;
        assert!(
            p.apply(&DEFAULT_MANIFEST.replace("replicas: 3", "replicas: 6"))
                .ok
        );
        p.reset();
        assert!(!p.play_hint());
    }

    #[test]
    fn a_broken_manifest_reports_a_positioned_diagnostic_and_changes_nothing() {
        let mut p = Playground::new(1);
        let report = p.apply("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: three\n");
        assert!(!report.ok);
        assert!(
            report.diagnostics.iter().any(|d| d.line > 0),
            "{:?}",
            report.diagnostics
        );
        assert_eq!(p.session.sim.api().list(Kind::Deployment).count(), 0);
        assert_eq!(p.notices().last().map(|n| n.kind), Some(NoticeKind::Error));
    }

    #[test]
    fn menu_commands_run_through_kubectl_and_say_what_they_did() {
        let mut p = Playground::new(1);
        let out = p.run_command("cordon node-1");
        assert!(out.ok, "{out:?}");
        assert_eq!(p.console.entries().len(), 1);
        assert!(p
            .notices()
            .last()
            .is_some_and(|n| n.text.starts_with("kubectl cordon node-1: ")));
        assert!(p.cluster().nodes[0].unschedulable);
    }

    #[test]
    fn a_lesson_offers_its_actions_and_reset_starts_it_over() {
        let mut p = Playground::new(1);
        assert!(p.lesson().is_none());
        let text = crate::sim::examples::by_name("thermostat").expect("built-in");
        assert!(p.load_scenario(text, None).is_ok());
        let lesson = p.lesson().expect("a lesson card");
        assert!(!lesson.steps.is_empty());
        p.advance_by(30_000);
        let pods_before = p.cluster().all_pods().count();
        assert!(pods_before > 0);
        assert!(p.try_this(0).is_ok(), "Delete every web pod");
        assert!(p.try_this(99).is_err());
        p.reset();
        assert_eq!(p.now(), 0, "the lesson starts over at t=0");
        assert!(p.lesson().is_some());
    }

    /// A scenario written in the editor: four small nodes, its own seed, a fault at 40 s.
    const WRITTEN_SCENARIO: &str = "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: mine}
spec:
  seed: 7
  nodes: {count: 4, cpu: \"2\", memory: 4Gi}
  steps:
  - at: 40s
    fault: {type: NodeDown, node: node-2}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: \"nginx:1.27\"}]
";

    #[test]
    fn reset_after_applying_a_written_scenario_runs_the_whole_scenario_from_t0() {
        let mut p = Playground::new(1);
        p.advance_by(5_000);
        let report = p.apply(WRITTEN_SCENARIO);
        assert!(report.ok, "{report:?}");
        assert!(
            p.scenario_applied(),
            "Apply applied the Deployment and left the rest to Reset"
        );
        assert_eq!(
            p.cluster().nodes.len(),
            3,
            "Apply ignores the node shorthand"
        );
        p.reset();
        assert!(!p.scenario_applied());
        assert_eq!(p.now(), 0, "the scenario starts at t=0");
        assert_eq!(p.seed(), 7, "with its own seed");
        assert_eq!(p.cluster().nodes.len(), 4, "on its own nodes");
        assert_eq!(p.session.sim.api().count(Kind::Deployment), 1);
        assert_eq!(
            p.notices().last().map(|n| n.text.as_str()),
            Some("Scenario restarted from the beginning")
        );
        // And Reset keeps restarting it.
        p.advance_by(60_000);
        p.reset();
        assert_eq!((p.now(), p.seed()), (0, 7));
        assert_eq!(p.cluster().nodes.len(), 4);
    }

    #[test]
    fn applying_the_running_lessons_own_text_leaves_reset_restarting_the_lesson() {
        let mut p = Playground::new(1);
        let text = crate::sim::examples::by_name("thermostat").expect("built-in");
        assert!(p.load_scenario(text, None).is_ok());
        let edited = text.replace("replicas: 3", "replicas: 4");
        assert!(p.apply(&edited).ok);
        assert!(
            !p.scenario_applied(),
            "its Scenario document is the running one"
        );
        p.reset();
        assert_eq!(
            p.notices().last().map(|n| n.text.as_str()),
            Some("Lesson restarted from the beginning")
        );
    }

    #[test]
    fn a_playground_opened_from_a_link_is_the_one_booted_then_loaded() {
        let text = crate::sim::examples::by_name("spec-status-gap").expect("built-in");
        let (mut opened, result) = Playground::opened(text, Some(5), 1);
        assert!(result.is_ok(), "{result:?}");
        let mut loaded = Playground::new(1);
        assert!(loaded.load_scenario(text, Some(5)).is_ok());
        let texts = |p: &Playground| p.notices().map(|n| n.text.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&opened), texts(&loaded));
        assert_eq!((opened.now(), opened.seed()), (loaded.now(), loaded.seed()));
        opened.advance_by(20_000);
        loaded.advance_by(20_000);
        assert_eq!(opened.session.state_json(), loaded.session.state_json());
        assert_eq!(opened.lesson(), loaded.lesson());
        // Reset starts the same lesson over in both.
        opened.reset();
        loaded.reset();
        assert_eq!(opened.session.state_json(), loaded.session.state_json());
    }

    #[test]
    fn a_link_that_fails_to_load_opens_on_the_default_cluster_with_its_diagnostics() {
        let (p, result) = Playground::opened("kind: Nonsense\n", None, 3);
        let diags = result.expect_err("an unknown kind is an error");
        assert_eq!(p.diagnostics(), diags.as_slice());
        assert_eq!(p.seed(), 3);
        assert_eq!(p.cluster().nodes.len(), 3);
        assert!(p.cluster().nodes.iter().all(|n| n.ready == "True"));
        assert!(p.lesson().is_none());
    }

    #[test]
    fn notices_expire_after_a_few_real_seconds() {
        let mut p = Playground::new(1);
        p.notify("hello", NoticeKind::Info);
        assert_eq!(p.notices().count(), 1);
        for _ in 0..(NOTICE_MS / MAX_FRAME_MS) as usize + 1 {
            p.frame(MAX_FRAME_MS);
        }
        assert_eq!(p.notices().count(), 0);
    }

    #[test]
    fn an_info_notice_is_gone_within_three_seconds_and_an_error_stays_twice_as_long() {
        let mut p = Playground::new(1);
        p.notify("applied", NoticeKind::Info);
        p.notify("refused", NoticeKind::Error);
        for _ in 0..30 {
            p.frame(100.0);
        }
        let left: Vec<&str> = p.notices().map(|n| n.text.as_str()).collect();
        assert_eq!(left, ["refused"], "after 3 s");
        for _ in 0..30 {
            p.frame(100.0);
        }
        assert_eq!(p.notices().count(), 0, "after 6 s");
    }

    #[test]
    fn a_progress_notice_stays_until_what_it_waited_for_arrives_and_then_gives_way() {
        let mut p = Playground::new(1);
        p.notify("Loading the JavaScript engine…", NoticeKind::Progress);
        for _ in 0..100 {
            p.frame(100.0);
        }
        let texts =
            |p: &Playground| -> Vec<String> { p.notices().map(|n| n.text.clone()).collect() };
        assert_eq!(texts(&p), ["Loading the JavaScript engine…"], "after 10 s");
        p.update(
            crate::viewmodel::action::Action::Apply(
                DEFAULT_MANIFEST.to_string(),
                crate::viewmodel::action::reply(),
            ),
            &mut || false,
        );
        assert!(
            p.notices().all(|n| n.kind != NoticeKind::Progress),
            "the waiting Apply ran: {:?}",
            texts(&p)
        );
        p.notify("Checking the controller…", NoticeKind::Progress);
        p.notify("Check my controller: convergent", NoticeKind::Info);
        let after = texts(&p);
        assert!(
            !after.iter().any(|t| t.starts_with("Checking")),
            "{after:?}"
        );
        assert_eq!(
            after.last().map(String::as_str),
            Some("Check my controller: convergent")
        );
    }

    #[test]
    fn applying_the_default_deployment_converges_to_three_ready_pods_and_a_deleted_pod_is_replaced()
    {
        let mut p = Playground::new(1);
        p.apply(DEFAULT_MANIFEST);
        p.advance_by(60_000);
        let before = ready_pods(&p);
        assert_eq!(before.len(), 3, "{:#?}", p.cluster());
        let victim = before[0].clone();
        assert!(p.delete_pod("default", &victim).is_ok());
        p.advance_by(60_000);
        let after = ready_pods(&p);
        assert_eq!(after.len(), 3);
        assert!(!after.contains(&victim));
        assert!(p.loops.card("replicaset-controller").is_some());
        assert!(p.sequence.messages().len() > 0);
        assert_eq!(p.history.last().map(|s| (s.desired, s.ready)), Some((3, 3)));
    }
}
