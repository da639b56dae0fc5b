//! The scenario text that replays one run of the check: the learner's file with its faults as timeline steps of a Scenario document.
//!
//! The check runs exactly this text (it is built before the run, not after), so a failure it
//! reports is the failure the link shows. A file that has a Scenario document keeps it, seed,
//! nodes, checks and all, with the run's steps added after its own; one without gets a
//! Scenario document naming the seed the check ran with.

use serde_json::{json, Map, Value as Json};

use crate::sim::input::yaml;
use crate::sim::scenario::SCENARIO_API_VERSION;

use super::schedule::Step;

/// `text` with `steps` scheduled, run with `seed`.
pub(super) fn scenario_text(
    text: &str,
    scenario: Option<&(Json, yaml::YamlDoc)>,
    name: &str,
    seed: u64,
    steps: &[Step],
) -> String {
    let step_docs: Vec<Json> = steps.iter().map(Step::to_json).collect();
    match scenario {
        Some((doc, ydoc)) => {
            let mut doc = doc.clone();
            let spec = doc
                .as_object_mut()
                .map(|m| m.entry("spec").or_insert_with(|| json!({})));
            if let Some(Json::Object(spec)) = spec {
                spec.insert("seed".into(), json!(seed));
                if !step_docs.is_empty() {
                    let list = spec.entry("steps").or_insert_with(|| json!([]));
                    if let Json::Array(list) = list {
                        list.extend(step_docs);
                    }
                }
            }
            replace_document(text, ydoc.start.line as usize, &yaml::to_yaml(&doc))
        }
        None => {
            let mut spec = Map::new();
            spec.insert("seed".into(), json!(seed));
            if !step_docs.is_empty() {
                spec.insert("steps".into(), Json::Array(step_docs));
            }
            let doc = json!({
                "apiVersion": SCENARIO_API_VERSION,
                "kind": "Scenario",
                "metadata": {"name": name},
                "spec": spec,
            });
            let mut out = text.trim_end().to_string();
            out.push_str("\n---\n");
            out.push_str(&yaml::to_yaml(&doc));
            out
        }
    }
}

/// Whether a line separates YAML documents (`---`, alone or before content or a comment).
fn is_separator(line: &str) -> bool {
    line == "---" || line.trim_end() == "---" || line.starts_with("--- ")
}

/// `text` with the document whose content starts on 1-based line `line` replaced by
/// `replacement` (comments inside that document go with it).
fn replace_document(text: &str, line: usize, replacement: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let at = line.saturating_sub(1).min(lines.len());
    // `--- kind: Scenario`: the separator line carries the document's first key.
    let inline = lines.get(at).is_some_and(|l| l.starts_with("--- "));
    let start = if inline {
        at
    } else {
        (0..at)
            .rev()
            .find(|&i| is_separator(lines[i]))
            .map_or(0, |i| i + 1)
    };
    let end = (at + 1..lines.len())
        .find(|&i| is_separator(lines[i]))
        .unwrap_or(lines.len());
    let mut out = String::new();
    for l in &lines[..start] {
        out.push_str(l);
        out.push('\n');
    }
    if inline {
        out.push_str("---\n");
    }
    out.push_str(replacement);
    for l in &lines[end..] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_replaced_between_its_separators() {
        let text = "a: 1\n---\n# the scenario\nkind: Scenario\nspec: {}\n---\nb: 2\n";
        assert_eq!(
            replace_document(text, 4, "kind: Scenario\nspec: {seed: 1}\n"),
            "a: 1\n---\nkind: Scenario\nspec: {seed: 1}\n---\nb: 2\n"
        );
        let inline = "b: 2\n--- kind: Scenario\n---\nc: 3\n";
        assert_eq!(
            replace_document(inline, 2, "kind: X\n"),
            "b: 2\n---\nkind: X\n---\nc: 3\n"
        );
        let first = "kind: Scenario\n---\nb: 2\n";
        assert_eq!(
            replace_document(first, 1, "kind: X\n"),
            "kind: X\n---\nb: 2\n"
        );
        let last = "b: 2\n---\nkind: Scenario\n";
        assert_eq!(
            replace_document(last, 3, "kind: X\n"),
            "b: 2\n---\nkind: X\n"
        );
    }
}
