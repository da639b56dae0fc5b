//! Page settings from the URL and the editor's autosave in localStorage.

use crate::viewmodel::crash::restored_text;

/// The localStorage key of the editor text. Versioned so a future format can migrate.
const EDITOR_KEY: &str = "kubeloop.editor.v1";
/// The sessionStorage key (followed by `:` and the page's path and query) of the one-shot record
/// the crash screen's Restart writes (`www/crash.js` spells it the same): the editor text to show
/// after the reload, `{"text", "at"}`.
const RESTORE_KEY: &str = "kubeloop.restore.v1";

fn query() -> String {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// The value of one query parameter (`?embed=1` → `Some("1")`).
pub fn query_param(name: &str) -> Option<String> {
    let q = query();
    q.trim_start_matches('?').split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| v.to_string())
    })
}

/// Embed mode (`?embed=1`): a course page's iframe. It never writes to localStorage, so a
/// reader's own playground text is never overwritten by an embedded lesson.
pub fn is_embed() -> bool {
    matches!(query_param("embed").as_deref(), Some("1") | Some("true"))
}

/// The simulation seed from `?seed=N` (default 1).
pub fn seed() -> u64 {
    query_param("seed")
        .and_then(|s| s.parse().ok())
        .unwrap_or(crate::sim::session::DEFAULT_SEED)
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The text the editor opens with: what the crash screen's Restart left for this page, else the
/// autosave (never in embed mode).
pub fn load_editor() -> Option<String> {
    if let Some(text) = take_restored() {
        return Some(text);
    }
    autosaved_text()
}

/// The autosaved editor text, if any (never in embed mode). Reading it has no side effect.
pub fn autosaved_text() -> Option<String> {
    if is_embed() {
        return None;
    }
    storage()?.get_item(EDITOR_KEY).ok().flatten()
}

/// Takes (reads and removes) the crash screen's restore record for this page, if it is fresh.
/// sessionStorage, so embeds can use it too: it belongs to this tab and never outlives it.
fn take_restored() -> Option<String> {
    let w = web_sys::window()?;
    let session = w.session_storage().ok().flatten()?;
    let loc = w.location();
    let key = format!(
        "{RESTORE_KEY}:{}{}",
        loc.pathname().unwrap_or_default(),
        loc.search().unwrap_or_default()
    );
    let record = session.get_item(&key).ok().flatten()?;
    let _ = session.remove_item(&key);
    restored_text(&record, js_sys::Date::now())
}

/// Saves the editor text (ignored in embed mode and when storage is unavailable or full).
pub fn save_editor(text: &str) {
    if is_embed() {
        return;
    }
    if let Some(s) = storage() {
        let _ = s.set_item(EDITOR_KEY, text);
    }
}
