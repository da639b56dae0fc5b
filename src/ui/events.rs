//! The events list, as `kubectl get events` shows it, newest first.

use std::rc::Rc;

use yew::prelude::*;

use super::state::Action;
use crate::sim::api::types::{Kind, ObjectKey};
use crate::viewmodel::events::{EventList, RowFades};
use crate::viewmodel::EventRow;

/// How many rows the table can show (the model builds only these: `newest_event_rows`).
pub const SHOWN: usize = 300;
/// How many rows it draws until asked for more. A rollout of a few hundred pods records dozens
/// of Events a frame; each is a new row at the top, and drawing 300 rows on every frame was a
/// large share of the page's frame time. The newest rows are what a person watches anyway.
pub const FIRST_ROWS: usize = 60;
/// How many more rows "Show older events" adds.
pub const MORE_ROWS: usize = 120;

/// Events list inputs.
#[derive(Properties, PartialEq)]
pub struct EventsProps {
    /// Shared with the app's memo, and only the newest rows: a big cluster has tens of thousands
    /// of Events, too many to build, copy or compare on every frame (an `Rc` of an `Eq` type
    /// compares by pointer first).
    pub list: Rc<EventList>,
    pub dispatch: Callback<Action>,
    /// Only Events about objects whose `kind/name` contains this (see `matches_object`); the
    /// app applies it when it builds `list`, so it reaches past the newest rows.
    pub filter: String,
    pub on_filter: Callback<String>,
    /// What the table says while no Event exists (`viewmodel::events::NextStep::events_text`).
    pub empty: &'static str,
}

/// The events table.
#[component]
pub fn Events(p: &EventsProps) -> Html {
    let warnings_only = use_state(|| false);
    let limit = use_state(|| FIRST_ROWS);
    let more = {
        let limit = limit.clone();
        Callback::from(move |_: MouseEvent| limit.set((*limit + MORE_ROWS).min(SHOWN)))
    };
    let on_input = {
        let f = p.on_filter.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                f.emit(input.value());
            }
        })
    };
    let filtering = !p.filter.trim().is_empty();
    let toggle = {
        let w = warnings_only.clone();
        Callback::from(move |_: Event| w.set(!*w))
    };
    // Updated on every render; taking in the same rows again changes nothing.
    let fades = use_mut_ref(RowFades::default);
    let mut fades = fades.borrow_mut();
    let fading = fades.update(&p.list.rows);
    let n_warn = p.list.warnings;
    let rows: Vec<&EventRow> = p
        .list
        .rows
        .iter()
        .filter(|r| !*warnings_only || r.is_warning())
        .take(SHOWN)
        .collect();
    let hidden = rows.len().saturating_sub(*limit);
    let rows: Vec<&EventRow> = rows.into_iter().take(*limit).collect();
    html! {
        <div class="events" data-testid="events">
            <div class="subbar">
                <span class="subbar-text">
                    { format!("{} events{} · {} warnings · newest first", p.list.total,
                        if filtering { format!(" about “{}”", p.filter.trim()) } else { String::new() }, n_warn) }
                </span>
                <input type="search" class="events-filter mono" data-testid="events-filter" value={p.filter.clone()}
                    oninput={on_input} placeholder="Filter by object: web, node-2…"
                    aria-label="Show only the events of objects whose kind/name contains this" />
                <label class="check">
                    <input type="checkbox" checked={*warnings_only} onchange={toggle} />
                    { "Warnings only" }
                </label>
            </div>
            if rows.is_empty() && filtering {
                <div class="empty">{ format!("No events about an object matching “{}”.", p.filter.trim()) }</div>
            } else if rows.is_empty() {
                <div class="empty" data-testid="events-empty">{ p.empty }</div>
            } else {
                <div class="table-wrap">
                    // The roles are spelled out because a phone lays the rows out as blocks
                    // (www/style.css), which can cost a table its semantics in some browsers.
                    <table class="table" role="table">
                        <thead role="rowgroup">
                            <tr role="row">
                                <th scope="col" role="columnheader" class="col-age">{ "LAST SEEN" }</th>
                                <th scope="col" role="columnheader" class="col-type">{ "TYPE" }</th>
                                <th scope="col" role="columnheader" class="col-reason">{ "REASON" }</th>
                                <th scope="col" role="columnheader" class="col-object">{ "OBJECT" }</th>
                                <th scope="col" role="columnheader">{ "MESSAGE" }</th>
                            </tr>
                        </thead>
                        <tbody role="rowgroup">
                            { for rows.into_iter().map(|r| {
                                let kind = Kind::from_kind_str(&r.object_kind);
                                let select = kind.map(|k| {
                                    let d = p.dispatch.clone();
                                    let key = ObjectKey::new(k, &r.object_namespace, &r.object_name);
                                    Callback::from(move |_: MouseEvent| d.emit(Action::Select(Some(key.clone()))))
                                });
                                html! {
                                    <tr key={r.name.clone()} role="row" class={classes!("event-row", r.is_warning().then_some("is-warning"), fading.contains(&r.name).then_some("is-new"))}>
                                        <td role="cell" class="mono nowrap">{ &r.last_seen }</td>
                                        <td role="cell" class="nowrap">
                                            if r.is_warning() {
                                                <span class="badge badge-warning"><span aria-hidden="true">{ "▲ " }</span>{ &r.type_ }</span>
                                            } else {
                                                <span class="badge badge-normal">{ &r.type_ }</span>
                                            }
                                        </td>
                                        <td role="cell" class="nowrap strong">{ &r.reason }</td>
                                        <td role="cell" class="mono nowrap">
                                            if let Some(cb) = select {
                                                <button class="link" onclick={cb} title="Inspect">{ &r.object }</button>
                                            } else {
                                                { &r.object }
                                            }
                                        </td>
                                        <td role="cell" class="msg">{ &r.message }<span class="event-source">{ format!(" — {}", r.source) }</span></td>
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                    if hidden > 0 {
                        <button class="link-btn events-more" data-testid="events-more" onclick={more}>
                            { format!("Show older events ({hidden} more)") }
                        </button>
                    }
                </div>
            }
        </div>
    }
}
