//! Work per step: one simulation event sends at most `API_REQUESTS_PER_STEP` requests, so a big
//! ReplicaSet's burst never holds the page's frame, and splitting it changes nothing else.

use kubeloop::sim::machinery::trace::TraceKind;
use kubeloop::sim::session::Session;
use kubeloop::sim::world::API_REQUESTS_PER_STEP;

/// 300 replicas: the ReplicaSet's first pass creates them all (slow-start batches of 1, 2, 4 …
/// 128 and the 45 left, under upstream's `burstReplicas` of 500), more than one step sends.
const BURST: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: burst}
spec:
  seed: 7
  nodes: {count: 10, cpu: "64", memory: 256Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 300
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources: {requests: {cpu: 10m, memory: 16Mi}}
"#;

fn is_replica_set_create(kind: &TraceKind) -> bool {
    matches!(kind, TraceKind::Api(tr) if tr.verb == "create" && &*tr.actor == "replicaset-controller")
}

#[test]
fn a_replica_set_burst_goes_out_a_hundred_requests_a_step_with_nothing_in_between() {
    let mut s = Session::load("burst.yaml", BURST, None).expect("the scenario loads");
    // (step number, creates it sent) for every step that sent any.
    let mut creating: Vec<(usize, usize)> = Vec::new();
    let mut step = 0;
    while creating.iter().map(|(_, n)| n).sum::<usize>() < 300 {
        assert!(
            step < 1_000_000,
            "the ReplicaSet never created its 300 pods"
        );
        // `since` takes the last entry seen.
        let before = s.sim.trace().next_seq().saturating_sub(1);
        assert!(s.step(), "the simulation ran out of events");
        step += 1;
        let n = s
            .sim
            .trace()
            .since(before)
            .filter(|e| is_replica_set_create(&e.kind))
            .count();
        if n > 0 {
            creating.push((step, n));
        }
    }
    assert_eq!(API_REQUESTS_PER_STEP, 100);
    assert_eq!(
        creating.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
        [100, 100, 100],
        "one pass's 300 creates, a hundred a step"
    );
    assert!(
        creating.windows(2).all(|w| w[1].0 == w[0].0 + 1),
        "the steps that send them follow one another: {creating:?}"
    );
    // Between the first create and the last, only the creates and the Events they caused.
    let entries: Vec<_> = s.sim.trace().entries().collect();
    let first = entries
        .iter()
        .position(|e| is_replica_set_create(&e.kind))
        .expect("a create");
    let last = entries
        .iter()
        .rposition(|e| is_replica_set_create(&e.kind))
        .expect("a create");
    for e in &entries[first..=last] {
        assert!(
            is_replica_set_create(&e.kind)
                || matches!(&e.kind, TraceKind::Event(tr) if tr.reason == "SuccessfulCreate"),
            "something else ran in the middle of the burst: {:?}",
            e.kind
        );
    }
}

#[test]
fn a_burst_sent_over_several_steps_leaves_the_trace_one_step_made() {
    let mut s = Session::load("burst.yaml", BURST, None).expect("the scenario loads");
    s.advance_to(20_000, usize::MAX);
    // The fingerprint of `kubeloop run burst.yaml --until 20s --trace` as the build before the
    // split (7473abd) wrote it, where one step sent all 300 creates ("27143 f3764b823cf0447b"),
    // re-pinned when a requeue timer that a sooner one had replaced stopped running its key
    // again (session 53): two of the ReplicaSet's passes moved, one a millisecond later, one
    // now run by the watch event that came at the same moment; nothing else changed.
    assert_eq!(s.sim.trace().fingerprint(), "27143 a1f23b4a0e282e00");
}
