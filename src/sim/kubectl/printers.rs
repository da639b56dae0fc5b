//! `kubectl get` tables, printed with kubectl's columns and tabwriter spacing.

use std::sync::Arc;

use super::Args;
use crate::sim::session::{CommandOutput, Session};
use crate::sim::time::human_age;
use crate::sim::types::{find_condition, Kind, Millis, Object, Pod};

/// Lays out rows the way kubectl's tabwriter does: columns padded to the widest cell + 3 spaces.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            l.push_str(c);
            if i + 1 < cells.len() {
                l.push_str(&" ".repeat(widths[i] - c.chars().count() + 3));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
    out
}

fn age(now: Millis, obj: &Object) -> String {
    obj.meta()
        .creation_timestamp
        .map_or("<unknown>".into(), |t| human_age(now.saturating_sub(t.0)))
}

/// kubectl's STATUS column for a pod (printPod): the most telling reason, not just the phase.
pub fn pod_status(pod: &Pod) -> String {
    let mut reason = if pod.status.phase.is_empty() {
        "Pending".to_string()
    } else {
        pod.status.phase.clone()
    };
    if let Some(r) = &pod.status.reason {
        reason = r.clone();
    }
    let mut initializing = false;
    let n_init = pod.spec.init_containers.len();
    for (i, c) in pod.status.init_container_statuses.iter().enumerate() {
        if let Some(t) = &c.state.terminated {
            if t.exit_code == 0 {
                continue;
            }
            reason = match &t.reason {
                Some(r) if !r.is_empty() => format!("Init:{r}"),
                _ => format!("Init:ExitCode:{}", t.exit_code),
            };
            initializing = true;
        } else if let Some(w) = c
            .state
            .waiting
            .as_ref()
            .and_then(|w| w.reason.as_ref())
            .filter(|r| *r != "PodInitializing")
        {
            reason = format!("Init:{w}");
            initializing = true;
        } else {
            reason = format!("Init:{i}/{n_init}");
            initializing = true;
        }
        break;
    }
    if !initializing {
        let mut has_running = false;
        for c in pod.status.container_statuses.iter().rev() {
            if let Some(w) = c
                .state
                .waiting
                .as_ref()
                .and_then(|w| w.reason.as_ref())
                .filter(|r| !r.is_empty())
            {
                reason = w.clone();
            } else if let Some(t) = &c.state.terminated {
                reason = match &t.reason {
                    Some(r) if !r.is_empty() => r.clone(),
                    _ => format!("ExitCode:{}", t.exit_code),
                };
            } else if c.ready && c.state.running.is_some() {
                has_running = true;
            }
        }
        if reason == "Completed" && has_running {
            reason = if pod.is_ready() {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    if pod.metadata.deletion_timestamp.is_some() {
        reason = if pod.status.reason.as_deref() == Some("NodeLost") {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    reason
}

fn pod_row(now: Millis, o: &Object, wide: bool) -> Vec<String> {
    let pod = o.as_pod().expect("listed as pods");
    let total = pod.spec.containers.len();
    let ready = pod
        .status
        .container_statuses
        .iter()
        .filter(|c| c.ready)
        .count();
    let restarts: i32 = pod
        .status
        .container_statuses
        .iter()
        .map(|c| c.restart_count)
        .sum();
    let last_restart = pod
        .status
        .container_statuses
        .iter()
        .filter_map(|c| c.last_state.as_ref()?.terminated.as_ref()?.finished_at)
        .max();
    let restarts = match (restarts, last_restart) {
        (0, _) | (_, None) => restarts.to_string(),
        (n, Some(t)) => format!("{n} ({} ago)", human_age(now.saturating_sub(t.0))),
    };
    let mut row = vec![
        o.meta().name.clone(),
        format!("{ready}/{total}"),
        pod_status(pod),
        restarts,
        age(now, o),
    ];
    if wide {
        row.push(pod.status.pod_ip.clone().unwrap_or_else(|| "<none>".into()));
        row.push(if pod.spec.node_name.is_empty() {
            "<none>".into()
        } else {
            pod.spec.node_name.clone()
        });
        row.push(
            pod.status
                .nominated_node_name
                .clone()
                .unwrap_or_else(|| "<none>".into()),
        );
        row.push("<none>".into());
    }
    row
}

fn row_for(now: Millis, o: &Object, wide: bool) -> Vec<String> {
    match o {
        Object::Pod(_) => pod_row(now, o, wide),
        Object::Deployment(d) => {
            let want = d.spec.replicas.unwrap_or(1);
            vec![
                o.meta().name.clone(),
                format!("{}/{}", d.status.ready_replicas, want),
                d.status.updated_replicas.to_string(),
                d.status.available_replicas.to_string(),
                age(now, o),
            ]
        }
        Object::ReplicaSet(r) => vec![
            o.meta().name.clone(),
            r.spec.replicas.unwrap_or(1).to_string(),
            r.status.replicas.to_string(),
            r.status.ready_replicas.to_string(),
            age(now, o),
        ],
        Object::Node(n) => {
            let mut status = match n.ready_status() {
                "True" => "Ready".to_string(),
                _ => "NotReady".to_string(),
            };
            if n.spec.unschedulable {
                status.push_str(",SchedulingDisabled");
            }
            vec![
                o.meta().name.clone(),
                status,
                "<none>".into(),
                age(now, o),
                "v1.34.0".into(),
            ]
        }
        Object::Service(s) => {
            let ports: Vec<String> = s
                .spec
                .ports
                .iter()
                .map(|p| format!("{}/{}", p.port, p.protocol.as_deref().unwrap_or("TCP")))
                .collect();
            vec![
                o.meta().name.clone(),
                s.spec.type_.clone().unwrap_or_else(|| "ClusterIP".into()),
                s.spec.cluster_ip.clone().unwrap_or_else(|| "<none>".into()),
                "<none>".into(),
                if ports.is_empty() {
                    "<none>".into()
                } else {
                    ports.join(",")
                },
                age(now, o),
            ]
        }
        Object::PodDisruptionBudget(p) => {
            let show = |v: &Option<crate::sim::types::IntOrString>| match v {
                Some(crate::sim::types::IntOrString::Int(i)) => i.to_string(),
                Some(crate::sim::types::IntOrString::String(s)) => s.clone(),
                None => "N/A".into(),
            };
            vec![
                o.meta().name.clone(),
                show(&p.spec.min_available),
                show(&p.spec.max_unavailable),
                p.status.disruptions_allowed.to_string(),
                age(now, o),
            ]
        }
        Object::Event(e) => {
            let last = e
                .last_timestamp
                .map_or("<unknown>".into(), |t| human_age(now.saturating_sub(t.0)));
            vec![
                last,
                e.type_.clone(),
                e.reason.clone(),
                format!(
                    "{}/{}",
                    e.involved_object.kind.to_ascii_lowercase(),
                    e.involved_object.name
                ),
                e.message.clone(),
            ]
        }
        Object::EndpointSlice(s) => {
            let addrs: Vec<String> = s
                .endpoints
                .iter()
                .filter(|e| e.conditions.ready != Some(false))
                .flat_map(|e| e.addresses.clone())
                .collect();
            vec![
                o.meta().name.clone(),
                s.address_type.clone(),
                "<unset>".into(),
                if addrs.is_empty() {
                    "<unset>".into()
                } else {
                    addrs.join(",")
                },
                age(now, o),
            ]
        }
        Object::Lease(l) => vec![
            o.meta().name.clone(),
            l.spec.holder_identity.clone().unwrap_or_default(),
            age(now, o),
        ],
    }
}

/// The header kubectl prints for a kind.
pub fn header(kind: Kind, wide: bool) -> Vec<&'static str> {
    match kind {
        Kind::Pod if wide => vec![
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES",
        ],
        Kind::Pod => vec!["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        Kind::Deployment => vec!["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        Kind::ReplicaSet => vec!["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
        Kind::Node => vec!["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
        Kind::Service => vec![
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
        ],
        Kind::PodDisruptionBudget => vec![
            "NAME",
            "MIN AVAILABLE",
            "MAX UNAVAILABLE",
            "ALLOWED DISRUPTIONS",
            "AGE",
        ],
        Kind::Event => vec!["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        Kind::EndpointSlice => vec!["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
        Kind::Lease => vec!["NAME", "HOLDER", "AGE"],
    }
}

/// A `kubectl get KIND` table for the given objects (no output when empty).
pub fn print_table(
    now: Millis,
    kind: Kind,
    objs: &[Arc<Object>],
    wide: bool,
    prefix: bool,
) -> String {
    let rows: Vec<Vec<String>> = objs
        .iter()
        .map(|o| {
            let mut r = row_for(now, o, wide);
            if prefix && kind != Kind::Event {
                r[0] = format!("{}/{}", kind.as_str().to_ascii_lowercase(), r[0]);
            }
            r
        })
        .collect();
    table(&header(kind, wide), &rows)
}

/// `kubectl get`.
pub fn get(session: &mut Session, args: &Args) -> CommandOutput {
    let Some(what) = args.positional.first() else {
        return CommandOutput::err("You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.");
    };
    let all_ns = args.has(&["-A", "--all-namespaces"]);
    let ns = args.namespace();
    let output = args.value(&["-o", "--output"]).unwrap_or("");
    let wide = output == "wide";
    let selector = match args
        .value(&["-l", "--selector"])
        .map(crate::sim::world::parse_label_selector)
        .transpose()
    {
        Ok(s) => s,
        Err(e) => return CommandOutput::err(format!("error: {e}")),
    };
    let sim = &session.sim;
    let now = sim.now();
    let kinds: Vec<Kind> = if what == "all" {
        vec![Kind::Pod, Kind::Service, Kind::Deployment, Kind::ReplicaSet]
    } else {
        let mut ks = Vec::new();
        for part in what.split(',') {
            let name = part.split('/').next().unwrap_or(part);
            match Kind::from_resource_name(name) {
                Some(k) => ks.push(k),
                None => {
                    return CommandOutput::err(format!(
                        "error: the server doesn't have a resource type \"{name}\""
                    ))
                }
            }
        }
        ks
    };
    let names: Vec<&str> = args.positional[1..]
        .iter()
        .map(String::as_str)
        .chain(what.split_once('/').map(|(_, n)| n))
        .collect();
    let mut out = String::new();
    let mut errors = String::new();
    for kind in &kinds {
        let mut objs: Vec<Arc<Object>> = sim
            .api
            .list(*kind)
            .filter(|o| all_ns || !kind.namespaced() || o.meta().namespace == ns)
            .filter(|o| {
                selector
                    .as_ref()
                    .is_none_or(|s| s.matches(&o.meta().labels))
            })
            .filter(|o| names.is_empty() || names.contains(&o.meta().name.as_str()))
            .cloned()
            .collect();
        for n in &names {
            if !objs.iter().any(|o| o.meta().name == *n) {
                errors.push_str(&format!(
                    "Error from server (NotFound): {} \"{n}\" not found\n",
                    kind.resource()
                ));
            }
        }
        if *kind == Kind::Event {
            objs.sort_by_key(|o| o.as_event().and_then(|e| e.last_timestamp));
        }
        if objs.is_empty() {
            continue;
        }
        match output {
            "yaml" | "json" => {
                let docs: Vec<serde_json::Value> = objs.iter().map(|o| o.to_json()).collect();
                let doc = if docs.len() == 1 && !names.is_empty() {
                    docs.into_iter().next().expect("one")
                } else {
                    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": docs, "metadata": {"resourceVersion": ""}})
                };
                if output == "yaml" {
                    out.push_str(&crate::sim::yaml::to_yaml(&doc));
                } else {
                    out.push_str(&serde_json::to_string_pretty(&doc).unwrap_or_default());
                    out.push('\n');
                }
            }
            "name" => {
                for o in &objs {
                    out.push_str(&format!("{}\n", crate::sim::session::kubectl_name(o)));
                }
            }
            _ => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&print_table(now, *kind, &objs, wide, kinds.len() > 1));
            }
        }
    }
    if out.is_empty() && errors.is_empty() {
        let msg = if all_ns {
            "No resources found\n".to_string()
        } else {
            format!("No resources found in {ns} namespace.\n")
        };
        return CommandOutput {
            stdout: String::new(),
            stderr: msg,
            ok: true,
        };
    }
    CommandOutput {
        ok: errors.is_empty(),
        stdout: out,
        stderr: errors,
    }
}

/// Whether a pod counts as Ready for kubectl's READY column (used by views too).
pub fn pod_ready(pod: &Pod) -> bool {
    find_condition(&pod.status.conditions, "Ready").is_some_and(|c| c.status == "True")
}
