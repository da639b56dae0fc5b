//! `progress.go`: the Progressing and ReplicaFailure conditions, and the requeue that notices a
//! rollout past its `progressDeadlineSeconds`.

use super::*;

impl DeploymentSync<'_> {
    /// `syncRolloutStatus`: status plus the Progressing condition and the progress-deadline timer.
    pub(super) fn sync_rollout_status(&mut self, new: Option<usize>, old: &[usize]) {
        let mut ns = self.calculate_status(new, old);
        let d = &self.d;
        if !util::has_progress_deadline(d) {
            util::remove_condition(&mut ns, "Progressing");
        }
        let current = util::get_condition(&d.status, "Progressing").cloned();
        let complete_already = ns.replicas == ns.updated_replicas
            && current
                .as_ref()
                .is_some_and(|c| c.reason.as_deref() == Some(util::NEW_RS_AVAILABLE_REASON));
        let new_name = new.map(|i| self.rss[i].rs.metadata.name.clone());
        let subject = |what: &str| match &new_name {
            Some(n) => format!("ReplicaSet \"{n}\" {what}"),
            None => format!("Deployment \"{}\" {what}", d.metadata.name),
        };
        if util::has_progress_deadline(d) && !complete_already {
            if util::deployment_complete(d, &ns) {
                let c = util::new_condition(
                    "Progressing",
                    "True",
                    util::NEW_RS_AVAILABLE_REASON,
                    subject("has successfully progressed."),
                    self.now,
                );
                util::set_deployment_condition(&mut ns, c);
            } else if util::deployment_progressing(d, &ns) {
                let mut c = util::new_condition(
                    "Progressing",
                    "True",
                    util::REPLICA_SET_UPDATED_REASON,
                    subject("is progressing."),
                    self.now,
                );
                // Progress refreshes lastUpdateTime even with the same reason, which
                // SetDeploymentCondition alone would not do.
                if let Some(cur) = &current {
                    if cur.status == "True" {
                        c.last_transition_time = cur.last_transition_time;
                    }
                    util::remove_condition(&mut ns, "Progressing");
                }
                util::set_deployment_condition(&mut ns, c);
            } else if util::deployment_timed_out(d, &ns, self.now) {
                let c = util::new_condition(
                    "Progressing",
                    "False",
                    util::TIMED_OUT_REASON,
                    subject("has timed out progressing."),
                    self.now,
                );
                util::set_deployment_condition(&mut ns, c);
            }
        }
        match self.replica_failures(new, old).into_iter().next() {
            Some(c) => util::set_deployment_condition(&mut ns, c),
            None => util::remove_condition(&mut ns, "ReplicaFailure"),
        }
        if ns == self.d.status {
            self.requeue_stuck_deployment(&ns);
            return;
        }
        self.d.status = ns;
    }

    /// `getReplicaFailures`: the new ReplicaSet's ReplicaFailure condition, else any old one's.
    pub(super) fn replica_failures(&self, new: Option<usize>, old: &[usize]) -> Vec<Condition> {
        let convert = |c: &Condition| Condition {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
            last_transition_time: c.last_transition_time,
            last_update_time: c.last_transition_time,
            ..Default::default()
        };
        let of = |i: usize| -> Vec<Condition> {
            self.rss[i]
                .orig
                .status
                .conditions
                .iter()
                .filter(|c| c.type_ == "ReplicaFailure")
                .map(convert)
                .collect()
        };
        if let Some(found) = new.map(of).filter(|v| !v.is_empty()) {
            return found;
        }
        old.iter().copied().chain(new).flat_map(of).collect()
    }

    /// `requeueStuckDeployment`: look again one second after the progress deadline would pass.
    pub(super) fn requeue_stuck_deployment(&mut self, ns: &DeploymentStatus) {
        let d = &self.d;
        let Some(cur) = util::get_condition(&d.status, "Progressing") else {
            return;
        };
        if !util::has_progress_deadline(d)
            || util::deployment_complete(d, ns)
            || cur.reason.as_deref() == Some(util::TIMED_OUT_REASON)
        {
            return;
        }
        let deadline_at = cur.last_update_time.map_or(0, |t| t.0) + util::deadline_ms(d);
        let after = deadline_at as i64 - self.now as i64;
        // A finished rollout whose pods later became unavailable keeps NewReplicaSetAvailable,
        // which the timeout check skips, so its deadline passes and never times out: upstream
        // then re-queues it rate-limited after every pass for as long as it stays unavailable.
        // Each successful pass forgets the per-item back-off, so the pace is the controller
        // queue's shared token bucket (10 per second). A 1 ms requeue here reconciled such a
        // Deployment 500 times a simulated second, for hours.
        if after < 0 && cur.reason.as_deref() == Some(util::NEW_RS_AVAILABLE_REASON) {
            self.requeue = Some(QUEUE_BUCKET_INTERVAL_MS);
            return;
        }
        // Less than a second left: Kubernetes re-queues rate-limited (ms); the first look after
        // the deadline is what matters.
        self.requeue = Some(if after < 1000 {
            (after.max(0) + 1) as Millis
        } else {
            after as Millis + 1000
        });
    }

    // ------------------------------------------------------------ RollingUpdate
}
