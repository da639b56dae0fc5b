//! API requests, responses and watch events as plain data: what components send and receive.
//!
//! The `api` wing: the objects, the rules that judge them (validation, admission, the
//! playground's limits) and the API server that stores them with resourceVersions and serves
//! watches. Its invariant: it imports nothing from the wings above it (input, machinery,
//! controllers, world, kubectl, the session); only the seeded RNG from the root.

pub mod admission;
pub mod apiextensions;
pub mod apiserver;
pub mod base64;
pub mod conditions;
pub mod crd_validation;
pub mod customresource;
pub mod event_ages;
pub mod fields;
pub mod job;
pub mod limits;
pub mod object_map;
pub mod openapi;
pub mod patch;
pub mod quantity;
pub mod regexp;
pub mod schema;
pub mod sha256;
pub mod shared_str;
pub mod statefulset;
pub mod storage;
pub mod strict;
pub mod string_map;
pub mod types;
pub mod validation;

use std::rc::Rc;

use serde::Serialize;
use serde_json::Value as Json;

use self::types::{Kind, Object, ObjectKey, SharedKey};

/// `kubectl delete --cascade=…`: what happens to an object's dependents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum PropagationPolicy {
    /// The owner goes at once; the garbage collector deletes dependents afterwards.
    #[default]
    Background,
    /// The owner stays (with the `foregroundDeletion` finalizer) until blocking dependents are gone.
    Foreground,
    /// Dependents lose their owner reference and survive.
    Orphan,
}

impl PropagationPolicy {
    /// Parses kubectl's `--cascade` values and the API's `propagationPolicy` values.
    pub fn parse(s: &str) -> Option<PropagationPolicy> {
        match s {
            "background" | "Background" | "true" => Some(PropagationPolicy::Background),
            "foreground" | "Foreground" => Some(PropagationPolicy::Foreground),
            "orphan" | "Orphan" | "false" => Some(PropagationPolicy::Orphan),
            _ => None,
        }
    }
}

/// Options of a DELETE.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeleteOptions {
    /// Overrides the pod's `terminationGracePeriodSeconds`; 0 with `force` removes at once.
    pub grace_period_seconds: Option<i64>,
    /// Defaults to Background, as `kubectl delete` does.
    pub propagation_policy: Option<PropagationPolicy>,
    /// Only delete if the object still has this uid (what the GC and controllers use).
    pub precondition_uid: Option<String>,
    /// Only delete if the object still has this resourceVersion.
    pub precondition_resource_version: Option<String>,
}

/// One request to the API server. Components emit these as data; the world executes them.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiRequest {
    /// POST: `metadata.generateName` is honoured; uid, resourceVersion and timestamps are set by the server.
    Create(Object),
    /// PUT: replaces spec and metadata; a non-empty resourceVersion is a precondition (409 on mismatch).
    Update(Object),
    /// PUT on the status subresource: only status changes.
    UpdateStatus(Object),
    /// PATCH with a JSON merge patch (RFC 7386), as `kubectl patch --type=merge`, `label`, `scale` do.
    Patch {
        key: ObjectKey,
        patch: Json,
        /// Patch the status subresource instead of the main resource.
        status: bool,
    },
    /// DELETE.
    Delete {
        key: ObjectKey,
        options: DeleteOptions,
    },
    /// POST pods/binding: sets `spec.nodeName` (the scheduler's only write to a pod's spec).
    Bind { key: ObjectKey, node: String },
    /// POST pods/eviction: a delete that asks the PodDisruptionBudgets first.
    Evict {
        key: ObjectKey,
        options: DeleteOptions,
    },
    /// PUT namespaces/finalize: writes only a Namespace's `spec.finalizers` (what the namespace
    /// controller does once the namespace is empty).
    Finalize(Object),
    /// DELETE on a collection: every object of `kind` in `namespace`, each deleted as a plain
    /// DELETE would (pods bound to a node gracefully). Answered with the namespace; what remains
    /// reaches the sender as the LIST that follows ([`crate::sim::machinery::controller::Controller::on_list`]).
    DeleteCollection { kind: Kind, namespace: String },
}

impl ApiRequest {
    /// The HTTP-ish verb, as the trace and the sequence diagram label it.
    pub fn verb(&self) -> &'static str {
        match self {
            ApiRequest::Create(_) => "create",
            ApiRequest::Update(_) => "update",
            ApiRequest::UpdateStatus(_) => "update/status",
            ApiRequest::Patch { status: false, .. } => "patch",
            ApiRequest::Patch { status: true, .. } => "patch/status",
            ApiRequest::Delete { .. } => "delete",
            ApiRequest::Bind { .. } => "create/binding",
            ApiRequest::Evict { .. } => "create/eviction",
            ApiRequest::Finalize(_) => "update/finalize",
            ApiRequest::DeleteCollection { .. } => "deletecollection",
        }
    }

    /// The object the request is about (for a create with generateName, the name is still empty).
    pub fn key(&self) -> ObjectKey {
        match self {
            ApiRequest::Create(o)
            | ApiRequest::Update(o)
            | ApiRequest::UpdateStatus(o)
            | ApiRequest::Finalize(o) => o.key(),
            ApiRequest::Patch { key, .. }
            | ApiRequest::Delete { key, .. }
            | ApiRequest::Bind { key, .. }
            | ApiRequest::Evict { key, .. } => key.clone(),
            ApiRequest::DeleteCollection { kind, namespace } => {
                ObjectKey::new(*kind, namespace, "")
            }
        }
    }
}

/// Kubernetes `metav1.StatusReason`s the simulation can return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum StatusReason {
    NotFound,
    AlreadyExists,
    Conflict,
    Invalid,
    BadRequest,
    TooManyRequests,
    Gone,
    Expired,
    InternalError,
    ServiceUnavailable,
    Forbidden,
    MethodNotAllowed,
}

impl StatusReason {
    /// The HTTP status code that goes with the reason.
    pub fn code(self) -> u16 {
        match self {
            StatusReason::NotFound => 404,
            StatusReason::AlreadyExists | StatusReason::Conflict => 409,
            StatusReason::Invalid => 422,
            StatusReason::BadRequest => 400,
            StatusReason::TooManyRequests => 429,
            StatusReason::Gone | StatusReason::Expired => 410,
            StatusReason::InternalError => 500,
            StatusReason::ServiceUnavailable => 503,
            StatusReason::Forbidden => 403,
            StatusReason::MethodNotAllowed => 405,
        }
    }
}

/// A failed request, worded exactly as the Kubernetes API server words it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiError {
    pub reason: StatusReason,
    pub message: String,
}

impl ApiError {
    /// 404: `deployments.apps "web" not found`.
    pub fn not_found(kind: Kind, name: &str) -> ApiError {
        ApiError {
            reason: StatusReason::NotFound,
            message: format!("{} \"{name}\" not found", kind.resource()),
        }
    }

    /// 409: `deployments.apps "web" already exists`.
    pub fn already_exists(kind: Kind, name: &str) -> ApiError {
        ApiError {
            reason: StatusReason::AlreadyExists,
            message: format!("{} \"{name}\" already exists", kind.resource()),
        }
    }

    /// 409: the optimistic-concurrency failure every controller must handle by re-reading.
    pub fn conflict(kind: Kind, name: &str) -> ApiError {
        ApiError {
            reason: StatusReason::Conflict,
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                kind.resource()
            ),
        }
    }

    /// 409 for a failed uid precondition.
    pub fn uid_precondition(kind: Kind, name: &str, want: &str, got: &str) -> ApiError {
        ApiError {
            reason: StatusReason::Conflict,
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": Precondition failed: UID in precondition: {want}, UID in object meta: {got}",
                kind.resource()
            ),
        }
    }

    /// 503 while a component's route to the API server is cut (stopped server, partition).
    pub fn unavailable() -> ApiError {
        ApiError {
            reason: StatusReason::ServiceUnavailable,
            message: "the server is currently unable to handle the request".into(),
        }
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.reason.code()
    }

    /// As kubectl prints it: `Error from server (NotFound): deployments.apps "web" not found`.
    pub fn kubectl_message(&self) -> String {
        format!("Error from server ({:?}): {}", self.reason, self.message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What the API server answers: the stored object after the write, or a Kubernetes error.
pub type ApiResult = Result<Rc<Object>, ApiError>;

/// Watch event types as the API streams them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum WatchEventType {
    Added,
    Modified,
    Deleted,
}

impl WatchEventType {
    /// `ADDED`, `MODIFIED`, `DELETED`.
    pub fn as_str(self) -> &'static str {
        match self {
            WatchEventType::Added => "ADDED",
            WatchEventType::Modified => "MODIFIED",
            WatchEventType::Deleted => "DELETED",
        }
    }

    /// Parses a watch event type in any letter case (`added`, `MODIFIED`).
    pub fn parse(t: &str) -> Result<WatchEventType, String> {
        match t.to_ascii_uppercase().as_str() {
            "ADDED" => Ok(WatchEventType::Added),
            "MODIFIED" => Ok(WatchEventType::Modified),
            "DELETED" => Ok(WatchEventType::Deleted),
            _ => Err(format!(
                "unknown event type {t:?}: expected ADDED, MODIFIED or DELETED"
            )),
        }
    }
}

/// One change in the store. DELETED carries the object's last state.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchEvent {
    pub type_: WatchEventType,
    pub object: Rc<Object>,
    /// The store's resourceVersion after this change (the object's own RV, or the delete's RV).
    pub resource_version: u64,
    /// The trace entry of the API write that produced the change, for cause → effect chains.
    pub cause: u64,
    /// The object's key, in the store's allocation: every informer that hears of the change
    /// finds its cache entry by it, and a new entry shares it, without building the key anew
    /// (three strings) or looking it up in the store for each of a dozen watchers.
    pub key: SharedKey,
    /// Where the store holds (or, deleted, held) the object: a hint by which each cache finds
    /// its entry without hashing the key (see `object_map`), or [`object_map::NO_SLOT`].
    pub slot: u32,
}

impl WatchEvent {
    /// A change of `object` with a key of its own (the API server passes the store's instead).
    pub fn new(
        type_: WatchEventType,
        object: Rc<Object>,
        resource_version: u64,
        cause: u64,
    ) -> Self {
        let key = Rc::new(object.key());
        WatchEvent::keyed(type_, object, key, resource_version, cause)
    }

    /// A change of `object` under `key`, the store's allocation of its key.
    pub fn keyed(
        type_: WatchEventType,
        object: Rc<Object>,
        key: SharedKey,
        resource_version: u64,
        cause: u64,
    ) -> Self {
        WatchEvent {
            type_,
            object,
            resource_version,
            cause,
            key,
            slot: object_map::NO_SLOT,
        }
    }
}
