//! The PV protection controller (`persistentvolume-protection-controller`), as
//! `pkg/controller/volume/pvprotection` does it: a volume being deleted keeps its
//! `kubernetes.io/pv-protection` finalizer while it is Bound to a claim.

use std::rc::Rc;

use super::garbage_collector::{cached_keys, held_by, remove_finalizer};
use crate::sim::api::storage::{str_at, volume_kind, PV_PROTECTION};
use crate::sim::api::types::{Kind, Object, ObjectKey};
use crate::sim::api::WatchEvent;
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{ComponentId, Controller, Ctx, Outcome, ReconcileRecord};

/// The PV protection controller.
#[derive(Clone, Debug, Default)]
pub struct PvProtectionController;

impl PvProtectionController {
    pub fn new() -> Self {
        Self
    }
}

impl Controller for PvProtectionController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::PvProtection
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        static WATCHED: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        WATCHED.get_or_init(|| volume_kind().into_iter().collect())
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        if held_by(&ev.object, PV_PROTECTION) {
            vec![ev.object.key()]
        } else {
            Vec::new()
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cached_keys(cache, volume_kind(), |o| held_by(o, PV_PROTECTION))
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let Some(volume) = ctx.cache.get(key).filter(|o| held_by(o, PV_PROTECTION)) else {
            return out;
        };
        let phase = volume
            .as_custom()
            .and_then(|v| str_at(v, &["status", "phase"]))
            .unwrap_or_default();
        let observed = format!("volume {} is being deleted; it is {phase}", key.name);
        out.record = Some(if phase == "Bound" {
            ReconcileRecord {
                observed,
                desired: "deleted once no claim is bound to it".into(),
                diff: "wait: keep the finalizer while it is Bound".into(),
            }
        } else {
            out.request(remove_finalizer(volume, PV_PROTECTION));
            ReconcileRecord {
                observed,
                desired: "deleted once no claim is bound to it".into(),
                diff: format!("remove the {PV_PROTECTION} finalizer"),
            }
        });
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(PvProtectionController::new()))
    }
}
