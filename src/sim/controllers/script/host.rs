//! `ctx` for one pass of a learner's controller: reads served from its informer cache, writes queued as API requests, events, log lines and the requeue decision read back.
//!
//! Every read hands the script a copy of the cached object (a JSON value the engine copies
//! again), so a script that edits what it read changes nothing in the cache: the rule "never
//! modify objects from the cache" holds by construction. Writes do not happen during the pass:
//! they are requests the world sends after it returns, so their answers (a 409 on a stale
//! `resourceVersion`, a 422 from validation) arrive as the next pass's `ctx.lastErrors()`.

use serde_json::{json, Value as Json};

use super::ScriptSpec;
use crate::sim::api::types::{Kind, LabelSelector, Millis, Object, ObjectKey};
use crate::sim::api::{ApiRequest, DeleteOptions, PropagationPolicy};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::EventRecord;
use crate::sim::script::Host;

/// The most log lines one pass keeps (the rest are counted, not kept).
pub const MAX_LOG_LINES: usize = 50;
/// The most requests one pass may queue.
pub const MAX_REQUESTS: usize = 200;

/// One pass's `ctx`.
pub struct Pass<'a> {
    spec: &'a ScriptSpec,
    cache: &'a Cache,
    key: &'a ObjectKey,
    now: Millis,
    last_errors: Vec<Json>,
    requests: Vec<ApiRequest>,
    events: Vec<EventRecord>,
    logs: Vec<String>,
    dropped_logs: usize,
    reads: Vec<String>,
}

/// What a pass did, for the outcome.
pub struct Done {
    pub requests: Vec<ApiRequest>,
    pub events: Vec<EventRecord>,
    pub logs: Vec<String>,
    /// What it read, in words ("get Website default/web: found"), for the loop panel's observe.
    pub reads: String,
}

impl<'a> Pass<'a> {
    pub fn new(
        spec: &'a ScriptSpec,
        cache: &'a Cache,
        key: &'a ObjectKey,
        now: Millis,
        last_errors: Vec<Json>,
    ) -> Self {
        Pass {
            spec,
            cache,
            key,
            now,
            last_errors,
            requests: Vec::new(),
            events: Vec::new(),
            logs: Vec::new(),
            dropped_logs: 0,
            reads: Vec::new(),
        }
    }

    pub fn finish(mut self) -> Done {
        if self.dropped_logs > 0 {
            self.logs
                .push(format!("({} more log lines not kept)", self.dropped_logs));
        }
        Done {
            requests: self.requests,
            events: self.events,
            logs: self.logs,
            reads: self.reads.join("; "),
        }
    }

    /// The kind a script names, among those its document caches, with the error a client
    /// without that informer would meet.
    fn kind(&self, word: &Json) -> Result<Kind, String> {
        let word = word
            .as_str()
            .ok_or_else(|| "a kind is a string, such as \"Deployment\"".to_string())?;
        let t = self.spec.type_named(word).ok_or_else(|| {
            format!(
                "this controller does not cache {word:?}: name it in spec.for, spec.owns or spec.watches"
            )
        })?;
        t.resolve().ok_or_else(|| {
            format!(
                "the server doesn't have a resource type {:?} (is its CustomResourceDefinition applied?)",
                t.kind
            )
        })
    }

    fn namespace_arg(&self, kind: Kind, arg: Option<&Json>) -> String {
        if !kind.namespaced() {
            return String::new();
        }
        match arg.and_then(Json::as_str) {
            Some(ns) if !ns.is_empty() => ns.to_string(),
            _ => self.key.namespace.to_string(),
        }
    }

    fn get(&mut self, args: &[Json]) -> Result<Json, String> {
        let kind = self.kind(args.first().unwrap_or(&Json::Null))?;
        let name = args
            .get(1)
            .and_then(Json::as_str)
            .ok_or_else(|| "ctx.get(kind, name, namespace): name must be a string".to_string())?;
        let namespace = self.namespace_arg(kind, args.get(2));
        let key = ObjectKey::new(kind, &namespace, name);
        let found = self.cache.get(&key).map(|o| o.to_json());
        self.reads.push(format!(
            "get {} {}: {}",
            kind.as_str(),
            describe_key(&key),
            if found.is_some() {
                "found"
            } else {
                "not found"
            }
        ));
        Ok(found.unwrap_or(Json::Null))
    }

    fn list(&mut self, args: &[Json]) -> Result<Json, String> {
        let kind = self.kind(args.first().unwrap_or(&Json::Null))?;
        let opts = args.get(1).cloned().unwrap_or(Json::Null);
        let namespace = opts.get("namespace").and_then(Json::as_str);
        let selector = match opts.get("labelSelector") {
            None | Some(Json::Null) => None,
            Some(Json::String(s)) => Some(LabelSelector::parse(s)?),
            // The API server's own decoder of selectors (unknown fields refused, as there).
            Some(v) => Some(
                crate::sim::api::strict::decode_as::<LabelSelector>(v, &Default::default())
                    .map_err(|e| format!("labelSelector: {e}"))?,
            ),
        };
        // Field selectors as the API server reads them: `f=v`, `f==v` or `f!=v`, comma-separated.
        let fields: Vec<(String, bool, String)> =
            match opts.get("fieldSelector").and_then(Json::as_str) {
                None => Vec::new(),
                Some(s) => s
                    .split(',')
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| {
                        let (f, equal, v) = if let Some((f, v)) = p.split_once("!=") {
                            (f, false, v)
                        } else if let Some((f, v)) = p.split_once("==") {
                            (f, true, v)
                        } else {
                            let (f, v) = p.split_once('=').ok_or_else(|| {
                                format!("fieldSelector {s:?}: expected field=value or field!=value")
                            })?;
                            (f, true, v)
                        };
                        Ok((f.trim().to_string(), equal, v.trim().to_string()))
                    })
                    .collect::<Result<_, String>>()?,
            };
        let items: Vec<Json> = self
            .cache
            .list(kind)
            .filter(|o| namespace.is_none_or(|ns| o.meta().namespace == ns))
            .filter(|o| {
                selector
                    .as_ref()
                    .is_none_or(|s| s.matches(&o.meta().labels))
            })
            .map(|o| o.to_json())
            .filter(|j| {
                fields.iter().all(|(f, equal, v)| {
                    (field_value(j, f).as_deref() == Some(v.as_str())) == *equal
                })
            })
            .collect();
        self.reads
            .push(format!("list {}: {}", kind.plural(), items.len()));
        Ok(Json::Array(items))
    }

    fn object_arg(&self, arg: Option<&Json>, call: &str) -> Result<Object, String> {
        let value = arg
            .filter(|v| v.is_object())
            .ok_or_else(|| format!("ctx.{call}(object): the object is missing"))?;
        let kind_word = value.get("kind").and_then(Json::as_str).unwrap_or_default();
        let api_version = value
            .get("apiVersion")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let kind = Kind::of_type(api_version, kind_word).ok_or_else(|| {
            format!("no matches for kind {kind_word:?} in version {api_version:?}")
        })?;
        let mut value = value.clone();
        if kind.namespaced() {
            if let Some(meta) = value.get_mut("metadata").and_then(Json::as_object_mut) {
                if meta
                    .get("namespace")
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .is_empty()
                {
                    meta.insert("namespace".into(), json!(self.key.namespace));
                }
            }
        }
        Object::from_json(kind, value).map_err(|e| e.to_string())
    }

    fn queue(&mut self, req: ApiRequest) -> Result<Json, String> {
        if self.requests.len() >= MAX_REQUESTS {
            return Err(format!(
                "a pass may queue at most {MAX_REQUESTS} requests; return {{requeue: true}} and do the rest in the next pass"
            ));
        }
        self.requests.push(req);
        Ok(Json::Null)
    }

    /// The object a `(kind, name, ...)` call names; its namespace is argument `namespace_at`
    /// (the pass's key's namespace when absent).
    fn key_args(
        &self,
        args: &[Json],
        call: &str,
        namespace_at: usize,
    ) -> Result<ObjectKey, String> {
        let kind = self.kind(args.first().unwrap_or(&Json::Null))?;
        let name = args
            .get(1)
            .and_then(Json::as_str)
            .ok_or_else(|| format!("ctx.{call}(kind, name, ...): name must be a string"))?;
        Ok(ObjectKey::new(
            kind,
            &self.namespace_arg(kind, args.get(namespace_at)),
            name,
        ))
    }

    fn event(&mut self, args: &[Json]) -> Result<Json, String> {
        let obj = self.object_arg(args.first(), "event")?;
        let type_ = match args.get(1).and_then(Json::as_str) {
            Some("Warning") => "Warning",
            Some("Normal") | None => "Normal",
            Some(other) => {
                return Err(format!(
                    "an Event's type is Normal or Warning, not {other:?}"
                ))
            }
        };
        let reason = args.get(2).and_then(Json::as_str).unwrap_or_default();
        let message = args.get(3).and_then(Json::as_str).unwrap_or_default();
        let record = if type_ == "Warning" {
            EventRecord::warning(&obj, reason, message)
        } else {
            EventRecord::normal(&obj, reason, message)
        };
        self.events.push(record);
        Ok(Json::Null)
    }

    fn log(&mut self, args: &[Json]) -> Json {
        if self.logs.len() >= MAX_LOG_LINES {
            self.dropped_logs += 1;
            return Json::Null;
        }
        let line: Vec<String> = args
            .iter()
            .map(|a| match a {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        self.logs.push(line.join(" "));
        Json::Null
    }
}

impl Host for Pass<'_> {
    fn call(&mut self, object: &str, method: &str, args: Vec<Json>) -> Result<Json, String> {
        if object != "ctx" {
            return Err(format!("{object}.{method} is not a function"));
        }
        match method {
            "get" => self.get(&args),
            "list" => self.list(&args),
            "create" => {
                let obj = self.object_arg(args.first(), "create")?;
                self.queue(ApiRequest::Create(obj))
            }
            "update" => {
                let obj = self.object_arg(args.first(), "update")?;
                self.queue(ApiRequest::Update(obj))
            }
            "updateStatus" => {
                let obj = self.object_arg(args.first(), "updateStatus")?;
                self.queue(ApiRequest::UpdateStatus(obj))
            }
            "patch" | "patchStatus" => {
                let key = self.key_args(&args, method, 3)?;
                let patch = args
                    .get(2)
                    .filter(|p| p.is_object())
                    .cloned()
                    .ok_or_else(|| "ctx.patch(kind, name, patch, namespace): the patch is an object (a JSON merge patch)".to_string())?;
                self.queue(ApiRequest::Patch {
                    key,
                    patch,
                    status: method == "patchStatus",
                })
            }
            "delete" => {
                let key = self.key_args(&args, "delete", 2)?;
                let options = DeleteOptions {
                    propagation_policy: Some(PropagationPolicy::Background),
                    ..DeleteOptions::default()
                };
                self.queue(ApiRequest::Delete { key, options })
            }
            "event" => self.event(&args),
            "log" => Ok(self.log(&args)),
            "controllerRef" => {
                let obj = args.first().filter(|o| o.is_object()).ok_or_else(|| {
                    "ctx.controllerRef(object): the object is missing".to_string()
                })?;
                let meta = obj.get("metadata").cloned().unwrap_or(Json::Null);
                Ok(json!({
                    "apiVersion": obj.get("apiVersion").cloned().unwrap_or(Json::Null),
                    "kind": obj.get("kind").cloned().unwrap_or(Json::Null),
                    "name": meta.get("name").cloned().unwrap_or(Json::Null),
                    "uid": meta.get("uid").cloned().unwrap_or(Json::Null),
                    "controller": true,
                    "blockOwnerDeletion": true,
                }))
            }
            "now" => Ok(json!(self.now)),
            "lastErrors" => Ok(Json::Array(self.last_errors.clone())),
            other => Err(format!("ctx.{other} is not a function")),
        }
    }
}

/// `namespace/name`, or `name` for a cluster-scoped object.
fn describe_key(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        key.name.to_string()
    } else {
        format!("{}/{}", key.namespace, key.name)
    }
}

/// The value of a dotted field path (`metadata.name`, `spec.nodeName`, `status.phase`) as a
/// field selector compares it.
fn field_value(obj: &Json, path: &str) -> Option<String> {
    let mut v = obj;
    for part in path.split('.') {
        v = v.get(part)?;
    }
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Null => None,
        other => Some(other.to_string()),
    }
}

/// What a `reconcile` return value asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing: wait for the next change or resync.
    Done,
    /// `{requeueAfter: "30s"}` (or a number of milliseconds).
    After(Millis),
    /// `{requeue: true}`: again after the queue's rate-limited back-off.
    RateLimited,
}

/// Reads a `reconcile` return value as controller-runtime reads a `Result`.
pub fn next_of(value: &Json) -> Result<Next, String> {
    let Some(obj) = value.as_object() else {
        return Ok(Next::Done);
    };
    if let Some(after) = obj.get("requeueAfter") {
        let ms = match after {
            Json::Number(n) => n
                .as_f64()
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .map(|ms| ms as Millis)
                .ok_or_else(|| "requeueAfter must not be negative".to_string())?,
            Json::String(s) => {
                crate::sim::time::parse_duration(s).map_err(|e| format!("requeueAfter: {e}"))?
            }
            _ => return Err("requeueAfter is a duration such as \"30s\"".into()),
        };
        if ms > 0 {
            return Ok(Next::After(ms));
        }
    }
    if obj.get("requeue") == Some(&Json::Bool(true)) {
        return Ok(Next::RateLimited);
    }
    Ok(Next::Done)
}
