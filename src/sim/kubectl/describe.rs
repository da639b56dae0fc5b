//! `kubectl describe` for pods, deployments, replicasets, nodes, services, endpointslices and
//! PodDisruptionBudgets, written line by line as `staging/src/k8s.io/kubectl/pkg/describe` writes
//! them (tab-separated, through one tabwriter) and ending with the Events table.
//!
//! kubectl 1.34 is the model: the event message is printed without the field path that kubectl
//! 1.35 prepends.

use std::rc::Rc;

use serde_json::Value as Json;

use super::args::{flag, Args, Flag, FlagKind};
use super::printers::{cluster_ip, node_roles};
use super::resources::{self, Filter, Request};
use super::tabwriter::describe_text;
use super::util::{error, event_interval, fail, out, rfc1123z, since};
use super::CommandOutput;
use crate::sim::api::quantity::{format_bytes, parse_quantity, Quantity, QuantityFormat};
use crate::sim::api::types::LAST_APPLIED;
use crate::sim::api::types::{
    Container, ContainerState, ContainerStatus, CustomObject, Event, IntOrString, Kind,
    LabelSelector, Millis, Namespace, Object, ObjectKey, Pod, PodTemplateSpec, Probe, Str,
    StringMap, Time, Toleration,
};
use crate::sim::controllers::deployment::util::equal_ignore_hash;
use crate::sim::time::human_duration;
use crate::sim::world::Sim;
use crate::sort::StableSort;

/// Flags `kubectl describe` accepts.
pub const DESCRIBE_FLAGS: &[Flag] = &[
    flag("selector", Some('l'), FlagKind::Str),
    flag("all-namespaces", Some('A'), FlagKind::Bool),
    flag("show-events", None, FlagKind::Bool),
    flag("chunk-size", None, FlagKind::Int),
    flag("filename", Some('f'), FlagKind::Str),
];

const L1: &str = "  ";
const L2: &str = "    ";
const L3: &str = "      ";

/// `kubectl describe`.
pub fn describe(sim: &mut Sim, args: &Args) -> CommandOutput {
    if args.has("filename") {
        return error("describe -f is not supported in the playground; name the objects instead");
    }
    let request = match resources::parse_request(sim.api(), &args.positional, false) {
        Ok(Some(r)) => r,
        Ok(None) => {
            return fail("You must specify the type of resource to describe. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.\nSee 'kubectl describe -h' for help and examples\n");
        }
        Err(e) => return error(e),
    };
    let show_events = args.bool_or("show-events", true);
    let sim = &*sim;
    let ns = args.namespace();
    let all_ns = args.bool("all-namespaces");
    let filter = match Filter::from_args(args) {
        Ok(f) => f,
        Err(e) => return error(e),
    };
    let mut objs: Vec<Rc<Object>> = Vec::new();
    let mut errors = Vec::new();
    match &request {
        Request::Types(kinds) => {
            for k in kinds {
                objs.extend(resources::list(sim, *k, &ns, all_ns, &filter));
            }
            if objs.is_empty() {
                return CommandOutput {
                    stdout: String::new(),
                    stderr: if all_ns || !kinds.iter().any(|k| k.namespaced()) {
                        "No resources found\n".into()
                    } else {
                        format!("No resources found in {ns} namespace.\n")
                    },
                    ok: true,
                };
            }
        }
        Request::Names(names) => {
            for (kind, name) in names {
                match sim.api().get(&ObjectKey::new(*kind, &ns, name)) {
                    Some(o) => objs.push(o.clone()),
                    None => {
                        // `DescribeMatchingResources`: fall back to every object whose name starts with it.
                        let prefixed: Vec<Rc<Object>> =
                            resources::list(sim, *kind, &ns, false, &Filter::default())
                                .into_iter()
                                .filter(|o| o.meta().name.starts_with(name.as_str()))
                                .collect();
                        if prefixed.is_empty() {
                            errors.push(format!(
                                "Error from server (NotFound): {} \"{name}\" not found",
                                kind.resource()
                            ));
                        }
                        objs.extend(prefixed);
                    }
                }
            }
        }
    }
    let mut texts = Vec::new();
    for o in &objs {
        match describe_object(sim, o, show_events) {
            Ok(t) => texts.push(t),
            Err(e) => errors.push(e),
        }
    }
    CommandOutput {
        ok: errors.is_empty(),
        stdout: texts.join("\n\n"),
        stderr: errors.iter().map(|e| format!("{e}\n")).collect(),
    }
}

/// The description of one object (already through the tabwriter).
pub fn describe_object(sim: &Sim, o: &Object, show_events: bool) -> Result<String, String> {
    let now = sim.now();
    let events = if show_events {
        Some(events_for(sim, o))
    } else {
        None
    };
    let mut w = String::new();
    match o {
        Object::Namespace(ns) => namespace(&mut w, ns),
        Object::Pod(p) => pod(&mut w, now, p, events.as_deref()),
        Object::Deployment(_) => deployment(&mut w, sim, o, events.as_deref()),
        Object::ReplicaSet(_) => replica_set(&mut w, sim, o, events.as_deref()),
        Object::Node(_) => node(&mut w, sim, o, events.as_deref()),
        Object::Service(_) => service(&mut w, sim, o, events.as_deref()),
        Object::EndpointSlice(_) => endpoint_slice(&mut w, now, o, events.as_deref()),
        Object::PodDisruptionBudget(_) => pdb(&mut w, now, o, events.as_deref()),
        Object::Custom(c) if is_claim(c) => claim(&mut w, sim, c, events.as_deref()),
        Object::Custom(c) if has_own_describer(c) => stored(&mut w, now, c, events.as_deref()),
        Object::CustomResourceDefinition(_) | Object::Custom(_) => {
            generic(&mut w, now, o, events.as_deref())
        }
        Object::Event(_) | Object::Lease(_) => {
            return Err(format!(
            "error: describe {} is not supported in the playground (try kubectl get {} {} -o yaml)",
            o.kind().resource(),
            o.kind().resource(),
            o.meta().name
        ))
        }
    }
    Ok(describe_text(&w))
}

// ------------------------------------------------------------------ shared pieces

/// Events about an object, oldest first (`searchEvents` + `SortableEvents`).
pub fn events_for(sim: &Sim, o: &Object) -> Vec<Event> {
    let meta = o.meta();
    let kind = o.kind();
    let mut evs: Vec<Event> = sim
        .api()
        .list(Kind::Event)
        .filter_map(|e| e.as_event())
        .filter(|e| {
            let io = &e.involved_object;
            io.kind == kind.as_str()
                && io.name == meta.name
                && (!kind.namespaced() || io.namespace == meta.namespace)
                && (io.uid.is_empty() || io.uid == meta.uid || io.uid == meta.name)
        })
        .cloned()
        .collect();
    evs.stable_sort_by_key(|e| e.last_timestamp);
    evs
}

/// `DescribeEvents`.
fn events_table(w: &mut String, now: Millis, events: Option<&[Event]>) {
    let Some(events) = events else { return };
    if events.is_empty() {
        w.push_str("Events:\t<none>\n");
        return;
    }
    w.push_str("Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
    w.push_str("  ----\t------\t----\t----\t-------\n");
    for e in events {
        let interval = event_interval(now, e);
        let source = if e.source.component.is_empty() {
            e.reporting_component.clone().unwrap_or_default()
        } else {
            e.source.component.clone()
        };
        w.push_str(&format!(
            "{L1}{}\t{}\t{interval}\t{source}\t{}\n",
            e.type_,
            e.reason,
            e.message.trim()
        ));
    }
}

/// `printLabelsMultilineWithIndent`.
fn labels_multiline(w: &mut String, indent: &str, title: &str, labels: &StringMap) {
    w.push_str(&format!("{indent}{title}:\t"));
    if labels.is_empty() {
        w.push_str("<none>\n");
        return;
    }
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            w.push_str(indent);
            w.push('\t');
        }
        w.push_str(&format!("{k}={v}\n"));
    }
}

/// `printAnnotationsMultiline`: skips the last-applied annotation, folds long values.
fn annotations_multiline(w: &mut String, title: &str, annotations: &StringMap) {
    w.push_str(&format!("{title}:\t"));
    let shown: Vec<(&Str, &Str)> = annotations
        .iter()
        .filter(|(k, _)| k.as_str() != LAST_APPLIED)
        .collect();
    if shown.is_empty() {
        w.push_str("<none>\n");
        return;
    }
    for (i, (k, value)) in shown.iter().enumerate() {
        if i > 0 {
            w.push('\t');
        }
        let value = value.trim_end_matches('\n');
        if value.len() + k.len() + 2 > 140 || value.contains('\n') {
            w.push_str(&format!("{k}:\n"));
            for s in value.split('\n') {
                let s = if s.len() > 138 {
                    format!("{}...", &s[..s.floor_char_boundary_compat(138)])
                } else {
                    s.to_string()
                };
                w.push_str(&format!("\t  {s}\n"));
            }
        } else {
            w.push_str(&format!("{k}: {value}\n"));
        }
    }
}

trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}

impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        while i > 0 && !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

/// `printTolerationsMultilineWithIndent`.
fn tolerations_multiline(w: &mut String, indent: &str, title: &str, tolerations: &[Toleration]) {
    w.push_str(&format!("{indent}{title}:\t"));
    if tolerations.is_empty() {
        w.push_str("<none>\n");
        return;
    }
    let mut sorted: Vec<&Toleration> = tolerations.iter().collect();
    sorted.stable_sort_by(|a, b| a.key.cmp(&b.key));
    for (i, t) in sorted.iter().enumerate() {
        if i > 0 {
            w.push_str(indent);
            w.push('\t');
        }
        let key = t.key.as_deref().unwrap_or("");
        let value = t.value.as_deref().unwrap_or("");
        let effect = t.effect.as_deref().unwrap_or("");
        w.push_str(key);
        if !value.is_empty() {
            w.push_str(&format!("={value}"));
        }
        if !effect.is_empty() {
            w.push_str(&format!(":{effect}"));
        }
        if t.operator.as_deref() == Some("Exists") && value.is_empty() {
            if !key.is_empty() || !effect.is_empty() {
                w.push_str(" op=Exists");
            } else {
                w.push_str("op=Exists");
            }
        }
        if let Some(s) = t.toleration_seconds {
            w.push_str(&format!(" for {s}s"));
        }
        w.push('\n');
    }
}

fn controlled_by(o: &Object) -> Option<String> {
    o.meta()
        .controller_ref()
        .map(|r| format!("{}/{}", r.kind, r.name))
}

fn selector_string(sel: &LabelSelector) -> String {
    // `LabelSelectorAsSelector(...).String()`: requirements sorted by key.
    let mut parts: Vec<(String, String)> = sel
        .match_labels
        .iter()
        .map(|(k, v)| (k.to_string(), format!("{k}={v}")))
        .collect();
    for e in &sel.match_expressions {
        let mut values = e.values.clone();
        values.stable_sort();
        let s = match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, values.join(",")),
            "Exists" => e.key.clone(),
            _ => format!("!{}", e.key),
        };
        parts.push((e.key.clone(), s));
    }
    parts.stable_sort_by(|a, b| a.0.cmp(&b.0));
    parts
        .into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(",")
}

fn go_time(t: Option<Time>) -> String {
    match t {
        Some(t) => rfc1123z(t),
        None => "Mon, 01 Jan 0001 00:00:00 +0000".into(),
    }
}

fn int_or_string(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

// ------------------------------------------------------------------ containers

fn container_ports(c: &Container, host: bool) -> String {
    c.ports
        .iter()
        .map(|p| {
            let n = if host {
                p.host_port.unwrap_or(0)
            } else {
                p.container_port
            };
            let mut s = format!("{n}/{}", p.protocol.as_deref().unwrap_or("TCP"));
            if let Some(name) = p.name.as_deref().filter(|n| !n.is_empty()) {
                s = format!("{s} ({name})");
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn state_lines(w: &mut String, name: &str, s: &ContainerState) {
    if s.running.is_some() {
        w.push_str(&format!("{L2}{name}:\tRunning\n"));
        w.push_str(&format!(
            "{L3}Started:\t{}\n",
            go_time(s.running.as_ref().and_then(|r| r.started_at))
        ));
    } else if let Some(wt) = &s.waiting {
        w.push_str(&format!("{L2}{name}:\tWaiting\n"));
        if let Some(r) = wt.reason.as_deref().filter(|r| !r.is_empty()) {
            w.push_str(&format!("{L3}Reason:\t{r}\n"));
        }
    } else if let Some(t) = &s.terminated {
        w.push_str(&format!("{L2}{name}:\tTerminated\n"));
        if let Some(r) = t.reason.as_deref().filter(|r| !r.is_empty()) {
            w.push_str(&format!("{L3}Reason:\t{r}\n"));
        }
        if let Some(m) = t.message.as_deref().filter(|m| !m.is_empty()) {
            w.push_str(&format!("{L3}Message:\t{m}\n"));
        }
        w.push_str(&format!("{L3}Exit Code:\t{}\n", t.exit_code));
        w.push_str(&format!("{L3}Started:\t{}\n", go_time(t.started_at)));
        w.push_str(&format!("{L3}Finished:\t{}\n", go_time(t.finished_at)));
    } else {
        w.push_str(&format!("{L2}{name}:\tWaiting\n"));
    }
}

/// `DescribeProbe`.
fn probe_text(p: &Probe) -> String {
    let attrs = format!(
        "delay={}s timeout={}s period={}s #success={} #failure={}",
        p.initial_delay_seconds.unwrap_or(0),
        p.timeout_seconds.unwrap_or(1),
        p.period_seconds.unwrap_or(10),
        p.success_threshold.unwrap_or(1),
        p.failure_threshold.unwrap_or(3)
    );
    if let Some(e) = &p.exec {
        let cmd: Vec<String> = e
            .get("command")
            .and_then(|c| c.as_array())
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        return format!("exec [{}] {attrs}", cmd.join(" "));
    }
    if let Some(h) = &p.http_get {
        let scheme = h.scheme.as_deref().unwrap_or("HTTP").to_ascii_lowercase();
        let host = h.host.as_deref().unwrap_or("");
        return format!(
            "http-get {scheme}://{host}:{}{} {attrs}",
            int_or_string(&h.port),
            h.path.as_deref().unwrap_or("")
        );
    }
    if let Some(t) = &p.tcp_socket {
        let host = t.get("host").and_then(|v| v.as_str()).unwrap_or("");
        let port = t.get("port").map_or(String::new(), |v| match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        });
        return format!("tcp-socket {host}:{port} {attrs}");
    }
    if let Some(g) = &p.grpc {
        let port = g.get("port").and_then(|v| v.as_i64()).unwrap_or(0);
        let service = g.get("service").and_then(|v| v.as_str()).unwrap_or("");
        return format!("grpc <pod>:{port} {service} {attrs}");
    }
    format!("unknown {attrs}")
}

fn env_value_from(pod: Option<&Pod>, path: &str) -> String {
    let Some(p) = pod else { return String::new() };
    match path {
        "metadata.name" => p.metadata.name.to_string(),
        "metadata.namespace" => p.metadata.namespace.to_string(),
        "metadata.uid" => p.metadata.uid.to_string(),
        "spec.nodeName" => p.spec.node_name.to_string(),
        "spec.serviceAccountName" => p
            .spec
            .service_account_name
            .as_deref()
            .unwrap_or_default()
            .to_string(),
        "status.podIP" => p.status.pod_ip.as_deref().unwrap_or_default().to_string(),
        "status.hostIP" => p.status.host_ip.as_deref().unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

fn resources_lines(w: &mut String, level: &str, deeper: &str, c: &Container) {
    let Some(r) = &c.resources else { return };
    if !r.limits.is_empty() {
        w.push_str(&format!("{level}Limits:\n"));
    }
    for (k, v) in &r.limits {
        w.push_str(&format!("{deeper}{k}:\t{}\n", canonical(v)));
    }
    if !r.requests.is_empty() {
        w.push_str(&format!("{level}Requests:\n"));
    }
    for (k, v) in &r.requests {
        w.push_str(&format!("{deeper}{k}:\t{}\n", canonical(v)));
    }
}

fn canonical(q: &str) -> String {
    parse_quantity(q).map_or_else(|_| q.to_string(), |q| q.to_string())
}

fn json_array(v: &Option<Box<Json>>) -> Vec<Json> {
    v.as_ref()
        .and_then(|x| x.as_array())
        .cloned()
        .unwrap_or_default()
}

fn str_of(v: &Json, key: &str) -> String {
    v.get(key)
        .map(|x| match x {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

/// `describeContainers`; `space` is `""` for a pod and `"  "` inside a pod template.
fn containers(
    w: &mut String,
    label: &str,
    list: &[Container],
    statuses: &[ContainerStatus],
    pod: Option<&Pod>,
    space: &str,
) {
    w.push_str(&format!(
        "{space}{label}:{}\n",
        if list.is_empty() { " <none>" } else { "" }
    ));
    let name_indent = if space.is_empty() { "" } else { " " };
    for c in list {
        let status = statuses.iter().find(|s| s.name == c.name);
        w.push_str(&format!("{L1}{name_indent}{}:\n", c.name));
        if let Some(s) = status {
            w.push_str(&format!(
                "{L2}Container ID:\t{}\n",
                s.container_id.as_deref().unwrap_or("")
            ));
        }
        w.push_str(&format!("{L2}Image:\t{}\n", c.image));
        if let Some(s) = status {
            w.push_str(&format!(
                "{L2}Image ID:\t{}\n",
                s.image_id.as_deref().unwrap_or("")
            ));
        }
        let ports = container_ports(c, false);
        let host_ports = container_ports(c, true);
        let none = |s: &str| {
            if s.is_empty() {
                "<none>".to_string()
            } else {
                s.to_string()
            }
        };
        if ports.contains(',') {
            w.push_str(&format!("{L2}Ports:\t{ports}\n"));
        } else {
            w.push_str(&format!("{L2}Port:\t{}\n", none(&ports)));
        }
        if host_ports.contains(',') {
            w.push_str(&format!("{L2}Host Ports:\t{host_ports}\n"));
        } else {
            w.push_str(&format!("{L2}Host Port:\t{}\n", none(&host_ports)));
        }
        for (title, v) in [("Command", &c.command), ("Args", &c.args)] {
            let items = json_array(v);
            if !items.is_empty() {
                w.push_str(&format!("{L2}{title}:\n"));
                for it in items {
                    for line in it.as_str().unwrap_or_default().split('\n') {
                        w.push_str(&format!("{L3}{line}\n"));
                    }
                }
            }
        }
        if let Some(s) = status {
            state_lines(w, "State", &s.state);
            if let Some(last) = s.last_state.as_ref().filter(|l| l.terminated.is_some()) {
                state_lines(w, "Last State", last);
            }
            w.push_str(&format!(
                "{L2}Ready:\t{}\n",
                if s.ready { "True" } else { "False" }
            ));
            w.push_str(&format!("{L2}Restart Count:\t{}\n", s.restart_count));
        }
        resources_lines(w, L2, L3, c);
        for (title, p) in [
            ("Liveness", &c.liveness_probe),
            ("Readiness", &c.readiness_probe),
            ("Startup", &c.startup_probe),
        ] {
            if let Some(p) = p {
                w.push_str(&format!("{L2}{title}:\t{}\n", probe_text(p)));
            }
        }
        let env = json_array(&c.env);
        if env.is_empty() {
            w.push_str(&format!("{L2}Environment:\t<none>\n"));
        } else {
            w.push_str(&format!("{L2}Environment:\n"));
        }
        for e in &env {
            let name = str_of(e, "name");
            match e.get("valueFrom") {
                None => {
                    let value = str_of(e, "value");
                    for (i, line) in value.split('\n').enumerate() {
                        if i == 0 {
                            w.push_str(&format!("{L3}{name}:\t{line}\n"));
                        } else {
                            w.push_str(&format!("{L3}\t{line}\n"));
                        }
                    }
                }
                Some(vf) => {
                    if let Some(f) = vf.get("fieldRef") {
                        let path = str_of(f, "fieldPath");
                        let api = f.get("apiVersion").and_then(|v| v.as_str()).unwrap_or("v1");
                        w.push_str(&format!(
                            "{L3}{name}:\t{} ({api}:{path})\n",
                            env_value_from(pod, &path)
                        ));
                    } else if let Some(r) = vf.get("resourceFieldRef") {
                        w.push_str(&format!("{L3}{name}:\t ({})\n", str_of(r, "resource")));
                    } else if let Some(s) = vf.get("secretKeyRef") {
                        w.push_str(&format!(
                            "{L3}{name}:\t<set to the key '{}' in secret '{}'>\tOptional: {}\n",
                            str_of(s, "key"),
                            str_of(s, "name"),
                            s.get("optional").and_then(|o| o.as_bool()).unwrap_or(false)
                        ));
                    } else if let Some(s) = vf.get("configMapKeyRef") {
                        w.push_str(&format!(
                            "{L3}{name}:\t<set to the key '{}' of config map '{}'>\tOptional: {}\n",
                            str_of(s, "key"),
                            str_of(s, "name"),
                            s.get("optional").and_then(|o| o.as_bool()).unwrap_or(false)
                        ));
                    }
                }
            }
        }
        let mut mounts = json_array(&c.volume_mounts);
        mounts.stable_sort_by_key(|m| str_of(m, "mountPath"));
        if mounts.is_empty() {
            w.push_str(&format!("{L2}Mounts:\t<none>\n"));
        } else {
            w.push_str(&format!("{L2}Mounts:\n"));
        }
        for m in &mounts {
            let mut flags = vec![
                if m.get("readOnly").and_then(|r| r.as_bool()) == Some(true) {
                    "ro".to_string()
                } else {
                    "rw".to_string()
                },
            ];
            let sub = str_of(m, "subPath");
            if !sub.is_empty() {
                flags.push(format!("path={sub:?}"));
            }
            w.push_str(&format!(
                "{L3}{} from {} ({})\n",
                str_of(m, "mountPath"),
                str_of(m, "name"),
                flags.join(",")
            ));
        }
    }
}

/// `describeVolumes` for the volume types manifests commonly use.
fn volumes(w: &mut String, vols: &Option<Box<Json>>, space: &str) {
    let vols = json_array(vols);
    if vols.is_empty() {
        w.push_str(&format!("{space}Volumes:\t<none>\n"));
        return;
    }
    w.push_str(&format!("{space}Volumes:\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for v in &vols {
        w.push_str(&format!("{L1}{name_indent}{}:\n", str_of(v, "name")));
        if let Some(e) = v.get("emptyDir") {
            let size = str_of(e, "sizeLimit");
            w.push_str(&format!(
                "{L2}Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n{L2}Medium:\t{}\n{L2}SizeLimit:\t{}\n",
                str_of(e, "medium"),
                if size.is_empty() { "<unset>".into() } else { size }
            ));
        } else if let Some(c) = v.get("configMap") {
            w.push_str(&format!(
                "{L2}Type:\tConfigMap (a volume populated by a ConfigMap)\n{L2}Name:\t{}\n{L2}Optional:\t{}\n",
                str_of(c, "name"),
                c.get("optional").and_then(|o| o.as_bool()).unwrap_or(false)
            ));
        } else if let Some(s) = v.get("secret") {
            w.push_str(&format!(
                "{L2}Type:\tSecret (a volume populated by a Secret)\n{L2}SecretName:\t{}\n{L2}Optional:\t{}\n",
                str_of(s, "secretName"),
                s.get("optional").and_then(|o| o.as_bool()).unwrap_or(false)
            ));
        } else if let Some(h) = v.get("hostPath") {
            let t = str_of(h, "type");
            w.push_str(&format!(
                "{L2}Type:\tHostPath (bare host directory volume)\n{L2}Path:\t{}\n{L2}HostPathType:\t{}\n",
                str_of(h, "path"),
                if t.is_empty() { "<none>".into() } else { t }
            ));
        } else if let Some(c) = v.get("persistentVolumeClaim") {
            w.push_str(&format!(
                "{L2}Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n{L2}ClaimName:\t{}\n{L2}ReadOnly:\t{}\n",
                str_of(c, "claimName"),
                c.get("readOnly").and_then(|o| o.as_bool()).unwrap_or(false)
            ));
        } else {
            w.push_str(&format!("{L1}<unknown>\n"));
        }
    }
}

/// `DescribePodTemplate`.
pub fn pod_template(w: &mut String, t: &PodTemplateSpec) {
    w.push_str("Pod Template:\n");
    labels_multiline(w, "  ", "Labels", &t.metadata.labels);
    if !t.metadata.annotations.is_empty() {
        annotations_multiline(w, "  Annotations", &t.metadata.annotations);
    }
    if let Some(sa) = t
        .spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.push_str(&format!("{L1}Service Account:\t{sa}\n"));
    }
    if !t.spec.init_containers.is_empty() {
        containers(
            w,
            "Init Containers",
            &t.spec.init_containers,
            &[],
            None,
            "  ",
        );
    }
    containers(w, "Containers", &t.spec.containers, &[], None, "  ");
    volumes(w, &t.spec.volumes, "  ");
    if let Some(pc) = t
        .spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.push_str(&format!("{L1}Priority Class Name:\t{pc}\n"));
    }
    labels_multiline(w, "  ", "Node-Selectors", &t.spec.node_selector);
    tolerations_multiline(w, "  ", "Tolerations", &t.spec.tolerations);
}

// ------------------------------------------------------------------ pods

fn qos_class(p: &Pod) -> String {
    if let Some(q) = p.status.qos_class.as_deref().filter(|q| !q.is_empty()) {
        return q.to_string();
    }
    let all: Vec<&Container> = p
        .spec
        .containers
        .iter()
        .chain(p.spec.init_containers.iter())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &all {
        let (req, lim) = c
            .resources
            .as_ref()
            .map_or((None, None), |r| (Some(&r.requests), Some(&r.limits)));
        let empty = StringMap::new();
        let (req, lim) = (req.unwrap_or(&empty), lim.unwrap_or(&empty));
        if !req.is_empty() || !lim.is_empty() {
            any = true;
        }
        for res in ["cpu", "memory"] {
            match lim.get(res) {
                Some(l) => {
                    if req.get(res).is_some_and(|r| canonical(r) != canonical(l)) {
                        guaranteed = false;
                    }
                }
                None => guaranteed = false,
            }
        }
    }
    if !any {
        "BestEffort".into()
    } else if guaranteed {
        "Guaranteed".into()
    } else {
        "Burstable".into()
    }
}

fn pod(w: &mut String, now: Millis, p: &Pod, events: Option<&[Event]>) {
    let m = &p.metadata;
    w.push_str(&format!("Name:\t{}\n", m.name));
    w.push_str(&format!("Namespace:\t{}\n", m.namespace));
    if let Some(pr) = p.spec.priority {
        w.push_str(&format!("Priority:\t{pr}\n"));
    }
    if let Some(pc) = p
        .spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.push_str(&format!("Priority Class Name:\t{pc}\n"));
    }
    if let Some(sa) = p
        .spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.push_str(&format!("Service Account:\t{sa}\n"));
    }
    if p.spec.node_name.is_empty() {
        w.push_str("Node:\t<none>\n");
    } else {
        w.push_str(&format!(
            "Node:\t{}/{}\n",
            p.spec.node_name,
            p.status.host_ip.as_deref().unwrap_or("")
        ));
    }
    if let Some(t) = p.status.start_time {
        w.push_str(&format!("Start Time:\t{}\n", rfc1123z(t)));
    }
    labels_multiline(w, "", "Labels", &m.labels);
    annotations_multiline(w, "Annotations", &m.annotations);
    let terminal = p.status.phase == "Succeeded" || p.status.phase == "Failed";
    match m.deletion_timestamp {
        Some(dt) if !terminal => {
            w.push_str(&format!(
                "Status:\tTerminating (lasts {})\n",
                human_duration(now as i64 - dt.0 as i64)
            ));
            w.push_str(&format!(
                "Termination Grace Period:\t{}s\n",
                m.deletion_grace_period_seconds.unwrap_or(0)
            ));
        }
        _ if p.status.phase.is_empty() => w.push_str("Status:\tPending\n"),
        _ => w.push_str(&format!("Status:\t{}\n", p.status.phase)),
    }
    if let Some(r) = p.status.reason.as_deref().filter(|s| !s.is_empty()) {
        w.push_str(&format!("Reason:\t{r}\n"));
    }
    if let Some(msg) = p.status.message.as_deref().filter(|s| !s.is_empty()) {
        w.push_str(&format!("Message:\t{msg}\n"));
    }
    let ip = p.status.pod_ip.clone().unwrap_or_default();
    w.push_str(&format!("IP:\t{ip}\n"));
    if ip.is_empty() {
        w.push_str("IPs:\t<none>\n");
    } else {
        w.push_str(&format!("IPs:\n{L1}IP:\t{ip}\n"));
    }
    if let Some(r) = p.metadata.controller_ref() {
        w.push_str(&format!("Controlled By:\t{}/{}\n", r.kind, r.name));
    }
    if let Some(n) = p
        .status
        .nominated_node_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.push_str(&format!("NominatedNodeName:\t{n}\n"));
    }
    if !p.spec.init_containers.is_empty() {
        containers(
            w,
            "Init Containers",
            &p.spec.init_containers,
            &p.status.init_container_statuses,
            Some(p),
            "",
        );
    }
    containers(
        w,
        "Containers",
        &p.spec.containers,
        &p.status.container_statuses,
        Some(p),
        "",
    );
    if !p.status.conditions.is_empty() {
        w.push_str("Conditions:\n  Type\tStatus\n");
        for c in &p.status.conditions {
            w.push_str(&format!("{L1}{} \t{} \n", c.type_, c.status));
        }
    }
    volumes(w, &p.spec.volumes, "");
    w.push_str(&format!("QoS Class:\t{}\n", qos_class(p)));
    labels_multiline(w, "", "Node-Selectors", &p.spec.node_selector);
    tolerations_multiline(w, "", "Tolerations", &p.spec.tolerations);
    events_table(w, now, events);
}

// ------------------------------------------------------------------ workloads

fn owned_replica_sets<'a>(sim: &'a Sim, d: &Object) -> Vec<&'a Rc<Object>> {
    let dep = d.as_deployment().expect("a Deployment");
    sim.api()
        .list(Kind::ReplicaSet)
        .filter(|o| {
            o.meta().namespace == dep.metadata.namespace
                && o.meta()
                    .controller_ref()
                    .is_some_and(|r| r.uid == dep.metadata.uid)
                && dep.spec.selector.matches(&o.meta().labels)
        })
        .collect()
}

fn rs_list(rss: &[&Rc<Object>]) -> String {
    if rss.is_empty() {
        return "<none>".into();
    }
    rss.iter()
        .filter_map(|o| o.as_replica_set())
        .map(|rs| {
            format!(
                "{} ({}/{} replicas created)",
                rs.metadata.name,
                rs.status.replicas,
                rs.spec.replicas.unwrap_or(1)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn deployment(w: &mut String, sim: &Sim, o: &Object, events: Option<&[Event]>) {
    let d = o.as_deployment().expect("a Deployment");
    let now = sim.now();
    w.push_str(&format!("Name:\t{}\n", d.metadata.name));
    w.push_str(&format!("Namespace:\t{}\n", d.metadata.namespace));
    w.push_str(&format!(
        "CreationTimestamp:\t{}\n",
        go_time(d.metadata.creation_timestamp)
    ));
    labels_multiline(w, "", "Labels", &d.metadata.labels);
    annotations_multiline(w, "Annotations", &d.metadata.annotations);
    w.push_str(&format!(
        "Selector:\t{}\n",
        selector_string(&d.spec.selector)
    ));
    w.push_str(&format!(
        "Replicas:\t{} desired | {} updated | {} total | {} available | {} unavailable\n",
        d.spec.replicas.unwrap_or(1),
        d.status.updated_replicas,
        d.status.replicas,
        d.status.available_replicas,
        d.status.unavailable_replicas
    ));
    let strategy = d.spec.strategy.clone().unwrap_or_default();
    w.push_str(&format!(
        "StrategyType:\t{}\n",
        strategy.type_.as_deref().unwrap_or("")
    ));
    w.push_str(&format!("MinReadySeconds:\t{}\n", d.spec.min_ready_seconds));
    if let Some(ru) = &strategy.rolling_update {
        let s = |v: &Option<IntOrString>| v.as_ref().map_or("0".into(), int_or_string);
        w.push_str(&format!(
            "RollingUpdateStrategy:\t{} max unavailable, {} max surge\n",
            s(&ru.max_unavailable),
            s(&ru.max_surge)
        ));
    }
    pod_template(w, &d.spec.template);
    if !d.status.conditions.is_empty() {
        w.push_str("Conditions:\n  Type\tStatus\tReason\n");
        w.push_str(&format!("{L1}----\t------\t------\n"));
        for c in &d.status.conditions {
            w.push_str(&format!(
                "{L1}{} \t{}\t{}\n",
                c.type_,
                c.status,
                c.reason.as_deref().unwrap_or("")
            ));
        }
    }
    let rss = owned_replica_sets(sim, o);
    // `FindNewReplicaSet`: the oldest RS whose template matches; every other one is old.
    let mut by_age: Vec<&&Rc<Object>> = rss.iter().collect();
    by_age.stable_sort_by_key(|o| (o.meta().creation_timestamp, o.meta().name.clone()));
    let new_rs = by_age
        .iter()
        .find(|o| {
            o.as_replica_set()
                .is_some_and(|rs| equal_ignore_hash(&rs.spec.template, &d.spec.template))
        })
        .map(|o| (**o).clone());
    let old: Vec<&Rc<Object>> = rss
        .iter()
        .filter(|o| new_rs.as_ref().is_none_or(|n| n.meta().uid != o.meta().uid))
        .copied()
        .collect();
    if !old.is_empty() || new_rs.is_some() {
        w.push_str(&format!("OldReplicaSets:\t{}\n", rs_list(&old)));
        let new: Vec<&Rc<Object>> = new_rs.iter().collect();
        w.push_str(&format!("NewReplicaSet:\t{}\n", rs_list(&new)));
    }
    events_table(w, now, events);
}

/// Pods counted by phase for a controller (`getPodStatusForController`).
fn pod_counts(sim: &Sim, ns: &str, sel: &LabelSelector, uid: &str) -> (usize, usize, usize, usize) {
    let (mut running, mut waiting, mut succeeded, mut failed) = (0, 0, 0, 0);
    for o in sim.api().list(Kind::Pod) {
        let Some(p) = o.as_pod() else { continue };
        if p.metadata.namespace != ns
            || !sel.matches(&p.metadata.labels)
            || p.metadata.controller_ref().is_none_or(|r| r.uid != uid)
        {
            continue;
        }
        match p.status.phase.as_str() {
            "Running" => running += 1,
            "Pending" => waiting += 1,
            "Succeeded" => succeeded += 1,
            "Failed" => failed += 1,
            _ => {}
        }
    }
    (running, waiting, succeeded, failed)
}

fn replica_set(w: &mut String, sim: &Sim, o: &Object, events: Option<&[Event]>) {
    let rs = o.as_replica_set().expect("a ReplicaSet");
    w.push_str(&format!("Name:\t{}\n", rs.metadata.name));
    w.push_str(&format!("Namespace:\t{}\n", rs.metadata.namespace));
    w.push_str(&format!(
        "Selector:\t{}\n",
        selector_string(&rs.spec.selector)
    ));
    labels_multiline(w, "", "Labels", &rs.metadata.labels);
    annotations_multiline(w, "Annotations", &rs.metadata.annotations);
    if let Some(c) = controlled_by(o) {
        w.push_str(&format!("Controlled By:\t{c}\n"));
    }
    w.push_str(&format!(
        "Replicas:\t{} current / {} desired\n",
        rs.status.replicas,
        rs.spec.replicas.unwrap_or(1)
    ));
    let (r, wt, s, f) = pod_counts(
        sim,
        &rs.metadata.namespace,
        &rs.spec.selector,
        &rs.metadata.uid,
    );
    w.push_str(&format!(
        "Pods Status:\t{r} Running / {wt} Waiting / {s} Succeeded / {f} Failed\n"
    ));
    pod_template(w, &rs.spec.template);
    if !rs.status.conditions.is_empty() {
        w.push_str("Conditions:\n  Type\tStatus\tReason\n");
        w.push_str(&format!("{L1}----\t------\t------\n"));
        for c in &rs.status.conditions {
            w.push_str(&format!(
                "{L1}{} \t{}\t{}\n",
                c.type_,
                c.status,
                c.reason.as_deref().unwrap_or("")
            ));
        }
    }
    events_table(w, sim.now(), events);
}

// ------------------------------------------------------------------ nodes

/// Σ of quantities the way `Quantity.Add` keeps the first operand's format.
#[derive(Clone, Copy, Default)]
struct Sum {
    nanos: i128,
    format: Option<QuantityFormat>,
}

impl Sum {
    fn add(&mut self, q: &Quantity) {
        self.nanos += q.nanos();
        self.format.get_or_insert(q.format());
    }

    fn max(&mut self, other: &Sum) {
        if other.nanos > self.nanos {
            *self = *other;
        }
    }

    fn text(&self) -> String {
        if self.nanos == 0 {
            return "0".into();
        }
        if self.format == Some(QuantityFormat::BinarySI) && self.nanos % 1_000_000_000 == 0 {
            return format_bytes((self.nanos / 1_000_000_000) as i64);
        }
        parse_quantity(&format!("{}n", self.nanos)).map_or_else(|_| "0".into(), |q| q.to_string())
    }

    fn millis(&self) -> i128 {
        (self.nanos + 999_999) / 1_000_000
    }

    fn units(&self) -> i128 {
        (self.nanos + 999_999_999) / 1_000_000_000
    }
}

/// A pod's total requests and limits for cpu and memory (`resourcehelper.PodRequests/Limits`):
/// containers add up, each init container can raise the total.
fn pod_totals(p: &Pod, limits: bool) -> (Sum, Sum) {
    let pick = |c: &Container, res: &str| -> Option<Quantity> {
        let r = c.resources.as_ref()?;
        let list = if limits { &r.limits } else { &r.requests };
        parse_quantity(list.get(res)?).ok()
    };
    let mut cpu = Sum::default();
    let mut mem = Sum::default();
    for c in &p.spec.containers {
        if let Some(q) = pick(c, "cpu") {
            cpu.add(&q);
        }
        if let Some(q) = pick(c, "memory") {
            mem.add(&q);
        }
    }
    for c in &p.spec.init_containers {
        let mut ic = Sum::default();
        let mut im = Sum::default();
        if let Some(q) = pick(c, "cpu") {
            ic.add(&q);
        }
        if let Some(q) = pick(c, "memory") {
            im.add(&q);
        }
        cpu.max(&ic);
        mem.max(&im);
    }
    (cpu, mem)
}

fn percent(part: i128, whole: i128) -> i64 {
    if whole == 0 {
        return 0;
    }
    (part as f64 / whole as f64 * 100.0) as i64
}

fn node(w: &mut String, sim: &Sim, o: &Object, events: Option<&[Event]>) {
    let n = o.as_node().expect("a Node");
    let now = sim.now();
    w.push_str(&format!("Name:\t{}\n", n.metadata.name));
    let roles = node_roles(n);
    w.push_str(&format!(
        "Roles:\t{}\n",
        if roles.is_empty() {
            "<none>".into()
        } else {
            roles.join(",")
        }
    ));
    labels_multiline(w, "", "Labels", &n.metadata.labels);
    annotations_multiline(w, "Annotations", &n.metadata.annotations);
    w.push_str(&format!(
        "CreationTimestamp:\t{}\n",
        go_time(n.metadata.creation_timestamp)
    ));
    w.push_str("Taints:\t");
    if n.spec.taints.is_empty() {
        w.push_str("<none>\n");
    } else {
        let mut taints = n.spec.taints.clone();
        taints.stable_sort_by(|a, b| {
            format!("{},{}", a.effect, a.key).cmp(&format!("{},{}", b.effect, b.key))
        });
        for (i, t) in taints.iter().enumerate() {
            if i > 0 {
                w.push('\t');
            }
            match t.value.as_deref().filter(|v| !v.is_empty()) {
                Some(v) => w.push_str(&format!("{}={v}:{}\n", t.key, t.effect)),
                None => w.push_str(&format!("{}:{}\n", t.key, t.effect)),
            }
        }
    }
    w.push_str(&format!("Unschedulable:\t{}\n", n.spec.unschedulable));
    match sim
        .api()
        .get(&ObjectKey::new(
            Kind::Lease,
            "kube-node-lease",
            &n.metadata.name,
        ))
        .and_then(|l| l.as_lease())
    {
        Some(l) => {
            w.push_str("Lease:\n");
            w.push_str(&format!(
                "{L1}HolderIdentity:\t{}\n",
                l.spec.holder_identity.as_deref().unwrap_or("<unset>")
            ));
            w.push_str(&format!("{L1}AcquireTime:\t<unset>\n"));
            w.push_str(&format!(
                "{L1}RenewTime:\t{}\n",
                l.spec.renew_time.map_or("<unset>".into(), rfc1123z)
            ));
        }
        None => w.push_str(&format!(
            "Lease:\tFailed to get lease: leases.coordination.k8s.io \"{}\" not found\n",
            n.metadata.name
        )),
    }
    if !n.status.conditions.is_empty() {
        w.push_str(
            "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n",
        );
        w.push_str(&format!(
            "{L1}----\t------\t-----------------\t------------------\t------\t-------\n"
        ));
        for c in &n.status.conditions {
            w.push_str(&format!(
                "{L1}{} \t{} \t{} \t{} \t{} \t{}\n",
                c.type_,
                c.status,
                go_time(c.last_heartbeat_time),
                go_time(c.last_transition_time),
                c.reason.as_deref().unwrap_or(""),
                c.message.as_deref().unwrap_or("")
            ));
        }
    }
    w.push_str("Addresses:\n");
    for a in json_array(&n.status.addresses) {
        w.push_str(&format!(
            "{L1}{}:\t{}\n",
            str_of(&a, "type"),
            str_of(&a, "address")
        ));
    }
    for (title, list) in [
        ("Capacity", &n.status.capacity),
        ("Allocatable", &n.status.allocatable),
    ] {
        if !list.is_empty() {
            w.push_str(&format!("{title}:\n"));
            for (k, v) in list {
                w.push_str(&format!("  {k}:\t{}\n", canonical(v)));
            }
        }
    }
    let info = |k: &str| {
        n.status
            .node_info
            .as_ref()
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    w.push_str("System Info:\n");
    for (label, key) in [
        ("Machine ID", "machineID"),
        ("System UUID", "systemUUID"),
        ("Boot ID", "bootID"),
        ("Kernel Version", "kernelVersion"),
        ("OS Image", "osImage"),
        ("Operating System", "operatingSystem"),
        ("Architecture", "architecture"),
        ("Container Runtime Version", "containerRuntimeVersion"),
        ("Kubelet Version", "kubeletVersion"),
    ] {
        w.push_str(&format!("  {label}:\t{}\n", info(key)));
    }
    if let Some(c) = n.spec.pod_cidr.as_deref().filter(|s| !s.is_empty()) {
        w.push_str(&format!("PodCIDR:\t{c}\n"));
        w.push_str(&format!("PodCIDRs:\t{c}\n"));
    }
    if let Some(p) = n.spec.provider_id.as_deref().filter(|s| !s.is_empty()) {
        w.push_str(&format!("ProviderID:\t{p}\n"));
    }
    // kubectl lists them with `spec.nodeName=<node>,status.phase!=Succeeded,…`: the index.
    let pods: Vec<&Pod> = sim
        .api()
        .list_pods_on_node(&n.metadata.name)
        .filter_map(|o| o.as_pod())
        .filter(|p| p.status.phase != "Succeeded" && p.status.phase != "Failed")
        .collect();
    let alloc = if n.status.allocatable.is_empty() {
        &n.status.capacity
    } else {
        &n.status.allocatable
    };
    let alloc_cpu = alloc
        .get("cpu")
        .and_then(|q| parse_quantity(q).ok())
        .map_or(0, |q| q.to_millis() as i128);
    let alloc_mem = alloc
        .get("memory")
        .and_then(|q| parse_quantity(q).ok())
        .map_or(0, |q| q.value() as i128);
    w.push_str(&format!(
        "Non-terminated Pods:\t({} in total)\n",
        pods.len()
    ));
    w.push_str(&format!(
        "{L1}Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n"
    ));
    w.push_str(&format!(
        "{L1}---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n"
    ));
    let mut totals = [Sum::default(); 4];
    for p in &pods {
        let (rc, rm) = pod_totals(p, false);
        let (lc, lm) = pod_totals(p, true);
        w.push_str(&format!(
            "{L1}{}\t{}\t\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{}\n",
            p.metadata.namespace,
            p.metadata.name,
            rc.text(),
            percent(rc.millis(), alloc_cpu),
            lc.text(),
            percent(lc.millis(), alloc_cpu),
            rm.text(),
            percent(rm.units(), alloc_mem),
            lm.text(),
            percent(lm.units(), alloc_mem),
            since(now, p.metadata.creation_timestamp)
        ));
        for (t, s) in totals.iter_mut().zip([rc, lc, rm, lm]) {
            if s.nanos != 0 {
                let mut q = *t;
                q.nanos += s.nanos;
                q.format = q.format.or(s.format);
                *t = q;
            }
        }
    }
    w.push_str(
        "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n",
    );
    w.push_str(&format!("{L1}Resource\tRequests\tLimits\n"));
    w.push_str(&format!("{L1}--------\t--------\t------\n"));
    w.push_str(&format!(
        "{L1}cpu\t{} ({}%)\t{} ({}%)\n",
        totals[0].text(),
        percent(totals[0].millis(), alloc_cpu),
        totals[1].text(),
        percent(totals[1].millis(), alloc_cpu)
    ));
    w.push_str(&format!(
        "{L1}memory\t{} ({}%)\t{} ({}%)\n",
        totals[2].text(),
        percent(totals[2].units(), alloc_mem),
        totals[3].text(),
        percent(totals[3].units(), alloc_mem)
    ));
    w.push_str(&format!("{L1}ephemeral-storage\t0 (0%)\t0 (0%)\n"));
    events_table(w, now, events);
}

// ------------------------------------------------------------------ services and budgets

/// `formatEndpointSlices` for one service port name: ready endpoints as `ip:port`, at most 3.
fn endpoints_text(slices: &[&crate::sim::api::types::EndpointSlice], port_name: &str) -> String {
    if slices.is_empty() {
        return "<none>".into();
    }
    let mut list = Vec::new();
    let mut count = 0;
    let mut more = false;
    for s in slices {
        let ports = json_array(&s.ports);
        let ready_addrs: Vec<&str> = s
            .endpoints
            .iter()
            .filter(|e| e.conditions.ready != Some(false))
            .filter_map(|e| e.addresses.first().map(String::as_str))
            .collect();
        if ports.is_empty() {
            for a in ready_addrs {
                if list.len() == 3 {
                    more = true;
                }
                if !more {
                    list.push(a.to_string());
                }
                count += 1;
            }
        } else {
            for p in &ports {
                if str_of(p, "name") != port_name {
                    continue;
                }
                let port = str_of(p, "port");
                for a in &ready_addrs {
                    if list.len() == 3 {
                        more = true;
                    }
                    if !more {
                        list.push(format!("{a}:{port}"));
                    }
                    count += 1;
                }
            }
        }
    }
    if more {
        format!("{} + {} more...", list.join(","), count - 3)
    } else {
        list.join(",")
    }
}

fn service(w: &mut String, sim: &Sim, o: &Object, events: Option<&[Event]>) {
    let s = o.as_service().expect("a Service");
    w.push_str(&format!("Name:\t{}\n", s.metadata.name));
    w.push_str(&format!("Namespace:\t{}\n", s.metadata.namespace));
    labels_multiline(w, "", "Labels", &s.metadata.labels);
    annotations_multiline(w, "Annotations", &s.metadata.annotations);
    w.push_str(&format!(
        "Selector:\t{}\n",
        super::util::format_labels(&s.spec.selector)
    ));
    w.push_str(&format!(
        "Type:\t{}\n",
        s.spec.type_.as_deref().unwrap_or("")
    ));
    if let Some(p) = s.spec.ip_family_policy.as_ref().and_then(|v| v.as_str()) {
        w.push_str(&format!("IP Family Policy:\t{p}\n"));
    }
    let families: Vec<String> = json_array(&s.spec.ip_families)
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    w.push_str(&format!(
        "IP Families:\t{}\n",
        if families.is_empty() {
            "<none>".into()
        } else {
            families.join(",")
        }
    ));
    let ip = s.spec.cluster_ip.clone().unwrap_or_default();
    w.push_str(&format!("IP:\t{ip}\n"));
    let ips: Vec<String> = json_array(&s.spec.cluster_ips)
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    w.push_str(&format!(
        "IPs:\t{}\n",
        if ips.is_empty() {
            let c = cluster_ip(s);
            if c == "<none>" || ip.is_empty() {
                "<none>".to_string()
            } else {
                c
            }
        } else {
            ips.join(",")
        }
    ));
    let slices: Vec<&crate::sim::api::types::EndpointSlice> = sim
        .api()
        .list(Kind::EndpointSlice)
        .filter_map(|o| o.as_endpoint_slice())
        .filter(|e| {
            e.metadata.namespace == s.metadata.namespace
                && e.metadata
                    .labels
                    .get("kubernetes.io/service-name")
                    .is_some_and(|v| *v == s.metadata.name)
        })
        .collect();
    for p in &s.spec.ports {
        let name = p
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "<unset>".into());
        let proto = p.protocol.as_deref().unwrap_or("TCP");
        w.push_str(&format!("Port:\t{name}\t{}/{proto}\n", p.port));
        w.push_str(&format!(
            "TargetPort:\t{}/{proto}\n",
            p.target_port.as_ref().map_or("0".into(), int_or_string)
        ));
        if let Some(ap) = &p.app_protocol {
            w.push_str(&format!("AppProtocol:\t{ap}\n"));
        }
        if let Some(np) = p.node_port.filter(|n| *n != 0) {
            w.push_str(&format!("NodePort:\t{name}\t{np}/{proto}\n"));
        }
        w.push_str(&format!(
            "Endpoints:\t{}\n",
            endpoints_text(&slices, p.name.as_deref().unwrap_or(""))
        ));
    }
    w.push_str(&format!(
        "Session Affinity:\t{}\n",
        s.spec
            .session_affinity
            .as_ref()
            .and_then(|v| v.as_str())
            .unwrap_or("None")
    ));
    if let Some(p) = s
        .spec
        .external_traffic_policy
        .as_ref()
        .and_then(|v| v.as_str())
    {
        w.push_str(&format!("External Traffic Policy:\t{p}\n"));
    }
    if let Some(p) = s
        .spec
        .internal_traffic_policy
        .as_ref()
        .and_then(|v| v.as_str())
    {
        w.push_str(&format!("Internal Traffic Policy:\t{p}\n"));
    }
    events_table(w, sim.now(), events);
}

fn endpoint_slice(w: &mut String, now: Millis, o: &Object, events: Option<&[Event]>) {
    let s = o.as_endpoint_slice().expect("an EndpointSlice");
    w.push_str(&format!("Name:\t{}\n", s.metadata.name));
    w.push_str(&format!("Namespace:\t{}\n", s.metadata.namespace));
    labels_multiline(w, "", "Labels", &s.metadata.labels);
    annotations_multiline(w, "Annotations", &s.metadata.annotations);
    w.push_str(&format!("AddressType:\t{}\n", s.address_type));
    let ports = json_array(&s.ports);
    if ports.is_empty() {
        w.push_str("Ports: <unset>\n");
    } else {
        w.push_str("Ports:\n");
        w.push_str(&format!("{L1}Name\tPort\tProtocol\n"));
        w.push_str(&format!("{L1}----\t----\t--------\n"));
        for p in &ports {
            let name = str_of(p, "name");
            let port = str_of(p, "port");
            w.push_str(&format!(
                "{L1}{}\t{}\t{}\n",
                if name.is_empty() {
                    "<unset>".into()
                } else {
                    name
                },
                if port.is_empty() {
                    "<unset>".into()
                } else {
                    port
                },
                str_of(p, "protocol")
            ));
        }
    }
    if s.endpoints.is_empty() {
        w.push_str("Endpoints: <none>\n");
    } else {
        w.push_str("Endpoints:\n");
        for e in &s.endpoints {
            let addrs = if e.addresses.is_empty() {
                "<none>".to_string()
            } else {
                e.addresses.join(", ")
            };
            w.push_str(&format!("{L1}- Addresses:\t{addrs}\n"));
            w.push_str(&format!("{L2}Conditions:\n"));
            w.push_str(&format!(
                "{L3}Ready:\t{}\n",
                e.conditions
                    .ready
                    .map_or("<unset>".into(), |r| r.to_string())
            ));
            w.push_str(&format!("{L2}Hostname:\t<unset>\n"));
            if let Some(t) = &e.target_ref {
                w.push_str(&format!("{L2}TargetRef:\t{}/{}\n", t.kind, t.name));
            }
            w.push_str(&format!(
                "{L2}NodeName:\t{}\n",
                e.node_name.as_deref().unwrap_or("<unset>")
            ));
            w.push_str(&format!("{L2}Zone:\t<unset>\n"));
        }
    }
    events_table(w, now, events);
}

fn pdb(w: &mut String, now: Millis, o: &Object, events: Option<&[Event]>) {
    let p = o.as_pdb().expect("a PodDisruptionBudget");
    w.push_str(&format!("Name:\t{}\n", p.metadata.name));
    w.push_str(&format!("Namespace:\t{}\n", p.metadata.namespace));
    if let Some(m) = &p.spec.min_available {
        w.push_str(&format!("Min available:\t{}\n", int_or_string(m)));
    } else if let Some(m) = &p.spec.max_unavailable {
        w.push_str(&format!("Max unavailable:\t{}\n", int_or_string(m)));
    }
    match &p.spec.selector {
        Some(s) => w.push_str(&format!("Selector:\t{}\n", super::util::format_selector(s))),
        None => w.push_str("Selector:\t<unset>\n"),
    }
    w.push_str("Status:\n");
    w.push_str(&format!(
        "{L2}Allowed disruptions:\t{}\n",
        p.status.disruptions_allowed
    ));
    w.push_str(&format!("{L2}Current:\t{}\n", p.status.current_healthy));
    w.push_str(&format!("{L2}Desired:\t{}\n", p.status.desired_healthy));
    w.push_str(&format!("{L2}Total:\t{}\n", p.status.expected_pods));
    events_table(w, now, events);
}

/// kubectl's generic describer (for kinds it has no describer of its own, custom kinds among
/// them): the metadata kubectl always shows, then every field, `camelCase` keys as `Camel Case`.
/// `describeNamespace`: its phase and conditions; the playground has no ResourceQuota or
/// LimitRange, so both say there is none, as kubectl does for an empty list.
fn namespace(w: &mut String, ns: &Namespace) {
    w.push_str(&format!("Name:\t{}\n", ns.metadata.name));
    labels_multiline(w, "", "Labels", &ns.metadata.labels);
    annotations_multiline(w, "Annotations", &ns.metadata.annotations);
    w.push_str(&format!("Status:\t{}\n", ns.status.phase));
    if !ns.status.conditions.is_empty() {
        w.push_str("Conditions:\n");
        w.push_str("  Type\tStatus\tLastTransitionTime\tReason\tMessage\n");
        w.push_str("  ----\t------\t------------------\t------\t-------\n");
        for c in &ns.status.conditions {
            w.push_str(&format!(
                "  {}\t{}\t{}\t{}\t{}\n",
                c.type_,
                c.status,
                c.last_transition_time.map(rfc1123z).unwrap_or_default(),
                c.reason.as_deref().unwrap_or_default(),
                c.message.as_deref().unwrap_or_default()
            ));
        }
    }
    w.push_str("\nNo resource quota.\n\nNo LimitRange resource.\n");
}

fn is_claim(o: &CustomObject) -> bool {
    crate::sim::api::storage::claim_kind() == Some(Kind::Custom(o.kind))
}

/// kubectl's `describePersistentVolumeClaim`: the claim, the pods that use it (`Used By`), its
/// conditions (a resize's) and events.
fn claim(w: &mut String, sim: &Sim, o: &CustomObject, events: Option<&[Event]>) {
    use crate::sim::api::storage::{pod_claims, str_at};
    let now = sim.now();
    let m = &o.metadata;
    w.push_str(&format!("Name:\t{}\n", m.name));
    w.push_str(&format!("Namespace:\t{}\n", m.namespace));
    w.push_str(&format!(
        "StorageClass:\t{}\n",
        str_at(o, &["spec", "storageClassName"]).unwrap_or_default()
    ));
    match m.deletion_timestamp {
        Some(dt) => w.push_str(&format!(
            "Status:\tTerminating (lasts {})\n",
            human_duration(now as i64 - dt.0 as i64)
        )),
        None => w.push_str(&format!(
            "Status:\t{}\n",
            str_at(o, &["status", "phase"]).unwrap_or_default()
        )),
    }
    let volume = str_at(o, &["spec", "volumeName"]).unwrap_or_default();
    w.push_str(&format!("Volume:\t{volume}\n"));
    labels_multiline(w, "", "Labels", &m.labels);
    annotations_multiline(w, "Annotations", &m.annotations);
    w.push_str(&format!("Finalizers:\t[{}]\n", m.finalizers.join(" ")));
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            str_at(o, &["status", "capacity", "storage"])
                .unwrap_or_default()
                .to_string(),
            super::printers::access_modes_at(o, "status"),
        )
    };
    w.push_str(&format!("Capacity:\t{capacity}\n"));
    w.push_str(&format!("Access Modes:\t{modes}\n"));
    if let Some(mode) = str_at(o, &["spec", "volumeMode"]) {
        w.push_str(&format!("VolumeMode:\t{mode}\n"));
    }
    let users: Vec<&str> = sim
        .api()
        .list(Kind::Pod)
        .filter_map(|p| p.as_pod())
        .filter(|p| p.metadata.namespace == m.namespace && pod_claims(p).contains(&m.name.as_str()))
        .map(|p| p.metadata.name.as_str())
        .collect();
    w.push_str(&format!(
        "Used By:\t{}\n",
        if users.is_empty() {
            "<none>".to_string()
        } else {
            users.join("\n\t")
        }
    ));
    let conditions = o
        .content
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Json::as_array)
        .filter(|c| !c.is_empty());
    if let Some(conditions) = conditions {
        // A condition's unset probe time prints as Go's zero time.
        let time = |c: &Json, f: &str| {
            c.get(f)
                .and_then(Json::as_str)
                .and_then(Time::parse_rfc3339)
                .map_or("Mon, 01 Jan 0001 00:00:00 +0000".to_string(), rfc1123z)
        };
        let field = |c: &Json, f: &str| {
            c.get(f)
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string()
        };
        w.push_str("Conditions:\n");
        w.push_str("  Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n");
        w.push_str("  ----\t------\t-----------------\t------------------\t------\t-------\n");
        for c in conditions {
            w.push_str(&format!(
                "  {} \t{} \t{} \t{} \t{} \t{}\n",
                field(c, "type"),
                field(c, "status"),
                time(c, "lastProbeTime"),
                time(c, "lastTransitionTime"),
                field(c, "reason"),
                field(c, "message"),
            ));
        }
    }
    events_table(w, now, events);
}

/// Whether kubectl has a describer of its own for this stored built-in kind; it describes the
/// others generically, as it does custom resources.
fn has_own_describer(o: &CustomObject) -> bool {
    o.kind.is_builtin()
        && matches!(
            o.kind.names().kind,
            "ConfigMap" | "Secret" | "ServiceAccount"
        )
}

/// kubectl's `describeConfigMap`, `describeSecret` and `describeServiceAccount`. Map entries
/// come in key order (Go's map order is random).
fn stored(w: &mut String, now: Millis, o: &CustomObject, events: Option<&[Event]>) {
    let kind = o.kind.names().kind;
    let m = &o.metadata;
    let entries = |field: &str| -> Vec<(String, Json)> {
        o.content
            .get(field)
            .and_then(Json::as_object)
            .map(|d| {
                let mut v: Vec<(String, Json)> =
                    d.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                v.stable_sort_by(|a, b| a.0.cmp(&b.0));
                v
            })
            .unwrap_or_default()
    };
    // A []byte field's length: what its base64 text decodes to.
    let decoded_len = |v: &Json| {
        let t = v.as_str().unwrap_or_default().trim_end_matches('=');
        t.len() * 3 / 4
    };
    w.push_str(&format!("Name:\t{}\n", m.name));
    w.push_str(&format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(w, "", "Labels", &m.labels);
    annotations_multiline(w, "Annotations", &m.annotations);
    match kind {
        "ConfigMap" => {
            w.push_str("\nData\n====\n");
            for (k, v) in entries("data") {
                w.push_str(&format!(
                    "{k}:\n----\n{}\n\n",
                    v.as_str().unwrap_or_default()
                ));
            }
            w.push_str("\nBinaryData\n====\n");
            for (k, v) in entries("binaryData") {
                w.push_str(&format!("{k}: {} bytes\n", decoded_len(&v)));
            }
            w.push('\n');
            events_table(w, now, events);
        }
        "Secret" => {
            let type_ = o
                .content
                .get("type")
                .and_then(Json::as_str)
                .unwrap_or_default();
            w.push_str(&format!("\nType:\t{type_}\n"));
            w.push_str("\nData\n====\n");
            for (k, v) in entries("data") {
                w.push_str(&format!("{k}:\t{} bytes\n", decoded_len(&v)));
            }
        }
        _ => {
            let names = |field: &str| -> String {
                let list: Vec<String> = o
                    .content
                    .get(field)
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.get("name").and_then(Json::as_str))
                    .map(str::to_string)
                    .collect();
                if list.is_empty() {
                    "<none>".into()
                } else {
                    list.join("\n\t")
                }
            };
            w.push_str(&format!(
                "Image pull secrets:\t{}\n",
                names("imagePullSecrets")
            ));
            w.push_str(&format!("Mountable secrets:\t{}\n", names("secrets")));
            w.push_str("Tokens:\t<none>\n");
            events_table(w, now, events);
        }
    }
}

fn generic(w: &mut String, now: Millis, o: &Object, events: Option<&[Event]>) {
    let meta = o.meta();
    w.push_str(&format!("Name:\t{}\n", meta.name));
    if o.kind().namespaced() {
        w.push_str(&format!("Namespace:\t{}\n", meta.namespace));
    }
    labels_multiline(w, "", "Labels", &meta.labels);
    annotations_multiline(w, "Annotations", &meta.annotations);
    let Json::Object(mut doc) = o.to_json() else {
        return;
    };
    if let Some(Json::Object(m)) = doc.get_mut("metadata") {
        for k in [
            "name",
            "namespace",
            "labels",
            "annotations",
            "managedFields",
        ] {
            m.remove(k);
        }
    }
    let order = ["apiVersion", "kind", "metadata"];
    let mut keys: Vec<&String> = doc.keys().collect();
    keys.stable_sort_by_key(|k| {
        (
            order.iter().position(|o| o == k).unwrap_or(order.len()),
            k.as_str(),
        )
    });
    for k in keys {
        generic_field(w, "", k, &doc[k.as_str()]);
    }
    events_table(w, now, events);
}

/// `Camel Case` for a `camelCase` key, as kubectl's `smartLabelFor` writes it: a key with
/// anything but letters and `-` as it is; otherwise split as fatih/camelcase splits (runs of
/// lower case, upper case and the rest, an upper-case run's last letter starting the lower-case
/// run after it: `HTTPServer` is `HTTP Server`, `PORT` one word), each word capitalised, the
/// common acronyms in capitals (`API Version`, `UID`).
fn title_case(key: &str) -> String {
    const ACRONYMS: [&str; 5] = ["API", "URL", "UID", "OSB", "GUID"];
    if key.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return key.to_string();
    }
    let class = |c: char| {
        if c.is_lowercase() {
            0
        } else if c.is_uppercase() {
            1
        } else {
            2
        }
    };
    let mut runs: Vec<Vec<char>> = Vec::new();
    for c in key.chars() {
        match runs.last_mut() {
            Some(run) if run.first().map(|f| class(*f)) == Some(class(c)) => run.push(c),
            _ => runs.push(vec![c]),
        }
    }
    for i in 1..runs.len() {
        let moves = runs[i - 1].first().map(|c| class(*c)) == Some(1)
            && runs[i].first().map(|c| class(*c)) == Some(0);
        if moves {
            if let Some(c) = runs[i - 1].pop() {
                runs[i].insert(0, c);
            }
        }
    }
    runs.iter()
        .filter(|run| !run.is_empty())
        .map(|run| {
            let w: String = run.iter().collect();
            let upper = w.to_uppercase();
            if ACRONYMS.contains(&upper.as_str()) {
                upper
            } else {
                let mut cs = w.chars();
                cs.next()
                    .map(|f| f.to_uppercase().chain(cs).collect())
                    .unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn generic_field(w: &mut String, indent: &str, key: &str, v: &Json) {
    let title = title_case(key);
    let deeper = format!("{indent}{L1}");
    match v {
        Json::Object(m) => {
            w.push_str(&format!("{indent}{title}:\n"));
            for (k, e) in m {
                generic_field(w, &deeper, k, e);
            }
        }
        Json::Array(items) => {
            w.push_str(&format!("{indent}{title}:\n"));
            for e in items {
                match e {
                    Json::Object(m) => {
                        for (k, x) in m {
                            generic_field(w, &deeper, k, x);
                        }
                    }
                    other => w.push_str(&format!("{deeper}{}\n", scalar_text(other))),
                }
            }
        }
        other => w.push_str(&format!("{indent}{title}:\t{}\n", scalar_text(other))),
    }
}

fn scalar_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

/// `DescribePodTemplate` written without a tabwriter, as `rollout history --revision` prints it.
pub fn pod_template_raw(t: &PodTemplateSpec) -> String {
    let mut w = String::new();
    pod_template(&mut w, t);
    w
}

/// The text of a single describe, for callers that print it themselves.
pub fn describe_one(sim: &Sim, key: &ObjectKey) -> CommandOutput {
    match sim.api().get(key) {
        Some(o) => match describe_object(sim, o, true) {
            Ok(t) => out(t),
            Err(e) => fail(e),
        },
        None => fail(format!(
            "Error from server (NotFound): {} \"{}\" not found",
            key.kind.resource(),
            key.name
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::title_case;

    #[test]
    fn field_labels_split_as_kubectls_smart_label_splits_them() {
        for (key, want) in [
            ("apiVersion", "API Version"),
            ("cronSpec", "Cron Spec"),
            ("PORT", "PORT"),
            ("HTTPServer", "HTTP Server"),
            ("uid", "UID"),
            ("cron_spec", "cron_spec"),
            ("key.name", "key.name"),
            ("max-surge", "Max - Surge"),
        ] {
            assert_eq!(title_case(key), want, "{key}");
        }
    }
}
