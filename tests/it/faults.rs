//! One scenario per fault, through the session as the learner drives it: inject, advance the
//! simulated clock, and check that the cluster does what Kubernetes does (reference §10) and that
//! the trace tells the story from the fault to the outcome.

use kubeloop::sim::api::types::{Kind, ObjectKey, Pod, ReplicaSet};
use kubeloop::sim::faults::{Fault, PodTarget, TriggerMode, EDGE_TRIGGERED_NOTE};
use kubeloop::sim::machinery::controller::ComponentId;
use kubeloop::sim::machinery::trace::{
    cause_chain, effects_of, ApiTrace, ReconcileTrace, TraceEntry, TraceKind,
};
use kubeloop::sim::session::Session;
use kubeloop::sim::world::RIVAL_ACTOR;
use serde_json::json;

const S: u64 = 1000;
const MIN: u64 = 60 * S;

// ------------------------------------------------------------------ fixtures

fn deployment(replicas: u32, image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: app\n        image: {image}\n        readinessProbe:\n          httpGet: {{path: /healthz, port: 80}}\n          periodSeconds: 5\n          failureThreshold: 2\n        livenessProbe:\n          httpGet: {{path: /healthz, port: 80}}\n          periodSeconds: 5\n          failureThreshold: 3\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n"
    )
}

/// A three-node cluster running `web` with `replicas` ready pods.
fn running(seed: u64, replicas: u32) -> Session {
    let mut s = Session::new(seed);
    apply(&mut s, &deployment(replicas, "nginx:1.27"));
    advance(&mut s, 30 * S);
    assert_eq!(ready_pods(&s).len(), replicas as usize, "web did not start");
    s
}

fn apply(s: &mut Session, text: &str) {
    let r = s.apply_text("web.yaml", text);
    assert!(r.ok, "{:?}", r.diagnostics);
}

fn advance(s: &mut Session, by: u64) {
    let t = s.sim.now() + by;
    s.advance_to(t, usize::MAX);
}

fn inject(s: &mut Session, f: Fault) -> String {
    match s.inject(f.clone()) {
        Ok(m) => m,
        Err(e) => panic!("{} refused: {e}", f.name()),
    }
}

fn pod_target(name: &str) -> PodTarget {
    PodTarget {
        pod: Some(name.into()),
        namespace: "default".into(),
        ..Default::default()
    }
}

fn pods(s: &Session) -> Vec<Pod> {
    s.sim
        .api()
        .list(Kind::Pod)
        .filter_map(|o| o.as_pod().cloned())
        .collect()
}

/// Pods labelled app=web that are not being deleted.
fn web_pods(s: &Session) -> Vec<Pod> {
    pods(s)
        .into_iter()
        .filter(|p| p.metadata.labels.get("app").map(|v| v.as_str()) == Some("web"))
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect()
}

fn ready_pods(s: &Session) -> Vec<Pod> {
    web_pods(s).into_iter().filter(|p| p.is_ready()).collect()
}

fn replica_sets(s: &Session) -> Vec<ReplicaSet> {
    s.sim
        .api()
        .list(Kind::ReplicaSet)
        .filter_map(|o| o.as_replica_set().cloned())
        .collect()
}

fn the_replica_set(s: &Session) -> ReplicaSet {
    let rss = replica_sets(s);
    assert_eq!(rss.len(), 1, "expected one ReplicaSet");
    rss[0].clone()
}

fn first_pod(s: &Session) -> String {
    web_pods(s)[0].metadata.name.to_string()
}

fn entries(s: &Session) -> Vec<&TraceEntry> {
    s.sim.trace().entries().collect()
}

fn fault_entries<'a>(s: &'a Session, name: &str) -> Vec<&'a TraceEntry> {
    s.sim
        .trace()
        .entries()
        .filter(|e| matches!(&e.kind, TraceKind::Fault { fault, .. } if fault == name))
        .collect()
}

/// (actor, verb, object, code) of every API entry after `after`.
fn api_calls(s: &Session, after: u64) -> Vec<(String, String, String, u16)> {
    s.sim
        .trace()
        .since(after)
        .filter_map(|e| match &e.kind {
            TraceKind::Api(tr) => {
                let ApiTrace {
                    actor,
                    verb,
                    object,
                    code,
                    ..
                } = &**tr;
                Some((
                    actor.to_string(),
                    verb.to_string(),
                    object.to_string(),
                    *code,
                ))
            }
            _ => None,
        })
        .collect()
}

fn creates_by(s: &Session, actor: &str, after: u64) -> usize {
    api_calls(s, after)
        .iter()
        .filter(|(a, v, o, c)| a == actor && v == "create" && o.starts_with("Pod/") && *c == 201)
        .count()
}

fn rs_key(s: &Session) -> ObjectKey {
    let rs = the_replica_set(s);
    ObjectKey::new(Kind::ReplicaSet, "default", &rs.metadata.name)
}

// ------------------------------------------------------------------ cause and effect

#[test]
fn a_deleted_pod_is_the_root_of_a_chain_that_ends_in_its_replacement() {
    let mut s = running(1, 3);
    let victim = first_pod(&s);
    let before = s.sim.trace().next_seq();
    inject(
        &mut s,
        Fault::DeletePod {
            target: pod_target(&victim),
        },
    );
    advance(&mut s, 10 * S);

    let fault = fault_entries(&s, "DeletePod")[0].seq;
    assert!(fault >= before, "the fault is traced before its effects");
    let effects = effects_of(s.sim.trace(), fault);
    let delete = effects
        .iter()
        .find(|e| matches!(&e.kind, TraceKind::Api(tr) if tr.verb == "delete" && tr.object.ends_with(&victim)))
        .expect("the DELETE is caused by the fault");
    assert_eq!(delete.cause(), Some(fault));
    let pass = effects
        .iter()
        .find(|e| match &e.kind {
            TraceKind::Reconcile(tr) => {
                let ReconcileTrace {
                    component, actions, ..
                } = &**tr;
                &**component == "replicaset-controller"
                    && actions
                        .iter()
                        .any(|a| a.starts_with("create Pod (generateName web-"))
            }
            _ => false,
        })
        .expect("the ReplicaSet's pass that creates the replacement descends from the fault");
    let created = effects
        .iter()
        .find(|e| {
            matches!(&e.kind, TraceKind::Api(tr) if tr.verb == "create")
                && e.cause() == Some(pass.seq)
        })
        .expect("the replacement's create");
    let chain = cause_chain(s.sim.trace(), created.seq);
    assert_eq!(chain.first().map(|e| e.seq), Some(fault), "root first");
    assert_eq!(chain.last().map(|e| e.seq), Some(created.seq));
    assert!(chain
        .iter()
        .any(|e| matches!(&e.kind, TraceKind::Watch { .. })));
    assert_eq!(web_pods(&s).len(), 3);
    assert!(!web_pods(&s).iter().any(|p| p.metadata.name == victim));
}

#[test]
fn every_reconcile_pass_lists_the_actions_it_took() {
    let mut s = running(2, 2);
    let after = s.sim.trace().next_seq();
    apply(&mut s, &deployment(3, "nginx:1.27"));
    advance(&mut s, 10 * S);
    let actions: Vec<String> = s
        .sim
        .trace()
        .since(after)
        .filter_map(|e| match &e.kind {
            TraceKind::Reconcile(tr) => {
                let ReconcileTrace { actions, .. } = &**tr;
                Some(actions.clone())
            }
            _ => None,
        })
        .flatten()
        .collect();
    assert!(
        actions
            .iter()
            .any(|a| a.starts_with("update ReplicaSet web-") && a.contains("spec.replicas 2→3")),
        "{actions:#?}"
    );
    assert!(actions
        .iter()
        .any(|a| a.starts_with("create Pod (generateName web-")));
    assert!(actions
        .iter()
        .any(|a| a.starts_with("bind web-") && a.contains(" → node-")));
}

// ------------------------------------------------------------------ level versus edge

/// Runs `web` with the ReplicaSet controller in `mode`, loses pod events around a deletion,
/// and returns the session five minutes later.
fn lose_a_pod_deletion(mode: TriggerMode, fault: Fault) -> Session {
    let mut s = Session::new(7);
    inject(
        &mut s,
        Fault::SetTriggerMode {
            component: "replicaset".into(),
            mode,
        },
    );
    apply(&mut s, &deployment(3, "nginx:1.27"));
    advance(&mut s, 30 * S);
    assert_eq!(ready_pods(&s).len(), 3, "{mode:?} starts 3 pods");
    inject(&mut s, fault);
    let victim = first_pod(&s);
    inject(
        &mut s,
        Fault::DeletePod {
            target: pod_target(&victim),
        },
    );
    advance(&mut s, 5 * MIN);
    s
}

#[test]
fn edge_triggered_stays_short_after_lost_pod_events_while_level_triggered_heals_at_the_relist() {
    let drop = Fault::DropWatchEvents {
        component: "replicaset".into(),
        count: None,
        probability: None,
        kind: Some("Pod".into()),
        event_type: None,
        duration: Some(60 * S),
    };
    let level = lose_a_pod_deletion(TriggerMode::Level, drop.clone());
    let edge = lose_a_pod_deletion(TriggerMode::Edge, drop);

    assert_eq!(ready_pods(&level).len(), 3, "level-triggered heals");
    let relist = entries(&level)
        .into_iter()
        .find(|e| matches!(&e.kind, TraceKind::List { component, reason, .. } if &**component == "replicaset-controller" && reason.contains("lost events")))
        .expect("the level-triggered informer relists when the drop heals");
    let heal = cause_chain(level.sim.trace(), relist.seq)[0];
    assert!(
        matches!(&heal.kind, TraceKind::Fault { fault, .. } if fault == "DropWatchEvents"),
        "the relist descends from the fault"
    );

    assert_eq!(web_pods(&edge).len(), 2, "edge-triggered stays one short");
    assert_eq!(the_replica_set(&edge).spec.replicas, Some(3));
    assert_eq!(
        creates_by(
            &edge,
            "replicaset-controller",
            fault_entries(&edge, "DeletePod")[0].seq
        ),
        0,
        "its relist refreshed the cache but told it nothing"
    );
    assert_eq!(
        edge.sim.trigger_mode(&ComponentId::ReplicaSet),
        TriggerMode::Edge
    );
    assert!(EDGE_TRIGGERED_NOTE.contains("not how Kubernetes works"));
    // Still short much later: nothing repairs a missed edge.
    let mut edge = edge;
    advance(&mut edge, 30 * MIN);
    assert_eq!(web_pods(&edge).len(), 2);
}

#[test]
fn a_lost_pod_deleted_event_leaves_edge_triggered_short_but_level_triggered_already_replaced_it() {
    let drop = Fault::DropWatchEvents {
        component: "replicaset".into(),
        count: Some(1),
        probability: None,
        kind: Some("Pod".into()),
        event_type: Some("DELETED".into()),
        duration: None,
    };
    let level = lose_a_pod_deletion(TriggerMode::Level, drop.clone());
    let edge = lose_a_pod_deletion(TriggerMode::Edge, drop);
    // Level-triggered acts when deletion starts (the pod stops counting as active), so the lost
    // final DELETED changes nothing.
    assert_eq!(ready_pods(&level).len(), 3);
    assert_eq!(web_pods(&edge).len(), 2);
    let dropped = entries(&edge)
        .into_iter()
        .filter(|e| matches!(&e.kind, TraceKind::Watch { delivery, event_type, .. } if *delivery == kubeloop::sim::machinery::trace::Delivery::Dropped && *event_type == "DELETED"))
        .count();
    assert_eq!(dropped, 1);
}

#[test]
fn an_edge_triggered_replica_set_still_follows_scaling_when_it_misses_nothing() {
    let mut s = Session::new(3);
    inject(
        &mut s,
        Fault::SetTriggerMode {
            component: "replicaset-controller".into(),
            mode: TriggerMode::Edge,
        },
    );
    apply(&mut s, &deployment(2, "nginx:1.27"));
    advance(&mut s, 30 * S);
    apply(&mut s, &deployment(4, "nginx:1.27"));
    advance(&mut s, 30 * S);
    assert_eq!(ready_pods(&s).len(), 4);
    apply(&mut s, &deployment(1, "nginx:1.27"));
    advance(&mut s, 60 * S);
    assert_eq!(web_pods(&s).len(), 1);
    // And back to the real controller.
    inject(
        &mut s,
        Fault::SetTriggerMode {
            component: "replicaset".into(),
            mode: TriggerMode::Level,
        },
    );
    assert_eq!(
        s.sim.trigger_mode(&ComponentId::ReplicaSet),
        TriggerMode::Level
    );
}

#[test]
fn only_the_replica_set_controller_has_an_edge_triggered_variant() {
    let mut s = Session::new(1);
    let err = s
        .inject(Fault::SetTriggerMode {
            component: "scheduler".into(),
            mode: TriggerMode::Edge,
        })
        .unwrap_err();
    assert!(err.contains("no edge-triggered variant"), "{err}");
    let refused = fault_entries(&s, "SetTriggerMode");
    assert!(
        matches!(&refused[0].kind, TraceKind::Fault { description, .. } if description.contains("refused"))
    );
}

#[test]
fn a_resync_period_requeues_every_replica_set_on_time() {
    let mut s = running(4, 2);
    inject(
        &mut s,
        Fault::SetResync {
            component: "replicaset".into(),
            period: Some(30 * S),
        },
    );
    // Setting it again restarts the period rather than adding a second timer.
    advance(&mut s, 10 * S);
    inject(
        &mut s,
        Fault::SetResync {
            component: "replicaset".into(),
            period: Some(30 * S),
        },
    );
    let after = s.sim.trace().next_seq();
    advance(&mut s, 95 * S);
    let resyncs = s
        .sim
        .trace()
        .since(after)
        .filter(|e| matches!(&e.kind, TraceKind::Reconcile(tr) if &*tr.component == "replicaset-controller" && tr.trigger == "resync"))
        .count();
    assert_eq!(resyncs, 3);
}

// ------------------------------------------------------------------ lost and late events

#[test]
fn a_lost_pod_added_event_stalls_the_replica_set_until_its_expectations_expire() {
    let mut s = running(5, 3);
    // With no scheduler, the new pod stays Pending and produces no later event that would
    // reveal it: only the expectations timeout (5 min) unblocks the ReplicaSet.
    inject(
        &mut s,
        Fault::StopComponent {
            component: "scheduler".into(),
        },
    );
    inject(
        &mut s,
        Fault::DropWatchEvents {
            component: "replicaset".into(),
            count: Some(1),
            probability: None,
            kind: Some("Pod".into()),
            event_type: Some("ADDED".into()),
            duration: None,
        },
    );
    let t0 = s.sim.now();
    let after = s.sim.trace().next_seq();
    apply(&mut s, &deployment(4, "nginx:1.27"));
    advance(&mut s, 4 * MIN);
    assert_eq!(creates_by(&s, "replicaset-controller", after), 1);
    assert_eq!(
        web_pods(&s).len(),
        4,
        "the pod exists; the controller just never saw it"
    );
    let waiting = s.sim.trace().since(after).any(|e| {
        matches!(&e.kind, TraceKind::Reconcile(tr)
            if &*tr.component == "replicaset-controller"
                && tr.record.as_ref().is_some_and(|r| r.diff.contains("expectations pending (add 1")))
    });
    assert!(waiting, "the loop panel shows the pending expectation");

    s.advance_to(t0 + 5 * MIN + 10 * S, usize::MAX);
    assert_eq!(
        creates_by(&s, "replicaset-controller", after),
        2,
        "after ExpectationsTimeout the sync proceeds on its stale view and creates one more"
    );
    inject(
        &mut s,
        Fault::StartComponent {
            component: "scheduler".into(),
        },
    );
    advance(&mut s, 60 * S);
    assert_eq!(
        ready_pods(&s).len(),
        4,
        "the lost pod's next event reveals the extra pod"
    );
    assert_eq!(web_pods(&s).len(), 4);
}

#[test]
fn delayed_watch_events_slow_the_loop_down_and_the_delay_heals_by_itself() {
    let mut s = running(6, 2);
    inject(
        &mut s,
        Fault::DelayWatchEvents {
            component: "replicaset".into(),
            delay: 20 * S,
            duration: Some(60 * S),
        },
    );
    let after = s.sim.trace().next_seq();
    apply(&mut s, &deployment(3, "nginx:1.27"));
    advance(&mut s, 15 * S);
    assert_eq!(
        creates_by(&s, "replicaset-controller", after),
        0,
        "it has not seen the scale yet"
    );
    advance(&mut s, 20 * S);
    assert_eq!(ready_pods(&s).len(), 3);
    advance(&mut s, 30 * S);
    let healed = fault_entries(&s, "DelayWatchEvents");
    assert_eq!(healed.len(), 2);
    assert_eq!(
        healed[1].cause(),
        Some(healed[0].seq),
        "the heal is caused by the fault"
    );
}

// ------------------------------------------------------------------ crashes and restarts

#[test]
fn a_controller_manager_restart_in_the_middle_of_a_rollout_still_completes_it() {
    for offset in [3, 12, 40, 150, 700, 2_500] {
        let mut s = running(8, 4);
        apply(&mut s, &deployment(4, "nginx:1.28"));
        advance(&mut s, offset);
        inject(
            &mut s,
            Fault::RestartController {
                component: "controller-manager".into(),
            },
        );
        advance(&mut s, 2 * MIN);
        let pods = web_pods(&s);
        assert_eq!(pods.len(), 4, "offset {offset}ms: {} pods", pods.len());
        assert!(
            pods.iter()
                .all(|p| p.spec.containers[0].image == "nginx:1.28" && p.is_ready()),
            "offset {offset}ms: every pod runs the new image"
        );
        let d = s
            .sim
            .api()
            .list(Kind::Deployment)
            .find_map(|o| o.as_deployment().cloned())
            .expect("web");
        assert_eq!(d.status.updated_replicas, 4, "offset {offset}ms");
        assert_eq!(d.status.available_replicas, 4, "offset {offset}ms");
        let scaled: Vec<i32> = replica_sets(&s)
            .iter()
            .map(|r| r.spec.replicas.unwrap_or(0))
            .collect();
        assert_eq!(
            scaled.iter().filter(|&&n| n > 0).count(),
            1,
            "offset {offset}ms: {scaled:?}"
        );
        let restarts = entries(&s)
            .into_iter()
            .filter(|e| matches!(&e.kind, TraceKind::List { reason, .. } if reason == "restarted"))
            .count();
        assert_eq!(
            restarts, 16,
            "all sixteen controllers of kube-controller-manager relist"
        );
    }
}

#[test]
fn a_restarted_replica_set_controller_relists_and_the_restart_is_the_cause() {
    let mut s = running(9, 2);
    inject(
        &mut s,
        Fault::RestartController {
            component: "replicaset".into(),
        },
    );
    advance(&mut s, 30 * S);
    let fault = fault_entries(&s, "RestartController")[0].seq;
    let effects = effects_of(s.sim.trace(), fault);
    assert!(effects.iter().any(|e| matches!(&e.kind, TraceKind::List { component, .. } if &**component == "replicaset-controller")));
    assert!(effects.iter().any(|e| matches!(&e.kind, TraceKind::Reconcile(tr) if &*tr.component == "replicaset-controller" && tr.trigger == "relist")));
    assert_eq!(
        ready_pods(&s).len(),
        2,
        "nothing changes: the relist finds everything in place"
    );
}

#[test]
fn a_stopped_controller_manager_reconciles_nothing_until_it_starts() {
    let mut s = running(10, 2);
    inject(
        &mut s,
        Fault::StopComponent {
            component: "controller-manager".into(),
        },
    );
    apply(&mut s, &deployment(4, "nginx:1.27"));
    advance(&mut s, 60 * S);
    assert_eq!(web_pods(&s).len(), 2);
    inject(
        &mut s,
        Fault::StartComponent {
            component: "controller-manager".into(),
        },
    );
    advance(&mut s, 30 * S);
    assert_eq!(ready_pods(&s).len(), 4);
}

// ------------------------------------------------------------------ the API server

#[test]
fn while_the_api_server_is_down_every_request_gets_503_and_the_cluster_recovers_after() {
    for outage in [30 * S, 2 * MIN] {
        let mut s = running(11, 3);
        let after = s.sim.trace().next_seq();
        inject(
            &mut s,
            Fault::StopComponent {
                component: "kube-apiserver".into(),
            },
        );
        let refused = s.apply_text("web.yaml", &deployment(5, "nginx:1.27"));
        assert!(!refused.ok, "kubectl gets 503 too");
        advance(&mut s, outage);
        let calls = api_calls(&s, after);
        assert!(calls
            .iter()
            .any(|(a, _, _, c)| a.starts_with("kubelet/") && *c == 503));
        assert!(
            calls.iter().all(|(_, _, _, c)| *c == 503),
            "nothing gets through"
        );
        inject(
            &mut s,
            Fault::StartComponent {
                component: "kube-apiserver".into(),
            },
        );
        if outage > 75 * S {
            // The watch history no longer reaches back: 410 Gone, and the informers relist.
            assert!(entries(&s).iter().any(
                |e| matches!(&e.kind, TraceKind::List { reason, .. } if reason.contains("410"))
            ));
        }
        advance(&mut s, 2 * MIN);
        apply(&mut s, &deployment(5, "nginx:1.27"));
        advance(&mut s, 60 * S);
        assert_eq!(ready_pods(&s).len(), 5, "outage {outage}ms");
        let nodes_ready = s
            .sim
            .api()
            .list(Kind::Node)
            .filter_map(|o| o.as_node())
            .all(|n| {
                n.status
                    .conditions
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == "True")
            });
        assert!(nodes_ready, "outage {outage}ms: every node is Ready again");
    }
}

// ------------------------------------------------------------------ conflicts

#[test]
fn a_conflicting_writer_costs_each_controller_write_one_409_and_loses_nothing() {
    let mut s = running(12, 2);
    let rs = rs_key(&s);
    inject(
        &mut s,
        Fault::ConflictingWriter {
            object: format!("ReplicaSet/default/{}", rs.name),
            duration: Some(60 * S),
        },
    );
    let after = s.sim.trace().next_seq();
    apply(&mut s, &deployment(4, "nginx:1.27"));
    advance(&mut s, 60 * S);
    let calls = api_calls(&s, after);
    let on_rs: Vec<&(String, String, String, u16)> = calls
        .iter()
        .filter(|(_, _, o, _)| *o == rs.to_string())
        .collect();
    assert!(on_rs
        .iter()
        .any(|(a, _, _, c)| a == RIVAL_ACTOR && *c == 200));
    let conflicts = on_rs.iter().filter(|(_, _, _, c)| *c == 409).count();
    assert!(
        conflicts >= 2,
        "the scale and the status writes both meet 409: {on_rs:#?}"
    );
    // Every 409 is retried until it goes through.
    let owners_ok = on_rs
        .iter()
        .filter(|(a, _, _, c)| a != RIVAL_ACTOR && *c == 200)
        .count();
    assert!(owners_ok >= 2);
    let retries = s.sim.trace().since(after).filter(|e| {
        matches!(&e.kind, TraceKind::Reconcile(tr) if tr.trigger == "retry")
            && e.cause()
                .and_then(|c| s.sim.trace().get(c))
                .is_some_and(|c| matches!(&c.kind, TraceKind::Api(tr) if tr.code == 409))
    });
    assert!(retries.count() >= 1, "a retry names the 409 it follows");
    assert_eq!(ready_pods(&s).len(), 4);
    assert_eq!(the_replica_set(&s).status.ready_replicas, 4);
    let heal = fault_entries(&s, "ConflictingWriter");
    assert_eq!(heal.len(), 2, "the writer stops after its duration");
    // After the heal, writes go through at once.
    let after_heal = s.sim.trace().next_seq();
    apply(&mut s, &deployment(3, "nginx:1.27"));
    advance(&mut s, 30 * S);
    assert!(api_calls(&s, after_heal)
        .iter()
        .all(|(a, _, _, _)| a != RIVAL_ACTOR));
    assert_eq!(web_pods(&s).len(), 3);
}

// ------------------------------------------------------------------ direct edits

fn edit(s: &mut Session, object: String, patch: serde_json::Value) {
    inject(s, Fault::EditObject { object, patch });
}

#[test]
fn an_edited_pod_image_persists_because_the_replica_set_counts_pods_and_does_not_compare_them() {
    let mut s = running(13, 3);
    let pod = web_pods(&s)[0].clone();
    let mut container = serde_json::to_value(&pod.spec.containers[0]).unwrap();
    container["image"] = json!("nginx:9.9");
    edit(
        &mut s,
        format!("Pod/default/{}", pod.metadata.name),
        json!({"spec": {"containers": [container]}}),
    );
    advance(&mut s, 2 * MIN);
    let now = web_pods(&s);
    assert_eq!(now.len(), 3);
    let same = now
        .iter()
        .find(|p| p.metadata.name == pod.metadata.name)
        .expect("the edited pod is still there");
    assert_eq!(same.spec.containers[0].image, "nginx:9.9");
    assert_eq!(same.metadata.uid, pod.metadata.uid);
}

#[test]
fn a_relabelled_pod_is_released_by_its_replica_set_which_creates_a_replacement() {
    let mut s = running(14, 3);
    let name = first_pod(&s);
    edit(
        &mut s,
        format!("Pod/default/{name}"),
        json!({"metadata": {"labels": {"app": "other"}}}),
    );
    advance(&mut s, 30 * S);
    let orphan = pods(&s)
        .into_iter()
        .find(|p| p.metadata.name == name)
        .expect("the released pod keeps running");
    assert!(
        orphan.metadata.owner_references.is_empty(),
        "released: no ownerReference"
    );
    assert!(orphan.is_ready());
    assert_eq!(ready_pods(&s).len(), 3, "a replacement took its place");
}

#[test]
fn an_owned_replica_sets_replicas_edit_is_scaled_back_by_the_deployment_controller() {
    let mut s = running(15, 3);
    let rs = rs_key(&s);
    edit(
        &mut s,
        format!("ReplicaSet/default/{}", rs.name),
        json!({"spec": {"replicas": 5}}),
    );
    advance(&mut s, 60 * S);
    assert_eq!(the_replica_set(&s).spec.replicas, Some(3));
    assert_eq!(web_pods(&s).len(), 3);
}

// ------------------------------------------------------------------ nodes

fn node_ready(s: &Session, node: &str) -> String {
    s.sim
        .api()
        .get(&ObjectKey::new(Kind::Node, "", node))
        .and_then(|o| o.as_node().cloned())
        .and_then(|n| n.status.conditions.into_iter().find(|c| c.type_ == "Ready"))
        .map(|c| c.status.to_string())
        .unwrap_or_default()
}

fn pods_on(s: &Session, node: &str) -> Vec<Pod> {
    pods(s)
        .into_iter()
        .filter(|p| p.spec.node_name == node)
        .collect()
}

fn busiest_node(s: &Session) -> String {
    let mut nodes: Vec<(usize, String)> = ["node-1", "node-2", "node-3"]
        .iter()
        .map(|n| (pods_on(s, n).len(), n.to_string()))
        .collect();
    nodes.sort();
    nodes.last().expect("nodes").1.clone()
}

#[test]
fn a_dead_nodes_pods_stay_terminating_there_and_are_replaced_after_50_s_plus_300_s() {
    let mut s = running(16, 3);
    let dead = busiest_node(&s);
    let victims: Vec<String> = pods_on(&s, &dead)
        .iter()
        .map(|p| p.metadata.name.to_string())
        .collect();
    assert!(!victims.is_empty());
    let t0 = s.sim.now();
    inject(&mut s, Fault::NodeDown { node: dead.clone() });

    s.advance_to(t0 + 40 * S, usize::MAX);
    assert_eq!(
        node_ready(&s, &dead),
        "True",
        "within the grace period nothing is noticed"
    );
    s.advance_to(t0 + 70 * S, usize::MAX);
    assert_eq!(
        node_ready(&s, &dead),
        "Unknown",
        "after 50 s the node is Unknown"
    );
    assert!(
        pods_on(&s, &dead).iter().all(|p| !p.is_ready()),
        "its pods are marked not ready"
    );
    assert!(pods_on(&s, &dead)
        .iter()
        .all(|p| p.metadata.deletion_timestamp.is_none()));
    s.advance_to(t0 + 330 * S, usize::MAX);
    assert!(
        pods_on(&s, &dead)
            .iter()
            .all(|p| p.metadata.deletion_timestamp.is_none()),
        "the 300 s tolerations have not run out"
    );
    s.advance_to(t0 + 400 * S, usize::MAX);
    let stuck = pods_on(&s, &dead);
    assert_eq!(stuck.len(), victims.len());
    assert!(
        stuck
            .iter()
            .all(|p| p.metadata.deletion_timestamp.is_some()),
        "evicted: Terminating"
    );
    assert_eq!(ready_pods(&s).len(), 3, "replacements run elsewhere");
    assert!(ready_pods(&s).iter().all(|p| p.spec.node_name != dead));

    s.advance_to(t0 + 30 * MIN, usize::MAX);
    assert_eq!(
        pods_on(&s, &dead).len(),
        victims.len(),
        "Terminating forever: no kubelet finishes them"
    );

    inject(&mut s, Fault::NodeUp { node: dead.clone() });
    advance(&mut s, 2 * MIN);
    assert!(
        pods_on(&s, &dead).is_empty(),
        "the kubelet finishes the deletions when it is back"
    );
    assert_eq!(node_ready(&s, &dead), "True");
    assert_eq!(ready_pods(&s).len(), 3);
}

#[test]
fn a_partitioned_node_is_reconciled_on_both_sides_when_it_heals() {
    let mut s = running(17, 3);
    let cut = busiest_node(&s);
    let victims: Vec<Pod> = pods_on(&s, &cut);
    inject(&mut s, Fault::PartitionNode { node: cut.clone() });
    advance(&mut s, 7 * MIN);
    // The control plane's side: Unknown, evicted, replaced.
    assert_eq!(node_ready(&s, &cut), "Unknown");
    assert!(pods_on(&s, &cut)
        .iter()
        .all(|p| p.metadata.deletion_timestamp.is_some()));
    assert_eq!(ready_pods(&s).len(), 3);
    // The node's side: its containers kept running, unaware.
    let machine = &s.sim.machines()[cut.as_str()];
    assert!(machine.up);
    assert!(victims.iter().all(|p| machine
        .runtime
        .container(&p.metadata.uid, "app")
        .is_some_and(|c| c.running)));

    inject(&mut s, Fault::HealNode { node: cut.clone() });
    advance(&mut s, 2 * MIN);
    assert!(
        pods_on(&s, &cut).is_empty(),
        "the kubelet learns of the deletions and finishes them"
    );
    let machine = &s.sim.machines()[cut.as_str()];
    assert!(victims.iter().all(|p| !machine
        .runtime
        .container(&p.metadata.uid, "app")
        .is_some_and(|c| c.running)));
    assert_eq!(node_ready(&s, &cut), "True");
    assert_eq!(ready_pods(&s).len(), 3);
}

// ------------------------------------------------------------------ components

#[test]
fn with_the_scheduler_stopped_pods_stay_pending_until_it_starts() {
    let mut s = Session::new(18);
    inject(
        &mut s,
        Fault::StopComponent {
            component: "kube-scheduler".into(),
        },
    );
    apply(&mut s, &deployment(3, "nginx:1.27"));
    advance(&mut s, 2 * MIN);
    let pending = web_pods(&s);
    assert_eq!(pending.len(), 3);
    assert!(pending
        .iter()
        .all(|p| p.spec.node_name.is_empty() && p.status.phase == "Pending"));
    inject(
        &mut s,
        Fault::StartComponent {
            component: "scheduler".into(),
        },
    );
    advance(&mut s, 30 * S);
    assert_eq!(ready_pods(&s).len(), 3);
}

// ------------------------------------------------------------------ containers and images

fn container_status(s: &Session, pod: &str) -> kubeloop::sim::api::types::ContainerStatus {
    pods(s)
        .into_iter()
        .find(|p| p.metadata.name == pod)
        .and_then(|p| p.status.container_statuses.into_iter().next())
        .expect("container status")
}

#[test]
fn a_crashed_container_is_restarted_in_place_by_the_kubelet() {
    let mut s = running(19, 1);
    let name = first_pod(&s);
    inject(
        &mut s,
        Fault::CrashContainer {
            target: pod_target(&name),
            exit_code: 1,
        },
    );
    advance(&mut s, 30 * S);
    assert_eq!(first_pod(&s), name, "same pod: no controller is involved");
    assert_eq!(container_status(&s, &name).restart_count, 1);
}

#[test]
fn an_oom_killed_container_reports_oom_killed_and_restarts() {
    let mut s = running(20, 1);
    let name = first_pod(&s);
    inject(
        &mut s,
        Fault::OomKill {
            target: pod_target(&name),
        },
    );
    advance(&mut s, 30 * S);
    let st = container_status(&s, &name);
    assert_eq!(st.restart_count, 1);
    let last = st
        .last_state
        .and_then(|l| l.terminated)
        .expect("last state");
    assert_eq!(last.reason.as_deref(), Some("OOMKilled"));
    assert_eq!(last.exit_code, 137);
}

#[test]
fn a_crash_loop_backs_off_and_ends_with_its_duration() {
    let mut s = running(21, 1);
    let name = first_pod(&s);
    inject(
        &mut s,
        Fault::CrashLoop {
            target: pod_target(&name),
            exit_code: 2,
            duration: Some(2 * MIN),
        },
    );
    advance(&mut s, 90 * S);
    let st = container_status(&s, &name);
    assert!(st.restart_count >= 3, "{st:?}");
    let waiting = st.state.waiting.and_then(|w| w.reason);
    let terminated = st.state.terminated.is_some();
    assert!(
        waiting.as_deref() == Some("CrashLoopBackOff") || terminated,
        "backing off: {waiting:?}"
    );
    advance(&mut s, 6 * MIN);
    assert_eq!(
        ready_pods(&s).len(),
        1,
        "after the loop ends the next restart sticks"
    );
    let faults = fault_entries(&s, "CrashLoop");
    assert_eq!(faults.len(), 2);
    assert_eq!(faults[1].cause(), Some(faults[0].seq));
}

#[test]
fn a_failing_readiness_probe_takes_the_pod_out_of_ready_for_its_duration_only() {
    let mut s = running(22, 2);
    let name = first_pod(&s);
    inject(
        &mut s,
        Fault::FailReadiness {
            target: pod_target(&name),
            duration: Some(30 * S),
        },
    );
    advance(&mut s, 20 * S);
    assert_eq!(ready_pods(&s).len(), 1);
    assert_eq!(
        web_pods(&s).len(),
        2,
        "not ready is not gone: nothing replaces it"
    );
    advance(&mut s, 40 * S);
    assert_eq!(ready_pods(&s).len(), 2);
    assert_eq!(container_status(&s, &name).restart_count, 0);
    assert_eq!(
        fault_entries(&s, "FailReadiness").len(),
        2,
        "fault and heal"
    );
}

#[test]
fn a_failing_liveness_probe_makes_the_kubelet_restart_the_container() {
    let mut s = running(23, 1);
    let name = first_pod(&s);
    inject(
        &mut s,
        Fault::FailLiveness {
            target: pod_target(&name),
            duration: Some(20 * S),
        },
    );
    advance(&mut s, 2 * MIN);
    assert!(container_status(&s, &name).restart_count >= 1);
    assert_eq!(ready_pods(&s).len(), 1);
}

#[test]
fn a_broken_image_fails_new_pulls_until_it_is_fixed() {
    let mut s = running(24, 2);
    inject(
        &mut s,
        Fault::BreakImage {
            image: "nginx:1.28".into(),
        },
    );
    apply(&mut s, &deployment(2, "nginx:1.28"));
    advance(&mut s, 60 * S);
    let stuck: Vec<Pod> = web_pods(&s)
        .into_iter()
        .filter(|p| p.spec.containers[0].image == "nginx:1.28")
        .collect();
    assert!(!stuck.is_empty());
    let reason = stuck[0]
        .status
        .container_statuses
        .first()
        .and_then(|c| c.state.waiting.clone())
        .and_then(|w| w.reason);
    assert!(
        matches!(reason.as_deref(), Some("ErrImagePull" | "ImagePullBackOff")),
        "{reason:?}"
    );
    assert_eq!(
        ready_pods(&s).len(),
        2,
        "the rollout keeps old pods while new ones cannot start"
    );
    inject(
        &mut s,
        Fault::FixImage {
            image: "nginx:1.28".into(),
        },
    );
    advance(&mut s, 6 * MIN);
    let pods = ready_pods(&s);
    assert_eq!(pods.len(), 2);
    assert!(pods
        .iter()
        .all(|p| p.spec.containers[0].image == "nginx:1.28"));
}

// ------------------------------------------------------------------ refusals

#[test]
fn faults_on_things_that_do_not_exist_are_refused_and_traced_as_refused() {
    let mut s = Session::new(25);
    for f in [
        Fault::NodeDown {
            node: "node-9".into(),
        },
        Fault::RestartController {
            component: "nope".into(),
        },
        Fault::ConflictingWriter {
            object: "Deployment/default/missing".into(),
            duration: None,
        },
        Fault::DropWatchEvents {
            component: "replicaset".into(),
            count: None,
            probability: None,
            kind: None,
            event_type: Some("CHANGED".into()),
            duration: None,
        },
    ] {
        assert!(s.inject(f.clone()).is_err(), "{f:?}");
    }
    let refused = s
        .sim
        .trace()
        .entries()
        .filter(|e| matches!(&e.kind, TraceKind::Fault { description, .. } if description.contains("refused")))
        .count();
    assert_eq!(refused, 4);
}

#[test]
fn a_scenario_step_can_switch_the_replica_set_controller_to_edge_triggered() {
    let text = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: edge}
spec:
  seed: 4
  steps:
  - at: 0s
    fault: {type: SetTriggerMode, component: replicaset-controller, mode: edge}
  - at: 0s
    fault: {type: SetResync, component: replicaset, period: off}
  - at: 20s
    fault: {type: DropWatchEvents, component: replicaset, kind: Pod, eventType: DELETED, count: 1}
  - at: 20s
    fault: {type: DeletePod, selector: app=web}
"#;
    let mut s = Session::load("edge.yaml", text, None).expect("the scenario loads");
    apply(&mut s, &deployment(1, "nginx:1.27"));
    s.advance_to(5 * MIN, usize::MAX);
    assert_eq!(
        s.sim.trigger_mode(&ComponentId::ReplicaSet),
        TriggerMode::Edge
    );
    assert!(
        web_pods(&s).is_empty(),
        "its only pod is gone and never replaced"
    );
    assert_eq!(the_replica_set(&s).spec.replicas, Some(1));
}

// ------------------------------------------------------------------ crashes mid-reconcile

fn crash(component: &str, after_requests: u32) -> Fault {
    serde_json::from_value(json!({
        "type": "CrashMidReconcile",
        "component": component,
        "afterRequests": after_requests,
    }))
    .expect("a fault")
}

#[test]
fn a_crash_mid_reconcile_sends_the_first_writes_loses_the_rest_and_the_restarted_controller_finishes(
) {
    let mut s = running(21, 1);
    let said = inject(&mut s, crash("replicaset-controller", 1));
    assert!(said.contains("sends 1 and dies"), "{said}");
    let t = s.sim.trace().next_seq();
    assert!(s.kubectl("scale deployment/web --replicas=4").ok);
    advance(&mut s, 2 * S);
    // Slow start would send 1 then 2 creates, then the status: only the first got out, and the whole of
    // kube-controller-manager is down.
    assert_eq!(creates_by(&s, "replicaset-controller", t), 1);
    assert_eq!(web_pods(&s).len(), 2);
    let crashed = fault_entries(&s, "CrashMidReconcile");
    let died = crashed
        .iter()
        .find_map(|e| match &e.kind {
            TraceKind::Fault { description, .. } if description.contains("died") => {
                Some(description.clone())
            }
            _ => None,
        })
        .expect("the crash is in the trace");
    assert!(
        died.starts_with(
            "replicaset-controller died in the middle of a pass of ReplicaSet/default/web-"
        ) && died.contains(" after sending 1 of its 4 requests. Sent: create Pod"),
        "{died}"
    );
    assert!(died.contains("Lost: create Pod"), "{died}");
    assert!(!s.sim.is_running(&ComponentId::Deployment));
    // Nothing reconciles until the process is back, 10 s later; then it finishes the job once.
    advance(&mut s, 5 * S);
    assert_eq!(web_pods(&s).len(), 2);
    advance(&mut s, 40 * S);
    assert!(s.sim.is_running(&ComponentId::ReplicaSet));
    assert_eq!(web_pods(&s).len(), 4);
    assert_eq!(ready_pods(&s).len(), 4);
    // The crash was used up: it springs once.
    assert_eq!(
        fault_entries(&s, "CrashMidReconcile")
            .iter()
            .filter(|e| matches!(&e.kind, TraceKind::Fault { description, .. } if description.contains("died")))
            .count(),
        1
    );
}

#[test]
fn a_crash_waits_for_a_pass_that_sends_more_than_it_lets_out() {
    let mut s = running(22, 2);
    inject(&mut s, crash("scheduler", 0));
    advance(&mut s, 20 * S);
    // No pod to place, no pass with a request: the scheduler lives.
    assert!(s.sim.is_running(&ComponentId::Scheduler));
    assert!(s.kubectl("scale deployment/web --replicas=3").ok);
    advance(&mut s, 2 * S);
    assert!(!s.sim.is_running(&ComponentId::Scheduler));
    assert!(
        s.sim.is_running(&ComponentId::ReplicaSet),
        "only the scheduler's process died"
    );
    advance(&mut s, 30 * S);
    assert_eq!(ready_pods(&s).len(), 3);
}

#[test]
fn a_crash_fault_names_a_component_with_a_loop_and_a_count_it_can_keep() {
    let mut s = running(23, 1);
    for (fault, refusal) in [
        (
            crash("kube-apiserver", 1),
            "the API server has no reconcile loop",
        ),
        (crash("nope", 1), "unknown component \"nope\""),
        (
            crash("scheduler", 101),
            "afterRequests must be between 0 and 100",
        ),
    ] {
        let said = s.inject(fault).expect_err("refused");
        assert!(said.contains(refusal), "{said}");
    }
}
