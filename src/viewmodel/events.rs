//! The events list, as `kubectl get events` prints it: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE.

use crate::sim::api::types::{Event, Millis};
use crate::sim::time::human_age;
use crate::sort::{CollectTree, StableSort};

/// One row of the events list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    /// The Event object's name (stable across count bumps: a good list key).
    pub name: String,
    /// `5s`, or `5s (x3 over 1m)` for an aggregated event, as kubectl prints it.
    pub last_seen: String,
    /// `Normal` or `Warning`.
    pub type_: String,
    pub reason: String,
    /// `pod/web-7d4b9c8f6-x2k9q`.
    pub object: String,
    /// The involved object's kind and name, for linking to the inspector.
    pub object_kind: String,
    pub object_name: String,
    pub object_namespace: String,
    pub message: String,
    pub count: i32,
    /// Simulated time of the last occurrence, for ordering.
    pub last_t: Millis,
    /// The reporting component (`deployment-controller`, `kubelet`).
    pub source: String,
}

impl EventRow {
    /// The row for one Event object at `now`.
    pub fn of(ev: &Event, now: Millis) -> EventRow {
        let last = ev.last_timestamp.or(ev.first_timestamp).map_or(0, |t| t.0);
        let first = ev.first_timestamp.map_or(last, |t| t.0);
        let since_last = human_age(now.saturating_sub(last));
        let last_seen = if ev.count > 1 {
            format!(
                "{since_last} (x{} over {})",
                ev.count,
                human_age(now.saturating_sub(first))
            )
        } else {
            since_last
        };
        let kind = ev.involved_object.kind.clone();
        EventRow {
            name: ev.metadata.name.to_string(),
            last_seen,
            type_: ev.type_.to_string(),
            reason: ev.reason.to_string(),
            object: object_label(ev),
            object_kind: kind.to_string(),
            object_name: ev.involved_object.name.to_string(),
            object_namespace: ev.involved_object.namespace.to_string(),
            message: ev.message.to_string(),
            count: ev.count,
            last_t: last,
            source: ev.source.component.to_string(),
        }
    }

    /// True for Warning events (drawn with a warning mark, not only a colour).
    pub fn is_warning(&self) -> bool {
        self.type_ == "Warning"
    }
}

/// The involved object as the OBJECT column prints it: `pod/web-7d4b9c8f6-x2k9q`.
pub fn object_label(ev: &Event) -> String {
    format!(
        "{}/{}",
        ev.involved_object.kind.to_ascii_lowercase(),
        ev.involved_object.name
    )
}

/// Whether `ev` is about an object whose OBJECT label contains `filter` (any case): `web` finds
/// the Deployment, its ReplicaSets and their pods, `node/` every node, `pod/web-7d4` one pod.
/// Surrounding spaces are ignored and an empty filter matches everything.
pub fn matches_object(ev: &Event, filter: &str) -> bool {
    let filter = filter.trim();
    filter.is_empty()
        || object_label(ev)
            .to_lowercase()
            .contains(&filter.to_lowercase())
}

/// Newest first: by the last (or first) time seen, then by name, then by namespace, a total
/// order, so neither the rows nor a selection of them depends on the order the Events came in
/// (the views scan the store rather than list it in name order).
fn newest_first(a: &&Event, b: &&Event) -> std::cmp::Ordering {
    fn key(e: &Event) -> (Millis, &str, std::cmp::Reverse<&str>) {
        (
            e.last_timestamp.or(e.first_timestamp).map_or(0, |t| t.0),
            e.metadata.name.as_str(),
            std::cmp::Reverse(e.metadata.namespace.as_str()),
        )
    }
    key(b).cmp(&key(a))
}

/// All rows, newest first (ties: by name, so the order never flickers).
pub fn event_rows<'a>(events: impl IntoIterator<Item = &'a Event>, now: Millis) -> Vec<EventRow> {
    let mut events: Vec<&Event> = events.into_iter().collect();
    events.stable_sort_by(newest_first);
    events.into_iter().map(|e| EventRow::of(e, now)).collect()
}

/// The events list as the page draws it: the newest rows only (plus the newest warnings, for
/// "Warnings only"), with the totals. A 10,000-pod cluster keeps tens of thousands of Events;
/// building a row for each on every change cost hundreds of milliseconds a frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventList {
    /// Newest first: the newest `limit` events and the newest `limit` warnings.
    pub rows: Vec<EventRow>,
    /// Every Event.
    pub total: usize,
    /// Every Warning Event.
    pub warnings: usize,
}

/// The newest `limit` events and newest `limit` warnings as rows, in [`event_rows`]' order, and
/// the totals. O(n) selection over the Events, rows built only for the kept ones.
pub fn newest_event_rows<'a>(
    events: impl IntoIterator<Item = &'a Event>,
    now: Millis,
    limit: usize,
) -> EventList {
    let all: Vec<&Event> = events.into_iter().collect();
    let newest = |mut v: Vec<&'a Event>| -> Vec<&'a Event> {
        if v.len() > limit && limit > 0 {
            // Borrowed, not cloned: the selection compares tens of thousands of times.
            v.select_nth_unstable_by(limit - 1, newest_first);
            v.truncate(limit);
        } else if limit == 0 {
            v.clear();
        }
        v
    };
    let warnings: Vec<&Event> = all
        .iter()
        .copied()
        .filter(|e| e.type_ == "Warning")
        .collect();
    let n_warnings = warnings.len();
    let mut kept = newest(all.clone());
    kept.extend(newest(warnings));
    kept.stable_sort_by(newest_first);
    kept.dedup_by(|a, b| std::ptr::eq(*a, *b));
    EventList {
        rows: event_rows(kept, now),
        total: all.len(),
        warnings: n_warnings,
    }
}

/// The most rows one update of the events table fades in. A lesson's few Events a second each
/// fade in, so the eye finds what just happened; a rollout of a few hundred pods brings dozens
/// an update, and fading each one (a layer the browser updates on every frame until it ends)
/// cost about 6% of the page's CPU, for rows arriving faster than anyone reads them.
pub const ROW_FADES_MAX: usize = 8;

/// Remembers, across updates of the events table, which rows fade in: a row fades in when it
/// arrives in an update of at most [`ROW_FADES_MAX`] new rows, and keeps that for as long as it
/// is shown (taking it away would restart or cut its fade).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowFades {
    /// The newest row's name at the previous update; `Some(None)` when the table had no rows,
    /// `None` before the first update (the rows a table opens with are not news; the first
    /// rows of a table that opened empty are).
    newest: Option<Option<String>>,
    fading: std::collections::BTreeSet<String>,
}

impl RowFades {
    /// Takes in an update's rows (newest first, as the table shows them) and returns the names
    /// of the rows that fade in. The rows above the previous newest one are new (an Event seen
    /// again moves up and counts as new too); taking in the same rows again changes nothing.
    pub fn update(&mut self, rows: &[EventRow]) -> &std::collections::BTreeSet<String> {
        if let Some(prev) = &self.newest {
            let fresh = prev
                .as_ref()
                .and_then(|prev| rows.iter().position(|r| &r.name == prev))
                .unwrap_or(rows.len());
            if fresh <= ROW_FADES_MAX {
                self.fading
                    .extend(rows[..fresh].iter().map(|r| r.name.clone()));
            }
        }
        self.newest = Some(rows.first().map(|r| r.name.clone()));
        if !self.fading.is_empty() {
            let shown: std::collections::BTreeSet<&str> =
                rows.iter().map(|r| r.name.as_str()).collect_set();
            self.fading.retain(|n| shown.contains(n.as_str()));
        }
        &self.fading
    }
}

/// Where a learner looking at an empty panel stands, and so what the panel tells them to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextStep {
    /// Nothing applied yet: only the nodes exist.
    Apply,
    /// Objects applied on a paused clock: a lesson opens so, its objects applied at t=0 before
    /// any controller has run.
    Play,
    /// Applied and running: the controllers act as the clock runs.
    Watch,
}

impl NextStep {
    /// From whether any workload object exists and whether the clock runs.
    pub fn of(applied: bool, playing: bool) -> NextStep {
        match (applied, playing) {
            (false, _) => NextStep::Apply,
            (true, false) => NextStep::Play,
            (true, true) => NextStep::Watch,
        }
    }

    /// What the events table says while it has no row.
    pub fn events_text(self) -> &'static str {
        match self {
            NextStep::Apply => {
                "No events yet. Apply the Deployment and press Play: every controller reports what it did here."
            }
            NextStep::Play => {
                "No events yet: the clock is paused. Press Play (or Space): every controller reports what it does here."
            }
            NextStep::Watch => "No events yet: every controller reports here what it does.",
        }
    }

    /// What the loop panel says while no controller has made a pass.
    pub fn loops_text(self) -> &'static str {
        match self {
            NextStep::Apply => "Apply the Deployment to watch them work.",
            NextStep::Play => "The clock is paused: press Play (or Space) to watch them work.",
            NextStep::Watch => "Each one shows here after its first pass.",
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn with_objects_applied_on_a_paused_clock_the_empty_panels_point_at_play_not_apply() {
        let nothing = NextStep::of(false, false);
        assert!(nothing
            .events_text()
            .contains("Apply the Deployment and press Play"));
        assert!(nothing.loops_text().contains("Apply the Deployment"));
        let lesson_at_t0 = NextStep::of(true, false);
        for text in [lesson_at_t0.events_text(), lesson_at_t0.loops_text()] {
            assert!(!text.contains("Apply"), "{text}");
            assert!(
                text.contains("press Play") || text.contains("Press Play"),
                "{text}"
            );
        }
        let running = NextStep::of(true, true);
        for text in [running.events_text(), running.loops_text()] {
            assert!(!text.contains("Apply") && !text.contains("Play"), "{text}");
        }
    }

    #[test]
    fn the_object_filter_finds_an_objects_events_by_any_part_of_kind_and_name() {
        let ev = |kind: &str, name: &str| {
            let mut e = Event::default();
            e.involved_object.kind = kind.into();
            e.involved_object.name = name.into();
            e
        };
        let pod = ev("Pod", "web-65c9d644c9-x2k9q");
        let node = ev("Node", "node-2");
        assert!(matches_object(&pod, "web"));
        assert!(matches_object(&pod, " POD/web-65c "));
        assert!(!matches_object(&node, "web"));
        assert!(matches_object(&node, "node/"));
        assert!(matches_object(&node, ""));
        assert!(!matches_object(&pod, "node/"));
    }

    use super::*;
    use crate::sim::api::types::{ObjectMeta, ObjectReference, Time};

    fn named(names: &[&str]) -> Vec<EventRow> {
        names
            .iter()
            .map(|n| EventRow {
                name: n.to_string(),
                last_seen: String::new(),
                type_: "Normal".into(),
                reason: String::new(),
                object: String::new(),
                object_kind: String::new(),
                object_name: String::new(),
                object_namespace: String::new(),
                message: String::new(),
                count: 1,
                last_t: 0,
                source: String::new(),
            })
            .collect()
    }

    fn fading(f: &mut RowFades, names: &[&str]) -> Vec<String> {
        f.update(&named(names)).iter().cloned().collect()
    }

    #[test]
    fn a_few_new_rows_fade_in_and_keep_fading_while_shown() {
        let mut f = RowFades::default();
        assert!(
            fading(&mut f, &["c", "b", "a"]).is_empty(),
            "the first rows are not news"
        );
        assert_eq!(fading(&mut f, &["e", "d", "c", "b", "a"]), ["d", "e"]);
        // Same rows again (a re-render): nothing new, and d and e keep their fade.
        assert_eq!(fading(&mut f, &["e", "d", "c", "b", "a"]), ["d", "e"]);
        // An Event seen again moves to the top: it is news too. Rows no longer shown are forgotten.
        assert_eq!(fading(&mut f, &["b", "e", "d"]), ["b", "d", "e"]);
    }

    #[test]
    fn the_first_rows_of_a_table_that_opened_empty_fade_in() {
        let mut f = RowFades::default();
        assert!(fading(&mut f, &[]).is_empty());
        assert_eq!(fading(&mut f, &["b", "a"]), ["a", "b"]);
    }

    #[test]
    fn a_burst_of_new_rows_does_not_fade_in() {
        let mut f = RowFades::default();
        fading(&mut f, &["old"]);
        let burst: Vec<String> = (0..=ROW_FADES_MAX).map(|i| format!("n{i:02}")).collect();
        let mut names: Vec<&str> = burst.iter().rev().map(String::as_str).collect();
        names.push("old");
        assert!(
            fading(&mut f, &names).is_empty(),
            "{} new rows at once",
            burst.len()
        );
        // Exactly the cap still fades.
        let mut f = RowFades::default();
        fading(&mut f, &["old"]);
        let mut names: Vec<&str> = burst[..ROW_FADES_MAX].iter().map(String::as_str).collect();
        names.push("old");
        assert_eq!(fading(&mut f, &names).len(), ROW_FADES_MAX);
    }

    fn ev(name: &str, reason: &str, first: Millis, last: Millis, count: i32) -> Event {
        Event {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                ..Default::default()
            },
            involved_object: ObjectReference {
                kind: "Pod".into(),
                name: "web-abc".into(),
                ..Default::default()
            },
            reason: reason.into(),
            message: "msg".into(),
            first_timestamp: Some(Time(first)),
            last_timestamp: Some(Time(last)),
            count,
            type_: "Normal".into(),
            ..Default::default()
        }
    }

    #[test]
    fn rows_read_like_kubectl_get_events() {
        let rows = event_rows([&ev("a", "Scheduled", 1_000, 1_000, 1)], 6_000);
        assert_eq!(rows[0].last_seen, "5s");
        assert_eq!(rows[0].object, "pod/web-abc");
        assert_eq!(rows[0].reason, "Scheduled");
    }

    #[test]
    fn repeated_events_say_how_often_and_over_how_long() {
        let rows = event_rows([&ev("a", "BackOff", 0, 60_000, 4)], 65_000);
        assert_eq!(rows[0].last_seen, "5s (x4 over 65s)");
    }

    #[test]
    fn newest_events_come_first() {
        let rows = event_rows(
            [&ev("old", "A", 0, 0, 1), &ev("new", "B", 5_000, 5_000, 1)],
            6_000,
        );
        assert_eq!(rows[0].name, "new");
        assert_eq!(rows[1].name, "old");
    }

    #[test]
    fn the_page_builds_rows_only_for_the_newest_events_and_warnings() {
        let mut all: Vec<Event> = (0..10)
            .map(|i| ev(&format!("e{i}"), "Pulled", i * 1_000, i * 1_000, 1))
            .collect();
        for i in [1, 2, 8] {
            all[i].type_ = "Warning".into();
        }
        let list = newest_event_rows(&all, 20_000, 2);
        assert_eq!((list.total, list.warnings), (10, 3));
        let names: Vec<&str> = list.rows.iter().map(|r| r.name.as_str()).collect();
        // The two newest (e9, e8) and the two newest warnings (e8, e2), newest first, once each.
        assert_eq!(names, ["e9", "e8", "e2"]);
        let full = event_rows(&all, 20_000);
        assert_eq!(
            list.rows[0], full[0],
            "the same rows as the full list, in its order"
        );
    }

    #[test]
    fn the_rows_are_in_the_same_order_whatever_order_the_events_come_in() {
        // Two Events of one time and name in two namespaces, and one older: the views scan the
        // store, which holds them in no meaningful order.
        let mut other = ev("web-abc.1", "Pulled", 5_000, 5_000, 1);
        other.metadata.namespace = "apps".into();
        other.message = "in apps".into();
        let events = [
            ev("web-abc.1", "Pulled", 5_000, 5_000, 1),
            other,
            ev("web-abc.0", "Scheduled", 1_000, 1_000, 1),
        ];
        let seen = |order: [usize; 3]| {
            let shuffled = order.map(|i| &events[i]);
            let all: Vec<(String, String)> = event_rows(shuffled, 9_000)
                .into_iter()
                .map(|r| (r.name, r.message))
                .collect();
            let newest: Vec<String> = newest_event_rows(shuffled, 9_000, 2)
                .rows
                .into_iter()
                .map(|r| r.name)
                .collect();
            (all, newest)
        };
        let first = seen([0, 1, 2]);
        for order in [[2, 1, 0], [1, 0, 2], [2, 0, 1]] {
            assert_eq!(seen(order), first, "{order:?}");
        }
        assert_eq!(first.1, ["web-abc.1", "web-abc.1"]);
    }
}
