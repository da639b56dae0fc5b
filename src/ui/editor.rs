//! The manifest editor: a textarea with a line-number gutter, Apply (Ctrl/Cmd+Enter), and the
//! diagnostics of the last apply, each pointing at its line and column.

use std::collections::BTreeMap;

use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

use super::state::{reply, Action};
use super::storage;
use crate::sim::decode::{Diagnostic, Severity};
use crate::sim::examples;
use crate::viewmodel::format::utf16_offset;
use crate::viewmodel::DEFAULT_MANIFEST;

/// Editor inputs.
#[derive(Properties, PartialEq)]
pub struct EditorProps {
    pub dispatch: Callback<Action>,
    /// Diagnostics of the last apply.
    pub diagnostics: Vec<Diagnostic>,
    /// kubectl's output lines of the last apply.
    pub lines: Vec<String>,
    /// Whether the last apply succeeded (None before the first).
    pub ok: Option<bool>,
    /// Nothing was applied yet: the Apply button invites a first click.
    #[prop_or_default]
    pub hint: bool,
}

fn severity_class(s: Severity) -> &'static str {
    match s {
        Severity::Error => "sev-error",
        Severity::Warning => "sev-warning",
        Severity::Info => "sev-info",
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// Closes the `<details>` menu an item was chosen from.
fn close_menu(e: &MouseEvent) {
    let menu = e
        .target_dyn_into::<web_sys::Element>()
        .and_then(|t| t.closest("details").ok().flatten());
    if let Some(menu) = menu {
        let _ = menu.remove_attribute("open");
    }
}

/// True on Apple platforms, where the shortcut is spelled with ⌘.
fn is_mac() -> bool {
    web_sys::window()
        .and_then(|w| w.navigator().platform().ok())
        .is_some_and(|p| p.starts_with("Mac") || p.starts_with("iP"))
}

/// The editor panel.
#[component]
pub fn Editor(p: &EditorProps) -> Html {
    let text = use_state(|| storage::load_editor().unwrap_or_else(|| DEFAULT_MANIFEST.to_string()));
    // Share links and embeds read and set the editor's text (src/ui/share.rs).
    super::share::use_editor_sync(&text);
    let area = use_node_ref();
    let gutter = use_node_ref();

    let apply = {
        let d = p.dispatch.clone();
        let text = text.clone();
        Callback::from(move |_: ()| d.emit(Action::Apply((*text).clone(), reply())))
    };
    let on_input = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            let el: HtmlTextAreaElement = e.target_unchecked_into();
            let v = el.value();
            storage::save_editor(&v);
            text.set(v);
        })
    };
    let on_keydown = {
        let apply = apply.clone();
        let text = text.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" && (e.ctrl_key() || e.meta_key()) {
                e.prevent_default();
                apply.emit(());
            } else if e.key() == "Tab"
                && !e.shift_key()
                && !e.ctrl_key()
                && !e.meta_key()
                && !e.alt_key()
            {
                // YAML is indented with spaces; Tab inserts two instead of leaving the editor.
                // (Escape first, then Tab, still moves focus on: see the hint under the editor.)
                let el: HtmlTextAreaElement = e.target_unchecked_into();
                let (Ok(Some(start)), Ok(Some(end))) = (el.selection_start(), el.selection_end())
                else {
                    return;
                };
                e.prevent_default();
                let v = el.value();
                let units: Vec<u16> = v.encode_utf16().collect();
                let (s, en) = (start as usize, (end as usize).min(units.len()));
                let new: String = String::from_utf16_lossy(&units[..s.min(en)])
                    + "  "
                    + &String::from_utf16_lossy(&units[en..]);
                el.set_value(&new);
                let _ = el.set_selection_range(start + 2, start + 2);
                storage::save_editor(&new);
                text.set(new);
            } else if e.key() == "Escape" {
                let el: HtmlTextAreaElement = e.target_unchecked_into();
                let _ = el.blur();
            }
        })
    };
    let on_scroll = {
        let gutter = gutter.clone();
        let area = area.clone();
        Callback::from(move |_: Event| {
            if let (Some(g), Some(a)) = (
                gutter.cast::<web_sys::HtmlElement>(),
                area.cast::<HtmlTextAreaElement>(),
            ) {
                g.set_scroll_top(a.scroll_top());
            }
        })
    };
    let on_apply_click = {
        let apply = apply.clone();
        Callback::from(move |_: MouseEvent| apply.emit(()))
    };
    let on_delete_click = {
        let d = p.dispatch.clone();
        let text = text.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::Delete((*text).clone(), reply())))
    };
    let on_restore = {
        let text = text.clone();
        Callback::from(move |e: MouseEvent| {
            close_menu(&e);
            storage::save_editor(DEFAULT_MANIFEST);
            text.set(DEFAULT_MANIFEST.to_string());
        })
    };
    let jump = {
        let area = area.clone();
        let text = text.clone();
        Callback::from(move |(line, col): (u32, u32)| {
            if let Some(a) = area.cast::<HtmlTextAreaElement>() {
                let off = utf16_offset(&text, line, col.max(1));
                let _ = a.focus();
                let _ = a.set_selection_range(off, off);
                // Bring the line into view: about 20px per line.
                let target = (line.saturating_sub(4) as i32) * 20;
                a.set_scroll_top(target);
            }
        })
    };

    let n_lines = text.split('\n').count().max(1);
    let mut marks: BTreeMap<u32, Severity> = BTreeMap::new();
    for d in &p.diagnostics {
        let e = marks.entry(d.line).or_insert(d.severity);
        if d.severity < *e {
            *e = d.severity;
        }
    }
    let errors = p
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();

    html! {
        <section class="panel editor-panel" aria-labelledby="editor-title">
            <div class="panel-head">
                <h2 id="editor-title" class="panel-title">{ "Desired state" }</h2>
                <span class="panel-sub">{ "YAML" }</span>
                <div class="panel-actions">
                    <details class="menu lessons-menu">
                        <summary class="btn btn-small btn-ghost" data-testid="lessons-menu">{ "Lessons ▾" }</summary>
                        <div class="menu-items menu-left" role="menu">
                            <button role="menuitem" onclick={on_restore}>
                                <strong>{ "The example Deployment" }</strong>
                                <small>{ "Put it back in the editor (the cluster is left as it is)" }</small>
                            </button>
                            <div class="menu-sep" role="separator">{ "lessons: each opens a fresh cluster" }</div>
                            { for examples::LESSONS.iter().map(|l| {
                                let name = l.name;
                                let open = Callback::from(move |e: MouseEvent| {
                                    close_menu(&e);
                                    if let Some(text) = examples::by_name(name) {
                                        let _ = super::share::load(text, None);
                                    }
                                });
                                html! {
                                    <button role="menuitem" data-testid={format!("lesson-{name}")} onclick={open} title={l.summary}>
                                        <strong>{ format!("{}. {}", l.order, l.title) }</strong>
                                    </button>
                                }
                            }) }
                        </div>
                    </details>
                    <button class="btn btn-small btn-ghost" data-testid="delete-manifest" onclick={on_delete_click}
                        title="kubectl delete -f: delete the objects in the editor">{ "Delete" }</button>
                </div>
            </div>
            <div class="editor">
                <div class="gutter" ref={gutter} aria-hidden="true">
                    { for (1..=n_lines as u32).map(|i| {
                        let cls = marks.get(&i).map(|s| severity_class(*s));
                        html! { <div class={classes!("gutter-line", cls)}>{ i }</div> }
                    }) }
                </div>
                <textarea
                    ref={area}
                    data-testid="editor"
                    class="code"
                    spellcheck="false"
                    autocomplete="off"
                    autocapitalize="off"
                    wrap="off"
                    aria-label="Manifest YAML. Ctrl+Enter applies it; Escape then Tab leaves the editor."
                    value={(*text).clone()}
                    oninput={on_input}
                    onkeydown={on_keydown}
                    onscroll={on_scroll}
                />
            </div>
            <div class="apply-row">
                <button class={classes!("btn", "btn-primary", "btn-apply", p.hint.then_some("is-hint"))} data-testid="apply" onclick={on_apply_click}
                    title="kubectl apply -f (Ctrl/Cmd+Enter)">
                    { "Apply" }<kbd>{ if is_mac() { "⌘↵" } else { "Ctrl↵" } }</kbd>
                </button>
                <span class="apply-hint">
                    { if p.hint { "Start here: apply the Deployment, then press Play." } else { "Declare what should be true; the controllers make it so." } }
                </span>
            </div>
            <div class={classes!("diagnostics", (errors > 0).then_some("has-errors"))} data-testid="diagnostics"
                role="status" aria-live="polite">
                { for p.lines.iter().map(|l| html! { <div class="apply-line">{ "✓ " }{ l }</div> }) }
                if p.ok == Some(false) && errors > 0 {
                    <div class="apply-refused">{ format!("Nothing was applied: {errors} error(s).") }</div>
                }
                { for p.diagnostics.iter().map(|d| {
                    let jump = jump.clone();
                    let (line, col) = (d.line, d.col);
                    html! {
                        <button class={classes!("diag", severity_class(d.severity))} data-testid="diagnostic"
                            data-line={d.line.to_string()} data-col={d.col.to_string()}
                            onclick={Callback::from(move |_: MouseEvent| jump.emit((line, col)))}
                            title="Show this line in the editor">
                            <span class="diag-pos">{ format!("{}:{}", d.line, d.col) }</span>
                            <span class="diag-sev">{ severity_word(d.severity) }</span>
                            <span class="diag-msg">{ &d.message }</span>
                        </button>
                    }
                }) }
            </div>
        </section>
    }
}
