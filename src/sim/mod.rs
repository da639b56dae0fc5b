//! The reconcile core: a deterministic simulation of a Kubernetes control plane, with no web dependencies.
//!
//! Nothing here names web-sys, wasm-bindgen, gloo or yew; all time comes from the simulated clock
//! and all randomness from the seeded [`rng::Rng`].

pub mod admission;
pub mod api;
pub mod apiserver;
pub mod cache;
pub mod controller;
pub mod controllers;
pub mod decode;
pub mod events;
pub mod examples;
pub mod faults;
pub mod handoff;
pub mod jsonpath;
pub mod kubectl;
pub mod limits;
pub mod progress;
pub mod quantity;
pub mod rng;
pub mod runtime;
pub mod scenario;
pub mod session;
pub mod share;
pub mod string_map;
pub mod time;
pub mod trace;
pub mod types;
pub mod validation;
pub mod workqueue;
pub mod world;
pub mod yaml;
