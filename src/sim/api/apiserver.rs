//! The simulated API server: one store, one resourceVersion counter, admission, and watch history.
//!
//! Every write in the simulation passes through [`ApiServer::handle`], which returns the response
//! and the watch events the write produced. Fan-out of those events to informers (with latency,
//! drops and delays) is the world's job, not the store's.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use serde_json::Value as Json;

use super::apiextensions::{CustomResourceDefinitionCondition, CRD_CLEANUP_FINALIZER};
use super::event_ages::EventAges;
use super::object_map::{file, ObjectMap, Replaced, Slots, NO_SLOT};
use super::types::*;
use super::{admission, customresource, job, limits, storage, validation};
use super::{
    ApiError, ApiRequest, ApiResult, DeleteOptions, PropagationPolicy, StatusReason, WatchEvent,
    WatchEventType,
};
use crate::sim::rng::Rng;
use crate::sim::text::{concat, hex_digits, hex_into};
use crate::sort::CollectTree;
use crate::vec_map::{LookupSlots, VecMap};

/// The default `--service-node-port-range`, 30000-32767.
const NODE_PORT_MIN: i64 = 30000;
/// See [`NODE_PORT_MIN`].
const NODE_PORT_MAX: i64 = 32767;
/// The lower band the allocator leaves to ports users choose: min(max(16, size/32), 128) ports.
const NODE_PORT_STATIC_BAND: i64 = 86;
/// The service CIDR, kubeadm's default (`--service-cluster-ip-range`).
const SERVICE_CIDR: &str = "10.96.0.0/12";
/// See [`SERVICE_CIDR`]: its network address as a number.
const SERVICE_CIDR_BASE: u32 = 0x0A60_0000;
/// See [`SERVICE_CIDR`]: 2^(32-12) addresses.
const SERVICE_CIDR_SIZE: u32 = 1 << 20;
/// The low band of the CIDR that dynamic allocation uses last (KEP-3070): min(max(16, size/16),
/// 256) addresses.
const SERVICE_CIDR_STATIC_BAND: u32 = 256;

/// How long watch history is kept: `DefaultEventFreshDuration` (bookmark frequency 1 min + 15 s).
pub const WATCH_HISTORY_WINDOW: Millis = 75_000;

/// The most changes the watch history holds, whatever their age. kube-apiserver's watch cache
/// sizes itself to cover [`WATCH_HISTORY_WINDOW`] within 100 to 102,400 changes per resource; ours
/// is one cache for every kind and stops at 10,000, because each change holds a whole object
/// version (a few kB) and a 10,000-pod cluster makes that many changes in about a second. A watch
/// that breaks for longer than the history covers gets 410 Gone and relists, as against a small
/// real cache; a lesson-sized cluster makes a few hundred changes in 75 s and never reaches it.
pub const WATCH_HISTORY_CAPACITY: usize = 10_000;
/// How many compacted history entries each write drops (see [`ApiServer::compact`]).
const RETIRED_DROPS_PER_WRITE: usize = 4;

/// A resume point the watch history no longer covers: the client must re-list (410 Gone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooOldResourceVersion {
    pub requested: u64,
    pub oldest: u64,
}

impl TooOldResourceVersion {
    /// The 410 Expired status a real server streams as an ERROR watch event.
    pub fn to_error(&self) -> ApiError {
        ApiError {
            reason: StatusReason::Expired,
            message: format!(
                "too old resource version: {} ({})",
                self.requested, self.oldest
            ),
        }
    }
}

/// The outcome of one request: the response and the changes it committed.
#[derive(Debug)]
pub struct Handled {
    pub result: ApiResult,
    pub events: Vec<WatchEvent>,
}

/// The store and its rules.
#[derive(Clone, Debug)]
pub struct ApiServer {
    /// Keys allocated once per object and handed to every informer cache ([`SharedKey`]).
    objects: ObjectMap,
    resource_version: u64,
    history: VecDeque<(Millis, WatchEvent)>,
    /// History entries past the window, no longer part of the history, waiting to be dropped
    /// [`RETIRED_DROPS_PER_WRITE`] per write: see [`ApiServer::compact`].
    retired: VecDeque<WatchEvent>,
    /// The oldest resourceVersion a watch can still resume from.
    compacted_rv: u64,
    rng: Rng,
    /// Objects per kind, kept as the store changes so the limits in `limits` cost O(1) per create.
    counts: VecMap<Kind, usize>,
    /// Objects whose stored `spec` is known to survive a JSON round trip unchanged, with the
    /// resourceVersion that is known of (a later write makes the entry stale). A status write
    /// then keeps the spec as it is instead of serialising it again: see [`merge_status_only`].
    /// Only looked up: it keeps no order of its keys.
    spec_canonical: LookupSlots<ObjectKey, u64>,
    /// The last pod spec found to survive a JSON round trip: the pods a controller creates from
    /// one template have equal specs, so a comparison, not a round trip each, tells that theirs
    /// do too (see [`ApiServer::created_spec_is_canonical`]).
    canonical_pod_spec: Option<Rc<PodSpec>>,
    /// The last pod spec a create found valid: the pods of one template have equal specs, and
    /// comparing two is a few hundred instructions where validating one was thirteen thousand.
    valid_pod_spec: Option<Rc<PodSpec>>,
    /// The spec of the last pod created, as it was sent and as defaulting left it: the pods of
    /// one template are sent with equal specs, and they share the one defaulted spec (which
    /// later comparisons, by the validation above and the scheduler's memo, settle by pointer).
    pod_defaults: Option<(Rc<PodSpec>, Rc<PodSpec>)>,
    /// How many Events were ever removed (see [`EventStore::event_removals`]).
    event_removals: u64,
    /// Every stored Event by [`event_age`], then key: the oldest are the first, so trimming to
    /// the cap and TTL expiry read what goes instead of listing and ranking every Event.
    events_by_age: EventAges,
    /// Writes per kind (indexed by [`Kind::index`]), so a view can ignore the kinds it does not
    /// show: an idle 1,000-node cluster renews a hundred Leases a second.
    writes: [u64; Kind::ALL.len() + 1],
    /// By store slot, the trace's name of the object held there (`Kind/namespace/name`) and the
    /// key it was made for (see [`ApiServer::trace_name`]). Holding the key keeps its
    /// allocation from being reused by another's, so a pointer comparison tells the name is
    /// this object's.
    trace_names: Vec<Option<(SharedKey, Str)>>,
    /// Pods by `spec.nodeName` ("" for the unscheduled), as kube-apiserver's watch cache indexes
    /// them for the field selector kubelets list with: `kubectl get pods --field-selector
    /// spec.nodeName=…` and `kubectl describe node` read a node's pods, not every pod. Built by
    /// the first list that asks, then kept on every pod write, as a kind's name order is (a run
    /// nothing lists that way pays nothing).
    pods_by_node: OnceCell<BTreeMap<Str, Slots>>,
    /// Stored pods with a `spec.nodeName`, kept on every pod write: how far scheduling has got,
    /// read without a pass over every pod (`kubeloop bench` asks after every 100 simulated ms).
    bound_pods: usize,
}

/// The age of the Event stored under `key`, if one is.
fn stored_event_age(objects: &ObjectMap, key: &SharedKey) -> Option<Millis> {
    objects.get(key).map(|o| event_age(o))
}

/// When an Event was last seen, for its expiry: `lastTimestamp`, else its creation, else 0.
fn event_age(obj: &Object) -> Millis {
    let seen = obj.as_event().and_then(|e| e.last_timestamp);
    seen.or(obj.meta().creation_timestamp).map_or(0, |t| t.0)
}

impl ApiServer {
    /// An empty cluster; `seed` feeds uids and generated names.
    pub fn new(seed: u64) -> ApiServer {
        ApiServer {
            objects: ObjectMap::new(),
            resource_version: 1,
            history: VecDeque::new(),
            retired: VecDeque::new(),
            compacted_rv: 1,
            rng: Rng::stream(seed, "apiserver"),
            counts: VecMap::new(),
            spec_canonical: LookupSlots::default(),
            canonical_pod_spec: None,
            valid_pod_spec: None,
            pod_defaults: None,
            event_removals: 0,
            events_by_age: EventAges::default(),
            writes: [0; Kind::ALL.len() + 1],
            trace_names: Vec::new(),
            pods_by_node: OnceCell::new(),
            bound_pods: 0,
        }
    }

    /// The current cluster-wide resourceVersion (what a LIST returns).
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// The CustomResourceDefinition that serves a custom kind, if it is stored.
    pub fn crd_of(&self, kind: CustomKind) -> Option<&CustomResourceDefinition> {
        let name = kind.resource();
        self.get(&ObjectKey::new(Kind::CustomResourceDefinition, "", &name))
            .and_then(|o| o.as_crd())
    }

    /// Completes an object of a served kind that is not simulated: by its CRD's strategy, or by
    /// the built-in registry's for a stored built-in kind. `status` is a write to `/status`.
    fn admit_custom(
        &self,
        obj: &mut CustomObject,
        old: Option<&CustomObject>,
        status: bool,
    ) -> Result<(), ApiError> {
        if obj.kind.is_builtin() {
            let is_claim = obj.kind.names().kind == "PersistentVolumeClaim";
            if let (true, Some(old), false) = (is_claim, old, status) {
                let class = storage::str_at(old, &["spec", "storageClassName"])
                    .zip(storage::class_kind())
                    .and_then(|(name, kind)| self.get(&ObjectKey::new(kind, "", name)))
                    .and_then(|o| o.as_custom());
                storage::admit_claim_resize(obj, old, class)?;
            }
            let claim = is_claim && old.is_none();
            let default_class = if claim { self.default_class() } else { None };
            return customresource::admit_builtin(obj, old, status, default_class.as_deref());
        }
        let crd = self
            .crd_of(obj.kind)
            .ok_or_else(customresource::not_served)?;
        customresource::admit(obj, crd, old, status).map(drop)
    }

    /// The DefaultStorageClass admission plugin's pick: the newest class marked default (by
    /// creation time, then name).
    fn default_class(&self) -> Option<String> {
        let kind = storage::class_kind()?;
        self.list(kind)
            .map(|o| o.meta())
            .filter(|m| storage::is_default_class(m))
            .max_by(|a, b| (a.creation_timestamp, &a.name).cmp(&(b.creation_timestamp, &b.name)))
            .map(|m| m.name.to_string())
    }

    /// The CRDs whose kinds are served now (Established, not terminating), in name order.
    pub fn served_crds(&self) -> Vec<CustomResourceDefinition> {
        self.list(Kind::CustomResourceDefinition)
            .filter_map(|o| o.as_crd())
            .filter(|c| customresource::serving(c))
            .cloned()
            .collect()
    }

    /// How many writes (creates, updates, deletes) objects of `kind` have seen.
    pub fn writes(&self, kind: Kind) -> u64 {
        self.writes[kind.index()]
    }

    /// How many writes objects of every kind have seen.
    pub fn all_writes(&self) -> u64 {
        self.writes.iter().sum()
    }

    /// GET.
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.objects.get(key)
    }

    /// LIST of one kind, in name order.
    pub fn list(&self, kind: Kind) -> impl Iterator<Item = &Rc<Object>> {
        self.list_keyed(kind).map(|(_, o)| o)
    }

    /// LIST of the pods whose `spec.nodeName` is `node` ("" for the unscheduled), in name order,
    /// read from the store's index of pods by node (see `pods_by_node`).
    pub fn list_pods_on_node(&self, node: &str) -> impl Iterator<Item = &Rc<Object>> {
        let index = self.pods_by_node.get_or_init(|| {
            let mut index = BTreeMap::new();
            for (key, o) in self.list_keyed(Kind::Pod) {
                if let (Some(p), Some(slot)) = (o.as_pod(), self.objects.slot_of(key)) {
                    file(&mut index, &p.spec.node_name, key, Some(slot));
                }
            }
            index
        });
        index
            .get(node)
            .into_iter()
            .flat_map(|set| set.values())
            .map(|&slot| self.objects.at(slot))
    }

    /// Every object of one kind in no meaningful order (where the store happens to hold it), for
    /// a view that orders what it shows itself: a kind's name order, once listed, is kept on
    /// every create and delete, and the page's Events (tens of thousands created and expired a
    /// run) need none.
    pub fn scan(&self, kind: Kind) -> impl Iterator<Item = &Rc<Object>> {
        self.objects.scan(kind)
    }

    /// Whether anything has listed `kind` in name order (from then on each create and delete
    /// keeps that order): for the tests that check the page's views leave the Events' unbuilt.
    pub fn name_ordered(&self, kind: Kind) -> bool {
        self.objects.name_ordered(kind)
    }

    /// [`ApiServer::list`] with each object's shared key, for informer caches to share.
    pub fn list_keyed(&self, kind: Kind) -> impl Iterator<Item = (&SharedKey, &Rc<Object>)> {
        let lo = ObjectKey::from_parts(kind, Str::EMPTY, Str::EMPTY);
        self.objects.kind_from(&lo)
    }

    /// Every object of a custom kind, in key order (custom kinds sort after the built-in ones).
    pub fn list_custom_keyed(&self) -> impl Iterator<Item = (&SharedKey, &Rc<Object>)> {
        self.objects
            .kinds()
            .filter(|k| k.custom().is_some())
            .flat_map(|kind| {
                let lo = ObjectKey::from_parts(kind, Str::EMPTY, Str::EMPTY);
                self.objects.kind_from(&lo)
            })
    }

    /// Every object, in key order.
    pub fn all(&self) -> impl Iterator<Item = &Rc<Object>> {
        self.objects.values()
    }

    /// Every object but the Events, in key order: for the views that leave Events out, without
    /// the Events' name order built for them (see [`ApiServer::scan`]). One collected list
    /// rather than an iterator, so the page carries one copy of the walk, not one per caller.
    pub fn all_but_events(&self) -> Vec<&Rc<Object>> {
        let mut out = Vec::with_capacity(self.len() - self.count(Kind::Event));
        for kind in self.objects.kinds().filter(|&k| k != Kind::Event) {
            out.extend(self.list(kind));
        }
        out
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Number of stored objects of one kind (O(1), for the playground limits and views).
    pub fn count(&self, kind: Kind) -> usize {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    /// The length of the watch history kept for resuming watches (bounded by
    /// [`WATCH_HISTORY_WINDOW`] and [`WATCH_HISTORY_CAPACITY`]), for views and the memory-bound
    /// tests.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// Stored pods bound to a node (a non-empty `spec.nodeName`), in O(1).
    pub fn bound_pods(&self) -> usize {
        self.bound_pods
    }

    fn count_change(&mut self, kind: Kind, added: bool) {
        let n = self.counts.entry(kind).or_default();
        if added {
            *n += 1;
        } else {
            *n = n.saturating_sub(1);
        }
    }

    /// Watch events after `rv`, or 410 when history was compacted past it. The history is in
    /// resourceVersion order, so the start is found by binary search: a caller that is nearly
    /// up to date (the page, every frame) pays for what it missed, not for the whole window.
    pub fn events_since(&self, rv: u64) -> Result<Vec<WatchEvent>, TooOldResourceVersion> {
        if rv < self.compacted_rv {
            return Err(TooOldResourceVersion {
                requested: rv,
                oldest: self.compacted_rv,
            });
        }
        let start = self
            .history
            .partition_point(|(_, e)| e.resource_version <= rv);
        Ok(self
            .history
            .range(start..)
            .map(|(_, e)| e.clone())
            .collect())
    }

    /// Forgets the whole watch history (for `kubeloop bench --memory`, which measures what it
    /// held): every watch behind the current resourceVersion would get 410 Gone.
    pub fn free_history(&mut self) {
        self.history = VecDeque::new();
        self.retired = VecDeque::new();
        self.compacted_rv = self.resource_version;
    }

    /// Drops history older than the window, as the watch cache does. Watches lose it at once;
    /// the memory goes a few entries per write: an entry is often the last holder of an old
    /// object version, and freeing a rollout's worth of versions in one go (thousands every
    /// 10 s) was one of the longest steps of a frame.
    pub fn compact(&mut self, now: Millis) {
        while self
            .history
            .front()
            .is_some_and(|(t, _)| t + WATCH_HISTORY_WINDOW < now)
        {
            let Some((_, e)) = self.history.pop_front() else {
                break;
            };
            self.compacted_rv = e.resource_version;
            self.retired.push_back(e);
        }
        // Writes too rare to keep up (an idle cluster) still hold no more than one history's
        // worth.
        while self.retired.len() > WATCH_HISTORY_CAPACITY {
            self.retired.pop_front();
        }
    }

    fn next_rv(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }

    fn new_uid(&mut self) -> Str {
        let a = self.rng.next_u64();
        let b = self.rng.next_u64();
        // `{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}`: a version-4 UUID's layout.
        let mut uid = *b"00000000-0000-4000-0000-000000000000";
        hex_digits(&mut uid[..8], a >> 32);
        hex_digits(&mut uid[9..13], (a >> 16) & 0xffff);
        hex_digits(&mut uid[15..18], a & 0xfff);
        hex_digits(&mut uid[19..23], ((b >> 48) & 0x3fff) | 0x8000);
        hex_digits(&mut uid[24..], b & 0xffff_ffff_ffff);
        Str::from(std::str::from_utf8(&uid).expect("ASCII"))
    }

    fn commit(
        &mut self,
        now: Millis,
        type_: WatchEventType,
        obj: Rc<Object>,
        (key, slot): (SharedKey, u32),
        rv: u64,
        cause: u64,
    ) -> WatchEvent {
        self.writes[key.kind.index()] += 1;
        let mut ev = WatchEvent::keyed(type_, obj, key, rv, cause);
        ev.slot = slot;
        self.history.push_back((now, ev.clone()));
        for _ in 0..RETIRED_DROPS_PER_WRITE {
            if self.retired.pop_front().is_none() {
                break;
            }
        }
        // The capacity holds at every write (the window is applied by `compact`, every 10 s):
        // a 10,000-pod rollout would otherwise pile up 100,000 versions between two compactions.
        if self.history.len() > WATCH_HISTORY_CAPACITY {
            if let Some((_, oldest)) = self.history.pop_front() {
                self.compacted_rv = oldest.resource_version;
            }
        }
        ev
    }

    /// The trace's name of `key` (`Kind/namespace/name`), which a watch event's `slot` says the
    /// store holds (or held) it in: written out the first time the trace names the object and
    /// kept for its later writes and deliveries. A pod is written a dozen times and each write
    /// delivered to a dozen informers; an Event is recorded and nothing watches it, so it is
    /// never named at all (writing out every change's name was 1.6% of converging a cluster).
    /// A slot that now holds another object, or none given, names the key anew.
    pub fn trace_name(&mut self, key: &SharedKey, slot: u32) -> Str {
        if slot == NO_SLOT {
            return key.trace_name().into();
        }
        let i = slot as usize;
        if self.trace_names.len() <= i {
            self.trace_names.resize(i + 1, None);
        }
        match &self.trace_names[i] {
            Some((made_for, name)) if Rc::ptr_eq(made_for, key) => name.clone(),
            _ => {
                let name = Str::from(key.trace_name());
                self.trace_names[i] = Some((key.clone(), name.clone()));
                name
            }
        }
    }

    /// The trace's name of `key`, as [`ApiServer::trace_name`] keeps it for the object the store
    /// holds under it (an Event names its involved object: five for every pod a cluster starts),
    /// or written out for one it no longer holds.
    pub fn trace_name_of(&mut self, key: &ObjectKey) -> Str {
        match self.objects.shared_key(key) {
            Some((shared, slot)) => {
                let shared = shared.clone();
                self.trace_name(&shared, slot)
            }
            None => key.trace_name().into(),
        }
    }

    fn store(
        &mut self,
        now: Millis,
        mut obj: Object,
        type_: WatchEventType,
        cause: u64,
    ) -> (Rc<Object>, WatchEvent) {
        let rv = self.next_rv();
        obj.meta_mut().resource_version = Str::decimal(rv);
        let obj = Rc::new(obj);
        let given = Rc::new(obj.key());
        let Replaced { key, old, slot } = self.objects.replace(&given, obj.clone(), NO_SLOT);
        let shared = key.unwrap_or(given);
        if old.is_none() {
            self.count_change(obj.kind(), true);
        }
        if let Some(p) = obj.as_pod() {
            let was_bound = old
                .as_deref()
                .and_then(Object::as_pod)
                .is_some_and(|b| !b.spec.node_name.is_empty());
            match (was_bound, !p.spec.node_name.is_empty()) {
                (false, true) => self.bound_pods += 1,
                (true, false) => self.bound_pods -= 1,
                _ => {}
            }
        }
        if let (Some(index), Some(p)) = (self.pods_by_node.get_mut(), obj.as_pod()) {
            let before = old.as_deref().and_then(Object::as_pod);
            let node = &p.spec.node_name;
            if before.is_none_or(|b| b.spec.node_name != *node) {
                if let Some(b) = before {
                    file(index, &b.spec.node_name, &shared, None);
                }
                file(index, node, &shared, Some(slot));
            }
        }
        if obj.kind() == Kind::Event {
            // Filed again only at a new age: the entry at the old one is left behind (see
            // `event_ages`).
            let age = event_age(&obj);
            if old.as_deref().is_none_or(|o| event_age(o) != age) {
                let live = self.count(Kind::Event);
                let objects = &self.objects;
                self.events_by_age
                    .insert(age, shared.clone(), live, |k| stored_event_age(objects, k));
            }
        }
        let ev = self.commit(now, type_, obj.clone(), (shared, slot), rv, cause);
        (obj, ev)
    }

    fn remove(
        &mut self,
        now: Millis,
        key: &ObjectKey,
        cause: u64,
    ) -> Option<(Rc<Object>, WatchEvent)> {
        let (shared, old, slot) = self.objects.remove_entry(key)?;
        self.count_change(key.kind, false);
        self.spec_canonical.remove(key);
        if old.as_pod().is_some_and(|p| !p.spec.node_name.is_empty()) {
            self.bound_pods -= 1;
        }
        if let (Some(index), Some(p)) = (self.pods_by_node.get_mut(), old.as_pod()) {
            file(index, &p.spec.node_name, &shared, None);
        }
        if key.kind == Kind::Event {
            self.event_removals += 1;
        }
        let rv = self.next_rv();
        let mut last = (*old).clone();
        last.meta_mut().resource_version = Str::decimal(rv);
        let last = Rc::new(last);
        let ev = self.commit(
            now,
            WatchEventType::Deleted,
            last.clone(),
            (shared, slot),
            rv,
            cause,
        );
        Some((last, ev))
    }

    /// Executes one request at simulated time `now`. `cause` is the trace entry of the request.
    ///
    /// The request is borrowed: its sender keeps it for its answer, and a status write only
    /// reads the object it carries.
    pub fn handle(&mut self, now: Millis, req: &ApiRequest, cause: u64) -> Handled {
        let mut events = Vec::new();
        let result = match req {
            ApiRequest::Create(obj) => self.create(now, obj.clone(), cause, &mut events),
            ApiRequest::Update(obj) => {
                self.update(now, Cow::Borrowed(obj), false, cause, &mut events)
            }
            ApiRequest::UpdateStatus(obj) => {
                self.update(now, Cow::Borrowed(obj), true, cause, &mut events)
            }
            ApiRequest::Patch { key, patch, status } => {
                self.patch(now, key, patch, *status, cause, &mut events)
            }
            ApiRequest::Delete { key, options } => {
                self.delete(now, key, options, cause, &mut events)
            }
            ApiRequest::Bind { key, node } => self.bind(now, key, node, cause, &mut events),
            ApiRequest::Evict { key, options } => self.evict(now, key, options, cause, &mut events),
            ApiRequest::Finalize(obj) => self.finalize(now, obj, cause, &mut events),
            ApiRequest::DeleteCollection { kind, namespace } => {
                self.delete_collection(now, *kind, namespace, cause, &mut events)
            }
        };
        if let Kind::Custom(kind) = req.key().kind {
            self.finish_crd_cleanup(now, &kind.resource(), cause, &mut events);
        }
        Handled { result, events }
    }

    fn validate(obj: &Object, old: Option<&Object>) -> Result<(), ApiError> {
        invalid_unless_empty(obj, validation::validate(obj, old))
    }

    /// [`admission::apply_defaults`] for a create: a pod sent with the spec the last one was
    /// sent with gets the spec that one was given.
    fn default_created(&mut self, obj: &mut Object) {
        let sent = obj.as_pod().map(|p| p.spec.clone());
        if let (Some(sent), Some((was, became)), Object::Pod(p)) =
            (&sent, &self.pod_defaults, &mut *obj)
        {
            if Rc::ptr_eq(sent, was) || **sent == **was {
                p.spec = became.clone();
                admission::default_namespace(obj);
                debug_assert!(
                    {
                        let mut fresh = obj.clone();
                        if let Object::Pod(p) = &mut fresh {
                            p.spec = sent.clone();
                        }
                        admission::apply_defaults(&mut fresh);
                        fresh == *obj
                    },
                    "a pod's defaults depend on its spec alone"
                );
                return;
            }
        }
        admission::apply_defaults(obj);
        if let (Some(sent), Object::Pod(p)) = (sent, &*obj) {
            self.pod_defaults = Some((sent, p.spec.clone()));
        }
    }

    /// [`ApiServer::validate`] for a create, a pod's spec checked by comparison when it equals
    /// the last one found valid.
    fn validate_created(&mut self, obj: &Object) -> Result<(), ApiError> {
        let errs = validation::validate_known(obj, None, self.valid_pod_spec.as_deref());
        invalid_unless_empty(obj, errs)?;
        if let Object::Pod(p) = obj {
            self.valid_pod_spec = Some(p.spec.clone());
        }
        Ok(())
    }

    /// The service registry's cluster IP for a new Service: the one the user chose (`clusterIP`,
    /// or the first of `clusterIPs`) if it lies in the service CIDR and no other Service holds
    /// it, with Kubernetes' messages otherwise; else a free one at random above the CIDR's first
    /// 256 addresses, which Kubernetes leaves to users since 1.26 (KEP-3070), and only then among
    /// them. `None` (headless) holds none.
    fn allocate_cluster_ip(&mut self, svc: &mut Service) -> Result<(), ApiError> {
        if svc.spec.cluster_ip.is_none() {
            svc.spec.cluster_ip = svc
                .spec
                .cluster_ips
                .as_deref()
                .and_then(|ips| ips.get(0)?.as_str().map(str::to_string));
        }
        if matches!(svc.spec.cluster_ip.as_deref(), Some("None")) {
            return Ok(());
        }
        let used: BTreeSet<u32> = self
            .list(Kind::Service)
            .filter_map(|o| {
                o.as_service()?
                    .spec
                    .cluster_ip
                    .as_deref()?
                    .parse::<std::net::Ipv4Addr>()
                    .ok()
            })
            .map(u32::from)
            .collect_set();
        if let Some(ip) = svc.spec.cluster_ip.as_deref().filter(|ip| !ip.is_empty()) {
            let problem = match ip.parse::<std::net::Ipv4Addr>().map(u32::from) {
                Ok(n) if service_cidr_offset(n).is_some() => {
                    if !used.contains(&n) {
                        return Ok(());
                    }
                    "provided IP is already allocated".to_string()
                }
                _ => format!("the provided IP ({ip}) is not in the valid range. The range of valid IPs is {SERVICE_CIDR}"),
            };
            let err = validation::FieldError::invalid(
                "spec.clusterIPs",
                validation::go_cluster_ips(svc),
                format!("failed to allocate IP {ip}: {problem}"),
            );
            return Err(ApiError {
                reason: StatusReason::Invalid,
                message: validation::invalid_status_message(
                    Kind::Service,
                    &svc.metadata.name,
                    &[err],
                ),
            });
        }
        let (first, last) = (SERVICE_CIDR_STATIC_BAND, SERVICE_CIDR_SIZE - 2);
        let band = last - first + 1;
        let start = self.rng.range(0, u64::from(band - 1)) as u32;
        let free = (0..band)
            .map(|k| first + (start + k) % band)
            .chain(1..first)
            .map(|offset| SERVICE_CIDR_BASE + offset)
            .find(|n| !used.contains(n));
        let Some(n) = free else {
            return Err(ApiError {
                reason: StatusReason::InternalError,
                message: "Internal error occurred: failed to allocate a serviceIP: range is full"
                    .to_string(),
            });
        };
        svc.spec.cluster_ip = Some(std::net::Ipv4Addr::from(n).to_string());
        Ok(())
    }

    /// The service registry's node ports for a NodePort or LoadBalancer Service: a port the
    /// update leaves without one keeps the one its namesake had before (as `patchAllocatedValues`
    /// does), a port still without one gets a free one at random from the dynamic band above
    /// 30085 (the static band below is left to users, as Kubernetes' allocator does since 1.27),
    /// and a port the user chose must be in 30000-32767 and not held by another Service. Other
    /// types hold none.
    fn allocate_node_ports(
        &mut self,
        svc: &mut Service,
        before: Option<&Service>,
    ) -> Result<(), ApiError> {
        if !matches!(svc.spec.type_.as_deref(), Some("NodePort" | "LoadBalancer")) {
            return Ok(());
        }
        if let Some(before) = before {
            for p in svc
                .spec
                .ports
                .iter_mut()
                .filter(|p| p.node_port.unwrap_or(0) == 0)
            {
                p.node_port = before
                    .spec
                    .ports
                    .iter()
                    .find(|b| b.name == p.name)
                    .and_then(|b| b.node_port)
                    .filter(|&n| n != 0);
            }
        }
        let key = (svc.metadata.namespace.as_str(), svc.metadata.name.as_str());
        let mut used: BTreeSet<i64> = self
            .list(Kind::Service)
            .filter_map(|o| o.as_service())
            .filter(|o| (o.metadata.namespace.as_str(), o.metadata.name.as_str()) != key)
            .flat_map(|o| o.spec.ports.iter().filter_map(|p| p.node_port))
            .collect_set();
        let mut errs = Vec::new();
        for (i, p) in svc.spec.ports.iter().enumerate() {
            let Some(np) = p.node_port.filter(|&n| n != 0) else {
                continue;
            };
            let field = format!("spec.ports[{i}].nodePort");
            if !(NODE_PORT_MIN..=NODE_PORT_MAX).contains(&np) {
                errs.push(validation::FieldError::invalid(field, np, format!("provided port is not in the valid range. The range of valid ports is {NODE_PORT_MIN}-{NODE_PORT_MAX}")));
            } else if !used.insert(np) {
                errs.push(validation::FieldError::invalid(
                    field,
                    np,
                    "provided port is already allocated",
                ));
            }
        }
        if !errs.is_empty() {
            return Err(ApiError {
                reason: StatusReason::Invalid,
                message: validation::invalid_status_message(
                    Kind::Service,
                    &svc.metadata.name,
                    &errs,
                ),
            });
        }
        let dynamic = NODE_PORT_MIN + NODE_PORT_STATIC_BAND;
        let band = (NODE_PORT_MAX - dynamic + 1) as u64;
        for (i, p) in svc.spec.ports.iter_mut().enumerate() {
            if p.node_port.unwrap_or(0) != 0 {
                continue;
            }
            let start = self.rng.range(0, band - 1) as i64;
            // The dynamic band from a random start, then the static band: the first free port.
            let free = (0..band as i64)
                .map(|k| dynamic + (start + k) % band as i64)
                .chain(NODE_PORT_MIN..dynamic)
                .find(|n| !used.contains(n));
            let Some(np) = free else {
                return Err(ApiError {
                    reason: StatusReason::Invalid,
                    message: format!(
                        "Service \"{}\" is invalid: spec.ports[{i}].nodePort: Internal error: failed to allocate a nodePort: range is full",
                        svc.metadata.name
                    ),
                });
            };
            used.insert(np);
            p.node_port = Some(np);
        }
        Ok(())
    }

    fn create(
        &mut self,
        now: Millis,
        mut obj: Object,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let kind = obj.kind();
        if obj.meta().name.is_empty() && !obj.meta().generate_name.is_empty() {
            // Retry on collision, as the registry does for generateName.
            for _ in 0..8 {
                let candidate = concat(&[&obj.meta().generate_name, &self.rng.safe_string(5)]);
                if !self.objects.contains_key(&ObjectKey::new(
                    kind,
                    &obj.meta().namespace,
                    &candidate,
                )) {
                    obj.meta_mut().name = candidate.into();
                    break;
                }
            }
        }
        self.default_created(&mut obj);
        self.validate_created(&obj)?;
        self.admit_into_namespace(&obj)?;
        match &mut obj {
            Object::CustomResourceDefinition(crd) => {
                let others = self
                    .list(Kind::CustomResourceDefinition)
                    .filter_map(|o| o.as_crd());
                customresource::prepare_crd_create(crd, others, stamp(now));
                if crd.established() && CustomKind::of(crd).is_none() {
                    return Err(ApiError {
                        reason: StatusReason::Forbidden,
                        message: format!(
                            "customresourcedefinitions.apiextensions.k8s.io {:?} is forbidden: the playground serves at most {} custom kinds per page",
                            crd.metadata.name,
                            crate::sim::api::apiextensions::MAX_INTERNED_KINDS
                        ),
                    });
                }
            }
            Object::Custom(c) => {
                if job::is_job(c) {
                    // The Job registry generates its selector from the uid, which the server
                    // fills in before the strategy runs.
                    c.metadata.uid = self.new_uid();
                }
                self.admit_custom(c, None, false)?
            }
            _ => {}
        }
        if let Object::Pod(pod) = &mut obj {
            // The pod registry's PrepareForCreate: a new pod is Pending until a kubelet says otherwise.
            if pod.status.phase.is_empty() {
                pod.status.phase = "Pending".into();
            }
        }
        if let Object::Service(svc) = &mut obj {
            let external = svc.spec.type_.as_deref() == Some("ExternalName");
            if !external {
                self.allocate_cluster_ip(svc)?;
            }
            // The registry's single-stack IPv4 family fields, as a one-family cluster stores them.
            if !external {
                let json = |v: Json| Some(Box::new(v));
                if let Some(ip) = &svc.spec.cluster_ip {
                    if svc.spec.cluster_ips.is_none() {
                        svc.spec.cluster_ips = json(Json::Array(vec![Json::String(ip.clone())]));
                    }
                }
                if svc.spec.ip_families.is_none() {
                    svc.spec.ip_families = json(serde_json::json!(["IPv4"]));
                }
                if svc.spec.ip_family_policy.is_none() {
                    svc.spec.ip_family_policy = json(Json::String("SingleStack".into()));
                }
            }
            if svc.status.is_none() {
                svc.status = Some(Box::new(serde_json::json!({"loadBalancer": {}})));
            }
            self.allocate_node_ports(svc, None)?;
        }
        // The playground's ResourceQuota-like caps (admission runs before storage, as in Kubernetes).
        limits::admit_create(
            kind,
            &obj.meta().name,
            limits::StoreCounts {
                of_kind: self.count(kind),
                total: self.objects.len() - self.count(Kind::Event),
            },
        )?;
        if self.objects.contains_key(&obj.key()) {
            return Err(ApiError::already_exists(kind, &obj.meta().name));
        }
        let uid = match &obj {
            Object::Custom(c) if !c.metadata.uid.is_empty() && job::is_job(c) => {
                c.metadata.uid.clone()
            }
            _ => self.new_uid(),
        };
        let m = obj.meta_mut();
        m.uid = uid;
        m.creation_timestamp = Some(stamp(now));
        m.deletion_timestamp = None;
        m.deletion_grace_period_seconds = None;
        if has_generation(kind) {
            m.generation = 1;
        }
        let (stored, ev) = self.store(now, obj, WatchEventType::Added, cause);
        if let Object::Pod(p) = &*stored {
            if self.created_spec_is_canonical(&p.spec) {
                self.spec_canonical
                    .insert((*ev.key).clone(), stored.meta().rv());
            }
        }
        events.push(ev);
        Ok(stored)
    }

    /// Whether a new pod's spec survives a JSON round trip unchanged, so that its first status
    /// write keeps it as it is (binding keeps that true). Found by comparing it with the last spec
    /// that did, and otherwise by a round trip here instead of at that status write: a
    /// ReplicaSet's 10,000 pods cost one round trip, not 10,000 (5% of the instructions
    /// converging 1,000 replicas).
    fn created_spec_is_canonical(&mut self, spec: &Rc<PodSpec>) -> bool {
        if self
            .canonical_pod_spec
            .as_ref()
            .is_some_and(|known| Rc::ptr_eq(known, spec) || **known == **spec)
        {
            return true;
        }
        let canonical = canon::survives_round_trip(&**spec);
        if canonical {
            self.canonical_pod_spec = Some(spec.clone());
        }
        canonical
    }

    /// NamespaceLifecycle admission for a create: a namespaced object goes into a namespace that
    /// exists and is not being terminated.
    fn admit_into_namespace(&self, obj: &Object) -> Result<(), ApiError> {
        let kind = obj.kind();
        if !kind.namespaced() {
            return Ok(());
        }
        let name = &obj.meta().namespace;
        let ns = self
            .get(&ObjectKey::new(Kind::Namespace, "", name))
            .and_then(|o| o.as_namespace());
        match ns {
            None => Err(ApiError::not_found(Kind::Namespace, name)),
            Some(ns) if ns.metadata.deletion_timestamp.is_some() => Err(ApiError {
                reason: StatusReason::Forbidden,
                message: format!(
                    "{} \"{}\" is forbidden: unable to create new content in namespace {name} because it is being terminated",
                    kind.resource(),
                    obj.meta().name
                ),
            }),
            Some(_) => Ok(()),
        }
    }

    /// Whether objects may be created in namespace `name` now (it exists and is not
    /// terminating): what an event recorder's write needs.
    pub fn accepts_content_in(&self, name: &str) -> bool {
        self.get(&ObjectKey::new(Kind::Namespace, "", name))
            .is_some_and(|o| o.meta().deletion_timestamp.is_none())
    }

    /// DELETE of a collection: each object of `kind` in `namespace` as its own DELETE with the
    /// default options (the namespace controller's `deleteCollection`). Answered with the
    /// namespace, as the scope of what was deleted.
    fn delete_collection(
        &mut self,
        now: Millis,
        kind: Kind,
        namespace: &str,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let ns = self
            .get(&ObjectKey::new(Kind::Namespace, "", namespace))
            .cloned()
            .ok_or_else(|| ApiError::not_found(Kind::Namespace, namespace))?;
        let keys: Vec<ObjectKey> = self
            .list(kind)
            .filter(|o| o.meta().namespace == namespace)
            .map(|o| o.key())
            .collect();
        for key in keys {
            // Each item's own refusal (none here: no admission refuses a delete) stays its own.
            let _ = self.delete(now, &key, &DeleteOptions::default(), cause, events);
        }
        Ok(ns)
    }

    /// The stored object a write of `new` replaces, its resourceVersion precondition checked:
    /// 404 when it is gone, 409 when the writer's view is stale.
    fn current_for_write(&self, new: &Object) -> Result<Rc<Object>, ApiError> {
        let key = new.key();
        let old = self
            .objects
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(key.kind, &key.name))?;
        let rv = &new.meta().resource_version;
        if !rv.is_empty() && *rv != old.meta().resource_version {
            return Err(ApiError::conflict(key.kind, &key.name));
        }
        Ok(old)
    }

    /// `namespaces/finalize`: only `spec.finalizers` changes; a terminating namespace left with
    /// no finalizer of either kind is deleted (the registry's `ShouldDeleteDuringUpdate`).
    fn finalize(
        &mut self,
        now: Millis,
        new: &Object,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let key = new.key();
        let old = self.current_for_write(new)?;
        let (Some(wanted), Some(_)) = (new.as_namespace(), old.as_namespace()) else {
            return Err(ApiError {
                reason: StatusReason::NotFound,
                message: "the server could not find the requested resource".into(),
            });
        };
        let mut obj = (*old).clone();
        if let Some(ns) = obj.as_namespace_mut() {
            ns.spec.finalizers = wanted.spec.finalizers.clone();
        }
        Self::validate(&obj, Some(&old))?;
        if obj == *old {
            return Ok(old);
        }
        Ok(self.write_or_complete(now, &key, obj, cause, events).0)
    }

    /// Stores a written object (true), or completes its deletion when the write left an object
    /// being deleted with nothing holding it: no finalizer, no grace period running, no
    /// namespace finalizer (false).
    fn write_or_complete(
        &mut self,
        now: Millis,
        key: &ObjectKey,
        obj: Object,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> (Rc<Object>, bool) {
        if obj.meta().deletion_timestamp.is_some()
            && obj.meta().finalizers.is_empty()
            && !is_graceful_pod(&obj)
            && !has_namespace_finalizers(&obj)
        {
            let (last, ev) = self
                .remove(now, key, cause)
                .expect("the caller read the object");
            events.push(ev);
            return (last, false);
        }
        let (stored, ev) = self.store(now, obj, WatchEventType::Modified, cause);
        events.push(ev);
        (stored, true)
    }

    fn update(
        &mut self,
        now: Millis,
        new: Cow<'_, Object>,
        status: bool,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let key = new.key();
        let old = self.current_for_write(&new)?;
        let old_spec_canonical = self.spec_canonical.get(&key) == Some(&old.meta().rv());
        let mut spec_canonical = false;
        let obj = if status {
            let mut merged;
            (merged, spec_canonical) = merge_status_only(&old, &new, old_spec_canonical);
            if let (Object::Custom(c), Object::Custom(o)) = (&mut merged, &*old) {
                self.admit_custom(c, Some(o), true)?;
            }
            merged
        } else {
            let mut obj = keep_system_fields(&old, new.into_owned(), old_spec_canonical);
            admission::apply_defaults(&mut obj);
            if let (Object::Service(svc), Object::Service(before)) = (&mut obj, &*old) {
                drop_node_ports_left_by_a_type_change(svc, before);
                keep_cluster_ip(svc, before);
            }
            Self::validate(&obj, Some(&old))?;
            if let (Object::Service(svc), Object::Service(before)) = (&mut obj, &*old) {
                self.allocate_node_ports(svc, Some(before))?;
            }
            if let (Object::Custom(c), Object::Custom(o)) = (&mut obj, &*old) {
                self.admit_custom(c, Some(o), false)?;
            }
            if has_generation(key.kind) && spec_changed(&old, &obj) {
                obj.meta_mut().generation = old.meta().generation + 1;
            }
            obj
        };
        if obj == *old {
            // A no-op write does not bump the resourceVersion, as etcd's guaranteed update skips it.
            if spec_canonical {
                self.spec_canonical.insert(key, old.meta().rv());
            }
            return Ok(old);
        }
        // Clearing the last finalizer of an object being deleted completes the deletion.
        let (written, stored) = self.write_or_complete(now, &key, obj, cause, events);
        if stored && spec_canonical {
            self.spec_canonical.insert(key, written.meta().rv());
        }
        Ok(written)
    }

    fn patch(
        &mut self,
        now: Millis,
        key: &ObjectKey,
        patch: &Json,
        status: bool,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let Some(old) = self.objects.get(key).cloned() else {
            return Err(ApiError::not_found(key.kind, &key.name));
        };
        let mut doc = old.to_json();
        super::patch::merge(&mut doc, patch);
        let obj = Object::from_json(key.kind, doc).map_err(|e| ApiError {
            reason: StatusReason::BadRequest,
            message: format!(
                "{} in version \"{}\" cannot be handled as a {}: {e}",
                key.kind,
                key.kind.api_version(),
                key.kind
            ),
        })?;
        if obj.key() != *key {
            return Err(ApiError {
                reason: StatusReason::BadRequest,
                message: "the name of the object does not match the name on the URL".into(),
            });
        }
        self.update(now, Cow::Owned(obj), status, cause, events)
    }

    fn delete(
        &mut self,
        now: Millis,
        key: &ObjectKey,
        opts: &DeleteOptions,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let Some(old) = self.objects.get(key).cloned() else {
            return Err(ApiError::not_found(key.kind, &key.name));
        };
        if let Some(uid) = &opts.precondition_uid {
            if *uid != old.meta().uid {
                return Err(ApiError::uid_precondition(
                    key.kind,
                    &key.name,
                    uid,
                    &old.meta().uid,
                ));
            }
        }
        if let Some(rv) = &opts.precondition_resource_version {
            if *rv != old.meta().resource_version {
                return Err(ApiError::conflict(key.kind, &key.name));
            }
        }
        // A graceful delete writes metadata only: a spec known to survive a JSON round trip
        // still does, so a terminating pod's status writes need not serialise it again.
        let spec_canonical = self.spec_canonical.get(key) == Some(&old.meta().rv());
        let mut obj = (*old).clone();
        if let Object::CustomResourceDefinition(crd) = &mut obj {
            return self.delete_crd(now, crd, cause, events);
        }
        if let Object::Namespace(ns) = &mut obj {
            if IMMORTAL_NAMESPACES.contains(&ns.metadata.name.as_str()) {
                return Err(ApiError {
                    reason: StatusReason::Forbidden,
                    message: format!(
                        "namespaces {:?} is forbidden: this namespace may not be deleted",
                        ns.metadata.name
                    ),
                });
            }
            if ns.metadata.deletion_timestamp.is_some() {
                return Err(ApiError {
                    reason: StatusReason::Conflict,
                    message: format!(
                        "Operation cannot be fulfilled on namespaces {:?}: The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.",
                        ns.metadata.name
                    ),
                });
            }
            if !ns.spec.finalizers.is_empty() {
                // The namespace registry's delete: Terminating until the namespace controller
                // has emptied it and finalized it.
                ns.metadata.deletion_timestamp = Some(stamp(now));
                ns.metadata.deletion_grace_period_seconds = Some(0);
                ns.status.phase = "Terminating".into();
                let (stored, ev) = self.store(now, obj, WatchEventType::Modified, cause);
                events.push(ev);
                return Ok(stored);
            }
        }
        let policy = opts.propagation_policy.unwrap_or_default();
        let m = obj.meta_mut();
        let mut changed = false;
        match policy {
            PropagationPolicy::Foreground
                if !m.finalizers.iter().any(|f| f == FOREGROUND_FINALIZER)
                    && m.deletion_timestamp.is_none() =>
            {
                m.finalizers.push(FOREGROUND_FINALIZER.into());
                changed = true;
            }
            PropagationPolicy::Orphan
                if !m.finalizers.iter().any(|f| f == ORPHAN_FINALIZER)
                    && m.deletion_timestamp.is_none() =>
            {
                m.finalizers.push(ORPHAN_FINALIZER.into());
                changed = true;
            }
            _ => {}
        }
        // Pods bound to a node terminate gracefully: the kubelet confirms with a grace-0 delete.
        if let Object::Pod(pod) = &mut obj {
            let grace = opts
                .grace_period_seconds
                .or(pod.metadata.deletion_grace_period_seconds)
                .or(pod.spec.termination_grace_period_seconds)
                .unwrap_or(30)
                .max(0);
            let bound = !pod.spec.node_name.is_empty();
            let terminal = pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
            if bound && grace > 0 && !terminal {
                let deadline = stamp(now.saturating_add(limits::seconds_to_millis(grace)));
                let shorter = pod.metadata.deletion_timestamp.is_none_or(|t| deadline < t);
                if shorter {
                    pod.metadata.deletion_timestamp = Some(deadline);
                    pod.metadata.deletion_grace_period_seconds = Some(grace);
                    changed = true;
                }
                if changed {
                    return Ok(self.store_same_spec(now, obj, cause, spec_canonical, events));
                }
                return Ok(old);
            }
        }
        let m = obj.meta_mut();
        if !m.finalizers.is_empty() {
            // `BeforeDelete`: a shorter grace period shortens a deletion already under way, so a
            // pod the kubelet confirms with grace 0 goes as soon as its finalizers are cleared.
            let shorter = m.deletion_grace_period_seconds.unwrap_or(0) > 0
                && opts.grace_period_seconds == Some(0);
            if m.deletion_timestamp.is_none() || shorter {
                m.deletion_timestamp = Some(stamp(now));
                m.deletion_grace_period_seconds = Some(0);
                changed = true;
            }
            if changed {
                return Ok(self.store_same_spec(now, obj, cause, spec_canonical, events));
            }
            return Ok(old);
        }
        let (last, ev) = self
            .remove(now, key, cause)
            .expect("object exists: checked above");
        events.push(ev);
        Ok(last)
    }

    /// Deleting a CRD (the registry's delete and the CRD finalizer controller, in one step): it
    /// goes Terminating with the cleanup finalizer, every object of its kind is deleted, and once
    /// none is left (objects with finalizers of their own hold it) the CRD goes too.
    fn delete_crd(
        &mut self,
        now: Millis,
        crd: &mut CustomResourceDefinition,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        if crd.metadata.deletion_timestamp.is_none() {
            crd.metadata.deletion_timestamp = Some(stamp(now));
            crd.metadata.deletion_grace_period_seconds = Some(0);
            if !crd
                .metadata
                .finalizers
                .iter()
                .any(|f| f == CRD_CLEANUP_FINALIZER)
            {
                crd.metadata.finalizers.push(CRD_CLEANUP_FINALIZER.into());
            }
            crd.status.conditions.retain(|c| c.type_ != "Terminating");
            crd.status
                .conditions
                .push(CustomResourceDefinitionCondition {
                    type_: "Terminating".into(),
                    status: "True".into(),
                    last_transition_time: Some(stamp(now)),
                    reason: "InstanceDeletionInProgress".into(),
                    message: "CustomResource deletion is in progress".into(),
                });
            let (_, ev) = self.store(
                now,
                Object::from(crd.clone()),
                WatchEventType::Modified,
                cause,
            );
            events.push(ev);
        }
        if let Some(kind) = CustomKind::of(crd) {
            let keys: Vec<ObjectKey> = self
                .list_keyed(Kind::Custom(kind))
                .map(|(k, _)| (**k).clone())
                .collect();
            for k in keys {
                let _ = self.delete(now, &k, &DeleteOptions::default(), cause, events);
            }
        }
        self.finish_crd_cleanup(now, &crd.metadata.name, cause, events);
        let key = ObjectKey::new(Kind::CustomResourceDefinition, "", &crd.metadata.name);
        Ok(self
            .get(&key)
            .cloned()
            .unwrap_or_else(|| Rc::new(Object::from(crd.clone()))))
    }

    /// Removes a terminating CRD once no object of its kind is left.
    fn finish_crd_cleanup(
        &mut self,
        now: Millis,
        name: &str,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) {
        let key = ObjectKey::new(Kind::CustomResourceDefinition, "", name);
        let Some(crd) = self.get(&key).and_then(|o| o.as_crd()) else {
            return;
        };
        if crd.metadata.deletion_timestamp.is_none() {
            return;
        }
        if let Some(kind) = CustomKind::of(crd) {
            if self.count(Kind::Custom(kind)) > 0 {
                return;
            }
        }
        let mut done = crd.clone();
        done.metadata
            .finalizers
            .retain(|f| f != CRD_CLEANUP_FINALIZER);
        if done.metadata.finalizers.is_empty() {
            if let Some((_, ev)) = self.remove(now, &key, cause) {
                events.push(ev);
            }
        } else {
            let (_, ev) = self.store(now, Object::from(done), WatchEventType::Modified, cause);
            events.push(ev);
        }
    }

    fn bind(
        &mut self,
        now: Millis,
        key: &ObjectKey,
        node: &str,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let Some(old) = self.objects.get(key).cloned() else {
            return Err(ApiError::not_found(Kind::Pod, &key.name));
        };
        let mut obj = (*old).clone();
        let Object::Pod(pod) = &mut obj else {
            return Err(ApiError::not_found(Kind::Pod, &key.name));
        };
        if !pod.spec.node_name.is_empty() {
            return Err(ApiError {
                reason: StatusReason::Conflict,
                message: format!("Operation cannot be fulfilled on pods/binding \"{}\": pod {} is already assigned to node \"{}\"", key.name, key.name, pod.spec.node_name),
            });
        }
        if pod.metadata.deletion_timestamp.is_some() {
            return Err(ApiError {
                reason: StatusReason::Conflict,
                message: format!("Operation cannot be fulfilled on pods/binding \"{}\": pod {} is being deleted, cannot be assigned to a host", key.name, key.name),
            });
        }
        // Binding sets only `spec.nodeName` (a string): a spec that survived a JSON round trip
        // still does.
        let spec_canonical = self.spec_canonical.get(key) == Some(&old.meta().rv());
        pod.spec_mut().node_name = node.into();
        set_condition(
            &mut pod.status.conditions,
            Condition {
                type_: "PodScheduled".into(),
                status: "True".into(),
                last_transition_time: Some(stamp(now)),
                ..Default::default()
            },
        );
        Ok(self.store_same_spec(now, obj, cause, spec_canonical, events))
    }

    /// Stores a write that left the spec as the stored one was (`spec_canonical`: known then
    /// to survive a JSON round trip, which it still does).
    fn store_same_spec(
        &mut self,
        now: Millis,
        obj: Object,
        cause: u64,
        spec_canonical: bool,
        events: &mut Vec<WatchEvent>,
    ) -> Rc<Object> {
        let (stored, ev) = self.store(now, obj, WatchEventType::Modified, cause);
        if spec_canonical {
            self.spec_canonical
                .insert((*ev.key).clone(), stored.meta().rv());
        }
        events.push(ev);
        stored
    }

    /// POST pods/eviction, as `pkg/registry/core/pod/storage/eviction.go` (policy/v1) answers it.
    fn evict(
        &mut self,
        now: Millis,
        key: &ObjectKey,
        opts: &DeleteOptions,
        cause: u64,
        events: &mut Vec<WatchEvent>,
    ) -> ApiResult {
        let Some(pod_obj) = self.objects.get(key).cloned() else {
            return Err(ApiError::not_found(Kind::Pod, &key.name));
        };
        let Some(pod) = pod_obj.as_pod() else {
            return Err(ApiError::not_found(Kind::Pod, &key.name));
        };
        // canIgnorePDB: a pod that is not running, or already terminating, disrupts nothing more.
        let can_ignore_pdb = pod.metadata.deletion_timestamp.is_some()
            || matches!(
                pod.status.phase.as_str(),
                "Pending" | "Succeeded" | "Failed" | ""
            );
        if !can_ignore_pdb {
            // In policy/v1 a nil selector matches nothing and an empty one matches every pod.
            let pdbs: Vec<Rc<Object>> = self
                .list(Kind::PodDisruptionBudget)
                .filter(|o| {
                    o.meta().namespace == key.namespace
                        && o.as_pdb()
                            .and_then(|p| p.spec.selector.as_ref())
                            .is_some_and(|s| s.matches(&pod.metadata.labels))
                })
                .cloned()
                .collect();
            if pdbs.len() > 1 {
                return Err(ApiError {
                    reason: StatusReason::InternalError,
                    message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
                });
            }
            if let Some(pdb_obj) = pdbs.into_iter().next() {
                let pdb = pdb_obj.as_pdb().expect("listed as PDB");
                // An unready pod does not count as healthy: evicting it costs no budget when allowed.
                let unready_allowed = !pod.is_ready()
                    && (pdb.spec.unhealthy_pod_eviction_policy.as_deref() == Some("AlwaysAllow")
                        || (pdb.status.current_healthy >= pdb.status.desired_healthy
                            && pdb.status.desired_healthy > 0));
                if !unready_allowed {
                    // checkAndDecrement. The 429 message is what clients print; Kubernetes adds the
                    // detail ("The disruption budget web-pdb needs 3 healthy pods and has 2
                    // currently" / "... is still being processed by the server.") as a status cause.
                    let too_many = || ApiError {
                        reason: StatusReason::TooManyRequests,
                        message:
                            "Cannot evict pod as it would violate the pod's disruption budget."
                                .into(),
                    };
                    let forbidden = |why: &str| ApiError {
                        reason: StatusReason::Forbidden,
                        message: format!(
                            "poddisruptionbudget.policy \"{}\" is forbidden: {why}",
                            pdb.metadata.name
                        ),
                    };
                    if pdb.status.observed_generation < pdb.metadata.generation {
                        return Err(too_many());
                    }
                    if pdb.status.disruptions_allowed < 0 {
                        return Err(forbidden("pdb disruptions allowed is negative"));
                    }
                    if pdb.status.disrupted_pods.len() > 2000 {
                        return Err(forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller"));
                    }
                    if pdb.status.disruptions_allowed == 0 {
                        return Err(too_many());
                    }
                    let mut updated = pdb.clone();
                    updated.status.disruptions_allowed -= 1;
                    if updated.status.disruptions_allowed == 0 {
                        let observed_generation = updated.status.observed_generation;
                        set_condition(
                            &mut updated.status.conditions,
                            Condition {
                                type_: "DisruptionAllowed".into(),
                                status: "False".into(),
                                reason: Some("InsufficientPods".into()),
                                message: Some(Str::EMPTY),
                                last_transition_time: Some(stamp(now)),
                                observed_generation: Some(observed_generation),
                                ..Default::default()
                            },
                        );
                    }
                    updated
                        .status
                        .disrupted_pods
                        .insert(key.name.to_string(), stamp(now));
                    let (_, ev) =
                        self.store(now, Object::from(updated), WatchEventType::Modified, cause);
                    events.push(ev);
                }
            }
        }
        // addConditionAndDeletePod: mark the pod as a disruption target, then delete it gracefully.
        let mut marked = (*pod_obj).clone();
        let mut opts = opts.clone();
        if let Object::Pod(p) = &mut marked {
            set_condition(
                &mut p.status.conditions,
                Condition {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                    reason: Some("EvictionByEvictionAPI".into()),
                    message: Some("Eviction API: evicting".into()),
                    last_transition_time: Some(stamp(now)),
                    ..Default::default()
                },
            );
        }
        if marked != *pod_obj {
            if let Some(rv) = &opts.precondition_resource_version {
                if *rv != pod_obj.meta().resource_version {
                    return Err(ApiError::conflict(Kind::Pod, &key.name));
                }
            }
            let (stored, ev) = self.store(now, marked, WatchEventType::Modified, cause);
            events.push(ev);
            // The server itself bumped the version the caller's precondition named.
            if opts.precondition_resource_version.is_some() {
                opts.precondition_resource_version =
                    Some(stored.meta().resource_version.to_string());
            }
        }
        self.delete(now, key, &opts, cause, events)
    }

    /// Writes an object directly, bypassing admission: for Events, which the recorder aggregates.
    pub fn put_event(&mut self, now: Millis, mut obj: Object, cause: u64) -> Rc<Object> {
        if obj.meta().uid.is_empty() {
            obj.meta_mut().uid = self.new_uid();
            obj.meta_mut().creation_timestamp = Some(stamp(now));
        }
        let type_ = if self.objects.contains_key(&obj.key()) {
            WatchEventType::Modified
        } else {
            WatchEventType::Added
        };
        self.store(now, obj, type_, cause).0
    }

    /// Removes an Event directly (TTL expiry), without a watch event anyone needs, and returns
    /// it.
    pub fn expire_event(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        if key.kind != Kind::Event {
            return None;
        }
        let (_, old, _) = self.objects.remove_entry(key)?;
        self.count_change(Kind::Event, false);
        self.event_removals += 1;
        Some(old)
    }

    /// Removes the `n` oldest Events (by [`event_age`], ties in key order, as
    /// [`ApiServer::events_aged_before`] lists them) as [`ApiServer::expire_event`] would, and
    /// returns them: the cap takes hundreds at once from the front of the age order.
    pub fn expire_oldest_events(&mut self, n: usize) -> Vec<Rc<Object>> {
        let objects = &self.objects;
        let oldest = self
            .events_by_age
            .take_oldest(n, |k| stored_event_age(objects, k));
        let mut expired = Vec::with_capacity(oldest.len());
        for shared in oldest {
            if let Some((_, old, _)) = self.objects.remove_entry(&shared) {
                self.count_change(Kind::Event, false);
                self.event_removals += 1;
                expired.push(old);
            }
        }
        expired
    }

    /// Stored Events aged before `before` (all of them for `Millis::MAX`), oldest first by
    /// [`event_age`] (ties in key order), with their ages.
    pub fn events_aged_before(&self, before: Millis) -> Vec<(Millis, SharedKey)> {
        let objects = &self.objects;
        self.events_by_age
            .before(before, |k| stored_event_age(objects, k))
    }
}

/// An Event's name as client-go makes it: its object's name and a 16-digit hexadecimal suffix,
/// `{base}.{suffix:016x}`.
pub fn event_name(base: &str, suffix: u64) -> Str {
    Str::concat(&[base, ".", hex_into(&mut [0u8; 16], suffix)])
}

/// What the event recorder reads from the store (defined here so the API server, below the
/// recorder, needs nothing from it).
pub trait EventStore {
    /// The stored Event `name` in `namespace`.
    fn event(&self, namespace: &str, name: &str) -> Option<&Event>;

    /// [`EventStore::event`] given the shared strings the recorder holds, which a store can
    /// key its lookup with as they are (copying both into a key was an allocation each).
    fn event_named(&self, namespace: &Str, name: &Str) -> Option<&Event> {
        self.event(namespace, name)
    }

    /// The first `v >= start` for which no Event named `{base}.{v:016x}` exists in `namespace`
    /// (client-go names an Event after its object and the time, bumping the suffix on a clash),
    /// and that name. Each candidate is one hash lookup in the store: the recorder's hint starts
    /// at the last name it took, so a burst of Events for one object tries one or two (a walk of
    /// the store's tree from the first candidate cost a B-tree descent per Event).
    fn first_free_suffix(&self, namespace: &Str, base: &str, start: u64) -> (u64, Str) {
        let mut v = start;
        loop {
            let name = event_name(base, v);
            if self.event_named(namespace, &name).is_none() {
                return (v, name);
            }
            v += 1;
        }
    }

    /// A count that changes whenever an Event is removed, freeing its name.
    fn event_removals(&self) -> u64;
}

impl EventStore for ApiServer {
    fn event(&self, namespace: &str, name: &str) -> Option<&Event> {
        self.event_named(&namespace.into(), &name.into())
    }

    fn event_named(&self, namespace: &Str, name: &Str) -> Option<&Event> {
        self.get(&ObjectKey::from_parts(
            Kind::Event,
            namespace.clone(),
            name.clone(),
        ))
        .and_then(|o| o.as_event())
    }

    fn event_removals(&self) -> u64 {
        self.event_removals
    }
}

/// Kubernetes' `Invalid` status for `obj` with `errs`, unless there are none.
fn invalid_unless_empty(obj: &Object, errs: Vec<validation::FieldError>) -> Result<(), ApiError> {
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError {
            reason: StatusReason::Invalid,
            message: validation::invalid_status_message(obj.kind(), &obj.meta().name, &errs),
        })
    }
}

/// The namespaces NamespaceLifecycle admission refuses to delete.
const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-public", "kube-system"];

/// A Namespace whose `spec.finalizers` still hold it: only `/finalize` can clear them.
fn has_namespace_finalizers(obj: &Object) -> bool {
    obj.as_namespace()
        .is_some_and(|n| !n.spec.finalizers.is_empty())
}

/// The built-in kinds whose spec changes move `metadata.generation` (a custom kind's generation
/// is its CRD's business: see `customresource::admit`).
fn has_generation(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Deployment
            | Kind::ReplicaSet
            | Kind::PodDisruptionBudget
            | Kind::CustomResourceDefinition
    )
}

fn is_graceful_pod(obj: &Object) -> bool {
    obj.as_pod().is_some_and(|p| {
        p.metadata.deletion_grace_period_seconds.unwrap_or(0) > 0 && !p.spec.node_name.is_empty()
    })
}

/// A time the API server stamps on an object (creation, deletion, a condition it sets), as the
/// store keeps it: `metav1.Time` is serialised in whole seconds, so a watcher sees on the ADDED
/// event the same creationTimestamp every later MODIFIED carries (with the clock's milliseconds,
/// the first status write moved a pod among its siblings in any list ordered by age).
fn stamp(ms: Millis) -> Time {
    Time(ms - ms % 1000)
}

/// Whether a write changed the spec (and so bumps `generation`): the specs compared as the API
/// serves them. Equal typed specs serialise alike, so only differing ones are compared as JSON.
fn spec_changed(old: &Object, new: &Object) -> bool {
    let typed_equal = match (old, new) {
        (Object::Deployment(a), Object::Deployment(b)) => a.spec == b.spec,
        (Object::ReplicaSet(a), Object::ReplicaSet(b)) => a.spec == b.spec,
        (Object::PodDisruptionBudget(a), Object::PodDisruptionBudget(b)) => a.spec == b.spec,
        _ => false,
    };
    !typed_equal && old.spec_json() != new.spec_json()
}

/// The control plane's address, where the `kubernetes` Service leads: not one of the simulated
/// nodes (the control plane runs on no node the playground shows, as in a managed cluster), and
/// the address kind gives its control-plane container, next to the nodes' 172.18.0.3 and up.
pub const API_SERVER_ADDRESS: &str = "172.18.0.2";

/// The objects the API server's bootstrap controllers keep: the system namespaces (`default`,
/// `kube-node-lease`, `kube-public`, `kube-system`), then in `default` the `kubernetes` Service
/// (the first address of the service CIDR, 443 to the API server's 6443) and, as its endpoint
/// reconciler writes them, the EndpointSlice naming the API server. The Service has no selector,
/// so the EndpointSlice controller leaves both alone.
pub fn bootstrap_objects() -> Vec<Object> {
    let meta = |labels: &[(&str, &str)]| ObjectMeta {
        name: "kubernetes".into(),
        namespace: "default".into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    };
    let service = Service {
        metadata: meta(&[("component", "apiserver"), ("provider", "kubernetes")]),
        spec: ServiceSpec {
            type_: Some("ClusterIP".into()),
            cluster_ip: Some(std::net::Ipv4Addr::from(SERVICE_CIDR_BASE + 1).to_string()),
            ports: vec![ServicePort {
                name: Some("https".into()),
                port: 443,
                target_port: Some(IntOrString::Int(6443)),
                protocol: Some("TCP".into()),
                ..Default::default()
            }],
            ..Default::default()
        },
        status: None,
    };
    let slice = EndpointSlice {
        metadata: meta(&[("kubernetes.io/service-name", "kubernetes")]),
        address_type: "IPv4".into(),
        endpoints: vec![Endpoint {
            addresses: vec![API_SERVER_ADDRESS.into()],
            conditions: EndpointConditions {
                ready: Some(true),
                ..Default::default()
            },
            ..Default::default()
        }],
        ports: Some(Box::new(
            serde_json::json!([{"name": "https", "port": 6443, "protocol": "TCP"}]),
        )),
    };
    let namespaces = INITIAL_NAMESPACES.iter().map(|name| {
        Object::from(Namespace {
            metadata: ObjectMeta {
                name: (*name).into(),
                ..Default::default()
            },
            ..Default::default()
        })
    });
    namespaces
        .chain([Object::from(service), Object::from(slice)])
        .collect()
}

/// The service registry's `patchAllocatedValues` for the cluster IP: an update that leaves it
/// out (a `replace` of a manifest written without one) keeps the one allocated, as long as
/// neither version is an ExternalName, which holds none.
fn keep_cluster_ip(svc: &mut Service, before: &Service) {
    let external = |s: &Service| s.spec.type_.as_deref() == Some("ExternalName");
    if external(svc) || external(before) {
        return;
    }
    if svc.spec.cluster_ip.is_none() {
        svc.spec.cluster_ip = before.spec.cluster_ip.clone();
        if svc.spec.cluster_ips.is_none() {
            svc.spec.cluster_ips = before.spec.cluster_ips.clone();
        }
    }
}

/// Where `ip` falls in the service CIDR, if it is one of its allocatable addresses (not the
/// network address, not the broadcast address).
fn service_cidr_offset(ip: u32) -> Option<u32> {
    let offset = ip.checked_sub(SERVICE_CIDR_BASE)?;
    (1..SERVICE_CIDR_SIZE - 1)
        .contains(&offset)
        .then_some(offset)
}

/// The service strategy's `dropTypeDependentFields` for node ports: a Service changed to a type
/// without them (ClusterIP, ExternalName) loses the node ports it still carries unchanged from
/// before, rather than failing validation for them; ports the update itself sets stay, and fail.
fn drop_node_ports_left_by_a_type_change(svc: &mut Service, before: &Service) {
    let holds = |s: &Service| matches!(s.spec.type_.as_deref(), Some("NodePort" | "LoadBalancer"));
    if holds(svc) || !holds(before) {
        return;
    }
    let unchanged = svc.spec.ports.iter().all(|p| {
        p.node_port.unwrap_or(0) == 0
            || before
                .spec
                .ports
                .iter()
                .any(|b| b.name == p.name && b.node_port == p.node_port)
    });
    if unchanged {
        for p in &mut svc.spec.ports {
            p.node_port = None;
        }
    }
}

/// Main-resource writes cannot change what the server owns: uid, timestamps, and status where a
/// status subresource exists.
fn keep_system_fields(old: &Object, mut new: Object, old_spec_canonical: bool) -> Object {
    // The namespace strategy's PrepareForUpdate: only `/finalize` writes `spec.finalizers`.
    if let (Object::Namespace(o), Object::Namespace(n)) = (old, &mut new) {
        n.spec.finalizers = o.spec.finalizers.clone();
    }
    let om = old.meta();
    let nm = new.meta_mut();
    nm.uid = om.uid.clone();
    nm.creation_timestamp = om.creation_timestamp;
    nm.deletion_timestamp = om.deletion_timestamp;
    nm.deletion_grace_period_seconds = om.deletion_grace_period_seconds;
    nm.generation = om.generation;
    nm.resource_version = om.resource_version.clone();
    nm.generate_name = if nm.generate_name.is_empty() {
        om.generate_name.clone()
    } else {
        nm.generate_name.clone()
    };
    if old.kind().has_status_subresource() {
        if let Some(kept) = canon::with_old_status(old, &new, old_spec_canonical) {
            debug_assert_eq!(Some(&kept), json_keep_status(old, &new).as_ref());
            return kept;
        }
        if let Some(o) = json_keep_status(old, &new) {
            return o;
        }
    }
    new
}

/// [`keep_system_fields`]' status step through JSON, as the server stores it: `new` with `old`'s
/// status, read back from its JSON form (None when that does not read back).
fn json_keep_status(old: &Object, new: &Object) -> Option<Object> {
    let status = old.status_json();
    let mut doc = new.to_json();
    if let Json::Object(m) = &mut doc {
        if status.is_null() {
            m.remove("status");
        } else {
            m.insert("status".into(), status);
        }
    }
    Object::from_json(old.kind(), doc).ok()
}

/// A status write changes only status (and the resourceVersion the server assigns). Returns the
/// object to store and whether its spec is known to survive a JSON round trip.
fn merge_status_only(old: &Object, new: &Object, old_spec_canonical: bool) -> (Object, bool) {
    if !old.kind().has_status_subresource() {
        let mut o = new.clone();
        *o.meta_mut() = old.meta().clone();
        return (o, false);
    }
    let (mut merged, canonical) = match canon::with_new_status(old, new, old_spec_canonical) {
        Some(m) => {
            debug_assert_eq!(Some(&m), json_merge_status(old, new).as_ref());
            (m, true)
        }
        None => match json_merge_status(old, new) {
            Some(m) => (m, true),
            None => (old.clone(), false),
        },
    };
    // deploymentStatusStrategy resets only spec and labels: the Deployment controller records
    // `deployment.kubernetes.io/revision` through the status subresource.
    if let (Object::Deployment(m), Object::Deployment(n)) = (&mut merged, new) {
        m.metadata.annotations = n.metadata.annotations.clone();
    }
    (merged, canonical)
}

/// [`merge_status_only`] through JSON: `old` with `new`'s status, read back from its JSON form
/// (None when that does not read back).
fn json_merge_status(old: &Object, new: &Object) -> Option<Object> {
    let mut doc = old.to_json();
    if let Json::Object(m) = &mut doc {
        m.insert("status".into(), new.status_json());
    }
    Object::from_json(old.kind(), doc).ok()
}

/// The API server keeps objects as JSON, and a JSON round trip changes a value in exactly two
/// ways: times lose their milliseconds (`metav1.Time` has second precision) and an explicit
/// `null` in an opaque field reads back as absent. These functions apply that to the parts of an
/// object a write combines, without serialising them, for the kinds written most often; every
/// other case goes through JSON. `None` means "take the JSON path": a time past the year 9999 has
/// no RFC 3339 form that reads back. Debug builds check each result against the JSON path.
mod canon {
    use serde::{de::DeserializeOwned, Serialize};
    use serde_json::Value as Json;

    use crate::sim::api::types::*;

    pub fn time(t: &mut Option<Time>) -> Option<()> {
        if let Some(x) = t {
            if x.0 > LAST_FOUR_DIGIT_YEAR {
                return None;
            }
            x.0 -= x.0 % 1000;
        }
        Some(())
    }

    fn json(j: &mut Option<Box<Json>>) {
        if matches!(j.as_deref(), Some(Json::Null)) {
            *j = None;
        }
    }

    fn meta(m: &mut ObjectMeta) -> Option<()> {
        time(&mut m.creation_timestamp)?;
        time(&mut m.deletion_timestamp)?;
        json(&mut m.managed_fields);
        Some(())
    }

    fn conditions(cs: &mut [Condition]) -> Option<()> {
        for c in cs {
            time(&mut c.last_transition_time)?;
            time(&mut c.last_update_time)?;
            time(&mut c.last_heartbeat_time)?;
            time(&mut c.last_probe_time)?;
        }
        Some(())
    }

    fn container_state(s: &mut ContainerState) -> Option<()> {
        if let Some(r) = &mut s.running {
            time(&mut r.started_at)?;
        }
        if let Some(t) = &mut s.terminated {
            time(&mut t.started_at)?;
            time(&mut t.finished_at)?;
        }
        Some(())
    }

    fn pod_status(s: &mut PodStatus) -> Option<()> {
        conditions(&mut s.conditions)?;
        time(&mut s.start_time)?;
        for c in s
            .container_statuses
            .iter_mut()
            .chain(s.init_container_statuses.iter_mut())
        {
            container_state(&mut c.state)?;
            if let Some(l) = &mut c.last_state {
                container_state(l)?;
            }
        }
        Some(())
    }

    fn node_status(s: &mut NodeStatus) -> Option<()> {
        conditions(&mut s.conditions)?;
        json(&mut s.addresses);
        json(&mut s.node_info);
        json(&mut s.images);
        Some(())
    }

    /// A part through JSON and back, by the round trip itself.
    fn round_trip<T: Serialize + DeserializeOwned>(x: &T) -> Option<T> {
        crate::sim::api::strict::decode_as(&serde_json::to_value(x).ok()?, &Default::default()).ok()
    }

    /// Whether `x` reads back from its JSON form as it is.
    pub fn survives_round_trip<T: Serialize + DeserializeOwned + PartialEq>(x: &T) -> bool {
        round_trip(x).is_some_and(|back| back == *x)
    }

    /// `spec` as a JSON round trip leaves it: as it is when known to survive one.
    fn spec<T: Clone + Serialize + DeserializeOwned>(s: &T, canonical: bool) -> Option<T> {
        if canonical {
            Some(s.clone())
        } else {
            round_trip(s)
        }
    }

    /// `old` with `new`'s status, as [`super::merge_status_only`] stores it.
    pub fn with_new_status(old: &Object, new: &Object, spec_canonical: bool) -> Option<Object> {
        match (old, new) {
            (Object::Pod(o), Object::Pod(n)) => {
                let mut metadata = o.metadata.clone();
                meta(&mut metadata)?;
                let mut status = n.status.clone();
                pod_status(&mut status)?;
                let spec = spec(&o.spec, spec_canonical)?;
                Some(Object::from(Pod {
                    metadata,
                    spec,
                    status,
                }))
            }
            (Object::ReplicaSet(o), Object::ReplicaSet(n)) => {
                let mut metadata = o.metadata.clone();
                meta(&mut metadata)?;
                let mut status = n.status.clone();
                conditions(&mut status.conditions)?;
                let spec = spec(&o.spec, spec_canonical)?;
                Some(Object::from(ReplicaSet {
                    metadata,
                    spec,
                    status,
                }))
            }
            (Object::Deployment(o), Object::Deployment(n)) => {
                let mut metadata = o.metadata.clone();
                meta(&mut metadata)?;
                let mut status = n.status.clone();
                conditions(&mut status.conditions)?;
                let spec = spec(&o.spec, spec_canonical)?;
                Some(Object::from(Deployment {
                    metadata,
                    spec,
                    status,
                }))
            }
            (Object::Node(o), Object::Node(n)) => {
                let mut metadata = o.metadata.clone();
                meta(&mut metadata)?;
                let mut status = n.status.clone();
                node_status(&mut status)?;
                let spec = spec(&o.spec, spec_canonical)?;
                Some(Object::from(Node {
                    metadata,
                    spec,
                    status,
                }))
            }
            _ => None,
        }
    }

    /// `new` with `old`'s status, as [`super::keep_system_fields`] stores it. `new`'s spec is
    /// taken as it is when it equals `old`'s and that one is known to survive a round trip.
    pub fn with_old_status(old: &Object, new: &Object, old_spec_canonical: bool) -> Option<Object> {
        match (old, new) {
            (Object::Pod(o), Object::Pod(n)) => {
                let mut metadata = n.metadata.clone();
                meta(&mut metadata)?;
                let mut status = o.status.clone();
                pod_status(&mut status)?;
                let spec = spec(&n.spec, old_spec_canonical && n.spec == o.spec)?;
                Some(Object::from(Pod {
                    metadata,
                    spec,
                    status,
                }))
            }
            (Object::ReplicaSet(o), Object::ReplicaSet(n)) => {
                let mut metadata = n.metadata.clone();
                meta(&mut metadata)?;
                let mut status = o.status.clone();
                conditions(&mut status.conditions)?;
                let spec = spec(&n.spec, old_spec_canonical && n.spec == o.spec)?;
                Some(Object::from(ReplicaSet {
                    metadata,
                    spec,
                    status,
                }))
            }
            (Object::Deployment(o), Object::Deployment(n)) => {
                let mut metadata = n.metadata.clone();
                meta(&mut metadata)?;
                let mut status = o.status.clone();
                conditions(&mut status.conditions)?;
                let spec = spec(&n.spec, old_spec_canonical && n.spec == o.spec)?;
                Some(Object::from(Deployment {
                    metadata,
                    spec,
                    status,
                }))
            }
            (Object::Node(o), Object::Node(n)) => {
                let mut metadata = n.metadata.clone();
                meta(&mut metadata)?;
                let mut status = o.status.clone();
                node_status(&mut status)?;
                let spec = spec(&n.spec, old_spec_canonical && n.spec == o.spec)?;
                Some(Object::from(Node {
                    metadata,
                    spec,
                    status,
                }))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Event named `name` in `default`, last seen at `last_seen`.
    fn event(name: &str, last_seen: Option<Millis>) -> Object {
        Object::from(Event {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                ..Default::default()
            },
            last_timestamp: last_seen.map(Time),
            ..Default::default()
        })
    }

    /// An API server holding the `default` namespace, so a pod can be created in it.
    fn with_default_namespace() -> ApiServer {
        let mut api = ApiServer::new(1);
        let ns = bootstrap_objects().remove(0);
        assert_eq!(ns.key().name, "default");
        api.handle(0, &ApiRequest::Create(ns), 0)
            .result
            .expect("created");
        api
    }

    #[test]
    fn an_event_names_its_involved_object_as_the_objects_watch_events_do() {
        let mut api = with_default_namespace();
        let done = api.handle(0, &ApiRequest::Create(pod_with_times(0)), 0);
        done.result.expect("created");
        let ev = &done.events[0];
        let watched = api.trace_name(&ev.key, ev.slot);
        let named = api.trace_name_of(&ev.object.key());
        assert_eq!(named, "Pod/default/p");
        assert!(Str::ptr_eq(&named, &watched), "the one name is shared");
        // An object the store no longer holds (a pod deleted before its Event) is written out.
        let gone = ObjectKey::shared(Kind::Pod, &"default".into(), &"gone".into());
        assert_eq!(api.trace_name_of(&gone), "Pod/default/gone");
    }

    fn pod_with_times(ms: Millis) -> Object {
        let mut pod = Pod::default();
        pod.metadata.name = "p".into();
        pod.metadata.namespace = "default".into();
        pod.metadata.uid = "u".into();
        pod.metadata.creation_timestamp = Some(Time(ms));
        pod.metadata.managed_fields = Some(Box::new(Json::Null));
        pod.spec_mut().containers.push(Container {
            name: "app".into(),
            image: "nginx".into(),
            env: Some(Box::new(Json::Null)),
            ..Default::default()
        });
        pod.status.start_time = Some(Time(ms + 1));
        pod.status.conditions.push(Condition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(ms + 2)),
            ..Default::default()
        });
        pod.status.container_statuses.push(ContainerStatus {
            name: "app".into(),
            state: ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(Time(ms + 3)),
                }),
                ..Default::default()
            },
            ..Default::default()
        });
        Object::from(pod)
    }

    #[test]
    fn the_last_four_digit_year_is_the_last_time_that_reads_back() {
        let last = Time(LAST_FOUR_DIGIT_YEAR);
        assert_eq!(last.to_rfc3339(), "9999-12-31T23:59:59Z");
        assert_eq!(
            Time::parse_rfc3339(&last.to_rfc3339()),
            Some(Time(LAST_FOUR_DIGIT_YEAR - 999))
        );
        assert!(Time(LAST_FOUR_DIGIT_YEAR + 1)
            .to_rfc3339()
            .starts_with("10000-"));
    }

    #[test]
    fn typed_status_merges_store_what_the_json_round_trip_stores() {
        for ms in [0, 1_234, 59_999, 3_600_000_001] {
            let old = pod_with_times(ms);
            let new = pod_with_times(ms + 777);
            for canonical_spec in [false, true] {
                let old = if canonical_spec {
                    json_merge_status(&old, &old).expect("reads back")
                } else {
                    old.clone()
                };
                assert_eq!(
                    canon::with_new_status(&old, &new, canonical_spec),
                    json_merge_status(&old, &new),
                    "status write at {ms} ms"
                );
                assert_eq!(
                    canon::with_old_status(&old, &new, canonical_spec),
                    json_keep_status(&old, &new),
                    "main-resource write at {ms} ms"
                );
            }
        }
    }

    #[test]
    fn a_time_past_the_year_9999_takes_the_json_path() {
        let mut far = pod_with_times(1_000);
        far.meta_mut().deletion_timestamp = Some(Time(LAST_FOUR_DIGIT_YEAR + 1));
        let new = pod_with_times(2_000);
        assert_eq!(canon::with_new_status(&far, &new, false), None);
        // The JSON path cannot read such a time back either: the stored object stays as it was.
        assert_eq!(json_merge_status(&far, &new), None);
        assert_eq!(merge_status_only(&far, &new, false), (far.clone(), false));
    }

    #[test]
    fn a_status_write_keeps_the_spec_known_to_survive_a_round_trip() {
        let mut api = with_default_namespace();
        let created = api
            .handle(5, &ApiRequest::Create(pod_with_times(0)), 1)
            .result
            .expect("created");
        let key = created.key();
        let mut status = (*created).clone();
        status.as_pod_mut().expect("a pod").status.phase = "Running".into();
        let first = api
            .handle(1_500, &ApiRequest::UpdateStatus(status.clone()), 2)
            .result
            .expect("written");
        // The round trip dropped the null env (the creation time was whole seconds already).
        let pod = first.as_pod().expect("a pod");
        assert_eq!(pod.spec.containers[0].env, None);
        assert_eq!(pod.metadata.creation_timestamp, Some(Time(0)));
        assert_eq!(api.spec_canonical.get(&key), Some(&first.meta().rv()));
        let mut again = (*first).clone();
        again.as_pod_mut().expect("a pod").status.phase = "Succeeded".into();
        let second = api
            .handle(2_500, &ApiRequest::UpdateStatus(again), 3)
            .result
            .expect("written");
        assert_eq!(api.spec_canonical.get(&key), Some(&second.meta().rv()));
        api.handle(
            3_000,
            &ApiRequest::Delete {
                key: key.clone(),
                options: DeleteOptions {
                    grace_period_seconds: Some(0),
                    ..Default::default()
                },
            },
            4,
        );
        assert!(!api.spec_canonical.contains_key(&key));
    }

    #[test]
    fn a_pod_created_with_a_spec_that_survives_a_round_trip_is_known_so_from_its_creation() {
        let mut api = with_default_namespace();
        let plain = |name: &str| {
            let mut p = Pod::default();
            p.metadata.name = name.into();
            p.metadata.namespace = "default".into();
            p.spec_mut().containers.push(Container {
                name: "app".into(),
                image: "nginx:1.27".into(),
                ..Default::default()
            });
            Object::from(p)
        };
        let mut create = |obj: Object, cause: u64| {
            let stored = api
                .handle(5, &ApiRequest::Create(obj), cause)
                .result
                .expect("created");
            (stored.key(), stored.meta().rv())
        };
        let (a, a_rv) = create(plain("a"), 1);
        let (b, b_rv) = create(plain("b"), 2);
        // The null env does not read back (see the test above): not known to survive.
        let (c, _) = create(pod_with_times(0), 3);
        assert_eq!(api.spec_canonical.get(&a), Some(&a_rv));
        assert_eq!(api.spec_canonical.get(&b), Some(&b_rv));
        assert_eq!(api.spec_canonical.get(&c), None);
        let first = api.get(&a).and_then(|o| o.as_pod()).expect("stored");
        let known = api
            .canonical_pod_spec
            .as_ref()
            .expect("a spec was found to");
        assert!(
            Rc::ptr_eq(known, &first.spec),
            "b's equal spec was compared, not round-tripped and kept instead"
        );
    }

    #[test]
    fn pods_sent_with_equal_specs_share_one_defaulted_spec_and_others_get_their_own() {
        let mut api = with_default_namespace();
        let pod = |name: &str, restart: Option<&str>| {
            let mut p = Pod::default();
            p.metadata.name = name.into();
            p.spec_mut().restart_policy = restart.map(Str::from);
            p.spec_mut().containers.push(Container {
                name: "app".into(),
                image: "nginx:1.27".into(),
                ..Default::default()
            });
            Object::from(p)
        };
        let mut create = |obj: Object| {
            let stored = api
                .handle(5, &ApiRequest::Create(obj), 1)
                .result
                .expect("created");
            stored.as_pod().expect("a pod").clone()
        };
        let a = create(pod("a", None));
        let b = create(pod("b", None));
        assert_eq!(b.metadata.namespace, "default");
        assert_eq!(a.spec.restart_policy.as_deref(), Some("Always"));
        assert!(
            Rc::ptr_eq(&a.spec, &b.spec),
            "b's spec is a's defaulted one"
        );
        let c = create(pod("c", Some("Never")));
        assert_eq!(c.spec.restart_policy.as_deref(), Some("Never"));
        assert_eq!(c.spec.dns_policy.as_deref(), Some("ClusterFirst"));
    }

    #[test]
    fn a_pod_whose_spec_differs_from_the_last_valid_one_is_validated_again() {
        let mut api = with_default_namespace();
        let pod = |name: &str, container: &str| {
            let mut p = Pod::default();
            p.metadata.name = name.into();
            p.metadata.namespace = "default".into();
            p.spec_mut().containers.push(Container {
                name: container.into(),
                image: "nginx:1.27".into(),
                ..Default::default()
            });
            Object::from(p)
        };
        let mut create = |obj: Object| api.handle(5, &ApiRequest::Create(obj), 1).result;
        assert!(create(pod("a", "app")).is_ok());
        assert!(
            create(pod("b", "app")).is_ok(),
            "an equal spec is valid too"
        );
        let refused = create(pod("c", "App_1")).expect_err("an invalid container name");
        assert_eq!(refused.reason, StatusReason::Invalid);
        assert!(
            refused.message.starts_with(
                "Pod \"c\" is invalid: spec.containers[0].name: Invalid value: \"App_1\": a lowercase RFC 1123 label must consist of"
            ),
            "{}",
            refused.message
        );
        assert!(create(pod("d", "app")).is_ok());
    }

    #[test]
    fn a_bound_pod_deleted_gracefully_keeps_its_spec_known_to_survive_a_round_trip() {
        let mut api = with_default_namespace();
        let mut p = Pod::default();
        p.metadata.name = "a".into();
        p.metadata.namespace = "default".into();
        p.spec_mut().containers.push(Container {
            name: "app".into(),
            image: "nginx:1.27".into(),
            ..Default::default()
        });
        let key = api
            .handle(1_000, &ApiRequest::Create(Object::from(p)), 1)
            .result
            .expect("created")
            .key();
        let bind = ApiRequest::Bind {
            key: key.clone(),
            node: "node-1".into(),
        };
        let bound = api.handle(2_000, &bind, 2).result.expect("bound");
        assert_eq!(api.spec_canonical.get(&key), Some(&bound.meta().rv()));
        let delete = ApiRequest::Delete {
            key: key.clone(),
            options: DeleteOptions::default(),
        };
        let terminating = api.handle(3_000, &delete, 3).result.expect("deleting");
        assert!(
            terminating.meta().deletion_timestamp.is_some(),
            "a bound pod terminates gracefully"
        );
        assert_eq!(
            api.spec_canonical.get(&key),
            Some(&terminating.meta().rv()),
            "the delete wrote metadata only"
        );
    }

    #[test]
    fn the_times_the_server_stamps_are_whole_seconds_from_the_first_write_on() {
        let mut api = with_default_namespace();
        let mut pod = pod_with_times(0);
        pod.meta_mut().creation_timestamp = None;
        let created = api.handle(61_234, &ApiRequest::Create(pod), 1);
        let key = created.result.expect("created").key();
        let added = created.events[0].object.as_pod().expect("a pod").clone();
        assert_eq!(added.metadata.creation_timestamp, Some(Time(61_000)));
        let bound = api
            .handle(
                62_345,
                &ApiRequest::Bind {
                    key: key.clone(),
                    node: "node-1".into(),
                },
                2,
            )
            .result
            .expect("bound");
        let scheduled = bound.as_pod().expect("a pod").status.conditions.iter();
        let scheduled = scheduled
            .filter(|c| c.type_ == "PodScheduled")
            .map(|c| c.last_transition_time)
            .collect::<Vec<_>>();
        assert_eq!(scheduled, vec![Some(Time(62_000))]);
        let deleting = api
            .handle(
                63_456,
                &ApiRequest::Delete {
                    key: key.clone(),
                    options: DeleteOptions {
                        grace_period_seconds: Some(30),
                        ..Default::default()
                    },
                },
                3,
            )
            .result
            .expect("marked for deletion");
        assert_eq!(deleting.meta().deletion_timestamp, Some(Time(93_000)));
        // A later write (a JSON round trip in Kubernetes) reads every stamp back unchanged, so a
        // list ordered by age never reorders a pod when its status changes.
        let mut status = (*deleting).clone();
        status.as_pod_mut().expect("a pod").status.phase = "Running".into();
        let written = api
            .handle(64_000, &ApiRequest::UpdateStatus(status), 4)
            .result
            .expect("written");
        assert_eq!(written.meta().creation_timestamp, Some(Time(61_000)));
        assert_eq!(written.meta().deletion_timestamp, Some(Time(93_000)));
    }

    #[test]
    fn clashing_event_names_take_the_next_free_suffix_in_one_walk() {
        let mut api = ApiServer::new(1);
        for v in [10u64, 11, 13] {
            api.put_event(0, event(&format!("web.{v:016x}"), None), 0);
        }
        // A name between two candidates (another object's event) does not stop the walk.
        api.put_event(0, event(&format!("web.{:016x}x", 11), None), 0);
        assert_eq!(api.first_free_suffix(&"default".into(), "web", 10).0, 12);
        assert_eq!(api.first_free_suffix(&"default".into(), "web", 13).0, 14);
        assert_eq!(api.first_free_suffix(&"default".into(), "web", 9).0, 9);
        assert_eq!(api.first_free_suffix(&"other".into(), "web", 10).0, 10);
    }

    #[test]
    fn the_oldest_events_expire_first_and_free_their_names() {
        let mut api = ApiServer::new(1);
        api.put_event(5_000, event("b", Some(5_000)), 0);
        api.put_event(3_000, event("c", Some(3_000)), 0);
        api.put_event(4_000, event("a", Some(6_000)), 0);
        let removals = api.event_removals();
        let expired: Vec<String> = api
            .expire_oldest_events(2)
            .iter()
            .map(|o| o.meta().name.to_string())
            .collect();
        assert_eq!(expired, ["c", "b"]);
        assert_eq!(api.count(Kind::Event), 1);
        assert_eq!(api.event_removals(), removals + 2);
        assert_eq!(api.event("default", "c"), None);
        let left: Vec<String> = api
            .events_aged_before(Millis::MAX)
            .iter()
            .map(|(_, k)| k.name.to_string())
            .collect();
        assert_eq!(left, ["a"]);
        // Asking for more than there are takes what there is.
        assert_eq!(api.expire_oldest_events(5).len(), 1);
        assert_eq!(api.count(Kind::Event), 0);
    }

    #[test]
    fn events_are_listed_oldest_first_and_the_order_follows_updates_and_removals() {
        let mut api = ApiServer::new(1);
        let order = |api: &ApiServer| -> Vec<(Millis, String)> {
            api.events_aged_before(Millis::MAX)
                .into_iter()
                .map(|(t, k)| (t, k.name.to_string()))
                .collect()
        };
        api.put_event(5_000, event("b", Some(5_000)), 0);
        api.put_event(3_000, event("c", Some(3_000)), 0);
        api.put_event(4_000, event("a", Some(5_000)), 0);
        // Without a lastTimestamp, its creation (whole seconds) is how old it is.
        api.put_event(7_400, event("d", None), 0);
        assert_eq!(
            order(&api),
            [(3_000, "c"), (5_000, "a"), (5_000, "b"), (7_000, "d")].map(|(t, n)| (t, n.into()))
        );
        // Seen again (the recorder bumps its count): it moves to its new place, once.
        let mut seen_again = (**api
            .get(&ObjectKey::new(Kind::Event, "default", "c"))
            .unwrap())
        .clone();
        if let Object::Event(e) = &mut seen_again {
            e.last_timestamp = Some(Time(9_000));
        }
        api.put_event(9_000, seen_again, 0);
        api.expire_event(&ObjectKey::new(Kind::Event, "default", "a"));
        let deleted = api.handle(
            9_000,
            &ApiRequest::Delete {
                key: ObjectKey::new(Kind::Event, "default", "d"),
                options: DeleteOptions::default(),
            },
            0,
        );
        assert!(deleted.result.is_ok());
        assert_eq!(
            order(&api),
            [(5_000, "b"), (9_000, "c")].map(|(t, n)| (t, n.into()))
        );
    }

    #[test]
    fn compaction_ends_watches_at_once_and_frees_the_entries_a_few_per_write() {
        let mut api = ApiServer::new(1);
        for i in 0..100 {
            api.put_event(0, event(&format!("old-{i}"), None), 0);
        }
        let newest_old_rv = api.resource_version();
        api.compact(WATCH_HISTORY_WINDOW + 1);
        assert_eq!(api.history_len(), 0);
        assert!(
            api.events_since(newest_old_rv - 1).is_err(),
            "410 Gone at once"
        );
        assert_eq!(api.retired.len(), 100, "kept for later freeing");
        for i in 0..10 {
            api.put_event(
                WATCH_HISTORY_WINDOW + 1,
                event(&format!("new-{i}"), None),
                0,
            );
        }
        assert_eq!(api.retired.len(), 100 - 10 * RETIRED_DROPS_PER_WRITE);
        assert_eq!(api.history_len(), 10);
        assert!(api.events_since(newest_old_rv).is_ok());
    }
}
