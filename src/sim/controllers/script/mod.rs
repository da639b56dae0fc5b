//! A learner-written controller: the JavaScript `reconcile(req, ctx)` of a `kubeloop.dev/v1alpha1` `Controller` document, run by the sandboxed engine as a component like the built-in ones.
//!
//! It is shaped like a controller-runtime controller built with
//! `For(primary).Owns(child).Watches(other)`: an event on a primary object queues its key, an
//! event on an owned object queues its controller owner (when that owner is a primary), and the
//! watched kinds are only cached. `reconcile` gets the key, never the event; what it reads comes
//! from this component's informer cache through `ctx` ([`host`]), and what it writes is queued
//! as requests the world sends after the pass, with the latency, conflicts and admission every
//! client meets. Its answers come back through the cache and `ctx.lastErrors()`.
//!
//! The module-level state of the script lives in the engine's [`Running`] instance, which is this
//! process's memory: a restart or a crash builds a new controller from the document alone
//! ([`Controller::restarted`]), so the state is gone, as a real controller's is.

pub mod host;
#[cfg(test)]
mod tests;

use std::rc::Rc;

use serde_json::Value as Json;

use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Str};
use crate::sim::api::{ApiRequest, ApiResult, WatchEvent};
use crate::sim::input::controller_doc::ControllerDoc;
pub use crate::sim::input::controller_doc::TypeName;
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    watched_builtins, ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};
use crate::sim::rng::Rng;
use crate::sim::script::engine::{self, Running};
use crate::sim::script::{Arg, Limits, RunError};

/// How the loop record's `desired` of a pass that ended cleanly begins ("returned nothing...",
/// "returned requeueAfter 30s"); a failed pass's is the error. The checker reads passes by it.
pub const CLEAN_PASS: &str = "returned ";

/// What a `Controller` document declares, with the limits it runs under: everything a
/// (re)started process is built from.
#[derive(Clone, PartialEq)]
pub struct ScriptSpec {
    pub doc: ControllerDoc,
    pub limits: Limits,
}

impl ScriptSpec {
    /// What a `Controller` document declares, with the playground's limits.
    pub fn of(doc: &ControllerDoc) -> ScriptSpec {
        use crate::sim::api::limits::{SCRIPT_CALL_DEPTH, SCRIPT_MEMORY_BYTES, SCRIPT_STEPS};
        ScriptSpec {
            doc: doc.clone(),
            limits: Limits {
                steps: SCRIPT_STEPS,
                memory_bytes: SCRIPT_MEMORY_BYTES,
                call_depth: SCRIPT_CALL_DEPTH,
            },
        }
    }

    fn types(&self) -> impl Iterator<Item = &TypeName> {
        std::iter::once(&self.doc.primary)
            .chain(&self.doc.owns)
            .chain(&self.doc.watches)
    }

    /// The type a learner's word names, among the ones this controller caches.
    pub fn type_named(&self, word: &str) -> Option<&TypeName> {
        self.types().find(|t| t.named_by(word))
    }
}

/// The component running one `Controller` document.
pub struct ScriptController {
    spec: Rc<ScriptSpec>,
    /// The script's module state: created by the first pass of this process.
    instance: Option<Box<dyn Running>>,
    /// API errors answered since the last pass (`ctx.lastErrors()`), as Kubernetes Status objects.
    last_errors: Vec<Json>,
    /// Why the last pass failed in the script, when it did: the editor underlines it.
    failure: Option<RunError>,
}

impl ScriptController {
    /// A freshly started process for `spec`.
    pub fn new(spec: Rc<ScriptSpec>) -> Self {
        ScriptController {
            spec,
            instance: None,
            last_errors: Vec::new(),
            failure: None,
        }
    }

    /// Why the last pass failed in the script (thrown, over budget...), if it did.
    pub fn failure(&self) -> Option<&RunError> {
        self.failure.as_ref()
    }

    /// The document it runs.
    pub fn spec(&self) -> &ScriptSpec {
        &self.spec
    }

    fn primary_of(&self, obj: &Object) -> Option<ObjectKey> {
        let kind = self.spec.doc.primary.resolve()?;
        let meta = obj.meta();
        let owner = meta.controller_ref()?;
        (Kind::of_type(&owner.api_version, &owner.kind) == Some(kind))
            .then(|| ObjectKey::new(kind, &meta.namespace, &owner.name))
    }

    /// Starts the script's module code, once per process. `Math.random` draws from the
    /// component's own stream of the simulation's seed.
    fn instance(&mut self, now: Millis, rng: &mut Rng) -> Result<&mut dyn Running, RunError> {
        if self.instance.is_none() {
            let engine = engine::installed().ok_or_else(|| {
                RunError::Engine(crate::sim::input::controller_doc::NO_ENGINE.into())
            })?;
            let spec = &self.spec;
            self.instance =
                Some(engine.start(&spec.doc.source, rng.next_u64(), spec.limits, now)?);
        }
        Ok(self.instance.as_deref_mut().expect("started above"))
    }
}

impl Controller for ScriptController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        None
    }

    fn id(&self) -> ComponentId {
        ComponentId::Script(Str::from(self.spec.doc.name.as_str()))
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        let kinds: Vec<Kind> = self.spec.types().filter_map(TypeName::resolve).collect();
        watched_builtins(&kinds)
    }

    fn watches_custom_kinds(&self) -> bool {
        true
    }

    fn watches(&self, kind: Kind) -> bool {
        self.spec.types().any(|t| t.is(kind))
    }

    fn default_resync(&self) -> Option<Millis> {
        self.spec.doc.resync
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        let obj = &ev.object;
        let kind = obj.kind();
        if self.spec.doc.primary.is(kind) {
            return vec![obj.key()];
        }
        if self.spec.doc.owns.iter().any(|t| t.is(kind)) {
            return self.primary_of(obj).into_iter().collect();
        }
        Vec::new()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        self.spec
            .doc
            .primary
            .resolve()
            .map(|k| cache.list(k).map(|o| o.key()).collect())
            .unwrap_or_default()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let spec = self.spec.clone();
        let errors = std::mem::take(&mut self.last_errors);
        let mut pass = host::Pass::new(&spec, ctx.cache, key, ctx.now, errors);
        let request = serde_json::json!({"namespace": key.namespace, "name": key.name});
        let result = match self.instance(ctx.now, ctx.rng) {
            Ok(instance) => instance.call(
                "reconcile",
                vec![Arg::Json(request), Arg::Host("ctx".into())],
                &mut pass,
                ctx.now,
            ),
            Err(e) => Err(e),
        };
        let host::Done {
            requests,
            events,
            logs,
            reads,
        } = pass.finish();
        out.batch(requests);
        for e in events {
            out.event(e);
        }
        self.failure = result.as_ref().err().cloned();
        let decided = match result {
            Ok(value) => match host::next_of(&value) {
                Ok(host::Next::After(after)) => {
                    out.requeue(after);
                    format!(
                        "{CLEAN_PASS}requeueAfter {}",
                        crate::sim::time::format_duration(after)
                    )
                }
                Ok(host::Next::RateLimited) => {
                    out.rate_limited = true;
                    format!("{CLEAN_PASS}requeue: true (rate-limited)")
                }
                Ok(host::Next::Done) => format!("{CLEAN_PASS}nothing: wait for a change"),
                Err(msg) => {
                    out.error = Some(msg.clone());
                    msg
                }
            },
            Err(e) => {
                let message = e.to_string();
                if let Some(obj) = ctx.cache.get(key) {
                    out.event(EventRecord::warning(obj, "ReconcileError", message.clone()));
                }
                out.error = Some(message.clone());
                message
            }
        };
        // The loop panel's observe → desired → diff: what the script read, what it decided,
        // and its log (what a learner prints is their own account of the gap).
        out.record = Some(ReconcileRecord {
            observed: if reads.is_empty() {
                "read nothing".into()
            } else {
                reads
            },
            desired: decided,
            diff: logs.join("\n"),
        });
        out
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        if let Err(e) = result {
            self.last_errors.push(serde_json::json!({
                "verb": req.verb(),
                "kind": req.key().kind.as_str(),
                "name": req.key().name,
                "namespace": req.key().namespace,
                "code": e.code(),
                "reason": format!("{:?}", e.reason),
                "message": e.message,
            }));
        }
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(ScriptController::new(self.spec.clone())))
    }
}
