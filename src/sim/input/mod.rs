//! The `input` wing: what the learner types, read with positions: YAML with line and column, the
//! decoder that turns manifests into defaulted, validated objects, the diagnostics that report
//! what and where, and client-go's JSONPath templates. Its invariant: it reads text and the
//! `api` wing's types, and never touches a running simulation.

/// Read in the page only once it loads the engine (issue #31); the CLI and tests read it now.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub mod controller_doc;
pub mod decode;
pub mod diagnostic;
pub mod jsonpath;
pub mod yaml;
