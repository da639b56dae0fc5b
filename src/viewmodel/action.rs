//! Everything the page can ask the playground to do, as one [`Action`], and what each does
//! ([`Playground::update`]): the app's reducer is a thin Yew shell around this, so the update
//! logic is tested natively.

use std::cell::RefCell;
use std::rc::Rc;

use super::playground::NoticeKind;
use super::Playground;
use crate::sim::api::types::{Millis, ObjectKey};
use crate::sim::faults::Fault;
use crate::sim::handoff::HandOff;
use crate::sim::input::diagnostic::Diagnostic;
use crate::sim::kubectl::complete::Completion;
use crate::sim::kubectl::{ApplyReport, CommandOutput};

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
    /// Time travel: the clock to this simulated time of the run, back or forward.
    Seek(Millis),
    /// Behind the run's end: what changes between now and then, as a card.
    ShowChangesAhead,
    /// What changes between two times of the run, as the learner typed them (`01:30`, `90s`).
    ShowChangesBetween(String, String),
    CloseChanges,
    Apply(String, Reply<ApplyReport>),
    /// Opens a scenario (a share link, an embed's `load`): text and an optional seed override.
    Load(String, Option<u64>, Reply<Result<(), Vec<Diagnostic>>>),
    Delete(String, Reply<ApplyReport>),
    /// Opens a run link (a share link to a moment): its start, its actions replayed, paused.
    OpenRun(Box<crate::sim::share::RunLink>),
    /// "Check my controller": the text's learner's controller through the checker's battery.
    CheckController(String),
    /// A check's card, made where the checker ran (the page's checker module).
    ShowCheck(crate::viewmodel::check::CheckView),
    /// Closes the checker's card.
    CloseCheck,
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

fn fill<T>(slot: &Reply<T>, value: T) {
    if let Ok(mut s) = slot.try_borrow_mut() {
        *s = Some(value);
    }
}

impl Action {
    /// Whether the run, once this is done, rests at a moment the learner chose: paused, or moved
    /// on while paused (advanced, stepped). Seeking does not count: it only looks at the run.
    fn rests_the_run(&self) -> bool {
        matches!(
            self,
            Action::Pause | Action::Advance(_) | Action::Step(_) | Action::StepHandOff(_)
        )
    }
}

/// What [`Playground::update_run`] came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Updated {
    /// The page must re-render.
    pub changed: bool,
    /// A link to the run must name it anew (the address bar, so that a reload reopens what is
    /// on screen): an action joined its journal, or it came to rest at a new moment.
    pub run_moved: bool,
}

impl Playground {
    /// [`Playground::update`], also saying whether the run moved somewhere a link must follow:
    /// an action joined its journal, it paused (the learner or a lesson check stopped it), or it
    /// was advanced or stepped while paused. Playing does not (the link follows at the pause),
    /// nor does seeking (it only looks). Which of these happened is the same however fast the
    /// page is, so what a reload reopens never depends on when it came.
    pub fn update_run(&mut self, action: Action, out_of_time: &mut dyn FnMut() -> bool) -> Updated {
        let journaled = self.session.actions().len();
        let was_playing = self.playing;
        let rests = action.rests_the_run();
        let changed = self.update(action, out_of_time);
        let run_moved =
            self.session.actions().len() != journaled || rests || (was_playing && !self.playing);
        Updated { changed, run_moved }
    }

    /// Does `action`, filling its reply slot; true when the page must re-render. A frame stops
    /// early once `out_of_time` says its share of the wall clock is spent.
    pub fn update(&mut self, action: Action, out_of_time: &mut dyn FnMut() -> bool) -> bool {
        let frame = matches!(action, Action::Frame(_));
        let changed = self.update_inner(action, out_of_time);
        if !frame {
            // An action the run did not have branches it; reaching its end ends time travel.
            self.follow_tape();
        }
        changed
    }

    fn update_inner(&mut self, action: Action, out_of_time: &mut dyn FnMut() -> bool) -> bool {
        if !matches!(action, Action::Frame(_)) {
            // The frames after an action are drawn one by one (the page's `FrameWaker` ends a
            // sleep too).
            self.wake();
        }
        if matches!(
            action,
            Action::Apply(..)
                | Action::Load(..)
                | Action::Delete(..)
                | Action::OpenRun(_)
                | Action::ShowCheck(_)
        ) {
            // What a progress notice waited for (the engine, the checker) has come.
            self.end_progress();
        }
        match action {
            Action::Frame(ms) => self.frame_within(ms, out_of_time),
            Action::Play => {
                self.playing = true;
                true
            }
            Action::Pause => {
                self.playing = false;
                true
            }
            Action::Step(r) => {
                self.playing = false;
                let stepped = self.step();
                fill(&r, stepped);
                true
            }
            Action::StepHandOff(r) => {
                self.playing = false;
                let outcome = self.step_to_hand_off();
                fill(&r, outcome);
                true
            }
            Action::SetPauseOnCheck(on) => {
                self.moments.pause_on_check = on;
                true
            }
            Action::SetSlowMotion(on) => {
                self.moments.slow_motion = on;
                true
            }
            Action::SetSpeed(s) => {
                if s.is_finite() && s > 0.0 {
                    self.speed = s.clamp(0.01, 1000.0);
                }
                true
            }
            Action::Advance(ms) => {
                self.advance_by(ms);
                true
            }
            Action::Seek(ms) => {
                self.seek(ms);
                true
            }
            Action::ShowChangesAhead => {
                self.show_changes_ahead();
                true
            }
            Action::ShowChangesBetween(from, to) => {
                match (
                    crate::sim::time::parse_clock(&from),
                    crate::sim::time::parse_clock(&to),
                ) {
                    (Ok(from), Ok(to)) => self.show_changes(from, to),
                    (Err(e), _) | (_, Err(e)) => self.notify(&e, NoticeKind::Error),
                }
                true
            }
            Action::CloseChanges => {
                self.changes = None;
                true
            }
            Action::Apply(text, r) => {
                let report = self.apply(&text);
                fill(&r, report);
                true
            }
            Action::Load(text, seed, r) => {
                let result = self.load_scenario(&text, seed);
                fill(&r, result);
                true
            }
            Action::OpenRun(run) => {
                self.open_run(&run);
                true
            }
            Action::Delete(text, r) => {
                let report = self.delete(&text);
                fill(&r, report);
                true
            }
            Action::CheckController(text) => {
                self.check_controller(&text);
                true
            }
            Action::ShowCheck(view) => {
                self.show_check(view);
                true
            }
            Action::CloseCheck => {
                self.controller_check = None;
                true
            }
            Action::Inject(f, r) => {
                let res = self.inject(f);
                fill(&r, res);
                true
            }
            Action::DeletePod { namespace, name } => {
                let _ = self.delete_pod(&namespace, &name);
                true
            }
            Action::TryThis(i) => {
                let _ = self.try_this(i);
                true
            }
            Action::PlayLesson => {
                self.play_lesson();
                true
            }
            Action::Run(cmd) => {
                self.run_command(&cmd);
                true
            }
            Action::Kubectl(cmd, stdin, r) => {
                let out = self.kubectl_with_input(&cmd, stdin.as_deref());
                fill(&r, out);
                true
            }
            Action::Select(k) => {
                self.selected = k;
                true
            }
            Action::Reset => {
                self.reset();
                true
            }
            Action::ResetWithSeed(seed) => {
                self.reset_with_seed(seed);
                true
            }
            Action::Dismiss(id) => {
                self.dismiss(id);
                true
            }
            Action::ShowHeartbeats(b) => {
                self.set_show_heartbeats(b);
                true
            }
            Action::ShowIdle(b) => {
                self.set_show_idle(b);
                true
            }
            Action::Complete(line, r) => {
                fill(&r, self.complete(&line));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> impl FnMut() -> bool {
        || false
    }

    #[test]
    fn a_step_pauses_playing_and_replies_whether_anything_happened() {
        let mut p = Playground::new(1);
        p.playing = true;
        let r = reply();
        assert!(p.update(Action::Step(r.clone()), &mut never()));
        assert!(!p.playing);
        assert!(r.borrow().is_some(), "the reply slot is filled");
    }

    #[test]
    fn a_link_follows_the_run_where_it_rests_and_its_actions_but_not_its_frames_or_seeks() {
        let mut p = Playground::new(1);
        let moved = |p: &mut Playground, a: Action| p.update_run(a, &mut never()).run_moved;
        assert!(
            moved(&mut p, Action::Advance(45_000)),
            "advanced while paused"
        );
        assert!(moved(&mut p, Action::Step(reply())), "stepped while paused");
        assert!(moved(&mut p, Action::Pause), "paused");
        let tab = Action::Complete("get no".into(), reply());
        assert!(
            !moved(&mut p, tab),
            "a completion is not an action of the run"
        );
        assert!(!moved(&mut p, Action::Seek(10_000)), "a seek only looks");
        let command = Action::Kubectl("create namespace team-a".into(), None, reply());
        assert!(
            moved(&mut p, command),
            "a console command joins the run's journal"
        );
        assert!(
            !moved(&mut p, Action::Play),
            "playing: the link follows at the pause"
        );
        assert!(
            !moved(&mut p, Action::Frame(16.0)),
            "a frame of a run playing on"
        );
        assert!(p.playing);
    }

    #[test]
    fn tab_completion_fills_its_reply_and_asks_for_no_redraw() {
        let mut p = Playground::new(1);
        let r = reply();
        assert!(!p.update(Action::Complete("get no".into(), r.clone()), &mut never()));
        let done = r.borrow_mut().take().expect("completed");
        assert!(format!("{done:?}").contains("nodes"), "{done:?}");
    }

    #[test]
    fn a_speed_that_is_not_a_positive_number_is_ignored_and_others_are_clamped() {
        let mut p = Playground::new(1);
        let before = p.speed;
        p.update(Action::SetSpeed(f64::NAN), &mut never());
        p.update(Action::SetSpeed(-2.0), &mut never());
        assert_eq!(p.speed, before);
        p.update(Action::SetSpeed(5000.0), &mut never());
        assert_eq!(p.speed, 1000.0);
    }

    #[test]
    fn an_apply_replies_with_kubectls_lines_and_a_refused_one_with_its_diagnostics() {
        let mut p = Playground::new(1);
        let r = reply();
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: one}\nspec:\n  containers: [{name: c, image: nginx}]\n";
        assert!(p.update(Action::Apply(pod.into(), r.clone()), &mut never()));
        let report = r.borrow_mut().take().expect("applied");
        assert!(report.ok, "{report:?}");
        assert_eq!(report.lines, ["pod/one created"]);
        p.update(Action::Apply("kind: Pod\n".into(), r.clone()), &mut never());
        let refused = r.borrow_mut().take().expect("refused");
        assert!(
            !refused.ok && !refused.diagnostics.is_empty(),
            "{refused:?}"
        );
    }
}
