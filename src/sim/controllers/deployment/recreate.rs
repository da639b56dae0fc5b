//! `recreate.go`: the Recreate strategy: every old pod gone before the new ReplicaSet scales up.

use super::*;
use crate::sort::CollectTree;

impl DeploymentSync<'_> {
    /// `rolloutRecreate`: old ReplicaSets to 0, wait until no old pod runs, then the new one at
    /// full size.
    pub(super) fn rollout_recreate(&mut self) -> Result<(), String> {
        // Not created yet: creating first would scale up before scaling down.
        let (mut new, mut old) = self.get_all(false)?;
        let active_old: Vec<usize> = old
            .iter()
            .copied()
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        let mut scaled_down = false;
        for i in active_old {
            scaled_down |= self.scale_and_record(i, 0);
        }
        if scaled_down {
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        if self.old_pods_running(new, &old) {
            self.notes.push("wait for old pods to terminate".into());
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        if new.is_none() {
            (new, old) = self.get_all(true)?;
        }
        let new_i = new.ok_or_else(|| "no new replica set after creation".to_string())?;
        let desired = util::replicas(&self.d);
        self.scale_and_record(new_i, desired);
        if util::deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old);
        }
        self.sync_rollout_status(new, &old);
        Ok(())
    }

    /// `oldPodsRunning`: an old ReplicaSet reports pods, or an old pod is not Succeeded/Failed
    /// (terminating pods count: they may still be running).
    pub(super) fn old_pods_running(&self, new: Option<usize>, old: &[usize]) -> bool {
        if old
            .iter()
            .map(|&i| self.rss[i].orig.status.replicas)
            .sum::<i32>()
            > 0
        {
            return true;
        }
        let new_uid = new.map(|i| self.rss[i].orig.metadata.uid.as_str());
        let uids: BTreeSet<&str> = self
            .rss
            .iter()
            .filter(|w| !w.created)
            .map(|w| w.orig.metadata.uid.as_str())
            .collect_set();
        self.cache
            .list_ns(Kind::Pod, &self.orig.metadata.namespace)
            .filter_map(|o| o.as_pod())
            .filter(|p| self.orig.spec.selector.matches(&p.metadata.labels))
            .filter_map(|p| p.metadata.controller_ref().map(|r| (p, r.uid.as_str())))
            .filter(|(_, uid)| uids.contains(uid) && Some(*uid) != new_uid)
            .any(|(p, _)| p.status.phase != "Failed" && p.status.phase != "Succeeded")
    }

    // ------------------------------------------------------------ legacy rollback
}
