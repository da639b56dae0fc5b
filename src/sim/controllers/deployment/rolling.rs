//! `rolling.go`: the RollingUpdate strategy, within maxSurge and maxUnavailable.

use super::*;

impl DeploymentSync<'_> {
    /// `rolloutRolling`: at most one of "scale the new ReplicaSet up" and "scale old ones down".
    pub(super) fn rollout_rolling(&mut self) -> Result<(), String> {
        let (new, old) = self.get_all(true)?;
        let new_i = new.ok_or_else(|| "no new replica set after creation".to_string())?;
        if self.reconcile_new_replica_set(new_i, &old)? {
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        let active_old: Vec<usize> = old
            .iter()
            .copied()
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        if self.reconcile_old_replica_sets(new_i, &old, &active_old) {
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        if util::deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old);
        }
        self.sync_rollout_status(new, &old);
        Ok(())
    }

    /// `reconcileNewReplicaSet`.
    pub(super) fn reconcile_new_replica_set(
        &mut self,
        new: usize,
        old: &[usize],
    ) -> Result<bool, String> {
        let desired = util::replicas(&self.d);
        let cur = self.spec_replicas(new);
        if cur == desired {
            return Ok(false);
        }
        if cur > desired {
            return Ok(self.scale_and_record(new, desired));
        }
        let count = {
            let all: Vec<&ReplicaSet> = old
                .iter()
                .copied()
                .chain([new])
                .map(|i| self.working(i))
                .collect();
            util::new_rs_new_replicas(&self.d, &all, self.working(new))?
        };
        Ok(self.scale_and_record(new, count))
    }

    /// `reconcileOldReplicaSets`: never below `replicas − maxUnavailable` available, counting the
    /// new ReplicaSet's unavailable pods against the budget.
    pub(super) fn reconcile_old_replica_sets(
        &mut self,
        new: usize,
        old: &[usize],
        active_old: &[usize],
    ) -> bool {
        let old_count: i32 = active_old.iter().map(|&i| self.spec_replicas(i)).sum();
        if old_count == 0 {
            return false;
        }
        let all_count: i32 = old
            .iter()
            .copied()
            .chain([new])
            .map(|i| self.spec_replicas(i))
            .sum();
        let min_available = util::replicas(&self.d) - util::max_unavailable(&self.d);
        let new_unavailable = self.spec_replicas(new) - self.working(new).status.available_replicas;
        let max_scaled_down = all_count - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return false;
        }
        // The Go code swallows these errors and reports "nothing scaled".
        let Ok(cleaned) = self.cleanup_unhealthy_replicas(active_old, max_scaled_down) else {
            return false;
        };
        let Ok(scaled) = self.scale_down_old_replica_sets_for_rolling_update(new, active_old)
        else {
            return false;
        };
        cleaned + scaled > 0
    }

    /// `cleanupUnhealthyReplicas`: oldest first, drop replicas that are not available anyway.
    pub(super) fn cleanup_unhealthy_replicas(
        &mut self,
        active_old: &[usize],
        max_cleanup: i32,
    ) -> Result<i32, String> {
        let mut olds = active_old.to_vec();
        olds.stable_sort_by(|&a, &b| util::cmp_by_creation(self.working(a), self.working(b)));
        let mut total = 0;
        for i in olds {
            if total >= max_cleanup {
                break;
            }
            let spec = self.spec_replicas(i);
            let available = self.working(i).status.available_replicas;
            if spec == 0 || spec == available {
                continue;
            }
            let down = (max_cleanup - total).min(spec - available);
            let new_count = spec - down;
            if new_count > spec {
                let rs = self.working(i);
                return Err(format!(
                    "when cleaning up unhealthy replicas, got invalid request to scale down {}/{} {spec} -> {new_count}",
                    rs.metadata.namespace, rs.metadata.name
                ));
            }
            self.scale_and_record(i, new_count);
            total += down;
        }
        Ok(total)
    }

    /// `scaleDownOldReplicaSetsForRollingUpdate`: oldest first, only what availability allows.
    pub(super) fn scale_down_old_replica_sets_for_rolling_update(
        &mut self,
        new: usize,
        active_old: &[usize],
    ) -> Result<i32, String> {
        let min_available = util::replicas(&self.d) - util::max_unavailable(&self.d);
        let available: i32 = active_old
            .iter()
            .copied()
            .chain([new])
            .map(|i| self.working(i).status.available_replicas)
            .sum();
        if available <= min_available {
            return Ok(0);
        }
        let mut olds = active_old.to_vec();
        olds.stable_sort_by(|&a, &b| util::cmp_by_creation(self.working(a), self.working(b)));
        let to_scale = available - min_available;
        let mut total = 0;
        for i in olds {
            if total >= to_scale {
                break;
            }
            let spec = self.spec_replicas(i);
            if spec == 0 {
                continue;
            }
            let down = spec.min(to_scale - total);
            let new_count = spec - down;
            if new_count > spec {
                let rs = self.working(i);
                return Err(format!(
                    "when scaling down old replica set, got invalid request to scale down {}/{} {spec} -> {new_count}",
                    rs.metadata.namespace, rs.metadata.name
                ));
            }
            self.scale_and_record(i, new_count);
            total += down;
        }
        Ok(total)
    }

    // ------------------------------------------------------------ Recreate
}
