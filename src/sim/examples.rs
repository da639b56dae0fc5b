//! Built-in scenarios: the manifest the playground opens with, and (later) the lessons.

/// What the editor holds when the playground first opens: a three-replica Deployment.
pub const DEFAULT_MANIFEST: &str = include_str!("../lessons/playground.yaml");
