// Shared by tests/determinism.rs (native) and tests/wasm_determinism.rs (wasm32): the same scenario
// must produce the same trace on both targets, pinned by one committed fingerprint.

use kubeloop::sim::session::Session;

/// A scenario that exercises every controller: a rollout, a crash, a node failure, a Service, a
/// PDB, a StatefulSet whose claims are zonal disks (attached, one grown online, one lost by its
/// node and attached again), a Job whose pods fail once before one succeeds, and kro: a graph
/// with a collection (`forEach`) and an optional resource, whose instance is changed and whose
/// instance controller dies in the middle of a pass.
pub const SCENARIO: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: determinism}
spec:
  seed: 11
  nodes: {count: 3, cpu: "2", memory: 4Gi, zones: [zone-a, zone-b]}
  addons: [kro]
  steps:
  - at: 70s
    fault: {type: CrashMidReconcile, component: kro/tenant.kro.run, afterRequests: 1}
  - at: 71s
    kubectl: patch tenant acme --type=merge -p '{"spec":{"teams":["red","blue"],"quota":false}}'

  - at: 0s
    fault: {type: FailJobPods, job: once, count: 1}
  - at: 50s
    fault: {type: DetachVolume, claim: data-db-2}
  - at: 60s
    kubectl: patch pvc data-db-1 -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'
  - at: 20s
    kubectl: scale deployment/web --replicas=5
  - at: 30s
    fault: {type: NodeDown, node: node-3}
  - at: 45s
    apply: |
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 5
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
            - name: app
              image: nginx:1.28
              resources: {requests: {cpu: 300m, memory: 128Mi}}
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
      containers:
      - name: app
        image: nginx:1.27
        resources: {requests: {cpu: 300m, memory: 128Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: postgres
        image: postgres:17
        resources: {requests: {cpu: 100m, memory: 128Mi}}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: disk
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: disk}
provisioner: disk.csi.kubeloop.dev
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: busybox:1.36
        command: [sh, -c, "sleep 3; exit 0"]
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: tenant.kro.run}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Tenant
    spec:
      teams: '[]string | default=["red"]'
      quota: boolean | default=true
    status:
      teams: ${size(configs)}
  resources:
  - id: configs
    forEach:
    - team: ${schema.spec.teams}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name + "-" + team}
      data:
        team: ${team}
  - id: quota
    includeWhen:
    - ${schema.spec.quota}
    template:
      apiVersion: v1
      kind: ResourceQuota
      metadata:
        name: ${schema.metadata.name}
      spec:
        hard: {pods: "10"}
---
apiVersion: kro.run/v1alpha1
kind: Tenant
metadata: {name: acme}
spec: {teams: [red, green]}
"#;

/// (number of trace entries, FNV-1a 64 of their JSON lines) after 8 simulated minutes.
pub fn fingerprint() -> (usize, u64) {
    let mut s = Session::load("determinism.yaml", SCENARIO, None).expect("the scenario loads");
    s.advance_to(8 * 60_000, usize::MAX);
    hash(&s)
}

/// A learner's controller in JavaScript (issue #31), with the seeded `Math.random`, the
/// simulated `Date` and fractional powers (the same bits on every target) written into its status, restarted once (its module state lost): added to
/// the cluster directly, since the page's decoder does not read Controller documents yet.
pub const SCRIPT: &str = r#"
let passes = 0;
function reconcile(req, ctx) {
  const site = ctx.get("Website", req.name);
  if (!site) return;
  passes++;
  const dep = ctx.get("Deployment", req.name);
  if (!dep) {
    ctx.create({apiVersion: "apps/v1", kind: "Deployment",
      metadata: {name: req.name, ownerReferences: [ctx.controllerRef(site)]},
      spec: {replicas: site.spec.replicas, selector: {matchLabels: {app: req.name}},
        template: {metadata: {labels: {app: req.name}}, spec: {containers: [{name: "web", image: site.spec.image}]}}}});
  }
  const ready = dep?.status?.readyReplicas ?? 0;
  ctx.log(`pass ${passes}: ${ready} ready at ${new Date().toISOString()}`);
  if (site.status?.ready !== ready) {
    // 0.125 ** -1.5 and ** -2.5 are among the powers glibc's pow rounds differently from the
    // libm port the browser build uses: the same bits on both targets need one implementation.
    const powers = [2 ** 0.5, 0.125 ** -1.5, Math.pow(0.125, -2.5), Math.random() ** 1.5];
    ctx.log(`powers ${powers.join(" ")}`);
    ctx.updateStatus({...site, status: {ready, token: Math.floor(Math.random() * 1e9), at: Date.now(), passes, powers}});
  }
  return {requeueAfter: "7s"};
}
"#;

/// The fingerprint of [`SCRIPT`] run for three minutes against a Website.
pub fn script_fingerprint() -> (usize, u64) {
    use kubeloop::sim::controllers::script::{ScriptController, ScriptSpec, TypeName};
    use kubeloop::sim::faults::Fault;
    use kubeloop::sim::input::controller_doc::ControllerDoc;
    use kubeloop::sim::script::engine::{install, Builtin};
    use kubeloop::sim::script::Limits;
    // In the browser the page installs its engine module; here the interpreter runs in-process.
    install(std::rc::Rc::new(Builtin));
    let file = include_str!("../fixtures/controllers/website.yaml");
    // The CRD and the Website, without the Controller document.
    let objects: Vec<&str> = file
        .split("\n---\n")
        .filter(|d| !d.contains("kind: Controller"))
        .collect();
    let mut s = Session::load("website.yaml", &objects.join("\n---\n"), Some(5)).expect("loads");
    let t = |n: &str| TypeName {
        api_version: if n == "Website" {
            "example.com/v1"
        } else {
            "apps/v1"
        }
        .into(),
        kind: n.into(),
    };
    let spec = ScriptSpec {
        doc: ControllerDoc {
            name: "website".into(),
            primary: t("Website"),
            owns: vec![t("Deployment")],
            watches: Vec::new(),
            resync: Some(30_000),
            source: SCRIPT.into(),
        },
        limits: Limits::default(),
    };
    s.sim
        .add_component(Box::new(ScriptController::new(std::rc::Rc::new(spec))));
    s.advance_to(60_000, usize::MAX);
    s.inject(Fault::RestartController {
        component: "controller/website".into(),
    })
    .expect("restarts");
    s.advance_to(180_000, usize::MAX);
    hash(&s)
}

fn hash(s: &Session) -> (usize, u64) {
    parse(&s.sim.trace().fingerprint())
}

/// The committed fingerprint of [`script_fingerprint`].
pub const SCRIPT_EXPECTED: &str = include_str!("../snapshots/script-determinism-fingerprint.txt");

pub fn script_expected() -> (usize, u64) {
    parse(SCRIPT_EXPECTED)
}

/// The committed fingerprint: `entries hash`.
pub const EXPECTED: &str = include_str!("../snapshots/determinism-fingerprint.txt");

pub fn expected() -> (usize, u64) {
    parse(EXPECTED)
}

fn parse(text: &str) -> (usize, u64) {
    let mut it = text.split_whitespace();
    let n = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let h = it
        .next()
        .and_then(|s| u64::from_str_radix(s, 16).ok())
        .unwrap_or(0);
    (n, h)
}

/// The determinism scenario with a learner's actions in it (an apply at 30 s, a node powered off
/// at 1 m, a scale and a few single Steps at 2 m), the same run replayed from its journal on a
/// fresh session (issue #32), and the same run gone on from a snapshot taken at 1 m, before the
/// fault, while the original went on too: the three fingerprints, which must be equal on every
/// target.
pub fn run_and_replay() -> ((usize, u64), (usize, u64), (usize, u64)) {
    use kubeloop::sim::faults::Fault;
    let go_on = |s: &mut Session| {
        let _ = s.inject(Fault::NodeDown {
            node: "node-2".into(),
        });
        s.advance_to(120_000, usize::MAX);
        s.kubectl("scale deployment web --replicas=2");
        for _ in 0..7 {
            s.step();
        }
        s.advance_to(180_000, usize::MAX);
    };
    let mut s = Session::load("determinism.yaml", SCENARIO, None).expect("the scenario loads");
    s.advance_to(30_000, usize::MAX);
    s.apply_text(
        "playground.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: learner}\ndata: {k: v}\n",
    );
    s.advance_to(60_000, usize::MAX);
    let mut snapshot = s.snapshot().expect("built-in components copy themselves");
    go_on(&mut s);
    go_on(&mut snapshot);
    let mut replay = Session::load("determinism.yaml", SCENARIO, None).expect("the scenario loads");
    kubeloop::sim::run::replay(&mut replay, s.actions(), s.moment()).expect("it reproduces");
    (hash(&s), hash(&replay), hash(&snapshot))
}
