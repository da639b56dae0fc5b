//! Faults: the closed set of things a learner (or a scenario, or the JS API) can break.
//!
//! Faults are plain data with a serde form (`{type: NodeDown, node: node-2}`) so that the UI's
//! buttons, scenario steps, share links, the CLI and the embed SDK all speak the same language.
//!
//! Two entries are operations rather than breakage, kept here so that scenarios, share links and
//! the UI can use them the same way: `SetTriggerMode` (the level/edge teaching switch) and
//! `SetResync` (an informer's resync period). Faults with a `duration` heal by themselves: the
//! world schedules the heal as an event and traces it, caused by the fault.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::api::types::Millis;

fn is_default_namespace(ns: &String) -> bool {
    ns == "default"
}

fn de_duration_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Millis>, D::Error> {
    let v = Option::<Json>::deserialize(d)?;
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => super::time::parse_duration(&s)
            .map(Some)
            .map_err(serde::de::Error::custom),
        // Whole seconds; past the longest simulated duration it is refused, not overflowed.
        Some(Json::Number(n)) => match n.as_u64().and_then(|s| s.checked_mul(1000)) {
            Some(ms) if ms <= super::api::limits::MAX_DURATION_MS => Ok(Some(ms)),
            _ => Err(serde::de::Error::custom(format!(
                "invalid duration {n}: a number of seconds must be a whole number from 0 to {}",
                super::api::limits::MAX_DURATION_MS / 1000
            ))),
        },
        Some(other) => Err(serde::de::Error::custom(format!(
            "invalid duration {other}"
        ))),
    }
}

/// A resync period: a duration, or `off` / `never` / null for none (YAML reads a bare `off` as
/// `false`).
fn de_period<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Millis>, D::Error> {
    match Option::<Json>::deserialize(d)? {
        None | Some(Json::Null) | Some(Json::Bool(false)) => Ok(None),
        Some(Json::String(s)) if matches!(s.as_str(), "off" | "never" | "none") => Ok(None),
        Some(other) => de_duration_opt(other).map_err(serde::de::Error::custom),
    }
}

fn de_duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Millis, D::Error> {
    de_duration_opt(d)?.ok_or_else(|| serde::de::Error::custom("missing duration"))
}

fn ser_duration_opt<S: serde::Serializer>(v: &Option<Millis>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(ms) => s.serialize_str(&super::time::format_duration(*ms)),
        None => s.serialize_none(),
    }
}

fn ser_duration<S: serde::Serializer>(v: &Millis, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&super::time::format_duration(*v))
}

/// How a controller is woken and what it looks at (set per component with `SetTriggerMode`).
///
/// `Level` is how Kubernetes works; `Edge` is a teaching device (see [`EDGE_TRIGGERED_NOTE`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum TriggerMode {
    /// Every pass recomputes from the whole cached state; events only say which key to look at;
    /// relists and resyncs queue every key again. A missed event is repaired by the next one.
    #[default]
    #[serde(alias = "level")]
    Level,
    /// Each pass acts only on the change one event carried ("a pod was deleted: create one"),
    /// never looking at the whole state and never relisting or resyncing. A missed event is
    /// missed forever.
    #[serde(alias = "edge")]
    Edge,
}

impl TriggerMode {
    /// `level` or `edge`, as the UI and the trace word it.
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerMode::Level => "level",
            TriggerMode::Edge => "edge",
        }
    }
}

/// What the UI says wherever the edge-triggered switch appears: it is not how Kubernetes works.
pub const EDGE_TRIGGERED_NOTE: &str =
    "Edge-triggered mode is a teaching device, not how Kubernetes works. \
Real controllers are level-triggered: an event only says which object to look at, and every pass \
compares the whole current state with the spec, so a missed, late or duplicated event is repaired \
by the next one, by a relist or by a resync. This variant instead acts only on the change each \
event carries (a ReplicaSet was added: create spec.replicas pods; a pod was deleted: create one; \
replicas went from 3 to 5: create 2) and never relists or resyncs, so one lost event leaves it \
wrong for good.";

/// One of the example operator's teaching switches (`SetOperatorBug`): each is a deliberate bug,
/// NOT how the operator (or a well-written one) works; see [`OPERATOR_BUG_NOTE`] and
/// [`OperatorBug::note`]. The operator is `controllers::postgres`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum OperatorBug {
    /// Acts on each event's delta and never relists or resyncs: a dropped event leaves it wrong.
    /// The fix: level-triggered, every pass compares the whole cached state with the spec.
    #[serde(rename = "edge-triggered")]
    EdgeTriggered,
    /// The migration Job gets `generateName`: a crash between its create and the status write
    /// runs the migration twice. The fix: the deterministic name `<cluster>-migrate-<version>`,
    /// so a retried create meets 409 AlreadyExists.
    #[serde(rename = "generate-name")]
    GenerateName,
    /// Status goes in a plain write of the main resource, with a CRD that has no status
    /// subresource: every status write moves `metadata.generation`, so it never catches up.
    /// The fix: the status subresource, written through `/status`.
    #[serde(rename = "status-on-main-resource")]
    StatusOnMainResource,
    /// A storage change is pushed through the StatefulSet's `volumeClaimTemplates`, which the
    /// API server refuses (422) on every retry. The fix: patch each PersistentVolumeClaim.
    #[serde(rename = "volume-via-template")]
    VolumeViaTemplate,
}

impl OperatorBug {
    /// Every switch, in the order the UI lists them.
    pub const ALL: [OperatorBug; 4] = [
        OperatorBug::EdgeTriggered,
        OperatorBug::GenerateName,
        OperatorBug::StatusOnMainResource,
        OperatorBug::VolumeViaTemplate,
    ];

    /// `edge-triggered`, `generate-name`, … as scenarios and the trace write it.
    pub fn as_str(self) -> &'static str {
        match self {
            OperatorBug::EdgeTriggered => "edge-triggered",
            OperatorBug::GenerateName => "generate-name",
            OperatorBug::StatusOnMainResource => "status-on-main-resource",
            OperatorBug::VolumeViaTemplate => "volume-via-template",
        }
    }

    /// What the UI says next to the switch: the bug, what it does, and the fix.
    pub fn note(self) -> &'static str {
        match self {
            OperatorBug::EdgeTriggered => {
                "Deliberate bug: the operator acts only on the change each event carries (a \
cluster was added: create its objects; replicas went from 1 to 3: patch the StatefulSet) and never \
relists or resyncs, so a dropped event leaves it wrong for good. The fix: be level-triggered, \
compare the whole cached state with the spec on every pass."
            }
            OperatorBug::GenerateName => {
                "Deliberate bug: the migration Job is created with generateName, and whether a \
migration was started is read from the cluster's status. A crash between the Job's create and \
the status write forgets it, and the restarted operator runs the migration again. The fix: a \
deterministic name (<cluster>-migrate-<version>), so a retry meets 409 AlreadyExists."
            }
            OperatorBug::StatusOnMainResource => {
                "Deliberate bug: the CRD is installed without the status subresource and the \
operator writes status with a plain update of the main resource. Status is then part of the \
object, so every status write moves metadata.generation, and status.observedGeneration is never \
current: the operator writes again, forever. The fix: the status subresource, written through \
/status, which leaves the generation alone."
            }
            OperatorBug::VolumeViaTemplate => {
                "Deliberate bug: a storage change is written into the StatefulSet's \
volumeClaimTemplates, which the API server refuses (422 Forbidden: updates to statefulset spec \
for fields other than ... are forbidden), on every retry. The fix: patch each \
PersistentVolumeClaim the StatefulSet made directly."
            }
        }
    }
}

/// What the UI says wherever the example operator's switches appear.
pub const OPERATOR_BUG_NOTE: &str =
    "These switches are deliberate bugs in the example operator, a teaching device. Each one is \
a mistake real operators have made; with every switch off, the operator does what a careful \
kubebuilder or kube-rs operator does.";

/// Which pods a pod or container fault hits: one by name, or all matching a label selector.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTarget {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// A label selector such as `app=web`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[serde(skip_serializing_if = "is_default_namespace")]
    pub namespace: String,
    /// A container name; the pod's first container when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

/// Every fault the playground can inject. Imperative names, as in the code-style guide.
///
/// Its `Deserialize` is written by hand (`mod de` below) because the derived one weighed about
/// 20 kB of the page's gzip; it accepts what `#[serde(tag = "type", deny_unknown_fields)]` did, in
/// the same words.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Fault {
    /// Deletes pods (as `kubectl delete pod`): the ReplicaSet replaces them.
    DeletePod {
        #[serde(flatten)]
        target: PodTarget,
    },
    /// The container exits once with `exitCode`; the kubelet restarts it per restartPolicy.
    CrashContainer {
        #[serde(flatten)]
        target: PodTarget,
        #[serde(rename = "exitCode")]
        exit_code: i32,
    },
    /// The container keeps exiting shortly after each start → CrashLoopBackOff.
    CrashLoop {
        #[serde(flatten)]
        target: PodTarget,
        #[serde(rename = "exitCode")]
        exit_code: i32,
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// The container is killed for exceeding its memory limit (exit 137, reason OOMKilled).
    OomKill {
        #[serde(flatten)]
        target: PodTarget,
    },
    /// The readiness probe fails for a while: the pod leaves Ready and its Service's endpoints.
    FailReadiness {
        #[serde(flatten)]
        target: PodTarget,
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// The liveness probe fails for a while: the kubelet restarts the container.
    FailLiveness {
        #[serde(flatten)]
        target: PodTarget,
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// The registry stops serving an image: pulls fail with ErrImagePull → ImagePullBackOff.
    BreakImage { image: String },
    /// The registry serves a broken image again.
    FixImage { image: String },
    /// The machine dies: kubelet and containers gone, heartbeats stop.
    NodeDown { node: String },
    /// The machine is powered on: it boots for `world::MACHINE_BOOT_MS`, then its kubelet
    /// starts, relists and reconciles its pods.
    NodeUp { node: String },
    /// The kubelet is cut off from the API server: containers run on, status goes stale.
    PartitionNode { node: String },
    /// Ends a partition: the kubelet resumes its watch (or relists after 410) and reconciles.
    HealNode { node: String },
    /// A component's informer loses watch events: the next `count` (default 1), each with
    /// `probability`, or — with only a `duration` — every matching one for that long. Its cache
    /// stays stale for those objects until a later event about them or a relist.
    DropWatchEvents {
        component: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        probability: Option<f64>,
        /// Only events about objects of this kind (e.g. `Pod`).
        #[serde(skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        /// Only events of this type: `ADDED`, `MODIFIED` or `DELETED`.
        #[serde(rename = "eventType", skip_serializing_if = "Option::is_none")]
        event_type: Option<String>,
        /// With a duration the watch counts as broken for that long: when it heals, the informer
        /// relists, as client-go's reflector does when a watch fails, and sees what it missed.
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// A component's watch lags by `delay`: it acts on a stale view.
    DelayWatchEvents {
        component: String,
        #[serde(serialize_with = "ser_duration")]
        delay: Millis,
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// The process restarts: caches, work queues and in-memory state (expectations) are lost;
    /// it relists and reconciles everything. `controller-manager` restarts all its controllers.
    RestartController { component: String },
    /// Stops a component (or `kube-apiserver`: every client then gets 503 and retries).
    StopComponent { component: String },
    /// Starts a stopped component.
    StartComponent { component: String },
    /// A second writer races the owners of `object` (`Kind/namespace/name`): just before each
    /// conditional write that would succeed it writes the object itself, so that write meets
    /// 409 Conflict and is retried from a fresh read. Nothing is lost; each write costs one 409.
    ConflictingWriter {
        object: String,
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// A merge patch applied directly to a live object, outside its owner (`Kind/namespace/name`).
    EditObject { object: String, patch: Json },
    /// The next `count` pods the Job `job` creates each exit non-zero once: their first run of
    /// their first container ends with `exitCode` (after the time it would have run, or 1–3 s
    /// for a server).
    FailJobPods {
        job: String,
        #[serde(skip_serializing_if = "is_default_namespace")]
        namespace: String,
        count: u32,
        #[serde(rename = "exitCode")]
        exit_code: i32,
    },
    /// The storage system refuses the next `count` volumes a provisioner asks it for (of
    /// `storageClass`, or of any class): `ProvisioningFailed`, retried with back-off.
    FailVolumeProvisioning {
        #[serde(rename = "storageClass", skip_serializing_if = "String::is_empty")]
        storage_class: String,
        count: u32,
    },
    /// The storage system refuses the next `count` expansions a resizer asks it for (of
    /// `storageClass`, or of any class): `VolumeResizeFailed`, retried with back-off.
    FailVolumeExpansion {
        #[serde(rename = "storageClass", skip_serializing_if = "String::is_empty")]
        storage_class: String,
        count: u32,
    },
    /// The disk bound to a claim falls off the node it is attached to, behind the cluster's back
    /// (a cloud-side detach): the driver's external-attacher finds out at its next check against
    /// the storage system and attaches it again.
    DetachVolume {
        claim: String,
        #[serde(skip_serializing_if = "is_default_namespace")]
        namespace: String,
    },
    /// The component's next reconcile pass that sends more than `afterRequests` requests sends
    /// only the first `afterRequests` and the process dies: its cache, queue and memory are
    /// gone, and it is started again after the kubelet's 10 s crash back-off (Sieve's
    /// intermediate-state bugs). A controller of kube-controller-manager takes the whole process
    /// down with it.
    CrashMidReconcile {
        component: String,
        #[serde(rename = "afterRequests")]
        after_requests: u32,
    },
    /// Teaching switch: runs a controller level-triggered (as Kubernetes does) or edge-triggered
    /// (acting only on each event's delta, never relisting). Restarts the component.
    SetTriggerMode {
        component: String,
        mode: TriggerMode,
    },
    /// Teaching switch: turns one of the example operator's deliberate bugs on or off
    /// (`postgres-operator`, an add-on). Restarts the operator.
    SetOperatorBug { bug: OperatorBug, enabled: bool },
    /// Sets a component's informer resync period (`off`, or absent, for none, as
    /// kube-controller-manager's controllers effectively run).
    SetResync {
        component: String,
        #[serde(serialize_with = "ser_duration_opt")]
        period: Option<Millis>,
    },
}

impl Fault {
    /// The variant name, for the trace and the UI.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::DeletePod { .. } => "DeletePod",
            Fault::CrashContainer { .. } => "CrashContainer",
            Fault::CrashLoop { .. } => "CrashLoop",
            Fault::OomKill { .. } => "OomKill",
            Fault::FailReadiness { .. } => "FailReadiness",
            Fault::FailLiveness { .. } => "FailLiveness",
            Fault::BreakImage { .. } => "BreakImage",
            Fault::FixImage { .. } => "FixImage",
            Fault::NodeDown { .. } => "NodeDown",
            Fault::NodeUp { .. } => "NodeUp",
            Fault::PartitionNode { .. } => "PartitionNode",
            Fault::HealNode { .. } => "HealNode",
            Fault::DropWatchEvents { .. } => "DropWatchEvents",
            Fault::DelayWatchEvents { .. } => "DelayWatchEvents",
            Fault::RestartController { .. } => "RestartController",
            Fault::StopComponent { .. } => "StopComponent",
            Fault::StartComponent { .. } => "StartComponent",
            Fault::ConflictingWriter { .. } => "ConflictingWriter",
            Fault::EditObject { .. } => "EditObject",
            Fault::FailJobPods { .. } => "FailJobPods",
            Fault::FailVolumeProvisioning { .. } => "FailVolumeProvisioning",
            Fault::FailVolumeExpansion { .. } => "FailVolumeExpansion",
            Fault::DetachVolume { .. } => "DetachVolume",
            Fault::CrashMidReconcile { .. } => "CrashMidReconcile",
            Fault::SetTriggerMode { .. } => "SetTriggerMode",
            Fault::SetResync { .. } => "SetResync",
            Fault::SetOperatorBug { .. } => "SetOperatorBug",
        }
    }

    /// One line for the trace and the timeline.
    pub fn describe(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| self.name().to_string())
    }
}

/// `Fault`'s `Deserialize`, by hand. The derive (`tag = "type"`) buffered each fault into serde's
/// `Content` and replayed it into the variant's own visitor, which compiled serde's content
/// deserializer once per variant: 27 copies, about 20 kB of the page's gzip. Here the map is read
/// once into JSON values and every variant's fields go through the same few readers, in input
/// order, so what is accepted and the first error reported stay those of the derive.
/// Every fault's `type`, in declaration order (what a scenario may name).
pub use de::VARIANTS as FAULT_TYPES;

mod de {
    use std::fmt;

    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::Value as Json;

    use super::{Fault, Millis, OperatorBug, PodTarget, TriggerMode};

    pub const VARIANTS: [&str; 27] = [
        "DeletePod",
        "CrashContainer",
        "CrashLoop",
        "OomKill",
        "FailReadiness",
        "FailLiveness",
        "BreakImage",
        "FixImage",
        "NodeDown",
        "NodeUp",
        "PartitionNode",
        "HealNode",
        "DropWatchEvents",
        "DelayWatchEvents",
        "RestartController",
        "StopComponent",
        "StartComponent",
        "ConflictingWriter",
        "EditObject",
        "FailJobPods",
        "FailVolumeProvisioning",
        "FailVolumeExpansion",
        "DetachVolume",
        "CrashMidReconcile",
        "SetTriggerMode",
        "SetResync",
        "SetOperatorBug",
    ];

    /// How a field's value is read (the derive's field types and `deserialize_with`s).
    #[derive(Clone, Copy)]
    enum Kind {
        Str,
        OptStr,
        U32,
        OptU32,
        I32,
        OptF64,
        Duration,
        OptDuration,
        Period,
        Any,
        Mode,
        Bug,
        Bool,
    }

    enum Val {
        Str(String),
        OptStr(Option<String>),
        U32(u32),
        OptU32(Option<u32>),
        I32(i32),
        OptF64(Option<f64>),
        Ms(Option<Millis>),
        Any(Json),
        Mode(TriggerMode),
        Bug(OperatorBug),
        Bool(bool),
    }

    /// A field: its name, how it reads, and whether it is required.
    type Spec = (&'static str, Kind, bool);

    const POD_TARGET: &[Spec] = &[
        ("pod", Kind::OptStr, false),
        ("selector", Kind::OptStr, false),
        ("namespace", Kind::Str, false),
        ("container", Kind::OptStr, false),
    ];

    fn err(e: serde_json::Error) -> String {
        e.to_string()
    }

    fn read(kind: Kind, v: &Json) -> Result<Val, String> {
        Ok(match kind {
            Kind::Str => Val::Str(String::deserialize(v).map_err(err)?),
            Kind::OptStr => Val::OptStr(Option::deserialize(v).map_err(err)?),
            Kind::U32 => Val::U32(u32::deserialize(v).map_err(err)?),
            Kind::OptU32 => Val::OptU32(Option::deserialize(v).map_err(err)?),
            Kind::I32 => Val::I32(i32::deserialize(v).map_err(err)?),
            Kind::OptF64 => Val::OptF64(Option::deserialize(v).map_err(err)?),
            Kind::Duration => Val::Ms(Some(super::de_duration(v).map_err(err)?)),
            Kind::OptDuration => Val::Ms(super::de_duration_opt(v).map_err(err)?),
            Kind::Period => Val::Ms(super::de_period(v).map_err(err)?),
            Kind::Any => Val::Any(v.clone()),
            Kind::Mode => Val::Mode(TriggerMode::deserialize(v).map_err(err)?),
            Kind::Bug => Val::Bug(OperatorBug::deserialize(v).map_err(err)?),
            Kind::Bool => Val::Bool(bool::deserialize(v).map_err(err)?),
        })
    }

    /// serde's wording for the names an `unknown field` could have been.
    fn one_of(names: &[&str]) -> String {
        match names {
            [] => "there are no fields".into(),
            [a] => format!("expected `{a}`"),
            [a, b] => format!("expected `{a}` or `{b}`"),
            _ => {
                let mut s = String::from("expected one of ");
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push('`');
                    s.push_str(n);
                    s.push('`');
                }
                s
            }
        }
    }

    /// A fault's fields, as a map (the usual form) or a sequence after the tag.
    struct Body {
        name: &'static str,
        map: Vec<(String, Json)>,
        seq: Option<Vec<Json>>,
    }

    /// A variant's fields, read as the derive's visitor read them.
    struct Fields {
        slots: Vec<Option<Val>>,
    }

    impl Fields {
        /// Reads `specs` from `entries` in input order. `strict` refuses other names (a variant
        /// without a flattened `PodTarget`); otherwise they are left for the next reader.
        fn read(body: &Body, specs: &[Spec], strict: bool) -> Result<Fields, String> {
            let mut slots: Vec<Option<Val>> = specs.iter().map(|_| None).collect();
            if let Some(items) = &body.seq {
                // The derive's sequence form: the fields in declaration order.
                let n = specs.len();
                let plural = if n == 1 { "" } else { "s" };
                for (i, spec) in specs.iter().enumerate() {
                    match items.get(i) {
                        Some(v) => slots[i] = Some(read(spec.1, v)?),
                        None if spec.2 => {
                            return Err(format!(
                                "invalid length {i}, expected struct variant Fault::{} with {n} element{plural}",
                                body.name
                            ))
                        }
                        None => {}
                    }
                }
                if items.len() > n {
                    return Err(format!(
                        "invalid length {}, expected {n} element{plural} in sequence",
                        items.len()
                    ));
                }
                return Ok(Fields { slots });
            }
            for (k, v) in &body.map {
                match specs.iter().position(|s| s.0 == k.as_str()) {
                    Some(i) if slots[i].is_some() => {
                        return Err(format!("duplicate field `{k}`"));
                    }
                    Some(i) => slots[i] = Some(read(specs[i].1, v)?),
                    None if strict => {
                        let names: Vec<&str> = specs.iter().map(|s| s.0).collect();
                        return Err(format!("unknown field `{k}`, {}", one_of(&names)));
                    }
                    None => {}
                }
            }
            if let Some(s) = specs.iter().zip(&slots).find(|(s, v)| s.2 && v.is_none()) {
                return Err(format!("missing field `{}`", s.0 .0));
            }
            Ok(Fields { slots })
        }

        fn str(&mut self, i: usize, default: &str) -> String {
            match self.slots[i].take() {
                Some(Val::Str(s)) => s,
                _ => default.into(),
            }
        }

        fn opt_str(&mut self, i: usize) -> Option<String> {
            match self.slots[i].take() {
                Some(Val::OptStr(s)) => s,
                _ => None,
            }
        }

        fn u32(&mut self, i: usize, default: u32) -> u32 {
            match self.slots[i].take() {
                Some(Val::U32(n)) => n,
                _ => default,
            }
        }

        fn opt_u32(&mut self, i: usize) -> Option<u32> {
            match self.slots[i].take() {
                Some(Val::OptU32(n)) => n,
                _ => None,
            }
        }

        fn exit_code(&mut self, i: usize) -> i32 {
            match self.slots[i].take() {
                Some(Val::I32(n)) => n,
                _ => 1,
            }
        }

        fn opt_f64(&mut self, i: usize) -> Option<f64> {
            match self.slots[i].take() {
                Some(Val::OptF64(n)) => n,
                _ => None,
            }
        }

        fn ms(&mut self, i: usize) -> Option<Millis> {
            match self.slots[i].take() {
                Some(Val::Ms(n)) => n,
                _ => None,
            }
        }

        fn json(&mut self, i: usize) -> Json {
            match self.slots[i].take() {
                Some(Val::Any(j)) => j,
                _ => Json::Null,
            }
        }

        fn mode(&mut self, i: usize) -> TriggerMode {
            match self.slots[i].take() {
                Some(Val::Mode(m)) => m,
                _ => TriggerMode::default(),
            }
        }

        fn bug(&mut self, i: usize) -> OperatorBug {
            match self.slots[i].take() {
                Some(Val::Bug(b)) => b,
                _ => OperatorBug::EdgeTriggered,
            }
        }

        fn bool(&mut self, i: usize, default: bool) -> bool {
            match self.slots[i].take() {
                Some(Val::Bool(b)) => b,
                _ => default,
            }
        }
    }

    /// A variant with a flattened `PodTarget`: its own fields first, then the target's, then
    /// whatever neither took is refused, in the derive's order and words.
    fn with_target(body: &Body, own: &[Spec]) -> Result<(PodTarget, Fields), String> {
        if body.seq.is_some() {
            return Err(format!(
                "invalid type: sequence, expected struct variant Fault::{}",
                body.name
            ));
        }
        let fields = Fields::read(body, own, false)?;
        let mut t = Fields::read(body, POD_TARGET, false)?;
        if let Some((k, _)) = body
            .map
            .iter()
            .find(|(k, _)| !own.iter().chain(POD_TARGET).any(|s| s.0 == k.as_str()))
        {
            return Err(format!("unknown field `{k}`"));
        }
        let target = PodTarget {
            pod: t.opt_str(0),
            selector: t.opt_str(1),
            namespace: t.str(2, "default"),
            container: t.opt_str(3),
        };
        Ok((target, fields))
    }

    fn one(entries: &Body, name: &'static str) -> Result<String, String> {
        Ok(Fields::read(entries, &[(name, Kind::Str, true)], true)?.str(0, ""))
    }

    /// The tag, read straight from the input as the derive read it (so a bad one is refused
    /// where it stands, in serde's words).
    struct Tag(&'static str);

    impl<'de> Deserialize<'de> for Tag {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tag, D::Error> {
            d.deserialize_identifier(TagVisitor)
        }
    }

    struct TagVisitor;

    impl Visitor<'_> for TagVisitor {
        type Value = Tag;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("variant identifier")
        }

        fn visit_str<E: de::Error>(self, s: &str) -> Result<Tag, E> {
            match VARIANTS.iter().find(|v| **v == s) {
                Some(v) => Ok(Tag(v)),
                None => Err(de::Error::unknown_variant(s, &VARIANTS)),
            }
        }
    }

    fn build(
        name: &'static str,
        map: Vec<(String, Json)>,
        seq: Option<Vec<Json>>,
    ) -> Result<Fault, String> {
        use Kind::*;
        const DURATION: &[Spec] = &[("duration", OptDuration, false)];
        let e = &Body { name, map, seq };
        Ok(match name {
            "DeletePod" => Fault::DeletePod {
                target: with_target(e, &[])?.0,
            },
            "CrashContainer" => {
                let (target, mut f) = with_target(e, &[("exitCode", I32, false)])?;
                Fault::CrashContainer {
                    target,
                    exit_code: f.exit_code(0),
                }
            }
            "CrashLoop" => {
                let own = [("exitCode", I32, false), ("duration", OptDuration, false)];
                let (target, mut f) = with_target(e, &own)?;
                Fault::CrashLoop {
                    target,
                    exit_code: f.exit_code(0),
                    duration: f.ms(1),
                }
            }
            "OomKill" => Fault::OomKill {
                target: with_target(e, &[])?.0,
            },
            "FailReadiness" => {
                let (target, mut f) = with_target(e, DURATION)?;
                Fault::FailReadiness {
                    target,
                    duration: f.ms(0),
                }
            }
            "FailLiveness" => {
                let (target, mut f) = with_target(e, DURATION)?;
                Fault::FailLiveness {
                    target,
                    duration: f.ms(0),
                }
            }
            "BreakImage" => Fault::BreakImage {
                image: one(e, "image")?,
            },
            "FixImage" => Fault::FixImage {
                image: one(e, "image")?,
            },
            "NodeDown" => Fault::NodeDown {
                node: one(e, "node")?,
            },
            "NodeUp" => Fault::NodeUp {
                node: one(e, "node")?,
            },
            "PartitionNode" => Fault::PartitionNode {
                node: one(e, "node")?,
            },
            "HealNode" => Fault::HealNode {
                node: one(e, "node")?,
            },
            "DropWatchEvents" => {
                let specs = [
                    ("component", Str, true),
                    ("count", OptU32, false),
                    ("probability", OptF64, false),
                    ("kind", OptStr, false),
                    ("eventType", OptStr, false),
                    ("duration", OptDuration, false),
                ];
                let mut f = Fields::read(e, &specs, true)?;
                Fault::DropWatchEvents {
                    component: f.str(0, ""),
                    count: f.opt_u32(1),
                    probability: f.opt_f64(2),
                    kind: f.opt_str(3),
                    event_type: f.opt_str(4),
                    duration: f.ms(5),
                }
            }
            "DelayWatchEvents" => {
                let specs = [
                    ("component", Str, true),
                    ("delay", Duration, true),
                    ("duration", OptDuration, false),
                ];
                let mut f = Fields::read(e, &specs, true)?;
                Fault::DelayWatchEvents {
                    component: f.str(0, ""),
                    delay: f.ms(1).unwrap_or_default(),
                    duration: f.ms(2),
                }
            }
            "RestartController" => Fault::RestartController {
                component: one(e, "component")?,
            },
            "StopComponent" => Fault::StopComponent {
                component: one(e, "component")?,
            },
            "StartComponent" => Fault::StartComponent {
                component: one(e, "component")?,
            },
            "ConflictingWriter" => {
                let specs = [("object", Str, true), ("duration", OptDuration, false)];
                let mut f = Fields::read(e, &specs, true)?;
                Fault::ConflictingWriter {
                    object: f.str(0, ""),
                    duration: f.ms(1),
                }
            }
            "EditObject" => {
                let mut f = Fields::read(e, &[("object", Str, true), ("patch", Any, true)], true)?;
                Fault::EditObject {
                    object: f.str(0, ""),
                    patch: f.json(1),
                }
            }
            "FailJobPods" => {
                let specs = [
                    ("job", Str, true),
                    ("namespace", Str, false),
                    ("count", U32, false),
                    ("exitCode", I32, false),
                ];
                let mut f = Fields::read(e, &specs, true)?;
                Fault::FailJobPods {
                    job: f.str(0, ""),
                    namespace: f.str(1, "default"),
                    count: f.u32(2, 1),
                    exit_code: f.exit_code(3),
                }
            }
            "FailVolumeProvisioning" | "FailVolumeExpansion" => {
                let specs = [("storageClass", Str, false), ("count", U32, false)];
                let mut f = Fields::read(e, &specs, true)?;
                let (storage_class, count) = (f.str(0, ""), f.u32(1, 1));
                if name == "FailVolumeProvisioning" {
                    Fault::FailVolumeProvisioning {
                        storage_class,
                        count,
                    }
                } else {
                    Fault::FailVolumeExpansion {
                        storage_class,
                        count,
                    }
                }
            }
            "DetachVolume" => {
                let specs = [("claim", Str, true), ("namespace", Str, false)];
                let mut f = Fields::read(e, &specs, true)?;
                Fault::DetachVolume {
                    claim: f.str(0, ""),
                    namespace: f.str(1, "default"),
                }
            }
            "CrashMidReconcile" => {
                let specs = [("component", Str, true), ("afterRequests", U32, true)];
                let mut f = Fields::read(e, &specs, true)?;
                Fault::CrashMidReconcile {
                    component: f.str(0, ""),
                    after_requests: f.u32(1, 0),
                }
            }
            "SetTriggerMode" => {
                let mut f =
                    Fields::read(e, &[("component", Str, true), ("mode", Mode, true)], true)?;
                Fault::SetTriggerMode {
                    component: f.str(0, ""),
                    mode: f.mode(1),
                }
            }
            "SetOperatorBug" => {
                let mut f = Fields::read(e, &[("bug", Bug, true), ("enabled", Bool, false)], true)?;
                Fault::SetOperatorBug {
                    bug: f.bug(0),
                    enabled: f.bool(1, true),
                }
            }
            _ => {
                let specs = [("component", Str, true), ("period", Period, false)];
                let mut f = Fields::read(e, &specs, true)?;
                Fault::SetResync {
                    component: f.str(0, ""),
                    period: f.ms(1),
                }
            }
        })
    }

    struct FaultVisitor;

    /// The tag and the rest, as the derive buffered them: a variant's fields are read after the
    /// input is, so their errors carry no line and column, as before.
    type Tagged = (&'static str, Vec<(String, Json)>, Option<Vec<Json>>);

    impl<'de> Visitor<'de> for FaultVisitor {
        type Value = Tagged;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("internally tagged enum Fault")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tagged, A::Error> {
            let mut tag = None;
            let mut entries = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                if key != "type" {
                    entries.push((key, map.next_value()?));
                } else if tag.is_some() {
                    return Err(de::Error::duplicate_field("type"));
                } else {
                    tag = Some(map.next_value::<Tag>()?.0);
                }
            }
            let tag = tag.ok_or_else(|| de::Error::missing_field("type"))?;
            Ok((tag, entries, None))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tagged, A::Error> {
            let tag = seq
                .next_element::<Tag>()?
                .ok_or_else(|| de::Error::missing_field("type"))?
                .0;
            let mut rest = Vec::new();
            while let Some(v) = seq.next_element()? {
                rest.push(v);
            }
            Ok((tag, Vec::new(), Some(rest)))
        }
    }

    impl<'de> Deserialize<'de> for Fault {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fault, D::Error> {
            let (tag, map, seq) = d.deserialize_any(FaultVisitor)?;
            build(tag, map, seq).map_err(de::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_read_from_their_scenario_form() {
        let f: Fault = serde_json::from_str(r#"{"type":"NodeDown","node":"node-2"}"#).unwrap();
        assert_eq!(
            f,
            Fault::NodeDown {
                node: "node-2".into()
            }
        );
        let f: Fault =
            serde_json::from_str(r#"{"type":"FailReadiness","pod":"web-1","duration":"30s"}"#)
                .unwrap();
        assert_eq!(
            f,
            Fault::FailReadiness {
                target: PodTarget {
                    pod: Some("web-1".into()),
                    namespace: "default".into(),
                    ..Default::default()
                },
                duration: Some(30_000)
            }
        );
    }

    #[test]
    fn operations_read_from_their_scenario_form() {
        let f: Fault = serde_json::from_str(
            r#"{"type":"SetTriggerMode","component":"replicaset","mode":"edge"}"#,
        )
        .unwrap();
        assert_eq!(
            f,
            Fault::SetTriggerMode {
                component: "replicaset".into(),
                mode: TriggerMode::Edge
            }
        );
        let f: Fault =
            serde_json::from_str(r#"{"type":"SetResync","component":"replicaset","period":"30s"}"#)
                .unwrap();
        assert_eq!(
            f,
            Fault::SetResync {
                component: "replicaset".into(),
                period: Some(30_000)
            }
        );
        let f: Fault =
            serde_json::from_str(r#"{"type":"SetResync","component":"replicaset","period":"off"}"#)
                .unwrap();
        assert_eq!(
            f,
            Fault::SetResync {
                component: "replicaset".into(),
                period: None
            }
        );
    }

    #[test]
    fn an_operator_bug_switch_reads_its_bug_by_name_and_is_on_unless_told_otherwise() {
        let f: Fault =
            serde_json::from_str(r#"{"type":"SetOperatorBug","bug":"volume-via-template"}"#)
                .unwrap();
        assert_eq!(
            f,
            Fault::SetOperatorBug {
                bug: OperatorBug::VolumeViaTemplate,
                enabled: true
            }
        );
        let e = serde_json::from_str::<Fault>(r#"{"type":"SetOperatorBug","bug":"typo"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("unknown variant `typo`, expected one of `edge-triggered`"),
            "{e}"
        );
        for bug in OperatorBug::ALL {
            let text = serde_json::to_string(&bug).unwrap();
            assert_eq!(text, format!("\"{}\"", bug.as_str()));
            assert!(bug.note().starts_with("Deliberate bug:"), "{bug:?}");
        }
    }

    #[test]
    fn a_fault_survives_a_round_trip_through_its_serde_form() {
        let f = Fault::DropWatchEvents {
            component: "replicaset".into(),
            count: None,
            probability: Some(0.5),
            kind: Some("Pod".into()),
            event_type: Some("DELETED".into()),
            duration: Some(40_000),
        };
        let text = serde_json::to_string(&f).unwrap();
        assert!(text.contains(r#""eventType":"DELETED""#), "{text}");
        assert_eq!(serde_json::from_str::<Fault>(&text).unwrap(), f);
    }

    #[test]
    fn every_fault_variant_round_trips_through_its_serde_form_and_a_bad_field_is_refused_as_before()
    {
        let target = PodTarget {
            pod: Some("web-1".into()),
            selector: Some("app=web".into()),
            namespace: "team-a".into(),
            container: Some("app".into()),
        };
        let all = vec![
            Fault::DeletePod {
                target: target.clone(),
            },
            Fault::CrashContainer {
                target: target.clone(),
                exit_code: 3,
            },
            Fault::CrashLoop {
                target: target.clone(),
                exit_code: -2,
                duration: Some(90_000),
            },
            Fault::OomKill {
                target: PodTarget {
                    selector: Some("app=web".into()),
                    namespace: "default".into(),
                    ..Default::default()
                },
            },
            Fault::FailReadiness {
                target: target.clone(),
                duration: Some(30_000),
            },
            Fault::FailLiveness {
                target,
                duration: None,
            },
            Fault::BreakImage {
                image: "nginx:1.27".into(),
            },
            Fault::FixImage {
                image: "nginx:1.27".into(),
            },
            Fault::NodeDown {
                node: "node-2".into(),
            },
            Fault::NodeUp {
                node: "node-2".into(),
            },
            Fault::PartitionNode {
                node: "node-3".into(),
            },
            Fault::HealNode {
                node: "node-3".into(),
            },
            Fault::DropWatchEvents {
                component: "replicaset".into(),
                count: Some(2),
                probability: Some(0.25),
                kind: Some("Pod".into()),
                event_type: Some("ADDED".into()),
                duration: Some(5_000),
            },
            Fault::DelayWatchEvents {
                component: "scheduler".into(),
                delay: 2_000,
                duration: Some(60_000),
            },
            Fault::RestartController {
                component: "controller-manager".into(),
            },
            Fault::StopComponent {
                component: "kube-apiserver".into(),
            },
            Fault::StartComponent {
                component: "kube-apiserver".into(),
            },
            Fault::ConflictingWriter {
                object: "Deployment/default/web".into(),
                duration: Some(10_000),
            },
            Fault::EditObject {
                object: "Deployment/default/web".into(),
                patch: serde_json::json!({"spec": {"replicas": 5}}),
            },
            Fault::FailJobPods {
                job: "pi".into(),
                namespace: "batch".into(),
                count: 3,
                exit_code: 42,
            },
            Fault::FailVolumeProvisioning {
                storage_class: "zonal".into(),
                count: 2,
            },
            Fault::FailVolumeExpansion {
                storage_class: String::new(),
                count: 1,
            },
            Fault::DetachVolume {
                claim: "data-db-0".into(),
                namespace: "default".into(),
            },
            Fault::CrashMidReconcile {
                component: "statefulset".into(),
                after_requests: 1,
            },
            Fault::SetTriggerMode {
                component: "replicaset".into(),
                mode: TriggerMode::Edge,
            },
            Fault::SetResync {
                component: "replicaset".into(),
                period: Some(30_000),
            },
            Fault::SetOperatorBug {
                bug: OperatorBug::GenerateName,
                enabled: false,
            },
        ];
        let names: std::collections::BTreeSet<&str> = all.iter().map(Fault::name).collect();
        assert_eq!(
            names.len(),
            super::de::VARIANTS.len(),
            "every variant, once"
        );
        for f in &all {
            let text = serde_json::to_string(f).unwrap();
            assert_eq!(serde_json::from_str::<Fault>(&text).unwrap(), *f, "{text}");
            let value = serde_json::to_value(f).unwrap();
            assert_eq!(
                serde_json::from_value::<Fault>(value).unwrap(),
                *f,
                "{text}"
            );
        }
        for (input, message) in [
            (
                r#"{"type":"NodeDown","nod":"x"}"#,
                "unknown field `nod`, expected `node`",
            ),
            (
                r#"{"type":"DeletePod","pod":"web-1","bogus":1}"#,
                "unknown field `bogus`",
            ),
            (
                r#"{"type":"CrashMidReconcile","component":"statefulset"}"#,
                "missing field `afterRequests`",
            ),
            (
                r#"{"type":"DropWatchEvents","component":"c","count":-1}"#,
                "invalid value: integer `-1`, expected u32",
            ),
            (
                r#"{"type":"NodeDown","node":null}"#,
                "invalid type: null, expected a string",
            ),
            (
                r#"{"type":"CrashLoop","pod":"a","duration":1.5}"#,
                "invalid duration 1.5: a number of seconds must be a whole number from 0 to 1000000000000",
            ),
            (
                r#"{"type":"SetTriggerMode","component":"c","mode":"x"}"#,
                "unknown variant `x`, expected one of `Level`, `level`, `Edge`, `edge`",
            ),
            (r#"{"node":"x"}"#, "missing field `type`"),
            (
                r#"{"type":"NodeDwn"}"#,
                "unknown variant `NodeDwn`, expected one of `DeletePod`, `CrashContainer`",
            ),
        ] {
            let value: Json = serde_json::from_str(input).unwrap();
            let e = serde_json::from_value::<Fault>(value).unwrap_err().to_string();
            assert!(e.starts_with(message), "{input}: {e}");
            let e = serde_json::from_str::<Fault>(input).unwrap_err().to_string();
            assert!(e.starts_with(message), "{input}: {e}");
        }
    }

    #[test]
    fn unknown_fault_fields_are_refused() {
        assert!(serde_json::from_str::<Fault>(r#"{"type":"NodeDown","nod":"x"}"#).is_err());
    }
}
