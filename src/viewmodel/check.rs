//! The "Check my controller" card: the checker's verdicts (`sim::controller_check`) as rows a
//! learner reads, each failure with what broke it and a link that replays the failing run.
//!
//! In the page the checker runs in a module of its own, loaded on first use (`src/lab.rs`), so
//! its report arrives as JSON: [`CheckView::from_json`] is the one way a card is made.

use crate::sim::controller_check::{Property, Report};
use serde_json::Value as Json;

use crate::sim::input::diagnostic::{Diagnostic, Severity};
use crate::sim::share::{self, Shared};

/// One property's row.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckRow {
    /// `convergent`, `level-triggered`, `idempotent`.
    pub property: &'static str,
    /// What the property asks, in the course's words.
    pub asks: &'static str,
    pub passed: bool,
    pub summary: String,
    /// The faults of the failing run, when it failed.
    pub schedule: Option<String>,
    /// The share-link fragment (`k1:…`) of the failing run.
    pub fragment: Option<String>,
}

/// The card: a report, or why the text could not be checked.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckView {
    Report {
        controller: String,
        runs: usize,
        rows: Vec<CheckRow>,
    },
    Refused(Vec<Diagnostic>),
}

fn asks(p: Property) -> &'static str {
    match p {
        Property::Convergent => {
            "reaches the end state of a fault-free run, also after a hand deletion, a restart and a racing writer"
        }
        Property::LevelTriggered => {
            "still converges when its watch events are lost, from what it sees on its next pass or resync"
        }
        Property::Idempotent => {
            "a crash after any request of a pass, then a fresh start, creates no duplicates and still converges"
        }
    }
}

impl CheckView {
    /// The card of a check's outcome.
    pub fn of(outcome: &Result<Report, Vec<Diagnostic>>) -> CheckView {
        CheckView::from_json(&outcome_json(outcome))
    }

    /// The card of an outcome as [`outcome_json`] writes it: how the page's checker module
    /// (`src/lab.rs`) hands its report over.
    pub fn from_json(outcome: &Json) -> CheckView {
        let text = |v: &Json, k: &str| v.get(k).and_then(Json::as_str).map(str::to_string);
        if let Some(diags) = outcome.get("err").and_then(Json::as_array) {
            return CheckView::Refused(
                diags
                    .iter()
                    .map(|d| Diagnostic {
                        file: text(d, "file").unwrap_or_default(),
                        line: d.get("line").and_then(Json::as_u64).unwrap_or(1) as u32,
                        col: d.get("col").and_then(Json::as_u64).unwrap_or(1) as u32,
                        severity: Severity::Error,
                        message: text(d, "message").unwrap_or_default(),
                        field: None,
                    })
                    .collect(),
            );
        }
        let report = outcome.get("ok").unwrap_or(&Json::Null);
        let rows = report
            .get("verdicts")
            .and_then(Json::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|v| {
                let property = Property::ALL
                    .into_iter()
                    .find(|p| v.get("property").and_then(Json::as_str) == Some(p.as_str()))?;
                Some(CheckRow {
                    property: property.as_str(),
                    asks: asks(property),
                    passed: v.get("passed").and_then(Json::as_bool).unwrap_or(false),
                    summary: text(v, "summary").unwrap_or_default(),
                    schedule: text(v, "failingSchedule"),
                    fragment: text(v, "reproduce").map(|text| {
                        share::encode(&Shared {
                            text,
                            ..Shared::default()
                        })
                    }),
                })
            })
            .collect();
        CheckView::Report {
            controller: text(report, "controller").unwrap_or_default(),
            runs: report.get("runs").and_then(Json::as_u64).unwrap_or(0) as usize,
            rows,
        }
    }

    /// Whether every property held.
    pub fn passed(&self) -> bool {
        matches!(self, CheckView::Report { rows, .. } if rows.iter().all(|r| r.passed))
    }
}

/// A check's outcome as JSON: `{"ok": report}` or `{"err": [diagnostics]}`.
pub fn outcome_json(outcome: &Result<Report, Vec<Diagnostic>>) -> Json {
    match outcome {
        Ok(r) => serde_json::json!({ "ok": r }),
        Err(diags) => serde_json::json!({ "err": diags.iter().map(|d| serde_json::json!({
            "file": d.file, "line": d.line, "col": d.col, "message": d.message,
        })).collect::<Vec<_>>() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = include_str!("../../tests/fixtures/controllers/website.yaml");
    const GENERATE_NAME: &str =
        include_str!("../../tests/fixtures/controllers/website-generate-name.yaml");

    fn check(text: &str) -> CheckView {
        CheckView::of(&crate::sim::controller_check::check_controller(
            "editor.yaml",
            text,
            None,
        ))
    }

    #[test]
    fn a_good_controller_gets_three_green_rows_and_no_links() {
        let v = check(GOOD);
        assert!(v.passed(), "{v:?}");
        let CheckView::Report { rows, .. } = v else {
            panic!("a report")
        };
        let names: Vec<&str> = rows.iter().map(|r| r.property).collect();
        assert_eq!(names, ["convergent", "level-triggered", "idempotent"]);
        assert!(rows.iter().all(|r| r.fragment.is_none()));
    }

    #[test]
    fn a_failing_property_links_to_a_run_that_opens_as_the_failing_scenario() {
        let v = check(GENERATE_NAME);
        assert!(!v.passed());
        let CheckView::Report { rows, .. } = v else {
            panic!("a report")
        };
        let idem = rows.iter().find(|r| r.property == "idempotent").unwrap();
        assert!(!idem.passed);
        let fragment = idem.fragment.as_ref().expect("a link to the failing run");
        let Ok(share::Link::Scenario(shared)) = share::decode(fragment) else {
            panic!("the link decodes to a scenario")
        };
        assert!(shared.text.contains("CrashMidReconcile"), "{}", shared.text);
        assert!(idem.schedule.is_some());
    }

    #[test]
    fn a_report_read_back_from_json_makes_the_same_card() {
        let outcome =
            crate::sim::controller_check::check_controller("editor.yaml", GENERATE_NAME, None);
        let text = outcome_json(&outcome).to_string();
        let parsed: Json = serde_json::from_str(&text).unwrap();
        let card = CheckView::from_json(&parsed);
        assert_eq!(card, CheckView::of(&outcome));
        let CheckView::Report {
            rows,
            runs,
            controller,
        } = card
        else {
            panic!("a report")
        };
        assert_eq!((controller.as_str(), rows.len()), ("website", 3));
        assert!(runs > 3);
    }

    #[test]
    fn a_text_with_errors_is_refused_with_its_diagnostics() {
        let v = check("kind: Pod\nmetadata: {name: x}\n");
        assert!(
            matches!(v, CheckView::Refused(ref d) if !d.is_empty()),
            "{v:?}"
        );
        assert!(!v.passed());
    }
}
