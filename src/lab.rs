//! The page's checker module: "Check my controller" (`sim::controller_check`) with the whole
//! simulation and the JavaScript interpreter in it, built as a third wasm file that the page
//! loads only when a learner first asks for a check (`src/ui/engine.rs`), so that neither the
//! checker nor a second copy of anything weighs on the first paint. Natively `kubeloop check`
//! runs the same code.

#[cfg(target_arch = "wasm32")]
mod exports {
    use kubeloop::sim::controller_check::check_controller;
    use kubeloop::sim::script::engine::{install, Builtin};
    use kubeloop::viewmodel::check::outcome_json;
    use wasm_bindgen::prelude::*;

    /// Checks the learner's controller in `text` (the editor's file): the outcome as JSON,
    /// `{"ok": report}` or `{"err": [diagnostics]}`.
    #[wasm_bindgen]
    pub fn check(text: &str) -> String {
        // Runs here, in-process: this module carries the interpreter itself.
        install(std::rc::Rc::new(Builtin));
        outcome_json(&check_controller("editor.yaml", text, None)).to_string()
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
    eprintln!("kubeloop-lab is the page's checker module (a wasm build); run `kubeloop check FILE` for the command line");
    std::process::exit(2);
}
