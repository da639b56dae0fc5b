//! Volumes: the default StorageClass, the PersistentVolume controller's binding and its events,
//! kind's local-path provisioner making a volume on the node the scheduler chose.

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
