//! kro (kubernetes-sigs/kro), the declarative operator: a ResourceGraphDefinition declares a new
//! API in SimpleSchema and the resources each instance owns. This wing holds what kro reads.

pub mod simpleschema;
