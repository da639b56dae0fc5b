//! The "Check my controller" card: one row per property of the course's discipline, green or
//! red, each failure saying which faults broke it with a link that replays that run.

use yew::prelude::*;

use super::state::Action;
use crate::viewmodel::check::CheckView;

#[derive(Properties, PartialEq)]
pub struct CheckCardProps {
    pub view: CheckView,
    pub dispatch: Callback<Action>,
}

#[component]
pub fn CheckCard(p: &CheckCardProps) -> Html {
    let close = {
        let d = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::CloseCheck))
    };
    let body = match &p.view {
        CheckView::Refused(diags) => html! {
            <p class="verdict-refused">{ format!("Nothing was checked: the text has {} error(s) (Apply shows them at their lines).", diags.len()) }</p>
        },
        CheckView::Report {
            controller,
            runs,
            rows,
        } => html! {
            <>
                <p class="verdict-sub">{ format!("controller/{controller}: {runs} seeded runs, each to a steady state") }</p>
                <ul class="verdict-rows">
                    { for rows.iter().map(|r| html! {
                        <li class={classes!("verdict-row", if r.passed { "is-pass" } else { "is-fail" })}
                            data-testid={format!("check-{}", r.property)} data-passed={r.passed.to_string()}>
                            <div class="verdict-head">
                                <span class="verdict-mark" aria-hidden="true">{ if r.passed { "✓" } else { "✗" } }</span>
                                <strong title={r.asks}>{ r.property }</strong>
                                // A pass's summary already says what held; a failure's says
                                // what broke, so the question it failed is spelled out.
                                if !r.passed {
                                    <span class="verdict-asks">{ r.asks }</span>
                                }
                            </div>
                            <p class="verdict-summary">{ &r.summary }</p>
                            if let Some(s) = &r.schedule {
                                <p class="verdict-schedule">{ "Faults: " }{ s }</p>
                            }
                            if let Some(f) = &r.fragment {
                                <a class="verdict-link" data-testid={format!("check-link-{}", r.property)}
                                    href={super::share::playground_link(f)} target="_blank" rel="noopener">
                                    { "Open the failing run in a new tab" }
                                </a>
                            }
                        </li>
                    }) }
                </ul>
            </>
        },
    };
    html! {
        <section class={classes!("panel", "verdict-card", p.view.passed().then_some("is-passed"))} data-testid="check-card"
            aria-labelledby="check-title">
            <header class="verdict-title-row">
                <h2 id="check-title">{ "Check my controller" }</h2>
                <button class="btn btn-small btn-ghost" data-testid="check-close" onclick={close} aria-label="Close the check">{ "×" }</button>
            </header>
            { body }
        </section>
    }
}
