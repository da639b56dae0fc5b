//! What the panic boundary (`src/ui/crash.rs`) needs to decide, kept pure so it is tested natively.
//!
//! When the app panics, the wasm instance is about to trap and every RefCell may be borrowed, so
//! the boundary reads the editor text straight from the DOM and asks these functions three
//! things: the link to hand over ([`crash_link`]), whether to write the text into the autosave
//! ([`should_autosave`]), and, after Restart, whether the one-shot restore record the crash
//! screen left in sessionStorage is still good ([`restored_text`]). None of them can panic on any
//! input: a panic inside a panic hook aborts before the crash screen gets its link.

use serde::Deserialize;

use crate::sim::examples;
use crate::sim::share::{self, Link, Shared, LONG_LINK_WARNING, MAX_FRAGMENT, MAX_INFLATED};
use crate::viewmodel::embed_flags::playground_url;
use crate::viewmodel::playground::DEFAULT_MANIFEST;

/// The longest panic message the crash screen shows, in characters: a message may quote a
/// whole user document, and the dialog must stay readable.
pub const MAX_MESSAGE_CHARS: usize = 4_000;

/// How old (ms) a restore record may be and still fill the editor. Restart writes it right
/// before reloading, so a few seconds would do; a minute covers a slow reload. An older one is a
/// leftover (the reload never happened) and must not replace the reader's autosave later.
pub const RESTORE_MAX_AGE_MS: f64 = 60_000.0;

/// A link to the scenario that was in the editor when the app crashed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrashLink {
    /// The full playground's address with the scenario in its fragment (never an embed URL:
    /// the link is for a bug report or a new tab).
    pub url: String,
    /// The fragment alone (without `#`): Restart can fall back to it when storage is refused.
    pub fragment: String,
    /// Longer than chat tools and servers reliably keep ([`LONG_LINK_WARNING`]).
    pub long: bool,
}

/// `message` cut to [`MAX_MESSAGE_CHARS`] characters, saying how much was left out.
pub fn clip_message(message: &str) -> String {
    let total = message.chars().count();
    if total <= MAX_MESSAGE_CHARS {
        return message.to_string();
    }
    let kept: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
    format!(
        "{kept}… ({} more characters not shown)",
        total - MAX_MESSAGE_CHARS
    )
}

/// The built-in example whose text is exactly `text`, if any.
fn example_named(text: &str) -> Option<&'static str> {
    examples::ALL
        .iter()
        .find(|(_, t)| *t == text)
        .map(|(name, _)| *name)
}

/// The share link for `text` on the page at `href`, or a sentence saying why there is none.
///
/// Uses the same format as the Share button (`#example/<name>` for an untouched built-in
/// example, else `#k1:…`) and checks the round trip through the decoder, so a link it returns
/// opens exactly this text. A scenario too large for a link is an error, never a broken link.
pub fn crash_link(href: &str, text: &str) -> Result<CrashLink, String> {
    if text.trim().is_empty() {
        return Err("The editor is empty, so there is no scenario to link to.".into());
    }
    let too_large = |size: usize| {
        format!(
            "Your scenario is too large for a link ({} KiB; a link holds at most {} KiB). Copy its text below instead.",
            size.div_ceil(1024),
            MAX_INFLATED / 1024
        )
    };
    let fragment = match example_named(text) {
        Some(name) => format!("example/{name}"),
        None => {
            let shared = Shared {
                text: text.to_string(),
                ..Shared::default()
            };
            let json_len = serde_json::to_vec(&shared).map_or(usize::MAX, |j| j.len());
            if json_len > MAX_INFLATED {
                return Err(too_large(json_len));
            }
            share::encode(&shared)
        }
    };
    if fragment.len() > MAX_FRAGMENT {
        return Err(too_large(fragment.len()));
    }
    let round_trip = match share::decode(&fragment) {
        Ok(Link::Scenario(s)) => s.text == text,
        Ok(Link::Example(name)) => examples::by_name(&name) == Some(text),
        Err(_) => false,
    };
    if !round_trip {
        return Err(
            "A link could not be made for this scenario. Copy its text below instead.".into(),
        );
    }
    let url = playground_url(href, &fragment);
    Ok(CrashLink {
        long: url.len() > LONG_LINK_WARNING,
        url,
        fragment,
    })
}

/// Whether the boundary should write `text` into the editor's autosave.
///
/// The editor autosaves every keystroke, so a reader's own typing is normally there already.
/// What is not there is text the page put in the editor itself: an opened link, a lesson, the
/// default example. Those must not overwrite the reader's own autosaved work — they can be
/// opened again from the address bar (`fragment`, without `#`) or the lessons menu. Anything
/// else (a keystroke whose save the crash cut short) is saved.
pub fn should_autosave(text: &str, fragment: &str, autosaved: Option<&str>) -> bool {
    if autosaved == Some(text) || text == DEFAULT_MANIFEST || example_named(text).is_some() {
        return false;
    }
    let fragment = fragment.trim_start_matches('#');
    if fragment.trim().is_empty() {
        return true;
    }
    match share::decode(fragment) {
        Ok(Link::Scenario(s)) => s.text != text,
        Ok(Link::Example(name)) => examples::by_name(&name) != Some(text),
        Err(_) => true,
    }
}

/// The restore record the crash screen's Restart button writes (`www/crash.js`).
#[derive(Deserialize)]
struct RestoreRecord {
    text: String,
    at: f64,
}

/// The editor text a restore record carries, if the record is well-formed and was written
/// within [`RESTORE_MAX_AGE_MS`] before `now_ms` (a record from the future is refused too: the
/// clock moved, and a stale record must never win over the autosave).
pub fn restored_text(record: &str, now_ms: f64) -> Option<String> {
    let r: RestoreRecord = serde_json::from_str(record).ok()?;
    let age = now_ms - r.at;
    (r.at.is_finite() && (0.0..=RESTORE_MAX_AGE_MS).contains(&age)).then_some(r.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINE: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: mine}\n";

    fn fragment_of(url: &str) -> &str {
        url.split_once('#').map_or("", |(_, f)| f)
    }

    #[test]
    fn a_crash_link_opens_exactly_the_editor_text() {
        let link = crash_link("http://h/app/?seed=3#k1:old", MINE).unwrap();
        assert!(link.url.starts_with("http://h/app/?seed=3#k1:"));
        assert_eq!(fragment_of(&link.url), link.fragment);
        assert!(!link.long);
        match share::decode(&link.fragment).unwrap() {
            Link::Scenario(s) => assert_eq!(s.text, MINE),
            other => panic!("expected a scenario, got {other:?}"),
        }
    }

    #[test]
    fn a_crash_link_from_an_embed_points_at_the_full_playground() {
        let link = crash_link("http://h/?embed=1&readonly=1&seed=2#example/x", MINE).unwrap();
        assert!(link.url.starts_with("http://h/?seed=2#k1:"), "{}", link.url);
    }

    #[test]
    fn an_untouched_built_in_example_links_by_name() {
        let (name, text) = examples::ALL[0];
        let link = crash_link("http://h/", text).unwrap();
        assert_eq!(link.url, format!("http://h/#example/{name}"));
    }

    #[test]
    fn an_empty_editor_has_no_link_and_says_so() {
        let e = crash_link("http://h/", "  \n").unwrap_err();
        assert!(e.contains("empty"), "{e}");
    }

    #[test]
    fn a_scenario_too_large_for_a_link_says_so_instead_of_making_a_broken_link() {
        let huge = "# x\n".repeat(MAX_INFLATED / 4 + 10);
        let e = crash_link("http://h/", &huge).unwrap_err();
        assert!(e.contains("too large for a link"), "{e}");
        assert!(e.contains("1024 KiB"), "{e}");
    }

    #[test]
    fn a_long_link_is_flagged() {
        // Incompressible text: every line different.
        let text: String = (0..2_000u64)
            .map(|i| format!("# {:x}\n", i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
            .collect();
        let link = crash_link("http://h/", &text).unwrap();
        assert!(link.long);
    }

    #[test]
    fn typed_text_missing_from_the_autosave_is_saved() {
        assert!(should_autosave(MINE, "", None));
        assert!(should_autosave(MINE, "", Some("older text")));
        assert!(should_autosave(MINE, "not a link", Some("older text")));
    }

    #[test]
    fn text_already_in_the_autosave_is_not_written_again() {
        assert!(!should_autosave(MINE, "", Some(MINE)));
    }

    #[test]
    fn an_opened_link_never_overwrites_the_readers_own_autosave() {
        let frag = share::encode(&Shared {
            text: MINE.into(),
            ..Shared::default()
        });
        assert!(!should_autosave(MINE, &frag, Some("my own work")));
        assert!(!should_autosave(
            MINE,
            &format!("#{frag}"),
            Some("my own work")
        ));
        // The reader edited the linked text: that edit is theirs.
        assert!(should_autosave("edited", &frag, Some("my own work")));
    }

    #[test]
    fn lessons_and_the_default_example_never_overwrite_the_autosave() {
        let (name, text) = examples::ALL[1];
        assert!(!should_autosave(
            text,
            &format!("example/{name}"),
            Some("mine")
        ));
        assert!(!should_autosave(text, "", Some("mine")));
        assert!(!should_autosave(DEFAULT_MANIFEST, "", Some("mine")));
    }

    #[test]
    fn a_fresh_restore_record_gives_its_text() {
        let rec = r#"{"text":"a: 1\n","at":1000}"#;
        assert_eq!(restored_text(rec, 1000.0).as_deref(), Some("a: 1\n"));
        assert_eq!(
            restored_text(rec, 1000.0 + RESTORE_MAX_AGE_MS).as_deref(),
            Some("a: 1\n")
        );
    }

    #[test]
    fn a_stale_future_or_malformed_restore_record_is_ignored() {
        let rec = r#"{"text":"a","at":1000}"#;
        assert_eq!(restored_text(rec, 1001.0 + RESTORE_MAX_AGE_MS), None);
        assert_eq!(restored_text(rec, 999.0), None);
        assert_eq!(restored_text("{\"text\":\"a\"}", 1000.0), None);
        assert_eq!(restored_text("not json", 1000.0), None);
        assert_eq!(restored_text(r#"{"text":5,"at":1}"#, 1.0), None);
    }

    #[test]
    fn long_panic_messages_are_clipped_with_a_count() {
        assert_eq!(clip_message("short"), "short");
        let long = "é".repeat(MAX_MESSAGE_CHARS + 7);
        let clipped = clip_message(&long);
        assert!(clipped.starts_with(&"é".repeat(MAX_MESSAGE_CHARS)));
        assert!(
            clipped.ends_with("(7 more characters not shown)"),
            "{clipped}"
        );
    }
}
