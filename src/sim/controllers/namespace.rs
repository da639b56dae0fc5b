//! The namespace controller (`namespace-controller`): empties a Terminating namespace and then
//! finalizes it, as `pkg/controller/namespace/deletion` does.
//!
//! One pass over a terminating namespace, upstream: discover every namespaced resource, delete
//! each collection, LIST what is left, write the `NamespaceDeletion*` / `NamespaceContentRemaining`
//! / `NamespaceFinalizersRemaining` conditions, and — when nothing is left — remove `kubernetes`
//! from `spec.finalizers` through `/finalize`, which lets the API server delete the namespace.
//! While content remains it requeues after an estimate: the longest remaining pod grace period,
//! or 15 s for content held by finalizers. With `OrderedNamespaceDeletion` (GA in 1.34) pods go
//! first: nothing else is deleted while a pod remains.
//!
//! Sans-IO, a pass cannot read the answers to its own requests, so the LIST after each
//! DeleteCollection reaches the controller as data ([`Controller::on_list`]) and the next pass
//! acts on it: the conditions and the finalize come one pass after the deletes that decided them.
//! Discovery is the built-in namespaced kinds plus the custom kinds of the CustomResourceDefinitions
//! it watches.

use std::rc::Rc;

use crate::sim::api::apiextensions::CustomKind;
use crate::sim::api::openapi;
use crate::sim::api::types::{
    set_condition, Condition, Kind, Millis, Namespace, Object, ObjectKey, Time, NAMESPACE_FINALIZER,
};
use crate::sim::api::{ApiRequest, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{ComponentId, Controller, Ctx, Outcome, ReconcileRecord};
use crate::vec_map::VecMap;

/// What it watches: the namespaces it finalizes, and the CRDs whose kinds it must empty too.
const WATCHED: [Kind; 2] = [Kind::Namespace, Kind::CustomResourceDefinition];

/// The built-in namespaced kinds it deletes after the pods, in discovery order.
const BUILTIN_CONTENT: [Kind; 7] = [
    Kind::Event,
    Kind::Service,
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::Lease,
    Kind::EndpointSlice,
    Kind::PodDisruptionBudget,
];

/// `finalizerEstimateSeconds`: how long to wait for content held by finalizers.
const FINALIZER_ESTIMATE: Millis = 15_000;

/// The wait before looking again when the last pass left nothing to wait for.
const NEXT_PASS: Millis = 100;

/// What the LISTs after one pass's deletes found left in a namespace.
#[derive(Clone, Debug, Default, PartialEq)]
struct Findings {
    /// Whether the pass deleted only pods (other content waits for them).
    pods_only: bool,
    /// `resource.group` → objects left.
    remaining: VecMap<String, usize>,
    /// Finalizer → objects it holds.
    finalizers: VecMap<String, usize>,
    /// How long until the content left should be gone.
    estimate: Millis,
}

/// The namespace controller.
#[derive(Clone, Debug, Default)]
pub struct NamespaceController {
    /// Per namespace, what the last pass's LISTs found (filled as its answers arrive).
    findings: VecMap<String, Findings>,
}

impl NamespaceController {
    pub fn new() -> Self {
        Self::default()
    }
}

fn terminating(ns: &Namespace) -> bool {
    ns.metadata.deletion_timestamp.is_some()
}

/// Every namespaced kind it empties, pods apart: the built-in ones and each served custom kind.
fn other_content(cache: &Cache) -> Vec<Kind> {
    let custom = cache
        .list(Kind::CustomResourceDefinition)
        .filter_map(|o| o.as_crd())
        .filter(|crd| crate::sim::api::customresource::serving(crd))
        .filter_map(CustomKind::of)
        .chain(openapi::stored_kinds().iter().map(|(k, _)| *k))
        .map(Kind::Custom)
        .filter(|k| k.namespaced());
    BUILTIN_CONTENT.into_iter().chain(custom).collect()
}

/// The deletion conditions for what a pass found, with upstream's reasons and messages (each
/// False with its OK reason unless the pass found that failure).
fn conditions(found: &Findings, now: Millis) -> Vec<Condition> {
    let cond = |type_: &str, status: &str, reason: &str, message: String| Condition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_transition_time: Some(Time(now - now % 1000)),
        ..Default::default()
    };
    let remaining = if found.remaining.is_empty() {
        cond(
            "NamespaceContentRemaining",
            "False",
            "ContentRemoved",
            "All content successfully removed".into(),
        )
    } else {
        let parts: Vec<String> = found
            .remaining
            .iter()
            .map(|(r, n)| format!("{r} has {n} resource instances"))
            .collect();
        cond(
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", parts.join(", ")),
        )
    };
    let finalizers = if found.finalizers.is_empty() {
        cond(
            "NamespaceFinalizersRemaining",
            "False",
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished".into(),
        )
    } else {
        let parts: Vec<String> = found
            .finalizers
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        cond(
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                parts.join(", ")
            ),
        )
    };
    vec![
        cond(
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered".into(),
        ),
        cond(
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".into(),
        ),
        cond(
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".into(),
        ),
        remaining,
        finalizers,
    ]
}

/// The namespace with `found`'s conditions, if that changes it (`set_condition` keeps a
/// condition's transition time while its status stays).
fn with_conditions(ns: &Namespace, found: &Findings, now: Millis) -> Option<Namespace> {
    let mut updated = ns.clone();
    for c in conditions(found, now) {
        set_condition(&mut updated.status.conditions, c);
    }
    (updated != *ns).then_some(updated)
}

impl Controller for NamespaceController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Namespace
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &WATCHED
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        let Some(ns) = ev.object.as_namespace() else {
            return Vec::new();
        };
        if ev.type_ == WatchEventType::Deleted {
            self.findings.remove(ns.metadata.name.as_str());
            return Vec::new();
        }
        if terminating(ns) {
            vec![ev.object.key()]
        } else {
            Vec::new()
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cache
            .list(Kind::Namespace)
            .filter(|o| o.as_namespace().is_some_and(terminating))
            .map(|o| o.key())
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let Some(ns) = ctx.cache.get(key).and_then(|o| o.as_namespace()) else {
            self.findings.remove(key.name.as_str());
            return out;
        };
        let name = &ns.metadata.name;
        if !terminating(ns) || !ns.spec.finalizers.iter().any(|f| f == NAMESPACE_FINALIZER) {
            out.record = Some(ReconcileRecord {
                observed: format!("namespace {name} is {}", ns.status.phase),
                desired: String::new(),
                diff: String::new(),
            });
            return out;
        }
        let last = self.findings.remove(name.as_str());
        let desired = "no content left, then finalized and gone".to_string();
        if let Some(found) = &last {
            // After a pods-only pass that found none, the rest is still to be listed: the
            // conditions wait for the pass that sees it all.
            let partial = found.pods_only && found.remaining.is_empty();
            if let Some(updated) = with_conditions(ns, found, ctx.now).filter(|_| !partial) {
                out.request(ApiRequest::UpdateStatus(Object::from(updated)));
            }
            if !found.pods_only && found.remaining.is_empty() {
                let mut finalized = ns.clone();
                finalized
                    .spec
                    .finalizers
                    .retain(|f| f != NAMESPACE_FINALIZER);
                out.request(ApiRequest::Finalize(Object::from(finalized)));
                out.record = Some(ReconcileRecord {
                    observed: format!("namespace {name} Terminating; no content left"),
                    desired,
                    diff: "remove the kubernetes finalizer (/finalize)".into(),
                });
                return out;
            }
        }
        // Pods first: nothing else is deleted while one remains (OrderedNamespaceDeletion).
        let pods_left = last
            .as_ref()
            .is_none_or(|f| f.pods_only && !f.remaining.is_empty());
        let kinds = if pods_left {
            vec![Kind::Pod]
        } else {
            other_content(ctx.cache)
        };
        self.findings.insert(
            name.to_string(),
            Findings {
                pods_only: pods_left,
                ..Findings::default()
            },
        );
        out.batch(
            kinds
                .iter()
                .map(|k| ApiRequest::DeleteCollection {
                    kind: *k,
                    namespace: name.to_string(),
                })
                .collect(),
        );
        let wait = last.as_ref().map_or(0, |f| f.estimate).max(NEXT_PASS);
        out.requeue(wait);
        let observed = match &last {
            None => format!("namespace {name} Terminating"),
            Some(f) if f.remaining.is_empty() => {
                format!("namespace {name} Terminating; no pods left")
            }
            Some(f) => format!(
                "namespace {name} Terminating; left: {}",
                f.remaining
                    .iter()
                    .map(|(r, n)| format!("{n} {r}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.record = Some(ReconcileRecord {
            observed,
            desired,
            diff: if pods_left {
                "delete the pods first".into()
            } else {
                format!("delete every other collection ({} kinds)", kinds.len())
            },
        });
        out
    }

    fn on_list(&mut self, req: &ApiRequest, items: &[Rc<Object>], now: Millis) {
        let ApiRequest::DeleteCollection { kind, namespace } = req else {
            return;
        };
        let Some(found) = self.findings.get_mut(namespace) else {
            return;
        };
        if items.is_empty() {
            return;
        }
        found
            .remaining
            .insert(format!("{}.{}", kind.plural(), kind.group()), items.len());
        for item in items {
            let meta = item.meta();
            for f in &meta.finalizers {
                *found.finalizers.entry(f.clone()).or_default() += 1;
            }
            let estimate = if !meta.finalizers.is_empty() {
                FINALIZER_ESTIMATE
            } else {
                // A pod terminating gracefully is gone by its deletion timestamp.
                meta.deletion_timestamp
                    .map_or(0, |t| t.0.saturating_sub(now))
            };
            found.estimate = found.estimate.max(estimate);
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::default()))
    }
}
