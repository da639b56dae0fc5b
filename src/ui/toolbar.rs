//! The top bar: brand, transport (play/pause, step, step to the next hand-off, speed), the
//! simulated clock with its slow-motion badge, the switches for seeing the moment, and page
//! actions.

use std::rc::Rc;

use yew::prelude::*;

use super::icons;
use super::state::Action;
use crate::sim::api::types::Millis;
use crate::sim::time::clock;
use crate::viewmodel::format::{format_speed, SPEEDS};

/// Toolbar inputs.
#[derive(Properties, PartialEq)]
pub struct ToolbarProps {
    pub playing: bool,
    pub speed: f64,
    pub now: Millis,
    /// Behind a run's end (time travel): the time it goes on to.
    #[prop_or_default]
    pub tape_end: Option<Millis>,
    /// The slider seeks when released, not at every step of a drag (a cluster too big to keep
    /// snapshots of replays its run from the start at each seek).
    pub scrub_on_release: bool,
    pub lagging: bool,
    /// The speed slow motion runs the clock at now, if it does (`Playground::slowed`).
    #[prop_or_default]
    pub slowed: Option<f64>,
    /// Playing pauses when a lesson check passes or fails.
    #[prop_or_default]
    pub pause_on_check: bool,
    /// The clock slows down for a few simulated seconds after each action.
    #[prop_or_default]
    pub slow_motion: bool,
    /// Something was applied and the clock has not moved since: Play invites a click
    /// (`Playground::play_hint`).
    #[prop_or_default]
    pub play_hint: bool,
    pub faults_open: bool,
    /// The running simulation's seed, which the seed field shows and Reset reuses.
    pub seed: u64,
    pub on_toggle_faults: Callback<()>,
    /// Step (false) or Step to the next hand-off (true) was clicked (the app also shows the API
    /// conversation, which is what a step changes).
    pub on_step: Callback<bool>,
    pub dispatch: Callback<Action>,
}

/// The top bar.
#[component]
pub fn Toolbar(p: &ToolbarProps) -> Html {
    let d = p.dispatch.clone();
    let toggle = {
        let d = d.clone();
        let playing = p.playing;
        Callback::from(move |_: MouseEvent| {
            d.emit(if playing { Action::Pause } else { Action::Play })
        })
    };
    let scrub_end = p.tape_end.unwrap_or(p.now).max(p.now);
    // The slider's value as a moment of the run, sought (while dragging, or once released).
    let seek_from = |d: Callback<Action>| {
        move |input: Option<web_sys::HtmlInputElement>| {
            if let Some(t) = input.and_then(|i| i.value().parse::<Millis>().ok()) {
                d.emit(Action::Seek(t));
            }
        }
    };
    let scrub = {
        let seek = seek_from(d.clone());
        Callback::from(move |e: InputEvent| seek(e.target_dyn_into()))
    };
    let scrub_released = {
        let seek = seek_from(d.clone());
        Callback::from(move |e: Event| seek(e.target_dyn_into()))
    };
    let show_changes = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::ShowChangesAhead))
    };
    let step = |hand_off: bool| {
        let on_step = p.on_step.clone();
        Callback::from(move |_: MouseEvent| on_step.emit(hand_off))
    };
    let switch = |on: bool, action: fn(bool) -> Action| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.emit(action(!on)))
    };
    let on_speed = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(s) = el.value().parse::<f64>() {
                d.emit(Action::SetSpeed(s));
            }
        })
    };
    let seed_input = use_node_ref();
    // Reset with the seed in the field: the same one replays the run, another varies it.
    let reset_now = {
        let d = d.clone();
        let seed_input = seed_input.clone();
        let current = p.seed;
        Rc::new(move || {
            let field = seed_input.cast::<web_sys::HtmlInputElement>();
            let typed = field
                .as_ref()
                .and_then(|el| el.value().trim().parse::<u64>().ok());
            match typed {
                Some(seed) if seed != current => super::share::reset_with_seed(seed),
                _ => {
                    // Not a seed (empty, negative): the field shows the one Reset keeps.
                    if let Some(el) = field {
                        el.set_value(&current.to_string());
                    }
                    d.emit(Action::Reset)
                }
            }
        })
    };
    let reset = {
        let reset_now = reset_now.clone();
        Callback::from(move |_: MouseEvent| reset_now())
    };
    let seed_key = Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Enter" {
            e.prevent_default();
            reset_now();
        }
    });
    let faults = {
        let f = p.on_toggle_faults.clone();
        Callback::from(move |_: MouseEvent| f.emit(()))
    };
    let play_button = if p.playing {
        html! {
            <button class="btn btn-primary transport-main" data-testid="pause" onclick={toggle}
                aria-label="Pause the simulation" title="Pause (Space)">
                { icons::pause() }<span>{ "Pause" }</span>
            </button>
        }
    } else {
        html! {
            <button class={classes!("btn", "btn-primary", "transport-main", p.play_hint.then_some("is-hint"))} data-testid="play" onclick={toggle}
                aria-label="Play the simulation"
                title={if p.play_hint { "Play (Space): the clock is paused, so nothing acts on what you applied yet" } else { "Play (Space)" }}>
                { icons::play() }<span>{ "Play" }</span>
            </button>
        }
    };
    html! {
        <header class="toolbar" role="banner">
            <div class="brand">
                { icons::logo() }
                <div class="brand-text">
                    <span class="brand-name">{ "kubeloop" }</span>
                    <span class="brand-tag">{ "the reconcile loop, live" }</span>
                </div>
            </div>
            <div class="transport" role="group" aria-label="Simulation controls">
                { play_button }
                <button class="btn" data-testid="step" onclick={step(false)}
                    title="Run until the next message in the API conversation (S)" aria-label="Step to the next action">
                    { icons::step() }<span>{ "Step" }</span>
                </button>
                <button class="btn" data-testid="step-hand-off" onclick={step(true)}
                    title="Run until one component's write reaches another: a ReplicaSet created, pods created, bound, started (H)"
                    aria-label="Step to the next hand-off" aria-keyshortcuts="H">
                    { icons::hand_off() }<span>{ "Hand-off" }</span>
                </button>
                <label class="speed">
                    <span class="visually-hidden">{ "Speed" }</span>
                    <select data-testid="speed" onchange={on_speed} aria-label="Simulation speed">
                        { for SPEEDS.iter().map(|s| html! {
                            <option value={s.to_string()} selected={(*s - p.speed).abs() < 1e-9}>{ format_speed(*s) }</option>
                        }) }
                    </select>
                </label>
                <div class={classes!("clock", p.playing.then_some("clock--running"), p.lagging.then_some("clock--lagging"))}
                    title="Simulated time since the cluster started">
                    // Slowed, the badge stands where the label is: the toolbar has no room for both.
                    if let Some(slow) = p.slowed {
                        <span class="clock-slow" data-testid="slow-motion" role="status"
                            title="Right after your action the clock runs slower for a few simulated seconds, so you can see what the controllers do; then it returns to the chosen speed. The simulation itself is unchanged.">
                            { format!("slow-motion {}", format_speed(slow)) }
                        </span>
                    } else {
                        <span class="clock-label">{ "sim time" }</span>
                    }
                    <output data-testid="clock" aria-live="off" aria-label="Simulated time">{ clock(p.now) }</output>
                    <input type="range" class={classes!("scrubber", p.tape_end.is_some().then_some("is-behind"))}
                        data-testid="scrubber" min="0" max={scrub_end.to_string()} step="1"
                        value={p.now.to_string()}
                        oninput={(!p.scrub_on_release).then_some(scrub)}
                        onchange={p.scrub_on_release.then_some(scrub_released)}
                        aria-label="Time travel: the run's moment"
                        aria-valuetext={clock(p.now)}
                        title={match p.tape_end {
                            Some(end) => format!("At {} of a run that goes on to {}: drag to move through it; an action here branches it", clock(p.now), clock(end)),
                            None => "Drag back to see the cluster as it was at an earlier moment of this run".to_string(),
                        }} />
                    if let Some(end) = p.tape_end {
                        <button class="btn btn-small btn-ghost scrub-diff" data-testid="changes-ahead"
                            onclick={show_changes} aria-label="What changes ahead"
                            title={format!("What changes between now and {}: the objects whose spec or status differ, as kubectl diff shows them", clock(end))}>
                            { "Δ" }
                        </button>
                    }
                    if p.lagging {
                        <span class="clock-lag" title="The simulation has more work per frame than the budget allows; it runs slower than the chosen speed">{ "lagging" }</span>
                    }
                </div>
                <div class="moment-switches" role="group" aria-label="Seeing the moment">
                    <button class={classes!("switch", p.pause_on_check.then_some("is-on"))} data-testid="pause-on-check"
                        aria-label="Pause when a check changes" aria-pressed={p.pause_on_check.to_string()} onclick={switch(p.pause_on_check, Action::SetPauseOnCheck)}
                        title="Pause playing when a lesson check passes or fails, so the moment it is about stays on screen">
                        <span class="switch-dot" aria-hidden="true" />{ icons::pause_on_check() }<span class="switch-text">{ "Pause on checks" }</span>
                    </button>
                    <button class={classes!("switch", p.slow_motion.then_some("is-on"))} data-testid="slow-motion-switch"
                        aria-label="Slow motion after your actions" aria-pressed={p.slow_motion.to_string()} onclick={switch(p.slow_motion, Action::SetSlowMotion)}
                        title="Run the clock slower for a few simulated seconds after each of your actions (at 1×, 0.25× for 3 s)">
                        <span class="switch-dot" aria-hidden="true" />{ icons::slow_motion() }<span class="switch-text">{ "Slow-mo" }</span>
                    </button>
                </div>
            </div>
            <div class="toolbar-actions">
                <super::share::ShareButton />
                <button class={classes!("btn", "btn-ghost", p.faults_open.then_some("is-active"))} data-testid="faults-toggle" aria-label="Faults"
                    aria-expanded={p.faults_open.to_string()} aria-controls="fault-panel" onclick={faults}>
                    { icons::bolt() }<span>{ "Faults" }</span>
                </button>
                <label class="seed-field" title="The simulation's random seed: the same seed and the same actions replay the same run. Reset (or Enter) starts again with the seed written here.">
                    <span>{ "seed" }</span>
                    <input key={p.seed.to_string()} ref={seed_input} type="number" min="0" step="1" class="mono"
                        data-testid="seed" value={p.seed.to_string()} onkeydown={seed_key}
                        aria-label="Seed for the next reset" />
                </label>
                <button class="btn btn-ghost" data-testid="reset" onclick={reset} aria-label="Reset" title="Start again from the beginning, with the seed beside this button">
                    { icons::reset() }<span>{ "Reset" }</span>
                </button>
            </div>
        </header>
    }
}
