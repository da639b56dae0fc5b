//! Memory bounds under churn: a cluster rolled out over and over for simulated hours holds no
//! more than its caps allow — at most `WATCH_HISTORY_CAPACITY` watch changes, `MAX_EVENTS`
//! Events, the trace's capacity — and everything else (objects, informer caches, the Event
//! recorder, queued work, sandboxes) stays proportional to the cluster, so the second hour holds
//! what the first did. Counted in entries, not bytes: entry counts are deterministic, byte counts
//! are not (`kubeloop bench --memory` measures the bytes, at 10,000 pods).

use crate::bounds;

use bounds::{assert_not_growing, crash_loop_flaky, sizes, with_flaky, Sizes};
use kubeloop::sim::api::apiserver::WATCH_HISTORY_CAPACITY;
use kubeloop::sim::api::types::Kind;
use kubeloop::sim::machinery::controller::{ComponentId, EventRecord};
use kubeloop::sim::machinery::recorder::{EVENT_EXPIRY_BATCH, MAX_EVENTS};
use kubeloop::sim::machinery::trace::DEFAULT_TRACE_CAPACITY;
use kubeloop::sim::session::Session;

const MIN: u64 = 60_000;

/// Ten nodes and a 50-replica Deployment (each rollout replaces every pod, recording some 350
/// Events); `bounds::with_flaky` adds a one-replica Deployment whose pod crash-loops throughout.
const SCENARIO: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: many-rollouts}
spec:
  seed: 7
  nodes: {count: 10, cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 50
  revisionHistoryLimit: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: nginx
        image: nginx:1.27
        resources: {requests: {cpu: 10m, memory: 16Mi}}
"#;

#[test]
fn two_simulated_hours_of_rollouts_and_a_crash_loop_stay_within_the_caps_and_flat() {
    let mut s =
        Session::load("rollouts.yaml", &with_flaky(SCENARIO), None).expect("the scenario loads");
    s.advance_to(2 * MIN, usize::MAX);
    crash_loop_flaky(&mut s);
    // A rollout every ten minutes; a sample one minute into each (the busiest moment).
    let mut samples = Vec::new();
    let mut most = Sizes::default();
    for step in 1..=12u64 {
        let t = 2 * MIN + step * 10 * MIN;
        let out = s.kubectl("rollout restart deployment/web");
        assert!(out.ok, "{}", out.stderr);
        // Watch the caps at a few points inside the rollout, not just at its end.
        for part in 1..=10u64 {
            s.advance_to(t - 10 * MIN + part * MIN, usize::MAX);
            let z = sizes(&s);
            most.trace = most.trace.max(z.trace);
            most.watch_history = most.watch_history.max(z.watch_history);
            most.events = most.events.max(z.events);
            if part == 1 {
                samples.push((s.sim.now() / MIN, z));
            }
        }
    }
    for (minute, z) in &samples {
        println!("minute {minute:>3}: {z:?}");
    }
    println!("most at any sample: {most:?}");
    let trace = s.sim.trace();
    println!(
        "trace: {} kept, {} dropped, next seq {}",
        trace.len(),
        trace.dropped(),
        trace.next_seq()
    );

    assert!(most.watch_history <= WATCH_HISTORY_CAPACITY);
    assert!(most.events <= MAX_EVENTS);
    assert!(most.trace <= DEFAULT_TRACE_CAPACITY);
    let (first_hour, second_hour) = samples.split_at(samples.len() / 2);
    let sizes_of = |part: &[(u64, Sizes)]| part.iter().map(|(_, z)| z.clone()).collect::<Vec<_>>();
    assert_not_growing(
        &sizes_of(first_hour),
        &sizes_of(second_hour),
        "in the second hour",
    );
}

#[test]
fn past_the_event_cap_the_oldest_events_expire_and_the_recorder_forgets_them() {
    let mut s = Session::new(3);
    let node = s
        .sim
        .api()
        .list(Kind::Node)
        .next()
        .expect("the playground has nodes")
        .clone();
    let from = ComponentId::Kubelet(node.meta().name.clone());
    // Distinct reasons: distinct messages with one reason would be aggregated after ten.
    for i in 0..MAX_EVENTS + 2 * EVENT_EXPIRY_BATCH {
        s.advance_to(s.sim.now() + 1, usize::MAX);
        let rec = EventRecord::normal(&node, &format!("Reason{i}"), "a message");
        s.sim.record_event(&from, &rec, None);
        assert!(s.sim.api().count(Kind::Event) <= MAX_EVENTS);
    }
    let reasons: Vec<String> = s
        .sim
        .api()
        .list(Kind::Event)
        .filter_map(|o| o.as_event())
        .map(|e| e.reason.to_string())
        .collect();
    assert!(
        !reasons.iter().any(|r| r == "Reason0"),
        "the oldest went first"
    );
    let newest = format!("Reason{}", MAX_EVENTS + 2 * EVENT_EXPIRY_BATCH - 1);
    assert!(reasons.contains(&newest), "the newest stays");
    // The recorder holds one identity per kept Event plus one similar-event window per reason
    // seen in the last ten minutes (every one of them here, and the nodes' own at boot):
    // without forgetting, the identities alone would be all 6,000.
    let recorded = MAX_EVENTS + 2 * EVENT_EXPIRY_BATCH;
    let kept = s.sim.api().count(Kind::Event);
    assert!(
        s.sim.recorder_len() <= kept + recorded + 64,
        "the recorder forgets expired Events ({} entries for {kept} Events)",
        s.sim.recorder_len()
    );
}
