//! Fuzz tests over every door user input comes through: the manifest parser and validator, the
//! Scenario document, kubectl command lines, share links, and random sequences of operations
//! (apply, kubectl, faults, time) against a running session. Everything must come back as a
//! value — an error message or a result — never a panic, and the cluster's invariants must hold
//! after every operation.
//!
//! Inputs are random and mutated: byte flips, truncations, insertions of YAML's sharp edges and
//! splices between the files in `tests/fixtures/` and the built-in lessons, plus structure-aware
//! documents (valid objects with random values at known field paths), which reach validation and
//! the controllers rather than stopping at the YAML parser.
//!
//! Case counts are modest by default (CI has two cores); `FUZZ_CASES=N` runs N cases per target
//! (`make fuzz` does 2,000). A failing case is saved to `proptest-regressions/fuzz.txt` and
//! replayed first on every run; each crash found so far also has a named regression test below.
//! For coverage-guided fuzzing with libFuzzer see `fuzz/README.md`.

use std::sync::OnceLock;

use kubeloop::sim::api::types::Kind;
use kubeloop::sim::api::validation::validate;
use kubeloop::sim::examples;
use kubeloop::sim::faults::Fault;
use kubeloop::sim::input::decode::{decode_manifest_bytes, decode_manifests};
use kubeloop::sim::input::diagnostic::Severity;
use kubeloop::sim::input::yaml;
use kubeloop::sim::kubectl;
use kubeloop::sim::session::Session;
use kubeloop::sim::share::{self, Link, Shared};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Value as Json};

/// Cases per target: `FUZZ_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(default: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/fuzz.txt",
        ))),
        // Shrinking a failing operation sequence replays sessions: keep it bounded.
        max_shrink_iters: 2_000,
        ..ProptestConfig::default()
    }
}

// ------------------------------------------------------------------ corpus

/// The seed files: the manifest fixtures, the small hostile inputs and every built-in lesson.
fn corpus() -> &'static [Vec<u8>] {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut out = Vec::new();
        for dir in ["tests/fixtures/manifests", "tests/fixtures/hostile"] {
            let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            paths.sort();
            for p in paths {
                let Ok(bytes) = std::fs::read(&p) else {
                    continue;
                };
                // The big hostile files are covered by tests/it/hostile_inputs.rs; mutating them
                // here would only make each case slow.
                if bytes.len() <= 8 * 1024 && !p.to_string_lossy().ends_with(".md") {
                    out.push(bytes);
                }
            }
        }
        for (_, text) in examples::ALL {
            out.push(text.as_bytes().to_vec());
        }
        assert!(out.len() > 10, "the fuzz corpus is missing");
        out
    })
}

/// Tokens that sit on YAML's and Kubernetes' sharp edges, for insertions.
const DICTIONARY: &[&str] = &[
    ": ",
    "- ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a ",
    "*a",
    "<<: *a",
    "!!binary ",
    "!!str ",
    "!custom ",
    "---\n",
    "...\n",
    "\n  ",
    "\n- ",
    "'",
    "\"",
    "# ",
    "|\n",
    ">-\n",
    "? ",
    "%YAML 1.2\n",
    "1e6",
    "1e400",
    "-1",
    "99999999999999999999",
    "2147483648",
    "9223372036854775807",
    "0x10",
    "0o17",
    ".inf",
    "-.inf",
    ".nan",
    "~",
    "null",
    "true",
    "yes",
    "\u{0}",
    "\u{1b}[2J",
    "\u{feff}",
    "é",
    "\t",
    "\r\n",
    "<script>alert(1)</script>",
    "replicas: 1000000",
    "replicas: -5",
    "kind: List\nitems:\n",
    "kind: Pod",
    "kind: Scenario",
    "apiVersion: kubeloop.dev/v1alpha1",
    "terminationGracePeriodSeconds: 9223372036854775807",
    "tolerationSeconds: 9223372036854775807",
    "periodSeconds: 2147483647",
    "cpu: 1e3",
    "memory: 1.5Gi",
    "cpu: 500m",
];

#[derive(Clone, Debug)]
enum Mutation {
    Flip {
        at: usize,
        bit: u8,
    },
    Truncate {
        at: usize,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Insert {
        at: usize,
        token: usize,
    },
    Splice {
        at: usize,
        from: usize,
        start: usize,
        len: usize,
    },
    Duplicate {
        at: usize,
        len: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        3 => (at, 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        1 => at.prop_map(|at| Mutation::Truncate { at }),
        2 => (at, 1usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        4 => (at, any::<usize>()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        2 => (at, any::<usize>(), any::<usize>(), 1usize..400)
            .prop_map(|(at, from, start, len)| Mutation::Splice { at, from, start, len }),
        1 => (at, 1usize..200).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
    ]
}

/// Applies mutations to `base`; positions wrap around the current length.
fn mutate(base: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut b = base.to_vec();
    let pos = |at: usize, len: usize| if len == 0 { 0 } else { at % (len + 1) };
    for m in mutations {
        match *m {
            Mutation::Flip { at, bit } => {
                if !b.is_empty() {
                    let i = at % b.len();
                    b[i] ^= 1 << bit;
                }
            }
            Mutation::Truncate { at } => {
                let i = pos(at, b.len());
                b.truncate(i);
            }
            Mutation::Delete { at, len } => {
                let i = pos(at, b.len());
                let end = (i + len).min(b.len());
                b.drain(i..end);
            }
            Mutation::Insert { at, token } => {
                let i = pos(at, b.len());
                let t = DICTIONARY[token % DICTIONARY.len()].as_bytes();
                b.splice(i..i, t.iter().copied());
            }
            Mutation::Splice {
                at,
                from,
                start,
                len,
            } => {
                let src = &corpus()[from % corpus().len()];
                let s = pos(start, src.len());
                let e = (s + len).min(src.len());
                let i = pos(at, b.len());
                b.splice(i..i, src[s..e].iter().copied());
            }
            Mutation::Duplicate { at, len } => {
                let i = pos(at, b.len());
                let e = (i + len).min(b.len());
                let piece = b[i..e].to_vec();
                b.splice(e..e, piece);
            }
        }
    }
    b
}

// ------------------------------------------------------------------ structure-aware documents

/// Scalars chosen to hit limits, overflows and type confusion.
fn scalar() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        prop_oneof![
            Just(0i64),
            Just(-1),
            Just(1),
            Just(3),
            Just(i64::from(i32::MAX)),
            Just(i64::from(i32::MAX) + 1),
            Just(i64::MAX),
            Just(i64::MIN),
            Just(20_000),
            Just(20_001),
            Just(1_000_000),
            -100i64..100,
        ]
        .prop_map(|n| json!(n)),
        Just(json!(u64::MAX)),
        prop_oneof![Just(1e6), Just(1.5), Just(-0.5), Just(1e300), Just(0.1)]
            .prop_map(|f| json!(f)),
        prop_oneof![
            Just("web"),
            Just("nginx:1.27"),
            Just("app"),
            Just(""),
            Just("25%"),
            Just("200%"),
            Just("-1"),
            Just("1e3"),
            Just("500m"),
            Just("1.5Gi"),
            Just("Always"),
            Just("RollingUpdate"),
            Just("Recreate"),
            Just("NoSchedule"),
            Just("NoExecute"),
            Just("Exists"),
            Just("In"),
            Just("TCP"),
            Just("<img src=x onerror=alert(1)>"),
            Just("a\u{0}b"),
            Just("\u{202e}gnp.exe"),
            Just("default"),
            Just("kube-system"),
            Just("node-1"),
            Just("30s"),
        ]
        .prop_map(|s| Json::String(s.to_string())),
        "[a-z0-9.-]{0,70}".prop_map(Json::String),
        ".{0,20}".prop_map(Json::String),
    ]
}

/// Random JSON: scalars, lists and maps with Kubernetes-ish keys.
fn value() -> impl Strategy<Value = Json> {
    scalar().prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "name", "image", "replicas", "selector", "matchLabels", "matchExpressions", "key",
            "operator", "values", "labels", "annotations", "containers", "ports", "containerPort",
            "port", "targetPort", "protocol", "resources", "requests", "limits", "cpu", "memory",
            "pods", "minAvailable", "maxUnavailable", "maxSurge", "strategy", "type", "template",
            "spec", "metadata", "status", "nodeName", "tolerations", "effect", "tolerationSeconds",
            "taints", "readinessProbe", "livenessProbe", "httpGet", "path", "periodSeconds",
            "initialDelaySeconds", "failureThreshold", "terminationGracePeriodSeconds",
            "ownerReferences", "controller", "uid", "finalizers", "namespace", "generateName",
            "restartPolicy", "initContainers", "command", "args", "env", "value", "unschedulable",
            "nodeSelector", "affinity", "priority", "conditions", "capacity", "allocatable",
        ])
        .prop_map(str::to_string),
        1 => "[a-zA-Z./_-]{1,12}",
    ]
}

fn base_objects() -> Vec<Json> {
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                    "terminationGracePeriodSeconds": 5,
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
                    "containers": [{"name": "nginx", "image": "nginx:1.27",
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5},
                        "ports": [{"containerPort": 80}]}]}}}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "rs"}},
                "template": {"metadata": {"labels": {"app": "rs"}}, "spec": {
                    "containers": [{"name": "c", "image": "busybox"}]}}}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 80}]}}),
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}),
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-9"},
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}),
    ]
}

/// Every path (as JSON pointer) in `v`, so edits land on fields that exist.
fn pointers(v: &Json, prefix: String, out: &mut Vec<String>) {
    out.push(prefix.clone());
    match v {
        Json::Object(m) => {
            for (k, x) in m {
                pointers(x, format!("{prefix}/{k}"), out);
            }
        }
        Json::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{prefix}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A valid object with a few fields replaced by random values (or removed).
fn edited_object() -> impl Strategy<Value = Json> {
    (
        0..base_objects().len(),
        prop::collection::vec((any::<usize>(), prop::option::weighted(0.9, value())), 0..4),
    )
        .prop_map(|(which, edits)| {
            let mut doc = base_objects()[which].clone();
            for (at, v) in edits {
                let mut paths = Vec::new();
                pointers(&doc, String::new(), &mut paths);
                let path = &paths[at % paths.len()];
                if path.is_empty() || path == "/kind" || path == "/apiVersion" {
                    continue;
                }
                let (parent, last) = path.rsplit_once('/').expect("non-empty pointer");
                match (doc.pointer_mut(parent), v) {
                    (Some(Json::Object(m)), Some(v)) => {
                        m.insert(last.to_string(), v);
                    }
                    (Some(Json::Object(m)), None) => {
                        m.remove(last);
                    }
                    (Some(Json::Array(a)), v) => {
                        if let Ok(i) = last.parse::<usize>() {
                            if i < a.len() {
                                match v {
                                    Some(v) => a[i] = v,
                                    None => {
                                        a.remove(i);
                                    }
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            doc
        })
}

/// A document as YAML text: block style through the project's emitter, or JSON (which is YAML).
fn as_text(docs: &[Json], block: bool) -> String {
    docs.iter()
        .map(|d| {
            if block {
                yaml::to_yaml(d)
            } else {
                serde_json::to_string(d).expect("JSON values serialise")
            }
        })
        .collect::<Vec<_>>()
        .join("\n---\n")
}

// ------------------------------------------------------------------ sessions and invariants

/// A small running cluster: two nodes, a Deployment with a Service and a PDB, ten seconds in.
fn small_session() -> Session {
    let text = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: fuzz}
spec:
  seed: 3
  nodes: {count: 2, cpu: "4", memory: 8Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers: [{name: nginx, image: "nginx:1.27", resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
"#;
    let mut s = Session::load("fuzz.yaml", text, None).expect("the base scenario loads");
    s.advance_to(10_000, usize::MAX);
    s
}

/// What must hold after every operation, whatever the operation was.
#[derive(Default)]
struct Watermarks {
    rv: u64,
    trace_seq: u64,
}

fn check_invariants(s: &Session, marks: &mut Watermarks) -> Result<(), String> {
    let api = &s.sim.api();
    let rv = api.resource_version();
    if rv < marks.rv {
        return Err(format!(
            "the store's resourceVersion went back from {} to {rv}",
            marks.rv
        ));
    }
    marks.rv = rv;
    for o in api.all() {
        if o.meta().rv() > rv {
            return Err(format!("{} has a resourceVersion from the future", o.key()));
        }
    }
    for o in api.list(Kind::Pod) {
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
    for kind in Kind::ALL {
        let listed = api.list(kind).count();
        if api.count(kind) != listed {
            return Err(format!(
                "the {kind} counter says {} but the store holds {listed}",
                api.count(kind)
            ));
        }
    }
    let mut last = marks.trace_seq;
    for e in s.sim.trace().since(marks.trace_seq) {
        if e.seq <= last {
            return Err(format!("trace sequence numbers went back at {}", e.seq));
        }
        if e.cause().is_some_and(|c| c >= e.seq) {
            return Err(format!("trace entry {} names a later cause", e.seq));
        }
        last = e.seq;
    }
    marks.trace_seq = last;
    Ok(())
}

// ------------------------------------------------------------------ kubectl lines

fn kubectl_token() -> impl Strategy<Value = String> {
    let words = prop::sample::select(vec![
        "kubectl",
        "get",
        "describe",
        "events",
        "apply",
        "create",
        "run",
        "expose",
        "delete",
        "scale",
        "set",
        "image",
        "patch",
        "label",
        "annotate",
        "taint",
        "rollout",
        "status",
        "history",
        "undo",
        "restart",
        "pause",
        "resume",
        "cordon",
        "uncordon",
        "drain",
        "wait",
        "version",
        "cluster-info",
        "api-resources",
        "api-versions",
        "help",
        "logs",
        "exec",
        "deployment",
        "deploy",
        "deployment/web",
        "deployments.apps",
        "rs",
        "replicaset",
        "pods",
        "po",
        "pod/web",
        "nodes",
        "node/node-1",
        "node-1",
        "node-2",
        "node-9",
        "svc",
        "service/web",
        "pdb",
        "poddisruptionbudget/web",
        "events",
        "all",
        "endpointslices",
        "leases",
        "web",
        "nginx=nginx:1.28",
        "app=web",
        "app-",
        "tier=fe",
        "k=v:NoSchedule",
        "k:NoExecute-",
        "dedicated=x:NoExecute",
        "-f",
        "-",
        "-o",
        "yaml",
        "json",
        "wide",
        "name",
        "jsonpath={.items[*].metadata.name}",
        "jsonpath={.status.replicas}",
        "-n",
        "kube-system",
        "-A",
        "-l",
        "-w",
        "--all",
        "--all-namespaces",
        "--replicas=5",
        "--replicas=0",
        "--replicas=-1",
        "--replicas=20001",
        "--replicas=1000000",
        "--replicas=1e12",
        "--replicas=99999999999999999999",
        "--current-replicas=3",
        "--type=merge",
        "--type=json",
        "-p",
        "{\"spec\":{\"replicas\":2}}",
        "{\"spec\":{\"replicas\":1000000}}",
        "{\"metadata\":null}",
        "[]",
        "{",
        "--overwrite",
        "--grace-period=0",
        "--grace-period=-1",
        "--grace-period=9223372036854775807",
        "--force",
        "--now",
        "--cascade=orphan",
        "--cascade=foreground",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=1s",
        "--timeout=0",
        "--timeout=2562047h",
        "--timeout=-1s",
        "--for=condition=Available",
        "--for=delete",
        "--for=jsonpath={.status.readyReplicas}=3",
        "--to-revision=1",
        "--to-revision=999",
        "--image=nginx",
        "--port=80",
        "--port=99999",
        "--target-port=8080",
        "--selector=app=web",
        "--field-selector=spec.nodeName=node-1",
        "--dry-run=client",
        "--show-labels",
        "--sort-by=.metadata.name",
        "--no-headers",
        "--",
        "-h",
        "--help",
        "--unknown",
        "-Z",
        "-nkube-system",
        "-o=wide",
        "-lapp=web",
        "--record",
        "=",
        "-",
    ]);
    prop_oneof![
        10 => words.prop_map(str::to_string),
        1 => "[ -~]{0,12}",
        1 => ".{0,6}",
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| format!("--replicas={n}")),
    ]
    .prop_flat_map(|w| {
        prop_oneof![
            6 => Just(w.clone()),
            1 => Just(format!("'{w}'")),
            1 => Just(format!("\"{w}\"")),
            1 => Just(format!("'{w}")),
            1 => Just(format!("{w}\"")),
        ]
    })
}

fn kubectl_line() -> impl Strategy<Value = String> {
    prop::collection::vec(kubectl_token(), 0..9).prop_map(|t| t.join(" "))
}

// ------------------------------------------------------------------ faults

fn fault_json() -> impl Strategy<Value = Json> {
    // Every fault the simulation knows, and one it does not.
    let types = prop::sample::select(
        kubeloop::sim::faults::FAULT_TYPES
            .iter()
            .copied()
            .chain(["Unknown"])
            .collect::<Vec<_>>(),
    );
    let component = prop::sample::select(vec![
        "deployment-controller",
        "replicaset-controller",
        "kube-scheduler",
        "scheduler",
        "garbage-collector",
        "controller-manager",
        "kube-apiserver",
        "kubelet/node-1",
        "node-lifecycle-controller",
        "endpointslice-controller",
        "disruption-controller",
        "taint-eviction-controller",
        "nope",
        "",
    ]);
    let node = prop::sample::select(vec!["node-1", "node-2", "node-9", ""]);
    let duration = prop_oneof![
        Just(json!("30s")),
        Just(json!("0")),
        Just(json!("1ms")),
        Just(json!("2562047h")),
        Just(json!("-1s")),
        Just(json!(5)),
        Just(json!(u64::MAX)),
        Just(json!(18_446_744_073_709_551u64)),
        Just(json!(-3)),
        Just(json!(1.5)),
        Just(Json::Null),
    ];
    (
        types,
        component,
        node,
        prop::option::of(duration.clone()),
        prop::option::of(duration),
        prop::option::of(prop_oneof![
            Just(json!(0.5)),
            Just(json!(2.0)),
            Just(json!(-1.0)),
            Just(json!(1))
        ]),
        prop::option::of(prop_oneof![
            Just(json!(1)),
            Just(json!(0)),
            Just(json!(u32::MAX)),
            Just(json!(-1))
        ]),
        prop::option::of(prop::sample::select(vec![
            "app=web",
            "app in (web)",
            "!!",
            "",
            "app",
        ])),
        prop::option::of(value()),
    )
        .prop_map(
            |(ty, component, node, duration, delay, probability, count, selector, patch)| {
                let mut f = json!({"type": ty});
                let m = f.as_object_mut().expect("an object");
                match ty {
                    "NodeDown" | "NodeUp" | "PartitionNode" | "HealNode" => {
                        m.insert("node".into(), json!(node));
                    }
                    "BreakImage" | "FixImage" => {
                        m.insert("image".into(), json!("nginx:1.27"));
                    }
                    "ConflictingWriter" | "EditObject" => {
                        let object = if node.is_empty() {
                            "Deployment/default/web"
                        } else {
                            "Pod/default/nope"
                        };
                        m.insert("object".into(), json!(object));
                        if ty == "EditObject" {
                            m.insert(
                                "patch".into(),
                                patch.clone().unwrap_or(json!({"spec": {"replicas": 4}})),
                            );
                        }
                    }
                    "DeletePod" | "CrashContainer" | "CrashLoop" | "OomKill" | "FailReadiness"
                    | "FailLiveness" => match &selector {
                        Some(s) => {
                            m.insert("selector".into(), json!(s));
                        }
                        None => {
                            m.insert("pod".into(), json!("nope"));
                        }
                    },
                    "SetTriggerMode" => {
                        m.insert("component".into(), json!(component));
                        m.insert(
                            "mode".into(),
                            json!(if node.is_empty() { "Edge" } else { "Level" }),
                        );
                    }
                    "SetResync" => {
                        m.insert("component".into(), json!(component));
                        m.insert("period".into(), delay.clone().unwrap_or(json!("off")));
                    }
                    "FailJobPods" => {
                        m.insert(
                            "job".into(),
                            json!(if node.is_empty() { "nope" } else { "pi" }),
                        );
                    }
                    "FailVolumeProvisioning" | "FailVolumeExpansion" => {
                        if !node.is_empty() {
                            m.insert("storageClass".into(), json!("standard"));
                        }
                    }
                    "DetachVolume" => {
                        m.insert(
                            "claim".into(),
                            json!(if node.is_empty() { "" } else { "data" }),
                        );
                    }
                    "CrashMidReconcile" => {
                        m.insert("component".into(), json!(component));
                        m.insert("afterRequests".into(), count.clone().unwrap_or(json!(1)));
                    }
                    "SetOperatorBug" => {
                        let bug = match node {
                            "node-1" => "edge-triggered",
                            "node-2" => "generate-name",
                            "node-9" => "status-on-main-resource",
                            _ => "volume-via-template",
                        };
                        m.insert("bug".into(), json!(bug));
                        m.insert("enabled".into(), json!(component.is_empty()));
                    }
                    _ => {
                        m.insert("component".into(), json!(component));
                    }
                }
                if let Some(d) = duration {
                    m.insert("duration".into(), d);
                }
                if ty == "DelayWatchEvents" {
                    m.insert("delay".into(), delay.unwrap_or(json!("2s")));
                }
                if let Some(p) = probability {
                    m.insert("probability".into(), p);
                }
                if let Some(c) = count {
                    m.insert("count".into(), c);
                }
                f
            },
        )
}

// ------------------------------------------------------------------ operations

#[derive(Clone, Debug)]
enum Op {
    Apply(String),
    Delete(String),
    Kubectl(String),
    Fault(Json),
    Advance(u64),
    Step,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (edited_object(), any::<bool>()).prop_map(|(d, block)| Op::Apply(as_text(&[d], block))),
        1 => edited_object().prop_map(|d| Op::Delete(as_text(&[d], false))),
        4 => kubectl_line().prop_map(Op::Kubectl),
        3 => fault_json().prop_map(Op::Fault),
        3 => (0u64..60_000).prop_map(Op::Advance),
        1 => Just(Op::Step),
    ]
}

/// A cap on the work one Advance may do, so a case stays fast whatever the sequence built.
const ADVANCE_EVENTS: usize = 50_000;

fn run_op(s: &mut Session, op: &Op) {
    match op {
        Op::Apply(text) => {
            let _ = s.apply_text("fuzz.yaml", text);
        }
        Op::Delete(text) => {
            let _ = s.delete_text("fuzz.yaml", text);
        }
        Op::Kubectl(line) => {
            let out = s.kubectl(line);
            assert!(
                out.ok || !out.stderr.is_empty(),
                "a failed command must say why: {line:?}"
            );
        }
        Op::Fault(f) => {
            if let Ok(fault) = serde_json::from_value::<Fault>(f.clone()) {
                let _ = s.inject(fault);
            }
        }
        Op::Advance(ms) => {
            let t = s.sim.now() + ms;
            s.advance_to(t, ADVANCE_EVENTS);
        }
        Op::Step => {
            s.step();
        }
    }
}

// ------------------------------------------------------------------ the fuzz targets

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn random_bytes_never_crash_the_manifest_decoder(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let d = decode_manifest_bytes("fuzz.yaml", &bytes);
        for o in &d.objects {
            prop_assert!(validate(&o.object, None).is_empty());
        }
    }

    #[test]
    fn mutated_fixtures_are_decoded_or_refused_with_a_position(
        which in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let base = &corpus()[which % corpus().len()];
        let bytes = mutate(base, &mutations);
        let d = decode_manifest_bytes("fuzz.yaml", &bytes);
        for diag in &d.diagnostics {
            prop_assert!(diag.line >= 1 && diag.col >= 1, "{diag:?}");
            prop_assert!(!diag.message.is_empty());
        }
        for o in &d.objects {
            prop_assert!(validate(&o.object, None).is_empty(), "decoded but invalid: {:?}", o.object.key());
        }
    }

    #[test]
    fn structure_aware_manifests_are_decoded_applied_or_refused(
        docs in prop::collection::vec(edited_object(), 1..4),
        block in any::<bool>(),
    ) {
        let text = as_text(&docs, block);
        let d = decode_manifests("fuzz.yaml", &text);
        for o in &d.objects {
            prop_assert!(validate(&o.object, None).is_empty());
        }
        let mut s = Session::new(1);
        let report = s.apply_text("fuzz.yaml", &text);
        prop_assert_eq!(report.ok, !report.diagnostics.iter().any(|d| d.severity == Severity::Error));
        s.advance_to(20_000, ADVANCE_EVENTS);
        check_invariants(&s, &mut Watermarks::default()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_yaml_emitter_round_trips_what_it_writes(v in value()) {
        // `kubectl get -o yaml` output and saved state must read back as the same value.
        let doc = json!({"apiVersion": "v1", "kind": "Pod", "x": v});
        let text = yaml::to_yaml(&doc);
        let parsed = yaml::parse_documents(&text).map_err(|d| TestCaseError::fail(format!("{d}\n{text}")))?;
        prop_assert_eq!(parsed.len(), 1);
        prop_assert_eq!(&parsed[0].value, &doc, "{}", text);
    }

    #[test]
    fn jsonpath_templates_from_grammar_pieces_print_or_fail_with_a_message(
        pieces in prop::collection::vec(prop::sample::select(vec![
            "{", "}", ".", "..", "*", "[", "]", "[*]", "[0]", "[-1]", "[1:3]", "[0,1]", "['a.b']",
            "[?(@.status==\"True\")]", "[?(@.x)]", "[?(@.n > 1)]", "range ", "end", "@", "$",
            "\"\\n\"", "'x'", "items", "metadata", "name", "status", "conditions", "type", "\\.", " ", "(", ")", "=", "é",
        ]), 0..24),
        raw in ".{0,40}",
    ) {
        let doc = kubeloop::sim::kubectl::printers::list_json(vec![
            serde_json::json!({"metadata": {"name": "a", "labels": {"a.b": "c"}}, "status": {"conditions": [{"type": "Ready", "status": "True", "n": 2}]}}),
            serde_json::json!({"metadata": {"name": "b"}, "status": {"conditions": []}}),
        ]);
        for text in [pieces.concat(), raw.clone()] {
            match kubeloop::sim::input::jsonpath::Template::parse(&text) {
                Ok(t) => {
                    for opts in [kubeloop::sim::input::jsonpath::Options::default(), kubeloop::sim::input::jsonpath::Options { allow_missing_keys: false, as_json: true }] {
                        if let Err(e) = t.execute(&doc, opts) {
                            prop_assert!(!e.is_empty());
                        }
                    }
                }
                Err(e) => prop_assert!(!e.is_empty(), "{text:?}"),
            }
        }
    }

    #[test]
    fn random_share_fragments_are_refused_with_a_message(s in ".{0,300}", tag in 0u32..4) {
        for input in [s.clone(), format!("k{tag}:{s}"), format!("https://x.test/#k1:{s}"), format!("#example/{s}")] {
            match share::decode(&input) {
                Ok(Link::Scenario(shared)) => { let _ = Session::load("link.yaml", &shared.text, shared.seed); }
                Ok(Link::Example(_)) => {}
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }

    #[test]
    fn mutated_share_links_open_or_say_why(
        which in any::<usize>(),
        cut in any::<usize>(),
        flips in prop::collection::vec((any::<usize>(), 0u8..64), 0..4),
    ) {
        let (_, text) = examples::ALL[which % examples::ALL.len()];
        let link = share::encode(&Shared { text: text.to_string(), seed: Some(7), ..Default::default() });
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut bytes = link.into_bytes();
        for (at, c) in flips {
            let i = 3 + at % (bytes.len() - 3);
            bytes[i] = alphabet[c as usize];
        }
        bytes.truncate(3 + cut % (bytes.len() - 2));
        let link = String::from_utf8(bytes).expect("base64url is ASCII");
        match share::decode(&link) {
            Ok(Link::Scenario(shared)) => {
                if let Ok(mut s) = Session::load("link.yaml", &shared.text, shared.seed) {
                    s.advance_to(5_000, ADVANCE_EVENTS);
                }
            }
            Ok(Link::Example(_)) => {}
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn random_kubectl_lines_answer_with_output_or_an_error(lines in prop::collection::vec(kubectl_line(), 1..8)) {
        let mut s = small_session();
        let mut marks = Watermarks::default();
        for line in &lines {
            let out = s.kubectl(line);
            prop_assert!(out.ok || !out.stderr.is_empty(), "no error text for {:?}", line);
            let _ = kubectl::execute_with_stdin(&mut s.sim, line, Some("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"));
            check_invariants(&s, &mut marks).map_err(|e| TestCaseError::fail(format!("after {line:?}: {e}")))?;
        }
    }

    #[test]
    fn random_operation_sequences_keep_the_cluster_invariants(ops in prop::collection::vec(op(), 1..12)) {
        let mut s = small_session();
        let mut marks = Watermarks::default();
        check_invariants(&s, &mut marks).map_err(TestCaseError::fail)?;
        for (i, op) in ops.iter().enumerate() {
            run_op(&mut s, op);
            check_invariants(&s, &mut marks)
                .map_err(|e| TestCaseError::fail(format!("after op {i} {op:?}: {e}")))?;
        }
    }

    #[test]
    fn random_scenarios_load_and_run_or_are_refused(
        seed in prop::option::of(any::<u64>()),
        count in prop_oneof![4 => 0u64..4, 1 => Just(5_001u64), 1 => Just(u64::from(u32::MAX)), 1 => Just(1u64 << 40)],
        cpu in prop::sample::select(vec!["4", "1e3", "500m", "-1", "abc", "1.5Gi"]),
        steps in prop::collection::vec((prop::sample::select(vec!["0", "1s", "30s", "1h", "2562047h", "-1s", "x"]),
            prop_oneof![fault_json().prop_map(|f| json!({"fault": f})), kubectl_line().prop_map(|k| json!({"kubectl": k})),
                edited_object().prop_map(|d| json!({"apply": serde_json::to_string(&d).expect("JSON")})), value()]), 0..4),
        checks in prop::collection::vec((prop::sample::select(vec![
            "deployment/web --for=condition=Available --timeout=1m", "pods -l app=web --for=delete",
            "deployment/web --for=jsonpath={.status.readyReplicas}=3", "--for=condition", "", "x/y --timeout=-1s",
            "deployment/web --for=condition=Available --timeout=2562047h"]),
            prop::option::of(prop::sample::select(vec!["0", "30s", "x", "2562047h"]))), 0..3),
        extra in prop::option::of(value()),
    ) {
        let mut spec = json!({"nodes": {"count": count, "cpu": cpu}});
        let m = spec.as_object_mut().expect("an object");
        if let Some(seed) = seed {
            m.insert("seed".into(), json!(seed));
        }
        let steps: Vec<Json> = steps.into_iter().map(|(at, mut action)| {
            if let Json::Object(a) = &mut action {
                a.insert("at".into(), json!(at));
            }
            action
        }).collect();
        m.insert("steps".into(), Json::Array(steps));
        let checks: Vec<Json> = checks.into_iter().enumerate().map(|(i, (wait, after))| {
            let mut c = json!({"name": format!("check {i}"), "wait": wait});
            if let Some(a) = after {
                c["after"] = json!(a);
            }
            c
        }).collect();
        m.insert("checks".into(), Json::Array(checks));
        if let Some(x) = extra {
            m.insert("tryThis".into(), x);
        }
        let doc = json!({"apiVersion": "kubeloop.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "f"}, "spec": spec});
        let text = as_text(&[doc, base_objects()[0].clone()], false);
        match Session::load("fuzz.yaml", &text, None) {
            Ok(mut s) => {
                prop_assert!(count <= 5_000 || s.sim.api().count(Kind::Node) <= 5_000);
                s.script_try_this();
                for i in 0..=s.scenario.spec.try_this.len().min(3) {
                    let _ = s.run_try_this(i);
                }
                s.advance_to(45_000, ADVANCE_EVENTS);
                let _ = s.checks();
                check_invariants(&s, &mut Watermarks::default()).map_err(TestCaseError::fail)?;
            }
            Err(diags) => {
                prop_assert!(diags.iter().any(|d| d.severity == Severity::Error));
                if count > 5_000 {
                    prop_assert!(diags.iter().any(|d| d.message.contains("spec.nodes.count") || d.severity == Severity::Error));
                }
            }
        }
    }
}

// ------------------------------------------------------------------ scale limits

#[test]
fn scaling_past_the_replica_limit_is_refused_like_a_validation_error() {
    let mut s = small_session();
    let out = s.kubectl("scale deployment/web --replicas=1000000");
    assert!(!out.ok);
    assert_eq!(
        out.stderr,
        "The Deployment \"web\" is invalid: spec.replicas: Invalid value: 1000000: must be less than or equal to 20000 in the playground (a simulated cluster's limit)\n",
    );
    assert!(s.kubectl("scale deployment/web --replicas=20000").ok);
}

#[test]
fn a_manifest_with_a_million_replicas_is_refused_at_its_line() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1000000\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n";
    let d = decode_manifests("big.yaml", text);
    let err = d
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error");
    assert_eq!(
        err.to_string(),
        "big.yaml:5:3: Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: 1000000: must be less than or equal to 20000 in the playground (a simulated cluster's limit)"
    );
}

#[test]
fn a_node_count_over_the_limit_is_refused_when_the_scenario_loads() {
    let text = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {name: huge}\nspec:\n  nodes: {count: 4000000000}\n";
    let diags = Session::load("huge.yaml", text, None)
        .err()
        .expect("refused");
    let err = diags[0].to_string();
    assert!(
        err.contains("spec.nodes.count: Invalid value: 4000000000: must be less than or equal to 5000 in the playground (a simulated cluster's limit)"),
        "{err}"
    );
    assert!(err.starts_with("huge.yaml:5:"), "{err}");
}

#[test]
fn a_thousand_nodes_load_and_report_ready() {
    let text = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  nodes: {count: 1000}\n";
    let mut s = Session::load("nodes.yaml", text, None).expect("1,000 nodes are within the limits");
    assert_eq!(s.sim.api().count(Kind::Node), 1000);
    s.advance_to(15_000, usize::MAX);
    let ready = s
        .sim
        .api()
        .list(Kind::Node)
        .filter(|o| {
            let v = o.to_json();
            v.pointer("/status/conditions")
                .and_then(Json::as_array)
                .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
                .is_some_and(|c| c["status"] == "True")
        })
        .count();
    assert_eq!(ready, 1000);
}

#[test]
fn pod_creates_past_the_pod_limit_are_forbidden_and_the_replicaset_says_so() {
    use kubeloop::sim::api::limits::MAX_PODS;
    use kubeloop::sim::api::types::{Container, Object, ObjectMeta, Pod, PodSpec};
    use kubeloop::sim::api::ApiRequest;
    use kubeloop::sim::faults::Fault;
    let mut s = Session::new(1);
    let pod = |name: String| {
        Object::from(Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                ..Default::default()
            },
            spec: PodSpec {
                // Bound to a node that does not exist: nothing schedules or runs them.
                node_name: "nowhere".into(),
                containers: vec![Container {
                    name: "c".into(),
                    image: "nginx".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }
            .into(),
            ..Default::default()
        })
    };
    // With every controller stopped, the store fills up without 30,000 watch deliveries; then
    // the two this test is about start, and list what is there. Nothing but the store's limit
    // is at play.
    let stop_start = |s: &mut Session, start: bool, component: &str| {
        let fault = if start {
            Fault::StartComponent {
                component: component.into(),
            }
        } else {
            Fault::StopComponent {
                component: component.into(),
            }
        };
        s.sim.inject(fault).expect("the component stops or starts");
    };
    stop_start(&mut s, false, "kube-controller-manager");
    stop_start(&mut s, false, "kube-scheduler");
    for i in 0..MAX_PODS {
        s.sim
            .submit(ApiRequest::Create(pod(format!("p-{i}"))))
            .expect("under the limit");
    }
    stop_start(&mut s, true, "deployment-controller");
    stop_start(&mut s, true, "replicaset-controller");
    let e = s
        .sim
        .submit(ApiRequest::Create(pod("one-more".into())))
        .unwrap_err();
    assert_eq!(e.code(), 403);
    assert!(
        e.message.starts_with(
            "pods \"one-more\" is forbidden: exceeded the limit of 30000 pods in the playground"
        ),
        "{}",
        e.message
    );
    let out = s.kubectl("create deployment extra --image=nginx");
    assert!(out.ok, "{}", out.stderr);
    s.advance_to(5_000, usize::MAX);
    let out = s.kubectl("describe rs");
    assert!(
        out.stdout
            .contains("is forbidden: exceeded the limit of 30000 pods"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_file_with_more_objects_than_the_limit_is_refused_once_at_the_first_extra_one() {
    use kubeloop::sim::api::limits::MAX_OBJECTS_PER_FILE;
    let items: String = (0..MAX_OBJECTS_PER_FILE + 5)
        .map(|i| format!("- {{apiVersion: v1, kind: Node, metadata: {{name: n{i}}}}}\n"))
        .collect();
    let text = format!("apiVersion: v1\nkind: List\nitems:\n{items}");
    let d = decode_manifests("many.yaml", &text);
    let errors: Vec<String> = d
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect();
    assert_eq!(
        errors,
        vec![format!("many.yaml:{}:3: too many objects: a file may hold at most 2000 objects in the playground (a simulated cluster's limit); the rest were not read", MAX_OBJECTS_PER_FILE + 4)]
    );
    assert_eq!(d.objects.len(), MAX_OBJECTS_PER_FILE);
}

// ------------------------------------------------------------------ regressions found by fuzzing

/// A Deployment whose pods tolerate everything for `seconds` and take `seconds` to stop.
fn patient_deployment(seconds: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: slow}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: slow}}}}\n  template:\n    metadata: {{labels: {{app: slow}}}}\n    spec:\n      terminationGracePeriodSeconds: {seconds}\n      tolerations: [{{operator: Exists, effect: NoExecute, tolerationSeconds: {seconds}}}]\n      containers: [{{name: c, image: nginx}}]\n"
    )
}

#[test]
fn deleting_a_pod_with_the_largest_grace_period_does_not_overflow_the_deadline() {
    let mut s = small_session();
    let report = s.apply_text("slow.yaml", &patient_deployment("9223372036854775807"));
    assert!(report.ok, "{:?}", report.diagnostics);
    s.advance_to(20_000, usize::MAX);
    let out = s.kubectl("delete pods -l app=slow");
    assert!(out.ok, "{}", out.stderr);
    let out = s.kubectl("delete pods -l app=slow --grace-period=9223372036854775807");
    assert!(out.ok || !out.stderr.is_empty());
    s.advance_to(60_000, usize::MAX);
    check_invariants(&s, &mut Watermarks::default()).unwrap();
}

#[test]
fn a_node_failure_under_pods_that_tolerate_it_for_ever_does_not_overflow() {
    let mut s = small_session();
    assert!(
        s.apply_text("slow.yaml", &patient_deployment("9223372036854775807"))
            .ok
    );
    s.advance_to(20_000, usize::MAX);
    s.inject(Fault::NodeDown {
        node: "node-1".into(),
    })
    .unwrap();
    s.advance_to(10 * 60_000, usize::MAX);
    check_invariants(&s, &mut Watermarks::default()).unwrap();
}

#[test]
fn a_fault_duration_given_as_a_huge_number_of_seconds_is_refused_not_overflowed() {
    for n in [
        json!(u64::MAX),
        json!(18_446_744_073_709_552u64),
        json!(1e300),
    ] {
        let f = json!({"type": "DropWatchEvents", "component": "kube-scheduler", "duration": n});
        if let Ok(fault) = serde_json::from_value::<Fault>(f) {
            let mut s = small_session();
            let _ = s.inject(fault);
            s.advance_to(30_000, usize::MAX);
        }
    }
}
