//! The "what changes" card: behind a run's end, the objects whose spec or status differ between
//! now and then, each as a unified diff of its YAML, as `kubectl diff` shows it.

use yew::prelude::*;

use super::state::Action;
use crate::sim::time::clock;
use crate::viewmodel::changes::{ChangesView, DiffLine};

#[derive(Properties, PartialEq)]
pub struct ChangesCardProps {
    pub view: ChangesView,
    pub dispatch: Callback<Action>,
}

#[component]
pub fn ChangesCard(p: &ChangesCardProps) -> Html {
    let close = {
        let d = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::CloseChanges))
    };
    let v = &p.view;
    html! {
        <section class="panel changes-card" data-testid="changes-card" aria-labelledby="changes-title">
            <header class="verdict-title-row">
                <h2 id="changes-title">{ format!("What changes from {} to {}", clock(v.from), clock(v.to)) }</h2>
                <button class="btn btn-small btn-ghost" data-testid="changes-close" onclick={close} aria-label="Close what changes">{ "×" }</button>
            </header>
            if v.objects.is_empty() {
                <p class="verdict-sub">{ "No object's spec or status changes (events and leases left out)." }</p>
            } else {
                <p class="verdict-sub">{ format!("{} object(s) differ; events, leases and heartbeats left out", v.objects.len()) }</p>
            }
            { for v.objects.iter().map(|o| html! {
                <details class="change" data-testid={format!("change-{}", o.name)} open={v.objects.len() <= 3}>
                    <summary><span class={classes!("change-what", format!("is-{}", o.what))}>{ o.what }</span>{ " " }<code>{ &o.name }</code></summary>
                    <pre class="diff">{ for o.lines.iter().map(|l| match l {
                        DiffLine::Same(t) => html! { <span class="diff-same">{ format!("  {t}\n") }</span> },
                        DiffLine::Removed(t) => html! { <span class="diff-del">{ format!("- {t}\n") }</span> },
                        DiffLine::Added(t) => html! { <span class="diff-add">{ format!("+ {t}\n") }</span> },
                        DiffLine::Gap(n) => html! { <span class="diff-gap">{ format!("  … {n} unchanged line(s)\n") }</span> },
                    }) }</pre>
                </details>
            }) }
        </section>
    }
}
