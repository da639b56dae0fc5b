//! What the controllers' unit tests share: a cache built from objects, and one reconcile of one
//! key, with a fixed seed and no container runtime unless the test gives one.

use std::rc::Rc;

use crate::sim::api::types::{Millis, Object, ObjectKey};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{Controller, Ctx, Outcome};
use crate::sim::machinery::node_runtime::NodeRuntime;
use crate::sim::rng::Rng;

/// An informer cache holding `objects`, as after a list.
pub fn cache_of(objects: impl IntoIterator<Item = Object>) -> Cache {
    let mut cache = Cache::new();
    for o in objects {
        cache.upsert(Rc::new(o));
    }
    cache
}

/// One `reconcile` of `key` at `now` over `cache`, with the RNG seeded 1.
pub fn reconcile_once(
    ctrl: &mut (impl Controller + ?Sized),
    cache: &Cache,
    key: &ObjectKey,
    now: Millis,
) -> Outcome {
    reconcile_with(ctrl, cache, key, now, &mut Rng::new(1), None)
}

/// One `reconcile` with the caller's RNG and, for a kubelet, its node's container runtime.
pub fn reconcile_with(
    ctrl: &mut (impl Controller + ?Sized),
    cache: &Cache,
    key: &ObjectKey,
    now: Millis,
    rng: &mut Rng,
    runtime: Option<&mut NodeRuntime>,
) -> Outcome {
    ctrl.reconcile(
        key,
        &mut Ctx {
            now,
            cache,
            rng,
            runtime,
            storage: None,
        },
    )
}
