//! `rollback.go`: the legacy `spec.rollbackTo` rollback to an earlier revision's template.

use super::*;

impl DeploymentSync<'_> {
    /// `rollback`: the extensions/v1beta1 `rollbackTo`, still honoured through its annotation.
    pub(super) fn rollback(&mut self, revision: i64) -> Result<(), String> {
        let (new, old) = self.get_all(true)?;
        let all: Vec<usize> = old.iter().copied().chain(new).collect();
        let mut to = revision;
        if to == 0 {
            to = util::last_revision(all.iter().map(|&i| self.working(i)));
            if to == 0 {
                self.warning(
                    util::ROLLBACK_REVISION_NOT_FOUND,
                    "Unable to find last revision.".into(),
                );
                self.clear_rollback_to();
                return Ok(());
            }
        }
        let target = all
            .iter()
            .copied()
            .find(|&i| util::revision_of(&self.working(i).metadata).ok() == Some(to));
        let Some(i) = target else {
            self.warning(
                util::ROLLBACK_REVISION_NOT_FOUND,
                "Unable to find the revision to rollback to.".into(),
            );
            self.clear_rollback_to();
            return Ok(());
        };
        let rs = self.working(i).clone();
        let name = self.name().to_string();
        if util::equal_ignore_hash(&self.d.spec.template, &rs.spec.template) {
            self.warning(
                util::ROLLBACK_TEMPLATE_UNCHANGED,
                format!("The rollback revision contains the same template as current deployment \"{name}\""),
            );
            self.clear_rollback_to();
            return Ok(());
        }
        let mut template = rs.spec.template.clone();
        template
            .metadata
            .labels
            .remove(util::POD_TEMPLATE_HASH_LABEL);
        self.d.spec.template = template;
        let mut annotations: crate::sim::api::types::StringMap = self
            .d
            .metadata
            .annotations
            .iter()
            .filter(|(k, _)| util::skip_copy_annotation(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in &rs.metadata.annotations {
            if !util::skip_copy_annotation(k) {
                annotations.insert(k.clone(), v.clone());
            }
        }
        self.d.metadata.annotations = annotations;
        self.clear_rollback_to();
        self.on_write(
            None,
            util::ROLLBACK_DONE,
            format!("Rolled back deployment \"{name}\" to revision {to}"),
        );
        Ok(())
    }

    pub(super) fn clear_rollback_to(&mut self) {
        self.d
            .metadata
            .annotations
            .remove(util::DEPRECATED_ROLLBACK_TO);
        self.write_spec = true;
        self.notes.push("clear rollbackTo".into());
    }

    // ------------------------------------------------------------ the result
}
