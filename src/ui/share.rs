//! Share links in the app: opening `#example/<name>` and `#k1:…` links, the Share button
//! (Ctrl/Cmd+S), and the address bar that follows the editor.
//!
//! The editor's text is on the page's bus ([`super::bus`]), which this module reads and writes.
//! Opening a link loads its scenario through
//! [`Action::Load`], so the page starts exactly where `kubeloop run` starts. A link that cannot be
//! opened changes nothing: the reader's own text stays in the editor (and in localStorage, which
//! only the reader's typing ever writes) and a banner says, as text, what was wrong. Reloading a
//! page whose address bar holds a link re-opens that link from t=0 with its seed, keeping the
//! reader's own edits to it ([`edits_to_keep`]): a reload is a replay that loses no typing.
//!
//! In an embed ([`super::embed`]) the address bar is never touched and the Share button becomes
//! an "Open in Kubeloop" link to the full playground with the same scenario.

use std::cell::RefCell;
use std::rc::Rc;

use gloo_timers::callback::Interval;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

use super::bus::{
    self, dispatcher, editor_text, flags, forget_edits, model, now_ms, set_editor_text,
};
use super::state::{reply, Action};
use crate::sim::examples;
use crate::sim::input::diagnostic::Diagnostic;
use crate::sim::share::{self, Link, Shared, LONG_LINK_WARNING, MAX_FRAGMENT};
use crate::viewmodel::embed_flags::{self, first_tab, parse_view, Panel};
use crate::viewmodel::Playground;

/// localStorage key of the "keep the address bar in sync" switch (on unless turned off).
const TRACK_KEY: &str = "kubeloop.trackUrl.v1";
/// How long the editor must be still before the address bar is rewritten, in ms.
const DEBOUNCE_MS: f64 = 500.0;
/// localStorage key: a digest of the address-bar fragment the reader's latest edits were made
/// to, so that reloading that link keeps them (see [`edits_to_keep`]).
const EDITED_LINK_KEY: &str = "kubeloop.editedLink.v1";

/// The Share popover's contents.
#[derive(Clone, Debug, PartialEq)]
struct Popover {
    url: String,
    /// None while the clipboard is being asked; Some(true) copied; Some(false) copy by hand.
    copied: Option<bool>,
}

/// What share links keep between calls (the editor's text and the app's handles are in
/// [`super::bus`]).
#[derive(Default)]
struct ShareState {
    /// The seed the open link (or `?seed=`) asked for, carried into new links.
    seed: Option<u64>,
    /// The `view=` the open link carried.
    view: Option<String>,
    /// Why the last link could not be opened.
    banner: Option<String>,
    /// The reader's own text to open instead of the link's, once (a reload; see [`install`]).
    keep_edits: Option<String>,
    /// What opening the page's link before the first render left for [`install`] to finish.
    startup: Option<Opening>,
    /// The link holds a learner's controller: it opens once the engine module has loaded, so
    /// [`install`] dispatches its load instead of finishing one.
    startup_waits_for_engine: bool,
    popover: Option<Popover>,
    /// The fragment the page last wrote to, or opened from, the address bar (`#k1:…`, or empty).
    /// Another one there is a navigation whose `hashchange` is still queued.
    address: String,
    /// A rewrite of the address bar is queued for when the current task is done.
    address_due: bool,
    track: bool,
    listeners: Vec<(u64, Rc<dyn Fn()>)>,
    next_listener: u64,
}

thread_local! {
    static SHARE: RefCell<ShareState> = RefCell::new(ShareState { track: true, ..ShareState::default() });
}

/// Runs `f` on the share state. Never call into Yew (emit, set) inside: that may re-enter.
fn with<R>(f: impl FnOnce(&mut ShareState) -> R) -> R {
    SHARE.with(|b| f(&mut b.borrow_mut()))
}

fn warn(msg: &str) {
    web_sys::console::warn_1(&JsValue::from_str(msg));
}

fn notify_listeners() {
    let ls: Vec<Rc<dyn Fn()>> = with(|b| b.listeners.iter().map(|(_, l)| l.clone()).collect());
    for l in ls {
        l();
    }
}

/// Re-renders the calling component whenever the share state (banner, popover) changes.
#[hook]
fn use_bus_updates() {
    let update = use_force_update();
    use_effect_with((), move |_| {
        let id = with(|b| {
            b.next_listener += 1;
            let id = b.next_listener;
            b.listeners
                .push((id, Rc::new(move || update.force_update()) as Rc<dyn Fn()>));
            id
        });
        move || with(|b| b.listeners.retain(|(i, _)| *i != id))
    });
}

/// FNV-1a, 64 bits: enough to tell one link from another without storing a long fragment.
fn digest(fragment: &str) -> String {
    let h = fragment.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{h:016x}")
}

/// Notes which link (the address-bar fragment now) the reader's edits start from.
fn remember_edited_link() {
    let Some(s) = storage() else {
        return;
    };
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    let _ = s.set_item(EDITED_LINK_KEY, &digest(hash.trim_start_matches('#')));
}

/// True when this page load is a reload (or Back/Forward) rather than a link being opened.
fn is_reload() -> bool {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.get_entries_by_type("navigation").get(0))
        .and_then(|e| js_sys::Reflect::get(&e, &"type".into()).ok())
        .and_then(|t| t.as_string())
        .is_some_and(|t| t == "reload" || t == "back_forward")
}

/// What a reload of the link `hash` opens instead of the link's own text: the autosaved text,
/// when the reader's latest edits were made to this very link. Those edits may be newer than the
/// address bar (it catches up [`DEBOUNCE_MS`] after typing stops, and never with the switch
/// off), and a reload must not lose them. Opening a link fresh (pasted, clicked, another tab)
/// always shows exactly the link.
fn edits_to_keep(hash: &str) -> Option<String> {
    if !is_reload() {
        return None;
    }
    let base = storage()?.get_item(EDITED_LINK_KEY).ok().flatten()?;
    if base != digest(hash.trim_start_matches('#')) {
        return None;
    }
    super::storage::autosaved_text()
}

/// Opens `text` as a scenario: into the editor and into a fresh simulation.
///
/// For the page's own openings (the lessons menu, an embed's `load`): the address bar then
/// names what is open, and new links carry `seed`.
pub fn load(text: &str, seed: Option<u64>) -> Result<(), Vec<Diagnostic>> {
    with(|b| {
        b.seed = seed;
        b.view = None;
    });
    let result = load_inner(text, seed);
    if result.is_ok() && with(|b| b.track) {
        write_address_bar();
    }
    result
}

/// The toolbar's "Reset with seed": new links carry `seed`, so they replay this run.
pub fn reset_with_seed(seed: u64) {
    with(|b| b.seed = Some(seed));
    if let Some(d) = dispatcher() {
        d.emit(Action::ResetWithSeed(seed));
    }
    if with(|b| b.track) {
        write_address_bar();
    }
}

fn load_inner(text: &str, seed: Option<u64>) -> Result<(), Vec<Diagnostic>> {
    set_editor_text(text);
    let Some(d) = dispatcher() else {
        return Err(Vec::new());
    };
    let r = reply();
    d.emit(Action::Load(text.to_string(), seed, r.clone()));
    let result = r.borrow_mut().take();
    match result {
        Some(r) => r,
        // It opens once the engine for its Controller document has loaded.
        None if super::engine::loading() => Ok(()),
        None => Err(Vec::new()),
    }
}

fn set_banner(msg: Option<String>) {
    with(|b| b.banner = msg);
    notify_listeners();
}

/// Clicks the activity tab for `panel` (the tabs are the app's own buttons).
pub fn select_tab(panel: Panel) {
    let sel = format!("[data-testid=\"tab-{}\"]", panel.as_str());
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(&sel).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        el.click();
    }
}

/// A link from the address bar, decoded and ready to open.
struct Opening {
    /// The scenario text (the reader's kept edits on a reload, else the link's).
    text: String,
    seed: Option<u64>,
    /// The speed to play at (`?speed=` or the link's).
    speed: Option<f64>,
    /// The activity tab to show (`?view=` or the link's).
    tab: Option<Panel>,
    /// The text is the reader's edits to the link, not the link itself.
    keeping: bool,
    /// The run to replay (a link to a moment).
    run: Option<share::RunLink>,
}

/// Reads a fragment (`#k1:…`, `#example/<name>`): `Ok(None)` for an empty one (not a link),
/// `Err(())` when it names nothing that can be opened (the banner then says why).
fn resolve(hash: &str) -> Result<Option<Opening>, ()> {
    let frag = hash.trim_start_matches('#');
    let kept = with(|b| b.keep_edits.take());
    if frag.trim().is_empty() {
        return Ok(None);
    }
    // The address bar now shows what the reader asked for: no pending edit may overwrite it.
    forget_edits();
    with(|b| b.popover = None);
    let flags = flags();
    let (text, link_seed, link_view, link_speed, run) = match share::decode(frag) {
        Ok(Link::Example(name)) => match examples::by_name(&name) {
            Some(t) => (t.to_string(), None, None, None, None),
            None => {
                let shown: String = name.chars().take(60).collect();
                set_banner(Some(format!(
                    "There is no built-in example called \"{shown}\". Nothing was changed; your own scenario is still here."
                )));
                return Err(());
            }
        },
        Ok(Link::Scenario(s)) => (s.text, s.seed, s.view, s.speed, s.run),
        Err(e) => {
            set_banner(Some(e.to_string()));
            return Err(());
        }
    };
    with(|b| {
        b.seed = link_seed;
        b.view = link_view.clone();
    });
    set_banner(None);
    let view = flags
        .view
        .clone()
        .or_else(|| link_view.map(|v| parse_view(&v).0));
    Ok(Some(Opening {
        run,
        keeping: kept.is_some(),
        text: kept.unwrap_or(text),
        seed: link_seed.or(flags.seed),
        speed: flags
            .speed
            .or(link_speed.filter(|s| s.is_finite() && *s > 0.0)),
        tab: view.as_deref().and_then(first_tab),
    }))
}

/// What is left of opening a link once its scenario is loaded (`result`): the address bar, the
/// speed and the tab. Needs the mounted app.
fn finish_opening(opening: &Opening, result: &Result<(), Vec<Diagnostic>>) {
    if opening.keeping && with(|b| b.track) {
        // The address bar names what is open: the link with the reader's edits.
        write_address_bar();
    }
    if let Err(diags) = result {
        warn(&format!(
            "kubeloop: the linked scenario has {} problem(s); it is in the editor to fix",
            diags.len()
        ));
    }
    if let (Some(d), Some(s)) = (dispatcher(), opening.speed) {
        d.emit(Action::SetSpeed(s));
    }
    if let Some(tab) = opening.tab {
        select_tab(tab);
    }
}

/// Reads a fragment (`#k1:…`, `#example/<name>`) and opens what it names. Returns false (and
/// shows why in the banner) when it could not be opened; an empty fragment is not a link.
pub fn open_fragment(hash: &str) -> bool {
    let opening = match resolve(hash) {
        Ok(Some(o)) => o,
        Ok(None) => return true,
        Err(()) => return false,
    };
    let result = match &opening.run {
        Some(run) => {
            set_editor_text(&opening.text);
            if let Some(d) = dispatcher() {
                d.emit(Action::OpenRun(Box::new(run.clone())));
            }
            Ok(())
        }
        None => load_inner(&opening.text, opening.seed),
    };
    finish_opening(&opening, &result);
    true
}

/// The model the app starts with: the address bar's link already loaded when there is one, so
/// the first render shows it (rather than booting and drawing the default cluster, then replacing
/// it: issue #10's start time), else the default cluster. Called once, before the first render;
/// [`install`] finishes the opening once the app is mounted.
pub fn initial_playground() -> Playground {
    let default_seed = super::storage::seed();
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    if hash.trim_start_matches('#').trim().is_empty() {
        return Playground::new(default_seed);
    }
    // A reload re-opens the link from t=0, with the reader's edits to it (edits_to_keep).
    let kept = edits_to_keep(&hash);
    with(|b| b.keep_edits = kept);
    let Ok(Some(opening)) = resolve(&hash) else {
        return Playground::new(default_seed);
    };
    // The editor is not mounted yet: it starts with this text (bus::take_pending_text).
    set_editor_text(&opening.text);
    let needs_engine = match &opening.run {
        Some(run) => super::engine::run_needs_engine(run),
        None => crate::sim::input::controller_doc::mentioned_in(&opening.text),
    };
    if needs_engine && crate::sim::script::engine::installed().is_none() {
        with(|b| {
            b.startup = Some(opening);
            b.startup_waits_for_engine = true;
        });
        return Playground::new(default_seed);
    }
    if let Some(run) = &opening.run {
        let (model, _) = Playground::opened_run(run, default_seed);
        with(|b| b.startup = Some(opening));
        return model;
    }
    let (model, result) = Playground::opened(&opening.text, opening.seed, default_seed);
    with(|b| b.startup = Some(opening));
    if let Err(diags) = &result {
        warn(&format!(
            "kubeloop: the linked scenario has {} problem(s); it is in the editor to fix",
            diags.len()
        ));
    }
    model
}

/// What the current scenario looks like as a link payload.
fn current_shared() -> Shared {
    let text = editor_text();
    let (seed, view) = with(|b| (b.seed, b.view.clone()));
    let speed = model()
        .and_then(|m| m.try_borrow().ok().map(|m| m.speed))
        .filter(|s| (*s - 1.0).abs() > 1e-9);
    let flags = flags();
    let view = view.or_else(|| flags.view.as_deref().map(embed_flags::view_param));
    let run = model().and_then(|m| m.try_borrow().ok().and_then(|m| m.run_link()));
    Shared {
        text,
        seed,
        view,
        speed,
        run,
    }
}

fn href() -> String {
    web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

/// The link to the full playground with the current scenario (the Share URL outside an embed,
/// the "Open in Kubeloop" URL inside one).
pub fn share_url() -> String {
    let fragment = fragment_for(&current_shared());
    embed_flags::playground_url(&href(), &fragment)
}

/// The link to the full playground opening the scenario of a share fragment (`k1:…`).
pub fn playground_link(fragment: &str) -> String {
    embed_flags::playground_url(&href(), fragment)
}

/// The link fragment: `example/<name>` for an untouched built-in example with no settings,
/// else the encoded scenario.
fn fragment_for(shared: &Shared) -> String {
    if shared.seed.is_none()
        && shared.speed.is_none()
        && shared.view.is_none()
        && shared.run.is_none()
    {
        if let Some((name, _)) = examples::ALL.iter().find(|(_, t)| *t == shared.text) {
            return format!("example/{name}");
        }
    }
    share::encode(shared)
}

/// The run moved somewhere a link must follow (an action, a pause, an advance or a step while
/// paused): the address bar, when it tracks the page, names it as soon as the current task is
/// done. A script that advances a hundred times in one go (the JS API) has the run encoded once,
/// not a hundred times: at 10,000 pods each encoding deflated every manifest the run applied,
/// a sixth of the page's scheduling case in a CPU profile.
pub fn run_changed() {
    if with(|b| !b.track || std::mem::replace(&mut b.address_due, true)) {
        return;
    }
    gloo_timers::callback::Timeout::new(0, || {
        with(|b| b.address_due = false);
        if with(|b| b.track) {
            write_address_bar();
        }
    })
    .forget();
}

/// Rewrites the address bar to the current scenario (never in an embed).
fn write_address_bar() {
    if flags().embed {
        return;
    }
    let fragment = fragment_for(&current_shared());
    if fragment.len() > MAX_FRAGMENT {
        warn("kubeloop: the scenario is too large for a link; the address bar was not updated");
        return;
    }
    let url = format!("{}#{fragment}", embed_flags::without_fragment(&href()));
    if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
        if h.replace_state_with_url(&JsValue::NULL, "", Some(&url))
            .is_ok()
        {
            with(|b| b.address = format!("#{fragment}"));
        }
    }
}

/// Points the embed's "Open in Kubeloop" link at the current scenario.
fn refresh_open_link() {
    if let Some(a) = web_sys::window().and_then(|w| w.document()).and_then(|d| {
        d.query_selector("[data-testid=\"open-full\"]")
            .ok()
            .flatten()
    }) {
        let _ = a.set_attribute("href", &share_url());
    }
}

fn storage() -> Option<web_sys::Storage> {
    if flags().embed {
        return None;
    }
    web_sys::window()?.local_storage().ok().flatten()
}

fn set_tracking(on: bool) {
    with(|b| b.track = on);
    if let Some(s) = storage() {
        let _ = s.set_item(TRACK_KEY, if on { "1" } else { "0" });
    }
    if on {
        write_address_bar();
    } else if let Some(w) = web_sys::window() {
        // The address bar stops following the editor: leave no stale scenario in it.
        let url = embed_flags::without_fragment(&href()).to_string();
        if let Ok(h) = w.history() {
            if h.replace_state_with_url(&JsValue::NULL, "", Some(&url))
                .is_ok()
            {
                with(|b| b.address.clear());
            }
        }
    }
    notify_listeners();
}

/// Opens the Share popover and tries to copy the link to the clipboard.
pub fn share_now() {
    let url = share_url();
    with(|b| {
        b.popover = Some(Popover {
            url: url.clone(),
            copied: None,
        })
    });
    notify_listeners();
    let done = |ok: bool| {
        with(|b| {
            if let Some(p) = &mut b.popover {
                p.copied = Some(ok);
            }
        });
        notify_listeners();
        if !ok {
            select_url_field();
        }
    };
    // navigator.clipboard is missing on insecure origins and may refuse in iframes.
    let promise = web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w.navigator(), &"clipboard".into()).ok())
        .filter(|c| !c.is_undefined() && !c.is_null())
        .and_then(|c| {
            let f = js_sys::Reflect::get(&c, &"writeText".into())
                .ok()?
                .dyn_into::<js_sys::Function>()
                .ok()?;
            f.call1(&c, &JsValue::from_str(&url))
                .ok()?
                .dyn_into::<js_sys::Promise>()
                .ok()
        });
    match promise {
        Some(p) => {
            let ok = Closure::<dyn FnMut(JsValue)>::once_into_js(move |_: JsValue| done(true));
            let fail = Closure::<dyn FnMut(JsValue)>::once_into_js(move |_: JsValue| done(false));
            // Through Reflect: js-sys' typed `then2` wants owned closures; these free themselves.
            let then = js_sys::Reflect::get(&p, &"then".into())
                .ok()
                .and_then(|t| t.dyn_into::<js_sys::Function>().ok());
            if let Some(then) = then {
                let _ = then.call2(&p, &ok, &fail);
            }
        }
        None => done(false),
    }
}

fn select_url_field() {
    if let Some(input) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector("[data-testid=\"share-url\"]")
                .ok()
                .flatten()
        })
        .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
    {
        let _ = input.focus();
        input.select();
    }
}

fn close_popover() {
    // The focus was in the popover (its link field, its Close button): back to Share, not lost.
    let doc = web_sys::window().and_then(|w| w.document());
    let inside = doc
        .as_ref()
        .and_then(|d| d.active_element())
        .and_then(|a| a.closest(".share-pop").ok().flatten())
        .is_some();
    with(|b| b.popover = None);
    notify_listeners();
    if inside {
        if let Some(button) = doc
            .and_then(|d| d.query_selector("[data-testid=\"share\"]").ok().flatten())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = button.focus();
        }
    }
}

/// Keeps the listeners and the timer installed by [`install`]; dropping it removes them.
pub struct ShareHandle {
    _timer: Interval,
    keydown: Closure<dyn Fn(web_sys::KeyboardEvent)>,
    hashchange: Closure<dyn Fn(web_sys::Event)>,
}

impl Drop for ShareHandle {
    fn drop(&mut self) {
        if let Some(w) = web_sys::window() {
            let _ = w.remove_event_listener_with_callback(
                "keydown",
                self.keydown.as_ref().unchecked_ref(),
            );
            let _ = w.remove_event_listener_with_callback(
                "hashchange",
                self.hashchange.as_ref().unchecked_ref(),
            );
        }
        bus::detach();
    }
}

/// Wires share links to the mounted app: opens the link in the address bar, applies the URL
/// flags, starts following the editor in the address bar and installs Ctrl/Cmd+S. Called once,
/// from the app's first effect, before the embed bridge attaches and `?autoplay` plays.
pub fn install(dispatch: Callback<Action>, model: Rc<RefCell<Playground>>) -> Option<ShareHandle> {
    let window = web_sys::window()?;
    let flags = flags();
    let track = storage()
        .and_then(|s| s.get_item(TRACK_KEY).ok().flatten())
        .is_none_or(|v| v != "0");
    bus::attach(dispatch.clone(), model);
    super::engine::attach(dispatch.clone());
    bus::on_edit_started(remember_edited_link);
    with(|b| b.track = track && !flags.embed);

    let hash = window.location().hash().unwrap_or_default();
    with(|b| b.address = hash.clone());
    let opened_link = !hash.trim_start_matches('#').trim().is_empty();
    if opened_link {
        // initial_playground already loaded the link (or put why not in the banner), unless it
        // waits for the engine of its Controller document: the reducer loads that first.
        if let Some(opening) = with(|b| b.startup.take()) {
            if with(|b| std::mem::take(&mut b.startup_waits_for_engine)) {
                dispatch.emit(match &opening.run {
                    Some(run) => Action::OpenRun(Box::new(run.clone())),
                    None => Action::Load(opening.text.clone(), opening.seed, reply()),
                });
            }
            // Ok: a scenario with errors was already reported when it was loaded.
            finish_opening(&opening, &Ok(()));
        }
    } else {
        if let Some(s) = flags.speed {
            dispatch.emit(Action::SetSpeed(s));
        }
        if let Some(tab) = flags.view.as_deref().and_then(first_tab) {
            select_tab(tab);
        }
    }

    let keydown = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(|e: web_sys::KeyboardEvent| {
        let s = e.key().eq_ignore_ascii_case("s");
        if s && (e.ctrl_key() || e.meta_key())
            && !e.alt_key()
            && !e.shift_key()
            && !bus::flags().embed
        {
            e.prevent_default();
            share_now();
        } else if e.key() == "Escape" && with(|b| b.popover.is_some()) {
            close_popover();
        }
    });
    let _ = window.add_event_listener_with_callback("keydown", keydown.as_ref().unchecked_ref());
    let hashchange = Closure::<dyn Fn(web_sys::Event)>::new(|e: web_sys::Event| {
        // A link pasted into the address bar of an open playground only changes the fragment.
        // Open the URL this event is about (its newURL), not whatever the address bar shows by
        // the time the event runs.
        let new_url = js_sys::Reflect::get(&e, &JsValue::from_str("newURL"))
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_else(href);
        let hash = embed_flags::fragment_of(&new_url).to_string();
        with(|b| b.address = hash.clone());
        open_fragment(&hash);
    });
    let _ =
        window.add_event_listener_with_callback("hashchange", hashchange.as_ref().unchecked_ref());

    let timer = Interval::new(250, || {
        if bus::take_text_changed() && bus::flags().embed {
            refresh_open_link();
        }
        let now = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .unwrap_or_default();
        let settled = bus::edited_since().is_some_and(|t| now_ms() - t >= DEBOUNCE_MS);
        let due =
            settled && with(|b| b.track && embed_flags::may_rewrite_address_bar(&b.address, &now));
        if due {
            bus::mark_clean();
            write_address_bar();
        }
    });
    Some(ShareHandle {
        _timer: timer,
        keydown,
        hashchange,
    })
}

/// The "this link could not be opened" banner (nothing when the link was fine).
#[component]
pub fn LinkBanner() -> Html {
    use_bus_updates();
    let Some(msg) = with(|b| b.banner.clone()) else {
        return html! {};
    };
    let dismiss = Callback::from(|_: MouseEvent| set_banner(None));
    html! {
        <div class="link-banner" role="alert" data-testid="link-error">
            <svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
                <path fill="currentColor" d="M12 3 1.5 21h21L12 3zm-1 6h2v6h-2V9zm0 8h2v2h-2v-2z" />
            </svg>
            <div class="link-banner-text">
                <strong>{ "This link could not be opened." }</strong>
                <span>{ msg }</span>
            </div>
            <button class="btn btn-small" onclick={dismiss}>{ "Dismiss" }</button>
        </div>
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The toolbar's Share button and its popover; in an embed, the "Open in Kubeloop" link.
#[component]
pub fn ShareButton() -> Html {
    use_bus_updates();
    if flags().embed {
        // Kept current by the timer in `install`, and refreshed at click time to be sure.
        let refresh = Callback::from(|_: MouseEvent| refresh_open_link());
        let base = embed_flags::playground_url(&href(), "");
        return html! {
            <a class="btn btn-ghost open-full" data-testid="open-full" href={base} target="_blank" rel="noopener"
                onclick={refresh.clone()} onmousedown={refresh}
                title="Open this scenario in the full playground, in a new tab">
                <span>{ "Open in Kubeloop" }</span>
                <svg class="icon" viewBox="0 0 24 24" width="14" height="14" aria-hidden="true" focusable="false">
                    <path fill="currentColor" d="M14 4h6v6h-2V7.4l-7.3 7.3-1.4-1.4L16.6 6H14V4zM5 6h6v2H6v10h10v-5h2v7H4V6h1z" />
                </svg>
            </a>
        };
    }
    let (popover, track) = with(|b| (b.popover.clone(), b.track));
    let open = Callback::from(|_: MouseEvent| {
        if with(|b| b.popover.is_some()) {
            close_popover();
        } else {
            share_now();
        }
    });
    let pop = popover.map(|p| {
        let len = p.url.len();
        let long = len > LONG_LINK_WARNING;
        let status = match p.copied {
            None => "Copying…",
            Some(true) => "Link copied to the clipboard.",
            Some(false) => "Your browser did not let the page copy: select the link and copy it (Ctrl+C / ⌘C).",
        };
        let on_track = Callback::from(|e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            set_tracking(el.checked());
        });
        let select_all = Callback::from(|e: FocusEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            el.select();
        });
        html! {
            <div class="share-pop" role="dialog" aria-label="Share this scenario" data-testid="share-popover">
                <div class="share-pop-head">
                    <strong>{ "Share this scenario" }</strong>
                    <button class="icon-btn" aria-label="Close" onclick={Callback::from(|_: MouseEvent| close_popover())}>
                        <svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
                            <path fill="currentColor" d="M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12 19 17.6 17.6 19 12 13.4 6.4 19 5 17.6 10.6 12 5 6.4z" />
                        </svg>
                    </button>
                </div>
                <p class={classes!("share-status", (p.copied == Some(true)).then_some("is-ok"))} data-testid="share-status" aria-live="polite">{ status }</p>
                <input class="share-url" data-testid="share-url" readonly=true value={p.url.clone()} aria-label="Share link" onfocus={select_all} />
                <p class="share-meta">
                    <span data-testid="share-length">{ format!("{} characters", thousands(len)) }</span>
                    { " · the whole scenario is in the link; it never reaches a server." }
                </p>
                if long {
                    <p class="share-warning" role="alert" data-testid="share-warning">
                        { format!("This link is longer than {} KB. Chat tools, mail and some servers cut long links: check that it still opens, or shorten the scenario.", LONG_LINK_WARNING / 1024) }
                    </p>
                }
                <label class="share-track">
                    <input type="checkbox" data-testid="share-track" checked={track} onchange={on_track} />
                    <span>{ "Keep the address bar in sync with the editor" }</span>
                </label>
            </div>
        }
    });
    html! {
        <div class="share-anchor">
            <button class="btn btn-ghost" data-testid="share" onclick={open} title="Copy a link to this scenario (Ctrl/Cmd+S)"
                aria-label="Share" aria-haspopup="dialog">
                <svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
                    <path fill="currentColor" d="M10.6 13.4a1 1 0 0 1 0-1.4l3.5-3.5a3 3 0 1 1 4.2 4.2l-2 2-1.4-1.4 2-2a1 1 0 1 0-1.4-1.4l-3.5 3.5a1 1 0 0 1-1.4 0zm2.8-2.8a1 1 0 0 1 0 1.4l-3.5 3.5a3 3 0 1 1-4.2-4.2l2-2 1.4 1.4-2 2a1 1 0 1 0 1.4 1.4l3.5-3.5a1 1 0 0 1 1.4 0z" />
                </svg>
                <span>{ "Share" }</span>
            </button>
            // A stable wrapper: Yew matches unkeyed children from the end, so a popover appearing
            // as a new last child used to replace the button, and the focus on it was lost.
            <div class="share-pop-slot">{ for pop }</div>
        </div>
    }
}
