//! The live sequence diagram of the API conversation: who asked the API server for what, which
//! informers heard about it, and which reconcile passes followed — the course's diagram, running.

use web_sys::Element;
use yew::prelude::*;

use super::state::Action;
use crate::viewmodel::format::{clock_ms, ellipsize};
use crate::viewmodel::trace_views::{Lane, MsgStyle, SeqMsg};

/// Sequence diagram inputs.
#[derive(Properties, PartialEq)]
pub struct SequenceProps {
    pub msgs: Vec<SeqMsg>,
    pub show_heartbeats: bool,
    pub show_idle: bool,
    pub dispatch: Callback<Action>,
}

const W: f64 = 1000.0;
const LEFT: f64 = 132.0;
const RIGHT: f64 = 928.0;
const ROW: f64 = 26.0;
const HEAD: f64 = 40.0;

fn lane_x(l: Lane) -> f64 {
    let n = (Lane::ALL.len() - 1) as f64;
    LEFT + (RIGHT - LEFT) * l.index() as f64 / n
}

fn lane_class(l: Lane) -> &'static str {
    match l {
        Lane::User => "lane-user",
        Lane::ApiServer => "lane-api",
        Lane::Deployment => "lane-deploy",
        Lane::ReplicaSet => "lane-rs",
        Lane::Scheduler => "lane-sched",
        Lane::Kubelet => "lane-kubelet",
        Lane::Other => "lane-other",
        Lane::Yours => "lane-yours",
    }
}

/// How many characters of an 11.5px label fit in `width` diagram units.
fn chars_for(width: f64) -> usize {
    ((width / 6.4) as usize).max(20)
}

fn arrow_head(x: f64, y: f64, dir: f64, class: &'static str) -> Html {
    let d = format!("M{x:.1},{y:.1} l{:.1},-4 l0,8 z", -7.0 * dir);
    html! { <path d={d} class={class} /> }
}

fn row(m: &SeqMsg, i: usize, newest: bool) -> Html {
    let y = 14.0;
    let from_x = lane_x(m.from);
    let style_class = match m.style {
        MsgStyle::Request => "msg-request",
        MsgStyle::Watch => "msg-watch",
        MsgStyle::Dropped => "msg-dropped",
        MsgStyle::Reconcile => "msg-reconcile",
        MsgStyle::List => "msg-list",
        MsgStyle::Fault => "msg-fault",
        MsgStyle::Command => "msg-command",
    };
    let tooltip = {
        let mut s = format!("{}  {}", clock_ms(m.t), m.label);
        if let Some(n) = &m.node {
            s.push_str(&format!("  [{n}]"));
        }
        if !m.detail.is_empty() {
            s.push_str(&format!("\n{}", m.detail));
        }
        s
    };
    let body = match m.style {
        MsgStyle::Fault => html! {
            <>
                <rect x={LEFT.to_string()} y="3" width={(RIGHT - LEFT).to_string()} height="22" rx="5" class="fault-band" />
                <text x={((LEFT + RIGHT) / 2.0).to_string()} y="18" text-anchor="middle" class="msg-label fault-label">
                    { ellipsize(&format!("{}  {}", m.label, m.detail), 120) }
                </text>
            </>
        },
        MsgStyle::Reconcile => {
            let text = format!("{} · {}", m.label, m.detail);
            // Lanes on the right write their label leftwards, so it stays inside the diagram.
            let leftwards = m.from.index() >= 4;
            let (tx, anchor, room) = if leftwards {
                (from_x - 12.0, "end", from_x - LEFT + 40.0)
            } else {
                (from_x + 12.0, "start", W - from_x - 20.0)
            };
            html! {
                <>
                    <rect x={(from_x - 6.0).to_string()} y="6" width="12" height="16" rx="3"
                        class={classes!("activation", lane_class(m.from), m.detail.starts_with("gap").then_some("has-gap"))} />
                    <text x={tx.to_string()} y="18" text-anchor={anchor}
                        class={classes!("msg-label", "reconcile-label", m.detail.starts_with("gap").then_some("has-gap"))}>
                        { ellipsize(&text, chars_for(room)) }
                    </text>
                </>
            }
        }
        MsgStyle::Command => html! {
            <text x={(from_x - 8.0).to_string()} y="18" class={classes!("msg-label", "command-label", m.error.then_some("is-error"))}>
                { ellipsize(&m.label, 80) }
            </text>
        },
        _ => {
            let targets: Vec<f64> = m.to.iter().map(|l| lane_x(*l)).collect();
            let far = targets.iter().copied().fold(from_x, |acc, x| {
                if (x - from_x).abs() > (acc - from_x).abs() {
                    x
                } else {
                    acc
                }
            });
            let dir = if far >= from_x { 1.0 } else { -1.0 };
            let nearest = targets
                .iter()
                .copied()
                .min_by(|a, b| {
                    (a - from_x)
                        .abs()
                        .partial_cmp(&(b - from_x).abs())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .unwrap_or(far);
            let fan_out = matches!(m.style, MsgStyle::Watch | MsgStyle::Dropped);
            // Both start beside the sender and run along the arrow: a watch event's over the
            // whole fan-out, a request's on past its target if it needs the room (centred on
            // the arrow, a long one ran back over the sender, where its status code is).
            let toward = if dir > 0.0 { "start" } else { "end" };
            let (label_x, anchor, room) = if fan_out {
                (from_x + dir * 10.0, toward, (far - from_x).abs() - 20.0)
            } else {
                // Up to the diagram's edge, or to the time column on the left.
                let available = if dir > 0.0 {
                    W - from_x - 20.0
                } else {
                    from_x - 90.0
                };
                let room = (nearest - from_x).abs().max(260.0).min(available);
                (from_x + dir * 10.0, toward, room)
            };
            let line_class = classes!("msg-line", style_class, m.error.then_some("is-error"));
            let head_class = if m.error { "head head-error" } else { "head" };
            html! {
                <>
                    <line x1={from_x.to_string()} y1={y.to_string()} x2={(far - dir * 6.0).to_string()} y2={y.to_string()} class={line_class} />
                    { for targets.iter().map(|tx| {
                        if m.style == MsgStyle::Dropped {
                            html! { <text x={tx.to_string()} y={(y + 4.5).to_string()} text-anchor="middle" class="drop-cross">{ "✕" }</text> }
                        } else {
                            arrow_head(*tx - dir * 1.0, y, dir, head_class)
                        }
                    }) }
                    <text x={label_x.to_string()} y={(y - 4.0).to_string()} text-anchor={anchor} class={classes!("msg-label", style_class)}>
                        { ellipsize(&m.label, chars_for(room)) }
                    </text>
                    // The answer's status code sits on the arrow's own height, behind its
                    // sender: under the arrow it ran into the next row's label, and beside the
                    // arrow it would cross the label over it.
                    if let Some(code) = m.code {
                        <text x={(from_x - dir * 8.0).to_string()} y={(y + 3.5).to_string()}
                            text-anchor={if dir > 0.0 { "end" } else { "start" }}
                            class={classes!("code-label", if code >= 400 { "code-err" } else { "code-ok" })}>
                            { code }
                        </text>
                    }
                    if let (Some(n), true) = (&m.node, m.from == Lane::Kubelet || m.to.contains(&Lane::Kubelet)) {
                        <text x={(lane_x(Lane::Kubelet) - 8.0).to_string()} y={(y + 11.0).to_string()} text-anchor="end" class="node-label">{ n }</text>
                    }
                </>
            }
        }
    };
    html! {
        <g class={classes!("msg", style_class, newest.then_some("is-newest"))} key={m.seq.to_string()}
            style={format!("transform: translateY({}px)", i as f64 * ROW)}>
            <title>{ tooltip }</title>
            <text x="8" y="18" class="msg-time">{ clock_ms(m.t) }</text>
            { body }
        </g>
    }
}

/// The sequence diagram.
#[component]
pub fn Sequence(p: &SequenceProps) -> Html {
    let scroller = use_node_ref();
    let stick = use_mut_ref(|| true);
    {
        let scroller = scroller.clone();
        let stick = stick.clone();
        let n = p.msgs.last().map(|m| m.seq);
        use_effect_with(n, move |_| {
            if *stick.borrow() {
                if let Some(el) = scroller.cast::<Element>() {
                    el.set_scroll_top(el.scroll_height());
                }
            }
        });
    }
    let on_scroll = {
        let scroller = scroller.clone();
        let stick = stick.clone();
        Callback::from(move |_: Event| {
            if let Some(el) = scroller.cast::<Element>() {
                *stick.borrow_mut() =
                    el.scroll_top() + el.client_height() >= el.scroll_height() - 30;
            }
        })
    };
    let toggle_hb = {
        let d = p.dispatch.clone();
        let v = p.show_heartbeats;
        Callback::from(move |_: Event| d.emit(Action::ShowHeartbeats(!v)))
    };
    let toggle_idle = {
        let d = p.dispatch.clone();
        let v = p.show_idle;
        Callback::from(move |_: Event| d.emit(Action::ShowIdle(!v)))
    };
    let height = p.msgs.len() as f64 * ROW + 8.0;
    let active: Vec<Lane> = p
        .msgs
        .iter()
        .rev()
        .take(3)
        .flat_map(|m| std::iter::once(m.from).chain(m.to.iter().copied()))
        .collect();
    let n = p.msgs.len();
    html! {
        <div class="sequence" data-testid="sequence">
            <div class="subbar">
                <span class="seq-legend">
                    <span class="lg lg-request">{ "request" }</span>
                    <span class="lg lg-watch">{ "watch event" }</span>
                    <span class="lg lg-reconcile">{ "reconcile pass" }</span>
                    <span class="lg lg-error">{ "error / dropped" }</span>
                </span>
                <label class="check">
                    <input type="checkbox" checked={p.show_idle} onchange={toggle_idle} />{ "no-op passes" }
                </label>
                <label class="check">
                    <input type="checkbox" checked={p.show_heartbeats} onchange={toggle_hb} />{ "heartbeats" }
                </label>
            </div>
            <svg class="seq-head" viewBox={format!("0 0 {W} {HEAD}")} preserveAspectRatio="xMinYMin meet" role="img"
                aria-label="Participants: User, API server, Deployment controller, ReplicaSet controller, Scheduler, kubelets, other controllers">
                { for Lane::ALL.iter().map(|l| {
                    let x = lane_x(*l);
                    let (a, b) = l.short_title();
                    let is_active = active.contains(l);
                    html! {
                        <g class={classes!("lane-head", lane_class(*l), is_active.then_some("is-active"))}>
                            <rect x={(x - 58.0).to_string()} y="4" width="116" height="32" rx="8" />
                            if b.is_empty() {
                                <text x={x.to_string()} y="24.5" text-anchor="middle">{ a }</text>
                            } else {
                                <text x={x.to_string()} y="17" text-anchor="middle">{ a }</text>
                                <text x={x.to_string()} y="30" text-anchor="middle" class="lane-sub">{ b }</text>
                            }
                        </g>
                    }
                }) }
            </svg>
            <div class="seq-scroll" ref={scroller} onscroll={on_scroll}>
                if p.msgs.is_empty() {
                    <div class="empty">{ "The API conversation appears here: apply a manifest, then Play or Step." }</div>
                } else {
                    <svg class="seq-body" viewBox={format!("0 0 {W} {height}")} preserveAspectRatio="xMinYMin meet"
                        role="img" aria-label={format!("The last {n} messages between the components")}>
                        { for Lane::ALL.iter().map(|l| {
                            let x = lane_x(*l).to_string();
                            html! { <line x1={x.clone()} y1="0" x2={x} y2={height.to_string()} class={classes!("lifeline", lane_class(*l))} /> }
                        }) }
                        // One keyed child of its own: flattened beside the lanes, the messages
                        // were diffed by position and each new one redrew every message.
                        { p.msgs.iter().enumerate().map(|(i, m)| row(m, i, i + 1 == n)).collect::<Html>() }
                    </svg>
                }
            </div>
        </div>
    }
}
