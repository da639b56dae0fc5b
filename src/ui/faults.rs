//! The fault panel: every fault the simulation knows, with its parameters and what it teaches.

use std::collections::BTreeMap;

use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::icons;
use super::state::{reply, Action};
use crate::viewmodel::faults::{build_fault, fault_spec, FieldKind, FAULTS};

/// Fault panel inputs.
#[derive(Properties, PartialEq)]
pub struct FaultPanelProps {
    pub pods: Vec<String>,
    pub nodes: Vec<String>,
    pub components: Vec<String>,
    pub dispatch: Callback<Action>,
    pub on_close: Callback<()>,
}

/// The fault panel (a popover under the toolbar).
#[component]
pub fn FaultPanel(p: &FaultPanelProps) -> Html {
    let kind = use_state(|| "DeletePod".to_string());
    let values = use_state(BTreeMap::<String, String>::new);
    let error = use_state(|| None::<String>);
    // Opened from the keyboard, the panel takes the focus (its first field)…
    let first = use_node_ref();
    {
        let first = first.clone();
        use_effect_with((), move |_| {
            if let Some(el) = first.cast::<web_sys::HtmlElement>() {
                let _ = el.focus();
            }
        });
    }
    let Some(spec) = fault_spec(&kind) else {
        return html! {};
    };

    let on_kind = {
        let kind = kind.clone();
        let error = error.clone();
        Callback::from(move |e: Event| {
            let el: HtmlSelectElement = e.target_unchecked_into();
            kind.set(el.value());
            error.set(None);
        })
    };
    let submit = {
        let kind = kind.clone();
        let values = values.clone();
        let error = error.clone();
        let d = p.dispatch.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            match build_fault(&kind, &values) {
                Ok(f) => {
                    error.set(None);
                    d.emit(Action::Inject(f, reply()));
                }
                Err(msg) => error.set(Some(msg)),
            }
        })
    };
    let close = {
        let c = p.on_close.clone();
        Callback::from(move |_: MouseEvent| {
            focus_toggle();
            c.emit(())
        })
    };
    let on_key = {
        let c = p.on_close.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Escape" {
                focus_toggle();
                c.emit(());
            }
        })
    };
    let groups: Vec<&str> = FAULTS.iter().fold(Vec::new(), |mut acc, f| {
        if !acc.contains(&f.group) {
            acc.push(f.group);
        }
        acc
    });

    html! {
        <div class="fault-panel" id="fault-panel" data-testid="fault-panel" role="dialog" aria-label="Inject a fault" onkeydown={on_key}>
            <header class="fault-head">
                <h2 class="panel-title">{ icons::bolt() }{ " Break something" }</h2>
                <button class="icon-btn" onclick={close} aria-label="Close the fault panel">{ icons::close() }</button>
            </header>
            <form class="fault-form" onsubmit={submit}>
                <label class="field">
                    <span>{ "Fault" }</span>
                    <select ref={first} data-testid="fault-type" onchange={on_kind} aria-label="Fault type">
                        { for groups.iter().map(|g| html! {
                            <optgroup label={*g}>
                                { for FAULTS.iter().filter(|f| f.group == *g).map(|f| html! {
                                    <option value={f.type_} selected={f.type_ == kind.as_str()}>{ f.type_ }</option>
                                }) }
                            </optgroup>
                        }) }
                    </select>
                </label>
                <p class="fault-help">{ spec.help }</p>
                <datalist id="dl-pods">{ for p.pods.iter().map(|n| html! { <option value={n.clone()} /> }) }</datalist>
                <datalist id="dl-nodes">{ for p.nodes.iter().map(|n| html! { <option value={n.clone()} /> }) }</datalist>
                <datalist id="dl-components">{ for p.components.iter().map(|n| html! { <option value={n.clone()} /> }) }</datalist>
                { for spec.fields.iter().map(|field| {
                    let current = values.get(field.name).cloned().unwrap_or_default();
                    let values = values.clone();
                    let name = field.name.to_string();
                    let oninput = Callback::from(move |e: InputEvent| {
                        let el: HtmlInputElement = e.target_unchecked_into();
                        let mut v = (*values).clone();
                        v.insert(name.clone(), el.value());
                        values.set(v);
                    });
                    let list = match field.kind {
                        FieldKind::Pod => Some("dl-pods"),
                        FieldKind::Node => Some("dl-nodes"),
                        FieldKind::Component => Some("dl-components"),
                        _ => None,
                    };
                    let input_type = match field.kind { FieldKind::Integer | FieldKind::Fraction => "number", _ => "text" };
                    let step = if field.kind == FieldKind::Fraction { Some("0.05") } else { None };
                    html! {
                        <label class="field" key={format!("{}-{}", spec.type_, field.name)}>
                            <span>{ field.label }{ if field.required { " *" } else { "" } }</span>
                            <input type={input_type} step={step} list={list} placeholder={field.placeholder}
                                data-testid={format!("fault-field-{}", field.name)}
                                class={classes!((field.kind == FieldKind::Json || field.kind == FieldKind::Pod).then_some("mono"))}
                                value={current} {oninput} />
                        </label>
                    }
                }) }
                if let Some(e) = &*error {
                    <p class="form-error" role="alert">{ e }</p>
                }
                <div class="fault-submit">
                    <button type="submit" class="btn btn-danger" data-testid="fault-inject">{ icons::bolt() }<span>{ format!("Inject {}", spec.type_) }</span></button>
                </div>
            </form>
        </div>
    }
}

/// …and gives it back to the Faults button when it closes, instead of dropping it on the page.
fn focus_toggle() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector("[data-testid=\"faults-toggle\"]")
                .ok()
                .flatten()
        })
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}
