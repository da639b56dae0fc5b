//! Where the event queue's events wait: a slab in fixed-size chunks that never moves what it holds.
//!
//! A 10,000-pod rollout had 65,536 events queued at its peak, before watch deliveries waited in
//! their recipients' lines (`lines.rs`). In one `Vec` that doubles, the step that queued the
//! 65,537th copied all of them (11 MB) into fresh memory the kernel had to zero: one step of
//! 20 ms, a dropped frame in the page. Chunks grow one at a time and stay where they are, so no
//! step pays for the ones before it.

/// Slots per chunk: a chunk of the queue's events is about 180 kB.
const CHUNK: usize = 1024;

/// Values by slot number. Freed slots are reused, the last freed first: deterministic, and never
/// observable (the queue orders events by time and sequence number, not slot).
#[derive(Clone, Debug)]
pub(super) struct Slab<T> {
    chunks: Vec<Vec<Option<T>>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            chunks: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value` and returns its slot.
    #[inline]
    pub(super) fn insert(&mut self, value: T) -> u32 {
        if let Some(i) = self.free.pop() {
            self.chunks[i as usize / CHUNK][i as usize % CHUNK] = Some(value);
            return i;
        }
        let full = self.chunks.last().is_none_or(|c| c.len() == CHUNK);
        if full {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let n = self.chunks.len();
        let chunk = &mut self.chunks[n - 1];
        chunk.push(Some(value));
        ((n - 1) * CHUNK + chunk.len() - 1) as u32
    }

    /// Takes the value out of `slot`, freeing the slot; None when it holds nothing.
    #[inline]
    pub(super) fn take(&mut self, slot: u32) -> Option<T> {
        let cell = self
            .chunks
            .get_mut(slot as usize / CHUNK)?
            .get_mut(slot as usize % CHUNK)?;
        let value = cell.take();
        if value.is_some() {
            self.free.push(slot);
        }
        value
    }

    /// The value in `slot`, if it holds one.
    #[inline]
    pub(super) fn get(&self, slot: u32) -> Option<&T> {
        self.chunks
            .get(slot as usize / CHUNK)?
            .get(slot as usize % CHUNK)?
            .as_ref()
    }

    /// Every value held, in slot order.
    pub(super) fn values(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten().flatten()
    }

    /// Slots in use or freed for reuse: how far the slab has grown.
    #[cfg(test)]
    fn grown(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_slots_across_chunks_and_freed_slots_are_reused_last_freed_first() {
        let mut s = Slab::default();
        let slots: Vec<u32> = (0..2 * CHUNK + 5).map(|i| s.insert(i)).collect();
        assert_eq!(slots, (0..(2 * CHUNK + 5) as u32).collect::<Vec<_>>());
        assert_eq!(s.take(3), Some(3));
        assert_eq!(s.take(3), None, "taken already");
        assert_eq!(s.get(3), None);
        assert_eq!(s.get(4), Some(&4));
        assert_eq!(s.take(CHUNK as u32 + 1), Some(CHUNK + 1));
        assert_eq!(s.take(99_999), None, "never grown that far");
        assert_eq!(s.insert(7_000), CHUNK as u32 + 1);
        assert_eq!(s.insert(7_001), 3);
        assert_eq!(
            s.insert(7_002),
            (2 * CHUNK + 5) as u32,
            "then the end again"
        );
        assert_eq!(s.grown(), 2 * CHUNK + 6);
        assert_eq!(s.values().count(), 2 * CHUNK + 6);
        assert_eq!(s.values().nth(3), Some(&7_001));
    }

    #[test]
    fn growing_never_moves_a_value_already_held() {
        let mut s = Slab::default();
        s.insert(String::from("first"));
        let before = s.chunks[0].as_ptr();
        for i in 0..10 * CHUNK {
            s.insert(i.to_string());
        }
        assert_eq!(s.chunks[0].as_ptr(), before);
    }
}
