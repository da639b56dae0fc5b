//! The loop panel: each controller's latest pass as observe → diff → act.

use yew::prelude::*;

use crate::sim::time::clock;
use crate::viewmodel::trace_views::LoopCard;

/// Loop panel inputs.
#[derive(Properties, PartialEq)]
pub struct LoopPanelProps {
    pub cards: Vec<LoopCard>,
    /// What to do to see them work, while no controller has made a pass
    /// (`viewmodel::events::NextStep`).
    pub empty: &'static str,
}

/// The loop panel.
#[component]
pub fn LoopPanel(p: &LoopPanelProps) -> Html {
    html! {
        <section class="panel loop-panel" aria-labelledby="loop-title" data-testid="loop-panel">
            <div class="panel-head">
                <h2 id="loop-title" class="panel-title">{ "Reconcile loops" }</h2>
                <span class="panel-sub">{ "observe → diff → act, latest pass" }</span>
            </div>
            <div class="loop-cards">
                if p.cards.is_empty() {
                    <div class="empty">
                        <p>{ "Every controller runs the same loop: it observes the cluster through its cache, compares it with the spec, and acts to close the gap." }</p>
                        <p data-testid="loops-empty">{ p.empty }</p>
                    </div>
                }
                // One keyed child of its own: beside the `if` above, Yew would diff the cards by
                // position and recreate them when their order changes (src/ui/cluster.rs).
                { p.cards.iter().map(card).collect::<Html>() }
            </div>
        </section>
    }
}

fn card(c: &LoopCard) -> Html {
    let converged = c.converged();
    // Keyed by its slot, so the latest kubelet's card is updated in place when another node's
    // kubelet runs; the pulse is keyed by the pass it shows, so its animation replays when that
    // moves on (at most once per PULSE_MS, src/viewmodel/trace_views.rs).
    html! {
        <article class={classes!("loop-card", converged.then_some("is-converged"))} key={c.slot().to_string()}
            data-testid={format!("loop-{}", c.component.replace('/', "-"))}>
            <header class="loop-head">
                <span class="loop-pulse" key={c.pulse.to_string()} aria-hidden="true" />
                <span class="loop-title">{ c.title() }</span>
                <span class="loop-key mono">{ &c.key }</span>
                <span class="loop-meta" title={format!("queued by: {}; pass #{}", c.trigger, c.passes)}>
                    { format!("{} · {}", clock(c.t), c.trigger) }
                </span>
            </header>
            <dl class="loop-steps">
                <div class="loop-step step-observe">
                    <dt>{ "observe" }</dt>
                    <dd>{ if c.observed.is_empty() { "—".to_string() } else { c.observed.clone() } }</dd>
                </div>
                <div class="loop-step step-desired">
                    <dt>{ "desired" }</dt>
                    <dd>{ if c.desired.is_empty() { "—".to_string() } else { c.desired.clone() } }</dd>
                </div>
                <div class={classes!("loop-step", "step-diff", (!c.diff.is_empty()).then_some("has-gap"))}>
                    <dt>{ "diff" }</dt>
                    <dd>
                        if c.diff.is_empty() {
                            <span class="no-gap">{ "✓ no gap" }</span>
                        } else {
                            <span class="gap">{ "≠ " }{ &c.diff }</span>
                        }
                    </dd>
                </div>
                <div class="loop-step step-act">
                    <dt>{ "act" }</dt>
                    <dd>
                        if c.requests == 0 && c.actions.is_empty() {
                            <span class="muted">{ "nothing to do" }</span>
                        } else if c.actions.is_empty() {
                            <span class="muted">{ format!("{} request(s) in flight…", c.requests) }</span>
                        } else {
                            <ul class="actions">
                                { for c.actions.iter().take(6).map(|a| {
                                    let failed = a.code.is_some_and(|c| c >= 400);
                                    html! {
                                        <li class={classes!(failed.then_some("is-error"))} title={a.message.clone().unwrap_or_else(|| a.text.clone())}>
                                            <span class="action-text">{ &a.text }</span>
                                            { match a.code {
                                                Some(code) => html! { <span class={classes!("code", if failed { "code-err" } else { "code-ok" })}>{ code }</span> },
                                                None => html! { <span class="code code-wait" title="sent, no answer yet">{ "…" }</span> },
                                            } }
                                        </li>
                                    }
                                }) }
                                if c.actions.len() > 6 {
                                    <li class="muted">{ format!("+{} more", c.actions.len() - 6) }</li>
                                }
                            </ul>
                        }
                    </dd>
                </div>
            </dl>
        </article>
    }
}
