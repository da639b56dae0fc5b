//! The "what changes" card: the objects whose spec or status differ between two moments of the
//! run (now and the run's end, or any two the learner types), each as a unified diff of its YAML,
//! as `kubectl diff` shows it.

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
    let (from_ref, to_ref) = (use_node_ref(), use_node_ref());
    let compare = {
        let d = p.dispatch.clone();
        let (from_ref, to_ref) = (from_ref.clone(), to_ref.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let text = |r: &NodeRef| {
                r.cast::<web_sys::HtmlInputElement>()
                    .map(|i| i.value())
                    .unwrap_or_default()
            };
            d.emit(Action::ShowChangesBetween(text(&from_ref), text(&to_ref)));
        })
    };
    html! {
        <section class="panel changes-card" data-testid="changes-card" aria-labelledby="changes-title">
            <header class="verdict-title-row">
                <h2 id="changes-title">{ format!("What changes from {} to {}", clock(v.from), clock(v.to)) }</h2>
                <button class="btn btn-small btn-ghost" data-testid="changes-close" onclick={close} aria-label="Close what changes">{ "×" }</button>
            </header>
            // Keyed by the moments shown: what the learner typed stays until another pair shows.
            <form class="changes-between" key={format!("{}-{}", v.from, v.to)} onsubmit={compare}
                title="Any two moments of this run: mm:ss (01:30) or a duration (90s)">
                <label>{ "from " }<input ref={from_ref} data-testid="changes-from" class="mono" size="8"
                    value={clock(v.from)} aria-label="First moment" /></label>
                <label>{ " to " }<input ref={to_ref} data-testid="changes-to" class="mono" size="8"
                    value={clock(v.to)} aria-label="Second moment" /></label>
                <button class="btn btn-small" data-testid="changes-compare" type="submit">{ "Compare" }</button>
            </form>
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
