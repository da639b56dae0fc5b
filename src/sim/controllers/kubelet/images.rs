//! `pkg/kubelet/images`: the serial image puller, pull policies and ImagePullBackOff.

use super::*;

impl Kubelet {
    /// Makes sure the container's image is on the node. Returns true when it can be started now.
    pub(super) fn ensure_image(
        &mut self,
        p: &mut Pass<'_>,
        c: &Container,
        field: &str,
        rt: &mut NodeRuntime,
        rng: &mut Rng,
    ) -> bool {
        let (obj, now) = (p.obj, p.now);
        let uid = &p.pod.metadata.uid;
        let name = &c.name;
        let ck = (uid.clone(), name.clone());
        let image = &c.image;
        let resolved = match rt.resolve_image(image) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!(
                    "Failed to apply default image tag {image:?}: couldn't parse image name {image:?}: {e}"
                );
                p.out
                    .event(EventRecord::warning(obj, "InspectFailed", msg.clone()).at_field(field));
                p.out.event(
                    EventRecord::warning(obj, "Failed", "Error: InvalidImageName").at_field(field),
                );
                self.reasons.insert(ck, ("InvalidImageName".into(), msg));
                p.gaps
                    .push(format!("{name}: image name {image:?} is invalid"));
                return false;
            }
        };
        let image_ref = resolved.reference;
        let policy = c.image_pull_policy.clone().unwrap_or_else(|| {
            if resolved.latest {
                "Always".into()
            } else {
                "IfNotPresent".into()
            }
        });
        let present = rt.has_image(&image_ref);
        if policy == "Never" || (present && policy != "Always") {
            if present {
                let mut msg = String::from("Container image ");
                push_quoted(&mut msg, image);
                msg.push_str(" already present on machine");
                p.out
                    .event(EventRecord::normal(obj, "Pulled", msg).at_field(field));
                return true;
            }
            let msg = format!("Container image {image:?} is not present with pull policy of Never");
            p.out
                .event(EventRecord::warning(obj, "ErrImageNeverPull", msg.clone()).at_field(field));
            p.out.event(
                EventRecord::warning(obj, "Failed", "Error: ErrImageNeverPull").at_field(field),
            );
            self.reasons.insert(ck, ("ErrImageNeverPull".into(), msg));
            p.gaps.push(format!(
                "{name}: image not present and imagePullPolicy is Never"
            ));
            return false;
        }
        let bk = concat(&[uid, "_", image]);
        if let Some(pull) = self.pulls.remove(&ck) {
            if pull.image == *image {
                if now < pull.done_at {
                    p.wake = min_opt(p.wake, pull.done_at);
                    self.pulls.insert(ck, pull);
                    p.gaps.push(concat(&[name, ": pulling ", image]));
                    return false;
                }
                if let Some(err) = pull.error {
                    p.out.event(
                        EventRecord::warning(
                            obj,
                            "Failed",
                            format!("Failed to pull image {image:?}: {err}"),
                        )
                        .at_field(field),
                    );
                    p.out.event(
                        EventRecord::warning(obj, "Failed", "Error: ErrImagePull").at_field(field),
                    );
                    self.pull_backoff.next(&bk, now, now);
                    self.pull_errors.insert(bk, err.clone());
                    self.reasons.insert(ck, ("ErrImagePull".into(), err));
                    p.wake = min_opt(p.wake, next_relist(now));
                    p.gaps.push(format!("{name}: image pull failed"));
                    return false;
                }
                rt.images.insert(image_ref.to_string());
                let message = format!(
                    "Successfully pulled image {image:?} in {} ({} including waiting). Image size: {} bytes.",
                    format_duration(pull.done_at - pull.began_at),
                    format_duration(pull.done_at - pull.requested_at),
                    image_size(&image_ref)
                );
                p.out
                    .event(EventRecord::normal(obj, "Pulled", message).at_field(field));
                return true;
            }
        }
        if self.pull_backoff.in_backoff_since_update(&bk, now) {
            p.out.event(
                EventRecord::normal(obj, "BackOff", format!("Back-off pulling image {image:?}"))
                    .at_field(field),
            );
            p.out.event(
                EventRecord::warning(obj, "Failed", "Error: ImagePullBackOff").at_field(field),
            );
            let last = self.pull_errors.get(&bk).cloned().unwrap_or_default();
            let message = format!("Back-off pulling image {image:?}: ErrImagePull: {last}");
            self.reasons
                .insert(ck, ("ImagePullBackOff".into(), message));
            if let Some(at) = self.pull_backoff.retry_at(&bk) {
                p.wake = min_opt(p.wake, at);
            }
            p.gaps.push(format!("{name}: back-off pulling {image}"));
            return false;
        }
        let mut msg = String::from("Pulling image ");
        push_quoted(&mut msg, image);
        p.out
            .event(EventRecord::normal(obj, "Pulling", msg).at_field(field));
        let began = now.max(self.puller_free_at);
        let error = rt.pull_error(&image_ref);
        let layers_cached = present
            || self.pulls.values().any(|other| {
                other.error.is_none() && other.done_at <= began && other.image_ref == image_ref
            });
        let took = if error.is_some() {
            rng.range(300, 1_500)
        } else if layers_cached {
            rng.range(100, 600)
        } else {
            rng.range(1_000, 4_000)
        };
        let done_at = began + took;
        self.puller_free_at = done_at;
        self.pulls.insert(
            ck,
            Pull {
                image: image.to_string(),
                image_ref,
                requested_at: now,
                began_at: began,
                done_at,
                error,
            },
        );
        p.wake = min_opt(p.wake, done_at);
        p.gaps.push(concat(&[name, ": pulling ", image]));
        false
    }
}

/// An image pull in flight (the serial image puller: one pull at a time per node).
#[derive(Clone, Debug)]
pub(super) struct Pull {
    image: String,
    /// `image` resolved.
    image_ref: Str,
    requested_at: Millis,
    began_at: Millis,
    done_at: Millis,
    error: Option<String>,
}
