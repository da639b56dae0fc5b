//! The page's bus: the app's dispatcher and model, the URL flags, and the editor's text, for the
//! parts of the page that live outside the component tree (share links, the embed bridge, the JS
//! API, the console). Share links keep their own state in `share.rs`.
//!
//! The editor owns its text; [`use_editor_sync`] mirrors it here and lets the page put text in
//! it (a link, an embed's `apply`/`load`). Text the page puts there is clean; the reader's typing
//! makes it edited until [`mark_clean`] (the address bar caught up) or [`forget_edits`] (a link
//! replaced it).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsValue;
use yew::prelude::*;

use super::state::Action;
use crate::viewmodel::embed_flags::{parse_query, Flags};
use crate::viewmodel::Playground;

#[derive(Default)]
struct Bus {
    dispatch: Option<Callback<Action>>,
    model: Option<Rc<RefCell<Playground>>>,
    flags: Option<Rc<Flags>>,
    /// The editor's text as last reported.
    text: String,
    /// The editor reported at least once.
    seen_editor: bool,
    /// Text the page itself put in the editor (initial, link, embed call): not a reader edit.
    clean: Option<String>,
    set_text: Option<UseStateSetter<String>>,
    /// Text waiting for the editor to mount.
    pending: Option<String>,
    /// A reader edit not yet marked clean: when it happened (ms).
    edited_since: Option<f64>,
    /// The text changed since [`take_text_changed`] last asked.
    text_changed: bool,
    /// Called when the reader starts editing clean text.
    on_edit_started: Option<Rc<dyn Fn()>>,
}

thread_local! {
    static BUS: RefCell<Bus> = RefCell::new(Bus::default());
}

/// Runs `f` on the bus. Never call into Yew (emit, set) inside: that may re-enter.
fn with<R>(f: impl FnOnce(&mut Bus) -> R) -> R {
    BUS.with(|b| f(&mut b.borrow_mut()))
}

/// Milliseconds on the page's clock (for debouncing, never for the simulation).
pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// The page's URL flags, parsed once.
pub fn flags() -> Rc<Flags> {
    if let Some(f) = with(|b| b.flags.clone()) {
        return f;
    }
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let f = Rc::new(parse_query(&search));
    for w in &f.warnings {
        web_sys::console::warn_1(&JsValue::from_str(&format!(
            "kubeloop: ignored URL flag: {w}"
        )));
    }
    with(|b| b.flags = Some(f.clone()));
    f
}

/// Hands the mounted app's dispatcher and model to the rest of the page.
pub fn attach(dispatch: Callback<Action>, model: Rc<RefCell<Playground>>) {
    with(|b| {
        b.dispatch = Some(dispatch);
        b.model = Some(model);
    });
}

/// The app is gone: nothing may dispatch to it or read its model.
pub fn detach() {
    with(|b| {
        b.dispatch = None;
        b.model = None;
    });
}

/// The app's dispatcher, once the app is mounted.
pub fn dispatcher() -> Option<Callback<Action>> {
    with(|b| b.dispatch.clone())
}

/// The playground model, once the app is mounted.
pub fn model() -> Option<Rc<RefCell<Playground>>> {
    with(|b| b.model.clone())
}

/// Calls `f` whenever the reader starts editing clean text.
pub fn on_edit_started(f: impl Fn() + 'static) {
    with(|b| b.on_edit_started = Some(Rc::new(f)));
}

/// Mirrors the editor's text here and lets share links and the embed put text in the editor.
/// Called once by the editor component with its text state.
#[hook]
pub fn use_editor_sync(text: &UseStateHandle<String>) {
    {
        let setter = text.setter();
        use_effect_with((), move |_| {
            let pending = with(|b| {
                b.set_text = Some(setter.clone());
                b.pending.take()
            });
            if let Some(p) = pending {
                setter.set(p);
            }
            || with(|b| b.set_text = None)
        });
    }
    let current: &str = text;
    let changed = with(|b| !b.seen_editor || b.text != current);
    if !changed {
        return;
    }
    let t = current.to_string();
    let started = with(|b| {
        if !b.seen_editor {
            // The text the editor opened with (autosave or the default) is nobody's edit.
            b.seen_editor = true;
            if b.clean.is_none() {
                b.clean = Some(t.clone());
            }
        }
        let was_clean = b.edited_since.is_none();
        if b.clean.as_deref() != Some(t.as_str()) {
            b.edited_since = Some(now_ms());
        }
        b.text = t;
        b.text_changed = true;
        (was_clean && b.edited_since.is_some())
            .then(|| b.on_edit_started.clone())
            .flatten()
    });
    if let Some(f) = started {
        f();
    }
}

/// Puts `text` in the editor as the page's own (not a reader edit: it is not autosaved and does
/// not rewrite the address bar by itself).
pub fn set_editor_text(text: &str) {
    let setter = with(|b| {
        b.clean = Some(text.to_string());
        b.text = text.to_string();
        b.edited_since = None;
        b.text_changed = true;
        match &b.set_text {
            Some(s) => Some(s.clone()),
            None => {
                b.pending = Some(text.to_string());
                None
            }
        }
    });
    if let Some(s) = setter {
        s.set(text.to_string());
    }
}

/// The editor's text now (what the console's `kubectl apply -f -` reads).
pub fn editor_text() -> String {
    with(|b| b.text.clone())
}

/// The text the page put in the editor before it mounted, for the editor's first render.
pub fn take_pending_text() -> Option<String> {
    with(|b| b.pending.take())
}

/// When the reader's unmarked edits began, if there are any.
pub fn edited_since() -> Option<f64> {
    with(|b| b.edited_since)
}

/// The text now is what the page shows elsewhere (the address bar caught up): clean.
pub fn mark_clean() {
    with(|b| {
        b.edited_since = None;
        b.clean = Some(b.text.clone());
    });
}

/// A link replaced what the reader was editing: no pending edit may overwrite it.
pub fn forget_edits() {
    with(|b| b.edited_since = None);
}

/// Whether the text changed since the last call.
pub fn take_text_changed() -> bool {
    with(|b| std::mem::take(&mut b.text_changed))
}
