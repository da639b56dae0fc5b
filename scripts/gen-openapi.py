#!/usr/bin/env python3
"""Generates src/sim/api/openapi/v1.34.json: the built-in kinds a v1.34 API server stores, and the
Go types their JSON decodes into, compacted from the upstream OpenAPI definitions; and
www/explain/v1.34.json, their descriptions and required fields for `kubectl explain`.

The definitions are Kubernetes' own (api/openapi-spec), as the `kubernetes-validate` package on
PyPI ships them for each release (v1.34.0-local/_definitions.json). The types are in the first
paint (every Apply checks them); the descriptions are prose only `kubectl explain` reads, so they
live in a second file the page fetches the first time someone runs it. Entry i of its `docs` is
type i's: [description, [each field's description], [required field names]], or null for a type
that is not a struct. Run `make openapi` to regenerate; the output is committed, so a build never
needs the network, and `make openapi` on an unchanged tree leaves no diff.

What the definitions do not say (plural, short names, scope, categories) comes from the table
below: the facts `kubectl api-resources` prints for a v1.34 cluster, for the resources it stores.
Create-only resources (reviews, bindings, evictions, token requests) and read-only ones
(componentstatuses) are left out: nothing of theirs is ever stored.
"""

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "kubernetes-validate==1.37.0"
DEFINITIONS = "kubernetes_validate/kubernetes-json-schema/v1.34.0-local/_definitions.json"
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src/sim/api/openapi/v1.34.json"
DOCS_OUT = ROOT / "www/explain/v1.34.json"

# (group, version, kind, plural, short names, namespaced, categories) as `kubectl api-resources`
# lists them in v1.34.
RESOURCES = [
    ("", "v1", "ConfigMap", "configmaps", ["cm"], True, []),
    ("", "v1", "Endpoints", "endpoints", ["ep"], True, []),
    ("", "v1", "Event", "events", ["ev"], True, []),
    ("", "v1", "LimitRange", "limitranges", ["limits"], True, []),
    ("", "v1", "Namespace", "namespaces", ["ns"], False, []),
    ("", "v1", "Node", "nodes", ["no"], False, []),
    ("", "v1", "PersistentVolume", "persistentvolumes", ["pv"], False, []),
    ("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", ["pvc"], True, []),
    ("", "v1", "Pod", "pods", ["po"], True, ["all"]),
    ("", "v1", "PodTemplate", "podtemplates", [], True, []),
    ("", "v1", "ReplicationController", "replicationcontrollers", ["rc"], True, ["all"]),
    ("", "v1", "ResourceQuota", "resourcequotas", ["quota"], True, []),
    ("", "v1", "Secret", "secrets", [], True, []),
    ("", "v1", "Service", "services", ["svc"], True, ["all"]),
    ("", "v1", "ServiceAccount", "serviceaccounts", ["sa"], True, []),
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
     "mutatingwebhookconfigurations", [], False, ["api-extensions"]),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy",
     "validatingadmissionpolicies", [], False, ["api-extensions"]),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding",
     "validatingadmissionpolicybindings", [], False, ["api-extensions"]),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
     "validatingwebhookconfigurations", [], False, ["api-extensions"]),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
     ["crd", "crds"], False, ["api-extensions"]),
    ("apiregistration.k8s.io", "v1", "APIService", "apiservices", [], False, ["api-extensions"]),
    ("apps", "v1", "ControllerRevision", "controllerrevisions", [], True, []),
    ("apps", "v1", "DaemonSet", "daemonsets", ["ds"], True, ["all"]),
    ("apps", "v1", "Deployment", "deployments", ["deploy"], True, ["all"]),
    ("apps", "v1", "ReplicaSet", "replicasets", ["rs"], True, ["all"]),
    ("apps", "v1", "StatefulSet", "statefulsets", ["sts"], True, ["all"]),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", ["hpa"], True,
     ["all"]),
    ("batch", "v1", "CronJob", "cronjobs", ["cj"], True, ["all"]),
    ("batch", "v1", "Job", "jobs", [], True, ["all"]),
    ("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
     ["csr"], False, []),
    ("coordination.k8s.io", "v1", "Lease", "leases", [], True, []),
    ("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", [], True, []),
    ("events.k8s.io", "v1", "Event", "events", ["ev"], True, []),
    ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", [], False, []),
    ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration",
     "prioritylevelconfigurations", [], False, []),
    ("networking.k8s.io", "v1", "IPAddress", "ipaddresses", ["ip"], False, []),
    ("networking.k8s.io", "v1", "Ingress", "ingresses", ["ing"], True, []),
    ("networking.k8s.io", "v1", "IngressClass", "ingressclasses", [], False, []),
    ("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", ["netpol"], True, []),
    ("networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs", [], False, []),
    ("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", [], False, []),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", ["pdb"], True, []),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", [], False, []),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", [], False,
     []),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", [], True, []),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", [], True, []),
    ("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", [], False, []),
    ("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", [], True, []),
    ("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", [], True, []),
    ("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", [], False, []),
    ("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", ["pc"], False, []),
    ("storage.k8s.io", "v1", "CSIDriver", "csidrivers", [], False, []),
    ("storage.k8s.io", "v1", "CSINode", "csinodes", [], False, []),
    ("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", [], True, []),
    ("storage.k8s.io", "v1", "StorageClass", "storageclasses", ["sc"], False, []),
    ("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", [], False, []),
    ("storage.k8s.io", "v1", "VolumeAttributesClass", "volumeattributesclasses", ["vac"], False,
     []),
]

# Definitions whose JSON is any value (Go: runtime.RawExtension, apiextensions JSON, a CRD's
# schema props): decoding never refuses what they hold.
ANY = {
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
}
# Definitions with a Go type of their own that is not a struct.
SPECIAL = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr.IntOrString",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "v1.MicroTime",
}


def definitions():
    """The v1.34 definitions, from a downloaded (cached) kubernetes-validate wheel."""
    cache = Path(__file__).resolve().parent.parent / "target" / "openapi-src"
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob("kubernetes_validate-1.37.0-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest",
             str(cache), PACKAGE],
            check=True,
        )
        wheels = sorted(cache.glob("kubernetes_validate-1.37.0-*.whl"))
    with zipfile.ZipFile(wheels[0]) as z:
        return json.loads(z.read(DEFINITIONS))["$defs"]


def go_name(ref):
    """`io.k8s.api.core.v1.EnvVar` -> `v1.EnvVar`: the Go package's name and the type's."""
    parts = ref.split(".")
    return f"{parts[-2]}.{parts[-1]}"


class Builder:
    def __init__(self, defs):
        self.defs = defs
        self.types = []
        self.index = {}  # a type's canonical JSON -> its index
        self.by_ref = {}  # definition name -> index
        self.docs = {}  # struct index -> [description, field descriptions, required]

    def intern(self, node):
        key = json.dumps(node, sort_keys=True)
        if key not in self.index:
            self.index[key] = len(self.types)
            self.types.append(node)
        return self.index[key]

    def ref(self, name):
        if name in self.by_ref:
            return self.by_ref[name]
        if name in ANY:
            return self.intern("any")
        if name in SPECIAL:
            return self.intern(SPECIAL[name])
        d = self.defs[name]
        if "properties" not in d:
            return self.schema(d, name)
        # Reserve the slot first: definitions refer to themselves (JSONSchemaProps, and ANY aside).
        slot = len(self.types)
        self.types.append(None)
        self.by_ref[name] = slot
        fields = []
        described = []
        for field in sorted(d["properties"]):
            prop = d["properties"][field]
            entry = [field, self.schema(prop, name)]
            strategy = prop.get("x-kubernetes-patch-strategy")
            key = prop.get("x-kubernetes-patch-merge-key")
            if strategy or key:
                entry += [strategy or "", key or ""]
            fields.append(entry)
            described.append(prop.get("description", ""))
        self.types[slot] = {"s": go_name(name), "f": fields}
        self.docs[slot] = [d.get("description", ""), described, sorted(d.get("required", []))]
        return slot

    def schema(self, s, owner):
        if "$ref" in s:
            return self.ref(s["$ref"].split("/")[-1])
        types = s.get("type")
        if isinstance(types, list):
            types = [t for t in types if t != "null"]
            types = types[0] if len(types) == 1 else None
        fmt = s.get("format")
        if types == "string":
            return self.intern({"byte": "[]byte", "date-time": "v1.Time"}.get(fmt, "string"))
        if types == "integer":
            return self.intern(fmt if fmt in ("int32", "int64") else "int64")
        if types == "number":
            return self.intern("float64")
        if types == "boolean":
            return self.intern("bool")
        if types == "array":
            return self.intern({"l": self.schema(s.get("items", {}), owner)})
        if types == "object":
            extra = s.get("additionalProperties")
            if isinstance(extra, dict):
                return self.intern({"m": self.schema(extra, owner)})
            if "properties" in s:
                sys.exit(f"an inline struct in {owner}: give it a name in the generator")
            return self.intern("any")
        return self.intern("any")


def main():
    defs = definitions()
    gvk_def = {}
    for name, d in defs.items():
        for g in d.get("x-kubernetes-group-version-kind", []):
            gvk_def[(g["group"], g["version"], g["kind"])] = name
    b = Builder(defs)
    resources = []
    for group, version, kind, plural, shorts, namespaced, categories in RESOURCES:
        name = gvk_def.get((group, version, kind))
        if name is None:
            sys.exit(f"{group}/{version} {kind} is not in the definitions")
        resources.append(
            [group, version, kind, plural, shorts, namespaced, categories, b.ref(name)]
        )
    out = {
        "source": f"{PACKAGE} {DEFINITIONS.split('/', 2)[2]}",
        "resources": resources,
        "types": b.types,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"{OUT}: {len(resources)} resources, {len(b.types)} types, {OUT.stat().st_size} bytes")
    docs = {
        "source": out["source"],
        "types": len(b.types),
        "docs": [b.docs.get(i) for i in range(len(b.types))],
    }
    DOCS_OUT.parent.mkdir(parents=True, exist_ok=True)
    DOCS_OUT.write_text(json.dumps(docs, separators=(",", ":"), ensure_ascii=False) + "\n")
    print(f"{DOCS_OUT}: {DOCS_OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
