//! Embed mode (`?embed=1`): the app side of the protocol the course-page SDK
//! (`www/kubeloop-embed.js`) speaks, the iframe-only flags, click-to-load and auto-resize.
//!
//! The messages and their checks are in [`crate::viewmodel::embed_protocol`]; this module adds
//! what needs a browser:
//!
//! - **Who may talk.** Only the window that embeds this page (`window.parent`, never a popup or
//!   a sibling frame), only from an origin `?origins=` allows (any web origin when absent, never
//!   an opaque `null`), and after the handshake only that same origin with the same `id`.
//!   Anything else is ignored with a console warning and changes nothing.
//! - **How much.** A message whose JSON form exceeds [`MAX_MESSAGE_CHARS`] is dropped before it
//!   is parsed; its strings are measured before anything is copied.
//! - **Replies** go to the handshake's window with its exact origin as the target origin, never
//!   `*`. The only message posted before a handshake is a content-free `kubeloop:hello`.
//! - **Auto-resize**: a ResizeObserver on the body posts `resize {height}` whenever the content
//!   height changes (the embed layout has no viewport-sized boxes, so height never feeds back).
//! - **Click to load** (`ctl=1` / `load=click`): a placeholder button; the app, its simulation
//!   and its clock do not exist until the reader clicks.

use std::cell::RefCell;

use gloo_timers::callback::Interval;
use serde::Serialize;
use serde_json::{json, Value as Json};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::js_api::diagnostic_json;
use super::state::{reply, Action};
use super::{bus, share};
use crate::sim::examples;
use crate::sim::share::{decode, Link};
use crate::sim::time::clock;
use crate::viewmodel::embed_flags::{view_attr, Flags, Theme};
use crate::viewmodel::embed_protocol::{
    checks_json, converged, deployment_counts, event_message, hand_off_json, hello_message,
    lesson_steps_json, parse_inbound, ready_message, result_message, Call, Inbound, Rejected,
    Watcher, MAX_MESSAGE_CHARS,
};
use crate::viewmodel::Playground;

/// The page that completed the handshake.
struct Host {
    id: String,
    origin: String,
    window: JsValue,
}

#[derive(Default)]
struct Bridge {
    /// The app is mounted (always, unless click-to-load is waiting for its click).
    loaded: bool,
    host: Option<Host>,
    watcher: Watcher,
    last_height: i32,
    listeners: Vec<Closure<dyn Fn(JsValue)>>,
    observer: Option<JsValue>,
    timer: Option<Interval>,
}

thread_local! {
    static BRIDGE: RefCell<Bridge> = RefCell::new(Bridge::default());
}

fn with<R>(f: impl FnOnce(&mut Bridge) -> R) -> R {
    BRIDGE.with(|b| f(&mut b.borrow_mut()))
}

fn warn(msg: &str) {
    web_sys::console::warn_1(&JsValue::from_str(&format!("kubeloop embed: {msg}")));
}

fn to_js(v: &Json) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

/// `target.postMessage(msg, origin)`, called through Reflect so that a cross-origin window works.
fn post_to(target: &JsValue, msg: &Json, origin: &str) {
    let Ok(f) = js_sys::Reflect::get(target, &JsValue::from_str("postMessage")) else {
        return;
    };
    if let Ok(f) = f.dyn_into::<js_sys::Function>() {
        let _ = f.call2(target, &to_js(msg), &JsValue::from_str(origin));
    }
}

/// Posts to the handshake's window, if there is one.
fn post_host(make: impl FnOnce(&str) -> Json) {
    let target = with(|b| {
        b.host
            .as_ref()
            .map(|h| (h.window.clone(), h.origin.clone(), h.id.clone()))
    });
    if let Some((w, origin, id)) = target {
        post_to(&w, &make(&id), &origin);
    }
}

fn post_event(name: &str, data: Json) {
    post_host(|id| event_message(id, name, data));
}

fn parent_window() -> Option<JsValue> {
    let w = web_sys::window()?;
    let parent: JsValue = w.parent().ok().flatten()?.into();
    let me: JsValue = w.into();
    (!js_sys::Object::is(&parent, &me)).then_some(parent)
}

fn document_element() -> Option<web_sys::Element> {
    web_sys::window()?.document()?.document_element()
}

/// Marks the root element with the flags the stylesheet reads (`www/share.css`).
fn apply_document_flags(flags: &Flags) {
    let Some(root) = document_element() else {
        return;
    };
    if flags.theme != Theme::Auto {
        let _ = root.set_attribute("data-theme", flags.theme.as_str());
    }
    if !flags.embed {
        return;
    }
    let _ = root.set_attribute("data-kl-embed", "1");
    let _ = root.set_attribute("data-kl-view", &view_attr(&flags.panels()));
    if flags.readonly {
        let _ = root.set_attribute("data-kl-readonly", "1");
    }
    if !flags.faults {
        let _ = root.set_attribute("data-kl-faults", "0");
    }
}

/// Starts the page: in embed mode installs the message listener and auto-resize first, and with
/// click-to-load shows the placeholder and calls `render` only on the reader's click.
pub fn start(render: impl FnOnce() + 'static) {
    let flags = bus::flags();
    apply_document_flags(&flags);
    if !flags.embed {
        render();
        return;
    }
    install_listeners();
    if let Some(p) = parent_window() {
        // Content-free, so any origin may see it: "I am up, (re)send your init".
        post_to(&p, &hello_message(), "*");
    }
    if flags.click_to_load {
        show_click_to_load(render);
    } else {
        render();
    }
}

const CTL_HTML: &str = r#"<button type="button" class="kl-ctl-btn" data-testid="click-to-load-button">
  <span class="kl-ctl-play" aria-hidden="true"><svg viewBox="0 0 24 24" width="28" height="28"><path fill="currentColor" d="M8 5.5v13a1 1 0 0 0 1.5.86l10.5-6.5a1 1 0 0 0 0-1.72L9.5 4.64A1 1 0 0 0 8 5.5z"/></svg></span>
  <span class="kl-ctl-title">Run this playground</span>
  <span class="kl-ctl-lesson"></span>
  <span class="kl-ctl-sub">A simulated Kubernetes control plane, in your browser. Nothing runs until you click.</span>
</button>"#;

fn show_click_to_load(render: impl FnOnce() + 'static) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let (Some(body), Ok(wrap)) = (doc.body(), doc.create_element("div")) else {
        render();
        return;
    };
    wrap.set_class_name("kl-ctl");
    let _ = wrap.set_attribute("data-testid", "click-to-load");
    // html-ok: CTL_HTML is a compile-time constant; the lesson title goes in as text below.
    wrap.set_inner_html(CTL_HTML);
    // Name the lesson when the link names one (set as text, never as HTML).
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    if let Ok(Link::Example(name)) = decode(&hash) {
        if let (Some(l), Ok(Some(slot))) = (
            examples::lesson(&name),
            wrap.query_selector(".kl-ctl-lesson"),
        ) {
            slot.set_text_content(Some(l.title));
        }
    }
    let _ = body.append_child(&wrap);
    let mut render = Some(render);
    let wrap_c = wrap.clone();
    let on_click = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
        if let Some(r) = render.take() {
            wrap_c.remove();
            r();
        }
    });
    let _ = wrap.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
    // Lives until the click; the page never unloads it otherwise.
    on_click.forget();
}

fn install_listeners() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let on_message = Closure::<dyn Fn(JsValue)>::new(|e: JsValue| {
        if let Ok(e) = e.dyn_into::<web_sys::MessageEvent>() {
            on_message(e);
        }
    });
    let _ = window.add_event_listener_with_callback("message", on_message.as_ref().unchecked_ref());

    // Read-only: the editor's Tab handler writes into the textarea directly, which `readonly`
    // does not stop; swallow Tab before it reaches the app (focus still moves on).
    let on_key = Closure::<dyn Fn(JsValue)>::new(|e: JsValue| {
        let Ok(e) = e.dyn_into::<web_sys::KeyboardEvent>() else {
            return;
        };
        if !bus::flags().readonly || e.key() != "Tab" {
            return;
        }
        let on_editor = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|t| t.get_attribute("data-testid").as_deref() == Some("editor"));
        if on_editor {
            e.stop_immediate_propagation();
        }
    });
    let _ = window.add_event_listener_with_callback_and_bool(
        "keydown",
        on_key.as_ref().unchecked_ref(),
        true,
    );

    let on_resize = Closure::<dyn Fn(JsValue)>::new(|_: JsValue| report_height(false));
    let observer = js_sys::Reflect::get(&window, &JsValue::from_str("ResizeObserver"))
        .ok()
        .and_then(|c| c.dyn_into::<js_sys::Function>().ok())
        .and_then(|ctor| {
            js_sys::Reflect::construct(&ctor, &js_sys::Array::of1(on_resize.as_ref())).ok()
        });
    if let (Some(obs), Some(body)) = (&observer, window.document().and_then(|d| d.body())) {
        if let Ok(f) = js_sys::Reflect::get(obs, &JsValue::from_str("observe")) {
            if let Ok(f) = f.dyn_into::<js_sys::Function>() {
                let _ = f.call1(obs, &body);
            }
        }
    }

    let timer = Interval::new(200, tick);
    with(|b| {
        b.listeners.extend([on_message, on_key, on_resize]);
        b.observer = observer;
        b.timer = Some(timer);
    });
}

fn body_height() -> i32 {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
        .map(|b| b.get_bounding_client_rect().height().ceil() as i32)
        .unwrap_or(0)
}

/// Posts the content height when it changed (or always, with `force`).
fn report_height(force: bool) {
    let h = body_height();
    let changed = with(|b| {
        let c = force || (h != b.last_height && b.host.is_some());
        if b.host.is_some() {
            b.last_height = h;
        }
        c
    });
    if changed && h > 0 {
        post_event("resize", json!({ "height": h }));
    }
}

/// Every 200 ms: events since the last poll, and the read-only attribute kept on the editor.
fn tick() {
    if bus::flags().readonly {
        if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            d.query_selector("textarea[data-testid=\"editor\"]")
                .ok()
                .flatten()
        }) {
            if !el.has_attribute("readonly") {
                let _ = el.set_attribute("readonly", "");
                let _ = el.set_attribute("aria-readonly", "true");
            }
        }
    }
    flush_events();
}

/// Posts what happened since the last poll (nothing before a handshake).
fn flush_events() {
    if !with(|b| b.loaded && b.host.is_some()) {
        return;
    }
    let Some(model) = bus::model() else {
        return;
    };
    let Ok(m) = model.try_borrow() else {
        return;
    };
    let events = with(|b| b.watcher.poll(&m.session));
    drop(m);
    for (name, data) in events {
        post_event(name, data);
    }
}

/// The app is mounted: calls can be answered from now on.
pub fn attach() {
    if !bus::flags().embed {
        return;
    }
    let Some(model) = bus::model() else {
        return;
    };
    let watcher = model
        .try_borrow()
        .map(|m| Watcher::starting_at(&m.session))
        .unwrap_or_default();
    let had_host = with(|b| {
        b.loaded = true;
        b.watcher = watcher;
        b.host.is_some()
    });
    tick();
    if had_host {
        post_event("loaded", json!({}));
        report_height(true);
    }
}

/// The app unmounted.
pub fn detach() {
    with(|b| b.loaded = false);
}

/// Turns the message's data into JSON, or None when it is too large or not JSON-shaped.
fn message_json(data: &JsValue) -> Option<Json> {
    // Measure the strings first: a huge string is refused before anything is copied.
    if let Ok(args) = js_sys::Reflect::get(data, &JsValue::from_str("args")) {
        if let Ok(args) = args.dyn_into::<js_sys::Array>() {
            if args.length() > 16 {
                return None;
            }
            for a in args.iter() {
                if let Some(s) = a.dyn_ref::<js_sys::JsString>() {
                    if s.length() as usize > MAX_MESSAGE_CHARS {
                        return None;
                    }
                }
            }
        }
    }
    let text = js_sys::JSON::stringify(data).ok()?;
    if text.length() as usize > MAX_MESSAGE_CHARS {
        return None;
    }
    serde_json::from_str(&String::from(text)).ok()
}

fn on_message(e: web_sys::MessageEvent) {
    let data = e.data();
    if !data.is_object() {
        return;
    }
    let ty = js_sys::Reflect::get(&data, &JsValue::from_str("type"))
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_default();
    if !ty.starts_with("kubeloop:")
        || matches!(
            ty.as_str(),
            "kubeloop:ready" | "kubeloop:result" | "kubeloop:event" | "kubeloop:hello"
        )
    {
        return; // someone else's message
    }
    let origin = e.origin();
    let from_parent = match (e.source(), parent_window()) {
        (Some(src), Some(parent)) => js_sys::Object::is(&src, &parent),
        _ => false,
    };
    if !from_parent {
        warn(&format!(
            "ignored {ty} from {origin}: it did not come from the page embedding this playground"
        ));
        return;
    }
    let flags = bus::flags();
    if !flags.origin_allowed(&origin) {
        warn(&format!(
            "ignored {ty}: origin {origin} is not allowed to drive this playground"
        ));
        return;
    }
    let pinned = with(|b| b.host.as_ref().map(|h| (h.origin.clone(), h.id.clone())));
    if let Some((o, _)) = &pinned {
        if *o != origin {
            warn(&format!(
                "ignored {ty} from {origin}: this playground answers {o} only"
            ));
            return;
        }
    }
    let Some(json) = message_json(&data) else {
        warn(&format!(
            "ignored {ty}: larger than {MAX_MESSAGE_CHARS} characters or not JSON"
        ));
        return;
    };
    match parse_inbound(&json) {
        Ok(Inbound::Init { id }) => {
            let window = parent_window().unwrap_or(JsValue::NULL);
            let loaded = with(|b| {
                b.host = Some(Host {
                    id: id.clone(),
                    origin: origin.clone(),
                    window,
                });
                b.loaded
            });
            post_host(|id| ready_message(id, env!("CARGO_PKG_VERSION"), loaded));
            report_height(true);
        }
        Ok(Inbound::Call { id, call_id, call }) => {
            if pinned.as_ref().map(|(_, i)| i.as_str()) != Some(id.as_str()) {
                warn(&format!(
                    "ignored a call for \"{id}\": no handshake with that id"
                ));
                return;
            }
            let result = execute(call);
            flush_events();
            post_host(|id| result_message(id, &call_id, result));
        }
        Err(Rejected::Foreign) => {}
        Err(Rejected::Malformed { reason, reply }) => {
            warn(&format!("ignored {ty}: {reason}"));
            if let (Some((rid, cid)), Some((_, hid))) = (reply, &pinned) {
                if rid == *hid {
                    post_host(|id| result_message(id, &cid, Err(reason)));
                }
            }
        }
    }
}

fn state_json(m: &Playground) -> Json {
    let now = m.now();
    let cluster = m.cluster();
    let nodes: Vec<Json> = cluster
        .nodes
        .iter()
        .map(|n| json!({"name": n.name, "ready": n.ready, "status": n.status, "up": n.machine_up}))
        .collect();
    let pods: Vec<Json> = cluster
        .all_pods()
        .map(|p| {
            json!({"name": p.name, "namespace": p.namespace, "node": p.node, "phase": p.phase,
                   "ready": p.ready, "status": p.status, "restarts": p.restarts})
        })
        .collect();
    let state = m.session.state_json();
    json!({
        "time": now,
        "clock": clock(now),
        "playing": m.playing,
        "speed": m.speed,
        "seed": m.seed(),
        "converged": converged(&m.session),
        "deployments": deployment_counts(&m.session).iter().map(|d| d.to_json()).collect::<Vec<_>>(),
        "nodes": nodes,
        "pods": pods,
        "checks": checks_json(&m.session),
        "objects": state.get("items").cloned().unwrap_or(Json::Array(Vec::new())),
    })
}

/// Runs one call through the same actions a click takes.
fn execute(call: Call) -> Result<Json, String> {
    let loaded = with(|b| b.loaded);
    let (true, Some(d), Some(model)) = (loaded, bus::dispatcher(), bus::model()) else {
        return Err("This playground has not been loaded yet: the reader has to click it first (load=click).".into());
    };
    match call {
        Call::Apply(yaml) => {
            bus::set_editor_text(&yaml);
            let r = reply();
            d.emit(Action::Apply(yaml, r.clone()));
            let report = r.borrow_mut().take().ok_or("apply did not run")?;
            Ok(json!({
                "ok": report.ok,
                "lines": report.lines,
                "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
            }))
        }
        Call::Load { text, seed } => {
            let result = share::load(&text, seed);
            with(|b| b.watcher.restart());
            let value = match result {
                Ok(()) => json!({"ok": true, "diagnostics": []}),
                Err(diags) => {
                    json!({"ok": false, "diagnostics": diags.iter().map(diagnostic_json).collect::<Vec<_>>()})
                }
            };
            post_event("applied", json!({"source": "load", "ok": value["ok"]}));
            Ok(value)
        }
        Call::Inject(fault) => {
            let r = reply();
            d.emit(Action::Inject(fault, r.clone()));
            let result = r.borrow_mut().take();
            match result {
                Some(Ok(msg)) => Ok(Json::String(msg)),
                Some(Err(msg)) => Err(msg),
                None => Err("inject did not run".into()),
            }
        }
        Call::Kubectl(cmd) => {
            super::explain_docs::prefetch(&cmd);
            let r = reply();
            d.emit(Action::Kubectl(cmd, None, r.clone()));
            let out = r.borrow_mut().take().ok_or("kubectl did not run")?;
            Ok(json!({"stdout": out.stdout, "stderr": out.stderr, "ok": out.ok}))
        }
        Call::Play => {
            d.emit(Action::Play);
            Ok(Json::Null)
        }
        Call::Pause => {
            d.emit(Action::Pause);
            Ok(Json::Null)
        }
        Call::Step => {
            let r = reply();
            d.emit(Action::Step(r.clone()));
            let stepped = r.borrow_mut().take().unwrap_or(false);
            Ok(Json::Bool(stepped))
        }
        Call::SetSpeed(s) => {
            d.emit(Action::SetSpeed(s));
            Ok(Json::Null)
        }
        Call::Advance(ms) => {
            d.emit(Action::Advance(ms));
            let now = model.try_borrow().map(|m| m.now()).unwrap_or(0);
            Ok(json!(now))
        }
        Call::Seek(ms) => {
            d.emit(Action::Seek(ms));
            let now = model.try_borrow().map(|m| m.now()).unwrap_or(0);
            Ok(json!(now))
        }
        Call::GetState => {
            let m = model.try_borrow().map_err(|_| "busy".to_string())?;
            Ok(state_json(&m))
        }
        Call::GetShareUrl => Ok(Json::String(share::share_url())),
        Call::RunChecks => {
            let m = model.try_borrow().map_err(|_| "busy".to_string())?;
            Ok(checks_json(&m.session))
        }
        Call::LessonSteps => {
            let m = model.try_borrow().map_err(|_| "busy".to_string())?;
            Ok(lesson_steps_json(&m.session))
        }
        Call::StepHandOff => {
            let r = reply();
            d.emit(Action::StepHandOff(r.clone()));
            let outcome = r.borrow_mut().take().ok_or("stepHandOff did not run")?;
            Ok(hand_off_json(&outcome))
        }
        Call::SetPauseOnCheck(on) => {
            d.emit(Action::SetPauseOnCheck(on));
            Ok(Json::Null)
        }
        Call::SetSlowMotion(on) => {
            d.emit(Action::SetSlowMotion(on));
            Ok(Json::Null)
        }
    }
}
