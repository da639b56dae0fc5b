//! Runs you can share: the page's model as a link to a moment, and a link opened by replaying
//! its actions through the same methods the page's buttons call, so every panel follows.

use std::cell::RefCell;

use super::{NoticeKind, Playground, EDITOR_FILE};
use crate::sim::api::types::Millis;
use crate::sim::input::diagnostic::Diagnostic;
use crate::sim::run::{self, Act, Diverged, Entry, Moment, Replayer, SIM_VERSION};
use crate::sim::share::RunLink;

/// How far one slice of a replay advances before the panels take their samples (as
/// [`Playground::advance_by`] does).
const REPLAY_SLICE_MS: Millis = 250;

/// A run of lesson size is snapshotted every this many simulated milliseconds at first...
const SNAPSHOT_EVERY_MS: Millis = 30_000;

/// ...and never holds more than this many snapshots: past it every other one goes and the
/// spacing doubles, so a long run keeps a bounded number spread over all of it.
const MAX_SNAPSHOTS: usize = 16;

/// A snapshot copies what the store, the caches and the components hold beyond the objects
/// they share with the live run, and as the run moves on that becomes nearly all of it
/// (measured by `make bench --memory`: 0.2 s to take and about 100 MiB each, half an hour on,
/// at 17,000 objects). Past this many objects, snapshots are spaced wider and fewer are kept,
/// in proportion, so together they hold about MAX_SNAPSHOTS × SNAPSHOT_OBJECTS objects' worth;
/// past MAX_SNAPSHOTS × SNAPSHOT_OBJECTS objects none is kept and a seek back replays from the
/// start (a big cluster's frames are never stalled by a copy).
const SNAPSHOT_OBJECTS: usize = 1_000;

/// Time travel's snapshots: the whole page model (simulation and panels) at earlier moments of
/// the run, oldest first. A seek restores the latest one at or before its target that belongs to
/// the run (same start, its actions a prefix of the run's) and replays from there.
pub struct Snapshots {
    taken: Vec<Snapshot>,
    every: Millis,
    /// Where the last seek replayed from: a snapshot's moment, or None for the run's start
    /// opened again.
    replayed_from: Option<Moment>,
    /// When a snapshot was last due and could not be taken (a learner's controller runs): the
    /// next try waits a spacing, as a taken one would.
    refused_at: Option<Millis>,
}

impl Default for Snapshots {
    fn default() -> Snapshots {
        Snapshots {
            taken: Vec::new(),
            every: SNAPSHOT_EVERY_MS,
            replayed_from: None,
            refused_at: None,
        }
    }
}

struct Snapshot {
    at: Moment,
    page: Box<Playground>,
}

impl Snapshots {
    /// The moments snapshots are kept of, oldest first.
    pub fn moments(&self) -> Vec<Moment> {
        self.taken.iter().map(|s| s.at).collect()
    }

    /// The spacing new snapshots are taken at.
    pub fn every(&self) -> Millis {
        self.every
    }

    /// Where the last seek replayed from (None: the run's start, opened again).
    pub fn replayed_from(&self) -> Option<Moment> {
        self.replayed_from
    }

    fn clear(&mut self) {
        *self = Snapshots::default();
    }

    /// Keeps at most `cap`: past it every other one goes and the spacing doubles, until they
    /// fit; none at all when `cap` is 0 (the spacing stays, for when the cluster shrinks).
    fn thin_to(&mut self, cap: usize) {
        if cap == 0 {
            self.taken.clear();
        }
        while self.taken.len() > cap {
            let mut i = 0;
            self.taken.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.every *= 2;
        }
    }
}

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
    /// A copy of the whole model as it is now, to go on from more than once; None when the
    /// simulation cannot be copied (a learner's controller: [`crate::sim::world::Sim::snapshot`]).
    /// Snapshots, the tape and the changes card are the timeline's, not the moment's: not copied.
    pub(crate) fn frozen(&self) -> Option<Playground> {
        Some(Playground {
            session: self.session.snapshot()?,
            seed: self.seed,
            playing: self.playing,
            speed: self.speed,
            last_apply: self.last_apply.clone(),
            last_apply_text: self.last_apply_text.clone(),
            controller_check: self.controller_check.clone(),
            applied_at: self.applied_at,
            notices: self.notices.clone(),
            next_id: self.next_id,
            loops: self.loops.clone(),
            sequence: self.sequence.clone(),
            history: self.history.clone(),
            fault_timeline: self.fault_timeline.clone(),
            selected: self.selected.clone(),
            console: self.console.clone(),
            trace_seq: self.trace_seq,
            visible_entries: self.visible_entries,
            quiet_frames: self.quiet_frames,
            carry: self.carry,
            lagging: self.lagging,
            moments: self.moments.clone(),
            real_clock: self.real_clock,
            version: self.version,
            loaded: self.loaded.clone(),
            scenario_applied: self.scenario_applied,
            // Followed afresh from the copy's store when first drawn.
            cluster_cache: RefCell::default(),
            events_drawn: self.events_drawn,
            start: self.start,
            tape: None,
            last_read_only: self.last_read_only,
            changes: None,
            snapshots: Snapshots::default(),
        })
    }

    /// Time travel's snapshots of this run.
    pub fn snapshots(&self) -> &Snapshots {
        &self.snapshots
    }

    /// At the cluster's present size: how far apart snapshots are taken and how many are kept
    /// at most (none past MAX_SNAPSHOTS × SNAPSHOT_OBJECTS objects).
    pub fn snapshot_plan(&self) -> (Millis, usize) {
        let objects = self.session.sim.api().len().max(1);
        (
            self.snapshots.every * (objects / SNAPSHOT_OBJECTS).max(1) as Millis,
            (MAX_SNAPSHOTS * SNAPSHOT_OBJECTS / objects).min(MAX_SNAPSHOTS),
        )
    }

    /// Whether the slider should seek only once released: a cluster too big to keep snapshots
    /// of replays its run from the start at every seek (seconds at 10,000 pods, `make bench`), so
    /// a seek at each step of a drag would hold the page for as many replays.
    pub fn scrub_on_release(&self) -> bool {
        self.snapshot_plan().1 == 0
    }

    /// Takes a snapshot when the last one at or before this moment is a spacing or more behind
    /// (called whenever the trackers catch up: after frames, advances and actions).
    pub(super) fn keep_snapshot(&mut self) {
        let here = self.session.moment();
        let (spacing, cap) = self.snapshot_plan();
        // Snapshots taken while the cluster was smaller count against what it may hold now: a
        // cluster that grew past the size where none is kept lets go of them too (one kept
        // from the start of a 10,000-pod run held 9 MiB, `make bench --memory`).
        self.snapshots.thin_to(cap);
        if cap == 0 {
            return;
        }
        let taken = &self.snapshots.taken;
        let before = taken.partition_point(|s| s.at <= here);
        if before > 0 && here.time - taken[before - 1].at.time < spacing {
            return;
        }
        let refused = self.snapshots.refused_at;
        if refused.is_some_and(|t| t <= here.time && here.time - t < spacing) {
            return;
        }
        let Some(page) = self.frozen() else {
            self.snapshots.refused_at = Some(here.time);
            return;
        };
        let snapshots = &mut self.snapshots;
        snapshots.taken.insert(
            before,
            Snapshot {
                at: here,
                page: Box::new(page),
            },
        );
        snapshots.thin_to(cap);
    }

    /// Forgets every snapshot: a new run starts (a reset, a lesson or a link opened).
    pub fn drop_snapshots(&mut self) {
        self.snapshots.clear();
    }

    /// Forgets the snapshots past this moment: the run branched here, so they are another
    /// run's.
    fn drop_snapshots_ahead(&mut self) {
        let here = self.session.moment();
        self.snapshots.taken.retain(|s| s.at <= here);
    }

    /// The latest snapshot of this run (its start, then `entries`) at or before `t`.
    fn snapshot_for(&self, entries: &[Entry], t: Millis) -> Option<&Playground> {
        let origin = self.session.origin();
        let seed = self.session.sim.config().seed;
        self.snapshots
            .taken
            .iter()
            .rev()
            .filter(|s| s.at.time <= t)
            .find(|s| {
                let done = s.page.session.actions();
                s.page.session.origin() == origin
                    && s.page.session.sim.config().seed == seed
                    && entries.len() >= done.len()
                    && entries[..done.len()] == *done
                    && entries.get(done.len()).is_none_or(|next| next.at >= s.at)
            })
            .map(|s| &*s.page)
    }

    /// Moves the clock to `t` of this run (time travel): from the latest snapshot of the run at
    /// or before `t` (or, without one, from the run's start opened again), replaying the run's
    /// own actions on the way; past its end, by running on. The panels follow. Returns the
    /// moment reached.
    pub fn seek(&mut self, t: Millis) -> Moment {
        self.changes = None;
        let tape = self.tape.take().unwrap_or_else(|| Tape {
            entries: self.session.actions().to_vec(),
            end: self.session.moment(),
        });
        let (speed, pause_on_check, loaded) =
            (self.speed, self.moments.pause_on_check, self.loaded.clone());
        let here = self.session.moment();
        let restore = self
            .snapshot_for(&tape.entries, t)
            .filter(|s| t < here.time || s.session.moment() > here)
            .and_then(Playground::frozen);
        let from = restore.as_ref().map(|p| p.session.moment());
        if let Some(mut page) = restore {
            // The page's own counters go on (views redraw on a new version, notices keep
            // unique ids and their ages); the rest is the moment's.
            page.version = self.version + 1;
            page.next_id = self.next_id;
            page.real_clock = self.real_clock;
            page.notices.clear();
            page.selected = self
                .selected
                .take()
                .filter(|k| page.session.sim.api().get(k).is_some());
            page.snapshots = std::mem::take(&mut self.snapshots);
            *self = page;
            self.tape = Some(tape.clone());
            // The run's actions in the snapshot's own millisecond, after it was taken.
            self.replay_tape_until(self.now());
        }
        // Said in the notice: why a seek back replays the whole run (a simplification).
        let from_start = (from.is_none() && t < here.time).then(|| {
            if self.snapshots.refused_at.is_some() {
                " (replayed from its start: a run with your own controller keeps no snapshots)"
            } else if self.snapshot_plan().1 == 0 {
                " (replayed from its start: a cluster this big keeps no snapshots)"
            } else {
                ""
            }
        });
        if from.is_none() && t < here.time {
            let snapshots = std::mem::take(&mut self.snapshots);
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
            if !snapshots.taken.is_empty() || snapshots.refused_at.is_some() {
                self.snapshots = snapshots;
            }
        }
        self.snapshots.replayed_from = from;
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
                    "At {} of a run that goes on to {}{}: play or drag forward to replay it, or act to branch from here",
                    crate::sim::time::clock(here.time),
                    crate::sim::time::clock(end.time),
                    from_start.unwrap_or_default()
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

    /// The run's whole journal and its furthest moment: the tape behind the end, else what was
    /// done up to now.
    fn whole_run(&self) -> (Vec<Entry>, Moment) {
        match &self.tape {
            Some(tape) => (tape.entries.clone(), tape.end),
            None => (self.session.actions().to_vec(), self.session.moment()),
        }
    }

    /// The run (its start, then `entries`) at `until` on a session of its own, from the latest
    /// snapshot at or before it, or from the start. An `until` with `events: u64::MAX` is the
    /// end of its millisecond, with every action of that millisecond done.
    fn session_at(
        &self,
        entries: &[Entry],
        until: Moment,
    ) -> Result<crate::sim::session::Session, String> {
        let snapshot = self
            .snapshot_for(entries, until.time)
            .filter(|p| p.session.moment() <= until)
            .and_then(|p| p.session.snapshot());
        let mut s = match snapshot {
            Some(s) => s,
            None => {
                let seed = self.session.sim.config().seed;
                match self.session.origin() {
                    None => crate::sim::session::Session::new(seed),
                    Some(text) => crate::sim::session::Session::load(EDITOR_FILE, text, Some(seed))
                        .map_err(|_| "The run's start no longer opens".to_string())?,
                }
            }
        };
        let done = s.actions().len().min(entries.len());
        let due: Vec<Entry> = entries[done..]
            .iter()
            .take_while(|e| e.at <= until)
            .cloned()
            .collect();
        let last = due.last().map_or(s.moment(), |e| e.at);
        run::replay(&mut s, &due, last).map_err(|d| d.message)?;
        if until.events == u64::MAX {
            s.advance_to(until.time, usize::MAX);
        } else {
            s.advance_to_moment(until)?;
        }
        Ok(s)
    }

    /// Works out what changes between two moments of the run (`from` before `to`, both within
    /// it, each a time whose millisecond is taken whole) and shows it, each side worked out on a
    /// session of its own (or read from the clock's own moment); says why not otherwise.
    pub fn show_changes(&mut self, from: Millis, to: Millis) {
        let (entries, end) = self.whole_run();
        let (from, to) = (from.min(end.time), to.min(end.time));
        if from >= to {
            self.notify(
                &format!(
                    "Pick a first moment before the second: {} is not before {}",
                    crate::sim::time::clock(from),
                    crate::sim::time::clock(to)
                ),
                NoticeKind::Info,
            );
            return;
        }
        let here = self.session.moment();
        let moment = |t: Millis| {
            if t == end.time {
                end
            } else if t == here.time {
                here
            } else {
                Moment {
                    time: t,
                    events: u64::MAX,
                }
            }
        };
        let side = |m: Moment| (m != here).then(|| self.session_at(&entries, m));
        let (before, after) = match (side(moment(from)), side(moment(to))) {
            (Some(Err(e)), _) | (_, Some(Err(e))) => {
                self.notify(&e, NoticeKind::Error);
                return;
            }
            (before, after) => (before.and_then(Result::ok), after.and_then(Result::ok)),
        };
        let live = &self.session.sim;
        let objects = crate::viewmodel::changes::between(
            before.as_ref().map_or(live, |s| &s.sim),
            after.as_ref().map_or(live, |s| &s.sim),
        );
        self.changes = Some(crate::viewmodel::changes::ChangesView {
            from,
            to,
            objects,
            made_at: (here, self.session.actions().len()),
        });
        self.version += 1;
    }

    /// The toolbar's Δ: behind the run's end, what changes from now to then; at the end, what
    /// changed since just before the learner's last action (or since the run's start).
    pub fn show_changes_ahead(&mut self) {
        let (entries, end) = self.whole_run();
        if self.tape.is_some() {
            return self.show_changes(self.now(), end.time);
        }
        let since = entries.last().map_or(self.start.time, |e| {
            e.at.time.saturating_sub(1).max(self.start.time)
        });
        if since >= self.now() {
            self.notify(
                "Nothing has changed yet: let the clock run, or drag the slider back first",
                NoticeKind::Info,
            );
            return;
        }
        self.show_changes(since, self.now());
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
        let here = (self.session.moment(), self.session.actions().len());
        if self.changes.as_ref().is_some_and(|c| c.made_at != here) {
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
            self.drop_snapshots_ahead();
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

    /// A run of `minutes` with an action every minute (scales, a pod deleted, a node failure).
    fn busy_run(seed: u64, minutes: u32) -> Playground {
        let mut p = Playground::new(seed);
        p.apply(&deployment(3));
        for i in 0..minutes {
            p.advance_by(60_000);
            match i % 3 {
                0 => {
                    p.kubectl(&format!("scale deployment web --replicas={}", 2 + i % 3));
                }
                1 => {
                    let pod = p.cluster().all_pods().next().map(|v| v.name.clone());
                    if let Some(pod) = pod {
                        let _ = p.delete_pod("default", &pod);
                    }
                }
                _ => {
                    let _ = p.inject(Fault::NodeDown {
                        node: format!("node-{}", 1 + i % 3),
                    });
                }
            }
        }
        p
    }

    #[test]
    fn a_seek_back_restores_the_nearest_snapshot_and_replays_only_from_there() {
        let mut p = busy_run(6, 12);
        let end = p.session.moment();
        let target = 7 * 60_000 + 45_000;
        let mut straight = busy_run(6, 7);
        straight.advance_by(target - straight.now());

        p.seek(target);
        let from = p
            .snapshots()
            .replayed_from()
            .expect("a snapshot was restored");
        assert!(from.time <= target && target - from.time < p.snapshots().every());
        same_run(&p, &straight);
        assert_eq!(p.tape_end(), Some(end));

        // Forward again, past snapshots taken on the way out: the run's end, as it was.
        p.seek(end.time);
        assert_eq!(p.session.moment(), end);
        same_run(&p, &busy_run(6, 12));
    }

    #[test]
    fn a_long_run_keeps_a_bounded_number_of_snapshots_spread_over_all_of_it() {
        let mut p = Playground::new(2);
        p.apply(&deployment(2));
        p.advance_by(3 * 3_600_000);
        let kept = p.snapshots().moments();
        assert!(kept.len() <= MAX_SNAPSHOTS, "{}", kept.len());
        assert!(kept.len() >= MAX_SNAPSHOTS / 2, "{}", kept.len());
        assert_eq!(kept.first().map(|m| m.time), Some(p.start.time));
        let every = p.snapshots().every();
        assert!(kept.windows(2).all(|w| w[1].time - w[0].time <= every));
        assert!(p.now() - kept.last().unwrap().time <= every);
    }

    #[test]
    fn a_big_cluster_keeps_fewer_snapshots_further_apart() {
        let mut p = Playground::new(2);
        for batch in 0..5 {
            let maps: String = (0..500)
                .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m{batch}-{i}\ndata: {{k: v}}\n"))
                .collect();
            let report = p.apply(&maps);
            assert!(report.ok, "{:?}", report.diagnostics.first());
        }
        p.advance_by(3 * 3_600_000);
        let objects = p.session.sim.api().len();
        assert!(objects >= 2_500);
        let kept = p.snapshots().moments();
        assert!(
            kept.len() <= MAX_SNAPSHOTS * SNAPSHOT_OBJECTS / objects,
            "{}",
            kept.len()
        );
        assert!(kept.len() >= 2);
        let spacing = p.snapshots().every() * (objects / SNAPSHOT_OBJECTS) as Millis;
        assert!(kept
            .windows(2)
            .all(|w| w[1].time - w[0].time >= spacing / 2));
    }

    #[test]
    fn past_the_size_where_snapshots_stop_none_is_kept_and_the_slider_seeks_only_when_released() {
        let mut p = Playground::new(2);
        assert!(!p.scrub_on_release());
        for batch in 0..33 {
            let maps: String = (0..500)
                .map(|i| {
                    format!(
                        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m{batch}-{i}\n"
                    )
                })
                .collect();
            assert!(p.apply(&maps).ok);
        }
        assert!(p.session.sim.api().len() > MAX_SNAPSHOTS * SNAPSHOT_OBJECTS);
        assert!(p.scrub_on_release());
        p.advance_by(10 * 60_000);
        assert_eq!(
            p.snapshots().moments(),
            vec![],
            "none taken at this size, and none kept from when it was smaller"
        );
    }

    #[test]
    fn a_branch_drops_the_snapshots_of_the_run_it_left_and_seeks_within_itself() {
        let mut p = busy_run(9, 6);
        p.seek(90_000);
        p.update(
            crate::viewmodel::action::Action::Kubectl(
                "scale deployment web --replicas=5".into(),
                None,
                crate::viewmodel::action::reply(),
            ),
            &mut || false,
        );
        assert!(p.snapshots().moments().iter().all(|m| m.time <= 90_000));
        p.advance_by(4 * 60_000);
        let end = p.session.moment();
        let at_end = p.session.sim.trace().fingerprint();

        p.seek(2 * 60_000);
        assert!(p.snapshots().replayed_from().is_some());
        let replicas = p.kubectl("get deployment web -o jsonpath={.spec.replicas}");
        assert_eq!(replicas.stdout, "5", "the branch's own past");
        p.seek(end.time);
        assert_eq!(p.session.sim.trace().fingerprint(), at_end);
    }

    #[test]
    fn a_run_with_a_learners_controller_takes_no_snapshots_and_seeks_from_its_start() {
        let lesson = crate::sim::examples::by_name("break-it-then-fix-it").expect("the lesson");
        let open = || {
            let (p, loaded) = Playground::opened(lesson, None, 1);
            assert_eq!(loaded, Ok(()));
            p
        };
        let mut p = open();
        p.advance_by(90_000);
        p.kubectl("get pods");
        p.advance_by(90_000);
        assert_eq!(p.snapshots().moments(), []);
        p.seek(100_000);
        assert_eq!(p.snapshots().replayed_from(), None);
        assert!(
            p.notices().any(|n| n.text.contains(
                "replayed from its start: a run with your own controller keeps no snapshots"
            )),
            "{:?}",
            p.notices().map(|n| n.text.clone()).collect::<Vec<_>>()
        );
        let mut straight = open();
        straight.advance_by(90_000);
        straight.kubectl("get pods");
        straight.advance_by(10_000);
        same_run(&p, &straight);
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
    fn any_two_moments_compare_as_two_straight_runs_to_them_would() {
        let mut p = busy_run(12, 5);
        let show = |p: &mut Playground, from: &str, to: &str| {
            p.update(
                crate::viewmodel::action::Action::ShowChangesBetween(from.into(), to.into()),
                &mut || false,
            );
            p.changes.clone()
        };
        let card = show(&mut p, "01:30", "3m10s").expect("the card");
        assert_eq!((card.from, card.to), (90_000, 190_000));
        let at = |t: Millis| {
            let mut s = busy_run(12, (t / 60_000) as u32);
            s.advance_by(t - s.now());
            s
        };
        let want =
            crate::viewmodel::changes::between(&at(90_000).session.sim, &at(190_000).session.sim);
        assert!(!want.is_empty());
        assert_eq!(card.objects, want);

        // What the learner typed wrong is said, and the card stays as it was.
        assert_eq!(show(&mut p, "1:75", "03:00"), Some(card));
        assert!(p
            .notices()
            .any(|n| n.text.starts_with("\"1:75\" is not a time of the run")));
        let same = show(&mut p, "03:00", "01:00");
        assert_eq!(same.map(|c| (c.from, c.to)), Some((90_000, 190_000)));
        assert!(p
            .notices()
            .any(|n| n.text.starts_with("Pick a first moment before the second")));
    }

    #[test]
    fn at_the_runs_end_delta_shows_what_the_last_action_changed() {
        let mut p = Playground::new(3);
        p.apply(&deployment(2));
        p.advance_by(20_000);
        p.kubectl("scale deployment web --replicas=4");
        let scaled_at = p.now();
        p.advance_by(30_000);
        p.update(
            crate::viewmodel::action::Action::ShowChangesAhead,
            &mut || false,
        );
        let card = p.changes.clone().unwrap_or_else(|| {
            panic!(
                "{:?}",
                p.notices().map(|n| n.text.clone()).collect::<Vec<_>>()
            )
        });
        assert_eq!((card.from, card.to), (scaled_at - 1, p.now()));
        let web = card
            .objects
            .iter()
            .find(|c| c.name == "deployment/web")
            .expect("the scaled deployment");
        assert!(web
            .lines
            .contains(&crate::viewmodel::changes::DiffLine::Added(
                "  replicas: 4".into()
            )));
        let created = card.objects.iter().filter(|c| c.what == "created").count();
        assert_eq!(created, 2, "two more pods: {:?}", card.objects);
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
        // Measured 2,361 characters with moments as distances (5,021 with absolute ones).
        assert!(
            link.len() < crate::sim::share::LONG_LINK_WARNING / 3,
            "{} characters",
            link.len()
        );
    }
}
