//! The inspector and ownership views: spec beside status with the gap between them spelled out,
//! conditions with their reasons, and the Deployment → ReplicaSet → Pod chain.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::cluster::PodView;
use super::events::{event_rows, EventRow};
use crate::sim::api::types::{Condition, Kind, Millis, Object, ObjectKey, Pod};
use crate::sim::controllers::scheduler::{self, NodeVerdict, SchedulingDecision};
use crate::sim::input::yaml::to_yaml;
use crate::sim::time::human_age;
use crate::sim::world::Sim;
use crate::sort::StableSort;

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
    pub yaml: String,
    /// `metadata.generation` / `status.observedGeneration`, when the kind has them.
    pub generation: Option<(i64, i64)>,
    /// For a pod: the scheduler's filter and score pass over the current nodes.
    pub scheduling: Option<SchedulingView>,
}

impl InspectorData {
    /// What the inspector shows about `key` in `sim` at `now`.
    pub fn of(sim: &Sim, key: ObjectKey, now: Millis) -> InspectorData {
        let api = sim.api();
        // Only this object's Events become rows: a big cluster has tens of thousands.
        let events = event_rows(
            api.list(Kind::Event)
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
                yaml: String::new(),
                generation: None,
                scheduling: None,
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
            unbound.spec.node_name.clear();
            SchedulingView::of(&scheduler::explain(&unbound, &nodes, &pods))
        });
        InspectorData {
            exists: true,
            gap: gap_rows(&obj, now),
            conditions: condition_rows(&obj, now),
            events,
            spec_yaml: to_yaml(&obj.spec_json()),
            status_yaml: to_yaml(&obj.status_json()),
            yaml: to_yaml(&obj.to_json()),
            generation,
            scheduling,
            key,
        }
    }
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
            p.spec.node_name.clone()
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
    pub fn all<'a>(objects: impl IntoIterator<Item = &'a Arc<Object>>) -> Vec<DeploymentGap> {
        let mut out: Vec<DeploymentGap> = objects
            .into_iter()
            .filter_map(|o| o.as_deployment())
            .map(|d| DeploymentGap {
                name: d.metadata.name.clone(),
                namespace: d.metadata.namespace.clone(),
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
            type_: c.type_,
            status: c.status,
            reason: c.reason.unwrap_or_default(),
            message: c.message.unwrap_or_default(),
        })
        .collect()
}

/// A ReplicaSet with its pods.
#[derive(Clone, Debug, PartialEq)]
pub struct RsBranch {
    pub name: String,
    pub namespace: String,
    /// `deployment.kubernetes.io/revision`.
    pub revision: String,
    pub desired: i32,
    pub current: i32,
    pub ready: i32,
    /// The pod template's first image, which tells revisions apart at a glance.
    pub image: String,
    pub pods: Vec<PodView>,
}

/// A Deployment with its ReplicaSets, newest revision first.
#[derive(Clone, Debug, PartialEq)]
pub struct DeploymentBranch {
    pub name: String,
    pub namespace: String,
    pub desired: i32,
    pub updated: i32,
    pub ready: i32,
    pub available: i32,
    pub replica_sets: Vec<RsBranch>,
}

/// The ownership forest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OwnershipView {
    pub deployments: Vec<DeploymentBranch>,
    /// ReplicaSets no Deployment controls.
    pub replica_sets: Vec<RsBranch>,
    /// Pods no ReplicaSet controls.
    pub pods: Vec<PodView>,
}

impl OwnershipView {
    /// Builds the forest from every object (matching owners by uid, as the garbage collector does).
    pub fn build<'a>(
        objects: impl IntoIterator<Item = &'a Arc<Object>>,
        now: Millis,
    ) -> OwnershipView {
        let mut deps = Vec::new();
        let mut rss = Vec::new();
        let mut pods = Vec::new();
        for o in objects {
            match &**o {
                Object::Deployment(d) => deps.push(d),
                Object::ReplicaSet(r) => rss.push(r),
                Object::Pod(p) => pods.push(p),
                _ => {}
            }
        }
        let mut pods_by_owner: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
        let mut view = OwnershipView::default();
        let rs_uids: Vec<&str> = rss.iter().map(|r| r.metadata.uid.as_str()).collect();
        for p in pods {
            match p.metadata.controller_ref() {
                Some(o) if rs_uids.contains(&o.uid.as_str()) => {
                    pods_by_owner.entry(o.uid.clone()).or_default().push(p)
                }
                _ => view.pods.push(PodView::of(p, now)),
            }
        }
        let branch = |r: &crate::sim::api::types::ReplicaSet,
                      pods_by_owner: &mut BTreeMap<String, Vec<&Pod>>| {
            let mut ps = pods_by_owner.remove(&r.metadata.uid).unwrap_or_default();
            ps.stable_sort_by(|a, b| {
                (a.metadata.creation_timestamp, &a.metadata.name)
                    .cmp(&(b.metadata.creation_timestamp, &b.metadata.name))
            });
            RsBranch {
                name: r.metadata.name.clone(),
                namespace: r.metadata.namespace.clone(),
                revision: r
                    .metadata
                    .annotations
                    .get("deployment.kubernetes.io/revision")
                    .cloned()
                    .unwrap_or_default(),
                desired: r.spec.replicas.unwrap_or(1),
                current: r.status.replicas,
                ready: r.status.ready_replicas,
                image: r
                    .spec
                    .template
                    .spec
                    .containers
                    .first()
                    .map(|c| c.image.clone())
                    .unwrap_or_default(),
                pods: ps.into_iter().map(|p| PodView::of(p, now)).collect(),
            }
        };
        let dep_uids: Vec<&str> = deps.iter().map(|d| d.metadata.uid.as_str()).collect();
        let mut rs_by_dep: BTreeMap<String, Vec<RsBranch>> = BTreeMap::new();
        for r in &rss {
            let b = branch(r, &mut pods_by_owner);
            match r.metadata.controller_ref() {
                Some(o) if dep_uids.contains(&o.uid.as_str()) => {
                    rs_by_dep.entry(o.uid.clone()).or_default().push(b)
                }
                _ => view.replica_sets.push(b),
            }
        }
        for d in deps {
            let mut replica_sets = rs_by_dep.remove(&d.metadata.uid).unwrap_or_default();
            replica_sets.stable_sort_by(|a, b| {
                let ra = a.revision.parse::<i64>().unwrap_or(0);
                let rb = b.revision.parse::<i64>().unwrap_or(0);
                rb.cmp(&ra).then_with(|| a.name.cmp(&b.name))
            });
            view.deployments.push(DeploymentBranch {
                name: d.metadata.name.clone(),
                namespace: d.metadata.namespace.clone(),
                desired: d.spec.replicas.unwrap_or(1),
                updated: d.status.updated_replicas,
                ready: d.status.ready_replicas,
                available: d.status.available_replicas,
                replica_sets,
            });
        }
        view
    }

    /// True when there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.deployments.is_empty() && self.replica_sets.is_empty() && self.pods.is_empty()
    }
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
        Object::Deployment(Deployment {
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
        let objs = vec![Arc::new(deployment())];
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
        let pod = Object::Pod(Pod {
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
            .insert("deployment.kubernetes.io/revision".into(), "1".into());
        let rs = Object::ReplicaSet(ReplicaSet {
            metadata: rs_meta,
            spec: ReplicaSetSpec {
                replicas: Some(3),
                ..Default::default()
            },
            ..Default::default()
        });
        let owned = Object::Pod(Pod {
            metadata: meta("web-abc-1", "p1", Some(("ReplicaSet", "web-abc", "r1"))),
            ..Default::default()
        });
        // Same owner name, different uid: a previous incarnation's pod is not this ReplicaSet's.
        let stale = Object::Pod(Pod {
            metadata: meta("web-abc-2", "p2", Some(("ReplicaSet", "web-abc", "old"))),
            ..Default::default()
        });
        let objs: Vec<Arc<Object>> = vec![
            Arc::new(deployment()),
            Arc::new(rs),
            Arc::new(owned),
            Arc::new(stale),
        ];
        let view = OwnershipView::build(&objs, 0);
        assert_eq!(view.deployments.len(), 1);
        let rs = &view.deployments[0].replica_sets[0];
        assert_eq!(rs.revision, "1");
        assert_eq!(rs.pods.len(), 1);
        assert_eq!(view.pods.len(), 1);
        assert_eq!(view.pods[0].name, "web-abc-2");
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
        let all = s.sim.api().list(Kind::Event).count();
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
