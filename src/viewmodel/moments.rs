//! Seeing the moment: playing pauses when a lesson check changes, and the clock runs in slow
//! motion for a few simulated seconds after the learner acts.
//!
//! At 1× the moment a lesson is about (the gap a deleted pod leaves) is over in half a second.
//! Both features only decide how real time maps to simulated time and when playing stops; the
//! simulation never knows about them, so a run's trace is the same with them on or off.

use crate::sim::api::types::Millis;
use crate::sim::session::CheckStatus;

/// How long slow motion lasts after the learner acts, in simulated milliseconds: long enough for
/// the controllers' first answers (a replacement pod created, scheduled, its container started).
pub const SLOW_MOTION_MS: Millis = 3_000;
/// Slow motion runs the clock at this share of the chosen speed…
pub const SLOW_MOTION_FACTOR: f64 = 0.25;
/// …but never slower than this: a speed at or under it is already slow motion and is kept.
pub const SLOW_MOTION_FLOOR: f64 = 0.25;

/// The speed slow motion runs at when `speed` is chosen: a quarter of it, at most 0.25× at 1×,
/// 2.5× at 10×, and never below [`SLOW_MOTION_FLOOR`] (nor above `speed`).
pub fn slow_motion_speed(speed: f64) -> f64 {
    if speed <= SLOW_MOTION_FLOOR {
        speed
    } else {
        (speed * SLOW_MOTION_FACTOR).max(SLOW_MOTION_FLOOR)
    }
}

/// A lesson check that just passed or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckChange {
    pub name: String,
    pub passed: bool,
}

impl CheckChange {
    /// The notice shown when playing pauses on it.
    pub fn notice(&self, at: Millis) -> String {
        format!(
            "Paused at {}: check \u{201c}{}\u{201d} {}. Press Play to go on.",
            crate::sim::time::clock(at),
            self.name,
            if self.passed { "passed" } else { "failed" }
        )
    }
}

/// The two switches and what they follow.
#[derive(Clone, Debug, PartialEq)]
pub struct Moments {
    /// Playing pauses when a lesson check passes or fails.
    pub pause_on_check: bool,
    /// The clock slows down for [`SLOW_MOTION_MS`] after the learner acts.
    pub slow_motion: bool,
    /// Where the current slow-motion window ends, in simulated time.
    slow_until: Option<Millis>,
    /// Each check's name and outcome at the last look, in the session's order.
    seen: Vec<(String, Option<bool>)>,
}

impl Default for Moments {
    /// The plain playground's: slow motion on, no pausing (it has no checks).
    fn default() -> Self {
        Moments {
            pause_on_check: false,
            slow_motion: true,
            slow_until: None,
            seen: Vec::new(),
        }
    }
}

impl Moments {
    /// A new clock (a reset, another scenario): no window open, no check seen.
    pub fn restart(&mut self) {
        self.slow_until = None;
        self.seen.clear();
    }

    /// The learner acted at simulated time `now`: the next [`SLOW_MOTION_MS`] run slowed.
    pub fn acted(&mut self, now: Millis) {
        self.slow_until = Some(now.saturating_add(SLOW_MOTION_MS));
    }

    /// The speed the clock runs at `now` when slow motion holds it back from `speed`; None when
    /// it runs at `speed` (switched off, no window open, or `speed` already as slow).
    pub fn slowed(&self, now: Millis, speed: f64) -> Option<f64> {
        let until = self.slow_until?;
        let slow = slow_motion_speed(speed);
        (self.slow_motion && now < until && slow < speed).then_some(slow)
    }

    /// How many simulated milliseconds `real_ms` of real time covers from `at` (the clock plus
    /// the fraction not yet advanced): the part inside a slow-motion window at its speed, the
    /// rest at `speed`, so a window ends exactly where it should even inside one frame.
    pub fn simulated_ms(&self, real_ms: f64, at: f64, speed: f64) -> f64 {
        let full = real_ms * speed;
        let (Some(slow), Some(until)) = (self.slowed(at as Millis, speed), self.slow_until) else {
            return full;
        };
        let left = until as f64 - at;
        let slowed = real_ms * slow;
        if slowed <= left {
            slowed
        } else {
            left + (real_ms - left / slow) * speed
        }
    }

    /// The first check that passed or failed since the last look, if any; remembers what it saw.
    /// A different list of checks (another lesson) is taken in without reporting anything.
    pub fn check_changed(&mut self, checks: &[CheckStatus]) -> Option<CheckChange> {
        let same_list = self.seen.len() == checks.len()
            && self.seen.iter().zip(checks).all(|((n, _), c)| *n == c.name);
        if !same_list {
            self.seen = checks.iter().map(|c| (c.name.clone(), c.passed)).collect();
            return None;
        }
        let mut first = None;
        for ((_, seen), c) in self.seen.iter_mut().zip(checks) {
            if *seen != c.passed {
                if let (None, Some(passed)) = (first.as_ref(), c.passed) {
                    first = Some(CheckChange {
                        name: c.name.clone(),
                        passed,
                    });
                }
                *seen = c.passed;
            }
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, passed: Option<bool>) -> CheckStatus {
        CheckStatus {
            name: name.into(),
            passed,
            message: String::new(),
            decided_at: None,
            waiting_for: None,
            armed_at: None,
        }
    }

    #[test]
    fn slow_motion_is_a_quarter_of_the_speed_and_never_slower_than_a_quarter() {
        assert_eq!(slow_motion_speed(1.0), 0.25);
        assert_eq!(slow_motion_speed(10.0), 2.5);
        assert_eq!(slow_motion_speed(100.0), 25.0);
        assert_eq!(slow_motion_speed(0.5), 0.25);
        assert_eq!(slow_motion_speed(0.25), 0.25);
    }

    #[test]
    fn a_window_slows_the_clock_only_until_it_ends_even_within_one_frame() {
        let mut m = Moments::default();
        assert_eq!(m.simulated_ms(100.0, 0.0, 1.0), 100.0, "no window yet");
        m.acted(1_000);
        assert_eq!(m.slowed(1_000, 1.0), Some(0.25));
        assert_eq!(m.simulated_ms(100.0, 1_000.0, 1.0), 25.0);
        // 10 ms of the window left: 40 real ms at 0.25×, then 60 at 1×.
        assert_eq!(m.simulated_ms(100.0, 3_990.0, 1.0), 70.0);
        assert_eq!(m.slowed(4_000, 1.0), None, "it ends on its own");
        assert_eq!(m.simulated_ms(100.0, 4_000.0, 1.0), 100.0);
        assert_eq!(m.slowed(1_000, 0.25), None, "already as slow");
        m.slow_motion = false;
        assert_eq!(m.slowed(1_000, 1.0), None, "switched off");
        assert_eq!(m.simulated_ms(100.0, 1_000.0, 1.0), 100.0);
    }

    #[test]
    fn a_check_that_passes_or_fails_is_reported_once_and_another_lesson_is_taken_in_silently() {
        let mut m = Moments::default();
        let pending = [check("gap", None), check("healed", None)];
        assert_eq!(m.check_changed(&pending), None, "the lesson's first look");
        assert_eq!(m.check_changed(&pending), None);
        let passed = [check("gap", Some(true)), check("healed", None)];
        assert_eq!(
            m.check_changed(&passed),
            Some(CheckChange {
                name: "gap".into(),
                passed: true
            })
        );
        assert_eq!(m.check_changed(&passed), None, "reported once");
        let failed = [check("gap", Some(true)), check("healed", Some(false))];
        assert_eq!(
            m.check_changed(&failed).map(|c| (c.name, c.passed)),
            Some(("healed".into(), false))
        );
        // Waiting again (re-armed) is no moment to pause at.
        assert_eq!(m.check_changed(&pending), None);
        assert_eq!(m.check_changed(&[check("other", Some(true))]), None);
    }
}

/// The page's model with both switches, and stepping to hand-offs: played frame by frame as the
/// page does.
#[cfg(test)]
mod playground_tests {
    use super::*;
    use crate::sim::api::types::Kind;
    use crate::sim::handoff::{HandOff, HAND_OFF_MAX_MS};
    use crate::sim::machinery::trace::TraceKind;
    use crate::viewmodel::action::Action;
    use crate::viewmodel::playground::{Playground, DEFAULT_MANIFEST};

    /// The default Deployment as a lesson with one check that passes (web turns Available a few
    /// seconds in) and one that fails (no Deployment called ghost ever appears; it gives up
    /// after 20 s).
    fn checked() -> String {
        format!(
            "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {{name: moments}}
spec:
  seed: 4
  checks:
  - name: web is Available
    wait: deployment/web --for=condition=Available --timeout=2m
  - name: ghost is Available
    wait: deployment/ghost --for=condition=Available --timeout=20s
---
{DEFAULT_MANIFEST}"
        )
    }

    fn lesson() -> Playground {
        let mut p = Playground::new(1);
        assert!(p.load_scenario(&checked(), None).is_ok());
        p
    }

    /// Plays 16-ms frames until playing stops (at most `frames`), as the page's loop does.
    fn play_until_paused(p: &mut Playground, frames: usize) {
        p.playing = true;
        for _ in 0..frames {
            p.frame(16.0);
            if !p.playing {
                return;
            }
        }
        panic!("still playing after {frames} frames, at {} ms", p.now());
    }

    fn passed(p: &Playground, name: &str) -> Option<bool> {
        p.session
            .checks()
            .into_iter()
            .find(|c| c.name == name)
            .and_then(|c| c.passed)
    }

    fn last_notice(p: &Playground) -> String {
        p.notices()
            .last()
            .map(|n| n.text.clone())
            .unwrap_or_default()
    }

    /// The first simulated millisecond at which `name` is decided, found by advancing one
    /// millisecond at a time (checks are decided at the end of each advance).
    fn decided_at(name: &str) -> Millis {
        let mut p = lesson();
        while passed(&p, name).is_none() {
            let t = p.now() + 1;
            p.session.advance_to(t, usize::MAX);
        }
        p.now()
    }

    #[test]
    fn playing_a_lesson_pauses_where_a_check_passes_or_fails_and_says_which() {
        assert!(
            !Playground::new(1).moments.pause_on_check,
            "off in the plain playground"
        );
        let mut p = lesson();
        assert!(p.moments.pause_on_check, "on by default in a lesson");
        p.speed = 10.0;
        play_until_paused(&mut p, 10_000);
        assert_eq!(passed(&p, "web is Available"), Some(true));
        assert_eq!(passed(&p, "ghost is Available"), None);
        assert!(
            last_notice(&p).contains("check \u{201c}web is Available\u{201d} passed"),
            "{}",
            last_notice(&p)
        );
        // Paused in the frame the check passed: within one frame's 160 simulated ms of it.
        let at = decided_at("web is Available");
        assert!((at..at + 160).contains(&p.now()), "{} vs {at}", p.now());
        let t = p.now();
        p.frame(16.0);
        assert_eq!(p.now(), t, "the clock stays where it paused");
        // Play on: the next moment is the failure.
        play_until_paused(&mut p, 10_000);
        assert_eq!(passed(&p, "ghost is Available"), Some(false));
        assert!(last_notice(&p).contains("ghost is Available\u{201d} failed"));
        let at = decided_at("ghost is Available");
        assert!((at..at + 160).contains(&p.now()), "{} vs {at}", p.now());
    }

    #[test]
    fn the_frame_a_check_pauses_the_lesson_in_moves_the_run_a_link_names() {
        let mut p = lesson();
        p.playing = true;
        p.speed = 10.0;
        let mut never = || false;
        for _ in 0..10_000 {
            let updated = p.update_run(Action::Frame(16.0), &mut never);
            assert_eq!(updated.run_moved, !p.playing, "at {} ms", p.now());
            if !p.playing {
                return;
            }
        }
        panic!("the lesson's first check never paused it");
    }

    #[test]
    fn with_pausing_switched_off_a_lesson_plays_through_its_checks_and_a_restart_keeps_the_choice()
    {
        let mut p = lesson();
        p.moments.pause_on_check = false;
        p.playing = true;
        p.speed = 10.0;
        while p.now() < 25_000 {
            p.frame(16.0);
            assert!(p.playing, "paused at {} ms", p.now());
        }
        assert_eq!(passed(&p, "ghost is Available"), Some(false));
        p.reset();
        assert!(
            !p.moments.pause_on_check,
            "the learner's choice outlives Reset"
        );
        assert!(lesson().moments.pause_on_check);
    }

    #[test]
    fn after_the_learner_acts_the_clock_runs_at_a_quarter_for_three_simulated_seconds_then_recovers(
    ) {
        let mut p = Playground::new(1);
        assert_eq!(p.slowed(), None);
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        assert_eq!(p.slowed(), Some(0.25), "the toolbar shows the badge");
        let t0 = p.now();
        p.playing = true;
        p.frame(100.0);
        assert_eq!(p.now(), t0 + 25, "100 real ms at 0.25×");
        let mut real = 100.0;
        while p.slowed().is_some() {
            p.frame(16.0);
            real += 16.0;
            assert!(real < 20_000.0, "the window ends on its own");
        }
        // The frame that crosses the end runs its rest at 1×.
        assert!((SLOW_MOTION_MS..SLOW_MOTION_MS + 16).contains(&(p.now() - t0)));
        assert!(
            (SLOW_MOTION_MS as f64 * 4.0 - real).abs() < 20.0,
            "3 simulated seconds took {real} real ms"
        );
        let t = p.now();
        p.frame(100.0);
        assert_eq!(p.now(), t + 100, "back at 1×");
        // At 10× it slows to 2.5×.
        p.speed = 10.0;
        p.kubectl("scale deployment web --replicas=4");
        assert_eq!(p.slowed(), Some(2.5));
    }

    #[test]
    fn every_kind_of_learner_action_opens_a_slow_motion_window_and_reads_do_not() {
        let mut p = Playground::new(1);
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        p.advance_by(30_000);
        assert_eq!(p.slowed(), None, "the apply's window is over");
        let mut opens = |what: &str, act: &mut dyn FnMut(&mut Playground)| {
            act(&mut p);
            let slowed = p.slowed().is_some();
            p.advance_by(SLOW_MOTION_MS);
            assert_eq!(p.slowed(), None, "{what}: closed after {SLOW_MOTION_MS} ms");
            slowed
        };
        assert!(!opens("get", &mut |p| {
            p.kubectl("get pods");
        }));
        assert!(!opens("an unchanged apply", &mut |p| {
            p.apply(DEFAULT_MANIFEST);
        }));
        assert!(opens("kubectl scale", &mut |p| {
            p.run_command("scale deployment web --replicas=2");
        }));
        assert!(opens("a fault", &mut |p| {
            p.inject(crate::sim::faults::Fault::NodeDown {
                node: "node-3".into(),
            })
            .expect("node-3 exists");
        }));
        assert!(opens("a pod deleted", &mut |p| {
            let pod = p.cluster().all_pods().next().expect("a pod").name.clone();
            p.delete_pod("default", &pod).expect("deleted");
        }));
        assert!(opens("delete -f", &mut |p| {
            p.delete(DEFAULT_MANIFEST);
        }));
        let mut lesson = Playground::new(1);
        let text = crate::sim::examples::by_name("thermostat").expect("built-in");
        assert!(lesson.load_scenario(text, None).is_ok());
        assert_eq!(
            lesson.slowed(),
            None,
            "opening a lesson is not the learner's act"
        );
        lesson.advance_by(30_000);
        assert!(lesson.try_this(0).is_ok());
        assert_eq!(lesson.slowed(), Some(0.25), "a try-this button");
    }

    /// The trace without check decisions (a check is decided at the end of whatever advance
    /// reached it, so its entry moves with frame slicing, switches or not) and the store.
    fn run_record(p: &Playground) -> (Vec<String>, serde_json::Value) {
        let trace = p
            .session
            .sim
            .trace()
            .entries()
            .filter(|e| !matches!(e.kind, TraceKind::Check { .. }))
            .map(|e| format!("{} {:?}", e.t, e.kind))
            .collect();
        (trace, p.session.state_json())
    }

    #[test]
    fn slow_motion_and_pausing_change_when_the_page_shows_things_never_what_happens() {
        let run = |moments: bool| {
            let mut p = lesson();
            p.moments.pause_on_check = moments;
            p.moments.slow_motion = moments;
            p.speed = 2.0;
            p.playing = true;
            p.kubectl("scale deployment web --replicas=5");
            while p.now() < 30_000 {
                p.frame(16.0);
                // Paused on a check: the learner presses Play again.
                p.playing = true;
            }
            p.playing = false;
            p.advance_by(35_000 - p.now());
            run_record(&p)
        };
        let (with, without) = (run(true), run(false));
        assert_eq!(with.1, without.1);
        assert_eq!(with.0.len(), without.0.len());
        assert!(with.0 == without.0, "the traces differ");
    }

    fn rs_and_pods(p: &Playground) -> (usize, usize, usize, usize) {
        let pods: Vec<_> = p.cluster().all_pods().cloned().collect();
        (
            p.session.sim.api().list(Kind::ReplicaSet).count(),
            pods.len(),
            pods.iter().filter(|v| !v.node.is_empty()).count(),
            pods.iter().filter(|v| v.phase == "Running").count(),
        )
    }

    fn found(outcome: &HandOff) -> String {
        match outcome {
            HandOff::Found { writes, .. } => writes.join("; "),
            other => panic!("no hand-off: {other:?}"),
        }
    }

    #[test]
    fn from_a_fresh_deployment_each_hand_off_step_shows_the_next_move_of_the_chain() {
        let mut p = Playground::new(1);
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        let first = found(&p.step_to_hand_off());
        assert!(
            first.starts_with("deployment-controller created ReplicaSet web-"),
            "{first}"
        );
        assert!(first.contains("answering user's Deployment web"), "{first}");
        assert_eq!(rs_and_pods(&p), (1, 0, 0, 0), "a ReplicaSet, no pods yet");
        assert!(last_notice(&p).starts_with("Hand-off at 00:00.0"));
        let second = found(&p.step_to_hand_off());
        assert!(
            second.starts_with("replicaset-controller created Pod web-"),
            "{second}"
        );
        assert_eq!(rs_and_pods(&p), (1, 3, 0, 0), "three pods, none bound");
        let mut presses = 2;
        let mut bound_at = None;
        while rs_and_pods(&p).3 < 3 {
            let what = found(&p.step_to_hand_off());
            presses += 1;
            let (_, _, bound, _) = rs_and_pods(&p);
            if bound == 3 && bound_at.is_none() {
                bound_at = Some(presses);
            }
            if bound < 3 {
                assert!(what.starts_with("default-scheduler bound Pod"), "{what}");
            }
            assert!(presses <= 20, "still not running after {presses} presses");
        }
        assert!(
            bound_at.is_some_and(|b| b <= 5),
            "all bound after {bound_at:?}"
        );
        // A single Step shows every cache delivery and pass: many times the presses.
        let mut single = Playground::new(1);
        assert!(single.apply(DEFAULT_MANIFEST).ok);
        let mut steps = 0;
        while rs_and_pods(&single).3 < 3 {
            assert!(single.step());
            steps += 1;
        }
        assert!(
            steps >= 5 * presses,
            "{steps} single steps against {presses} hand-offs"
        );
    }

    #[test]
    fn a_quiet_cluster_gives_up_after_the_cap_and_says_so() {
        let mut p = Playground::new(1);
        assert!(p.apply(DEFAULT_MANIFEST).ok);
        p.advance_by(60_000);
        let t = p.now();
        let outcome = p.step_to_hand_off();
        assert!(
            matches!(outcome, HandOff::GaveUp { ms, .. } if ms >= HAND_OFF_MAX_MS),
            "{outcome:?}"
        );
        assert!(p.now() - t <= HAND_OFF_MAX_MS + 1_000, "bounded");
        assert!(
            last_notice(&p).starts_with("No hand-off within 6m"),
            "{}",
            last_notice(&p)
        );
        // A fault is a change: the next press finds the node controller noticing.
        p.inject(crate::sim::faults::Fault::NodeDown {
            node: "node-2".into(),
        })
        .expect("node-2 exists");
        let what = found(&p.step_to_hand_off());
        assert!(what.contains("Node node-2"), "{what}");
    }

    #[test]
    fn stepping_to_hand_offs_runs_the_same_events_as_playing() {
        let mut stepped = Playground::new(1);
        let mut played = Playground::new(1);
        for p in [&mut stepped, &mut played] {
            assert!(p.apply(DEFAULT_MANIFEST).ok);
        }
        for _ in 0..12 {
            stepped.step_to_hand_off();
        }
        assert!(stepped.now() < 20_000);
        for p in [&mut stepped, &mut played] {
            p.advance_by(20_000 - p.now());
        }
        assert_eq!(run_record(&stepped), run_record(&played));
    }
}
