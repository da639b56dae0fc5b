//! The ownership view: Deployment → ReplicaSets (by revision) → Pods.

use yew::prelude::*;

use super::cluster::chip;
use super::state::Action;
use crate::sim::api::types::{Kind, ObjectKey};
use crate::viewmodel::inspect::{OwnershipView, RsBranch};

/// Ownership view inputs.
#[derive(Properties, PartialEq)]
pub struct OwnershipProps {
    pub view: OwnershipView,
    pub selected: Option<ObjectKey>,
    pub dispatch: Callback<Action>,
}

fn select(d: &Callback<Action>, key: ObjectKey) -> Callback<MouseEvent> {
    let d = d.clone();
    Callback::from(move |_: MouseEvent| d.emit(Action::Select(Some(key.clone()))))
}

fn rs_branch(rs: &RsBranch, p: &OwnershipProps) -> Html {
    let key = ObjectKey::new(Kind::ReplicaSet, &rs.namespace, &rs.name);
    let scaled_down = rs.desired == 0;
    html! {
        <li class={classes!("tree-rs", scaled_down.then_some("is-old"))} key={rs.name.clone()}>
            <div class="tree-node">
                <span class="kind-badge kind-rs">{ "RS" }</span>
                <button class="link mono" onclick={select(&p.dispatch, key)}>{ &rs.name }</button>
                if !rs.revision.is_empty() {
                    <span class="rev">{ format!("rev {}", rs.revision) }</span>
                }
                <span class="muted mono">{ &rs.image }</span>
                <span class="counts">{ format!("{} desired · {} current · {} ready", rs.desired, rs.current, rs.ready) }</span>
            </div>
            <div class="chips tree-pods">
                { for rs.pods.iter().map(|pod| chip(pod, &p.dispatch, &p.selected, "tree-pod", None)) }
            </div>
        </li>
    }
}

/// The ownership tree.
#[component]
pub fn Ownership(p: &OwnershipProps) -> Html {
    let v = &p.view;
    html! {
        <div class="ownership" data-testid="ownership">
            if v.is_empty() {
                <div class="empty">{ "Nothing owns anything yet. A Deployment owns ReplicaSets (one per template revision), and each ReplicaSet owns its Pods." }</div>
            }
            <ul class="tree">
                { for v.deployments.iter().map(|d| {
                    let key = ObjectKey::new(Kind::Deployment, &d.namespace, &d.name);
                    html! {
                        <li class="tree-deploy" key={d.name.clone()}>
                            <div class="tree-node">
                                <span class="kind-badge kind-deploy">{ "Deploy" }</span>
                                <button class="link mono strong" onclick={select(&p.dispatch, key)}>{ &d.name }</button>
                                <span class="counts">{ format!("{} desired · {} updated · {} ready · {} available", d.desired, d.updated, d.ready, d.available) }</span>
                            </div>
                            <ul class="tree-children">
                                { for d.replica_sets.iter().map(|rs| rs_branch(rs, p)) }
                            </ul>
                        </li>
                    }
                }) }
                { for v.replica_sets.iter().map(|rs| rs_branch(rs, p)) }
                if !v.pods.is_empty() {
                    <li class="tree-rs">
                        <div class="tree-node"><span class="muted">{ "Pods without a controller" }</span></div>
                        <div class="chips tree-pods">
                            { for v.pods.iter().map(|pod| chip(pod, &p.dispatch, &p.selected, "tree-pod", None)) }
                        </div>
                    </li>
                }
            </ul>
        </div>
    }
}
