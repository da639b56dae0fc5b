//! A run as data: the learner's actions, each at its moment, replayed deterministically.
//!
//! The simulation is deterministic, so a run is its start (a scenario text or the empty
//! playground, and a seed) plus what the learner did and when. A moment is the simulated clock
//! together with the number of events processed, because a pause or a Step can stop between two
//! events of one millisecond. [`crate::sim::session::Session`] journals every action that changes
//! the cluster (apply, delete, kubectl, a fault, a lesson's button) when the learner does it, not
//! when a scenario's own timeline does; [`replay`] performs a journal again and stops where a
//! replay no longer reproduces it. This module is the data and the replay loop, below the session
//! that journals and replays through [`Replayer`].

use serde_json::{json, Value as Json};

use crate::sim::api::types::Millis;
use crate::sim::faults::Fault;

/// Which version of the simulation made a run: a later one replays it and says where it
/// diverges.
pub const SIM_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The file name the page's editor applies under, which links leave out.
pub const DEFAULT_FILE: &str = "playground.yaml";

/// A point of a run: the simulated clock and the events processed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Moment {
    pub time: Millis,
    pub events: u64,
}

/// One thing the learner did that changed (or tried to change) the cluster.
#[derive(Clone, Debug, PartialEq)]
pub enum Act {
    /// `kubectl apply -f` of a text (the editor's Apply, the JS API's `apply`) under a file name
    /// (its diagnostics name it).
    Apply { file: String, text: String },
    /// `kubectl delete -f` of a text.
    Delete { file: String, text: String },
    /// A console command, with its standard input.
    Kubectl(String, Option<String>),
    /// A fault injected from the panel, a menu or the API.
    Fault(Fault),
    /// A lesson's "try this" step marked done (its button succeeded).
    TryThisDone(usize),
    /// "Play the lesson": its timeline does the steps the learner has not done.
    PlayLesson,
}

/// An action at its moment, and whether it succeeded (a replay that disagrees has diverged).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub at: Moment,
    pub act: Act,
    pub ok: bool,
}

/// Where a replay stopped reproducing its journal: the index of the action, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diverged {
    /// The action that could not be replayed (`None`: the final moment could not be reached).
    pub action: Option<usize>,
    pub message: String,
}

impl Act {
    /// The action as a learner would name it (`kubectl get pods`, `fault NodeFailure`).
    pub fn describe(&self) -> String {
        match self {
            Act::Apply { file, .. } => format!("kubectl apply -f {file}"),
            Act::Delete { file, .. } => format!("kubectl delete -f {file}"),
            Act::Kubectl(cmd, _) => format!("kubectl {}", cmd.trim_start_matches("kubectl ")),
            Act::Fault(f) => format!("fault {}", f.name()),
            Act::TryThisDone(i) => format!("the lesson's step {}", i + 1),
            Act::PlayLesson => "play the lesson".into(),
        }
    }
}

impl Entry {
    /// The compact form links carry: `[time, events, kind, payload…]`, with a trailing `0`
    /// when the action failed.
    pub fn to_json(&self) -> Json {
        let mut v = vec![json!(self.at.time), json!(self.at.events)];
        match &self.act {
            Act::Apply { file, text } if file == DEFAULT_FILE => {
                v.extend([json!("a"), json!(text)])
            }
            Act::Apply { file, text } => v.extend([json!("A"), json!(text), json!(file)]),
            Act::Delete { file, text } if file == DEFAULT_FILE => {
                v.extend([json!("d"), json!(text)])
            }
            Act::Delete { file, text } => v.extend([json!("D"), json!(text), json!(file)]),
            Act::Kubectl(c, None) => v.extend([json!("k"), json!(c)]),
            Act::Kubectl(c, Some(i)) => v.extend([json!("K"), json!(c), json!(i)]),
            Act::Fault(f) => v.extend([json!("f"), serde_json::to_value(f).unwrap_or_default()]),
            Act::TryThisDone(i) => v.extend([json!("t"), json!(i)]),
            Act::PlayLesson => v.push(json!("p")),
        }
        if !self.ok {
            v.push(json!(0));
        }
        Json::Array(v)
    }

    /// Reads [`Entry::to_json`]'s form; `None` for anything else.
    pub fn from_json(v: &Json) -> Option<Entry> {
        let a = v.as_array()?;
        let at = Moment {
            time: a.first()?.as_u64()?,
            events: a.get(1)?.as_u64()?,
        };
        let text = |i: usize| a.get(i).and_then(Json::as_str).map(str::to_string);
        let (act, used) = match a.get(2)?.as_str()? {
            "a" => (
                Act::Apply {
                    file: DEFAULT_FILE.into(),
                    text: text(3)?,
                },
                4,
            ),
            "A" => (
                Act::Apply {
                    file: text(4)?,
                    text: text(3)?,
                },
                5,
            ),
            "d" => (
                Act::Delete {
                    file: DEFAULT_FILE.into(),
                    text: text(3)?,
                },
                4,
            ),
            "D" => (
                Act::Delete {
                    file: text(4)?,
                    text: text(3)?,
                },
                5,
            ),
            "k" => (Act::Kubectl(text(3)?, None), 4),
            "K" => (Act::Kubectl(text(3)?, Some(text(4)?)), 5),
            "f" => (
                Act::Fault(serde_json::from_value(a.get(3)?.clone()).ok()?),
                4,
            ),
            "t" => (
                Act::TryThisDone(usize::try_from(a.get(3)?.as_u64()?).ok()?),
                4,
            ),
            "p" => (Act::PlayLesson, 3),
            _ => return None,
        };
        let ok = match a.get(used) {
            None => true,
            Some(v) if v.as_u64() == Some(0) && a.len() == used + 1 => false,
            Some(_) => return None,
        };
        Some(Entry { at, act, ok })
    }
}

/// What can replay a journal: a bare session (tests, the CLI) or the page's model, which keeps
/// its panels on the way.
pub trait Replayer {
    /// Advances to exactly `m` (`Session::advance_to_moment`).
    fn reach(&mut self, m: Moment) -> Result<(), String>;
    /// Does one journaled action again (journaling it again); whether it succeeded.
    fn perform(&mut self, act: &Act) -> bool;
}

/// Replays `actions` from where `r` is, then advances to `at`. Stops at the first action that
/// no longer reproduces (its moment cannot be reached, or it now succeeds where it failed or the
/// other way round), leaving `r` at the last moment it could reach.
pub fn replay(r: &mut dyn Replayer, actions: &[Entry], at: Moment) -> Result<(), Diverged> {
    for (i, e) in actions.iter().enumerate() {
        let stop = |message: String| Diverged {
            action: Some(i),
            message: format!("action {} ({}): {message}", i + 1, e.act.describe()),
        };
        r.reach(e.at).map_err(stop)?;
        if r.perform(&e.act) != e.ok {
            return Err(stop(if e.ok {
                "it was refused on replay".into()
            } else {
                "it failed in the run but succeeds on replay".into()
            }));
        }
    }
    r.reach(at).map_err(|message| Diverged {
        action: None,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::session::Session;
    use proptest::prelude::*;

    fn deployment(replicas: u32) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n"
        )
    }

    /// One thing a learner does between two stretches of time.
    #[derive(Clone, Debug)]
    enum Doing {
        Apply(u32),
        Delete,
        Kubectl(&'static str),
        NodeFailure(usize),
        Advance(u64),
        Step(u8),
    }

    fn doing() -> impl Strategy<Value = Doing> {
        prop_oneof![
            (0u32..6).prop_map(Doing::Apply),
            Just(Doing::Delete),
            prop_oneof![
                Just("scale deployment web --replicas=2"),
                Just("delete pods -l app=web --wait=false"),
                Just("get pods"),
                Just("delete deployment nothing"),
                Just("cordon node-1"),
            ]
            .prop_map(Doing::Kubectl),
            (0usize..3).prop_map(Doing::NodeFailure),
            (0u64..40_000).prop_map(Doing::Advance),
            (1u8..20).prop_map(Doing::Step),
        ]
    }

    fn run(seed: u64, doings: &[Doing]) -> Session {
        let mut s = Session::new(seed);
        go_on(&mut s, doings);
        s
    }

    fn go_on(s: &mut Session, doings: &[Doing]) {
        for d in doings {
            match d {
                Doing::Apply(n) => {
                    s.apply_text(DEFAULT_FILE, &deployment(*n));
                }
                Doing::Delete => {
                    s.delete_text(DEFAULT_FILE, &deployment(1));
                }
                Doing::Kubectl(cmd) => {
                    s.kubectl(cmd);
                }
                Doing::NodeFailure(i) => {
                    let _ = s.inject(Fault::NodeDown {
                        node: format!("node-{}", i + 1),
                    });
                }
                Doing::Advance(ms) => {
                    let t = s.sim.now() + ms;
                    s.advance_to(t, usize::MAX);
                }
                Doing::Step(n) => {
                    for _ in 0..*n {
                        s.step();
                    }
                }
            }
        }
    }

    #[test]
    fn an_entry_survives_its_compact_form() {
        let entries = [
            Entry {
                at: Moment { time: 1, events: 2 },
                act: Act::Apply {
                    file: DEFAULT_FILE.into(),
                    text: "kind: Pod\n".into(),
                },
                ok: true,
            },
            Entry {
                at: Moment { time: 5, events: 6 },
                act: Act::Delete {
                    file: "lesson.yaml".into(),
                    text: "kind: Pod\n".into(),
                },
                ok: true,
            },
            Entry {
                at: Moment { time: 3, events: 4 },
                act: Act::Kubectl("apply -f -".into(), Some("kind: Pod\n".into())),
                ok: false,
            },
            Entry {
                at: Moment::default(),
                act: Act::Fault(Fault::NodeDown {
                    node: "node-2".into(),
                }),
                ok: true,
            },
            Entry {
                at: Moment::default(),
                act: Act::TryThisDone(2),
                ok: true,
            },
            Entry {
                at: Moment::default(),
                act: Act::PlayLesson,
                ok: true,
            },
        ];
        for e in entries {
            assert_eq!(Entry::from_json(&e.to_json()), Some(e.clone()), "{e:?}");
        }
        assert_eq!(Entry::from_json(&json!([1, 2, "a", "x", 1])), None);
        assert_eq!(Entry::from_json(&json!([1, 2, "?"])), None);
    }

    #[test]
    fn a_scenarios_own_timeline_is_not_journaled_and_a_learners_kubectl_is() {
        let file = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: t\nspec:\n  steps:\n  - at: 1s\n    kubectl: get pods\n";
        let mut s = Session::load("t.yaml", file, None).expect("loads");
        s.advance_to(5_000, usize::MAX);
        assert!(s.actions().is_empty(), "{:?}", s.actions());
        s.kubectl("get nodes");
        assert_eq!(s.actions().len(), 1);
        assert_eq!(s.actions()[0].at.time, 5_000);
    }

    #[test]
    fn a_replay_that_no_longer_reproduces_says_which_action_and_stops_at_the_last_moment_it_could()
    {
        let original = run(
            1,
            &[
                Doing::Advance(2_000),
                Doing::Apply(2),
                Doing::Advance(30_000),
            ],
        );
        let mut actions = original.actions().to_vec();
        // As if the cluster had once refused this apply: now it is accepted.
        actions[0].ok = false;
        let mut fresh = Session::new(1);
        let e = replay(&mut fresh, &actions, original.moment()).unwrap_err();
        assert_eq!(e.action, Some(0));
        assert_eq!(
            e.message,
            "action 1 (kubectl apply -f playground.yaml): it failed in the run but succeeds on replay"
        );
        assert_eq!(fresh.moment(), actions[0].at);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Anvil-style: whatever a learner does, in whatever rhythm, the journal carried by a
        /// link and replayed on a fresh session of the link's seed gives the same trace and ends
        /// at the same moment.
        #[test]
        fn any_run_replayed_from_its_link_gives_the_same_trace(
            seed in 1u64..1_000,
            doings in proptest::collection::vec(doing(), 0..14),
        ) {
            let original = run(seed, &doings);
            // Through the link as a reader gets it: encoded, decoded, moments read back.
            let frag = crate::sim::share::encode(&crate::sim::share::Shared {
                run: Some(crate::sim::share::RunLink::of(&original)),
                ..Default::default()
            });
            let link = match crate::sim::share::decode(&frag) {
                Ok(crate::sim::share::Link::Scenario(shared)) => shared.run,
                _ => None,
            };
            let link = link.expect("the link holds the run");
            let entries = link.entries().expect("every action reads back");
            let mut fresh = Session::new(link.seed);
            prop_assert_eq!(replay(&mut fresh, &entries, link.moment()), Ok(()));
            prop_assert_eq!(fresh.moment(), original.moment());
            prop_assert_eq!(fresh.actions(), original.actions());
            prop_assert_eq!(fresh.sim.trace().fingerprint(), original.sim.trace().fingerprint());
        }

        /// A snapshot is the run itself: what the learner does after it gives, from the copy,
        /// the trace the original gives, however much the original ran on in between.
        #[test]
        fn a_run_goes_on_from_its_snapshot_as_it_went_on_from_the_original(
            seed in 1u64..1_000,
            doings in proptest::collection::vec(doing(), 0..14),
            split in 0usize..14,
        ) {
            let split = split.min(doings.len());
            let mut original = run(seed, &doings[..split]);
            let mut copy = original.snapshot().expect("built-in components copy");
            go_on(&mut original, &doings[split..]);
            go_on(&mut copy, &doings[split..]);
            prop_assert_eq!(copy.moment(), original.moment());
            prop_assert_eq!(copy.actions(), original.actions());
            prop_assert_eq!(copy.sim.trace().fingerprint(), original.sim.trace().fingerprint());
        }
    }
}
