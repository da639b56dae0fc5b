//! The lesson card: a loaded scenario's title, description, "try this" buttons and checks.
//!
//! A lesson is an ordinary scenario file (see `sim::examples`); this module only lays out what the
//! learner needs next to the cluster: what to do, and whether what the lesson claims has happened.

use crate::sim::examples;
use crate::sim::session::Session;
use crate::sim::time::clock;

/// A check's state, drawn with a glyph as well as a colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckState {
    Waiting,
    Passed,
    Failed,
}

impl CheckState {
    /// ✓, ✕ or ⧗.
    pub fn glyph(self) -> &'static str {
        match self {
            CheckState::Waiting => "⧗",
            CheckState::Passed => "✓",
            CheckState::Failed => "✕",
        }
    }

    /// The CSS modifier.
    pub fn class(self) -> &'static str {
        match self {
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
    /// What it is waiting for, or when it was decided.
    pub message: String,
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
    /// The labels of the "try this" buttons, in order.
    pub try_this: Vec<String>,
    pub checks: Vec<CheckView>,
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
                let state = match c.passed {
                    None => CheckState::Waiting,
                    Some(true) => CheckState::Passed,
                    Some(false) => CheckState::Failed,
                };
                let message = match (state, c.decided_at) {
                    (CheckState::Waiting, _) => c.message.clone(),
                    (_, Some(t)) => format!("{} ({})", c.message, clock(t)),
                    _ => c.message.clone(),
                };
                CheckView {
                    name: c.name,
                    state,
                    message,
                }
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
            try_this: sc.spec.try_this.iter().map(|t| t.label.clone()).collect(),
            checks,
        })
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
        assert_eq!(
            v.try_this.first().map(String::as_str),
            Some("Delete every web pod")
        );
        assert!(!v.checks.is_empty());
        assert!(v.checks.iter().all(|c| c.state == CheckState::Waiting));
        assert!(v.progress().starts_with("0 of "));
    }

    #[test]
    fn the_plain_playground_has_no_lesson_card() {
        assert_eq!(LessonView::of(&Session::new(1)), None);
    }

    #[test]
    fn every_check_state_has_its_own_glyph() {
        let g: std::collections::BTreeSet<_> =
            [CheckState::Waiting, CheckState::Passed, CheckState::Failed]
                .iter()
                .map(|s| s.glyph())
                .collect();
        assert_eq!(g.len(), 3);
    }
}
