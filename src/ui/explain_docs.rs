//! Fetches `kubectl explain`'s descriptions the first time a command needs them, so their
//! 120 kB stay out of the first paint; commands typed meanwhile wait behind, in order.

use std::cell::{Cell, RefCell};

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::sim::api::openapi::docs;
use crate::sim::kubectl::explain::wants_docs;

type Pending = Box<dyn FnOnce()>;

thread_local! {
    static LOADING: Cell<bool> = const { Cell::new(false) };
    static QUEUE: RefCell<Vec<Pending>> = const { RefCell::new(Vec::new()) };
}

/// Runs `then` once `line` can run: at once, unless it is `kubectl explain` and the
/// descriptions are not here yet, or a fetch is under way (then after it, in order).
pub fn when_ready(line: &str, then: impl FnOnce() + 'static) {
    if LOADING.with(Cell::get) {
        QUEUE.with(|q| q.borrow_mut().push(Box::new(then)));
        return;
    }
    if !wants_docs(line) || docs::get().is_some() {
        then();
        return;
    }
    LOADING.with(|l| l.set(true));
    QUEUE.with(|q| q.borrow_mut().push(Box::new(then)));
    wasm_bindgen_futures::spawn_local(async {
        match fetch_text(docs::PATH).await.and_then(|t| docs::install(&t)) {
            Ok(()) => {}
            // explain itself then says the descriptions are missing; the console shows it.
            Err(e) => web_sys::console::warn_1(&format!("kubectl explain: {e}").into()),
        }
        LOADING.with(|l| l.set(false));
        let waiting = QUEUE.with(|q| std::mem::take(&mut *q.borrow_mut()));
        for run in waiting {
            run();
        }
    });
}

/// Starts the fetch for a caller that cannot wait (the synchronous JS API): its first
/// `kubectl explain` says the descriptions are loading, and later ones find them.
pub fn prefetch(line: &str) {
    if wants_docs(line) && docs::get().is_none() && !LOADING.with(Cell::get) {
        when_ready(line, || {});
    }
}

async fn fetch_text(url: &str) -> Result<String, String> {
    let shown = |e: wasm_bindgen::JsValue| format!("{url}: {e:?}");
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(shown)?;
    let response: web_sys::Response = response.dyn_into().map_err(shown)?;
    if !response.ok() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let text = JsFuture::from(response.text().map_err(shown)?)
        .await
        .map_err(shown)?;
    text.as_string().ok_or_else(|| format!("{url}: not text"))
}
