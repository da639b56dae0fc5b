//! Watch fan-out: which running components hear of a write, and the delivery of each watch event (with its drops and delays) into an informer cache.

use super::*;
use crate::sort::StableSort;
use std::borrow::Cow;

/// Which running components watch one kind, kept up to date as components start, stop,
/// partition and heal, so a write is offered only to the components that can hear of it.
#[derive(Clone, Debug, Default)]
pub(super) struct Watchers {
    /// Components asked about every event of the kind ([`Controller::accepts`]), in id order.
    pub(super) general: Vec<ComponentId>,
    /// Kubelets routed by node name ([`Controller::node_selector`]), sorted by node name (which
    /// is their id order).
    pub(super) by_node: Vec<Str>,
}

/// Whether `id` sorts before `ComponentId::Kubelet(node)`.
pub(super) fn before_kubelet(id: &ComponentId, node: &str) -> bool {
    match id {
        ComponentId::Kubelet(n) => n.as_str() < node,
        other => *other < ComponentId::Kubelet(Str::EMPTY),
    }
}

/// The node a routed (kubelet-style) field selector would pick an object by.
pub(super) fn routed_node(obj: &Object) -> Option<&str> {
    match obj {
        Object::Pod(p) => Some(p.spec.node_name.as_str()),
        Object::Node(n) => Some(n.metadata.name.as_str()),
        _ => None,
    }
}

/// The node a component is routed by, if its selector is a kubelet's and its id says the same.
pub(super) fn routing_of<'a>(id: &'a ComponentId, ctrl: &dyn Controller) -> Option<&'a str> {
    match (id, ctrl.node_selector()) {
        (ComponentId::Kubelet(n), Some(sel)) if n == sel => Some(n.as_str()),
        _ => None,
    }
}

/// The node of a kubelet id (routed components are kubelets).
pub(super) fn id_node(id: &ComponentId) -> &str {
    match id {
        ComponentId::Kubelet(n) => n,
        _ => "",
    }
}

/// Records that `node`'s kubelet selects `key` (see `Sim::routed_selected`).
pub(super) fn hold(index: &mut LookupMap<ObjectKey, Vec<String>>, key: &ObjectKey, node: &str) {
    match index.get_mut(key) {
        Some(nodes) if nodes.iter().any(|n| n == node) => {}
        Some(nodes) => nodes.push(node.to_string()),
        None => {
            index.insert(key.clone(), vec![node.to_string()]);
        }
    }
}

/// Records that `node`'s kubelet no longer selects `key`.
pub(super) fn release(index: &mut LookupMap<ObjectKey, Vec<String>>, key: &ObjectKey, node: &str) {
    if let Some(nodes) = index.get_mut(key) {
        nodes.retain(|n| n != node);
        if nodes.is_empty() {
            index.remove(key);
        }
    }
}

impl Sim {
    /// Brings the per-kind watcher index up to date for one component, after it was added,
    /// started, stopped, partitioned, healed, replaced or removed.
    pub(super) fn refresh_watchers(&mut self, id: &ComponentId) {
        for w in self.watchers.values_mut() {
            if let Ok(i) = w.general.binary_search(id) {
                w.general.remove(i);
            }
            if let ComponentId::Kubelet(n) = id {
                if let Ok(i) = w.by_node.binary_search_by(|m| m.as_str().cmp(n.as_str())) {
                    w.by_node.remove(i);
                }
            }
        }
        if let Ok(i) = self.custom_watchers.binary_search(id) {
            self.custom_watchers.remove(i);
        }
        let Some(c) = self.components.get(id) else {
            return;
        };
        if !c.running || c.partitioned {
            return;
        }
        if c.ctrl.watches_custom_kinds() {
            if let Err(i) = self.custom_watchers.binary_search(id) {
                self.custom_watchers.insert(i, id.clone());
            }
        }
        let routed = routing_of(id, c.ctrl.as_ref()).map(str::to_string);
        for kind in c.ctrl.watched_kinds() {
            let w = self.watchers.entry(*kind).or_default();
            // Only pods and nodes are routed by node; a kubelet hears of the ConfigMaps and
            // Secrets its pods mount like any watcher.
            match routed.as_ref().filter(|_| kind.custom().is_none()) {
                Some(n) => {
                    if let Err(i) = w.by_node.binary_search_by(|m| m.as_str().cmp(n.as_str())) {
                        w.by_node.insert(i, Str::from(n.as_str()));
                    }
                }
                None => {
                    if let Err(i) = w.general.binary_search(id) {
                        w.general.insert(i, id.clone());
                    }
                }
            }
        }
    }

    /// The running, connected components that can hear of `ev`, each with its rank among all
    /// of the kind's running watchers (its place in the latency draws), in rank order; and how
    /// many watchers there are in all. Routed kubelets that neither select the object nor held
    /// it are left out: they would only have drawn a latency.
    pub(super) fn listeners(
        &self,
        ev: &WatchEvent,
        key: &ObjectKey,
    ) -> (Vec<(usize, ComponentId, bool)>, usize) {
        let merged;
        let w = match (self.watchers.get(&key.kind), key.kind.custom()) {
            (w, Some(_)) if !self.custom_watchers.is_empty() => {
                let mut general = self.custom_watchers.clone();
                for id in w.map_or(&[][..], |w| &w.general[..]) {
                    if let Err(i) = general.binary_search(id) {
                        general.insert(i, id.clone());
                    }
                }
                merged = Watchers {
                    general,
                    by_node: Vec::new(),
                };
                &merged
            }
            (Some(w), _) => w,
            (None, _) => return (Vec::new(), 0),
        };
        let mut heard: Vec<(usize, ComponentId, bool)> = Vec::with_capacity(w.general.len() + 2);
        for (i, g) in w.general.iter().enumerate() {
            let kubelets_before = match g {
                ComponentId::Kubelet(n) => w.by_node.partition_point(|m| m < n),
                other if *other < ComponentId::Kubelet(Str::EMPTY) => 0,
                _ => w.by_node.len(),
            };
            heard.push((i + kubelets_before, g.clone(), false));
        }
        if !w.by_node.is_empty() {
            let mut nodes: Vec<&str> = Vec::new();
            if let Some(n) = routed_node(&ev.object) {
                nodes.push(n);
            }
            if let Some(held) = self.routed_selected.get(key) {
                nodes.extend(held.iter().map(String::as_str));
            }
            nodes.stable_sort();
            nodes.dedup();
            for n in nodes {
                if let Ok(p) = w.by_node.binary_search_by(|m| m.as_str().cmp(n)) {
                    let general_before = w.general.partition_point(|g| before_kubelet(g, n));
                    heard.push((
                        general_before + p,
                        ComponentId::Kubelet(w.by_node[p].clone()),
                        true,
                    ));
                }
            }
            heard.stable_sort_by_key(|(rank, _, _)| *rank);
        }
        (heard, w.general.len() + w.by_node.len())
    }

    pub(super) fn fan_out(&mut self, events: &[WatchEvent]) {
        let (lo, hi) = self.config.watch_latency;
        // `Rng::range` draws once per call exactly when the range is not empty.
        let draws_each = u64::from(hi > lo);
        for ev in events {
            self.maybe_boot_machine(ev);
            let kind = ev.object.kind();
            let key: &ObjectKey = &ev.key;
            // Every running watcher of the kind draws a latency, in id order, whether its field
            // selector lets the event through or not; only those that can hear of it are visited,
            // each with the draw at its rank, and the stream then jumps past all of them.
            let (heard, total) = self.listeners(ev, key);
            #[cfg(debug_assertions)]
            self.check_unheard(ev, key, &heard);
            let base = self.latency_rng.clone();
            let mut shared: Option<Rc<WatchEvent>> = None;
            for (rank, id, routed) in heard {
                let latency = {
                    let mut r = base.clone();
                    r.skip(rank as u64 * draws_each);
                    r.range(lo, hi)
                };
                let now = self.now;
                let c = self
                    .components
                    .get_mut(&id)
                    .expect("indexed watchers exist");
                if !c.ctrl.has_field_selector() {
                    debug_assert!(
                        c.ctrl.accepts(&ev.object),
                        "{id} filters without a field selector"
                    );
                } else if ev.type_ != WatchEventType::Deleted && c.ctrl.accepts(&ev.object) {
                    if !c.selected.contains(key) {
                        c.selected.insert(key.clone());
                        if routed {
                            hold(&mut self.routed_selected, key, id_node(&id));
                        }
                    }
                } else if !c.selected.remove(key) {
                    continue;
                } else if routed {
                    release(&mut self.routed_selected, key, id_node(&id));
                }
                // A lost event never reaches the informer; its cache stays stale for that object.
                if let Some(rule) = &mut c.drop {
                    let active = rule.until.is_none_or(|u| now < u);
                    let kind_ok = rule.kind.is_none_or(|k| k == kind)
                        && rule.event_type.is_none_or(|t| t == ev.type_);
                    if active && kind_ok {
                        let hit = match (rule.remaining.as_mut(), rule.probability) {
                            (Some(n), _) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            (None, Some(p)) => c.rng.chance(p),
                            _ => false,
                        };
                        let fault = rule.fault;
                        // A rule with a duration stays until its heal, which relists.
                        if rule.remaining == Some(0)
                            && rule.probability.is_none()
                            && rule.until.is_none()
                        {
                            c.drop = None;
                        }
                        if hit {
                            // Caused by the fault that lost it (the write is named by rv).
                            self.trace.push(
                                now,
                                Some(fault),
                                TraceKind::Watch {
                                    component: id.name().into(),
                                    event_type: ev.type_.into(),
                                    object: self.api.trace_name(&ev.key, ev.slot),
                                    resource_version: ev.resource_version,
                                    delivery: Delivery::Dropped,
                                },
                            );
                            continue;
                        }
                    }
                }
                let extra = match &c.delay {
                    Some(rule) if rule.until.is_none_or(|u| now < u) => rule.delay,
                    _ => 0,
                };
                let at = (now + latency + extra).max(c.last_delivery);
                c.last_delivery = at;
                let (gen, line) = (c.generation, c.line);
                let event = shared.get_or_insert_with(|| Rc::new(ev.clone())).clone();
                self.schedule_delivery(at, line, gen, event);
            }
            self.latency_rng.skip(total as u64 * draws_each);
        }
    }

    /// Debug builds check the routing: a kubelet left out of a fan-out would not have heard
    /// of the event anyway.
    #[cfg(debug_assertions)]
    pub(super) fn check_unheard(
        &self,
        ev: &WatchEvent,
        key: &ObjectKey,
        heard: &[(usize, ComponentId, bool)],
    ) {
        for (id, c) in self.components.iter() {
            if !c.running || c.partitioned || !c.ctrl.watches(key.kind) {
                continue;
            }
            if heard.iter().any(|(_, h, _)| h == id) {
                continue;
            }
            let accepted = ev.type_ != WatchEventType::Deleted && c.ctrl.accepts(&ev.object);
            assert!(
                !accepted && !c.selected.contains(key),
                "{id} would hear of {key} but was not routed to"
            );
        }
    }

    pub(super) fn deliver(&mut self, id: &ComponentId, gen: u32, ev: &WatchEvent) {
        let now = self.now;
        let Some(c) = self.components.get_mut(id) else {
            return;
        };
        if !c.running || c.generation != gen {
            return;
        }
        // Already seen: a resumed watch or a relist overtook this delivery.
        if ev.resource_version <= c.cache.last_rv {
            return;
        }
        // The informer applies its field selector: objects entering or leaving it look like
        // adds/deletes. One cache descent both applies the change and tells which it was.
        let accepted = ev.type_ != WatchEventType::Deleted && c.ctrl.accepts(&ev.object);
        c.cache.last_rv = c.cache.last_rv.max(ev.resource_version);
        let (type_, old) = if accepted {
            let old = c.cache.upsert_shared(ev.object.clone(), &ev.key, ev.slot);
            let type_ = if old.is_some() {
                WatchEventType::Modified
            } else {
                WatchEventType::Added
            };
            (type_, old)
        } else {
            match c.cache.remove(&ev.key) {
                Some(old) => (WatchEventType::Deleted, Some(old)),
                // client-go hands a DELETED to the handlers even when the object never reached
                // the cache (its ADD was lost): they still learn it is gone.
                None if ev.type_ == WatchEventType::Deleted && c.ctrl.accepts(&ev.object) => {
                    (WatchEventType::Deleted, None)
                }
                None => return,
            }
        };
        // As the informer saw it: most deliveries keep the store's type, and need no copy.
        let local_ev = if type_ == ev.type_ {
            Cow::Borrowed(ev)
        } else {
            Cow::Owned(WatchEvent {
                type_,
                ..ev.clone()
            })
        };
        let object = self.api.trace_name(&ev.key, ev.slot);
        let keys = c.ctrl.keys_for_event(&local_ev, old.as_ref(), &c.cache);
        let seq = self.trace.push(
            now,
            Some(local_ev.cause),
            TraceKind::Watch {
                component: c.name.clone(),
                event_type: local_ev.type_.into(),
                object,
                resource_version: local_ev.resource_version,
                delivery: Delivery::Delivered,
            },
        );
        for k in keys {
            self.enqueue(id, gen, k, "watch", Some(seq));
        }
    }
}
