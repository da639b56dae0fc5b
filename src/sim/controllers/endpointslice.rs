//! The EndpointSlice controller (`endpointslice-controller`): for every Service with a selector,
//! keeps EndpointSlices listing the matching pods' addresses with their ready / serving /
//! terminating conditions. This is how a Service "sees" which pods can take traffic.
//!
//! Modelled on `pkg/controller/endpointslice` and `staging/src/k8s.io/endpointslice/reconciler.go`:
//! - Slices carry `kubernetes.io/service-name=<svc>` and
//!   `endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io` (plus the Service's
//!   own labels), are named by `generateName: <svc>-`, and are controlled by the Service
//!   (ownerReference).
//! - A pod is an endpoint when it is not terminal and has a pod IP; terminating pods stay, with
//!   `ready=false, serving=<Ready>, terminating=true` (`publishNotReadyAddresses` forces ready).
//! - Ports are resolved per pod (a named `targetPort` is looked up in the pod's container ports),
//!   and pods are grouped into slices by their resolved port set, up to 100 endpoints per slice.
//! - Existing slices are updated in place (removed endpoints dropped, changed ones replaced, new
//!   ones filling the fullest updated slices first); an emptied slice is deleted, but a Service
//!   with no endpoints keeps one empty "placeholder" slice, and a create that would pair with a
//!   delete is turned into an update of that slice, so the slice name survives.
//! - Like Kubernetes' `EndpointSliceTracker`, the controller remembers what it wrote and refuses to
//!   act on a cache that has not caught up yet ("EndpointSlice informer cache is out of date",
//!   retried with back-off), so a slow watch cannot make it create duplicate slices.
//!
//! Deliberate simplifications: IPv4 only (one address per endpoint from `status.podIP`); no
//! `zone`, `hostname` or topology hints; no `endpoints.kubernetes.io/last-change-trigger-time`
//! annotation; pods on a Node missing from the cache are not skipped; the legacy Endpoints object
//! is not maintained; a `FailedToUpdateEndpointSlices` event is not recorded when a write fails
//! (the key is retried with back-off as in Kubernetes). A deleted Service's slices are deleted by
//! this controller: in Kubernetes the garbage collector does it through the ownerReference, but
//! the simulated GC does not watch Services or EndpointSlices.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::{json, Value as Json};

use crate::sim::api::types::{
    map_selector_matches, Endpoint, EndpointConditions, EndpointSlice, IntOrString, Kind, Millis,
    Object, ObjectKey, ObjectMeta, ObjectReference, OwnerReference, Pod, Service,
};
use crate::sim::api::{ApiRequest, ApiResult, DeleteOptions, WatchEvent, WatchEventType};
use crate::sim::machinery::cache::Cache;
use crate::sim::machinery::controller::{ComponentId, Controller, Ctx, Outcome, ReconcileRecord};
use crate::sort::{CollectTree, StableSort};
use crate::vec_map::{SlotMap, VecMap};

/// At most this many endpoints go in one slice (`--max-endpoints-per-slice`).
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
/// The label naming the Service a slice belongs to.
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";
/// The label naming the controller that manages a slice.
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
/// This controller's `managed-by` value.
pub const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// Set on slices of headless Services.
pub const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";

/// One endpoint of a Service as the UI and kubectl show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceEndpoint {
    pub address: String,
    pub ready: bool,
    pub serving: bool,
    pub terminating: bool,
    pub pod: Option<String>,
    pub node: Option<String>,
}

/// Every endpoint the Service's managed EndpointSlices list, sorted by address. Pass
/// `sim.api().list(Kind::EndpointSlice)` or a cache's list. Unset conditions read as Kubernetes
/// tells consumers to read them: ready and serving true, terminating false.
pub fn service_endpoints<'a>(
    slices: impl IntoIterator<Item = &'a Rc<Object>>,
    namespace: &str,
    service: &str,
) -> Vec<ServiceEndpoint> {
    let mut out = Vec::new();
    for obj in slices {
        let Some(slice) = obj.as_endpoint_slice() else {
            continue;
        };
        if slice.metadata.namespace != namespace
            || slice
                .metadata
                .labels
                .get(LABEL_SERVICE_NAME)
                .map(|v| v.as_str())
                != Some(service)
        {
            continue;
        }
        for ep in &slice.endpoints {
            let ready = ep.conditions.ready.unwrap_or(true);
            for address in &ep.addresses {
                out.push(ServiceEndpoint {
                    address: address.clone(),
                    ready,
                    serving: ep.conditions.serving.unwrap_or(ready),
                    terminating: ep.conditions.terminating.unwrap_or(false),
                    pod: ep.target_ref.as_ref().map(|r| r.name.to_string()),
                    node: ep.node_name.clone(),
                });
            }
        }
    }
    out.stable_sort_by(|a, b| a.address.cmp(&b.address).then(a.pod.cmp(&b.pod)));
    out
}

/// The addresses a Service routes to right now: its ready endpoints, sorted and de-duplicated.
pub fn ready_endpoints<'a>(
    slices: impl IntoIterator<Item = &'a Rc<Object>>,
    namespace: &str,
    service: &str,
) -> Vec<String> {
    let mut addrs: Vec<String> = service_endpoints(slices, namespace, service)
        .into_iter()
        .filter(|e| e.ready)
        .map(|e| e.address)
        .collect();
    addrs.dedup();
    addrs
}

/// `findPort`: the container port a Service port targets on this pod.
fn find_port(pod: &Pod, port: &crate::sim::api::types::ServicePort) -> Option<i64> {
    let protocol = port.protocol.as_deref().unwrap_or("TCP");
    match &port.target_port {
        None => Some(port.port),
        Some(IntOrString::Int(0)) => Some(port.port),
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(name)) => {
            if let Ok(n) = name.parse::<i64>() {
                return Some(n);
            }
            let sidecars = pod
                .spec
                .init_containers
                .iter()
                .filter(|c| c.restart_policy.as_deref() == Some("Always"));
            pod.spec
                .containers
                .iter()
                .chain(sidecars)
                .flat_map(|c| c.ports.iter())
                .find(|p| {
                    p.name.as_deref() == Some(name.as_str())
                        && p.protocol.as_deref().unwrap_or("TCP") == protocol
                })
                .map(|p| p.container_port)
        }
    }
}

/// `getEndpointPorts`: the Service's ports resolved against one pod (unresolvable ones dropped).
fn endpoint_ports(svc: &Service, pod: &Pod) -> Vec<Json> {
    svc.spec
        .ports
        .iter()
        .filter_map(|p| {
            let port = find_port(pod, p)?;
            let mut v = json!({
                "name": p.name.clone().unwrap_or_default(),
                "port": port,
                "protocol": p.protocol.clone().unwrap_or_else(|| "TCP".into()),
            });
            if let Some(app) = &p.app_protocol {
                v["appProtocol"] = Json::String(app.clone());
            }
            Some(v)
        })
        .collect()
}

/// A slice's port set as a comparable key (`NewPortMapKey`).
fn port_key(ports: Option<&Json>) -> String {
    match ports {
        None | Some(Json::Null) => "[]".into(),
        Some(p) => p.to_string(),
    }
}

/// `ShouldPodBeInEndpoints(pod, includeTerminating=true)` plus the IPv4 address family.
fn pod_address(pod: &Pod) -> Option<&str> {
    if matches!(pod.status.phase.as_str(), "Succeeded" | "Failed") {
        return None;
    }
    pod.status
        .pod_ip
        .as_deref()
        .filter(|ip| !ip.is_empty() && !ip.contains(':'))
}

/// `podToEndpoint`.
fn pod_to_endpoint(pod: &Pod, svc: &Service, address: &str) -> Endpoint {
    let publish = svc.spec.publish_not_ready_addresses;
    let serving = publish || pod.is_ready();
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let ready = publish || (serving && !terminating);
    Endpoint {
        addresses: vec![address.to_string()],
        conditions: EndpointConditions {
            ready: Some(ready),
            serving: Some(serving),
            terminating: Some(terminating),
        },
        node_name: (!pod.spec.node_name.is_empty())
            .then(|| pod.spec.node_name.clone())
            .map(String::from),
        target_ref: Some(ObjectReference {
            kind: "Pod".into(),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        }),
    }
}

/// An endpoint's identity across updates (`hashEndpoint`: addresses and the pod it points at).
fn endpoint_id(ep: &Endpoint) -> (Vec<String>, String, String) {
    let r = ep.target_ref.as_ref();
    (
        ep.addresses.clone(),
        r.map(|r| r.namespace.to_string()).unwrap_or_default(),
        r.map(|r| r.name.to_string()).unwrap_or_default(),
    )
}

/// `setEndpointSliceLabels`: the Service's labels plus the controller's own.
fn slice_labels(svc: &Service) -> crate::sim::api::types::StringMap {
    let mut labels: crate::sim::api::types::StringMap = svc
        .metadata
        .labels
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                LABEL_SERVICE_NAME | LABEL_MANAGED_BY | LABEL_HEADLESS
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    labels.insert(LABEL_SERVICE_NAME, svc.metadata.name.clone());
    labels.insert(LABEL_MANAGED_BY, CONTROLLER_NAME);
    if svc.spec.cluster_ip.as_deref() == Some("None") {
        labels.insert(LABEL_HEADLESS, String::new());
    }
    labels
}

fn owned_by(slice: &EndpointSlice, svc: &Service) -> bool {
    slice
        .metadata
        .owner_references
        .iter()
        .any(|r| r.uid == svc.metadata.uid && r.controller == Some(true))
}

/// `newEndpointSlice`: an empty slice for the Service with the given ports.
fn new_slice(svc: &Service, ports: Option<Box<Json>>) -> EndpointSlice {
    EndpointSlice {
        metadata: ObjectMeta {
            generate_name: format!("{}-", svc.metadata.name).into(),
            namespace: svc.metadata.namespace.clone(),
            labels: slice_labels(svc),
            owner_references: vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Service".into(),
                name: svc.metadata.name.clone(),
                uid: svc.metadata.uid.clone(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }],
            ..Default::default()
        },
        address_type: "IPv4".into(),
        endpoints: Vec::new(),
        ports,
    }
}

/// The desired endpoints of one port set, in pod order.
struct Desired {
    ports: Json,
    endpoints: Vec<Endpoint>,
}

/// Slices to write for one Service.
#[derive(Default)]
struct Plan {
    create: Vec<EndpointSlice>,
    update: Vec<EndpointSlice>,
    delete: Vec<EndpointSlice>,
}

/// `reconcileByPortMapping`: fits the desired endpoints into the existing slices of one port set.
fn reconcile_port_mapping(
    svc: &Service,
    existing: &[&EndpointSlice],
    desired: Desired,
    plan: &mut Plan,
) {
    let labels = slice_labels(svc);
    let mut wanted: Vec<Option<Endpoint>> = desired.endpoints.into_iter().map(Some).collect();
    let index: BTreeMap<_, usize> = wanted
        .iter()
        .enumerate()
        .map(|(i, e)| (endpoint_id(e.as_ref().expect("just built")), i))
        .collect_map();
    let mut updated: Vec<EndpointSlice> = Vec::new();
    let mut unchanged: Vec<EndpointSlice> = Vec::new();
    // 1. Drop endpoints no longer desired and refresh changed ones.
    for slice in existing {
        let mut kept = Vec::new();
        let mut changed = false;
        for ep in &slice.endpoints {
            if let Some(&i) = index.get(&endpoint_id(ep)) {
                if let Some(want) = wanted[i].take() {
                    changed |= want != *ep;
                    kept.push(want);
                }
            }
        }
        let labels_changed = slice.metadata.labels != labels;
        if changed || kept.len() != slice.endpoints.len() {
            if kept.is_empty() {
                plan.delete.push((*slice).clone());
            } else {
                let mut s = (*slice).clone();
                s.endpoints = kept;
                s.metadata.labels = labels.clone();
                updated.push(s);
            }
        } else if labels_changed {
            let mut s = (*slice).clone();
            s.metadata.labels = labels.clone();
            updated.push(s);
        } else {
            unchanged.push((*slice).clone());
        }
    }
    let mut remaining: std::collections::VecDeque<Endpoint> =
        wanted.into_iter().flatten().collect();
    // 2. Fill the slices being updated anyway, fullest first.
    updated.stable_sort_by(|a, b| {
        b.endpoints
            .len()
            .cmp(&a.endpoints.len())
            .then(a.metadata.name.cmp(&b.metadata.name))
    });
    for s in &mut updated {
        while s.endpoints.len() < MAX_ENDPOINTS_PER_SLICE {
            let Some(ep) = remaining.pop_front() else {
                break;
            };
            s.endpoints.push(ep);
        }
    }
    // 3. Fit the rest in the unchanged slice with the least room that holds them, or new slices.
    while !remaining.is_empty() {
        let mut target: Option<usize> = None;
        if remaining.len() < MAX_ENDPOINTS_PER_SLICE {
            let mut closest = MAX_ENDPOINTS_PER_SLICE;
            for (i, s) in unchanged.iter().enumerate() {
                let total = remaining.len() + s.endpoints.len();
                if total <= MAX_ENDPOINTS_PER_SLICE && MAX_ENDPOINTS_PER_SLICE - total < closest {
                    closest = MAX_ENDPOINTS_PER_SLICE - total;
                    target = Some(i);
                }
            }
        }
        let mut slice = match target {
            Some(i) => unchanged.remove(i),
            None => new_slice(svc, Some(Box::new(desired.ports.clone()))),
        };
        while slice.endpoints.len() < MAX_ENDPOINTS_PER_SLICE {
            let Some(ep) = remaining.pop_front() else {
                break;
            };
            slice.endpoints.push(ep);
        }
        if slice.metadata.name.is_empty() {
            plan.create.push(slice);
        } else {
            updated.push(slice);
        }
    }
    plan.update.extend(updated);
}

/// What this controller wrote and has not seen in its cache yet (`EndpointSliceTracker`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// The slice must show at least this resourceVersion.
    Version(u64),
    /// The slice must be gone.
    Gone,
}

/// The EndpointSlice controller. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct EndpointSliceController {
    /// Service → requests sent and not yet answered.
    in_flight: SlotMap<ObjectKey, usize>,
    /// Slice → (its Service, what the cache must show before the Service is synced again).
    expect: SlotMap<ObjectKey, (ObjectKey, Expect)>,
}

impl EndpointSliceController {
    /// A fresh instance.
    pub fn new() -> Self {
        Self::default()
    }

    fn service_of_slice(slice: &EndpointSlice) -> Option<ObjectKey> {
        if slice
            .metadata
            .labels
            .get(LABEL_MANAGED_BY)
            .map(|v| v.as_str())
            != Some(CONTROLLER_NAME)
        {
            return None;
        }
        let svc = slice.metadata.labels.get(LABEL_SERVICE_NAME)?;
        Some(ObjectKey::new(
            Kind::Service,
            &slice.metadata.namespace,
            svc,
        ))
    }

    /// `StaleSlices`: whether the cache is behind what this controller wrote for the Service.
    fn stale(&self, svc: &ObjectKey, cache: &Cache) -> bool {
        self.expect
            .iter()
            .filter(|(_, (s, _))| s == svc)
            .any(|(slice, (_, exp))| {
                let cached = cache.get(slice);
                match exp {
                    Expect::Version(rv) => cached.is_none_or(|o| o.meta().rv() < *rv),
                    Expect::Gone => cached.is_some(),
                }
            })
    }

    fn sync_service(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::default();
        if self.in_flight.get(key).copied().unwrap_or(0) > 0 {
            // The workqueue never processes one key twice at once; writes still in flight count.
            out.requeue(5);
            return out;
        }
        let Some(svc_obj) = ctx.cache.get(key).cloned() else {
            return self.clean_up_after(key, ctx.cache);
        };
        let Some(svc) = svc_obj.as_service() else {
            return out;
        };
        if svc.spec.type_.as_deref() == Some("ExternalName") || svc.spec.selector.is_empty() {
            // No selector: the user manages this Service's slices.
            return out;
        }
        if self.stale(key, ctx.cache) {
            out.error = Some("EndpointSlice informer cache is out of date".into());
            out.record = Some(ReconcileRecord {
                observed: "EndpointSlice informer cache is out of date".into(),
                desired: String::new(),
                diff: "waiting for the cache to catch up".into(),
            });
            return out;
        }
        let ns = &svc.metadata.namespace;
        let existing: Vec<&EndpointSlice> = ctx
            .cache
            .list_ns(Kind::EndpointSlice, ns)
            .filter_map(|o| o.as_endpoint_slice())
            .filter(|s| {
                Self::service_of_slice(s).as_ref() == Some(key)
                    && s.metadata.deletion_timestamp.is_none()
            })
            .collect();
        // Desired endpoints, grouped by their resolved port set.
        let mut desired: VecMap<String, Desired> = VecMap::new();
        let mut n_pods = 0;
        for obj in ctx.cache.list_ns(Kind::Pod, ns) {
            let Some(pod) = obj.as_pod() else { continue };
            if !map_selector_matches(&svc.spec.selector, &pod.metadata.labels) {
                continue;
            }
            n_pods += 1;
            let Some(address) = pod_address(pod) else {
                continue;
            };
            let ports = Json::Array(endpoint_ports(svc, pod));
            let entry = desired
                .entry(port_key(Some(&ports)))
                .or_insert_with(|| Desired {
                    ports,
                    endpoints: Vec::new(),
                });
            entry.endpoints.push(pod_to_endpoint(pod, svc, address));
        }
        let n_ready = desired
            .values()
            .flat_map(|d| &d.endpoints)
            .filter(|e| e.conditions.ready == Some(true))
            .count();
        let n_endpoints: usize = desired.values().map(|d| d.endpoints.len()).sum();
        let mut plan = Plan::default();
        let mut by_port: VecMap<String, Vec<&EndpointSlice>> = VecMap::new();
        for s in &existing {
            if owned_by(s, svc) && s.address_type == "IPv4" {
                by_port
                    .entry(port_key(s.ports.as_deref()))
                    .or_default()
                    .push(s);
            } else {
                // A leftover of an earlier Service with this name, or another address family.
                plan.delete.push((*s).clone());
            }
        }
        for (pk, slices) in &by_port {
            if !desired.contains_key(pk) {
                plan.delete.extend(slices.iter().map(|s| (*s).clone()));
            }
        }
        for (pk, d) in desired {
            let slices = by_port.get(&pk).cloned().unwrap_or_default();
            reconcile_port_mapping(svc, &slices, d, &mut plan);
        }
        // A Service without endpoints keeps exactly one empty placeholder slice.
        if existing.len() == plan.delete.len() && plan.create.is_empty() {
            let placeholder = new_slice(svc, None);
            let is_placeholder = |s: &EndpointSlice| {
                s.endpoints.is_empty()
                    && port_key(s.ports.as_deref()) == "[]"
                    && s.address_type == placeholder.address_type
                    && s.metadata.labels == placeholder.metadata.labels
                    && s.metadata.owner_references == placeholder.metadata.owner_references
            };
            if plan.delete.len() == 1 && is_placeholder(&plan.delete[0]) {
                plan.delete.clear();
            } else {
                plan.create.push(placeholder);
            }
        }
        // finalize: a create paired with a delete becomes an update, so the slice keeps its name.
        let mut i = 0;
        while i < plan.delete.len() && !plan.create.is_empty() {
            let victim = &plan.delete[i];
            if victim.address_type == "IPv4" && owned_by(victim, svc) {
                let mut slice = plan.create.pop().expect("checked non-empty");
                slice.metadata = ObjectMeta {
                    labels: slice.metadata.labels,
                    ..victim.metadata.clone()
                };
                plan.update.push(slice);
                plan.delete.remove(i);
            } else {
                i += 1;
            }
        }
        let mut diff = Vec::new();
        let mut reqs = Vec::new();
        // Terminating Services get no new slices (they would race the garbage collector).
        if svc.metadata.deletion_timestamp.is_none() {
            for s in plan.create {
                diff.push(format!(
                    "create slice with {} endpoint(s)",
                    s.endpoints.len()
                ));
                reqs.push(ApiRequest::Create(Object::from(s)));
            }
        }
        for s in plan.update {
            diff.push(format!(
                "update {} ({} endpoint(s))",
                s.metadata.name,
                s.endpoints.len()
            ));
            reqs.push(ApiRequest::Update(Object::from(s)));
        }
        for s in plan.delete {
            diff.push(format!("delete {}", s.metadata.name));
            let slice_key = ObjectKey::of(Kind::EndpointSlice, &s.metadata);
            self.expect
                .insert(slice_key.clone(), (key.clone(), Expect::Gone));
            reqs.push(ApiRequest::Delete {
                key: slice_key,
                options: DeleteOptions {
                    precondition_uid: Some(s.metadata.uid.to_string()),
                    ..Default::default()
                },
            });
        }
        if !reqs.is_empty() {
            *self.in_flight.get_or_insert_with(key.clone(), || 0) += reqs.len();
        }
        out.batch(reqs);
        out.record = Some(ReconcileRecord {
            observed: format!("{n_pods} pod(s) match the selector, {n_endpoints} with an IP ({n_ready} ready); {} slice(s)", existing.len()),
            desired: format!("every matching pod listed, ≤{MAX_ENDPOINTS_PER_SLICE} per slice"),
            diff: diff.join("; "),
        });
        out
    }

    /// Deletes the slices a deleted Service controlled. Kubernetes leaves this to the garbage
    /// collector (the ownerReference); the simulated GC does not watch Services or EndpointSlices,
    /// so this controller does it, and only for slices that name a Service of this name as owner.
    fn clean_up_after(&mut self, key: &ObjectKey, cache: &Cache) -> Outcome {
        let mut out = Outcome::default();
        let mut reqs = Vec::new();
        for obj in cache.list_ns(Kind::EndpointSlice, &key.namespace) {
            let Some(slice) = obj.as_endpoint_slice() else {
                continue;
            };
            let controlled =
                slice.metadata.owner_references.iter().any(|r| {
                    r.kind == "Service" && r.name == key.name && r.controller == Some(true)
                });
            if Self::service_of_slice(slice).as_ref() != Some(key)
                || !controlled
                || slice.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            let slice_key = obj.key();
            if matches!(self.expect.get(&slice_key), Some((_, Expect::Gone))) {
                continue; // already being deleted
            }
            self.expect
                .insert(slice_key.clone(), (key.clone(), Expect::Gone));
            reqs.push(ApiRequest::Delete {
                key: slice_key,
                options: DeleteOptions {
                    precondition_uid: Some(slice.metadata.uid.to_string()),
                    ..Default::default()
                },
            });
        }
        self.expect
            .retain(|_, (s, e)| s != key || *e == Expect::Gone);
        if !reqs.is_empty() {
            *self.in_flight.get_or_insert_with(key.clone(), || 0) += reqs.len();
            out.record = Some(ReconcileRecord {
                observed: "the Service is gone".into(),
                desired: "no EndpointSlices for it".into(),
                diff: format!("delete {} slice(s)", reqs.len()),
            });
        }
        out.batch(reqs);
        out
    }

    fn service_for_request(&self, req: &ApiRequest) -> Option<ObjectKey> {
        match req {
            ApiRequest::Create(Object::EndpointSlice(s))
            | ApiRequest::Update(Object::EndpointSlice(s)) => Self::service_of_slice(s),
            ApiRequest::Delete { key, .. } => self.expect.get(key).map(|(s, _)| s.clone()),
            _ => None,
        }
    }

    fn done_one(&mut self, svc: &ObjectKey) {
        if let Some(n) = self.in_flight.get_mut(svc) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.in_flight.remove(svc);
            }
        }
    }
}

impl Controller for EndpointSliceController {
    fn snapshot(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(self.clone()))
    }

    fn id(&self) -> ComponentId {
        ComponentId::EndpointSlice
    }

    fn watched_kinds(&self) -> &'static [Kind] {
        &[Kind::Service, Kind::Pod, Kind::EndpointSlice]
    }

    fn keys_for_event(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Rc<Object>>,
        cache: &Cache,
    ) -> Vec<ObjectKey> {
        match &*ev.object {
            Object::Service(_) => vec![ev.object.key()],
            Object::Pod(p) => {
                // getPodServiceMemberships, for the new labels and (if they changed) the old ones.
                let old_labels = old.map(|o| &o.meta().labels);
                cache
                    .list_ns(Kind::Service, &p.metadata.namespace)
                    .filter(|s| {
                        s.as_service().is_some_and(|s| {
                            !s.spec.selector.is_empty()
                                && (map_selector_matches(&s.spec.selector, &p.metadata.labels)
                                    || old_labels
                                        .is_some_and(|l| map_selector_matches(&s.spec.selector, l)))
                        })
                    })
                    .map(|s| s.key())
                    .collect()
            }
            Object::EndpointSlice(s) => {
                let key = ev.object.key();
                if let Some((_, exp)) = self.expect.get(&key) {
                    let caught_up = match exp {
                        Expect::Version(rv) => {
                            ev.type_ == WatchEventType::Deleted || s.metadata.rv() >= *rv
                        }
                        Expect::Gone => ev.type_ == WatchEventType::Deleted,
                    };
                    if caught_up {
                        self.expect.remove(&key);
                    }
                }
                Self::service_of_slice(s).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }

    fn keys_for_resync(&self, cache: &Cache) -> Vec<ObjectKey> {
        cache.list(Kind::Service).map(|o| o.key()).collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Outcome {
        match key.kind {
            Kind::Service => self.sync_service(key, ctx),
            _ => Outcome::done(),
        }
    }

    fn on_response(&mut self, req: &ApiRequest, result: &ApiResult, _now: Millis) {
        let Some(svc) = self.service_for_request(req) else {
            return;
        };
        self.done_one(&svc);
        match (req, result) {
            (ApiRequest::Create(_) | ApiRequest::Update(_), Ok(obj)) => {
                self.expect
                    .insert(obj.key(), (svc, Expect::Version(obj.meta().rv())));
            }
            (ApiRequest::Delete { key, .. }, Err(_)) => {
                // Already gone (404) or still there after a failure: nothing to wait for either way.
                self.expect.remove(key);
            }
            _ => {}
        }
    }

    fn on_skipped(&mut self, req: &ApiRequest) {
        if let Some(svc) = self.service_for_request(req) {
            self.done_one(&svc);
            if let ApiRequest::Delete { key, .. } = req {
                self.expect.remove(key);
            }
        }
    }

    fn restarted(&self) -> Option<Box<dyn Controller>> {
        Some(Box::new(Self::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{
        Condition, Container, ContainerPort, PodSpec, PodStatus, ServicePort, ServiceSpec, Time,
    };
    use crate::sim::controllers::testing;
    use crate::sim::world::{Sim, SimConfig};

    /// How many EndpointSlices the Service `web` has (the API server's own `kubernetes` one aside).
    fn web_slices(sim: &Sim) -> usize {
        sim.api()
            .list(Kind::EndpointSlice)
            .filter(|o| o.meta().labels.get(LABEL_SERVICE_NAME).map(|v| v.as_str()) == Some("web"))
            .count()
    }

    fn service() -> Service {
        Service {
            metadata: ObjectMeta {
                name: "web".into(),
                namespace: "default".into(),
                uid: "uid-svc".into(),
                resource_version: "3".into(),
                labels: [("tier".to_string(), "frontend".to_string())].into(),
                ..Default::default()
            },
            spec: ServiceSpec {
                selector: [("app".to_string(), "web".to_string())].into(),
                ports: vec![ServicePort {
                    port: 80,
                    target_port: Some(IntOrString::Int(8080)),
                    ..Default::default()
                }],
                ..Default::default()
            },
            status: None,
        }
    }

    fn pod(name: &str, ip: Option<&str>, ready: bool) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                uid: format!("uid-{name}").into(),
                resource_version: "5".into(),
                labels: [("app".to_string(), "web".to_string())].into(),
                ..Default::default()
            },
            spec: PodSpec {
                node_name: "node-1".into(),
                containers: vec![Container {
                    name: "app".into(),
                    image: "nginx:1.27".into(),
                    ports: vec![ContainerPort {
                        container_port: 8080,
                        name: Some("http".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }
            .into(),
            status: PodStatus {
                phase: "Running".into(),
                pod_ip: ip.map(crate::sim::api::types::Str::from),
                conditions: vec![Condition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        }
    }

    fn cache_of(objs: Vec<Object>) -> Cache {
        testing::cache_of(objs)
    }

    fn run(c: &mut EndpointSliceController, cache: &Cache) -> Outcome {
        let key = ObjectKey::new(Kind::Service, "default", "web");
        testing::reconcile_once(c, cache, &key, 1_000)
    }

    fn slices(out: &Outcome, create: bool) -> Vec<EndpointSlice> {
        out.requests()
            .filter_map(|r| match (r, create) {
                (ApiRequest::Create(Object::EndpointSlice(s)), true)
                | (ApiRequest::Update(Object::EndpointSlice(s)), false) => {
                    Some(EndpointSlice::clone(s))
                }
                _ => None,
            })
            .collect()
    }

    /// The slice as the API server would store it after the create.
    fn stored(mut s: EndpointSlice, name: &str) -> Object {
        s.metadata.name = name.into();
        s.metadata.uid = format!("uid-{name}").into();
        s.metadata.resource_version = "20".into();
        Object::from(s)
    }

    fn conditions(s: &EndpointSlice) -> Vec<(String, bool, bool, bool)> {
        s.endpoints
            .iter()
            .map(|e| {
                let c = &e.conditions;
                (
                    e.addresses[0].clone(),
                    c.ready.unwrap(),
                    c.serving.unwrap(),
                    c.terminating.unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn a_service_gets_one_slice_listing_pods_with_an_ip_and_only_ready_ones_as_ready() {
        let mut other = pod("db-1", Some("10.244.1.9"), true);
        other.metadata.labels = [("app".to_string(), "db".to_string())].into();
        let cache = cache_of(vec![
            Object::from(service()),
            Object::from(pod("web-1", Some("10.244.1.5"), true)),
            Object::from(pod("web-2", Some("10.244.2.7"), false)),
            Object::from(pod("web-3", None, false)),
            Object::from(other),
        ]);
        let out = run(&mut EndpointSliceController::new(), &cache);
        let created = slices(&out, true);
        assert_eq!(created.len(), 1);
        let s = &created[0];
        assert_eq!(s.metadata.generate_name, "web-");
        assert_eq!(
            s.metadata
                .labels
                .get(LABEL_SERVICE_NAME)
                .map(|v| v.as_str()),
            Some("web")
        );
        assert_eq!(
            s.metadata.labels.get(LABEL_MANAGED_BY).map(|v| v.as_str()),
            Some(CONTROLLER_NAME)
        );
        assert_eq!(
            s.metadata.labels.get("tier").map(|v| v.as_str()),
            Some("frontend"),
            "the Service's labels are copied"
        );
        let owner = &s.metadata.owner_references[0];
        assert_eq!(
            (
                owner.kind.as_str(),
                owner.name.as_str(),
                owner.uid.as_str(),
                owner.controller
            ),
            ("Service", "web", "uid-svc", Some(true))
        );
        assert_eq!(s.address_type, "IPv4");
        assert_eq!(
            s.ports,
            Some(Box::new(
                json!([{"name": "", "port": 8080, "protocol": "TCP"}])
            ))
        );
        assert_eq!(
            conditions(s),
            vec![
                ("10.244.1.5".into(), true, true, false),
                ("10.244.2.7".into(), false, false, false)
            ]
        );
        let ep = &s.endpoints[0];
        assert_eq!(ep.node_name.as_deref(), Some("node-1"));
        let target = ep.target_ref.as_ref().unwrap();
        assert_eq!(
            (
                target.kind.as_str(),
                target.name.as_str(),
                target.uid.as_str()
            ),
            ("Pod", "web-1", "uid-web-1")
        );
    }

    #[test]
    fn a_terminating_pod_stays_as_serving_and_terminating_but_not_ready() {
        let mut c = EndpointSliceController::new();
        let first = run(
            &mut c,
            &cache_of(vec![
                Object::from(service()),
                Object::from(pod("web-1", Some("10.244.1.5"), true)),
            ]),
        );
        let slice = stored(slices(&first, true).remove(0), "web-abcde");
        c.on_response(&first.batches[0][0], &Ok(Rc::new(slice.clone())), 1_005);
        let mut terminating = pod("web-1", Some("10.244.1.5"), true);
        terminating.metadata.deletion_timestamp = Some(Time(31_000));
        let out = run(
            &mut c,
            &cache_of(vec![
                Object::from(service()),
                Object::from(terminating),
                slice,
            ]),
        );
        let updated = slices(&out, false);
        assert_eq!(updated.len(), 1);
        assert_eq!(updated[0].metadata.name, "web-abcde");
        assert_eq!(
            updated[0].metadata.resource_version, "20",
            "written against the cached version"
        );
        assert_eq!(
            conditions(&updated[0]),
            vec![("10.244.1.5".into(), false, true, true)]
        );
    }

    #[test]
    fn a_service_without_endpoints_keeps_one_empty_placeholder_slice() {
        let mut c = EndpointSliceController::new();
        let first = run(&mut c, &cache_of(vec![Object::from(service())]));
        let created = slices(&first, true);
        assert_eq!(created.len(), 1);
        assert!(created[0].endpoints.is_empty() && created[0].ports.is_none());
        let placeholder = stored(created[0].clone(), "web-p1ace");
        c.on_response(
            &first.batches[0][0],
            &Ok(Rc::new(placeholder.clone())),
            1_005,
        );
        let again = run(
            &mut c,
            &cache_of(vec![Object::from(service()), placeholder.clone()]),
        );
        assert_eq!(
            again.requests().count(),
            0,
            "the placeholder is kept, not recreated"
        );

        // The first pod turns the placeholder into a real slice, keeping its name.
        let out = run(
            &mut c,
            &cache_of(vec![
                Object::from(service()),
                placeholder,
                Object::from(pod("web-1", Some("10.244.1.5"), true)),
            ]),
        );
        let updated = slices(&out, false);
        assert_eq!(out.requests().count(), 1);
        assert_eq!(updated[0].metadata.name, "web-p1ace");
        assert_eq!(updated[0].endpoints.len(), 1);
    }

    #[test]
    fn more_than_a_hundred_endpoints_spill_into_a_second_slice() {
        let mut objs = vec![Object::from(service())];
        for i in 0..150 {
            objs.push(Object::from(pod(
                &format!("web-{i:03}"),
                Some(&format!("10.244.{}.{}", i / 100, i % 100)),
                true,
            )));
        }
        let out = run(&mut EndpointSliceController::new(), &cache_of(objs));
        let sizes: Vec<usize> = slices(&out, true)
            .iter()
            .map(|s| s.endpoints.len())
            .collect();
        assert_eq!(sizes, vec![100, 50]);
    }

    #[test]
    fn a_named_target_port_resolves_to_each_pods_container_port() {
        let mut svc = service();
        svc.spec.ports[0].target_port = Some(IntOrString::String("http".into()));
        let mut other = pod("web-2", Some("10.244.2.7"), true);
        other.spec_mut().containers[0].ports[0].container_port = 9090;
        let out = run(
            &mut EndpointSliceController::new(),
            &cache_of(vec![
                Object::from(svc),
                Object::from(pod("web-1", Some("10.244.1.5"), true)),
                Object::from(other),
            ]),
        );
        let mut ports: Vec<Json> = slices(&out, true)
            .into_iter()
            .map(|s| s.ports.unwrap()[0]["port"].clone())
            .collect();
        ports.stable_sort_by_key(|p| p.as_i64());
        assert_eq!(
            ports,
            vec![json!(8080), json!(9090)],
            "one slice per distinct port set"
        );
    }

    #[test]
    fn a_cache_behind_the_controllers_own_writes_makes_it_wait() {
        let mut c = EndpointSliceController::new();
        let cache = cache_of(vec![
            Object::from(service()),
            Object::from(pod("web-1", Some("10.244.1.5"), true)),
        ]);
        let first = run(&mut c, &cache);
        let busy = run(&mut c, &cache);
        assert_eq!(
            (busy.requests().count(), busy.requeue_after),
            (0, Some(5)),
            "a write in flight holds the key"
        );
        let slice = stored(slices(&first, true).remove(0), "web-abcde");
        c.on_response(&first.batches[0][0], &Ok(Rc::new(slice.clone())), 1_005);
        let stale = run(&mut c, &cache);
        assert_eq!(
            stale.error.as_deref(),
            Some("EndpointSlice informer cache is out of date")
        );
        assert_eq!(stale.requests().count(), 0, "no duplicate slice");
        let ev = WatchEvent::new(WatchEventType::Added, Rc::new(slice.clone()), 20, 0);
        let mut caught_up = cache.clone();
        caught_up.upsert(Rc::new(slice));
        assert_eq!(
            c.keys_for_event(&ev, None, &caught_up),
            vec![ObjectKey::new(Kind::Service, "default", "web")]
        );
        let fine = run(&mut c, &caught_up);
        assert!(fine.error.is_none() && fine.requests().count() == 0);
    }

    #[test]
    fn ready_endpoints_lists_only_ready_addresses_of_the_service() {
        let mut s = new_slice(&service(), None);
        s.metadata.name = "web-abcde".into();
        let svc = service();
        s.endpoints = vec![
            pod_to_endpoint(&pod("web-1", None, true), &svc, "10.0.0.2"),
            pod_to_endpoint(&pod("web-2", None, false), &svc, "10.0.0.1"),
        ];
        let objs = [Rc::new(Object::from(s))];
        assert_eq!(
            ready_endpoints(objs.iter(), "default", "web"),
            vec!["10.0.0.2"]
        );
        assert!(ready_endpoints(objs.iter(), "default", "db").is_empty());
        let all = service_endpoints(objs.iter(), "default", "web");
        assert_eq!(
            all.iter().map(|e| e.address.as_str()).collect::<Vec<_>>(),
            vec!["10.0.0.1", "10.0.0.2"]
        );
    }

    #[test]
    fn endpoints_follow_pods_through_the_world_without_duplicate_slices() {
        let mut sim = Sim::new(SimConfig::default());
        let mut svc = service();
        svc.metadata.uid = Default::default();
        svc.metadata.resource_version = Default::default();
        sim.submit(ApiRequest::Create(Object::from(svc)))
            .expect("service created");
        for (i, ready) in [true, true, false].into_iter().enumerate() {
            let mut p = pod(&format!("web-{i}"), Some(&format!("10.244.1.{i}")), ready);
            p.metadata.uid = Default::default();
            p.metadata.resource_version = Default::default();
            let status = p.status.clone();
            let created = sim
                .submit(ApiRequest::Create(Object::from(p)))
                .expect("pod created");
            let mut running = created.as_pod().cloned().unwrap();
            running.status = status;
            sim.submit(ApiRequest::UpdateStatus(Object::from(running)))
                .expect("pod running");
        }
        sim.advance_to(1_000, usize::MAX);
        assert_eq!(
            web_slices(&sim),
            1,
            "one slice despite several quick pod events"
        );
        assert_eq!(
            ready_endpoints(sim.api().list(Kind::EndpointSlice), "default", "web"),
            vec!["10.244.1.0", "10.244.1.1"]
        );

        sim.submit(ApiRequest::Delete {
            key: ObjectKey::new(Kind::Pod, "default", "web-0"),
            options: DeleteOptions::default(),
        })
        .expect("graceful delete");
        sim.advance_to(2_000, usize::MAX);
        assert_eq!(
            ready_endpoints(sim.api().list(Kind::EndpointSlice), "default", "web"),
            vec!["10.244.1.1"]
        );
        let all = service_endpoints(sim.api().list(Kind::EndpointSlice), "default", "web");
        let leaving = all
            .iter()
            .find(|e| e.pod.as_deref() == Some("web-0"))
            .expect("still listed while terminating");
        assert!(!leaving.ready && leaving.serving && leaving.terminating);
        assert_eq!(web_slices(&sim), 1);
    }

    #[test]
    fn a_deleted_services_slices_are_removed() {
        use crate::sim::machinery::trace::TraceKind;
        let mut sim = Sim::new(SimConfig::default());
        let mut svc = service();
        svc.metadata.uid = Default::default();
        svc.metadata.resource_version = Default::default();
        sim.submit(ApiRequest::Create(Object::from(svc)))
            .expect("service created");
        sim.advance_to(1_000, usize::MAX);
        assert_eq!(web_slices(&sim), 1, "the placeholder");
        let key = ObjectKey::new(Kind::Service, "default", "web");
        sim.submit(ApiRequest::Delete {
            key,
            options: DeleteOptions::default(),
        })
        .expect("service deleted");
        sim.advance_to(5_000, usize::MAX);
        assert_eq!(web_slices(&sim), 0);
        let deleters: Vec<String> = sim
            .trace()
            .entries()
            .filter_map(|e| match &e.kind {
                TraceKind::Api(tr)
                    if tr.verb == "delete" && tr.object.starts_with("EndpointSlice/") =>
                {
                    Some(tr.actor.to_string())
                }
                _ => None,
            })
            .collect();
        assert!(!deleters.is_empty(), "someone deleted the slice");
        assert!(
            deleters
                .iter()
                .all(|a| a == "garbage-collector-controller" || a == "endpointslice-controller"),
            "{deleters:?}"
        );
    }
}
