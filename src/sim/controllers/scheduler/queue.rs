//! kube-scheduler's scheduling queue: activeQ, backoffQ and unschedulablePods.
//!
//! As `internal/queue/scheduling_queue.go`: new pods enter activeQ, ordered by priority
//! (descending) then by when they entered (PrioritySort). A pod that fails goes to
//! unschedulablePods, remembering which plugins rejected it; a relevant cluster event moves it
//! to backoffQ (while its back-off of 1 s × 2^(attempts−1), capped at 10 s, runs) or straight to
//! activeQ. Pods left in unschedulablePods for 5 minutes are flushed back regardless (checked
//! every 30 s). The queue is plain data: callers pass the simulated time in.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use serde::Serialize;

use crate::sim::api::types::{Millis, ObjectKey};
use crate::vec_map::LookupSlots;

/// `podInitialBackoffSeconds`.
pub const POD_INITIAL_BACKOFF: Millis = 1_000;
/// `podMaxBackoffSeconds`.
pub const POD_MAX_BACKOFF: Millis = 10_000;
/// `DefaultPodMaxInUnschedulablePodsDuration`.
pub const POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION: Millis = 300_000;
/// How often unschedulablePods is checked for pods that waited too long.
pub const UNSCHEDULABLE_FLUSH_PERIOD: Millis = 30_000;
/// How often backoffQ is flushed into activeQ.
pub const BACKOFF_FLUSH_PERIOD: Millis = 1_000;

/// `calculateBackoffDuration`: 1 s, 2 s, 4 s, 8 s, then 10 s for every later attempt.
pub fn backoff_duration(attempts: u32) -> Millis {
    let mut d = POD_INITIAL_BACKOFF;
    for _ in 1..attempts {
        if d > POD_MAX_BACKOFF - d {
            return POD_MAX_BACKOFF;
        }
        d += d;
    }
    d.min(POD_MAX_BACKOFF)
}

/// `QueuedPodInfo`: a pod's bookkeeping while it waits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueuedPod {
    pub key: ObjectKey,
    pub priority: i64,
    /// Order of entry into activeQ (ties among equal priorities are served in this order).
    pub seq: u64,
    /// Scheduling attempts so far.
    pub attempts: u32,
    /// When it last failed (the back-off and the 5-minute flush count from here).
    pub failed_at: Millis,
    /// The plugins that rejected it last time; empty means any cluster event may help.
    pub unschedulable_plugins: BTreeSet<&'static str>,
}

impl QueuedPod {
    /// When its back-off ends (`getBackoffTime`).
    pub fn backoff_expiry(&self) -> Millis {
        if self.attempts == 0 {
            0
        } else {
            self.failed_at + backoff_duration(self.attempts)
        }
    }

    /// `isPodBackingoff`.
    pub fn is_backing_off(&self, now: Millis) -> bool {
        now < self.backoff_expiry()
    }
}

/// Which of the three sub-queues holds a pod (for the UI and records).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum QueueName {
    ActiveQ,
    BackoffQ,
    UnschedulablePods,
}

impl QueueName {
    /// The name kube-scheduler's metrics use.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueName::ActiveQ => "activeQ",
            QueueName::BackoffQ => "backoffQ",
            QueueName::UnschedulablePods => "unschedulablePods",
        }
    }
}

/// The three queues. Every pod is in exactly one of them, or popped (being scheduled).
#[derive(Clone, Debug, Default)]
pub struct SchedulingQueue {
    /// Found by hash: every watch event of a pod looks it up. Never walked in its own order
    /// (the three queues keep theirs), so it keeps none: filing each pod in a tree of keys and
    /// taking it out again when it was popped were two descents of string comparisons per pod.
    pods: LookupSlots<ObjectKey, (QueuedPod, QueueName)>,
    active: BTreeSet<(Reverse<i64>, u64, ObjectKey)>,
    backoff: BTreeSet<(Millis, u64, ObjectKey)>,
    unschedulable: BTreeSet<ObjectKey>,
    seq: u64,
}

impl SchedulingQueue {
    /// An empty queue.
    pub fn new() -> SchedulingQueue {
        SchedulingQueue::default()
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn unlink(&mut self, key: &ObjectKey) -> Option<QueuedPod> {
        let (qp, at) = self.pods.remove(key)?;
        match at {
            QueueName::ActiveQ => {
                self.active
                    .remove(&(Reverse(qp.priority), qp.seq, key.clone()));
            }
            QueueName::BackoffQ => {
                self.backoff
                    .remove(&(qp.backoff_expiry(), qp.seq, key.clone()));
            }
            QueueName::UnschedulablePods => {
                self.unschedulable.remove(key);
            }
        }
        Some(qp)
    }

    fn link(&mut self, mut qp: QueuedPod, at: QueueName) {
        let key = qp.key.clone();
        match at {
            QueueName::ActiveQ => {
                qp.seq = self.next_seq();
                self.active
                    .insert((Reverse(qp.priority), qp.seq, key.clone()));
            }
            QueueName::BackoffQ => {
                self.backoff
                    .insert((qp.backoff_expiry(), qp.seq, key.clone()));
            }
            QueueName::UnschedulablePods => {
                self.unschedulable.insert(key.clone());
            }
        }
        self.pods.insert(key, (qp, at));
    }

    /// Adds a newly seen pending pod to activeQ. False if it was already queued.
    pub fn add(&mut self, key: ObjectKey, priority: i64) -> bool {
        if self.pods.contains_key(&key) {
            return false;
        }
        let qp = QueuedPod {
            key,
            priority,
            seq: 0,
            attempts: 0,
            failed_at: 0,
            unschedulable_plugins: BTreeSet::new(),
        };
        self.link(qp, QueueName::ActiveQ);
        true
    }

    /// Whether the pod waits in any queue.
    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.pods.contains_key(key)
    }

    /// Where the pod waits.
    pub fn location(&self, key: &ObjectKey) -> Option<(&QueuedPod, QueueName)> {
        self.pods.get(key).map(|(qp, at)| (qp, *at))
    }

    /// The pod activeQ would pop next.
    pub fn head(&self) -> Option<&ObjectKey> {
        self.active.first().map(|(_, _, k)| k)
    }

    /// Pops `key` if it is the head of activeQ, counting the attempt.
    pub fn pop_if_head(&mut self, key: &ObjectKey) -> Option<QueuedPod> {
        if self.head() != Some(key) {
            return None;
        }
        let (mut qp, at) = self.pods.remove(key)?;
        // The head is activeQ's first entry: taken from the front, where the search for its
        // (priority, seq, key) would descend the tree again (one search per pod scheduled).
        let first = self.active.pop_first();
        debug_assert!(at == QueueName::ActiveQ && first.is_some_and(|(_, s, _)| s == qp.seq));
        qp.attempts += 1;
        Some(qp)
    }

    /// Sends an activeQ pod to the back of its priority band, as if it had just entered
    /// activeQ (used when it was offered out of turn and must wait for the world's queue to
    /// come round to it again).
    pub fn send_to_back(&mut self, key: &ObjectKey) {
        if self
            .pods
            .get(key)
            .is_some_and(|(_, at)| *at == QueueName::ActiveQ)
        {
            if let Some(qp) = self.unlink(key) {
                self.link(qp, QueueName::ActiveQ);
            }
        }
    }

    /// A popped pod failed Filter: to unschedulablePods with the plugins that rejected it.
    pub fn add_unschedulable(
        &mut self,
        mut qp: QueuedPod,
        now: Millis,
        plugins: BTreeSet<&'static str>,
    ) {
        qp.failed_at = now;
        qp.unschedulable_plugins = plugins;
        self.unlink(&qp.key.clone());
        self.link(qp, QueueName::UnschedulablePods);
    }

    /// A popped pod hit an error (e.g. its binding failed): straight to backoffQ.
    pub fn add_backoff(&mut self, mut qp: QueuedPod, now: Millis) {
        qp.failed_at = now;
        qp.unschedulable_plugins.clear();
        self.unlink(&qp.key.clone());
        self.link(qp, QueueName::BackoffQ);
    }

    /// Forgets a pod (bound, deleted, or no longer ours).
    pub fn delete(&mut self, key: &ObjectKey) -> Option<QueuedPod> {
        self.unlink(key)
    }

    fn requeue(&mut self, key: &ObjectKey, now: Millis) -> Option<ObjectKey> {
        let qp = self.unlink(key)?;
        if qp.is_backing_off(now) {
            self.link(qp, QueueName::BackoffQ);
            None
        } else {
            self.link(qp, QueueName::ActiveQ);
            Some(key.clone())
        }
    }

    /// `MoveAllToActiveOrBackoffQueue`: every unschedulable pod for which `relevant` holds goes
    /// to backoffQ if still backing off, else to activeQ. Returns the pods that became active.
    pub fn move_unschedulable(
        &mut self,
        now: Millis,
        mut relevant: impl FnMut(&QueuedPod) -> bool,
    ) -> Vec<ObjectKey> {
        let keys: Vec<ObjectKey> = self
            .unschedulable
            .iter()
            .filter(|k| self.pods.get(*k).is_some_and(|(qp, _)| relevant(qp)))
            .cloned()
            .collect();
        keys.iter().filter_map(|k| self.requeue(k, now)).collect()
    }

    /// An unschedulable pod itself changed (e.g. gained a toleration): retry it.
    pub fn move_one(&mut self, key: &ObjectKey, now: Millis) -> Option<ObjectKey> {
        if self
            .pods
            .get(key)
            .is_some_and(|(_, at)| *at == QueueName::UnschedulablePods)
        {
            self.requeue(key, now)
        } else {
            None
        }
    }

    /// `flushBackoffQCompleted`: pods whose back-off ended go to activeQ. Returns them.
    pub fn flush_backoff(&mut self, now: Millis) -> Vec<ObjectKey> {
        let due: Vec<ObjectKey> = self
            .backoff
            .iter()
            .take_while(|(t, _, _)| *t <= now)
            .map(|(_, _, k)| k.clone())
            .collect();
        for k in &due {
            if let Some(qp) = self.unlink(k) {
                self.link(qp, QueueName::ActiveQ);
            }
        }
        due
    }

    /// `flushUnschedulablePodsLeftover`: pods unschedulable for longer than 5 minutes are
    /// retried whatever happened. Returns the pods that became active.
    pub fn flush_unschedulable_leftover(&mut self, now: Millis) -> Vec<ObjectKey> {
        self.move_unschedulable(now, |qp| {
            now.saturating_sub(qp.failed_at) > POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
        })
    }

    /// When the earliest back-off ends.
    pub fn next_backoff_expiry(&self) -> Option<Millis> {
        self.backoff.first().map(|(t, _, _)| *t)
    }

    /// Every queued pod, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.pods.keys()
    }

    /// activeQ's pods, in pop order.
    pub fn active_keys(&self) -> Vec<ObjectKey> {
        self.active.iter().map(|(_, _, k)| k.clone()).collect()
    }

    /// How many pods wait in each queue: (activeQ, backoffQ, unschedulablePods).
    pub fn lens(&self) -> (usize, usize, usize) {
        (
            self.active.len(),
            self.backoff.len(),
            self.unschedulable.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::Kind;

    fn key(n: &str) -> ObjectKey {
        ObjectKey::new(Kind::Pod, "default", n)
    }

    #[test]
    fn backoff_doubles_from_one_second_to_a_ten_second_cap() {
        let got: Vec<Millis> = (1..=7).map(backoff_duration).collect();
        assert_eq!(
            got,
            vec![1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]
        );
    }

    #[test]
    fn active_queue_pops_higher_priority_first_then_in_arrival_order() {
        let mut q = SchedulingQueue::new();
        q.add(key("low-1"), 0);
        q.add(key("high"), 1000);
        q.add(key("low-2"), 0);
        assert_eq!(
            q.active_keys(),
            vec![key("high"), key("low-1"), key("low-2")]
        );
        assert!(
            q.pop_if_head(&key("low-1")).is_none(),
            "only the head can be popped"
        );
        assert_eq!(q.pop_if_head(&key("high")).map(|p| p.attempts), Some(1));
    }

    #[test]
    fn a_failed_pod_waits_out_its_backoff_after_an_event_moves_it() {
        // Each attempt fails at `t`; an event right after moves the pod to backoffQ; it becomes
        // active exactly when 1 s, 2 s, 4 s, 8 s, 10 s, 10 s have passed.
        let mut q = SchedulingQueue::new();
        q.add(key("web"), 0);
        let mut t = 0;
        for want in [1_000, 2_000, 4_000, 8_000, 10_000, 10_000] {
            let qp = q.pop_if_head(&key("web")).expect("web is the head");
            q.add_unschedulable(qp, t, [super::super::plugins::NODE_RESOURCES_FIT].into());
            assert_eq!(
                q.location(&key("web")).map(|(_, at)| at),
                Some(QueueName::UnschedulablePods)
            );
            assert!(
                q.move_unschedulable(t + 1, |_| true).is_empty(),
                "still backing off"
            );
            assert_eq!(
                q.location(&key("web")).map(|(_, at)| at),
                Some(QueueName::BackoffQ)
            );
            assert_eq!(q.next_backoff_expiry(), Some(t + want));
            assert!(q.flush_backoff(t + want - 1).is_empty());
            assert_eq!(q.flush_backoff(t + want), vec![key("web")]);
            t += want;
        }
    }

    #[test]
    fn an_event_after_the_backoff_moves_the_pod_straight_to_active() {
        let mut q = SchedulingQueue::new();
        q.add(key("web"), 0);
        let qp = q.pop_if_head(&key("web")).expect("head");
        q.add_unschedulable(qp, 0, BTreeSet::new());
        assert_eq!(q.move_unschedulable(5_000, |_| true), vec![key("web")]);
        assert_eq!(q.head(), Some(&key("web")));
    }

    #[test]
    fn unschedulable_pods_are_flushed_after_five_minutes() {
        let mut q = SchedulingQueue::new();
        q.add(key("web"), 0);
        let qp = q.pop_if_head(&key("web")).expect("head");
        q.add_unschedulable(qp, 0, BTreeSet::new());
        assert!(q.flush_unschedulable_leftover(300_000).is_empty());
        assert_eq!(q.flush_unschedulable_leftover(300_001), vec![key("web")]);
    }
}
