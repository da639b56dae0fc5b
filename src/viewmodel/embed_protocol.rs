//! The embed protocol: the messages a course page and an embedded playground exchange with
//! `postMessage`, checked here without a browser.
//!
//! ```text
//! host → app   {type: "kubeloop:init", id}                                    handshake (retried)
//! app  → host  {type: "kubeloop:ready", id, version, protocol, loaded}
//! host → app   {type: "kubeloop:call", id, callId, method, args: [...]}
//! app  → host  {type: "kubeloop:result", id, callId, ok: true, value} | {…, ok: false, error}
//! app  → host  {type: "kubeloop:event", id, event, data}                      see [`Watcher`]
//! app  → any   {type: "kubeloop:hello", protocol}                             "I am up: (re)send init"
//! ```
//!
//! Everything inbound is hostile until proven otherwise: [`parse_inbound`] checks the envelope
//! (types, lengths, a known method, the argument types) and returns what to do, or why not.
//! The browser side ([`crate::ui`]'s embed module) adds the origin and source checks and the
//! size cap before the message is even turned into JSON.

use serde_json::{json, Value as Json};

use crate::sim::api::types::{Kind, Millis};
use crate::sim::faults::Fault;
use crate::sim::handoff::HandOff;
use crate::sim::machinery::trace::{EventTrace, TraceKind};
use crate::sim::session::Session;
use crate::sim::time::{clock, parse_duration};

/// The protocol version this build speaks (`ready.protocol`). Additive changes keep it.
pub const PROTOCOL: u32 = 1;
/// The longest message accepted, in characters of its JSON form (a 1 MiB scenario plus room).
pub const MAX_MESSAGE_CHARS: usize = (1 << 20) + 16 * 1024;
/// The longest `id` / string `callId` accepted.
pub const MAX_ID_CHARS: usize = 128;
/// The most arguments a call may carry.
pub const MAX_ARGS: usize = 4;
/// The longest kubectl command line accepted.
pub const MAX_COMMAND_CHARS: usize = 4096;
/// The furthest one `advance` call may move the clock (a longer one would freeze the page).
pub const MAX_ADVANCE_MS: Millis = 60 * 60 * 1000;
/// The most events posted per poll; the rest are counted in a `dropped` event.
pub const MAX_EVENTS_PER_POLL: usize = 400;

/// What a host may ask.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// `kubectl apply -f` of this YAML (it is also put in the editor).
    Apply(String),
    /// Loads this text as a scenario (as a share link would), with an optional seed override.
    Load {
        text: String,
        seed: Option<u64>,
    },
    Inject(Fault),
    Kubectl(String),
    Play,
    Pause,
    /// Runs to the next visible move of the loop.
    Step,
    SetSpeed(f64),
    /// Deterministic fast-forward by this many simulated milliseconds.
    Advance(Millis),
    /// Time travel: the clock to this simulated time of the run, back or forward.
    Seek(Millis),
    GetState,
    GetShareUrl,
    RunChecks,
    /// The lesson's try-this steps: offered, done, and what each waits for.
    LessonSteps,
    /// Runs to the next hand-off between components (the toolbar's Hand-off, H).
    StepHandOff,
    /// The toolbar's switch: pause playing when a lesson check passes or fails.
    SetPauseOnCheck(bool),
    /// The toolbar's switch: slow motion for a moment after each action.
    SetSlowMotion(bool),
}

/// A duration argument: a string such as `"30s"`, or milliseconds.
fn duration_arg(args: &[Json]) -> Result<Millis, String> {
    match args.first() {
        Some(Json::Number(n)) => match n.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(x as Millis),
            _ => Err("expected a duration such as \"30s\" or milliseconds".into()),
        },
        Some(Json::String(s)) => parse_duration(s),
        _ => Err("expected a duration such as \"30s\" or milliseconds".into()),
    }
}

/// The method names, as the SDK spells them.
pub const METHODS: &[&str] = &[
    "apply",
    "load",
    "inject",
    "kubectl",
    "play",
    "pause",
    "step",
    "setSpeed",
    "advance",
    "seek",
    "getState",
    "getShareUrl",
    "runChecks",
    "lessonSteps",
    "stepHandOff",
    "setPauseOnCheck",
    "setSlowMotion",
];

/// A call's id: the host's number or string, echoed in the result.
pub type CallId = Json;

/// A checked inbound message.
#[derive(Clone, Debug, PartialEq)]
pub enum Inbound {
    Init {
        id: String,
    },
    Call {
        id: String,
        call_id: CallId,
        call: Call,
    },
}

/// Why an inbound message was not acted on.
#[derive(Clone, Debug, PartialEq)]
pub enum Rejected {
    /// Not a Kubeloop message at all (other scripts use postMessage too): ignore silently.
    Foreign,
    /// A Kubeloop message that breaks the schema: warn and ignore. When the envelope was good
    /// enough to name a call, the host gets an error result for it (nothing else happens).
    Malformed {
        reason: String,
        reply: Option<(String, CallId)>,
    },
}

fn malformed(reason: impl Into<String>) -> Rejected {
    Rejected::Malformed {
        reason: reason.into(),
        reply: None,
    }
}

fn short_string(v: Option<&Json>, what: &str) -> Result<String, Rejected> {
    match v {
        Some(Json::String(s)) if !s.is_empty() && s.chars().count() <= MAX_ID_CHARS => {
            Ok(s.clone())
        }
        Some(Json::Number(n)) if n.is_u64() => Ok(n.to_string()),
        _ => Err(malformed(format!(
            "{what} must be a non-empty string of at most {MAX_ID_CHARS} characters"
        ))),
    }
}

fn call_id(v: Option<&Json>) -> Result<CallId, Rejected> {
    match v {
        Some(Json::Number(n)) if n.as_u64().is_some_and(|n| n < (1 << 53)) => {
            Ok(Json::Number(n.clone()))
        }
        Some(Json::String(s)) if !s.is_empty() && s.chars().count() <= MAX_ID_CHARS => {
            Ok(Json::String(s.clone()))
        }
        _ => Err(malformed("callId must be a whole number or a short string")),
    }
}

/// Checks one inbound message (already parsed from JSON, already under [`MAX_MESSAGE_CHARS`]).
pub fn parse_inbound(msg: &Json) -> Result<Inbound, Rejected> {
    let Json::Object(m) = msg else {
        return Err(Rejected::Foreign);
    };
    let Some(Json::String(ty)) = m.get("type") else {
        return Err(Rejected::Foreign);
    };
    let Some(kind) = ty.strip_prefix("kubeloop:") else {
        return Err(Rejected::Foreign);
    };
    match kind {
        "init" => Ok(Inbound::Init {
            id: short_string(m.get("id"), "id")?,
        }),
        "call" => {
            let id = short_string(m.get("id"), "id")?;
            let cid = call_id(m.get("callId"))?;
            let fail = |reason: String| Rejected::Malformed {
                reason,
                reply: Some((id.clone(), cid.clone())),
            };
            let Some(Json::String(method)) = m.get("method") else {
                return Err(fail("method must be a string".into()));
            };
            let args: &[Json] = match m.get("args") {
                None | Some(Json::Null) => &[],
                Some(Json::Array(a)) if a.len() <= MAX_ARGS => a,
                Some(Json::Array(_)) => {
                    return Err(fail(format!("at most {MAX_ARGS} arguments")));
                }
                Some(_) => return Err(fail("args must be an array".into())),
            };
            let call = parse_call(method, args).map_err(|e| fail(format!("{method}: {e}")))?;
            Ok(Inbound::Call {
                id,
                call_id: cid,
                call,
            })
        }
        "ready" | "result" | "event" | "hello" => Err(Rejected::Foreign),
        other => Err(malformed(format!(
            "unknown message type \"kubeloop:{}\"",
            other.chars().take(40).collect::<String>()
        ))),
    }
}

fn text_arg(args: &[Json], what: &str, max: usize) -> Result<String, String> {
    match args.first() {
        Some(Json::String(s)) if s.len() <= max => Ok(s.clone()),
        Some(Json::String(_)) => Err(format!("{what} is longer than {max} bytes")),
        _ => Err(format!("expected {what} (a string)")),
    }
}

fn seed_arg(v: Option<&Json>) -> Result<Option<u64>, String> {
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| "the seed must be a whole number".to_string()),
        Some(_) => Err("the seed must be a whole number".into()),
    }
}

fn parse_call(method: &str, args: &[Json]) -> Result<Call, String> {
    const MAX_TEXT: usize = crate::sim::share::MAX_INFLATED;
    Ok(match method {
        "apply" => Call::Apply(text_arg(args, "the YAML", MAX_TEXT)?),
        "load" => match args.first() {
            Some(Json::Object(o)) => {
                let text = match o.get("yaml").or_else(|| o.get("text")) {
                    Some(Json::String(s)) if s.len() <= MAX_TEXT => s.clone(),
                    _ => return Err("expected {yaml: string, seed?: number}".into()),
                };
                Call::Load {
                    text,
                    seed: seed_arg(o.get("seed"))?,
                }
            }
            _ => Call::Load {
                text: text_arg(args, "the scenario text", MAX_TEXT)?,
                seed: seed_arg(args.get(1))?,
            },
        },
        "inject" => {
            let v = match args.first() {
                Some(Json::String(s)) if s.len() <= 64 * 1024 => serde_json::from_str::<Json>(s)
                    .map_err(|e| format!("the fault is not JSON: {e}"))?,
                Some(o @ Json::Object(_)) => o.clone(),
                _ => {
                    return Err("expected a fault such as {type: 'DeletePod', pod: 'web-…'}".into())
                }
            };
            Call::Inject(serde_json::from_value::<Fault>(v).map_err(|e| e.to_string())?)
        }
        "kubectl" => {
            let cmd = text_arg(args, "the command line", MAX_COMMAND_CHARS)?;
            if cmd.trim().is_empty() {
                return Err("the command line is empty".into());
            }
            Call::Kubectl(cmd)
        }
        "play" => Call::Play,
        "pause" => Call::Pause,
        "step" => Call::Step,
        "setSpeed" => match args.first().and_then(Json::as_f64) {
            Some(s) if s.is_finite() && s > 0.0 => Call::SetSpeed(s.clamp(0.01, 1000.0)),
            _ => return Err("expected a positive number".into()),
        },
        "advance" => {
            let ms = duration_arg(args)?;
            if ms > MAX_ADVANCE_MS {
                return Err("at most 1h per call".into());
            }
            Call::Advance(ms)
        }
        "seek" => Call::Seek(duration_arg(args)?),
        "getState" => Call::GetState,
        "getShareUrl" => Call::GetShareUrl,
        "runChecks" => Call::RunChecks,
        "lessonSteps" => Call::LessonSteps,
        "stepHandOff" => Call::StepHandOff,
        "setPauseOnCheck" | "setSlowMotion" => {
            let Some(on) = args.first().and_then(Json::as_bool) else {
                return Err("expected true or false".into());
            };
            if method == "setPauseOnCheck" {
                Call::SetPauseOnCheck(on)
            } else {
                Call::SetSlowMotion(on)
            }
        }
        other => {
            return Err(format!(
                "unknown method \"{}\" (known: {})",
                other.chars().take(40).collect::<String>(),
                METHODS.join(", ")
            ))
        }
    })
}

/// The handshake reply.
pub fn ready_message(id: &str, version: &str, loaded: bool) -> Json {
    json!({"type": "kubeloop:ready", "id": id, "version": version, "protocol": PROTOCOL, "loaded": loaded})
}

/// A call's result.
pub fn result_message(id: &str, call_id: &CallId, result: Result<Json, String>) -> Json {
    match result {
        Ok(value) => {
            json!({"type": "kubeloop:result", "id": id, "callId": call_id, "ok": true, "value": value})
        }
        Err(error) => {
            json!({"type": "kubeloop:result", "id": id, "callId": call_id, "ok": false, "error": error})
        }
    }
}

/// An event.
pub fn event_message(id: &str, event: &str, data: Json) -> Json {
    json!({"type": "kubeloop:event", "id": id, "event": event, "data": data})
}

/// What a newly started playground announces to whatever page holds it (no content, any origin).
pub fn hello_message() -> Json {
    json!({"type": "kubeloop:hello", "protocol": PROTOCOL})
}

/// One Deployment's replica counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeploymentCounts {
    pub namespace: String,
    pub name: String,
    /// `spec.replicas` (1 when unset).
    pub replicas: i32,
    /// `status.replicas`: every pod the Deployment's ReplicaSets own.
    pub current: i32,
    pub updated: i32,
    pub ready: i32,
    pub available: i32,
    /// The controller has seen the newest spec (`observedGeneration >= generation`).
    pub observed: bool,
}

impl DeploymentCounts {
    /// This Deployment has converged: the controller saw the newest spec and every replica is
    /// updated, ready and available, with no extra pods left over.
    pub fn converged(&self) -> bool {
        self.observed
            && self.current == self.replicas
            && self.updated == self.replicas
            && self.ready == self.replicas
            && self.available == self.replicas
    }

    /// As the host sees it.
    pub fn to_json(&self) -> Json {
        json!({
            "namespace": self.namespace, "name": self.name, "replicas": self.replicas,
            "current": self.current, "updated": self.updated, "ready": self.ready,
            "available": self.available, "converged": self.converged(),
        })
    }
}

/// Every Deployment's counts, in store order.
pub fn deployment_counts(session: &Session) -> Vec<DeploymentCounts> {
    session
        .sim
        .api()
        .list(Kind::Deployment)
        .filter_map(|o| o.as_deployment())
        .map(|d| DeploymentCounts {
            namespace: d.metadata.namespace.to_string(),
            name: d.metadata.name.to_string(),
            replicas: d.spec.replicas.unwrap_or(1),
            current: d.status.replicas,
            updated: d.status.updated_replicas,
            ready: d.status.ready_replicas,
            available: d.status.available_replicas,
            observed: d.status.observed_generation >= d.metadata.generation,
        })
        .collect()
}

/// True when there is at least one Deployment and every Deployment has converged.
pub fn converged(session: &Session) -> bool {
    let all = deployment_counts(session);
    !all.is_empty() && all.iter().all(DeploymentCounts::converged)
}

/// The scenario's checks as the host sees them (`passed` is null while undecided).
/// `stepHandOff()`: `{found, at, message}`, where `found` is false when nothing was left to run
/// or no hand-off came within the caps (`at` is then null).
pub fn hand_off_json(outcome: &HandOff) -> Json {
    let at = match outcome {
        HandOff::Found { at, .. } => Some(*at),
        HandOff::Idle | HandOff::GaveUp { .. } => None,
    };
    json!({ "found": at.is_some(), "at": at, "message": outcome.message() })
}

pub fn checks_json(session: &Session) -> Json {
    Json::Array(
        session
            .checks()
            .into_iter()
            .map(|c| {
                json!({"name": c.name, "passed": c.passed, "message": c.message,
                    "waitingFor": c.waiting_for})
            })
            .collect(),
    )
}

/// `lessonSteps()`: each try-this step with whether it is offered (`enabled`), whether it is
/// done and when, when the lesson's timeline would do it (`at`, seconds), and what it waits for.
pub fn lesson_steps_json(session: &Session) -> Json {
    Json::Array(
        session
            .scenario
            .spec
            .try_this
            .iter()
            .zip(session.try_this_statuses())
            .map(|(t, st)| {
                json!({"label": t.label, "id": t.id, "enabled": st.enabled,
                    "done": st.done_at.is_some(), "doneAt": st.done_at.map(|ms| ms as f64 / 1000.0),
                    "at": st.at.map(|ms| ms as f64 / 1000.0), "waitingFor": st.waiting_for})
            })
            .collect(),
    )
}

/// Turns what happened in a session into outbound events, incrementally.
///
/// Reads the trace since the last poll: each Kubernetes Event becomes `event`, each fault (and
/// heal) `fault`, each `apply` `applied`, each decided check `checkPassed` / `checkFailed`; and
/// it compares convergence with the last poll (`converged` when every Deployment reaches
/// updated = ready = available = replicas, `diverged` when that stops being true). A session
/// replaced under it (Reset, a loaded scenario) is noticed by its clock or trace going back.
#[derive(Clone, Debug, Default)]
pub struct Watcher {
    after: u64,
    last_now: Millis,
    converged: Option<bool>,
}

impl Watcher {
    /// A watcher that reports only what happens from now on.
    pub fn starting_at(session: &Session) -> Watcher {
        Watcher {
            after: session.sim.trace().next_seq().saturating_sub(1),
            last_now: session.sim.now(),
            converged: Some(converged(session)),
        }
    }

    /// Forget the position: the next poll reads the session from its first entry.
    pub fn restart(&mut self) {
        *self = Watcher::default();
    }

    /// The events since the last poll, oldest first, as (name, data).
    pub fn poll(&mut self, session: &Session) -> Vec<(&'static str, Json)> {
        let trace = session.sim.trace();
        let now = session.sim.now();
        if trace.next_seq() <= self.after || now < self.last_now {
            self.restart();
        }
        self.last_now = now;
        let mut out = Vec::new();
        let mut dropped = 0usize;
        for e in trace.since(self.after) {
            self.after = e.seq;
            let item = match &e.kind {
                TraceKind::Event(tr) => {
                    let EventTrace {
                        event_type,
                        reason,
                        message,
                        object,
                        source,
                    } = &**tr;
                    Some((
                        "event",
                        json!({"time": e.t, "type": event_type, "reason": reason, "message": message, "object": object, "source": source}),
                    ))
                }
                TraceKind::Fault { fault, description } => Some((
                    "fault",
                    json!({"time": e.t, "fault": fault, "description": description}),
                )),
                TraceKind::Command {
                    command,
                    output,
                    ok,
                } if command.starts_with("apply") || command.starts_with("kubectl apply") => {
                    Some(("applied", json!({"time": e.t, "ok": ok, "output": output})))
                }
                TraceKind::Check {
                    name,
                    passed,
                    message,
                } => Some((
                    if *passed {
                        "checkPassed"
                    } else {
                        "checkFailed"
                    },
                    json!({"time": e.t, "name": name, "message": message}),
                )),
                _ => None,
            };
            if let Some(item) = item {
                if out.len() < MAX_EVENTS_PER_POLL {
                    out.push(item);
                } else {
                    dropped += 1;
                }
            }
        }
        if dropped > 0 {
            out.push(("dropped", json!({"count": dropped})));
        }
        let c = converged(session);
        if self.converged != Some(c) {
            let was = self.converged.replace(c);
            if c || was == Some(true) {
                let deployments: Vec<Json> = deployment_counts(session)
                    .iter()
                    .map(|d| d.to_json())
                    .collect();
                out.push((
                    if c { "converged" } else { "diverged" },
                    json!({"time": now, "clock": clock(now), "deployments": deployments}),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::examples;

    fn call(method: &str, args: Json) -> Result<Inbound, Rejected> {
        parse_inbound(
            &json!({"type": "kubeloop:call", "id": "kl-1", "callId": 7, "method": method, "args": args}),
        )
    }

    fn reason(r: Result<Inbound, Rejected>) -> String {
        match r {
            Err(Rejected::Malformed { reason, .. }) => reason,
            other => panic!("expected a malformed message, got {other:?}"),
        }
    }

    #[test]
    fn the_handshake_and_every_method_parse() {
        assert_eq!(
            parse_inbound(&json!({"type": "kubeloop:init", "id": "kl-1"})),
            Ok(Inbound::Init { id: "kl-1".into() })
        );
        let ok = |m: &str, a: Json, c: Call| {
            assert_eq!(
                call(m, a),
                Ok(Inbound::Call {
                    id: "kl-1".into(),
                    call_id: json!(7),
                    call: c
                }),
                "{m}"
            )
        };
        ok(
            "apply",
            json!(["kind: Pod\n"]),
            Call::Apply("kind: Pod\n".into()),
        );
        ok(
            "load",
            json!(["x: 1\n", 9]),
            Call::Load {
                text: "x: 1\n".into(),
                seed: Some(9),
            },
        );
        ok(
            "load",
            json!([{"yaml": "x", "seed": 3}]),
            Call::Load {
                text: "x".into(),
                seed: Some(3),
            },
        );
        ok(
            "kubectl",
            json!(["get pods"]),
            Call::Kubectl("get pods".into()),
        );
        ok("play", json!([]), Call::Play);
        ok("pause", Json::Null, Call::Pause);
        ok("step", json!([]), Call::Step);
        ok("setSpeed", json!([2000]), Call::SetSpeed(1000.0));
        ok("advance", json!(["30s"]), Call::Advance(30_000));
        ok("advance", json!([1500]), Call::Advance(1500));
        ok("seek", json!(["1m30s"]), Call::Seek(90_000));
        ok("seek", json!([0]), Call::Seek(0));
        ok("getState", json!([]), Call::GetState);
        ok("getShareUrl", json!([]), Call::GetShareUrl);
        ok("runChecks", json!([]), Call::RunChecks);
        ok("lessonSteps", json!([]), Call::LessonSteps);
        ok("stepHandOff", json!([]), Call::StepHandOff);
        ok(
            "setPauseOnCheck",
            json!([false]),
            Call::SetPauseOnCheck(false),
        );
        ok("setSlowMotion", json!([true]), Call::SetSlowMotion(true));
        let Ok(Inbound::Call {
            call: Call::Inject(f),
            ..
        }) = call("inject", json!([{"type": "DeletePod", "pod": "web-1"}]))
        else {
            panic!("inject did not parse");
        };
        assert_eq!(f.name(), "DeletePod");
        assert!(matches!(
            call(
                "inject",
                json!(["{\"type\":\"NodeDown\",\"node\":\"node-2\"}"])
            ),
            Ok(Inbound::Call {
                call: Call::Inject(_),
                ..
            })
        ));
    }

    #[test]
    fn other_scripts_messages_are_ignored_silently() {
        for m in [
            json!("hello"),
            json!(null),
            json!([1, 2]),
            json!({"type": 3}),
            json!({"source": "react-devtools"}),
            json!({"type": "webpackOk"}),
            json!({"type": "kubeloop:ready", "id": "x"}),
        ] {
            assert_eq!(parse_inbound(&m), Err(Rejected::Foreign), "{m}");
        }
    }

    #[test]
    fn malformed_envelopes_are_rejected_without_a_reply() {
        for m in [
            json!({"type": "kubeloop:init"}),
            json!({"type": "kubeloop:init", "id": ""}),
            json!({"type": "kubeloop:init", "id": "x".repeat(MAX_ID_CHARS + 1)}),
            json!({"type": "kubeloop:init", "id": {"a": 1}}),
            json!({"type": "kubeloop:call", "id": "a", "method": "play"}),
            json!({"type": "kubeloop:call", "id": "a", "callId": -1, "method": "play"}),
            json!({"type": "kubeloop:call", "id": "a", "callId": 1.5, "method": "play"}),
            json!({"type": "kubeloop:call", "id": "a", "callId": [1], "method": "play"}),
            json!({"type": "kubeloop:evil"}),
        ] {
            assert!(
                matches!(
                    parse_inbound(&m),
                    Err(Rejected::Malformed { reply: None, .. })
                ),
                "{m}"
            );
        }
    }

    #[test]
    fn a_bad_call_gets_an_error_reply_and_does_nothing() {
        let r = call("rm -rf", json!([]));
        assert!(
            matches!(&r, Err(Rejected::Malformed { reply: Some((id, cid)), .. }) if id == "kl-1" && *cid == json!(7))
        );
        assert!(reason(r).contains("unknown method"));
        assert!(reason(call("apply", json!([42]))).contains("expected the YAML"));
        assert!(reason(call(
            "apply",
            json!(["x".repeat(crate::sim::share::MAX_INFLATED + 1)])
        ))
        .contains("longer"));
        assert!(reason(call("setSpeed", json!(["fast"]))).contains("positive number"));
        assert!(reason(call("setSpeed", json!([-1]))).contains("positive number"));
        assert!(reason(call("advance", json!(["2h"]))).contains("at most 1h"));
        assert!(reason(call("advance", json!(["soon"]))).contains("advance"));
        assert!(reason(call("inject", json!([{"type": "Meteor"}]))).contains("inject"));
        assert!(reason(call(
            "inject",
            json!([{"type": "DeletePod", "pod": "x", "extra": 1}])
        ))
        .contains("inject"));
        assert!(reason(call("kubectl", json!(["   "]))).contains("empty"));
        assert!(reason(call("play", json!({"a": 1}))).contains("args must be an array"));
        assert!(reason(call("play", json!([1, 2, 3, 4, 5]))).contains("at most"));
        assert!(reason(call("load", json!([{"seed": 1}]))).contains("expected {yaml"));
    }

    #[test]
    fn messages_have_the_documented_shape() {
        assert_eq!(
            ready_message("kl-1", "0.1.0", true),
            json!({"type": "kubeloop:ready", "id": "kl-1", "version": "0.1.0", "protocol": 1, "loaded": true})
        );
        assert_eq!(
            result_message("kl-1", &json!(3), Err("no".into())),
            json!({"type": "kubeloop:result", "id": "kl-1", "callId": 3, "ok": false, "error": "no"})
        );
        assert_eq!(
            result_message("kl-1", &json!("c"), Ok(json!(true)))["value"],
            json!(true)
        );
        assert_eq!(
            event_message("a", "converged", json!({}))["event"],
            "converged"
        );
    }

    #[test]
    fn lesson_steps_say_which_step_is_offered_and_what_the_others_wait_for() {
        let text = examples::by_name("node-dies").unwrap();
        let mut s = Session::load("node-dies.yaml", text, None).expect("the lesson loads");
        let steps = lesson_steps_json(&s);
        assert_eq!(steps[0]["label"], "Power off node-2");
        assert_eq!(steps[0]["enabled"], false, "not before web is Available");
        assert_eq!(
            steps[0]["waitingFor"],
            "after “web is Available before the failure” passes"
        );
        assert_eq!(steps[0]["at"], 30.0);
        s.advance_to(20_000, usize::MAX);
        let steps = lesson_steps_json(&s);
        assert_eq!(steps[0]["enabled"], true);
        assert_eq!(steps[0]["waitingFor"], Json::Null);
        let checks = checks_json(&s);
        assert_eq!(
            checks[1]["waitingFor"], "after you power off node-2",
            "{checks}"
        );
    }

    #[test]
    fn the_watcher_reports_events_faults_checks_and_convergence_once_each() {
        let text = examples::by_name("thermostat").unwrap();
        let mut s = Session::load("thermostat.yaml", text, None).expect("the lesson loads");
        let mut w = Watcher::default();
        let first = w.poll(&s);
        assert!(
            !first.iter().any(|(n, _)| *n == "converged"),
            "nothing runs at t=0"
        );
        s.advance_to(60_000, usize::MAX);
        let mut seen = w.poll(&s);
        let names: Vec<&str> = seen.iter().map(|(n, _)| *n).collect();
        assert!(names.contains(&"event"), "{names:?}");
        assert_eq!(
            names.iter().filter(|n| **n == "converged").count(),
            1,
            "{names:?}"
        );
        assert!(w.poll(&s).is_empty(), "nothing new, nothing posted");

        // The lesson's first step, from the fault menu.
        s.inject(
            serde_json::from_value(json!({"type": "DeletePod", "selector": "app=web"})).unwrap(),
        )
        .unwrap();
        s.advance_to(61_000, usize::MAX);
        let evs = w.poll(&s);
        seen.extend(evs.iter().cloned());
        let fault = evs
            .iter()
            .find(|(n, _)| *n == "fault")
            .expect("a fault event");
        assert_eq!(fault.1["fault"], "DeletePod");
        assert!(evs.iter().any(|(n, _)| *n == "diverged"), "{evs:?}");
        s.advance_to(120_000, usize::MAX);
        let evs = w.poll(&s);
        assert!(evs.iter().any(|(n, _)| *n == "converged"));
        seen.extend(evs);
        assert!(
            seen.iter().any(|(n, d)| *n == "checkPassed"
                && d["name"].as_str().unwrap().contains("Available again")),
            "{seen:?}"
        );
    }

    #[test]
    fn a_replaced_session_is_read_from_its_start() {
        let mut s = Session::load("a.yaml", examples::DEFAULT_MANIFEST, None).unwrap();
        s.advance_to(60_000, usize::MAX);
        let mut w = Watcher::starting_at(&s);
        assert!(w.poll(&s).is_empty());
        let mut fresh = Session::load("a.yaml", examples::DEFAULT_MANIFEST, None).unwrap();
        fresh.advance_to(30_000, usize::MAX);
        let evs = w.poll(&fresh);
        assert!(
            evs.iter().any(|(n, _)| *n == "event"),
            "the new session's events are reported"
        );
        assert!(
            evs.iter()
                .any(|(n, _)| *n == "diverged" || *n == "converged")
                || converged(&fresh)
        );
    }

    #[test]
    fn a_loaded_scenario_runs_in_the_playground_exactly_as_the_cli_runs_it() {
        use crate::viewmodel::Playground;
        let text = examples::by_name("node-dies").unwrap();
        let mut p = Playground::new(1);
        p.apply(examples::DEFAULT_MANIFEST);
        p.advance_by(5_000);
        p.load_scenario(text, None).expect("the lesson loads");
        assert_eq!(
            p.now(),
            0,
            "a loaded scenario starts at t=0, like `kubeloop run`"
        );
        assert_eq!(p.seed(), 11, "the scenario's seed");
        p.advance_by(90_000);
        let mut cli = Session::load("playground.yaml", text, None).unwrap();
        cli.advance_to(90_000, usize::MAX);
        assert_eq!(p.session.state_json(), cli.state_json());

        let before = p.session.state_json();
        let err = p
            .load_scenario("kind: Deployment\nspec: [", Some(3))
            .expect_err("broken YAML is refused");
        assert!(!err.is_empty());
        assert_eq!(
            p.session.state_json(),
            before,
            "a broken scenario changes nothing"
        );
        assert_eq!(
            p.last_apply.as_ref().map(|r| r.ok),
            Some(false),
            "its diagnostics show"
        );

        p.load_scenario(text, Some(5)).unwrap();
        assert_eq!(p.seed(), 5, "a link's seed overrides the scenario's");
    }

    #[test]
    fn an_apply_from_the_editor_or_the_console_is_reported_once_as_applied() {
        let mut s = Session::new(1);
        let mut w = Watcher::starting_at(&s);
        assert!(s.apply_text("a.yaml", examples::DEFAULT_MANIFEST).ok);
        assert!(
            s.kubectl_with_input("apply -f -", Some(examples::DEFAULT_MANIFEST))
                .ok
        );
        let applied = w.poll(&s).iter().filter(|(n, _)| *n == "applied").count();
        assert_eq!(applied, 2);
    }

    #[test]
    fn converged_needs_every_replica_updated_ready_and_available() {
        let mut s = Session::load("a.yaml", examples::DEFAULT_MANIFEST, None).unwrap();
        assert!(!converged(&s));
        s.advance_to(60_000, usize::MAX);
        assert!(converged(&s), "{:?}", deployment_counts(&s));
        let d = &deployment_counts(&s)[0];
        assert_eq!((d.replicas, d.ready, d.available), (3, 3, 3));
        assert!(
            !converged(&Session::new(1)),
            "no Deployment, nothing converged"
        );
    }
}
