//! `kubectl get`: kubectl's table columns for every simulated kind (including `-o wide`), the
//! `-o yaml|json|name|jsonpath=…|jsonpath-as-json=…|custom-columns=…` printers (templates:
//! [`crate::sim::input::jsonpath`]), `-l`, `--field-selector`, `-A`, `--show-labels`,
//! `-L`, `--sort-by`, and the messages for empty results and missing objects.
//!
//! Rows follow `pkg/printers/internalversion/printers.go` cell by cell; tables go through the Go
//! tabwriter port with `kubectl get`'s settings.

use std::rc::Rc;

use serde_json::Value as Json;

use super::args::{flag, Args, Flag, FlagKind};
use super::resources::{self, Request};
use super::tabwriter;
use super::util::{
    age, error, fail, format_labels, format_selector, kind_name, object_name, out, since,
};
use super::CommandOutput;
use crate::sim::api::apiextensions::{CustomObject, CustomResourceColumnDefinition};
use crate::sim::api::types::{find_condition, IntOrString, Kind, Millis, Object, Pod, Time};
use crate::sim::input::jsonpath::{self, to_json_text, Template};
use crate::sim::world::Sim;
use crate::sort::{CollectTree, StableSort};

/// Flags `kubectl get` accepts.
pub const GET_FLAGS: &[Flag] = &[
    flag("output", Some('o'), FlagKind::Str),
    flag("selector", Some('l'), FlagKind::Str),
    flag("field-selector", None, FlagKind::Str),
    flag("all-namespaces", Some('A'), FlagKind::Bool),
    flag("show-labels", None, FlagKind::Bool),
    flag("label-columns", Some('L'), FlagKind::Str),
    flag("sort-by", None, FlagKind::Str),
    flag("no-headers", None, FlagKind::Bool),
    flag("show-kind", None, FlagKind::Bool),
    flag("ignore-not-found", None, FlagKind::Bool),
    flag("watch", Some('w'), FlagKind::Bool),
    flag("watch-only", None, FlagKind::Bool),
    flag("chunk-size", None, FlagKind::Int),
    flag("filename", Some('f'), FlagKind::Str),
    flag("allow-missing-template-keys", None, FlagKind::Bool),
];

/// kubectl's STATUS column for a pod (`printPod`): the most telling reason, not just the phase.
pub fn pod_status(pod: &Pod) -> String {
    pod_summary(pod).status
}

/// Whether a pod counts as Ready (its Ready condition is True).
pub fn pod_ready(pod: &Pod) -> bool {
    find_condition(&pod.status.conditions, "Ready").is_some_and(|c| c.status == "True")
}

/// What `printPod` derives from a pod's status.
pub struct PodSummary {
    /// `1/1`.
    pub ready: String,
    pub status: String,
    pub restarts: i32,
    /// When a container last terminated, for `3 (2m ago)`.
    pub last_restart: Option<Millis>,
}

impl PodSummary {
    /// The RESTARTS column at `now`: the count, and how long ago the last restart was.
    pub fn restarts_column(&self, now: Millis) -> String {
        match (self.restarts, self.last_restart) {
            (0, _) | (_, None) => self.restarts.to_string(),
            (n, Some(t)) => format!(
                "{n} ({} ago)",
                crate::sim::time::human_duration(now as i64 - t as i64)
            ),
        }
    }
}

fn is_restartable_init(pod: &Pod, name: &str) -> bool {
    pod.spec
        .init_containers
        .iter()
        .any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
}

/// `printPod`'s computation, kept whole so READY, STATUS and RESTARTS agree with kubectl.
pub fn pod_summary(pod: &Pod) -> PodSummary {
    let mut restarts = 0;
    let mut sidecar_restarts = 0;
    let mut total = pod.spec.containers.len();
    let mut ready = 0;
    let mut last_restart: Option<Millis> = None;
    let mut last_sidecar_restart: Option<Millis> = None;
    // The API server sets `Pending` on create; a pod the simulated store holds without a phase
    // reads the same way.
    let mut reason = if pod.status.phase.is_empty() {
        "Pending".to_string()
    } else {
        pod.status.phase.to_string()
    };
    if let Some(r) = pod.status.reason.as_ref().filter(|r| !r.is_empty()) {
        reason = r.to_string();
    }
    for c in &pod.status.conditions {
        if c.type_ == "PodScheduled" && c.reason.as_deref() == Some("SchedulingGated") {
            reason = "SchedulingGated".into();
        }
    }
    total += pod
        .spec
        .init_containers
        .iter()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"))
        .count();
    let finished = |s: &crate::sim::api::types::ContainerStatus| {
        s.last_state
            .as_ref()
            .and_then(|l| l.terminated.as_ref())
            .and_then(|t| t.finished_at)
            .map(|t| t.0)
    };
    let n_init = pod.spec.init_containers.len();
    let mut initializing = false;
    for (i, c) in pod.status.init_container_statuses.iter().enumerate() {
        restarts += c.restart_count;
        if let Some(t) = finished(c) {
            last_restart = Some(last_restart.map_or(t, |l| l.max(t)));
        }
        let sidecar = is_restartable_init(pod, &c.name);
        if sidecar {
            sidecar_restarts += c.restart_count;
            if let Some(t) = finished(c) {
                last_sidecar_restart = Some(last_sidecar_restart.map_or(t, |l| l.max(t)));
            }
        }
        if c.state
            .terminated
            .as_ref()
            .is_some_and(|t| t.exit_code == 0)
        {
            continue;
        }
        if sidecar && c.started == Some(true) {
            if c.ready {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = &c.state.terminated {
            reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                Some(r) => format!("Init:{r}"),
                None => format!("Init:ExitCode:{}", t.exit_code),
            };
        } else if let Some(w) = c
            .state
            .waiting
            .as_ref()
            .and_then(|w| w.reason.as_deref())
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            reason = format!("Init:{w}");
        } else {
            reason = format!("Init:{i}/{n_init}");
        }
        initializing = true;
        break;
    }
    let initialized =
        find_condition(&pod.status.conditions, "Initialized").is_some_and(|c| c.status == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for c in pod.status.container_statuses.iter().rev() {
            restarts += c.restart_count;
            if let Some(t) = finished(c) {
                last_restart = Some(last_restart.map_or(t, |l| l.max(t)));
            }
            if let Some(w) = c
                .state
                .waiting
                .as_ref()
                .and_then(|w| w.reason.as_deref())
                .filter(|r| !r.is_empty())
            {
                reason = w.to_string();
            } else if let Some(t) = &c.state.terminated {
                reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                    Some(r) => r.to_string(),
                    None => format!("ExitCode:{}", t.exit_code),
                };
            } else if c.ready && c.state.running.is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if pod_ready(pod) {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    let terminal = pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
    if pod.metadata.deletion_timestamp.is_some() && pod.status.reason.as_deref() == Some("NodeLost")
    {
        reason = "Unknown".into();
    } else if pod.metadata.deletion_timestamp.is_some() && !terminal {
        reason = "Terminating".into();
    }
    PodSummary {
        ready: format!("{ready}/{total}"),
        status: reason,
        restarts,
        last_restart,
    }
}

fn none_if_empty(s: &str) -> String {
    if s.is_empty() {
        "<none>".into()
    } else {
        s.to_string()
    }
}

fn int_or_string(v: &Option<IntOrString>) -> String {
    match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "N/A".into(),
    }
}

/// `layoutContainerCells`: names and images joined by commas.
pub fn container_cells(containers: &[crate::sim::api::types::Container]) -> (String, String) {
    (
        containers
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(","),
        containers
            .iter()
            .map(|c| c.image.as_str())
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// The column headers kubectl prints for a kind (without NAMESPACE, label columns or LABELS).
pub fn columns(kind: Kind, wide: bool) -> Vec<&'static str> {
    let mut c: Vec<&'static str> = match kind {
        Kind::Pod => vec!["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        Kind::Deployment => vec!["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        Kind::ReplicaSet => vec!["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
        Kind::Namespace => vec!["NAME", "STATUS", "AGE"],
        Kind::Node => vec!["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
        Kind::Service => vec![
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
        ],
        Kind::EndpointSlice => vec!["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
        Kind::PodDisruptionBudget => vec![
            "NAME",
            "MIN AVAILABLE",
            "MAX UNAVAILABLE",
            "ALLOWED DISRUPTIONS",
            "AGE",
        ],
        Kind::Event if wide => vec![
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME",
        ],
        Kind::Event => vec!["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        Kind::Lease => vec!["NAME", "HOLDER", "AGE"],
        Kind::CustomResourceDefinition => vec!["NAME", "CREATED AT"],
        Kind::Custom(c) if c.is_builtin() => stored_headers(c.names().kind),
        // A CRD without additionalPrinterColumns: NAME and AGE (its columns replace both).
        Kind::Custom(_) => vec!["NAME", "AGE"],
    };
    if wide {
        c.extend(match kind {
            Kind::Pod => &["IP", "NODE", "NOMINATED NODE", "READINESS GATES"][..],
            Kind::Deployment | Kind::ReplicaSet => &["CONTAINERS", "IMAGES", "SELECTOR"][..],
            Kind::Node => &[
                "INTERNAL-IP",
                "EXTERNAL-IP",
                "OS-IMAGE",
                "KERNEL-VERSION",
                "CONTAINER-RUNTIME",
            ][..],
            Kind::Service => &["SELECTOR"][..],
            _ => &[][..],
        });
    }
    c
}

fn node_info(n: &crate::sim::api::types::Node, field: &str) -> String {
    n.status
        .node_info
        .as_ref()
        .and_then(|i| i.get(field))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string()
}

fn node_address(n: &crate::sim::api::types::Node, type_: &str) -> String {
    n.status
        .addresses
        .as_ref()
        .and_then(|a| a.as_array())
        .and_then(|a| {
            a.iter()
                .find(|x| x.get("type").and_then(|t| t.as_str()) == Some(type_))
        })
        .and_then(|x| x.get("address").and_then(|v| v.as_str()))
        .unwrap_or("<none>")
        .to_string()
}

/// `findNodeRoles`: `node-role.kubernetes.io/<role>` labels and `kubernetes.io/role=<role>`.
pub fn node_roles(n: &crate::sim::api::types::Node) -> Vec<String> {
    let mut roles: Vec<String> = Vec::new();
    for (k, v) in &n.metadata.labels {
        let role = if let Some(r) = k.strip_prefix("node-role.kubernetes.io/") {
            r.to_string()
        } else if k == "kubernetes.io/role" {
            v.to_string()
        } else {
            continue;
        };
        if !role.is_empty() && !roles.contains(&role) {
            roles.push(role);
        }
    }
    roles.stable_sort();
    roles
}

/// The readiness part of the Node STATUS column. A Ready condition that is `Unknown` (the node
/// controller's mark for a kubelet gone silent) prints `NotReady`, as in `printNode`; `Unknown`
/// means the node has no Ready condition at all.
pub fn node_readiness(n: &crate::sim::api::types::Node) -> &'static str {
    match find_condition(&n.status.conditions, "Ready") {
        Some(c) if c.status == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }
}

/// The Node STATUS column: `Ready`, `NotReady`, `Unknown`, plus `SchedulingDisabled` when cordoned.
pub fn node_status(n: &crate::sim::api::types::Node) -> String {
    let mut status = node_readiness(n).to_string();
    if n.spec.unschedulable {
        status.push_str(",SchedulingDisabled");
    }
    status
}

/// `makePortString`: `80/TCP`, `80:30080/TCP`, comma-joined.
pub fn service_ports(s: &crate::sim::api::types::Service) -> String {
    s.spec
        .ports
        .iter()
        .map(|p| {
            let proto = p.protocol.as_deref().unwrap_or("TCP");
            match p.node_port.filter(|n| *n > 0) {
                Some(np) => format!("{}:{np}/{proto}", p.port),
                None => format!("{}/{proto}", p.port),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The first cluster IP (`spec.clusterIPs[0]`, else `spec.clusterIP`), or `<none>`.
pub fn cluster_ip(s: &crate::sim::api::types::Service) -> String {
    s.spec
        .cluster_ips
        .as_ref()
        .and_then(|v| v.get(0))
        .and_then(|v| v.as_str())
        .map(String::from)
        .or_else(|| s.spec.cluster_ip.clone().filter(|c| !c.is_empty()))
        .unwrap_or_else(|| "<none>".into())
}

fn external_ip(s: &crate::sim::api::types::Service) -> String {
    let ips: Vec<String> = s
        .spec
        .external_ips
        .as_ref()
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    match s.spec.type_.as_deref().unwrap_or("ClusterIP") {
        "ClusterIP" | "NodePort" => {
            if ips.is_empty() {
                "<none>".into()
            } else {
                ips.join(",")
            }
        }
        "LoadBalancer" => {
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        "ExternalName" => s
            .spec
            .external_name
            .as_ref()
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string(),
        _ => "<unknown>".into(),
    }
}

fn list_with_more(list: Vec<String>, count: usize) -> String {
    const MAX: usize = 3;
    if count > MAX {
        return format!("{} + {} more...", list.join(","), count - MAX);
    }
    if list.is_empty() {
        "<unset>".into()
    } else {
        list.join(",")
    }
}

fn endpointslice_ports(s: &crate::sim::api::types::EndpointSlice) -> String {
    let ports: Vec<Json> = s
        .ports
        .as_ref()
        .and_then(|p| p.as_array())
        .cloned()
        .unwrap_or_default();
    let list: Vec<String> = ports
        .iter()
        .take(3)
        .map(|p| {
            p.get("port")
                .and_then(|v| v.as_i64())
                .map(|v| v.to_string())
                .or_else(|| p.get("name").and_then(|v| v.as_str()).map(String::from))
                .unwrap_or_else(|| "*".into())
        })
        .collect();
    list_with_more(list, ports.len())
}

fn endpointslice_endpoints(s: &crate::sim::api::types::EndpointSlice) -> String {
    let all: Vec<String> = s
        .endpoints
        .iter()
        .flat_map(|e| e.addresses.iter().cloned())
        .collect();
    let count = all.len();
    list_with_more(all.into_iter().take(3).collect(), count)
}

/// One table row for an object, as `printers.go` builds it.
pub fn row(now: Millis, o: &Object, wide: bool) -> Vec<String> {
    let name = o.meta().name.to_string();
    match o {
        Object::Namespace(ns) => vec![name, ns.status.phase.clone(), age(now, o)],
        Object::Pod(pod) => {
            let s = pod_summary(pod);
            let restarts = s.restarts_column(now);
            let mut r = vec![name, s.ready, s.status, restarts, age(now, o)];
            if wide {
                r.push(
                    pod.status
                        .pod_ip
                        .as_deref()
                        .map_or("<none>".into(), none_if_empty),
                );
                r.push(none_if_empty(&pod.spec.node_name));
                r.push(
                    pod.status
                        .nominated_node_name
                        .as_deref()
                        .map_or("<none>".into(), none_if_empty),
                );
                let gates: Vec<String> = pod
                    .spec
                    .readiness_gates
                    .as_ref()
                    .and_then(|g| g.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|g| g.get("conditionType")?.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                r.push(if gates.is_empty() {
                    "<none>".into()
                } else {
                    let ok = gates
                        .iter()
                        .filter(|g| {
                            find_condition(&pod.status.conditions, g)
                                .is_some_and(|c| c.status == "True")
                        })
                        .count();
                    format!("{ok}/{}", gates.len())
                });
            }
            r
        }
        Object::Deployment(d) => {
            let mut r = vec![
                name,
                format!(
                    "{}/{}",
                    d.status.ready_replicas,
                    d.spec.replicas.unwrap_or(1)
                ),
                d.status.updated_replicas.to_string(),
                d.status.available_replicas.to_string(),
                age(now, o),
            ];
            if wide {
                let (c, i) = container_cells(&d.spec.template.spec.containers);
                r.extend([c, i, d.spec.selector.to_selector_string()]);
            }
            r
        }
        Object::ReplicaSet(rs) => {
            let mut r = vec![
                name,
                rs.spec.replicas.unwrap_or(1).to_string(),
                rs.status.replicas.to_string(),
                rs.status.ready_replicas.to_string(),
                age(now, o),
            ];
            if wide {
                let (c, i) = container_cells(&rs.spec.template.spec.containers);
                r.extend([c, i, format_selector(&rs.spec.selector)]);
            }
            r
        }
        Object::Node(n) => {
            let roles = node_roles(n);
            let mut r = vec![
                name,
                node_status(n),
                if roles.is_empty() {
                    "<none>".into()
                } else {
                    roles.join(",")
                },
                age(now, o),
                node_info(n, "kubeletVersion"),
            ];
            if wide {
                let unknown = |s: String| if s.is_empty() { "<unknown>".into() } else { s };
                r.extend([
                    node_address(n, "InternalIP"),
                    node_address(n, "ExternalIP"),
                    unknown(node_info(n, "osImage")),
                    unknown(node_info(n, "kernelVersion")),
                    unknown(node_info(n, "containerRuntimeVersion")),
                ]);
            }
            r
        }
        Object::Service(s) => {
            let ports = service_ports(s);
            let mut r = vec![
                name,
                s.spec.type_.clone().unwrap_or_default(),
                cluster_ip(s),
                external_ip(s),
                none_if_empty(&ports),
                age(now, o),
            ];
            if wide {
                r.push(format_labels(&s.spec.selector));
            }
            r
        }
        Object::EndpointSlice(s) => vec![
            name,
            s.address_type.clone(),
            endpointslice_ports(s),
            endpointslice_endpoints(s),
            age(now, o),
        ],
        Object::PodDisruptionBudget(p) => vec![
            name,
            int_or_string(&p.spec.min_available),
            int_or_string(&p.spec.max_unavailable),
            p.status.disruptions_allowed.to_string(),
            age(now, o),
        ],
        Object::Event(e) => {
            let first = since(now, e.first_timestamp);
            let last = if e.last_timestamp.is_some() {
                since(now, e.last_timestamp)
            } else {
                first.clone()
            };
            let target = if e.involved_object.name.is_empty() {
                e.involved_object.kind.to_ascii_lowercase()
            } else {
                format!(
                    "{}/{}",
                    e.involved_object.kind.to_ascii_lowercase(),
                    e.involved_object.name
                )
            };
            if wide {
                let mut source = vec![e.source.component.clone()];
                if source[0].is_empty() {
                    source[0] = e.reporting_component.clone().unwrap_or_default();
                }
                if !e.source.host.is_empty() {
                    source.push(e.source.host.clone());
                }
                vec![
                    last,
                    e.type_.to_string(),
                    e.reason.to_string(),
                    target,
                    e.involved_object.field_path.to_string(),
                    source.join(", "),
                    e.message.trim().to_string(),
                    first,
                    e.count.max(1).to_string(),
                    name,
                ]
            } else {
                vec![
                    last,
                    e.type_.to_string(),
                    e.reason.to_string(),
                    target,
                    e.message.trim().to_string(),
                ]
            }
        }
        Object::Lease(l) => vec![
            name,
            l.spec.holder_identity.clone().unwrap_or_default(),
            age(now, o),
        ],
        Object::CustomResourceDefinition(c) => vec![
            name,
            c.metadata
                .creation_timestamp
                .map_or_else(String::new, Time::to_rfc3339),
        ],
        Object::Custom(c) if c.kind.is_builtin() => {
            // `printStorageClass`: the default class is named so.
            let default = c.kind.names().kind == "StorageClass"
                && crate::sim::api::storage::is_default_class(&c.metadata);
            let name = if default {
                format!("{name} (default)")
            } else {
                name
            };
            let mut r = vec![name];
            r.extend(stored_cells(c, now));
            r.push(age(now, o));
            r
        }
        Object::Custom(_) => vec![name, age(now, o)],
    }
}

/// The table columns of the built-in kinds the playground only stores, as their upstream table
/// convertors print them; the others print NAME and AGE (a simplification ARCHITECTURE.md notes).
fn stored_headers(kind: &str) -> Vec<&'static str> {
    match kind {
        "ConfigMap" => vec!["NAME", "DATA", "AGE"],
        "Secret" => vec!["NAME", "TYPE", "DATA", "AGE"],
        "ServiceAccount" => vec!["NAME", "SECRETS", "AGE"],
        "StatefulSet" => vec!["NAME", "READY", "AGE"],
        "Job" => vec!["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
        "StorageClass" => vec![
            "NAME",
            "PROVISIONER",
            "RECLAIMPOLICY",
            "VOLUMEBINDINGMODE",
            "ALLOWVOLUMEEXPANSION",
            "AGE",
        ],
        "PersistentVolume" => vec![
            "NAME",
            "CAPACITY",
            "ACCESS MODES",
            "RECLAIM POLICY",
            "STATUS",
            "CLAIM",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "REASON",
            "AGE",
        ],
        "ControllerRevision" => vec!["NAME", "CONTROLLER", "REVISION", "AGE"],
        "VolumeAttachment" => vec!["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"],
        "PersistentVolumeClaim" => vec![
            "NAME",
            "STATUS",
            "VOLUME",
            "CAPACITY",
            "ACCESS MODES",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "AGE",
        ],
        _ => vec!["NAME", "AGE"],
    }
}

/// The cells between NAME and AGE for [`stored_headers`].
fn stored_cells(o: &CustomObject, now: Millis) -> Vec<String> {
    let count = |field: &str| match o.content.get(field) {
        Some(Json::Object(m)) => m.len(),
        Some(Json::Array(a)) => a.len(),
        _ => 0,
    };
    let at = |path: &[&str]| {
        crate::sim::api::storage::str_at(o, path)
            .unwrap_or_default()
            .to_string()
    };
    let terminating_or = |phase: String| {
        if o.metadata.deletion_timestamp.is_some() {
            "Terminating".to_string()
        } else {
            phase
        }
    };
    let unset = |s: String| {
        if s.is_empty() {
            "<unset>".to_string()
        } else {
            s
        }
    };
    // `GetAccessModesAsString` of `spec.accessModes` or `status.accessModes`.
    let modes = |part: &str| access_modes_at(o, part);
    match o.kind.names().kind {
        // A ConfigMap's DATA counts both maps, as `printConfigMap` does.
        "ConfigMap" => vec![(count("data") + count("binaryData")).to_string()],
        "Secret" => vec![
            o.content
                .get("type")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string(),
            count("data").to_string(),
        ],
        "ServiceAccount" => vec![count("secrets").to_string()],
        "StatefulSet" => {
            let int = |v: Option<&Json>| v.and_then(Json::as_i64).unwrap_or(0);
            let spec = o.content.get("spec");
            let status = o.content.get("status");
            vec![format!(
                "{}/{}",
                int(status.and_then(|s| s.get("readyReplicas"))),
                int(spec.and_then(|s| s.get("replicas")))
            )]
        }
        "Job" => job_cells(o, now),
        "ControllerRevision" => {
            // `formatResourceName(GroupKind, name, withKind)`: `statefulset.apps/web`.
            let owner = o
                .metadata
                .controller_ref()
                .map_or("<none>".to_string(), |r| {
                    let kind = r.kind.to_lowercase();
                    match r.api_version.split_once('/') {
                        Some((group, _)) => format!("{kind}.{group}/{}", r.name),
                        None => format!("{kind}/{}", r.name),
                    }
                });
            let revision = o
                .content
                .get("revision")
                .and_then(Json::as_i64)
                .unwrap_or(0);
            vec![owner, revision.to_string()]
        }
        // Both printers show a claim or volume being deleted as Terminating.
        "PersistentVolumeClaim" => vec![
            terminating_or(at(&["status", "phase"])),
            at(&["spec", "volumeName"]),
            at(&["status", "capacity", "storage"]),
            modes("status"),
            at(&["spec", "storageClassName"]),
            unset(at(&["spec", "volumeAttributesClassName"])),
        ],
        "PersistentVolume" => {
            let claim = match (
                at(&["spec", "claimRef", "namespace"]),
                at(&["spec", "claimRef", "name"]),
            ) {
                (_, n) if n.is_empty() => String::new(),
                (ns, n) => format!("{ns}/{n}"),
            };
            vec![
                at(&["spec", "capacity", "storage"]),
                modes("spec"),
                at(&["spec", "persistentVolumeReclaimPolicy"]),
                terminating_or(at(&["status", "phase"])),
                claim,
                at(&["spec", "storageClassName"]),
                unset(at(&["spec", "volumeAttributesClassName"])),
                at(&["status", "reason"]),
            ]
        }
        // `printVolumeAttachment`.
        "VolumeAttachment" => vec![
            at(&["spec", "attacher"]),
            at(&["spec", "source", "persistentVolumeName"]),
            at(&["spec", "nodeName"]),
            (o.at(&["status", "attached"]).and_then(Json::as_bool) == Some(true)).to_string(),
        ],
        "StorageClass" => {
            let expansion = o
                .content
                .get("allowVolumeExpansion")
                .and_then(Json::as_bool);
            vec![
                at(&["provisioner"]),
                at(&["reclaimPolicy"]),
                at(&["volumeBindingMode"]),
                expansion.unwrap_or(false).to_string(),
            ]
        }
        _ => Vec::new(),
    }
}

/// `printJob`'s STATUS, COMPLETIONS and DURATION.
fn job_cells(o: &CustomObject, now: Millis) -> Vec<String> {
    use crate::sim::api::job as api;
    let status = api::status_word(o);
    let succeeded = o.int_at(&["status", "succeeded"]).unwrap_or(0);
    let completions = match api::completions(o) {
        Some(c) => format!("{succeeded}/{c}"),
        None if api::parallelism(o) > 1 => format!("{succeeded}/1 of {}", api::parallelism(o)),
        None => format!("{succeeded}/1"),
    };
    let time = |f: &str| {
        o.at(&["status", f])
            .and_then(Json::as_str)
            .and_then(Time::parse_rfc3339)
    };
    let duration = match (time("startTime"), time("completionTime")) {
        (None, _) => String::new(),
        (Some(s), None) => crate::sim::time::human_duration(now as i64 - s.0 as i64),
        (Some(s), Some(e)) => crate::sim::time::human_duration(e.0 as i64 - s.0 as i64),
    };
    vec![status.to_string(), completions, duration]
}

/// `GetAccessModesAsString` of `<part>.accessModes` (`RWO,ROX`).
pub(super) fn access_modes_at(o: &CustomObject, part: &str) -> String {
    let list = o
        .content
        .get(part)
        .and_then(|s| s.get("accessModes"))
        .and_then(Json::as_array);
    let short: Vec<&str> = list
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(access_mode_short)
        .collect();
    short.join(",")
}

/// `GetAccessModesAsString`'s abbreviations.
fn access_mode_short(mode: &str) -> &str {
    match mode {
        "ReadWriteOnce" => "RWO",
        "ReadOnlyMany" => "ROX",
        "ReadWriteMany" => "RWX",
        "ReadWriteOncePod" => "RWOP",
        other => other,
    }
}

/// The columns a CRD's `additionalPrinterColumns` give its objects' table: those of priority 0,
/// and with `-o wide` every one.
fn printer_columns(
    cols: &[CustomResourceColumnDefinition],
    wide: bool,
) -> Vec<&CustomResourceColumnDefinition> {
    cols.iter().filter(|c| wide || c.priority == 0).collect()
}

/// One printer column's cell: the value at its JSONPath in the column's type, a `date` as an
/// age, and blank when the value is missing or of another type (as the API server's table does;
/// a `string` column takes any value).
fn printer_cell(now: Millis, col: &CustomResourceColumnDefinition, doc: &Json) -> String {
    let Ok(template) =
        jsonpath::relaxed(&col.json_path).and_then(|p| jsonpath::Template::parse(&p))
    else {
        return String::new();
    };
    let Ok(values) = template.values(doc, jsonpath::Options::default()) else {
        return String::new();
    };
    let Some(v) = values.first() else {
        return String::new();
    };
    match (col.type_.as_str(), v) {
        ("date", Json::String(s)) => Time::parse_rfc3339(s)
            .map(|t| since(now, Some(t)))
            .unwrap_or_default(),
        ("integer", Json::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
        ("number", Json::Number(n)) => n.to_string(),
        ("boolean", Json::Bool(b)) => b.to_string(),
        ("string", Json::String(s)) => s.clone(),
        // A string column prints any value through JSONPath, lists and maps as JSON
        // (tableconvertor.go): kro's TOPOLOGICALORDER shows `["deployment","service"]`.
        (
            "string",
            other @ (Json::Number(_) | Json::Bool(_) | Json::Array(_) | Json::Object(_)),
        ) => other.to_string(),
        _ => String::new(),
    }
}

/// How a table is laid out beyond the kind's own columns.
#[derive(Clone, Debug, Default)]
pub struct TableOptions {
    pub wide: bool,
    /// `-A`: a NAMESPACE column first (for namespaced kinds).
    pub namespace_column: bool,
    /// Several kinds in one command: names are written `deployment.apps/web`.
    pub with_kind: bool,
    pub show_labels: bool,
    /// `-L key`.
    pub label_columns: Vec<String>,
    pub no_headers: bool,
    /// A custom kind's `additionalPrinterColumns` (from its CRD): they replace NAME's neighbours.
    pub printer_columns: Vec<CustomResourceColumnDefinition>,
}

/// A `kubectl get` table for objects of one kind.
pub fn table(now: Millis, kind: Kind, objs: &[Rc<Object>], opts: &TableOptions) -> String {
    let ns_col = opts.namespace_column && kind.namespaced();
    let mut header: Vec<String> = Vec::new();
    if ns_col {
        header.push("NAMESPACE".into());
    }
    let custom = printer_columns(&opts.printer_columns, opts.wide);
    if matches!(kind, Kind::Custom(_)) && !opts.printer_columns.is_empty() {
        header.push("NAME".into());
        header.extend(custom.iter().map(|c| c.name.to_ascii_uppercase()));
    } else {
        header.extend(columns(kind, opts.wide).iter().map(|s| s.to_string()));
    }
    for l in &opts.label_columns {
        header.push(l.rsplit('/').next().unwrap_or(l).to_ascii_uppercase());
    }
    if opts.show_labels {
        header.push("LABELS".into());
    }
    let rows: Vec<Vec<String>> = objs
        .iter()
        .map(|o| {
            let mut r = if matches!(kind, Kind::Custom(_)) && !opts.printer_columns.is_empty() {
                let doc = o.to_json();
                std::iter::once(o.meta().name.to_string())
                    .chain(custom.iter().map(|c| printer_cell(now, c, &doc)))
                    .collect()
            } else {
                row(now, o, opts.wide)
            };
            if opts.with_kind && kind != Kind::Event {
                r[0] = object_name(kind, &r[0]);
            }
            if ns_col {
                r.insert(0, o.meta().namespace.to_string());
            }
            for l in &opts.label_columns {
                r.push(
                    o.meta()
                        .labels
                        .get(l)
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                );
            }
            if opts.show_labels {
                r.push(format_labels(&o.meta().labels));
            }
            r
        })
        .collect();
    if opts.no_headers {
        tabwriter::get_table(&[], &rows)
    } else {
        tabwriter::get_table(&header, &rows)
    }
}

/// A `kubectl get KIND` table (no output when empty). With `prefix`, names are written
/// `kind/name` (lowercase kind, no group): the compact form `kubeloop run` prints in its summary.
pub fn print_table(
    now: Millis,
    kind: Kind,
    objs: &[Rc<Object>],
    wide: bool,
    prefix: bool,
) -> String {
    let mut objs: Vec<Rc<Object>> = objs.to_vec();
    if prefix && kind != Kind::Event {
        objs = objs
            .into_iter()
            .map(|o| {
                let mut c = (*o).clone();
                let name = format!("{}/{}", kind.as_str().to_ascii_lowercase(), c.meta().name);
                c.meta_mut().name = name.into();
                Rc::new(c)
            })
            .collect();
    }
    table(
        now,
        kind,
        &objs,
        &TableOptions {
            wide,
            ..Default::default()
        },
    )
}

/// A `kind: List` as kubectl wraps several objects.
pub fn list_json(items: Vec<Json>) -> Json {
    serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
}

fn cmp_json(a: &Json, b: &Json) -> std::cmp::Ordering {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x
            .as_f64()
            .unwrap_or(0.0)
            .partial_cmp(&y.as_f64().unwrap_or(0.0))
            .unwrap_or(std::cmp::Ordering::Equal),
        (Json::String(x), Json::String(y)) => x.cmp(y),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

// ------------------------------------------------------------------ get

/// How `kubectl get -o …` prints, decided (and its template parsed) before anything is read.
enum Printer {
    Table {
        wide: bool,
    },
    /// `yaml`, `json` or `name`.
    Plain(&'static str),
    JsonPath(Template, jsonpath::Options),
    Columns(Vec<jsonpath::Column>),
}

impl Printer {
    fn from_output(output: &str, args: &Args) -> Result<Printer, CommandOutput> {
        let allow_missing_keys = args.bool_or("allow-missing-template-keys", true);
        Ok(match output {
            "" => Printer::Table { wide: false },
            "wide" => Printer::Table { wide: true },
            "yaml" => Printer::Plain("yaml"),
            "json" => Printer::Plain("json"),
            "name" => Printer::Plain("name"),
            "jsonpath" | "jsonpath-as-json" => {
                return Err(error("template format specified but no template given"))
            }
            "custom-columns" => {
                return Err(error(
                    "custom-columns format specified but no custom columns given",
                ))
            }
            o if o.starts_with("jsonpath=") || o.starts_with("jsonpath-as-json=") => {
                let (kind, text) = o.split_once('=').unwrap_or((o, ""));
                if text.is_empty() {
                    return Err(error("template format specified but no template given"));
                }
                let template = Template::parse(text)
                    .map_err(|e| error(format!("error parsing jsonpath {text}, {e}")))?;
                let opts = jsonpath::Options {
                    allow_missing_keys,
                    as_json: kind == "jsonpath-as-json",
                };
                Printer::JsonPath(template, opts)
            }
            o if o.starts_with("custom-columns=") => {
                let spec = o.split_once('=').map_or("", |(_, s)| s);
                Printer::Columns(jsonpath::custom_columns(spec).map_err(error)?)
            }
            o if o.starts_with("custom-columns-file")
                || o.starts_with("jsonpath-file")
                || o.starts_with("go-template")
                || o.starts_with("template") =>
            {
                return Err(error(format!(
                    "--output={o} is not supported in the playground (use -o jsonpath=…, -o custom-columns=… or -o yaml)"
                )))
            }
            o => {
                return Err(error(format!(
                    "unable to match a printer suitable for the output format \"{o}\", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"
                )))
            }
        })
    }
}

/// `kubectl get`.
pub fn get(sim: &mut Sim, args: &Args) -> CommandOutput {
    if args.bool("watch") || args.bool("watch-only") {
        return error("--watch is not supported in the playground: every view updates live as simulated time runs; run get again to see the latest state");
    }
    if args.has("filename") {
        return error("get -f is not supported in the playground; name the objects instead (kubectl get deployment/web)");
    }
    let output = args.get("output").unwrap_or("");
    let printer = match Printer::from_output(output, args) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let (wide, format) = match &printer {
        Printer::Table { wide } => (*wide, ""),
        Printer::Plain(f) => (false, *f),
        Printer::JsonPath(..) => (false, "jsonpath"),
        Printer::Columns(_) => (false, "custom-columns"),
    };
    let request = match resources::parse_request(sim.api(), &args.positional, true) {
        Ok(Some(r)) => r,
        Ok(None) => {
            return fail("You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).\nSee 'kubectl get -h' for help and examples\n");
        }
        Err(e) => return error(e),
    };
    let all_ns = args.bool("all-namespaces");
    let ns = args.namespace();
    let filter = match resources::Filter::from_args(args) {
        Ok(f) => f,
        Err(e) => return error(e),
    };
    let sim = &*sim;
    let now = sim.now();
    // Objects grouped by kind in the order kubectl visits them, plus NotFound errors.
    let mut groups: Vec<(Kind, Vec<Rc<Object>>)> = Vec::new();
    let mut errors = String::new();
    let ignore_missing = args.bool("ignore-not-found");
    let single_item;
    match &request {
        Request::Types(kinds) => {
            single_item = false;
            for kind in kinds {
                let objs = resources::list(sim, *kind, &ns, all_ns, &filter);
                groups.push((*kind, objs));
            }
        }
        Request::Names(names) => {
            single_item = names.len() == 1;
            for (kind, name) in names {
                match sim
                    .api()
                    .get(&crate::sim::api::types::ObjectKey::new(*kind, &ns, name))
                {
                    Some(o) if filter.matches(o) => match groups.last_mut() {
                        Some((k, v)) if k == kind => v.push(o.clone()),
                        _ => groups.push((*kind, vec![o.clone()])),
                    },
                    Some(_) => {}
                    None if ignore_missing => {}
                    None => errors.push_str(&format!(
                        "Error from server (NotFound): {} \"{name}\" not found\n",
                        kind.resource()
                    )),
                }
            }
        }
    }
    if let Some(path) = args.get("sort-by") {
        // kubectl's sorter: the path is relaxed (`.a.b` is `{.a.b}`), each object's first value is
        // its key, and objects without one come first.
        let sorted = jsonpath::relaxed(path).and_then(|f| Template::parse(&f).map(|t| (f, t)));
        let (field, template) = match sorted {
            Ok(x) => x,
            Err(e) => return error(e),
        };
        let mut found_once = false;
        for (_, objs) in &mut groups {
            let mut keyed: Vec<(Option<Json>, Rc<Object>)> = objs
                .drain(..)
                .map(|o| {
                    let doc = o.to_json();
                    let key = template
                        .values(&doc, jsonpath::Options::default())
                        .ok()
                        .and_then(|v| v.into_iter().next());
                    (key, o)
                })
                .collect();
            found_once |= keyed.iter().any(|(k, _)| k.is_some());
            keyed.stable_sort_by(|a, b| match (&a.0, &b.0) {
                (Some(x), Some(y)) => cmp_json(x, y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            });
            *objs = keyed.into_iter().map(|(_, o)| o).collect();
        }
        if !found_once && groups.iter().any(|(_, v)| !v.is_empty()) {
            return error(format!(
                "couldn't find any field with path {field:?} in the list of objects"
            ));
        }
    }
    let total: usize = groups.iter().map(|(_, v)| v.len()).sum();
    // kubectl writes `kind/name` when its results span more than one kind
    // (`multipleGVKsRequested`). A table is fetched per type asked for, found or empty, so
    // `get deploy,rs,pods` prefixes the pods even with no Deployment (as `get all` prints
    // `service/kubernetes` on an empty cluster); other formats and named objects count only
    // the objects found.
    let kinds_in_results = match (&request, format) {
        (Request::Types(kinds), "") => kinds.len(),
        _ => groups
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, _)| *k)
            .collect_set()
            .len(),
    };
    let with_kind = kinds_in_results > 1 || args.bool("show-kind");
    let mut stdout = String::new();
    match format {
        "yaml" | "json" | "jsonpath" => {
            let items: Vec<Json> = groups
                .iter()
                .flat_map(|(_, v)| v.iter().map(|o| o.to_json()))
                .collect();
            let doc = if single_item && items.len() == 1 {
                items.into_iter().next().expect("one item")
            } else if single_item && items.is_empty() {
                Json::Null
            } else {
                list_json(items)
            };
            if !doc.is_null() {
                match format {
                    "yaml" => stdout.push_str(&crate::sim::input::yaml::to_yaml(&doc)),
                    "json" => stdout.push_str(&to_json_text(&doc)),
                    _ => {
                        if let Printer::JsonPath(t, opts) = &printer {
                            match t.execute(&doc, *opts) {
                                Ok(s) => stdout.push_str(&s),
                                Err(e) => return error(jsonpath::execution_error(t, &e, &doc)),
                            }
                        }
                    }
                }
            }
        }
        "custom-columns" => {
            if let Printer::Columns(columns) = &printer {
                let mut rows = Vec::new();
                for o in groups.iter().flat_map(|(_, v)| v) {
                    let doc = o.to_json();
                    match columns.iter().map(|c| c.cell(&doc)).collect() {
                        Ok(row) => rows.push(row),
                        Err(e) => return error(e),
                    }
                }
                if !rows.is_empty() {
                    let header: Vec<String> = if args.bool("no-headers") {
                        Vec::new()
                    } else {
                        columns.iter().map(|c| c.header.clone()).collect()
                    };
                    stdout.push_str(&tabwriter::get_table(&header, &rows));
                }
            }
        }
        "name" => {
            // `object_name` for each, with the kind's part worded once per kind: a poll of
            // 10,000 unscheduled pods printed a name each.
            for (kind, objs) in &groups {
                let kind = kind_name(*kind);
                for o in objs {
                    stdout.push_str(&kind);
                    stdout.push('/');
                    stdout.push_str(&o.meta().name);
                    stdout.push('\n');
                }
            }
        }
        _ => {
            let opts = TableOptions {
                wide,
                namespace_column: all_ns,
                with_kind,
                show_labels: args.bool("show-labels"),
                label_columns: args
                    .all("label-columns")
                    .iter()
                    .flat_map(|l| l.split(','))
                    .map(String::from)
                    .collect(),
                no_headers: args.bool("no-headers"),
                printer_columns: Vec::new(),
            };
            for (kind, objs) in &groups {
                if objs.is_empty() {
                    continue;
                }
                let mut opts = opts.clone();
                if let Some(crd) = kind.custom().and_then(|c| sim.api().crd_of(c)) {
                    opts.printer_columns = crd
                        .storage_version()
                        .map(|v| v.additional_printer_columns.clone())
                        .unwrap_or_default();
                }
                // A blank line between two tables, each with its header (none with --no-headers).
                if !stdout.is_empty() && !opts.no_headers {
                    stdout.push('\n');
                }
                stdout.push_str(&table(now, *kind, objs, &opts));
            }
        }
    }
    if total == 0 && errors.is_empty() && format != "yaml" && format != "json" {
        let namespaced = match &request {
            Request::Types(k) => k.iter().any(|k| k.namespaced()),
            Request::Names(_) => false,
        };
        let msg = if all_ns || !namespaced {
            "No resources found\n".to_string()
        } else {
            format!("No resources found in {ns} namespace.\n")
        };
        if matches!(request, Request::Names(_)) {
            return out(stdout);
        }
        return CommandOutput {
            stdout,
            stderr: msg,
            ok: true,
        };
    }
    CommandOutput {
        ok: errors.is_empty(),
        stdout,
        stderr: errors,
    }
}
