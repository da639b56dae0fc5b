//! The lesson card: a loaded scenario's title, description, "try this" buttons and checks.
//!
//! A lesson is an ordinary scenario file (see `sim::examples`); this module only lays out what the
//! learner needs next to the cluster: what to do, and whether what the lesson claims has happened.

use crate::sim::examples;
use crate::sim::session::Session;
use crate::sim::time::clock;

/// A check's state, drawn with an icon as well as a colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckState {
    /// Its trigger has not happened: it is not watching yet.
    NotStarted,
    /// Watching, not yet decided.
    Waiting,
    Passed,
    Failed,
}

impl CheckState {
    /// The icon's name (`ui::icons::check_state` draws it as SVG: no font has to have it).
    pub fn icon(self) -> &'static str {
        match self {
            CheckState::NotStarted => "not-started",
            CheckState::Waiting => "waiting",
            CheckState::Passed => "passed",
            CheckState::Failed => "failed",
        }
    }

    /// The state in words, for screen readers.
    pub fn label(self) -> &'static str {
        match self {
            CheckState::NotStarted => "not started",
            CheckState::Waiting => "watching",
            CheckState::Passed => "passed",
            CheckState::Failed => "failed",
        }
    }

    /// The CSS modifier.
    pub fn class(self) -> &'static str {
        match self {
            CheckState::NotStarted => "check-not-started",
            CheckState::Waiting => "check-waiting",
            CheckState::Passed => "check-passed",
            CheckState::Failed => "check-failed",
        }
    }
}

/// One check of the lesson.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckView {
    pub name: String,
    pub state: CheckState,
    /// What it is waiting for ("after you delete every web pod"), what it watches for, or when
    /// it was decided.
    pub message: String,
}

/// One try-this step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepView {
    pub label: String,
    /// Offered now (its button is enabled).
    pub enabled: bool,
    /// Done (by its button, or by anything that had its effect), and when.
    pub done_at: Option<String>,
    /// When the lesson's own timeline would do it (`0:40`).
    pub at: Option<String>,
    /// While not offered: what it waits for ("after “web is Available” passes").
    pub waiting_for: Option<String>,
}

/// What the lesson card shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LessonView {
    /// The scenario's name (`thermostat`): `#example/<name>` when it is a built-in lesson.
    pub name: String,
    pub title: String,
    /// The course position of a built-in lesson.
    pub order: Option<u32>,
    pub description: String,
    /// The "try this" steps, in order.
    pub steps: Vec<StepView>,
    pub checks: Vec<CheckView>,
    /// The lesson's own timeline performs the steps the learner has not done ("play the lesson").
    pub playing_timeline: bool,
}

impl LessonView {
    /// The lesson loaded into `session`, if the scenario has anything to show.
    pub fn of(session: &Session) -> Option<LessonView> {
        let sc = &session.scenario;
        let name = sc.metadata.name.clone();
        let description = sc.spec.description.clone().unwrap_or_default();
        if name.is_empty()
            && description.is_empty()
            && sc.spec.try_this.is_empty()
            && sc.spec.checks.is_empty()
        {
            return None;
        }
        let builtin = examples::lesson(&name);
        let checks = session
            .checks()
            .into_iter()
            .map(|c| {
                let state = match (c.passed, &c.waiting_for) {
                    (Some(true), _) => CheckState::Passed,
                    (Some(false), _) => CheckState::Failed,
                    (None, Some(_)) => CheckState::NotStarted,
                    (None, None) => CheckState::Waiting,
                };
                let message = match (state, c.decided_at) {
                    (CheckState::Passed | CheckState::Failed, Some(t)) => {
                        format!("{} ({})", c.message, clock(t))
                    }
                    _ => c.message.clone(),
                };
                CheckView {
                    name: c.name,
                    state,
                    message,
                }
            })
            .collect();
        let steps = sc
            .spec
            .try_this
            .iter()
            .zip(session.try_this_statuses())
            .map(|(t, st)| StepView {
                label: t.label.clone(),
                enabled: st.enabled,
                done_at: st.done_at.map(super::format::moment),
                at: st.at.map(super::format::moment),
                waiting_for: st.waiting_for,
            })
            .collect();
        Some(LessonView {
            title: builtin.map_or_else(
                || {
                    if name.is_empty() {
                        "Scenario".into()
                    } else {
                        name.clone()
                    }
                },
                |l| l.title.to_string(),
            ),
            order: builtin.map(|l| l.order),
            name,
            description,
            steps,
            checks,
            playing_timeline: session.is_scripted(),
        })
    }

    /// Whether any step has a time on the lesson's timeline still to come ("play the lesson"
    /// has something to do).
    pub fn can_play_timeline(&self) -> bool {
        !self.playing_timeline
            && self
                .steps
                .iter()
                .any(|s| s.done_at.is_none() && s.at.is_some())
    }

    /// `2 of 5 checks passed`.
    pub fn progress(&self) -> String {
        let passed = self
            .checks
            .iter()
            .filter(|c| c.state == CheckState::Passed)
            .count();
        format!("{passed} of {} checks passed", self.checks.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str) -> Session {
        let text = examples::by_name(name).expect("built-in");
        Session::load("lesson.yaml", text, None).expect("a built-in lesson loads")
    }

    #[test]
    fn a_built_in_lesson_shows_its_title_actions_and_waiting_checks() {
        let s = load("thermostat");
        let v = LessonView::of(&s).expect("a lesson");
        assert_eq!(v.name, "thermostat");
        assert_eq!(v.order, Some(3));
        assert!(v.title.starts_with("The thermostat"));
        assert!(!v.description.is_empty());
        let first = v.steps.first().expect("a step");
        assert_eq!(first.label, "Delete every web pod");
        assert_eq!(
            first.at.as_deref(),
            Some("0:40"),
            "when the timeline does it"
        );
        assert!(
            !first.enabled && first.done_at.is_none(),
            "not before web is Available"
        );
        assert_eq!(
            first.waiting_for.as_deref(),
            Some("after “web is Available before anything breaks” passes")
        );
        assert!(!v.checks.is_empty());
        assert!(v
            .checks
            .iter()
            .all(|c| matches!(c.state, CheckState::Waiting | CheckState::NotStarted)));
        let gap = &v.checks[1];
        assert!(gap.name.starts_with("deleting pods opens a gap"));
        assert_eq!(gap.state, CheckState::NotStarted);
        assert_eq!(gap.message, "waits until you delete every web pod");
        assert!(v.can_play_timeline());
        assert!(v.progress().starts_with("0 of "));
    }

    #[test]
    fn the_plain_playground_has_no_lesson_card() {
        assert_eq!(LessonView::of(&Session::new(1)), None);
    }

    #[test]
    fn every_check_state_has_its_own_icon_and_words() {
        let all = [
            CheckState::NotStarted,
            CheckState::Waiting,
            CheckState::Passed,
            CheckState::Failed,
        ];
        let icons: std::collections::BTreeSet<_> = all.iter().map(|s| s.icon()).collect();
        let words: std::collections::BTreeSet<_> = all.iter().map(|s| s.label()).collect();
        assert_eq!((icons.len(), words.len()), (4, 4));
    }
}
