//! client-go's `flowcontrol.Backoff`, as the kubelet uses it for CrashLoopBackOff and
//! ImagePullBackOff: per-container exponential back-off whose entries expire.

use super::*;
use crate::vec_map::VecMap;

/// client-go's `flowcontrol.Backoff`: per-key exponential back-off whose entries expire.
#[derive(Clone, Debug, Default)]
pub(super) struct Backoff {
    entries: VecMap<String, BackoffEntry>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct BackoffEntry {
    backoff: Millis,
    last_update: Millis,
}

/// After 2 × max without an update an entry starts over ("stable for twice the max").
pub(super) fn backoff_expired(event_time: Millis, last_update: Millis) -> bool {
    event_time.saturating_sub(last_update) > 2 * BACKOFF_MAX
}

impl Backoff {
    pub(super) fn get(&self, id: &str) -> Millis {
        self.entries.get(id).map_or(0, |e| e.backoff)
    }

    pub(super) fn next(&mut self, id: &str, event_time: Millis, now: Millis) {
        let backoff = match self.entries.get(id) {
            Some(e) if !backoff_expired(event_time, e.last_update) => {
                (e.backoff * 2).min(BACKOFF_MAX)
            }
            _ => BACKOFF_INITIAL,
        };
        self.entries.insert(
            id.to_string(),
            BackoffEntry {
                backoff,
                last_update: now,
            },
        );
    }

    /// True while less than the back-off has passed since `event_time` (a container's exit).
    pub(super) fn in_backoff_since(&self, id: &str, event_time: Millis, now: Millis) -> bool {
        self.entries.get(id).is_some_and(|e| {
            !backoff_expired(event_time, e.last_update)
                && now.saturating_sub(event_time) < e.backoff
        })
    }

    /// True while less than the back-off has passed since the last failure (image pulls).
    pub(super) fn in_backoff_since_update(&self, id: &str, now: Millis) -> bool {
        self.entries.get(id).is_some_and(|e| {
            !backoff_expired(now, e.last_update) && now.saturating_sub(e.last_update) < e.backoff
        })
    }

    pub(super) fn retry_at(&self, id: &str) -> Option<Millis> {
        self.entries.get(id).map(|e| e.last_update + e.backoff)
    }

    pub(super) fn forget_prefix(&mut self, prefix: &str) {
        self.entries.retain(|k, _| !k.starts_with(prefix));
    }
}
