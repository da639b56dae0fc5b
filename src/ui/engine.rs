//! The page's side of the JavaScript engine: loads the engine module (`src/engine.rs`, built as
//! its own wasm file) the first time an action needs it, installs a bridge to it as the
//! simulation's [`Engine`], then runs the actions that waited.
//!
//! Calls cross as JSON text through `window.kubeloopEngine` (set by `www/engine-loader.js`),
//! synchronously: a controller's host calls (`ctx.get(...)`) come back into this module as a
//! closure that lives only for the call, so a pass reads the simulation's cache in place.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::sim::input::controller_doc;
use crate::sim::script::engine::{self, decode, host_answer, to_text, Engine, Running};
use crate::sim::script::{Arg, Diagnostic, Host, Limits, RunError};
use crate::viewmodel::action::Action;
use crate::viewmodel::check::CheckView;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = kubeloopEngine, js_name = check)]
    fn js_check(source: &str) -> Option<String>;
    #[wasm_bindgen(js_namespace = kubeloopEngine, js_name = start)]
    fn js_start(source: &str, seed: u64, limits: &str, now_ms: f64) -> Option<String>;
    #[wasm_bindgen(js_namespace = kubeloopEngine, js_name = call)]
    fn js_call(
        handle: u32,
        function: &str,
        args: &str,
        now_ms: f64,
        host: &mut dyn FnMut(String, String, String) -> String,
    ) -> Option<String>;
    #[wasm_bindgen(js_namespace = kubeloopEngine, js_name = drop_instance)]
    fn js_drop(handle: u32);
    #[wasm_bindgen(js_namespace = kubeloopLab, js_name = check)]
    fn js_lab_check(text: &str) -> Option<String>;
}

/// What the JavaScript side says when the engine module trapped or is gone.
const TRAPPED: &str = "the engine module stopped working (see the browser console)";

/// The engine module, reached through `window.kubeloopEngine`.
struct Bridge;

impl Engine for Bridge {
    fn check(&self, source: &str) -> Result<Vec<String>, Diagnostic> {
        let fail = |why: String| Diagnostic {
            line: 1,
            column: 1,
            message: format!("the JavaScript engine failed: {why}"),
        };
        match js_check(source) {
            Some(text) => decode(&text, fail),
            None => Err(fail(TRAPPED.into())),
        }
    }

    fn start(
        &self,
        source: &str,
        seed: u64,
        limits: Limits,
        now_ms: u64,
    ) -> Result<Box<dyn Running>, RunError> {
        let text = js_start(source, seed, &to_text(&limits), now_ms as f64)
            .ok_or_else(|| RunError::Engine(TRAPPED.into()))?;
        let handle: u32 = decode(&text, RunError::Engine)?;
        Ok(Box::new(Remote { handle }))
    }
}

/// A program running in the engine module.
struct Remote {
    handle: u32,
}

impl Running for Remote {
    fn call(
        &mut self,
        function: &str,
        args: Vec<Arg>,
        host: &mut dyn Host,
        now_ms: u64,
    ) -> Result<serde_json::Value, RunError> {
        let args = to_text(&args);
        let mut answer = |object: String, method: String, args: String| {
            host_answer(host, &object, &method, &args)
        };
        let text = js_call(self.handle, function, &args, now_ms as f64, &mut answer)
            .ok_or_else(|| RunError::Engine(TRAPPED.into()))?;
        decode(&text, RunError::Engine)
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        js_drop(self.handle);
    }
}

/// Where the engine module is.
enum State {
    NotLoaded,
    /// Loading, with the actions that wait for it.
    Loading(Vec<Action>),
    Ready,
    Failed,
}

thread_local! {
    static STATE: RefCell<State> = const { RefCell::new(State::NotLoaded) };
    /// Where finished loads hand their actions back (the app's reducer), once mounted.
    static DISPATCH: RefCell<Option<yew::Callback<Action>>> = const { RefCell::new(None) };
}

/// Gives this module the app's dispatcher (at mount).
pub fn attach(dispatch: yew::Callback<Action>) {
    DISPATCH.with(|d| *d.borrow_mut() = Some(dispatch));
}

/// The app's dispatcher, once mounted.
pub fn dispatcher() -> Option<yew::Callback<Action>> {
    DISPATCH.with(|d| d.borrow().clone())
}

/// Whether `action` must wait for the engine: it decodes a text with a `Controller` document
/// and the engine is neither there nor known to be unreachable, or an earlier text is already
/// waiting (texts are applied in the order they were asked for, whatever they hold).
pub fn must_wait(action: &Action) -> bool {
    let needs_engine = match action {
        Action::Apply(text, _) | Action::Load(text, _, _) | Action::Delete(text, _) => {
            controller_doc::mentioned_in(text)
        }
        Action::OpenRun(run) => run_needs_engine(run),
        _ => return false,
    };
    STATE.with(|s| match *s.borrow() {
        State::Loading(_) => true,
        State::NotLoaded => needs_engine,
        State::Ready | State::Failed => false,
    })
}

/// Whether a run's start or any text among its actions holds a `Controller` document.
pub fn run_needs_engine(run: &crate::sim::share::RunLink) -> bool {
    run.base
        .as_deref()
        .is_some_and(controller_doc::mentioned_in)
        || run.actions.iter().any(|a| {
            a.as_array()
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .any(controller_doc::mentioned_in)
        })
}

/// Whether actions are waiting for the engine module.
pub fn loading() -> bool {
    STATE.with(|s| matches!(*s.borrow(), State::Loading(_)))
}

/// Starts loading the engine if nothing has yet, and runs `action` once it is there (or once
/// its download has failed, when the decoder says so at the document).
pub fn after_load(action: Action, dispatch: yew::Callback<Action>) {
    let start = STATE.with(|s| {
        let mut s = s.borrow_mut();
        match &mut *s {
            State::Loading(waiting) => {
                waiting.push(action);
                false
            }
            _ => {
                *s = State::Loading(vec![action]);
                true
            }
        }
    });
    if start {
        wasm_bindgen_futures::spawn_local(async move {
            let loaded = load().await;
            let next = match &loaded {
                Ok(()) => {
                    engine::install(Rc::new(Bridge));
                    State::Ready
                }
                Err(e) => {
                    web_sys::console::error_2(
                        &"kubeloop: the JavaScript engine did not load".into(),
                        e,
                    );
                    State::Failed
                }
            };
            let waiting = STATE.with(|s| match std::mem::replace(&mut *s.borrow_mut(), next) {
                State::Loading(w) => w,
                _ => Vec::new(),
            });
            for a in waiting {
                dispatch.emit(a);
            }
        });
    }
}

/// Runs "Check my controller" on `text` in the checker module, loading it the first time, and
/// shows its card. The module is the whole simulation again, so it is fetched only on demand.
pub fn check_later(text: String, dispatch: yew::Callback<Action>) {
    wasm_bindgen_futures::spawn_local(async move {
        let view = match call_loader("kubeloopLoadLab").await {
            Ok(()) => match js_lab_check(&text) {
                Some(json) => match serde_json::from_str(&json) {
                    Ok(outcome) => CheckView::from_json(&outcome),
                    Err(e) => refused(&format!("the checker answered no report: {e}")),
                },
                None => refused(TRAPPED),
            },
            Err(e) => {
                web_sys::console::error_2(&"kubeloop: the checker did not load".into(), &e);
                refused("this page could not load the checker: reload the page to try again")
            }
        };
        dispatch.emit(Action::ShowCheck(view));
    });
}

fn refused(why: &str) -> CheckView {
    CheckView::Refused(vec![crate::sim::input::diagnostic::Diagnostic {
        file: String::new(),
        line: 1,
        col: 1,
        severity: crate::sim::input::diagnostic::Severity::Error,
        message: why.to_string(),
        field: None,
    }])
}

/// `window.kubeloopLoadEngine()`, set by `www/boot.js`: imports the engine module and sets
/// `window.kubeloopEngine`.
async fn load() -> Result<(), JsValue> {
    call_loader("kubeloopLoadEngine").await
}

/// Calls one of `www/boot.js`'s loaders (`window.<name>()`) and awaits its promise.
async fn call_loader(name: &str) -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let loader = js_sys::Reflect::get(&window, &name.into())?;
    let loader: js_sys::Function = loader
        .dyn_into()
        .map_err(|_| JsValue::from_str("the page has no engine loader (www/boot.js)"))?;
    let promise: js_sys::Promise = loader.call0(&JsValue::NULL)?.dyn_into()?;
    wasm_bindgen_futures::JsFuture::from(promise).await?;
    Ok(())
}
