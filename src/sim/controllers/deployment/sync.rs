//! `sync.go`: paused conditions, the ReplicaSets of a Deployment and its new one, proportional
//! scaling, the history clean-up, and the status computed from the ReplicaSets.

use super::*;

impl DeploymentSync<'_> {
    /// `checkPausedConditions`: Progressing=Unknown on pause/resume, unless already timed out.
    pub(super) fn check_paused_conditions(&mut self) {
        if !util::has_progress_deadline(&self.d) {
            return;
        }
        let cond = util::get_condition(&self.d.status, "Progressing");
        if cond.is_some_and(|c| c.reason.as_deref() == Some(util::TIMED_OUT_REASON)) {
            return;
        }
        let paused_cond =
            cond.is_some_and(|c| c.reason.as_deref() == Some(util::PAUSED_DEPLOY_REASON));
        if self.d.spec.paused && !paused_cond {
            self.set_condition(
                "Progressing",
                "Unknown",
                util::PAUSED_DEPLOY_REASON,
                "Deployment is paused".into(),
            );
        } else if !self.d.spec.paused && paused_cond {
            self.set_condition(
                "Progressing",
                "Unknown",
                util::RESUMED_DEPLOY_REASON,
                "Deployment is resumed".into(),
            );
        }
    }

    /// `getAllReplicaSetsAndSyncRevision`: (new, all old) with the new one's revision synced.
    pub(super) fn get_all(&mut self, create: bool) -> Result<(Option<usize>, Vec<usize>), String> {
        let found = self.find_new();
        let old: Vec<usize> = (0..self.rss.len()).filter(|i| Some(*i) != found).collect();
        let new = self.get_new_replica_set(&old, create)?;
        self.view = Some((new, old.clone()));
        Ok((new, old))
    }

    pub(super) fn find_new(&self) -> Option<usize> {
        let refs: Vec<&ReplicaSet> = self.rss.iter().map(|w| &w.rs).collect();
        util::find_new_replica_set(&self.d, &refs)
    }

    /// `getNewReplicaSet`: syncs the existing new ReplicaSet's annotations and the Deployment's
    /// revision, or creates the new ReplicaSet (`<name>-<hash>`) when asked to.
    pub(super) fn get_new_replica_set(
        &mut self,
        old: &[usize],
        create: bool,
    ) -> Result<Option<usize>, String> {
        let existing = self.find_new();
        let max_old = util::max_revision(old.iter().map(|&i| &self.rss[i].rs));
        let new_revision = (max_old + 1).to_string();
        if let Some(i) = existing {
            let mut copy = self.working(i).clone();
            let annotations = util::set_new_replica_set_annotations(
                &self.d,
                &mut copy,
                &new_revision,
                true,
                util::MAX_REV_HISTORY_LENGTH_IN_CHARS,
            );
            let min_ready = copy.spec.min_ready_seconds != self.d.spec.min_ready_seconds;
            if annotations || min_ready {
                copy.spec.min_ready_seconds = self.d.spec.min_ready_seconds;
                self.notes
                    .push(format!("sync annotations of {}", copy.metadata.name));
                self.write_rs(i, copy);
                return Ok(Some(i));
            }
            let revision = copy
                .metadata
                .annotations
                .get(util::REVISION_ANNOTATION)
                .cloned()
                .unwrap_or_default();
            util::set_deployment_revision(&mut self.d, &revision);
            if util::has_progress_deadline(&self.d)
                && util::get_condition(&self.d.status, "Progressing").is_none()
            {
                let msg = format!("Found new replica set \"{}\"", copy.metadata.name);
                self.set_condition("Progressing", "True", util::FOUND_NEW_RS_REASON, msg);
            }
            return Ok(Some(i));
        }
        if !create {
            return Ok(None);
        }

        let d = self.orig;
        let mut template = self.d.spec.template.clone();
        let hash = util::compute_hash(&template, self.d.status.collision_count);
        template
            .metadata
            .labels
            .insert(util::POD_TEMPLATE_HASH_LABEL, hash.clone());
        let name = format!("{}-{hash}", d.metadata.name);
        let mut rs = ReplicaSet::default();
        rs.metadata.name = name.as_str().into();
        rs.metadata.namespace = d.metadata.namespace.clone();
        rs.metadata.owner_references = vec![util::controller_ref(d)];
        rs.metadata.labels = template.metadata.labels.clone();
        rs.spec.replicas = Some(0);
        rs.spec.min_ready_seconds = self.d.spec.min_ready_seconds;
        rs.spec.selector = util::selector_with_hash(&self.d.spec.selector, &hash);
        rs.spec.template = template;
        let count = {
            let all: Vec<&ReplicaSet> = old
                .iter()
                .map(|&i| self.working(i))
                .chain(std::iter::once(&rs))
                .collect();
            util::new_rs_new_replicas(&self.d, &all, &rs)?
        };
        rs.spec.replicas = Some(count);
        util::set_new_replica_set_annotations(
            &self.d,
            &mut rs,
            &new_revision,
            false,
            util::MAX_REV_HISTORY_LENGTH_IN_CHARS,
        );

        if let Some(failed) = self.failed_create.take().filter(|f| f.rs_name == name) {
            match failed.failure {
                CreateFailure::AlreadyExists => {
                    let key = ObjectKey::new(Kind::ReplicaSet, &d.metadata.namespace, &name);
                    let Some(found) = self.cache.get(&key).and_then(|o| o.as_replica_set()) else {
                        // Created but not yet in our cache: retry once the informer catches up.
                        return Err(format!("replicaset.apps \"{name}\" not found"));
                    };
                    if util::is_controlled_by(found, d)
                        && util::equal_ignore_hash(&self.d.spec.template, &found.spec.template)
                    {
                        let i = self.rss.len();
                        self.rss.push(WorkRs::cached(found));
                        util::set_deployment_revision(&mut self.d, &new_revision);
                        return Ok(Some(i));
                    }
                    // A different template hashed to the same name: bump collisionCount so the
                    // next attempt hashes differently.
                    let count = self.d.status.collision_count.unwrap_or(0).saturating_add(1);
                    self.d.status.collision_count = Some(count);
                    self.notes.push(format!(
                        "hash collision on {name}: collisionCount → {count}"
                    ));
                    return Err(ApiError::already_exists(Kind::ReplicaSet, &name).message);
                }
                CreateFailure::Other(err) => {
                    let msg = format!("Failed to create new replica set \"{name}\": {err}");
                    if util::has_progress_deadline(&self.d) {
                        self.set_condition(
                            "Progressing",
                            "False",
                            util::FAILED_RS_CREATE_REASON,
                            msg.clone(),
                        );
                    }
                    self.warning(util::FAILED_RS_CREATE_REASON, msg);
                    return Err(err);
                }
            }
        }

        let i = self.rss.len();
        self.rss.push(WorkRs {
            orig: rs.clone(),
            rs,
            adopted: false,
            created: true,
        });
        if count > 0 {
            self.on_write(
                Some(i),
                "ScalingReplicaSet",
                format!("Scaled up replica set {name} from 0 to {count}"),
            );
        }
        self.notes.push(format!("create {name} at {count}"));
        util::set_deployment_revision(&mut self.d, &new_revision);
        if util::has_progress_deadline(&self.d) {
            self.set_condition(
                "Progressing",
                "True",
                util::NEW_REPLICA_SET_REASON,
                format!("Created new replica set \"{name}\""),
            );
        }
        Ok(Some(i))
    }

    // ------------------------------------------------------------ scaling

    pub(super) fn scale_and_record(&mut self, i: usize, new_scale: i32) -> bool {
        let cur = self.spec_replicas(i);
        if cur == new_scale {
            return false;
        }
        let op = if cur < new_scale { "up" } else { "down" };
        self.scale_replica_set(i, new_scale, op)
    }

    /// `scaleReplicaSet`: one write carrying the new size and the replica annotations.
    pub(super) fn scale_replica_set(&mut self, i: usize, new_scale: i32, op: &str) -> bool {
        let desired = util::replicas(&self.d);
        let max = desired + util::max_surge(&self.d);
        let cur = self.spec_replicas(i);
        let size_changed = cur != new_scale;
        if !size_changed && !util::replicas_annotations_need_update(self.working(i), desired, max) {
            return false;
        }
        let mut copy = self.working(i).clone();
        copy.spec.replicas = Some(new_scale);
        util::set_replicas_annotations(&mut copy, desired, max);
        let name = copy.metadata.name.clone();
        self.write_rs(i, copy);
        if size_changed {
            self.on_write(
                Some(i),
                "ScalingReplicaSet",
                format!("Scaled {op} replica set {name} from {cur} to {new_scale}"),
            );
            self.notes.push(format!("scale {name} {cur}→{new_scale}"));
        } else {
            self.notes
                .push(format!("annotate {name} desired={desired} max={max}"));
        }
        size_changed
    }

    /// `isScalingEvent`: an active ReplicaSet records a different desired size than the spec.
    pub(super) fn is_scaling_event(&mut self) -> Result<bool, String> {
        let (new, old) = self.get_all(false)?;
        let desired = util::replicas(&self.d);
        Ok(old.iter().copied().chain(new).any(|i| {
            self.spec_replicas(i) > 0
                && util::desired_replicas_annotation(self.working(i)).is_some_and(|a| a != desired)
        }))
    }

    /// `sync`: scaling events and paused Deployments — proportional scale, no rollout.
    pub(super) fn sync(&mut self) -> Result<(), String> {
        let (new, old) = self.get_all(false)?;
        self.scale(new, &old);
        if self.d.spec.paused && rollback_to(&self.d).is_none() {
            self.cleanup_deployment(&old);
        }
        self.sync_deployment_status(new, &old);
        Ok(())
    }

    pub(super) fn sync_status_only(&mut self) -> Result<(), String> {
        let (new, old) = self.get_all(false)?;
        self.sync_deployment_status(new, &old);
        Ok(())
    }

    /// `FindActiveOrLatest`: the only active ReplicaSet, or the latest when none is active.
    pub(super) fn find_active_or_latest(&self, new: Option<usize>, old: &[usize]) -> Option<usize> {
        let mut olds = old.to_vec();
        olds.stable_sort_by(|&a, &b| util::cmp_by_creation(self.working(b), self.working(a)));
        let active: Vec<usize> = olds
            .iter()
            .copied()
            .chain(new)
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        match active.len() {
            0 => new.or(olds.first().copied()),
            1 => Some(active[0]),
            _ => None,
        }
    }

    /// `scale`: proportional scaling, so a scaling event mid-rollout neither hastens nor reverses it.
    pub(super) fn scale(&mut self, new: Option<usize>, old: &[usize]) {
        let desired = util::replicas(&self.d);
        if let Some(i) = self.find_active_or_latest(new, old) {
            if self.spec_replicas(i) != desired {
                self.scale_and_record(i, desired);
            }
            return;
        }
        if util::is_saturated(&self.d, new.map(|i| self.working(i))) {
            for &i in old {
                if self.spec_replicas(i) > 0 {
                    self.scale_and_record(i, 0);
                }
            }
            return;
        }
        if !util::is_rolling_update(&self.d) {
            return;
        }
        let mut all: Vec<usize> = old
            .iter()
            .copied()
            .chain(new)
            .filter(|&i| self.spec_replicas(i) > 0)
            .collect();
        let current: i32 = all.iter().map(|&i| self.spec_replicas(i)).sum();
        let allowed = if desired > 0 {
            desired + util::max_surge(&self.d)
        } else {
            0
        };
        let to_add = allowed - current;
        let op = match to_add.cmp(&0) {
            std::cmp::Ordering::Greater => {
                all.stable_sort_by(|&a, &b| {
                    util::cmp_by_size_newer(self.working(a), self.working(b))
                });
                "up"
            }
            std::cmp::Ordering::Less => {
                all.stable_sort_by(|&a, &b| {
                    util::cmp_by_size_older(self.working(a), self.working(b))
                });
                "down"
            }
            std::cmp::Ordering::Equal => "",
        };
        let mut added = 0;
        let mut sizes = Vec::with_capacity(all.len());
        for &i in &all {
            let cur = self.spec_replicas(i);
            if to_add != 0 {
                let p = util::get_proportion(self.working(i), &self.d, to_add, added);
                sizes.push(cur + p);
                added += p;
            } else {
                sizes.push(cur);
            }
        }
        for (k, &i) in all.iter().enumerate() {
            if k == 0 && to_add != 0 {
                // The leftover goes to the largest ReplicaSet.
                sizes[0] = (sizes[0] + to_add - added).max(0);
            }
            self.scale_replica_set(i, sizes[k], op);
        }
    }

    /// `cleanupDeployment`: keeps `revisionHistoryLimit` old ReplicaSets, deleting the lowest
    /// revisions that are fully scaled down and observed.
    pub(super) fn cleanup_deployment(&mut self, old: &[usize]) {
        if !util::has_revision_history_limit(&self.d) {
            return;
        }
        let limit = util::revision_history_limit(&self.d);
        let mut alive: Vec<usize> = old
            .iter()
            .copied()
            .filter(|&i| self.rss[i].orig.metadata.deletion_timestamp.is_none())
            .collect();
        let diff = alive.len() as i64 - limit as i64;
        if diff <= 0 {
            return;
        }
        alive.stable_sort_by(|&a, &b| util::cmp_by_revision(&self.rss[a].orig, &self.rss[b].orig));
        for &i in alive.iter().take(diff as usize) {
            let rs = &self.rss[i].orig;
            if rs.status.replicas != 0
                || util::rs_replicas(rs) != 0
                || rs.metadata.generation > rs.status.observed_generation
                || rs.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            let revision = util::revision_of(&rs.metadata).unwrap_or(0);
            self.notes.push(format!(
                "delete {} (revision {revision}; revisionHistoryLimit {limit})",
                rs.metadata.name
            ));
            self.deletes.push(ApiRequest::Delete {
                key: ObjectKey::of(Kind::ReplicaSet, &rs.metadata),
                options: DeleteOptions::default(),
            });
        }
    }

    // ------------------------------------------------------------ status

    /// `calculateStatus` over the ReplicaSets as the pass started (writes are not read back).
    pub(super) fn calculate_status(&self, new: Option<usize>, old: &[usize]) -> DeploymentStatus {
        let all: Vec<&ReplicaSet> = old
            .iter()
            .copied()
            .chain(new)
            .map(|i| &self.rss[i].orig)
            .collect();
        util::calculate_status(&all, new.map(|i| &self.rss[i].orig), &self.d, self.now)
    }

    /// `syncDeploymentStatus`.
    pub(super) fn sync_deployment_status(&mut self, new: Option<usize>, old: &[usize]) {
        let status = self.calculate_status(new, old);
        if status != self.d.status {
            self.d.status = status;
        }
    }
}
