//! kro's instance controller (`pkg/controller/instance`): one per ResourceGraphDefinition. For an
//! instance it walks the graph in topological order, resolves each resource's `${…}` against the
//! instance and the live objects it depends on, applies what resolved, prunes what is no longer
//! included, and writes the instance's `state` and conditions; on deletion it removes the
//! children wave by wave, leaves first, then its finalizer.
//!
//! Simplified (ARCHITECTURE.md): kro's server-side apply is a JSON merge patch of the fields the
//! template sets, sent only when one differs from the live object (lists are replaced whole, as
//! SSA would replace an atomic list); a resource that reads another waits for the next pass, when
//! the watch has shown it the object its dependency became.

use crate::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::{json, Map, Value as Json};

use crate::sim::api::conditions::{self, condition};
use crate::sim::api::types::{Kind, Millis, Object, ObjectKey, Str};
use crate::sim::api::{ApiRequest, DeleteOptions, WatchEvent};
use crate::sim::cel::{self, Activation, Value};
use crate::sim::kro::graph::{self, Graph, Node};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{
    watched_builtins, ComponentId, Controller, Ctx, EventRecord, Outcome, ReconcileRecord,
};

/// Where a node stands after a pass, as kro's runtime names the states.
#[derive(Clone, Debug, PartialEq)]
enum NodeState {
    /// Applied and ready.
    Synced,
    /// Left out by `includeWhen` (or a dependency was).
    Skipped,
    /// Applied; `readyWhen` not yet true (or not created yet).
    WaitingForReadiness,
    /// Its expressions read data that is not there yet.
    Pending(String),
    /// An expression or the object is wrong.
    Error(String),
    /// The live object is being deleted.
    Deleting,
}

impl NodeState {
    fn label(&self) -> &'static str {
        match self {
            NodeState::Synced => "SYNCED",
            NodeState::Skipped => "SKIPPED",
            NodeState::WaitingForReadiness => "WAITING_FOR_READINESS",
            NodeState::Pending(_) => "PENDING",
            NodeState::Error(_) => "ERROR",
            NodeState::Deleting => "DELETING",
        }
    }
}

/// Each node's state in one pass, in graph order: a graph has at most
/// [`graph::MAX_RESOURCES`] nodes, so a list is enough (and a B-tree per value type is what
/// the first-paint download pays for).
#[derive(Default)]
struct States(Vec<(String, NodeState)>);

impl States {
    fn get(&self, id: &str) -> Option<&NodeState> {
        self.0.iter().find(|(k, _)| k == id).map(|(_, s)| s)
    }

    fn insert(&mut self, id: String, state: NodeState) {
        match self.0.iter_mut().find(|(k, _)| *k == id) {
            Some((_, s)) => *s = state,
            None => self.0.push((id, state)),
        }
    }

    fn values(&self) -> impl Iterator<Item = &NodeState> {
        self.0.iter().map(|(_, s)| s)
    }
}

impl std::ops::Index<&String> for States {
    type Output = NodeState;
    fn index(&self, id: &String) -> &NodeState {
        self.get(id).expect("every node has a state once walked")
    }
}

/// The instance controller of one graph.
#[derive(Clone)]
pub struct InstanceController {
    rgd: String,
    rgd_uid: String,
    graph: Rc<Graph>,
    kind: Kind,
}

impl InstanceController {
    /// The controller kro starts for `rgd` once its CRD serves `kind`.
    pub fn new(rgd: &str, rgd_uid: &str, graph: Rc<Graph>, kind: Kind) -> InstanceController {
        InstanceController {
            rgd: rgd.to_string(),
            rgd_uid: rgd_uid.to_string(),
            graph,
            kind,
        }
    }

    /// Whether a node's template is of `kind`.
    fn is_node_kind(&self, kind: Kind) -> bool {
        self.graph
            .nodes
            .iter()
            .any(|n| n.kind == kind.as_str() && group_of(&n.api_version) == kind.group())
    }

    /// The kinds of the graph's resources that the API serves now.
    fn node_kinds(&self) -> Vec<Kind> {
        let mut out: Vec<Kind> = self
            .graph
            .nodes
            .iter()
            .filter_map(|n| Kind::of_type(&n.api_version, &n.kind))
            .collect();
        out.stable_sort();
        out.dedup();
        out
    }

    /// The objects labelled as this instance's children.
    fn children(&self, cache: &Cache, uid: &str) -> Vec<Rc<Object>> {
        let mut out = Vec::new();
        for k in self.node_kinds() {
            for o in cache.list(k) {
                if o.meta()
                    .labels
                    .get(super::LABEL_INSTANCE_ID)
                    .map(|v| v.as_str())
                    == Some(uid)
                {
                    out.push(o.clone());
                }
            }
        }
        out
    }

    fn instance_labels(&self, inst: &Object) -> Vec<(&'static str, String)> {
        vec![
            (super::LABEL_OWNED, "true".into()),
            (super::LABEL_KRO_VERSION, super::KRO_VERSION.into()),
            (super::LABEL_RGD_ID, self.rgd_uid.clone()),
            (super::LABEL_RGD_NAME, self.rgd.clone()),
            (super::LABEL_APPLYSET_ID, applyset_id(inst)),
        ]
    }

    fn child_labels(&self, inst: &Object, node: &Node) -> Vec<(&'static str, String)> {
        let m = inst.meta();
        let s = &self.graph.schema;
        vec![
            (super::LABEL_OWNED, "true".into()),
            (super::LABEL_KRO_VERSION, super::KRO_VERSION.into()),
            (super::LABEL_INSTANCE_ID, m.uid.to_string()),
            (super::LABEL_INSTANCE_NAME, m.name.to_string()),
            (super::LABEL_INSTANCE_NAMESPACE, m.namespace.to_string()),
            (super::LABEL_INSTANCE_GROUP, s.group.clone()),
            (super::LABEL_INSTANCE_VERSION, s.api_version.clone()),
            (super::LABEL_INSTANCE_KIND, s.kind.clone()),
            (super::LABEL_NODE_ID, node.id.clone()),
            (super::LABEL_RGD_ID, self.rgd_uid.clone()),
            (super::LABEL_RGD_NAME, self.rgd.clone()),
            (super::LABEL_MANAGED_BY, "kro".into()),
            (super::LABEL_APPLYSET_PART_OF, applyset_id(inst)),
        ]
    }
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// KEP-3659's ApplySet id: `applyset-<base64url(sha256(name.namespace.kind.group))>-v1`.
pub fn applyset_id(parent: &Object) -> String {
    let m = parent.meta();
    let kind = parent.kind();
    let raw = format!(
        "{}.{}.{}.{}",
        m.name,
        m.namespace,
        kind.as_str(),
        kind.group()
    );
    let digest = crate::sim::api::sha256::digest(raw.as_bytes());
    format!(
        "applyset-{}-v1",
        crate::sim::api::base64::encode_url(&digest)
    )
}

/// Whether `live` already holds every field `desired` sets (what server-side apply would leave
/// unchanged): maps by key, lists item by item, numbers by value.
pub fn covers(live: &Json, desired: &Json) -> bool {
    match (live, desired) {
        (Json::Object(l), Json::Object(d)) => d.iter().all(|(k, v)| {
            l.get(k).is_some_and(|lv| covers(lv, v)) || (v.is_null() && !l.contains_key(k))
        }),
        (Json::Array(l), Json::Array(d)) => {
            l.len() == d.len() && l.iter().zip(d).all(|(a, b)| covers(a, b))
        }
        (Json::Number(a), Json::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

/// Resolves every `${…}` of a node's template into a concrete object.
fn resolve(node: &Node, activation: &Activation) -> Result<Json, NodeState> {
    let mut out = node.template.clone().unwrap_or(Json::Null);
    for f in &node.fields {
        match f.template.eval(activation).and_then(|v| v.to_json()) {
            Ok(v) => graph::set_at(&mut out, &f.path, v),
            Err(e) => {
                let at = graph::show_path(&f.path);
                let msg = format!("resource {}: {at}: {e}", node.id);
                return Err(if graph::is_data_pending(&e) {
                    NodeState::Pending(msg)
                } else {
                    NodeState::Error(msg)
                });
            }
        }
    }
    Ok(out)
}

/// Evaluates conditions (includeWhen, readyWhen): all must be true.
fn all_true(
    node: &Node,
    conds: &[graph::Condition],
    activation: &Activation,
    what: &str,
) -> Result<bool, NodeState> {
    for c in conds {
        match cel::eval(&c.expr, activation) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => return Ok(false),
            Ok(other) => {
                return Err(NodeState::Error(format!(
                    "resource {}: {what} {:?} must be a boolean, got {}",
                    node.id,
                    c.source,
                    other.type_name()
                )))
            }
            Err(e) if graph::is_data_pending(&e) => {
                if what == "readyWhen" {
                    return Ok(false);
                }
                return Err(NodeState::Pending(format!(
                    "resource {}: {what}: {e}",
                    node.id
                )));
            }
            Err(e) => {
                return Err(NodeState::Error(format!(
                    "resource {}: {what}: {e}",
                    node.id
                )))
            }
        }
    }
    Ok(true)
}

/// A resource's `readyWhen`: Synced when every expression holds, else waiting (or its error).
fn readiness(node: &Node, activation: &Activation) -> NodeState {
    match all_true(node, &node.ready_when, activation, "readyWhen") {
        Ok(true) => NodeState::Synced,
        Ok(false) => NodeState::WaitingForReadiness,
        Err(s) => s,
    }
}

/// The cartesian product of a collection's dimensions, each a variable bound to one item.
fn expand(node: &Node, activation: &Activation) -> Result<Vec<Vec<(String, Json)>>, NodeState> {
    let mut combos: Vec<Vec<(String, Json)>> = vec![Vec::new()];
    for (var, c) in &node.for_each {
        let items = match cel::eval(&c.expr, activation).and_then(|v| v.to_json()) {
            Ok(Json::Array(items)) => items,
            Ok(_) => {
                return Err(NodeState::Error(format!(
                    "resource {}: forEach {var}: {:?} must be a list",
                    node.id, c.source
                )))
            }
            Err(e) if graph::is_data_pending(&e) => {
                return Err(NodeState::Pending(format!(
                    "resource {}: forEach {var}: {e}",
                    node.id
                )))
            }
            Err(e) => {
                return Err(NodeState::Error(format!(
                    "resource {}: forEach {var}: {e}",
                    node.id
                )))
            }
        };
        let mut next = Vec::new();
        for combo in &combos {
            for item in &items {
                let mut c = combo.clone();
                c.push((var.clone(), item.clone()));
                next.push(c);
                if next.len() > graph::MAX_COLLECTION {
                    return Err(NodeState::Error(format!(
                        "resource {}: collection exceeds the limit of {} items",
                        node.id,
                        graph::MAX_COLLECTION
                    )));
                }
            }
        }
        combos = next;
    }
    Ok(combos)
}

/// A merge patch that sets `labels` and `annotations` on a desired object.
fn label_object(obj: &mut Json, labels: &[(&'static str, String)], annotations: &[(&str, String)]) {
    let Some(m) = obj.as_object_mut() else { return };
    let meta = m
        .entry("metadata")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    let Some(meta) = meta else { return };
    let l = meta.entry("labels").or_insert_with(|| json!({}));
    if let Some(l) = l.as_object_mut() {
        for (k, v) in labels {
            l.insert((*k).to_string(), json!(v));
        }
    }
    if !annotations.is_empty() {
        let a = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = a.as_object_mut() {
            for (k, v) in annotations {
                a.insert((*k).to_string(), json!(v));
            }
        }
    }
}

impl Controller for InstanceController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::KroInstance(Str::from(self.rgd.as_str()))
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        let mut kinds = self.node_kinds();
        kinds.push(self.kind);
        watched_builtins(&kinds)
    }

    fn watches_custom_kinds(&self) -> bool {
        true
    }

    fn watches(&self, kind: Kind) -> bool {
        kind == self.kind
            || match kind {
                Kind::Custom(_) => self.is_node_kind(kind),
                k => self.watched_kinds().contains(&k),
            }
    }

    fn default_resync(&self) -> Option<Millis> {
        Some(super::DEFAULT_RESYNC_MS)
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        let o = &ev.object;
        if o.kind() == self.kind {
            return vec![o.key()];
        }
        let labels = &o.meta().labels;
        if labels
            .get(super::LABEL_RGD_NAME)
            .is_some_and(|v| *v == self.rgd)
        {
            if let (Some(name), Some(ns)) = (
                labels.get(super::LABEL_INSTANCE_NAME),
                labels.get(super::LABEL_INSTANCE_NAMESPACE),
            ) {
                return vec![ObjectKey::new(self.kind, ns, name)];
            }
        }
        // An object an external reference names wakes every instance that may read it.
        let external = self.graph.nodes.iter().any(|n| {
            n.external.as_ref().is_some_and(|e| {
                e.kind == o.kind().as_str() && (e.name == o.meta().name || e.name.contains("${"))
            })
        });
        if external {
            return self.keys_for_resync(cache);
        }
        Vec::new()
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cache.list(self.kind).map(|o| o.key()).collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(inst) = ctx.cache.get(key).cloned() else {
            return Outcome::done();
        };
        if inst.meta().deletion_timestamp.is_some() {
            return self.delete(&inst, ctx);
        }
        self.sync(&inst, ctx)
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(InstanceController::new(
            &self.rgd,
            &self.rgd_uid,
            self.graph.clone(),
            self.kind,
        )))
    }
}

impl InstanceController {
    fn sync(&self, inst: &Rc<Object>, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let meta = inst.meta();
        let inst_json = inst.to_json();
        // 1. Claim the instance: finalizer and labels (kro.run/labeller).
        let wanted = self.instance_labels(inst);
        let labelled = wanted
            .iter()
            .all(|(k, v)| meta.labels.get(k).is_some_and(|x| x == v));
        let finalized = meta.finalizers.iter().any(|f| f == super::FINALIZER);
        if !labelled || !finalized {
            let mut finalizers = meta.finalizers.clone();
            if !finalized {
                finalizers.push(super::FINALIZER.to_string());
            }
            let mut labels = Map::new();
            for (k, v) in &wanted {
                labels.insert((*k).to_string(), Json::from(v.as_str()));
            }
            out.request(ApiRequest::Patch {
                key: inst.key(),
                patch: json!({"metadata": {"finalizers": finalizers, "labels": labels}}),
                status: false,
            });
        }
        // 2. Walk the graph.
        let mut activation: Activation = BTreeMap::new();
        activation.insert("schema".into(), inst_json.clone());
        let mut states = States::default();
        let mut desired: BTreeSet<ObjectKey> = BTreeSet::new();
        let mut acts: Vec<String> = Vec::new();
        let waves = self.graph.waves();
        let mut kinds_applied: BTreeSet<String> = BTreeSet::new();
        let mut stop = false;
        for node in &self.graph.nodes {
            if stop {
                states.insert(node.id.clone(), NodeState::Pending("stopped".into()));
                continue;
            }
            let state = self.sync_node(
                node,
                inst,
                &mut activation,
                &states,
                &mut desired,
                &mut out,
                &mut acts,
                waves.get(&node.id).copied().unwrap_or(1),
                &mut kinds_applied,
                ctx.cache,
            );
            if state == NodeState::Deleting {
                stop = true;
            }
            states.insert(node.id.clone(), state);
        }
        // The ApplySet's inventory: the group-kinds of its members, kept as a union (what is
        // pruned is found by it, so a kind is never dropped from it while members may remain).
        let listed = meta
            .annotations
            .get(super::ANNOTATION_APPLYSET_GKS)
            .map(|v| v.as_str())
            .unwrap_or_default();
        for gk in listed.split(',').filter(|g| !g.is_empty()) {
            kinds_applied.insert(gk.to_string());
        }
        let gks = kinds_applied.iter().cloned().collect::<Vec<_>>().join(",");
        let tooling = format!("kro/{}", super::KRO_VERSION);
        if gks != listed
            || meta
                .annotations
                .get(super::ANNOTATION_APPLYSET_TOOLING)
                .is_none_or(|x| *x != tooling)
        {
            out.request(ApiRequest::Patch {
                key: inst.key(),
                patch: json!({"metadata": {"annotations": {
                    super::ANNOTATION_APPLYSET_GKS: gks,
                    super::ANNOTATION_APPLYSET_TOOLING: tooling,
                }}}),
                status: false,
            });
        }
        let all_resolved = states
            .values()
            .all(|s| !matches!(s, NodeState::Pending(_) | NodeState::Error(_)));
        // 3. Prune what the inventory holds and the graph no longer wants.
        if all_resolved && !stop {
            for child in self.children(ctx.cache, &meta.uid) {
                if !desired.contains(&child.key()) && child.meta().deletion_timestamp.is_none() {
                    acts.push(format!("prune {}", child.key()));
                    out.request(ApiRequest::Delete {
                        key: child.key(),
                        options: DeleteOptions {
                            precondition_uid: Some(child.meta().uid.to_string()),
                            ..Default::default()
                        },
                    });
                }
            }
        }
        // 4. Status.
        let status = self.status(inst, &states, &activation, ctx.now);
        let live_status = inst_json.get("status").cloned().unwrap_or(Json::Null);
        if !status_equal(&live_status, &status) {
            out.request(ApiRequest::Patch {
                key: inst.key(),
                patch: json!({"status": status}),
                status: true,
            });
        }
        let waiting = states.values().any(|s| {
            matches!(
                s,
                NodeState::Pending(_) | NodeState::WaitingForReadiness | NodeState::Deleting
            )
        });
        if waiting {
            out.requeue(super::INSTANCE_REQUEUE_MS);
        }
        let observed = self
            .graph
            .nodes
            .iter()
            .map(|n| format!("{} {}", n.id, states[&n.id].label()))
            .collect::<Vec<_>>()
            .join(", ");
        out.record = Some(ReconcileRecord {
            observed: format!("graph: {observed}"),
            desired: format!("order: {}", self.graph.order().join(" → ")),
            diff: acts.join("; "),
        });
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn sync_node(
        &self,
        node: &Node,
        inst: &Rc<Object>,
        activation: &mut Activation,
        states: &States,
        desired: &mut BTreeSet<ObjectKey>,
        out: &mut Outcome,
        acts: &mut Vec<String>,
        wave: usize,
        kinds_applied: &mut BTreeSet<String>,
        cache: &Cache,
    ) -> NodeState {
        for d in &node.dependencies {
            match states.get(d) {
                Some(NodeState::Skipped) => return NodeState::Skipped,
                Some(NodeState::Synced) => {}
                _ => return NodeState::Pending(format!("waiting for {d}")),
            }
        }
        match all_true(node, &node.include_when, activation, "includeWhen") {
            Ok(true) => {}
            Ok(false) => return NodeState::Skipped,
            Err(s) => return s,
        }
        let Some(kind) = Kind::of_type(&node.api_version, &node.kind) else {
            return NodeState::Pending(format!(
                "resource {}: no matches for kind {:?} in version {:?}",
                node.id, node.kind, node.api_version
            ));
        };
        let inst_ns = inst.meta().namespace.clone();
        if let Some(ext) = &node.external {
            let resolved = match resolve_external(node, activation) {
                Ok(r) => r,
                Err(s) => return s,
            };
            let ns = if kind.namespaced() {
                resolved
                    .1
                    .unwrap_or(ext.namespace.clone().unwrap_or(inst_ns.to_string()))
            } else {
                String::new()
            };
            let key = ObjectKey::new(kind, &ns, &resolved.0);
            let Some(live) = cache.get(&key) else {
                return NodeState::Pending(format!(
                    "resource {}: external reference {} not found",
                    node.id, key
                ));
            };
            activation.insert(node.id.clone(), live.to_json());
            return readiness(node, activation);
        }
        let combos = if node.is_collection() {
            match expand(node, activation) {
                Ok(c) => c,
                Err(s) => return s,
            }
        } else {
            vec![Vec::new()]
        };
        let size = combos.len();
        let mut lives: Vec<Json> = Vec::new();
        let mut state = NodeState::Synced;
        for (index, vars) in combos.into_iter().enumerate() {
            let mut act = activation.clone();
            for (v, item) in vars {
                act.insert(v, item);
            }
            let mut obj = match resolve(node, &act) {
                Ok(o) => o,
                Err(s) => return s,
            };
            if kind.namespaced() && obj.pointer("/metadata/namespace").is_none() {
                if let Some(m) = obj.get_mut("metadata").and_then(Json::as_object_mut) {
                    m.insert("namespace".into(), json!(inst_ns));
                }
            }
            let mut labels = self.child_labels(inst, node);
            if node.is_collection() {
                labels.push((super::LABEL_COLLECTION_INDEX, index.to_string()));
                labels.push((super::LABEL_COLLECTION_SIZE, size.to_string()));
            }
            label_object(
                &mut obj,
                &labels,
                &[(super::ANNOTATION_APPLY_ORDER, wave.to_string())],
            );
            let name = obj
                .pointer("/metadata/name")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string();
            let ns = if kind.namespaced() {
                obj.pointer("/metadata/namespace")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string()
            } else {
                String::new()
            };
            let key = ObjectKey::new(kind, &ns, &name);
            desired.insert(key.clone());
            kinds_applied.insert(group_kind(kind));
            match cache.get(&key) {
                None => {
                    match Object::from_json(kind, obj) {
                        Ok(o) => {
                            acts.push(format!("create {key}"));
                            out.request(ApiRequest::Create(o));
                        }
                        Err(e) => {
                            return NodeState::Error(format!(
                                "resource {}: failed to apply: {e}",
                                node.id
                            ))
                        }
                    }
                    state = NodeState::WaitingForReadiness;
                }
                Some(live) if live.meta().deletion_timestamp.is_some() => {
                    return NodeState::Deleting;
                }
                Some(live) => {
                    let live_json = live.to_json();
                    if !covers(&live_json, &obj) {
                        let mut patch = obj.clone();
                        if let Some(m) = patch.as_object_mut() {
                            m.remove("apiVersion");
                            m.remove("kind");
                        }
                        acts.push(format!("apply {key}"));
                        out.request(ApiRequest::Patch {
                            key: key.clone(),
                            patch,
                            status: false,
                        });
                    }
                    lives.push(live_json);
                }
            }
        }
        if state != NodeState::Synced {
            return state;
        }
        if node.is_collection() {
            activation.insert(node.id.clone(), Json::Array(lives.clone()));
            for each in lives {
                let mut act = activation.clone();
                act.insert("each".into(), each);
                let state = readiness(node, &act);
                if state != NodeState::Synced {
                    return state;
                }
            }
            return NodeState::Synced;
        }
        if let Some(live) = lives.pop() {
            activation.insert(node.id.clone(), live);
        }
        readiness(node, activation)
    }

    fn status(&self, inst: &Object, states: &States, activation: &Activation, now: Millis) -> Json {
        let mut status = json!({});
        for f in &self.graph.status {
            if let Ok(v) = f.template.eval(activation).and_then(|v| v.to_json()) {
                let mut path: Vec<graph::Seg> = f.path.clone();
                ensure_path(&mut status, &path);
                graph::set_at(&mut status, &path, v);
                path.clear();
            }
        }
        let errors: Vec<&str> = states
            .values()
            .filter_map(|s| match s {
                NodeState::Error(m) => Some(m.as_str()),
                _ => None,
            })
            .collect();
        let not_ready: Vec<&str> = self
            .graph
            .nodes
            .iter()
            .filter(|n| !matches!(states[&n.id], NodeState::Synced | NodeState::Skipped))
            .map(|n| n.id.as_str())
            .collect();
        let deleting = states.values().any(|s| *s == NodeState::Deleting);
        let state = if !errors.is_empty() {
            "ERROR"
        } else if not_ready.is_empty() {
            "ACTIVE"
        } else {
            "IN_PROGRESS"
        };
        let graph_ok = errors.is_empty();
        let resources = if !errors.is_empty() {
            condition(
                "ResourcesReady",
                false,
                "NotReady",
                format!("resource reconciliation failed: {}", errors.join("; ")),
            )
        } else if deleting {
            condition(
                "ResourcesReady",
                false,
                "ResourceDeleting",
                "a resource is currently being deleted; waiting for deletion to complete",
            )
        } else if not_ready.is_empty() {
            condition(
                "ResourcesReady",
                true,
                "AllResourcesReady",
                "all resources are created and ready",
            )
        } else {
            condition(
                "ResourcesReady",
                false,
                "NotReady",
                format!("awaiting resource readiness: {}", not_ready.join(", ")),
            )
        };
        let graph_cond = if graph_ok {
            condition(
                "GraphResolved",
                true,
                "Resolved",
                "runtime graph created and all resources resolved",
            )
        } else {
            condition(
                "GraphResolved",
                false,
                "ResolutionFailed",
                errors.join("; "),
            )
        };
        let ready = resources["status"] == "True" && graph_ok;
        let mut conds = vec![
            condition(
                "InstanceManaged",
                true,
                "Managed",
                "instance is properly managed with finalizers and labels",
            ),
            graph_cond,
            resources.clone(),
            if ready {
                condition("Ready", true, "Ready", "")
            } else {
                let mut c = resources;
                c["type"] = json!("Ready");
                c
            },
        ];
        let generation = inst.meta().generation;
        let old = inst.to_json();
        conditions::stamp(
            &mut conds,
            old.pointer("/status/conditions"),
            now,
            generation,
        );
        status["state"] = json!(state);
        status["conditions"] = Json::Array(conds);
        status
    }

    /// Deletion: the highest apply-order wave first, the next once it is gone, then the
    /// finalizer.
    fn delete(&self, inst: &Rc<Object>, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::done();
        let meta = inst.meta();
        if !meta.finalizers.iter().any(|f| f == super::FINALIZER) {
            return out;
        }
        let children = self.children(ctx.cache, &meta.uid);
        let inst_json = inst.to_json();
        if inst_json.pointer("/status/state").and_then(Json::as_str) != Some("DELETING") {
            let mut conds = vec![condition(
                "ResourcesReady",
                false,
                "UnderDeletion",
                "deleting resources",
            )];
            conds[0]["status"] = json!("Unknown");
            conditions::stamp(&mut conds, None, ctx.now, meta.generation);
            out.request(ApiRequest::Patch {
                key: inst.key(),
                patch: json!({"status": {"state": "DELETING", "conditions": conds}}),
                status: true,
            });
        }
        if children.is_empty() {
            let finalizers: Vec<&String> = meta
                .finalizers
                .iter()
                .filter(|f| *f != super::FINALIZER)
                .collect();
            out.request(ApiRequest::Patch {
                key: inst.key(),
                patch: json!({"metadata": {"finalizers": finalizers}}),
                status: false,
            });
            out.record = Some(ReconcileRecord {
                observed: "instance deleting, no children left".into(),
                desired: "gone".into(),
                diff: format!("remove finalizer {}", super::FINALIZER),
            });
            return out;
        }
        let wave_of = |o: &Object| {
            o.meta()
                .annotations
                .get(super::ANNOTATION_APPLY_ORDER)
                .and_then(|w| w.parse::<usize>().ok())
                .unwrap_or(0)
        };
        let top = children.iter().map(|c| wave_of(c)).max().unwrap_or(0);
        let mut acts = Vec::new();
        for c in children.iter().filter(|c| wave_of(c) == top) {
            if c.meta().deletion_timestamp.is_none() {
                acts.push(format!("delete {}", c.key()));
                out.request(ApiRequest::Delete {
                    key: c.key(),
                    options: DeleteOptions {
                        precondition_uid: Some(c.meta().uid.to_string()),
                        ..Default::default()
                    },
                });
            }
        }
        out.requeue(super::INSTANCE_REQUEUE_MS);
        out.record = Some(ReconcileRecord {
            observed: format!("instance deleting, {} children left", children.len()),
            desired: "children deleted, leaves first".into(),
            diff: format!("deleting apply-order wave {top}: {}", acts.join("; ")),
        });
        if !acts.is_empty() {
            out.event(EventRecord::normal(
                inst,
                "Deleting",
                format!("deleting apply-order wave {top}"),
            ));
        }
        out
    }
}

/// `Deployment.apps` / `Service`, as the ApplySet annotation lists group-kinds.
fn group_kind(kind: Kind) -> String {
    match kind.group() {
        "" => kind.as_str().to_string(),
        g => format!("{}.{g}", kind.as_str()),
    }
}

/// The name (and namespace) of an external reference, its expressions resolved.
fn resolve_external(
    node: &Node,
    activation: &Activation,
) -> Result<(String, Option<String>), NodeState> {
    let ext = node.external.as_ref().expect("an external node");
    let mut doc = json!({"metadata": {"name": ext.name, "namespace": ext.namespace}});
    for f in &node.fields {
        let v = f
            .template
            .eval(activation)
            .and_then(|v| v.to_json())
            .map_err(|e| NodeState::Pending(format!("resource {}: {e}", node.id)))?;
        // Only metadata.name / metadata.namespace matter for the lookup.
        if let [graph::Seg::Key(m), graph::Seg::Key(field)] = f.path.as_slice() {
            if m == "metadata" {
                doc["metadata"][field.as_str()] = v;
            }
        }
    }
    Ok((
        doc.pointer("/metadata/name")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
        doc.pointer("/metadata/namespace")
            .and_then(Json::as_str)
            .map(str::to_string),
    ))
}

/// Creates the objects along `path` so a value can be set at its end.
fn ensure_path(root: &mut Json, path: &[graph::Seg]) {
    let mut cur = root;
    for s in path {
        let graph::Seg::Key(k) = s else { return };
        if !cur.is_object() {
            *cur = json!({});
        }
        cur = cur
            .as_object_mut()
            .expect("an object")
            .entry(k.clone())
            .or_insert(Json::Null);
    }
}

/// Status equality ignoring nothing but key order (JSON maps compare by content).
fn status_equal(live: &Json, new: &Json) -> bool {
    covers(live, new) && covers(new, live)
}
