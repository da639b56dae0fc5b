//! The rest of the hostile-input corpus in `tests/fixtures/hostile/`: share links (decompression
//! bombs, links cut off or corrupted in transit, links from a newer version, links that carry a
//! YAML bomb), kubectl command lines (far too long, or holding control characters), image names
//! the kubelet's reference parser refuses, and HTML in
//! every place a name or free text can go. Each is refused with the right message — never a
//! panic, never a frozen tab — or, for free text, kept verbatim as text. No wall-clock asserts:
//! the caps in `sim::limits`, `sim::share` and `sim::yaml` bound the work.

use kubeloop::sim::input::decode::decode_manifests;
use kubeloop::sim::input::diagnostic::Severity;
use kubeloop::sim::session::Session;
use kubeloop::sim::share::{self, Link, ShareError, MAX_FRAGMENT};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/hostile/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    if name.ends_with(".zz") {
        miniz_oxide::inflate::decompress_to_vec_zlib(&bytes).expect("valid zlib data")
    } else {
        bytes
    }
}

fn text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("UTF-8 fixture")
}

fn link(name: &str) -> Result<Link, ShareError> {
    share::decode(text(name).trim())
}

#[test]
fn a_decompression_bomb_link_is_refused_as_too_large() {
    let e = link("share-bomb.link").unwrap_err();
    assert!(matches!(e, ShareError::TooLarge(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "This link expands to more than 1024 KiB, more than a scenario can be. It was refused."
    );
}

#[test]
fn truncated_and_corrupted_links_say_they_look_incomplete() {
    for name in [
        "share-truncated.link",
        "share-corrupted.link",
        "share-not-json.link",
        "share-bad-alphabet.link",
    ] {
        let e = link(name).unwrap_err();
        assert!(matches!(e, ShareError::Incomplete(_)), "{name}: {e:?}");
        assert!(
            e.to_string().starts_with("This link looks incomplete"),
            "{name}: {e}"
        );
        assert!(e.to_string().contains("your own scenario is still here"));
    }
}

#[test]
fn a_link_from_a_newer_version_asks_for_a_reload() {
    let e = link("share-future-version.link").unwrap_err();
    assert!(matches!(e, ShareError::UnknownVersion(_)), "{e:?}");
    assert!(e.to_string().contains("format 9"), "{e}");
}

#[test]
fn a_link_over_the_url_limit_is_refused_before_decoding() {
    let huge = format!("https://kubeloop.example/#k1:{}", "A".repeat(MAX_FRAGMENT));
    let e = share::decode(&huge).unwrap_err();
    assert!(matches!(e, ShareError::TooLarge(_)), "{e:?}");
    assert!(e.to_string().contains("more than Kubeloop accepts"), "{e}");
}

#[test]
fn a_link_carrying_a_yaml_bomb_opens_and_the_yaml_layer_refuses_the_bomb() {
    let Ok(Link::Scenario(shared)) = link("share-yaml-bomb.link") else {
        panic!("the link itself is well-formed");
    };
    let diags = Session::load("<link>", &shared.text, shared.seed)
        .err()
        .expect("the scenario inside is refused");
    assert!(
        diags.iter().any(|d| d.severity == Severity::Error
            && d.message.contains("document contains excessive aliasing")),
        "{diags:?}"
    );
}

#[test]
fn a_huge_kubectl_line_is_refused_before_it_is_parsed() {
    let line = text("kubectl-huge-line.txt.zz");
    assert!(line.len() > 64 * 1024);
    let mut s = Session::new(1);
    let before = s.sim.api().resource_version();
    let out = s.kubectl(&line);
    assert!(!out.ok);
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "error: the command line is {} bytes long; at most 65536 bytes are accepted in the playground (a simulated cluster's limit)",
            line.len()
        )
    );
    assert_eq!(s.sim.api().resource_version(), before, "nothing ran");
    // The trace keeps the command clipped, not the whole megabyte.
    let recorded = s
        .sim
        .trace()
        .entries()
        .last()
        .expect("the command is traced");
    let json = recorded.to_json().to_string();
    assert!(
        json.len() < 70 * 1024,
        "{} bytes in one trace entry",
        json.len()
    );
}

#[test]
fn an_image_typed_with_a_byte_no_reference_allows_fails_its_pod_instead_of_freezing_the_tab() {
    // `;` for `:` is a typo a learner makes; the kubelet's reference parser once looked at that
    // byte forever, and the page with it.
    let mut s = Session::new(1);
    let out = s.kubectl("run web --image=nginx;1.27");
    assert!(out.ok, "{}", out.stderr);
    let t = s.sim.now() + 10_000;
    s.advance_to(t, usize::MAX);
    let out = s.kubectl("get pod web -o jsonpath={.status.containerStatuses[0].state.waiting}");
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        r#"{"message":"Failed to apply default image tag \"nginx;1.27\": couldn't parse image name \"nginx;1.27\": invalid reference format","reason":"InvalidImageName"}"#
    );
}

#[test]
fn kubectl_lines_with_control_characters_are_refused_and_change_nothing() {
    let mut s = Session::new(1);
    assert!(s.kubectl("create deployment web --image=nginx").ok);
    let lines: Vec<String> = text("kubectl-control-characters.txt")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON string per line"))
        .collect();
    assert!(lines.len() >= 8);
    for line in &lines {
        let before = s.sim.api().resource_version();
        let out = s.kubectl(line);
        assert!(!out.ok, "{line:?} ran");
        // A line break is what a shell reads as the end of a command: two lines are two commands.
        let expected = if line.contains('\n') {
            "error: several commands in one entry are not supported"
        } else {
            "error: the command line contains a control character (U+"
        };
        assert!(out.stderr.starts_with(expected), "{line:?}: {}", out.stderr);
        assert!(
            !out.stderr.chars().any(|c| c.is_control() && c != '\n'),
            "the error must not echo the control character back: {:?}",
            out.stderr
        );
        assert_eq!(
            s.sim.api().resource_version(),
            before,
            "{line:?} changed the cluster"
        );
    }
    assert!(
        s.sim
            .api()
            .list(kubeloop::sim::api::types::Kind::Deployment)
            .count()
            == 1
    );
}

#[test]
fn html_in_names_is_refused_and_html_in_free_text_is_kept_as_text() {
    let src = text("html-everywhere.yaml");
    let d = decode_manifests("html-everywhere.yaml", &src);
    assert!(!d.has_errors(), "{:?}", d.diagnostics);
    let s = Session::load("html-everywhere.yaml", &src, None).expect("free text is allowed");
    // Kept verbatim: escaping is the view's job, and the views only ever insert text nodes
    // (tests/it/no_html_injection.rs checks that).
    assert_eq!(
        s.scenario.metadata.name,
        "<script>alert('scenario')</script>"
    );
    assert_eq!(s.checks()[0].name, "<img src=x onerror=alert('check')>");
    let web = s
        .sim
        .api()
        .list(kubeloop::sim::api::types::Kind::Deployment)
        .next()
        .expect("web")
        .clone();
    assert_eq!(
        web.meta().annotations.get("note").map(|v| v.as_str()),
        Some("<script>alert('annotation')</script>")
    );
    // Where Kubernetes allows no HTML, the name is refused with the value quoted, not run.
    let mut s = s;
    let out = s.kubectl("create deployment '<svg/onload=alert(1)>' --image=nginx");
    assert!(!out.ok);
    assert!(
        out.stderr.contains("\"<svg/onload=alert(1)>\""),
        "{}",
        out.stderr
    );
    let out = s.run_try_this(0).unwrap_err();
    assert!(out.contains("\"<svg onload=alert(1)>\" not found"), "{out}");
}
