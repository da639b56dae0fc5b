//! No text a user wrote is ever inserted into the page as HTML. Everything the playground shows —
//! object names, annotations, kubectl output, check names, shared scenarios — may come from a
//! stranger's link, so the views build DOM nodes (Yew's `html!` escapes text) and never parse a
//! string as markup. This test greps the shipped code (`src/` and the JavaScript in `www/`) for
//! the APIs that parse HTML or run strings as code, and fails on any use that is not on the
//! allow-list: a comment `html-ok: <why this is safe>` on the same line or the line above.

use std::path::{Path, PathBuf};

/// APIs that turn a string into markup or code, in Rust (web-sys, Yew, js-sys) and in JavaScript.
const FORBIDDEN: &[&str] = &[
    "inner_html",
    "outer_html",
    "insert_adjacent_html",
    "from_html_unchecked",
    "Html::from_html",
    "VNode::VRef",
    "write_with_str",
    "js_sys::eval",
    "Function::new_with_args",
    "Function::new_no_args",
    "innerHTML",
    "outerHTML",
    "insertAdjacentHTML",
    "document.write",
    "createContextualFragment",
    "srcdoc",
];

/// Forbidden in the page's JavaScript only: Rust reaches JS's `eval` only through `js_sys::eval`
/// or `Function::new_*`, listed above, and the simulation's own CEL interpreter has an `eval`.
const FORBIDDEN_IN_JS: &[&str] = &["eval(", "new Function"];

const ALLOW: &str = "html-ok:";

fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, exts, out);
        } else if p
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| exts.contains(&x))
        {
            out.push(p);
        }
    }
}

/// `path:line: pattern` for every forbidden use without an allow-list comment.
fn violations(root: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    files(&root.join("src"), &["rs"], &mut paths);
    files(&root.join("www"), &["js", "mjs", "html"], &mut paths);
    if root.join("index.html").exists() {
        paths.push(root.join("index.html"));
    }
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let js = p.extension().is_some_and(|e| e != "rs");
        let js_only: &[&str] = if js { FORBIDDEN_IN_JS } else { &[] };
        for (i, line) in lines.iter().enumerate() {
            for pat in FORBIDDEN.iter().chain(js_only) {
                if !line.contains(pat) {
                    continue;
                }
                let allowed = line.contains(ALLOW)
                    || (i > 0
                        && lines[i - 1].trim_start().starts_with("//")
                        && lines[i - 1].contains(ALLOW));
                if !allowed {
                    out.push(format!(
                        "{}:{}: {pat}",
                        p.strip_prefix(root).unwrap_or(&p).display(),
                        i + 1
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn no_user_text_is_ever_inserted_as_html() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = violations(root);
    assert!(
        found.is_empty(),
        "HTML or code built from strings (add `// {ALLOW} <why>` only if no user text can reach it):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_itself_catches_a_forbidden_call_and_honours_the_allow_list() {
    let dir = std::env::temp_dir().join(format!("kubeloop-html-check-{}", std::process::id()));
    let src = dir.join("src/ui");
    std::fs::create_dir_all(&src).expect("temp dir");
    std::fs::write(
        src.join("bad.rs"),
        "fn f(e: &Element, s: &str) {\n    e.set_inner_html(s);\n    // html-ok: a constant SVG icon, no user text\n    e.set_inner_html(ICON);\n}\n",
    )
    .expect("write");
    let found = violations(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(found, vec!["src/ui/bad.rs:2: inner_html".to_string()]);
}
