//! A pod's PersistentVolumeClaims as small chips: the claim's state, its size and what its volume
//! pins the pod to (a node or a zone), so the cluster view shows why a pod went where it did.
//!
//! Claims and volumes are stored built-in kinds kept as JSON, read with `sim::api::storage`'s
//! helpers. The ownership view describes a StatefulSet's claims with the same words.

use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::apiserver::ApiServer;
use crate::sim::api::storage::{
    claim_kind, pod_claims, resize_status, str_at, volume_kind, CONTROLLER_RESIZE_FAILED,
    CONTROLLER_RESIZE_IN_PROGRESS, FILE_SYSTEM_RESIZE_PENDING, NODE_RESIZE_PENDING, ZONE_LABEL,
};
use crate::sim::api::types::{ObjectKey, Pod};

/// Where a claim stands, in the words `kubectl get pvc` and `kubectl describe pvc` use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimState {
    /// Not bound yet: waiting for its first consumer, a provisioner or a matching volume.
    Pending,
    Bound,
    /// The disk is growing (`ControllerResizeInProgress`, or retrying after
    /// `ControllerResizeFailed`).
    Resizing,
    /// The disk grew; the filesystem waits for a node to grow it (`NodeResizePending`).
    FileSystemResizePending,
    /// Its volume is gone.
    Lost,
    /// The pod names a claim that does not exist: the pod cannot start until it does.
    Missing,
}

impl ClaimState {
    /// The state of `claim` (`None`: it does not exist).
    pub fn of(claim: Option<&CustomObject>) -> ClaimState {
        let Some(claim) = claim else {
            return ClaimState::Missing;
        };
        match str_at(claim, &["status", "phase"]) {
            Some("Bound") => {}
            Some("Lost") => return ClaimState::Lost,
            _ => return ClaimState::Pending,
        }
        // A resizer that writes no allocatedResourceStatuses still says Resizing in a condition.
        let resizing_condition = || {
            let conditions = claim
                .at(&["status", "conditions"])
                .and_then(|c| c.as_array());
            conditions.is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.get("type").and_then(|t| t.as_str()) == Some("Resizing")
                        && c.get("status").and_then(|s| s.as_str()) == Some("True")
                })
            })
        };
        match resize_status(claim) {
            Some(CONTROLLER_RESIZE_IN_PROGRESS | CONTROLLER_RESIZE_FAILED) => ClaimState::Resizing,
            Some(NODE_RESIZE_PENDING) => ClaimState::FileSystemResizePending,
            _ if resizing_condition() => ClaimState::Resizing,
            _ => ClaimState::Bound,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ClaimState::Pending => "Pending",
            ClaimState::Bound => "Bound",
            ClaimState::Resizing => "Resizing",
            ClaimState::FileSystemResizePending => FILE_SYSTEM_RESIZE_PENDING,
            ClaimState::Lost => "Lost",
            ClaimState::Missing => "missing",
        }
    }

    /// The chip's CSS classes (`claim claim--bound`).
    pub fn class(self) -> &'static str {
        match self {
            ClaimState::Pending => "claim claim--pending",
            ClaimState::Bound => "claim claim--bound",
            ClaimState::Resizing | ClaimState::FileSystemResizePending => "claim claim--resizing",
            ClaimState::Lost | ClaimState::Missing => "claim claim--lost",
        }
    }
}

/// What a volume's node affinity pins the pods that mount it to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pin {
    /// `kubernetes.io/hostname`: a local volume, on one node.
    Node(String),
    /// `topology.kubernetes.io/zone`: a zonal disk, reachable from one zone's nodes.
    Zone(String),
}

impl Pin {
    /// The first term's first expression of `spec.nodeAffinity.required`, the one the
    /// provisioners write; a volume without one (or with another key) pins nothing.
    pub fn of(volume: &CustomObject) -> Option<Pin> {
        let expression = volume
            .at(&["spec", "nodeAffinity", "required", "nodeSelectorTerms"])?
            .get(0)?
            .get("matchExpressions")?
            .get(0)?;
        let value = expression.get("values")?.get(0)?.as_str()?.to_string();
        match expression.get("key")?.as_str()? {
            "kubernetes.io/hostname" => Some(Pin::Node(value)),
            ZONE_LABEL => Some(Pin::Zone(value)),
            _ => None,
        }
    }

    /// The node's or the zone's name.
    pub fn name(&self) -> &str {
        match self {
            Pin::Node(n) | Pin::Zone(n) => n,
        }
    }

    /// `on node-1`, `in zone-a`: what the chip shows after the size.
    pub fn short(&self) -> String {
        match self {
            Pin::Node(n) => format!("on {n}"),
            Pin::Zone(z) => format!("in {z}"),
        }
    }

    /// `node node-1`, `zone zone-a`.
    pub fn words(&self) -> String {
        match self {
            Pin::Node(n) => format!("node {n}"),
            Pin::Zone(z) => format!("zone {z}"),
        }
    }
}

/// One claim a pod mounts, as its chip shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimChip {
    pub namespace: String,
    pub name: String,
    pub state: ClaimState,
    /// `status.capacity.storage` once bound, the request while pending; empty when neither.
    pub capacity: String,
    /// While it grows: the size asked for.
    pub growing_to: Option<String>,
    /// The bound volume's name; empty while unbound.
    pub volume: String,
    pub pin: Option<Pin>,
}

impl ClaimChip {
    /// The chip of claim `namespace/name`: `claim` is the stored claim if it exists, and its
    /// volume is looked up in `store` (without one, the chip pins nothing).
    pub fn of(
        namespace: &str,
        name: &str,
        claim: Option<&CustomObject>,
        store: Option<&ApiServer>,
    ) -> ClaimChip {
        let state = ClaimState::of(claim);
        let at = |path: &[&str]| claim.and_then(|c| str_at(c, path)).unwrap_or_default();
        let requested = at(&["spec", "resources", "requests", "storage"]);
        let capacity = match at(&["status", "capacity", "storage"]) {
            "" if state == ClaimState::Pending => requested,
            c => c,
        };
        let growing = matches!(
            state,
            ClaimState::Resizing | ClaimState::FileSystemResizePending
        );
        let volume = at(&["spec", "volumeName"]);
        let pin = (!volume.is_empty() && state != ClaimState::Pending)
            .then(|| store?.get(&ObjectKey::new(volume_kind()?, "", volume)))
            .flatten()
            .and_then(|v| Pin::of(v.as_custom()?));
        ClaimChip {
            namespace: namespace.to_string(),
            name: name.to_string(),
            state,
            capacity: capacity.to_string(),
            growing_to: (growing && !requested.is_empty() && requested != capacity)
                .then(|| requested.to_string()),
            volume: volume.to_string(),
            pin,
        }
    }

    /// The chips of the claims `pod` mounts, in the order of its volumes. A pod with no
    /// volumes costs one check, so a cluster of ten thousand pods without claims pays nothing.
    pub fn of_pod(pod: &Pod, api: &ApiServer) -> Vec<ClaimChip> {
        let names = pod_claims(pod);
        if names.is_empty() {
            return Vec::new();
        }
        let Some(claims) = claim_kind() else {
            return Vec::new();
        };
        let ns = pod.metadata.namespace.as_str();
        names
            .into_iter()
            .map(|name| {
                let claim = api
                    .get(&ObjectKey::new(claims, ns, name))
                    .and_then(|o| o.as_custom());
                ClaimChip::of(ns, name, claim, Some(api))
            })
            .collect()
    }

    /// The claim's key (`None` when it is missing: there is nothing to inspect).
    pub fn key(&self) -> Option<ObjectKey> {
        let kind = claim_kind().filter(|_| self.state != ClaimState::Missing)?;
        Some(ObjectKey::new(kind, &self.namespace, &self.name))
    }

    /// The size as the chip shows it: `1Gi`, or `1Gi→2Gi` while it grows.
    pub fn size(&self) -> String {
        match &self.growing_to {
            Some(to) => format!("{}→{to}", self.capacity),
            None => self.capacity.clone(),
        }
    }

    /// What the chip shows after the state: the size and the pin (`1Gi in zone-a`).
    pub fn details(&self) -> String {
        let mut s = self.size();
        if let Some(pin) = &self.pin {
            s.push(' ');
            s.push_str(&pin.short());
        }
        s
    }

    /// The claim in one line without its name (`Bound 1Gi in zone-a`), for the ownership
    /// view, where the name stands beside it.
    pub fn summary(&self) -> String {
        format!("{} {}", self.state.label(), self.details())
    }

    /// The whole sentence, for the chip's tooltip and screen readers:
    /// `claim data-db-0: Bound, 1Gi, volume pvc-… pinned to zone zone-a`.
    pub fn describe(&self) -> String {
        let mut s = format!("claim {}: {}", self.name, self.state.label());
        match self.state {
            ClaimState::Missing => {
                s.push_str(" (no PersistentVolumeClaim of that name), so the pod cannot start");
                return s;
            }
            ClaimState::Pending if !self.capacity.is_empty() => {
                s.push_str(&format!(", {} requested", self.capacity));
            }
            _ if !self.capacity.is_empty() => s.push_str(&format!(", {}", self.capacity)),
            _ => {}
        }
        if let Some(to) = &self.growing_to {
            s.push_str(&format!(" growing to {to}"));
        }
        if !self.volume.is_empty() {
            s.push_str(&format!(", volume {}", self.volume));
            if let Some(pin) = &self.pin {
                s.push_str(&format!(" pinned to {}", pin.words()));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::Kind;
    use crate::sim::session::Session;

    fn chips(s: &Session, pod: &str) -> Vec<ClaimChip> {
        let api = s.sim.api();
        let pod = api
            .list(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .find(|p| p.metadata.name == pod)
            .expect("the pod");
        ClaimChip::of_pod(pod, api)
    }

    fn chip(s: &Session, pod: &str) -> ClaimChip {
        let mut all = chips(s, pod);
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    /// Lesson 15 (the StatefulSet db, a claim `data-db-<n>` per replica on a zonal disk of the
    /// class `disk`, nodes in three zones), `ms` into its run.
    fn lesson(ms: u64) -> Session {
        let text = crate::sim::examples::by_name("non-idempotent-world").expect("lesson 15");
        let mut s = Session::load("lesson.yaml", text, None).expect("loads");
        s.advance_to(ms, usize::MAX);
        s
    }

    fn kubectl(s: &mut Session, cmd: &str) -> String {
        let out = s.kubectl(cmd);
        assert!(out.ok, "{cmd}: {}", out.stderr);
        out.stdout
    }

    #[test]
    fn a_claim_whose_pod_waits_for_a_node_is_pending_with_its_request_and_pins_nothing() {
        let mut s = lesson(0);
        // The controller makes db-0's claim, then db-0, whose node decides where the disk goes.
        while s.sim.api().list(Kind::Pod).next().is_none() {
            let t = s.sim.now();
            assert!(t < 10_000, "no pod after 10 s");
            s.advance_to(t + 100, usize::MAX);
        }
        let c = chip(&s, "db-0");
        assert_eq!(
            (c.name.as_str(), c.state, c.capacity.as_str(), &c.pin),
            ("data-db-0", ClaimState::Pending, "1Gi", &None)
        );
        assert_eq!(c.describe(), "claim data-db-0: Pending, 1Gi requested");
        assert!(c.key().is_some());
    }

    #[test]
    fn a_pod_naming_a_claim_that_does_not_exist_shows_it_missing_with_nothing_to_inspect() {
        let mut s = Session::new(1);
        let stray = "apiVersion: v1\nkind: Pod\nmetadata: {name: stray}\nspec:\n  containers: [{name: app, image: \"nginx:1.27\"}]\n  volumes:\n  - {name: scratch, emptyDir: {}}\n  - {name: logs, persistentVolumeClaim: {claimName: nowhere}}\n";
        assert!(s.apply_text("stray.yaml", stray).ok);
        s.advance_to(10_000, usize::MAX);
        let chip = chip(&s, "stray");
        assert_eq!(chip.name, "nowhere", "the emptyDir is no claim");
        assert_eq!(chip.state, ClaimState::Missing);
        assert_eq!(
            chip.describe(),
            "claim nowhere: missing (no PersistentVolumeClaim of that name), so the pod cannot start"
        );
        assert_eq!(chip.key(), None);
    }

    #[test]
    fn a_bound_zonal_disk_says_its_volume_and_the_zone_it_pins_the_pod_to() {
        let mut s = lesson(90_000);
        let node = kubectl(&mut s, "get pod db-0 -o jsonpath={.spec.nodeName}");
        let zone = kubectl(
            &mut s,
            &format!(
                "get node {node} -o jsonpath={{.metadata.labels.topology\\.kubernetes\\.io/zone}}"
            ),
        );
        let volume = kubectl(&mut s, "get pvc data-db-0 -o jsonpath={.spec.volumeName}");
        let disk = chip(&s, "db-0");
        assert_eq!(disk.state, ClaimState::Bound);
        assert_eq!(disk.pin, Some(Pin::Zone(zone.clone())));
        assert_eq!(
            disk.describe(),
            format!("claim data-db-0: Bound, 1Gi, volume {volume} pinned to zone {zone}")
        );
        assert_eq!(disk.details(), format!("1Gi in {zone}"));
        assert_eq!(disk.summary(), format!("Bound 1Gi in {zone}"));
    }

    #[test]
    fn a_growing_claim_is_resizing_then_waits_for_its_filesystem_then_shows_its_new_size() {
        let mut s = lesson(90_000);
        kubectl(
            &mut s,
            r#"patch pvc data-db-0 -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'"#,
        );
        let t = s.sim.now();
        let at = |s: &mut Session, ms| {
            s.advance_to(t + ms, usize::MAX);
            let c = chip(s, "db-0");
            (c.state, c.size())
        };
        assert_eq!(
            at(&mut s, 1_000),
            (ClaimState::Resizing, "1Gi→2Gi".to_string())
        );
        assert_eq!(
            at(&mut s, 5_500),
            (ClaimState::FileSystemResizePending, "1Gi→2Gi".to_string())
        );
        assert_eq!(at(&mut s, 10_000), (ClaimState::Bound, "2Gi".to_string()));
    }

    #[test]
    fn a_local_path_volume_pins_its_pod_to_one_node() {
        let mut s = Session::new(1);
        let web = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  serviceName: web\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: nginx, image: \"nginx:1.27\"}]\n  volumeClaimTemplates:\n  - metadata: {name: www}\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources: {requests: {storage: 1Gi}}\n";
        assert!(s.apply_text("web.yaml", web).ok);
        s.advance_to(60_000, usize::MAX);
        let node = kubectl(&mut s, "get pod web-0 -o jsonpath={.spec.nodeName}");
        let chip = chip(&s, "web-0");
        assert_eq!(chip.name, "www-web-0");
        assert_eq!(chip.pin, Some(Pin::Node(node.clone())));
        assert_eq!(chip.details(), format!("1Gi on {node}"));
        assert!(
            chip.describe()
                .ends_with(&format!(" pinned to node {node}")),
            "{}",
            chip.describe()
        );
    }
}
