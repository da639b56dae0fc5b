//! kro (kubernetes-sigs/kro), the declarative operator: a ResourceGraphDefinition declares a new
//! API in SimpleSchema and the resources each instance owns; kro generates the CRD and runs one
//! instance controller per graph. This wing reads graphs and writes CRDs; the controllers are in
//! `controllers::kro`. The playground runs kro as an add-on a scenario installs.

pub mod crd;
pub mod graph;
pub mod simpleschema;

/// The API group kro's own kinds live in, and the default group of the kinds it generates.
pub const DEFAULT_GROUP: &str = "kro.run";
/// The kro release the playground's kro reports (labels, ApplySet tooling).
pub const KRO_VERSION: &str = "v0.9.3";
/// The finalizer kro puts on graphs and instances.
pub const FINALIZER: &str = "kro.run/finalizer";
pub const LABEL_OWNED: &str = "kro.run/owned";
pub const LABEL_KRO_VERSION: &str = "kro.run/kro-version";
pub const LABEL_RGD_ID: &str = "kro.run/resource-graph-definition-id";
pub const LABEL_RGD_NAME: &str = "kro.run/resource-graph-definition-name";
pub const LABEL_INSTANCE_ID: &str = "kro.run/instance-id";
pub const LABEL_INSTANCE_NAME: &str = "kro.run/instance-name";
pub const LABEL_INSTANCE_NAMESPACE: &str = "kro.run/instance-namespace";
pub const LABEL_INSTANCE_GROUP: &str = "kro.run/instance-group";
pub const LABEL_INSTANCE_VERSION: &str = "kro.run/instance-version";
pub const LABEL_INSTANCE_KIND: &str = "kro.run/instance-kind";
pub const LABEL_NODE_ID: &str = "kro.run/node-id";
pub const LABEL_COLLECTION_INDEX: &str = "kro.run/collection-index";
pub const LABEL_COLLECTION_SIZE: &str = "kro.run/collection-size";
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// The ApplySet labels (KEP-3659): the parent's id, and each member's `part-of` pointing at it.
pub const LABEL_APPLYSET_ID: &str = "applyset.kubernetes.io/id";
pub const LABEL_APPLYSET_PART_OF: &str = "applyset.kubernetes.io/part-of";
pub const ANNOTATION_APPLYSET_GKS: &str = "applyset.kubernetes.io/contains-group-kinds";
pub const ANNOTATION_APPLYSET_TOOLING: &str = "applyset.kubernetes.io/tooling";
pub const ANNOTATION_APPLY_ORDER: &str = "internal.kro.run/apply-order";
/// `--dynamic-controller-default-resync-period`: 36000 s (10 hours).
pub const DEFAULT_RESYNC_MS: u64 = 36_000_000;
/// `--instance-requeue-interval`: how soon an instance waiting for data is looked at again.
pub const INSTANCE_REQUEUE_MS: u64 = 3_000;
