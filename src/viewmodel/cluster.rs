//! The cluster view's model: nodes as cards with capacity bars, pods as chips with a status.
//!
//! A pod's STATUS text is computed exactly as `kubectl get pods` prints it (kubectl's `printPod`),
//! so what the learner sees on a chip matches what they will see in a real terminal.

use std::collections::BTreeMap;

use super::format::{format_bytes, format_cpu, parse_bytes, parse_cpu_millis, percent};
use crate::sim::time::human_age;
use crate::sim::types::{find_condition, Millis, Node, Pod};

/// The visual family of a pod: colour, glyph and label always travel together so the state is
/// readable without colour (shape and text carry it too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tone {
    /// Pending with no node yet: waiting for the scheduler (or unschedulable).
    Unscheduled,
    /// Bound to a node, containers not running yet (ContainerCreating, pulling).
    Starting,
    /// Running but not Ready (readiness probe failing, or still starting up).
    NotReady,
    /// Running and Ready: serving.
    Ready,
    /// Crash-looping, failing to pull, Failed, Error, OOMKilled.
    Failing,
    /// Succeeded / Completed.
    Completed,
    /// Being deleted (deletionTimestamp set).
    Terminating,
    /// The node stopped reporting: the status is stale.
    Unknown,
}

impl Tone {
    /// The CSS modifier class (`pod--ready`).
    pub fn class(self) -> &'static str {
        match self {
            Tone::Unscheduled => "tone-unscheduled",
            Tone::Starting => "tone-starting",
            Tone::NotReady => "tone-notready",
            Tone::Ready => "tone-ready",
            Tone::Failing => "tone-failing",
            Tone::Completed => "tone-completed",
            Tone::Terminating => "tone-terminating",
            Tone::Unknown => "tone-unknown",
        }
    }

    /// A glyph whose shape alone tells the state apart (for colour-blind readers and print).
    pub fn glyph(self) -> &'static str {
        match self {
            Tone::Unscheduled => "◌",
            Tone::Starting => "◔",
            Tone::NotReady => "◐",
            Tone::Ready => "●",
            Tone::Failing => "✕",
            Tone::Completed => "✓",
            Tone::Terminating => "⊘",
            Tone::Unknown => "?",
        }
    }

    /// The legend's words.
    pub fn label(self) -> &'static str {
        match self {
            Tone::Unscheduled => "Unscheduled",
            Tone::Starting => "Starting",
            Tone::NotReady => "Not ready",
            Tone::Ready => "Ready",
            Tone::Failing => "Failing",
            Tone::Completed => "Completed",
            Tone::Terminating => "Terminating",
            Tone::Unknown => "Unknown",
        }
    }

    /// Every tone, in legend order.
    pub const ALL: [Tone; 8] = [
        Tone::Unscheduled,
        Tone::Starting,
        Tone::NotReady,
        Tone::Ready,
        Tone::Failing,
        Tone::Completed,
        Tone::Terminating,
        Tone::Unknown,
    ];
}

/// `kubectl get pods`' STATUS column for one pod.
pub fn pod_status(pod: &Pod) -> String {
    let mut reason = if pod.status.phase.is_empty() {
        "Pending".to_string()
    } else {
        pod.status.phase.clone()
    };
    if let Some(r) = pod.status.reason.as_deref().filter(|r| !r.is_empty()) {
        reason = r.to_string();
    }
    let mut initializing = false;
    let n_init = pod.spec.init_containers.len();
    for (i, c) in pod.status.init_container_statuses.iter().enumerate() {
        match (&c.state.terminated, &c.state.waiting) {
            (Some(t), _) if t.exit_code == 0 => continue,
            (Some(t), _) => {
                reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                    Some(r) => format!("Init:{r}"),
                    None => format!("Init:ExitCode:{}", t.exit_code),
                };
                initializing = true;
            }
            (None, Some(w))
                if w.reason
                    .as_deref()
                    .is_some_and(|r| !r.is_empty() && r != "PodInitializing") =>
            {
                reason = format!("Init:{}", w.reason.as_deref().unwrap_or_default());
                initializing = true;
            }
            _ => {
                reason = format!("Init:{i}/{n_init}");
                initializing = true;
            }
        }
        break;
    }
    let initialized =
        find_condition(&pod.status.conditions, "Initialized").is_some_and(|c| c.status == "True");
    if !initializing || initialized {
        let mut has_running = false;
        for c in pod.status.container_statuses.iter().rev() {
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
            }
        }
        if reason == "Completed" && has_running {
            reason = if find_condition(&pod.status.conditions, "Ready").is_some() {
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
    reason
}

/// `kubectl get pods`' READY column (`1/1`).
pub fn pod_ready_text(pod: &Pod) -> String {
    let ready = pod
        .status
        .container_statuses
        .iter()
        .filter(|c| c.ready && c.state.running.is_some())
        .count();
    format!("{ready}/{}", pod.spec.containers.len())
}

/// The restart count and, as kubectl prints it, how long ago the last one was (`2 (15s ago)`).
pub fn pod_restarts_text(pod: &Pod, now: Millis) -> String {
    let restarts: i32 = pod
        .status
        .container_statuses
        .iter()
        .map(|c| c.restart_count)
        .sum();
    let last = pod
        .status
        .container_statuses
        .iter()
        .filter_map(|c| c.last_state.as_ref()?.terminated.as_ref()?.finished_at)
        .max();
    match last {
        Some(t) if restarts > 0 => {
            format!("{restarts} ({} ago)", human_age(now.saturating_sub(t.0)))
        }
        _ => restarts.to_string(),
    }
}

/// Which visual family a pod's state belongs to.
pub fn pod_tone(pod: &Pod, status: &str) -> Tone {
    if pod.metadata.deletion_timestamp.is_some() {
        return if status == "Unknown" {
            Tone::Unknown
        } else {
            Tone::Terminating
        };
    }
    if pod.status.phase == "Unknown" || status == "Unknown" {
        return Tone::Unknown;
    }
    const FAILING: [&str; 12] = [
        "CrashLoopBackOff",
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "Error",
        "OOMKilled",
        "Failed",
        "Evicted",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
        "ContainerCannotRun",
    ];
    if FAILING.contains(&status)
        || pod.status.phase == "Failed"
        || status.starts_with("ExitCode:")
        || status.starts_with("Signal:")
        || status.starts_with("Init:") && FAILING.iter().any(|f| status.ends_with(f))
    {
        return Tone::Failing;
    }
    if pod.status.phase == "Succeeded" || status == "Completed" {
        return Tone::Completed;
    }
    if pod.spec.node_name.is_empty() {
        return Tone::Unscheduled;
    }
    if pod.status.phase == "Running" {
        return if pod.is_ready() {
            Tone::Ready
        } else {
            Tone::NotReady
        };
    }
    Tone::Starting
}

/// One pod chip.
#[derive(Clone, Debug, PartialEq)]
pub struct PodView {
    pub name: String,
    pub namespace: String,
    /// `spec.nodeName`, empty while unscheduled.
    pub node: String,
    /// `status.phase` (`Pending` when the kubelet has not written one yet).
    pub phase: String,
    /// The Ready condition.
    pub ready: bool,
    /// kubectl's STATUS column.
    pub status: String,
    /// kubectl's READY column.
    pub ready_text: String,
    /// Total container restarts.
    pub restarts: i32,
    /// kubectl's RESTARTS column.
    pub restarts_text: String,
    pub tone: Tone,
    /// The controlling owner (`ReplicaSet/web-7d4b9c8f6`), if any.
    pub owner: Option<String>,
    /// kubectl's AGE column.
    pub age: String,
    /// The scheduler's reason when it could not place the pod (PodScheduled=False message).
    pub unschedulable: Option<String>,
    pub uid: String,
}

impl PodView {
    /// Builds the chip model of `pod` at simulated time `now`.
    pub fn of(pod: &Pod, now: Millis) -> PodView {
        let status = pod_status(pod);
        let tone = pod_tone(pod, &status);
        let unschedulable = find_condition(&pod.status.conditions, "PodScheduled")
            .filter(|c| c.status == "False")
            .map(|c| {
                c.message
                    .clone()
                    .or_else(|| c.reason.clone())
                    .unwrap_or_default()
            });
        PodView {
            name: pod.metadata.name.clone(),
            namespace: pod.metadata.namespace.clone(),
            node: pod.spec.node_name.clone(),
            phase: if pod.status.phase.is_empty() {
                "Pending".into()
            } else {
                pod.status.phase.clone()
            },
            ready: pod.is_ready(),
            ready_text: pod_ready_text(pod),
            restarts: pod
                .status
                .container_statuses
                .iter()
                .map(|c| c.restart_count)
                .sum(),
            restarts_text: pod_restarts_text(pod, now),
            tone,
            owner: pod
                .metadata
                .controller_ref()
                .map(|o| format!("{}/{}", o.kind, o.name)),
            age: pod
                .metadata
                .creation_timestamp
                .map(|t| human_age(now.saturating_sub(t.0)))
                .unwrap_or_else(|| "<unknown>".into()),
            unschedulable,
            uid: pod.metadata.uid.clone(),
            status,
        }
    }

    /// A one-line description for tooltips and screen readers.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "Pod {}: {} ({}), ready {}",
            self.name,
            self.status,
            self.tone.label(),
            self.ready_text
        );
        if self.restarts > 0 {
            s.push_str(&format!(", {} restarts", self.restarts));
        }
        if !self.node.is_empty() {
            s.push_str(&format!(", on {}", self.node));
        }
        s
    }
}

/// One capacity bar: requested vs allocatable.
#[derive(Clone, Debug, PartialEq)]
pub struct Usage {
    pub used: u64,
    pub total: u64,
    /// 0..=100 for the bar's width.
    pub pct: u32,
    /// `350m / 4` style text.
    pub text: String,
    /// Requests exceed allocatable (possible after a node shrinks, or for pods bound by hand).
    pub over: bool,
}

impl Usage {
    fn new(used: u64, total: u64, fmt: fn(u64) -> String) -> Usage {
        Usage {
            used,
            total,
            pct: percent(used, total),
            text: format!("{} / {}", fmt(used), fmt(total)),
            over: used > total,
        }
    }
}

/// The sum of a pod's container requests (cpu millicores, memory bytes), as the scheduler counts
/// them for a node's "Allocated resources" (init containers: the max, as Kubernetes does).
pub fn pod_requests(pod: &Pod) -> (u64, u64) {
    let sum = |cs: &[crate::sim::types::Container]| -> (u64, u64) {
        cs.iter().fold((0, 0), |(c, m), ct| {
            let req = ct.resources.as_ref().map(|r| &r.requests);
            let cpu = req
                .and_then(|r| r.get("cpu"))
                .and_then(|q| parse_cpu_millis(q))
                .unwrap_or(0);
            let mem = req
                .and_then(|r| r.get("memory"))
                .and_then(|q| parse_bytes(q))
                .unwrap_or(0);
            (c + cpu, m + mem)
        })
    };
    let (c, m) = sum(&pod.spec.containers);
    let (ic, im) = pod
        .spec
        .init_containers
        .iter()
        .map(|ct| sum(std::slice::from_ref(ct)))
        .fold((0, 0), |(a, b), (x, y)| (a.max(x), b.max(y)));
    (c.max(ic), m.max(im))
}

/// One node card.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeView {
    pub name: String,
    /// The Ready condition's status: `True`, `False` or `Unknown`.
    pub ready: String,
    /// kubectl's STATUS column (`Ready`, `NotReady`, `Unknown`, `…,SchedulingDisabled`).
    pub status: String,
    /// The machine is running (false after a NodeDown fault). None when there is no machine.
    pub machine_up: Option<bool>,
    pub cpu: Usage,
    pub memory: Usage,
    pub pods_usage: Usage,
    /// Pods bound to this node, oldest first (so a new pod appears at the end).
    pub pods: Vec<PodView>,
    /// `key=value:Effect` for each taint.
    pub taints: Vec<String>,
    pub unschedulable: bool,
    /// The Ready condition's reason and message, for the tooltip.
    pub ready_reason: String,
}

impl NodeView {
    /// The lower-case form used in `data-ready` (`true`, `false`, `unknown`).
    pub fn ready_attr(&self) -> String {
        self.ready.to_ascii_lowercase()
    }
}

/// Everything the cluster view draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterView {
    pub nodes: Vec<NodeView>,
    /// Pods with no node yet (or bound to a node that does not exist).
    pub unscheduled: Vec<PodView>,
}

impl ClusterView {
    /// Builds the view from the live objects. `machine_up` tells which machines run.
    pub fn build<'a>(
        nodes: impl IntoIterator<Item = &'a Node>,
        pods: impl IntoIterator<Item = &'a Pod>,
        machine_up: &BTreeMap<String, bool>,
        now: Millis,
    ) -> ClusterView {
        let mut by_node: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
        let mut view = ClusterView::default();
        let mut unscheduled: Vec<&Pod> = Vec::new();
        let node_list: Vec<&Node> = nodes.into_iter().collect();
        for pod in pods {
            if pod.spec.node_name.is_empty()
                || !node_list
                    .iter()
                    .any(|n| n.metadata.name == pod.spec.node_name)
            {
                unscheduled.push(pod);
            } else {
                by_node
                    .entry(pod.spec.node_name.clone())
                    .or_default()
                    .push(pod);
            }
        }
        let order = |a: &&Pod, b: &&Pod| {
            (
                a.metadata.creation_timestamp,
                &a.metadata.namespace,
                &a.metadata.name,
            )
                .cmp(&(
                    b.metadata.creation_timestamp,
                    &b.metadata.namespace,
                    &b.metadata.name,
                ))
        };
        unscheduled.sort_by(order);
        view.unscheduled = unscheduled
            .into_iter()
            .map(|p| PodView::of(p, now))
            .collect();
        for node in node_list {
            let name = node.metadata.name.clone();
            let mut pods = by_node.remove(&name).unwrap_or_default();
            pods.sort_by(order);
            // Allocated resources count pods that still hold them: not Succeeded/Failed.
            let holding = pods
                .iter()
                .filter(|p| p.status.phase != "Succeeded" && p.status.phase != "Failed");
            let (cpu_used, mem_used, n_pods) = holding.fold((0, 0, 0), |(c, m, n), p| {
                let (pc, pm) = pod_requests(p);
                (c + pc, m + pm, n + 1)
            });
            let alloc = if node.status.allocatable.is_empty() {
                &node.status.capacity
            } else {
                &node.status.allocatable
            };
            let cpu_total = alloc
                .get("cpu")
                .and_then(|q| parse_cpu_millis(q))
                .unwrap_or(0);
            let mem_total = alloc
                .get("memory")
                .and_then(|q| parse_bytes(q))
                .unwrap_or(0);
            let pods_total = alloc
                .get("pods")
                .and_then(|q| q.parse::<u64>().ok())
                .unwrap_or(110);
            let ready_cond = find_condition(&node.status.conditions, "Ready");
            let ready = node.ready_status().to_string();
            let mut status = match ready.as_str() {
                "True" => "Ready".to_string(),
                "False" => "NotReady".to_string(),
                _ => "Unknown".to_string(),
            };
            if node.spec.unschedulable {
                status.push_str(",SchedulingDisabled");
            }
            view.nodes.push(NodeView {
                machine_up: machine_up.get(&name).copied(),
                ready,
                status,
                cpu: Usage::new(cpu_used, cpu_total, format_cpu),
                memory: Usage::new(mem_used, mem_total, format_bytes),
                pods_usage: Usage::new(n_pods, pods_total, |n| n.to_string()),
                pods: pods.into_iter().map(|p| PodView::of(p, now)).collect(),
                taints: node
                    .spec
                    .taints
                    .iter()
                    .map(|t| match &t.value {
                        Some(v) if !v.is_empty() => format!("{}={}:{}", t.key, v, t.effect),
                        _ => format!("{}:{}", t.key, t.effect),
                    })
                    .collect(),
                unschedulable: node.spec.unschedulable,
                ready_reason: ready_cond
                    .map(|c| {
                        let r = c.reason.clone().unwrap_or_default();
                        match &c.message {
                            Some(m) if !m.is_empty() => format!("{r}: {m}"),
                            _ => r,
                        }
                    })
                    .unwrap_or_else(|| "no Ready condition reported yet".into()),
                name,
            });
        }
        view
    }

    /// Every pod in the view, on nodes and unscheduled.
    pub fn all_pods(&self) -> impl Iterator<Item = &PodView> {
        self.nodes
            .iter()
            .flat_map(|n| n.pods.iter())
            .chain(self.unscheduled.iter())
    }

    /// Counts per tone, for the legend.
    pub fn tone_counts(&self) -> BTreeMap<Tone, usize> {
        let mut m = BTreeMap::new();
        for p in self.all_pods() {
            *m.entry(p.tone).or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::types::{
        Condition, Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
        ContainerStateWaiting, ContainerStatus, NodeSpec, NodeStatus, ObjectMeta, PodSpec,
        PodStatus, ResourceRequirements, Time,
    };

    fn pod(name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                creation_timestamp: Some(Time(0)),
                ..Default::default()
            },
            spec: PodSpec {
                containers: vec![Container {
                    name: "nginx".into(),
                    image: "nginx:1.27".into(),
                    resources: Some(ResourceRequirements {
                        requests: [
                            ("cpu".to_string(), "100m".to_string()),
                            ("memory".to_string(), "128Mi".to_string()),
                        ]
                        .into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            },
            status: PodStatus {
                phase: "Pending".into(),
                ..Default::default()
            },
        }
    }

    fn on(mut p: Pod, node: &str) -> Pod {
        p.spec.node_name = node.into();
        p
    }

    fn running(mut p: Pod, ready: bool) -> Pod {
        p.status.phase = "Running".into();
        p.status.conditions = vec![Condition {
            type_: "Ready".into(),
            status: if ready { "True" } else { "False" }.into(),
            ..Default::default()
        }];
        p.status.container_statuses = vec![ContainerStatus {
            name: "nginx".into(),
            ready,
            state: ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(Time(0)),
                }),
                ..Default::default()
            },
            ..Default::default()
        }];
        p
    }

    fn waiting(mut p: Pod, reason: &str, restarts: i32) -> Pod {
        p.status.container_statuses = vec![ContainerStatus {
            name: "nginx".into(),
            restart_count: restarts,
            state: ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: None,
                }),
                ..Default::default()
            },
            last_state: Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 1,
                    reason: Some("Error".into()),
                    finished_at: Some(Time(10_000)),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }];
        p
    }

    fn node(name: &str, ready: &str) -> Node {
        let res: crate::sim::types::StringMap = [
            ("cpu".to_string(), "4".to_string()),
            ("memory".to_string(), "8Gi".to_string()),
            ("pods".to_string(), "110".to_string()),
        ]
        .into();
        Node {
            metadata: ObjectMeta {
                name: name.into(),
                ..Default::default()
            },
            spec: NodeSpec::default(),
            status: NodeStatus {
                capacity: res.clone(),
                allocatable: res,
                conditions: vec![Condition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_new_pod_reads_pending_and_unscheduled() {
        let p = pod("web-1");
        assert_eq!(pod_status(&p), "Pending");
        assert_eq!(pod_tone(&p, "Pending"), Tone::Unscheduled);
        assert_eq!(pod_ready_text(&p), "0/1");
    }

    #[test]
    fn a_bound_pod_with_a_creating_container_reads_container_creating() {
        let p = waiting(on(pod("web-1"), "node-1"), "ContainerCreating", 0);
        assert_eq!(pod_status(&p), "ContainerCreating");
        assert_eq!(pod_tone(&p, "ContainerCreating"), Tone::Starting);
    }

    #[test]
    fn running_pods_split_on_readiness() {
        let ready = running(on(pod("a"), "node-1"), true);
        let unready = running(on(pod("b"), "node-1"), false);
        assert_eq!(pod_status(&ready), "Running");
        assert_eq!(pod_tone(&ready, "Running"), Tone::Ready);
        assert_eq!(pod_ready_text(&ready), "1/1");
        assert_eq!(pod_tone(&unready, "Running"), Tone::NotReady);
        assert_eq!(pod_ready_text(&unready), "0/1");
    }

    #[test]
    fn a_crash_looping_pod_shows_the_waiting_reason_and_restarts_with_age() {
        let mut p = waiting(on(pod("a"), "node-1"), "CrashLoopBackOff", 3);
        p.status.phase = "Running".into();
        assert_eq!(pod_status(&p), "CrashLoopBackOff");
        assert_eq!(pod_tone(&p, "CrashLoopBackOff"), Tone::Failing);
        assert_eq!(pod_restarts_text(&p, 25_000), "3 (15s ago)");
    }

    #[test]
    fn a_deleted_pod_reads_terminating_unless_its_node_was_lost() {
        let mut p = running(on(pod("a"), "node-1"), true);
        p.metadata.deletion_timestamp = Some(Time(5_000));
        assert_eq!(pod_status(&p), "Terminating");
        assert_eq!(pod_tone(&p, "Terminating"), Tone::Terminating);
        p.status.reason = Some("NodeLost".into());
        assert_eq!(pod_status(&p), "Unknown");
        assert_eq!(pod_tone(&p, "Unknown"), Tone::Unknown);
    }

    #[test]
    fn a_terminated_container_without_reason_shows_its_exit_code() {
        let mut p = on(pod("a"), "node-1");
        p.status.phase = "Failed".into();
        p.status.container_statuses = vec![ContainerStatus {
            name: "nginx".into(),
            state: ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 2,
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        }];
        assert_eq!(pod_status(&p), "ExitCode:2");
        assert_eq!(pod_tone(&p, "ExitCode:2"), Tone::Failing);
    }

    #[test]
    fn node_bars_sum_the_requests_of_pods_that_hold_resources() {
        let n = node("node-1", "True");
        let a = running(on(pod("a"), "node-1"), true);
        let b = running(on(pod("b"), "node-1"), true);
        let mut done = on(pod("c"), "node-1");
        done.status.phase = "Succeeded".into();
        let pending = pod("d");
        let view = ClusterView::build([&n], [&a, &b, &done, &pending], &BTreeMap::new(), 0);
        let nv = &view.nodes[0];
        assert_eq!(nv.cpu.used, 200);
        assert_eq!(nv.cpu.text, "200m / 4");
        assert_eq!(nv.cpu.pct, 5);
        assert_eq!(nv.memory.text, "256Mi / 8Gi");
        assert_eq!(nv.pods_usage.used, 2);
        assert_eq!(
            nv.pods.len(),
            3,
            "the completed pod is still shown on its node"
        );
        assert_eq!(view.unscheduled.len(), 1);
        assert_eq!(view.unscheduled[0].name, "d");
    }

    #[test]
    fn node_status_reads_like_kubectl_get_nodes() {
        let mut n = node("node-2", "Unknown");
        n.spec.unschedulable = true;
        let view = ClusterView::build(
            [&n],
            [],
            &BTreeMap::from([("node-2".to_string(), false)]),
            0,
        );
        assert_eq!(view.nodes[0].status, "Unknown,SchedulingDisabled");
        assert_eq!(view.nodes[0].ready_attr(), "unknown");
        assert_eq!(view.nodes[0].machine_up, Some(false));
        let fresh = Node {
            metadata: ObjectMeta {
                name: "n".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(
            ClusterView::build([&fresh], [], &BTreeMap::new(), 0).nodes[0].status,
            "Unknown"
        );
    }

    #[test]
    fn pods_bound_to_a_missing_node_are_listed_with_the_unscheduled() {
        let p = on(pod("a"), "node-9");
        let view = ClusterView::build([], [&p], &BTreeMap::new(), 0);
        assert_eq!(view.unscheduled.len(), 1);
    }

    #[test]
    fn pods_on_a_node_keep_creation_order() {
        let n = node("node-1", "True");
        let mut late = on(pod("a-late"), "node-1");
        late.metadata.creation_timestamp = Some(Time(9_000));
        let early = on(pod("z-early"), "node-1");
        let view = ClusterView::build([&n], [&late, &early], &BTreeMap::new(), 10_000);
        let names: Vec<&str> = view.nodes[0].pods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["z-early", "a-late"]);
        assert_eq!(view.nodes[0].pods[1].age, "1s");
    }

    #[test]
    fn every_tone_has_a_distinct_glyph_and_class() {
        let glyphs: std::collections::BTreeSet<_> = Tone::ALL.iter().map(|t| t.glyph()).collect();
        let classes: std::collections::BTreeSet<_> = Tone::ALL.iter().map(|t| t.class()).collect();
        assert_eq!(glyphs.len(), Tone::ALL.len());
        assert_eq!(classes.len(), Tone::ALL.len());
    }
}
