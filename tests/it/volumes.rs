//! Volumes: the default StorageClass, the PersistentVolume controller's binding and its events,
//! kind's local-path provisioner making a volume on the node the scheduler chose.

use kubeloop::sim::machinery::trace::{EventTrace, TraceKind};
use kubeloop::sim::session::Session;

const CLAIM_AND_POD: &str = r#"apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: db, image: "postgres:17"}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"#;

/// `reason message` of the events about one object, in the order first recorded.
fn events_of(s: &Session, kind: &str, name: &str) -> Vec<String> {
    crate::support::events(s, kind, Some(name))
        .into_iter()
        .map(|(r, m)| format!("{r} {m}"))
        .collect()
}

#[test]
fn a_fresh_cluster_has_kinds_default_storage_class() {
    let mut s = Session::new(1);
    let out = s.kubectl("get storageclass");
    assert_eq!(
        out.stdout,
        "NAME                 PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE\nstandard (default)   rancher.io/local-path   Delete          WaitForFirstConsumer   false                  0s\n"
    );
}

#[test]
fn a_claim_waits_for_its_first_consumer_then_gets_a_local_volume_on_the_pods_node() {
    let mut s = Session::new(1);
    let report = s.apply_text(
        "db.yaml",
        CLAIM_AND_POD.split("---").next().expect("the claim"),
    );
    assert!(report.ok, "{report:?}");
    s.advance_to(20_000, usize::MAX);
    let pending = s.kubectl("get pvc data -o jsonpath={.status.phase},{.spec.storageClassName}");
    assert_eq!(pending.stdout, "Pending,standard");
    assert_eq!(
        events_of(&s, "PersistentVolumeClaim", "data"),
        ["WaitForFirstConsumer waiting for first consumer to be created before binding"]
    );

    let report = s.apply_text("db.yaml", CLAIM_AND_POD);
    assert!(report.ok, "{report:?}");
    s.advance_to(60_000, usize::MAX);
    let node = s.kubectl("get pod db -o jsonpath={.spec.nodeName}").stdout;
    let bound = s.kubectl("get pvc data -o jsonpath={.status.phase},{.spec.volumeName},{.status.capacity.storage}").stdout;
    let parts: Vec<&str> = bound.split(',').collect();
    assert_eq!(parts[0], "Bound", "{bound}");
    assert!(parts[1].starts_with("pvc-"), "{bound}");
    assert_eq!(parts[2], "1Gi");
    let volume = s.kubectl(&format!("get pv {} -o jsonpath={{.status.phase}},{{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}},{{.spec.persistentVolumeReclaimPolicy}}", parts[1])).stdout;
    assert_eq!(volume, format!("Bound,{node},Delete"));
    let events = events_of(&s, "PersistentVolumeClaim", "data");
    let tail: Vec<&str> = events.iter().skip(1).map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
            "Provisioning External provisioner is provisioning volume for claim \"default/data\"",
            &format!("ProvisioningSucceeded Successfully provisioned volume {}", parts[1]),
        ]
    );
}

#[test]
fn a_claim_of_a_class_that_does_not_exist_fails_and_one_without_a_class_waits_for_a_volume() {
    let mut s = Session::new(1);
    let yaml = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: fast}\nspec:\n  storageClassName: fast\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: manual}\nspec:\n  storageClassName: \"\"\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n";
    assert!(s.apply_text("claims.yaml", yaml).ok);
    s.advance_to(5_000, usize::MAX);
    assert_eq!(
        events_of(&s, "PersistentVolumeClaim", "fast"),
        ["ProvisioningFailed storageclass.storage.k8s.io \"fast\" not found"]
    );
    assert_eq!(
        events_of(&s, "PersistentVolumeClaim", "manual"),
        ["FailedBinding no persistent volumes available for this claim and no storage class is set"]
    );
    // A volume made by hand binds the claim that fits it, at the controller's next resync.
    let pv = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: disk-1}\nspec:\n  storageClassName: \"\"\n  capacity: {storage: 5Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /data/disk-1}\n";
    assert!(s.apply_text("pv.yaml", pv).ok);
    s.advance_to(21_000, usize::MAX);
    assert_eq!(
        s.kubectl("get pvc manual -o jsonpath={.status.phase},{.spec.volumeName},{.status.capacity.storage}").stdout,
        "Bound,disk-1,5Gi"
    );
    assert_eq!(
        s.kubectl("get pv disk-1 -o jsonpath={.status.phase},{.spec.claimRef.name}")
            .stdout,
        "Bound,manual"
    );
    // Deleting the claim releases a Retain volume and keeps it.
    assert!(s.kubectl("delete pvc manual").ok);
    s.advance_to(25_000, usize::MAX);
    assert_eq!(
        s.kubectl("get pv disk-1 -o jsonpath={.status.phase}")
            .stdout,
        "Released"
    );
}

#[test]
fn a_pod_waits_in_container_creating_until_its_claim_is_bound() {
    let mut s = Session::new(1);
    assert!(s.apply_text("db.yaml", CLAIM_AND_POD).ok);
    // Scheduled at once; the volume takes the provisioner's time to make.
    s.advance_to(1_500, usize::MAX);
    let waiting = s.kubectl("get pod db --no-headers").stdout;
    assert!(waiting.contains("ContainerCreating"), "{waiting}");
    assert_eq!(
        s.kubectl("get pvc data -o jsonpath={.status.phase}").stdout,
        "Pending"
    );
    s.advance_to(30_000, usize::MAX);
    assert_eq!(
        s.kubectl("get pvc data -o jsonpath={.status.phase}").stdout,
        "Bound"
    );
    assert_eq!(
        s.kubectl("get pod db -o jsonpath={.status.phase}").stdout,
        "Running"
    );
}

#[test]
fn a_bound_local_volume_keeps_its_pods_on_its_node() {
    let mut s = Session::new(1);
    assert!(s.apply_text("db.yaml", CLAIM_AND_POD).ok);
    s.advance_to(30_000, usize::MAX);
    let node = s.kubectl("get pod db -o jsonpath={.spec.nodeName}").stdout;
    assert!(s.kubectl("delete pod db").ok);
    assert!(s.kubectl(&format!("cordon {node}")).ok);
    s.advance_to(90_000, usize::MAX);
    assert!(s.apply_text("db.yaml", CLAIM_AND_POD).ok);
    s.advance_to(100_000, usize::MAX);
    assert_eq!(
        s.kubectl("get pod db -o jsonpath={.status.phase}").stdout,
        "Pending"
    );
    let events = events_of(&s, "Pod", "db");
    let last = events.last().expect("a FailedScheduling event");
    assert_eq!(
        last,
        "FailedScheduling 0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match PersistentVolume's node affinity. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."
    );
    assert!(s.kubectl(&format!("uncordon {node}")).ok);
    s.advance_to(130_000, usize::MAX);
    assert_eq!(
        s.kubectl("get pod db -o jsonpath={.spec.nodeName},{.status.phase}")
            .stdout,
        format!("{node},Running")
    );
}

const EXPANDABLE: &str = r#"apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: expandable}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: grows}
spec:
  storageClassName: expandable
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: user}
spec:
  containers: [{name: db, image: "postgres:17"}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: grows}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: idle}
spec:
  storageClassName: expandable
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"#;

fn resize(s: &mut Session, claim: &str, size: &str) -> (bool, String) {
    let out = s.kubectl(&format!(
        "patch pvc {claim} -p '{{\"spec\":{{\"resources\":{{\"requests\":{{\"storage\":\"{size}\"}}}}}}}}'"
    ));
    (out.ok, format!("{}{}", out.stdout, out.stderr))
}

#[test]
fn a_claim_of_a_class_without_expansion_cannot_grow() {
    let mut s = Session::new(1);
    assert!(s.apply_text("c.yaml", CLAIM_AND_POD).ok);
    s.advance_to(60_000, usize::MAX);
    assert!(s.kubectl("get pvc data").stdout.contains("Bound"));
    let (ok, said) = resize(&mut s, "data", "2Gi");
    assert!(!ok);
    assert_eq!(
        said,
        "Error from server (Forbidden): persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize\n"
    );
}

#[test]
fn a_bound_claim_of_an_expandable_class_may_grow_but_never_shrink_below_its_capacity() {
    let mut s = Session::new(1);
    let r = s.apply_text("c.yaml", EXPANDABLE);
    assert!(r.ok, "{r:?}");
    s.advance_to(60_000, usize::MAX);
    assert!(s.kubectl("get pvc grows").stdout.contains("Bound"));
    let (ok, said) = resize(&mut s, "grows", "2Gi");
    assert!(ok, "{said}");
    let (ok, said) = resize(&mut s, "grows", "500Mi");
    assert!(!ok);
    assert_eq!(
        said,
        "The PersistentVolumeClaim \"grows\" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity\n"
    );
    // The claim nobody uses waits for its first consumer, unbound: it cannot be expanded.
    let (ok, said) = resize(&mut s, "idle", "2Gi");
    assert!(!ok);
    assert_eq!(
        said,
        "Error from server (Forbidden): persistentvolumeclaims \"idle\" is forbidden: Only bound persistent volume claims can be expanded\n"
    );
}

/// Four nodes over two zones (node-1, node-3 in zone-a; node-2, node-4 in zone-b), the zonal disk
/// driver's class, and a pod on one of its disks.
const ZONAL: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: zonal}
spec:
  nodes: {count: 4, zones: [zone-a, zone-b]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: disk.csi.kubeloop.dev
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: disk}
spec:
  storageClassName: zonal
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: db, image: "postgres:17"}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: disk}}]
"#;

fn zonal() -> Session {
    let mut s = Session::load("zonal.yaml", ZONAL, Some(1)).expect("loads");
    s.advance_to(60_000, usize::MAX);
    s
}

fn jsonpath(s: &mut Session, what: &str, path: &str) -> String {
    let out = s.kubectl(&format!("get {what} -o jsonpath={path}"));
    assert!(out.ok, "{}", out.stderr);
    out.stdout
}

#[test]
fn nodes_spread_over_the_scenarios_zones_in_turn() {
    let mut s = zonal();
    let zones = s
        .kubectl("get nodes -L topology.kubernetes.io/zone --no-headers")
        .stdout;
    let zones: Vec<(String, String)> = zones
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[w.len() - 1].to_string())
        })
        .collect();
    assert_eq!(
        zones,
        [
            ("node-1".into(), "zone-a".into()),
            ("node-2".into(), "zone-b".into()),
            ("node-3".into(), "zone-a".into()),
            ("node-4".into(), "zone-b".into())
        ]
    );
}

#[test]
fn a_zonal_disk_is_made_in_its_first_consumers_zone_and_reachable_from_that_zone_only() {
    let mut s = zonal();
    let node = jsonpath(&mut s, "pod db", "{.spec.nodeName}");
    let zone = jsonpath(
        &mut s,
        &format!("node {node}"),
        "{.metadata.labels.topology\\.kubernetes\\.io/zone}",
    );
    let volume = jsonpath(&mut s, "pvc disk", "{.spec.volumeName}");
    let pv = jsonpath(
        &mut s,
        &format!("pv {volume}"),
        "{.spec.csi.driver},{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key},{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}",
    );
    assert_eq!(
        pv,
        format!("disk.csi.kubeloop.dev,topology.kubernetes.io/zone,{zone}")
    );
    assert_eq!(
        events_of(&s, "PersistentVolumeClaim", "disk")
            .last()
            .map(String::as_str),
        Some(format!("ProvisioningSucceeded Successfully provisioned volume {volume}").as_str())
    );

    // A second pod of the disk pinned to a node of the other zone cannot go there.
    let other = if zone == "zone-a" { "node-2" } else { "node-1" };
    let pinned = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: elsewhere}}\nspec:\n  nodeSelector: {{kubernetes.io/hostname: {other}}}\n  containers: [{{name: c, image: \"busybox:1.36\", command: [sleep, infinity]}}]\n  volumes: [{{name: data, persistentVolumeClaim: {{claimName: disk}}}}]\n"
    );
    assert!(s.apply_text("elsewhere.yaml", &pinned).ok);
    s.advance_to(70_000, usize::MAX);
    let failed = events_of(&s, "Pod", "elsewhere");
    assert!(
        failed.iter().any(
            |e| e.starts_with("FailedScheduling 0/4 nodes are available:")
                && e.contains("1 node(s) didn't match PersistentVolume's node affinity")
        ),
        "{failed:?}"
    );
}

#[test]
fn a_volume_labelled_with_a_zone_keeps_its_pods_in_that_zone() {
    let mut s = Session::load(
        "zoned.yaml",
        r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: zoned}
spec:
  nodes: {count: 2, zones: [zone-a, zone-b]}
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: old-disk
  labels: {topology.kubernetes.io/zone: zone-b}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  hostPath: {path: /srv/old-disk}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: old}
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: reader}
spec:
  nodeSelector: {kubernetes.io/hostname: node-1}
  containers: [{name: c, image: "busybox:1.36", command: [sleep, infinity]}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: old}}]
"#,
        Some(1),
    )
    .expect("loads");
    s.advance_to(40_000, usize::MAX);
    assert_eq!(jsonpath(&mut s, "pvc old", "{.status.phase}"), "Bound");
    let failed = events_of(&s, "Pod", "reader");
    assert!(
        failed
            .iter()
            .any(|e| e.contains("1 node(s) had no available volume zone")),
        "{failed:?}"
    );
}

#[test]
fn a_grown_claim_is_resized_by_the_driver_then_online_by_the_kubelet_over_simulated_time() {
    let mut s = zonal();
    let volume = jsonpath(&mut s, "pvc disk", "{.spec.volumeName}");
    let node = jsonpath(&mut s, "pod db", "{.spec.nodeName}");
    let (ok, said) = resize(&mut s, "disk", "5Gi");
    assert!(ok, "{said}");
    let t = s.sim.now();
    s.advance_to(t + 1_000, usize::MAX);
    assert_eq!(
        jsonpath(
            &mut s,
            "pvc disk",
            "{.status.capacity.storage},{.status.allocatedResources.storage},{.status.allocatedResourceStatuses.storage},{.status.conditions[0].type}"
        ),
        "1Gi,5Gi,ControllerResizeInProgress,Resizing"
    );
    s.advance_to(t + 5_500, usize::MAX);
    assert_eq!(
        jsonpath(
            &mut s,
            "pvc disk",
            "{.status.capacity.storage},{.status.allocatedResourceStatuses.storage},{.status.conditions[0].type}"
        ),
        "1Gi,NodeResizePending,FileSystemResizePending"
    );
    assert_eq!(
        jsonpath(&mut s, &format!("pv {volume}"), "{.spec.capacity.storage}"),
        "5Gi"
    );
    s.advance_to(t + 10_000, usize::MAX);
    assert_eq!(
        jsonpath(
            &mut s,
            "pvc disk",
            "{.status.capacity.storage},{.status.allocatedResourceStatuses},{.status.conditions}"
        ),
        "5Gi,,"
    );
    let events: Vec<String> = events_of(&s, "PersistentVolumeClaim", "disk")
        .into_iter()
        .skip_while(|e| !e.starts_with("Resizing"))
        .collect();
    assert_eq!(
        events,
        [
            format!("Resizing External resizer is resizing volume {volume}"),
            "FileSystemResizeRequired Require file system resize of volume on node".into(),
            format!("FileSystemResizeSuccessful MountVolume.NodeExpandVolume succeeded for volume \"{volume}\" {node}"),
        ]
    );
    // The pod never restarted: the filesystem grew online.
    assert_eq!(
        jsonpath(
            &mut s,
            "pod db",
            "{.status.containerStatuses[0].restartCount}"
        ),
        "0"
    );
}

#[test]
fn a_claim_no_pod_mounts_waits_for_a_node_to_grow_its_filesystem() {
    let mut s = zonal();
    assert!(s.kubectl("delete pod db").ok);
    let t = s.sim.now();
    s.advance_to(t + 40_000, usize::MAX);
    let (ok, said) = resize(&mut s, "disk", "3Gi");
    assert!(ok, "{said}");
    s.advance_to(t + 80_000, usize::MAX);
    assert_eq!(
        jsonpath(
            &mut s,
            "pvc disk",
            "{.status.capacity.storage},{.status.allocatedResourceStatuses.storage},{.status.conditions[0].message}"
        ),
        "1Gi,NodeResizePending,Waiting for user to (re-)start a pod to finish file system resize of volume on node."
    );
    assert!(s.apply_text("zonal.yaml", ZONAL).ok);
    s.advance_to(t + 120_000, usize::MAX);
    assert_eq!(
        jsonpath(&mut s, "pvc disk", "{.status.capacity.storage}"),
        "3Gi"
    );
}

#[test]
fn a_refused_expansion_is_retried_with_back_off_until_the_claim_grows() {
    let mut s = zonal();
    s.inject(
        serde_json::from_str(r#"{"type":"FailVolumeExpansion","storageClass":"zonal","count":2}"#)
            .expect("fault"),
    )
    .expect("injected");
    let (ok, said) = resize(&mut s, "disk", "2Gi");
    assert!(ok, "{said}");
    let t = s.sim.now();
    s.advance_to(t + 4_500, usize::MAX);
    assert_eq!(
        jsonpath(
            &mut s,
            "pvc disk",
            "{.status.allocatedResourceStatuses.storage},{.status.conditions[0].type}"
        ),
        "ControllerResizeFailed,ControllerResizeError"
    );
    s.advance_to(t + 60_000, usize::MAX);
    assert_eq!(
        jsonpath(&mut s, "pvc disk", "{.status.capacity.storage}"),
        "2Gi"
    );
    let failures = events_of(&s, "PersistentVolumeClaim", "disk")
        .into_iter()
        .filter(|e| e.starts_with("VolumeResizeFailed"))
        .count();
    // The recorder aggregates repeats into one Event (count 2).
    assert_eq!(failures, 1);
    let count = s
        .sim
        .api()
        .list(kubeloop::sim::api::types::Kind::Event)
        .filter_map(|o| o.as_event())
        .find(|e| e.reason == "VolumeResizeFailed")
        .map(|e| e.count);
    assert_eq!(count, Some(2));
}

#[test]
fn a_refused_volume_is_provisioned_again_after_the_provisioners_back_off() {
    let mut s = Session::new(1);
    s.inject(
        serde_json::from_str(r#"{"type":"FailVolumeProvisioning","count":1}"#).expect("fault"),
    )
    .expect("injected");
    assert!(s.apply_text("c.yaml", CLAIM_AND_POD).ok);
    s.advance_to(60_000, usize::MAX);
    assert_eq!(jsonpath(&mut s, "pvc data", "{.status.phase}"), "Bound");
    let events = events_of(&s, "PersistentVolumeClaim", "data");
    assert!(
        events.iter().any(|e| e.starts_with(
            "ProvisioningFailed failed to provision volume with StorageClass \"standard\": "
        )),
        "{events:?}"
    );
    assert!(
        events
            .last()
            .is_some_and(|e| e.starts_with("ProvisioningSucceeded")),
        "{events:?}"
    );
}

#[test]
fn a_storage_fault_names_a_class_that_exists() {
    let mut s = Session::new(1);
    let err = s
        .inject(
            serde_json::from_str(r#"{"type":"FailVolumeExpansion","storageClass":"fast"}"#)
                .expect("fault"),
        )
        .expect_err("refused");
    assert_eq!(err, "storageclasses.storage.k8s.io \"fast\" not found");
}

#[test]
fn a_claim_in_use_stays_terminating_until_its_pod_is_gone_then_its_volume_goes_too() {
    let mut s = Session::new(1);
    assert!(s.apply_text("c.yaml", CLAIM_AND_POD).ok);
    s.advance_to(60_000, usize::MAX);
    let volume = jsonpath(&mut s, "pvc data", "{.spec.volumeName}");
    assert_eq!(
        jsonpath(&mut s, "pvc data", "{.metadata.finalizers}"),
        "[\"kubernetes.io/pvc-protection\"]"
    );
    assert_eq!(
        jsonpath(&mut s, &format!("pv {volume}"), "{.metadata.finalizers}"),
        "[\"kubernetes.io/pv-protection\"]"
    );
    let out = s.kubectl("delete pvc data --wait=false");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(90_000, usize::MAX);
    let get = s.kubectl("get pvc data --no-headers").stdout;
    assert!(get.starts_with("data   Terminating"), "{get}");
    // A new pod of the claim is refused by the scheduler's PreFilter.
    assert!(s
        .apply_text(
            "late.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: late}\nspec:\n  containers: [{name: c, image: \"busybox:1.36\", command: [sleep, infinity]}]\n  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n"
        )
        .ok);
    s.advance_to(95_000, usize::MAX);
    let late = events_of(&s, "Pod", "late");
    assert!(
        late.iter().any(|e| e == "FailedScheduling 0/3 nodes are available: persistentvolumeclaim \"data\" is being deleted. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."),
        "{late:?}"
    );
    assert!(s.kubectl("delete pod db late").ok);
    s.advance_to(150_000, usize::MAX);
    let gone = s.kubectl(&format!("get pvc,pv data {volume}"));
    assert!(!gone.ok);
    let out = s.kubectl("get pvc");
    assert_eq!(out.stdout.trim(), "", "{}", out.stderr);
    let out = s.kubectl("get pv");
    assert_eq!(out.stdout.trim(), "", "{}", out.stderr);
}

#[test]
fn describe_pvc_shows_kubectls_claim_sections_with_who_uses_it_and_the_resize_condition() {
    let mut s = zonal();
    let (ok, said) = resize(&mut s, "disk", "5Gi");
    assert!(ok, "{said}");
    let t = s.sim.now();
    s.advance_to(t + 5_500, usize::MAX);
    let out = s.kubectl("describe pvc disk");
    assert!(out.ok, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    for want in [
        "StorageClass:  zonal",
        "Status:        Bound",
        "Finalizers:    [kubernetes.io/pvc-protection]",
        "Capacity:      1Gi",
        "Access Modes:  RWO",
        "VolumeMode:    Filesystem",
        "Used By:       db",
        "Conditions:",
    ] {
        assert!(lines.contains(&want), "{want:?} in\n{}", out.stdout);
    }
    assert!(
        lines.iter().any(|l| l.starts_with("  FileSystemResizePending   True    Mon, 01 Jan 0001 00:00:00 +0000   ")
            && l.ends_with("Waiting for user to (re-)start a pod to finish file system resize of volume on node.")),
        "{}",
        out.stdout
    );
}

/// A pod on the zonal disk `disk`, pinned to `node`.
fn disk_pod(name: &str, node: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  nodeSelector: {{kubernetes.io/hostname: {node}}}\n  containers: [{{name: c, image: \"busybox:1.36\", command: [sleep, infinity]}}]\n  volumes: [{{name: data, persistentVolumeClaim: {{claimName: disk}}}}]\n"
    )
}

/// The node of zone-a or zone-b that `node` is not, in the same zone.
fn zone_mate(node: &str) -> &'static str {
    match node {
        "node-1" => "node-3",
        "node-3" => "node-1",
        "node-2" => "node-4",
        _ => "node-2",
    }
}

/// The nodes the disk's VolumeAttachments name, with whether each is attached.
fn attachments(s: &mut Session) -> String {
    jsonpath(
        s,
        "volumeattachments",
        "'{range .items[*]}{.spec.nodeName}={.status.attached},{end}'",
    )
    .trim_end_matches(',')
    .to_string()
}

#[test]
fn a_disk_is_attached_to_its_pods_node_before_the_pod_starts() {
    let mut s = zonal();
    let node = jsonpath(&mut s, "pod db", "{.spec.nodeName}");
    let volume = jsonpath(&mut s, "pvc disk", "{.spec.volumeName}");
    let handle = jsonpath(&mut s, &format!("pv {volume}"), "{.spec.csi.volumeHandle}");
    let unique = format!("kubernetes.io/csi/disk.csi.kubeloop.dev^{handle}");
    assert_eq!(attachments(&mut s), format!("{node}=true"));
    let va = jsonpath(
        &mut s,
        "volumeattachments",
        "{.items[0].metadata.name},{.items[0].spec.attacher},{.items[0].spec.source.persistentVolumeName},{.items[0].metadata.finalizers[0]}",
    );
    let name = va.split(',').next().unwrap_or_default().to_string();
    assert!(
        name.len() == 68 && name.starts_with("csi-"),
        "the CSI plugin names it csi-<sha256>: {name}"
    );
    assert_eq!(
        va,
        format!("{name},disk.csi.kubeloop.dev,{volume},external-attacher/disk-csi-kubeloop-dev")
    );
    let table = s.kubectl("get volumeattachments").stdout;
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    );
    assert_eq!(
        lines[1][..5],
        [
            name.as_str(),
            "disk.csi.kubeloop.dev",
            volume.as_str(),
            node.as_str(),
            "true"
        ]
    );
    assert_eq!(
        jsonpath(
            &mut s,
            &format!("node {node}"),
            "{.status.volumesAttached[0].name},{.status.volumesInUse[0]}"
        ),
        format!("{unique},{unique}")
    );
    // In the order recorded: the kubelet pulls the image only once the disk is attached.
    let events: Vec<String> = s
        .sim
        .trace()
        .entries()
        .filter_map(|e| match &e.kind {
            TraceKind::Event(tr) if tr.object == "Pod/default/db" => {
                let EventTrace {
                    reason, message, ..
                } = &**tr;
                Some(format!("{reason} {message}"))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        events[..3],
        [
            format!("Scheduled Successfully assigned default/db to {node}"),
            format!(
                "SuccessfulAttachVolume AttachVolume.Attach succeeded for volume \"{volume}\" "
            ),
            "Pulling Pulling image \"postgres:17\"".to_string(),
        ]
    );
    // Another node's kubelet has nothing of it.
    assert_eq!(
        jsonpath(
            &mut s,
            &format!("node {}", zone_mate(&node)),
            "{.status.volumesAttached}{.status.volumesInUse}"
        ),
        ""
    );
}

#[test]
fn a_disk_another_node_holds_gets_the_multi_attach_error_until_that_node_lets_it_go() {
    let mut s = zonal();
    let node = jsonpath(&mut s, "pod db", "{.spec.nodeName}");
    let volume = jsonpath(&mut s, "pvc disk", "{.spec.volumeName}");
    let mate = zone_mate(&node);
    assert!(s.apply_text("second.yaml", &disk_pod("second", mate)).ok);
    s.advance_to(80_000, usize::MAX);
    assert_eq!(
        events_of(&s, "Pod", "second")
            .into_iter()
            .filter(|e| e.starts_with("FailedAttachVolume"))
            .collect::<Vec<_>>(),
        [format!(
            "FailedAttachVolume Multi-Attach error for volume \"{volume}\" Volume is already used by pod(s) db"
        )],
        "reported once"
    );
    assert_eq!(
        jsonpath(
            &mut s,
            "pod second",
            "{.status.containerStatuses[0].state.waiting.reason}"
        ),
        "ContainerCreating"
    );
    assert_eq!(attachments(&mut s), format!("{node}=true"));

    // Once db is gone and its kubelet no longer reports the disk in use, it moves.
    assert!(s.kubectl("delete pod db").ok);
    let t = s.sim.now();
    s.advance_to(t + 30_000, usize::MAX);
    assert_eq!(attachments(&mut s), format!("{mate}=true"));
    assert_eq!(jsonpath(&mut s, "pod second", "{.status.phase}"), "Running");
    assert!(events_of(&s, "Pod", "second").contains(&format!(
        "SuccessfulAttachVolume AttachVolume.Attach succeeded for volume \"{volume}\" "
    )));
}

#[test]
fn a_disk_on_a_dead_node_is_force_detached_only_after_six_minutes_unless_the_node_is_out_of_service(
) {
    for out_of_service in [false, true] {
        let mut s = zonal();
        let node = jsonpath(&mut s, "pod db", "{.spec.nodeName}");
        let volume = jsonpath(&mut s, "pvc disk", "{.spec.volumeName}");
        let mate = zone_mate(&node);
        s.inject(
            serde_json::from_str(&format!(r#"{{"type":"NodeDown","node":"{node}"}}"#))
                .expect("fault"),
        )
        .expect("injected");
        s.advance_to(120_000, usize::MAX);
        if out_of_service {
            let taint = s.kubectl(&format!(
                "taint nodes {node} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
            ));
            assert!(taint.ok, "{}", taint.stderr);
        }
        assert!(s.kubectl("delete pod db --force --grace-period=0").ok);
        assert!(s.apply_text("second.yaml", &disk_pod("second", mate)).ok);
        let t = s.sim.now();
        s.advance_to(t + 30_000, usize::MAX);
        if out_of_service {
            assert_eq!(attachments(&mut s), format!("{mate}=true"));
            continue;
        }
        assert_eq!(
            events_of(&s, "Pod", "second")
                .into_iter()
                .filter(|e| e.starts_with("FailedAttachVolume"))
                .collect::<Vec<_>>(),
            [format!(
                "FailedAttachVolume Multi-Attach error for volume \"{volume}\" Volume is already exclusively attached to one node and can't be attached to another"
            )]
        );
        // The dead kubelet last reported the disk in use: the controller waits 6 minutes.
        s.advance_to(t + 355_000, usize::MAX);
        assert_eq!(attachments(&mut s), format!("{node}=true"));
        s.advance_to(t + 375_000, usize::MAX);
        assert_eq!(attachments(&mut s), format!("{mate}=true"));
        assert_eq!(jsonpath(&mut s, "pod second", "{.status.phase}"), "Running");
    }
}

#[test]
fn a_disk_that_falls_off_its_node_is_found_out_and_attached_again_by_the_driver() {
    let mut s = zonal();
    let volume = jsonpath(&mut s, "pvc disk", "{.spec.volumeName}");
    let said = s
        .inject(serde_json::from_str(r#"{"type":"DetachVolume","claim":"disk"}"#).expect("fault"))
        .expect("injected");
    assert!(said.starts_with("disk disk-"), "{said}");
    let t = s.sim.now();
    // The external-attacher checks the storage system every 60 s.
    s.advance_to(t + 62_000, usize::MAX);
    let diffs: Vec<String> = s
        .sim
        .trace()
        .entries()
        .filter_map(|e| match &e.kind {
            TraceKind::Reconcile(tr) if &*tr.component == "csi-disk-controller" && e.t > t => tr
                .record
                .as_ref()
                .map(|r| format!("{} | {}", r.observed, r.diff)),
            _ => None,
        })
        .collect();
    let found = diffs
        .iter()
        .position(|d| d.starts_with("ListVolumes: not attached: disk-"))
        .unwrap_or_else(|| panic!("{diffs:?}"));
    assert!(
        diffs[found..]
            .iter()
            .any(|d| d.ends_with(": mark attached")),
        "{diffs:?}"
    );
    let _ = &volume;
    assert!(attachments(&mut s).ends_with("=true"));
    assert_eq!(
        jsonpath(
            &mut s,
            "pod db",
            "{.status.containerStatuses[0].restartCount}"
        ),
        "0"
    );

    // What it cannot aim at is refused with the reason.
    let refused = |s: &mut Session, fault: &str| {
        s.inject(serde_json::from_str(fault).expect("fault"))
            .expect_err("refused")
    };
    assert_eq!(
        refused(&mut s, r#"{"type":"DetachVolume","claim":"nope"}"#),
        "persistentvolumeclaims \"nope\" not found"
    );
    let local = CLAIM_AND_POD.replace("name: db}", "name: local-db}");
    assert!(s.apply_text("local.yaml", &local).ok);
    assert_eq!(
        refused(&mut s, r#"{"type":"DetachVolume","claim":"data"}"#),
        "persistentvolumeclaim \"data\" is not bound to a volume yet"
    );
    s.advance_to(t + 80_000, usize::MAX);
    let said = refused(&mut s, r#"{"type":"DetachVolume","claim":"data"}"#);
    assert!(
        said.contains("is not a disk that attaches to a node"),
        "{said}"
    );
}
