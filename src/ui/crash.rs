//! The panic boundary: a panic anywhere in the app ends in the crash screen, never a dead page.
//!
//! On wasm32-unknown-unknown a panic aborts: the instance traps right after the panic hook
//! returns, every Yew closure is dead from then on, and any RefCell (the model, the share bus,
//! Yew's own state) may still be borrowed by the code that panicked. So the hook touches none of
//! them. It reads the editor text straight from the DOM, saves it to the autosave when that is
//! safe ([`crate::viewmodel::crash::should_autosave`]), builds a share link with the pure encoder,
//! and hands `{message, location, text, embed, autosaved}` and then `{url, fragment, long}` or
//! `{error}` to `window.kubeloopCrash` (`www/crash.js`, plain JavaScript loaded by `www/boot.js`),
//! which shows the dialog and owns Restart. The report goes first and the link second, so a
//! failure while encoding (which would abort the hook) still leaves the dialog and the text.

use std::sync::atomic::{AtomicU32, Ordering};

use wasm_bindgen::{JsCast, JsValue};

use super::storage;
use crate::viewmodel::crash::{clip_message, crash_link, should_autosave};

/// How many panics the hook has seen. Only the first is reported: later ones come from dead
/// closures still firing into the trapped instance (a timer, an event) and say nothing new.
static PANICS: AtomicU32 = AtomicU32::new(0);

/// Installs the panic hook. Call first thing, before anything can panic.
///
/// Through Yew: its renderer replaces any hook set with `std::panic::set_hook` by its own
/// (`console_error_panic_hook`) unless the app set one with `yew::set_custom_panic_hook`.
pub fn install() {
    yew::set_custom_panic_hook(Box::new(on_panic));
}

fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    // (`payload_as_str` would do this, but needs a newer Rust than the crate's MSRV.)
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(the panic carried no message)");
    let seen = PANICS.fetch_add(1, Ordering::SeqCst);
    if seen > 0 {
        if seen < 4 {
            web_sys::console::warn_1(&JsValue::from_str(&format!(
                "kubeloop: another panic after the first one (the app had already stopped): {}",
                clip_message(message)
            )));
        }
        return;
    }
    // The full message and a JS stack in the console, as before the boundary existed.
    console_error_panic_hook::hook(info);

    let location = info
        .location()
        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_default();
    let text = editor_text();
    let embed = storage::is_embed();
    let autosaved = match &text {
        // Never in an embed: a course page's lesson must not overwrite the reader's own text.
        Some(t) if !embed => {
            let fragment = location_part(|l| l.hash());
            let saved = storage::autosaved_text();
            if should_autosave(t, &fragment, saved.as_deref()) {
                storage::save_editor(t);
            }
            storage::autosaved_text().as_deref() == Some(t.as_str())
        }
        _ => false,
    };

    let report = object(&[
        ("message", JsValue::from_str(&clip_message(message))),
        ("location", JsValue::from_str(&location)),
        (
            "text",
            text.as_deref().map_or(JsValue::NULL, JsValue::from_str),
        ),
        ("embed", JsValue::from_bool(embed)),
        ("autosaved", JsValue::from_bool(autosaved)),
    ]);
    if !call_crash_screen("report", &report) {
        return;
    }

    let link = match text
        .as_deref()
        .map(|t| crash_link(&location_part(|l| l.href()), t))
    {
        Some(Ok(link)) => object(&[
            ("url", JsValue::from_str(&link.url)),
            ("fragment", JsValue::from_str(&link.fragment)),
            ("long", JsValue::from_bool(link.long)),
        ]),
        Some(Err(why)) => object(&[("error", JsValue::from_str(&why))]),
        None => object(&[(
            "error",
            JsValue::from_str(
                "The editor was not on the page yet, so there is no scenario to link to.",
            ),
        )]),
    };
    call_crash_screen("link", &link);
}

/// The editor's text as the DOM holds it (the textarea is the source of truth while typing).
fn editor_text() -> Option<String> {
    web_sys::window()?
        .document()?
        .query_selector("textarea[data-testid=\"editor\"]")
        .ok()
        .flatten()?
        .dyn_into::<web_sys::HtmlTextAreaElement>()
        .ok()
        .map(|t| t.value())
}

/// One part of `window.location` (empty when unavailable).
fn location_part(part: impl Fn(&web_sys::Location) -> Result<String, JsValue>) -> String {
    web_sys::window()
        .and_then(|w| part(&w.location()).ok())
        .unwrap_or_default()
}

/// A plain JS object with these fields.
fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in fields {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

/// Calls `window.kubeloopCrash[method](arg)`. False when the crash screen is missing (it failed
/// to load: the console message above is then all there is) or threw.
fn call_crash_screen(method: &str, arg: &JsValue) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let screen = js_sys::Reflect::get(&window, &JsValue::from_str("kubeloopCrash"))
        .ok()
        .filter(|s| s.is_object());
    let Some(screen) = screen else {
        web_sys::console::error_1(&JsValue::from_str(
            "kubeloop: the crash screen (www/crash.js) is not loaded; reload the page. Your editor text is in this browser's autosave.",
        ));
        return false;
    };
    let f = js_sys::Reflect::get(&screen, &JsValue::from_str(method))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    match f {
        Some(f) => f.call1(&screen, arg).is_ok(),
        None => false,
    }
}
