//! The battery: which fault schedules test which property, placed at moments read from the fault-free run.

use serde_json::{json, Value as Json};

use crate::sim::api::types::{Kind, Millis, ObjectKey};
use crate::sim::faults::Fault;
use crate::sim::time::{format_duration, SECOND};

use super::end_state::object_name;
use super::Property;

/// How long a broken watch stays broken before the informer relists.
pub(super) const BROKEN_WATCH: Millis = 20 * SECOND;
/// How long the DELETED events of the owned kind are lost around a hand deletion.
pub(super) const LOST_DELETES: Millis = 30 * SECOND;
/// How long a ConflictingWriter races the controller's writes.
pub(super) const RIVAL: Millis = 60 * SECOND;
/// How long after its creation the first child is deleted by hand.
const DELETE_AFTER: Millis = 10 * SECOND;
/// The kubelet's crash back-off before a crashed controller runs again.
const CRASH_RESTART: Millis = 10 * SECOND;
/// At most this many crash points: a pass sending a hundred requests is crashed after a spread of
/// them, not after each.
pub(super) const MAX_CRASH_POINTS: usize = 8;

/// One timeline step of a run.
#[derive(Clone, Debug)]
pub(super) struct Step {
    pub(super) at: Millis,
    pub(super) action: Action,
}

#[derive(Clone, Debug)]
pub(super) enum Action {
    Fault(Fault),
    /// A kubectl command line, without `kubectl`.
    Kubectl(String),
}

impl Step {
    /// The step as a Scenario document writes it.
    pub(super) fn to_json(&self) -> Json {
        let at = format_duration(self.at);
        match &self.action {
            Action::Fault(f) => {
                json!({"at": at, "fault": serde_json::to_value(f).unwrap_or(Json::Null)})
            }
            Action::Kubectl(c) => json!({"at": at, "kubectl": c}),
        }
    }
}

/// One run of the battery.
#[derive(Clone, Debug)]
pub(super) struct Schedule {
    pub(super) property: Property,
    pub(super) steps: Vec<Step>,
    /// How a summary opens ("after a crash after its 1st request").
    pub(super) context: String,
    /// What happens when, for the learner ("at 12.4s Deployment web is deleted by hand").
    pub(super) description: String,
    /// When the last fault is over (healed, or its process started again): convergence is
    /// waited for from here.
    pub(super) quiet_from: Millis,
}

/// An object of the fault-free run the schedules aim at.
#[derive(Clone, Debug)]
pub(super) struct Child {
    pub(super) kind: Kind,
    pub(super) namespace: String,
    pub(super) name: String,
    /// When the controller created it.
    pub(super) created_at: Millis,
}

impl Child {
    fn named(&self) -> String {
        object_name(self.kind.as_str(), &self.namespace, &self.name)
    }

    /// `Kind/namespace/name`, as faults name an object.
    fn reference(&self) -> String {
        ObjectKey::new(self.kind, &self.namespace, &self.name).to_string()
    }

    fn delete_command(&self) -> String {
        let mut cmd = format!("delete {} {}", self.kind.resource(), self.name);
        if !self.namespace.is_empty() {
            cmd.push_str(&format!(" -n {}", self.namespace));
        }
        cmd
    }
}

/// What the fault-free run showed that the battery is placed by.
pub(super) struct Landmarks {
    pub(super) component: String,
    /// The controller's first reconcile pass.
    pub(super) first_pass: Millis,
    /// Its first successful write.
    pub(super) first_write: Millis,
    /// The first object of an owned kind it created that is still there at the end.
    pub(super) child: Option<Child>,
    /// The primary that child belongs to (or the first one): `Kind/namespace/name`.
    pub(super) primary: Option<String>,
    /// The most requests one pass sent.
    pub(super) max_requests: usize,
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The crash points: after 0, 1, … requests of a pass, up to one fewer than the most a pass
/// sent (a crash after all of them cuts nothing), spread when there are too many.
pub(super) fn crash_points(max_requests: usize) -> Vec<usize> {
    if max_requests <= MAX_CRASH_POINTS {
        return (0..max_requests).collect();
    }
    let mut points: Vec<usize> = (0..MAX_CRASH_POINTS)
        .map(|i| i * (max_requests - 1) / (MAX_CRASH_POINTS - 1))
        .collect();
    points.dedup();
    points
}

/// The battery for a controller whose fault-free run showed `m`.
pub(super) fn battery(m: &Landmarks) -> Vec<Schedule> {
    let component = &m.component;
    let t = format_duration;
    let mut out = Vec::new();

    // Convergent: ordinary disturbances.
    if let Some(child) = &m.child {
        let at = child.created_at + DELETE_AFTER;
        out.push(Schedule {
            property: Property::Convergent,
            steps: vec![Step {
                at,
                action: Action::Kubectl(child.delete_command()),
            }],
            context: format!("after {} was deleted by hand", child.named()),
            description: format!("at {} {} is deleted by hand", t(at), child.named()),
            quiet_from: at,
        });
    }
    let restart = m.first_write + SECOND;
    out.push(Schedule {
        property: Property::Convergent,
        steps: vec![Step {
            at: restart,
            action: Action::Fault(Fault::RestartController {
                component: component.clone(),
            }),
        }],
        context: format!("after a restart at {}", t(restart)),
        description: format!(
            "at {} the controller restarts (its module state is gone)",
            t(restart)
        ),
        quiet_from: restart,
    });
    let mut rivals = Vec::new();
    let mut raced = Vec::new();
    if let Some(primary) = &m.primary {
        rivals.push(Step {
            at: m.first_pass,
            action: Action::Fault(Fault::ConflictingWriter {
                object: primary.clone(),
                duration: Some(RIVAL),
            }),
        });
        raced.push(format!("from {} {primary}", t(m.first_pass)));
    }
    if let Some(child) = &m.child {
        let at = child.created_at + 1;
        rivals.push(Step {
            at,
            action: Action::Fault(Fault::ConflictingWriter {
                object: child.reference(),
                duration: Some(RIVAL),
            }),
        });
        raced.push(format!("from {} {}", t(at), child.reference()));
    }
    if let Some(last) = rivals.iter().map(|s| s.at).max() {
        out.push(Schedule {
            property: Property::Convergent,
            steps: rivals,
            context: "with a second writer racing its writes".into(),
            description: format!(
                "a ConflictingWriter races each of its writes for {} ({}): each meets 409 Conflict once",
                t(RIVAL),
                raced.join(", ")
            ),
            quiet_from: last + RIVAL,
        });
    }

    // Level-triggered: lost watch events, then a relist.
    out.push(Schedule {
        property: Property::LevelTriggered,
        steps: vec![Step {
            at: m.first_pass,
            action: Action::Fault(Fault::DropWatchEvents {
                component: component.clone(),
                count: None,
                probability: None,
                kind: None,
                event_type: None,
                duration: Some(BROKEN_WATCH),
            }),
        }],
        context: format!(
            "with its watch broken for {} from {} (every event lost, then a relist)",
            t(BROKEN_WATCH),
            t(m.first_pass)
        ),
        description: format!(
            "from {} every watch event of the controller is lost for {}; then it relists",
            t(m.first_pass),
            t(BROKEN_WATCH)
        ),
        quiet_from: m.first_pass + BROKEN_WATCH,
    });
    if let Some(child) = &m.child {
        let drop_at = child.created_at + DELETE_AFTER;
        let delete_at = drop_at + SECOND;
        out.push(Schedule {
            property: Property::LevelTriggered,
            steps: vec![
                Step {
                    at: drop_at,
                    action: Action::Fault(Fault::DropWatchEvents {
                        component: component.clone(),
                        count: None,
                        probability: None,
                        kind: Some(child.kind.as_str().to_string()),
                        event_type: Some("DELETED".into()),
                        duration: Some(LOST_DELETES),
                    }),
                },
                Step {
                    at: delete_at,
                    action: Action::Kubectl(child.delete_command()),
                },
            ],
            context: format!(
                "with the DELETED watch events of its {} lost for {} and {} deleted by hand",
                super::end_state::plural(child.kind.as_str(), 2),
                t(LOST_DELETES),
                child.named()
            ),
            description: format!(
                "from {} the controller's DELETED watch events of {} are lost for {} (then it relists); at {} {} is deleted by hand",
                t(drop_at),
                super::end_state::plural(child.kind.as_str(), 2),
                t(LOST_DELETES),
                t(delete_at),
                child.named()
            ),
            quiet_from: drop_at + LOST_DELETES,
        });
    }

    // Idempotent: a crash in the middle of a pass, after each request index.
    for k in crash_points(m.max_requests) {
        let when = if k == 0 {
            "before its 1st request".to_string()
        } else {
            format!("after its {} request", ordinal(k))
        };
        out.push(Schedule {
            property: Property::Idempotent,
            steps: vec![Step {
                at: 0,
                action: Action::Fault(Fault::CrashMidReconcile {
                    component: component.clone(),
                    after_requests: k as u32,
                }),
            }],
            context: format!("after a crash {when}"),
            description: format!(
                "the first pass that sends more than {k} request{} dies {when} (CrashMidReconcile afterRequests: {k}) and the controller starts again {} later",
                if k == 1 { "" } else { "s" },
                t(CRASH_RESTART)
            ),
            quiet_from: CRASH_RESTART,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_points_cut_every_pass_short_and_are_spread_when_many() {
        assert_eq!(crash_points(0), Vec::<usize>::new());
        assert_eq!(crash_points(2), vec![0, 1]);
        assert_eq!(crash_points(100), vec![0, 14, 28, 42, 56, 70, 84, 99]);
    }

    #[test]
    fn ordinals_read_as_english() {
        assert_eq!(
            [1, 2, 3, 4, 11, 12, 13, 21, 22].map(ordinal),
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd"]
        );
    }
}
