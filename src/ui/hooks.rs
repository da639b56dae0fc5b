//! Hooks tying browser timers to a component's lifetime.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// What the frame loop is waiting for.
#[derive(Clone, Copy)]
enum Pending {
    Nothing,
    /// A requestAnimationFrame id.
    Frame(i32),
    /// A setTimeout id: the loop sleeps, then asks for a frame.
    Sleep(i32),
}

/// A JS callback held until the loop stops (one for frames, one for the sleep's timer).
type Slot<F> = RefCell<Option<Closure<F>>>;

/// The frame loop's state, shared by its two closures (which hold it weakly, so the loop is
/// freed with the component) and by [`FrameWaker`].
struct FrameLoop {
    on_frame: RefCell<Callback<f64, f64>>,
    alive: Cell<bool>,
    pending: Cell<Pending>,
    last_ts: Cell<Option<f64>>,
    frame: Slot<dyn FnMut(f64)>,
    timer: Slot<dyn FnMut()>,
}

impl FrameLoop {
    fn request_frame(&self) {
        let (Some(w), Ok(frame)) = (web_sys::window(), self.frame.try_borrow()) else {
            return;
        };
        if let Some(c) = frame.as_ref() {
            if let Ok(id) = w.request_animation_frame(c.as_ref().unchecked_ref()) {
                self.pending.set(Pending::Frame(id));
            }
        }
    }

    fn sleep(&self, ms: f64) {
        let (Some(w), Ok(timer)) = (web_sys::window(), self.timer.try_borrow()) else {
            return;
        };
        let Some(c) = timer.as_ref() else { return };
        match w.set_timeout_with_callback_and_timeout_and_arguments_0(
            c.as_ref().unchecked_ref(),
            ms.ceil() as i32,
        ) {
            Ok(id) => self.pending.set(Pending::Sleep(id)),
            // No timer: keep drawing every frame rather than stop.
            Err(_) => {
                drop(timer);
                self.request_frame();
            }
        }
    }

    fn cancel(&self) {
        if let Some(w) = web_sys::window() {
            match self.pending.replace(Pending::Nothing) {
                Pending::Frame(id) => {
                    let _ = w.cancel_animation_frame(id);
                }
                Pending::Sleep(id) => w.clear_timeout_with_handle(id),
                Pending::Nothing => {}
            }
        }
    }
}

/// Ends the frame loop's sleep at once: an action (a click, a JS API call) may have set things
/// in motion that the next frame should show without waiting for the sleep to end.
#[derive(Clone)]
pub struct FrameWaker(Rc<FrameLoop>);

impl FrameWaker {
    /// Asks for the next animation frame now if the loop is sleeping.
    pub fn wake(&self) {
        if self.0.alive.get() && matches!(self.0.pending.get(), Pending::Sleep(_)) {
            self.0.cancel();
            self.0.request_frame();
        }
    }
}

/// Runs the page's frame loop while the component is mounted: `on_frame(real_ms_since_last_frame)`
/// on animation frames, and its answer says how long the loop may sleep before the next one (0:
/// the next animation frame). requestAnimationFrame follows the display's refresh and pauses in
/// background tabs, so a hidden playground costs nothing; a sleep is a timer that then asks for
/// a frame, so it pauses there too. A page that sleeps asks the browser for no frames at all,
/// where a frame requested and left unused still costs the browser its layer and commit work.
/// The loop stops when the component unmounts (the effect's teardown cancels what is pending and
/// drops the closures).
#[hook]
pub fn use_frame_loop(on_frame: Callback<f64, f64>) -> FrameWaker {
    let lp = use_memo((), |_| {
        Rc::new(FrameLoop {
            on_frame: RefCell::new(Callback::from(|_| 0.0)),
            alive: Cell::new(true),
            pending: Cell::new(Pending::Nothing),
            last_ts: Cell::new(None),
            frame: RefCell::new(None),
            timer: RefCell::new(None),
        })
    });
    let lp: Rc<FrameLoop> = (*lp).clone();
    *lp.on_frame.borrow_mut() = on_frame;
    {
        let lp = lp.clone();
        use_effect_with((), move |_| {
            lp.alive.set(true);
            let weak = Rc::downgrade(&lp);
            let frame = Closure::wrap(Box::new(move |ts: f64| {
                let Some(lp) = weak.upgrade() else { return };
                lp.pending.set(Pending::Nothing);
                if !lp.alive.get() {
                    return;
                }
                let dt = lp.last_ts.get().map_or(0.0, |l| (ts - l).max(0.0));
                lp.last_ts.set(Some(ts));
                // Clone first: emitting re-renders the component, which replaces `on_frame`.
                let cb = lp.on_frame.borrow().clone();
                let sleep = cb.emit(dt);
                if !lp.alive.get() || !matches!(lp.pending.get(), Pending::Nothing) {
                    return;
                }
                if sleep > 0.0 && sleep.is_finite() {
                    lp.sleep(sleep);
                } else {
                    lp.request_frame();
                }
            }) as Box<dyn FnMut(f64)>);
            let weak = Rc::downgrade(&lp);
            let timer = Closure::wrap(Box::new(move || {
                let Some(lp) = weak.upgrade() else { return };
                lp.pending.set(Pending::Nothing);
                if lp.alive.get() {
                    lp.request_frame();
                }
            }) as Box<dyn FnMut()>);
            *lp.frame.borrow_mut() = Some(frame);
            *lp.timer.borrow_mut() = Some(timer);
            lp.request_frame();
            move || {
                lp.alive.set(false);
                lp.cancel();
                lp.frame.borrow_mut().take();
                lp.timer.borrow_mut().take();
            }
        });
    }
    FrameWaker(lp)
}
