//! The TTL-after-finished controller (`ttl-after-finished-controller`): deletes a finished Job
//! once `ttlSecondsAfterFinished` has passed since it finished, with its pods (foreground), as
//! `pkg/controller/ttlafterfinished` does.

use std::rc::Rc;

use crate::sim::api::job as api;
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Time};
use crate::sim::api::{ApiRequest, DeleteOptions, PropagationPolicy, WatchEvent};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{ComponentId, Controller, Ctx, Outcome, ReconcileRecord};

/// The TTL-after-finished controller.
#[derive(Clone, Debug, Default)]
pub struct TtlAfterFinishedController;

impl TtlAfterFinishedController {
    pub fn new() -> Self {
        Self
    }
}

/// When a Job finished: the transition time of its `Complete` or `Failed` condition.
fn finish_time(job: &crate::sim::api::apiextensions::CustomObject) -> Option<Millis> {
    ["Complete", "Failed"]
        .iter()
        .filter(|t| api::has_condition(job, t))
        .filter_map(|t| api::condition(job, t)?.get("lastTransitionTime")?.as_str())
        .filter_map(Time::parse_rfc3339)
        .map(|t| t.0)
        .max()
}

fn needs_cleanup(obj: &Object) -> bool {
    obj.as_custom().is_some_and(|j| {
        api::ttl_seconds_after_finished(j).is_some()
            && api::finished(j)
            && j.metadata.deletion_timestamp.is_none()
    })
}

impl Controller for TtlAfterFinishedController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::TtlAfterFinished
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        static WATCHED: std::sync::OnceLock<Vec<Kind>> = std::sync::OnceLock::new();
        WATCHED.get_or_init(|| api::job_kind().into_iter().collect())
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        if needs_cleanup(&ev.object) {
            vec![ev.object.key()]
        } else {
            Vec::new()
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        super::garbage_collector::cached_keys(cache, api::job_kind(), needs_cleanup)
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let Some(job) = ctx
            .cache
            .get(key)
            .filter(|o| needs_cleanup(o))
            .and_then(|o| o.as_custom())
        else {
            return out;
        };
        let ttl = api::ttl_seconds_after_finished(job).unwrap_or(0).max(0) as u64 * 1000;
        let Some(finished) = finish_time(job) else {
            return out;
        };
        let expire = finished + ttl;
        let observed = format!(
            "finished at {}, ttlSecondsAfterFinished {}",
            Time(finished).to_rfc3339(),
            ttl / 1000
        );
        if ctx.now < expire {
            out.requeue(expire - ctx.now);
            out.record = Some(ReconcileRecord {
                observed,
                desired: "deleted once its TTL has passed".into(),
                diff: format!(
                    "expires in {}",
                    crate::sim::time::format_duration(expire - ctx.now)
                ),
            });
            return out;
        }
        out.request(ApiRequest::Delete {
            key: key.clone(),
            options: DeleteOptions {
                propagation_policy: Some(PropagationPolicy::Foreground),
                precondition_uid: Some(job.metadata.uid.to_string()),
                ..Default::default()
            },
        });
        out.record = Some(ReconcileRecord {
            observed,
            desired: "deleted once its TTL has passed".into(),
            diff: "TTL expired: deleted (foreground)".into(),
        });
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(TtlAfterFinishedController::new()))
    }
}
