//! Hooks tying browser timers to a component's lifetime.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Holds the frame closure so it can re-arm itself (and be freed on unmount).
type FrameSlot = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

/// Calls `on_frame(real_ms_since_last_frame)` on every animation frame while the component is
/// mounted. requestAnimationFrame, not a timer: it follows the display's refresh and pauses in
/// background tabs, so a hidden playground costs nothing. The loop stops when the component
/// unmounts (the effect's teardown cancels the pending frame and drops the closure).
#[hook]
pub fn use_animation_frame(on_frame: Callback<f64>) {
    let latest = use_mut_ref(|| on_frame.clone());
    *latest.borrow_mut() = on_frame;
    use_effect_with((), move |_| {
        let alive = Rc::new(Cell::new(true));
        let pending: Rc<Cell<Option<i32>>> = Rc::new(Cell::new(None));
        let slot: FrameSlot = Rc::new(RefCell::new(None));
        let last_ts: Rc<Cell<Option<f64>>> = Rc::new(Cell::new(None));
        {
            let alive = alive.clone();
            let pending_inner = pending.clone();
            let slot_inner = slot.clone();
            let closure = Closure::wrap(Box::new(move |ts: f64| {
                pending_inner.set(None);
                if !alive.get() {
                    return;
                }
                let dt = last_ts.get().map_or(0.0, |l| (ts - l).max(0.0));
                last_ts.set(Some(ts));
                // Clone first: emitting re-renders the component, which replaces `latest`.
                let cb = latest.borrow().clone();
                cb.emit(dt);
                if !alive.get() {
                    return;
                }
                if let (Some(w), Ok(s)) = (web_sys::window(), slot_inner.try_borrow()) {
                    if let Some(c) = s.as_ref() {
                        if let Ok(id) = w.request_animation_frame(c.as_ref().unchecked_ref()) {
                            pending_inner.set(Some(id));
                        }
                    }
                }
            }) as Box<dyn FnMut(f64)>);
            if let Some(w) = web_sys::window() {
                if let Ok(id) = w.request_animation_frame(closure.as_ref().unchecked_ref()) {
                    pending.set(Some(id));
                }
            }
            *slot.borrow_mut() = Some(closure);
        }
        move || {
            alive.set(false);
            if let (Some(w), Some(id)) = (web_sys::window(), pending.get()) {
                let _ = w.cancel_animation_frame(id);
            }
            // Breaks the closure ↔ slot cycle so the closure is freed.
            if let Ok(mut s) = slot.try_borrow_mut() {
                s.take();
            }
        }
    });
}
