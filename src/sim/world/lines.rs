//! Watch deliveries waiting for their recipient, one line per watcher in the order they fall due, so the world's queue holds one slot per watcher with something on its way rather than one per delivery.
//!
//! A watch stream delivers in order: each delivery to a watcher is due no earlier than the one
//! before it, and it was queued later, so a line is sorted by (time, sequence number) as it is
//! appended to. The queue needs only each line's first delivery to pop every event in exactly
//! the order it popped them one slot each. 10,000 pods created at once are 170,000 deliveries:
//! 32 bytes each here natively and 24 in the page, where a slot of the queue and its heap entry
//! took 104 natively.

use std::collections::VecDeque;
use std::rc::Rc;

use crate::sim::api::types::Millis;
use crate::sim::api::WatchEvent;
use crate::sim::machinery::controller::ComponentId;

/// One delivery on its way: when it falls due, its sequence number in the world's queue, the
/// recipient's process generation it was sent to, and the change, shared by all its recipients.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    pub(super) at: Millis,
    pub(super) seq: u64,
    pub(super) gen: u32,
    pub(super) event: Rc<WatchEvent>,
}

/// The deliveries on their way to one watcher.
#[derive(Clone, Debug)]
struct Line {
    to: ComponentId,
    pending: VecDeque<Pending>,
}

/// Every watcher process's line, numbered as they were opened. A component keeps its line for
/// its life ([`Lines::open`] when it is made); one made again under the same id (a node deleted
/// and registered again) opens another, so what was on its way to the old one stays in order
/// in the old line, and is dropped when it falls due, as it always was.
#[derive(Clone, Debug, Default)]
pub(super) struct Lines {
    lines: Vec<Line>,
    /// Deliveries waiting in all lines.
    waiting: usize,
    /// Lines with a delivery waiting: each has one slot in the world's queue.
    busy: usize,
}

impl Lines {
    /// A new, empty line for deliveries to `to`.
    pub(super) fn open(&mut self, to: ComponentId) -> u32 {
        self.lines.push(Line {
            to,
            pending: VecDeque::new(),
        });
        u32::try_from(self.lines.len() - 1).expect("fewer than 2^32 watchers")
    }

    /// Appends `p` to line `n`, which must not hold a delivery due after it (a component's
    /// deliveries are due in the order they are sent: see `Component::last_delivery`). True
    /// when it is the line's first: the world's queue then needs a slot for the line, due with it.
    pub(super) fn push(&mut self, n: u32, p: Pending) -> bool {
        let line = &mut self.lines[n as usize];
        debug_assert!(
            line.pending
                .back()
                .is_none_or(|last| (last.at, last.seq) < (p.at, p.seq)),
            "deliveries to {} queued out of order",
            line.to
        );
        line.pending.push_back(p);
        self.waiting += 1;
        let first = line.pending.len() == 1;
        self.busy += usize::from(first);
        first
    }

    /// Takes the first delivery of line `n`, with its recipient.
    pub(super) fn pop(&mut self, n: u32) -> Option<(ComponentId, Pending)> {
        let line = self.lines.get_mut(n as usize)?;
        let p = line.pending.pop_front()?;
        self.waiting -= 1;
        self.busy -= usize::from(line.pending.is_empty());
        Some((line.to.clone(), p))
    }

    /// When line `n`'s first delivery falls due (time and sequence number), if it holds one.
    pub(super) fn next_due(&self, n: u32) -> Option<(Millis, u64)> {
        let p = self.lines.get(n as usize)?.pending.front()?;
        Some((p.at, p.seq))
    }

    /// Gives back the room of line `n`, drained, whose component is gone or made again with a
    /// line of its own: nothing is sent to it any more.
    pub(super) fn retire(&mut self, n: u32) {
        if let Some(line) = self.lines.get_mut(n as usize) {
            debug_assert!(line.pending.is_empty(), "retired with deliveries waiting");
            line.pending = VecDeque::new();
        }
    }

    /// How many deliveries line `n` has room for without growing.
    #[cfg(test)]
    pub(super) fn room(&self, n: u32) -> usize {
        self.lines
            .get(n as usize)
            .map_or(0, |l| l.pending.capacity())
    }

    /// Deliveries waiting, and how many lines they wait in.
    pub(super) fn counts(&self) -> (usize, usize) {
        (self.waiting, self.busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::{Object, Str};
    use crate::sim::api::WatchEventType;

    fn pending(at: Millis, seq: u64) -> Pending {
        let obj = Rc::new(Object::Pod(Default::default()));
        Pending {
            at,
            seq,
            gen: 0,
            event: Rc::new(WatchEvent::new(WatchEventType::Added, obj, seq, 0)),
        }
    }

    fn kubelet(n: &str) -> ComponentId {
        ComponentId::Kubelet(Str::from(n))
    }

    #[test]
    fn a_line_asks_for_a_queue_slot_only_when_its_first_delivery_arrives() {
        let mut l = Lines::default();
        let a = l.open(kubelet("a"));
        let b = l.open(kubelet("b"));
        assert!(l.push(a, pending(5, 1)), "first in its line");
        assert!(!l.push(a, pending(5, 3)), "behind it");
        assert!(l.push(b, pending(2, 4)), "first in another line");
        assert_eq!(l.counts(), (3, 2));
        let (to, p) = l.pop(a).expect("waiting");
        assert_eq!((to, p.at, p.seq), (kubelet("a"), 5, 1));
        assert_eq!(l.next_due(a), Some((5, 3)));
        let (_, p) = l.pop(a).expect("waiting");
        assert_eq!((p.seq, l.next_due(a)), (3, None));
        assert!(l.pop(a).is_none(), "the line is empty");
        assert_eq!(l.counts(), (1, 1));
        assert!(
            l.push(a, pending(9, 7)),
            "the same line again, its slot asked for again"
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "queued out of order")]
    fn a_delivery_due_before_the_end_of_its_line_is_a_bug() {
        let mut l = Lines::default();
        let a = l.open(kubelet("a"));
        l.push(a, pending(10, 1));
        l.push(a, pending(4, 2));
    }
}
