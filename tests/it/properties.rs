//! Eventually stable reconciliation (Anvil's ESR), checked on random specs, edits and pod deletions:
//! once the desired state stops changing, every Deployment converges and stays converged.

use std::collections::BTreeMap;

use kubeloop::sim::api::types::{Kind, Object};
use kubeloop::sim::faults::{Fault, PodTarget};
use kubeloop::sim::machinery::trace::{ApiTrace, TraceKind};
use kubeloop::sim::session::Session;
use proptest::prelude::*;

const SECOND: u64 = 1000;
/// After the last change, convergence must happen within this much simulated time.
const CONVERGENCE_BOUND: u64 = 5 * 60 * SECOND;

#[derive(Clone, Debug)]
struct Spec {
    replicas: u32,
    max_surge: String,
    max_unavailable: String,
    recreate: bool,
    min_ready_seconds: u32,
}

#[derive(Clone, Debug)]
enum Change {
    Scale(u32),
    Image(u32),
    DeletePod(usize),
}

fn spec_strategy() -> impl Strategy<Value = Spec> {
    (
        0u32..7,
        prop::sample::select(vec!["25%", "1", "0", "50%", "3"]),
        prop::sample::select(vec!["25%", "1", "0", "2"]),
        any::<bool>(),
        prop::sample::select(vec![0u32, 0, 5]),
    )
        .prop_map(|(replicas, s, u, recreate, min_ready_seconds)| {
            // Both 0 is invalid in Kubernetes; keep the generated specs valid.
            let (s, u) = if s == "0" && u == "0" {
                ("1", "0")
            } else {
                (s, u)
            };
            Spec {
                replicas,
                max_surge: s.into(),
                max_unavailable: u.into(),
                recreate,
                min_ready_seconds,
            }
        })
}

fn change_strategy() -> impl Strategy<Value = (u64, Change)> {
    (
        1u64..90,
        prop_oneof![
            (0u32..7).prop_map(Change::Scale),
            (1u32..4).prop_map(Change::Image),
            (0usize..8).prop_map(Change::DeletePod)
        ],
    )
}

fn quote(v: &str) -> String {
    if v.ends_with('%') {
        format!("\"{v}\"")
    } else {
        v.to_string()
    }
}

fn manifest(spec: &Spec, image: u32, replicas: u32) -> String {
    let strategy = if spec.recreate {
        "  strategy: {type: Recreate}\n".to_string()
    } else {
        format!(
            "  strategy:\n    type: RollingUpdate\n    rollingUpdate: {{maxSurge: {}, maxUnavailable: {}}}\n",
            quote(&spec.max_surge),
            quote(&spec.max_unavailable)
        )
    };
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  minReadySeconds: {}\n{strategy}  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.{image}\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n",
        spec.min_ready_seconds
    )
}

/// Invariants that must hold after every step, faults or not.
fn check_invariants(s: &Session) -> Result<(), String> {
    for o in s.sim.api().list(Kind::Pod) {
        let controllers = o
            .meta()
            .owner_references
            .iter()
            .filter(|r| r.controller == Some(true))
            .count();
        if controllers > 1 {
            return Err(format!(
                "pod {} has {controllers} controllers",
                o.meta().name
            ));
        }
    }
    for o in s
        .sim
        .api()
        .list(Kind::Deployment)
        .chain(s.sim.api().list(Kind::ReplicaSet))
    {
        let observed = match &**o {
            Object::Deployment(d) => d.status.observed_generation,
            Object::ReplicaSet(r) => r.status.observed_generation,
            _ => 0,
        };
        if observed > o.meta().generation {
            return Err(format!(
                "{} status is ahead of its spec generation",
                o.key()
            ));
        }
    }
    Ok(())
}

fn converged(s: &Session) -> Result<(), String> {
    for o in s.sim.api().list(Kind::Deployment) {
        let d = o.as_deployment().expect("deployment");
        let want = d.spec.replicas.unwrap_or(1);
        let st = &d.status;
        if !(st.updated_replicas == want
            && st.ready_replicas == want
            && st.available_replicas == want
            && st.replicas == want)
        {
            return Err(format!("deployment status {st:?} vs replicas {want}"));
        }
        let active: Vec<_> = s
            .sim
            .api()
            .list(Kind::ReplicaSet)
            .filter(|r| {
                r.as_replica_set()
                    .is_some_and(|r| r.spec.replicas.unwrap_or(0) > 0)
            })
            .collect();
        if want > 0 && active.len() != 1 {
            return Err(format!("{} ReplicaSets have replicas > 0", active.len()));
        }
        let pods = s
            .sim
            .api()
            .list(Kind::Pod)
            .filter(|p| {
                p.as_pod()
                    .is_some_and(|p| p.metadata.deletion_timestamp.is_none())
            })
            .count();
        if pods != want as usize {
            return Err(format!("{pods} live pods for {want} replicas"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn deployments_converge_and_stay_converged_after_the_last_change(
        seed in 0u64..1_000_000,
        spec in spec_strategy(),
        changes in prop::collection::vec(change_strategy(), 0..6),
    ) {
        let mut s = Session::new(seed);
        let mut replicas = spec.replicas;
        let mut image = 0;
        let report = s.apply_text("web.yaml", &manifest(&spec, image, replicas));
        prop_assert!(report.ok, "{:?}", report.diagnostics);
        let mut t = 0;
        for (gap, change) in changes {
            t += gap * SECOND;
            s.advance_to(t, usize::MAX);
            check_invariants(&s).map_err(TestCaseError::fail)?;
            match change {
                Change::Scale(n) => replicas = n,
                Change::Image(i) => image = i,
                Change::DeletePod(i) => {
                    let pods: Vec<String> = s.sim.api().list(Kind::Pod).map(|o| o.meta().name.to_string()).collect();
                    if let Some(name) = pods.get(i % pods.len().max(1)) {
                        let _ = s.inject(Fault::DeletePod { target: PodTarget { pod: Some(name.clone()), namespace: "default".into(), ..Default::default() } });
                    }
                    continue;
                }
            }
            let r = s.apply_text("web.yaml", &manifest(&spec, image, replicas));
            prop_assert!(r.ok, "{:?}", r.diagnostics);
        }
        let deadline = t + CONVERGENCE_BOUND;
        let mut at = None;
        while s.sim.now() < deadline {
            let next = s.sim.now() + SECOND;
            s.advance_to(next, usize::MAX);
            check_invariants(&s).map_err(TestCaseError::fail)?;
            if converged(&s).is_ok() {
                at = Some(s.sim.now());
                break;
            }
        }
        prop_assert!(at.is_some(), "not converged {}s after the last change: {:?} (seed {seed})", CONVERGENCE_BOUND / SECOND, converged(&s));
        // ... and it stays converged.
        let until = s.sim.now() + 2 * 60 * SECOND;
        while s.sim.now() < until {
            let next = s.sim.now() + 10 * SECOND;
            s.advance_to(next, usize::MAX);
            prop_assert!(converged(&s).is_ok(), "drifted after converging: {:?}", converged(&s));
        }
    }
}

#[test]
fn resource_versions_of_successful_writes_only_grow() {
    let mut s = Session::new(3);
    s.apply_text(
        "web.yaml",
        &manifest(
            &Spec {
                replicas: 4,
                max_surge: "25%".into(),
                max_unavailable: "25%".into(),
                recreate: false,
                min_ready_seconds: 0,
            },
            0,
            4,
        ),
    );
    s.advance_to(120 * SECOND, usize::MAX);
    let mut by_object: BTreeMap<String, u64> = BTreeMap::new();
    let mut global = 0;
    for e in s.sim.trace().entries() {
        if let TraceKind::Api(tr) = &e.kind {
            let ApiTrace {
                resource_version: Some(rv),
                object,
                code,
                ..
            } = &**tr
            else {
                continue;
            };
            if *code < 300 && *rv > global {
                global = *rv;
            }
            let prev = by_object.insert(object.to_string(), *rv).unwrap_or(0);
            assert!(
                *rv >= prev,
                "{object}: resourceVersion went back from {prev} to {rv}"
            );
        }
    }
    assert!(global > 10);
}
