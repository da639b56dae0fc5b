//! The kubectl console's transcript: each command with what it printed, the lines a long-running
//! command (`drain`) prints later as simulated time runs, and the fold that starts each lesson on
//! a clean screen.

use std::rc::Rc;

use crate::sim::api::types::Millis;
use crate::sim::kubectl::drain::{LogLine, Stream};
use crate::sim::kubectl::CommandOutput;
use crate::sim::machinery::controller::ComponentId;
use crate::sim::session::Session;
use crate::sort::StableSort;

/// The most commands the transcript keeps; the oldest go first.
pub const MAX_ENTRIES: usize = 200;

/// One command and its output in the console.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleEntry {
    pub id: u64,
    /// The text as typed: one line, or a command with its here-document.
    pub command: String,
    /// What the command printed before it returned.
    pub output: CommandOutput,
    /// What it printed after it returned (a drain's evictions), in the order it printed it.
    pub streamed: Vec<LogLine>,
    /// Still printing: a drain that has not exited.
    pub running: bool,
    /// The lesson or scenario it was typed in ([`Console::epoch`]).
    pub epoch: u64,
    /// The long-running commands it started: which, when, and how many of their lines `output`
    /// already holds.
    follows: Vec<(ComponentId, Millis, usize)>,
}

impl ConsoleEntry {
    /// The command as a terminal shows it after its `$ ` prompt: `kubectl` first (the console's
    /// prompt supplies it when it was not typed), and a here-document's lines after it.
    pub fn shown_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.command.lines().map(str::to_string).collect();
        if let Some(first) = lines.first_mut() {
            let typed_program = ["kubectl", "cat"]
                .iter()
                .any(|p| first == p || first.starts_with(&format!("{p} ")));
            if !typed_program {
                first.insert_str(0, "kubectl ");
            }
        }
        if lines.is_empty() {
            lines.push("kubectl".into());
        }
        lines
    }

    /// The later lines in runs of one stream, as a terminal interleaves stdout and stderr.
    pub fn streamed_runs(&self) -> Vec<(Stream, String)> {
        let mut runs: Vec<(Stream, String)> = Vec::new();
        for l in &self.streamed {
            match runs.last_mut() {
                Some((s, text)) if *s == l.stream => {
                    text.push('\n');
                    text.push_str(&l.text);
                }
                _ => runs.push((l.stream, l.text.clone())),
            }
        }
        runs
    }
}

/// The console's transcript.
#[derive(Clone, Debug, Default)]
pub struct Console {
    /// Shared with the view, which re-renders when the `Rc` changes.
    entries: Rc<Vec<ConsoleEntry>>,
    /// Bumped when a lesson or scenario starts: entries of earlier epochs are folded away.
    pub epoch: u64,
    /// Bumped when an action's output belongs on screen (a lesson's kubectl step): the page
    /// opens the kubectl tab and scrolls to it.
    pub reveal: u64,
    next_id: u64,
}

impl Console {
    /// Every entry kept, oldest first.
    pub fn entries(&self) -> Rc<Vec<ConsoleEntry>> {
        self.entries.clone()
    }

    /// The entries typed since the current lesson or scenario started.
    pub fn current(&self) -> impl Iterator<Item = &ConsoleEntry> {
        self.entries.iter().filter(move |e| e.epoch == self.epoch)
    }

    /// The long-running commands `session` knows now, to pass to [`Console::push`] after a
    /// command ran: the ones it started are those that were not there before.
    pub fn commands_before(session: &Session) -> Vec<(ComponentId, Millis)> {
        session
            .sim
            .command_logs()
            .into_iter()
            .map(|l| (l.id, l.started))
            .collect()
    }

    /// Keeps a command that just ran in `session`. The long-running commands it started (those
    /// not in `before`, from [`Console::commands_before`]) go on printing into its entry.
    pub fn push(
        &mut self,
        command: &str,
        output: CommandOutput,
        before: &[(ComponentId, Millis)],
        session: &Session,
    ) {
        let follows: Vec<(ComponentId, Millis, usize)> = session
            .sim
            .command_logs()
            .into_iter()
            .filter(|l| !before.contains(&(l.id.clone(), l.started)))
            .map(|l| (l.id, l.started, l.lines.len()))
            .collect();
        self.next_id += 1;
        let entries = Rc::make_mut(&mut self.entries);
        entries.push(ConsoleEntry {
            id: self.next_id,
            command: command.trim().to_string(),
            output,
            streamed: Vec::new(),
            running: !follows.is_empty(),
            epoch: self.epoch,
            follows,
        });
        if entries.len() > MAX_ENTRIES {
            let extra = entries.len() - MAX_ENTRIES;
            entries.drain(..extra);
        }
        self.follow(session);
    }

    /// Adds what the running commands printed since the last call. Returns true when anything
    /// changed.
    pub fn follow(&mut self, session: &Session) -> bool {
        if !self.entries.iter().any(|e| e.running) {
            return false;
        }
        let mut updated: Vec<(usize, Vec<LogLine>, bool)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate().filter(|(_, e)| e.running) {
            let mut lines = Vec::new();
            let mut running = false;
            for (id, started, printed) in &e.follows {
                // Another drain of the same node replaced this one's process: it ended there.
                let Some(log) = session
                    .sim
                    .command_log_of(id)
                    .filter(|l| l.started == *started)
                else {
                    continue;
                };
                lines.extend(log.lines.iter().skip(*printed).cloned());
                running |= log.running();
            }
            lines.stable_sort_by_key(|l| l.at);
            if lines != e.streamed || running != e.running {
                updated.push((i, lines, running));
            }
        }
        if updated.is_empty() {
            return false;
        }
        let entries = Rc::make_mut(&mut self.entries);
        for (i, lines, running) in updated {
            entries[i].streamed = lines;
            entries[i].running = running;
        }
        true
    }

    /// A lesson or scenario starts (or starts over): what came before is folded away, and
    /// commands of the old cluster stop printing.
    pub fn fold(&mut self) {
        self.epoch += 1;
        if self.entries.iter().any(|e| e.running) {
            for e in Rc::make_mut(&mut self.entries) {
                e.running = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viewmodel::Playground;

    fn lesson(name: &str) -> Playground {
        let mut p = Playground::new(1);
        let text = crate::sim::examples::by_name(name).expect("a built-in lesson");
        assert!(p.load_scenario(text, None).is_ok());
        p
    }

    fn last(p: &Playground) -> ConsoleEntry {
        p.console.entries().last().cloned().expect("an entry")
    }

    const CONSISTENT_BUDGET: &str = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 4\n  selector: {matchLabels: {app: web}}\n";

    #[test]
    fn a_drain_run_in_the_console_prints_its_evictions_there_as_simulated_time_runs() {
        let mut p = lesson("inconsistent");
        p.advance_by(40_000);
        let out = p.kubectl("drain node-1 --ignore-daemonsets");
        assert_eq!(out.stdout, "node/node-1 cordoned\n");
        assert!(last(&p).running);
        assert!(last(&p).streamed.is_empty(), "nothing evicted yet");
        p.advance_by(1_000);
        let e = last(&p);
        let first = &e.streamed[0];
        assert_eq!(first.stream, Stream::Stdout);
        assert!(
            first.text.starts_with("evicting pod default/web-"),
            "{e:#?}"
        );
        assert!(
            e.streamed.iter().any(|l| l.stream == Stream::Stderr
                && l.text.starts_with("error when evicting pods/\"web-")
                && l.text.ends_with(" -n \"default\" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.")),
            "{e:#?}"
        );
        let printed = e.streamed.len();
        p.advance_by(10_000);
        assert!(last(&p).streamed.len() > printed, "retried every 5 s");
        assert!(p.apply(CONSISTENT_BUDGET).ok);
        p.advance_by(180_000);
        let e = last(&p);
        assert!(!e.running, "{e:#?}");
        assert_eq!(
            e.streamed.last().map(|l| l.text.as_str()),
            Some("node/node-1 drained")
        );
        assert!(e
            .streamed
            .iter()
            .any(|l| l.text.starts_with("pod/web-") && l.text.ends_with(" evicted")));
        // The cordon was printed once, when the command returned.
        assert!(e.streamed.iter().all(|l| !l.text.contains("cordoned")));
        let runs = e.streamed_runs();
        assert!(runs.windows(2).all(|w| w[0].0 != w[1].0), "runs alternate");
    }

    #[test]
    fn loading_or_resetting_a_lesson_folds_the_transcript_and_closes_the_old_clusters_drain() {
        let mut p = lesson("inconsistent");
        p.advance_by(40_000);
        p.kubectl("get pods");
        p.kubectl("drain node-1 --ignore-daemonsets");
        p.advance_by(1_000);
        assert_eq!(p.console.current().count(), 2);
        p.reset();
        assert_eq!(p.console.current().count(), 0, "the lesson starts clean");
        let all = p.console.entries();
        assert_eq!(all.len(), 2, "kept, folded");
        assert!(all.iter().all(|e| e.epoch < p.console.epoch && !e.running));
        let printed = all[1].streamed.len();
        p.advance_by(40_000);
        p.kubectl("drain node-1 --ignore-daemonsets");
        p.advance_by(10_000);
        assert_eq!(p.console.entries()[1].streamed.len(), printed);
        assert_eq!(p.console.current().count(), 1);
        assert!(!last(&p).streamed.is_empty(), "the new drain prints");
        let text = crate::sim::examples::by_name("thermostat").expect("a built-in lesson");
        assert!(p.load_scenario(text, None).is_ok());
        assert_eq!(p.console.current().count(), 0);
        assert!(p.console.entries().iter().all(|e| !e.running));
    }

    #[test]
    fn a_lessons_kubectl_step_shows_its_output_in_the_console_not_in_a_notice() {
        let mut p = lesson("fix-the-spec");
        p.advance_by(40_000);
        let reveal = p.console.reveal;
        assert!(
            p.try_this(0).is_ok(),
            "label pods -l app=web app=web-debug --overwrite"
        );
        assert_eq!(p.console.reveal, reveal + 1);
        let e = last(&p);
        assert_eq!(e.command, "label pods -l app=web app=web-debug --overwrite");
        let lines: Vec<&str> = e.output.stdout.lines().collect();
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines
            .iter()
            .all(|l| l.starts_with("pod/web-") && l.ends_with(" labeled")));
        assert!(p.notices().all(|n| !n.text.contains("labeled")));
        // A menu's command still says what it did in a notice: its console may be hidden.
        p.run_command("cordon node-1");
        assert_eq!(p.console.reveal, reveal + 1);
        assert!(p.notices().any(|n| n.text.contains("cordoned")));
    }

    #[test]
    fn a_command_is_shown_as_a_terminal_shows_it_with_kubectl_first_and_its_here_document_after() {
        let mut p = Playground::new(1);
        p.kubectl("get pods");
        p.kubectl("kubectl version --client");
        p.kubectl("cat <<EOF | kubectl apply -f -\nkind: Namespace\nEOF");
        let shown: Vec<Vec<String>> = p
            .console
            .entries()
            .iter()
            .map(ConsoleEntry::shown_lines)
            .collect();
        assert_eq!(
            shown,
            [
                vec!["kubectl get pods".to_string()],
                vec!["kubectl version --client".to_string()],
                vec![
                    "cat <<EOF | kubectl apply -f -".to_string(),
                    "kind: Namespace".to_string(),
                    "EOF".to_string()
                ],
            ]
        );
    }

    #[test]
    fn the_transcript_keeps_its_newest_commands() {
        let mut p = Playground::new(1);
        for _ in 0..MAX_ENTRIES + 5 {
            p.kubectl("get nodes");
        }
        let all = p.console.entries();
        assert_eq!(all.len(), MAX_ENTRIES);
        assert!(all.windows(2).all(|w| w[0].id < w[1].id));
    }
}
