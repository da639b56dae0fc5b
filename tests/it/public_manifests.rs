//! Manifests in the shape of public projects' (`tests/fixtures/manifests/public/`, sources in its
//! README): each loads whole, and each broken one is refused at its line in the API server's words.

use kubeloop::sim::input::diagnostic::Severity;
use kubeloop::sim::session::Session;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/manifests/public/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn names(broken: bool) -> Vec<String> {
    let dir = format!(
        "{}/tests/fixtures/manifests/public",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".yaml") && n.ends_with(".broken.yaml") == broken)
        .collect();
    names.sort();
    names
}

#[test]
fn every_manifest_shaped_like_a_public_projects_loads_whole() {
    let all = names(false);
    assert!(all.len() >= 6, "{all:?}");
    for name in all {
        let mut s = Session::new(1);
        let text = fixture(&name);
        let report = s.apply_text(&name, &text);
        let errors: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| format!("{}:{}:{} {}", d.file, d.line, d.col, d.message))
            .collect();
        assert!(report.ok && errors.is_empty(), "{name}: {errors:#?}");
        let documents = text.matches("\nkind: ").count() + usize::from(text.starts_with("kind: "));
        assert_eq!(report.lines.len(), documents, "{name}: {:#?}", report.lines);
    }
}

#[test]
fn the_readme_names_the_source_of_every_fixture() {
    let readme = fixture("README.md");
    for name in names(false).into_iter().chain(names(true)) {
        assert!(
            readme.contains(&format!("`{name}`")),
            "README.md lacks {name}"
        );
    }
}

#[test]
fn a_broken_public_manifest_is_refused_at_its_line_with_the_api_servers_words() {
    for (name, line, message) in [
        (
            "env-port-number.broken.yaml",
            22,
            "json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string",
        ),
        (
            "servicemonitor-interval.broken.yaml",
            120,
            r#"spec.endpoints[0].interval: Invalid value: "30 seconds": spec.endpoints[0].interval in body should match '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'"#,
        ),
    ] {
        let mut s = Session::new(1);
        let report = s.apply_text(name, &fixture(name));
        assert!(!report.ok, "{name}");
        let error = report
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .unwrap_or_else(|| panic!("{name}: no error"));
        assert!(error.message.contains(message), "{name}: {}", error.message);
        assert_eq!(error.line, line, "{name}: {}", error.message);
    }
}
