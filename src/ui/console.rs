//! The kubectl console: the playground's kubectl subset against the simulated API server.

use web_sys::{Element, HtmlInputElement};
use yew::prelude::*;

use super::state::{reply, Action};
use crate::viewmodel::playground::ConsoleEntry;

/// Console inputs.
#[derive(Properties, PartialEq)]
pub struct ConsoleProps {
    pub entries: Vec<ConsoleEntry>,
    pub dispatch: Callback<Action>,
}

const SUGGESTIONS: [&str; 5] = [
    "get pods -o wide",
    "get deployments",
    "scale deployment web --replicas=5",
    "describe deployment web",
    "get events",
];

/// How many completion candidates are listed under the output (a 10,000-pod cluster has more).
const MAX_SHOWN: usize = 40;

/// The console.
#[component]
pub fn Console(p: &ConsoleProps) -> Html {
    let input = use_node_ref();
    let scroller = use_node_ref();
    let history_pos = use_state(|| None::<usize>);
    let candidates = use_state(Vec::<String>::new);
    {
        let scroller = scroller.clone();
        use_effect_with(p.entries.len(), move |_| {
            if let Some(el) = scroller.cast::<Element>() {
                el.set_scroll_top(el.scroll_height());
            }
        });
    }
    let run = {
        let d = p.dispatch.clone();
        let input = input.clone();
        let history_pos = history_pos.clone();
        let candidates = candidates.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if let Some(el) = input.cast::<HtmlInputElement>() {
                let cmd = el.value();
                if !cmd.trim().is_empty() {
                    d.emit(Action::Kubectl(cmd, reply()));
                    el.set_value("");
                    history_pos.set(None);
                    candidates.set(Vec::new());
                }
            }
        })
    };
    let on_key = {
        let input = input.clone();
        let cmds: Vec<String> = p.entries.iter().map(|e| e.command.clone()).collect();
        let history_pos = history_pos.clone();
        let candidates = candidates.clone();
        let d = p.dispatch.clone();
        Callback::from(move |e: KeyboardEvent| {
            let Some(el) = input.cast::<HtmlInputElement>() else {
                return;
            };
            if e.key() == "Tab" {
                if e.shift_key() || el.value().trim().is_empty() {
                    return;
                }
                let r = reply();
                d.emit(Action::Complete(el.value(), r.clone()));
                let Some(c) = r.borrow_mut().take() else {
                    return;
                };
                // A Tab that adds nothing new lets focus move on, so the keyboard is never
                // trapped here: the second Tab on the same candidates leaves.
                if c.line != el.value() {
                    e.prevent_default();
                    el.set_value(&c.line);
                    candidates.set(c.candidates);
                } else if !c.candidates.is_empty() && *candidates != c.candidates {
                    e.prevent_default();
                    candidates.set(c.candidates);
                }
                return;
            }
            if !candidates.is_empty()
                && !matches!(e.key().as_str(), "Shift" | "Control" | "Alt" | "Meta")
            {
                candidates.set(Vec::new());
            }
            if cmds.is_empty() {
                return;
            }
            let pos = match (e.key().as_str(), *history_pos) {
                ("ArrowUp", None) => Some(cmds.len() - 1),
                ("ArrowUp", Some(i)) => Some(i.saturating_sub(1)),
                ("ArrowDown", Some(i)) if i + 1 < cmds.len() => Some(i + 1),
                ("ArrowDown", Some(_)) => {
                    el.set_value("");
                    history_pos.set(None);
                    return;
                }
                _ => return,
            };
            e.prevent_default();
            if let Some(i) = pos {
                el.set_value(&cmds[i]);
                history_pos.set(Some(i));
            }
        })
    };
    let suggest = |s: &'static str| {
        let input = input.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(el) = input.cast::<HtmlInputElement>() {
                el.set_value(s);
                let _ = el.focus();
            }
        })
    };
    html! {
        <div class="console" data-testid="console">
            <div class="console-out" ref={scroller} role="log" aria-live="polite">
                if p.entries.is_empty() {
                    <div class="console-intro">
                        <p>{ "A kubectl for the simulated cluster (Tab completes commands, types and names). Try:" }</p>
                        <div class="suggestions">
                            { for SUGGESTIONS.iter().map(|s| html! {
                                <button class="chip-btn mono" onclick={suggest(s)}>{ format!("kubectl {s}") }</button>
                            }) }
                        </div>
                    </div>
                }
                // One keyed child of its own (beside the `if` above; see src/ui/cluster.rs).
                { p.entries.iter().map(|e| html! {
                    <div class="console-entry" key={e.id.to_string()}>
                        <div class="console-cmd mono"><span class="prompt">{ "$ kubectl " }</span>{ e.command.trim_start_matches("kubectl ").to_string() }</div>
                        if !e.output.stdout.is_empty() { <pre class="console-stdout">{ &e.output.stdout }</pre> }
                        if !e.output.stderr.is_empty() { <pre class="console-stderr">{ &e.output.stderr }</pre> }
                    </div>
                }).collect::<Html>() }
            </div>
            if !candidates.is_empty() {
                <div class="console-candidates mono" data-testid="console-candidates" aria-live="polite">
                    { for candidates.iter().take(MAX_SHOWN).map(|c| html! { <span>{ c }</span> }) }
                    if candidates.len() > MAX_SHOWN {
                        <span class="more">{ format!("… and {} more", candidates.len() - MAX_SHOWN) }</span>
                    }
                </div>
            }
            <form class="console-in" onsubmit={run}>
                <span class="prompt mono" aria-hidden="true">{ "$ kubectl" }</span>
                <input ref={input} class="mono" data-testid="console-input" placeholder="get pods" aria-label="kubectl command (Tab completes)"
                    autocomplete="off" spellcheck="false" onkeydown={on_key} />
                <button type="submit" class="btn btn-small">{ "Run" }</button>
            </form>
        </div>
    }
}
