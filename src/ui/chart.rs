//! The desired / ready / available chart: the gap between spec and status, over time.

use yew::prelude::*;

use crate::sim::time::clock;
use crate::sim::types::Millis;
use crate::viewmodel::history::{step_path, Sample};

/// Chart inputs.
#[derive(Properties, PartialEq)]
pub struct ChartProps {
    pub samples: Vec<Sample>,
    pub now: Millis,
    pub window: Millis,
}

const W: f64 = 600.0;
const H: f64 = 150.0;
const PAD_L: f64 = 30.0;
const PAD_B: f64 = 18.0;

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
    let (w, h) = (W - PAD_L - 6.0, H - PAD_B - 8.0);
    let series = |f: fn(&Sample) -> u32| -> String {
        let pts: Vec<(Millis, u32)> = p.samples.iter().map(|s| (s.t, f(s))).collect();
        step_path(&pts, t0, t1.max(t0 + 1), max, w, h)
    };
    let last = p.samples.last().copied().unwrap_or_default();
    let ticks: Vec<u32> = if max <= 6 {
        (0..=max).collect()
    } else {
        vec![0, max / 2, max]
    };
    html! {
        <div class="chart" data-testid="chart">
            <div class="subbar">
                <span class="chart-key key-desired">{ format!("desired {}", last.desired) }</span>
                <span class="chart-key key-ready">{ format!("ready {}", last.ready) }</span>
                <span class="chart-key key-available">{ format!("available {}", last.available) }</span>
                <span class="subbar-text">{ "Σ over Deployments: spec.replicas vs status, last 2 minutes" }</span>
            </div>
            <svg viewBox={format!("0 0 {W} {H}")} class="chart-svg" preserveAspectRatio="none" role="img"
                aria-label={format!("Desired {}, ready {}, available {}", last.desired, last.ready, last.available)}>
                <g transform={format!("translate({PAD_L},8)")}>
                    { for ticks.iter().map(|v| {
                        let y = h - (*v as f64 / max as f64) * h;
                        html! {
                            <>
                                <line x1="0" x2={w.to_string()} y1={y.to_string()} y2={y.to_string()} class="grid" />
                                <text x="-6" y={(y + 3.5).to_string()} text-anchor="end" class="axis">{ v }</text>
                            </>
                        }
                    }) }
                    <path d={series(|s| s.desired)} class="series series-desired" />
                    <path d={series(|s| s.available)} class="series series-available" />
                    <path d={series(|s| s.ready)} class="series series-ready" />
                    <text x="0" y={(h + 14.0).to_string()} class="axis">{ clock(t0) }</text>
                    <text x={w.to_string()} y={(h + 14.0).to_string()} text-anchor="end" class="axis">{ clock(t1) }</text>
                </g>
            </svg>
        </div>
    }
}
