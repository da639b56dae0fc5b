//! `wait`, `events`, `version`, `cluster-info`, `api-resources` and the polite refusals for
//! commands the playground does not simulate.
//!
//! `wait` answers at once whether the condition holds now (it never blocks the console): met
//! prints `deployment.apps/web condition met`, not met prints kubectl's timeout error. Scenario
//! checks use the same `kubectl wait` expressions, parsed by `scenario::parse_wait` and decided
//! by `sim::evaluate_wait`, which this command reuses.

use std::rc::Rc;

use serde_json::Value as Json;

use super::args::{flag, Args, Flag, FlagKind};
use super::resources::{self, Filter, Request};
use super::tabwriter;
use super::util::{error, event_interval, object_name, out, unsupported};
use super::CommandOutput;
use crate::sim::api::openapi;
use crate::sim::api::types::{Event, Kind, LabelSelector, Object, ObjectKey};
use crate::sim::input::jsonpath;
use crate::sim::scenario::{parse_wait, Wait, WaitFor};
use crate::sim::world::Sim;
use crate::sort::{CollectTree, StableSort};

/// The Kubernetes version the playground's components report (kubelets say the same).
pub const KUBERNETES_VERSION: &str = "v1.34.1";

/// Flags of `kubectl wait`.
pub const WAIT_FLAGS: &[Flag] = &[
    flag("for", None, FlagKind::Str),
    flag("timeout", None, FlagKind::Duration),
    flag("selector", Some('l'), FlagKind::Str),
    flag("all", None, FlagKind::Bool),
    flag("all-namespaces", Some('A'), FlagKind::Bool),
    flag("field-selector", None, FlagKind::Str),
    flag("output", Some('o'), FlagKind::Str),
    flag("local", None, FlagKind::Bool),
    flag("filename", Some('f'), FlagKind::Str),
];

/// Quotes a word so that `split_words` gives it back unchanged (a filter's `"Ready"` included).
fn quote(w: &str) -> String {
    if w.is_empty()
        || w.chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '"')
    {
        format!("'{}'", w.replace('\'', r#"'"'"'"#))
    } else {
        w.to_string()
    }
}

/// `kubectl wait RESOURCE --for=…`, answered for the state now.
pub fn wait(sim: &mut Sim, args: &Args, words: &[String]) -> CommandOutput {
    if args.has("filename") {
        return error("wait -f is not supported in the playground; name the objects instead");
    }
    let Some(for_) = args.get("for") else {
        return error("--for must be specified");
    };
    if for_.is_empty() {
        return error("--for must be specified");
    }
    let line: Vec<String> = words.iter().map(|w| quote(w)).collect();
    let parsed = match parse_wait(&line.join(" ")) {
        Ok(w) => w,
        Err(e) => return error(e),
    };
    let request = match resources::parse_request(sim.api(), &args.positional, false) {
        Ok(Some(r)) => r,
        Ok(None) => return error("resource(s) were provided, but no name was specified"),
        Err(e) => return error(e),
    };
    let ns = args.namespace();
    let deleting = parsed.for_ == WaitFor::Delete;
    let mut keys: Vec<ObjectKey> = Vec::new();
    let mut stderr = String::new();
    match &request {
        Request::Names(names) => {
            for (kind, name) in names {
                let key = ObjectKey::new(*kind, &ns, name);
                let exists = sim.api().get(&key).is_some();
                if exists || parsed.for_ == WaitFor::Create {
                    keys.push(key);
                } else if !deleting {
                    stderr.push_str(&format!(
                        "Error from server (NotFound): {} \"{name}\" not found\n",
                        kind.resource()
                    ));
                }
            }
        }
        Request::Types(kinds) => {
            let filter = match Filter::from_args(args) {
                Ok(f) => f,
                Err(e) => return error(e),
            };
            if filter.is_empty() && !args.bool("all") {
                return error("resource(s) were provided, but no name was specified");
            }
            for kind in kinds {
                keys.extend(
                    resources::list(sim, *kind, &ns, args.bool("all-namespaces"), &filter)
                        .iter()
                        .map(|o| o.key()),
                );
            }
            if keys.is_empty() && !deleting {
                return error("no matching resources found");
            }
        }
    }
    let mut stdout = String::new();
    for key in keys {
        let mut one = parsed.clone();
        one.resource = format!("{}/{}", key.kind.resource(), key.name);
        one.namespace = key.namespace.to_string();
        one.selector = None;
        let met = evaluate_wait(sim, &one).is_ok();
        if met {
            if !deleting {
                stdout.push_str(&format!(
                    "{} condition met\n",
                    object_name(key.kind, &key.name)
                ));
            }
        } else {
            let resource = key.kind.resource();
            let plural = resource.split('.').next().unwrap_or("");
            stderr.push_str(&format!(
                "error: timed out waiting for the condition on {plural}/{}\n",
                key.name
            ));
        }
    }
    CommandOutput {
        ok: stderr.is_empty(),
        stdout,
        stderr,
    }
}

/// Flags of `kubectl events`.
pub const EVENTS_FLAGS: &[Flag] = &[
    flag("for", None, FlagKind::Str),
    flag("all-namespaces", Some('A'), FlagKind::Bool),
    flag("types", None, FlagKind::Str),
    flag("watch", Some('w'), FlagKind::Bool),
    flag("output", Some('o'), FlagKind::Str),
    flag("no-headers", None, FlagKind::Bool),
    flag("chunk-size", None, FlagKind::Int),
];

/// `kubectl events`: Events sorted by time, `OBJECT` written `Kind/name`.
pub fn events(sim: &mut Sim, args: &Args) -> CommandOutput {
    if args.bool("watch") {
        return error("--watch is not supported in the playground: the events view updates live");
    }
    if args.has("output") {
        return unsupported("kubectl events -o", "use kubectl get events -o yaml");
    }
    let all_ns = args.bool("all-namespaces");
    let ns = args.namespace();
    let target = match args.get("for") {
        Some(f) => match f.split_once('/') {
            Some((k, n)) => match resources::kind_of(sim.api(), k) {
                Ok(k) => Some((k, n.to_string())),
                Err(e) => return error(e),
            },
            None => return error(format!("--for must be in resource/name form, got {f:?}")),
        },
        None => None,
    };
    let types: Vec<String> = args
        .get("types")
        .map(|t| t.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    for t in &types {
        if !t.eq_ignore_ascii_case("Normal") && !t.eq_ignore_ascii_case("Warning") {
            return error(format!("valid --types are Normal or Warning, got {t:?}"));
        }
    }
    let now = sim.now();
    let mut evs: Vec<Event> = sim
        .api()
        .list(Kind::Event)
        .filter_map(|o| o.as_event())
        .filter(|e| all_ns || e.metadata.namespace == ns)
        .filter(|e| {
            target.as_ref().is_none_or(|(k, n)| {
                e.involved_object.kind == k.as_str() && e.involved_object.name == *n
            })
        })
        .filter(|e| types.is_empty() || types.iter().any(|t| t.eq_ignore_ascii_case(&e.type_)))
        .cloned()
        .collect();
    if evs.is_empty() {
        return CommandOutput {
            stdout: String::new(),
            stderr: if all_ns {
                "No events found.\n".into()
            } else {
                format!("No events found in {ns} namespace.\n")
            },
            ok: true,
        };
    }
    evs.stable_sort_by_key(|e| e.last_timestamp.or(e.first_timestamp));
    let mut header: Vec<String> = Vec::new();
    if all_ns {
        header.push("NAMESPACE".into());
    }
    header.extend(
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
            .iter()
            .map(|s| s.to_string()),
    );
    let rows: Vec<Vec<String>> = evs
        .iter()
        .map(|e| {
            let interval = event_interval(now, e);
            let mut r = Vec::new();
            if all_ns {
                r.push(e.metadata.namespace.to_string());
            }
            r.extend([
                interval,
                e.type_.to_string(),
                e.reason.to_string(),
                format!("{}/{}", e.involved_object.kind, e.involved_object.name),
                e.message.trim().to_string(),
            ]);
            r
        })
        .collect();
    let header = if args.bool("no-headers") {
        Vec::new()
    } else {
        header
    };
    out(tabwriter::get_table(&header, &rows))
}

/// `kubectl version`.
pub fn version(args: &Args) -> CommandOutput {
    if args.has("output") {
        return unsupported("kubectl version -o", "");
    }
    if args.bool("client") {
        return out(format!("Client Version: {KUBERNETES_VERSION}"));
    }
    out(format!(
        "Client Version: {KUBERNETES_VERSION}\nServer Version: {KUBERNETES_VERSION}"
    ))
}

/// `kubectl cluster-info`.
pub fn cluster_info(args: &Args) -> CommandOutput {
    if args.positional.first().map(String::as_str) == Some("dump") {
        return unsupported("cluster-info dump", "use kubectl get all -A -o yaml");
    }
    out("Kubernetes control plane is running at https://127.0.0.1:6443 (simulated in this page)\n\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.")
}

/// The built-in resources the playground serves, simulated or stored, with their kinds.
fn served_builtin() -> impl Iterator<Item = (&'static openapi::Resource, Kind)> {
    openapi::resources().iter().filter_map(|r| {
        let kind = Kind::of_type(&r.api_version(), &r.kind)?;
        kind.custom()
            .is_none_or(|c| c.is_builtin())
            .then_some((r, kind))
    })
}

/// `kubectl api-versions`: every group/version served, custom groups included, sorted.
pub fn api_versions(sim: &Sim) -> String {
    let mut versions: std::collections::BTreeSet<String> =
        served_builtin().map(|(r, _)| r.api_version()).collect_set();
    for crd in sim.api().served_crds() {
        for v in crd.spec.versions.iter().filter(|v| v.served) {
            versions.insert(format!("{}/{}", crd.spec.group, v.name));
        }
    }
    versions
        .into_iter()
        .map(|v| v + "\n")
        .collect::<String>()
        .trim_end()
        .to_string()
}

/// Flags of `kubectl api-resources`.
pub const API_RESOURCES_FLAGS: &[Flag] = &[
    flag("namespaced", None, FlagKind::Bool),
    flag("api-group", None, FlagKind::Str),
    flag("output", Some('o'), FlagKind::Str),
    flag("no-headers", None, FlagKind::Bool),
    flag("verbs", None, FlagKind::Str),
    flag("sort-by", None, FlagKind::Str),
    flag("cached", None, FlagKind::Bool),
];

/// `kubectl api-resources`: the kinds the playground serves, custom kinds included.
pub fn api_resources(sim: &Sim, args: &Args) -> CommandOutput {
    // Every built-in resource the playground serves, simulated or stored, as the upstream
    // definitions name them; then the CRDs' kinds.
    let mut table: Vec<(String, String, Kind)> = served_builtin()
        .map(|(r, kind)| (r.plural.clone(), r.short_names.join(","), kind))
        .collect();
    for crd in sim.api().served_crds() {
        if let Some(kind) = crate::sim::api::apiextensions::CustomKind::of(&crd) {
            table.push((
                crd.spec.names.plural.clone(),
                crd.spec.names.short_names.join(","),
                Kind::Custom(kind),
            ));
        }
    }
    let rows: Vec<&(String, String, Kind)> = table
        .iter()
        .filter(|(_, _, k)| !args.has("namespaced") || args.bool("namespaced") == k.namespaced())
        .filter(|(_, _, k)| {
            args.get("api-group")
                .is_none_or(|g| k.api_version().split_once('/').map_or("", |(g, _)| g) == g)
        })
        .collect();
    match args.get("output") {
        Some("name") => out(rows
            .iter()
            .map(|(n, _, k)| match k.api_version().split_once('/') {
                Some((g, _)) => format!("{n}.{g}\n"),
                None => format!("{n}\n"),
            })
            .collect::<String>()),
        Some("wide") | None => {
            let header: Vec<String> = if args.bool("no-headers") {
                Vec::new()
            } else {
                ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            };
            let body: Vec<Vec<String>> = rows
                .iter()
                .map(|(n, s, k)| {
                    vec![
                        n.to_string(),
                        s.to_string(),
                        k.api_version().to_string(),
                        k.namespaced().to_string(),
                        k.as_str().to_string(),
                    ]
                })
                .collect();
            out(tabwriter::get_table(&header, &body))
        }
        Some(o) => error(format!("--output {o:?} is not available")),
    }
}

/// Flags of `kubectl edit`, read only to name the object in the answer.
pub const EDIT_FLAGS: &[Flag] = &[
    flag("output", Some('o'), FlagKind::Str),
    flag("filename", Some('f'), FlagKind::Str),
    flag("recursive", Some('R'), FlagKind::Bool),
    flag("save-config", None, FlagKind::Bool),
    flag("validate", None, FlagKind::OptionalValue("strict")),
    flag("windows-line-endings", None, FlagKind::Bool),
    flag("output-patch", None, FlagKind::Bool),
    flag("subresource", None, FlagKind::Str),
    flag("field-manager", None, FlagKind::Str),
    flag("show-managed-fields", None, FlagKind::Bool),
];

/// `kubectl edit`: the console cannot open a text editor, so the answer names the commands that
/// make the same change to the object asked for (`set image pod/…`, `scale`, `patch`), with its
/// real container names, as well as the playground's own editor.
pub fn edit(sim: &Sim, args: &Args) -> CommandOutput {
    let target = match resources::parse_request(sim.api(), &args.positional, false) {
        Ok(Some(Request::Names(names))) => names.into_iter().next(),
        Ok(Some(Request::Types(kinds))) => kinds.first().map(|k| (*k, "NAME".to_string())),
        _ => None,
    };
    let Some((kind, name)) = target else {
        return unsupported(
            "kubectl edit",
            "the console cannot open a text editor: edit the manifest in the editor and Apply it, or change one field with kubectl set image, scale, label or patch",
        );
    };
    let ns = args.namespace();
    let obj = sim.api().get(&ObjectKey::new(kind, &ns, &name));
    let containers: Vec<String> = match obj.map(|o| &**o) {
        Some(Object::Pod(p)) => p
            .spec
            .containers
            .iter()
            .map(|c| c.name.to_string())
            .collect(),
        Some(Object::Deployment(d)) => containers_of(&d.spec.template),
        Some(Object::ReplicaSet(r)) => containers_of(&r.spec.template),
        _ => Vec::new(),
    };
    let resource = kind.resource().split('.').next().unwrap_or("").to_string();
    let singular = kind.as_str().to_ascii_lowercase();
    let ns_flag = if ns == "default" || !kind.namespaced() {
        String::new()
    } else {
        format!(" -n {ns}")
    };
    let mut ways: Vec<String> = Vec::new();
    if matches!(kind, Kind::Pod | Kind::Deployment | Kind::ReplicaSet) {
        let container = containers.first().map_or("CONTAINER", String::as_str);
        ways.push(format!(
            "kubectl set image {singular}/{name} {container}=IMAGE{ns_flag}"
        ));
    }
    if matches!(kind, Kind::Deployment | Kind::ReplicaSet) {
        ways.push(format!(
            "kubectl scale {singular}/{name} --replicas=N{ns_flag}"
        ));
    }
    ways.push(format!(
        "kubectl patch {resource} {name}{ns_flag} -p '{{\"metadata\":{{\"labels\":{{\"key\":\"value\"}}}}}}'"
    ));
    error(format!(
        "error: kubectl edit is not supported in the playground: the console cannot open a text editor. To change {singular}/{name}, run for example\n{}\nor edit its manifest in the editor and Apply it.",
        ways.iter().map(|w| format!("  {w}")).collect::<Vec<_>>().join("\n")
    ))
}

fn containers_of(template: &crate::sim::api::types::PodTemplateSpec) -> Vec<String> {
    template
        .spec
        .containers
        .iter()
        .map(|c| c.name.to_string())
        .collect()
}

/// Commands kubectl has that the playground does not simulate, with what to do instead.
pub fn not_simulated(verb: &str) -> Option<CommandOutput> {
    let why = match verb {
        "logs" | "attach" | "exec" | "cp" | "debug" | "port-forward" | "proxy" => {
            "simulated containers run no processes; the events and pod status tell their story"
        }
        "replace" => "use kubectl apply -f (the editor's Apply button)",
        "top" => "there is no metrics-server in the simulation",
        "autoscale" => "HorizontalPodAutoscalers are not simulated",
        "auth" | "certificate" | "plugin" | "completion" | "kustomize" | "diff" | "alpha"
        | "options" => "",
        _ => return None,
    };
    Some(unsupported(&format!("kubectl {verb}"), why))
}

/// Whether a `kubectl wait` condition holds now; the error says what it is still waiting for.
pub fn evaluate_wait(sim: &Sim, wait: &Wait) -> Result<(), String> {
    let (kind_s, name) = match wait.resource.split_once('/') {
        Some((k, n)) => (k, Some(n)),
        None => (wait.resource.as_str(), None),
    };
    let kind = super::resources::kind_of(sim.api(), kind_s)?;
    let namespace = if kind.namespaced() {
        wait.namespace.as_str()
    } else {
        ""
    };
    let objects: Vec<&Rc<Object>> = match name {
        Some(n) => sim
            .api()
            .get(&ObjectKey::new(kind, namespace, n))
            .into_iter()
            .collect(),
        None => {
            let sel = wait
                .selector
                .as_deref()
                .map(LabelSelector::parse)
                .transpose()?;
            sim.api()
                .list(kind)
                .filter(|o| !kind.namespaced() || o.meta().namespace == wait.namespace)
                .filter(|o| sel.as_ref().is_none_or(|s| s.matches(&o.meta().labels)))
                .collect()
        }
    };
    match &wait.for_ {
        WaitFor::Delete => {
            if objects.is_empty() {
                Ok(())
            } else {
                Err(format!("{} still exists", wait.resource))
            }
        }
        WaitFor::Create => {
            if objects.is_empty() {
                Err(format!("{} does not exist yet", wait.resource))
            } else {
                Ok(())
            }
        }
        WaitFor::Condition { type_, status } => {
            if objects.is_empty() {
                return Err(format!("{} not found", wait.resource));
            }
            for o in objects {
                let doc = o.to_json();
                let conds = doc
                    .pointer("/status/conditions")
                    .and_then(|c| c.as_array())
                    .cloned()
                    .unwrap_or_default();
                let found = conds.iter().find(|c| {
                    c.get("type")
                        .and_then(|t| t.as_str())
                        .is_some_and(|t| t.eq_ignore_ascii_case(type_))
                });
                let actual = found
                    .and_then(|c| c.get("status"))
                    .and_then(|s| s.as_str())
                    .unwrap_or("");
                if !actual.eq_ignore_ascii_case(status) {
                    let reason = found
                        .and_then(|c| c.get("reason"))
                        .and_then(|r| r.as_str())
                        .unwrap_or("");
                    return Err(format!(
                        "{}/{}: condition {type_} is {}{}",
                        o.kind().as_str().to_ascii_lowercase(),
                        o.meta().name,
                        if actual.is_empty() { "absent" } else { actual },
                        if reason.is_empty() {
                            String::new()
                        } else {
                            format!(" ({reason})")
                        }
                    ));
                }
            }
            Ok(())
        }
        WaitFor::JsonPath { path, value } => {
            if objects.is_empty() {
                return Err(format!("{} not found", wait.resource));
            }
            // kubectl wait: missing keys mean "not yet"; one value is compared as Go prints it.
            let template = jsonpath::Template::parse(&format!("{{{path}}}"))?;
            for o in objects {
                let doc = o.to_json();
                let found = template.values(&doc, jsonpath::Options::default())?;
                let got = match found.as_slice() {
                    [] => None,
                    [v] => Some(v),
                    _ => return Err("given jsonpath expression matches more than one value".into()),
                };
                let ok = match (got, value) {
                    (Some(Json::Object(_) | Json::Array(_)), Some(_)) => {
                        return Err(
                            "jsonpath leads to a nested object or list which is not supported"
                                .into(),
                        )
                    }
                    (Some(v), Some(want)) => jsonpath::go_value(v).trim() == want.trim(),
                    (Some(_), None) => true,
                    (None, _) => false,
                };
                if !ok {
                    return Err(format!(
                        "{}/{}: {{{path}}} is {}",
                        o.kind().as_str().to_ascii_lowercase(),
                        o.meta().name,
                        got.map_or("absent".to_string(), jsonpath::go_value)
                    ));
                }
            }
            Ok(())
        }
    }
}
