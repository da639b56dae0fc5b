//! Defaulting as the API server applies it on create and update, before validation.
//!
//! Mirrors the `SetDefaults_*` functions of core/v1, apps/v1 and policy/v1, plus the
//! `DefaultTolerationSeconds` and `Priority` admission plugins for Pods. Idempotent: applying
//! it twice changes nothing, so the API server may call it on every write.
//!
//! Like Go, a numeric field written as `0` counts as unset where Kubernetes' field is a plain
//! integer (probe timings), so `periodSeconds: 0` becomes 10.

use super::types::{
    Container, DeploymentStrategy, IntOrString, Object, PodSpec, PodTemplateSpec, Probe,
    RollingUpdateDeployment, Str, Toleration, NAMESPACE_FINALIZER,
};

/// The taint a node gets when its Ready condition is False.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// The taint a node gets when its Ready condition is Unknown (heartbeats stopped).
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `DefaultTolerationSeconds`: how long a pod stays bound to a not-ready or unreachable node.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// The namespace part of [`apply_defaults`]: `default` for a namespaced object without one,
/// none for a cluster-scoped one. A Pod's defaults are this and its spec's, nothing else.
pub fn default_namespace(obj: &mut Object) {
    let kind = obj.kind();
    let meta = obj.meta_mut();
    if kind.namespaced() {
        if meta.namespace.is_empty() {
            meta.namespace = "default".into();
        }
    } else {
        meta.namespace = Default::default();
    }
}

/// Fills in every default Kubernetes would, in place.
///
/// Namespaced objects without a namespace go to `default`; cluster-scoped ones lose any
/// namespace (the API server ignores it for them).
pub fn apply_defaults(obj: &mut Object) {
    default_namespace(obj);
    match obj {
        Object::Namespace(ns) => {
            // The namespace strategy's PrepareForCreate, and the label the API server has set
            // on every namespace since 1.22 (NamespaceDefaultLabelName).
            if ns.spec.finalizers.is_empty() && ns.metadata.deletion_timestamp.is_none() {
                ns.spec.finalizers = vec![NAMESPACE_FINALIZER.into()];
            }
            if ns.status.phase.is_empty() {
                ns.status.phase = "Active".into();
            }
            ns.metadata
                .labels
                .insert("kubernetes.io/metadata.name", ns.metadata.name.clone());
        }
        Object::Deployment(d) => {
            let spec = &mut d.spec;
            spec.replicas.get_or_insert(1);
            let strategy = spec
                .strategy
                .get_or_insert_with(DeploymentStrategy::default);
            let ty = strategy.type_.get_or_insert_with(|| "RollingUpdate".into());
            if ty.is_empty() {
                *ty = "RollingUpdate".into();
            }
            if ty == "RollingUpdate" {
                let ru = strategy
                    .rolling_update
                    .get_or_insert_with(RollingUpdateDeployment::default);
                ru.max_unavailable
                    .get_or_insert_with(|| IntOrString::String("25%".into()));
                ru.max_surge
                    .get_or_insert_with(|| IntOrString::String("25%".into()));
            }
            spec.revision_history_limit.get_or_insert(10);
            spec.progress_deadline_seconds.get_or_insert(600);
            default_pod_spec(&mut spec.template.spec);
        }
        Object::ReplicaSet(rs) => {
            rs.spec.replicas.get_or_insert(1);
            default_pod_spec(&mut rs.spec.template.spec);
        }
        Object::Pod(p) => {
            let spec = p.spec_mut();
            default_pod_spec(spec);
            // SetDefaults_Pod (a Pod's, not a template's): limits without requests request as
            // much, which is what the scheduler then reserves.
            for c in spec
                .init_containers
                .iter_mut()
                .chain(spec.containers.iter_mut())
            {
                let Some(res) = c.resources.as_mut() else {
                    continue;
                };
                for (name, limit) in res.limits.iter() {
                    if !res.requests.contains_key(name) {
                        res.requests.insert(name.clone(), limit.clone());
                    }
                }
            }
            spec.priority.get_or_insert(0);
            add_default_tolerations(&mut spec.tolerations);
        }
        Object::Service(s) => {
            let ty = s.spec.type_.get_or_insert_with(|| "ClusterIP".into());
            if ty.is_empty() {
                *ty = "ClusterIP".into();
            }
            // SetDefaults_Service: fields nothing here reads, but `-o yaml` and describe show them.
            let word = |w: &str| Some(Box::new(serde_json::Value::String(w.into())));
            let reachable = matches!(ty.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer");
            let external = matches!(ty.as_str(), "NodePort" | "LoadBalancer");
            if s.spec.session_affinity.is_none() {
                s.spec.session_affinity = word("None");
            }
            if external && s.spec.external_traffic_policy.is_none() {
                s.spec.external_traffic_policy = word("Cluster");
            }
            if reachable && s.spec.internal_traffic_policy.is_none() {
                s.spec.internal_traffic_policy = word("Cluster");
            }
            for port in &mut s.spec.ports {
                default_string(&mut port.protocol, "TCP");
                let unset = match &port.target_port {
                    None => true,
                    Some(IntOrString::Int(0)) => true,
                    Some(IntOrString::String(t)) => t.is_empty(),
                    Some(IntOrString::Int(_)) => false,
                };
                if unset {
                    port.target_port = Some(IntOrString::Int(port.port));
                }
            }
        }
        // unhealthyPodEvictionPolicy stays unset: Kubernetes treats absent as IfHealthyBudget.
        Object::PodDisruptionBudget(_)
        | Object::Node(_)
        | Object::Lease(_)
        | Object::EndpointSlice(_)
        | Object::Event(_) => {}
        Object::CustomResourceDefinition(c) => {
            // SetDefaults_CustomResourceDefinitionSpec.
            let names = &mut c.spec.names;
            if names.singular.is_empty() {
                names.singular = names.kind.to_ascii_lowercase();
            }
            if names.list_kind.is_empty() && !names.kind.is_empty() {
                names.list_kind = format!("{}List", names.kind);
            }
            let conversion = c.spec.conversion.get_or_insert_with(Default::default);
            if conversion.strategy.is_empty() {
                conversion.strategy = "None".into();
            }
        }
        // A custom object's defaults come from its CRD's schema, applied by the API server.
        Object::Custom(_) => {}
    }
}

fn default_string<T: std::ops::Deref<Target = str> + From<&'static str>>(
    field: &mut Option<T>,
    value: &'static str,
) {
    if field.as_deref().is_none_or(str::is_empty) {
        *field = Some(T::from(value));
    }
}

fn default_nonzero(field: &mut Option<i64>, value: i64) {
    if field.is_none_or(|v| v == 0) {
        *field = Some(value);
    }
}

/// Defaults a pod template stored as JSON (a StatefulSet's, a Job's): `SetDefaults_PodSpec` on
/// its typed view, merged back so that every field written, modelled or not, is kept.
pub fn default_template(template: &mut serde_json::Value, field: &str) {
    let findings = std::cell::RefCell::new(super::strict::DecodeFindings::default());
    if let Ok(mut t) =
        super::strict::decode_at::<PodTemplateSpec>(template, field, "PodTemplateSpec", &findings)
    {
        default_pod_spec(&mut t.spec);
        if let Ok(v) = serde_json::to_value(&t) {
            merge_defaults(template, v);
        }
    }
}

/// Adds the fields `defaulted` has and `written` lacks, keeping everything written (the typed
/// view does not model every pod field, so it must not replace the template).
fn merge_defaults(written: &mut serde_json::Value, defaulted: serde_json::Value) {
    match (written, defaulted) {
        (serde_json::Value::Object(w), serde_json::Value::Object(d)) => {
            for (k, v) in d {
                match w.get_mut(&k) {
                    Some(existing) => merge_defaults(existing, v),
                    None => {
                        w.insert(k, v);
                    }
                }
            }
        }
        (serde_json::Value::Array(w), serde_json::Value::Array(d)) if w.len() == d.len() => {
            for (a, b) in w.iter_mut().zip(d) {
                merge_defaults(a, b);
            }
        }
        _ => {}
    }
}

/// `SetDefaults_PodSpec` and the container defaults beneath it.
pub fn default_pod_spec(spec: &mut PodSpec) {
    default_string(&mut spec.dns_policy, "ClusterFirst");
    default_string(&mut spec.restart_policy, "Always");
    default_string(&mut spec.scheduler_name, "default-scheduler");
    spec.termination_grace_period_seconds.get_or_insert(30);
    for c in spec
        .init_containers
        .iter_mut()
        .chain(spec.containers.iter_mut())
    {
        default_container(c);
    }
}

fn default_container(c: &mut Container) {
    if let Some(res) = c.resources.as_mut() {
        canonical_quantities(&mut res.requests);
        canonical_quantities(&mut res.limits);
    }
    if c.image_pull_policy.as_deref().is_none_or(str::is_empty) {
        c.image_pull_policy = Some(Str::from(default_pull_policy(&c.image)));
    }
    for port in &mut c.ports {
        default_string(&mut port.protocol, "TCP");
    }
    for probe in [
        &mut c.readiness_probe,
        &mut c.liveness_probe,
        &mut c.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        default_probe(probe);
    }
}

/// Each quantity as the API server stores it, decoded and printed back canonically (`0.5` →
/// `500m`, `1.5Gi` → `1536Mi`); text that is not a quantity is left for validation to refuse.
fn canonical_quantities(list: &mut crate::sim::api::string_map::StringMap) {
    let keys: Vec<Str> = list.iter().map(|(k, _)| k.clone()).collect();
    for k in keys {
        let canonical = list
            .get(&k)
            .and_then(|v| crate::sim::api::quantity::parse_quantity(v).ok())
            .map(|q| q.to_string());
        if let (Some(c), Some(v)) = (canonical, list.get_mut(&k)) {
            if c != *v {
                *v = c.into();
            }
        }
    }
}

/// `Always` for `:latest` or untagged images, `IfNotPresent` for tags and digests.
pub fn default_pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    // The tag follows the last ':' that comes after the last '/' (a registry may have a port).
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) if tag != "latest" => "IfNotPresent",
        _ => "Always",
    }
}

fn default_probe(p: &mut Probe) {
    default_nonzero(&mut p.timeout_seconds, 1);
    default_nonzero(&mut p.period_seconds, 10);
    default_nonzero(&mut p.success_threshold, 1);
    default_nonzero(&mut p.failure_threshold, 3);
    if let Some(h) = &mut p.http_get {
        default_string(&mut h.path, "/");
        default_string(&mut h.scheme, "HTTP");
    }
}

/// The `DefaultTolerationSeconds` admission plugin: tolerate not-ready and unreachable nodes
/// for 300 s unless the pod already tolerates them (an empty key or effect matches too).
pub fn add_default_tolerations(tolerations: &mut Vec<Toleration>) {
    let tolerates = |taint: &str| {
        tolerations.iter().any(|t| {
            let key = t.key.as_deref().unwrap_or("");
            let effect = t.effect.as_deref().unwrap_or("");
            (key == taint || key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        })
    };
    let missing: Vec<&str> = [TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE]
        .into_iter()
        .filter(|t| !tolerates(t))
        .collect();
    for taint in missing {
        tolerations.push(Toleration {
            key: Some(taint.into()),
            operator: Some("Exists".into()),
            value: None,
            effect: Some("NoExecute".into()),
            toleration_seconds: Some(DEFAULT_TOLERATION_SECONDS),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::api::types::*;

    #[test]
    fn an_empty_deployment_gets_apps_v1_defaults() {
        let mut obj = Object::from(Deployment::default());
        apply_defaults(&mut obj);
        insta::assert_snapshot!(crate::sim::input::yaml::to_yaml(&obj.to_json()), @r###"
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          namespace: default
        spec:
          progressDeadlineSeconds: 600
          replicas: 1
          revisionHistoryLimit: 10
          selector: {}
          strategy:
            rollingUpdate:
              maxSurge: 25%
              maxUnavailable: 25%
            type: RollingUpdate
          template:
            metadata: {}
            spec:
              containers: []
              dnsPolicy: ClusterFirst
              restartPolicy: Always
              schedulerName: default-scheduler
              terminationGracePeriodSeconds: 30
        status: {}
        "###);
    }

    #[test]
    fn recreate_deployments_get_no_rolling_update_block() {
        let mut d = Deployment::default();
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        let mut obj = Object::from(d);
        apply_defaults(&mut obj);
        assert_eq!(
            obj.as_deployment()
                .unwrap()
                .spec
                .strategy
                .as_ref()
                .unwrap()
                .rolling_update,
            None
        );
    }

    #[test]
    fn image_pull_policy_follows_the_tag() {
        let cases = [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.14.2", "IfNotPresent"),
            ("registry:5000/team/app", "Always"),
            ("registry:5000/team/app:v2", "IfNotPresent"),
            ("nginx@sha256:abcd", "IfNotPresent"),
        ];
        for (image, want) in cases {
            assert_eq!(default_pull_policy(image), want, "{image}");
        }
    }

    #[test]
    fn pods_get_container_probe_and_toleration_defaults() {
        let mut p = Pod::default();
        p.spec_mut().containers.push(Container {
            name: "app".into(),
            image: "app:v1".into(),
            ports: vec![ContainerPort {
                container_port: 80,
                ..Default::default()
            }],
            readiness_probe: Some(Box::new(Probe {
                http_get: Some(HttpGetAction {
                    port: IntOrString::Int(80),
                    ..Default::default()
                }),
                period_seconds: Some(0),
                ..Default::default()
            })),
            ..Default::default()
        });
        let mut obj = Object::from(p);
        apply_defaults(&mut obj);
        let once = obj.clone();
        apply_defaults(&mut obj);
        assert_eq!(obj, once, "defaulting is idempotent");
        insta::assert_snapshot!(crate::sim::input::yaml::to_yaml(&obj.to_json()["spec"]), @r###"
        containers:
        - image: app:v1
          imagePullPolicy: IfNotPresent
          name: app
          ports:
          - containerPort: 80
            protocol: TCP
          readinessProbe:
            failureThreshold: 3
            httpGet:
              path: /
              port: 80
              scheme: HTTP
            periodSeconds: 10
            successThreshold: 1
            timeoutSeconds: 1
        dnsPolicy: ClusterFirst
        priority: 0
        restartPolicy: Always
        schedulerName: default-scheduler
        terminationGracePeriodSeconds: 30
        tolerations:
        - effect: NoExecute
          key: node.kubernetes.io/not-ready
          operator: Exists
          tolerationSeconds: 300
        - effect: NoExecute
          key: node.kubernetes.io/unreachable
          operator: Exists
          tolerationSeconds: 300
        "###);
    }

    #[test]
    fn pods_that_already_tolerate_keep_their_own_tolerations() {
        let mut tolerations = vec![Toleration {
            operator: Some("Exists".into()),
            ..Default::default()
        }];
        add_default_tolerations(&mut tolerations);
        assert_eq!(
            tolerations.len(),
            1,
            "an empty key with Exists tolerates everything"
        );

        let mut tolerations = vec![Toleration {
            key: Some(TAINT_NODE_UNREACHABLE.into()),
            operator: Some("Exists".into()),
            effect: Some("NoExecute".into()),
            toleration_seconds: Some(10),
            ..Default::default()
        }];
        add_default_tolerations(&mut tolerations);
        assert_eq!(tolerations.len(), 2);
        assert_eq!(tolerations[0].toleration_seconds, Some(10));
        assert_eq!(tolerations[1].key.as_deref(), Some(TAINT_NODE_NOT_READY));
    }

    #[test]
    fn services_default_type_protocol_and_target_port() {
        let mut s = Service::default();
        s.spec.ports.push(ServicePort {
            port: 80,
            ..Default::default()
        });
        let mut obj = Object::from(s);
        apply_defaults(&mut obj);
        let s = obj.as_service().unwrap();
        assert_eq!(s.spec.type_.as_deref(), Some("ClusterIP"));
        assert_eq!(s.spec.ports[0].protocol.as_deref(), Some("TCP"));
        assert_eq!(s.spec.ports[0].target_port, Some(IntOrString::Int(80)));
        assert_eq!(s.metadata.namespace, "default");
    }

    #[test]
    fn nodes_are_cluster_scoped() {
        let mut n = Node::default();
        n.metadata.namespace = "default".into();
        let mut obj = Object::from(n);
        apply_defaults(&mut obj);
        assert_eq!(obj.meta().namespace, "");
    }
}
