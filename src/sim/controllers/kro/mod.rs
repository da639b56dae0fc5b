//! kro's two controllers, shaped like its `pkg/controller`: the ResourceGraphDefinition
//! controller (component `kro`) and the instance controller it starts for each graph
//! (component `kro/<graph>`). What they read of a graph is `sim::kro`'s.

pub mod instance;
pub mod resourcegraphdefinition;

pub use crate::sim::kro::*;
