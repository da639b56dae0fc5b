//! The ownership view: every tree of owners, matched by uid (a custom resource → Deployment →
//! ReplicaSets by revision → Pods, a Service → its EndpointSlices, a Node → its Lease), and a
//! StatefulSet's claims, which it does not own, on a dashed branch of their own, as are the
//! members of an ApplySet (the resources of a kro instance, which kro labels and does not own).

use yew::prelude::*;

use super::cluster::chip;
use super::state::Action;
use crate::sim::api::types::{Kind, ObjectKey};
use crate::viewmodel::inspect::{OwnerNode, OwnershipView};

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

fn branch(n: &OwnerNode, p: &OwnershipProps) -> Html {
    let (class, badge) = match n.key.kind {
        Kind::Deployment => ("tree-deploy", "kind-deploy"),
        Kind::ReplicaSet => ("tree-rs", "kind-rs"),
        _ => ("tree-obj", "kind-obj"),
    };
    let title = format!("{} {}", n.key.kind, n.key.name);
    html! {
        <li class={classes!(class, n.faded.then_some("is-old"))} key={n.key.to_string()}>
            <div class="tree-node">
                <span class={classes!("kind-badge", badge)} title={n.key.kind.as_str()}>{ &n.badge }</span>
                <button class={classes!("link", "mono", (n.key.kind != Kind::ReplicaSet).then_some("strong"))}
                    title={title} onclick={select(&p.dispatch, n.key.clone())}>{ n.key.name.as_str() }</button>
                if !n.revision.is_empty() {
                    <span class="rev">{ format!("rev {}", n.revision) }</span>
                }
                if !n.image.is_empty() {
                    <span class="muted mono">{ &n.image }</span>
                }
                if !n.counts.is_empty() {
                    <span class="counts">{ &n.counts }</span>
                }
            </div>
            if !n.pods.is_empty() {
                <div class="chips tree-pods">
                    { for n.pods.iter().map(|pod| chip(pod, &p.dispatch, &p.selected, "tree-pod", None)) }
                </div>
            }
            if !n.children.is_empty() {
                <ul class="tree-children">
                    { for n.children.iter().map(|c| branch(c, p)) }
                </ul>
            }
            if !n.claims.is_empty() {
                <ul class="tree-children tree-unowned" data-testid={format!("claims-of-{}", n.key.name)}>
                    <li class="muted">{ "claims, not owned: made from volumeClaimTemplates, they outlive its pods" }</li>
                    { for n.claims.iter().map(|c| branch(c, p)) }
                </ul>
            }
            if !n.members.is_empty() {
                <ul class="tree-children tree-unowned tree-members" data-testid={format!("members-of-{}", n.key.name)}>
                    <li class="muted">{ "ApplySet members, not owned: kro labels them (applyset.kubernetes.io/part-of) and deletes them itself" }</li>
                    { for n.members.iter().map(|c| branch(c, p)) }
                </ul>
            }
        </li>
    }
}

/// The ownership forest.
#[component]
pub fn Ownership(p: &OwnershipProps) -> Html {
    let v = &p.view;
    html! {
        <div class="ownership" data-testid="ownership">
            if v.is_empty() {
                <div class="empty">{ "Nothing owns anything yet. A Deployment owns ReplicaSets (one per template revision), and each ReplicaSet owns its Pods; any object can own others through metadata.ownerReferences." }</div>
            }
            <ul class="tree">
                { for v.roots.iter().map(|n| branch(n, p)) }
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
