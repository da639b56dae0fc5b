//! The native integration tests, in one binary so that `cargo test` links them once: each module
//! is one subject (a name such as `faults` or `lessons`), and `cargo test --test it <module>::`
//! runs one. The wasm tests (`tests/wasm_*.rs`) stay binaries of their own: they build for
//! wasm32 and run in headless Chromium.

#[path = "../common/bounds.rs"]
mod bounds;
#[path = "../common/determinism.rs"]
mod common;

mod builtin_kinds;
mod cli;
mod control_plane_traces;
mod controller_checks;
mod custom_resources;
mod determinism;
mod explain;
mod fault_properties;
mod faults;
mod fuzz;
mod garbage_collection;
mod hostile_inputs;
mod hostile_links_and_commands;
mod jobs;
mod kro;
mod layers;
mod lessons;
mod memory_bounds;
mod namespaces;
mod no_html_injection;
mod nodes;
mod postgres_operator;
mod properties;
mod public_manifests;
mod script_controllers;
mod security_headers;
mod size_budget;
mod statefulsets;
mod step_bounds;
mod support;
mod time_bounds;
mod volumes;
mod walking_skeleton;
