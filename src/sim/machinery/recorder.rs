//! The event recorder: turns components' [`EventRecord`]s into core/v1 Event objects, with
//! client-go's EventCorrelator de-duplication and similar-event aggregation.

use std::collections::VecDeque;

use super::controller::{EventRecord, DISRUPTION_CONTROLLER, DISRUPTION_EVENT_SOURCE};
pub use crate::sim::api::apiserver::EventStore;
use crate::sim::api::types::{
    Event, EventSource, Kind, Millis, ObjectKey, ObjectMeta, ObjectReference, Str, Time,
    EPOCH_UNIX_SECONDS,
};
use crate::vec_map::{HashedSlotMap, LookupSlots};

/// Events older than this are removed (`--event-ttl`, 1 h).
pub const EVENT_TTL: Millis = 3_600_000;
/// The most Events the simulated cluster keeps. A real cluster keeps every Event for
/// [`EVENT_TTL`] however many there are (they live in etcd); a browser tab cannot: a 10,000-pod
/// rollout records about 70,000 in a minute. Past this count the oldest (by last time seen)
/// expire early, [`EVENT_EXPIRY_BATCH`] at a time; a lesson-sized cluster holds a few hundred.
pub const MAX_EVENTS: usize = 5_000;
/// How many Events expire early in one go once [`MAX_EVENTS`] is passed (one pass over the
/// recorder's memory per batch, not per Event).
pub const EVENT_EXPIRY_BATCH: usize = 500;
/// More than this many events with one reason and different messages are aggregated.
const AGGREGATE_MAX_EVENTS: usize = 10;
/// The window for similar-event aggregation.
const AGGREGATE_INTERVAL: Millis = 600_000;
/// The most similar-event windows kept: client-go's aggregator cache is an LRU of this many
/// entries (`maxLruCacheEntries`), so after a 10,000-pod rollout it remembers the latest 4,096
/// (object, source, type, reason) windows, not all 50,000.
pub const MAX_SIMILAR_WINDOWS: usize = 4_096;
/// How many windows one eviction pass frees below [`MAX_SIMILAR_WINDOWS`] (one sort per batch).
const SIMILAR_EVICTION_BATCH: usize = 512;

/// One remembered Event identity of an object and message: (source, uid, type, reason) → its
/// name.
#[derive(Clone, Debug)]
struct Identity {
    source: Str,
    uid: Str,
    type_: &'static str,
    reason: Str,
    name: Str,
}

impl Identity {
    fn is(&self, source: &str, rec: &EventRecord) -> bool {
        self.reason == rec.reason
            && self.uid == rec.uid
            && self.type_ == rec.type_
            && self.source == source
    }
}

/// One similar-event window of an object: (source, type, reason) → times of distinct messages.
#[derive(Clone, Debug)]
struct Window {
    source: Str,
    type_: &'static str,
    reason: Str,
    /// Oldest first (the clock only moves forward), so expiry pops from the front.
    times: VecDeque<Millis>,
    /// When a record last looked this window up: the LRU's recency.
    used: Millis,
}

/// Where the last clash-free Event name was found: suffixes from `nanos` up to `next` were all
/// taken then, and stay taken until an Event is removed. A ReplicaSet that creates 500 pods in one
/// millisecond records 500 `SuccessfulCreate` Events for one object and one time; without this
/// each would probe every name the ones before it took.
#[derive(Clone, Debug)]
struct NameHint {
    namespace: Str,
    base: Str,
    nanos: u64,
    next: u64,
    removals: u64,
}

/// Correlates events so repeats become one Event with a count.
///
/// Both caches are keyed by the involved object first, then by message (a ReplicaSet that
/// created 10,000 pods has 10,000 identities, one per `Created pod: <name>`), so a lookup borrows
/// the record's fields instead of building six-string tuple keys, and stays logarithmic.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Per object and message: (source, uid, type, reason) → Event name.
    /// Found by hash, as `similar`: every Event recorded looks its object up in both. Messages
    /// by hash too, not in a sorted vector: a ReplicaSet's `Created pod: <name>` identities
    /// number in the thousands and expire in the order of time, not of name (removing each from
    /// a vector moved half of it), and a tree of them cost a descent of string comparisons along
    /// their shared prefix for every lookup. Neither map is walked, so neither keeps an order.
    by_identity: LookupSlots<ObjectKey, LookupSlots<Str, Vec<Identity>>>,
    /// Per object: (source, type, reason) → times of distinct messages seen.
    similar: HashedSlotMap<ObjectKey, Vec<Window>>,
    /// Identities and windows held (what [`Recorder::len`] reports).
    identities: usize,
    windows: usize,
    name_hint: Option<NameHint>,
}

/// Who records: client-go gives each component its own recorder, made with the `source` its
/// Events carry (component and host), from which the reporting instance follows. Each simulated
/// component keeps one, so the instance (`kubelet-<node>`, four of the five Events of every pod
/// a kubelet starts) is joined once, not once per Event.
#[derive(Clone, Debug)]
pub struct Reporter {
    /// The component's name as the trace gives it (`kubelet` for every kubelet).
    name: Str,
    component: Str,
    host: Str,
    instance: Str,
}

impl Reporter {
    /// The recorder of the component named `name`, on `host` (empty but for a kubelet).
    pub fn new(name: &Str, host: &Str) -> Reporter {
        let component = recorder_source(name);
        let instance = if host.is_empty() {
            component.clone()
        } else {
            Str::concat(&[&component, "-", host])
        };
        Reporter {
            name: name.clone(),
            component,
            host: host.clone(),
            instance,
        }
    }

    /// The name it was made with.
    pub fn name(&self) -> &Str {
        &self.name
    }
}

/// What the recorder decided: a new Event object or an updated one.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub event: Event,
    pub is_new: bool,
}

impl Recorder {
    fn identity_name(&self, source: &str, rec: &EventRecord, message: &str) -> Option<&Str> {
        self.by_identity
            .get(&rec.object)?
            .get(message)?
            .iter()
            .find(|i| i.is(source, rec))
            .map(|i| &i.name)
    }

    /// Turns a record by `reporter` into the Event object to store, reading stored Events from
    /// `store`. The reporter's strings are shared, as every Event and identity repeats them.
    pub fn record(
        &mut self,
        now: Millis,
        reporter: &Reporter,
        rec: &EventRecord,
        store: &impl EventStore,
    ) -> Recorded {
        let (source, host) = (&reporter.component, &reporter.host);
        let namespace = if rec.object.namespace.is_empty() {
            Str::from("default")
        } else {
            rec.object.namespace.clone()
        };
        let existing = |name: &Str| store.event_named(&namespace, name);
        let mut message = rec.message.clone();
        let identity = self.identity_name(source, rec, &message);
        let known = identity.is_some();
        // The Event it names, read now: unless aggregation changes the message below, the
        // identity is looked up once, not again.
        let known_event = identity.and_then(&existing);
        let windows = self
            .similar
            .get_or_insert_with(rec.object.clone(), Vec::new);
        let w = match windows
            .iter()
            .position(|w| w.reason == rec.reason && w.type_ == rec.type_ && w.source == *source)
        {
            Some(i) => i,
            None => {
                windows.push(Window {
                    source: source.clone(),
                    type_: rec.type_,
                    reason: rec.reason.clone(),
                    times: VecDeque::new(),
                    used: now,
                });
                self.windows += 1;
                windows.len() - 1
            }
        };
        windows[w].used = now;
        let times = &mut windows[w].times;
        while times.front().is_some_and(|t| t + AGGREGATE_INTERVAL < now) {
            times.pop_front();
        }
        let mut combined = false;
        if !known {
            times.push_back(now);
            if times.len() > AGGREGATE_MAX_EVENTS {
                message = Str::concat(&["(combined from similar events): ", &message]);
                combined = true;
            }
        }
        if self.windows > MAX_SIMILAR_WINDOWS {
            self.evict_similar();
        }
        let repeated = if combined {
            self.identity_name(source, rec, &message).and_then(existing)
        } else {
            known_event
        };
        if let Some(ev) = repeated {
            let mut ev = ev.clone();
            ev.count += 1;
            ev.last_timestamp = Some(Time(now));
            return Recorded {
                event: ev,
                is_new: false,
            };
        }
        let nanos = ((EPOCH_UNIX_SECONDS as u64) * 1000 + now) * 1_000_000;
        let removals = store.event_removals();
        let start = match &self.name_hint {
            Some(h)
                if h.nanos == nanos
                    && h.removals == removals
                    && h.base == rec.object.name
                    && h.namespace == namespace =>
            {
                h.next
            }
            _ => nanos,
        };
        let (free, name) = store.first_free_suffix(&namespace, &rec.object.name, start);
        debug_assert_eq!(
            free,
            store
                .first_free_suffix(&namespace, &rec.object.name, nanos)
                .0,
            "the hint skips no free name"
        );
        self.name_hint = Some(NameHint {
            namespace: namespace.clone(),
            base: rec.object.name.clone(),
            nanos,
            next: free,
            removals,
        });
        let by_message = self
            .by_identity
            .get_or_insert_with(rec.object.clone(), LookupSlots::default);
        if !by_message.contains_key(&message) {
            by_message.insert(message.clone(), Vec::new());
        }
        let ids = by_message.get_mut(&message).expect("inserted above");
        match ids.iter_mut().find(|i| i.is(source, rec)) {
            Some(i) => i.name = name.clone(),
            None => {
                ids.push(Identity {
                    source: source.clone(),
                    uid: rec.uid.clone(),
                    type_: rec.type_,
                    reason: rec.reason.clone(),
                    name: name.clone(),
                });
                self.identities += 1;
            }
        }
        let event = Event {
            metadata: ObjectMeta {
                name,
                namespace,
                ..Default::default()
            },
            involved_object: ObjectReference {
                kind: rec.object.kind.as_str().into(),
                namespace: rec.object.namespace.clone(),
                name: rec.object.name.clone(),
                uid: rec.uid.clone(),
                api_version: rec.object.kind.api_version().into(),
                resource_version: Str::EMPTY,
                field_path: rec.field_path.clone(),
            },
            reason: rec.reason.clone(),
            message,
            source: EventSource {
                component: source.clone(),
                host: host.clone(),
            },
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: 1,
            type_: rec.type_.into(),
            reporting_component: Some(source.clone()),
            reporting_instance: Some(reporter.instance.clone()),
        };
        Recorded {
            event,
            is_new: true,
        }
    }

    /// Forgets the identities behind Events that expired, so a later repeat makes a fresh Event.
    /// Each is looked up where [`Recorder::record`] filed it (its involved object, then its
    /// message), so an hour after a large rollout thousands expire without a walk over every
    /// identity; an Event the recorder did not write (`kubectl create`) has none to forget.
    pub fn forget<'a>(&mut self, expired: impl IntoIterator<Item = &'a Event>) {
        for ev in expired {
            let involved = &ev.involved_object;
            let Some(kind) = Kind::from_kind_str(&involved.kind) else {
                continue;
            };
            let object = ObjectKey::shared(kind, &involved.namespace, &involved.name);
            let Some(by_message) = self.by_identity.get_mut(&object) else {
                continue;
            };
            if let Some(ids) = by_message.get_mut(&ev.message) {
                let before = ids.len();
                ids.retain(|i| i.name != ev.metadata.name);
                self.identities -= before - ids.len();
                if ids.is_empty() {
                    by_message.remove(&ev.message);
                }
            }
            if by_message.is_empty() {
                self.by_identity.remove(&object);
            }
        }
    }

    /// Drops similar-event windows with no message left in them. Without this, every object that
    /// ever had an Event (every pod of every rollout) would keep an entry for the rest of the run;
    /// client-go bounds the same cache as an LRU of 4,096 entries.
    pub fn prune(&mut self, now: Millis) {
        let mut dropped = 0;
        self.similar.retain(|_, windows| {
            let before = windows.len();
            windows.retain_mut(|w| {
                w.times.retain(|t| t + AGGREGATE_INTERVAL >= now);
                !w.times.is_empty()
            });
            dropped += before - windows.len();
            !windows.is_empty()
        });
        self.windows -= dropped;
    }

    /// Past [`MAX_SIMILAR_WINDOWS`], forgets the least recently used windows (ties in key order,
    /// so the result is deterministic) until [`SIMILAR_EVICTION_BATCH`] below the cap. The window
    /// just used is the most recent, so it stays.
    fn evict_similar(&mut self) {
        let by_use: Vec<Millis> = self
            .similar
            .values()
            .flat_map(|ws| ws.iter().map(|w| w.used))
            .collect();
        let excess = self.windows - (MAX_SIMILAR_WINDOWS - SIMILAR_EVICTION_BATCH);
        // Everything used before `cutoff` goes, and at `cutoff` as many as are still needed.
        let cutoff = nth_smallest(&by_use, excess - 1);
        let mut at_cutoff = excess - by_use.iter().filter(|&&u| u < cutoff).count();
        let mut dropped = 0;
        self.similar.retain(|_, windows| {
            windows.retain(|w| {
                let go = w.used < cutoff || (w.used == cutoff && at_cutoff > 0);
                if w.used == cutoff && go {
                    at_cutoff -= 1;
                }
                dropped += usize::from(go);
                !go
            });
            !windows.is_empty()
        });
        self.windows -= dropped;
    }

    /// How many entries the recorder holds (event identities plus similar-event windows): what
    /// its memory grows with, for the memory-bound tests.
    pub fn len(&self) -> usize {
        self.identities + self.windows
    }

    /// True when the recorder remembers nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        *self = Recorder::default();
    }
}

/// The `source.component` Kubernetes' recorder writes for a simulated component: its name,
/// except for the disruption controller, whose upstream recorder is named `controllermanager`.
fn recorder_source(component: &Str) -> Str {
    if *component == DISRUPTION_CONTROLLER {
        Str::from(DISRUPTION_EVENT_SOURCE)
    } else {
        component.clone()
    }
}

/// The value a sort of `values` would put at position `n` (`n < values.len()`), found by
/// halving the range of values: a few dozen counting passes over the 4,096 windows' last uses,
/// where sorting them (the crate's one stable sort, a comparator call per comparison) was a
/// third of an eviction's time in the page, and a selection algorithm of its own cost the
/// download more than this.
fn nth_smallest(values: &[Millis], n: usize) -> Millis {
    let (mut lo, mut hi) = values
        .iter()
        .fold((Millis::MAX, Millis::MIN), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if values.iter().filter(|&&v| v <= mid).count() > n {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::Kind;
    use crate::sim::machinery::controller::ComponentId;
    use std::collections::BTreeMap;

    /// A store holding at most one Event, under any name.
    struct One(Option<Event>);

    impl EventStore for One {
        fn event(&self, _namespace: &str, _name: &str) -> Option<&Event> {
            self.0.as_ref()
        }
        fn event_removals(&self) -> u64 {
            0
        }
    }

    /// A store of Events by name.
    struct Named(BTreeMap<String, Event>);

    impl EventStore for Named {
        fn event(&self, _namespace: &str, name: &str) -> Option<&Event> {
            self.0.get(name)
        }
        fn event_removals(&self) -> u64 {
            0
        }
    }

    fn rec(msg: &str) -> EventRecord {
        EventRecord {
            type_: "Normal",
            reason: "Pulled".into(),
            message: msg.into(),
            object: ObjectKey::new(Kind::Pod, "default", "p"),
            uid: "u".into(),
            field_path: Str::EMPTY,
        }
    }

    #[test]
    fn identical_events_are_counted_on_one_object() {
        let mut r = Recorder::default();
        let first = r.record(
            0,
            &Reporter::new(&"kubelet".into(), &"node-1".into()),
            &rec("x"),
            &One(None),
        );
        assert!(first.is_new);
        let stored = first.event.clone();
        let second = r.record(
            5_000,
            &Reporter::new(&"kubelet".into(), &"node-1".into()),
            &rec("x"),
            &One(Some(stored)),
        );
        assert!(!second.is_new);
        assert_eq!(second.event.count, 2);
        assert_eq!(second.event.last_timestamp, Some(Time(5_000)));
    }

    #[test]
    fn quiet_objects_are_forgotten_once_their_aggregation_window_passes() {
        let mut r = Recorder::default();
        let stored = r
            .record(
                0,
                &Reporter::new(&"kubelet".into(), &"".into()),
                &rec("x"),
                &One(None),
            )
            .event;
        assert_eq!(r.len(), 2);
        r.prune(AGGREGATE_INTERVAL);
        assert_eq!(r.len(), 2, "still inside the window");
        r.prune(AGGREGATE_INTERVAL + 1);
        assert_eq!(
            r.len(),
            1,
            "the window is gone, the identity stays until the Event expires"
        );
        r.forget([&stored]);
        assert!(r.is_empty());
    }

    #[test]
    fn an_expired_event_is_forgotten_under_its_object_and_message_and_nothing_else_is() {
        let mut r = Recorder::default();
        let mut store = Named(BTreeMap::new());
        // Eleven distinct messages: the eleventh is stored under the aggregated message.
        let mut events = Vec::new();
        for i in 0..=AGGREGATE_MAX_EVENTS {
            let ev = r
                .record(
                    0,
                    &Reporter::new(&"kubelet".into(), &"".into()),
                    &rec(&format!("m{i}")),
                    &store,
                )
                .event;
            store.0.insert(ev.metadata.name.to_string(), ev.clone());
            events.push(ev);
        }
        let combined = events.last().expect("eleven events");
        assert!(combined
            .message
            .starts_with("(combined from similar events)"));
        let identities = |r: &Recorder| r.identities;
        assert_eq!(identities(&r), 11);
        r.forget([combined]);
        assert_eq!(
            identities(&r),
            10,
            "the aggregated Event's identity is gone"
        );
        let mut stranger = events[0].clone();
        stranger.metadata.name = "made-by-kubectl".into();
        r.forget([&stranger]);
        assert_eq!(
            identities(&r),
            10,
            "an Event the recorder did not write forgets nothing"
        );
        r.forget(&events[..10]);
        assert_eq!(identities(&r), 0);
        assert!(r.by_identity.is_empty(), "emptied objects are dropped");
    }

    #[test]
    fn events_share_their_source_host_and_reporting_instance_with_the_recording_component() {
        let mut r = Recorder::default();
        let (source, host) = (Str::from("kubelet"), Str::from("worker-node-0042"));
        let kubelet = Reporter::new(&source, &host);
        let a = r.record(0, &kubelet, &rec("x"), &One(None)).event;
        let b = r.record(0, &kubelet, &rec("y"), &One(None)).event;
        for ev in [&a, &b] {
            assert!(Str::ptr_eq(&ev.source.host, &host));
            assert!(Str::ptr_eq(&ev.source.component, &source));
            assert_eq!(
                ev.reporting_instance.as_deref(),
                Some("kubelet-worker-node-0042")
            );
            let instance = ev.reporting_instance.as_ref().expect("set");
            assert!(Str::ptr_eq(instance, &kubelet.instance));
        }
    }

    #[test]
    fn disruption_controller_events_carry_the_controllermanager_source_as_upstream() {
        let mut r = Recorder::default();
        let ev = r
            .record(
                0,
                &Reporter::new(&ComponentId::Disruption.name().into(), &Str::EMPTY),
                &rec("x"),
                &One(None),
            )
            .event;
        assert_eq!(ev.source.component, "controllermanager");
        assert_eq!(ev.reporting_component.as_deref(), Some("controllermanager"));
        let ev = r
            .record(
                0,
                &Reporter::new(&ComponentId::ReplicaSet.name().into(), &Str::EMPTY),
                &rec("x"),
                &One(None),
            )
            .event;
        assert_eq!(ev.source.component, "replicaset-controller");
    }

    #[test]
    fn events_about_one_object_in_one_millisecond_get_the_next_free_names() {
        let mut r = Recorder::default();
        let mut store = Named(BTreeMap::new());
        let mut names = Vec::new();
        for i in 0..4 {
            let ev = r
                .record(
                    7,
                    &Reporter::new(&"replicaset-controller".into(), &"".into()),
                    &rec(&format!("m{i}")),
                    &store,
                )
                .event;
            names.push(ev.metadata.name.clone());
            store.0.insert(ev.metadata.name.to_string(), ev);
        }
        let nanos = ((EPOCH_UNIX_SECONDS as u64) * 1000 + 7) * 1_000_000;
        let want: Vec<String> = (0..4).map(|b| format!("p.{:016x}", nanos + b)).collect();
        assert_eq!(names, want);
        // A name freed in the middle is found again (the removal count moved on).
        struct Freed(Named);
        impl EventStore for Freed {
            fn event(&self, ns: &str, name: &str) -> Option<&Event> {
                self.0.event(ns, name)
            }
            fn event_removals(&self) -> u64 {
                1
            }
        }
        store.0.remove(&want[1]);
        let ev = r
            .record(
                7,
                &Reporter::new(&"replicaset-controller".into(), &"".into()),
                &rec("m9"),
                &Freed(store),
            )
            .event;
        assert_eq!(ev.metadata.name, want[1]);
    }

    #[test]
    fn more_than_ten_similar_messages_are_combined() {
        let mut r = Recorder::default();
        let mut last = Str::EMPTY;
        for i in 0..11 {
            last = r
                .record(
                    i,
                    &Reporter::new(&"kubelet".into(), &"".into()),
                    &rec(&format!("m{i}")),
                    &One(None),
                )
                .event
                .message;
        }
        assert_eq!(last, "(combined from similar events): m10");
    }

    proptest::proptest! {
        #[test]
        fn the_eviction_cutoff_is_the_value_a_sort_puts_at_that_place(
            values in proptest::collection::vec(0u64..50, 1..200),
            at in 0usize..200,
        ) {
            let n = at % values.len();
            let mut sorted = values.clone();
            sorted.sort();
            proptest::prop_assert_eq!(nth_smallest(&values, n), sorted[n]);
        }
    }

    #[test]
    fn the_similar_event_cache_keeps_the_most_recently_used_4096_windows_as_client_go_does() {
        let mut r = Recorder::default();
        let on = |i: usize, msg: &str| EventRecord {
            object: ObjectKey::new(Kind::Pod, "default", &format!("p{i}")),
            ..rec(msg)
        };
        // Pod 0 keeps getting new messages; thousands of other pods get one Event each.
        for i in 0..6_000 {
            r.record(
                i as Millis,
                &Reporter::new(&"kubelet".into(), &"".into()),
                &on(i, "x"),
                &One(None),
            );
            r.record(
                i as Millis,
                &Reporter::new(&"kubelet".into(), &"".into()),
                &on(0, &format!("m{i}")),
                &One(None),
            );
            assert!(r.windows <= MAX_SIMILAR_WINDOWS);
        }
        assert!(r.windows > MAX_SIMILAR_WINDOWS - SIMILAR_EVICTION_BATCH);
        assert!(
            !r.similar.contains_key(&on(1, "x").object),
            "least recently used: gone"
        );
        assert!(
            r.similar.contains_key(&on(5_999, "x").object),
            "the newest stays"
        );
        // Pod 0's window was used all along: it still aggregates its 6,001st message.
        let last = r.record(
            6_000,
            &Reporter::new(&"kubelet".into(), &"".into()),
            &on(0, "m-last"),
            &One(None),
        );
        assert!(last
            .event
            .message
            .starts_with("(combined from similar events)"));
    }
}
