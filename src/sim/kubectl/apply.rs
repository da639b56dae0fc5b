//! `kubectl apply -f` and `kubectl delete -f` on the client side, as kubectl does them before
//! the API server sees anything: decode the manifests, work out each object's request (a create,
//! or kubectl's three-way merge against the last-applied annotation), dry-run them all against a
//! copy of the store, then send them.

use std::rc::Rc;

use serde_json::Value as Json;

use crate::sim::api::patch::merge as merge_patch;
use crate::sim::api::types::{Kind, Object, ObjectKey, Str, LAST_APPLIED};
use crate::sim::api::{ApiError, ApiRequest, DeleteOptions, StatusReason};
use crate::sim::input::decode;
use crate::sim::input::diagnostic::{Diagnostic, Severity};
use crate::sim::world::Sim;

/// What an apply did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApplyReport {
    /// Problems found, each with file:line:col.
    pub diagnostics: Vec<Diagnostic>,
    /// kubectl's output lines (`deployment.apps/web created`).
    pub lines: Vec<String>,
    /// True when every document was applied.
    pub ok: bool,
}

/// Whether a diagnostic is kubectl's resource-mapping failure (a kind nothing serves yet): kubectl
/// reports it and still applies the other documents.
pub fn is_mapping_error(d: &Diagnostic) -> bool {
    d.severity == Severity::Error && d.message.starts_with("resource mapping not found")
}

/// `kubectl apply -f` as the console runs it: the kinds the cluster serves now; a document of a
/// kind nothing serves yet is refused on its own, the others are applied.
pub fn apply_text(sim: &mut Sim, file: &str, text: &str) -> ApplyReport {
    apply_text_validated(sim, file, text, decode::FieldValidation::Strict)
}

/// [`apply_text`] with `kubectl apply --validate`'s field validation.
pub fn apply_text_validated(
    sim: &mut Sim,
    file: &str,
    text: &str,
    validation: decode::FieldValidation,
) -> ApplyReport {
    let mut kinds = decode::Kinds::for_kubectl(sim.api().served_crds());
    kinds.field_validation = validation;
    apply_text_with(sim, file, text, &kinds)
}

/// The editor's Apply: what the file defines serves the rest of it, CRDs first; any error
/// refuses the whole text.
pub fn apply_scenario_text(sim: &mut Sim, file: &str, text: &str) -> ApplyReport {
    let kinds = decode::Kinds::for_scenario(sim.api().served_crds());
    apply_text_with(sim, file, text, &kinds)
}

fn apply_text_with(sim: &mut Sim, file: &str, text: &str, kinds: &decode::Kinds) -> ApplyReport {
    let decoded = decode::decode_manifests_with(file, text, kinds);
    let mut report = ApplyReport {
        diagnostics: decoded.diagnostics.clone(),
        ..Default::default()
    };
    if decoded.scenario.is_some() {
        report.diagnostics.push(Diagnostic {
            file: file.into(),
            line: decoded.scenario.as_ref().map_or(1, |(_, y)| y.start.line),
            col: 1,
            severity: Severity::Info,
            message:
                "the Scenario document is read when a scenario is loaded (Reset); Apply ignores it"
                    .into(),
            field: None,
        });
    }
    let mapping_only = !kinds.file_crds_first
        && report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .all(is_mapping_error);
    let failed = report
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    if failed && !mapping_only {
        return report;
    }
    let applied = apply_decoded(sim, file, decoded);
    report.diagnostics.extend(applied.diagnostics);
    report.lines = applied.lines;
    report.ok = applied.ok && !failed;
    report
}

/// Applies manifests already decoded (a scenario's objects at load): all of them or, when any is
/// refused in the dry run, none.
pub fn apply_decoded(sim: &mut Sim, file: &str, decoded: decode::Decoded) -> ApplyReport {
    let mut report = ApplyReport {
        ok: true,
        ..Default::default()
    };
    // Dry run against a copy of the store: all or nothing.
    let mut dry = sim.api().clone();
    let mut plan = Vec::new();
    let mut deferred = Vec::new();
    let served = sim.api().served_crds();
    let defines = |k: Kind| {
        let names = |c: &crate::sim::api::apiextensions::CustomResourceDefinition| {
            c.spec.group == k.group() && c.spec.names.kind == k.as_str()
        };
        served.iter().any(names)
            || decoded.objects.iter().any(|o| match &o.object {
                Object::CustomResourceDefinition(c) => names(c),
                _ => false,
            })
    };
    for d in &decoded.objects {
        // An instance of a kind kro will generate from a graph in the same text.
        let kind = d.object.kind();
        if kind.custom().is_some_and(|c| !c.names().builtin) && !defines(kind) {
            match apply_request(d, |_| None) {
                Ok(Some(req)) => deferred.push((req, d)),
                Ok(None) => {}
                Err(e) => {
                    report.ok = false;
                    report
                        .diagnostics
                        .push(diag_at(file, d.span.line, d.span.col, &d.object, &e));
                }
            }
            continue;
        }
        let req = match apply_request(d, |k| dry.get(k).cloned()) {
            Ok(Some(req)) => req,
            Ok(None) => {
                plan.push((None, d));
                continue;
            }
            Err(e) => {
                report.ok = false;
                report
                    .diagnostics
                    .push(diag_at(file, d.span.line, d.span.col, &d.object, &e));
                continue;
            }
        };
        let handled = dry.handle(sim.now(), &req, 0);
        if let Err(e) = handled.result {
            report.ok = false;
            report
                .diagnostics
                .push(diag_at(file, d.span.line, d.span.col, &d.object, &e));
        } else {
            plan.push((Some(req), d));
        }
    }
    if !report.ok {
        return report;
    }
    for (req, d) in deferred {
        report.lines.push(format!(
            "{} waiting: created once a CustomResourceDefinition serves {}",
            kubectl_name(&d.object),
            d.object.kind().as_str()
        ));
        sim.defer_create(req);
    }
    for (req, d) in plan {
        let what = kubectl_name(&d.object);
        match req {
            None => report.lines.push(format!("{what} unchanged")),
            Some(req) => {
                let verb = if matches!(req, ApiRequest::Create(_)) {
                    "created"
                } else {
                    "configured"
                };
                match sim.submit(req) {
                    Ok(_) => report.lines.push(format!("{what} {verb}")),
                    Err(e) => {
                        report.ok = false;
                        report.diagnostics.push(diag_at(
                            file,
                            d.span.line,
                            d.span.col,
                            &d.object,
                            &e,
                        ));
                    }
                }
            }
        }
    }
    for c in &decoded.controllers {
        let spec = crate::sim::controllers::script::ScriptSpec::of(c);
        let verb = sim.run_script_controller(spec);
        report
            .lines
            .push(format!("controller.kubeloop.dev/{} {verb}", c.name));
    }
    report
}

/// The request `kubectl apply` would send: a create, or a 3-way-merged update, or nothing.
fn apply_request(
    d: &decode::DecodedObject,
    live: impl Fn(&ObjectKey) -> Option<Rc<Object>>,
) -> Result<Option<ApiRequest>, ApiError> {
    let obj = &d.object;
    let namespace = obj
        .kind()
        .namespaced()
        .then(|| obj.meta().namespace.as_str());
    let manifest = modified_configuration(namespace, &d.written);
    let last_applied = serde_json::to_string(&manifest).unwrap_or_default();
    match live(&obj.key()) {
        None => {
            let mut o = obj.clone();
            o.meta_mut().annotations.insert(LAST_APPLIED, last_applied);
            Ok(Some(ApiRequest::Create(o)))
        }
        Some(current) => {
            let previous = last_applied_of(&current);
            let live_json = current.to_json();
            let mut defaulted = obj.to_json();
            keep_allocated_node_ports(&mut defaulted, &live_json);
            let mut patch = three_way_patch(&previous, &manifest, &live_json, &defaulted);
            if let Json::Object(m) = &mut patch {
                m.remove("status");
            }
            let mut merged = live_json.clone();
            merge_patch(&mut merged, &patch);
            if let Some(ann) = merged
                .pointer_mut("/metadata/annotations")
                .and_then(|a| a.as_object_mut())
            {
                ann.insert(LAST_APPLIED.into(), Json::String(last_applied.clone()));
            } else if let Some(meta) = merged.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                meta.insert(
                    "annotations".into(),
                    serde_json::json!({ LAST_APPLIED: last_applied }),
                );
            }
            if merged == live_json {
                return Ok(None);
            }
            let updated = Object::from_json(obj.kind(), merged).map_err(|e| ApiError {
                reason: StatusReason::BadRequest,
                message: e.to_string(),
            })?;
            Ok(Some(ApiRequest::Update(updated)))
        }
    }
}

/// `kubectl delete -f`: each object the manifests name, deleted.
pub fn delete_text(sim: &mut Sim, file: &str, text: &str) -> ApplyReport {
    let decoded = decode::decode_manifests(file, text);
    let mut report = ApplyReport {
        diagnostics: decoded.diagnostics.clone(),
        ok: true,
        ..Default::default()
    };
    if report
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        report.ok = false;
        return report;
    }
    for d in &decoded.objects {
        let what = kubectl_name(&d.object);
        match sim.submit(ApiRequest::Delete {
            key: d.object.key(),
            options: DeleteOptions::default(),
        }) {
            Ok(_) => {
                // kubectl prints `deployment.apps "web" deleted` for deletes.
                let (resource, name) = what.split_once('/').unwrap_or((what.as_str(), ""));
                report.lines.push(format!("{resource} \"{name}\" deleted"))
            }
            Err(e) => {
                report.ok = false;
                report.lines.push(e.kubectl_message());
            }
        }
    }
    // A deleted Controller document stops its process, as deleting its Deployment would.
    for c in &decoded.controllers {
        let id = crate::sim::machinery::controller::ComponentId::Script(Str::from(c.name.as_str()));
        if sim.is_running(&id) && sim.retire_component(&id) {
            report
                .lines
                .push(format!("controller.kubeloop.dev \"{}\" deleted", c.name));
        } else {
            report.ok = false;
            report.lines.push(format!(
                "Error from server (NotFound): controllers.kubeloop.dev \"{}\" not found",
                c.name
            ));
        }
    }
    report
}

/// `deployment.apps/web`: how kubectl names an object in its output.
pub fn kubectl_name(obj: &Object) -> String {
    let kind = obj.kind();
    let group = kind.group();
    let singular = kind.as_str().to_ascii_lowercase();
    if group.is_empty() {
        format!("{singular}/{}", obj.meta().name)
    } else {
        format!("{singular}.{group}/{}", obj.meta().name)
    }
}

fn diag_at(file: &str, line: u32, col: u32, obj: &Object, e: &ApiError) -> Diagnostic {
    let message = match e.reason {
        StatusReason::Invalid => format!(
            "The {} {:?} is invalid: {}",
            obj.kind(),
            obj.meta().name,
            e.message
                .split_once(" is invalid: ")
                .map_or(e.message.as_str(), |(_, r)| r)
        ),
        _ => format!(
            "Error from server ({:?}): error when applying \"{file}\": {}",
            e.reason, e.message
        ),
    };
    Diagnostic {
        file: file.into(),
        line,
        col,
        severity: Severity::Error,
        message,
        field: None,
    }
}

/// The manifest an object was last applied with (its last-applied annotation), or null.
pub fn last_applied_of(obj: &Object) -> Json {
    obj.meta()
        .annotations
        .get(LAST_APPLIED)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Json::Null)
}

/// What kubectl's `GetModifiedConfiguration` makes of a manifest: the document as written, not
/// as the API server defaults it (a field the user never wrote is left to the server, so a
/// `kubectl patch` of it survives the next apply), with the namespace kubectl resolved and
/// `annotations` present but without the last-applied annotation itself, as kubectl encodes it
/// (`"annotations":{}` when there were none). Server-side fields and the status are left out.
pub fn modified_configuration(namespace: Option<&str>, written: &Json) -> Json {
    let mut manifest = written.clone();
    let Some(root) = manifest.as_object_mut() else {
        return manifest;
    };
    root.remove("status");
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Json::Object(Default::default()));
    if let Some(m) = meta.as_object_mut() {
        for k in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
        ] {
            m.remove(k);
        }
        if let Some(ns) = namespace {
            m.insert("namespace".into(), Json::String(ns.to_string()));
        }
        let annotations = m
            .entry("annotations")
            .or_insert_with(|| Json::Object(Default::default()));
        if let Some(a) = annotations.as_object_mut() {
            a.remove(LAST_APPLIED);
        }
    }
    manifest
}

/// Gives each port of a NodePort or LoadBalancer Service in `defaulted` the node port its
/// namesake holds in `live`, unless the manifest chose one. kubectl's strategic merge patch
/// merges `ports` by key and so keeps the port the server allocated; our merge patch replaces the
/// list whole, so without this every re-apply of such a Service would "configure" it.
fn keep_allocated_node_ports(defaulted: &mut Json, live: &Json) {
    let external = matches!(
        defaulted.pointer("/spec/type").and_then(Json::as_str),
        Some("NodePort" | "LoadBalancer")
    );
    let Some(live_ports) = live.pointer("/spec/ports").and_then(Json::as_array) else {
        return;
    };
    let Some(ports) = defaulted
        .pointer_mut("/spec/ports")
        .and_then(Json::as_array_mut)
        .filter(|_| external)
    else {
        return;
    };
    for p in ports.iter_mut().filter(|p| p.get("nodePort").is_none()) {
        let allocated = live_ports
            .iter()
            .find(|l| l.get("name") == p.get("name"))
            .and_then(|l| l.get("nodePort"))
            .cloned();
        if let (Some(np), Some(m)) = (allocated, p.as_object_mut()) {
            m.insert("nodePort".into(), np);
        }
    }
}

/// kubectl apply's 3-way merge, as a JSON merge patch: fields the user removed since the last
/// apply are deleted; fields the user sets now win over the live object; everything else (e.g.
/// a replica count changed by `kubectl scale` and not in the manifest) is left alone.
///
/// `last` and `new` are the manifests as written; a field `new` sets takes its value from
/// `defaulted` (`new` as the API server would default it) when that has one. A JSON merge patch
/// replaces a list whole, so a list the user wrote (`ports`) must carry the defaults the live
/// object has (`protocol: TCP`) or every re-apply would rewrite it; kubectl's strategic merge
/// patch merges list items by key instead.
pub fn three_way_patch(last: &Json, new: &Json, live: &Json, defaulted: &Json) -> Json {
    let mut patch = serde_json::Map::new();
    if let (Some(last_m), Some(new_m)) = (last.as_object(), new.as_object()) {
        for k in last_m.keys() {
            if !new_m.contains_key(k) {
                patch.insert(k.clone(), Json::Null);
            }
        }
    }
    if let Some(new_m) = new.as_object() {
        for (k, v) in new_m {
            let live_v = live.get(k).unwrap_or(&Json::Null);
            let last_v = last.get(k).unwrap_or(&Json::Null);
            let set_v = defaulted.get(k).unwrap_or(v);
            if v.is_object() && live_v.is_object() {
                let sub = three_way_patch(last_v, v, live_v, set_v);
                if sub.as_object().is_some_and(|m| !m.is_empty()) {
                    patch.insert(k.clone(), sub);
                }
            } else if set_v != live_v {
                patch.insert(k.clone(), set_v.clone());
            }
        }
    }
    Json::Object(patch)
}
