//! Built-in scenarios: the manifest the playground opens with, and the lessons.
//!
//! Each lesson is an ordinary scenario file in `src/lessons/` (manifests plus a Scenario document
//! with a description, "try this" actions and checks), embedded at compile time. [`ALL`] is what
//! `#example/<name>` links and `kubeloop run '#example/<name>'` resolve; [`LESSONS`] adds what a
//! gallery or a course page needs to present them.

/// What the editor holds when the playground first opens: a three-replica Deployment.
pub const DEFAULT_MANIFEST: &str = include_str!("../lessons/playground.yaml");

/// Every built-in example by name (`#example/<name>` links and the gallery): the playground's
/// default manifest, then the lessons in course order.
pub const ALL: &[(&str, &str)] = &[
    ("playground", DEFAULT_MANIFEST),
    (
        "spec-status-gap",
        include_str!("../lessons/spec-status-gap.yaml"),
    ),
    ("whole-chain", include_str!("../lessons/whole-chain.yaml")),
    ("thermostat", include_str!("../lessons/thermostat.yaml")),
    (
        "level-vs-edge",
        include_str!("../lessons/level-vs-edge.yaml"),
    ),
    (
        "racing-writers",
        include_str!("../lessons/racing-writers.yaml"),
    ),
    ("unachievable", include_str!("../lessons/unachievable.yaml")),
    ("inconsistent", include_str!("../lessons/inconsistent.yaml")),
    (
        "never-settles",
        include_str!("../lessons/never-settles.yaml"),
    ),
    ("fix-the-spec", include_str!("../lessons/fix-the-spec.yaml")),
    (
        "convergence-is-not-health",
        include_str!("../lessons/convergence-is-not-health.yaml"),
    ),
    ("node-dies", include_str!("../lessons/node-dies.yaml")),
    (
        "rolling-updates",
        include_str!("../lessons/rolling-updates.yaml"),
    ),
    (
        "controllers-crash",
        include_str!("../lessons/controllers-crash.yaml"),
    ),
    (
        "run-to-completion",
        include_str!("../lessons/run-to-completion.yaml"),
    ),
    (
        "non-idempotent-world",
        include_str!("../lessons/non-idempotent-world.yaml"),
    ),
    ("at-most-one", include_str!("../lessons/at-most-one.yaml")),
    (
        "operator-is-a-controller",
        include_str!("../lessons/operator-is-a-controller.yaml"),
    ),
    (
        "finalizers-need-a-living-controller",
        include_str!("../lessons/finalizers-need-a-living-controller.yaml"),
    ),
    (
        "crash-in-the-middle",
        include_str!("../lessons/crash-in-the-middle.yaml"),
    ),
    (
        "your-first-controller",
        include_str!("../lessons/your-first-controller.yaml"),
    ),
    (
        "break-it-then-fix-it",
        include_str!("../lessons/break-it-then-fix-it.yaml"),
    ),
];

/// The built-in example called `name`.
pub fn by_name(name: &str) -> Option<&'static str> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// What a gallery, a course page or an embed shows about one built-in lesson. The scenario text
/// itself (with its longer description, try-this actions and checks) is in [`ALL`] under `name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lesson {
    /// The example name: `#example/<name>`.
    pub name: &'static str,
    /// A short title for a list or a heading.
    pub title: &'static str,
    /// One paragraph: what the learner does and what it shows.
    pub summary: &'static str,
    /// The panel an embed of this lesson should open on: one of the activity tabs (`events`,
    /// `sequence`, `ownership`, `chart`, `console`).
    pub view: &'static str,
    /// Position in the course, from 1.
    pub order: u32,
}

/// The lessons in course order.
pub const LESSONS: &[Lesson] = &[
    Lesson {
        name: "spec-status-gap",
        title: "Spec, status, and the gap between them",
        summary: "Apply a five-replica Deployment and watch status trail spec until the controllers \
                  catch up. The Deployment's conditions tell the story in words: Available is False \
                  with MinimumReplicasUnavailable until enough pods are ready, and Progressing moves \
                  from NewReplicaSetCreated to NewReplicaSetAvailable. Scale it and the gap opens again.",
        view: "chart",
        order: 1,
    },
    Lesson {
        name: "whole-chain",
        title: "One apply, five components",
        summary: "Apply a Deployment into an empty cluster and follow the hand-offs: the API server \
                  stores it, the Deployment controller writes a ReplicaSet, the ReplicaSet controller \
                  writes pods, the scheduler binds them to nodes, and each node's kubelet starts the \
                  containers and reports back. No component calls another; each watches the API \
                  server and writes to it.",
        view: "sequence",
        order: 2,
    },
    Lesson {
        name: "thermostat",
        title: "The thermostat: who repairs what",
        summary: "Delete pods and the ReplicaSet controller creates new ones. Crash a container and \
                  a different loop answers: the kubelet restarts it inside the same pod, counting \
                  restarts and backing off longer each time until the pod shows CrashLoopBackOff. \
                  No replacement pod is made for a crash.",
        view: "events",
        order: 3,
    },
    Lesson {
        name: "level-vs-edge",
        title: "Level-triggered beats edge-triggered",
        summary: "The ReplicaSet controller misses a pod's DELETED event and shrugs it off, because \
                  every pass recounts the pods. Switch it to an edge-triggered teaching variant that \
                  only acts on what each event says, lose the same event, and it stays a pod short \
                  for good, until switching back makes it relist and recount.",
        view: "sequence",
        order: 4,
    },
    Lesson {
        name: "racing-writers",
        title: "Racing writers and 409 Conflict",
        summary: "A rival writer keeps changing the Deployment while you scale it. The controller's \
                  status writes carry the resourceVersion they were based on, lose the race, come \
                  back 409 Conflict, and are redone from a fresh read. Nothing is overwritten \
                  blindly and the final status is exactly right.",
        view: "sequence",
        order: 5,
    },
    Lesson {
        name: "unachievable",
        title: "A spec the cluster cannot satisfy",
        summary: "One hundred pods of 16 CPUs on twenty 16-CPU nodes: twenty run, eighty stay \
                  Pending with \"Insufficient cpu\", and the Deployment reports \
                  ProgressDeadlineExceeded. Every controller is working; the spec is impossible. \
                  Apply an achievable spec and it converges.",
        view: "events",
        order: 6,
    },
    Lesson {
        name: "inconsistent",
        title: "Two specs that contradict each other",
        summary: "Five replicas and a disruption budget demanding ten healthy pods: the budget allows \
                  no evictions, so draining a node retries forever with 429 and the node keeps its \
                  pods. Make the budget consistent and the same drain finishes.",
        view: "console",
        order: 7,
    },
    Lesson {
        name: "never-settles",
        title: "A spec that never settles",
        summary: "kubectl scale and a re-applied manifest take turns rewriting replicas, so the \
                  Deployment flips between 6 and 3 and the ReplicaSet keeps creating and deleting \
                  pods. The fix is one owner per field, with a real trap on the way: removing \
                  replicas from an applied manifest resets it to 1.",
        view: "chart",
        order: 8,
    },
    Lesson {
        name: "fix-the-spec",
        title: "Fix the spec, not the world",
        summary: "Edit what the controllers manage and see what each one compares: relabelled pods \
                  are released and replaced, a hand-changed pod image is never reverted (a \
                  ReplicaSet counts pods, it does not inspect them), and a scaled ReplicaSet is \
                  scaled back by its Deployment. Editing the Deployment gives a proper rollout.",
        view: "ownership",
        order: 9,
    },
    Lesson {
        name: "convergence-is-not-health",
        title: "Converged is not healthy",
        summary: "Make the app fail its readiness probe: every pod exists and the controllers have \
                  nothing left to do, yet no pod is Ready, the Deployment is not Available and the \
                  Service has no ready endpoints. Health comes from probes and conditions, not from \
                  object counts.",
        view: "chart",
        order: 10,
    },
    Lesson {
        name: "node-dies",
        title: "A node dies",
        summary: "Power off a node: after 50 s without heartbeats it turns NotReady and is tainted \
                  unreachable, its pods stop counting as available, and only after their 300 s \
                  toleration are they evicted and replaced elsewhere. Boot it again and its kubelet \
                  cleans up.",
        view: "events",
        order: 11,
    },
    Lesson {
        name: "rolling-updates",
        title: "Rolling updates, a bad image, and undo",
        summary: "Roll out a new image within maxSurge and maxUnavailable, then a typo: the rollout \
                  stalls with old pods still serving and, after the progress deadline, reports \
                  ProgressDeadlineExceeded. Kubernetes does not roll back on its own; kubectl \
                  rollout undo does.",
        view: "ownership",
        order: 12,
    },
    Lesson {
        name: "controllers-crash",
        title: "Controllers crash; nothing is lost",
        summary: "Restart kube-controller-manager in the middle of a rollout. Its caches, queues and \
                  expectations are gone, so it lists everything again, finds the rollout half done, \
                  and finishes it with exactly the right number of pods.",
        view: "sequence",
        order: 13,
    },
    Lesson {
        name: "run-to-completion",
        title: "Run to completion: retries, back-off, and idempotent work",
        summary: "Two pods of a Job fail: the Job controller counts each failure once, waits 10 s, \
                  then 20 s, and the third pod completes the Job. A second Job with backoffLimit 1 \
                  gives up after its second failure. The controller retries the work from the \
                  start each time, so a Job with side effects must do them idempotently.",
        view: "events",
        order: 14,
    },
    Lesson {
        name: "non-idempotent-world",
        title: "The non-idempotent world: a volume that only grows",
        summary: "A StatefulSet's claim template is frozen, so a bigger disk cannot be declared \
                  there. Grow one replica's claim directly and watch the resizer and the kubelet \
                  grow it online; a new replica still gets the old size, and the API server \
                  refuses to shrink it back. The spec can no longer describe the world.",
        view: "events",
        order: 15,
    },
    Lesson {
        name: "at-most-one",
        title: "At most one: a StatefulSet waits where a Deployment moves on",
        summary: "Power off the node under web-1 and one of api's pods. After the 300 s \
                  toleration the Deployment's pod is replaced elsewhere; the StatefulSet makes no \
                  second web-1 while the old pod's object remains, because one identity on one \
                  disk twice is worse than none. Declare the node out of service, and the pod \
                  garbage collector lets web-1 start again on the other node of its zone.",
        view: "events",
        order: 16,
    },
    Lesson {
        name: "operator-is-a-controller",
        title: "An operator is just a controller",
        summary: "kro turns a ResourceGraphDefinition into a new kind, WebApp, and a loop of its \
                  own that makes each WebApp's Deployment and Service and reports status back. \
                  Delete the Deployment and it returns; lose an event and the next one heals; \
                  break the labels that lead an event to its WebApp and only the resync, 10 hours \
                  by default, looks again.",
        view: "sequence",
        order: 17,
    },
    Lesson {
        name: "finalizers-need-a-living-controller",
        title: "Finalizers need a living controller",
        summary: "kro's finalizer holds every WebApp until kro has cleaned up. Stop kro and delete \
                  a WebApp: it stays Terminating, for as long as you wait. Start kro and its loop \
                  deletes the WebApp's resources in reverse order, removes the finalizer, and the \
                  garbage collector takes what the Deployment owned.",
        view: "events",
        order: 18,
    },
    Lesson {
        name: "crash-in-the-middle",
        title: "Crash in the middle",
        summary: "An example operator upgrades a PostgresCluster in two writes: create the \
                  migration Job, then record it in the status. Crash it between the two with a \
                  generateName Job and the restarted operator runs the migration again; name the \
                  Job after its version and the retry finds it, or meets 409 AlreadyExists.",
        view: "sequence",
        order: 19,
    },
    Lesson {
        name: "your-first-controller",
        title: "Your first controller",
        summary: "Write the reconcile of your own kind in JavaScript: read the Website and its \
                  Deployment from your cache, create what is missing, report availability in the \
                  status. Apply it, watch its loop card, delete its Deployment by hand and watch \
                  your loop make it again; then check it against lost events and crashes.",
        view: "sequence",
        order: 20,
    },
    Lesson {
        name: "break-it-then-fix-it",
        title: "Break it, then fix it",
        summary: "A controller that works until something goes wrong: it remembers instead of \
                  looking, and names its Deployment with generateName. Check my controller shows \
                  which faults break it (a hand deletion, a lost event, a crash between two \
                  writes) with a link to each failing run; fix it until the check passes.",
        view: "sequence",
        order: 21,
    },
];

/// The lesson called `name`.
pub fn lesson(name: &str) -> Option<&'static Lesson> {
    LESSONS.iter().find(|l| l.name == name)
}
