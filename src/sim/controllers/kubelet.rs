//! SKELETON: replaced by the real Kubelet (being written now).

use std::sync::Arc;

use crate::sim::api::WatchEvent;
use crate::sim::cache::Cache;
use crate::sim::controller::{ComponentId, Controller, Ctx, Outcome};
use crate::sim::types::{Kind, Object, ObjectKey};

/// Placeholder while the real controller is written.
#[derive(Debug, Default)]
pub struct Kubelet { node: String }

impl Kubelet {
    /// A fresh instance.
    pub fn new(node: &str) -> Self {
        Self { node: node.to_string() }
    }
}

impl Controller for Kubelet {
    fn id(&self) -> ComponentId {
        ComponentId::Kubelet(self.node.clone())
    }
    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Node, Kind::Pod]
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
