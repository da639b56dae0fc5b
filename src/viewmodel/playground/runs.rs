//! Runs you can share: the page's model as a link to a moment, and a link opened by replaying
//! its actions through the same methods the page's buttons call, so every panel follows.

use super::{NoticeKind, Playground, EDITOR_FILE};
use crate::sim::api::types::Millis;
use crate::sim::input::diagnostic::Diagnostic;
use crate::sim::run::{self, Act, Diverged, Entry, Moment, Replayer, SIM_VERSION};
use crate::sim::share::RunLink;

/// How far one slice of a replay advances before the panels take their samples (as
/// [`Playground::advance_by`] does).
const REPLAY_SLICE_MS: Millis = 250;

/// The run's whole journal and its furthest moment, kept while the learner looks at an earlier
/// moment of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tape {
    entries: Vec<Entry>,
    end: Moment,
}

/// What opening a run link came to.
#[derive(Debug, PartialEq)]
pub enum Opened {
    /// The run is on screen at its moment.
    Reproduced,
    /// The run's start could not be opened (its text's errors; the default cluster runs).
    Refused(Vec<Diagnostic>),
    /// It replayed up to a point and stopped there.
    Diverged(Diverged),
}

impl Playground {
    /// The run on screen as a link carries it, once something happened since it started (a
    /// link to a run's start is its text alone).
    pub fn run_link(&self) -> Option<RunLink> {
        let at = self.session.moment();
        if self.session.actions().is_empty() && at == self.start {
            return None;
        }
        Some(RunLink::of(&self.session))
    }

    /// A model opened on a run link: its start, then its actions replayed, paused at its
    /// moment. A start that cannot be opened leaves the default cluster running.
    pub fn opened_run(run: &RunLink, default_seed: u64) -> (Playground, Opened) {
        let mut p = Playground::unbooted(default_seed);
        match p.open_run(run) {
            Opened::Refused(diags) => {
                let (p, _) =
                    Playground::opened(run.base.as_deref().unwrap_or(""), None, default_seed);
                (p, Opened::Refused(diags))
            }
            opened => (p, opened),
        }
    }

    /// Opens a run link in place of what is open.
    pub fn open_run(&mut self, run: &RunLink) -> Opened {
        match &run.base {
            None => {
                self.seed = run.seed;
                self.loaded = None;
                self.reset();
            }
            Some(text) => {
                if let Err(diags) = self.load_scenario(text, Some(run.seed)) {
                    return Opened::Refused(diags);
                }
            }
        }
        self.replay_run(run)
    }

    /// Replays `run`'s actions on this model (opened at the run's start) and says how it went.
    pub fn replay_run(&mut self, run: &RunLink) -> Opened {
        let result = run
            .entries()
            .map_err(|message| Diverged {
                action: None,
                message,
            })
            .and_then(|entries| run::replay(self, &entries, run.moment()));
        self.playing = false;
        self.notices.clear();
        let at = crate::sim::time::clock(self.now());
        match result {
            Ok(()) => {
                let n = run.actions.len();
                self.notify(
                    &format!(
                        "Opened the run at {at}, paused ({n} action{} replayed)",
                        if n == 1 { "" } else { "s" }
                    ),
                    NoticeKind::Info,
                );
                Opened::Reproduced
            }
            Err(d) => {
                let newer = if run.version != SIM_VERSION {
                    format!(" (made by Kubeloop {}, this is {SIM_VERSION})", run.version)
                } else {
                    String::new()
                };
                self.notify(
                    &format!(
                        "The run no longer reproduces past {at}{newer}: {}",
                        d.message
                    ),
                    NoticeKind::Error,
                );
                Opened::Diverged(d)
            }
        }
    }
}

impl Playground {
    /// Moves the clock to `t` of this run (time travel): back, by opening the run's start again
    /// and replaying its actions up to `t`; forward, by replaying the rest of the run's actions
    /// on the way (or, past its end, by running on). The panels follow. Returns the moment
    /// reached.
    pub fn seek(&mut self, t: Millis) -> Moment {
        self.changes = None;
        let tape = self.tape.take().unwrap_or_else(|| Tape {
            entries: self.session.actions().to_vec(),
            end: self.session.moment(),
        });
        let (speed, pause_on_check, loaded) =
            (self.speed, self.moments.pause_on_check, self.loaded.clone());
        if t < self.now() {
            let seed = self.session.sim.config().seed;
            match self.session.origin().map(str::to_string) {
                Some(text) => {
                    // The run's own start opened before: it opens again.
                    let _ = self.load_scenario(&text, Some(seed));
                }
                None => {
                    self.seed = seed;
                    self.loaded = None;
                    self.reset();
                }
            }
        }
        self.speed = speed;
        self.moments.pause_on_check = pause_on_check;
        self.loaded = loaded;
        self.tape = Some(tape);
        self.playing = false;
        if self.now() < t {
            self.advance_by(t - self.now());
        }
        self.notices.clear();
        let here = self.session.moment();
        let end = self.tape.as_ref().map(|tape| tape.end);
        match end {
            Some(end) if here < end => self.notify(
                &format!(
                    "At {} of a run that goes on to {}: play or drag forward to replay it, or act to branch from here",
                    crate::sim::time::clock(here.time),
                    crate::sim::time::clock(end.time)
                ),
                NoticeKind::Info,
            ),
            _ => {
                self.tape = None;
                self.notify(
                    &format!("At {}", crate::sim::time::clock(here.time)),
                    NoticeKind::Info,
                );
            }
        }
        here
    }

    /// Works out what changes between now and the end of the run the clock is behind (the
    /// run's end replayed on a session of its own) and shows it; says why not otherwise.
    pub fn show_changes_ahead(&mut self) {
        let Some(tape) = self.tape.clone() else {
            self.notify(
                "Nothing is ahead: drag the slider back to an earlier moment first",
                NoticeKind::Info,
            );
            return;
        };
        let seed = self.session.sim.config().seed;
        let start = match self.session.origin() {
            None => Ok(crate::sim::session::Session::new(seed)),
            Some(text) => crate::sim::session::Session::load(EDITOR_FILE, text, Some(seed)),
        };
        let Ok(mut end) = start else {
            self.notify("The run's start no longer opens", NoticeKind::Error);
            return;
        };
        if let Err(d) = run::replay(&mut end, &tape.entries, tape.end) {
            self.notify(&d.message, NoticeKind::Error);
            return;
        }
        self.changes = Some(crate::viewmodel::changes::ChangesView {
            from: self.now(),
            to: tape.end.time,
            objects: crate::viewmodel::changes::between(&self.session.sim, &end.sim),
        });
        self.version += 1;
    }

    /// The moment the run goes on to while the clock is behind it.
    pub fn tape_end(&self) -> Option<Moment> {
        self.tape.as_ref().map(|t| t.end)
    }

    /// Performs the run's own later actions due by `t`, each at its moment (playing or
    /// advancing while behind the run's end replays it).
    pub(super) fn replay_tape_until(&mut self, t: Millis) {
        while let Some(next) = self.next_taped().filter(|e| e.at.time <= t) {
            let done = run::replay(self, std::slice::from_ref(&next), next.at);
            if done.is_err() {
                self.tape = None;
                return;
            }
        }
    }

    fn next_taped(&self) -> Option<Entry> {
        let tape = self.tape.as_ref()?;
        tape.entries.get(self.session.actions().len()).cloned()
    }

    /// After an action: one the run did not have branches it (its later actions are dropped),
    /// and reaching the run's end ends the time travel.
    pub(crate) fn follow_tape(&mut self) {
        // What the card compared was this moment and the run's end: either may have moved.
        if self.changes.as_ref().is_some_and(|c| {
            c.from != self.now() || self.tape.as_ref().map(|t| t.end.time) != Some(c.to)
        }) {
            self.changes = None;
        }
        let read_only = std::mem::take(&mut self.last_read_only);
        let Some(tape) = &mut self.tape else {
            return;
        };
        let done = self.session.actions();
        let n = done.len();
        let branched = n > tape.entries.len() || tape.entries[..n] != *done;
        if branched && read_only && n > 0 && tape.entries[..n - 1] == done[..n - 1] {
            // A look at the past (`kubectl get`) changes nothing: it joins the run, whose later
            // actions stay ahead.
            tape.entries.insert(n - 1, done[n - 1].clone());
            return;
        }
        if branched {
            self.tape = None;
            self.notify(
                &format!(
                    "Branched at {}: the run's later actions are gone, and its link now holds this branch",
                    crate::sim::time::clock(self.now())
                ),
                NoticeKind::Info,
            );
        } else if self.session.moment() >= tape.end {
            self.tape = None;
        }
    }
}

impl Replayer for Playground {
    fn reach(&mut self, m: Moment) -> Result<(), String> {
        loop {
            let here = self.session.moment();
            if here.time + REPLAY_SLICE_MS >= m.time || here.events >= m.events {
                break;
            }
            self.session.advance_to(
                here.time + REPLAY_SLICE_MS,
                (m.events - here.events) as usize,
            );
            self.sync();
        }
        let reached = self.session.advance_to_moment(m);
        self.sync();
        reached
    }

    fn perform(&mut self, act: &Act) -> bool {
        match act {
            Act::Apply { file, text } if file == EDITOR_FILE => self.apply(text).ok,
            Act::Delete { file, text } if file == EDITOR_FILE => self.delete(text).ok,
            Act::Kubectl(cmd, input) => self.kubectl_with_input(cmd, input.as_deref()).ok,
            Act::Fault(f) => self.inject(f.clone()).is_ok(),
            other => {
                let ok = Replayer::perform(&mut self.session, other);
                self.sync();
                ok
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::faults::Fault;
    use crate::sim::share::{decode, encode, Link, Shared};

    fn deployment(replicas: u32) -> String {
        crate::sim::examples::DEFAULT_MANIFEST
            .replace("replicas: 3", &format!("replicas: {replicas}"))
    }

    /// The link the page would share, decoded as the page that opens it reads it.
    fn through_a_link(p: &Playground) -> RunLink {
        let frag = encode(&Shared {
            text: "whatever the editor holds\n".into(),
            run: p.run_link(),
            ..Default::default()
        });
        match decode(&frag) {
            Ok(Link::Scenario(Shared { run: Some(run), .. })) => run,
            other => panic!("{other:?}"),
        }
    }

    fn same_run(a: &Playground, b: &Playground) {
        assert_eq!(a.session.moment(), b.session.moment());
        assert_eq!(
            a.session.sim.trace().fingerprint(),
            b.session.sim.trace().fingerprint()
        );
        assert_eq!(a.cluster(), b.cluster());
        assert_eq!(a.session.checks(), b.session.checks());
    }

    #[test]
    fn a_link_to_a_runs_start_carries_no_run() {
        let mut p = Playground::new(1);
        assert_eq!(p.run_link(), None);
        p.advance_by(1);
        assert!(p.run_link().is_some());
        let (p, loaded) = Playground::opened(&deployment(2), None, 1);
        assert_eq!(loaded, Ok(()));
        assert_eq!(p.run_link(), None);
    }

    #[test]
    fn an_apply_through_the_api_is_in_the_link_and_opens_with_its_four_replicas() {
        assert!(deployment(4).contains("replicas: 4"));
        let mut p = Playground::new(1);
        assert!(p.apply(&deployment(4)).ok);
        p.advance_by(60_000);
        let run = through_a_link(&p);
        let (opened, how) = Playground::opened_run(&run, 9);
        assert_eq!(how, Opened::Reproduced);
        same_run(&p, &opened);
        let ready = opened
            .cluster()
            .all_pods()
            .filter(|v| v.phase == "Running" && v.ready)
            .count();
        assert_eq!(ready, 4);
        assert!(!opened.playing);
    }

    #[test]
    fn a_node_failure_at_half_a_minute_opens_at_two_minutes_with_the_node_not_ready() {
        let mut p = Playground::new(5);
        p.apply(&deployment(3));
        p.advance_by(30_000);
        assert!(p
            .inject(Fault::NodeDown {
                node: "node-2".into()
            })
            .is_ok());
        p.advance_by(90_000);
        // A pause between two events of one millisecond is a moment too.
        for _ in 0..3 {
            p.step();
        }
        let (opened, how) = Playground::opened_run(&through_a_link(&p), 9);
        assert_eq!(how, Opened::Reproduced);
        same_run(&p, &opened);
        assert!(opened.now() >= 120_000);
        let node = opened
            .cluster()
            .nodes
            .into_iter()
            .find(|n| n.name == "node-2");
        assert_eq!(node.map(|n| n.ready.clone()), Some("Unknown".to_string()));
    }

    #[test]
    fn a_lessons_run_with_its_buttons_and_a_console_command_reopens_where_it_was() {
        let lesson = crate::sim::examples::by_name("node-dies").expect("the lesson");
        let (mut p, loaded) = Playground::opened(lesson, None, 1);
        assert_eq!(loaded, Ok(()));
        p.advance_by(40_000);
        let _ = p.try_this(0);
        p.kubectl("get pods -o wide");
        p.advance_by(20_000);
        p.play_lesson();
        p.advance_by(60_000);
        let run = through_a_link(&p);
        assert!(run.base.is_some());
        let (opened, how) = Playground::opened_run(&run, 9);
        assert_eq!(how, Opened::Reproduced);
        same_run(&p, &opened);
        assert_eq!(opened.lesson(), p.lesson());
    }

    #[test]
    fn a_run_that_no_longer_reproduces_opens_at_the_last_moment_it_could_and_says_which_action() {
        let mut p = Playground::new(1);
        p.advance_by(5_000);
        p.apply(&deployment(2));
        p.advance_by(5_000);
        let mut run = through_a_link(&p);
        // A later Kubeloop could refuse what this one accepted: here the link says it failed.
        let mut entry = crate::sim::run::Entry::from_json(&run.actions[0]).unwrap();
        entry.ok = false;
        run.actions[0] = entry.to_json();
        let (opened, how) = Playground::opened_run(&run, 9);
        let Opened::Diverged(d) = how else {
            panic!("{how:?}")
        };
        assert_eq!(d.action, Some(0));
        assert_eq!(opened.session.moment(), entry.at);
        let notice = opened
            .notices()
            .last()
            .map(|n| n.text.clone())
            .unwrap_or_default();
        assert!(
            notice.starts_with("The run no longer reproduces past 00:05.0"),
            "{notice}"
        );
    }

    #[test]
    fn seeking_back_then_forward_shows_the_run_as_it_was_and_as_it_went_on() {
        let mut p = Playground::new(3);
        p.apply(&deployment(3));
        p.advance_by(30_000);
        p.inject(Fault::NodeDown {
            node: "node-2".into(),
        })
        .unwrap();
        p.advance_by(90_000);
        let end = p.session.moment();
        let at_end = (p.cluster(), p.session.sim.trace().fingerprint());

        // A straight run to 0:20 of the same actions, for comparison.
        let mut straight = Playground::new(3);
        straight.apply(&deployment(3));
        straight.advance_by(20_000);

        let back = p.seek(straight.now());
        assert_eq!(back, straight.session.moment());
        assert_eq!(p.cluster(), straight.cluster());
        assert_eq!(p.tape_end(), Some(end));
        assert!(
            p.run_link().unwrap().actions.len() == 1,
            "the fault is still ahead"
        );

        p.seek(end.time);
        assert_eq!(p.session.moment(), end);
        assert_eq!((p.cluster(), p.session.sim.trace().fingerprint()), at_end);
        assert_eq!(p.tape_end(), None, "at the run's end, time travel is over");
    }

    #[test]
    fn playing_from_an_earlier_moment_replays_the_runs_own_actions_on_time() {
        let mut p = Playground::new(4);
        p.apply(&deployment(2));
        p.advance_by(10_000);
        p.kubectl("scale deployment web --replicas=4");
        p.advance_by(10_000);
        p.seek(5_000);
        p.update(crate::viewmodel::action::Action::Play, &mut || false);
        for _ in 0..400 {
            p.frame(100.0);
            if p.now() >= 20_000 {
                break;
            }
        }
        assert_eq!(p.session.actions().len(), 2, "the scale was replayed");
        let replicas = p.kubectl("get deployment web -o jsonpath={.spec.replicas}");
        assert_eq!(replicas.stdout, "4");
    }

    #[test]
    fn a_look_at_the_past_with_kubectl_get_keeps_the_runs_later_actions_ahead() {
        let mut p = Playground::new(6);
        p.apply(&deployment(2));
        p.advance_by(10_000);
        p.kubectl("scale deployment web --replicas=5");
        p.advance_by(10_000);
        let end = p.session.moment();
        p.seek(5_000);
        let look = |p: &mut Playground| {
            p.update(
                crate::viewmodel::action::Action::Kubectl(
                    "get deployment web -o jsonpath={.spec.replicas}".into(),
                    None,
                    crate::viewmodel::action::reply(),
                ),
                &mut || false,
            );
        };
        look(&mut p);
        assert!(p.tape_end().is_some(), "still behind the run's end");
        p.seek(end.time);
        assert_eq!(p.session.actions().len(), 3, "apply, get, scale");
        let out = p.kubectl("get deployment web -o jsonpath={.spec.replicas}");
        assert_eq!(out.stdout, "5");
    }

    #[test]
    fn an_action_in_the_past_branches_the_run_and_the_link_holds_the_branch() {
        let mut p = Playground::new(6);
        p.apply(&deployment(2));
        p.advance_by(10_000);
        p.kubectl("scale deployment web --replicas=5");
        p.advance_by(10_000);
        p.seek(5_000);
        p.update(
            crate::viewmodel::action::Action::Kubectl(
                "scale deployment web --replicas=1".into(),
                None,
                crate::viewmodel::action::reply(),
            ),
            &mut || false,
        );
        assert_eq!(p.tape_end(), None, "branched");
        assert!(p.session.actions().len() == 2);
        assert!(p
            .notices()
            .any(|n| n.text.starts_with("Branched at 00:05.0")));
        p.advance_by(20_000);
        let run = through_a_link(&p);
        assert_eq!(run.actions.len(), 2);
        let (opened, how) = Playground::opened_run(&run, 1);
        assert_eq!(how, Opened::Reproduced);
        same_run(&p, &opened);
        let mut replicas = opened;
        let out = replicas.kubectl("get deployment web -o jsonpath={.spec.replicas}");
        assert_eq!(out.stdout, "1");
    }

    #[test]
    fn what_changes_ahead_lists_the_scaled_deployment_and_the_dead_node_and_goes_when_the_clock_moves(
    ) {
        let mut p = Playground::new(2);
        p.apply(&deployment(2));
        p.advance_by(20_000);
        p.kubectl("scale deployment web --replicas=3");
        p.inject(Fault::NodeDown {
            node: "node-2".into(),
        })
        .unwrap();
        p.advance_by(60_000);
        p.seek(10_000);
        p.update(
            crate::viewmodel::action::Action::ShowChangesAhead,
            &mut || false,
        );
        let card = p.changes.clone().expect("the card");
        assert_eq!((card.from, card.to), (10_000, p.tape_end().unwrap().time));
        let names: Vec<&str> = card.objects.iter().map(|c| c.name.as_str()).collect();
        assert!(names.contains(&"deployment/web"), "{names:?}");
        assert!(names.contains(&"node/node-2"), "{names:?}");
        p.seek(15_000);
        assert_eq!(p.changes, None, "the card compared another moment");
    }

    #[test]
    fn an_hour_of_clicking_stays_under_the_long_link_warning() {
        let mut p = Playground::new(8);
        p.apply(&deployment(3));
        // One action every ten seconds for an hour: scales, looks, pod deletions, node faults.
        for i in 0..360u32 {
            p.advance_by(10_000);
            match i % 6 {
                0 => {
                    p.kubectl(&format!("scale deployment web --replicas={}", 2 + i % 4));
                }
                1 => {
                    p.kubectl("get pods -o wide");
                }
                2 => {
                    let pod = p.cluster().all_pods().next().map(|v| v.name.clone());
                    if let Some(pod) = pod {
                        let _ = p.delete_pod("default", &pod);
                    }
                }
                3 => {
                    let _ = p.inject(Fault::NodeDown {
                        node: format!("node-{}", 1 + i % 3),
                    });
                }
                4 => {
                    let _ = p.inject(Fault::NodeUp {
                        node: format!("node-{}", 1 + (i - 1) % 3),
                    });
                }
                _ => {
                    p.apply(&deployment(3));
                }
            }
        }
        let link = crate::sim::share::share_url(
            "https://kubeloop.example/",
            &Shared {
                text: deployment(3),
                run: p.run_link(),
                ..Default::default()
            },
        );
        assert_eq!(p.session.actions().len(), 361);
        // Measured 5,021 characters: the moments' digits are most of it (deltas would shrink them).
        assert!(
            link.len() < crate::sim::share::LONG_LINK_WARNING,
            "{} characters",
            link.len()
        );
    }
}
