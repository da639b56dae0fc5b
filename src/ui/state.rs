//! The app's reducer: every change to the playground goes through one [`Action`], whose effect
//! [`Playground::update`] decides (in `viewmodel`, natively tested); this is the Yew shell.
//!
//! The model is large and not `Clone` (it owns the simulation), so the state holds it behind an
//! `Rc<RefCell<…>>` and a version number; the reducer returns a fresh `Rc` (a new version) when
//! anything changed, which is what makes Yew 0.23 re-render, and the same `Rc` when nothing did.

use std::cell::RefCell;
use std::rc::Rc;

use yew::prelude::*;

pub use crate::viewmodel::action::{reply, Action};
use crate::viewmodel::Playground;

thread_local! {
    /// Told when the run moves somewhere a link must follow ([`Playground::update_run`]):
    /// `share::run_changed`, wired by `ui/mod.rs` so this module and the share links do not
    /// import each other.
    static RUN_CHANGED: std::cell::Cell<Option<fn()>> = const { std::cell::Cell::new(None) };
}

/// Who is told when the run moves somewhere a link must follow.
pub fn on_run_changed(f: fn()) {
    RUN_CHANGED.with(|c| c.set(Some(f)));
}

/// Wall-clock milliseconds of simulation work one animation frame may spend before the rest waits
/// for the next frame (input, drawing and the browser need the remainder of a 16.7 ms frame). A
/// busy big cluster then runs slower than real time, and the toolbar says it is lagging.
pub const FRAME_SIM_BUDGET_MS: f64 = 8.0;

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

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        // A re-entrant dispatch (never expected) is dropped rather than panicking the page.
        let Ok(mut m) = self.model.try_borrow_mut() else {
            return self;
        };
        // The checker runs in a module of its own, and a text with a learner's controller waits
        // for the engine module: both load on first use, and what they answer comes back as an
        // action. Meanwhile a notice says what is happening.
        let action = match (action, super::engine::dispatcher()) {
            (Action::CheckController(text), Some(dispatch)) => {
                super::engine::check_later(text, dispatch);
                Err("Checking the controller: lost events, crashes, racing writers…")
            }
            (action, Some(dispatch)) if super::engine::must_wait(&action) => {
                super::engine::after_load(action, dispatch);
                Err("Loading the JavaScript engine for the Controller document…")
            }
            (action, _) => Ok(action),
        };
        let action = match action {
            Ok(action) => action,
            Err(notice) => {
                m.notify(notice, crate::viewmodel::playground::NoticeKind::Progress);
                drop(m);
                return Rc::new(AppState {
                    model: self.model.clone(),
                    version: self.version + 1,
                });
            }
        };
        let perf = web_sys::window().and_then(|w| w.performance());
        let start = perf.as_ref().map(|p| p.now());
        let mut out_of_time = || match (&perf, start) {
            (Some(p), Some(s)) => p.now() - s > FRAME_SIM_BUDGET_MS,
            _ => false,
        };
        let updated = m.update_run(action, &mut out_of_time);
        drop(m);
        if updated.run_moved {
            // The address bar keeps the run's actions, so a reload reopens them.
            if let Some(f) = RUN_CHANGED.with(|f| f.get()) {
                f();
            }
        }
        if updated.changed {
            Rc::new(AppState {
                model: self.model.clone(),
                version: self.version + 1,
            })
        } else {
            self
        }
    }
}
