//! The PVC protection controller (`persistentvolumeclaim-protection-controller`), as
//! `pkg/controller/volume/pvcprotection` does it: a claim being deleted keeps its
//! `kubernetes.io/pvc-protection` finalizer, and so stays `Terminating`, while a pod uses it.
//! The finalizer goes once no scheduled, unfinished pod names the claim.

use std::rc::Rc;

use super::garbage_collector::{cached_keys, held_by, remove_finalizer};
use crate::sim::api::storage::{claim_kind, pod_claims, pod_uses_claim, PVC_PROTECTION};
use crate::sim::api::types::{Kind, Object, ObjectKey};
use crate::sim::api::WatchEvent;
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{ComponentId, Controller, Ctx, Outcome, ReconcileRecord};

/// The PVC protection controller.
#[derive(Clone, Debug, Default)]
pub struct PvcProtectionController;

impl PvcProtectionController {
    pub fn new() -> Self {
        Self
    }
}

impl Controller for PvcProtectionController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::PvcProtection
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        static WATCHED: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        WATCHED.get_or_init(|| {
            let mut kinds = vec![Kind::Pod];
            kinds.extend(claim_kind());
            kinds
        })
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        match &*ev.object {
            // `podAddedDeletedUpdated`: a pod that goes, or ends, may release the claims it names.
            Object::Pod(p) => {
                let Some(kind) = claim_kind() else {
                    return Vec::new();
                };
                let was = old.and_then(|o| o.as_pod());
                let mut claims = pod_claims(p);
                if let Some(was) = was {
                    claims.extend(pod_claims(was));
                }
                claims
                    .into_iter()
                    .map(|c| ObjectKey::new(kind, &p.metadata.namespace, c))
                    .collect()
            }
            o if held_by(o, PVC_PROTECTION) => vec![o.key()],
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cached_keys(cache, claim_kind(), |o| held_by(o, PVC_PROTECTION))
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let Some(claim) = ctx.cache.get(key).filter(|o| held_by(o, PVC_PROTECTION)) else {
            return out;
        };
        let users: Vec<&str> = ctx
            .cache
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.metadata.namespace == key.namespace && pod_uses_claim(p, &key.name))
            .map(|p| p.metadata.name.as_str())
            .collect();
        let observed = format!("claim {} is being deleted", key.name);
        out.record = Some(if users.is_empty() {
            out.request(remove_finalizer(claim, PVC_PROTECTION));
            ReconcileRecord {
                observed: format!("{observed}; no pod uses it"),
                desired: "deleted once no pod uses it".into(),
                diff: format!("remove the {PVC_PROTECTION} finalizer"),
            }
        } else {
            ReconcileRecord {
                observed: format!("{observed}; used by pod(s) {}", users.join(", ")),
                desired: "deleted once no pod uses it".into(),
                diff: "wait: keep the finalizer while a pod uses it".into(),
            }
        });
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(PvcProtectionController::new()))
    }
}
