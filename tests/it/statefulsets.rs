//! StatefulSets: one pod per identity, made in ordinal order with its claims, replaced and
//! updated from the highest ordinal down, and the API server's refusal of frozen fields.

use kubeloop::sim::api::types::{Kind, ObjectKey};
use kubeloop::sim::session::Session;

const WEB: &str = r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"#;

fn started(yaml: &str) -> Session {
    crate::support::applied(yaml)
}

/// The messages of the StatefulSet's events, in the order they were first recorded.
fn set_events(s: &Session) -> Vec<String> {
    crate::support::events(s, "StatefulSet", None)
        .into_iter()
        .map(|(_, m)| m)
        .collect()
}

/// The StatefulSet's pod deletions, as its events report them.
fn deletes(s: &Session) -> Vec<String> {
    let mut events = set_events(s);
    events.retain(|e| e.starts_with("delete"));
    events
}

const DELETED_FROM_THE_TOP: [&str; 2] = [
    "delete Pod web-2 in StatefulSet web successful",
    "delete Pod web-1 in StatefulSet web successful",
];

#[test]
fn pods_start_one_at_a_time_in_ordinal_order_each_after_its_claims() {
    let mut s = started(WEB);
    s.advance_to(120_000, usize::MAX);
    let out = s.kubectl("get pods -o name");
    assert_eq!(out.stdout, "pod/web-0\npod/web-1\npod/web-2\n");
    assert_eq!(
        set_events(&s),
        [
            "create Claim www-web-0 Pod web-0 in StatefulSet web success",
            "create Pod web-0 in StatefulSet web successful",
            "create Claim www-web-1 Pod web-1 in StatefulSet web success",
            "create Pod web-1 in StatefulSet web successful",
            "create Claim www-web-2 Pod web-2 in StatefulSet web success",
            "create Pod web-2 in StatefulSet web successful",
        ]
    );
    // Each pod was created only after the one before it was Running and Ready.
    let created = |name: &str| {
        s.sim
            .api()
            .get(&ObjectKey::new(Kind::Pod, "default", name))
            .and_then(|o| o.as_pod().cloned())
            .expect("pod exists")
    };
    for (before, after) in [("web-0", "web-1"), ("web-1", "web-2")] {
        let ready = created(before).ready_since().expect("ready").0;
        let made = created(after)
            .metadata
            .creation_timestamp
            .expect("created")
            .0;
        assert!(
            made >= ready,
            "{after} made at {made}, before {before} was ready at {ready}"
        );
    }
    let pod = created("web-1");
    assert_eq!(
        pod.metadata
            .labels
            .get("statefulset.kubernetes.io/pod-name")
            .map(|v| v.as_str()),
        Some("web-1")
    );
    assert_eq!(
        pod.metadata
            .labels
            .get("apps.kubernetes.io/pod-index")
            .map(|v| v.as_str()),
        Some("1")
    );
    assert!(pod
        .metadata
        .labels
        .get("controller-revision-hash")
        .is_some_and(|h| h.starts_with("web-")));
    let yaml = s.kubectl("get pod web-1 -o yaml").stdout;
    assert!(yaml.contains("hostname: web-1\n"), "{yaml}");
    assert!(yaml.contains("subdomain: web\n"), "{yaml}");
    assert!(yaml.contains("claimName: www-web-1\n"), "{yaml}");
    let claims = s.kubectl("get pvc -o name").stdout;
    assert_eq!(claims, "persistentvolumeclaim/www-web-0\npersistentvolumeclaim/www-web-1\npersistentvolumeclaim/www-web-2\n");
    let status = s.kubectl("get sts web -o jsonpath={.status}").stdout;
    assert!(status.contains("\"readyReplicas\":3"), "{status}");
    assert!(status.contains("\"availableReplicas\":3"), "{status}");
    let get = s.kubectl("get sts").stdout;
    assert!(get.starts_with("NAME   READY   AGE"), "{get}");
    assert!(get.contains("web    3/3"), "{get}");
}

#[test]
fn kubectl_prints_statefulsets_claims_and_revisions_with_their_upstream_columns() {
    let mut s = started(WEB);
    s.advance_to(120_000, usize::MAX);
    let sts = s.kubectl("get sts").stdout;
    assert_eq!(sts, "NAME   READY   AGE\nweb    3/3     2m\n");
    let pvc = s.kubectl("get pvc www-web-0").stdout;
    let volume = s
        .kubectl("get pvc www-web-0 -o jsonpath={.spec.volumeName}")
        .stdout;
    assert_eq!(
        pvc,
        format!("NAME        STATUS   VOLUME                                     CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE\nwww-web-0   Bound    {volume}   1Gi        RWO            standard       <unset>                 2m\n")
    );
    let revs = s.kubectl("get controllerrevisions").stdout;
    let lines: Vec<&str> = revs.lines().collect();
    assert_eq!(lines.len(), 2, "{revs}");
    assert!(lines[0].starts_with("NAME "), "{revs}");
    assert!(lines[1].contains("statefulset.apps/web   1 "), "{revs}");
}

#[test]
fn raising_the_claim_templates_storage_is_refused_and_the_claims_keep_their_size() {
    let mut s = started(WEB);
    s.advance_to(120_000, usize::MAX);
    let out = s.kubectl(r#"patch sts web --type=json -p='[{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/storage","value":"2Gi"}]'"#);
    assert!(!out.ok);
    assert_eq!(
        out.stderr,
        "The StatefulSet \"web\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden\n"
    );
}

#[test]
fn scaling_down_removes_the_highest_ordinal_first_one_at_a_time_and_keeps_the_claims() {
    let mut s = started(WEB);
    s.advance_to(120_000, usize::MAX);
    assert!(s.kubectl("scale sts web --replicas=1").ok);
    s.advance_to(240_000, usize::MAX);
    assert_eq!(s.kubectl("get pods -o name").stdout, "pod/web-0\n");
    assert_eq!(deletes(&s), DELETED_FROM_THE_TOP);
    // whenScaled: Retain (the default) keeps every claim for the pod that may come back.
    assert_eq!(s.kubectl("get pvc -o name").stdout.lines().count(), 3);
    assert!(s.kubectl("scale sts web --replicas=3").ok);
    s.advance_to(360_000, usize::MAX);
    let yaml = s.kubectl("get pod web-2 -o yaml").stdout;
    assert!(yaml.contains("claimName: www-web-2\n"), "{yaml}");
    assert_eq!(s.kubectl("get pvc -o name").stdout.lines().count(), 3);
}

#[test]
fn a_template_change_replaces_pods_from_the_highest_ordinal_down_to_the_partition() {
    let mut s = started(WEB);
    s.advance_to(120_000, usize::MAX);
    assert!(
        s.kubectl(
            r#"patch sts web -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}'"#
        )
        .ok
    );
    assert!(
        s.kubectl("set image sts/web nginx=nginx:1.28").ok,
        "set image"
    );
    s.advance_to(300_000, usize::MAX);
    let image = |s: &mut Session, pod: &str| {
        s.kubectl(&format!(
            "get pod {pod} -o jsonpath={{.spec.containers[0].image}}"
        ))
        .stdout
    };
    assert_eq!(image(&mut s, "web-2"), "nginx:1.28");
    assert_eq!(image(&mut s, "web-1"), "nginx:1.28");
    assert_eq!(image(&mut s, "web-0"), "nginx:1.27", "below the partition");
    assert_eq!(deletes(&s), DELETED_FROM_THE_TOP);
    let status = s
        .kubectl("get sts web -o jsonpath={.status.currentReplicas},{.status.updatedReplicas}")
        .stdout;
    assert_eq!(status, "1,2");
    assert!(
        s.kubectl(
            r#"patch sts web -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}'"#
        )
        .ok
    );
    s.advance_to(420_000, usize::MAX);
    assert_eq!(image(&mut s, "web-0"), "nginx:1.28");
    let status = s
        .kubectl("get sts web -o jsonpath={.status.currentRevision}={.status.updateRevision}")
        .stdout;
    let (cur, upd) = status.split_once('=').expect("two revisions");
    assert_eq!(cur, upd, "the rollout completed");
}

#[test]
fn parallel_pods_are_created_without_waiting_for_each_other() {
    let mut s = started(&WEB.replace(
        "  replicas: 3\n",
        "  replicas: 3\n  podManagementPolicy: Parallel\n",
    ));
    s.advance_to(3_000, usize::MAX);
    let out = s.kubectl("get pods -o name");
    assert_eq!(out.stdout, "pod/web-0\npod/web-1\npod/web-2\n");
}

#[test]
fn the_editor_says_that_max_unavailable_is_ignored_and_nothing_about_an_idle_kind() {
    let yaml = WEB.replace(
        "  replicas: 3\n",
        "  replicas: 3\n  updateStrategy:\n    rollingUpdate: {maxUnavailable: 2}\n",
    );
    let mut s = Session::new(1);
    let report = s.apply_text("web.yaml", &yaml);
    assert!(report.ok, "{report:?}");
    let notes: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.col, d.message))
        .collect();
    assert_eq!(
        notes,
        ["9:21: maxUnavailable is accepted and ignored: its feature gate (MaxUnavailableStatefulSet) is alpha and off in Kubernetes v1.34, so pods are replaced one at a time"]
    );
}

#[test]
fn a_selector_that_misses_the_template_is_refused_with_the_api_servers_words() {
    let mut s = Session::new(1);
    let report = s.apply_text(
        "web.yaml",
        &WEB.replace(
            "selector: {matchLabels: {app: web}}",
            "selector: {matchLabels: {app: db}}",
        ),
    );
    assert!(!report.ok);
    let messages: Vec<&str> = report
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("The StatefulSet \"web\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`")),
        "{messages:?}"
    );
}

#[test]
fn a_pod_on_a_dead_node_is_replaced_only_once_force_deleted_and_only_where_its_volume_is() {
    let mut s = started(WEB);
    s.advance_to(120_000, usize::MAX);
    let node = s
        .kubectl("get pod web-1 -o jsonpath={.spec.nodeName}")
        .stdout;
    assert!(!node.is_empty());
    s.inject(kubeloop::sim::faults::Fault::NodeDown { node: node.clone() })
        .expect("the node goes down");
    s.advance_to(720_000, usize::MAX);
    // Evicted after 300 s, the pod is Terminating for good: the kubelet that would confirm the
    // deletion is gone, and a second web-1 would share its identity and its disk.
    let pod = s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Pod, "default", "web-1"))
        .and_then(|o| o.as_pod().cloned())
        .expect("web-1 still exists");
    assert!(
        pod.metadata.deletion_timestamp.is_some(),
        "web-1 is terminating"
    );
    assert_eq!(pod.spec.node_name, node, "and still bound to the dead node");
    let ready = s
        .kubectl("get sts web -o jsonpath={.status.readyReplicas}")
        .stdout;
    assert_eq!(ready, "2");

    // The documented way out: force-delete the pod. The controller makes web-1 again at once,
    // with the same claim; but kind's volumes are local to a node, so the new web-1 can run only
    // where its volume is, on the dead node, and waits there.
    let forced = s.kubectl("delete pod web-1 --force --grace-period=0");
    assert!(
        forced.stderr.starts_with("Warning: Immediate deletion"),
        "{forced:?}"
    );
    assert_eq!(forced.stdout, "pod \"web-1\" force deleted\n");
    s.advance_to(840_000, usize::MAX);
    let again = s
        .kubectl("get pod web-1 -o jsonpath={.spec.nodeName},{.status.phase}")
        .stdout;
    assert_eq!(again, ",Pending", "web-1 is back, unscheduled");
    let yaml = s.kubectl("get pod web-1 -o yaml").stdout;
    assert!(yaml.contains("claimName: www-web-1\n"), "{yaml}");
    let described = s.kubectl("describe pod web-1").stdout;
    assert!(
        described.contains("node(s) didn't match PersistentVolume's node affinity"),
        "{described}"
    );
}

#[test]
fn the_inspector_names_the_controller_of_a_statefulset_and_of_its_claims() {
    let mut s = started(WEB);
    s.advance_to(10_000, usize::MAX);
    let kind = |group: &str, kind: &str| {
        Kind::Custom(kubeloop::sim::api::openapi::stored_kind(group, kind).expect("stored"))
    };
    let now = s.sim.now();
    let set = kubeloop::viewmodel::inspect::InspectorData::of(
        &s.sim,
        ObjectKey::new(kind("apps", "StatefulSet"), "default", "web"),
        now,
    );
    assert_eq!(set.notes.len(), 1, "{:?}", set.notes);
    assert!(
        set.notes[0].starts_with("The statefulset-controller acts on it."),
        "{:?}",
        set.notes
    );
    let claim = kubeloop::viewmodel::inspect::InspectorData::of(
        &s.sim,
        ObjectKey::new(kind("", "PersistentVolumeClaim"), "default", "www-web-0"),
        now,
    );
    assert!(
        claim.notes[0].starts_with("The persistentvolume-controller acts on it."),
        "{:?}",
        claim.notes
    );
}

/// Who deleted `web-1` with which result, in order: `actor verb code`.
fn deletes_of_web_1(s: &Session) -> Vec<String> {
    use kubeloop::sim::machinery::trace::{ApiTrace, TraceKind};
    s.sim
        .trace()
        .entries()
        .filter_map(|e| match &e.kind {
            TraceKind::Api(tr)
                if tr.object == "Pod/default/web-1"
                    && (tr.verb == "delete" || tr.verb == "patch/status") =>
            {
                let ApiTrace {
                    actor, verb, code, ..
                } = &**tr;
                Some(format!("{actor} {verb} {code}"))
            }
            _ => None,
        })
        .collect()
}

/// `web-1` is back, Running on a node other than `dead`.
fn assert_running_away_from(s: &mut Session, dead: &str) {
    let again = s
        .kubectl("get pod web-1 -o jsonpath={.spec.nodeName},{.status.phase}")
        .stdout;
    let (on, phase) = again.split_once(',').expect("web-1 is back");
    assert_ne!(on, dead);
    assert_eq!(phase, "Running");
}

/// WEB without claims: its pods may run on any node.
fn stateless_web() -> String {
    let cut = WEB
        .find("  volumeClaimTemplates:")
        .expect("WEB has claim templates");
    WEB[..cut].to_string()
}

/// A running `web` whose `web-1` sits on a node that died 10 minutes ago (its pod evicted and
/// stuck Terminating); returns the dead node.
fn web_1_stranded(s: &mut Session) -> String {
    s.advance_to(120_000, usize::MAX);
    let node = s
        .kubectl("get pod web-1 -o jsonpath={.spec.nodeName}")
        .stdout;
    s.inject(kubeloop::sim::faults::Fault::NodeDown { node: node.clone() })
        .expect("the node goes down");
    s.advance_to(720_000, usize::MAX);
    let stuck = s
        .kubectl("get pod web-1 -o jsonpath={.metadata.deletionTimestamp}")
        .stdout;
    assert!(!stuck.is_empty(), "web-1 is stuck terminating");
    node
}

#[test]
fn the_out_of_service_taint_lets_the_pod_garbage_collector_release_a_dead_nodes_pod() {
    let mut s = started(&stateless_web());
    let dead = web_1_stranded(&mut s);
    let t0 = s.sim.now();
    let taint = s.kubectl(&format!(
        "taint nodes {dead} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
    ));
    assert!(taint.ok, "{taint:?}");
    // PodGC runs every 20 s: within one period web-1 is force-deleted and made again elsewhere.
    s.advance_to(t0 + 21_000, usize::MAX);
    let uid_gone = s
        .kubectl("get pod web-1 -o jsonpath={.spec.nodeName}")
        .stdout;
    assert_ne!(uid_gone, dead, "the old web-1 is gone");
    let deletes = deletes_of_web_1(&s);
    assert_eq!(
        deletes[deletes.len() - 2..],
        [
            "pod-garbage-collector-controller patch/status 200",
            "pod-garbage-collector-controller delete 200"
        ]
    );
    s.advance_to(t0 + 60_000, usize::MAX);
    assert_running_away_from(&mut s, &dead);
}

#[test]
fn deleting_a_dead_nodes_object_releases_its_pods_after_the_40_s_quarantine() {
    let mut s = started(&stateless_web());
    let dead = web_1_stranded(&mut s);
    let t0 = s.sim.now();
    assert!(s.kubectl(&format!("delete node {dead}")).ok);
    s.advance_to(t0 + 30_000, usize::MAX);
    assert_eq!(
        s.kubectl("get pod web-1 -o jsonpath={.spec.nodeName}")
            .stdout,
        dead,
        "still quarantined"
    );
    s.advance_to(t0 + 120_000, usize::MAX);
    let deletes = deletes_of_web_1(&s);
    assert_eq!(
        deletes.last().map(String::as_str),
        Some("pod-garbage-collector-controller delete 200")
    );
    assert_running_away_from(&mut s, &dead);
}

#[test]
fn kubectl_rollout_reports_history_and_undoes_a_statefulset_rollout() {
    let mut s = started(WEB);
    s.advance_to(120_000, usize::MAX);
    assert_eq!(
        s.kubectl("rollout status sts/web").stdout,
        "partitioned roll out complete: 3 new pods have been updated...\n"
    );
    assert!(s.kubectl("set image sts/web nginx=nginx:1.28").ok);
    s.advance_to(121_000, usize::MAX);
    let during = s.kubectl("rollout status sts/web").stdout;
    assert!(
        during.starts_with("Waiting for partitioned roll out to finish: ")
            || during.starts_with("Waiting for 1 pods to be ready..."),
        "{during}"
    );
    s.advance_to(300_000, usize::MAX);
    assert_eq!(
        s.kubectl("rollout history sts/web").stdout,
        "statefulset.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    assert_eq!(
        s.kubectl("rollout undo sts/web").stdout,
        "statefulset.apps/web rolled back\n"
    );
    s.advance_to(480_000, usize::MAX);
    let image = s.kubectl("get pod web-0 web-2 -o jsonpath={.items[*].spec.containers[0].image}");
    assert_eq!(image.stdout, "nginx:1.27 nginx:1.27");
    // The first revision came back as the newest: upstream bumps its number.
    assert_eq!(
        s.kubectl("rollout history sts/web").stdout,
        "statefulset.apps/web \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
    );
    assert_eq!(
        s.kubectl("rollout undo sts/web --to-revision=3").stdout,
        "statefulset.apps/web skipped rollback (current template already matches revision 3)\n"
    );
    assert_eq!(
        s.kubectl("rollout undo sts/web --to-revision=9").stderr,
        "error: unable to find specified revision 9 in history\n"
    );
}

#[test]
fn the_retention_policy_deletes_claims_when_scaled_down_and_when_the_set_is_deleted() {
    let mut s = started(&WEB.replace(
        "  serviceName: web\n",
        "  serviceName: web\n  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Delete}\n",
    ));
    s.advance_to(120_000, usize::MAX);
    assert_eq!(s.kubectl("get pvc -o name").stdout.lines().count(), 3);
    // Each claim is owned by its pod (whenScaled) and by the set (whenDeleted).
    let owners = s
        .kubectl("get pvc www-web-2 -o jsonpath={.metadata.ownerReferences[*].kind}")
        .stdout;
    assert_eq!(owners, "StatefulSet");
    assert!(s.kubectl("scale sts web --replicas=1").ok);
    s.advance_to(300_000, usize::MAX);
    assert_eq!(s.kubectl("get pods -o name").stdout, "pod/web-0\n");
    // The condemned pods' claims were handed to their pods, and went with them.
    assert_eq!(
        s.kubectl("get pvc -o name").stdout,
        "persistentvolumeclaim/www-web-0\n"
    );
    assert!(s.kubectl("delete sts web").ok);
    s.advance_to(420_000, usize::MAX);
    assert_eq!(s.kubectl("get pvc -o name").stdout, "");
    assert_eq!(s.kubectl("get pods -o name").stdout, "");
}
