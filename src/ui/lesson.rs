//! The lesson card above the editor: what the lesson is about, one-click "try this" actions, and
//! its checks turning from ⧗ to ✓ as the cluster does what the lesson says it will.

use yew::prelude::*;

use super::state::Action;
use crate::viewmodel::lesson::LessonView;

/// Lesson card inputs.
#[derive(Properties, PartialEq)]
pub struct LessonCardProps {
    pub lesson: LessonView,
    pub dispatch: Callback<Action>,
}

/// The lesson card.
#[component]
pub fn LessonCard(p: &LessonCardProps) -> Html {
    let expanded = use_state(|| true);
    let full_text = use_state(|| false);
    let l = &p.lesson;
    let toggle = {
        let expanded = expanded.clone();
        Callback::from(move |_: MouseEvent| expanded.set(!*expanded))
    };
    html! {
        <section class={classes!("panel", "lesson-card", (!*expanded).then_some("is-collapsed"))} data-testid="lesson"
            aria-labelledby="lesson-title">
            <div class="panel-head">
                if let Some(n) = l.order {
                    <span class="lesson-order">{ format!("Lesson {n}") }</span>
                }
                <h2 id="lesson-title" class="panel-title lesson-title">{ &l.title }</h2>
                <button class="icon-btn lesson-toggle" onclick={toggle} aria-expanded={expanded.to_string()}
                    aria-label={if *expanded { "Collapse the lesson" } else { "Expand the lesson" }}>
                    { if *expanded { "▾" } else { "▸" } }
                </button>
            </div>
            if *expanded {
                <div class="lesson-body">
                    if !l.description.is_empty() {
                        <div class="lesson-desc">
                            <p class={classes!("lesson-text", (!*full_text).then_some("is-clamped"))}>{ &l.description }</p>
                            <button class="link small" onclick={{
                                let full_text = full_text.clone();
                                Callback::from(move |_: MouseEvent| full_text.set(!*full_text))
                            }}>{ if *full_text { "less" } else { "more…" } }</button>
                        </div>
                    }
                    if !l.try_this.is_empty() {
                        <div class="lesson-section">
                            <h3 class="lesson-h">{ "Try this" }</h3>
                            <div class="try-this">
                                { for l.try_this.iter().enumerate().map(|(i, label)| {
                                    let d = p.dispatch.clone();
                                    html! {
                                        <button class="btn btn-small try-btn" data-testid={format!("try-{i}")}
                                            onclick={Callback::from(move |_: MouseEvent| d.emit(Action::TryThis(i)))}>
                                            <span class="try-n">{ i + 1 }</span>{ label }
                                        </button>
                                    }
                                }) }
                            </div>
                        </div>
                    }
                    if !l.checks.is_empty() {
                        <div class="lesson-section">
                            <h3 class="lesson-h">{ "Checks " }<small>{ l.progress() }</small></h3>
                            <ul class="checks">
                                { for l.checks.iter().map(|c| html! {
                                    <li class={classes!("check-row", c.state.class())} title={c.message.clone()}>
                                        <span class="check-glyph" aria-hidden="true">{ c.state.glyph() }</span>
                                        <span class="check-name">{ &c.name }</span>
                                    </li>
                                }) }
                            </ul>
                        </div>
                    }
                </div>
            }
        </section>
    }
}
