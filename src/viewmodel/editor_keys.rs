//! What Tab does in the editor: "tab trapping" as CodeMirror and VS Code do it.
//!
//! A text field that always turns Tab into indentation traps keyboard users: tabbing through the
//! page into the editor would write spaces into the lesson and never leave. So Tab moves the
//! focus on until the learner starts editing (types, or clicks into the text); from then on it
//! indents, Escape gives Tab back to the page, and leaving the editor starts over. The hint the
//! editor shows while it has the focus says which of the two Tab does now.

/// Something that changes what Tab does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditorKey {
    /// Text was typed, pasted or deleted.
    Typed,
    /// The pointer went down in the text (or a diagnostic sent the caret to its line).
    Clicked,
    /// Escape was pressed in the editor.
    Escape,
    /// The focus left the editor.
    Blurred,
}

/// Whether the learner is editing, which decides what Tab does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TabTrap {
    editing: bool,
}

impl TabTrap {
    /// The state after `key`.
    #[must_use]
    pub fn after(self, key: EditorKey) -> TabTrap {
        TabTrap {
            editing: matches!(key, EditorKey::Typed | EditorKey::Clicked),
        }
    }

    /// Tab inserts indentation (else it moves the focus, as everywhere on the page).
    pub fn tab_indents(self) -> bool {
        self.editing
    }

    /// The visible hint while the editor has the focus (also its accessible description).
    pub fn hint(self) -> &'static str {
        if self.editing {
            "Tab indents · Esc then Tab to leave"
        } else {
            "Tab moves on · once you type or click here, Tab indents"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_moves_the_focus_until_the_learner_types_or_clicks_in_the_text() {
        let arrived = TabTrap::default();
        assert!(!arrived.tab_indents());
        assert!(arrived.hint().starts_with("Tab moves on"));
        for key in [EditorKey::Typed, EditorKey::Clicked] {
            let editing = arrived.after(key);
            assert!(editing.tab_indents(), "{key:?}");
            assert_eq!(editing.hint(), "Tab indents · Esc then Tab to leave");
        }
    }

    #[test]
    fn escape_or_leaving_the_editor_gives_tab_back_to_the_page() {
        let editing = TabTrap::default().after(EditorKey::Typed);
        for key in [EditorKey::Escape, EditorKey::Blurred] {
            assert!(!editing.after(key).tab_indents(), "{key:?}");
        }
        // Typing again after Escape traps Tab again, as in CodeMirror.
        let again = editing.after(EditorKey::Escape).after(EditorKey::Typed);
        assert!(again.tab_indents());
    }
}
