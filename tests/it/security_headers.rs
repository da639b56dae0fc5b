//! The static site's security headers: one source (`scripts/security-headers.json`), quoted
//! exactly by `docs/hosting.md`, strict enough to matter, and an app loader that works under it
//! (no inline script: trunk's loader is the file `www/boot.js`). The built page itself is checked
//! by the e2e suite (`tests/e2e/security.spec.js`), which runs against a server sending these
//! headers.

use serde_json::Value as Json;

fn read(path: &str) -> String {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn headers() -> Json {
    serde_json::from_str(&read("scripts/security-headers.json")).expect("valid JSON")
}

fn csp() -> String {
    headers()["Content-Security-Policy"]
        .as_str()
        .expect("a Content-Security-Policy")
        .to_string()
}

fn directive(name: &str) -> Option<String> {
    csp()
        .split(';')
        .map(str::trim)
        .find(|d| d.split_whitespace().next() == Some(name))
        .map(str::to_string)
}

#[test]
fn the_policy_allows_no_inline_script_no_eval_and_no_other_origin() {
    let script = directive("script-src").expect("script-src");
    assert_eq!(script, "script-src 'self' 'wasm-unsafe-eval'");
    for d in ["default-src", "style-src", "connect-src", "img-src"] {
        let v = directive(d).unwrap_or_else(|| panic!("{d} missing"));
        assert!(
            !v.contains('*') && !v.contains("http") && !v.contains("'unsafe-eval'"),
            "{v}"
        );
        assert!(!v.contains("'unsafe-inline'"), "{v}");
    }
    assert_eq!(
        directive("object-src").as_deref(),
        Some("object-src 'none'")
    );
    assert_eq!(directive("base-uri").as_deref(), Some("base-uri 'none'"));
    assert!(directive("frame-ancestors").is_some());
    let h = headers();
    assert_eq!(h["X-Content-Type-Options"], "nosniff");
    assert!(h["Referrer-Policy"].is_string());
}

#[test]
fn the_hosting_guide_quotes_the_headers_exactly() {
    let docs = read("docs/hosting.md");
    let h = headers();
    for (name, value) in h.as_object().expect("an object") {
        if name.starts_with("//") {
            continue;
        }
        let line = format!("{name}: {}", value.as_str().expect("a string"));
        assert!(
            docs.contains(&line),
            "docs/hosting.md does not quote `{line}`"
        );
    }
    assert!(docs.contains("only works as an HTTP header"));
}

#[test]
fn the_app_loader_is_a_file_not_an_inline_script() {
    let trunk = read("Trunk.toml");
    let pattern = trunk
        .lines()
        .find(|l| l.starts_with("pattern_script"))
        .expect("Trunk.toml sets pattern_script");
    assert!(pattern.contains("src=\"{base}www/boot.js\""), "{pattern}");
    assert!(pattern.contains("{js}") && pattern.contains("{wasm}"));
    let boot = read("www/boot.js");
    assert!(boot.contains("data-kubeloop-js") && boot.contains("TrunkApplicationStarted"));
    let index = read("index.html");
    assert!(
        !index.contains("<script>") && !index.contains("<script type=\"module\">"),
        "index.html must not carry inline scripts"
    );
}
