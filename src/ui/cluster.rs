//! The cluster view: nodes as cards with capacity bars and pods as chips, or, for big clusters,
//! dense tiles with pods counted by state; the unscheduled tray either way.
//!
//! Cheap by construction: the view arrives as an `Rc<ClusterView>` kept up to date incrementally
//! (`viewmodel::cluster::ClusterCache`), every node is its own component whose props compare by
//! `Rc` pointer, so a frame redraws only the nodes that changed, and the panel itself is skipped
//! when the view is the same `Rc`.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::icons;
use super::state::{reply, Action};
use crate::sim::api::storage::ZONE_LABEL;
use crate::sim::api::types::{Kind, ObjectKey};
use crate::sim::faults::Fault;
use crate::viewmodel::claims::ClaimChip;
use crate::viewmodel::cluster::{
    Bucket, ANIMATED_CHIPS_MAX, BRISK_SPEED, CARD_NODES_MAX, CARD_PODS_MAX, DENSE_NODES,
    DENSE_PODS, DENSE_TRAY_CHIPS, ENDLESS_ANIMATIONS_MAX, ORPHAN_LABEL,
};
use crate::viewmodel::format::{pod_suffix, taint_pieces};
use crate::viewmodel::inspect::{DeploymentGap, JobProgress};
use crate::viewmodel::{ClusterView, NodeView, PodHealth, PodView, Usage};

/// Cluster view inputs.
#[derive(Properties)]
pub struct ClusterProps {
    pub view: Rc<ClusterView>,
    /// Each Deployment's spec vs status, as pills in the header.
    pub deployments: Vec<DeploymentGap>,
    /// Each Job's progress, as pills beside them.
    pub jobs: Vec<JobProgress>,
    pub dispatch: Callback<Action>,
    /// The selected object's key, to highlight its chip or card.
    pub selected: Option<ObjectKey>,
    /// Chips change state without animating
    /// ([`brisk_motion`](crate::viewmodel::cluster::brisk_motion) of the clock's speed).
    pub brisk: bool,
}

impl PartialEq for ClusterProps {
    // The view is compared by pointer (the cache hands out the same Rc while nothing changed),
    // never pod by pod; `dispatch` always reaches the same reducer, so it does not count.
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.view, &other.view)
            && self.deployments == other.deployments
            && self.jobs == other.jobs
            && self.selected == other.selected
            && self.brisk == other.brisk
    }
}

/// How the person chose to see the nodes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Cards up to [`DENSE_NODES`] nodes and [`DENSE_PODS`] pods, dense tiles above.
    Auto,
    Cards,
    Dense,
}

/// The cluster panel.
#[component]
pub fn Cluster(p: &ClusterProps) -> Html {
    let layout = use_state(|| Layout::Auto);
    let v = &p.view;
    let total = v.pod_count();
    let ready = v.counts.get(PodHealth::Ready);
    let counts = &v.counts;
    let dense = match *layout {
        Layout::Auto => v.dense_by_default(),
        Layout::Cards => false,
        Layout::Dense => true,
    };
    let choose = |l: Layout| {
        let layout = layout.clone();
        Callback::from(move |_: MouseEvent| layout.set(l))
    };
    let cards = if dense { 0 } else { v.cards_shown() };
    let calm = v.calm_motion();
    // Chips change state without animating at 25× and up, and when the cards draw hundreds.
    let crowded = !dense && v.crowded_motion();
    let still = p.brisk || crowded;
    let still_note = still.then(|| {
        if p.brisk {
            format!("At {BRISK_SPEED}× and faster, chips change state without animating: a fade would outlast the states it shows")
        } else {
            format!("With more than {ANIMATED_CHIPS_MAX} pods drawn, chips change state without animating, to keep the page smooth")
        }
    });
    let calm_note = format!(
        "Held still while more than {ENDLESS_ANIMATIONS_MAX} pods are starting or failing at once, to keep the page smooth"
    );
    let auto_note = format!(
        "Chosen automatically: dense above {DENSE_NODES} nodes or {DENSE_PODS} pods. Click to choose."
    );
    html! {
        <section class={classes!("panel", "cluster-panel", calm.then_some("calm-motion"), still.then_some("brisk-motion"))} aria-labelledby="cluster-title"
            data-layout={if dense { "dense" } else { "cards" }}>
            <div class="panel-head">
                <h2 id="cluster-title" class="panel-title">{ "Actual state" }</h2>
                <span class="panel-sub" data-testid="cluster-summary">
                    { format!("{} nodes · {} pods · {} ready", v.nodes.len(), total, ready) }
                </span>
                <div class="layout-toggle" role="group" aria-label="Cluster layout"
                    title={if *layout == Layout::Auto { auto_note } else { "Your choice for this page".to_string() }}>
                    <button class={classes!("layout-btn", (!dense).then_some("is-on"))} aria-pressed={(!dense).to_string()}
                        data-testid="layout-cards" onclick={choose(Layout::Cards)}>{ "Cards" }</button>
                    <button class={classes!("layout-btn", dense.then_some("is-on"))} aria-pressed={dense.to_string()}
                        data-testid="layout-dense" onclick={choose(Layout::Dense)}>{ "Dense" }</button>
                </div>
                <div class="gap-pills">
                    { for p.deployments.iter().map(|d| gap_pill(d, &p.dispatch)) }
                    { for p.jobs.iter().map(|j| job_pill(j, &p.dispatch)) }
                </div>
            </div>
            if dense {
                <DenseBody view={p.view.clone()} dispatch={p.dispatch.clone()} selected={p.selected.clone()} />
            } else {
                <div class="cluster-body">
                    { tray(v, usize::MAX, &p.dispatch, &p.selected) }
                    <div class="nodes">
                        // Collected into one child of its own: a `{ for … }` beside other
                        // children is flattened into their list, which then has unkeyed members,
                        // and Yew diffs such a list by position: removing one item recreated
                        // every item after it (every card, every chip) instead of moving them.
                        { v.nodes.iter().take(cards).map(|n| {
                            let selected = relevant_selection(n, &p.selected);
                            html! { <NodeCard key={n.name.clone()} node={n.clone()} {selected} dispatch={p.dispatch.clone()} /> }
                        }).collect::<Html>() }
                        if v.nodes.is_empty() {
                            <div class="empty">{ "No nodes. Apply a Node, or press Reset for three fresh ones." }</div>
                        }
                        if cards < v.nodes.len() {
                            <div class="cards-more" data-testid="cards-more">
                                { format!("{} of {} nodes drawn as cards: cards stop at {CARD_NODES_MAX} nodes or {CARD_PODS_MAX} pods. ", cards, v.nodes.len()) }
                                <button class="link-btn" onclick={choose(Layout::Dense)}>{ "Show every node in the dense view" }</button>
                            </div>
                        }
                    </div>
                </div>
            }
            <ul class="legend" aria-label="Pod states"
                title={still_note}>
                { for PodHealth::ALL.iter().filter(|t| **t != PodHealth::Unknown || counts.get(**t) > 0).map(|t| html! {
                    <li class={classes!("legend-item", t.class(), (counts.get(*t) > 0).then_some("is-present"))}
                        title={(calm && matches!(t, PodHealth::Starting | PodHealth::Failing)).then_some(calm_note.clone())}>
                        <span class="legend-glyph" aria-hidden="true">{ t.glyph() }</span>
                        <span>{ t.label() }</span>
                    </li>
                }) }
                // The orphans' mark, explained while any pod carries it.
                if v.orphans() > 0 {
                    <li class="legend-item legend-orphan is-present" data-testid="legend-orphan"
                        title="No ownerReference with controller: true. Nothing recreates this pod if it goes, and no ReplicaSet counts it.">
                        <span class="pod-orphan" aria-hidden="true">{ "orphan" }</span>
                        <span>{ "no controller owns the pod" }</span>
                    </li>
                }
            </ul>
        </section>
    }
}

/// The selection as far as one node card cares (the node itself or one of its pods), so that
/// selecting something re-renders only the cards it touches.
fn relevant_selection(n: &NodeView, selected: &Option<ObjectKey>) -> Option<ObjectKey> {
    let k = selected.as_ref()?;
    let mine = match k.kind {
        Kind::Node => k.name == n.name,
        Kind::Pod => n
            .pods
            .iter()
            .any(|p| p.name == k.name && p.namespace == k.namespace),
        _ => false,
    };
    mine.then(|| k.clone())
}

/// The "waiting for a node" tray, with at most `max_chips` chips and a count of the rest.
fn tray(
    v: &ClusterView,
    max_chips: usize,
    dispatch: &Callback<Action>,
    selected: &Option<ObjectKey>,
) -> Html {
    let pods = &v.unscheduled;
    let caption = v.tray_caption();
    let hidden = pods.len().saturating_sub(max_chips);
    html! {
        <div class={classes!("unscheduled", (!pods.is_empty()).then_some("has-pods"))} data-testid="unscheduled"
            data-count={pods.len().to_string()} aria-label="Pods waiting for a node">
            <div class="unscheduled-head">
                <span class="unscheduled-title">{ "Waiting for a node" }</span>
                <span class="unscheduled-sub">
                    { caption }
                </span>
                if hidden > 0 {
                    <span class="chips-more" data-testid="unscheduled-more">
                        { format!("the oldest {max_chips} shown, {hidden} more") }
                    </span>
                }
            </div>
            <div class="chips">
                { for pods.iter().take(max_chips).map(|pod| pod_chip(pod, dispatch, selected)) }
            </div>
        </div>
    }
}

/// A Job's progress: its status, completions, failures against its limit, and the back-off.
fn job_pill(j: &JobProgress, dispatch: &Callback<Action>) -> Html {
    let key = crate::sim::api::job::job_kind().map(|k| ObjectKey::new(k, &j.namespace, &j.name));
    let select = {
        let dispatch = dispatch.clone();
        Callback::from(move |_: MouseEvent| dispatch.emit(Action::Select(key.clone())))
    };
    let tone = match j.status {
        "Complete" => "is-converged",
        "Failed" | "FailureTarget" => "is-failed",
        _ => "has-gap",
    };
    let words = j.words();
    html! {
        <button class={classes!("gap-pill", "job-pill", tone)} onclick={select}
            data-testid={format!("job-{}", j.name)} title={format!("Job {}: {}, {}. Click to inspect it.", j.name, j.status, words)}
            aria-label={format!("Job {}: {}, {}", j.name, j.status, words)}>
            <span class="gap-name mono">{ format!("job/{}", j.name) }</span>
            <span class="job-status">{ j.status }</span>
            <span class="gap-words">{ words }</span>
        </button>
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
                <span class="bar-fill" style={format!("transform: scaleX({})", f64::from(u.pct) / 100.0)} />
            </span>
            <span class="bar-text">{ &u.text }</span>
        </div>
    }
}

/// One node card's inputs.
#[derive(Properties)]
struct NodeCardProps {
    node: Rc<NodeView>,
    /// The selection, only when it is this node or one of its pods.
    selected: Option<ObjectKey>,
    dispatch: Callback<Action>,
}

impl PartialEq for NodeCardProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.node, &other.node) && self.selected == other.selected
    }
}

/// A node card: its own component so that an unchanged node is not redrawn.
#[component]
fn NodeCard(p: &NodeCardProps) -> Html {
    node_card(&p.node, &p.dispatch, &p.selected)
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
            data-testid={format!("node-{}", n.name)} data-ready={n.ready_attr()}
            aria-label={format!("Node {}: {}", n.name, n.status)}>
            <header class={classes!("node-head", n.zone.is_some().then_some("node-head--zoned"))}>
                <button class="node-name" onclick={select} title="Inspect this node">
                    { &n.name }
                </button>
                if let Some(zone) = &n.zone {
                    <span class="node-zone" title={ZONE_LABEL}>{ zone }</span>
                }
                <span class={classes!("node-status", state_class)} title={n.ready_reason.clone()}>
                    <span aria-hidden="true">{ glyph }</span>{ n.readiness() }
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
            } else if n.awaiting_kubelet() {
                <div class="node-banner node-banner--starting" data-testid={format!("starting-{}", n.name)}
                    title="kubectl get nodes prints Unknown until the node's kubelet posts its first status, which it does as soon as the clock runs">
                    { "kubelet starting: no status posted yet" }
                </div>
            }
            if n.unschedulable {
                <div class="node-banner node-banner--cordon" data-testid={format!("cordoned-{}", n.name)}
                    title="Cordoned (spec.unschedulable): the scheduler places no new pods here; the pods already here keep running">
                    { "⊘ SchedulingDisabled" }
                </div>
            }
            <div class="bars">
                { bar("CPU", &n.cpu) }
                { bar("Memory", &n.memory) }
                { bar("Pods", &n.pods_usage) }
            </div>
            if !n.taints.is_empty() {
                <div class="taints">
                    { for n.taints.iter().map(|t| html! {
                        <span class="taint" title="taint">
                            { for taint_pieces(t).into_iter().map(|p| html! { <>{ p }<wbr /></> }) }
                        </span>
                    }) }
                </div>
            }
            <div class="chips">
                // One keyed child of its own (see the node cards above).
                { n.pods.iter().map(|pod| pod_chip(pod, dispatch, selected)).collect::<Html>() }
                if n.pods.is_empty() {
                    <span class="chips-empty">{ "no pods" }</span>
                }
            </div>
        </article>
    }
}

/// The dense view's inputs.
#[derive(Properties)]
struct DenseProps {
    view: Rc<ClusterView>,
    dispatch: Callback<Action>,
    selected: Option<ObjectKey>,
}

impl PartialEq for DenseProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.view, &other.view) && self.selected == other.selected
    }
}

/// The dense view: the aggregate row, the unscheduled tray as a count and its first chips, a
/// search box, and one small tile per node (pods counted by state, not drawn one by one).
#[component]
fn DenseBody(p: &DenseProps) -> Html {
    let filter = use_state(String::new);
    let grid = use_node_ref();
    let v = &p.view;
    let needle = filter.trim().to_ascii_lowercase();
    let shown: Vec<&Rc<NodeView>> = v
        .nodes
        .iter()
        .filter(|n| needle.is_empty() || n.name.to_ascii_lowercase().contains(&needle))
        .collect();
    let selected_node = p
        .selected
        .as_ref()
        .filter(|k| k.kind == Kind::Node)
        .map(|k| k.name.to_string());
    // One tile is in the tab order (the selected one, else the first); arrows move among them.
    let tabbable = selected_node
        .clone()
        .filter(|s| shown.iter().any(|n| &n.name == s))
        .or_else(|| shown.first().map(|n| n.name.clone()));
    let on_input = {
        let filter = filter.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                filter.set(input.value());
            }
        })
    };
    let on_search_key = {
        let d = p.dispatch.clone();
        let first = shown.first().map(|n| n.name.clone());
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" {
                if let Some(name) = &first {
                    d.emit(Action::Select(Some(ObjectKey::new(Kind::Node, "", name))));
                }
            }
        })
    };
    let on_grid_key = {
        let grid = grid.clone();
        Callback::from(move |e: KeyboardEvent| {
            if move_focus(&grid, &e.key()) {
                e.prevent_default();
            }
        })
    };
    let n_shown = shown.len();
    html! {
        <div class="cluster-body dense" data-testid="cluster-dense">
            <ul class="dense-summary" aria-label="Pods by state">
                { for Bucket::ALL.iter().filter(|b| **b != Bucket::Completed || v.counts.bucket(**b) > 0).map(|b| {
                    let n = v.counts.bucket(*b);
                    html! {
                        <li class={classes!("dense-count", b.health().class(), (n > 0).then_some("is-present"))}
                            data-testid={format!("dense-count-{}", b.id())} data-count={n.to_string()}>
                            <span class="dense-count-glyph" aria-hidden="true">{ b.health().glyph() }</span>
                            <span class="dense-count-n">{ n }</span>
                            <span class="dense-count-label">{ b.label() }</span>
                        </li>
                    }
                }) }
            </ul>
            { tray(v, DENSE_TRAY_CHIPS, &p.dispatch, &p.selected) }
            <div class="dense-tools">
                <input type="search" class="dense-filter" placeholder="Find a node…" aria-label="Find a node by name"
                    data-testid="dense-filter" value={(*filter).clone()} oninput={on_input} onkeydown={on_search_key} />
                <span class="dense-shown">
                    { if needle.is_empty() { format!("{} nodes · arrows move, Enter inspects", v.nodes.len()) }
                      else { format!("{n_shown} of {} nodes", v.nodes.len()) } }
                </span>
            </div>
            <div class="dense-grid" role="group" aria-label="Nodes" ref={grid} onkeydown={on_grid_key}>
                // One keyed child of its own (see the node cards).
                { shown.into_iter().map(|n| {
                    let selected = selected_node.as_deref() == Some(n.name.as_str());
                    let tabbable = tabbable.as_deref() == Some(n.name.as_str());
                    html! { <DenseTile key={n.name.clone()} node={n.clone()} {selected} {tabbable} dispatch={p.dispatch.clone()} /> }
                }).collect::<Html>() }
                if n_shown == 0 {
                    <div class="empty">{ if v.nodes.is_empty() { "No nodes." } else { "No node matches." } }</div>
                }
            </div>
        </div>
    }
}

/// Moves the focus among the tiles of `grid` for an arrow, Home or End key. True when it
/// handled the key. Up and Down find the tile in the same column of the next row by position,
/// since the grid's column count follows the panel's width.
fn move_focus(grid: &NodeRef, key: &str) -> bool {
    let Some(grid) = grid.cast::<web_sys::Element>() else {
        return false;
    };
    let active = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element());
    let Some(active) = active.filter(|a| a.parent_element().as_ref() == Some(&grid)) else {
        return false;
    };
    let column = |e: &web_sys::Element| {
        let r = e.get_bounding_client_rect();
        (r.left(), r.top())
    };
    let (left, top) = column(&active);
    let target = match key {
        "ArrowRight" => active.next_element_sibling(),
        "ArrowLeft" => active.previous_element_sibling(),
        "Home" => grid.first_element_child(),
        "End" => grid.last_element_child(),
        "ArrowDown" | "ArrowUp" => {
            let down = key == "ArrowDown";
            let mut cur = Some(active.clone());
            let mut found = None;
            // A row holds a few dozen tiles at most; stop after a generous bound either way.
            for _ in 0..256 {
                cur = cur.and_then(|c| {
                    if down {
                        c.next_element_sibling()
                    } else {
                        c.previous_element_sibling()
                    }
                });
                let Some(c) = &cur else { break };
                let (l, t) = column(c);
                if (t - top).abs() > 1.0 && (l - left).abs() < 2.0 {
                    found = cur.clone();
                    break;
                }
            }
            found
        }
        _ => return false,
    };
    if let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
    true
}

/// One dense tile's inputs.
#[derive(Properties)]
struct DenseTileProps {
    node: Rc<NodeView>,
    selected: bool,
    tabbable: bool,
    dispatch: Callback<Action>,
}

impl PartialEq for DenseTileProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.node, &other.node)
            && self.selected == other.selected
            && self.tabbable == other.tabbable
    }
}

/// One node as a small tile: its condition as colour and glyph, cordoned as a stripe and a
/// mark, its pods as a bar of capacity split by state. Clicking inspects the node.
#[component]
fn DenseTile(p: &DenseTileProps) -> Html {
    let n = &p.node;
    let state = n.state();
    let select = {
        let d = p.dispatch.clone();
        let key = ObjectKey::new(Kind::Node, "", &n.name);
        Callback::from(move |_: MouseEvent| d.emit(Action::Select(Some(key.clone()))))
    };
    let describe = n.describe();
    let used = n.counts.total();
    // The filled share of the bar is pods against capacity (at least a sliver when any).
    let fill = if used == 0 {
        0
    } else {
        n.pods_usage.pct.clamp(4, 100)
    };
    html! {
        <button class={classes!("tile", state.class(), n.unschedulable.then_some("is-cordoned"), p.selected.then_some("is-selected"))}
            data-testid={format!("node-{}", n.name)} data-ready={n.ready_attr()} data-pods={used.to_string()}
            tabindex={if p.tabbable { "0" } else { "-1" }} aria-pressed={p.selected.to_string()}
            title={describe.clone()} aria-label={describe} onclick={select}>
            <span class="tile-head">
                <span class="tile-glyph" aria-hidden="true">{ state.glyph() }</span>
                <span class="tile-name">{ &n.name }</span>
                if n.unschedulable {
                    <span class="tile-cordon" aria-hidden="true">{ "⊘" }</span>
                }
            </span>
            <span class="tile-bar" aria-hidden="true">
                <span class="tile-fill" style={format!("width: {fill}%")}>
                    { for n.counts.present().map(|(t, k)| html! {
                        <span class={classes!("tile-seg", t.class())} style={format!("flex-grow: {k}")} />
                    }) }
                </span>
            </span>
            <span class="tile-count" aria-hidden="true">{ format!("{used}/{}", n.pods_usage.total) }</span>
        </button>
    }
}

/// The cluster view's chip for `pod`, as its own component keyed by uid.
fn pod_chip(pod: &Rc<PodView>, dispatch: &Callback<Action>, selected: &Option<ObjectKey>) -> Html {
    let selected = selected
        .as_ref()
        .is_some_and(|k| k.kind == Kind::Pod && k.name == pod.name && k.namespace == pod.namespace);
    html! { <PodChip key={pod.uid.as_str()} pod={pod.clone()} {selected} dispatch={dispatch.clone()} /> }
}

/// One cluster-view chip's inputs.
#[derive(Properties)]
struct PodChipProps {
    pod: Rc<PodView>,
    selected: bool,
    dispatch: Callback<Action>,
}

impl PartialEq for PodChipProps {
    // By pointer: the cache hands out the same Rc while the pod did not change.
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.pod, &other.pod) && self.selected == other.selected
    }
}

/// A chip as a component: when one pod of a node changes, only its chip (with its menu) is
/// redrawn, not the node's other pods. Drawing every chip of a changed node made a rollout of
/// 300 pods in cards fall to a few frames a second.
///
/// Its delete and menu buttons are drawn the first time the pointer or the focus reaches it:
/// they were half of every new chip's elements, and a rollout creates dozens of chips in one
/// frame that nobody points at.
#[component]
fn PodChip(p: &PodChipProps) -> Html {
    let armed = use_state_eq(|| false);
    let arm = (!*armed).then(|| {
        let armed = armed.setter();
        Callback::from(move |()| armed.set(true))
    });
    let key = ObjectKey::new(Kind::Pod, &p.pod.namespace, &p.pod.name);
    chip(&p.pod, &p.dispatch, &p.selected.then_some(key), "pod", arm)
}

/// One pod chip (also used by the ownership view). `testid` prefixes its test ids: the cluster
/// view's chips are `pod-<name>` / `delete-pod-<name>`; other views use another prefix so that
/// `[data-testid^="pod-"]` always counts each pod once. With `arm`, the delete and menu buttons
/// are left out until the pointer or the focus comes to the chip, which `arm` reports.
pub fn chip(
    pod: &PodView,
    dispatch: &Callback<Action>,
    selected: &Option<ObjectKey>,
    testid: &'static str,
    arm: Option<Callback<()>>,
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
                namespace: namespace.to_string(),
                name: name.to_string(),
            });
        })
    };
    let terminating = pod.health == PodHealth::Terminating;
    let actions = !terminating && arm.is_none();
    // Pointer events, so that a touch (whose long press opens the menu) arms the chip too.
    let onpointerover = arm
        .clone()
        .map(|a| Callback::from(move |_: PointerEvent| a.emit(())));
    let onfocusin = arm.map(|a| Callback::from(move |_: FocusEvent| a.emit(())));
    html! {
        // The endless decorations get classes of their own (www/style.css, `.calm-motion`).
        <div class={classes!("pod", pod.health.class(), (pod.health == PodHealth::Failing).then_some("pod-ring"), is_selected.then_some("is-selected"), pod.orphan().then_some("is-orphan"), (!pod.claims.is_empty()).then_some("has-claims"))}
            {onpointerover} {onfocusin}
            key={pod.uid.as_str()}
            data-testid={format!("{testid}-{}", pod.name)}
            data-phase={pod.phase.to_string()}
            data-ready={pod.ready.to_string()}
            data-status={pod.status.clone()}>
            <button class={classes!("pod-main", (pod.health == PodHealth::Starting).then_some("pod-stripes"))} onclick={select} title={format!("{}. Enter inspects it; Shift+F10 opens its faults.", pod.describe())} aria-label={pod.describe()}>
                <span class="pod-glyph" aria-hidden="true">{ pod.health.glyph() }</span>
                <span class="pod-text">
                    <span class="pod-name">{ pod_suffix(&pod.name) }</span>
                    <span class="pod-status">{ &pod.status }</span>
                </span>
                if pod.restarts > 0 {
                    <span class="pod-restarts" title={format!("{} restarts", pod.restarts)}>{ format!("↻{}", pod.restarts) }</span>
                }
                // Said in the button's label too (`PodView::describe`), which screen readers read.
                if pod.orphan() {
                    <span class="pod-orphan" data-testid={format!("orphan-{testid}-{}", pod.name)} title={ORPHAN_LABEL}>{ "orphan" }</span>
                }
            </button>
            { for pod.claims.iter().map(|c| claim_chip(c, &key, dispatch)) }
            if actions {
                <button class="pod-delete" data-testid={format!("delete-{testid}-{}", pod.name)} onclick={delete}
                    title={format!("Delete pod {} (kubectl delete pod)", pod.name)} aria-label={format!("Delete pod {}", pod.name)}>
                    { icons::close() }
                </button>
                // Its faults: right click, the ContextMenu key or Shift+F10 (src/ui/menus.rs).
                <super::menus::PodMenu name={pod.name.to_string()} namespace={pod.namespace.to_string()} {testid} dispatch={dispatch.clone()} />
            }
        </div>
    }
}

/// A claim the pod mounts: its name, state, size and what its volume pins the pod to. Clicking
/// inspects the claim, or the pod when the claim is missing (its events say why it waits).
fn claim_chip(c: &ClaimChip, pod: &ObjectKey, dispatch: &Callback<Action>) -> Html {
    let key = c.key().unwrap_or_else(|| pod.clone());
    let select = {
        let d = dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::Select(Some(key.clone()))))
    };
    html! {
        <button class={c.state.class()} data-testid={format!("claim-{}", c.name)} onclick={select} title={c.describe()}>
            <span class="claim-name">{ &c.name }</span>
            <span class="claim-state">{ c.state.label() }</span>
            { c.details() }
        </button>
    }
}
