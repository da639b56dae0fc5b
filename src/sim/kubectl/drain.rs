//! `kubectl cordon`, `uncordon` and `drain`.
//!
//! `drain` is a long-running client. The command itself does what kubectl does before its first
//! eviction — cordon, list the node's pods, apply the filters with their refusal messages — and
//! then hands over to a [`DrainController`]: a component added to the world that evicts each pod
//! through `POST pods/eviction` over simulated time, prints kubectl's lines as it goes (a 429 is
//! retried every 5 simulated seconds, forever unless `--timeout` is set), waits for each pod to
//! be gone (`pod/web-… evicted`) and ends with `node/node-2 drained`. Its output accumulates in a
//! [`CommandLog`] that [`Session::command_logs`] exposes to the UI console and to tests.
//!
//! Deliberate differences: several nodes are drained concurrently (kubectl drains them one after
//! the other); a pod owned by a DaemonSet is treated as if its DaemonSet existed (the playground
//! does not simulate DaemonSets); pod deletion is noticed through the drain's informer rather
//! than by polling GET every second.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::json;

use super::args::{flag, Args, Flag, FlagKind};
use super::util::{aggregate, error, fail, merge_patch};
use super::CommandOutput;
use crate::sim::api::types::{Kind, LabelSelector, Millis, Object, ObjectKey, Pod, Str};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, WatchEvent};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{ComponentId, Controller, Ctx, Outcome, ReconcileRecord};
use crate::sim::time::format_duration;
use crate::sim::world::Sim;
use crate::sort::StableSort;
use crate::vec_map::{SlotMap, VecMap};

/// How long kubectl sleeps after a 429 before evicting again.
pub const EVICTION_RETRY: Millis = 5_000;

/// Which stream a line went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One line a long-running command printed, with the simulated time it printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    pub at: Millis,
    pub stream: Stream,
    pub text: String,
}

/// The output of a long-running kubectl command so far.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandLog {
    /// The component running it.
    pub id: ComponentId,
    /// The command line (`kubectl drain node-2 --ignore-daemonsets`).
    pub command: String,
    pub started: Millis,
    pub lines: Vec<LogLine>,
    /// When it exited and whether it succeeded (None while running).
    pub finished: Option<(Millis, bool)>,
}

impl CommandLog {
    fn push(&mut self, at: Millis, stream: Stream, text: impl Into<String>) {
        for line in text.into().lines() {
            self.lines.push(LogLine {
                at,
                stream,
                text: line.to_string(),
            });
        }
    }

    /// Whether the command is still running.
    pub fn running(&self) -> bool {
        self.finished.is_none()
    }

    /// Everything printed so far, as a terminal interleaves stdout and stderr.
    pub fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{}\n", l.text)).collect()
    }
}

// ------------------------------------------------------------------ cordon / uncordon

/// Flags of `cordon` and `uncordon`.
pub const CORDON_FLAGS: &[Flag] = &[
    flag("selector", Some('l'), FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
];

/// Flags of `drain`.
pub const DRAIN_FLAGS: &[Flag] = &[
    flag("force", None, FlagKind::Bool),
    flag("ignore-daemonsets", None, FlagKind::Bool),
    flag("delete-emptydir-data", None, FlagKind::Bool),
    flag("delete-local-data", None, FlagKind::Bool),
    flag("grace-period", None, FlagKind::Int),
    flag("timeout", None, FlagKind::Duration),
    flag("pod-selector", None, FlagKind::Str),
    flag("disable-eviction", None, FlagKind::Bool),
    flag("skip-wait-for-delete-timeout", None, FlagKind::Int),
    flag("selector", Some('l'), FlagKind::Str),
    flag("dry-run", None, FlagKind::OptionalValue("unchanged")),
    flag("chunk-size", None, FlagKind::Int),
];

fn nodes_for(sim: &Sim, args: &Args, verb: &str) -> Result<Vec<String>, CommandOutput> {
    let selector = args.get("selector");
    if args.positional.is_empty() && selector.is_none() {
        return Err(fail(format!(
            "error: USAGE: {verb} NODE [flags]\nSee 'kubectl {verb} -h' for help and examples\n"
        )));
    }
    if !args.positional.is_empty() && selector.is_some() {
        return Err(fail(format!(
            "error: error: cannot specify both a node name and a --selector option\nSee 'kubectl {verb} -h' for help and examples\n"
        )));
    }
    if let Some(sel) = selector {
        let sel = LabelSelector::parse(sel).map_err(error)?;
        return Ok(sim
            .api()
            .list(Kind::Node)
            .filter(|o| sel.matches(&o.meta().labels))
            .map(|o| o.meta().name.to_string())
            .collect());
    }
    let mut names = Vec::new();
    for p in &args.positional {
        let name = match p.split_once('/') {
            Some((k, n)) if Kind::from_resource_name(k) == Some(Kind::Node) => n,
            Some((k, _)) => {
                return Err(error(format!(
                    "error: expected resource of type node, got {:?}",
                    Kind::from_resource_name(k).map_or(k.to_string(), |k| k.resource().to_string())
                )))
            }
            None => p.as_str(),
        };
        if sim
            .api()
            .get(&ObjectKey::new(Kind::Node, "", name))
            .is_none()
        {
            return Err(fail(format!(
                "Error from server (NotFound): nodes \"{name}\" not found\n"
            )));
        }
        names.push(name.to_string());
    }
    Ok(names)
}

/// Sets `spec.unschedulable`; the line kubectl prints (`node/x cordoned`, `already cordoned`).
fn cordon_one(sim: &mut Sim, node: &str, desired: bool) -> Result<String, String> {
    let key = ObjectKey::new(Kind::Node, "", node);
    let current = sim
        .api()
        .get(&key)
        .and_then(|o| o.as_node())
        .map(|n| n.spec.unschedulable)
        .ok_or_else(|| format!("Error from server (NotFound): nodes \"{node}\" not found"))?;
    let verb = if desired { "cordon" } else { "uncordon" };
    if current == desired {
        return Ok(format!("node/{node} already {verb}ed"));
    }
    let patch = if desired {
        json!({"spec": {"unschedulable": true}})
    } else {
        json!({"spec": {"unschedulable": null}})
    };
    merge_patch(sim, &key, patch)
        .map_err(|e| format!("error: unable to {verb} node {node:?}: {}", e.message))?;
    Ok(format!("node/{node} {verb}ed"))
}

/// `kubectl cordon NODE…` (`desired = true`) and `kubectl uncordon NODE…`.
pub fn cordon(sim: &mut Sim, args: &Args, desired: bool) -> CommandOutput {
    let verb = if desired { "cordon" } else { "uncordon" };
    if let Some(d) = args.get("dry-run").filter(|d| *d != "none") {
        return super::util::unsupported(&format!("--dry-run={d}"), "");
    }
    let nodes = match nodes_for(sim, args, verb) {
        Ok(n) => n,
        Err(e) => return e,
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    for n in nodes {
        match cordon_one(sim, &n, desired) {
            Ok(l) => stdout.push_str(&format!("{l}\n")),
            Err(e) => stderr.push_str(&format!("{e}\n")),
        }
    }
    CommandOutput {
        ok: stderr.is_empty(),
        stdout,
        stderr,
    }
}

// ------------------------------------------------------------------ drain: pod filters

/// What `kubectl drain` was asked to do.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrainOptions {
    pub force: bool,
    pub ignore_daemonsets: bool,
    pub delete_emptydir_data: bool,
    /// `--grace-period`; negative means each pod's own terminationGracePeriodSeconds.
    pub grace_period: i64,
    /// `--timeout`; None waits forever (kubectl's default `0`).
    pub timeout: Option<Millis>,
    pub disable_eviction: bool,
    pub pod_selector: Option<LabelSelector>,
    /// `--skip-wait-for-delete-timeout` in seconds (0: off).
    pub skip_wait_for_delete_timeout: i64,
}

/// A filter's verdict on one pod (`PodDeleteStatus`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Okay,
    Skip,
    Warning { delete: bool, message: String },
    Error(String),
}

impl Verdict {
    fn deletes(&self) -> bool {
        matches!(self, Verdict::Okay | Verdict::Warning { delete: true, .. })
    }
}

const DAEMONSET_FATAL: &str = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)";
const DAEMONSET_WARNING: &str = "ignoring DaemonSet-managed Pods";
const LOCAL_STORAGE_FATAL: &str =
    "Pods with local storage (use --delete-emptydir-data to override)";
const LOCAL_STORAGE_WARNING: &str = "deleting Pods with local storage";
const UNMANAGED_FATAL: &str =
    "cannot delete Pods that declare no controller (use --force to override)";
const UNMANAGED_WARNING: &str = "deleting Pods that declare no controller";

fn terminal(p: &Pod) -> bool {
    p.status.phase == "Succeeded" || p.status.phase == "Failed"
}

fn skip_deleted(p: &Pod, opts: &DrainOptions, now: Millis) -> bool {
    opts.skip_wait_for_delete_timeout > 0
        && p.metadata
            .deletion_timestamp
            .is_some_and(|t| (now as i64 - t.0 as i64) / 1000 > opts.skip_wait_for_delete_timeout)
}

/// `makeFilters` in order: skipDeleted, daemonSet, mirror, localStorage, unreplicated. The first
/// verdict that does not delete ends the chain; otherwise the last one stands.
fn classify(p: &Pod, opts: &DrainOptions, now: Millis) -> Verdict {
    let controller = p.metadata.controller_ref();
    let filters: [&dyn Fn() -> Verdict; 5] = [
        &|| {
            if skip_deleted(p, opts, now) {
                Verdict::Skip
            } else {
                Verdict::Okay
            }
        },
        &|| match controller {
            Some(c) if c.kind == "DaemonSet" && !terminal(p) => {
                if opts.ignore_daemonsets {
                    Verdict::Warning {
                        delete: false,
                        message: DAEMONSET_WARNING.into(),
                    }
                } else {
                    Verdict::Error(DAEMONSET_FATAL.into())
                }
            }
            _ => Verdict::Okay,
        },
        &|| {
            if p.metadata
                .annotations
                .contains_key("kubernetes.io/config.mirror")
            {
                Verdict::Skip
            } else {
                Verdict::Okay
            }
        },
        &|| {
            let empty_dir = p
                .spec
                .volumes
                .as_ref()
                .and_then(|v| v.as_array())
                .is_some_and(|a| a.iter().any(|v| v.get("emptyDir").is_some()));
            if !empty_dir || terminal(p) {
                Verdict::Okay
            } else if !opts.delete_emptydir_data {
                Verdict::Error(LOCAL_STORAGE_FATAL.into())
            } else {
                Verdict::Warning {
                    delete: true,
                    message: LOCAL_STORAGE_WARNING.into(),
                }
            }
        },
        &|| {
            if terminal(p) || controller.is_some() {
                Verdict::Okay
            } else if opts.force {
                Verdict::Warning {
                    delete: true,
                    message: UNMANAGED_WARNING.into(),
                }
            } else {
                Verdict::Error(UNMANAGED_FATAL.into())
            }
        },
    ];
    let mut v = Verdict::Okay;
    for f in filters {
        v = f();
        if !v.deletes() {
            break;
        }
    }
    v
}

/// `GetPodsForDeletion`: every pod on the node, with its verdict.
fn pods_for_deletion<'a>(
    pods: impl Iterator<Item = &'a Rc<Object>>,
    node: &str,
    opts: &DrainOptions,
    now: Millis,
) -> Vec<(Pod, Verdict)> {
    pods.filter_map(|o| o.as_pod())
        .filter(|p| p.spec.node_name == node)
        .filter(|p| {
            opts.pod_selector
                .as_ref()
                .is_none_or(|s| s.matches(&p.metadata.labels))
        })
        .map(|p| (p.clone(), classify(p, opts, now)))
        .collect()
}

fn grouped(
    list: &[(Pod, Verdict)],
    pick: impl Fn(&Verdict) -> Option<&String>,
) -> VecMap<String, Vec<String>> {
    let mut m: VecMap<String, Vec<String>> = VecMap::new();
    for (p, v) in list {
        if let Some(msg) = pick(v) {
            m.entry(msg.clone())
                .or_default()
                .push(format!("{}/{}", p.metadata.namespace, p.metadata.name));
        }
    }
    m
}

/// `PodDeleteList.errors()`: `cannot delete <msg>: ns/a, ns/b` per message.
fn filter_errors(list: &[(Pod, Verdict)]) -> Vec<String> {
    grouped(list, |v| match v {
        Verdict::Error(m) => Some(m),
        _ => None,
    })
    .into_iter()
    .map(|(m, pods)| format!("cannot delete {m}: {}", pods.join(", ")))
    .collect()
}

/// `PodDeleteList.Warnings()`: `msg: ns/a, ns/b` joined with `; `.
fn filter_warnings(list: &[(Pod, Verdict)]) -> String {
    grouped(list, |v| match v {
        Verdict::Warning { message, .. } => Some(message),
        _ => None,
    })
    .into_iter()
    .map(|(m, pods)| format!("{m}: {}", pods.join(", ")))
    .collect::<Vec<_>>()
    .join("; ")
}

fn drain_failure_lines(node: &str, err: &str) -> String {
    format!(
        "error: unable to drain node {node:?} due to error: {err}, continuing command...\nThere are pending nodes to be drained:\n {node}\nerror: {err}\n"
    )
}

// ------------------------------------------------------------------ drain: the command

fn drain_options(args: &Args) -> Result<DrainOptions, String> {
    Ok(DrainOptions {
        force: args.bool("force"),
        ignore_daemonsets: args.bool("ignore-daemonsets"),
        delete_emptydir_data: args.bool("delete-emptydir-data") || args.bool("delete-local-data"),
        grace_period: args.int("grace-period").unwrap_or(-1),
        timeout: args.duration("timeout").filter(|t| *t > 0),
        disable_eviction: args.bool("disable-eviction"),
        pod_selector: match args.get("pod-selector") {
            Some(s) => Some(LabelSelector::parse(s).map_err(|_| {
                "--pod-selector=<pod_selector> must be a valid label selector".to_string()
            })?),
            None => None,
        },
        skip_wait_for_delete_timeout: args.int("skip-wait-for-delete-timeout").unwrap_or(0),
    })
}

/// `kubectl drain NODE…`: cordons, filters, and starts a [`DrainController`] per node with pods
/// to evict. The returned output is what kubectl prints before its first eviction.
pub fn drain(sim: &mut Sim, args: &Args, line: &str) -> CommandOutput {
    if let Some(d) = args.get("dry-run").filter(|d| *d != "none") {
        return super::util::unsupported(&format!("drain --dry-run={d}"), "");
    }
    let opts = match drain_options(args) {
        Ok(o) => o,
        Err(e) => return error(e),
    };
    let nodes = match nodes_for(sim, args, "drain") {
        Ok(n) => n,
        Err(e) => return e,
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if args.bool("delete-local-data") {
        stderr.push_str("Flag --delete-local-data has been deprecated, This option is deprecated and will be deleted. Use --delete-emptydir-data.\n");
    }
    // RunCordonOrUncordon(true) for every node first.
    let mut cordoned: BTreeMap<String, String> = BTreeMap::new();
    for n in &nodes {
        match cordon_one(sim, n, true) {
            Ok(l) => {
                stdout.push_str(&format!("{l}\n"));
                cordoned.insert(n.clone(), l);
            }
            Err(e) => stderr.push_str(&format!("{e}\n")),
        }
    }
    let now = sim.now();
    let mut failed_nodes: Vec<(String, String)> = Vec::new();
    for n in &nodes {
        let list = pods_for_deletion(sim.api().list_pods_on_node(n), n, &opts, now);
        let errs = filter_errors(&list);
        if !errs.is_empty() {
            let err = aggregate(&errs);
            stderr.push_str(&format!(
                "error: unable to drain node {n:?} due to error: {err}, continuing command...\n"
            ));
            failed_nodes.push((n.clone(), err));
            continue;
        }
        let warnings = filter_warnings(&list);
        if !warnings.is_empty() {
            stderr.push_str(&format!("Warning: {warnings}\n"));
        }
        let to_delete: Vec<Pod> = list
            .into_iter()
            .filter(|(_, v)| v.deletes())
            .map(|(p, _)| p)
            .collect();
        if to_delete.is_empty() {
            stdout.push_str(&format!("node/{n} drained\n"));
            continue;
        }
        let mut log = CommandLog {
            id: ComponentId::Drain(Str::from(n.as_str())),
            command: format!(
                "kubectl {}",
                line.trim().trim_start_matches("kubectl ").trim()
            ),
            started: now,
            lines: Vec::new(),
            finished: None,
        };
        if let Some(l) = cordoned.get(n) {
            log.push(now, Stream::Stdout, l.clone());
        }
        if !warnings.is_empty() {
            log.push(now, Stream::Stderr, format!("Warning: {warnings}"));
        }
        let ctrl = DrainController::new(n, opts.clone(), &to_delete, now, log);
        sim.add_component(Box::new(ctrl));
    }
    if !failed_nodes.is_empty() {
        stderr.push_str("There are pending nodes to be drained:\n");
        for (n, _) in &failed_nodes {
            stderr.push_str(&format!(" {n}\n"));
        }
        let errs: Vec<String> = failed_nodes.into_iter().map(|(_, e)| e).collect();
        stderr.push_str(&format!("error: {}\n", aggregate(&errs)));
        return CommandOutput {
            stdout,
            stderr,
            ok: false,
        };
    }
    CommandOutput {
        stdout,
        stderr,
        ok: true,
    }
}

// ------------------------------------------------------------------ drain: the client over time

/// Where one pod is in the drain.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    /// Evict (or delete) at `at`; `in_flight` while the request is on its way.
    Evict {
        at: Millis,
        in_flight: bool,
    },
    /// Evicted: wait until the pod with this uid is gone.
    Wait,
    Done,
    Failed(String),
}

#[derive(Clone, Debug)]
struct Tracked {
    uid: String,
    step: Step,
}

/// A running `kubectl drain NODE`, as a component of the world: it watches the node's pods,
/// evicts each one (retrying 429s every 5 s), waits for them to go, and writes kubectl's output
/// into its [`CommandLog`].
#[derive(Clone, Debug)]
pub struct DrainController {
    node: String,
    opts: DrainOptions,
    pods: SlotMap<ObjectKey, Tracked>,
    deadline: Option<Millis>,
    log: CommandLog,
}

impl DrainController {
    /// A drain of `node` that evicts `pods` (already filtered) starting at `now`.
    pub fn new(node: &str, opts: DrainOptions, pods: &[Pod], now: Millis, log: CommandLog) -> Self {
        let deadline = opts.timeout.map(|t| now + t);
        DrainController {
            node: node.to_string(),
            pods: pods
                .iter()
                .map(|p| {
                    (
                        ObjectKey::of(Kind::Pod, &p.metadata),
                        Tracked {
                            uid: p.metadata.uid.to_string(),
                            step: Step::Evict {
                                at: now,
                                in_flight: false,
                            },
                        },
                    )
                })
                .collect(),
            opts,
            deadline,
            log,
        }
    }

    /// The output so far.
    pub fn log(&self) -> &CommandLog {
        &self.log
    }

    fn timeout_text(&self) -> String {
        format_duration(self.opts.timeout.unwrap_or(0))
    }

    fn using_eviction(&self) -> bool {
        !self.opts.disable_eviction
    }

    fn finish_if_done(&mut self, now: Millis, cache: &Cache) {
        if self.log.finished.is_some()
            || !self
                .pods
                .values()
                .all(|t| matches!(t.step, Step::Done | Step::Failed(_)))
        {
            return;
        }
        let errs: Vec<String> = self
            .pods
            .values()
            .filter_map(|t| match &t.step {
                Step::Failed(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        if errs.is_empty() {
            self.log
                .push(now, Stream::Stdout, format!("node/{} drained", self.node));
            self.log.finished = Some((now, true));
            return;
        }
        let err = aggregate(&errs);
        let pending: Vec<String> =
            pods_for_deletion(cache.list(Kind::Pod), &self.node, &self.opts, now)
                .into_iter()
                .filter(|(_, v)| v.deletes())
                .map(|(p, _)| format!("pod/{}", p.metadata.name))
                .collect();
        if !pending.is_empty() {
            self.log.push(
                now,
                Stream::Stderr,
                format!(
                    "There are pending pods in node {:?} when an error occurred: {err}\n{}",
                    self.node,
                    pending.join("\n")
                ),
            );
        }
        self.log
            .push(now, Stream::Stderr, drain_failure_lines(&self.node, &err));
        self.log.finished = Some((now, false));
    }
}

impl Controller for DrainController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Drain(Str::from(self.node.as_str()))
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Pod]
    }

    fn has_field_selector(&self) -> bool {
        true
    }

    fn accepts(&self, obj: &Object) -> bool {
        self.log.finished.is_none()
            && obj.as_pod().is_some_and(|p| {
                p.spec.node_name == self.node || self.pods.contains_key(&obj.key())
            })
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        let key = ev.object.key();
        if self.pods.contains_key(&key) {
            vec![key]
        } else {
            Vec::new()
        }
    }

    fn keys_for_resync(&self, _cache: &Cache) -> Vec<ObjectKey> {
        self.pods
            .iter()
            .filter(|(_, t)| !matches!(t.step, Step::Done | Step::Failed(_)))
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let now = ctx.now;
        let mut out = Outcome::done();
        let Some(t) = self.pods.get(key).cloned() else {
            return out;
        };
        let pod_ref = format!("pods/{:?} -n {:?}", key.name, key.namespace);
        let timed_out = self.deadline.is_some_and(|d| now >= d);
        match t.step {
            Step::Evict {
                in_flight: true, ..
            } => {}
            Step::Evict { at, .. } if now < at => out.requeue(at - now),
            Step::Evict { .. } => {
                let options = DeleteOptions {
                    grace_period_seconds: (self.opts.grace_period >= 0)
                        .then_some(self.opts.grace_period),
                    ..Default::default()
                };
                let request = if self.using_eviction() {
                    self.log.push(
                        now,
                        Stream::Stdout,
                        format!("evicting pod {}/{}", key.namespace, key.name),
                    );
                    (!timed_out).then(|| ApiRequest::Evict {
                        key: key.clone(),
                        options,
                    })
                } else {
                    Some(ApiRequest::Delete {
                        key: key.clone(),
                        options,
                    })
                };
                match request {
                    Some(request) => {
                        out.request(request);
                        self.set(
                            key,
                            Step::Evict {
                                at: now,
                                in_flight: true,
                            },
                        );
                    }
                    None => {
                        let e = format!(
                            "error when evicting {pod_ref}: global timeout reached: {}",
                            self.timeout_text()
                        );
                        self.set(key, Step::Failed(e));
                    }
                }
                out.record = Some(ReconcileRecord {
                    observed: format!("pod {} on {}", key.name, self.node),
                    desired: format!("no pods on {}", self.node),
                    diff: if self.using_eviction() {
                        "evict it".into()
                    } else {
                        "delete it".into()
                    },
                });
            }
            Step::Wait => {
                let gone = ctx
                    .cache
                    .get(key)
                    .and_then(|o| o.as_pod())
                    .is_none_or(|p| p.metadata.uid != t.uid);
                if gone {
                    let verb = if self.using_eviction() {
                        "evicted"
                    } else {
                        "deleted"
                    };
                    self.log
                        .push(now, Stream::Stdout, format!("pod/{} {verb}", key.name));
                    self.set(key, Step::Done);
                } else if timed_out {
                    let e = if self.using_eviction() {
                        format!(
                            "error when waiting for pod {:?} in namespace {:?} to terminate: global timeout reached: {}",
                            key.name,
                            key.namespace,
                            self.timeout_text()
                        )
                    } else {
                        "timed out waiting for the condition".to_string()
                    };
                    self.set(key, Step::Failed(e));
                } else if let Some(d) = self.deadline {
                    // kubectl polls every second; the deadline is only noticed at a poll.
                    out.requeue((d - now).clamp(1, 1000));
                }
            }
            Step::Done | Step::Failed(_) => {}
        }
        self.finish_if_done(now, ctx.cache);
        out
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, now: Millis) {
        let key = req.key();
        let pod_ref = format!("pods/{:?} -n {:?}", key.name, key.namespace);
        match (req, result) {
            (ApiRequest::Evict { .. }, Ok(_)) | (ApiRequest::Delete { .. }, Ok(_)) => {
                self.set(&key, Step::Wait)
            }
            (ApiRequest::Evict { .. }, Err(e)) if e.code() == 404 => self.set(&key, Step::Done),
            (ApiRequest::Delete { .. }, Err(e)) if e.code() == 404 => self.set(&key, Step::Wait),
            (ApiRequest::Evict { .. }, Err(e)) if e.code() == 429 => {
                self.log.push(
                    now,
                    Stream::Stderr,
                    format!(
                        "error when evicting {pod_ref} (will retry after 5s): {}",
                        e.message
                    ),
                );
                self.set(
                    &key,
                    Step::Evict {
                        at: now + EVICTION_RETRY,
                        in_flight: false,
                    },
                );
            }
            (ApiRequest::Evict { .. }, Err(e)) => {
                self.set(
                    &key,
                    Step::Failed(format!("error when evicting {pod_ref}: {}", e.message)),
                );
            }
            (ApiRequest::Delete { .. }, Err(e)) => {
                self.set(&key, Step::Failed(e.message.clone()));
            }
            _ => {}
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        // A kubectl process is not part of the control plane: restarts do not touch it.
        None
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl DrainController {
    fn set(&mut self, key: &ObjectKey, step: Step) {
        if let Some(t) = self.pods.get_mut(key) {
            t.step = step;
        }
    }
}

// ------------------------------------------------------------------ sim access

/// Stops the components of drains that have exited, so they stop receiving watch events; their
/// logs stay readable.
pub fn retire_finished(sim: &mut Sim) {
    let finished: Vec<ComponentId> = sim
        .component_ids()
        .into_iter()
        .filter(|id| matches!(id, ComponentId::Drain(_)) && sim.is_running(id))
        .filter(|id| {
            sim.component(id)
                .and_then(|c| c.as_any())
                .and_then(|a| a.downcast_ref::<DrainController>())
                .is_some_and(|d| d.log.finished.is_some())
        })
        .collect();
    for id in finished {
        sim.retire_component(&id);
    }
}

impl Sim {
    /// The output of every long-running kubectl command started in this simulation (`drain`), in
    /// the order they started; running ones keep growing as simulated time advances.
    pub fn command_logs(&self) -> Vec<CommandLog> {
        let mut logs: Vec<CommandLog> = self
            .component_ids()
            .iter()
            .filter(|id| matches!(id, ComponentId::Drain(_)))
            .filter_map(|id| self.component(id))
            .filter_map(|c| c.as_any())
            .filter_map(|a| a.downcast_ref::<DrainController>())
            .map(|d| d.log.clone())
            .collect();
        logs.stable_sort_by_key(|l| l.started);
        logs
    }

    /// The output of the long-running command `id` (`kubectl-drain/NODE`), running or exited.
    pub fn command_log_of(&self, id: &ComponentId) -> Option<&CommandLog> {
        self.component(id)?
            .as_any()?
            .downcast_ref::<DrainController>()
            .map(|d| &d.log)
    }

    /// Every line those commands printed, in the order they printed them.
    pub fn command_log(&self) -> Vec<LogLine> {
        let mut lines: Vec<LogLine> = self
            .command_logs()
            .into_iter()
            .flat_map(|l| l.lines)
            .collect();
        lines.stable_sort_by_key(|l| l.at);
        lines
    }

    /// Stops a running long-running command, as Ctrl-C would (`^C` ends its log). Returns false
    /// when there is no such command or it already exited.
    pub fn interrupt_command(&mut self, id: &ComponentId) -> bool {
        let now = self.now();
        let Some(mut ctrl) = self
            .component(id)
            .and_then(|c| c.as_any())
            .and_then(|a| a.downcast_ref::<DrainController>())
            .map(|d| DrainController {
                node: d.node.clone(),
                opts: d.opts.clone(),
                pods: d.pods.clone(),
                deadline: d.deadline,
                log: d.log.clone(),
            })
        else {
            return false;
        };
        if ctrl.log.finished.is_some() {
            return false;
        }
        ctrl.log.push(now, Stream::Stderr, "^C");
        ctrl.log.finished = Some((now, false));
        self.add_component(Box::new(ctrl));
        self.retire_component(id);
        true
    }
}
