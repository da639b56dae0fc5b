//! The kubectl console: the playground's kubectl subset against the simulated API server.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::{
    Element, HtmlElement, HtmlTextAreaElement, ScrollIntoViewOptions, ScrollLogicalPosition,
};
use yew::prelude::*;

use super::state::{reply, Action};
use crate::sim::kubectl::drain::Stream;
use crate::sim::kubectl::shell;
use crate::viewmodel::console::ConsoleEntry;

/// Console inputs.
#[derive(Properties, PartialEq)]
pub struct ConsoleProps {
    pub entries: Rc<Vec<ConsoleEntry>>,
    /// The current lesson's epoch: entries of earlier ones are folded.
    pub epoch: u64,
    /// Bumped when an action's output belongs on screen: the console scrolls into view.
    pub reveal: u64,
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

/// The input grows with its lines up to this many, then scrolls.
const MAX_INPUT_ROWS: u32 = 10;

/// Rows the input needs for `text`.
fn rows_for(text: &str) -> u32 {
    (text.lines().count().max(1) + usize::from(text.ends_with('\n'))).min(MAX_INPUT_ROWS as usize)
        as u32
}

/// One command with its output, as a terminal shows it.
fn entry_view(e: &ConsoleEntry) -> Html {
    let lines = e.shown_lines();
    html! {
        <div class="console-entry" key={e.id.to_string()} data-running={e.running.to_string()}>
            { for lines.iter().enumerate().map(|(i, l)| html! {
                <div class={classes!("console-cmd", "mono", (i > 0).then_some("console-cont"))}>
                    <span class="prompt">{ if i == 0 { "$ " } else { "> " } }</span>{ l }
                </div>
            }) }
            if !e.output.stdout.is_empty() { <pre class="console-stdout">{ &e.output.stdout }</pre> }
            if !e.output.stderr.is_empty() { <pre class="console-stderr">{ &e.output.stderr }</pre> }
            { for e.streamed_runs().into_iter().map(|(stream, text)| {
                let class = if stream == Stream::Stderr { "console-stderr" } else { "console-stdout" };
                html! { <pre class={classes!(class, "console-streamed")}>{ text }</pre> }
            }) }
        </div>
    }
}

/// The console.
#[component]
pub fn Console(p: &ConsoleProps) -> Html {
    let root = use_node_ref();
    let input = use_node_ref();
    let scroller = use_node_ref();
    let history_pos = use_state(|| None::<usize>);
    let candidates = use_state(Vec::<String>::new);
    let rows = use_state_eq(|| 1u32);
    {
        // New output is always on screen: a new entry taller than the panel from its command
        // line, otherwise (and as a running command prints more) the end of the transcript.
        let scroller = scroller.clone();
        let seen = use_mut_ref(|| None::<u64>);
        let last = p.entries.last().map(|e| (e.id, e.streamed.len()));
        use_effect_with((last, p.epoch), move |(last, _)| {
            let Some(el) = scroller.cast::<Element>() else {
                return;
            };
            let id = last.map(|(id, _)| id);
            let fresh = id != *seen.borrow();
            *seen.borrow_mut() = id;
            let tall_entry = el
                .last_element_child()
                .filter(|c| {
                    c.class_name()
                        .split_whitespace()
                        .any(|n| n == "console-entry")
                })
                .and_then(|c| c.dyn_into::<HtmlElement>().ok())
                .filter(|c| c.offset_height() > el.client_height());
            match tall_entry {
                Some(entry) if fresh => el.set_scroll_top(entry.offset_top()),
                _ => el.set_scroll_top(el.scroll_height()),
            }
        });
    }
    {
        let root = root.clone();
        use_effect_with(p.reveal, move |r| {
            if *r > 0 {
                if let Some(el) = root.cast::<Element>() {
                    let opts = ScrollIntoViewOptions::new();
                    opts.set_block(ScrollLogicalPosition::Nearest);
                    el.scroll_into_view_with_scroll_into_view_options(&opts);
                }
            }
        });
    }
    let submit = {
        let d = p.dispatch.clone();
        let input = input.clone();
        let history_pos = history_pos.clone();
        let candidates = candidates.clone();
        let rows = rows.clone();
        move || {
            if let Some(el) = input.cast::<HtmlTextAreaElement>() {
                let cmd = el.value();
                if !cmd.trim().is_empty() {
                    // `apply -f -` reads the editor's text, unless a here-document follows.
                    let stdin = super::bus::editor_text();
                    let d = d.clone();
                    super::explain_docs::when_ready(&cmd.clone(), move || {
                        d.emit(Action::Kubectl(cmd, Some(stdin), reply()));
                    });
                    el.set_value("");
                    rows.set(1);
                    history_pos.set(None);
                    candidates.set(Vec::new());
                }
            }
        }
    };
    let run = {
        let submit = submit.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            submit();
        })
    };
    let on_input = {
        let rows = rows.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(el) = e.target_dyn_into::<HtmlTextAreaElement>() {
                rows.set(rows_for(&el.value()));
            }
        })
    };
    let on_key = {
        let input = input.clone();
        let cmds: Vec<String> = p.entries.iter().map(|e| e.command.clone()).collect();
        let history_pos = history_pos.clone();
        let candidates = candidates.clone();
        let rows = rows.clone();
        let d = p.dispatch.clone();
        Callback::from(move |e: KeyboardEvent| {
            let Some(el) = input.cast::<HtmlTextAreaElement>() else {
                return;
            };
            let value = el.value();
            if e.key() == "Enter" && !e.shift_key() && !e.is_composing() {
                // Enter runs the command, unless bash would still be waiting for more (an open
                // here-document, a trailing backslash): then it starts a new line, as `>` does.
                if !shell::needs_more(&value) {
                    e.prevent_default();
                    submit();
                    return;
                }
                rows.set(rows_for(&value).saturating_add(1).min(MAX_INPUT_ROWS));
                return;
            }
            if e.key() == "Tab" {
                if e.shift_key() || value.trim().is_empty() {
                    return;
                }
                let r = reply();
                d.emit(Action::Complete(value.clone(), r.clone()));
                let Some(c) = r.borrow_mut().take() else {
                    return;
                };
                // A Tab that adds nothing new lets focus move on, so the keyboard is never
                // trapped here: the second Tab on the same candidates leaves.
                if c.line != value {
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
            // The arrows recall history from the first and last line; inside a multi-line
            // command they move the caret, as in any text box.
            let caret = el.selection_start().ok().flatten().unwrap_or(0) as usize;
            let before_caret: String = value.chars().take(caret).collect();
            let on_first_line = !before_caret.contains('\n');
            let on_last_line = !value.chars().skip(caret).any(|c| c == '\n');
            let pos = match (e.key().as_str(), *history_pos) {
                ("ArrowUp", None) if on_first_line => Some(cmds.len() - 1),
                ("ArrowUp", Some(i)) if on_first_line => Some(i.saturating_sub(1)),
                ("ArrowDown", Some(i)) if on_last_line && i + 1 < cmds.len() => Some(i + 1),
                ("ArrowDown", Some(_)) if on_last_line => {
                    el.set_value("");
                    rows.set(1);
                    history_pos.set(None);
                    return;
                }
                _ => return,
            };
            e.prevent_default();
            if let Some(i) = pos {
                el.set_value(&cmds[i]);
                rows.set(rows_for(&cmds[i]));
                history_pos.set(Some(i));
            }
        })
    };
    let suggest = |s: &'static str| {
        let input = input.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(el) = input.cast::<HtmlTextAreaElement>() {
                el.set_value(s);
                let _ = el.focus();
            }
        })
    };
    let earlier: Vec<&ConsoleEntry> = p.entries.iter().filter(|e| e.epoch != p.epoch).collect();
    let current: Vec<&ConsoleEntry> = p.entries.iter().filter(|e| e.epoch == p.epoch).collect();
    html! {
        <div class="console" data-testid="console" ref={root}>
            <div class="console-out" ref={scroller} role="log" aria-live="polite">
                if !earlier.is_empty() {
                    // What was typed before this lesson started: kept, but out of the way.
                    <details class="console-earlier" data-testid="console-earlier">
                        <summary>{ format!("{} earlier command{}", earlier.len(), if earlier.len() == 1 { "" } else { "s" }) }</summary>
                        { earlier.iter().map(|e| entry_view(e)).collect::<Html>() }
                    </details>
                }
                if current.is_empty() {
                    <div class="console-intro">
                        <p>{ "A kubectl for the simulated cluster (Tab completes commands, types and names; Shift+Enter adds a line, and a here-document such as apply -f - <<EOF … EOF runs once it is closed). Try:" }</p>
                        <div class="suggestions">
                            { for SUGGESTIONS.iter().map(|s| html! {
                                <button class="chip-btn mono" onclick={suggest(s)}>{ format!("kubectl {s}") }</button>
                            }) }
                        </div>
                    </div>
                }
                // One keyed child of its own (beside the `if`s above; see src/ui/cluster.rs).
                { current.iter().map(|e| entry_view(e)).collect::<Html>() }
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
                <textarea ref={input} class="mono" data-testid="console-input" placeholder="get pods" rows={rows.to_string()}
                    aria-label="kubectl command (Enter runs it, Shift+Enter adds a line, Tab completes)"
                    autocomplete="off" spellcheck="false" wrap="off" onkeydown={on_key} oninput={on_input} />
                <button type="submit" class="btn btn-small">{ "Run" }</button>
            </form>
        </div>
    }
}
