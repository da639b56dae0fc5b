//! Kubeloop: a Kubernetes reconciliation playground. `sim` is the deterministic core; `ui` the browser app.

pub mod scratch;
pub mod sim;
/// Stable sorting and B-tree collecting with one copy of the sort in the web build (download size).
pub mod sort;
/// Ordered maps and sets of a few entries as sorted vectors (one small copy per type in the web build).
pub mod vec_map;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
/// Pure view logic for the playground (native too, so it is unit-tested without a browser).
pub mod viewmodel;

#[cfg(target_arch = "wasm32")]
pub mod ui;
