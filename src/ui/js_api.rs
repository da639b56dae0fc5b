//! `window.kubeloop`: the page's JavaScript API, used by the e2e tests and the embed SDK.
//!
//! Every mutating call dispatches an [`Action`] (the same path a click takes) and reads its
//! reply right after, which works because Yew runs reducers synchronously inside `dispatch`.
//! Values cross the boundary as plain JS objects (JSON-compatible serde-wasm-bindgen).
//!
//! | call | returns |
//! |---|---|
//! | `apply(yaml)` | diagnostics `[{file, line, col, severity, message, field}]` (empty when applied) |
//! | `applyReport(yaml)` | `{ok, lines, diagnostics}` (`lines` as kubectl prints them) |
//! | `inject(fault)` | the fault's message; throws when refused. `fault` is the serde form, e.g. `{type: 'NodeDown', node: 'node-2'}` (or its JSON text) |
//! | `kubectl(cmd)` | `{stdout, stderr, ok}`. `kubectl explain`'s descriptions load on first use: the first explain through this synchronous call starts the fetch and says so; the console waits for it instead |
//! | `play()`, `pause()` | nothing |
//! | `step()` | true when something happened (runs to the next visible action) |
//! | `stepHandOff()` | `{found, at, message}`: runs to the next hand-off between components (`sim::handoff`); `found` is false when it gave up |
//! | `setPauseOnCheck(on)`, `setSlowMotion(on)` | nothing: the toolbar's two switches (pause when a check changes; slow motion after an action) |
//! | `advance(d)` | the new clock in ms; `d` is a Go duration (`"30s"`) or milliseconds; deterministic |
//! | `setSpeed(x)`, `reset()` | nothing |
//! | `state()` | every object (Events excluded) as a Kubernetes `List` |
//! | `events()` | the Event objects, oldest first |
//! | `now()` | the simulated clock in ms |
//! | `seek(time)` | time travel: the clock to that time of the run (`"1m30s"` or ms), back or forward, the run's own actions replayed on the way; returns the new clock; an action taken there branches the run |
//! | `checks()` | the scenario's checks `[{name, passed, message, waitingFor}]` |
//! | `lessonSteps()` | the try-this steps `[{label, id, enabled, done, doneAt, at, waitingFor}]` |
//! | `trace(afterSeq)` | trace entries after a sequence number (at most 10 000), as `--trace` prints them |
//! | `fingerprint()` | the trace's entry count and hash, `"<count> <hex>"` (`Trace::fingerprint`): the determinism tests compare it with the native run's |
//! | `version` | the crate version |
//! | `debugPanic(message?)` | never returns: a real Rust panic, for tests and diagnostics of the crash screen (see below) |
//!
//! `debugPanic` is a test/diagnostic hook, not part of the embed protocol (a course page cannot
//! reach it): it panics with `message` while holding the model's RefCell mutably borrowed, as a
//! bug inside a reducer would, so the e2e tests prove the panic boundary (`src/ui/crash.rs`)
//! needs nothing the panic left borrowed. The page is dead afterwards, as after any panic.

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;
use serde_json::{json, Value as Json};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use yew::Callback;

use super::state::{reply, Action};
use crate::sim::api::types::Kind;
use crate::sim::faults::Fault;
use crate::sim::input::diagnostic::{Diagnostic, Severity};
use crate::sim::time::parse_duration;
use crate::sort::StableSort;
use crate::viewmodel::embed_protocol::{checks_json, hand_off_json, lesson_steps_json};
use crate::viewmodel::Playground;

type JsFn = Closure<dyn Fn(JsValue) -> Result<JsValue, JsValue>>;

/// Keeps the API's closures alive; dropping it removes `window.kubeloop`.
pub struct JsApi {
    _closures: Vec<JsFn>,
}

impl Drop for JsApi {
    fn drop(&mut self) {
        if let Some(w) = web_sys::window() {
            let _ = js_sys::Reflect::delete_property(&w, &JsValue::from_str("kubeloop"));
        }
    }
}

fn to_js(v: &Json) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

fn err(msg: impl AsRef<str>) -> JsValue {
    js_sys::Error::new(msg.as_ref()).into()
}

/// A diagnostic as the JS API returns it.
pub fn diagnostic_json(d: &Diagnostic) -> Json {
    json!({
        "file": d.file,
        "line": d.line,
        "col": d.col,
        "severity": match d.severity { Severity::Error => "error", Severity::Warning => "warning", Severity::Info => "info" },
        "message": d.message,
        "field": d.field,
    })
}

fn arg_string(v: &JsValue, what: &str) -> Result<String, JsValue> {
    v.as_string()
        .ok_or_else(|| err(format!("{what}: expected a string")))
}

/// A duration argument: milliseconds, or a string such as `"1m30s"`.
fn duration_arg(v: &JsValue, call: &str) -> Result<u64, JsValue> {
    match v.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(n as u64),
        Some(_) => Err(err(format!("{call}: expected a duration such as \"30s\""))),
        None => parse_duration(&arg_string(v, call)?).map_err(err),
    }
}

/// Why an apply answered nothing: it waits for the engine of its Controller document.
fn not_applied() -> JsValue {
    if super::engine::loading() {
        err("the JavaScript engine for this text's Controller document is loading: the apply runs as soon as it has loaded")
    } else {
        err("apply did not run")
    }
}

/// Installs `window.kubeloop`. Returns None outside a browser window.
pub fn install(dispatch: Callback<Action>, model: Rc<RefCell<Playground>>) -> Option<JsApi> {
    let window = web_sys::window()?;
    let api = js_sys::Object::new();
    let mut closures: Vec<JsFn> = Vec::new();
    let mut add = |name: &str, f: Box<dyn Fn(JsValue) -> Result<JsValue, JsValue>>| {
        let c: JsFn = Closure::wrap(f);
        let _ = js_sys::Reflect::set(&api, &JsValue::from_str(name), c.as_ref().unchecked_ref());
        closures.push(c);
    };

    let d = dispatch.clone();
    add(
        "apply",
        Box::new(move |yaml| {
            let text = arg_string(&yaml, "apply(yaml)")?;
            let r = reply();
            d.emit(Action::Apply(text, r.clone()));
            let report = r.borrow_mut().take().ok_or_else(not_applied)?;
            Ok(to_js(&Json::Array(
                report.diagnostics.iter().map(diagnostic_json).collect(),
            )))
        }),
    );

    let d = dispatch.clone();
    add(
        "applyReport",
        Box::new(move |yaml| {
            let text = arg_string(&yaml, "applyReport(yaml)")?;
            let r = reply();
            d.emit(Action::Apply(text, r.clone()));
            let report = r.borrow_mut().take().ok_or_else(not_applied)?;
            Ok(to_js(&json!({
                "ok": report.ok,
                "lines": report.lines,
                "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
            })))
        }),
    );

    let d = dispatch.clone();
    add(
        "inject",
        Box::new(move |fault| {
            let value: Json = match fault.as_string() {
                Some(s) => serde_json::from_str(&s).map_err(|e| err(format!("inject: {e}")))?,
                None => serde_wasm_bindgen::from_value(fault)
                    .map_err(|e| err(format!("inject: {e}")))?,
            };
            let fault: Fault =
                serde_json::from_value(value).map_err(|e| err(format!("inject: {e}")))?;
            let r = reply();
            d.emit(Action::Inject(fault, r.clone()));
            let result = r.borrow_mut().take();
            match result {
                Some(Ok(msg)) => Ok(JsValue::from_str(&msg)),
                Some(Err(msg)) => Err(err(msg)),
                None => Err(err("inject did not run")),
            }
        }),
    );

    let d = dispatch.clone();
    add(
        "kubectl",
        Box::new(move |cmd| {
            let cmd = arg_string(&cmd, "kubectl(cmd)")?;
            super::explain_docs::prefetch(&cmd);
            let r = reply();
            d.emit(Action::Kubectl(cmd, None, r.clone()));
            let out = r
                .borrow_mut()
                .take()
                .ok_or_else(|| err("kubectl did not run"))?;
            Ok(to_js(
                &json!({ "stdout": out.stdout, "stderr": out.stderr, "ok": out.ok }),
            ))
        }),
    );

    let d = dispatch.clone();
    add(
        "play",
        Box::new(move |_| {
            d.emit(Action::Play);
            Ok(JsValue::UNDEFINED)
        }),
    );

    let d = dispatch.clone();
    add(
        "pause",
        Box::new(move |_| {
            d.emit(Action::Pause);
            Ok(JsValue::UNDEFINED)
        }),
    );

    let d = dispatch.clone();
    add(
        "step",
        Box::new(move |_| {
            let r = reply();
            d.emit(Action::Step(r.clone()));
            let stepped = r.borrow_mut().take().unwrap_or(false);
            Ok(JsValue::from_bool(stepped))
        }),
    );

    let d = dispatch.clone();
    add(
        "stepHandOff",
        Box::new(move |_| {
            let r = reply();
            d.emit(Action::StepHandOff(r.clone()));
            let outcome = r
                .borrow_mut()
                .take()
                .ok_or_else(|| err("stepHandOff did not run"))?;
            Ok(to_js(&hand_off_json(&outcome)))
        }),
    );

    for (name, action) in [
        (
            "setPauseOnCheck",
            Action::SetPauseOnCheck as fn(bool) -> Action,
        ),
        ("setSlowMotion", Action::SetSlowMotion),
    ] {
        let d = dispatch.clone();
        add(
            name,
            Box::new(move |on| {
                let on = on
                    .as_bool()
                    .ok_or_else(|| err(format!("{name}: expected true or false")))?;
                d.emit(action(on));
                Ok(JsValue::UNDEFINED)
            }),
        );
    }

    let d = dispatch.clone();
    let m = model.clone();
    add(
        "advance",
        Box::new(move |dur| {
            let ms = duration_arg(&dur, "advance(duration)")?;
            d.emit(Action::Advance(ms));
            let now = m.try_borrow().map(|m| m.now()).unwrap_or(0);
            Ok(JsValue::from_f64(now as f64))
        }),
    );

    let d = dispatch.clone();
    let m = model.clone();
    add(
        "seek",
        Box::new(move |dur| {
            let ms = duration_arg(&dur, "seek(time)")?;
            d.emit(Action::Seek(ms));
            let now = m.try_borrow().map(|m| m.now()).unwrap_or(0);
            Ok(JsValue::from_f64(now as f64))
        }),
    );

    let d = dispatch.clone();
    add(
        "setSpeed",
        Box::new(move |s| {
            let s = s
                .as_f64()
                .ok_or_else(|| err("setSpeed: expected a number"))?;
            d.emit(Action::SetSpeed(s));
            Ok(JsValue::UNDEFINED)
        }),
    );

    let d = dispatch.clone();
    add(
        "reset",
        // `reset()` keeps the seed; `reset(42)` starts again with seed 42 (as the toolbar does).
        Box::new(move |seed| {
            if seed.is_undefined() || seed.is_null() {
                d.emit(Action::Reset);
                return Ok(JsValue::UNDEFINED);
            }
            match seed.as_f64() {
                Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => {
                    super::share::reset_with_seed(n as u64);
                    Ok(JsValue::UNDEFINED)
                }
                _ => Err(err("reset(seed): expected a whole number of at least 0")),
            }
        }),
    );

    add(
        "shareLink",
        // The link the Share button would copy: the editor's text, the seed, the view.
        Box::new(|_| Ok(JsValue::from_str(&super::share::share_url()))),
    );

    let m = model.clone();
    add(
        "state",
        Box::new(move |_| {
            let m = m.try_borrow().map_err(|_| err("state: busy"))?;
            Ok(to_js(&m.session.state_json()))
        }),
    );

    let m = model.clone();
    add(
        "events",
        Box::new(move |_| {
            let m = m.try_borrow().map_err(|_| err("events: busy"))?;
            let mut evs: Vec<_> = m.session.sim.api().list(Kind::Event).collect();
            evs.stable_sort_by_key(|o| o.as_event().and_then(|e| e.last_timestamp).map(|t| t.0));
            Ok(to_js(&Json::Array(
                evs.iter().map(|o| o.to_json()).collect(),
            )))
        }),
    );

    let m = model.clone();
    add(
        "now",
        Box::new(move |_| {
            let now = m.try_borrow().map(|m| m.now()).unwrap_or(0);
            Ok(JsValue::from_f64(now as f64))
        }),
    );

    let m = model.clone();
    add(
        "checks",
        Box::new(move |_| {
            let m = m.try_borrow().map_err(|_| err("checks: busy"))?;
            Ok(to_js(&checks_json(&m.session)))
        }),
    );

    let m = model.clone();
    add(
        "lessonSteps",
        Box::new(move |_| {
            let m = m.try_borrow().map_err(|_| err("lessonSteps: busy"))?;
            Ok(to_js(&lesson_steps_json(&m.session)))
        }),
    );

    let m = model.clone();
    add(
        "debugPanic",
        Box::new(move |message| {
            let message: String = message
                .as_string()
                .unwrap_or_else(|| "window.kubeloop.debugPanic() was called".to_string())
                .chars()
                .take(64 * 1024)
                .collect();
            // Held across the panic on purpose (see the module doc).
            let _held = m.try_borrow_mut();
            panic!("{message}");
        }),
    );

    let m = model.clone();
    add(
        "trace",
        Box::new(move |since| {
            let m = m.try_borrow().map_err(|_| err("trace: busy"))?;
            let after = since.as_f64().unwrap_or(0.0).max(0.0) as u64;
            let entries: Vec<Json> = m
                .session
                .sim
                .trace()
                .since(after)
                .take(10_000)
                .map(|e| e.to_json())
                .collect();
            Ok(to_js(&Json::Array(entries)))
        }),
    );

    let m = model;
    add(
        "fingerprint",
        Box::new(move |_| {
            let m = m.try_borrow().map_err(|_| err("fingerprint: busy"))?;
            Ok(JsValue::from_str(&m.session.sim.trace().fingerprint()))
        }),
    );

    let _ = js_sys::Reflect::set(
        &api,
        &JsValue::from_str("version"),
        &JsValue::from_str(env!("CARGO_PKG_VERSION")),
    );
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("kubeloop"), &api);
    Some(JsApi {
        _closures: closures,
    })
}
