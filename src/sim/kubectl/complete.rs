//! Tab completion for the console: commands, resource types and the names of the objects the
//! simulated API server holds, the way kubectl's shell completion offers them.
//!
//! Only the last word of the line is completed (the console's cursor is at its end). A word
//! every candidate agrees on is filled in with a space after it; where several remain, the word
//! grows to what they share and the candidates are returned for the console to list.

use crate::sim::api::types::Kind;
use crate::sim::world::Sim;
use crate::sort::StableSort;

/// What Tab makes of a command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    /// The line with its last word completed as far as every candidate agrees.
    pub line: String,
    /// Every word the last one could become, when there is more than one, in order.
    pub candidates: Vec<String>,
}

/// The commands the playground runs, as kubectl names them.
pub const VERBS: &[&str] = &[
    "annotate",
    "api-resources",
    "api-versions",
    "apply",
    "cluster-info",
    "cordon",
    "create",
    "delete",
    "describe",
    "drain",
    "events",
    "explain",
    "expose",
    "get",
    "label",
    "patch",
    "rollout",
    "run",
    "scale",
    "set",
    "taint",
    "uncordon",
    "version",
    "wait",
];

/// `kubectl rollout` subcommands.
const ROLLOUT: &[&str] = &["history", "pause", "restart", "resume", "status", "undo"];

/// `kubectl create` subcommands the playground runs.
const CREATE: &[&str] = &[
    "configmap",
    "deployment",
    "namespace",
    "secret",
    "service",
    "serviceaccount",
];

/// `kubectl create service` types.
const SERVICE_TYPES: &[&str] = &["clusterip", "externalname", "loadbalancer", "nodeport"];

/// Flags whose value is the next word (`-n kube-system`), so that word is not an argument.
const TAKES_VALUE: &[&str] = &[
    "-n",
    "--namespace",
    "-o",
    "--output",
    "-l",
    "--selector",
    "-f",
    "--filename",
    "--field-selector",
    "--sort-by",
    "-p",
    "--patch",
    "--type",
    "--for",
    "--timeout",
    "--to-revision",
    "--image",
    "--replicas",
    "--port",
];

/// What the word being typed names.
enum Slot {
    Verbs,
    Words(&'static [&'static str]),
    /// A resource type, or `type/name`.
    Types,
    Names(Kind),
    Nothing,
}

/// Completes the last word of `line` against the cluster `sim` holds now.
pub fn complete(sim: &Sim, line: &str) -> Completion {
    let unchanged = || Completion {
        line: line.to_string(),
        candidates: Vec::new(),
    };
    let head_len = line.rfind(char::is_whitespace).map_or(0, |i| {
        i + line[i..].chars().next().map_or(1, char::len_utf8)
    });
    let (head, word) = line.split_at(head_len);
    let mut before: Vec<&str> = head.split_whitespace().collect();
    if before.first() == Some(&"kubectl") {
        before.remove(0);
    }
    if word.starts_with('-') {
        return unchanged();
    }
    let mut args = Vec::new();
    let mut namespace = "default";
    let mut i = 0;
    while i < before.len() {
        let w = before[i];
        if TAKES_VALUE.contains(&w) {
            if matches!(w, "-n" | "--namespace") {
                namespace = before.get(i + 1).copied().unwrap_or(namespace);
            }
            i += 2;
            continue;
        }
        if let Some(ns) = w.strip_prefix("--namespace=") {
            namespace = ns;
        } else if !w.starts_with('-') {
            args.push(w);
        }
        i += 1;
    }
    if let Some((type_word, name)) = word.split_once('/') {
        let Some(kind) = Kind::from_resource_name(type_word) else {
            return unchanged();
        };
        let names = names(sim, kind, namespace, name);
        let typed: Vec<String> = names.iter().map(|n| format!("{type_word}/{n}")).collect();
        return finish(head, word, typed);
    }
    let slot = match (args.first().copied(), args.len()) {
        (None, _) => Slot::Verbs,
        (
            Some(
                "get" | "describe" | "delete" | "label" | "annotate" | "patch" | "scale" | "expose"
                | "wait" | "taint",
            ),
            1,
        ) => Slot::Types,
        (
            Some(
                "get" | "describe" | "delete" | "label" | "annotate" | "patch" | "scale" | "expose"
                | "wait" | "taint",
            ),
            _,
        ) => kind_named(args[1]),
        (Some("explain"), 1) => Slot::Types,
        (Some("cordon" | "uncordon" | "drain"), _) => Slot::Names(Kind::Node),
        (Some("rollout"), 1) => Slot::Words(ROLLOUT),
        (Some("rollout"), 2) => Slot::Types,
        (Some("rollout"), _) => kind_named(args[2]),
        (Some("set"), 1) => Slot::Words(&["image"]),
        (Some("set"), 2) => Slot::Types,
        (Some("set"), 3) => kind_named(args[2]),
        (Some("create"), 1) => Slot::Words(CREATE),
        (Some("create"), 2) if matches!(args[1], "service" | "svc") => Slot::Words(SERVICE_TYPES),
        _ => Slot::Nothing,
    };
    let candidates: Vec<String> = match slot {
        Slot::Verbs => starting_with(VERBS, word),
        Slot::Words(words) => starting_with(words, word),
        Slot::Types => {
            let plurals: Vec<String> = Kind::ALL.iter().map(|k| k.plural().to_string()).collect();
            let mut types: Vec<&str> = plurals.iter().map(String::as_str).collect();
            if args.first() == Some(&"get") {
                types.push("all");
            }
            types.stable_sort();
            starting_with(&types, word)
        }
        Slot::Names(kind) => names(sim, kind, namespace, word),
        Slot::Nothing => Vec::new(),
    };
    finish(head, word, candidates)
}

/// The slot after a resource type word: that kind's names (a `type/name` word names its own).
fn kind_named(type_word: &str) -> Slot {
    match Kind::from_resource_name(type_word) {
        Some(kind) if !type_word.contains('/') => Slot::Names(kind),
        _ => Slot::Nothing,
    }
}

fn starting_with(words: &[&str], prefix: &str) -> Vec<String> {
    words
        .iter()
        .filter(|w| w.starts_with(prefix))
        .map(|w| w.to_string())
        .collect()
}

/// The names of `kind` in `namespace` (any namespace for cluster-scoped kinds) that start with
/// `prefix`, in the store's order.
fn names(sim: &Sim, kind: Kind, namespace: &str, prefix: &str) -> Vec<String> {
    sim.api()
        .list(kind)
        .map(|o| o.meta())
        .filter(|m| (!kind.namespaced() || m.namespace == namespace) && m.name.starts_with(prefix))
        .map(|m| m.name.to_string())
        .collect()
}

/// The line with `word` replaced by what all `candidates` share: the one candidate and a space,
/// or their common prefix with the candidates listed.
fn finish(head: &str, word: &str, candidates: Vec<String>) -> Completion {
    match candidates.as_slice() {
        [] => Completion {
            line: format!("{head}{word}"),
            candidates,
        },
        [only] => Completion {
            line: format!("{head}{only} "),
            candidates: Vec::new(),
        },
        [first, rest @ ..] => {
            let shared = rest
                .iter()
                .fold(first.as_str(), |acc, c| common_prefix(acc, c));
            let grown = if shared.len() > word.len() {
                shared
            } else {
                word
            };
            Completion {
                line: format!("{head}{grown}"),
                candidates,
            }
        }
    }
}

/// The longest start `a` and `b` share (a char boundary of `a`: every char before it matched).
fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let n = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    &a[..n]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::session::Session;

    fn cluster() -> Session {
        let mut s = Session::new(3);
        let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: nginx:1.27}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: worker}}\n  template:\n    metadata: {labels: {app: worker}}\n    spec: {containers: [{name: w, image: busybox}]}\n";
        assert!(s.apply_text("web.yaml", web).ok);
        s.advance_to(20_000, usize::MAX);
        s
    }

    fn tab(s: &Session, line: &str) -> Completion {
        complete(&s.sim, line)
    }

    #[test]
    fn a_unique_word_is_filled_in_with_a_space_after_it() {
        let s = cluster();
        assert_eq!(tab(&s, "desc").line, "describe ");
        assert_eq!(
            tab(&s, "kubectl get deploy").line,
            "kubectl get deployments "
        );
        assert_eq!(
            tab(&s, "get deployments wo").line,
            "get deployments worker "
        );
        assert_eq!(tab(&s, "scale deploy/we").line, "scale deploy/web ");
        assert_eq!(tab(&s, "rollout st").line, "rollout status ");
        assert_eq!(
            tab(&s, "rollout status deployment w").candidates,
            ["web", "worker"]
        );
        assert_eq!(
            tab(&s, "create service node").line,
            "create service nodeport "
        );
        assert_eq!(tab(&s, "cordon node-2").line, "cordon node-2 ");
        assert_eq!(tab(&s, "expl").line, "explain ");
        assert_eq!(tab(&s, "explain deploy").line, "explain deployments ");
    }

    #[test]
    fn several_candidates_grow_the_word_to_what_they_share_and_are_listed() {
        let s = cluster();
        let pods = tab(&s, "describe pod ");
        assert_eq!(pods.candidates.len(), 3, "{pods:?}");
        assert_eq!(
            pods.line, "describe pod w",
            "web-… and worker-… share their first letter"
        );
        let web = tab(&s, "delete pod web");
        assert_eq!(web.candidates.len(), 2);
        assert!(
            web.line.starts_with("delete pod web-") && web.line.len() > "delete pod web-".len() + 5,
            "{web:?}"
        );
        assert!(web
            .candidates
            .iter()
            .all(|c| c.starts_with(&web.line["delete pod ".len()..])));
        let nodes = tab(&s, "drain ");
        assert_eq!(nodes.candidates, ["node-1", "node-2", "node-3"]);
        assert_eq!(
            tab(&s, "get po").candidates,
            ["poddisruptionbudgets", "pods"]
        );
        assert_eq!(tab(&s, "get po").line, "get pod");
    }

    #[test]
    fn names_come_from_the_namespace_the_line_names_and_flags_are_left_alone() {
        let s = cluster();
        assert_eq!(
            tab(&s, "get pods -n kube-system ").candidates,
            Vec::<String>::new()
        );
        assert_eq!(
            tab(&s, "get pods -n kube-system ").line,
            "get pods -n kube-system "
        );
        assert_eq!(
            tab(&s, "get -o wide deployments w").candidates,
            ["web", "worker"]
        );
        assert_eq!(tab(&s, "get pods --sho").line, "get pods --sho");
        assert_eq!(tab(&s, "logs web").line, "logs web");
        assert_eq!(tab(&s, "get frobs/x").line, "get frobs/x");
    }

    #[test]
    fn every_verb_offered_is_one_the_console_runs() {
        let mut s = cluster();
        for verb in VERBS {
            let out = s.kubectl(verb);
            assert!(
                !out.stderr.contains("unknown command"),
                "{verb}: {}",
                out.stderr
            );
        }
    }
}
