//! The desired / ready / available chart: the gap between spec and status, over time, for every
//! Deployment together or for one chosen in its selector.
//!
//! The plot is an SVG stretched to its box (so lines use the whole width); labels are HTML laid
//! over it, so text is never stretched with the plot.

use yew::prelude::*;

use crate::sim::api::types::Millis;
use crate::sim::time::clock;
use crate::viewmodel::history::{band_path, step_path, Sample};

/// Chart inputs.
#[derive(Properties, PartialEq)]
pub struct ChartProps {
    /// The chosen series: the total, or one Deployment's.
    pub samples: Vec<Sample>,
    pub now: Millis,
    pub window: Millis,
    /// Every Deployment with a series of its own, and whether it was deleted.
    pub deployments: Vec<(String, bool)>,
    /// The Deployment shown (None: the sum over all). Held by the app, so the choice survives
    /// re-renders and switching tabs.
    pub selected: UseStateHandle<Option<String>>,
}

const W: f64 = 1000.0;
const H: f64 = 300.0;

/// The value of the selector's "all Deployments" option (a Deployment name never has spaces).
const ALL: &str = "all deployments";

/// The chart.
#[component]
pub fn Chart(p: &ChartProps) -> Html {
    let t1 = p.now.max(1);
    let t0 = t1.saturating_sub(p.window);
    let max = p
        .samples
        .iter()
        .map(|s| s.desired.max(s.ready).max(s.available))
        .max()
        .unwrap_or(0)
        .max(1);
    let series = |f: fn(&Sample) -> u32| -> String {
        let pts: Vec<(Millis, u32)> = p.samples.iter().map(|s| (s.t, f(s))).collect();
        step_path(&pts, t0, t1.max(t0 + 1), max, W, H)
    };
    let band = {
        let pts: Vec<(Millis, u32, u32)> = p
            .samples
            .iter()
            .map(|s| (s.t, s.desired, s.ready.min(s.desired)))
            .collect();
        band_path(&pts, t0, t1.max(t0 + 1), max, W, H)
    };
    let last = p.samples.last().copied().unwrap_or_default();
    let ticks: Vec<u32> = if max <= 6 {
        (0..=max).collect()
    } else {
        vec![0, max / 2, max]
    };
    let gap = last.desired.saturating_sub(last.ready);
    let chosen = (*p.selected).clone();
    let gone = chosen
        .as_ref()
        .is_some_and(|c| p.deployments.iter().any(|(n, g)| n == c && *g));
    let missing = chosen
        .as_ref()
        .is_some_and(|c| !p.deployments.iter().any(|(n, _)| n == c));
    let on_change = {
        let sel = p.selected.clone();
        Callback::from(move |e: Event| {
            let v = e
                .target_dyn_into::<web_sys::HtmlSelectElement>()
                .map(|s| s.value())
                .unwrap_or_default();
            sel.set((v != ALL && !v.is_empty()).then_some(v));
        })
    };
    let what = match &chosen {
        None => "Σ over every Deployment".to_string(),
        Some(d) if missing => format!("deployment/{d}: no longer recorded"),
        Some(d) if gone => format!("deployment/{d} (deleted)"),
        Some(d) => format!("deployment/{d}"),
    };
    html! {
        <div class="chart" data-testid="chart" data-deployment={chosen.clone().unwrap_or_default()}>
            <div class="subbar">
                <label class="chart-select">
                    <select data-testid="chart-deployment" aria-label="Deployment shown" onchange={on_change}>
                        <option value={ALL} selected={chosen.is_none()}>{ "All Deployments (Σ)" }</option>
                        { for p.deployments.iter().map(|(name, gone)| html! {
                            <option value={name.clone()} selected={chosen.as_deref() == Some(name.as_str())}>
                                { if *gone { format!("{name} (deleted)") } else { name.clone() } }
                            </option>
                        }) }
                        if missing {
                            <option value={chosen.clone().unwrap_or_default()} selected=true>
                                { format!("{} (gone)", chosen.clone().unwrap_or_default()) }
                            </option>
                        }
                    </select>
                </label>
                <span class="chart-key key-desired">{ format!("desired {}", last.desired) }</span>
                <span class="chart-key key-ready">{ format!("ready {}", last.ready) }</span>
                <span class="chart-key key-available">{ format!("available {}", last.available) }</span>
                <span class={classes!("chart-key", "key-gap", (gap == 0).then_some("is-zero"))}>
                    { if gap == 0 { "no gap".to_string() } else { format!("gap {gap}") } }
                </span>
                <span class="subbar-text">{ format!("{what}: spec.replicas against status, last 2 minutes") }</span>
            </div>
            <div class="chart-area">
                <div class="chart-y" aria-hidden="true">
                    { for ticks.iter().map(|v| html! {
                        <span class="axis" style={format!("top: {:.2}%", (1.0 - *v as f64 / max as f64) * 100.0)}>{ v }</span>
                    }) }
                </div>
                <div class="chart-plot">
                    <svg viewBox={format!("0 0 {W} {H}")} class="chart-svg" preserveAspectRatio="none" role="img"
                        aria-label={format!("{what}: desired {}, ready {}, available {}", last.desired, last.ready, last.available)}>
                        { for ticks.iter().map(|v| {
                            let y = H - (*v as f64 / max as f64) * H;
                            html! { <line x1="0" x2={W.to_string()} y1={y.to_string()} y2={y.to_string()} class="grid" /> }
                        }) }
                        <path d={band} class="gap-band" />
                        <path d={series(|s| s.available)} class="series series-available" />
                        <path d={series(|s| s.ready)} class="series series-ready" />
                        <path d={series(|s| s.desired)} class="series series-desired" />
                    </svg>
                    <div class="chart-x" aria-hidden="true">
                        <span class="axis">{ clock(t0) }</span>
                        <span class="axis">{ clock(t1) }</span>
                    </div>
                </div>
            </div>
        </div>
    }
}
