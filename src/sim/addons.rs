//! The add-ons a scenario may install (`spec.addons`), and the CustomResourceDefinitions each
//! brings: what the API server serves once it is installed, so that a scenario's own file may
//! hold objects of those kinds.

use serde_json::Value as Json;

/// The add-ons, by the name a scenario gives them.
pub const ADDONS: [&str; 2] = ["kro", "postgres-operator"];

/// The example operator's CRD (`postgresclusters.db.kubeloop.dev`), with its status subresource.
pub fn postgres_crd() -> Json {
    serde_json::from_str(include_str!("controllers/postgres/crd.json"))
        .expect("the bundled CRD parses")
}

/// The CRDs `addon` installs, in order.
pub fn crds(addon: &str) -> Vec<Json> {
    match addon {
        "kro" => vec![super::kro::crd::rgd_crd()],
        "postgres-operator" => vec![postgres_crd()],
        _ => Vec::new(),
    }
}
