//! The reconcile core: a deterministic simulation of a Kubernetes control plane, with no web dependencies.
//!
//! Nothing here names web-sys, wasm-bindgen, gloo or yew; all time comes from the simulated clock
//! and all randomness from the seeded [`rng::Rng`].

pub mod addons;
pub mod api;
pub mod cel;
pub mod controller_check;
pub mod controllers;
pub mod examples;
pub mod faults;
pub mod handoff;
pub mod input;
pub mod kro;
pub mod kubectl;
pub mod machinery;
pub mod progress;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod script;
pub mod session;
pub mod share;
pub mod text;
pub mod time;
pub mod world;
