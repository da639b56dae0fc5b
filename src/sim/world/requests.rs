//! Request execution: a component's or the learner's requests go through the API server, with latency, 503s while it is down, a conflicting writer's races, and the Events the recorder writes.

use super::*;
use crate::sim::machinery::trace::{ApiTrace, EventTrace};

/// The annotation a ConflictingWriter bumps: a harmless change that moves the resourceVersion.
pub const RIVAL_ANNOTATION: &str = "kubeloop.dev/conflicting-writer";

/// How a ConflictingWriter appears in the trace (`actor`).
pub const RIVAL_ACTOR: &str = "conflicting-writer";

/// The most requests one step sends. A ReplicaSet's pass sends up to 500 creates or deletes
/// (upstream's `burstReplicas`), and at 10,000 pods each costs tens of microseconds (its watch
/// fan-out, its Event): one step of 500 took 16-26 ms natively and twice that in the page, a
/// dropped frame or three. Past this many the step ends and the rest is the next step, due before
/// anything else, so the requests go in the same order with nothing between them: only the page
/// gets a frame in between. Below it (every lesson's ReplicaSets) a pass's requests are one step.
pub const API_REQUESTS_PER_STEP: usize = 100;

/// How far a component's requests have got, between the steps that send them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Sent {
    /// The batch being sent, and the next request in it.
    batch: usize,
    request: usize,
    /// Whether a request of the batch being sent failed (its later batches are skipped).
    batch_failed: bool,
    /// The first failed request's trace entry: the cause of the retry.
    failure: Option<u64>,
}

/// A pass's requests on their way: who sent them, for which key, in which batches, and how far
/// they have got.
#[derive(Clone, Debug)]
pub(super) struct ApiCall {
    pub(super) from: ComponentId,
    pub(super) gen: u32,
    pub(super) key: ObjectKey,
    pub(super) batches: Vec<Vec<ApiRequest>>,
    /// The pass that made them (or the crash that cut it short).
    pub(super) cause: u64,
    pub(super) sent: Sent,
}

impl Sim {
    /// Sends `call`'s requests from where it got to, at most [`API_REQUESTS_PER_STEP`] of them;
    /// true when requests are left for the next step.
    pub(super) fn execute(&mut self, call: &mut ApiCall) -> bool {
        let ApiCall {
            from,
            gen,
            key,
            batches,
            cause,
            sent,
        } = call;
        let (from, gen, key, cause) = (&*from, *gen, &*key, *cause);
        let mut budget = API_REQUESTS_PER_STEP;
        let mut failed = false;
        while let Some(batch) = batches.get(sent.batch) {
            while let Some(req) = batch.get(sent.request) {
                if budget == 0 {
                    return true;
                }
                budget -= 1;
                sent.request += 1;
                let result = self.send(from, req, Some(cause));
                // The request's own entry (a racing writer may have written just before it): the
                // cause of events about its answer, and of the retry when it failed.
                let api_seq = self.last_api_seq;
                if let Err(e) = &result {
                    // A delete of something already gone is what the controller wanted.
                    let benign = matches!(req, ApiRequest::Delete { .. }) && e.code() == 404;
                    if !benign {
                        sent.batch_failed = true;
                        sent.failure.get_or_insert(api_seq);
                    }
                }
                let mut answer_events = Vec::new();
                // The LIST that follows a DeleteCollection: what is left of the collection.
                let listed: Option<Vec<Rc<Object>>> = match (req, &result) {
                    (ApiRequest::DeleteCollection { kind, namespace }, Ok(_)) => Some(
                        self.api
                            .list(*kind)
                            .filter(|o| o.meta().namespace == *namespace)
                            .cloned()
                            .collect(),
                    ),
                    _ => None,
                };
                if let Some(c) = self.components.get_mut(from) {
                    if c.generation == gen {
                        if let Some(items) = &listed {
                            c.ctrl.on_list(req, items, self.now);
                        }
                        c.ctrl.on_response(req, &result, self.now);
                        answer_events = c.ctrl.events_for_response(req, &result);
                    }
                }
                for e in &answer_events {
                    self.record_event(from, e, Some(api_seq));
                }
            }
            sent.batch += 1;
            sent.request = 0;
            if sent.batch_failed {
                failed = true;
                break;
            }
        }
        for batch in &batches[sent.batch.min(batches.len())..] {
            for req in batch {
                if let Some(c) = self.components.get_mut(from) {
                    if c.generation == gen {
                        c.ctrl.on_skipped(req);
                    }
                }
            }
        }
        let now = self.now;
        if let Some(c) = self.components.get_mut(from) {
            if c.generation != gen {
                return false;
            }
            if failed {
                let delay = c.queue.backoff(key);
                self.requeue_caused(from, gen, key.clone(), now + delay, "retry", sent.failure);
            } else {
                c.queue.forget(key);
            }
        }
        false
    }

    /// Sends one request to the API server now, traces it, and fans out what it changed.
    pub(super) fn send(
        &mut self,
        from: &ComponentId,
        req: &ApiRequest,
        cause: Option<u64>,
    ) -> ApiResult {
        let (partitioned, actor) = match self.components.get(from) {
            Some(c) => (c.partitioned, c.name.clone()),
            None => (false, from.name().into()),
        };
        if self.api_server_up && !partitioned && *from != ComponentId::User {
            self.race_conflicting_writer(req);
        }
        self.send_as(actor, partitioned, req, cause)
    }

    /// [`Sim::send`] for any actor, including ones that are not components (a ConflictingWriter).
    pub(super) fn send_as(
        &mut self,
        actor: Str,
        partitioned: bool,
        req: &ApiRequest,
        cause: Option<u64>,
    ) -> ApiResult {
        let verb = req.verb();
        let key = req.key();
        if !self.api_server_up || partitioned {
            let err = ApiError::unavailable();
            self.last_api_seq = self.trace.push(
                self.now,
                cause,
                TraceKind::Api(Box::new(ApiTrace {
                    actor,
                    verb,
                    object: key.trace_name().into(),
                    code: err.code(),
                    message: Some(err.message.clone()),
                    resource_version: None,
                })),
            );
            return Err(err);
        }
        let seq = self.trace.next_seq();
        let handled = self.api.handle(self.now, req, seq);
        let (code, message, rv, object) = match &handled.result {
            Ok(o) => (
                if verb.starts_with("create") { 201 } else { 200 },
                None,
                Some(o.meta().rv()),
                // Named by the store, which keeps the name for the object's later writes and
                // their deliveries.
                match handled.events.iter().find(|e| Rc::ptr_eq(&e.object, o)) {
                    Some(e) => self.api.trace_name(&e.key, e.slot),
                    None => o.key().trace_name().into(),
                },
            ),
            Err(e) => (
                e.code(),
                Some(e.message.clone()),
                None,
                key.trace_name().into(),
            ),
        };
        self.last_api_seq = self.trace.push(
            self.now,
            cause,
            TraceKind::Api(Box::new(ApiTrace {
                actor,
                verb,
                object,
                code,
                message,
                resource_version: rv,
            })),
        );
        if let Ok(stored) = &handled.result {
            self.doom_job_pods(req, stored);
        }
        self.fan_out(&handled.events);
        if key.kind == Kind::CustomResourceDefinition
            && handled.result.is_ok()
            && !self.deferred.is_empty()
        {
            self.create_deferred(cause);
        }
        handled.result
    }

    /// Holds the learner's creates of a kind no CRD serves yet, because a ResourceGraphDefinition
    /// applied with them will make kro serve it: they are sent as soon as a CRD serves their kind
    /// (what `kubectl apply` retried by Argo CD or Flux amounts to).
    pub fn defer_create(&mut self, req: ApiRequest) {
        // Applied again before its kind was served: the later manifest is the one to create.
        let key = req.key();
        self.deferred.retain(|r| r.key() != key);
        self.deferred.push(req);
    }

    /// The learner's creates still waiting for their kind to be served.
    pub fn deferred_creates(&self) -> &[ApiRequest] {
        &self.deferred
    }

    fn create_deferred(&mut self, cause: Option<u64>) {
        let served = self.api.served_crds();
        let is_served = |req: &ApiRequest| {
            let k = req.key().kind;
            served
                .iter()
                .any(|c| c.spec.group == k.group() && c.spec.names.kind == k.as_str())
        };
        let (ready, waiting): (Vec<ApiRequest>, Vec<ApiRequest>) =
            std::mem::take(&mut self.deferred)
                .into_iter()
                .partition(is_served);
        self.deferred = waiting;
        for req in ready {
            let _ = self.send(&ComponentId::User, &req, cause);
        }
    }

    /// The learner's (or a scenario's) request, executed synchronously as kubectl would. Sent
    /// while a fault is applied (DeletePod, EditObject), the fault is its cause.
    pub fn submit(&mut self, req: ApiRequest) -> ApiResult {
        let cause = self.fault_cause;
        self.send(&ComponentId::User, &req, cause)
    }

    /// Records a Kubernetes Event on behalf of a component.
    pub fn record_event(&mut self, from: &ComponentId, rec: &EventRecord, cause: Option<u64>) {
        // The recorder cannot write it (the API server is down, or a partition cuts the component
        // off); client-go's broadcaster retries and then drops it.
        let cut_off = self.components.get(from).is_some_and(|c| c.partitioned);
        if !self.api_server_up || cut_off {
            return;
        }
        // NamespaceLifecycle refuses an Event in a namespace that is gone or terminating.
        let namespace = if rec.object.kind.namespaced() {
            rec.object.namespace.as_str()
        } else {
            "default"
        };
        if !self.api.accepts_content_in(namespace) {
            return;
        }
        let unknown;
        let reporter = match self.components.get(from) {
            Some(c) => &c.reporter,
            None => {
                unknown = super::reporter_of(from, &Str::from(from.name()));
                &unknown
            }
        };
        let recorded = self.recorder.record(self.now, reporter, rec, &self.api);
        let source = reporter.name().clone();
        let ev = recorded.event;
        let object = self.api.trace_name_of(&rec.object);
        self.trace.push(
            self.now,
            cause,
            TraceKind::Event(Box::new(EventTrace {
                event_type: ev.type_.clone(),
                reason: ev.reason.clone(),
                message: ev.message.clone(),
                object,
                source,
            })),
        );
        self.api
            .put_event(self.now, Object::from(ev), cause.unwrap_or(0));
        self.cap_events();
    }

    /// Past [`MAX_EVENTS`], expires the oldest Events (by last time seen, as the TTL would) down
    /// to [`EVENT_EXPIRY_BATCH`] below the cap, and makes the recorder forget them, as TTL expiry
    /// does: a repeat of one of them starts a fresh Event.
    pub(super) fn cap_events(&mut self) {
        let count = self.api.count(Kind::Event);
        if count <= MAX_EVENTS {
            return;
        }
        let excess = count - (MAX_EVENTS - EVENT_EXPIRY_BATCH);
        let expired = self.api.expire_oldest_events(excess);
        self.recorder
            .forget(expired.iter().filter_map(|o| o.as_event()));
    }

    /// Removes `expired` Events from the store, and their identities from the recorder.
    pub(super) fn expire_events(&mut self, expired: &[ObjectKey]) {
        let removed: Vec<Rc<Object>> = expired
            .iter()
            .filter_map(|k| self.api.expire_event(k))
            .collect();
        self.recorder
            .forget(removed.iter().filter_map(|o| o.as_event()));
    }
}
