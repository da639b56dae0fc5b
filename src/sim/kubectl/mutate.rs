//! Commands that change objects: `apply -f`, `create deployment`, `run`, `expose`, `delete`,
//! `scale`, `set image`, `patch`, `label`, `annotate` and `taint`, with kubectl's output lines
//! and errors. Each one sends its request as the user (`Sim::submit`), synchronously.
//!
//! Deliberate differences: `delete` does not wait for the objects to disappear (kubectl's
//! `--wait=true` default blocks until finalizers and graceful termination finish). Strategic and
//! JSON patches are worked out against the stored object and sent as the merge patch with the
//! same effect (the store takes merge patches).

use serde_json::{json, Value as Json};

use super::args::{flag, Args, Flag, FlagKind};
use super::errors::{check_err, finish, CmdError, InvalidDetails};
use super::printers::list_json;
use super::resources::{self, Request};
use super::util::{
    aggregate, error, fail, merge_patch, object_name, or_return, out, terminate, unsupported,
};
use super::{apply, CommandOutput};
use crate::sim::api::types::LAST_APPLIED;
use crate::sim::api::types::{
    Container, ContainerPort, CustomObject, Deployment, IntOrString, Kind, LabelSelector,
    Namespace, Object, ObjectKey, ObjectMeta, Pod, PodSpec, PodTemplateSpec, Service, ServicePort,
    Str, StringMap, Taint,
};
use crate::sim::api::{openapi, patch, ApiError, ApiRequest, DeleteOptions, PropagationPolicy};
use crate::sim::input::decode;
use crate::sim::input::diagnostic::{Diagnostic, Severity};
use crate::sim::input::jsonpath::to_json_text;
use crate::sim::world::Sim;

/// Flags of `kubectl apply`.
pub const APPLY_FLAGS: &[Flag] = &[
    flag("filename", Some('f'), FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
    flag("server-side", None, FlagKind::Bool),
    flag("force-conflicts", None, FlagKind::Bool),
    flag("prune", None, FlagKind::Bool),
    flag("recursive", Some('R'), FlagKind::Bool),
    flag("validate", None, FlagKind::OptionalValue("strict")),
    flag("field-manager", None, FlagKind::Str),
    flag("overwrite", None, FlagKind::Bool),
    flag("selector", Some('l'), FlagKind::Str),
    flag("kustomize", Some('k'), FlagKind::Str),
];

/// `kubectl apply -f FILE|-`. The playground has no file system: `-f -` reads `input`, and any
/// other path names the text in `input` too (the UI passes the editor's buffer); without input a
/// path does not exist.
pub fn apply(sim: &mut Sim, args: &Args, input: Option<&str>) -> CommandOutput {
    if args.has("kustomize") {
        return unsupported(
            "apply -k",
            "there is no file system to build a kustomization from",
        );
    }
    if args.bool("server-side") {
        return unsupported(
            "server-side apply",
            "the playground simulates client-side apply and its last-applied-configuration 3-way merge",
        );
    }
    if let Some(d) = args.get("dry-run").filter(|d| *d != "none") {
        return unsupported(&format!("--dry-run={d}"), "");
    }
    let files = args.all("filename");
    if files.is_empty() {
        return error("must specify one of -f and -k");
    }
    let validation =
        match decode::FieldValidation::from_flag(args.get("validate").unwrap_or("strict")) {
            Ok(v) => v,
            Err(e) => return error(e),
        };
    let mut stdout = String::new();
    let mut warnings = String::new();
    let mut errs: Vec<CmdError> = Vec::new();
    let mut ok = true;
    for f in files {
        let text = match input {
            Some(t) => t,
            None if f == "-" => "",
            None => {
                return error(format!("the path \"{f}\" does not exist"));
            }
        };
        if text.trim().is_empty() {
            return error("no objects passed to apply");
        }
        let file = if f == "-" { "STDIN" } else { f.as_str() };
        let report = apply::apply_text_validated(sim, file, text, validation);
        for l in &report.lines {
            stdout.push_str(&format!("{l}\n"));
        }
        for d in &report.diagnostics {
            match d.severity {
                Severity::Error => gather_apply_error(sim, args, &mut errs, file, text, d),
                Severity::Warning => warnings.push_str(&format!("Warning: {}\n", d.message)),
                Severity::Info => {}
            }
        }
        ok &= report.ok;
    }
    CommandOutput {
        ok: ok && errs.is_empty(),
        stdout,
        stderr: warnings + &check_err(&errs),
    }
}

/// Adds an error diagnostic of an apply as kubectl reports it. The decoder reports a refused
/// object once per field (each positioned for the editor); the API server refuses it with one
/// 422 carrying every cause, so consecutive findings about one object become one error, which
/// prints as `The Deployment "web" is invalid: …` when it is the command's only error. Other
/// findings keep their line.
fn gather_apply_error(
    sim: &Sim,
    args: &Args,
    errs: &mut Vec<CmdError>,
    file: &str,
    text: &str,
    d: &Diagnostic,
) {
    // `AddSourceToErr`: kubectl creates an object that does not exist and patches one that does,
    // and for a patch it says which patch, sent to what.
    let context = || {
        patch_context(sim, args, file, text, d.line)
            .unwrap_or_else(|| format!("error when creating \"{file}\""))
    };
    // A decoding refusal (`Deployment in version "v1" cannot be handled as a Deployment: …`) is
    // the API server's 400; its unknown fields come in one message, comma-separated.
    if d.message.contains(" cannot be handled as a ") {
        if let Some((head, field)) = d.message.split_once(": strict decoding error: ") {
            if let Some(CmdError::Status { error, .. }) = errs.last_mut() {
                let same = error.message.starts_with(head)
                    && error.message[head.len()..].starts_with(": strict decoding error: ");
                if same {
                    error.message.push_str(&format!(", {field}"));
                    return;
                }
            }
        }
        errs.push(CmdError::Status {
            error: ApiError {
                reason: crate::sim::api::StatusReason::BadRequest,
                message: d.message.clone(),
            },
            context: Some(context()),
        });
        return;
    }
    let Some(found) = InvalidDetails::parse(&d.message) else {
        errs.push(CmdError::Line(
            diagnostic_line(file, d).trim_end().to_string(),
        ));
        return;
    };
    if let Some(CmdError::Status { error, .. }) = errs.last_mut() {
        if let Some(mut same) =
            InvalidDetails::parse(&error.message).filter(|p| p.same_object(&found))
        {
            for c in found.causes {
                if !same.causes.contains(&c) {
                    same.causes.push(c);
                }
            }
            *error = same.to_api_error();
            return;
        }
    }
    errs.push(CmdError::Status {
        error: found.to_api_error(),
        context: Some(context()),
    });
}

/// What `AddSourceToErr` says before the server's message when kubectl patched the object the
/// document at `line` names (None when it does not exist, and kubectl created it):
/// `error when applying patch:` with the patch (the changes since the last-applied manifest and
/// the new last-applied annotation, as a JSON merge patch where kubectl sends a strategic one),
/// the resource and the object, then `for: "FILE": error when patching "FILE"`.
fn patch_context(sim: &Sim, args: &Args, file: &str, text: &str, line: u32) -> Option<String> {
    let docs = crate::sim::input::yaml::parse_documents(text).ok()?;
    let doc = docs.iter().rev().find(|d| d.start.line <= line)?;
    let api_version = doc.value.get("apiVersion")?.as_str()?;
    let kind_name = doc.value.get("kind")?.as_str()?;
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = Kind::of_type(api_version, kind_name)
        .or_else(|| crate::sim::api::types::CustomKind::find(group, kind_name).map(Kind::Custom))?;
    let name = doc.value.pointer("/metadata/name")?.as_str()?;
    let namespace = if kind.namespaced() {
        doc.value
            .pointer("/metadata/namespace")
            .and_then(Json::as_str)
            .map_or_else(|| args.namespace(), str::to_string)
    } else {
        String::new()
    };
    let live = sim.api().get(&ObjectKey::new(kind, &namespace, name))?;
    let manifest =
        apply::modified_configuration(kind.namespaced().then_some(namespace.as_str()), &doc.value);
    let previous = apply::last_applied_of(live);
    // What changed since the last apply, and the new last-applied annotation: what kubectl's
    // three-way patch holds when the user edited their manifest (it sends a strategic merge patch).
    let mut patch = patch::merge_diff(&previous, &manifest);
    let last_applied = serde_json::to_string(&manifest).unwrap_or_default();
    if let Some(root) = patch.as_object_mut() {
        let meta = root.entry("metadata").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            let annotations = m.entry("annotations").or_insert_with(|| json!({}));
            if let Some(a) = annotations.as_object_mut() {
                a.insert(LAST_APPLIED.into(), Json::String(last_applied));
            }
        }
    }
    let version = api_version.rsplit('/').next().unwrap_or(api_version);
    let plural = kind.resource();
    let plural = plural.split('.').next().unwrap_or_default();
    Some(format!(
        "error when applying patch:\n{}\nto:\nResource: \"{group}/{version}, Resource={plural}\", GroupVersionKind: \"{group}/{version}, Kind={kind_name}\"\nName: \"{name}\", Namespace: \"{namespace}\"\nfor: \"{file}\": error when patching \"{file}\"",
        serde_json::to_string(&patch).unwrap_or_default()
    ))
}

fn diagnostic_line(file: &str, d: &Diagnostic) -> String {
    let m = &d.message;
    if m.starts_with("Error from server") || m.starts_with("The ") || m.starts_with("error: ") {
        format!("{m}\n")
    } else if m.starts_with("error converting YAML") {
        format!("error: error parsing {file}: {m}\n")
    } else {
        format!("error: {file}:{}:{}: {m}\n", d.line, d.col)
    }
}

// ------------------------------------------------------------------ create / run / expose

/// Flags of `kubectl create deployment` and `kubectl create service`, parsed together before the
/// subcommand is known; each subcommand refuses the other's ([`CREATE_SERVICE_ONLY`]).
pub const CREATE_FLAGS: &[Flag] = &[
    flag("image", None, FlagKind::Str),
    flag("replicas", Some('r'), FlagKind::Int),
    flag("port", None, FlagKind::Int),
    flag("tcp", None, FlagKind::Str),
    flag("clusterip", None, FlagKind::Str),
    flag("node-port", None, FlagKind::Int),
    flag("external-name", None, FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
    flag("save-config", None, FlagKind::Bool),
    flag("filename", Some('f'), FlagKind::Str),
    flag("validate", None, FlagKind::OptionalValue("strict")),
    flag("field-manager", None, FlagKind::Str),
    flag("from-literal", None, FlagKind::Str),
    flag("type", None, FlagKind::Str),
];

/// The container name `kubectl create deployment` derives from an image: the last path segment
/// without tag or digest, `_` turned into `-`.
pub fn container_name_for(image: &str) -> String {
    let base = image.rsplit('/').next().unwrap_or(image);
    let base = base.split(':').next().unwrap_or(base);
    let base = base.split('@').next().unwrap_or(base);
    base.replace('_', "-")
}

/// The Deployment `kubectl create deployment NAME --image=… [--replicas] [--port]` builds.
pub fn build_deployment(
    name: &str,
    ns: &str,
    images: &[String],
    replicas: i32,
    port: Option<i64>,
    command: &[String],
) -> Deployment {
    let labels: StringMap = [("app".to_string(), name.to_string())].into();
    let mut used: Vec<String> = Vec::new();
    let mut containers: Vec<Container> = Vec::new();
    for (i, image) in images.iter().enumerate() {
        let mut cname = container_name_for(image);
        if used.contains(&cname) {
            // `sanitizeAndUniquify` adds a random suffix; a counter keeps the playground deterministic.
            cname = format!("{cname}-{i}");
        }
        used.push(cname.clone());
        containers.push(Container {
            name: cname.into(),
            image: image.as_str().into(),
            command: if command.is_empty() {
                None
            } else {
                Some(Box::new(json!(command)))
            },
            ..Default::default()
        });
    }
    if let (Some(p), Some(c)) = (port.filter(|p| *p >= 0), containers.first_mut()) {
        c.ports = vec![ContainerPort {
            container_port: p,
            ..Default::default()
        }];
    }
    let mut d = Deployment {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: ns.into(),
            labels: labels.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    d.spec.replicas = Some(replicas);
    d.spec.selector = LabelSelector {
        match_labels: labels.clone(),
        ..Default::default()
    };
    d.spec.template = PodTemplateSpec {
        metadata: ObjectMeta {
            labels,
            ..Default::default()
        },
        spec: PodSpec {
            containers,
            ..Default::default()
        },
    };
    d
}

/// The object as `--dry-run=client -o yaml` shows it: no namespace unless `-n` was given, and the
/// empty structs Go's encoder writes (`strategy: {}`, `resources: {}`, `status: {}`).
fn print_generated(obj: &Object, output: &str, explicit_ns: bool) -> CommandOutput {
    let mut doc = obj.to_json();
    if !explicit_ns {
        if let Some(m) = doc.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            m.remove("namespace");
        }
    }
    let spec_key = if obj.kind() == Kind::Pod {
        None
    } else {
        Some("template")
    };
    if let Some(spec) = doc.get_mut("spec").and_then(|s| s.as_object_mut()) {
        if obj.kind() == Kind::Deployment {
            spec.entry("strategy").or_insert(json!({}));
        }
        let pod_spec = match spec_key {
            Some(t) => spec
                .get_mut(t)
                .and_then(|t| t.get_mut("spec"))
                .and_then(|s| s.as_object_mut()),
            None => Some(spec),
        };
        if let Some(containers) = pod_spec
            .and_then(|p| p.get_mut("containers"))
            .and_then(|c| c.as_array_mut())
        {
            for c in containers {
                if let Some(c) = c.as_object_mut() {
                    c.entry("resources").or_insert(json!({}));
                }
            }
        }
    }
    if let Some(m) = doc.as_object_mut() {
        let status = if obj.kind() == Kind::Service {
            json!({"loadBalancer": {}})
        } else {
            json!({})
        };
        m.entry("status").or_insert(status);
    }
    match output {
        "yaml" => out(crate::sim::input::yaml::to_yaml(&doc)),
        "json" => out(to_json_text(&doc)),
        "name" => out(object_name(obj.kind(), &obj.meta().name)),
        o => error(format!(
            "--output={o} is not supported with --dry-run in the playground"
        )),
    }
}

/// The subcommands of `kubectl create` the playground runs.
pub const CREATE_SUBCOMMANDS: &[&str] = &[
    "deployment",
    "deploy",
    "service",
    "svc",
    "namespace",
    "ns",
    "configmap",
    "cm",
    "secret",
    "serviceaccount",
    "sa",
];

/// Flags of [`CREATE_FLAGS`] that only `create configmap` and `create secret generic` take.
const CREATE_DATA_ONLY: &[&str] = &["from-literal", "type"];

/// Flags of [`CREATE_FLAGS`] that only `create service` takes.
const CREATE_SERVICE_ONLY: &[&str] = &["tcp", "clusterip", "node-port", "external-name"];

/// Flags of [`CREATE_FLAGS`] that only `create deployment` takes.
const CREATE_DEPLOYMENT_ONLY: &[&str] = &["image", "replicas", "port"];

/// pflag's refusal of the first of `flags` that `args` carries, for `kubectl {command}`.
fn refuse_flags(args: &Args, flags: &[&str], command: &str) -> Option<CommandOutput> {
    let f = flags.iter().find(|f| args.has(f))?;
    Some(fail(format!(
        "error: unknown flag: --{f}\nSee 'kubectl {command} --help' for usage."
    )))
}

/// `kubectl create` of anything but a Deployment or a Service.
pub fn create_unsupported(sub: &str) -> CommandOutput {
    unsupported(
        &format!("create {sub}"),
        "the playground creates Deployments, Services, Namespaces, ConfigMaps, generic Secrets and ServiceAccounts with kubectl create, and everything else through kubectl apply -f",
    )
}

/// `kubectl create deployment|deploy NAME --image=IMAGE …` and `kubectl create service …`.
pub fn create(sim: &mut Sim, args: &Args) -> CommandOutput {
    let sub = args.positional.first().map(String::as_str).unwrap_or("");
    if args.has("filename") {
        return error("create -f is not supported in the playground; use kubectl apply -f (the editor's Apply button)");
    }
    match sub {
        "deployment" | "deploy" => {
            let others: Vec<&str> = CREATE_SERVICE_ONLY
                .iter()
                .chain(CREATE_DATA_ONLY)
                .copied()
                .collect();
            if let Some(refused) = refuse_flags(args, &others, "create deployment") {
                return refused;
            }
        }
        "service" | "svc" => return create_service(sim, args),
        "namespace" | "ns" => return create_namespace(sim, args),
        "configmap" | "cm" | "secret" | "serviceaccount" | "sa" => {
            return create_stored(sim, args, sub)
        }
        "" => {
            return error("Required resource not specified.\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).\nSee 'kubectl create -h' for help and examples")
        }
        other => return create_unsupported(other),
    }
    let names = &args.positional[1..];
    if names.len() != 1 {
        return fail(args.usage_error(&format!(
            "exactly one NAME is required, got {}",
            names.len()
        )));
    }
    let images = args.all("image");
    if images.is_empty() {
        return error("required flag(s) \"image\" not set");
    }
    if images.len() > 1 && !args.after_dashdash.is_empty() {
        return error("cannot specify multiple --image options and command");
    }
    let replicas = args.int("replicas").unwrap_or(1);
    let d = build_deployment(
        &names[0],
        &args.namespace(),
        images,
        replicas as i32,
        args.int("port"),
        &args.after_dashdash,
    );
    create_built(sim, args, Object::from(d), "deployment")
}

/// `kubectl create namespace|ns NAME`.
fn create_namespace(sim: &mut Sim, args: &Args) -> CommandOutput {
    let others: Vec<&str> = CREATE_SERVICE_ONLY
        .iter()
        .chain(CREATE_DEPLOYMENT_ONLY)
        .chain(CREATE_DATA_ONLY)
        .copied()
        .collect();
    if let Some(refused) = refuse_flags(args, &others, "create namespace") {
        return refused;
    }
    let names = &args.positional[1..];
    if names.len() != 1 {
        return fail(args.usage_error(&format!(
            "exactly one NAME is required, got {}",
            names.len()
        )));
    }
    let ns = Namespace {
        metadata: ObjectMeta {
            name: names[0].as_str().into(),
            ..Default::default()
        },
        ..Default::default()
    };
    create_built(sim, args, Object::from(ns), "namespace")
}

/// `kubectl create configmap NAME --from-literal=k=v…`, `kubectl create secret generic NAME
/// --from-literal=k=v… [--type=T]` and `kubectl create serviceaccount NAME`: the object kubectl
/// builds, with its checks of the literals' keys.
fn create_stored(sim: &mut Sim, args: &Args, sub: &str) -> CommandOutput {
    let (kind, what, command, names) = match sub {
        "configmap" | "cm" => ("ConfigMap", "configmap", "create configmap", &args.positional[1..]),
        "serviceaccount" | "sa" => (
            "ServiceAccount",
            "serviceaccount",
            "create serviceaccount",
            &args.positional[1..],
        ),
        _ => match args.positional.get(1).map(String::as_str) {
            Some("generic") => ("Secret", "secret", "create secret generic", &args.positional[2..]),
            Some(other @ ("tls" | "docker-registry")) => {
                return unsupported(
                    &format!("create secret {other}"),
                    "the playground reads no files; write the Secret in the editor and Apply it",
                )
            }
            _ => {
                return fail(args.usage_error(
                    "a secret type is required: kubectl create secret generic NAME --from-literal=key=value",
                ))
            }
        },
    };
    let mut others: Vec<&str> = CREATE_SERVICE_ONLY
        .iter()
        .chain(CREATE_DEPLOYMENT_ONLY)
        .copied()
        .collect();
    match kind {
        "ServiceAccount" => others.extend(CREATE_DATA_ONLY),
        "ConfigMap" => others.push("type"),
        _ => {}
    }
    if let Some(refused) = refuse_flags(args, &others, command) {
        return refused;
    }
    if names.len() != 1 {
        return fail(args.usage_error(&format!(
            "exactly one NAME is required, got {}",
            names.len()
        )));
    }
    let name = &names[0];
    let mut data = serde_json::Map::new();
    for literal in args.all("from-literal") {
        let Some((key, value)) = literal.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return error(format!(
                "invalid literal source {literal}, expected key=value"
            ));
        };
        let valid = key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !valid {
            return error(format!(
                "{key:?} is not a valid key name for a {kind}: a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
            ));
        }
        if data.contains_key(key) {
            return error(format!(
                "cannot add key {key}, another key by that name already exists in Data for {kind} {name:?}"
            ));
        }
        let value = match kind {
            "Secret" => crate::sim::api::base64::encode_std(value.as_bytes()),
            _ => value.to_string(),
        };
        data.insert(key.to_string(), Json::String(value));
    }
    let Some(custom) = openapi::stored_kind("", kind) else {
        return create_unsupported(sub);
    };
    let mut content = serde_json::Map::new();
    if !data.is_empty() {
        content.insert("data".into(), Json::Object(data));
    }
    if let Some(t) = args.get("type") {
        content.insert("type".into(), Json::String(t.to_string()));
    }
    let obj = Object::from(CustomObject {
        kind: custom,
        api_version: "v1".into(),
        metadata: ObjectMeta {
            name: name.as_str().into(),
            namespace: args.namespace().into(),
            ..Default::default()
        },
        content,
    });
    create_built(sim, args, obj, what)
}

/// `port[:targetPort]` of `--tcp`, as kubectl's `parsePorts` reads it: a port number, then a
/// target that is a number or a port name (the port itself when left out).
fn parse_tcp(spec: &str) -> Result<(i64, IntOrString), String> {
    let (port, target) = spec.split_once(':').unwrap_or((spec, spec));
    let port = match port.parse::<i64>() {
        Ok(p) if (1..=65535).contains(&p) => p,
        _ => {
            return Err(format!(
                "invalid port {port:?} in --tcp={spec}: must be a number from 1 to 65535"
            ))
        }
    };
    let target = match target.parse::<i64>() {
        Ok(t) if (1..=65535).contains(&t) => IntOrString::Int(t),
        Ok(_) => {
            return Err(format!(
                "invalid target port {target:?} in --tcp={spec}: must be a number from 1 to 65535"
            ))
        }
        Err(_) => IntOrString::String(target.to_string()),
    };
    Ok((port, target))
}

/// `kubectl create service clusterip|nodeport|loadbalancer|externalname NAME [--tcp=port[:target]]…`:
/// the Service kubectl builds, labelled and selecting `app=NAME` (ExternalName selects nothing),
/// a port named after each `--tcp` (`80:8080` → `80-8080`).
fn create_service(sim: &mut Sim, args: &Args) -> CommandOutput {
    let ty = args.positional.get(1).map(String::as_str).unwrap_or("");
    let (type_, own_flag) = match ty {
        "clusterip" => ("ClusterIP", "clusterip"),
        "nodeport" => ("NodePort", "node-port"),
        "loadbalancer" => ("LoadBalancer", ""),
        "externalname" => ("ExternalName", "external-name"),
        "" => return fail(args.usage_error("a service type is required: kubectl create service clusterip|nodeport|loadbalancer|externalname NAME")),
        other => return fail(args.usage_error(&format!("unknown service type \"{other}\": the types are clusterip, nodeport, loadbalancer and externalname"))),
    };
    let command = format!("create service {ty}");
    let others: Vec<&str> = CREATE_SERVICE_ONLY
        .iter()
        .chain(CREATE_DEPLOYMENT_ONLY)
        .chain(CREATE_DATA_ONLY)
        .copied()
        .filter(|f| *f != own_flag && *f != "tcp")
        .collect();
    if let Some(refused) = refuse_flags(args, &others, &command) {
        return refused;
    }
    let names = &args.positional[2..];
    if names.len() != 1 {
        return fail(args.usage_error(&format!(
            "exactly one NAME is required, got {}",
            names.len()
        )));
    }
    let name = &names[0];
    let tcp: Vec<&str> = args
        .all("tcp")
        .iter()
        .flat_map(|t| t.split(','))
        .filter(|t| !t.is_empty())
        .collect();
    let headless = args.get("clusterip") == Some("None");
    if tcp.is_empty() && !headless && type_ != "ExternalName" {
        return error("at least one tcp port specifier must be provided");
    }
    let external_name = args.get("external-name").unwrap_or("");
    if type_ == "ExternalName"
        && !crate::sim::api::validation::is_dns1123_subdomain(external_name).is_empty()
    {
        return error(format!("invalid service external name {external_name}"));
    }
    let mut ports = Vec::new();
    for spec in tcp {
        let (port, target) = match parse_tcp(spec) {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        ports.push(ServicePort {
            name: Some(spec.replace(':', "-")),
            port,
            target_port: Some(target),
            protocol: Some("TCP".into()),
            node_port: args.int("node-port").filter(|&n| n != 0),
            ..Default::default()
        });
    }
    let app: StringMap = [("app".to_string(), name.clone())].into();
    let svc = Service {
        metadata: ObjectMeta {
            name: name.as_str().into(),
            namespace: args.namespace().into(),
            labels: app.clone(),
            ..Default::default()
        },
        spec: crate::sim::api::types::ServiceSpec {
            selector: if type_ == "ExternalName" {
                StringMap::new()
            } else {
                app
            },
            ports,
            type_: Some(type_.into()),
            cluster_ip: args.get("clusterip").map(String::from),
            external_name: (type_ == "ExternalName")
                .then(|| Box::new(Json::String(external_name.into()))),
            ..Default::default()
        },
        status: None,
    };
    let what = format!("{type_} service");
    create_built(sim, args, Object::from(svc), &what)
}

/// Creates the object a `kubectl create` subcommand built (or prints it, see [`client_dry_run`]):
/// `KIND/NAME created`, or the server's refusal in kubectl's words, `failed to create {what}: …`.
fn create_built(sim: &mut Sim, args: &Args, obj: Object, what: &str) -> CommandOutput {
    if let Some(printed) = client_dry_run(args, &obj) {
        return printed;
    }
    if let Some(d) = args.get("dry-run").filter(|d| *d != "none") {
        return unsupported(&format!("--dry-run={d}"), "use --dry-run=client -o yaml");
    }
    let kind = obj.kind();
    match sim.submit(ApiRequest::Create(obj)) {
        Ok(o) => out(format!("{} created", object_name(kind, &o.meta().name))),
        Err(e) => error(format!("failed to create {what}: {}", e.message)),
    }
}

/// Flags of `kubectl run`.
pub const RUN_FLAGS: &[Flag] = &[
    flag("image", None, FlagKind::Str),
    flag("port", None, FlagKind::Str),
    flag("labels", Some('l'), FlagKind::Str),
    flag("restart", None, FlagKind::Str),
    flag("env", None, FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
    flag("command", None, FlagKind::Bool),
    flag("rm", None, FlagKind::Bool),
    flag("stdin", Some('i'), FlagKind::Bool),
    flag("tty", Some('t'), FlagKind::Bool),
    flag("image-pull-policy", None, FlagKind::Str),
];

/// `kubectl run NAME --image=IMAGE`: a bare Pod (no controller: `drain` needs `--force` for it).
pub fn run(sim: &mut Sim, args: &Args) -> CommandOutput {
    let Some(name) = args.positional.first() else {
        return fail(args.usage_error("NAME is required for run"));
    };
    let Some(image) = args.get("image") else {
        return error("required flag(s) \"image\" not set");
    };
    if args.bool("stdin") || args.bool("tty") || args.bool("rm") {
        return unsupported("run -i/-t/--rm", "simulated containers have no terminal");
    }
    let mut labels = StringMap::new();
    match args.get("labels") {
        Some(l) => {
            for kv in l.split(',').filter(|s| !s.is_empty()) {
                let Some((k, v)) = kv.split_once('=') else {
                    return error(format!("invalid label spec: {kv}"));
                };
                labels.insert(k.to_string(), v.to_string());
            }
        }
        None => {
            labels.insert("run", name.clone());
        }
    }
    let restart = args.get("restart").unwrap_or("Always");
    if !["Always", "OnFailure", "Never"].contains(&restart) {
        return error(format!("invalid restart policy: {restart}"));
    }
    let mut c = Container {
        name: name.as_str().into(),
        image: image.into(),
        image_pull_policy: args.get("image-pull-policy").map(Str::from),
        ..Default::default()
    };
    if let Some(p) = args.get("port") {
        match p.parse::<i64>() {
            Ok(p) => {
                c.ports = vec![ContainerPort {
                    container_port: p,
                    ..Default::default()
                }]
            }
            Err(_) => return error(format!("invalid port: {p}")),
        }
    }
    let env: Vec<Json> = args
        .all("env")
        .iter()
        .filter_map(|e| e.split_once('='))
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    if !env.is_empty() {
        c.env = Some(Box::new(Json::Array(env)));
    }
    if !args.after_dashdash.is_empty() {
        let key = if args.bool("command") {
            "command"
        } else {
            "args"
        };
        let v = Some(Box::new(json!(args.after_dashdash)));
        if key == "command" {
            c.command = v;
        } else {
            c.args = v;
        }
    }
    let pod = Pod {
        metadata: ObjectMeta {
            name: name.as_str().into(),
            namespace: args.namespace().into(),
            labels,
            ..Default::default()
        },
        spec: PodSpec {
            containers: vec![c],
            restart_policy: Some(restart.into()),
            ..Default::default()
        }
        .into(),
        ..Default::default()
    };
    send_generated(sim, args, Object::from(pod), |o| {
        format!("pod/{} created", o.meta().name)
    })
}

/// Flags of `kubectl expose`.
pub const EXPOSE_FLAGS: &[Flag] = &[
    flag("port", None, FlagKind::Str),
    flag("target-port", None, FlagKind::Str),
    flag("type", None, FlagKind::Str),
    flag("name", None, FlagKind::Str),
    flag("protocol", None, FlagKind::Str),
    flag("selector", None, FlagKind::Str),
    flag("labels", Some('l'), FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
];

/// `kubectl expose deployment|rs|pod|svc NAME --port=…`: a Service selecting the same pods.
pub fn expose(sim: &mut Sim, args: &Args) -> CommandOutput {
    let request = match resources::parse_request(sim.api(), &args.positional, false) {
        Ok(Some(Request::Names(n))) if n.len() == 1 => n.into_iter().next().expect("one"),
        Ok(_) => {
            return fail(args.usage_error(
                "You must provide one resource by argument or filename (kubectl expose deployment web --port=80)",
            ))
        }
        Err(e) => return error(e),
    };
    let (kind, name) = request;
    let ns = args.namespace();
    let Some(obj) = sim.api().get(&ObjectKey::new(kind, &ns, &name)).cloned() else {
        return fail(format!(
            "Error from server (NotFound): {} \"{name}\" not found",
            kind.resource()
        ));
    };
    let selector: StringMap = match &*obj {
        Object::Deployment(d) => {
            if !d.spec.selector.match_expressions.is_empty() {
                return error("couldn't retrieve selectors via --selector flag or introspection: the Deployment uses match expressions, which a Service selector cannot express");
            }
            d.spec.selector.match_labels.clone()
        }
        Object::ReplicaSet(rs) => rs.spec.selector.match_labels.clone(),
        Object::Pod(p) => p.metadata.labels.clone(),
        Object::Service(s) => s.spec.selector.clone(),
        _ => return error(format!("cannot expose a {}", kind.as_str())),
    };
    let ports: Vec<ContainerPort> = pod_spec(&obj)
        .map(|spec| {
            spec.containers
                .iter()
                .flat_map(|c| c.ports.clone())
                .collect()
        })
        .unwrap_or_default();
    let selector = match args.get("selector") {
        Some(s) => {
            let mut m = StringMap::new();
            for kv in s.split(',') {
                if let Some((k, v)) = kv.split_once('=') {
                    m.insert(k.to_string(), v.to_string());
                }
            }
            m
        }
        None => selector,
    };
    let port: i64 = match args.get("port") {
        Some(p) => match p.parse() {
            Ok(p) => p,
            Err(_) => return error(format!("invalid port: {p}")),
        },
        None => match ports.first() {
            Some(p) => p.container_port,
            None => return error("couldn't find port via --port flag or introspection\nSee 'kubectl expose -h' for help and examples"),
        },
    };
    let target = match args.get("target-port") {
        Some(t) => match t.parse::<i64>() {
            Ok(n) => IntOrString::Int(n),
            Err(_) => IntOrString::String(t.to_string()),
        },
        None => IntOrString::Int(port),
    };
    let svc_name = args.get("name").unwrap_or(&name).to_string();
    let svc = Service {
        metadata: ObjectMeta {
            name: svc_name.as_str().into(),
            namespace: ns.into(),
            labels: obj.meta().labels.clone(),
            ..Default::default()
        },
        spec: crate::sim::api::types::ServiceSpec {
            selector,
            ports: vec![ServicePort {
                port,
                target_port: Some(target),
                protocol: Some(args.get("protocol").unwrap_or("TCP").to_string()),
                ..Default::default()
            }],
            type_: args.get("type").map(String::from),
            ..Default::default()
        },
        status: None,
    };
    send_generated(sim, args, Object::from(svc), |_| {
        format!("service/{svc_name} exposed")
    })
}

/// `--dry-run=client`: the generated object printed (`-o yaml` unless told) instead of sent.
fn client_dry_run(args: &Args, obj: &Object) -> Option<CommandOutput> {
    (args.get("dry-run") == Some("client")).then(|| {
        print_generated(
            obj,
            args.get("output").unwrap_or("yaml"),
            args.has("namespace"),
        )
    })
}

/// Creates an object `run` or `expose` generated (or prints it, see [`client_dry_run`]); `done`
/// words the success line from the stored object.
fn send_generated(
    sim: &mut Sim,
    args: &Args,
    obj: Object,
    done: impl FnOnce(&Object) -> String,
) -> CommandOutput {
    if let Some(printed) = client_dry_run(args, &obj) {
        return printed;
    }
    match sim.submit(ApiRequest::Create(obj)) {
        Ok(o) => out(done(&o)),
        Err(e) => finish(String::new(), &[e.into()]),
    }
}

// ------------------------------------------------------------------ delete

/// Flags of `kubectl delete`.
pub const DELETE_FLAGS: &[Flag] = &[
    flag("filename", Some('f'), FlagKind::Str),
    flag("selector", Some('l'), FlagKind::Str),
    flag("field-selector", None, FlagKind::Str),
    flag("all", None, FlagKind::Bool),
    flag("all-namespaces", Some('A'), FlagKind::Bool),
    flag("cascade", None, FlagKind::OptionalValue("background")),
    flag("grace-period", None, FlagKind::Int),
    flag("force", None, FlagKind::Bool),
    flag("now", None, FlagKind::Bool),
    flag("wait", None, FlagKind::Bool),
    flag("ignore-not-found", None, FlagKind::Bool),
    flag("output", Some('o'), FlagKind::Str),
    flag("timeout", None, FlagKind::Duration),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("interactive", Some('i'), FlagKind::Bool),
    flag("recursive", Some('R'), FlagKind::Bool),
];

/// `kubectl delete` by name, `-l`, `--all` or `-f`.
pub fn delete(sim: &mut Sim, args: &Args, input: Option<&str>) -> CommandOutput {
    let mut warnings = String::new();
    let policy = match args.get("cascade") {
        None => None,
        Some("true") => {
            warnings.push_str("warning: --cascade=true is deprecated (boolean value) and can be replaced with --cascade=background.\n");
            Some(PropagationPolicy::Background)
        }
        Some("false") => {
            warnings.push_str("warning: --cascade=false is deprecated (boolean value) and can be replaced with --cascade=orphan.\n");
            Some(PropagationPolicy::Orphan)
        }
        Some(v) => match v {
            "background" => Some(PropagationPolicy::Background),
            "foreground" => Some(PropagationPolicy::Foreground),
            "orphan" => Some(PropagationPolicy::Orphan),
            _ => {
                return error(format!(
                    "invalid cascade value ({v}). Must be \"background\", \"foreground\", or \"orphan\""
                ))
            }
        },
    };
    if args.bool("interactive") {
        return unsupported(
            "delete --interactive",
            "the console cannot ask for confirmation",
        );
    }
    if let Some(d) = args.get("dry-run").filter(|d| *d != "none") {
        return unsupported(&format!("--dry-run={d}"), "");
    }
    if let Some(o) = args.get("output").filter(|o| *o != "name") {
        return fail(args.usage_error(&format!(
            "Unexpected -o output mode: {o}. We only support '-o name'."
        )));
    }
    if args.bool("all") && args.has("selector") {
        return error("cannot set --all and --selector at the same time");
    }
    // `DeleteOptions.Complete`/`Validate`.
    let mut grace = args.int("grace-period").unwrap_or(-1);
    let force = args.bool("force");
    if args.bool("now") {
        if args.has("grace-period") {
            return error("--now and --grace-period cannot be specified together");
        }
        grace = 1;
    }
    if grace == 0 && !force {
        grace = 1;
    }
    if force && grace < 0 {
        grace = 0;
    }
    if grace == 0 && force {
        warnings.push_str("Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n");
    } else if force {
        warnings.push_str("Warning: --force is ignored because --grace-period is not 0.\n");
    }
    let options = DeleteOptions {
        grace_period_seconds: (grace >= 0).then_some(grace),
        propagation_policy: policy,
        ..Default::default()
    };
    let operation = if grace == 0 {
        "force deleted"
    } else {
        "deleted"
    };
    let ns = args.namespace();
    let (keys, mut errs): (Vec<ObjectKey>, Vec<CmdError>) = if let Some(f) = args.get("filename") {
        let text = match input {
            Some(t) => t,
            None if f == "-" => "",
            None => return error(format!("the path \"{f}\" does not exist")),
        };
        let decoded = decode::decode_manifests(if f == "-" { "STDIN" } else { f }, text);
        if let Some(d) = decoded
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
        {
            return fail(diagnostic_line(f, d));
        }
        let mut keys = Vec::new();
        let mut missing = Vec::new();
        for d in &decoded.objects {
            let mut key = d.object.key();
            if key.kind.namespaced() && key.namespace.is_empty() {
                key = ObjectKey::from_parts(key.kind, Str::from(ns.as_str()), key.name);
            }
            if sim.api().get(&key).is_some() {
                keys.push(key);
            } else {
                missing.push(CmdError::Status {
                    error: ApiError::not_found(key.kind, &key.name),
                    context: Some(format!("error when deleting \"{f}\"")),
                });
            }
        }
        (keys, missing)
    } else {
        let request = or_return!(resources::request_or(
        sim.api(),
            &args.positional,
            "You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'"
        ));
        or_return!(resources::resolve(sim, args, &request))
    };
    if args.bool("ignore-not-found") {
        errs.clear();
    }
    let mut stdout = String::new();
    if keys.is_empty() && errs.is_empty() {
        stdout.push_str("No resources found\n");
    }
    for key in keys {
        match sim.submit(ApiRequest::Delete {
            key: key.clone(),
            options: options.clone(),
        }) {
            Ok(_) => {
                if args.get("output") == Some("name") {
                    stdout.push_str(&format!("{}\n", object_name(key.kind, &key.name)));
                } else {
                    stdout.push_str(&format!(
                        "{} \"{}\" {operation}\n",
                        super::util::kind_name(key.kind),
                        key.name
                    ));
                }
            }
            Err(e) if e.code() == 404 && args.bool("ignore-not-found") => {}
            Err(e) => errs.push(e.into()),
        }
    }
    let mut done = finish(stdout, &errs);
    done.stderr.insert_str(0, &warnings);
    done
}

// ------------------------------------------------------------------ scale

/// Flags of `kubectl scale`.
pub const SCALE_FLAGS: &[Flag] = &[
    flag("replicas", None, FlagKind::Int),
    flag("current-replicas", None, FlagKind::Int),
    flag("resource-version", None, FlagKind::Str),
    flag("selector", Some('l'), FlagKind::Str),
    flag("all", None, FlagKind::Bool),
    flag("timeout", None, FlagKind::Duration),
    flag("filename", Some('f'), FlagKind::Str),
    flag("output", Some('o'), FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
];

fn replicas_of(o: &Object) -> Option<i32> {
    match o {
        Object::Deployment(d) => Some(d.spec.replicas.unwrap_or(1)),
        Object::ReplicaSet(r) => Some(r.spec.replicas.unwrap_or(1)),
        _ => None,
    }
}

/// `kubectl scale deployment/web --replicas=N`. As `RunScale` does, the first object that
/// cannot be scaled ends the command with its error alone; names that were not found are
/// reported only when every found object was scaled.
pub fn scale(sim: &mut Sim, args: &Args) -> CommandOutput {
    let Some(n) = args.int("replicas") else {
        return error("required flag(s) \"replicas\" not set");
    };
    if n < 0 {
        return error(
            "The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0",
        );
    }
    let request = or_return!(resources::request_or(
        sim.api(),
        &args.positional,
        "required resource not specified"
    ));
    let (keys, missing) = or_return!(resources::resolve(sim, args, &request));
    let mut stdout = String::new();
    for key in keys {
        let Some(obj) = sim.api().get(&key).cloned() else {
            continue;
        };
        if let Err(e) = scale_one(sim, args, &key, &obj, n) {
            return finish(stdout, &[e]);
        }
        stdout.push_str(&format!("{} scaled\n", object_name(key.kind, &key.name)));
    }
    finish(stdout, &missing)
}

/// An object's scale subresource: its `spec.replicas` now and the fields it lives at.
/// Deployments and ReplicaSets serve one; a custom kind serves one when its CRD declares
/// `subresources.scale` for the object's version (at its `specReplicasPath`).
fn scale_subresource(
    sim: &Sim,
    key: &ObjectKey,
    obj: &Object,
) -> Result<(i64, Vec<String>), CmdError> {
    if let Some(current) = replicas_of(obj) {
        return Ok((i64::from(current), vec!["spec".into(), "replicas".into()]));
    }
    // The built-in kinds served as stored objects that have a scale subresource upstream.
    if let Object::Custom(c) = obj {
        let names = c.kind.names();
        if c.kind.is_builtin() && names.group == "apps" && names.kind == "StatefulSet" {
            let current = c.content.get("spec").and_then(|s| s.get("replicas"));
            return Ok((
                current.and_then(Json::as_i64).unwrap_or(1),
                vec!["spec".into(), "replicas".into()],
            ));
        }
    }
    let Object::Custom(custom) = obj else {
        return Err(CmdError::Line(format!(
            "error: no scaler has been implemented for {{\"{}\" \"{}\"}}",
            key.kind.group(),
            key.kind.as_str()
        )));
    };
    let version = custom.api_version.rsplit('/').next().unwrap_or_default();
    let scale = sim
        .api()
        .crd_of(custom.kind)
        .and_then(|crd| crd.served_version(version))
        .and_then(|v| v.subresources.as_ref())
        .and_then(|s| s.scale.as_ref());
    let Some(scale) = scale else {
        // kubectl asks for `/scale`, which a CRD without the subresource does not serve.
        return Err(CmdError::from(ApiError {
            reason: crate::sim::api::StatusReason::NotFound,
            message: "the server could not find the requested resource".into(),
        }));
    };
    let path: Vec<String> = scale
        .spec_replicas_path
        .trim_start_matches('.')
        .split('.')
        .map(str::to_string)
        .collect();
    let json = custom.to_json();
    let current = path
        .iter()
        .try_fold(&json, |v, k| v.get(k))
        .and_then(Json::as_i64)
        .unwrap_or(0);
    Ok((current, path))
}

/// Scales one object: its precondition (`--current-replicas`), then the patch of its replicas.
fn scale_one(
    sim: &mut Sim,
    args: &Args,
    key: &ObjectKey,
    obj: &Object,
    replicas: i64,
) -> Result<(), CmdError> {
    let (current, path) = scale_subresource(sim, key, obj)?;
    if let Some(want) = args.int("current-replicas").filter(|c| *c >= 0) {
        if current != want {
            return Err(CmdError::Line(format!(
                "error: Expected replicas to be {want}, was {current}"
            )));
        }
    }
    let mut patch = path
        .iter()
        .rev()
        .fold(json!(replicas), |inner, k| json!({ k.as_str(): inner }));
    if let Some(rv) = args.get("resource-version") {
        patch["metadata"] = json!({"resourceVersion": rv});
    }
    merge_patch(sim, key, patch)
        .map(|_| ())
        .map_err(CmdError::from)
}

// ------------------------------------------------------------------ set image

/// The error of `set image`, `label` and `annotate` when no resource is named.
const NO_RESOURCE: &str =
    "one or more resources must be specified as <resource> <name> or <resource>/<name>";

/// Flags of `kubectl set image`.
pub const SET_IMAGE_FLAGS: &[Flag] = &[
    flag("selector", Some('l'), FlagKind::Str),
    flag("all", None, FlagKind::Bool),
    flag("local", None, FlagKind::Bool),
    flag("record", None, FlagKind::Bool),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
    flag("filename", Some('f'), FlagKind::Str),
];

/// The pod spec a workload runs: a Deployment's or ReplicaSet's template, a Pod's own.
fn pod_spec(o: &Object) -> Option<&PodSpec> {
    match o {
        Object::Deployment(d) => Some(&d.spec.template.spec),
        Object::ReplicaSet(r) => Some(&r.spec.template.spec),
        Object::Pod(p) => Some(&p.spec),
        _ => None,
    }
}

fn template_mut(o: &mut Object) -> Option<&mut PodSpec> {
    match o {
        Object::Deployment(d) => Some(&mut d.spec.template.spec),
        Object::ReplicaSet(r) => Some(&mut r.spec.template.spec),
        Object::Pod(p) => Some(p.spec_mut()),
        _ => None,
    }
}

/// Where a container's image is written: a typed pod spec's field, or a stored kind's JSON.
enum ImageSlot<'a> {
    Typed(&'a mut Str),
    Json(&'a mut Json),
}

impl ImageSlot<'_> {
    /// Writes `image`; whether it changed anything.
    fn set(&mut self, image: &str) -> bool {
        match self {
            ImageSlot::Typed(s) if s.as_str() != image => **s = Str::from(image),
            ImageSlot::Json(v) if v.as_str() != Some(image) => **v = json!(image),
            _ => return false,
        }
        true
    }
}

/// Each container of the object's pod template (init containers first) by name, with where its
/// image is written; None for an object without a template. A stored kind with one (a
/// StatefulSet) is edited in its JSON, which keeps the fields the typed pod does not model.
fn image_slots(obj: &mut Object) -> Option<Vec<(String, ImageSlot<'_>)>> {
    if let Object::Custom(c) = obj {
        let spec = c
            .content
            .get_mut("spec")?
            .get_mut("template")?
            .get_mut("spec")?;
        let Json::Object(spec) = spec else {
            return None;
        };
        // kubectl walks init containers first; the map holds `containers` before them.
        let (mut init, mut main) = (Vec::new(), Vec::new());
        for (field, list) in spec.iter_mut() {
            let into = match field.as_str() {
                "initContainers" => &mut init,
                "containers" => &mut main,
                _ => continue,
            };
            for c in list.as_array_mut().into_iter().flatten() {
                let Json::Object(c) = c else { continue };
                let name = c
                    .get("name")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string();
                into.push((
                    name,
                    ImageSlot::Json(c.entry("image").or_insert(Json::Null)),
                ));
            }
        }
        init.extend(main);
        return Some(init);
    }
    let spec = template_mut(obj)?;
    Some(
        spec.init_containers
            .iter_mut()
            .chain(spec.containers.iter_mut())
            .map(|c| (c.name.to_string(), ImageSlot::Typed(&mut c.image)))
            .collect(),
    )
}

/// `kubectl set image deployment/web nginx=nginx:1.28 [*=image]`.
pub fn set(sim: &mut Sim, args: &Args) -> CommandOutput {
    match args.positional.first().map(String::as_str) {
        Some("image") => {}
        Some(other) => {
            return unsupported(
                &format!("set {other}"),
                "the playground implements kubectl set image; edit other fields with kubectl patch or apply",
            )
        }
        None => return error("Required resource not specified."),
    }
    let rest = &args.positional[1..];
    let split = rest
        .iter()
        .position(|w| w.contains('='))
        .unwrap_or(rest.len());
    let (res, pairs) = rest.split_at(split);
    if pairs.is_empty() {
        return error("at least one image update is required");
    }
    let mut images: Vec<(String, String)> = Vec::new();
    for p in pairs {
        match p.split_once('=') {
            Some((c, i)) if !c.is_empty() && !i.is_empty() => images.push((c.into(), i.into())),
            _ => {
                return error(format!(
                    "invalid image update {p:?}: expected CONTAINER_NAME=CONTAINER_IMAGE"
                ))
            }
        }
    }
    if images.len() > 1 && images.iter().any(|(c, _)| c == "*") {
        return error("all containers are already specified by *, but saw more than one container_name=container_image pairs");
    }
    let request = or_return!(resources::request_or(sim.api(), res, NO_RESOURCE));
    let (keys, mut errs) = or_return!(resources::resolve(sim, args, &request));
    let mut stdout = String::new();
    for key in keys {
        let Some(mut obj) = sim.api().get(&key).map(|o| (**o).clone()) else {
            continue;
        };
        let Some(mut slots) = image_slots(&mut obj) else {
            errs.push(CmdError::Line(format!(
                "error: {}/{} the object has no pod template",
                key.kind.resource(),
                key.name
            )));
            continue;
        };
        let mut changed = false;
        for (cname, image) in &images {
            let mut found = false;
            for (name, slot) in slots.iter_mut() {
                if name == cname || cname == "*" {
                    found = true;
                    changed |= slot.set(image);
                }
            }
            if !found {
                errs.push(CmdError::Line(format!(
                    "error: unable to find container named {cname:?}"
                )));
            }
        }
        if !changed {
            continue;
        }
        match sim.submit(ApiRequest::Update(obj)) {
            Ok(_) => stdout.push_str(&format!(
                "{} image updated\n",
                object_name(key.kind, &key.name)
            )),
            // `fmt.Errorf("failed to patch image update to pod template: %v", err)`: the status
            // message becomes plain text, so even a 422 prints with `error: `.
            Err(e) => errs.push(CmdError::Line(format!(
                "error: failed to patch image update to pod template: {}",
                e.message
            ))),
        }
    }
    finish(stdout, &errs)
}

// ------------------------------------------------------------------ patch

/// Flags of `kubectl patch`.
pub const PATCH_FLAGS: &[Flag] = &[
    flag("patch", Some('p'), FlagKind::Str),
    flag("patch-file", None, FlagKind::Str),
    flag("type", None, FlagKind::Str),
    flag("subresource", None, FlagKind::Str),
    flag("local", None, FlagKind::Bool),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
    flag("filename", Some('f'), FlagKind::Str),
];

/// Parses a patch written as JSON or YAML (kubectl accepts both).
pub fn parse_patch(text: &str) -> Result<Json, String> {
    if let Ok(v) = serde_json::from_str::<Json>(text) {
        return Ok(v);
    }
    let docs = crate::sim::input::yaml::parse_documents(text).map_err(|d| d.message)?;
    docs.into_iter()
        .next()
        .map(|d| d.value)
        .ok_or_else(|| "empty patch".to_string())
}

/// The three patch types `kubectl patch --type` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PatchType {
    Strategic,
    Merge,
    Json,
}

impl PatchType {
    fn media_type(self) -> &'static str {
        match self {
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Json => "application/json-patch+json",
        }
    }
}

/// `kubectl patch TYPE NAME -p '{…}' [--type=strategic|merge|json]`.
pub fn patch(sim: &mut Sim, args: &Args) -> CommandOutput {
    let type_ = match args.get("type").unwrap_or("strategic") {
        "strategic" => PatchType::Strategic,
        "merge" => PatchType::Merge,
        "json" => PatchType::Json,
        other => {
            return error(format!(
                "--type must be one of [json merge strategic], not {other:?}"
            ))
        }
    };
    let Some(text) = args.get("patch") else {
        return error("must specify --patch or --patch-file containing the contents of the patch");
    };
    let p = match parse_patch(text) {
        Ok(p) if type_ == PatchType::Json && p.is_array() => p,
        Ok(p) if type_ != PatchType::Json && p.is_object() => p,
        Ok(_) if type_ == PatchType::Json => {
            return error(format!(
                "unable to parse {text:?}: a JSON patch must be a list of operations"
            ))
        }
        Ok(_) => {
            return error(format!(
                "unable to parse {text:?}: the patch must be an object"
            ))
        }
        Err(e) => return error(format!("unable to parse {text:?}: {e}")),
    };
    let status = match args.get("subresource") {
        None => false,
        Some("status") => true,
        Some(s) => {
            return error(format!(
                "invalid subresource value: \"{s}\". Must be one of [status scale]"
            ))
        }
    };
    const NO_NAME: &str = "resource(s) were provided, but no name was specified";
    let request = match or_return!(resources::request_or(sim.api(), &args.positional, NO_NAME)) {
        r @ Request::Names(_) => r,
        Request::Types(_) => return error(NO_NAME),
    };
    let (keys, mut errs) = or_return!(resources::resolve(sim, args, &request));
    let mut stdout = String::new();
    for key in keys {
        let before = sim
            .api()
            .get(&key)
            .map(|o| o.meta().resource_version.clone());
        let body = match as_merge_patch(sim, &key, type_, &p) {
            Ok(body) => body,
            Err(e) => {
                errs.push(e);
                continue;
            }
        };
        match sim.submit(ApiRequest::Patch {
            key: key.clone(),
            patch: body,
            status,
        }) {
            Ok(o) => {
                let unchanged = before.as_deref() == Some(o.meta().resource_version.as_str());
                stdout.push_str(&format!(
                    "{} patched{}\n",
                    object_name(key.kind, &key.name),
                    if unchanged { " (no change)" } else { "" }
                ));
            }
            Err(e) => errs.push(e.into()),
        }
    }
    finish(stdout, &errs)
}

/// The JSON merge patch with the effect `patch` of `type_` has on the stored object: the store
/// takes merge patches, and the console's commands run between two simulated events, so the
/// object a strategic or JSON patch is worked out against is the one it changes. An object that
/// is not there keeps the patch as given, for the API server's NotFound.
fn as_merge_patch(
    sim: &Sim,
    key: &ObjectKey,
    type_: PatchType,
    p: &Json,
) -> Result<Json, CmdError> {
    let custom = key.kind.custom().filter(|c| !c.is_builtin());
    if let (PatchType::Strategic, Some(c)) = (type_, custom) {
        // Custom resources have no Go types to say how lists merge.
        let n = c.names();
        return Err(CmdError::Line(format!(
            "error: {} is not supported by {}, Kind={}: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            type_.media_type(),
            n.api_version,
            n.kind
        )));
    }
    let Some(live) = sim.api().get(key).map(|o| o.to_json()) else {
        return Ok(p.clone());
    };
    let patched = match type_ {
        PatchType::Merge => return Ok(p.clone()),
        PatchType::Strategic => {
            let resource = match key.kind.custom() {
                Some(c) => openapi::resource_of(c),
                None => openapi::resource(key.kind.api_version(), key.kind.as_str()),
            };
            let Some(resource) = resource else {
                return Ok(p.clone());
            };
            patch::strategic_merge(&live, p, resource.root())
                .map_err(|e| CmdError::Line(format!("Error from server: {e}")))?
        }
        PatchType::Json => patch::json_patch(&live, p)
            .map_err(|e| CmdError::Line(format!("The request is invalid: {e}")))?,
    };
    Ok(patch::merge_diff(&live, &patched))
}

// ------------------------------------------------------------------ label / annotate

/// Flags of `kubectl label` and `kubectl annotate`.
pub const LABEL_FLAGS: &[Flag] = &[
    flag("overwrite", None, FlagKind::Bool),
    flag("selector", Some('l'), FlagKind::Str),
    flag("field-selector", None, FlagKind::Str),
    flag("all", None, FlagKind::Bool),
    flag("all-namespaces", Some('A'), FlagKind::Bool),
    flag("list", None, FlagKind::Bool),
    flag("local", None, FlagKind::Bool),
    flag("resource-version", None, FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
    flag("filename", Some('f'), FlagKind::Str),
];

fn valid_label_key(k: &str) -> bool {
    let (prefix, name) = match k.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-.".contains(c))
    });
    name_ok && prefix_ok
}

fn valid_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.ends_with(|c: char| c.is_ascii_alphanumeric()))
}

/// `kubectl label` (`annotations == false`) and `kubectl annotate`.
pub fn label(sim: &mut Sim, args: &Args, annotations: bool) -> CommandOutput {
    let what = if annotations { "annotation" } else { "label" };
    // `GetResourcesAndPairs`: the first `k=v` or `k-` (a prefixed key too) starts the changes.
    let split = args
        .positional
        .iter()
        .position(|w| (w.contains('=') && !w.starts_with('=')) || (w.ends_with('-') && w != "-"))
        .unwrap_or(args.positional.len());
    let (res, updates) = args.positional.split_at(split);
    let list = args.bool("list");
    if updates.is_empty() && !list {
        return error(format!("at least one {what} update is required"));
    }
    let mut add: Vec<(String, String)> = Vec::new();
    let mut remove: Vec<String> = Vec::new();
    for u in updates {
        if let Some((k, v)) = u.split_once('=') {
            if !valid_label_key(k) || (!annotations && !valid_label_value(v)) {
                return error(format!("invalid {what} spec: {u}"));
            }
            add.push((k.to_string(), v.to_string()));
        } else if let Some(k) = u.strip_suffix('-') {
            remove.push(k.to_string());
        } else {
            return error(format!("invalid {what} spec: {u}"));
        }
    }
    if add.iter().any(|(k, _)| remove.contains(k)) {
        return error(format!(
            "can not both modify and remove {what}s in the same command"
        ));
    }
    let request = or_return!(resources::request_or(sim.api(), res, NO_RESOURCE));
    let (keys, mut errs) = or_return!(resources::resolve(sim, args, &request));
    let overwrite = args.bool("overwrite");
    let mut stdout = String::new();
    for key in keys {
        let Some(obj) = sim.api().get(&key).cloned() else {
            continue;
        };
        let current = if annotations {
            &obj.meta().annotations
        } else {
            &obj.meta().labels
        };
        if list {
            for (k, v) in current {
                stdout.push_str(&format!("{k}={v}\n"));
            }
            continue;
        }
        if !overwrite {
            let clashes: Vec<String> = add
                .iter()
                .filter_map(|(k, v)| {
                    current.get(k).filter(|cur| *cur != v).map(|cur| {
                        format!("'{k}' already has a value ({cur}), and --overwrite is false")
                    })
                })
                .collect();
            if !clashes.is_empty() {
                errs.push(CmdError::Line(format!("error: {}", aggregate(&clashes))));
                continue;
            }
        }
        let mut updated = current.clone();
        let mut field = serde_json::Map::new();
        for (k, v) in &add {
            updated.insert(k.clone(), v.clone());
            field.insert(k.clone(), Json::String(v.clone()));
        }
        for k in &remove {
            if updated.remove(k).is_none() {
                stdout.push_str(&format!("{what} {k:?} not found.\n"));
            }
            field.insert(k.clone(), Json::Null);
        }
        let name = object_name(key.kind, &key.name);
        if updated == *current {
            stdout.push_str(&format!(
                "{name} {}\n",
                if annotations {
                    "annotated"
                } else {
                    "not labeled"
                }
            ));
            continue;
        }
        let mut meta = serde_json::Map::new();
        meta.insert(
            if annotations { "annotations" } else { "labels" }.to_string(),
            Json::Object(field),
        );
        if let Some(rv) = args.get("resource-version") {
            meta.insert("resourceVersion".into(), Json::String(rv.to_string()));
        }
        let before_len = obj.to_json().to_string().len();
        match merge_patch(sim, &key, json!({"metadata": Json::Object(meta)})) {
            Ok(o) => {
                let verb = if annotations {
                    "annotated"
                } else if !overwrite && o.to_json().to_string().len() < before_len {
                    "unlabeled"
                } else {
                    "labeled"
                };
                stdout.push_str(&format!("{name} {verb}\n"));
            }
            Err(e) => errs.push(e.into()),
        }
    }
    finish(stdout, &errs)
}

// ------------------------------------------------------------------ taint

/// Flags of `kubectl taint`.
pub const TAINT_FLAGS: &[Flag] = &[
    flag("overwrite", None, FlagKind::Bool),
    flag("selector", Some('l'), FlagKind::Str),
    flag("all", None, FlagKind::Bool),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("output", Some('o'), FlagKind::Str),
];

fn parse_taint(spec: &str) -> Result<Taint, String> {
    let (kv, effect) = spec
        .split_once(':')
        .ok_or_else(|| format!("invalid taint spec: {spec}"))?;
    if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect) {
        return Err(format!(
            "invalid taint spec: {spec}, invalid taint effect: {effect}, unsupported taint effect"
        ));
    }
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, Some(v.to_string())),
        None => (kv, None),
    };
    if !valid_label_key(key) {
        return Err(format!("invalid taint spec: {spec}"));
    }
    Ok(Taint {
        key: key.to_string(),
        value: value.filter(|v| !v.is_empty()),
        effect: effect.to_string(),
        time_added: None,
    })
}

/// `kubectl taint nodes NAME key[=value]:Effect` and `key[:Effect]-` to remove.
pub fn taint(sim: &mut Sim, args: &Args) -> CommandOutput {
    let split = args
        .positional
        .iter()
        .position(|w| w.contains(':') || w.contains('=') || w.ends_with('-'))
        .unwrap_or(args.positional.len());
    let (res, specs) = args.positional.split_at(split);
    if specs.is_empty() {
        return error("at least one taint update is required");
    }
    let mut add = Vec::new();
    let mut remove: Vec<(String, Option<String>)> = Vec::new();
    for s in specs {
        if let Some(r) = s.strip_suffix('-') {
            match r.split_once(':') {
                Some((k, e)) => remove.push((k.to_string(), Some(e.to_string()))),
                None => remove.push((r.to_string(), None)),
            }
        } else {
            match parse_taint(s) {
                Ok(t) => add.push(t),
                Err(e) => return error(e),
            }
        }
    }
    let request = or_return!(resources::request_or(
        sim.api(),
        res,
        "at least one resource name must be specified since 'all' parameter is not set"
    ));
    if !matches!(&request, Request::Names(n) if n.iter().all(|(k, _)| *k == Kind::Node))
        && !matches!(&request, Request::Types(k) if k == &[Kind::Node])
    {
        return error("invalid resource type, only node types are supported");
    }
    let (keys, mut errs) = or_return!(resources::resolve(sim, args, &request));
    let overwrite = args.bool("overwrite");
    let mut stdout = String::new();
    for key in keys {
        let Some(node) = sim.api().get(&key).and_then(|o| o.as_node()).cloned() else {
            continue;
        };
        let mut taints = node.spec.taints.clone();
        let mut failed = false;
        for t in &add {
            if let Some(i) = taints
                .iter()
                .position(|x| x.key == t.key && x.effect == t.effect)
            {
                if !overwrite {
                    errs.push(CmdError::Line(format!(
                        "error: node {} already has {} taint(s) with same effect(s) and --overwrite is false",
                        key.name, t.key
                    )));
                    failed = true;
                    break;
                }
                taints[i] = t.clone();
            } else {
                taints.push(t.clone());
            }
        }
        if failed {
            continue;
        }
        let mut removed_any = false;
        for (k, e) in &remove {
            let before = taints.len();
            taints.retain(|x| !(x.key == *k && e.as_ref().is_none_or(|e| *e == x.effect)));
            if taints.len() == before {
                errs.push(CmdError::Line(format!(
                    "error: taint {:?} not found",
                    match e {
                        Some(e) => format!("{k}:{e}"),
                        None => k.clone(),
                    }
                )));
                failed = true;
            } else {
                removed_any = true;
            }
        }
        if failed {
            continue;
        }
        match merge_patch(sim, &key, json!({"spec": {"taints": taints}})) {
            Ok(_) => stdout.push_str(&format!(
                "node/{} {}\n",
                key.name,
                if add.is_empty() && removed_any {
                    "untainted"
                } else {
                    "tainted"
                }
            )),
            Err(e) => errs.push(e.into()),
        }
    }
    finish(stdout, &errs)
}

/// Prints a list of objects as `kubectl get -o yaml` would (used by generated output).
pub fn yaml_list(objs: &[Object]) -> String {
    terminate(crate::sim::input::yaml::to_yaml(&list_json(
        objs.iter().map(|o| o.to_json()).collect(),
    )))
}
