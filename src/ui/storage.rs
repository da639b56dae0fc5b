//! Page settings from the URL and the editor's autosave in localStorage.

/// The localStorage key of the editor text. Versioned so a future format can migrate.
const EDITOR_KEY: &str = "kubeloop.editor.v1";

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

/// The autosaved editor text, if any (never in embed mode).
pub fn load_editor() -> Option<String> {
    if is_embed() {
        return None;
    }
    storage()?.get_item(EDITOR_KEY).ok().flatten()
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
