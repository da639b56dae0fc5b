//! The Yew playground app (wasm32 only). It renders the simulation and dispatches actions; it never mutates it directly.
//!
//! The model and every piece of view logic live in [`crate::viewmodel`] (native, unit-tested);
//! this module only maps them to HTML, and clicks, keys and animation frames to [`state::Action`]s.

mod bus;
mod changes;
mod chart;
mod check;
mod cluster;
mod console;
mod crash;
mod editor;
mod embed;
mod engine;
mod events;
mod explain_docs;
mod fault_timeline;
mod faults;
mod hooks;
mod icons;
mod inspector;
mod js_api;
mod lesson;
mod loop_panel;
mod menus;
mod ownership;
mod sequence;
mod share;
mod state;
mod storage;
mod toolbar;

use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::sim::api::types::Kind;
use crate::viewmodel::inspect::{DeploymentGap, InspectorData};
use crate::viewmodel::playground::NoticeKind;
use state::{reply, Action, AppState};

/// The bottom panel's tabs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tab {
    Events,
    Timeline,
    Sequence,
    Ownership,
    Chart,
    Console,
}

impl Tab {
    const ALL: [Tab; 6] = [
        Tab::Events,
        Tab::Timeline,
        Tab::Sequence,
        Tab::Ownership,
        Tab::Chart,
        Tab::Console,
    ];

    fn label(self) -> &'static str {
        match self {
            Tab::Events => "Events",
            Tab::Timeline => "Fault timeline",
            Tab::Sequence => "API conversation",
            Tab::Ownership => "Ownership",
            Tab::Chart => "Desired vs ready",
            Tab::Console => "kubectl",
        }
    }

    fn id(self) -> &'static str {
        match self {
            Tab::Events => "events",
            Tab::Timeline => "timeline",
            Tab::Sequence => "sequence",
            Tab::Ownership => "ownership",
            Tab::Chart => "chart",
            Tab::Console => "console",
        }
    }
}

/// Closes every open `<details class="menu">` except `keep`.
fn close_menus(keep: Option<&web_sys::Element>) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let mut kept = Vec::new();
    for _ in 0..32 {
        let Ok(Some(el)) = doc.query_selector("details.menu[open]:not([data-keep])") else {
            break;
        };
        if keep.is_some_and(|k| k == &el) {
            let _ = el.set_attribute("data-keep", "");
            kept.push(el);
        } else {
            let _ = el.remove_attribute("open");
        }
    }
    for el in kept {
        let _ = el.remove_attribute("data-keep");
    }
}

fn is_typing_target(e: &KeyboardEvent) -> bool {
    let Some(t) = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return false;
    };
    let tag = t.tag_name().to_ascii_lowercase();
    matches!(tag.as_str(), "input" | "textarea" | "select")
        || t.closest("[contenteditable]").ok().flatten().is_some()
}

/// The root component.
#[component]
fn App() -> Html {
    // The address bar's link is loaded before the first render, which then shows it.
    let state = use_reducer(|| AppState::new(share::initial_playground()));
    // The frame loop: each frame plays the simulation on, then says how long the page may sleep
    // before the next (an idle cluster is drawn at the clock's ten ticks a second).
    let waker = {
        let dispatcher = state.dispatcher();
        let model = state.model.clone();
        hooks::use_frame_loop(Callback::from(move |dt: f64| {
            dispatcher.dispatch(Action::Frame(dt));
            model.try_borrow().map_or(0.0, |m| m.frame_delay_ms())
        }))
    };
    // One callback for the app's lifetime: a fresh one per render would make every child's
    // props differ on every frame, and so redraw the whole page 60 times a second. Every action
    // wakes a sleeping frame loop, so what it set in motion is drawn from the next frame on.
    let dispatch: Callback<Action> = {
        let dispatcher = state.dispatcher();
        (*use_memo((), move |_| {
            Callback::from(move |a: Action| {
                dispatcher.dispatch(a);
                waker.wake();
            })
        }))
        .clone()
    };
    let tab = use_state(|| Tab::Events);
    {
        // A lesson's kubectl step asks for the console: its output is what the learner wanted.
        let reveal = state.model.try_borrow().map_or(0, |m| m.console.reveal);
        let tab = tab.clone();
        use_effect_with(reveal, move |r| {
            if *r > 0 {
                tab.set(Tab::Console);
            }
        });
    }
    // The chart's Deployment (None: all), kept here so it survives the chart's re-renders and tab switches.
    let chart_sel = use_state(|| None::<String>);
    let faults_open = use_state(|| false);
    let embed = use_memo((), |_| storage::is_embed());

    {
        let d = dispatch.clone();
        let model = state.model.clone();
        use_effect_with((), move |_| {
            let api = js_api::install(d.clone(), model.clone());
            // Share links and URL flags (src/ui/share.rs), then the embed bridge (src/ui/embed.rs),
            // which reports to its host from the state the link opened; only then `?autoplay`.
            // The order lives here so share, embed and js_api never import each other in a ring.
            let share = share::install(d.clone(), model);
            state::on_run_changed(share::run_changed);
            embed::attach();
            if bus::flags().autoplay {
                d.emit(Action::Play);
            }
            // Arrow keys, Escape and focus return for every menu; pod/node context menus.
            let menus = menus::install();
            move || {
                drop(menus);
                drop(share);
                embed::detach();
                drop(api);
            }
        });
    }
    {
        // Keyboard shortcuts, page-wide but never while typing: Space plays/pauses, S steps, H
        // steps to the next hand-off.
        let d = dispatch.clone();
        let model = state.model.clone();
        let close_faults = faults_open.setter();
        use_effect_with((), move |_| {
            let handler = Closure::<dyn Fn(KeyboardEvent)>::new(move |e: KeyboardEvent| {
                if e.key() == "Escape" {
                    // Escape closes the overlays, wherever the focus is.
                    close_menus(None);
                    close_faults.set(false);
                    let selected = model
                        .try_borrow()
                        .map(|m| m.selected.is_some())
                        .unwrap_or(false);
                    if selected {
                        d.emit(Action::Select(None));
                    }
                    return;
                }
                if is_typing_target(&e) || e.ctrl_key() || e.meta_key() || e.alt_key() {
                    return;
                }
                match e.key().as_str() {
                    " " => {
                        // Buttons handle Space themselves; only act when nothing focusable has focus.
                        let on_control = e
                            .target()
                            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                            .is_some_and(|t| {
                                matches!(
                                    t.tag_name().to_ascii_lowercase().as_str(),
                                    "button" | "summary" | "a"
                                )
                            });
                        if on_control {
                            return;
                        }
                        e.prevent_default();
                        let playing = model.try_borrow().map(|m| m.playing).unwrap_or(false);
                        d.emit(if playing { Action::Pause } else { Action::Play });
                    }
                    "s" | "S" => d.emit(Action::Step(reply())),
                    "h" | "H" => d.emit(Action::StepHandOff(reply())),
                    _ => {}
                }
            });
            // A click anywhere but inside an open menu closes it, as menus do.
            let clicks = Closure::<dyn Fn(MouseEvent)>::new(move |e: MouseEvent| {
                let inside = e
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    .and_then(|t| t.closest("details.menu").ok().flatten());
                close_menus(inside.as_ref());
            });
            let window = web_sys::window();
            if let Some(w) = &window {
                let _ =
                    w.add_event_listener_with_callback("keydown", handler.as_ref().unchecked_ref());
                let _ =
                    w.add_event_listener_with_callback("click", clicks.as_ref().unchecked_ref());
            }
            move || {
                if let Some(w) = window {
                    let _ = w.remove_event_listener_with_callback(
                        "keydown",
                        handler.as_ref().unchecked_ref(),
                    );
                    let _ = w.remove_event_listener_with_callback(
                        "click",
                        clicks.as_ref().unchecked_ref(),
                    );
                }
                drop(clicks);
                drop(handler);
            }
        });
    }

    // The Events tab's object filter, held here because it narrows the rows the memo builds.
    let event_filter = use_state(String::new);
    // What changes the events list and the inspector: a write of an Event or the clock's whole
    // second (ages), at most four times a second while playing (`Playground::events_key`); a
    // write of the selected object's kind; the selection. Memoised on those, not on the
    // store-wide resourceVersion that every heartbeat bumps, so a frame of a big cluster does not
    // rebuild tens of thousands of event rows.
    let (selected, events_rev, selected_rev) = state
        .model
        .try_borrow()
        .map(|m| {
            let events = m.events_key();
            // A pod's scheduling explanation also reads the nodes.
            let selected_rev = m.selected.as_ref().map(|k| {
                (
                    m.revision(k.kind),
                    (k.kind == Kind::Pod).then(|| m.revision(Kind::Node)),
                )
            });
            (m.selected.clone(), events, selected_rev)
        })
        .unwrap_or_default();
    let event_rows = {
        let model = state.model.clone();
        let event_filter = event_filter.clone();
        use_memo((events_rev, (*event_filter).clone()), move |(_, filter)| {
            model
                .try_borrow()
                .map(|m| m.newest_events(filter, events::SHOWN))
                .unwrap_or_default()
        })
    };
    let insp = {
        let model = state.model.clone();
        use_memo((selected, selected_rev, events_rev), move |_| {
            model.try_borrow().ok().and_then(|m| {
                let key = m.selected.clone()?;
                Some(InspectorData::of(&m.session.sim, key, m.now()))
            })
        })
    };

    let Ok(m) = state.model.try_borrow() else {
        return html! { <div class="app" data-testid="app" /> };
    };
    let cluster_view = m.cluster_view();
    let cards = m.loops.cards();
    let insp = (*insp).clone();
    let diags = m.editor_diagnostics();
    let (lines, ok) = match &m.last_apply {
        Some(r) => (r.lines.clone(), Some(r.ok)),
        None => (Vec::new(), None),
    };
    let notices: Vec<(u64, String, NoticeKind)> = m
        .notices()
        .map(|n| (n.id, n.text.clone(), n.kind))
        .collect();
    let toggle_faults = {
        let f = faults_open.clone();
        Callback::from(move |_: ()| f.set(!*f))
    };
    let close_faults = {
        let f = faults_open.clone();
        Callback::from(move |_: ()| f.set(false))
    };
    let on_step = {
        let d = dispatch.clone();
        let tab = tab.clone();
        Callback::from(move |hand_off: bool| {
            d.emit(if hand_off {
                Action::StepHandOff(reply())
            } else {
                Action::Step(reply())
            });
            if *tab == Tab::Events {
                tab.set(Tab::Sequence);
            }
        })
    };

    // A lesson opens with its objects applied: the empty panels then point at Play, not Apply.
    let applied = [Kind::Deployment, Kind::ReplicaSet, Kind::Pod, Kind::Service]
        .into_iter()
        .any(|k| m.session.sim.api().count(k) > 0);
    let next_step = crate::viewmodel::events::NextStep::of(applied, m.playing);
    let bottom = match *tab {
        Tab::Events => {
            let on_filter = {
                let f = event_filter.clone();
                Callback::from(move |text: String| f.set(text))
            };
            let empty = next_step.events_text();
            html! { <events::Events list={event_rows.clone()} dispatch={dispatch.clone()}
            filter={(*event_filter).clone()} {on_filter} {empty} /> }
        }
        Tab::Sequence => html! {
            <sequence::Sequence msgs={m.sequence.last(80)} show_heartbeats={m.sequence.show_heartbeats}
                show_idle={m.sequence.show_idle_reconciles} dispatch={dispatch.clone()} />
        },
        Tab::Ownership => {
            html! { <ownership::Ownership view={m.ownership()} selected={m.selected.clone()} dispatch={dispatch.clone()} /> }
        }
        Tab::Timeline => html! {
            <fault_timeline::FaultTimeline incidents={m.fault_timeline.incidents().rev().take(20).cloned().collect::<Vec<_>>()}
                now={m.now()} dispatch={dispatch.clone()} />
        },
        Tab::Chart => {
            let samples = m.history.samples_of(chart_sel.as_deref());
            html! { <chart::Chart {samples} now={m.now()} window={m.history.window} deployments={m.history.deployments()} selected={chart_sel.clone()} /> }
        }
        Tab::Console => {
            html! { <console::Console entries={m.console.entries()} epoch={m.console.epoch}
            reveal={m.console.reveal} dispatch={dispatch.clone()} /> }
        }
    };
    let warnings = event_rows.warnings;
    // Only the open fault panel needs every name (10,000 of them in a big cluster).
    let (pods, nodes): (Vec<String>, Vec<String>) = if *faults_open {
        (
            cluster_view
                .all_pods()
                .map(|p| p.name.to_string())
                .collect(),
            cluster_view.nodes.iter().map(|n| n.name.clone()).collect(),
        )
    } else {
        Default::default()
    };
    // Likewise the components (a kubelet per node: a thousand names in a big cluster).
    let mut components: Vec<String> = if *faults_open {
        m.session
            .sim
            .component_ids()
            .iter()
            .map(|c| c.name())
            .filter(|n| n != "user")
            .collect()
    } else {
        Vec::new()
    };
    if *faults_open {
        components.extend([
            "controller-manager".to_string(),
            "kube-apiserver".to_string(),
        ]);
    }
    let deployments = DeploymentGap::all(m.session.sim.api().list(Kind::Deployment));
    let n_deploy = deployments.len();
    // Something the learner could have declared already runs: no "apply first" hint then.
    let declared = n_deploy > 0
        || [("apps", "StatefulSet"), ("batch", "Job")]
            .iter()
            .any(|(g, k)| {
                crate::sim::api::openapi::stored_kind(g, k)
                    .is_some_and(|ck| m.session.sim.api().list(Kind::Custom(ck)).next().is_some())
            });

    html! {
        <div class={classes!("app", embed.then_some("is-embed"))} data-testid="app">
            <toolbar::Toolbar playing={m.playing} speed={m.speed} now={m.now()} tape_end={m.tape_end().map(|e| e.time)} scrub_on_release={m.scrub_on_release()} lagging={m.lagging} play_hint={m.play_hint()}
                slowed={m.slowed()} pause_on_check={m.moments.pause_on_check} slow_motion={m.moments.slow_motion}
                faults_open={*faults_open} seed={m.seed()} on_toggle_faults={toggle_faults} {on_step} dispatch={dispatch.clone()} />
            <share::LinkBanner />
            if *faults_open {
                <faults::FaultPanel {pods} {nodes} {components} dispatch={dispatch.clone()} on_close={close_faults} />
            }
            <main class="layout">
                <div class="left-col">
                    if let Some(lesson) = m.lesson() {
                        <lesson::LessonCard {lesson} dispatch={dispatch.clone()} />
                    }
                    <editor::Editor dispatch={dispatch.clone()} diagnostics={diags} applied_text={m.last_apply_text.clone()} {lines} {ok} hint={!declared && m.last_apply.is_none()} play_hint={m.play_hint()}
                        scenario_applied={m.scenario_applied()} />
                    if let Some(view) = m.controller_check.clone() {
                        <check::CheckCard {view} dispatch={dispatch.clone()} />
                    }
                    if let Some(view) = m.changes.clone() {
                        <changes::ChangesCard {view} dispatch={dispatch.clone()} />
                    }
                </div>
                <cluster::Cluster view={cluster_view} {deployments} jobs={crate::viewmodel::inspect::JobProgress::all(&m.session.sim)} dispatch={dispatch.clone()} selected={m.selected.clone()}
                    brisk={crate::viewmodel::cluster::brisk_motion(m.speed)} />
                <loop_panel::LoopPanel {cards} empty={next_step.loops_text()} />
                <section class="panel bottom-panel" aria-label="Activity">
                    <div class="tabs" role="tablist">
                        { for Tab::ALL.iter().map(|t| {
                            let tab_h = tab.clone();
                            let t = *t;
                            let badge = match t {
                                Tab::Events if warnings > 0 => Some(warnings.to_string()),
                                Tab::Timeline if m.fault_timeline.incidents().len() > 0 => Some(m.fault_timeline.incidents().len().to_string()),
                                Tab::Ownership if n_deploy > 0 => Some(n_deploy.to_string()),
                                _ => None,
                            };
                            html! {
                                <button role="tab" class={classes!("tab", (*tab == t).then_some("is-active"))}
                                    aria-selected={(*tab == t).to_string()} data-testid={format!("tab-{}", t.id())}
                                    onclick={Callback::from(move |_: MouseEvent| tab_h.set(t))}>
                                    { t.label() }
                                    if let Some(b) = badge {
                                        <span class={classes!("tab-badge", (t == Tab::Events).then_some("is-warning"))}>{ b }</span>
                                    }
                                </button>
                            }
                        }) }
                    </div>
                    <div class="tab-body" role="tabpanel">{ bottom }</div>
                </section>
            </main>
            if let Some(data) = insp {
                <inspector::Inspector {data} dispatch={dispatch.clone()} />
            }
            <div class="notices" aria-live="polite">
                { for notices.into_iter().map(|(id, text, kind)| {
                    let d = dispatch.clone();
                    html! {
                        <div class={classes!("notice", match kind { NoticeKind::Error => "notice-error", NoticeKind::Info => "notice-info", NoticeKind::Progress => "notice-progress" })} key={id.to_string()}
                            role={if kind == NoticeKind::Error { "alert" } else { "status" }}>
                            <span class="notice-text" title={text.clone()}>{ text }</span>
                            <button class="icon-btn" aria-label="Dismiss" onclick={Callback::from(move |_: MouseEvent| d.emit(Action::Dismiss(id)))}>
                                { icons::close() }
                            </button>
                        </div>
                    }
                }) }
            </div>
        </div>
    }
}

/// Mounts the app on the page.
pub fn start() {
    // The panic boundary (src/ui/crash.rs): console logging plus the crash screen of www/crash.js.
    crash::install();
    let _ = Rc::new(());
    // Embed mode may wait for a click before mounting anything (src/ui/embed.rs).
    embed::start(|| {
        yew::Renderer::<App>::new().render();
    });
}

/// The live heap's bytes, for `scripts/browser-bench.js` in a page built with the `alloc-stats`
/// feature: the wasm memory's size says how far the heap ever reached, not how much of it is
/// live. A plain number, so the bench calls it straight on the instance's exports.
#[cfg(feature = "alloc-stats")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn heap_live_bytes() -> f64 {
    crate::heap_bytes().unwrap_or(0) as f64
}

/// The most live heap bytes seen at once (see [`heap_live_bytes`]).
#[cfg(feature = "alloc-stats")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn heap_peak_bytes() -> f64 {
    crate::heap_peak_bytes().unwrap_or(0) as f64
}
