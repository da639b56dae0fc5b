//! Inline SVG icons (no icon font: nothing to download, and they inherit the text colour).

use yew::prelude::*;

fn icon(path: &'static str) -> Html {
    html! {
        <svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
            <path d={path} fill="currentColor" />
        </svg>
    }
}

/// ▶
pub fn play() -> Html {
    icon("M8 5.5v13a1 1 0 0 0 1.5.86l10.5-6.5a1 1 0 0 0 0-1.72L9.5 4.64A1 1 0 0 0 8 5.5z")
}

/// ❚❚
pub fn pause() -> Html {
    icon("M7 5h3.5v14H7zM13.5 5H17v14h-3.5z")
}

/// ▶❙
pub fn step() -> Html {
    icon("M6 6.2v11.6a.8.8 0 0 0 1.2.7l8.6-5.8a.8.8 0 0 0 0-1.4L7.2 5.5a.8.8 0 0 0-1.2.7zM17 5.5h2.2v13H17z")
}

/// ↺
pub fn reset() -> Html {
    icon("M12 5a7 7 0 1 1-6.32 4H3.5l3.25-4 3.25 4H7.86A5 5 0 1 0 12 7z")
}

/// ⚡
pub fn bolt() -> Html {
    icon("M13 2 4.5 13.5H11L10 22l8.5-11.5H12z")
}

/// ×
pub fn close() -> Html {
    icon(
        "M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12 19 17.6 17.6 19 12 13.4 6.4 19 5 17.6 10.6 12 5 6.4z",
    )
}

/// ⋯
pub fn more() -> Html {
    icon("M5 10.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm7 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm7 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z")
}

/// Trash can.
pub fn trash() -> Html {
    icon("M9 3h6l1 2h4v2H4V5h4zM6 9h12l-1 12H7z")
}

/// The logo: a loop arrow around a dot (observe → diff → act).
pub fn logo() -> Html {
    html! {
        <svg class="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
            <circle cx="16" cy="16" r="15" class="logo-bg" />
            <path d="M16 7a9 9 0 1 1-8.2 5.3" fill="none" class="logo-ring" stroke-width="2.6" stroke-linecap="round" />
            <path d="M5.2 9.6 8 12.9l3.6-2.4" fill="none" class="logo-ring" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round" />
            <circle cx="16" cy="16" r="3.2" class="logo-dot" />
        </svg>
    }
}

/// A lesson check's state (`CheckState::icon`): drawn, so every platform shows it (the ⧗ it
/// replaces has no glyph in a stock Linux's fonts).
pub fn check_state(name: &str) -> Html {
    match name {
        // A hollow circle: not watching yet.
        "not-started" => icon("M12 4a8 8 0 1 0 0 16 8 8 0 0 0 0-16zm0 2.2a5.8 5.8 0 1 1 0 11.6 5.8 5.8 0 0 1 0-11.6z"),
        // An hourglass: watching.
        "waiting" => icon("M6 3h12v2h-1v2.6a4 4 0 0 1-1.7 3.3L13.6 12l1.7 1.1a4 4 0 0 1 1.7 3.3V19h1v2H6v-2h1v-2.6a4 4 0 0 1 1.7-3.3L10.4 12l-1.7-1.1A4 4 0 0 1 7 7.6V5H6zm3 2v2.6a2 2 0 0 0 .85 1.63L12 10.8l2.15-1.57A2 2 0 0 0 15 7.6V5zm3 8.2-2.15 1.57A2 2 0 0 0 9 16.4V19h6v-2.6a2 2 0 0 0-.85-1.63z"),
        // A tick.
        "passed" => icon("M9.5 16.2 5.3 12l-1.4 1.4 5.6 5.6L20.1 8.4 18.7 7z"),
        // A cross.
        _ => icon("M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12 19 17.6 17.6 19 12 13.4 6.4 19 5 17.6 10.6 12 5 6.4z"),
    }
}

/// ▶ → ▶: one component passing work to the next.
pub fn hand_off() -> Html {
    icon("M3 7.2v9.6a.7.7 0 0 0 1.1.6l6.6-4.8a.7.7 0 0 0 0-1.2L4.1 6.6a.7.7 0 0 0-1.1.6zM12 7.2v9.6a.7.7 0 0 0 1.1.6l6.6-4.8a.7.7 0 0 0 0-1.2l-6.6-4.8a.7.7 0 0 0-1.1.6zM20.6 5.5h1.9v13h-1.9z")
}

/// ❚❚✓: pause when a check changes (the toolbar's switch on narrow screens).
pub fn pause_on_check() -> Html {
    icon("M3 5h3v14H3zM8 5h3v14H8zM12.5 13.1l1.5-1.5 2.5 2.5 5-5 1.5 1.5-6.5 6.5z")
}

/// A gauge turned low: slow motion (the toolbar's switch on narrow screens).
pub fn slow_motion() -> Html {
    icon("M12 5a9 9 0 0 0-9 9h2.2a6.8 6.8 0 0 1 13.6 0H21a9 9 0 0 0-9-9zM12.8 13.2 7 10.2l-.6 1 5.6 3.6zM12 12.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z")
}
