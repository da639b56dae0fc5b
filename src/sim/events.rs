//! The event recorder: turns components' [`EventRecord`]s into core/v1 Event objects, with
//! client-go's EventCorrelator de-duplication and similar-event aggregation.

use std::collections::{BTreeMap, BTreeSet};

use super::controller::EventRecord;
use super::types::{
    Event, EventSource, Millis, ObjectKey, ObjectMeta, ObjectReference, Time, EPOCH_UNIX_SECONDS,
};

/// Events older than this are removed (`--event-ttl`, 1 h).
pub const EVENT_TTL: Millis = 3_600_000;
/// More than this many events with one reason and different messages are aggregated.
const AGGREGATE_MAX_EVENTS: usize = 10;
/// The window for similar-event aggregation.
const AGGREGATE_INTERVAL: Millis = 600_000;

/// Correlates events so repeats become one Event with a count.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// (source, object, uid, type, reason, message) → Event name.
    by_identity: BTreeMap<(String, ObjectKey, String, String, String, String), String>,
    /// (source, object, type, reason) → times of distinct messages seen.
    similar: BTreeMap<(String, ObjectKey, String, String), Vec<Millis>>,
}

/// What the recorder decided: a new Event object or an updated one.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub event: Event,
    pub is_new: bool,
}

impl Recorder {
    /// Turns a record into the Event object to store. `existing` looks up stored Events by name.
    pub fn record(
        &mut self,
        now: Millis,
        source: &str,
        host: &str,
        rec: &EventRecord,
        existing: impl Fn(&str) -> Option<Event>,
    ) -> Recorded {
        let mut message = rec.message.clone();
        let sim_key = (
            source.to_string(),
            rec.object.clone(),
            rec.type_.to_string(),
            rec.reason.clone(),
        );
        let times = self.similar.entry(sim_key).or_default();
        times.retain(|t| t + AGGREGATE_INTERVAL >= now);
        let ident = (
            source.to_string(),
            rec.object.clone(),
            rec.uid.clone(),
            rec.type_.to_string(),
            rec.reason.clone(),
            message.clone(),
        );
        if !self.by_identity.contains_key(&ident) {
            times.push(now);
            if times.len() > AGGREGATE_MAX_EVENTS {
                message = format!("(combined from similar events): {message}");
            }
        }
        let ident = (ident.0, ident.1, ident.2, ident.3, ident.4, message.clone());
        if let Some(name) = self.by_identity.get(&ident) {
            if let Some(mut ev) = existing(name) {
                ev.count += 1;
                ev.last_timestamp = Some(Time(now));
                return Recorded {
                    event: ev,
                    is_new: false,
                };
            }
        }
        let nanos = ((EPOCH_UNIX_SECONDS as u64) * 1000 + now) * 1_000_000;
        let mut name = format!("{}.{:016x}", rec.object.name, nanos);
        let mut bump = 1u64;
        while existing(&name).is_some() {
            name = format!("{}.{:016x}", rec.object.name, nanos + bump);
            bump += 1;
        }
        self.by_identity.insert(ident, name.clone());
        let namespace = if rec.object.namespace.is_empty() {
            "default".to_string()
        } else {
            rec.object.namespace.clone()
        };
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
                resource_version: String::new(),
                field_path: rec.field_path.clone(),
            },
            reason: rec.reason.clone(),
            message,
            source: EventSource {
                component: source.into(),
                host: host.into(),
            },
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: 1,
            type_: rec.type_.into(),
            reporting_component: Some(source.into()),
            reporting_instance: Some(if host.is_empty() {
                source.to_string()
            } else {
                format!("{source}-{host}")
            }),
        };
        Recorded {
            event,
            is_new: true,
        }
    }

    /// Forgets identities of events that expired, so a later repeat makes a fresh Event.
    pub fn forget(&mut self, name: &str) {
        self.by_identity.retain(|_, n| n != name);
    }

    /// [`Recorder::forget`] for many expired events in one pass over the identities (an hour
    /// after a large rollout, thousands expire in one housekeeping round).
    pub fn forget_all(&mut self, names: &BTreeSet<String>) {
        if !names.is_empty() {
            self.by_identity.retain(|_, n| !names.contains(n));
        }
    }

    /// Drops similar-event windows with no message left in them. Without this, every object that
    /// ever had an Event (every pod of every rollout) would keep an entry for the rest of the run;
    /// client-go bounds the same cache as an LRU of 4,096 entries.
    pub fn prune(&mut self, now: Millis) {
        self.similar.retain(|_, times| {
            times.retain(|t| t + AGGREGATE_INTERVAL >= now);
            !times.is_empty()
        });
    }

    /// How many entries the recorder holds (event identities plus similar-event windows): what
    /// its memory grows with, for the memory-bound tests.
    pub fn len(&self) -> usize {
        self.by_identity.len() + self.similar.len()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::types::Kind;

    fn rec(msg: &str) -> EventRecord {
        EventRecord {
            type_: "Normal",
            reason: "Pulled".into(),
            message: msg.into(),
            object: ObjectKey::new(Kind::Pod, "default", "p"),
            uid: "u".into(),
            field_path: String::new(),
        }
    }

    #[test]
    fn identical_events_are_counted_on_one_object() {
        let mut r = Recorder::default();
        let first = r.record(0, "kubelet", "node-1", &rec("x"), |_| None);
        assert!(first.is_new);
        let stored = first.event.clone();
        let second = r.record(5_000, "kubelet", "node-1", &rec("x"), |_| {
            Some(stored.clone())
        });
        assert!(!second.is_new);
        assert_eq!(second.event.count, 2);
        assert_eq!(second.event.last_timestamp, Some(Time(5_000)));
    }

    #[test]
    fn quiet_objects_are_forgotten_once_their_aggregation_window_passes() {
        let mut r = Recorder::default();
        let stored = r.record(0, "kubelet", "", &rec("x"), |_| None).event;
        assert_eq!(r.len(), 2);
        r.prune(AGGREGATE_INTERVAL);
        assert_eq!(r.len(), 2, "still inside the window");
        r.prune(AGGREGATE_INTERVAL + 1);
        assert_eq!(
            r.len(),
            1,
            "the window is gone, the identity stays until the Event expires"
        );
        r.forget_all(&BTreeSet::from([stored.metadata.name]));
        assert!(r.is_empty());
    }

    #[test]
    fn more_than_ten_similar_messages_are_combined() {
        let mut r = Recorder::default();
        let mut last = String::new();
        for i in 0..11 {
            last = r
                .record(i, "kubelet", "", &rec(&format!("m{i}")), |_| None)
                .event
                .message;
        }
        assert_eq!(last, "(combined from similar events): m10");
    }
}
