//! SKELETON: replaced by the real EndpointSliceController (being written now).

use std::sync::Arc;

use crate::sim::api::WatchEvent;
use crate::sim::cache::Cache;
use crate::sim::controller::{ComponentId, Controller, Ctx, Outcome};
use crate::sim::types::{Kind, Object, ObjectKey};

/// Placeholder while the real controller is written.
#[derive(Debug, Default)]
pub struct EndpointSliceController {}

impl EndpointSliceController {
    /// A fresh instance.
    pub fn new() -> Self {
        Self {}
    }
}

impl Controller for EndpointSliceController {
    fn id(&self) -> ComponentId {
        ComponentId::EndpointSlice
    }
    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Service, Kind::Pod, Kind::EndpointSlice]
    }
    fn keys_for_event(&mut self, _ev: &WatchEvent, _old: Option<&Arc<Object>>, _cache: &Cache) -> Vec<ObjectKey> {
        Vec::new()
    }
    fn keys_for_resync(&self, _cache: &Cache) -> Vec<ObjectKey> {
        Vec::new()
    }
    fn reconcile(&mut self, _key: &ObjectKey, _ctx: &mut Ctx<'_>) -> Outcome {
        Outcome::done()
    }
    fn reset(&mut self) {}
}
