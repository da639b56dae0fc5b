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

fn default_namespace() -> String {
    "default".into()
}

fn is_default_namespace(ns: &String) -> bool {
    ns == "default"
}

fn default_exit_code() -> i32 {
    1
}

fn default_count() -> u32 {
    1
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

/// Which pods a pod or container fault hits: one by name, or all matching a label selector.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodTarget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// A label selector such as `app=web`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[serde(
        default = "default_namespace",
        skip_serializing_if = "is_default_namespace"
    )]
    pub namespace: String,
    /// A container name; the pod's first container when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

/// Every fault the playground can inject. Imperative names, as in the code-style guide.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
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
        #[serde(default = "default_exit_code", rename = "exitCode")]
        exit_code: i32,
    },
    /// The container keeps exiting shortly after each start → CrashLoopBackOff.
    CrashLoop {
        #[serde(flatten)]
        target: PodTarget,
        #[serde(default = "default_exit_code", rename = "exitCode")]
        exit_code: i32,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_duration_opt",
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
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_duration_opt",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// The liveness probe fails for a while: the kubelet restarts the container.
    FailLiveness {
        #[serde(flatten)]
        target: PodTarget,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_duration_opt",
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        probability: Option<f64>,
        /// Only events about objects of this kind (e.g. `Pod`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        /// Only events of this type: `ADDED`, `MODIFIED` or `DELETED`.
        #[serde(default, rename = "eventType", skip_serializing_if = "Option::is_none")]
        event_type: Option<String>,
        /// With a duration the watch counts as broken for that long: when it heals, the informer
        /// relists, as client-go's reflector does when a watch fails, and sees what it missed.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_duration_opt",
            serialize_with = "ser_duration_opt"
        )]
        duration: Option<Millis>,
    },
    /// A component's watch lags by `delay`: it acts on a stale view.
    DelayWatchEvents {
        component: String,
        #[serde(deserialize_with = "de_duration", serialize_with = "ser_duration")]
        delay: Millis,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_duration_opt",
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
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_duration_opt",
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
        #[serde(
            default = "default_namespace",
            skip_serializing_if = "is_default_namespace"
        )]
        namespace: String,
        #[serde(default = "default_count")]
        count: u32,
        #[serde(default = "default_exit_code", rename = "exitCode")]
        exit_code: i32,
    },
    /// The storage system refuses the next `count` volumes a provisioner asks it for (of
    /// `storageClass`, or of any class): `ProvisioningFailed`, retried with back-off.
    FailVolumeProvisioning {
        #[serde(
            default,
            rename = "storageClass",
            skip_serializing_if = "String::is_empty"
        )]
        storage_class: String,
        #[serde(default = "default_count")]
        count: u32,
    },
    /// The storage system refuses the next `count` expansions a resizer asks it for (of
    /// `storageClass`, or of any class): `VolumeResizeFailed`, retried with back-off.
    FailVolumeExpansion {
        #[serde(
            default,
            rename = "storageClass",
            skip_serializing_if = "String::is_empty"
        )]
        storage_class: String,
        #[serde(default = "default_count")]
        count: u32,
    },
    /// The disk bound to a claim falls off the node it is attached to, behind the cluster's back
    /// (a cloud-side detach): the driver's external-attacher finds out at its next check against
    /// the storage system and attaches it again.
    DetachVolume {
        claim: String,
        #[serde(
            default = "default_namespace",
            skip_serializing_if = "is_default_namespace"
        )]
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
    /// Sets a component's informer resync period (`off`, or absent, for none, as
    /// kube-controller-manager's controllers effectively run).
    SetResync {
        component: String,
        #[serde(
            default,
            deserialize_with = "de_period",
            serialize_with = "ser_duration_opt"
        )]
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
        }
    }

    /// One line for the trace and the timeline.
    pub fn describe(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| self.name().to_string())
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
    fn unknown_fault_fields_are_refused() {
        assert!(serde_json::from_str::<Fault>(r#"{"type":"NodeDown","nod":"x"}"#).is_err());
    }
}
