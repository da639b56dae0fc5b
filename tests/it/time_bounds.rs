//! Time bounds: a playground tab left open for a simulated day must not grow without limit. The
//! trace keeps at most its capacity (and counts what it dropped), the API server's watch history
//! covers a fixed window, Events expire after an hour, and the world's own bookkeeping (queued
//! events, the Event recorder, informer caches, container runtimes) stays proportional to the
//! cluster, not to how long it has run. Measured in entries, not bytes: entry counts are
//! deterministic, byte counts are not.

use crate::bounds;

use bounds::{assert_not_growing, crash_loop_flaky, sizes, with_flaky};
use kubeloop::sim::faults::{Fault, PodTarget};
use kubeloop::sim::machinery::trace::DEFAULT_TRACE_CAPACITY;
use kubeloop::sim::session::Session;

const MIN: u64 = 60_000;
const HOUR: u64 = 60 * MIN;

/// A lesson-sized cluster with churn: three nodes, a five-replica Deployment behind a Service and
/// a PodDisruptionBudget and readiness probes; `bounds::with_flaky` adds a pod that crash-loops for
/// the whole day.
const SCENARIO: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: a-long-day}
spec:
  seed: 11
  nodes: {count: 3, cpu: "4", memory: 8Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  revisionHistoryLimit: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: nginx
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 64Mi}}
        readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 10}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 3, selector: {matchLabels: {app: web}}}
"#;

#[test]
fn a_simulated_day_at_lesson_scale_keeps_every_history_bounded() {
    let mut s = Session::load("day.yaml", &with_flaky(SCENARIO), None).expect("the scenario loads");
    // The flaky Deployment's pod must exist first, and it lives in `default`: a target without
    // a namespace matches nothing (this test once crash-looped nobody without noticing).
    s.advance_to(MIN, usize::MAX);
    crash_loop_flaky(&mut s);
    let mut hourly = Vec::new();
    for hour in 0..24u64 {
        // Every ten minutes a rollout (new pods, a new ReplicaSet), every twenty a deleted pod.
        for tick in 1..=6u64 {
            let t = hour * HOUR + tick * 10 * MIN;
            s.advance_to(t - 5 * MIN, usize::MAX);
            let out = s.kubectl("rollout restart deployment/web");
            assert!(out.ok, "{}", out.stderr);
            s.advance_to(t, usize::MAX);
            if tick % 2 == 0 {
                let deleted = s.inject(Fault::DeletePod {
                    target: PodTarget {
                        selector: Some("app=web".into()),
                        namespace: "default".into(),
                        ..Default::default()
                    },
                });
                assert!(deleted.is_ok(), "a web pod is deleted: {deleted:?}");
            }
        }
        hourly.push(sizes(&s));
    }
    for (h, z) in hourly.iter().enumerate() {
        println!("hour {:>2}: {z:?}", h + 1);
    }
    let trace = s.sim.trace();
    println!(
        "trace: {} kept, {} dropped, next seq {}",
        trace.len(),
        trace.dropped(),
        trace.next_seq()
    );
    assert!(trace.len() <= DEFAULT_TRACE_CAPACITY);
    assert_eq!(
        trace.len() as u64 + trace.dropped(),
        trace.next_seq() - 1,
        "every entry is either kept or counted as dropped"
    );

    // Steady state is reached within a few hours (Events live one hour); from then on nothing may
    // keep growing: the last hour is within a margin of the largest of hours 3 to 6.
    assert_not_growing(&hourly[2..6], &hourly[23..], "after a day");
}
