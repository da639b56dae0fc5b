//! The fault timeline tab: each fault as a horizontal swimlane over simulated time — the fault
//! marker, the objects it harmed, the pods the control plane made in answer, and a recovery bar.
//!
//! Everything drawn comes from [`crate::viewmodel::timeline`] (the trace's cause links and the API
//! server's history); this module only lays it out. Clicking an object selects it in the inspector;
//! an incident's "Just before it" button takes the run back to the millisecond before its fault
//! (time travel).

use yew::prelude::*;

use super::state::Action;
use crate::sim::api::types::{Kind, Millis, ObjectKey};
use crate::sim::time::clock;
use crate::viewmodel::fault_timeline::{
    kubectl_ref, offset_words, spread, x_percent, GoalState, Incident, Mark, Role, Row, Verdict,
};

/// The fault timeline's inputs.
#[derive(Properties, PartialEq)]
pub struct FaultTimelineProps {
    /// Newest first.
    pub incidents: Vec<Incident>,
    pub now: Millis,
    pub dispatch: Callback<Action>,
}

/// Smallest distance between two marks on one track, in percent of its width.
const MIN_GAP: f64 = 4.5;

fn select(d: &Callback<Action>, key: ObjectKey) -> Callback<MouseEvent> {
    let d = d.clone();
    Callback::from(move |_: MouseEvent| d.emit(Action::Select(Some(key.clone()))))
}

fn verdict_glyph(v: &Verdict) -> &'static str {
    match v {
        Verdict::Recovered { .. } => "✓",
        Verdict::NotRecovered(_) => "✕",
        Verdict::Recovering(_) => "…",
        Verdict::NoImpact(_) => "○",
        Verdict::Refused(_) => "⊘",
    }
}

/// The marks of one row, laid out on its track.
fn track(row: &Row, t0: Millis, t1: Millis, on_click: Callback<MouseEvent>) -> Html {
    let xs: Vec<f64> = row.marks.iter().map(|m| x_percent(m.t, t0, t1)).collect();
    let xs = spread(&xs, MIN_GAP);
    let first = row.marks.first().map_or(0.0, |_| xs[0]);
    let last = xs.last().copied().unwrap_or(0.0);
    html! {
        <div class="tl-track">
            <span class="tl-life" style={format!("left: {first:.2}%; width: {:.2}%", (last - first).max(0.0))} />
            { for row.marks.iter().zip(xs).map(|(m, x)| mark(m, x, t0, on_click.clone())) }
        </div>
    }
}

fn mark(m: &Mark, x: f64, t0: Millis, on_click: Callback<MouseEvent>) -> Html {
    let title = format!(
        "{} ({}) {} — {}",
        clock(m.t),
        offset_words(m.t.saturating_sub(t0)),
        m.label,
        m.detail
    );
    html! {
        <button class={classes!("tl-mark", format!("tl-tone-{}", m.tone.as_str()))}
            style={format!("left: {x:.2}%")} title={title.clone()} aria-label={title} onclick={on_click}>
            { m.tone.glyph() }
        </button>
    }
}

/// The row's marks in words: `deleted +0s · Killing +6ms · removed +2.0s`.
fn words(row: &Row, t0: Millis) -> Html {
    html! {
        <span class="tl-words">
            { for row.marks.iter().enumerate().map(|(i, m)| html! {
                <span class={classes!("tl-word", format!("tl-tone-{}", m.tone.as_str()))} title={m.detail.clone()}>
                    if i > 0 { <span class="tl-sep" aria-hidden="true">{ " · " }</span> }
                    { &m.label }{ " " }<span class="mono muted">{ offset_words(m.t.saturating_sub(t0)) }</span>
                </span>
            }) }
            if row.more_marks > 0 {
                <span class="muted">{ format!(" · +{} more", row.more_marks) }</span>
            }
        </span>
    }
}

fn lane(row: &Row, t0: Millis, t1: Millis, d: &Callback<Action>) -> Html {
    let on_click = select(d, row.object.clone());
    let kind = match row.object.kind {
        Kind::Node => "node",
        _ => "pod",
    };
    html! {
        <div class={classes!("tl-lane", format!("role-{}", if row.role == Role::Affected { "affected" } else { "replacement" }))}
            key={row.object.to_string()} data-testid={format!("timeline-row-{}", row.object.name)}>
            <div class="tl-name">
                <span class={classes!("kind-badge", if kind == "node" { "kind-node" } else { "kind-pod" })}>{ if kind == "node" { "Node" } else { "Pod" } }</span>
                <button class="link mono" title={format!("Inspect {} · {}", kubectl_ref(&row.object), row.note)} onclick={on_click.clone()}>
                    { row.object.name.as_str() }
                </button>
            </div>
            { track(row, t0, t1, on_click) }
            <div class="tl-detail">
                { words(row, t0) }
                if !row.note.is_empty() {
                    <span class="tl-note">{ &row.note }</span>
                }
            </div>
        </div>
    }
}

/// What the fault lane's bar means, in words.
fn bar_words(inc: &Incident, v: &Verdict, now: Millis) -> String {
    let open = offset_words(now.saturating_sub(inc.t));
    match v {
        Verdict::Recovered { after, .. } => format!("back to desired {}", offset_words(*after)),
        Verdict::NotRecovered(_) => format!("still broken {open}"),
        Verdict::Recovering(_) => format!("open {open}"),
        Verdict::NoImpact(_) => "no gap opened".into(),
        Verdict::Refused(_) => String::new(),
    }
}

/// The fault's own lane: its marker, the recovery bar, and heal / repair / notice markers.
fn fault_lane(inc: &Incident, v: &Verdict, now: Millis, t0: Millis, t1: Millis) -> Html {
    let end = match v {
        Verdict::Recovered { at, .. } => Some(*at),
        Verdict::Recovering(_) | Verdict::NotRecovered(_) => Some(now),
        _ => None,
    };
    let bar = end.map(|e| {
        let w = x_percent(e, t0, t1);
        html! {
            <div class={classes!("tl-bar", format!("tl-v-{}", v.class()))} style={format!("width: {w:.2}%")}
                data-testid="timeline-recovery-bar" />
        }
    });
    let pin = |t: Millis, label: String, class: &'static str| {
        html! {
            <span class={classes!("tl-pin", class)} style={format!("left: {:.2}%", x_percent(t, t0, t1))}
                title={format!("{} ({}) {label}", clock(t), offset_words(t.saturating_sub(t0)))}>
                <span class="tl-pin-label">{ label }</span>
            </span>
        }
    };
    html! {
        <div class="tl-lane tl-fault-lane">
            <div class="tl-name"><span class="tl-bolt" aria-hidden="true">{ "⚡" }</span><strong>{ &inc.fault }</strong></div>
            <div class="tl-track">
                { for bar }
                <span class="tl-fault-marker" title={format!("{} {} {}", clock(inc.t), inc.fault, inc.target)}>{ "⚡" }</span>
                if let Some(t) = inc.noticed {
                    { pin(t, "noticed".into(), "pin-info") }
                }
                if let Some(t) = inc.healed {
                    { pin(t, "healed".into(), "pin-ok") }
                }
                if let Some((t, f)) = &inc.repaired {
                    { pin(*t, f.clone(), "pin-ok") }
                }
            </div>
            <div class="tl-detail">
                <span class={classes!("tl-verdict-inline", format!("tl-v-{}", v.class()))}>{ bar_words(inc, v, now) }</span>
            </div>
        </div>
    }
}

fn goal_line(
    inc: &Incident,
    g: &crate::viewmodel::fault_timeline::Goal,
    d: &Callback<Action>,
) -> Html {
    let (glyph, class, text) = match &g.state {
        GoalState::Met { at } => (
            "✓",
            "goal-met",
            format!(
                "back to {} at {} ({} after the fault){}",
                g.words,
                clock(*at),
                offset_words(at.saturating_sub(inc.t)),
                if g.worst_words.is_empty() {
                    String::new()
                } else {
                    format!("; lowest {}", g.worst_words)
                }
            ),
        ),
        GoalState::Broken { since } => (
            "…",
            "goal-broken",
            format!("{} since {}", g.words, clock(*since)),
        ),
        GoalState::Waiting => ("○", "goal-waiting", format!("{} — no gap yet", g.words)),
        GoalState::NoGap => (
            "○",
            "goal-nogap",
            format!("stayed at {} — no gap opened", g.words),
        ),
        GoalState::Lost { why, .. } => ("✕", "goal-lost", why.clone()),
    };
    html! {
        <li class={classes!("tl-goal", class)}>
            <span class="tl-goal-glyph" aria-hidden="true">{ glyph }</span>
            <button class="link mono strong" onclick={select(d, g.object.clone())}>{ g.name() }</button>
            <span>{ format!(": {text}") }</span>
        </li>
    }
}

fn incident_card(inc: &Incident, now: Millis, d: &Callback<Action>) -> Html {
    let v = inc.verdict(now);
    let (t0, t1) = inc.span(now);
    let ticks = [0.0, 0.25, 0.5, 0.75, 1.0];
    let affected: Vec<&Row> = inc.affected().collect();
    let replacements: Vec<&Row> = inc.replacements().collect();
    // The last millisecond before the fault's own: playing on from there injects it again.
    let just_before = inc.t.saturating_sub(1);
    let before = clock(just_before);
    let rewind = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::Seek(just_before)))
    };
    html! {
        <article class={classes!("tl-incident", format!("tl-v-{}", v.class()))} data-testid="timeline-incident"
            data-fault={inc.fault.clone()} data-verdict={v.class()}>
            <header class="tl-head">
                <span class="tl-bolt" aria-hidden="true">{ "⚡" }</span>
                <strong>{ &inc.fault }</strong>
                <span class="mono">{ &inc.target }</span>
                <span class="mono muted">{ format!("at {}", clock(inc.t)) }</span>
                <span class={classes!("tl-verdict", format!("tl-v-{}", v.class()))} data-testid="timeline-verdict">
                    <span aria-hidden="true">{ verdict_glyph(&v) }{ " " }</span>{ v.headline() }
                </span>
                <button class="link tl-rewind" data-testid="timeline-rewind" onclick={rewind}
                    title={format!("Time travel: back to {before}, the last millisecond before this fault (every panel as it was then); Play replays it, and acting there branches the run")}>
                    <span aria-hidden="true">{ "« " }</span>{ "Just before it" }
                </button>
            </header>
            if let Some(why) = v.reason() {
                <p class={classes!("tl-why", format!("tl-v-{}", v.class()))} data-testid="timeline-why">{ why }</p>
            }
            if !inc.outcome.is_empty() {
                <p class="tl-outcome">{ inc.outcome.lines().next().unwrap_or_default() }
                    if inc.outcome.lines().count() > 1 {
                        <span class="muted">{ format!(" (+{} more)", inc.outcome.lines().count() - 1) }</span>
                    }
                </p>
            }
            if !inc.refused {
                <div class="tl-lanes">
                    <div class="tl-lane tl-axis-lane" aria-hidden="true">
                        <div class="tl-name muted">{ clock(t0) }</div>
                        <div class="tl-track tl-axis">
                            { for ticks.iter().map(|f| {
                                let t = t0 + ((t1 - t0) as f64 * f) as Millis;
                                html! { <span class="tl-tick" style={format!("left: {:.2}%", f * 100.0)}>{ offset_words(t - t0) }</span> }
                            }) }
                        </div>
                        <div class="tl-detail" />
                    </div>
                    { fault_lane(inc, &v, now, t0, t1) }
                    if !affected.is_empty() {
                        <div class="tl-group">{ format!("Affected ({})", affected.len()) }</div>
                        { for affected.iter().map(|r| lane(r, t0, t1, d)) }
                    }
                    if !replacements.is_empty() {
                        <div class="tl-group">{ format!("Made in answer ({})", replacements.len()) }</div>
                        { for replacements.iter().map(|r| lane(r, t0, t1, d)) }
                    }
                    if inc.more_rows > 0 {
                        <div class="tl-group muted">{ format!("+{} more objects not listed", inc.more_rows) }</div>
                    }
                </div>
                <div class="tl-foot">
                    if !inc.goals.is_empty() {
                        <section class="tl-box">
                            <h4>{ "Recovery, as the API server recorded it" }</h4>
                            <ul class="tl-goals">{ for inc.goals.iter().map(|g| goal_line(inc, g, d)) }</ul>
                        </section>
                    }
                    if !inc.responses.is_empty() {
                        <section class="tl-box">
                            <h4>{ "What the loops did" }</h4>
                            <ol class="tl-responses">
                                { for inc.responses.iter().map(|r| html! {
                                    <li>
                                        <span class="mono muted">{ offset_words(r.t.saturating_sub(inc.t)) }</span>
                                        <strong>{ &r.component }</strong>
                                        <span class="mono">{ &r.words }</span>
                                    </li>
                                }) }
                                if inc.more_responses > 0 {
                                    <li class="muted">{ format!("+{} more", inc.more_responses) }</li>
                                }
                            </ol>
                        </section>
                    }
                    <p class="tl-provenance">
                        if inc.linked_by_name {
                            <span>{ "A dead machine tells nobody: the trace has no cause link from this fault. Its consequences start where the node controller, missing heartbeats, changed the node — linked here by the node's name. " }</span>
                        }
                        { format!("{} trace entries followed", inc.effects) }
                        if inc.dropped > 0 { { format!(" · {} watch events lost", inc.dropped) } }
                        if inc.relists > 0 { { format!(" · {} relists", inc.relists) } }
                        if inc.conflicts > 0 { { format!(" · {} × 409 Conflict", inc.conflicts) } }
                        if inc.following { { " · still following" } }
                    </p>
                </div>
            }
        </article>
    }
}

/// The fault timeline.
#[component]
pub fn FaultTimeline(p: &FaultTimelineProps) -> Html {
    let chosen = use_state(|| None::<u64>);
    let n = p.incidents.len();
    let recovered = p
        .incidents
        .iter()
        .filter(|i| matches!(i.verdict(p.now), Verdict::Recovered { .. }))
        .count();
    let open = p
        .incidents
        .iter()
        .filter(|i| {
            matches!(
                i.verdict(p.now),
                Verdict::Recovering(_) | Verdict::NotRecovered(_)
            )
        })
        .count();
    let current = (*chosen)
        .and_then(|s| p.incidents.iter().find(|i| i.seq == s))
        .or_else(|| p.incidents.first());
    let run_end = p.now.max(1);
    html! {
        <div class="timeline" data-testid="timeline">
            <div class="subbar">
                <span class="subbar-text" title="Read from the trace's cause links and the API server's own history of changes">
                    { format!("{n} fault{} · {recovered} recovered · {open} open", if n == 1 { "" } else { "s" }) }
                </span>
                <span class="tl-key tl-tone-harm"><span aria-hidden="true">{ "✕ " }</span>{ "harmed" }</span>
                <span class="tl-key tl-tone-warn"><span aria-hidden="true">{ "▲ " }</span>{ "warning" }</span>
                <span class="tl-key tl-tone-act"><span aria-hidden="true">{ "● " }</span>{ "control plane acted" }</span>
                <span class="tl-key tl-tone-ok"><span aria-hidden="true">{ "✓ " }</span>{ "Ready" }</span>
            </div>
            if p.incidents.is_empty() {
                <div class="empty">
                    <p>{ "No faults yet." }</p>
                    <p>{ "Inject one from the Faults panel, or delete a pod from its menu: each fault shows up here with the objects it hit, what the control plane did about it, and how long the system took to recover — or why it cannot." }</p>
                </div>
            } else {
                <div class="tl-body">
                    <div class="tl-run" aria-label="Faults over the whole run">
                        <div class="tl-run-track">
                            { for p.incidents.iter().rev().map(|inc| {
                                let v = inc.verdict(p.now);
                                let end = match &v {
                                    Verdict::Recovered { at, .. } => *at,
                                    Verdict::Recovering(_) | Verdict::NotRecovered(_) => p.now,
                                    _ => inc.t,
                                };
                                let x = x_percent(inc.t, 0, run_end);
                                let w = (x_percent(end, 0, run_end) - x).max(0.0);
                                let is = current.is_some_and(|c| c.seq == inc.seq);
                                let c = chosen.clone();
                                let seq = inc.seq;
                                html! {
                                    <button key={inc.seq.to_string()}
                                        class={classes!("tl-run-item", format!("tl-v-{}", v.class()), is.then_some("is-selected"))}
                                        style={format!("left: {x:.2}%; width: calc({w:.2}% + 14px)")}
                                        title={format!("{} {} {} at {} — {}", verdict_glyph(&v), inc.fault, inc.target, clock(inc.t), v.headline())}
                                        aria-pressed={is.to_string()}
                                        onclick={Callback::from(move |_: MouseEvent| c.set(Some(seq)))}>
                                        { "⚡" }
                                    </button>
                                }
                            }) }
                        </div>
                        <div class="tl-run-axis" aria-hidden="true">
                            <span class="axis">{ clock(0) }</span>
                            <span class="axis">{ clock(run_end) }</span>
                        </div>
                    </div>
                    if n > 1 {
                        <div class="tl-chips" role="list">
                            { for p.incidents.iter().map(|inc| {
                                let v = inc.verdict(p.now);
                                let is = current.is_some_and(|c| c.seq == inc.seq);
                                let c = chosen.clone();
                                let seq = inc.seq;
                                html! {
                                    <button role="listitem" key={inc.seq.to_string()}
                                        class={classes!("tl-chip", format!("tl-v-{}", v.class()), is.then_some("is-selected"))}
                                        aria-pressed={is.to_string()}
                                        onclick={Callback::from(move |_: MouseEvent| c.set(Some(seq)))}>
                                        <span aria-hidden="true">{ verdict_glyph(&v) }{ " " }</span>
                                        <strong>{ &inc.fault }</strong>
                                        <span class="mono muted">{ format!(" {}", clock(inc.t)) }</span>
                                    </button>
                                }
                            }) }
                        </div>
                    }
                    if let Some(inc) = current {
                        { incident_card(inc, p.now, &p.dispatch) }
                    }
                </div>
            }
        </div>
    }
}
