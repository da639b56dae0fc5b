// Shared by tests/it/time_bounds.rs and tests/it/memory_bounds.rs: what a long-running playground holds,
// counted in entries (deterministic, unlike bytes), and the check that none of it keeps growing.

use kubeloop::sim::api::types::Kind;
use kubeloop::sim::faults::{Fault, PodTarget};
use kubeloop::sim::session::Session;

/// Everything that could grow with time or with churn, counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sizes {
    pub trace: usize,
    pub watch_history: usize,
    pub events: usize,
    pub objects: usize,
    pub queued: usize,
    pub recorder: usize,
    pub cache_entries: usize,
    pub sandboxes: usize,
}

/// Counts what `s` holds now.
pub fn sizes(s: &Session) -> Sizes {
    let sim = &s.sim;
    Sizes {
        trace: sim.trace().len(),
        watch_history: sim.api().history_len(),
        events: sim.api().count(Kind::Event),
        objects: sim.api().len() - sim.api().count(Kind::Event),
        queued: sim.queued_events(),
        recorder: sim.recorder_len(),
        cache_entries: sim
            .component_ids()
            .iter()
            .filter_map(|id| sim.cache_of(id))
            .map(|c| c.len())
            .sum(),
        sandboxes: sim.machines().values().map(|m| m.runtime.pods.len()).sum(),
    }
}

/// A one-replica Deployment, `flaky`, whose pod [`crash_loop_flaky`] makes crash-loop: restarts,
/// back-off and Events for as long as a test runs.
const FLAKY: &str = r#"---
apiVersion: apps/v1
kind: Deployment
metadata: {name: flaky}
spec:
  replicas: 1
  selector: {matchLabels: {app: flaky}}
  template:
    metadata: {labels: {app: flaky}}
    spec:
      containers: [{name: app, image: "busybox:1.36"}]
"#;

/// `scenario` with the [`FLAKY`] Deployment added.
pub fn with_flaky(scenario: &str) -> String {
    format!("{scenario}{FLAKY}")
}

/// Makes the flaky pod (in `default`) crash-loop from now on. Fails the test if the fault matched
/// nothing: a bounds test that churns nobody proves nothing (its pod must exist by then).
pub fn crash_loop_flaky(s: &mut Session) {
    let selector = "app=flaky";
    let crash = s.inject(Fault::CrashLoop {
        target: PodTarget {
            selector: Some(selector.into()),
            namespace: "default".into(),
            ..Default::default()
        },
        exit_code: 1,
        duration: None,
    });
    assert!(crash.is_ok(), "{selector} crash-loops: {crash:?}");
}

/// Asserts that nothing counted in `later` grew past the largest of `earlier` (plus a quarter and
/// a little slack: churn is bursty). `when` names the two periods in the failure message.
pub fn assert_not_growing(earlier: &[Sizes], later: &[Sizes], when: &str) {
    let check = |name: &str, get: fn(&Sizes) -> usize| {
        let before = earlier.iter().map(get).max().unwrap_or(0);
        let after = later.iter().map(get).max().unwrap_or(0);
        assert!(
            after <= before + before / 4 + 16,
            "{name} kept growing: {after} {when}, at most {before} before"
        );
    };
    check("watch history", |z| z.watch_history);
    check("Events", |z| z.events);
    check("objects", |z| z.objects);
    check("queued events", |z| z.queued);
    check("the Event recorder", |z| z.recorder);
    check("informer caches", |z| z.cache_entries);
    check("container sandboxes", |z| z.sandboxes);
}
