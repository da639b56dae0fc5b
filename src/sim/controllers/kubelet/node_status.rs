//! `kubelet_node_status.go` and the node lease: the Node's status and conditions, and the
//! heartbeat that renews the kubelet's Lease.

use super::*;
use crate::sort::CollectTree;

impl Kubelet {
    /// Node status (checked every 10 s, posted on change or every 5 min) and pod housekeeping:
    /// `syncNodeStatus`, its status setters applied one after another to a copy of the Node.
    pub(super) fn sync_node(
        &mut self,
        now: Millis,
        cache: &Cache,
        rt: Option<&mut NodeRuntime>,
    ) -> Outcome {
        let mut out = Outcome::default();
        let boot_id = rt.as_deref().map(|r| r.boot_id(&self.node));
        if let Some(rt) = rt {
            self.cleanup_pods(now, cache, rt, &mut out);
        }
        let Some(obj) = cache.get(&self.node_key()).cloned() else {
            out.record = Some(ReconcileRecord {
                observed: "Node object not found".into(),
                desired: "Node status posted".into(),
                diff: String::new(),
            });
            return out;
        };
        let Some(node) = obj.as_node() else {
            return out;
        };
        let first_pass = !self.started;
        if first_pass {
            self.started = true;
            out.event(node_event(node, "Starting", "Starting kubelet.".into()));
        }
        let mut new = node.clone();
        let mut changed = set_version_info(&mut new, boot_id, &mut out);
        let (conditions_changed, ready_event) =
            self.set_conditions(&mut new, now, first_pass, &mut out);
        changed |= conditions_changed;
        if first_pass {
            out.event(node_event(
                node,
                "NodeAllocatableEnforced",
                "Updated Node Allocatable limit across pods".into(),
            ));
        }
        if let Some(e) = ready_event {
            out.event(e);
        }
        self.record_schedulable_event(node, &mut out);
        changed |= set_machine_info(&mut new);
        changed |= self.set_addresses(&mut new);
        let in_use = volumes_in_use(cache, &self.node);
        if new.status.volumes_in_use != in_use {
            new.status.volumes_in_use = in_use;
            changed = true;
        }
        let due = self
            .node_posted_at
            .is_none_or(|t| now >= t + STATUS_REPORT_PERIOD);
        let ready = node.ready_status().to_string();
        let heartbeat =
            find_condition(&node.status.conditions, "Ready").and_then(|c| c.last_heartbeat_time);
        let observed = match heartbeat {
            Some(t) => format!(
                "Ready={ready}, last heartbeat {} ago",
                format_duration(now.saturating_sub(t.0) / 1000 * 1000)
            ),
            None => format!("Ready={ready}, never posted"),
        };
        let diff = if changed {
            "conditions changed: post status".to_string()
        } else if due {
            "report period elapsed: post status".to_string()
        } else {
            String::new()
        };
        if changed || due {
            self.node_post_sent_at = now;
            out.request(ApiRequest::UpdateStatus(Object::from(new)));
        }
        // After the status post, which carries the resourceVersion this patch would move on.
        if first_pass {
            update_default_labels(node, &self.node, &mut out);
        }
        out.record = Some(ReconcileRecord {
            observed,
            desired: "Ready=True (KubeletReady), no pressure; posted on change or every 5m".into(),
            diff,
        });
        out
    }

    /// `HandlePodCleanups`: containers of pods the API no longer has are killed, and what the
    /// kubelet remembers of pods gone from both the API and the runtime is forgotten.
    fn cleanup_pods(
        &mut self,
        now: Millis,
        cache: &Cache,
        rt: &mut NodeRuntime,
        out: &mut Outcome,
    ) {
        rt.settle(now);
        let live: BTreeSet<Str> = cache
            .list(Kind::Pod)
            .map(|o| o.meta().uid.clone())
            .collect_set();
        let orphans: Vec<Str> = rt
            .pods
            .keys()
            .filter(|u| !live.contains(*u))
            .cloned()
            .collect();
        for uid in orphans {
            self.kill_orphan(rt, &uid, out);
        }
        let known: BTreeSet<Str> = live.iter().chain(rt.pods.keys()).cloned().collect_set();
        let forgotten: BTreeSet<Str> = self
            .written
            .keys()
            .chain(self.reasons.keys().map(|(u, _)| u))
            .filter(|u| !known.contains(*u))
            .cloned()
            .collect_set();
        for uid in forgotten {
            self.forget_pod(&uid);
        }
    }

    /// The pressure and Ready conditions (`MemoryPressureCondition` … `ReadyCondition`), each
    /// with its event when it flips or on the first pass. The Ready event is returned rather
    /// than recorded: it follows NodeAllocatableEnforced, as the kubelet's own order has it.
    fn set_conditions(
        &mut self,
        new: &mut Node,
        now: Millis,
        first_pass: bool,
        out: &mut Outcome,
    ) -> (bool, Option<EventRecord>) {
        let desired = [
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
                "NodeHasSufficientMemory",
            ),
            (
                "DiskPressure",
                "False",
                "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure",
                "NodeHasNoDiskPressure",
            ),
            (
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
                "NodeHasSufficientPID",
            ),
            (
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status",
                "NodeReady",
            ),
        ];
        let mut changed = false;
        let mut ready_event = None;
        for (type_, status, reason, message, event) in desired {
            let old = find_condition(&new.status.conditions, type_).cloned();
            let flips = old.as_ref().is_none_or(|o| o.status != status);
            let same_words = old.as_ref().is_some_and(|o| {
                o.status == status
                    && o.reason.as_deref() == Some(reason)
                    && o.message.as_deref() == Some(message)
            });
            changed |= !same_words;
            let cond = Condition {
                type_: type_.into(),
                status: status.into(),
                reason: Some(reason.into()),
                message: Some(message.into()),
                last_heartbeat_time: Some(ts(now)),
                last_transition_time: if flips {
                    Some(ts(now))
                } else {
                    old.and_then(|o| o.last_transition_time).or(Some(ts(now)))
                },
                ..Default::default()
            };
            match new.status.conditions.iter_mut().find(|c| c.type_ == type_) {
                Some(c) => *c = cond,
                None => new.status.conditions.push(cond),
            }
            let record = node_event(new, event, status_is_now(new, event));
            if type_ == "Ready" {
                if flips && !self.ready_announced {
                    ready_event = Some(record);
                    self.ready_announced = true;
                } else if !flips {
                    self.ready_announced = false;
                }
            } else if first_pass || flips {
                out.event(record);
            }
        }
        (changed, ready_event)
    }

    /// `RecordNodeSchedulableEvent`: NodeSchedulable / NodeNotSchedulable when
    /// spec.unschedulable changed since the last pass.
    fn record_schedulable_event(&mut self, node: &Node, out: &mut Outcome) {
        if let Some(last) = self.last_unschedulable {
            if last != node.spec.unschedulable {
                let what = if node.spec.unschedulable {
                    "NodeNotSchedulable"
                } else {
                    "NodeSchedulable"
                };
                out.event(node_event(node, what, status_is_now(node, what)));
            }
        }
        self.last_unschedulable = Some(node.spec.unschedulable);
    }

    /// `NodeAddress`: an InternalIP and the Hostname, once.
    fn set_addresses(&self, new: &mut Node) -> bool {
        if new.status.addresses.is_some() {
            return false;
        }
        new.status.addresses = Some(Box::new(json!([
            {"type": "InternalIP", "address": self.host_ip(Some(new))},
            {"type": "Hostname", "address": new.metadata.name},
        ])));
        true
    }

    /// Renews (or first creates) the node Lease: the cheap heartbeat the node controller watches.
    pub(super) fn sync_lease(&mut self, now: Millis, cache: &Cache) -> Outcome {
        let mut out = Outcome::default();
        let node_uid = cache
            .get(&self.node_key())
            .map(|o| o.meta().uid.clone())
            .unwrap_or_default();
        let fresh = || Lease {
            metadata: ObjectMeta {
                name: self.node.as_str().into(),
                namespace: LEASE_NAMESPACE.into(),
                owner_references: if node_uid.is_empty() {
                    Vec::new()
                } else {
                    vec![OwnerReference {
                        api_version: "v1".into(),
                        kind: "Node".into(),
                        name: self.node.as_str().into(),
                        uid: node_uid.clone(),
                        controller: None,
                        block_owner_deletion: None,
                    }]
                },
                ..Default::default()
            },
            spec: LeaseSpec {
                holder_identity: Some(self.node.to_string()),
                lease_duration_seconds: Some(LEASE_DURATION_SECONDS),
                renew_time: Some(ts(now)),
            },
        };
        let (observed, req) = match &self.lease {
            Some(l) => {
                let mut l = l.clone();
                let last = l.spec.renew_time.map_or(0, |t| t.0);
                l.spec.renew_time = Some(ts(now));
                (
                    format!(
                        "lease renewed {} ago",
                        format_duration(now.saturating_sub(last))
                    ),
                    ApiRequest::Update(Object::from(l)),
                )
            }
            None if self.lease_exists => (
                "lease exists; its resourceVersion is unknown".to_string(),
                ApiRequest::Update(Object::from(fresh())),
            ),
            None => (
                "no lease yet".to_string(),
                ApiRequest::Create(Object::from(fresh())),
            ),
        };
        let verb = if matches!(req, ApiRequest::Create(_)) {
            "create"
        } else {
            "renew"
        };
        out.request(req);
        out.record = Some(ReconcileRecord {
            observed,
            desired: format!(
                "renewTime refreshed every {}s (leaseDurationSeconds {LEASE_DURATION_SECONDS})",
                HEARTBEAT_PERIOD / 1000
            ),
            diff: format!("{verb} the lease"),
        });
        out
    }
}

/// An event about the Node, as the kubelet records them (its node reference's UID is the name).
fn node_event(node: &Node, reason: &str, message: String) -> EventRecord {
    EventRecord {
        type_: "Normal",
        reason: reason.into(),
        message: message.into(),
        object: ObjectKey::new(Kind::Node, "", &node.metadata.name),
        uid: node.metadata.name.clone(),
        field_path: Str::EMPTY,
    }
}

/// `Node <name> status is now: <what>`, the kubelet's wording for a status event.
fn status_is_now(node: &Node, what: &str) -> String {
    format!("Node {} status is now: {what}", node.metadata.name)
}

/// `VersionInfo` (with the machine's boot ID): a changed boot ID means the machine rebooted,
/// which the kubelet reports with a Rebooted warning.
fn set_version_info(new: &mut Node, boot_id: Option<String>, out: &mut Outcome) -> bool {
    let mut info = new.status.node_info.clone().unwrap_or_else(|| {
        Box::new(json!({
            "architecture": "amd64",
            "containerRuntimeVersion": "containerd://2.1.4",
            "kernelVersion": "6.8.0-79-generic",
            "kubeProxyVersion": "",
            "kubeletVersion": "v1.34.1",
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
        }))
    });
    if let (Some(boot_id), Some(map)) = (&boot_id, info.as_object_mut()) {
        let previous = map.get("bootID").and_then(Json::as_str).map(str::to_string);
        if previous.as_deref() != Some(boot_id.as_str()) {
            if previous.is_some() {
                let message = format!(
                    "Node {} has been rebooted, boot id: {boot_id}",
                    new.metadata.name
                );
                out.event(EventRecord {
                    type_: "Warning",
                    ..node_event(new, "Rebooted", message)
                });
            }
            map.insert("bootID".into(), Json::String(boot_id.clone()));
        }
    }
    if new.status.node_info.as_ref() == Some(&info) {
        return false;
    }
    new.status.node_info = Some(info);
    true
}

/// `MachineInfo`: capacity and allocatable, each filled from the other when empty, with the
/// default of 110 pods.
fn set_machine_info(new: &mut Node) -> bool {
    let mut capacity = new.status.capacity.clone();
    let mut allocatable = new.status.allocatable.clone();
    if capacity.is_empty() {
        capacity = allocatable.clone();
    }
    if allocatable.is_empty() {
        allocatable = capacity.clone();
    }
    for list in [&mut capacity, &mut allocatable] {
        if !list.contains_key("pods") {
            list.insert("pods", "110");
        }
    }
    let changed = capacity != new.status.capacity || allocatable != new.status.allocatable;
    new.status.capacity = capacity;
    new.status.allocatable = allocatable;
    changed
}

/// `updateDefaultLabels`, at registration: a Node someone else created (a manifest) gets the
/// labels this kubelet would have given it.
fn update_default_labels(node: &Node, name: &str, out: &mut Outcome) {
    let missing: serde_json::Map<String, serde_json::Value> = default_node_labels(name)
        .into_iter()
        .filter(|(k, v)| node.metadata.labels.get(k).is_none_or(|x| x != v))
        .map(|(k, v)| (k, serde_json::Value::String(v)))
        .collect_object();
    if !missing.is_empty() {
        out.request(ApiRequest::Patch {
            key: ObjectKey::new(Kind::Node, "", &node.metadata.name),
            patch: json!({"metadata": {"labels": missing}}),
            status: false,
        });
    }
}
