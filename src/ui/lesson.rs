//! The lesson card above the editor: what the lesson is about, one-click "try this" steps (each
//! offered once what it follows has happened, with the time the lesson's own timeline would do
//! it), and checks that start when their trigger happens and turn green when the cluster does
//! what the lesson says it will.

use yew::prelude::*;

use super::icons;
use super::state::Action;
use crate::viewmodel::lesson::{CheckState, LessonView};

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
                    if !l.steps.is_empty() {
                        <div class="lesson-section">
                            <h3 class="lesson-h">
                                { "Try this" }
                                if l.can_play_timeline() {
                                    <button class="link small play-lesson" data-testid="play-lesson"
                                        title="Let the lesson's own timeline do the steps you have not done, at the times shown"
                                        onclick={{
                                            let d = p.dispatch.clone();
                                            Callback::from(move |_: MouseEvent| d.emit(Action::PlayLesson))
                                        }}>{ "▸ play the lesson" }</button>
                                } else if l.playing_timeline {
                                    <small class="play-lesson-on" data-testid="playing-lesson">{ "the lesson's timeline is playing" }</small>
                                }
                            </h3>
                            <ol class="try-this">
                                { for l.steps.iter().enumerate().map(|(i, step)| {
                                    let d = p.dispatch.clone();
                                    let title = match (&step.done_at, &step.waiting_for) {
                                        (Some(t), _) => format!("Done at {t}"),
                                        (None, Some(w)) => format!("Comes {w}"),
                                        (None, None) => "Do it now".to_string(),
                                    };
                                    html! {
                                        <li class={classes!("try-row", step.done_at.is_some().then_some("is-done"))}>
                                            <button class="btn btn-small try-btn" data-testid={format!("try-{i}")}
                                                disabled={!step.enabled} title={title}
                                                onclick={Callback::from(move |_: MouseEvent| d.emit(Action::TryThis(i)))}>
                                                <span class="try-n">{ i + 1 }</span>{ &step.label }
                                            </button>
                                            <span class="try-when" data-testid={format!("try-when-{i}")}>
                                                { match (&step.done_at, &step.waiting_for, &step.at) {
                                                    (Some(t), _, _) => format!("✓ done at {t}"),
                                                    (None, Some(w), _) => w.clone(),
                                                    (None, None, Some(at)) => format!("timeline: {at}"),
                                                    (None, None, None) => String::new(),
                                                } }
                                            </span>
                                        </li>
                                    }
                                }) }
                            </ol>
                        </div>
                    }
                    if !l.checks.is_empty() {
                        <div class="lesson-section">
                            <h3 class="lesson-h">{ "Checks " }<small>{ l.progress() }</small></h3>
                            <ul class="checks">
                                { for l.checks.iter().map(|c| html! {
                                    <li class={classes!("check-row", c.state.class())} title={c.message.clone()}>
                                        <span class="check-glyph">{ icons::check_state(c.state.icon()) }</span>
                                        <span class="visually-hidden">{ format!("{}: ", c.state.label()) }</span>
                                        <span class="check-name">{ &c.name }</span>
                                        if c.state == CheckState::NotStarted {
                                            <span class="check-when">{ &c.message }</span>
                                        }
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
