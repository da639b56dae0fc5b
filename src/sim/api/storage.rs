//! core/v1 PersistentVolumeClaim as the API server stores it: the defaults Kubernetes applies
//! when it decodes one (`SetDefaults_PersistentVolumeClaim`): a Filesystem volume, and a claim
//! nobody has bound yet is `Pending`.

use serde_json::{json, Map, Value as Json};

use super::apiextensions::CustomObject;

/// Fills in a claim's defaults, in place.
pub fn default_claim(obj: &mut CustomObject) {
    if let Json::Object(spec) = obj
        .content
        .entry("spec")
        .or_insert_with(|| Json::Object(Map::new()))
    {
        spec.entry("volumeMode").or_insert(json!("Filesystem"));
    }
    if let Json::Object(status) = obj
        .content
        .entry("status")
        .or_insert_with(|| Json::Object(Map::new()))
    {
        status.entry("phase").or_insert(json!("Pending"));
    }
}
