//! View logic for the playground, with no web dependency, so it is unit-tested natively.
//!
//! Everything the page shows is computed here from the session: pod STATUS text as kubectl prints
//! it, the claims a pod mounts, node capacity bars, the events list, the loop cards, the sequence
//! diagram's rows, the inspector's spec-vs-status gap, the chart and the fault timeline. `src/ui`
//! only turns these into HTML.

pub mod action;
pub mod changes;
pub mod check;
pub mod claims;
pub mod cluster;
pub mod console;
pub mod crash;
pub mod editor_keys;
pub mod embed_flags;
pub mod embed_protocol;
pub mod events;
pub mod fault_timeline;
pub mod faults;
pub mod format;
pub mod history;
pub mod inspect;
pub mod lesson;
pub mod moments;
pub mod playground;
pub mod trace_views;
pub mod yaml_highlight;

pub use cluster::{ClusterView, NodeView, PodHealth, PodView, Usage};
pub use events::EventRow;
pub use playground::{Playground, DEFAULT_MANIFEST};
