//! The top bar: brand, transport (play/pause, step, speed), the simulated clock, and page actions.

use yew::prelude::*;

use super::icons;
use super::state::Action;
use crate::sim::time::clock;
use crate::sim::types::Millis;
use crate::viewmodel::format::{format_speed, SPEEDS};

/// Toolbar inputs.
#[derive(Properties, PartialEq)]
pub struct ToolbarProps {
    pub playing: bool,
    pub speed: f64,
    pub now: Millis,
    pub lagging: bool,
    /// Something was applied and the clock has not moved since: Play invites a click
    /// (`Playground::play_hint`).
    #[prop_or_default]
    pub play_hint: bool,
    pub faults_open: bool,
    pub on_toggle_faults: Callback<()>,
    /// Step was clicked (the app also shows the API conversation, which is what a step changes).
    pub on_step: Callback<()>,
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
    let step = {
        let on_step = p.on_step.clone();
        Callback::from(move |_: MouseEvent| on_step.emit(()))
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
    let reset = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.emit(Action::Reset))
    };
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
                <button class="btn" data-testid="step" onclick={step}
                    title="Run until the next message in the API conversation (S)" aria-label="Step to the next action">
                    { icons::step() }<span>{ "Step" }</span>
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
                    <span class="clock-label">{ "sim time" }</span>
                    <output data-testid="clock" aria-live="off" aria-label="Simulated time">{ clock(p.now) }</output>
                    if p.lagging {
                        <span class="clock-lag" title="The simulation has more work per frame than the budget allows; it runs slower than the chosen speed">{ "lagging" }</span>
                    }
                </div>
            </div>
            <div class="toolbar-actions">
                <super::share::ShareButton />
                <button class={classes!("btn", "btn-ghost", p.faults_open.then_some("is-active"))} data-testid="faults-toggle"
                    aria-expanded={p.faults_open.to_string()} aria-controls="fault-panel" onclick={faults}>
                    { icons::bolt() }<span>{ "Faults" }</span>
                </button>
                <button class="btn btn-ghost" data-testid="reset" onclick={reset} title="Start again from three empty nodes">
                    { icons::reset() }<span>{ "Reset" }</span>
                </button>
            </div>
        </header>
    }
}
