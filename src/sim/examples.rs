//! Built-in scenarios: the manifest the playground opens with, and (later) the lessons.

/// What the editor holds when the playground first opens: a three-replica Deployment.
pub const DEFAULT_MANIFEST: &str = include_str!("../lessons/playground.yaml");

/// Every built-in example by name (`#example/<name>` links and the gallery).
pub const ALL: &[(&str, &str)] = &[("playground", DEFAULT_MANIFEST)];

/// The built-in example called `name`.
pub fn by_name(name: &str) -> Option<&'static str> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
