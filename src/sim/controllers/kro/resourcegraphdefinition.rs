//! kro's ResourceGraphDefinition controller (`pkg/controller/resourcegraphdefinition`): checks a
//! graph, writes the CRD it declares, starts the graph's instance controller once the API serves
//! that kind, and reports it all in the graph's `state`, conditions and `topologicalOrder`.
//!
//! Simplified (ARCHITECTURE.md): no GraphRevisions (a changed graph replaces its instance
//! controller at once) and no breaking-change check on a regenerated CRD.

use std::rc::Rc;

use serde_json::{json, Value as Json};

use super::instance::{covers, InstanceController};
use crate::sim::api::conditions::{self, condition};
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Str};
use crate::sim::api::{ApiRequest, WatchEvent};
use crate::sim::kro::graph::{self, Graph};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    ComponentId, Controller, ControllerChange, Ctx, Outcome, ReconcileRecord,
};

/// The kind kro's CRD serves, once interned.
pub fn rgd_kind() -> Option<Kind> {
    Kind::of_type("kro.run/v1alpha1", "ResourceGraphDefinition")
}

/// The controller of ResourceGraphDefinitions (component `kro`).
#[derive(Clone, Default)]
pub struct ResourceGraphDefinitionController {
    /// The graphs whose instance controller runs: name, generation and the CRD it serves.
    registered: Vec<(Str, i64, String)>,
}

impl ResourceGraphDefinitionController {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Controller for ResourceGraphDefinitionController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::Kro
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::CustomResourceDefinition]
    }

    fn watches_custom_kinds(&self) -> bool {
        true
    }

    fn watches(&self, kind: Kind) -> bool {
        kind == Kind::CustomResourceDefinition || Some(kind) == rgd_kind()
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        _cache: &Cache,
    ) -> Vec<ObjectKey> {
        let o = &ev.object;
        if o.kind() == Kind::CustomResourceDefinition {
            let Some(kind) = rgd_kind() else {
                return Vec::new();
            };
            return o
                .meta()
                .labels
                .get(super::LABEL_RGD_NAME)
                .map(|n| vec![ObjectKey::new(kind, "", n)])
                .unwrap_or_default();
        }
        if Some(o.kind()) == rgd_kind() {
            return vec![o.key()];
        }
        Vec::new()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        rgd_kind()
            .map(|k| cache.list(k).map(|o| o.key()).collect())
            .unwrap_or_default()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        if Some(key.kind) != rgd_kind() {
            return out;
        }
        let Some(rgd) = ctx.cache.get(key).cloned() else {
            self.stop(&key.name, &mut out);
            return out;
        };
        let meta = rgd.meta();
        if meta.deletion_timestamp.is_some() {
            // Its instance controller stops; the CRD and the instances stay
            // (`--allow-crd-deletion` is off by default).
            self.stop(&key.name, &mut out);
            if meta.finalizers.iter().any(|f| f == super::FINALIZER) {
                let rest: Vec<&String> = meta
                    .finalizers
                    .iter()
                    .filter(|f| *f != super::FINALIZER)
                    .collect();
                out.request(ApiRequest::Patch {
                    key: key.clone(),
                    patch: json!({"metadata": {"finalizers": rest}}),
                    status: false,
                });
            }
            out.record = Some(ReconcileRecord {
                observed: "graph deleting".into(),
                desired: "instance controller stopped; CRD and instances kept".into(),
                diff: format!("remove finalizer {}", super::FINALIZER),
            });
            return out;
        }
        if !meta.finalizers.iter().any(|f| f == super::FINALIZER) {
            let mut f = meta.finalizers.clone();
            f.push(super::FINALIZER.into());
            out.request(ApiRequest::Patch {
                key: key.clone(),
                patch: json!({"metadata": {"finalizers": f}}),
                status: false,
            });
        }
        let json = rgd.to_json();
        let spec = json.get("spec").cloned().unwrap_or(Json::Null);
        let graph = match graph::build(&spec) {
            Ok(g) => Rc::new(g),
            Err(e) => {
                self.stop(&key.name, &mut out);
                let accepted =
                    condition("GraphAccepted", false, "InvalidResourceGraph", &e.message);
                self.write_status(&rgd, &mut out, None, vec![accepted], ctx.now);
                out.record = Some(ReconcileRecord {
                    observed: format!("graph refused at {}", e.field),
                    desired: "a valid graph".into(),
                    diff: e.message,
                });
                return out;
            }
        };
        let crd = match crate::sim::kro::crd::generate(&graph, &meta.name, &meta.uid) {
            Ok(c) => c,
            Err(m) => {
                self.stop(&key.name, &mut out);
                let accepted = condition("GraphAccepted", false, "InvalidResourceGraph", &m);
                self.write_status(&rgd, &mut out, None, vec![accepted], ctx.now);
                return out;
            }
        };
        let accepted = condition(
            "GraphAccepted",
            true,
            "Valid",
            "resource graph and schema are valid",
        );
        let crd_name = crate::sim::kro::crd::crd_name(&graph);
        let crd_key = ObjectKey::new(Kind::CustomResourceDefinition, "", &crd_name);
        let mut acts = Vec::new();
        let kind_ready = match ctx.cache.get(&crd_key) {
            None => {
                match Object::from_json(Kind::CustomResourceDefinition, crd) {
                    Ok(o) => {
                        acts.push(format!("create CRD {crd_name}"));
                        out.request(ApiRequest::Create(o));
                    }
                    Err(e) => {
                        let c = condition("KindReady", false, "Failed", e.to_string());
                        self.write_status(&rgd, &mut out, Some(&graph), vec![accepted, c], ctx.now);
                        return out;
                    }
                }
                condition(
                    "KindReady",
                    false,
                    "Failed",
                    "waiting for the CRD to be established",
                )
            }
            Some(live)
                if live
                    .meta()
                    .labels
                    .get(super::LABEL_OWNED)
                    .map(|v| v.as_str())
                    != Some("true") =>
            {
                condition(
                    "KindReady",
                    false,
                    "Failed",
                    "CRD already exists and is not owned by KRO",
                )
            }
            Some(live) => {
                let live_json = live.to_json();
                if !covers(&live_json["spec"], &crd["spec"])
                    || !covers(&live_json["metadata"], &crd["metadata"])
                {
                    let mut updated = live_json.clone();
                    updated["spec"] = crd["spec"].clone();
                    if let Some(l) = updated
                        .pointer_mut("/metadata/labels")
                        .and_then(Json::as_object_mut)
                    {
                        if let Some(want) =
                            crd.pointer("/metadata/labels").and_then(Json::as_object)
                        {
                            for (k, v) in want {
                                l.insert(k.clone(), v.clone());
                            }
                        }
                    }
                    if let Ok(o) = Object::from_json(Kind::CustomResourceDefinition, updated) {
                        acts.push(format!("update CRD {crd_name}"));
                        out.request(ApiRequest::Update(o));
                    }
                }
                let established = live_json
                    .pointer("/status/conditions")
                    .and_then(Json::as_array)
                    .is_some_and(|c| {
                        c.iter()
                            .any(|c| c["type"] == "Established" && c["status"] == "True")
                    });
                if established {
                    condition(
                        "KindReady",
                        true,
                        "Ready",
                        format!("kind {} has been accepted and ready", graph.schema.kind),
                    )
                } else {
                    condition(
                        "KindReady",
                        false,
                        "Failed",
                        "waiting for the CRD to be established",
                    )
                }
            }
        };
        let mut conds = vec![accepted, kind_ready.clone()];
        if kind_ready["status"] == "True" {
            let kind = Kind::of_type(
                &format!("{}/{}", graph.schema.group, graph.schema.api_version),
                &graph.schema.kind,
            );
            match kind {
                Some(kind) => {
                    let current = (meta.name.clone(), meta.generation, crd_name.clone());
                    if !self.registered.contains(&current) {
                        acts.push(format!("start instance controller kro/{}", meta.name));
                        out.controllers.push(ControllerChange::Start(Box::new(
                            InstanceController::new(&meta.name, &meta.uid, graph.clone(), kind),
                        )));
                        self.registered.retain(|r| r.0 != meta.name);
                        self.registered.push(current);
                    }
                    conds.push(condition(
                        "ControllerReady",
                        true,
                        "Running",
                        "controller is running",
                    ));
                }
                None => conds.push(condition(
                    "ControllerReady",
                    false,
                    "FailedToStart",
                    "the generated kind is not served",
                )),
            }
        }
        self.write_status(&rgd, &mut out, Some(&graph), conds, ctx.now);
        out.record = Some(ReconcileRecord {
            observed: format!(
                "graph {} → kind {} ({crd_name})",
                meta.name, graph.schema.kind
            ),
            desired: format!("order: {}", graph.order().join(" → ")),
            diff: acts.join("; "),
        });
        out
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(ResourceGraphDefinitionController::new()))
    }
}

impl ResourceGraphDefinitionController {
    fn stop(&mut self, name: &str, out: &mut Outcome) {
        let before = self.registered.len();
        self.registered.retain(|r| r.0 != name);
        if self.registered.len() != before {
            out.controllers
                .push(ControllerChange::Stop(ComponentId::KroInstance(Str::from(
                    name,
                ))));
        }
    }

    /// Writes `state`, the conditions (with the root `Ready`) and the order, when they changed.
    fn write_status(
        &self,
        rgd: &Object,
        out: &mut Outcome,
        graph: Option<&Graph>,
        mut conds: Vec<Json>,
        now: Millis,
    ) {
        let all = ["GraphAccepted", "KindReady", "ControllerReady"]
            .iter()
            .all(|t| {
                conds
                    .iter()
                    .any(|c| c["type"] == *t && c["status"] == "True")
            });
        let first_bad = conds.iter().find(|c| c["status"] != "True").cloned();
        conds.push(match first_bad {
            None => condition("Ready", true, "Ready", ""),
            Some(mut c) => {
                c["type"] = json!("Ready");
                c
            }
        });
        let live = rgd.to_json();
        conditions::stamp(
            &mut conds,
            live.pointer("/status/conditions"),
            now,
            rgd.meta().generation,
        );
        let mut status = json!({
            "state": if all { "Active" } else { "Inactive" },
            "conditions": conds,
        });
        // Both are `omitempty` in kro's types: a graph without resources shows neither, and a
        // refused graph's are removed (a merge patch's null).
        status["topologicalOrder"] = Json::Null;
        status["resources"] = Json::Null;
        if let Some(g) = graph.filter(|g| !g.nodes.is_empty()) {
            status["topologicalOrder"] = json!(g.order());
            status["resources"] = Json::Array(
                g.nodes
                    .iter()
                    .map(|n| {
                        let mut r = json!({"id": n.id});
                        if !n.dependencies.is_empty() {
                            r["dependencies"] = Json::Array(
                                n.dependencies.iter().map(|d| json!({"id": d})).collect(),
                            );
                        }
                        r
                    })
                    .collect(),
            );
        }
        let current = live.get("status").cloned().unwrap_or(Json::Null);
        if !(covers(&current, &status) && covers(&status, &current)) {
            out.request(ApiRequest::Patch {
                key: rgd.key(),
                patch: json!({"status": status}),
                status: true,
            });
        }
    }
}

/// What installing kro puts in a cluster: its CRD (the component is added by the world).
pub fn install_objects() -> Vec<Object> {
    Object::from_json(
        Kind::CustomResourceDefinition,
        crate::sim::kro::crd::rgd_crd(),
    )
    .into_iter()
    .collect()
}
