//! The kubelet's admission: whether a pod bound to this node may run here at all.

use super::*;

impl Kubelet {
    /// Kubelet admission (`GeneralPredicates`): the pod must fit what the node has left and match
    /// its node selector. Pods already admitted, or already running, pass. Returns (reason, message)
    /// for a rejected pod.
    pub(super) fn admit(
        &self,
        pod: &Pod,
        node: Option<&Node>,
        cache: &Cache,
        rt: &NodeRuntime,
    ) -> Option<(String, String)> {
        let uid = &pod.metadata.uid;
        if self.admitted.contains_key(uid) || rt.pods.contains_key(uid) {
            return None;
        }
        let node = node?;
        // One pass over the node's pods counts those it runs and sums their requests (an
        // admitted pod's as admission read them, unless its spec has changed since).
        let mut running = 0i64;
        let mut used = [0i64; ADMITTED_RESOURCES.len()];
        for p in cache.pods_on_node(&self.node).filter_map(|o| o.as_pod()) {
            if p.metadata.uid == *uid || matches!(p.status.phase.as_str(), "Succeeded" | "Failed") {
                continue;
            }
            let requests = match self.admitted.get(&p.metadata.uid) {
                Some(a) if Rc::ptr_eq(&a.spec, &p.spec) => {
                    debug_assert_eq!(a.requests, pod_requests(p));
                    a.requests
                }
                Some(_) => pod_requests(p),
                None if rt.pods.contains_key(&p.metadata.uid) => pod_requests(p),
                None => continue,
            };
            running += 1;
            for (u, r) in used.iter_mut().zip(requests) {
                *u += r;
            }
        }
        let allocatable = |name: &str| {
            node.status
                .allocatable
                .get(name)
                .and_then(|q| parse_quantity_milli(q))
        };
        let short = |name: &str, requested: i64, used: i64, capacity: i64| {
            let message = format!(
                "Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"
            );
            Some((format!("OutOf{name}"), message))
        };
        let max_pods = allocatable("pods").map_or(110, |v| (v / 1000.0) as i64);
        if running + 1 > max_pods {
            return short("pods", 1, running, max_pods);
        }
        let requested = pod_requests(pod);
        for (i, (name, divisor)) in ADMITTED_RESOURCES.into_iter().enumerate() {
            let requested = requested[i];
            let Some(capacity) = allocatable(name).map(|v| (v / divisor) as i64) else {
                continue;
            };
            if requested > 0 && used[i] + requested > capacity {
                return short(name, requested, used[i], capacity);
            }
        }
        // The kubelet admits with the scheduler's own node-affinity check (both use
        // `GetRequiredNodeAffinity` in Kubernetes).
        if !scheduler::required_affinity_matches(pod, node) {
            return Some((
                "NodeAffinity".into(),
                "Predicate NodeAffinity failed".into(),
            ));
        }
        None
    }
}
