//! The page's JavaScript engine module: this crate's interpreter alone, built as a second wasm
//! file that the page loads only when a scenario has a `Controller` document
//! (`src/ui/engine.rs` is the other side). Natively there is nothing to run: the CLI links the
//! interpreter directly.
//!
//! Every call answers JSON text (`sim::script::engine::encode`) and never unwinds into the page:
//! a trap here becomes an error the bridge reports, not a broken app.

#[cfg(target_arch = "wasm32")]
mod exports {
    use std::cell::RefCell;

    use kubeloop::sim::script::engine::{encode, from_text, Builtin, Engine, RemoteHost, Running};
    use kubeloop::sim::script::{Arg, Limits, RunError};
    use kubeloop::vec_map::SlotMap;
    use serde_json::Value as Json;
    use wasm_bindgen::prelude::*;

    /// The running programs, by the handle the page holds.
    #[derive(Default)]
    struct Table {
        last: u32,
        running: SlotMap<u32, Box<dyn Running>>,
    }

    thread_local! {
        static INSTANCES: RefCell<Table> = RefCell::new(Table::default());
    }

    /// Parses a program: `{"ok": [function names]}` or `{"err": {line, column, message}}`.
    #[wasm_bindgen]
    pub fn check(source: &str) -> String {
        encode(Builtin.check(source))
    }

    /// Runs a program's top-level code: `{"ok": handle}` or `{"err": RunError}`.
    #[wasm_bindgen]
    pub fn start(source: &str, seed: u64, limits: &str, now_ms: f64) -> String {
        let Some(limits) = from_text::<Limits>(limits) else {
            return encode::<u32, RunError>(Err(RunError::Engine("unreadable limits".into())));
        };
        let started = Builtin.start(source, seed, limits, now_ms as u64);
        encode(started.map(|running| {
            INSTANCES.with(|i| {
                let table = &mut *i.borrow_mut();
                table.last += 1;
                table.running.insert(table.last, running);
                table.last
            })
        }))
    }

    /// Calls a function of a started program; `host(object, method, argsJson)` answers its host
    /// calls. `{"ok": value}` or `{"err": RunError}`.
    #[wasm_bindgen]
    pub fn call(
        handle: u32,
        function: &str,
        args: &str,
        now_ms: f64,
        host: &js_sys::Function,
    ) -> String {
        let Some(args) = from_text::<Vec<Arg>>(args) else {
            return encode::<Json, RunError>(Err(RunError::Engine("unreadable arguments".into())));
        };
        // Out of the table for the call, so that a host call that comes back here finds the
        // table free.
        let Some(mut running) = INSTANCES.with(|i| i.borrow_mut().running.remove(&handle)) else {
            return encode::<Json, RunError>(Err(RunError::Engine(format!(
                "no running program {handle}"
            ))));
        };
        let mut remote = RemoteHost(|object: &str, method: &str, args: &str| {
            let answer = host.call3(
                &JsValue::NULL,
                &JsValue::from_str(object),
                &JsValue::from_str(method),
                &JsValue::from_str(args),
            );
            match answer.map(|a| a.as_string()) {
                Ok(Some(text)) => text,
                Ok(None) => encode::<Json, String>(Err("the host answered no text".into())),
                Err(e) => encode::<Json, String>(Err(format!("the host failed: {e:?}"))),
            }
        });
        let out = encode(running.call(function, args, &mut remote, now_ms as u64));
        INSTANCES.with(|i| i.borrow_mut().running.insert(handle, running));
        out
    }

    /// Ends a program: its module state is gone.
    #[wasm_bindgen]
    pub fn drop_instance(handle: u32) {
        INSTANCES.with(|i| i.borrow_mut().running.remove(&handle));
    }

    /// Kept so the page can tell a module of this build from a stale cached one.
    #[wasm_bindgen]
    pub fn protocol() -> u32 {
        1
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("kubeloop-engine is the page's JavaScript engine module (a wasm build); run `kubeloop` for the command line");
    std::process::exit(2);
}
