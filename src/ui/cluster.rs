//! The cluster view: nodes as cards with capacity bars, pods as chips, and the unscheduled tray.

use yew::prelude::*;

use super::icons;
use super::state::{reply, Action};
use crate::sim::faults::Fault;
use crate::sim::types::{Kind, ObjectKey};
use crate::viewmodel::format::pod_suffix;
use crate::viewmodel::inspect::DeploymentGap;
use crate::viewmodel::{ClusterView, NodeView, PodView, Tone, Usage};

/// Cluster view inputs.
#[derive(Properties, PartialEq)]
pub struct ClusterProps {
    pub view: ClusterView,
    /// Each Deployment's spec vs status, as pills in the header.
    pub deployments: Vec<DeploymentGap>,
    pub dispatch: Callback<Action>,
    /// The selected object's key, to highlight its chip or card.
    pub selected: Option<ObjectKey>,
}

/// The cluster panel.
#[component]
pub fn Cluster(p: &ClusterProps) -> Html {
    let v = &p.view;
    let total = v.all_pods().count();
    let ready = v.all_pods().filter(|x| x.tone == Tone::Ready).count();
    let counts = v.tone_counts();
    html! {
        <section class="panel cluster-panel" aria-labelledby="cluster-title">
            <div class="panel-head">
                <h2 id="cluster-title" class="panel-title">{ "Actual state" }</h2>
                <span class="panel-sub" data-testid="cluster-summary">
                    { format!("{} nodes · {} pods · {} ready", v.nodes.len(), total, ready) }
                </span>
                <div class="gap-pills">
                    { for p.deployments.iter().map(|d| gap_pill(d, &p.dispatch)) }
                </div>
            </div>
            <div class="cluster-body">
                <div class={classes!("unscheduled", (!v.unscheduled.is_empty()).then_some("has-pods"))} data-testid="unscheduled"
                    aria-label="Pods waiting for a node">
                    <div class="unscheduled-head">
                        <span class="unscheduled-title">{ "Waiting for a node" }</span>
                        <span class="unscheduled-sub">
                            { if v.unscheduled.is_empty() { "none: the scheduler has placed every pod".to_string() }
                              else { format!("{} pending: not bound to a node yet", v.unscheduled.len()) } }
                        </span>
                    </div>
                    <div class="chips">
                        { for v.unscheduled.iter().map(|pod| chip(pod, &p.dispatch, &p.selected, "pod")) }
                    </div>
                </div>
                <div class="nodes">
                    { for v.nodes.iter().map(|n| node_card(n, &p.dispatch, &p.selected)) }
                    if v.nodes.is_empty() {
                        <div class="empty">{ "No nodes. Apply a Node, or press Reset for three fresh ones." }</div>
                    }
                </div>
            </div>
            <ul class="legend" aria-label="Pod states">
                { for Tone::ALL.iter().filter(|t| **t != Tone::Unknown || counts.contains_key(*t)).map(|t| html! {
                    <li class={classes!("legend-item", t.class(), counts.contains_key(t).then_some("is-present"))}>
                        <span class="legend-glyph" aria-hidden="true">{ t.glyph() }</span>
                        <span>{ t.label() }</span>
                    </li>
                }) }
            </ul>
        </section>
    }
}

/// A Deployment's desired replicas as slots, filled for each ready one: the gap at a glance.
fn gap_pill(d: &DeploymentGap, dispatch: &Callback<Action>) -> Html {
    let key = ObjectKey::new(Kind::Deployment, &d.namespace, &d.name);
    let select = {
        let dispatch = dispatch.clone();
        Callback::from(move |_: MouseEvent| dispatch.emit(Action::Select(Some(key.clone()))))
    };
    let slots = d.desired.max(d.ready).clamp(0, 12);
    html! {
        <button class={classes!("gap-pill", if d.converged() { "is-converged" } else { "has-gap" })} onclick={select}
            data-testid={format!("gap-{}", d.name)} title={format!("Deployment {}: {}. Click to inspect spec vs status.", d.name, d.words())}
            aria-label={format!("Deployment {}: {}", d.name, d.words())}>
            <span class="gap-name mono">{ &d.name }</span>
            <span class="gap-slots" aria-hidden="true">
                { for (0..slots).map(|i| html! {
                    <span class={classes!("slot", if i < d.ready { "slot-ready" } else { "slot-missing" }, (i >= d.desired).then_some("slot-extra"))} />
                }) }
                if d.desired > 12 { <span class="slot-more">{ "…" }</span> }
            </span>
            <span class="gap-words">{ if d.converged() { "✓ ".to_string() + &d.words() } else { "≠ ".to_string() + &d.words() } }</span>
        </button>
    }
}

fn bar(label: &str, u: &Usage) -> Html {
    let level = if u.over || u.pct >= 90 {
        "bar--high"
    } else if u.pct >= 70 {
        "bar--mid"
    } else {
        "bar--low"
    };
    html! {
        <div class={classes!("bar", level)} title={format!("{label} requested / allocatable: {}", u.text)}>
            <span class="bar-label">{ label }</span>
            <span class="bar-track" role="meter" aria-label={format!("{label} requested")}
                aria-valuemin="0" aria-valuemax="100" aria-valuenow={u.pct.to_string()}>
                <span class="bar-fill" style={format!("width: {}%", u.pct)} />
            </span>
            <span class="bar-text">{ &u.text }</span>
        </div>
    }
}

fn node_card(n: &NodeView, dispatch: &Callback<Action>, selected: &Option<ObjectKey>) -> Html {
    let key = ObjectKey::new(Kind::Node, "", &n.name);
    let is_selected = selected.as_ref() == Some(&key);
    let state_class = match n.ready.as_str() {
        "True" => "node--ready",
        "False" => "node--notready",
        _ => "node--unknown",
    };
    let glyph = match n.ready.as_str() {
        "True" => "✓",
        "False" => "✕",
        _ => "?",
    };
    let select = {
        let d = dispatch.clone();
        let key = key.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::Select(Some(key.clone()))))
    };
    let fault = |f: Fault| {
        let d = dispatch.clone();
        Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            // Close the menu the item was chosen from.
            let menu = e
                .target_dyn_into::<web_sys::Element>()
                .and_then(|t| t.closest("details").ok().flatten());
            if let Some(menu) = menu {
                let _ = menu.remove_attribute("open");
            }
            d.emit(Action::Inject(f.clone(), reply()));
        })
    };
    let run = |cmd: String| {
        let d = dispatch.clone();
        Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            let menu = e
                .target_dyn_into::<web_sys::Element>()
                .and_then(|t| t.closest("details").ok().flatten());
            if let Some(menu) = menu {
                let _ = menu.remove_attribute("open");
            }
            d.emit(Action::Run(cmd.clone()));
        })
    };
    let name = n.name.clone();
    let down = n.machine_up == Some(false);
    html! {
        <article class={classes!("node", state_class, down.then_some("node--down"), is_selected.then_some("is-selected"))}
            data-testid={format!("node-{}", n.name)} data-ready={n.ready_attr()} key={n.name.clone()}
            aria-label={format!("Node {}: {}", n.name, n.status)}>
            <header class="node-head">
                <button class="node-name" onclick={select} title="Inspect this node">
                    { &n.name }
                </button>
                <span class={classes!("node-status", state_class)} title={n.ready_reason.clone()}>
                    <span aria-hidden="true">{ glyph }</span>{ &n.status }
                </span>
                <details class="menu">
                    <summary class="icon-btn" aria-label={format!("Actions for node {}", n.name)} data-testid={format!("menu-node-{}", n.name)}>
                        { icons::more() }
                    </summary>
                    <div class="menu-items" role="menu">
                        <button role="menuitem" data-testid={format!("nodedown-{name}")} disabled={down}
                            onclick={fault(Fault::NodeDown { node: name.clone() })}>
                            <strong>{ "Power off" }</strong><small>{ "NodeDown: kubelet and containers die" }</small>
                        </button>
                        <button role="menuitem" data-testid={format!("nodeup-{name}")} disabled={!down}
                            onclick={fault(Fault::NodeUp { node: name.clone() })}>
                            <strong>{ "Power on" }</strong><small>{ "NodeUp: kubelet starts and relists" }</small>
                        </button>
                        <button role="menuitem" data-testid={format!("partition-{name}")}
                            onclick={fault(Fault::PartitionNode { node: name.clone() })}>
                            <strong>{ "Cut off network" }</strong><small>{ "PartitionNode: containers run on, status goes stale" }</small>
                        </button>
                        <button role="menuitem" data-testid={format!("heal-{name}")}
                            onclick={fault(Fault::HealNode { node: name.clone() })}>
                            <strong>{ "Reconnect" }</strong><small>{ "HealNode: the kubelet resumes its watch" }</small>
                        </button>
                        <div class="menu-sep" role="separator">{ "kubectl" }</div>
                        if n.unschedulable {
                            <button role="menuitem" data-testid={format!("uncordon-{name}")} onclick={run(format!("uncordon {name}"))}>
                                <strong>{ "Uncordon" }</strong><small>{ "accept new pods again" }</small>
                            </button>
                        } else {
                            <button role="menuitem" data-testid={format!("cordon-{name}")} onclick={run(format!("cordon {name}"))}>
                                <strong>{ "Cordon" }</strong><small>{ "no new pods; running ones stay" }</small>
                            </button>
                        }
                        <button role="menuitem" data-testid={format!("drain-{name}")}
                            onclick={run(format!("drain {name} --ignore-daemonsets --delete-emptydir-data"))}>
                            <strong>{ "Drain" }</strong><small>{ "cordon, then evict its pods (PDBs respected)" }</small>
                        </button>
                    </div>
                </details>
            </header>
            if down {
                <div class="node-banner">{ "machine powered off" }</div>
            }
            <div class="bars">
                { bar("CPU", &n.cpu) }
                { bar("Memory", &n.memory) }
                { bar("Pods", &n.pods_usage) }
            </div>
            if !n.taints.is_empty() {
                <div class="taints">
                    { for n.taints.iter().map(|t| html! { <span class="taint" title="taint">{ t }</span> }) }
                </div>
            }
            <div class="chips">
                { for n.pods.iter().map(|pod| chip(pod, dispatch, selected, "pod")) }
                if n.pods.is_empty() {
                    <span class="chips-empty">{ "no pods" }</span>
                }
            </div>
        </article>
    }
}

/// One pod chip (also used by the ownership view). `testid` prefixes its test ids: the cluster
/// view's chips are `pod-<name>` / `delete-pod-<name>`; other views use another prefix so that
/// `[data-testid^="pod-"]` always counts each pod once.
pub fn chip(
    pod: &PodView,
    dispatch: &Callback<Action>,
    selected: &Option<ObjectKey>,
    testid: &str,
) -> Html {
    let key = ObjectKey::new(Kind::Pod, &pod.namespace, &pod.name);
    let is_selected = selected.as_ref() == Some(&key);
    let select = {
        let d = dispatch.clone();
        let key = key.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::Select(Some(key.clone()))))
    };
    let delete = {
        let d = dispatch.clone();
        let (namespace, name) = (pod.namespace.clone(), pod.name.clone());
        Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            d.emit(Action::DeletePod {
                namespace: namespace.clone(),
                name: name.clone(),
            });
        })
    };
    let terminating = pod.tone == Tone::Terminating;
    html! {
        <div class={classes!("pod", pod.tone.class(), is_selected.then_some("is-selected"))}
            key={pod.uid.clone()}
            data-testid={format!("{testid}-{}", pod.name)}
            data-phase={pod.phase.clone()}
            data-ready={pod.ready.to_string()}
            data-status={pod.status.clone()}>
            <button class="pod-main" onclick={select} title={pod.describe()} aria-label={pod.describe()}>
                <span class="pod-glyph" aria-hidden="true">{ pod.tone.glyph() }</span>
                <span class="pod-text">
                    <span class="pod-name">{ pod_suffix(&pod.name) }</span>
                    <span class="pod-status">{ &pod.status }</span>
                </span>
                if pod.restarts > 0 {
                    <span class="pod-restarts" title={format!("{} restarts", pod.restarts)}>{ format!("↻{}", pod.restarts) }</span>
                }
            </button>
            if !terminating {
                <button class="pod-delete" data-testid={format!("delete-{testid}-{}", pod.name)} onclick={delete}
                    title={format!("Delete pod {} (kubectl delete pod)", pod.name)} aria-label={format!("Delete pod {}", pod.name)}>
                    { icons::close() }
                </button>
            }
        </div>
    }
}
