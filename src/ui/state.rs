//! The app's reducer: every change to the playground goes through one [`Action`].
//!
//! The model is large and not `Clone` (it owns the simulation), so the state holds it behind an
//! `Rc<RefCell<…>>` and a version number; the reducer returns a fresh `Rc` (a new version) when
//! anything changed, which is what makes Yew 0.23 re-render, and the same `Rc` when nothing did.

use std::cell::RefCell;
use std::rc::Rc;

use yew::prelude::*;

use crate::sim::api::types::{Millis, ObjectKey};
use crate::sim::faults::Fault;
use crate::sim::handoff::HandOff;
use crate::sim::input::diagnostic::Diagnostic;
use crate::sim::kubectl::complete::Completion;
use crate::sim::kubectl::{ApplyReport, CommandOutput};
use crate::viewmodel::Playground;

/// Wall-clock milliseconds of simulation work one animation frame may spend before the rest waits
/// for the next frame (input, drawing and the browser need the remainder of a 16.7 ms frame). A
/// busy big cluster then runs slower than real time, and the toolbar says it is lagging.
pub const FRAME_SIM_BUDGET_MS: f64 = 8.0;

/// A slot an action fills with its result, so callers outside Yew (the JS API) can read it right
/// after dispatching: Yew runs the reducer synchronously inside `dispatch`.
pub type Reply<T> = Rc<RefCell<Option<T>>>;

/// A new, empty reply slot.
pub fn reply<T>() -> Reply<T> {
    Rc::new(RefCell::new(None))
}

/// Everything the page can ask the model to do.
pub enum Action {
    /// One animation frame of this many real milliseconds.
    Frame(f64),
    Play,
    Pause,
    /// Run until the next visible move of the loop.
    Step(Reply<bool>),
    /// Run until the next hand-off between components (`sim::handoff`).
    StepHandOff(Reply<HandOff>),
    /// Pause playing when a lesson check passes or fails.
    SetPauseOnCheck(bool),
    /// Slow the clock down for a few simulated seconds after each action.
    SetSlowMotion(bool),
    SetSpeed(f64),
    /// Deterministic fast-forward.
    Advance(Millis),
    Apply(String, Reply<ApplyReport>),
    /// Opens a scenario (a share link, an embed's `load`): text and an optional seed override.
    Load(String, Option<u64>, Reply<Result<(), Vec<Diagnostic>>>),
    Delete(String, Reply<ApplyReport>),
    Inject(Fault, Reply<Result<String, String>>),
    DeletePod {
        namespace: String,
        name: String,
    },
    /// A command line and its standard input (`apply -f -` reads it).
    Kubectl(String, Option<String>, Reply<CommandOutput>),
    /// Tab in the console: the line completed against the cluster now (reads, changes nothing).
    Complete(String, Reply<Completion>),
    /// A kubectl command from a button or menu: like `Kubectl`, plus a notice of its result.
    Run(String),
    /// The loaded lesson's n-th "try this" action.
    TryThis(usize),
    /// Let the lesson's own timeline do the steps the learner has not done.
    PlayLesson,
    Select(Option<ObjectKey>),
    Reset,
    /// Reset with this seed (the toolbar's seed field).
    ResetWithSeed(u64),
    Dismiss(u64),
    ShowHeartbeats(bool),
    ShowIdle(bool),
}

/// The shared model plus the version the view last saw.
#[derive(Clone)]
pub struct AppState {
    pub model: Rc<RefCell<Playground>>,
    pub version: u64,
}

impl PartialEq for AppState {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.model, &other.model) && self.version == other.version
    }
}

impl AppState {
    /// Wraps a model.
    pub fn new(model: Playground) -> AppState {
        AppState {
            model: Rc::new(RefCell::new(model)),
            version: 0,
        }
    }
}

fn fill<T>(slot: &Reply<T>, value: T) {
    if let Ok(mut s) = slot.try_borrow_mut() {
        *s = Some(value);
    }
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        // A re-entrant dispatch (never expected) is dropped rather than panicking the page.
        let Ok(mut m) = self.model.try_borrow_mut() else {
            return self;
        };
        if !matches!(action, Action::Frame(_)) {
            // The frames after an action are drawn one by one (the page's `FrameWaker` ends a
            // sleep too).
            m.wake();
        }
        let changed = match action {
            Action::Frame(ms) => {
                let perf = web_sys::window().and_then(|w| w.performance());
                let start = perf.as_ref().map(|p| p.now());
                let mut out_of_time = || match (&perf, start) {
                    (Some(p), Some(s)) => p.now() - s > FRAME_SIM_BUDGET_MS,
                    _ => false,
                };
                m.frame_within(ms, &mut out_of_time)
            }
            Action::Play => {
                m.playing = true;
                true
            }
            Action::Pause => {
                m.playing = false;
                true
            }
            Action::Step(r) => {
                m.playing = false;
                let stepped = m.step();
                fill(&r, stepped);
                true
            }
            Action::StepHandOff(r) => {
                m.playing = false;
                let outcome = m.step_to_hand_off();
                fill(&r, outcome);
                true
            }
            Action::SetPauseOnCheck(on) => {
                m.moments.pause_on_check = on;
                true
            }
            Action::SetSlowMotion(on) => {
                m.moments.slow_motion = on;
                true
            }
            Action::SetSpeed(s) => {
                if s.is_finite() && s > 0.0 {
                    m.speed = s.clamp(0.01, 1000.0);
                }
                true
            }
            Action::Advance(ms) => {
                m.advance_by(ms);
                true
            }
            Action::Apply(text, r) => {
                let report = m.apply(&text);
                fill(&r, report);
                true
            }
            Action::Load(text, seed, r) => {
                let result = m.load_scenario(&text, seed);
                fill(&r, result);
                true
            }
            Action::Delete(text, r) => {
                let report = m.delete(&text);
                fill(&r, report);
                true
            }
            Action::Inject(f, r) => {
                let res = m.inject(f);
                fill(&r, res);
                true
            }
            Action::DeletePod { namespace, name } => {
                let _ = m.delete_pod(&namespace, &name);
                true
            }
            Action::TryThis(i) => {
                let _ = m.try_this(i);
                true
            }
            Action::PlayLesson => {
                m.play_lesson();
                true
            }
            Action::Run(cmd) => {
                m.run_command(&cmd);
                true
            }
            Action::Kubectl(cmd, stdin, r) => {
                let out = m.kubectl_with_input(&cmd, stdin.as_deref());
                fill(&r, out);
                true
            }
            Action::Select(k) => {
                m.selected = k;
                true
            }
            Action::Reset => {
                m.reset();
                true
            }
            Action::ResetWithSeed(seed) => {
                m.reset_with_seed(seed);
                true
            }
            Action::Dismiss(id) => {
                m.dismiss(id);
                true
            }
            Action::ShowHeartbeats(b) => {
                m.set_show_heartbeats(b);
                true
            }
            Action::ShowIdle(b) => {
                m.set_show_idle(b);
                true
            }
            Action::Complete(line, r) => {
                fill(&r, m.complete(&line));
                false
            }
        };
        drop(m);
        if changed {
            Rc::new(AppState {
                model: self.model.clone(),
                version: self.version + 1,
            })
        } else {
            self
        }
    }
}
