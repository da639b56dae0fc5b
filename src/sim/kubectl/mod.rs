//! The playground's kubectl: parses a command line and runs it against the simulated cluster.
//!
//! Output and error messages follow kubectl's own shapes (checked against the kubectl sources),
//! so what a learner practises here is what they will type and read on a real cluster. Tables go
//! through a port of Go's tabwriter with kubectl's settings. Commands that take time on a real
//! cluster answer at once with the state now (`rollout status`, `wait`, `delete` does not wait),
//! except `drain`, which runs as a simulated client over simulated time (see [`drain`]).
//!
//! Like the real kubectl, a client of the API server: each command reads and writes a [`Sim`]
//! and nothing above it. Entry points: [`execute`], [`execute_with_stdin`] for `apply -f -` with
//! the editor's text, [`apply`] for `apply -f`/`delete -f` of a file, and
//! [`Sim::command_logs`] for the output of a running `drain`. The session records each command
//! and compares it with a lesson's steps (`Session::kubectl_with_input`).

pub mod apply;
pub mod args;
pub mod complete;
pub mod config;
pub mod describe;
pub mod drain;
pub mod errors;
pub mod explain;
pub mod misc;
pub mod mutate;
pub mod printers;
pub mod resources;
pub mod rollout;
pub mod shell;
pub mod tabwriter;
pub mod util;

#[cfg(test)]
mod tests;

use args::{flag, Args, Flag, FlagKind, GLOBAL};
use util::{error, fail};

use super::scenario::split_words;
use super::world::Sim;

pub use apply::ApplyReport;

/// The output of a command, split as a terminal would show it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandOutput {
    pub stdout: String,
    pub stderr: String,
    pub ok: bool,
}

impl CommandOutput {
    /// A successful output.
    pub fn ok(stdout: impl Into<String>) -> CommandOutput {
        CommandOutput {
            stdout: stdout.into(),
            stderr: String::new(),
            ok: true,
        }
    }

    /// A failed output.
    pub fn err(stderr: impl Into<String>) -> CommandOutput {
        CommandOutput {
            stdout: String::new(),
            stderr: stderr.into(),
            ok: false,
        }
    }
}

/// Runs one command line (`kubectl` prefix optional).
pub fn execute(sim: &mut Sim, line: &str) -> CommandOutput {
    execute_with_stdin(sim, line, None)
}

/// Runs one command line with `input` as standard input (what `apply -f -` and `delete -f -`
/// read). The playground has no file system: `-f NAME` also reads `input`, so the UI can pass
/// the editor's text under the editor's file name.
///
/// `line` may hold what a shell would read: a here-document (`apply -f - <<EOF` … `EOF`), which
/// then is the standard input, and backslash-newline continuations (see [`shell`]).
pub fn execute_with_stdin(sim: &mut Sim, line: &str, input: Option<&str>) -> CommandOutput {
    execute_in(sim, &mut config::KubeConfig::default(), line, input)
}

/// [`execute_with_stdin`] with a kubeconfig that lasts between commands (the console's, which
/// `kubectl config set-context --current --namespace` changes).
pub fn execute_in(
    sim: &mut Sim,
    kubeconfig: &mut config::KubeConfig,
    line: &str,
    input: Option<&str>,
) -> CommandOutput {
    let shell = match shell::parse(line) {
        Ok(s) => s,
        Err(e) => return fail(e.message()),
    };
    let mut out = execute_command(
        sim,
        kubeconfig,
        &shell.command,
        shell.stdin.as_deref().or(input),
    );
    if let Some(w) = shell.warning {
        out.stderr.insert_str(0, &format!("{w}\n"));
    }
    out
}

/// Runs one command line, already one line and with its standard input.
fn execute_command(
    sim: &mut Sim,
    kubeconfig: &mut config::KubeConfig,
    line: &str,
    input: Option<&str>,
) -> CommandOutput {
    // Too long, or holding control characters: refused before any parsing (see sim::limits).
    if let Err(e) = crate::sim::api::limits::check_command_line(line) {
        return error(e);
    }
    drain::retire_finished(sim);
    let mut words = match split_words(line) {
        Ok(w) => w,
        Err(e) => return error(e),
    };
    if words.first().map(String::as_str) == Some("kubectl") {
        words.remove(0);
    }
    if words
        .iter()
        .any(|w| matches!(w.as_str(), "|" | ">" | ">>" | "<" | "&&" | "||" | ";"))
    {
        return util::unsupported(
            "shell syntax (pipes, redirections, chained commands)",
            "run one kubectl command at a time",
        );
    }
    // `kubectl label pod $(kubectl get pods -o name | head -1) …`: no shell expands these here.
    if words
        .iter()
        .any(|w| w.starts_with("$(") || w.starts_with('`') || w.starts_with("${"))
    {
        return util::unsupported(
            "shell substitution ($(…), `…`, ${…})",
            "type the object's name: kubectl get pods lists them, and Tab completes them in the console",
        );
    }
    // Global flags may come before the command: `kubectl -n kube-system get pods`.
    let Some(verb_at) = find_verb(&words) else {
        return if words.iter().any(|w| w == "-h" || w == "--help") {
            util::out(USAGE)
        } else {
            fail(USAGE)
        };
    };
    let verb = words.remove(verb_at);
    if words.iter().any(|w| w == "-h" || w == "--help") {
        return util::out(format!(
            "{}\nThe playground follows `kubectl {verb}` as documented at https://kubernetes.io/docs/reference/kubectl/generated/kubectl_{verb}/\n",
            USAGE
        ));
    }
    let context_namespace = kubeconfig.namespace.clone();
    let parse = |spec: &[Flag], command: &str| {
        Args::parse(command, &words, spec).map(|mut a| {
            a.context_namespace = context_namespace.clone();
            a
        })
    };
    macro_rules! with_args {
        ($spec:expr, $cmd:expr, |$a:ident| $body:expr) => {
            match parse($spec, $cmd) {
                Ok($a) => $body,
                Err(e) => fail(e),
            }
        };
    }
    match verb.as_str() {
        "get" => with_args!(printers::GET_FLAGS, "get", |a| printers::get(sim, &a)),
        "describe" => with_args!(describe::DESCRIBE_FLAGS, "describe", |a| {
            describe::describe(sim, &a)
        }),
        "events" => with_args!(misc::EVENTS_FLAGS, "events", |a| misc::events(sim, &a)),
        "apply" => with_args!(mutate::APPLY_FLAGS, "apply", |a| {
            mutate::apply(sim, &a, input)
        }),
        "create" => {
            let sub = words.iter().find(|w| !w.starts_with('-')).cloned();
            let cmd = match sub.as_deref() {
                Some(s) => format!("create {s}"),
                None => "create".to_string(),
            };
            match parse(mutate::CREATE_FLAGS, &cmd) {
                Ok(a) => mutate::create(sim, &a),
                // `create configmap --from-literal=…`: the subcommand, not its flag, is the news.
                Err(_)
                    if sub
                        .as_deref()
                        .is_some_and(|s| !mutate::CREATE_SUBCOMMANDS.contains(&s)) =>
                {
                    mutate::create_unsupported(sub.as_deref().unwrap_or_default())
                }
                Err(e) => fail(e),
            }
        }
        "run" => with_args!(mutate::RUN_FLAGS, "run", |a| mutate::run(sim, &a)),
        "expose" => with_args!(mutate::EXPOSE_FLAGS, "expose", |a| mutate::expose(sim, &a)),
        "delete" => with_args!(mutate::DELETE_FLAGS, "delete", |a| {
            mutate::delete(sim, &a, input)
        }),
        "scale" => with_args!(mutate::SCALE_FLAGS, "scale", |a| mutate::scale(sim, &a)),
        "set" => with_args!(mutate::SET_IMAGE_FLAGS, "set image", |a| mutate::set(
            sim, &a
        )),
        "patch" => with_args!(mutate::PATCH_FLAGS, "patch", |a| mutate::patch(sim, &a)),
        "label" => with_args!(mutate::LABEL_FLAGS, "label", |a| {
            mutate::label(sim, &a, false)
        }),
        "annotate" => with_args!(mutate::LABEL_FLAGS, "annotate", |a| {
            mutate::label(sim, &a, true)
        }),
        "taint" => with_args!(mutate::TAINT_FLAGS, "taint", |a| mutate::taint(sim, &a)),
        "rollout" => {
            let sub = words
                .iter()
                .find(|w| !w.starts_with('-'))
                .cloned()
                .unwrap_or_default();
            with_args!(rollout::ROLLOUT_FLAGS, &format!("rollout {sub}"), |a| {
                rollout::rollout(sim, &a)
            })
        }
        "cordon" => with_args!(drain::CORDON_FLAGS, "cordon", |a| {
            drain::cordon(sim, &a, true)
        }),
        "uncordon" => with_args!(drain::CORDON_FLAGS, "uncordon", |a| {
            drain::cordon(sim, &a, false)
        }),
        "drain" => with_args!(drain::DRAIN_FLAGS, "drain", |a| drain::drain(sim, &a, line)),
        "wait" => with_args!(misc::WAIT_FLAGS, "wait", |a| misc::wait(sim, &a, &words)),
        "edit" => match parse(misc::EDIT_FLAGS, "edit") {
            Ok(a) => misc::edit(sim, &a),
            Err(_) => misc::edit(sim, &args::Args::default()),
        },
        "version" => with_args!(VERSION_FLAGS, "version", |a| misc::version(&a)),
        "cluster-info" => with_args!(&[], "cluster-info", |a| misc::cluster_info(&a)),
        "api-resources" => with_args!(misc::API_RESOURCES_FLAGS, "api-resources", |a| {
            misc::api_resources(sim, &a)
        }),
        "api-versions" => util::out(misc::api_versions(sim)),
        "explain" => with_args!(explain::EXPLAIN_FLAGS, "explain", |a| explain::explain(
            sim, &a
        )),
        "config" => {
            let sub = words
                .iter()
                .find(|w| !w.starts_with('-'))
                .cloned()
                .unwrap_or_default();
            with_args!(config::CONFIG_FLAGS, &format!("config {sub}"), |a| {
                config::config(kubeconfig, &a)
            })
        }
        "help" => util::out(USAGE),
        other => match misc::not_simulated(other) {
            Some(o) => o,
            None => error(format!("unknown command \"{other}\" for \"kubectl\"")),
        },
    }
}

const VERSION_FLAGS: &[Flag] = &[
    flag("client", None, FlagKind::Bool),
    flag("output", Some('o'), FlagKind::Str),
];

/// The index of the command word, skipping global flags (and their values) before it.
pub(crate) fn find_verb(words: &[String]) -> Option<usize> {
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if !w.starts_with('-') {
            return Some(i);
        }
        let takes_value = |f: &Flag| f.kind != FlagKind::Bool;
        if let Some(long) = w.strip_prefix("--") {
            if !long.contains('=') && GLOBAL.iter().any(|f| f.long == long && takes_value(f)) {
                i += 1;
            }
        } else if w.chars().count() == 2 {
            let c = w.chars().nth(1);
            if GLOBAL.iter().any(|f| f.short == c && takes_value(f)) {
                i += 1;
            }
        }
        i += 1;
    }
    None
}

const USAGE: &str =
    "kubectl controls the Kubernetes cluster manager (here: the simulated cluster in this page).

 Find more information at: https://kubernetes.io/docs/reference/kubectl/

Commands the playground supports:
  get, describe, events            show objects (get -o wide|yaml|json|name|jsonpath=…|custom-columns=…)
  apply -f, create deployment,     create and change objects
  create service, run, expose,
  delete, scale, set image, patch,
  label, annotate, taint
  rollout status|history|undo|     manage a Deployment's rollout
  restart|pause|resume
  cordon, uncordon, drain          maintain nodes (drain runs over simulated time)
  wait                             check a condition now (it does not block)
  explain                          a kind's or field's documentation (explain pods.spec.containers)
  version, cluster-info, api-resources, api-versions

Usage:
  kubectl [flags] [options]
";
