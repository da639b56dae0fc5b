//! Keyboard and focus behaviour of every `<details class="menu">` menu, and the pod menu itself.
//!
//! The menus are plain `<details>` elements (a `<summary>` button and a `role="menu"` list of
//! `role="menuitem"` buttons), so they open with Enter/Space and work without any script. This
//! module adds what a keyboard user expects of a menu, once for all of them, from window
//! listeners: the arrow keys, Home and End move between the items; Escape closes the menu and
//! gives the focus back to whoever opened it; a pod's or node's menu opens with the ContextMenu
//! key or Shift+F10 (and with a right click); choosing an item gives the focus back too; moving
//! the focus out of a menu closes it. Without this, closing a menu from the keyboard dropped the
//! focus on the page body and a keyboard user had to start over from the top.

use std::cell::RefCell;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlElement, KeyboardEvent, MouseEvent};
use yew::prelude::*;

use super::state::{reply, Action};
use crate::sim::faults::{Fault, PodTarget};

/// An open menu's `<details>` element.
const OPEN_MENU: &str = "details.menu[open]";
/// The items the arrow keys move between.
const ITEMS: &str = "[role=menuitem]:not(:disabled)";
/// Elements with a context menu: a pod chip and a node card (the innermost one wins).
const HOSTS: &str = ".pod, .node";
/// What gets the focus back when a host's menu closes and nobody else is there to take it.
const HOST_FOCUS: &str = ".pod-main, .node-name";

thread_local! {
    /// The menu opened by [`open`] and the element that had the focus then.
    static OPENER: RefCell<Option<(Element, HtmlElement)>> = const { RefCell::new(None) };
    /// A menu [`open`] could not focus yet because its items are drawn only once it is open
    /// ([`PodMenu`]); [`items_drawn`] focuses its first item.
    static PENDING_FOCUS: RefCell<Option<Element>> = const { RefCell::new(None) };
}

fn document() -> Option<web_sys::Document> {
    web_sys::window()?.document()
}

/// `root.querySelectorAll(selector)` as HTML elements (web-sys' NodeList is not a feature here).
fn query_all(root: &Element, selector: &str) -> Vec<HtmlElement> {
    let list = js_sys::Reflect::get(root, &"querySelectorAll".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .and_then(|f| f.call1(root, &JsValue::from_str(selector)).ok());
    match list {
        Some(list) => js_sys::Array::from(&list)
            .iter()
            .filter_map(|n| n.dyn_into::<HtmlElement>().ok())
            .collect(),
        None => Vec::new(),
    }
}

fn closest(el: &Element, selector: &str) -> Option<Element> {
    el.closest(selector).ok().flatten()
}

fn focus(el: &HtmlElement) {
    let _ = el.focus();
}

/// The element focused now, unless that is nobody (the body).
fn focused() -> Option<Element> {
    let doc = document()?;
    let active = doc.active_element()?;
    let body: Option<Element> = doc.body().map(Into::into);
    (Some(&active) != body.as_ref()).then_some(active)
}

/// Opens `menu` (if it is not open already) and focuses its first item; `opener` gets the focus
/// back when it closes.
fn open(menu: &Element, opener: Option<HtmlElement>) {
    if let Some(doc) = document() {
        // One menu at a time, as with clicks (src/ui/mod.rs closes the others on click).
        for other in query_all(
            &doc.document_element().unwrap_or_else(|| menu.clone()),
            OPEN_MENU,
        ) {
            if other.unchecked_ref::<Element>() != menu {
                let _ = other.remove_attribute("open");
            }
        }
    }
    let _ = menu.set_attribute("open", "");
    OPENER.with(|o| *o.borrow_mut() = opener.map(|el| (menu.clone(), el)));
    // Placed before the focus moves in, so focusing an item never scrolls the cluster view.
    place(menu);
    match query_all(menu, ITEMS).first() {
        Some(first) => focus(first),
        None => PENDING_FOCUS.with(|p| *p.borrow_mut() = Some(menu.clone())),
    }
}

/// A menu whose items are drawn on opening ([`PodMenu`]) has them now: it is placed again at its
/// real size and, if [`open`] asked for it, its first item takes the focus.
fn items_drawn(menu: &Element) {
    if !menu.has_attribute("open") {
        return;
    }
    place(menu);
    let pending = PENDING_FOCUS.with(|p| p.borrow_mut().take_if(|m| m == menu));
    if pending.is_some() {
        if let Some(first) = query_all(menu, ITEMS).first() {
            focus(first);
        }
    }
}

/// Places an open menu beside its button (a pod's, beside the whole chip) in the window, kept on
/// screen: below and right-aligned when it fits, else left-aligned and/or above. Panels clip what
/// sticks out of them (`overflow: hidden`) and the cluster view contains its paint, which cut
/// menus off (the Lessons menu lost its left 57 px at every width), so the list is shown in the
/// browser's top layer (the Popover API) where no ancestor clips it; it stays where it is in the
/// DOM, so focus, Tab order and events are unchanged.
fn place(menu: &Element) {
    let host = closest(menu, HOSTS);
    let Some(list) = menu
        .query_selector(":scope > [role=menu]")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
    else {
        return;
    };
    // A node's menu hangs from its ⋯ button; a pod's from the whole chip (its ⋯ is a corner badge).
    let anchor = menu
        .query_selector(":scope > summary")
        .ok()
        .flatten()
        .filter(|s| {
            s.get_bounding_client_rect().width() > 0.0
                && !menu.matches(".pod-menu").unwrap_or(false)
        })
        .or(host);
    let (Some(anchor), Some(w)) = (anchor, web_sys::window()) else {
        return;
    };
    let size = |v: Result<JsValue, JsValue>| v.ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let (vw, vh) = (size(w.inner_width()), size(w.inner_height()));
    popover(&list, true);
    let style = list.style();
    for (k, v) in [
        ("position", "fixed"),
        ("margin", "0"),
        ("left", "0px"),
        ("top", "0px"),
        ("right", "auto"),
        ("bottom", "auto"),
    ] {
        let _ = style.set_property(k, v);
    }
    // Where (0, 0) landed: the viewport, unless an ancestor made itself the containing block.
    let origin = list.get_bounding_client_rect();
    let (mw, mh) = (origin.width(), origin.height());
    let a = anchor.get_bounding_client_rect();
    const MARGIN: f64 = 8.0;
    let mut left = a.right() - mw;
    if left < MARGIN {
        left = a.left();
    }
    let left = left.min(vw - mw - MARGIN).max(MARGIN);
    let mut top = a.bottom() + 4.0;
    if top + mh > vh - MARGIN {
        top = a.top() - mh - 4.0;
    }
    let top = top.min(vh - mh - MARGIN).max(MARGIN);
    let _ = style.set_property("left", &format!("{}px", (left - origin.left()).round()));
    let _ = style.set_property("top", &format!("{}px", (top - origin.top()).round()));
}

/// Where the focus goes when `menu` closes: the element that opened it, else its `<summary>`
/// when that is in the tab order, else its pod's or node's main button.
fn return_target(menu: &Element) -> Option<HtmlElement> {
    let opener = OPENER.with(|o| o.borrow_mut().take());
    if let Some((m, el)) = opener {
        if &m == menu && el.is_connected() && !menu.contains(Some(&el)) {
            return Some(el);
        }
    }
    let summary = menu
        .query_selector(":scope > summary")
        .ok()
        .flatten()
        .and_then(|s| s.dyn_into::<HtmlElement>().ok())
        .filter(|s| s.get_attribute("tabindex").as_deref() != Some("-1"));
    summary.or_else(|| {
        closest(menu, HOSTS)
            .and_then(|h| h.query_selector(HOST_FOCUS).ok().flatten())
            .and_then(|e| e.dyn_into::<HtmlElement>().ok())
    })
}

/// Closes `menu` and, if the focus was in it, gives the focus back.
fn close(menu: &Element) {
    let had_focus = focused().is_none_or(|a| menu.contains(Some(&a)));
    let _ = menu.remove_attribute("open");
    if had_focus {
        if let Some(t) = return_target(menu) {
            focus(&t);
        }
    }
}

/// Moves the focus between the items of the open `menu`: `step` +1/-1, or to the first/last.
fn move_focus(menu: &Element, from: &Element, key: &str) {
    let items = query_all(menu, ITEMS);
    if items.is_empty() {
        return;
    }
    let at = items
        .iter()
        .position(|i| i.unchecked_ref::<Element>() == from);
    let n = items.len();
    let next = match (key, at) {
        ("Home", _) => 0,
        ("End", _) => n - 1,
        ("ArrowDown", Some(i)) => (i + 1) % n,
        ("ArrowUp", Some(i)) => (i + n - 1) % n,
        ("ArrowUp", None) => n - 1,
        _ => 0,
    };
    focus(&items[next]);
}

/// The menu keys. Returns true when the key was a menu's and must go no further.
fn on_key(e: &KeyboardEvent) -> bool {
    let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return false;
    };
    let key = e.key();
    let plain = !e.ctrl_key() && !e.meta_key() && !e.alt_key();
    // The context-menu keys on a pod or a node open its menu.
    if plain && (key == "ContextMenu" || (key == "F10" && e.shift_key())) {
        let menu =
            closest(&target, HOSTS).and_then(|h| h.query_selector("details.menu").ok().flatten());
        if let Some(menu) = menu {
            open(&menu, target.dyn_into::<HtmlElement>().ok());
            return true;
        }
        return false;
    }
    if !plain || e.shift_key() {
        return false;
    }
    // The menu button: the down arrow opens the menu at its first item (the up arrow, its last).
    if target.tag_name().eq_ignore_ascii_case("summary") {
        let Some(menu) = target
            .parent_element()
            .filter(|m| m.matches("details.menu").unwrap_or(false))
        else {
            return false;
        };
        if key == "ArrowDown" || key == "ArrowUp" {
            open(&menu, None);
            if key == "ArrowUp" {
                if let Some(from) = focused() {
                    move_focus(&menu, &from, "End");
                }
            }
            return true;
        }
        if key == "Escape" && menu.has_attribute("open") {
            close(&menu);
            return true;
        }
        return false;
    }
    let Some(menu) = closest(&target, OPEN_MENU) else {
        return false;
    };
    match key.as_str() {
        "ArrowDown" | "ArrowUp" | "Home" | "End" => move_focus(&menu, &target, &key),
        "Escape" => close(&menu),
        _ => return false,
    }
    true
}

/// A click on a menu item: once the click is handled, if the item's own handler closed the menu
/// (it acted), the focus goes back to whoever opened it instead of dropping to the page body.
/// Seen in the capture phase and checked in a task of its own, because the items stop the
/// click's propagation and the view may re-render the item away meanwhile.
fn on_item_click(e: &MouseEvent) {
    let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return;
    };
    let Some(menu) = closest(&target, "[role=menuitem]").and_then(|i| closest(&i, OPEN_MENU))
    else {
        return;
    };
    gloo_timers::callback::Timeout::new(0, move || {
        if !menu.has_attribute("open") {
            close(&menu);
        }
    })
    .forget();
}

/// A right click on a pod or a node opens its menu instead of the browser's.
fn on_context_menu(e: &MouseEvent) {
    let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return;
    };
    let Some(host) = closest(&target, HOSTS) else {
        return;
    };
    let Some(menu) = host.query_selector("details.menu").ok().flatten() else {
        return;
    };
    e.prevent_default();
    let opener = host
        .query_selector(HOST_FOCUS)
        .ok()
        .flatten()
        .and_then(|el| el.dyn_into::<HtmlElement>().ok());
    open(&menu, opener);
}

/// Shows (or hides) `list` in the top layer, where browsers have the Popover API.
fn popover(list: &HtmlElement, show: bool) {
    let call = |name: &str| {
        if let Some(f) = js_sys::Reflect::get(list, &name.into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        {
            let _ = f.call0(list);
        }
    };
    let supported = js_sys::Reflect::has(list, &"showPopover".into()).unwrap_or(false);
    if !supported {
        return;
    }
    let showing = list.matches(":popover-open").unwrap_or(false);
    if show && !showing {
        if !list.has_attribute("popover") {
            let _ = list.set_attribute("popover", "manual");
        }
        call("showPopover");
    } else if !show && showing {
        call("hidePopover");
    }
}

/// A menu opened or closed (its `<summary>` clicked, [`open`], an item's handler): an opening
/// one is placed, a closing one leaves the top layer.
fn on_toggle(e: &web_sys::Event) {
    let Some(menu) = e
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .filter(|m| m.matches("details.menu").unwrap_or(false))
    else {
        return;
    };
    if menu.has_attribute("open") {
        place(&menu);
    } else if let Some(list) = menu
        .query_selector(":scope > [role=menu]")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
    {
        popover(&list, false);
    }
}

/// The page or a panel scrolled: open menus follow their pod or node.
fn on_scroll() {
    if let Some(root) = document().and_then(|d| d.document_element()) {
        for menu in query_all(&root, OPEN_MENU) {
            place(&menu);
        }
    }
}

/// The focus moved to `target`: every open menu it is not in closes, as a click outside does.
fn on_focus_in(e: &web_sys::Event) {
    let Some(target) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return;
    };
    let Some(root) = document().and_then(|d| d.document_element()) else {
        return;
    };
    for menu in query_all(&root, OPEN_MENU) {
        if !menu.contains(Some(&target)) {
            let _ = menu.remove_attribute("open");
        }
    }
}

/// Keeps the window listeners installed by [`install`]; dropping it removes them.
pub struct MenuKeys {
    keydown: Closure<dyn Fn(KeyboardEvent)>,
    click: Closure<dyn Fn(MouseEvent)>,
    contextmenu: Closure<dyn Fn(MouseEvent)>,
    focusin: Closure<dyn Fn(web_sys::Event)>,
    toggle: Closure<dyn Fn(web_sys::Event)>,
    scroll: Closure<dyn Fn(web_sys::Event)>,
}

impl Drop for MenuKeys {
    fn drop(&mut self) {
        if let Some(w) = web_sys::window() {
            let _ = w.remove_event_listener_with_callback_and_bool(
                "keydown",
                self.keydown.as_ref().unchecked_ref(),
                true,
            );
            let _ = w.remove_event_listener_with_callback_and_bool(
                "click",
                self.click.as_ref().unchecked_ref(),
                true,
            );
            let _ = w.remove_event_listener_with_callback(
                "contextmenu",
                self.contextmenu.as_ref().unchecked_ref(),
            );
            let _ = w.remove_event_listener_with_callback(
                "focusin",
                self.focusin.as_ref().unchecked_ref(),
            );
            for (name, f) in [("toggle", &self.toggle), ("scroll", &self.scroll)] {
                let _ = w.remove_event_listener_with_callback_and_bool(
                    name,
                    f.as_ref().unchecked_ref(),
                    true,
                );
            }
        }
    }
}

/// Installs the menu keys for the whole page. The keys are handled in the capture phase, so a
/// key a menu used (an arrow, its Escape) never also reaches the page's own shortcuts.
pub fn install() -> Option<MenuKeys> {
    let w = web_sys::window()?;
    let keydown = Closure::<dyn Fn(KeyboardEvent)>::new(|e: KeyboardEvent| {
        if on_key(&e) {
            e.prevent_default();
            e.stop_propagation();
        }
    });
    let click = Closure::<dyn Fn(MouseEvent)>::new(|e: MouseEvent| on_item_click(&e));
    let contextmenu = Closure::<dyn Fn(MouseEvent)>::new(|e: MouseEvent| on_context_menu(&e));
    let focusin = Closure::<dyn Fn(web_sys::Event)>::new(|e: web_sys::Event| on_focus_in(&e));
    // toggle and scroll do not bubble: the capture phase still sees them all at the window.
    let toggle = Closure::<dyn Fn(web_sys::Event)>::new(|e: web_sys::Event| on_toggle(&e));
    let scroll = Closure::<dyn Fn(web_sys::Event)>::new(|_: web_sys::Event| on_scroll());
    for (name, f) in [("toggle", &toggle), ("scroll", &scroll)] {
        let _ = w.add_event_listener_with_callback_and_bool(name, f.as_ref().unchecked_ref(), true);
    }
    let _ = w.add_event_listener_with_callback_and_bool(
        "keydown",
        keydown.as_ref().unchecked_ref(),
        true,
    );
    let _ =
        w.add_event_listener_with_callback_and_bool("click", click.as_ref().unchecked_ref(), true);
    let _ = w.add_event_listener_with_callback("contextmenu", contextmenu.as_ref().unchecked_ref());
    let _ = w.add_event_listener_with_callback("focusin", focusin.as_ref().unchecked_ref());
    Some(MenuKeys {
        keydown,
        click,
        contextmenu,
        focusin,
        toggle,
        scroll,
    })
}

/// A pod's menu's inputs: who it is for, never how the pod is doing, so that a pod changing
/// state does not redraw its menu.
#[derive(Properties, PartialEq)]
pub struct PodMenuProps {
    pub name: String,
    pub namespace: String,
    /// The chip's test-id prefix (`pod`, `tree-pod`).
    pub testid: &'static str,
    pub dispatch: Callback<Action>,
}

/// A pod's menu of faults (in its chip): opened with a right click, the ContextMenu key or
/// Shift+F10 on the chip, or its ⋯ button (shown on hover). Its button is left out of the tab
/// order so that each pod stays one or two tab stops.
///
/// The items exist only while the menu is open: a closed menu is a `<details>` and its button.
/// With one menu per chip, drawing every menu's items made each new pod cost twice the DOM it
/// needs, and a rollout of a few hundred pods spent most of its frames creating menus nobody
/// opened. [`open`] asks for the first item's focus before the items exist; the effect below
/// gives it once they are drawn.
#[component]
pub fn PodMenu(p: &PodMenuProps) -> Html {
    let open_now = use_state(|| false);
    let details = use_node_ref();
    let ontoggle = {
        let open_now = open_now.clone();
        let details = details.clone();
        Callback::from(move |_: web_sys::Event| {
            if let Some(d) = details.cast::<Element>() {
                open_now.set(d.has_attribute("open"));
            }
        })
    };
    {
        let details = details.clone();
        use_effect_with(*open_now, move |open| {
            if *open {
                if let Some(menu) = details.cast::<Element>() {
                    items_drawn(&menu);
                }
            }
        });
    }
    let target = PodTarget {
        pod: Some(p.name.clone()),
        namespace: p.namespace.clone(),
        ..PodTarget::default()
    };
    let item = |id: &str, label: &str, help: &str, fault: Fault| {
        let d = p.dispatch.clone();
        let onclick = Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            if let Some(menu) = e
                .target_dyn_into::<Element>()
                .and_then(|t| closest(&t, "details"))
            {
                let _ = menu.remove_attribute("open");
            }
            d.emit(Action::Inject(fault.clone(), reply()));
        });
        html! {
            <button role="menuitem" data-testid={format!("{id}-{}-{}", p.testid, p.name)} {onclick}>
                <strong>{ label.to_string() }</strong><small>{ help.to_string() }</small>
            </button>
        }
    };
    html! {
        <details class="menu pod-menu" ref={details} {ontoggle}>
            <summary class="pod-menu-button" tabindex="-1" aria-label={format!("Actions for pod {}", p.name)}
                data-testid={format!("menu-{}-{}", p.testid, p.name)}>{ "⋯" }</summary>
            <div class="menu-items" role="menu" aria-label={format!("Faults for pod {}", p.name)}>
                if *open_now {
                    { item("crash", "Crash its container", "CrashContainer: exits once; the kubelet restarts it in place",
                        Fault::CrashContainer { target: target.clone(), exit_code: 1 }) }
                    { item("oom", "Kill it for memory", "OomKill: exit 137 (OOMKilled), restarted",
                        Fault::OomKill { target: target.clone() }) }
                    { item("unready", "Fail readiness for 30 s", "FailReadiness: running, but not Ready",
                        Fault::FailReadiness { target: target.clone(), duration: Some(30_000) }) }
                    { item("kill", "Delete it", "DeletePod: the ReplicaSet creates a replacement",
                        Fault::DeletePod { target }) }
                }
            </div>
        </details>
    }
}
