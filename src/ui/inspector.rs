//! The inspector: one object's spec beside its status with the gap spelled out, its conditions,
//! its events and its YAML.

use yew::prelude::*;

use super::icons;
use super::state::{reply, Action};
use crate::sim::api::types::{Kind, ObjectKey};
use crate::sim::faults::Fault;
use crate::viewmodel::inspect::{ConditionRow, InspectorData, SchedulingView};
use crate::viewmodel::EventRow;

/// Inspector inputs.
#[derive(Properties, PartialEq)]
pub struct InspectorProps {
    pub data: InspectorData,
    pub dispatch: Callback<Action>,
}

#[derive(Clone, Copy, PartialEq)]
enum Tab {
    Gap,
    Scheduling,
    Conditions,
    Events,
    Yaml,
}

/// The inspector drawer.
#[component]
pub fn Inspector(p: &InspectorProps) -> Html {
    let tab = use_state(|| Tab::Gap);
    let d = &p.data;
    let close = {
        let dispatch = p.dispatch.clone();
        let key = d.key.clone();
        Callback::from(move |_: MouseEvent| {
            focus_object(&key);
            dispatch.emit(Action::Select(None))
        })
    };
    let on_key = {
        let dispatch = p.dispatch.clone();
        let key = d.key.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Escape" {
                focus_object(&key);
                dispatch.emit(Action::Select(None));
            }
        })
    };
    let tab_btn = |t: Tab, label: String| {
        let tab_h = tab.clone();
        html! {
            <button role="tab" class={classes!("tab", (*tab == t).then_some("is-active"))} aria-selected={(*tab == t).to_string()}
                onclick={Callback::from(move |_: MouseEvent| tab_h.set(t))}>{ label }</button>
        }
    };
    let gaps = d.gap.iter().filter(|g| !g.ok).count();
    let title_kind = d.key.kind.as_str();
    let pod_delete = (d.key.kind == Kind::Pod && d.exists).then(|| {
        let dispatch = p.dispatch.clone();
        let (namespace, name) = (d.key.namespace.to_string(), d.key.name.to_string());
        html! {
            <button class="btn btn-small btn-danger" data-testid="inspector-delete-pod"
                onclick={Callback::from(move |_: MouseEvent| dispatch.emit(Action::DeletePod { namespace: namespace.clone(), name: name.clone() }))}>
                { icons::trash() }<span>{ "Delete pod" }</span>
            </button>
        }
    });
    let node_actions = (d.key.kind == Kind::Node && d.exists).then(|| {
        let mk = |label: &'static str, f: Fault| {
            let dispatch = p.dispatch.clone();
            html! {
                <button class="btn btn-small" onclick={Callback::from(move |_: MouseEvent| dispatch.emit(Action::Inject(f.clone(), reply())))}>{ label }</button>
            }
        };
        let n = d.key.name.to_string();
        html! {
            <>
                { mk("Power off", Fault::NodeDown { node: n.clone() }) }
                { mk("Power on", Fault::NodeUp { node: n.clone() }) }
                { mk("Partition", Fault::PartitionNode { node: n.clone() }) }
                { mk("Heal", Fault::HealNode { node: n }) }
            </>
        }
    });
    html! {
        <aside class="inspector" data-testid="inspector" aria-label={format!("Inspector: {} {}", title_kind, d.key.name)} onkeydown={on_key}>
            <header class="inspector-head">
                <div class="inspector-title">
                    <span class="kind-badge">{ title_kind }</span>
                    <h2 class="mono">{ d.key.name.as_str() }</h2>
                    if !d.exists {
                        <span class="badge badge-warning">{ "deleted" }</span>
                    }
                </div>
                <button class="icon-btn" onclick={close} aria-label="Close the inspector" title="Close (Esc)" data-testid="inspector-close">
                    { icons::close() }
                </button>
            </header>
            <div class="inspector-actions">
                { for pod_delete }
                { for node_actions }
            </div>
            <div class="tabs" role="tablist">
                { tab_btn(Tab::Gap, if gaps > 0 { format!("Spec vs status · {gaps} gap{}", if gaps == 1 { "" } else { "s" }) } else { "Spec vs status".into() }) }
                if d.scheduling.is_some() {
                    { tab_btn(Tab::Scheduling, "Scheduling".into()) }
                }
                { tab_btn(Tab::Conditions, format!("Conditions ({})", d.conditions.len())) }
                { tab_btn(Tab::Events, format!("Events ({})", d.events.len())) }
                { tab_btn(Tab::Yaml, "YAML".into()) }
            </div>
            <div class="inspector-body">
                { match *tab {
                    Tab::Gap => gap_view(d),
                    Tab::Scheduling => scheduling_view(d.scheduling.as_ref()),
                    Tab::Conditions => conditions_view(&d.conditions),
                    Tab::Events => events_view(&d.events),
                    Tab::Yaml => html! { <pre class="yaml">{ &d.yaml }</pre> },
                } }
            </div>
        </aside>
    }
}

/// Closing the inspector gives the focus back to the object it showed (its chip, card or pill),
/// instead of dropping it on the page when the drawer goes.
fn focus_object(key: &ObjectKey) {
    let selector = match key.kind {
        Kind::Pod => format!("[data-testid=\"pod-{}\"] .pod-main", key.name),
        Kind::Node => format!("[data-testid=\"node-{}\"] .node-name", key.name),
        Kind::Deployment => format!("[data-testid=\"gap-{}\"]", key.name),
        Kind::Custom(c) if c.names().kind == "PersistentVolumeClaim" => {
            format!("[data-testid=\"claim-{}\"]", key.name)
        }
        _ => return,
    };
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(&selector).ok().flatten())
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
    {
        let _ = el.focus();
    }
}

fn gap_view(d: &InspectorData) -> Html {
    html! {
        <>
            if !d.exists {
                <p class="note">{ "This object no longer exists in the API server. What you see is its last known state." }</p>
            }
            { for d.notes.iter().map(|n| html! { <p class="note" data-testid="inspector-note">{ n }</p> }) }
            if !d.gap.is_empty() {
                <table class="table gap-table">
                    <thead><tr><th>{ "field" }</th><th>{ "spec wants" }</th><th>{ "status says" }</th><th class="visually-hidden">{ "match" }</th></tr></thead>
                    <tbody>
                        { for d.gap.iter().map(|g| html! {
                            <tr class={classes!(if g.ok { "is-ok" } else { "is-gap" })}>
                                <td class="mono">{ &g.field }</td>
                                <td>{ &g.desired }</td>
                                <td>{ &g.observed }</td>
                                <td class="gap-mark" aria-label={if g.ok { "matches" } else { "gap" }}>{ if g.ok { "✓" } else { "≠" } }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            }
            if let Some((gen, observed)) = d.generation {
                <p class={classes!("note", (observed < gen).then_some("is-warn"))}>
                    { if observed < gen {
                        format!("The controller has not caught up yet: the spec is at generation {gen}, the status describes generation {observed}.")
                    } else {
                        format!("The status describes the current spec (generation {gen}).")
                    } }
                </p>
            }
            if let Some(fields) = &d.fields_yaml {
                <h3 class="split-title">{ "fields " }<small>{ "what you declared; it has no spec or status" }</small></h3>
                <pre class="yaml" data-testid="inspector-fields">{ if fields.trim().is_empty() { "{}" } else { fields } }</pre>
            } else {
            <div class="split">
                <div class="split-col">
                    <h3 class="split-title">{ "spec " }<small>{ "what you asked for" }</small></h3>
                    <pre class="yaml">{ if d.spec_yaml.trim().is_empty() { "{}" } else { &d.spec_yaml } }</pre>
                </div>
                <div class="split-col">
                    <h3 class="split-title">{ "status " }<small>{ "what the cluster reports" }</small></h3>
                    <pre class="yaml">{ if d.status_yaml.trim().is_empty() { "{}" } else { &d.status_yaml } }</pre>
                </div>
            </div>
            }
        </>
    }
}

fn scheduling_view(v: Option<&SchedulingView>) -> Html {
    let Some(v) = v else {
        return html! { <p class="empty">{ "Only pods are scheduled." }</p> };
    };
    html! {
        <>
            <p class="note">{ &v.summary }</p>
            <p class="note">{ "The scheduler's filter and score pass, replayed on the nodes as they are now (this pod left out): a filter rejects a node outright; the feasible ones are scored and the highest wins." }</p>
            <table class="table sched-table">
                <thead><tr><th>{ "node" }</th><th>{ "verdict" }</th><th>{ "score" }</th></tr></thead>
                <tbody>
                    { for v.rows.iter().map(|r| html! {
                        <tr class={classes!(if r.fits { "is-ok" } else { "is-gap" }, r.chosen.then_some("is-chosen"))}>
                            <td class="mono nowrap">
                                { if r.chosen { "★ " } else if r.tied { "☆ " } else { "" } }{ &r.node }
                            </td>
                            <td>{ if r.fits { "fits" } else { "filtered" } }<div class="muted small">{ &r.detail }</div></td>
                            <td class="mono">{ r.total.map(|t| t.to_string()).unwrap_or_else(|| "—".into()) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </>
    }
}

fn conditions_view(rows: &[ConditionRow]) -> Html {
    if rows.is_empty() {
        return html! { <p class="empty">{ "No conditions reported." }</p> };
    }
    html! {
        <ul class="conditions">
            { for rows.iter().map(|c| {
                let cls = match c.status.as_str() { "True" => "cond-true", "False" => "cond-false", _ => "cond-unknown" };
                html! {
                    <li class={classes!("condition", cls)}>
                        <div class="condition-head">
                            <span class="condition-status">{ match c.status.as_str() { "True" => "✓", "False" => "✕", _ => "?" } }</span>
                            <strong>{ &c.type_ }</strong>
                            <span class="mono">{ format!("= {}", c.status) }</span>
                            if !c.since.is_empty() { <span class="muted">{ format!("for {}", c.since) }</span> }
                        </div>
                        if !c.reason.is_empty() { <div class="condition-reason">{ &c.reason }</div> }
                        if !c.message.is_empty() { <div class="condition-msg">{ &c.message }</div> }
                    </li>
                }
            }) }
        </ul>
    }
}

fn events_view(rows: &[EventRow]) -> Html {
    if rows.is_empty() {
        return html! { <p class="empty">{ "No events about this object." }</p> };
    }
    html! {
        <ul class="mini-events">
            { for rows.iter().map(|r| html! {
                <li class={classes!(r.is_warning().then_some("is-warning"))}>
                    <span class="mono muted">{ &r.last_seen }</span>
                    <strong>{ if r.is_warning() { "▲ " } else { "" } }{ &r.reason }</strong>
                    <span>{ &r.message }</span>
                </li>
            }) }
        </ul>
    }
}
