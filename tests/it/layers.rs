//! The simulation's wings depend one way: every `use` in `src/sim` points to a lower level, and
//! so there is no import cycle. Read from the sources (test code left out), as a newcomer would.
//!
//! A unit is a wing folder of `src/sim` (`api/`, `input/`, `machinery/`, `controllers/`,
//! `world/`, `kubectl/`) or one module at its root (`session.rs`, `faults.rs`, …). [`LEVELS`] lists them
//! bottom first; a unit may import only units of a lower level. A new module fails this test
//! until it is given its place here (and in ARCHITECTURE.md's code map).
//!
//! The page (`src/ui`) has no levels, but its modules import each other without a ring either:
//! what two of them share is wired from the app's root (`ui/mod.rs`), not by a back import.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The levels, bottom first. Units on one level do not import each other.
const LEVELS: &[&[&str]] = &[
    &["rng", "text"],
    &["api"],
    &["cel", "script"],
    &["time"],
    &["faults", "kro"],
    &["addons", "run"],
    &["input"],
    &["machinery", "scenario"],
    &["controllers"],
    &["world"],
    &["kubectl", "handoff"],
    &["progress"],
    &["session"],
    &["controller_check", "examples", "share"],
];

/// What `src/sim` may use from the rest of the crate: only the one stable sort, the small
/// ordered maps and the kept scratch vectors (leaves of their own: they import nothing but
/// `sort`).
const CRATE_LEAVES: &[&str] = &["sim", "scratch", "sort", "vec_map"];

fn level_of(unit: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.contains(&unit))
}

/// Every `.rs` file under `dir`, in name order.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .expect("src/sim is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/`: `src/sim/api/types.rs` is `["sim", "api", "types"]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// The code without comments and without `#[cfg(test)]` items (a `mod tests { … }` block or a
/// `mod tests;` declaration, whose file is then skipped).
fn production_code(text: &str, test_files: &mut BTreeSet<String>) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            // Skip the attributed item: to the end of its line if it ends with `;`, else to the
            // brace that closes the block it opens.
            let mut depth = 0i32;
            let mut opened = false;
            for next in lines.by_ref() {
                let n = next.trim();
                if n.starts_with("#[") {
                    continue;
                }
                if let Some(name) = n.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                    test_files.insert(name.trim().to_string());
                }
                depth += next.matches('{').count() as i32 - next.matches('}').count() as i32;
                opened |= next.contains('{');
                if (opened && depth <= 0) || (!opened && n.ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        let code = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The absolute module paths a file's code names: `crate::…`, `super::…` and `self::…` paths,
/// with `{a, b::c}` groups expanded one level.
fn referenced_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start_ok = i == 0 || !(word(bytes[i - 1]) || bytes[i - 1] == ':');
        let rest: String = bytes[i..bytes.len().min(i + 8)].iter().collect();
        let root = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|r| rest.starts_with(r));
        let (Some(root), true) = (root, start_ok) else {
            i += 1;
            continue;
        };
        // Read `seg::seg::…` and at most one `{…}` group.
        let mut j = i;
        let mut segs: Vec<String> = Vec::new();
        let mut group: Vec<String> = Vec::new();
        loop {
            let s = j;
            while j < bytes.len() && word(bytes[j]) {
                j += 1;
            }
            segs.push(bytes[s..j].iter().collect());
            if j + 1 < bytes.len() && bytes[j] == ':' && bytes[j + 1] == ':' {
                j += 2;
                if j < bytes.len() && bytes[j] == '{' {
                    let end = bytes[j..]
                        .iter()
                        .position(|&c| c == '}')
                        .map_or(bytes.len(), |e| j + e);
                    let inner: String = bytes[j + 1..end].iter().collect();
                    group = inner
                        .split(',')
                        .map(|g| g.trim().split("::").next().unwrap_or("").to_string())
                        .filter(|g| !g.is_empty() && g != "self" && g != "*")
                        .collect();
                    j = end;
                    break;
                }
                continue;
            }
            break;
        }
        // The module a path's first segment starts from: `self` is the file's own module (its
        // inline modules and, in a `mod.rs`, its children), `super` its parent.
        let mut base: Vec<String> = match root {
            "crate::" => Vec::new(),
            "self::" => module.to_vec(),
            _ => module[..module.len().saturating_sub(1)].to_vec(),
        };
        let mut k = 1;
        while k < segs.len() && segs[k] == "super" {
            base.pop();
            k += 1;
        }
        let tail: Vec<String> = segs[k..].to_vec();
        let mut full = base.clone();
        full.extend(tail);
        if group.is_empty() {
            out.push(full);
        } else {
            for g in group {
                let mut f = full.clone();
                f.push(g);
                out.push(f);
            }
        }
        i = j.max(i + 1);
    }
    out
}

/// The unit a module path belongs to, when it is inside `sim`.
fn unit(path: &[String]) -> Option<&str> {
    unit_in("sim", path)
}

/// The unit a module path belongs to, when it is inside the crate's module `top`.
fn unit_in<'a>(top: &str, path: &'a [String]) -> Option<&'a str> {
    match path {
        [t, unit, ..] if t == top => Some(unit.as_str()),
        _ => None,
    }
}

struct Import {
    file: String,
    from: String,
    to: String,
    path: String,
}

fn imports() -> (Vec<Import>, Vec<String>) {
    imports_in("sim")
}

/// The imports between the units of the crate's module `top` (a folder of `src`), and the paths
/// that name something of the crate outside [`CRATE_LEAVES`].
fn imports_in(top: &str) -> (Vec<Import>, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join(top), &mut files);
    let mut test_files = BTreeSet::new();
    let mut out = Vec::new();
    let mut outside = Vec::new();
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|f| {
            let t = fs::read_to_string(&f).expect("readable");
            (f, t)
        })
        .collect();
    let mut code = Vec::new();
    for (f, t) in &texts {
        code.push((f, production_code(t, &mut test_files)));
    }
    for (f, c) in code {
        let module = module_of(&src, f);
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        if test_files.contains(&stem) || module.iter().any(|m| m == "tests") {
            continue;
        }
        let rel = f
            .strip_prefix(src.parent().unwrap())
            .unwrap()
            .display()
            .to_string();
        let Some(from) = unit_in(top, &module).map(str::to_string) else {
            continue;
        };
        for p in referenced_paths(&module, &c) {
            match p.first().map(String::as_str) {
                Some(top) if !CRATE_LEAVES.contains(&top) => {
                    outside.push(format!("{rel} names crate::{}", p.join("::")))
                }
                _ => {}
            }
            if let Some(to) = unit_in(top, &p) {
                if to != from {
                    out.push(Import {
                        file: rel.clone(),
                        from: from.clone(),
                        to: to.to_string(),
                        path: p.join("::"),
                    });
                }
            }
        }
    }
    (out, outside)
}

#[test]
fn every_unit_of_the_simulation_has_a_level() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut missing = Vec::new();
    for e in fs::read_dir(&src).expect("src/sim") {
        let p = e.expect("entry").path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if name != "mod" && level_of(&name).is_none() {
            missing.push(name);
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "src/sim/{missing:?} has no level in tests/it/layers.rs's LEVELS: say which wing it belongs \
         to (a lower level may not import it)"
    );
}

#[test]
fn the_simulation_imports_nothing_from_the_page_or_the_cli() {
    let (_, outside) = imports();
    assert!(
        outside.is_empty(),
        "src/sim must stand alone:\n{}",
        outside.join("\n")
    );
}

#[test]
fn no_module_of_the_simulation_imports_one_from_a_wing_above_or_beside_it() {
    let (imports, _) = imports();
    assert!(
        imports.len() > 100,
        "the import scan found too little: {}",
        imports.len()
    );
    let mut wrong: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for i in &imports {
        let (Some(from), Some(to)) = (level_of(&i.from), level_of(&i.to)) else {
            continue; // every_unit_of_the_simulation_has_a_level reports those
        };
        if to >= from {
            wrong
                .entry(format!(
                    "{} (level {from}) -> {} (level {to})",
                    i.from, i.to
                ))
                .or_default()
                .insert(format!("{}: {}", i.file, i.path));
        }
    }
    let report: Vec<String> = wrong
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}:\n  {}",
                v.iter().cloned().collect::<Vec<_>>().join("\n  ")
            )
        })
        .collect();
    assert!(
        report.is_empty(),
        "imports that point up or sideways (move the shared thing to a lower wing):\n{}",
        report.join("\n")
    );
}

#[test]
fn the_import_scan_sees_an_upward_import() {
    let module: Vec<String> = ["sim", "api", "types"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let code = "use crate::sim::world::Sim;\nuse super::{limits, validation::FieldError};\n";
    let paths = referenced_paths(&module, code);
    let units: Vec<&str> = paths.iter().filter_map(|p| unit(p)).collect();
    assert_eq!(units, ["world", "api", "api"]);
    let mut tests = BTreeSet::new();
    let kept = production_code(
        "use crate::sim::api::types;\n// use crate::sim::world;\n#[cfg(test)]\nmod tests {\n    use crate::sim::world::Sim;\n}\n",
        &mut tests,
    );
    assert!(!kept.contains("world"), "{kept}");
    assert!(kept.contains("api::types"));
}

/// One import ring among `edges` (each unit's imports), as `a -> b -> … -> a`, if there is one.
fn a_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first, colouring units on the current path; a back edge closes a ring.
    fn visit(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == at) {
            let mut ring = path[i..].to_vec();
            ring.push(at.to_string());
            return Some(ring);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(ring) = visit(next, edges, path, done) {
                return Some(ring);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|k| visit(k, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_page_modules_import_each_other_without_a_ring() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    // The modules are the files beside the root; `super::Item` names the root, which wires them.
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.file_stem())
        .map(|s| s.to_string_lossy().to_string())
        .filter(|s| s != "mod")
        .collect();
    let (imports, _) = imports_in("ui");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for i in &imports {
        if modules.contains(&i.from) && modules.contains(&i.to) {
            edges
                .entry(i.from.clone())
                .or_default()
                .insert(i.to.clone());
        }
    }
    assert!(
        edges.len() > 10,
        "the import scan of src/ui found too little: {edges:?}"
    );
    assert_eq!(
        a_cycle(&edges),
        None,
        "src/ui modules import each other in a ring: wire what they share from ui/mod.rs"
    );
}

#[test]
fn the_ring_finder_finds_a_ring_and_only_a_ring() {
    let graph = |pairs: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    let ring = a_cycle(&graph(&[
        ("share", "embed"),
        ("embed", "js_api"),
        ("js_api", "share"),
    ]));
    assert_eq!(
        ring.map(|r| r.join(" -> ")).as_deref(),
        Some("embed -> js_api -> share -> embed")
    );
    assert_eq!(
        a_cycle(&graph(&[("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")])),
        None
    );
}
