//! `kubectl config`: the kubeconfig's one context, whose namespace `set-context --namespace`
//! sets and every command without `-n` then uses.

use super::args::{flag, Args, Flag, FlagKind};
use super::tabwriter::get_table;
use super::util::{error, out, unsupported};
use super::CommandOutput;

/// The context, cluster and user the playground's kubeconfig names.
pub const CONTEXT: &str = "kubeloop";

/// What kubectl reads from its kubeconfig: the current context's namespace (`default` unset).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KubeConfig {
    pub namespace: Option<String>,
}

/// Flags of `kubectl config`.
pub const CONFIG_FLAGS: &[Flag] = &[
    flag("current", None, FlagKind::Bool),
    flag("cluster", None, FlagKind::Str),
    flag("user", None, FlagKind::Str),
    flag("minify", None, FlagKind::Bool),
    flag("output", Some('o'), FlagKind::Str),
    flag("no-headers", None, FlagKind::Bool),
];

/// `kubectl config set-context|current-context|get-contexts`.
pub fn config(config: &mut KubeConfig, args: &Args) -> CommandOutput {
    let sub = args.positional.first().map(String::as_str).unwrap_or("");
    match sub {
        "set-context" => set_context(config, args),
        "current-context" => out(format!("{CONTEXT}\n")),
        "get-contexts" => {
            let header: Vec<String> = if args.bool("no-headers") {
                Vec::new()
            } else {
                ["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"]
                    .map(String::from)
                    .to_vec()
            };
            let row = vec![
                "*".into(),
                CONTEXT.into(),
                CONTEXT.into(),
                CONTEXT.into(),
                config.namespace.clone().unwrap_or_default(),
            ];
            out(get_table(&header, &[row]))
        }
        "" => error("you must specify a subcommand: set-context, current-context or get-contexts"),
        other => unsupported(
            &format!("kubectl config {other}"),
            "the playground's kubeconfig has one context: kubectl config set-context --current --namespace=NAME changes its namespace",
        ),
    }
}

/// `kubectl config set-context (--current | kubeloop) --namespace=NAME`: kubectl does not ask
/// the API server whether the namespace exists.
fn set_context(config: &mut KubeConfig, args: &Args) -> CommandOutput {
    let named = args.positional.get(1).map(String::as_str);
    match (args.bool("current"), named) {
        (true, Some(_)) => return error("you cannot specify both a context name and --current"),
        (false, None) => return error("you must specify a non-empty context name or --current"),
        (false, Some(n)) if n != CONTEXT => {
            return unsupported(
                &format!("a second context ({n})"),
                "the playground's kubeconfig has one context, kubeloop: use --current",
            )
        }
        _ => {}
    }
    if let Some(ns) = args.get("namespace") {
        config.namespace = (!ns.is_empty()).then(|| ns.to_string());
    }
    out(format!("Context \"{CONTEXT}\" modified.\n"))
}
