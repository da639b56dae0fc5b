//! The manifest editor: a textarea over its syntax-highlighted copy, a line-number gutter, Apply
//! (Ctrl/Cmd+Enter), and the diagnostics of the last apply underlined at their line and column,
//! explained on hover, when the caret is on their line, and in the problems list.
//!
//! Two layers: the `<textarea>` on top has transparent text and keeps everything a text field
//! does (typing, selection, undo, IME, autofill off, screen readers); the `<pre>` under it draws
//! the same text in colour with the same font, padding and line height, moved with the
//! textarea's scroll by a CSS transform. Only the lines in view (and a margin) are drawn, and the
//! highlight keeps the line states before an edit (`viewmodel::yaml_highlight::Highlight`), so a
//! keystroke in a 10,000-line file costs about what it costs in a short one. The underlines lie
//! beneath the textarea, so hovering finds them with `document.elementsFromPoint`; keyboard and
//! screen-reader users get the message of the caret's line in a live region. User text only ever
//! becomes Yew text nodes.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlTextAreaElement};
use yew::prelude::*;

use super::icons;
use super::state::{reply, Action};
use super::storage;
use crate::sim::examples;
use crate::sim::input::diagnostic::{Diagnostic, Severity};
use crate::vec_map::VecMap;
use crate::viewmodel::editor_keys::{EditorKey, TabTrap};
use crate::viewmodel::format::utf16_offset;
use crate::viewmodel::yaml_highlight::{
    line_col_at, line_marks, segments, Highlight, HighlightedLine, LineMap, Mark, Pin,
};
use crate::viewmodel::DEFAULT_MANIFEST;

/// The line height in pixels; `www/style.css` sets the same 20px on the textarea, the
/// highlighted layer and the gutter.
const LINE_PX: i32 = 20;
/// Lines per step of the drawn window: the window moves (and the editor re-renders) once per
/// this many lines scrolled, and this many extra lines are drawn above and below the view.
const CHUNK: usize = 32;

/// Editor inputs.
#[derive(Properties, PartialEq)]
pub struct EditorProps {
    pub dispatch: Callback<Action>,
    /// Diagnostics of the last apply.
    pub diagnostics: Vec<Diagnostic>,
    /// The text the last apply read, which the diagnostics' positions refer to. When it is not
    /// the editor's text (the JS API applied another), the underlines are placed by mapping its
    /// lines onto the editor's, so none is drawn on a line it does not describe.
    #[prop_or_default]
    pub applied_text: Option<std::rc::Rc<str>>,
    /// kubectl's output lines of the last apply.
    pub lines: Vec<String>,
    /// Whether the last apply succeeded (None before the first).
    pub ok: Option<bool>,
    /// Nothing was applied yet: the Apply button invites a first click.
    #[prop_or_default]
    pub hint: bool,
    /// Something was applied on a paused clock (`Playground::play_hint`): the line beside Apply
    /// says to press Play.
    #[prop_or_default]
    pub play_hint: bool,
    /// The last Apply held a Scenario document that is not running
    /// (`Playground::scenario_applied`): the apply row offers to run it.
    #[prop_or_default]
    pub scenario_applied: bool,
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

/// Which lines are drawn: the view's first line in [`CHUNK`]s, and how many lines fit.
#[derive(Clone, Copy, PartialEq)]
struct Window {
    chunk: usize,
    rows: usize,
}

impl Window {
    /// The 0-based lines to draw: the view plus a chunk of margin each way.
    fn range(self, line_count: usize) -> std::ops::Range<usize> {
        let first = self.chunk * CHUNK;
        let end = (first + self.rows + 2 * CHUNK).min(line_count);
        first.saturating_sub(CHUNK).min(end)..end
    }
}

/// The hover tooltip: which diagnostics, and where (pixels inside the code area).
#[derive(Clone, PartialEq)]
struct Tip {
    ids: Vec<usize>,
    left: i32,
    top: i32,
    above: bool,
}

/// The diagnostics, and the text they were computed for, as the editor last saw them: edits made
/// since then move the underlines with their lines (or drop them, on an edited line).
#[derive(Default)]
struct Applied {
    diagnostics: Vec<Diagnostic>,
    text: String,
}

/// A line of the highlighted layer, with its diagnostics' underlines.
fn line_html(l: &HighlightedLine<'_>, pins: Option<&Vec<Pin>>, diags: &[Diagnostic]) -> Html {
    let marks = pins.map_or_else(Vec::new, |p| line_marks(l.text, &l.spans, p));
    let segs = segments(&l.spans, &marks);
    let piece = |start: usize, end: usize, class: Option<&'static str>| -> Html {
        let text = l.text.get(start..end).unwrap_or_default();
        match class {
            Some(c) => html! { <span class={c}>{ text }</span> },
            None => Html::from(text),
        }
    };
    let mut children: Vec<Html> = Vec::with_capacity(segs.len());
    let mut i = 0;
    while i < segs.len() {
        match segs[i].mark {
            None => {
                children.push(piece(segs[i].start, segs[i].end, segs[i].tok.class()));
                i += 1;
            }
            Some(m) => {
                let mut inner = Vec::new();
                while i < segs.len() && segs[i].mark == Some(m) {
                    inner.push(piece(segs[i].start, segs[i].end, segs[i].tok.class()));
                    i += 1;
                }
                children.push(mark_html(l.index, &marks[m], diags, inner));
            }
        }
    }
    for m in marks.iter().filter(|m| m.at_end()) {
        children.push(mark_html(l.index, m, diags, vec![Html::from(" ")]));
    }
    html! { <span class="hl-line" key={l.index}>{ for children }</span> }
}

/// One wavy underline. `data-diags` lists the diagnostics it stands for (indexes into the
/// problems list), read back by the hover handler.
fn mark_html(index: usize, m: &Mark, diags: &[Diagnostic], inner: Vec<Html>) -> Html {
    let ids: Vec<String> = m.ids.iter().map(usize::to_string).collect();
    let col = m
        .ids
        .first()
        .and_then(|&i| diags.get(i))
        .map_or(0, |d| d.col);
    html! {
        <span class={classes!("diag-mark", severity_class(m.severity), m.at_end().then_some("diag-eol"))}
            data-testid="diag-mark" data-line={(index + 1).to_string()} data-col={col.to_string()}
            data-diags={ids.join(",")}>
            { for inner }
        </span>
    }
}

/// `6:3 error: message` lines for the given diagnostics, as the gutter's native tooltip.
fn gutter_title(ids: &[usize], diags: &[Diagnostic]) -> String {
    ids.iter()
        .filter_map(|&i| diags.get(i))
        .map(|d| {
            format!(
                "{}:{} {}: {}",
                d.line,
                d.col,
                severity_word(d.severity),
                d.message
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The editor panel.
#[component]
pub fn Editor(p: &EditorProps) -> Html {
    let text = use_state(|| {
        // The crash screen's restore record is taken either way; a link opened at start wins.
        let saved = storage::load_editor();
        super::bus::take_pending_text()
            .or(saved)
            .unwrap_or_else(|| DEFAULT_MANIFEST.to_string())
    });
    // Share links and embeds read and set the editor's text (src/ui/share.rs).
    super::bus::use_editor_sync(&text);
    // The highlight of the current text, updated from the last one (which keeps the line states
    // before the edit) rather than rebuilt.
    let last_hl = use_mut_ref(|| None::<Rc<Highlight>>);
    let hl: Rc<Highlight> = {
        let mut last = last_hl.borrow_mut();
        let next = match last.as_ref() {
            Some(h) if h.is_of(&text) => h.clone(),
            Some(h) => Rc::new(h.update(&text)),
            None => Rc::new(Highlight::new(&text)),
        };
        *last = Some(next.clone());
        next
    };
    let area = use_node_ref();
    let wrap = use_node_ref();
    let layer = use_node_ref();
    let gutter_inner = use_node_ref();
    let window = use_state_eq(|| Window { chunk: 0, rows: 60 });
    let tip = use_state_eq(|| None::<Tip>);
    let caret_line = use_state_eq(|| None::<u32>);
    let applied = use_mut_ref(Applied::default);
    let trap = use_state_eq(TabTrap::default);
    let on_key = {
        let trap = trap.clone();
        Rc::new(move |key: EditorKey| trap.set(trap.after(key)))
    };

    // Where each diagnostic is in the text now (None: its line was edited since it was found).
    let placed: Vec<Option<u32>> = {
        let mut a = applied.borrow_mut();
        if a.diagnostics != p.diagnostics {
            a.diagnostics = p.diagnostics.clone();
            a.text = match &p.applied_text {
                Some(t) => t.to_string(),
                None => hl.text().to_string(),
            };
        }
        let n = u32::try_from(hl.line_count()).unwrap_or(u32::MAX);
        let map = if p.diagnostics.is_empty() || a.text == hl.text() {
            LineMap::identity(n)
        } else {
            LineMap::between(&a.text, hl.text())
        };
        p.diagnostics.iter().map(|d| map.map(d.line)).collect()
    };
    let mut pins: VecMap<u32, Vec<Pin>> = VecMap::new();
    for (id, (d, line)) in p.diagnostics.iter().zip(&placed).enumerate() {
        if let Some(line) = line {
            pins.entry(*line).or_default().push(Pin {
                col: d.col,
                severity: d.severity,
                id,
            });
        }
    }
    let has_marks = !pins.is_empty();

    // Moves the highlighted layer and the gutter with the textarea's scroll, and the drawn
    // window when the view leaves it. Direct DOM writes: no re-render per scroll event. Says
    // whether the layer moved: a scroll event comes a frame after its scroll (later on a busy
    // page), when a render may have moved the layer already and a tooltip been placed on it.
    let synced = use_mut_ref(|| (0, 0));
    let sync = {
        let area = area.clone();
        let layer = layer.clone();
        let gutter_inner = gutter_inner.clone();
        let window = window.clone();
        Rc::new(move || {
            let Some(a) = area.cast::<HtmlTextAreaElement>() else {
                return false;
            };
            let (top, left) = (a.scroll_top(), a.scroll_left());
            let moved = synced.replace((top, left)) != (top, left);
            if let Some(el) = layer.cast::<Element>() {
                let _ = el.set_attribute(
                    "style",
                    &format!("transform: translate({}px, {}px)", -left, -top),
                );
            }
            if let Some(el) = gutter_inner.cast::<Element>() {
                let _ = el.set_attribute("style", &format!("transform: translateY({}px)", -top));
            }
            let rows = (a.client_height() / LINE_PX).max(1) as usize + 1;
            let first = (top.max(0) / LINE_PX) as usize;
            window.set(Window {
                chunk: first / CHUNK,
                rows,
            });
            moved
        })
    };
    {
        // After every render: the text or the panel's size may have changed the scroll.
        let sync = sync.clone();
        use_effect(move || {
            sync();
        });
    }

    let apply = {
        let d = p.dispatch.clone();
        let text = text.clone();
        let applied = applied.clone();
        let hl = hl.clone();
        Callback::from(move |_: ()| {
            // Whatever comes back describes this text, even if it equals the last diagnostics.
            applied.borrow_mut().text = hl.text().to_string();
            d.emit(Action::Apply((*text).clone(), reply()))
        })
    };
    // The caret's line, from the textarea's selection (its moving end) in `value`.
    let track_caret = {
        let caret_line = caret_line.clone();
        Rc::new(move |el: &HtmlTextAreaElement, value: &str| {
            let backward = el.selection_direction().ok().flatten().as_deref() == Some("backward");
            let at = if backward {
                el.selection_start()
            } else {
                el.selection_end()
            };
            if let Ok(Some(at)) = at {
                caret_line.set(Some(line_col_at(value, at).0));
            }
        })
    };
    let on_input = {
        let text = text.clone();
        let track_caret = track_caret.clone();
        let on_key = on_key.clone();
        Callback::from(move |e: InputEvent| {
            on_key(EditorKey::Typed);
            let el: HtmlTextAreaElement = e.target_unchecked_into();
            let v = el.value();
            storage::save_editor(&v);
            track_caret(&el, &v);
            text.set(v);
        })
    };
    let on_caret_event = {
        let track_caret = track_caret.clone();
        let hl = hl.clone();
        move |e: &Event| {
            if let Some(el) = e.target_dyn_into::<HtmlTextAreaElement>() {
                track_caret(&el, hl.text());
            }
        }
    };
    let on_keyup = {
        let f = on_caret_event.clone();
        Callback::from(move |e: KeyboardEvent| f(&e))
    };
    let on_mouseup = {
        let f = on_caret_event.clone();
        Callback::from(move |e: MouseEvent| f(&e))
    };
    let on_focus = {
        let f = on_caret_event;
        Callback::from(move |e: FocusEvent| f(&e))
    };
    let on_pointerdown = {
        let on_key = on_key.clone();
        Callback::from(move |_: PointerEvent| on_key(EditorKey::Clicked))
    };
    let on_blur = {
        let on_key = on_key.clone();
        Callback::from(move |_: FocusEvent| on_key(EditorKey::Blurred))
    };
    let tab_indents = trap.tab_indents();
    let on_keydown = {
        let apply = apply.clone();
        let text = text.clone();
        let on_key = on_key.clone();
        Callback::from(move |e: KeyboardEvent| {
            let el: HtmlTextAreaElement = e.target_unchecked_into();
            if e.key() == "Enter" && (e.ctrl_key() || e.meta_key()) {
                e.prevent_default();
                apply.emit(());
            } else if e.key() == "Tab"
                && tab_indents
                && !el.read_only()
                && !e.shift_key()
                && !e.ctrl_key()
                && !e.meta_key()
                && !e.alt_key()
            {
                // YAML is indented with spaces: once the learner is editing, Tab inserts two
                // (before that, and after Escape, it moves the focus on: `TabTrap`).
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
                // The focus stays (and shows): the next Tab leaves, as the hint says.
                on_key(EditorKey::Escape);
            }
        })
    };
    let on_scroll = {
        let sync = sync.clone();
        let tip = tip.clone();
        Callback::from(move |_: Event| {
            if sync() {
                tip.set(None);
            }
        })
    };
    // Hover: the underlines are beneath the textarea, so look through it for one.
    let on_mousemove = {
        let tip = tip.clone();
        let wrap = wrap.clone();
        Callback::from(move |e: MouseEvent| {
            if !has_marks {
                tip.set(None);
                return;
            }
            let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
                return;
            };
            let mark = doc
                .elements_from_point(e.client_x() as f32, e.client_y() as f32)
                .iter()
                .filter_map(|v| v.dyn_into::<Element>().ok())
                .find(|el| el.has_attribute("data-diags"));
            let (Some(mark), Some(w)) = (mark, wrap.cast::<Element>()) else {
                tip.set(None);
                return;
            };
            let ids: Vec<usize> = mark
                .get_attribute("data-diags")
                .unwrap_or_default()
                .split(',')
                .filter_map(|s| s.parse().ok())
                .collect();
            let (m, w) = (
                mark.get_bounding_client_rect(),
                w.get_bounding_client_rect(),
            );
            // Clear of the whole 20px line, so the tooltip never hides the wavy underline.
            let line = mark
                .closest(".hl-line")
                .ok()
                .flatten()
                .map_or_else(|| m.clone(), |l| l.get_bounding_client_rect());
            let tip_width = (w.width() - 8.0).min(340.0);
            let left = (m.left() - w.left())
                .min(w.width() - tip_width - 4.0)
                .max(4.0);
            let above = line.bottom() - w.top() > w.height() * 0.6;
            let top = if above {
                line.top() - w.top() - 2.0
            } else {
                line.bottom() - w.top() + 2.0
            };
            tip.set(Some(Tip {
                ids,
                left: left.round() as i32,
                top: top.round() as i32,
                above,
            }));
        })
    };
    let on_mouseleave = {
        let tip = tip.clone();
        Callback::from(move |_: MouseEvent| tip.set(None))
    };
    // The gutter is not scrollable itself: a wheel over it scrolls the text.
    let on_gutter_wheel = {
        let area = area.clone();
        Callback::from(move |e: WheelEvent| {
            if let Some(a) = area.cast::<HtmlTextAreaElement>() {
                a.set_scroll_top(a.scroll_top() + e.delta_y().round() as i32);
            }
        })
    };
    let on_apply_click = {
        let apply = apply.clone();
        Callback::from(move |_: MouseEvent| apply.emit(()))
    };
    let has_controller = crate::sim::input::controller_doc::mentioned_in(&text);
    let on_check_click = {
        let d = p.dispatch.clone();
        let text = text.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::CheckController((*text).clone())))
    };
    // Opens the editor's text as a scenario, as a lesson opens: the editor keeps the text.
    let on_run_scenario = {
        let text = text.clone();
        Callback::from(move |_: MouseEvent| {
            let _ = super::share::load(&text, None);
        })
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
        let hl = hl.clone();
        let caret_line = caret_line.clone();
        Callback::from(move |(line, col): (u32, u32)| {
            if let Some(a) = area.cast::<HtmlTextAreaElement>() {
                let off = utf16_offset(hl.text(), line, col.max(1));
                let _ = a.focus();
                // Sent to the line to fix it: editing, as if the learner had clicked there.
                on_key(EditorKey::Clicked);
                let _ = a.set_selection_range(off, off);
                // Bring the line into view, four lines below the top.
                a.set_scroll_top(line.saturating_sub(4) as i32 * LINE_PX);
                caret_line.set(Some(line));
            }
        })
    };

    let line_count = hl.line_count();
    let range = window.range(line_count);
    let lines = hl.lines(range.clone());
    let spacer = format!("height: {}px", range.start as i64 * i64::from(LINE_PX));
    let digits = line_count.to_string().len();
    let gutter_style = (digits > 3).then(|| format!("width: {}px", 18 + 7 * digits));
    let errors = p
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let caret_diags: Vec<(usize, &Diagnostic)> = match *caret_line {
        Some(line) => p
            .diagnostics
            .iter()
            .enumerate()
            .filter(|(i, _)| placed[*i] == Some(line))
            .collect(),
        None => Vec::new(),
    };

    html! {
        <section class="panel editor-panel" aria-labelledby="editor-title">
            <div class="panel-head">
                <h2 id="editor-title" class="panel-title">{ "Desired state" }</h2>
                <span class="panel-sub">{ "YAML" }</span>
                <div class="panel-actions">
                    <details class="menu lessons-menu">
                        <summary class="btn btn-small btn-ghost" data-testid="lessons-menu">{ "Lessons ▾" }</summary>
                        <div class="menu-items" role="menu">
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
                <div class="gutter" aria-hidden="true" style={gutter_style} onwheel={on_gutter_wheel}>
                    <div class="gutter-inner" ref={gutter_inner}>
                        <div style={spacer.clone()} />
                        { for range.clone().map(|i| {
                            let n = i as u32 + 1;
                            let here = pins.get(&n);
                            let worst = here.and_then(|v| v.iter().map(|p| p.severity).min());
                            let title = here.map(|v| {
                                gutter_title(&v.iter().map(|p| p.id).collect::<Vec<_>>(), &p.diagnostics)
                            });
                            html! {
                                <div key={i} class={classes!("gutter-line", worst.map(severity_class))}
                                    data-testid={worst.map(|_| "gutter-mark")} {title}>{ n }</div>
                            }
                        }) }
                    </div>
                </div>
                <div class="code-wrap" ref={wrap.clone()}>
                    <pre class="code-hl" aria-hidden="true" data-testid="editor-highlight">
                        <span class="hl-inner" ref={layer}>
                            <span class="hl-spacer" style={spacer} />
                            { for lines.iter().map(|l| line_html(l, pins.get(&(l.index as u32 + 1)), &p.diagnostics)) }
                        </span>
                    </pre>
                    <textarea
                        ref={area}
                        data-testid="editor"
                        class="code"
                        spellcheck="false"
                        autocomplete="off"
                        autocapitalize="off"
                        wrap="off"
                        aria-label="Manifest YAML. Ctrl+Enter applies it."
                        aria-describedby="editor-keys editor-caret-diag"
                        value={(*text).clone()}
                        oninput={on_input}
                        onkeydown={on_keydown}
                        onkeyup={on_keyup}
                        onmouseup={on_mouseup}
                        onfocus={on_focus}
                        onblur={on_blur}
                        onpointerdown={on_pointerdown}
                        onscroll={on_scroll}
                        onmousemove={on_mousemove}
                        onmouseleave={on_mouseleave}
                    />
                    <div id="editor-keys" class={classes!("editor-keys", tab_indents.then_some("is-editing"))}
                        data-testid="editor-keys">{ trap.hint() }</div>
                    if let Some(t) = (*tip).clone() {
                        <div class={classes!("editor-tip", t.above.then_some("is-above"))} role="tooltip"
                            data-testid="editor-tip" style={format!("left: {}px; top: {}px", t.left, t.top)}>
                            { for t.ids.iter().filter_map(|&i| p.diagnostics.get(i)).map(|d| html! {
                                <div class={classes!("tip-row", severity_class(d.severity))}>
                                    <span class="diag-sev">{ severity_word(d.severity) }</span>
                                    <span class="tip-msg">{ &d.message }</span>
                                </div>
                            }) }
                        </div>
                    }
                </div>
            </div>
            <div id="editor-caret-diag" class="caret-diag" data-testid="caret-diagnostic" role="status" aria-live="polite">
                { for caret_diags.iter().map(|(_, d)| html! {
                    <div class={classes!("caret-diag-row", severity_class(d.severity))}>
                        <span class="diag-pos">{ format!("Line {}", caret_line.unwrap_or(d.line)) }</span>
                        <span class="diag-sev">{ severity_word(d.severity) }</span>
                        <span class="diag-msg" title={d.message.clone()}>{ &d.message }</span>
                    </div>
                }) }
            </div>
            <div class="apply-row">
                <button class={classes!("btn", "btn-primary", "btn-apply", p.hint.then_some("is-hint"))} data-testid="apply" onclick={on_apply_click}
                    title="kubectl apply -f (Ctrl/Cmd+Enter)">
                    { "Apply" }<kbd>{ if is_mac() { "⌘↵" } else { "Ctrl↵" } }</kbd>
                </button>
                if has_controller {
                    <button class="btn btn-check" data-testid="check-controller" onclick={on_check_click}
                        title="Run the controller in this text through fault schedules (lost watch events, crashes mid-pass, racing writers): is it convergent, level-triggered and idempotent?">
                        { "Check my controller" }
                    </button>
                }
                if p.scenario_applied {
                    <button class="btn btn-run-scenario" data-testid="run-scenario" onclick={on_run_scenario}
                        title="Start this scenario from t=0: its nodes, seed, steps and checks (Reset does the same)">
                        { icons::play() }<span>{ "Run this scenario" }</span>
                    </button>
                }
                <span class="apply-hint">
                    { if p.scenario_applied {
                        "Applied its objects. Run this scenario (or Reset) to start it from t=0 with its nodes, seed, steps and checks."
                    } else if p.hint {
                        "Start here: apply what the editor declares, then press Play."
                    } else if p.play_hint {
                        "Applied. Now press Play (or Space): the controllers act while the clock runs."
                    } else {
                        "Declare what should be true; the controllers make it so."
                    } }
                </span>
            </div>
            <div class={classes!("diagnostics", (errors > 0).then_some("has-errors"))} data-testid="diagnostics"
                role="status" aria-live="polite">
                { for p.lines.iter().map(|l| html! { <div class="apply-line">{ "✓ " }{ l }</div> }) }
                if p.ok == Some(false) && errors > 0 {
                    <div class="apply-refused">{ format!("Nothing was applied: {errors} error(s).") }</div>
                }
                { for p.diagnostics.iter().zip(&placed).map(|(d, now)| {
                    let jump = jump.clone();
                    let (line, col) = (now.unwrap_or(d.line), d.col);
                    let stale = now.is_none();
                    html! {
                        <button class={classes!("diag", severity_class(d.severity), stale.then_some("is-stale"))} data-testid="diagnostic"
                            data-line={d.line.to_string()} data-col={d.col.to_string()}
                            onclick={Callback::from(move |_: MouseEvent| jump.emit((line, col)))}
                            title={if stale { "This line was edited since Apply; Apply again to recheck" } else { "Show this line in the editor" }}>
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
