//! The environment a container starts with (kuberuntime's `generateContainerConfig` calling the
//! kubelet's `makeEnvironmentVariables`): every ConfigMap and Secret that `envFrom` and
//! `valueFrom` name must exist, and every key they name must be in it, or the container waits
//! in `CreateContainerConfigError` and the pod worker tries again 10–15 s later.

use super::*;

/// The pod worker's back-off after a failed sync (`backOffPeriod`), before its jitter of up to
/// half as much again.
pub(super) const SYNC_RETRY: Millis = 10_000;

/// Why `c`'s environment cannot be made now, in the kubelet's words, or `None`. `envFrom` is
/// read first, then `env`, as upstream does.
pub(super) fn env_error(c: &Container, pod: &Pod, cache: &Cache) -> Option<String> {
    let [Some(cm_kind), Some(secret_kind), _] = mounted_kinds() else {
        return None;
    };
    let ns = &pod.metadata.namespace;
    let lookup = |kind: Kind, name: &str| cache.get(&ObjectKey::new(kind, ns, name)).cloned();
    let optional = |r: &Json| r.get("optional").and_then(Json::as_bool) == Some(true);
    let name_of = |r: &Json| {
        r.get("name")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string()
    };
    for from in c
        .env_from
        .as_deref()
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let refs = [
            (from.get("configMapRef"), cm_kind, "configmap"),
            (from.get("secretRef"), secret_kind, "secret"),
        ];
        for (r, kind, resource) in refs {
            let Some(r) = r else { continue };
            let name = name_of(r);
            if lookup(kind, &name).is_none() && !optional(r) {
                return Some(format!("{resource} {name:?} not found"));
            }
        }
    }
    for var in c
        .env
        .as_deref()
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let Some(from) = var.get("valueFrom") else {
            continue;
        };
        let refs = [
            (
                from.get("configMapKeyRef"),
                cm_kind,
                "configmap",
                "ConfigMap",
            ),
            (from.get("secretKeyRef"), secret_kind, "secret", "Secret"),
        ];
        for (r, kind, resource, kind_name) in refs {
            let Some(r) = r else { continue };
            let name = name_of(r);
            let key = r.get("key").and_then(Json::as_str).unwrap_or_default();
            match lookup(kind, &name) {
                None if optional(r) => {}
                None => return Some(format!("{resource} {name:?} not found")),
                Some(obj) => {
                    // Only `data` is read for an environment variable, as upstream reads it.
                    let has_key = matches!(&*obj, Object::Custom(c)
                        if c.content.get("data").and_then(|d| d.get(key)).is_some());
                    if !has_key && !optional(r) {
                        return Some(format!(
                            "couldn't find key {key} in {kind_name} {ns}/{name}"
                        ));
                    }
                }
            }
        }
    }
    None
}
