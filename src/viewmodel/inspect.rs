//! The inspector and ownership views: spec beside status with the gap between them spelled out,
//! conditions with their reasons, and the Deployment → ReplicaSet → Pod chain (and a
//! StatefulSet's claims, which it does not own but which outlive its pods).

use std::collections::BTreeMap;
use std::rc::Rc;

use super::claims::ClaimChip;
use super::cluster::PodView;
use super::events::{event_rows, EventRow};
use crate::sim::api::apiserver::ApiServer;
use crate::sim::api::statefulset::StatefulSet;
use crate::sim::api::storage::claim_kind;
use crate::sim::api::types::{Condition, Kind, Millis, Object, ObjectKey, Pod};
use crate::sim::controllers::scheduler::{self, NodeVerdict, SchedulingDecision};
use crate::sim::controllers::statefulset::utils as sts;
use crate::sim::input::yaml::to_yaml;
use crate::sim::time::human_age;
use crate::sim::world::Sim;
use crate::sort::{CollectTree, StableSort};

/// Everything the inspector shows about the selected object.
#[derive(Clone, Debug, PartialEq)]
pub struct InspectorData {
    pub key: ObjectKey,
    /// False once the object was deleted (the inspector says so instead of closing).
    pub exists: bool,
    pub gap: Vec<GapRow>,
    pub conditions: Vec<ConditionRow>,
    /// The Events about this object, and no other.
    pub events: Vec<EventRow>,
    pub spec_yaml: String,
    pub status_yaml: String,
    /// The declared fields of an object with neither spec nor status (a ConfigMap's `data`, a
    /// Role's `rules`), shown in their place.
    pub fields_yaml: Option<String>,
    pub yaml: String,
    /// `metadata.generation` / `status.observedGeneration`, when the kind has them.
    pub generation: Option<(i64, i64)>,
    /// For a pod: the scheduler's filter and score pass over the current nodes.
    pub scheduling: Option<SchedulingView>,
    /// Where the playground simplifies: a custom object no controller acts on, rules it stores
    /// without enforcing.
    pub notes: Vec<String>,
}

impl InspectorData {
    /// What the inspector shows about `key` in `sim` at `now`.
    pub fn of(sim: &Sim, key: ObjectKey, now: Millis) -> InspectorData {
        let api = sim.api();
        // Only this object's Events become rows: a big cluster has tens of thousands.
        let events = event_rows(
            api.scan(Kind::Event)
                .filter_map(|o| o.as_event())
                .filter(|e| {
                    e.involved_object.kind == key.kind.as_str()
                        && e.involved_object.name == key.name
                        && (e.involved_object.namespace == key.namespace
                            || key.namespace.is_empty())
                }),
            now,
        );
        let Some(obj) = api.get(&key).cloned() else {
            return InspectorData {
                key,
                exists: false,
                gap: Vec::new(),
                conditions: Vec::new(),
                events,
                spec_yaml: String::new(),
                status_yaml: String::new(),
                fields_yaml: None,
                yaml: String::new(),
                generation: None,
                scheduling: None,
                notes: Vec::new(),
            };
        };
        let generation = match &*obj {
            Object::Deployment(d) => Some((d.metadata.generation, d.status.observed_generation)),
            Object::ReplicaSet(r) => Some((r.metadata.generation, r.status.observed_generation)),
            _ => None,
        };
        // Replayed as if the pod were being scheduled now: a bound pod's nodeName would otherwise
        // make the NodeName filter reject every other node.
        let scheduling = obj.as_pod().map(|pod| {
            let nodes: Vec<_> = api.list(Kind::Node).filter_map(|o| o.as_node()).collect();
            let pods: Vec<_> = api.list(Kind::Pod).filter_map(|o| o.as_pod()).collect();
            let mut unbound = pod.clone();
            unbound.spec_mut().node_name = Default::default();
            SchedulingView::of(&scheduler::explain(&unbound, &nodes, &pods))
        });
        InspectorData {
            exists: true,
            gap: gap_rows(&obj, now),
            conditions: condition_rows(&obj, now),
            events,
            spec_yaml: yaml_unless_null(&obj.spec_json()),
            status_yaml: yaml_unless_null(&obj.status_json()),
            fields_yaml: declared_fields(&obj),
            yaml: to_yaml(&obj.to_json()),
            generation,
            scheduling,
            notes: simulation_notes(sim, &obj),
            key,
        }
    }
}

/// An object part as YAML, or nothing when the object has no such part (a custom object without
/// a status), which the inspector shows as `{}`.
fn yaml_unless_null(v: &serde_json::Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        to_yaml(v)
    }
}

/// Everything but `apiVersion`, `kind` and `metadata` of a stored built-in object that has
/// neither a spec nor a status.
fn declared_fields(obj: &Object) -> Option<String> {
    let Object::Custom(o) = obj else {
        return None;
    };
    if !o.kind.is_builtin() || o.content.contains_key("spec") || o.content.contains_key("status") {
        return None;
    }
    Some(yaml_unless_null(&serde_json::Value::Object(
        o.content.clone(),
    )))
}

/// What the playground does not do with this object, said where the learner looks at it.
fn simulation_notes(sim: &Sim, obj: &Object) -> Vec<String> {
    let Object::Custom(o) = obj else {
        return Vec::new();
    };
    let kind = o.kind.names().kind;
    if let Some(controller) = crate::sim::api::openapi::controller_of(o.kind) {
        return vec![format!(
            "The {controller} acts on it. Its fields are checked for their types against the \
             upstream v1.34 definitions; of its values, only the rules the {controller} relies \
             on are validated."
        )];
    }
    if o.kind.is_builtin() {
        let mut notes = vec![format!(
            "Stored; no controller acts on it in the playground: the API server checks its fields' \
             types against the upstream v1.34 definitions and keeps this {kind}, but does not \
             validate its values; only the garbage collector and the namespace controller read it."
        )];
        if matches!(kind, "ConfigMap" | "Secret") {
            notes.push(format!(
                "Changing it does not restart the pods that use it, as in Kubernetes: the \
                 Deployment controller does not watch {kind}s; roll them with kubectl rollout restart."
            ));
        }
        return notes;
    }
    // kro's own kind, and the kinds kro generates (their CRD carries kro's labels).
    let crd = sim.api().crd_of(o.kind);
    let kro_graph = crd
        .and_then(|c| c.metadata.labels.get(crate::sim::kro::LABEL_RGD_NAME))
        .cloned();
    if o.kind.names().group == crate::sim::kro::DEFAULT_GROUP && kind == "ResourceGraphDefinition" {
        return vec![
            "kro (component kro) acts on it: it checks the graph, writes the CustomResourceDefinition \
             it declares and starts the graph's instance controller, kro/<name>."
                .into(),
        ];
    }
    if let Some(graph) = kro_graph {
        return vec![format!(
            "kro's instance controller kro/{graph} acts on it: it creates the graph's resources, \
             labelled as members of this {kind}'s ApplySet (no ownerReferences), and reports \
             status.state and the conditions."
        )];
    }
    let mut notes = vec![format!(
        "Stored; no controller acts on it in the playground: the API server validates and keeps \
         this {kind}, and only the garbage collector reads it (for its ownerReferences)."
    )];
    let cel = crd
        .and_then(|crd| crd.storage_version())
        .and_then(|v| v.schema.as_ref())
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .is_some_and(crate::sim::api::schema::has_cel_rules);
    if cel {
        notes.push(
            "Its CustomResourceDefinition's x-kubernetes-validations rules are stored but not enforced by the playground yet."
                .into(),
        );
    }
    notes
}

/// One line of "what the spec asks for" against "what the status reports".
#[derive(Clone, Debug, PartialEq)]
pub struct GapRow {
    pub field: String,
    pub desired: String,
    pub observed: String,
    /// The status matches the spec on this line.
    pub ok: bool,
}

fn row(field: &str, desired: impl ToString, observed: impl ToString, ok: bool) -> GapRow {
    GapRow {
        field: field.into(),
        desired: desired.to_string(),
        observed: observed.to_string(),
        ok,
    }
}

fn count_row(field: &str, want: i32, have: i32) -> GapRow {
    row(field, want, have, want == have)
}

/// The gap rows of an object, for kinds that have a meaningful spec/status pair.
pub fn gap_rows(obj: &Object, now: Millis) -> Vec<GapRow> {
    match obj {
        Object::Deployment(d) => {
            let want = d.spec.replicas.unwrap_or(1);
            let s = &d.status;
            vec![
                count_row("replicas", want, s.replicas),
                count_row("updatedReplicas", want, s.updated_replicas),
                count_row("readyReplicas", want, s.ready_replicas),
                count_row("availableReplicas", want, s.available_replicas),
                row(
                    "observedGeneration",
                    d.metadata.generation,
                    s.observed_generation,
                    s.observed_generation >= d.metadata.generation,
                ),
            ]
        }
        Object::ReplicaSet(rs) => {
            let want = rs.spec.replicas.unwrap_or(1);
            let s = &rs.status;
            vec![
                count_row("replicas", want, s.replicas),
                count_row("readyReplicas", want, s.ready_replicas),
                count_row("availableReplicas", want, s.available_replicas),
                row(
                    "observedGeneration",
                    rs.metadata.generation,
                    s.observed_generation,
                    s.observed_generation >= rs.metadata.generation,
                ),
            ]
        }
        Object::Pod(p) => pod_gap(p, now),
        Object::Node(n) => {
            let ready = n.ready_status();
            vec![
                row("Ready", "True", ready, ready == "True"),
                row(
                    "schedulable",
                    if n.spec.unschedulable {
                        "no (cordoned)"
                    } else {
                        "yes"
                    },
                    if n.spec.unschedulable {
                        "no new pods"
                    } else {
                        "accepting pods"
                    },
                    true,
                ),
            ]
        }
        _ => Vec::new(),
    }
}

fn pod_gap(p: &Pod, _now: Millis) -> Vec<GapRow> {
    let mut rows = vec![row(
        "nodeName",
        "a node that fits",
        if p.spec.node_name.is_empty() {
            "not scheduled yet".to_string()
        } else {
            p.spec.node_name.to_string()
        },
        !p.spec.node_name.is_empty(),
    )];
    for c in &p.spec.containers {
        let status = p
            .status
            .container_statuses
            .iter()
            .find(|s| s.name == c.name);
        let (observed, ok) = match status {
            None => ("no status yet".to_string(), false),
            Some(s) => {
                let state = if let Some(w) = &s.state.waiting {
                    format!("waiting: {}", w.reason.clone().unwrap_or_default())
                } else if let Some(t) = &s.state.terminated {
                    format!(
                        "terminated: {} (exit {})",
                        t.reason.clone().unwrap_or_default(),
                        t.exit_code
                    )
                } else if s.state.running.is_some() {
                    if s.ready {
                        "running, ready".to_string()
                    } else {
                        "running, not ready".to_string()
                    }
                } else {
                    "unknown".to_string()
                };
                let image = if s.image.is_empty() || s.image == c.image {
                    String::new()
                } else {
                    format!(" [{}]", s.image)
                };
                (
                    format!("{state}{image}"),
                    s.ready && s.state.running.is_some(),
                )
            }
        };
        rows.push(row(
            &format!("container {}", c.name),
            format!("{} running, ready", c.image),
            observed,
            ok,
        ));
    }
    let ready = if p.is_ready() { "True" } else { "False" };
    rows.push(row("Ready", "True", ready, p.is_ready()));
    rows
}

/// A Job's progress, for the cluster view: what `kubectl get jobs` says, its failures against
/// its backoffLimit, and how long the failure back-off still holds its next pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobProgress {
    pub name: String,
    pub namespace: String,
    /// `kubectl get jobs`' STATUS.
    pub status: &'static str,
    pub succeeded: i64,
    /// spec.completions (None: done at the first success).
    pub completions: Option<i32>,
    pub failed: i64,
    pub backoff_limit: i32,
    pub active: i64,
    /// How long the back-off still holds the next pod, in whole seconds.
    pub next_pod_in: Option<u64>,
}

impl JobProgress {
    /// Every Job's progress at `now`, by namespace and name.
    pub fn all(sim: &Sim) -> Vec<JobProgress> {
        use crate::sim::api::job as api;
        let Some(kind) = api::job_kind() else {
            return Vec::new();
        };
        let store = sim.api();
        let mut out: Vec<JobProgress> = store
            .list(kind)
            .filter_map(|o| o.as_custom())
            .map(|j| {
                let int = |f: &str| j.int_at(&["status", f]).unwrap_or(0);
                let status = api::status_word(j);
                let waiting = status == "Running" && int("active") == 0;
                let next_pod_in = waiting
                    .then(|| {
                        let pods: Vec<&Pod> = store
                            .list(Kind::Pod)
                            .filter_map(|o| o.as_pod())
                            .filter(|p| {
                                p.metadata
                                    .controller_ref()
                                    .is_some_and(|r| r.uid == j.metadata.uid)
                            })
                            .collect();
                        crate::sim::controllers::job::backoff::remaining_backoff(
                            j,
                            &pods,
                            sim.now(),
                        )
                    })
                    .flatten()
                    .map(|ms| ms.div_ceil(1000));
                JobProgress {
                    name: j.metadata.name.to_string(),
                    namespace: j.metadata.namespace.to_string(),
                    status,
                    succeeded: int("succeeded"),
                    completions: api::completions(j),
                    failed: int("failed"),
                    backoff_limit: api::backoff_limit(j),
                    active: int("active"),
                    next_pod_in,
                }
            })
            .collect();
        out.stable_sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        out
    }

    /// Progress in words: `1/3 done · 2 failed of 4 allowed · next pod in 12s`.
    pub fn words(&self) -> String {
        let done = match self.completions {
            Some(c) => format!("{}/{c} done", self.succeeded),
            None => format!("{} done", self.succeeded),
        };
        let mut parts = vec![done];
        if self.failed > 0 {
            parts.push(format!(
                "{} failed of {} allowed",
                self.failed, self.backoff_limit
            ));
        }
        if self.active > 0 {
            parts.push(format!("{} running", self.active));
        }
        if let Some(s) = self.next_pod_in {
            parts.push(format!("back-off: next pod in {s}s"));
        }
        parts.join(" · ")
    }

    /// Finished, one way or the other.
    pub fn finished(&self) -> bool {
        matches!(self.status, "Complete" | "Failed")
    }
}

/// A Deployment's spec against its status, for the cluster view's gap pills.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeploymentGap {
    pub name: String,
    pub namespace: String,
    /// spec.replicas.
    pub desired: i32,
    /// status.readyReplicas.
    pub ready: i32,
    /// status.availableReplicas.
    pub available: i32,
    /// status.updatedReplicas.
    pub updated: i32,
    /// The status still describes an older generation of the spec.
    pub stale: bool,
}

impl DeploymentGap {
    /// The summary of every Deployment, by namespace and name.
    pub fn all<'a>(objects: impl IntoIterator<Item = &'a Rc<Object>>) -> Vec<DeploymentGap> {
        let mut out: Vec<DeploymentGap> = objects
            .into_iter()
            .filter_map(|o| o.as_deployment())
            .map(|d| DeploymentGap {
                name: d.metadata.name.to_string(),
                namespace: d.metadata.namespace.to_string(),
                desired: d.spec.replicas.unwrap_or(1),
                ready: d.status.ready_replicas,
                available: d.status.available_replicas,
                updated: d.status.updated_replicas,
                stale: d.status.observed_generation < d.metadata.generation,
            })
            .collect();
        out.stable_sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        out
    }

    /// The gap in words: `2 of 3 ready`, `converged`, or `5 ready, 3 wanted` when over.
    pub fn words(&self) -> String {
        if self.stale {
            return format!(
                "{} of {} ready · status lags the spec",
                self.ready, self.desired
            );
        }
        match self.ready.cmp(&self.desired) {
            std::cmp::Ordering::Equal
                if self.available == self.desired && self.updated == self.desired =>
            {
                "converged".into()
            }
            std::cmp::Ordering::Greater => format!("{} ready, {} wanted", self.ready, self.desired),
            _ => format!("{} of {} ready", self.ready, self.desired),
        }
    }

    /// True when the status matches the spec.
    pub fn converged(&self) -> bool {
        !self.stale
            && self.ready == self.desired
            && self.available == self.desired
            && self.updated == self.desired
    }
}

/// One node's line in the scheduling explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulingRow {
    pub node: String,
    /// Passed every filter.
    pub fits: bool,
    /// The filter plugin and its reasons, or the score breakdown.
    pub detail: String,
    /// The weighted total of a feasible node.
    pub total: Option<i64>,
    /// The node the scheduler picks (or picked).
    pub chosen: bool,
    /// Tied with the chosen node: the real scheduler picks among these at random.
    pub tied: bool,
}

/// Why a pod goes where it goes (or nowhere): the scheduler's filter and score pass, replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulingView {
    /// One sentence: how many nodes fit and which wins, or why none does.
    pub summary: String,
    pub rows: Vec<SchedulingRow>,
}

impl SchedulingView {
    /// Lays out a scheduling decision for the inspector.
    pub fn of(d: &SchedulingDecision) -> SchedulingView {
        let rows: Vec<SchedulingRow> = d
            .nodes
            .iter()
            .map(|n| {
                let (fits, detail, total) = match &n.verdict {
                    NodeVerdict::Filtered { plugin, reasons } => {
                        (false, format!("{plugin}: {}", reasons.join("; ")), None)
                    }
                    NodeVerdict::Feasible { scores, total } => (
                        true,
                        scores
                            .iter()
                            .map(|s| format!("{} {}×{}", s.plugin, s.score, s.weight))
                            .collect::<Vec<_>>()
                            .join(", "),
                        Some(*total),
                    ),
                };
                SchedulingRow {
                    chosen: d.chosen.as_deref() == Some(n.node.as_str()),
                    tied: d.tied_with.contains(&n.node),
                    node: n.node.clone(),
                    fits,
                    detail,
                    total,
                }
            })
            .collect();
        let summary = match (&d.chosen, &d.message) {
            (Some(c), _) if d.tied_with.is_empty() => {
                format!("{} of {} nodes fit; {c} scores highest.", d.feasible_nodes, d.total_nodes)
            }
            (Some(c), _) => format!(
                "{} of {} nodes fit; {c} ties for the highest score with {} (the scheduler picks one at random).",
                d.feasible_nodes,
                d.total_nodes,
                d.tied_with.join(", ")
            ),
            (None, Some(m)) => m.clone(),
            (None, None) => "No node was evaluated.".into(),
        };
        SchedulingView { summary, rows }
    }
}

/// One condition, with how long ago it last changed.
#[derive(Clone, Debug, PartialEq)]
pub struct ConditionRow {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub since: String,
}

/// The object's `status.conditions`, read generically.
pub fn condition_rows(obj: &Object, now: Millis) -> Vec<ConditionRow> {
    let status = obj.status_json();
    let Some(list) = status.get("conditions").cloned() else {
        return Vec::new();
    };
    let conds: Vec<Condition> = serde_json::from_value(list).unwrap_or_default();
    conds
        .into_iter()
        .map(|c| ConditionRow {
            since: c
                .last_transition_time
                .map(|t| human_age(now.saturating_sub(t.0)))
                .unwrap_or_default(),
            type_: c.type_.into(),
            status: c.status.into(),
            reason: c.reason.map(String::from).unwrap_or_default(),
            message: c.message.map(String::from).unwrap_or_default(),
        })
        .collect()
}

/// One object of the ownership forest, with what it owns: any kind, matched by uid.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnerNode {
    pub key: ObjectKey,
    /// A short kind label: `Deploy`, `RS`, or the kind itself.
    pub badge: String,
    /// `deployment.kubernetes.io/revision` of a ReplicaSet; empty otherwise.
    pub revision: String,
    /// A ReplicaSet's pod template's first image, which tells revisions apart at a glance.
    pub image: String,
    /// The replica counts of a Deployment or ReplicaSet; empty for other kinds.
    pub counts: String,
    /// A ReplicaSet scaled to zero: an old revision.
    pub faded: bool,
    /// Dependents other than pods, in the order they are drawn.
    pub children: Vec<OwnerNode>,
    /// Dependent pods, oldest first, drawn as chips.
    pub pods: Vec<PodView>,
    /// A StatefulSet's claims made from its volumeClaimTemplates that nothing owns (the
    /// default retention policy, Retain), by ordinal: drawn under it as a branch of their own,
    /// marked as not owned, since they outlive its pods and the set itself.
    pub claims: Vec<OwnerNode>,
    /// The ApplySet members of a parent (kro's instance): objects labelled
    /// `applyset.kubernetes.io/part-of` its `applyset.kubernetes.io/id`, that no present owner
    /// owns. Drawn as a branch of their own: membership, not ownerReferences.
    pub members: Vec<OwnerNode>,
}

/// The ownership forest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OwnershipView {
    /// Objects no present owner owns, that own something (or are workloads), learners' kinds
    /// first.
    pub roots: Vec<OwnerNode>,
    /// Pods nothing present owns.
    pub pods: Vec<PodView>,
}

/// Where a root sorts: what a learner writes (custom kinds, Deployments) before the
/// infrastructure's trees (a Node's Lease, a Service's EndpointSlices).
fn root_rank(kind: Kind) -> u8 {
    match kind {
        Kind::Custom(c) if c.is_builtin() => 3,
        Kind::Custom(_) => 0,
        Kind::Deployment => 1,
        Kind::ReplicaSet => 2,
        _ => 4,
    }
}

/// The owner an object is drawn under: its controller if present, else its first present
/// owner; an owner in another namespace is no owner (the garbage collector counts it absent).
fn drawn_owner(
    obj: &Object,
    by_uid: &BTreeMap<&str, usize>,
    objects: &[&Rc<Object>],
) -> Option<usize> {
    let meta = obj.meta();
    let present = |uid: &str| {
        by_uid.get(uid).copied().filter(|&i| {
            let owner = objects[i].meta();
            owner.namespace.is_empty() || owner.namespace == meta.namespace
        })
    };
    meta.controller_ref()
        .and_then(|r| present(&r.uid))
        .or_else(|| meta.owner_references.iter().find_map(|r| present(&r.uid)))
}

impl OwnerNode {
    fn of(obj: &Object) -> OwnerNode {
        let mut node = OwnerNode {
            key: obj.key(),
            badge: obj.kind().as_str().to_string(),
            revision: String::new(),
            image: String::new(),
            counts: String::new(),
            faded: false,
            children: Vec::new(),
            pods: Vec::new(),
            claims: Vec::new(),
            members: Vec::new(),
        };
        match obj {
            Object::Deployment(d) => {
                node.badge = "Deploy".into();
                node.counts = format!(
                    "{} desired · {} updated · {} ready · {} available",
                    d.spec.replicas.unwrap_or(1),
                    d.status.updated_replicas,
                    d.status.ready_replicas,
                    d.status.available_replicas
                );
            }
            Object::ReplicaSet(r) => {
                let desired = r.spec.replicas.unwrap_or(1);
                node.badge = "RS".into();
                node.revision = r
                    .metadata
                    .annotations
                    .get("deployment.kubernetes.io/revision")
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                node.image = r
                    .spec
                    .template
                    .spec
                    .containers
                    .first()
                    .map(|c| c.image.to_string())
                    .unwrap_or_default();
                node.counts = format!(
                    "{desired} desired · {} current · {} ready",
                    r.status.replicas, r.status.ready_replicas
                );
                node.faded = desired == 0;
            }
            _ => {}
        }
        node
    }
}

impl OwnershipView {
    /// Builds the forest from every object, matching owners by uid as the garbage collector does.
    /// A claim's volume is looked up in `store`, for what it pins the claim's pods to.
    pub fn build<'a>(
        objects: impl IntoIterator<Item = &'a Rc<Object>>,
        store: Option<&ApiServer>,
        now: Millis,
    ) -> OwnershipView {
        let objects: Vec<&Rc<Object>> = objects
            .into_iter()
            .filter(|o| o.kind() != Kind::Event)
            .collect();
        let by_uid: BTreeMap<&str, usize> = objects
            .iter()
            .enumerate()
            .filter(|(_, o)| !o.meta().uid.is_empty())
            .map(|(i, o)| (o.meta().uid.as_str(), i))
            .collect_map();
        let parent: Vec<Option<usize>> = objects
            .iter()
            .map(|o| drawn_owner(o, &by_uid, &objects))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); objects.len()];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p].push(i);
            }
        }
        let template_claims = template_claims(&objects, &parent);
        let mut in_branch = vec![false; objects.len()];
        for &(_, _, claim) in &template_claims {
            in_branch[claim] = true;
        }
        let members = applyset_members(&objects, &parent);
        for &(_, m) in &members {
            in_branch[m] = true;
        }
        let mut forest = Forest {
            objects: &objects,
            children: &children,
            template_claims: &template_claims,
            members: &members,
            store,
            claim: claim_kind(),
            drawn: vec![false; objects.len()],
            now,
        };
        // What a learner declares is drawn even when it owns nothing: workloads, and objects of
        // kinds no controller acts on (a CronTab, a ConfigMap), so that each can be inspected.
        let workload = |k: Kind| matches!(k, Kind::Deployment | Kind::ReplicaSet | Kind::Custom(_));
        let mut view = OwnershipView::default();
        let mut roots: Vec<usize> = (0..objects.len())
            .filter(|&i| parent[i].is_none() && !in_branch[i])
            .filter(|&i| {
                let k = objects[i].kind();
                if k == Kind::Pod {
                    if let Object::Pod(p) = &**objects[i] {
                        view.pods.push(PodView::of(p, now));
                    }
                    return false;
                }
                workload(k) || !children[i].is_empty()
            })
            .collect();
        roots.stable_sort_by_key(|&i| root_rank(objects[i].kind()));
        for i in roots {
            let node = forest.grow(i);
            view.roots.push(node);
        }
        // Owners that own each other have no root: draw each such ring from its first member.
        for i in 0..objects.len() {
            if !forest.drawn[i] && parent[i].is_some() && !children[i].is_empty() {
                let node = forest.grow(i);
                view.roots.push(node);
            }
        }
        view
    }

    /// True when there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty() && self.pods.is_empty()
    }
}

/// The objects of the ownership forest and what is known of them while it is grown.
struct Forest<'a> {
    objects: &'a [&'a Rc<Object>],
    children: &'a [Vec<usize>],
    /// The StatefulSets' unowned claims ([`template_claims`]).
    template_claims: &'a [(usize, i32, usize)],
    /// ApplySet membership ([`applyset_members`]): (the parent's index, the member's).
    members: &'a [(usize, usize)],
    /// Where a claim's volume is looked up, for what it pins the claim's pods to.
    store: Option<&'a ApiServer>,
    claim: Option<Kind>,
    drawn: Vec<bool>,
    now: Millis,
}

impl Forest<'_> {
    fn grow(&mut self, i: usize) -> OwnerNode {
        self.drawn[i] = true;
        let mut node = self.node(i);
        let mut pods: Vec<&Pod> = Vec::new();
        for &c in &self.children[i] {
            if self.drawn[c] {
                continue;
            }
            match &**self.objects[c] {
                Object::Pod(p) => {
                    self.drawn[c] = true;
                    pods.push(p);
                }
                _ => {
                    let child = self.grow(c);
                    node.children.push(child);
                }
            }
        }
        pods.stable_sort_by(|a, b| {
            (a.metadata.creation_timestamp, &a.metadata.name)
                .cmp(&(b.metadata.creation_timestamp, &b.metadata.name))
        });
        node.pods = pods.into_iter().map(|p| PodView::of(p, self.now)).collect();
        // A Deployment's ReplicaSets newest revision first; other kinds stay in store order.
        node.children.stable_sort_by(|a, b| {
            let rev = |n: &OwnerNode| n.revision.parse::<i64>().unwrap_or(0);
            rev(b).cmp(&rev(a))
        });
        for &(_, _, c) in self.template_claims.iter().filter(|t| t.0 == i) {
            self.drawn[c] = true;
            let claim = self.node(c);
            node.claims.push(claim);
        }
        for &(_, m) in self.members.iter().filter(|t| t.0 == i) {
            if !self.drawn[m] {
                let member = self.grow(m);
                node.members.push(member);
            }
        }
        node
    }

    /// One object's node, without its dependents: a claim says where it stands.
    fn node(&self, i: usize) -> OwnerNode {
        let obj = self.objects[i];
        let mut node = OwnerNode::of(obj);
        let claim = obj.as_custom().filter(|_| Some(obj.kind()) == self.claim);
        if let Some(claim) = claim {
            let meta = &claim.metadata;
            let chip = ClaimChip::of(&meta.namespace, &meta.name, Some(claim), self.store);
            node.badge = "PVC".into();
            node.counts = chip.summary();
        }
        node
    }
}

/// ApplySet membership (KEP-3659, which kro uses instead of ownerReferences): each object
/// labelled `applyset.kubernetes.io/part-of: <id>` that no present owner owns, under the object
/// labelled `applyset.kubernetes.io/id: <id>` in the same namespace or cluster-wide, as
/// (parent, member) in store order.
fn applyset_members(objects: &[&Rc<Object>], parent: &[Option<usize>]) -> Vec<(usize, usize)> {
    const ID: &str = "applyset.kubernetes.io/id";
    const PART_OF: &str = "applyset.kubernetes.io/part-of";
    let parents: BTreeMap<&str, usize> = objects
        .iter()
        .enumerate()
        .filter_map(|(i, o)| Some((o.meta().labels.get(ID)?.as_str(), i)))
        .collect_map();
    if parents.is_empty() {
        return Vec::new();
    }
    objects
        .iter()
        .enumerate()
        .filter(|(i, _)| parent[*i].is_none())
        .filter_map(|(i, o)| {
            let p = *parents.get(o.meta().labels.get(PART_OF)?.as_str())?;
            let pm = objects[p].meta();
            (p != i && (pm.namespace.is_empty() || pm.namespace == o.meta().namespace))
                .then_some((p, i))
        })
        .collect()
}

/// The claims each StatefulSet made from its volumeClaimTemplates and nothing owns, as (the
/// set's index, the ordinal, the claim's index), by set and ordinal: a claim is
/// `<template>-<set>-<ordinal>` in the set's namespace, named as the controller names it. A claim
/// the retention policy gave an owner that is present is not here, so it is never drawn twice:
/// the set's own claims are its children as usual (and a claim a condemned pod owns goes with
/// that pod's chip, which draws nothing under it).
fn template_claims(objects: &[&Rc<Object>], parent: &[Option<usize>]) -> Vec<(usize, i32, usize)> {
    let mut found = Vec::new();
    let Some(kinds) = sts::kinds() else {
        return found;
    };
    let sets: Vec<(usize, StatefulSet)> = objects
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            let set = o.as_custom().filter(|_| o.kind() == kinds.set)?;
            Some((i, StatefulSet::from_custom(set).ok()?))
        })
        .collect();
    if sets.is_empty() {
        return found;
    }
    for (i, o) in objects.iter().enumerate() {
        if parent[i].is_some() || o.kind() != kinds.claim {
            continue;
        }
        let meta = o.meta();
        let Some((prefix, ordinal)) = sts::parent_and_ordinal(&meta.name) else {
            continue;
        };
        let owner = sets.iter().find_map(|(s, set)| {
            let template = prefix
                .strip_suffix(set.metadata.name.as_str())?
                .strip_suffix('-')?;
            let known = set.metadata.namespace == meta.namespace
                && set
                    .spec
                    .volume_claim_templates
                    .iter()
                    .any(|t| t.metadata.name == template);
            // `data-db-07` parses as ordinal 7, but the controller would name it `data-db-7`.
            (known && sts::claim_name(set, template, ordinal) == meta.name).then_some(*s)
        });
        if let Some(set) = owner {
            found.push((set, ordinal, i));
        }
    }
    found.stable_sort_by_key(|&(set, ordinal, _)| (set, ordinal));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{
        Deployment, DeploymentSpec, DeploymentStatus, ObjectMeta, OwnerReference, ReplicaSet,
        ReplicaSetSpec, Time,
    };

    fn meta(name: &str, uid: &str, owner: Option<(&str, &str, &str)>) -> ObjectMeta {
        ObjectMeta {
            name: name.into(),
            namespace: "default".into(),
            uid: uid.into(),
            creation_timestamp: Some(Time(0)),
            generation: 2,
            owner_references: owner
                .map(|(kind, n, u)| {
                    vec![OwnerReference {
                        api_version: "apps/v1".into(),
                        kind: kind.into(),
                        name: n.into(),
                        uid: u.into(),
                        controller: Some(true),
                        block_owner_deletion: Some(true),
                    }]
                })
                .unwrap_or_default(),
            ..Default::default()
        }
    }

    fn deployment() -> Object {
        Object::from(Deployment {
            metadata: meta("web", "d1", None),
            spec: DeploymentSpec {
                replicas: Some(3),
                ..Default::default()
            },
            status: DeploymentStatus {
                replicas: 3,
                updated_replicas: 3,
                ready_replicas: 2,
                available_replicas: 2,
                observed_generation: 1,
                ..Default::default()
            },
        })
    }

    #[test]
    fn a_deployment_gap_names_what_is_missing_and_stale() {
        let rows = gap_rows(&deployment(), 0);
        let ready = rows
            .iter()
            .find(|r| r.field == "readyReplicas")
            .expect("row");
        assert_eq!(
            (ready.desired.as_str(), ready.observed.as_str(), ready.ok),
            ("3", "2", false)
        );
        let replicas = rows.iter().find(|r| r.field == "replicas").expect("row");
        assert!(replicas.ok);
        let gen = rows
            .iter()
            .find(|r| r.field == "observedGeneration")
            .expect("row");
        assert!(!gen.ok, "status still describes generation 1 of 2");
    }

    #[test]
    fn deployment_gaps_say_how_far_status_is_from_spec() {
        let objs = vec![Rc::new(deployment())];
        let gaps = DeploymentGap::all(&objs);
        assert_eq!(gaps.len(), 1);
        assert!(gaps[0].stale);
        assert_eq!(gaps[0].words(), "2 of 3 ready · status lags the spec");
        let mut g = gaps[0].clone();
        g.stale = false;
        assert_eq!(g.words(), "2 of 3 ready");
        g.ready = 3;
        g.available = 3;
        assert_eq!(g.words(), "converged");
        assert!(g.converged());
    }

    #[test]
    fn a_scheduling_decision_reads_as_one_row_per_node() {
        use crate::sim::api::types::{Kind, ObjectKey};
        use crate::sim::controllers::scheduler::{NodeDecision, PluginScore};
        let d = SchedulingDecision {
            pod: ObjectKey::new(Kind::Pod, "default", "p"),
            nodes: vec![
                NodeDecision {
                    node: "node-1".into(),
                    verdict: NodeVerdict::Filtered {
                        plugin: "NodeResourcesFit",
                        reasons: vec!["Insufficient cpu".into()],
                    },
                },
                NodeDecision {
                    node: "node-2".into(),
                    verdict: NodeVerdict::Feasible {
                        scores: vec![PluginScore {
                            plugin: "NodeResourcesFit",
                            raw: 90,
                            score: 90,
                            weight: 1,
                        }],
                        total: 90,
                    },
                },
            ],
            omitted_nodes: 0,
            chosen: Some("node-2".into()),
            tied_with: vec![],
            message: None,
            preemption: None,
            total_nodes: 2,
            feasible_nodes: 1,
        };
        let v = SchedulingView::of(&d);
        assert_eq!(v.summary, "1 of 2 nodes fit; node-2 scores highest.");
        assert_eq!(v.rows[0].detail, "NodeResourcesFit: Insufficient cpu");
        assert!(!v.rows[0].fits);
        assert!(v.rows[1].chosen);
        assert_eq!(v.rows[1].total, Some(90));
    }

    #[test]
    fn an_unscheduled_pod_shows_its_first_gap_at_node_name() {
        let pod = Object::from(Pod {
            metadata: meta("p", "p1", None),
            ..Default::default()
        });
        let rows = gap_rows(&pod, 0);
        assert_eq!(rows[0].field, "nodeName");
        assert!(!rows[0].ok);
    }

    #[test]
    fn ownership_follows_controller_uids() {
        let mut rs_meta = meta("web-abc", "r1", Some(("Deployment", "web", "d1")));
        rs_meta
            .annotations
            .insert("deployment.kubernetes.io/revision", "1");
        let rs = Object::from(ReplicaSet {
            metadata: rs_meta,
            spec: ReplicaSetSpec {
                replicas: Some(3),
                ..Default::default()
            },
            ..Default::default()
        });
        let owned = Object::from(Pod {
            metadata: meta("web-abc-1", "p1", Some(("ReplicaSet", "web-abc", "r1"))),
            ..Default::default()
        });
        // Same owner name, different uid: a previous incarnation's pod is not this ReplicaSet's.
        let stale = Object::from(Pod {
            metadata: meta("web-abc-2", "p2", Some(("ReplicaSet", "web-abc", "old"))),
            ..Default::default()
        });
        let objs: Vec<Rc<Object>> = vec![
            Rc::new(deployment()),
            Rc::new(rs),
            Rc::new(owned),
            Rc::new(stale),
        ];
        let view = OwnershipView::build(&objs, None, 0);
        assert_eq!(view.roots.len(), 1);
        let rs = &view.roots[0].children[0];
        assert_eq!(rs.revision, "1");
        assert_eq!(rs.pods.len(), 1);
        assert_eq!(view.pods.len(), 1);
        assert_eq!(view.pods[0].name, "web-abc-2");
    }

    #[test]
    fn ownership_draws_a_custom_owner_above_its_deployment_and_skips_owners_in_other_namespaces() {
        use crate::sim::api::apiextensions::{CustomKind, CustomObject};
        let kind = CustomKind::intern("stable.example.com", "CronTab", "crontabs", true, "v1")
            .expect("interned");
        let tab = Object::from(CustomObject {
            kind,
            api_version: "stable.example.com/v1".into(),
            metadata: meta("nightly", "c1", None),
            content: Default::default(),
        });
        let mut dep = deployment();
        dep.meta_mut().owner_references =
            meta("web", "d1", Some(("CronTab", "nightly", "c1"))).owner_references;
        let rs = Object::from(ReplicaSet {
            metadata: meta("web-abc", "r1", Some(("Deployment", "web", "d1"))),
            ..Default::default()
        });
        // Names the CronTab's uid from another namespace: the GC counts that owner absent.
        let mut stray_meta = meta("stray", "s1", Some(("CronTab", "nightly", "c1")));
        stray_meta.namespace = "team-b".into();
        let stray = Object::from(Deployment {
            metadata: stray_meta,
            ..Default::default()
        });
        // Two objects that own each other are drawn once, from the first.
        let ring_a = Object::from(CustomObject {
            kind,
            api_version: "stable.example.com/v1".into(),
            metadata: meta("a", "ra", Some(("CronTab", "b", "rb"))),
            content: Default::default(),
        });
        let ring_b = Object::from(CustomObject {
            kind,
            api_version: "stable.example.com/v1".into(),
            metadata: meta("b", "rb", Some(("CronTab", "a", "ra"))),
            content: Default::default(),
        });
        let objs: Vec<Rc<Object>> = [dep, rs, stray, tab, ring_a, ring_b]
            .into_iter()
            .map(Rc::new)
            .collect();
        let view = OwnershipView::build(&objs, None, 0);
        let names: Vec<(String, String)> = view
            .roots
            .iter()
            .map(|n| (n.badge.clone(), n.key.name.to_string()))
            .collect();
        assert_eq!(
            names,
            [
                ("CronTab".to_string(), "nightly".to_string()),
                ("Deploy".to_string(), "stray".to_string()),
                ("CronTab".to_string(), "a".to_string()),
            ]
        );
        let web = &view.roots[0].children[0];
        assert_eq!(
            (web.badge.as_str(), web.key.name.as_str()),
            ("Deploy", "web")
        );
        assert_eq!(web.children[0].key.name, "web-abc");
        assert_eq!(view.roots[2].children[0].key.name, "b");
        assert!(view.roots[2].children[0].children.is_empty());
    }

    /// Lesson 15 (the StatefulSet db, a claim `data-db-<n>` per replica on a zonal disk),
    /// with `edit` applied to its text, after `ms`.
    fn volumes_lesson(edit: impl Fn(&str) -> String, ms: u64) -> crate::sim::session::Session {
        let lesson = crate::sim::examples::by_name("non-idempotent-world").expect("lesson 15");
        let mut s =
            crate::sim::session::Session::load("lesson.yaml", &edit(lesson), None).expect("loads");
        s.advance_to(ms, usize::MAX);
        s
    }

    fn ownership(s: &crate::sim::session::Session) -> OwnershipView {
        let api = s.sim.api();
        OwnershipView::build(api.all(), Some(api), s.sim.now())
    }

    /// The StatefulSet `name`'s node.
    fn set<'a>(view: &'a OwnershipView, name: &str) -> &'a OwnerNode {
        view.roots
            .iter()
            .find(|n| n.badge == "StatefulSet" && n.key.name == name)
            .expect("the StatefulSet is a root")
    }

    fn names(nodes: &[OwnerNode]) -> Vec<&str> {
        nodes.iter().map(|n| n.key.name.as_str()).collect()
    }

    #[test]
    fn a_statefulsets_unowned_claims_are_drawn_under_it_and_stay_after_their_pod_goes() {
        let mut s = volumes_lesson(str::to_string, 90_000);
        let view = ownership(&s);
        let db = set(&view, "db");
        let pods: Vec<&str> = db.pods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(pods, ["db-0", "db-1"]);
        assert_eq!(names(&db.claims), ["data-db-0", "data-db-1"]);
        let claim = &db.claims[0];
        assert_eq!(claim.badge, "PVC");
        assert!(
            claim.counts.starts_with("Bound 1Gi in zone-"),
            "{}",
            claim.counts
        );
        assert!(
            !view.roots.iter().any(|n| n.badge == "PVC"),
            "a claim under its set is not a root too"
        );
        assert!(db.children.iter().all(|c| c.badge != "PVC"));

        assert!(s.kubectl("scale sts db --replicas=1").ok);
        s.advance_to(s.sim.now() + 60_000, usize::MAX);
        let view = ownership(&s);
        let db = set(&view, "db");
        assert_eq!(db.pods.len(), 1, "db-1 is gone");
        assert_eq!(
            names(&db.claims),
            ["data-db-0", "data-db-1"],
            "its claim stays"
        );
    }

    #[test]
    fn a_claim_the_retention_policy_gives_the_set_is_drawn_as_owned_and_only_once() {
        let delete = |text: &str| {
            text.replace(
                "  serviceName: db\n",
                "  serviceName: db\n  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}\n",
            )
        };
        let s = volumes_lesson(delete, 90_000);
        let view = ownership(&s);
        let db = set(&view, "db");
        assert!(db.claims.is_empty(), "{:?}", names(&db.claims));
        let owned: Vec<&str> = db
            .children
            .iter()
            .filter(|c| c.badge == "PVC")
            .map(|c| c.key.name.as_str())
            .collect();
        assert_eq!(owned, ["data-db-0", "data-db-1"]);
    }

    #[test]
    fn only_claims_named_as_the_controller_names_them_in_the_sets_namespace_join_it() {
        let mut s = volumes_lesson(str::to_string, 0);
        let claim = |name: &str, ns: &str| {
            format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 1Gi}}}}\n")
        };
        assert!(s.kubectl("create namespace other").ok);
        let strays = [
            claim("data-db-07", "default"),
            claim("data-db-x", "default"),
            claim("logs-db-0", "default"),
            claim("data-db-3", "other"),
            claim("data-db-3", "default"),
        ]
        .join("---\n");
        let report = s.apply_text("strays.yaml", &strays);
        assert!(report.ok, "{report:?}");
        let view = ownership(&s);
        assert_eq!(names(&set(&view, "db").claims), ["data-db-3"]);
        let mut roots: Vec<String> = view
            .roots
            .iter()
            .filter(|n| n.badge == "PVC")
            .map(|n| format!("{}/{}", n.key.namespace, n.key.name))
            .collect();
        roots.sort();
        assert_eq!(
            roots,
            [
                "default/data-db-07",
                "default/data-db-x",
                "default/logs-db-0",
                "other/data-db-3"
            ]
        );
    }

    /// The default example (three nginx pods on three nodes), settled.
    fn settled_default() -> crate::sim::session::Session {
        let mut s = crate::sim::session::Session::new(1);
        assert!(
            s.apply_text("web.yaml", crate::sim::examples::DEFAULT_MANIFEST)
                .ok
        );
        s.advance_to(30_000, usize::MAX);
        s
    }

    #[test]
    fn the_inspector_lists_only_the_events_about_the_selected_object() {
        let s = settled_default();
        let pod = s.sim.api().list(Kind::Pod).next().expect("a pod").key();
        let data = InspectorData::of(&s.sim, pod.clone(), s.sim.now());
        assert!(data.exists);
        assert!(
            !data.events.is_empty(),
            "a pod has Scheduled, Pulled, Started"
        );
        assert!(data
            .events
            .iter()
            .all(|e| e.object_kind == "Pod" && e.object_name == pod.name));
        let all = s.sim.api().count(Kind::Event);
        assert!(data.events.len() < all, "{} of {all}", data.events.len());
    }

    #[test]
    fn a_bound_pods_scheduling_is_replayed_as_if_it_were_scheduled_now() {
        let s = settled_default();
        let pod = s.sim.api().list(Kind::Pod).next().expect("a pod").key();
        let data = InspectorData::of(&s.sim, pod, s.sim.now());
        let view = data.scheduling.expect("a pod has a scheduling view");
        // Bound, it would fit only its own node; replayed unbound, every node is weighed.
        assert_eq!(view.rows.len(), 3, "{view:?}");
        assert!(view.rows.iter().all(|r| r.fits), "{view:?}");
    }

    #[test]
    fn a_deleted_object_is_shown_as_gone_with_its_events_kept() {
        let mut s = settled_default();
        let pod = s.sim.api().list(Kind::Pod).next().expect("a pod").key();
        let out = s.kubectl(&format!("delete pod {} --wait=false", pod.name));
        assert!(out.ok, "{}", out.stderr);
        s.advance_to(s.sim.now() + 60_000, usize::MAX);
        let data = InspectorData::of(&s.sim, pod, s.sim.now());
        assert!(!data.exists);
        assert!(data.yaml.is_empty() && data.scheduling.is_none());
        assert!(
            data.events.iter().any(|e| e.reason == "Killing"),
            "{:?}",
            data.events
        );
    }
}
