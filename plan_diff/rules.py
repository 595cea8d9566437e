"""Which changed properties force a resource to be replaced, per provider, from the providers' own sources.

Every table names the file it was read from. Property names are the Pulumi (camelCase) names the
plan's inputs use; for the bridged GCP and AWS providers they are the Terraform schema's snake_case
names, checked against the installed SDK's input types by ``tests/test_plan_diff_rules.py``.

A rule's ``kind``:

- ``within``: any change at the path or below it replaces (a ForceNew attribute, or a block whose
  every field is ForceNew).
- ``block``: only adding or removing the whole block replaces (a ForceNew list block whose nested
  fields are updatable: Terraform's ForceNew on the block covers its element count, not its fields).
- ``removed``: only removing the block replaces.

The Kubernetes tables are here; each cloud's provider tables are in that cloud's share of the plan diff
(``plan_diff/gke.py``, ``plan_diff/eks.py``, ``plan_diff/aks.py``: ``REPLACEMENT_RULES`` and ``UNREAD``), found
through the cloud registry, each naming the version of its provider it was read at.

Changes to a type with no table here or in a cloud's are shown as updates with a note: the provider may still
replace them, and this module does not say so without a source.

Versions read, against the pinned SDK (requirements.txt: pulumi-kubernetes 4.34.2):

- pulumi-kubernetes diff.go and helm_release.go at 94977969 (2026-07-01, the newest stored, after
  v4.32.0; diff.go's table is unchanged since cafe8c4, which has enableSecretMutable as 4.34 does).
- kubernetes validation.go at 009801d (DeviceClass specs are mutable there: no rule).

Not modelled: a Kubernetes provider whose own configuration change (DiffConfig) would replace every object it
manages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from offline_plan.cloud_parts import registered_parts
from plan_diff.properties import MISSING, Path, parse_path, value_at

#: The area of a cloud's share of the plan diff (``clouds.part(cloud, "plan_diff")``: ``plan_diff.gke``).
AREA = "plan_diff"

PULUMI_KUBERNETES_DIFF = ("pulumi/pulumi-kubernetes provider/pkg/provider/diff.go (forceNew table) and "
                          "provider/pkg/provider/provider.go (kubeProvider.Diff), read at 94977969 (2026-07-01) "
                          "for the pinned 4.34")
PULUMI_KUBERNETES_HELM = ("pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go (helmReleaseProvider.Diff), "
                          "read at 94977969 (2026-07-01) for the pinned 4.34")
KUBERNETES_RESOURCE_VALIDATION = ("kubernetes/kubernetes pkg/apis/resource/validation/validation.go "
                                  "(ValidateResourceClaimUpdate, ValidateResourceClaimTemplateUpdate), read at 009801d")
RESOURCE_OPTION = "the resource's own replaceOnChanges option (applied by the Pulumi engine)"


@dataclass(frozen=True)
class Rule:
    path: Path
    source: str
    kind: str = "within"
    #: set when the provider itself would not replace, but the API refuses the update
    api_only: bool = False


def rules_from(source: str, *paths: str, kind: str = "within", api_only: bool = False) -> list[Rule]:
    """One rule per path, all read from ``source``."""
    return [Rule(parse_path(p), source, kind, api_only) for p in paths]


# --- Kubernetes -------------------------------------------------------------------------------------
# pulumi-kubernetes replaces when a changed path is listed here (convertPatchToDiff marks it
# *-replace); metadata.name and metadata.namespace always, since they are the object's identity.

_LABEL_SELECTOR = ("matchExpressions", "matchLabels")  # labelSelectorForceNewProperties: covered by the prefix
_CONTAINER_FIELDS = ("args", "command", "env", "image", "imagePullPolicy", "lifecycle", "livenessProbe", "ports",
                     "readinessProbe", "resources", "securityContext", "stdin", "stdinOnce",
                     "terminationMessagePath", "terminationMessagePolicy", "tty", "volumeDevices",
                     "volumeMounts", "workingDir")
_POD_FIELDS = ("affinity", "automountServiceAccountToken", "dnsConfig", "dnsPolicy", "enableServiceLinks",
               "hostAliases", "hostIPC", "hostNetwork", "hostPID", "hostname", "imagePullSecrets", "nodeName",
               "nodeSelector", "overhead", "preemptionPolicy", "priority", "priorityClassName", "readinessGates",
               "restartPolicy", "runtimeClassName", "schedulerName", "securityContext", "serviceAccount",
               "serviceAccountName", "shareProcessNamespace", "subdomain", "terminationGracePeriodSeconds",
               "volumes")
_PERSISTENT_VOLUME_SOURCES = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc",
                              "flexVolume", "flocker", "gcePersistentDisk", "glusterfs", "hostPath", "iscsi",
                              "local", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd",
                              "scaleIO", "storageos", "vsphereVolume")

# apps: the table lists these kinds for apps/v1 and v1beta2 (StatefulSet also v1beta1); the group is
# enough here, since earlier versions of Deployment and DaemonSet are no longer served.
_K8S_KINDS: dict[tuple[str, str], list[Rule]] = {
    ("apps", "Deployment"): rules_from(PULUMI_KUBERNETES_DIFF, "spec.selector"),
    ("apps", "DaemonSet"): rules_from(PULUMI_KUBERNETES_DIFF, "spec.selector"),
    ("apps", "StatefulSet"): rules_from(PULUMI_KUBERNETES_DIFF, "spec.podManagementPolicy", "spec.revisionHistoryLimit",
                                        "spec.selector", "spec.serviceName", "spec.volumeClaimTemplates"),
    ("core", "PersistentVolume"): rules_from(PULUMI_KUBERNETES_DIFF,
                                             *(f"spec.{s}" for s in _PERSISTENT_VOLUME_SOURCES)),
    ("core", "PersistentVolumeClaim"): rules_from(PULUMI_KUBERNETES_DIFF, "spec.accessModes", "spec.selector",
                                                  "spec.storageClassName", "spec.volumeName"),
    ("core", "Pod"): rules_from(PULUMI_KUBERNETES_DIFF, *(f"spec.{f}" for f in _POD_FIELDS),
                                *(f"spec.{c}[*].{f}" for c in ("containers", "initContainers")
                                  for f in _CONTAINER_FIELDS)),
    ("core", "ResourceQuota"): rules_from(PULUMI_KUBERNETES_DIFF, "spec.scopes"),
    ("core", "Service"): rules_from(PULUMI_KUBERNETES_DIFF, "spec.clusterIP"),
    ("rbac.authorization.k8s.io", "RoleBinding"): rules_from(PULUMI_KUBERNETES_DIFF, "roleRef"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): rules_from(PULUMI_KUBERNETES_DIFF, "roleRef"),
    ("storage.k8s.io", "StorageClass"): rules_from(PULUMI_KUBERNETES_DIFF, "parameters", "provisioner"),
    ("batch", "Job"): rules_from(PULUMI_KUBERNETES_DIFF, "spec.completions", "spec.parallelism", "spec.selector",
                                 "spec.template"),
    # Not in pulumi-kubernetes' table: the API server keeps both specs immutable, so an update is refused
    # ("field is immutable") and only a replacement applies the change. Without replaceOnChanges on the
    # resource, `pulumi up` attempts that update and fails; the diff reports what the cluster requires.
    ("resource.k8s.io", "ResourceClaimTemplate"): rules_from(KUBERNETES_RESOURCE_VALIDATION, "spec", api_only=True),
    ("resource.k8s.io", "ResourceClaim"): rules_from(KUBERNETES_RESOURCE_VALIDATION, "spec", api_only=True),
}
_K8S_IDENTITY = rules_from(PULUMI_KUBERNETES_DIFF, "metadata.name", "metadata.namespace")
_HELM_RELEASE = rules_from(PULUMI_KUBERNETES_HELM, "name", "namespace")


def _k8s_rules(type_: str, inputs: dict[str, Any], provider_inputs: dict[str, Any]) -> list[Rule]:
    """``kubernetes:<group>/<version>:<Kind>``; ``core`` is the legacy empty group."""
    _, group_version, kind = type_.split(":", 2)
    if group_version == "helm.sh/v3" and kind == "Release":
        return list(_HELM_RELEASE)
    group, _, version = group_version.rpartition("/")
    rules = list(_K8S_IDENTITY) + list(_K8S_KINDS.get((group, kind), []))
    if (group, version, kind) == ("policy", "v1beta1", "PodDisruptionBudget"):
        rules += rules_from(PULUMI_KUBERNETES_DIFF, "spec")
    # forceNewProperties: a Secret's data replaces unless the provider has enableSecretMutable and the
    # Secret is not immutable; likewise a ConfigMap with enableConfigMapMutable.
    immutable = inputs.get("immutable") is True
    if (group, kind) == ("core", "Secret"):
        rules += rules_from(PULUMI_KUBERNETES_DIFF, "type")
        if immutable or not _truthy(provider_inputs.get("enableSecretMutable")):
            rules += rules_from(PULUMI_KUBERNETES_DIFF, "stringData", "data")
    if (group, kind) == ("core", "ConfigMap") and (immutable or not _truthy(provider_inputs.get(
            "enableConfigMapMutable"))):
        rules += rules_from(PULUMI_KUBERNETES_DIFF, "binaryData", "data")
    return rules


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def cloud_tables() -> dict[str, list[Rule]]:
    """Every registered cloud's replacement rules by its providers' resource types (the first cloud to name a
    type wins)."""
    tables: dict[str, list[Rule]] = {}
    for part in registered_parts(AREA):
        for type_, table in getattr(part, "REPLACEMENT_RULES", {}).items():
            tables.setdefault(type_, table)
    return tables


def unread_inputs() -> dict[str, tuple[Path, ...]]:
    """Inputs a cloud's pinned SDK has that no source it read shows: a change there is noted, not judged."""
    found: dict[str, tuple[Path, ...]] = {}
    for part in registered_parts(AREA):
        for type_, paths in getattr(part, "UNREAD", {}).items():
            found.setdefault(type_, paths)
    return found


def unread(type_: str, path: Path) -> bool:
    """The change at ``path`` falls under an input whose replacement behaviour no source read here shows."""
    return any(_agree(p, path) and len(p) <= len(path) for p in unread_inputs().get(type_, ()))


def rules_for(type_: str, inputs: dict[str, Any], provider_inputs: dict[str, Any] | None = None) -> list[Rule] | None:
    """The replacement rules of a resource type, or None when this module has none for it."""
    if type_.startswith("kubernetes:") and not type_.startswith("kubernetes:index:"):
        return _k8s_rules(type_, inputs, provider_inputs or {})
    return cloud_tables().get(type_)


def option_rules(replace_on_changes: list[str]) -> list[Rule]:
    return [Rule(parse_path(p), RESOURCE_OPTION) for p in replace_on_changes]


def replacing_rule(rules: list[Rule], path: Path, old_inputs: Any, new_inputs: Any) -> Rule | None:
    """The first rule under which a change at ``path`` (add, delete or update) replaces the resource."""
    for rule in rules:
        if not _agree(rule.path, path):
            continue
        if rule.kind == "within":
            if len(rule.path) <= len(path) or _present(rule.path, old_inputs, new_inputs):
                return rule
            continue
        # block / removed: the block itself (or something enclosing it) appears or disappears
        if len(path) > len(rule.path):
            continue
        had = value_at(old_inputs, rule.path) is not MISSING
        has = value_at(new_inputs, rule.path) is not MISSING
        if (rule.kind == "block" and had != has) or (rule.kind == "removed" and had and not has):
            return rule
    return None


def _agree(rule_path: Path, path: Path) -> bool:
    """The two paths agree on their common length (``*`` in the rule matches any one element).

    Then either the change lies at or under the rule's field, or it is a whole subtree enclosing it.
    """
    return all(r == "*" or r == e for r, e in zip(rule_path, path, strict=False))


def _present(rule_path: Path, old_inputs: Any, new_inputs: Any) -> bool:
    """A changed enclosing subtree replaces only when it holds the rule's field on either side."""
    return value_at(old_inputs, rule_path) is not MISSING or value_at(new_inputs, rule_path) is not MISSING
