//! The Yew playground app (wasm32 only). It renders the simulation and dispatches actions; it never mutates it directly.

use yew::prelude::*;

/// The root component.
#[component]
fn App() -> Html {
    html! { <main data-testid="app"><h1>{ "Kubeloop" }</h1></main> }
}

/// Mounts the app on the page.
pub fn start() {
    console_error_panic_hook::set_once();
    yew::Renderer::<App>::new().render();
}
