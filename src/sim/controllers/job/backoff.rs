//! The Job controller's failure back-off: a replacement pod waits 10 s · 2^(n−1), capped at
//! 10 minutes, after the last of the n failures since the last success (`backoff_utils.go`).
//!
//! Upstream keeps the count in memory (`podBackoffStore`); the playground reads it from the
//! Job's pods, which stay in the cache once finished, so a restarted controller waits the same.

use super::{finished_time, has_finalizer, is_failed};
use crate::sim::api::apiextensions::CustomObject;
use crate::sim::api::types::{Millis, Pod};

/// `DefaultJobPodFailureBackOff`.
pub const POD_FAILURE_BACKOFF: Millis = 10_000;
/// `MaxJobPodFailureBackOff`.
pub const MAX_POD_FAILURE_BACKOFF: Millis = 600_000;

/// The back-off after `failures` consecutive failures.
pub fn backoff_for(failures: u32) -> Millis {
    if failures == 0 {
        return 0;
    }
    let shift = (failures - 1).min(16);
    (POD_FAILURE_BACKOFF << shift).min(MAX_POD_FAILURE_BACKOFF)
}

/// How long the next pod must still wait, if it must.
pub fn remaining_backoff(job: &CustomObject, pods: &[&Pod], now: Millis) -> Option<Millis> {
    let last_success = pods
        .iter()
        .filter(|p| p.status.phase == "Succeeded")
        .map(|p| finished_time(p))
        .max();
    // A pod the controller deleted itself lost its finalizer first: not a failure.
    let failures: Vec<Millis> = pods
        .iter()
        .filter(|p| p.status.phase == "Failed" || (is_failed(p, job) && has_finalizer(p)))
        .map(|p| finished_time(p))
        .filter(|t| last_success.is_none_or(|s| *t > s))
        .collect();
    let last = failures.iter().copied().max()?;
    let wait = (last + backoff_for(failures.len() as u32)).checked_sub(now)?;
    (wait > 0).then_some(wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_doubles_from_ten_seconds_to_its_ten_minute_cap() {
        let steps: Vec<Millis> = (0..9).map(backoff_for).collect();
        assert_eq!(
            steps,
            [0, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000]
        );
    }
}
