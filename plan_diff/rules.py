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

Changes to a type with no table here are shown as updates with a note: the provider may still
replace them, and this module does not say so without a source.

Versions read, against the pinned SDKs (requirements.txt: pulumi-kubernetes 4.34.2, pulumi-gcp 10.2.0,
pulumi-aws 7.51.1, pulumi-azure-native 3.29.0), each named in its table's source string:

- pulumi-kubernetes diff.go and helm_release.go at 94977969 (2026-07-01, the newest stored, after
  v4.32.0; diff.go's table is unchanged since cafe8c4, which has enableSecretMutable as 4.34 does).
- pulumi-gcp 10.x (released 2026-10-06) bridges terraform-provider-google-beta 8.x: 9.35.0, the last 9.x,
  bridged 7.45.0 (pulumi/pulumi-gcp 14da5bc), and Terraform's 8.0.0 came out on 2026-08-26. Read at
  magic-modules d57784406a (2026-08-21), main just after the 8.0.0 major-release branch was merged
  (#18733): the 8.0 schemas. private_cluster_config.enable_private_nodes lost ForceNew in v7.13.0
  (terraform-provider-google resource_container_cluster.go, v7.12.0 vs v7.13.0).
- pulumi-aws 7.x bridges terraform-provider-aws 6.x (pulumi/pulumi-aws#5665); read at the newest
  stored forms: cluster.go of 2026 (control_plane_scaling_config, deletion_protection) and
  node_group.go at 012e0a3 (node_repair_config). The pinned SDK also has fields no stored source shows
  (ClusterArgs.default_addons_to_removes, kube_*_config; NodeGroupArgs.warm_pool_config): they are
  listed in ``UNREAD``, and a change there is an update with a note that the provider may replace.
- kubernetes validation.go at 009801d (DeviceClass specs are mutable there: no rule).
- pulumi-azure-native replacement.go (``forceNewMap``) at 1b7112af and the URL path parameters of the
  pinned 3.29.0 SDK's resources: ``plan_diff/rules_azure.py`` (``AKS_TABLES``), which says what it reads.

Not modelled, for want of a plain ForceNew to read: the GKE cluster's CustomizeDiff rules
(ForceNewIfChange on enable_l4_ilb_subsetting and enable_fqdn_network_policy when turned off,
d.ForceNew on dns_config.additive_vpc_scope_dns_domain and enable_k8s_beta_apis.enabled_apis when one is
removed; the program sets none of them), and a Kubernetes provider whose own configuration change
(DiffConfig) would replace every object it manages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plan_diff.properties import MISSING, Path, parse_path, value_at
from plan_diff.rules_azure import azure_native_rules

PULUMI_KUBERNETES_DIFF = ("pulumi/pulumi-kubernetes provider/pkg/provider/diff.go (forceNew table) and "
                          "provider/pkg/provider/provider.go (kubeProvider.Diff), read at 94977969 (2026-07-01) "
                          "for the pinned 4.34")
PULUMI_KUBERNETES_HELM = ("pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go (helmReleaseProvider.Diff), "
                          "read at 94977969 (2026-07-01) for the pinned 4.34")
KUBERNETES_RESOURCE_VALIDATION = ("kubernetes/kubernetes pkg/apis/resource/validation/validation.go "
                                  "(ValidateResourceClaimUpdate, ValidateResourceClaimTemplateUpdate), read at 009801d")
_MAGIC_MODULES = ("GoogleCloudPlatform/magic-modules mmv1/third_party/terraform/services/container/{file}, read at "
                  "d57784406a (terraform-provider-google-beta 8.0, bridged by the pinned pulumi-gcp 10.2)")
GOOGLE_NODE_POOL = _MAGIC_MODULES.format(file="resource_container_node_pool.go.tmpl")
GOOGLE_NODE_CONFIG = _MAGIC_MODULES.format(file="node_config.go.tmpl (schemaNodeConfig)")
GOOGLE_CLUSTER = _MAGIC_MODULES.format(file="resource_container_cluster.go.tmpl")
AWS_NODE_GROUP = ("hashicorp/terraform-provider-aws internal/service/eks/node_group.go, read at 012e0a3 "
                  "(terraform-provider-aws 6.x, bridged by the pinned pulumi-aws 7.51)")
AWS_CLUSTER = ("hashicorp/terraform-provider-aws internal/service/eks/cluster.go, read in its 2026 form "
               "(terraform-provider-aws 6.x, bridged by the pinned pulumi-aws 7.51)")
RESOURCE_OPTION = "the resource's own replaceOnChanges option (applied by the Pulumi engine)"


@dataclass(frozen=True)
class Rule:
    path: Path
    source: str
    kind: str = "within"
    #: set when the provider itself would not replace, but the API refuses the update
    api_only: bool = False


def _rules(source: str, *paths: str, kind: str = "within", api_only: bool = False) -> list[Rule]:
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
    ("apps", "Deployment"): _rules(PULUMI_KUBERNETES_DIFF, "spec.selector"),
    ("apps", "DaemonSet"): _rules(PULUMI_KUBERNETES_DIFF, "spec.selector"),
    ("apps", "StatefulSet"): _rules(PULUMI_KUBERNETES_DIFF, "spec.podManagementPolicy", "spec.revisionHistoryLimit",
                                    "spec.selector", "spec.serviceName", "spec.volumeClaimTemplates"),
    ("core", "PersistentVolume"): _rules(PULUMI_KUBERNETES_DIFF, *(f"spec.{s}" for s in _PERSISTENT_VOLUME_SOURCES)),
    ("core", "PersistentVolumeClaim"): _rules(PULUMI_KUBERNETES_DIFF, "spec.accessModes", "spec.selector",
                                              "spec.storageClassName", "spec.volumeName"),
    ("core", "Pod"): _rules(PULUMI_KUBERNETES_DIFF, *(f"spec.{f}" for f in _POD_FIELDS),
                            *(f"spec.{c}[*].{f}" for c in ("containers", "initContainers") for f in _CONTAINER_FIELDS)),
    ("core", "ResourceQuota"): _rules(PULUMI_KUBERNETES_DIFF, "spec.scopes"),
    ("core", "Service"): _rules(PULUMI_KUBERNETES_DIFF, "spec.clusterIP"),
    ("rbac.authorization.k8s.io", "RoleBinding"): _rules(PULUMI_KUBERNETES_DIFF, "roleRef"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _rules(PULUMI_KUBERNETES_DIFF, "roleRef"),
    ("storage.k8s.io", "StorageClass"): _rules(PULUMI_KUBERNETES_DIFF, "parameters", "provisioner"),
    ("batch", "Job"): _rules(PULUMI_KUBERNETES_DIFF, "spec.completions", "spec.parallelism", "spec.selector",
                             "spec.template"),
    # Not in pulumi-kubernetes' table: the API server keeps both specs immutable, so an update is refused
    # ("field is immutable") and only a replacement applies the change. Without replaceOnChanges on the
    # resource, `pulumi up` attempts that update and fails; the diff reports what the cluster requires.
    ("resource.k8s.io", "ResourceClaimTemplate"): _rules(KUBERNETES_RESOURCE_VALIDATION, "spec", api_only=True),
    ("resource.k8s.io", "ResourceClaim"): _rules(KUBERNETES_RESOURCE_VALIDATION, "spec", api_only=True),
}
_K8S_IDENTITY = _rules(PULUMI_KUBERNETES_DIFF, "metadata.name", "metadata.namespace")
_HELM_RELEASE = _rules(PULUMI_KUBERNETES_HELM, "name", "namespace")


def _k8s_rules(type_: str, inputs: dict[str, Any], provider_inputs: dict[str, Any]) -> list[Rule]:
    """``kubernetes:<group>/<version>:<Kind>``; ``core`` is the legacy empty group."""
    _, group_version, kind = type_.split(":", 2)
    if group_version == "helm.sh/v3" and kind == "Release":
        return list(_HELM_RELEASE)
    group, _, version = group_version.rpartition("/")
    rules = list(_K8S_IDENTITY) + list(_K8S_KINDS.get((group, kind), []))
    if (group, version, kind) == ("policy", "v1beta1", "PodDisruptionBudget"):
        rules += _rules(PULUMI_KUBERNETES_DIFF, "spec")
    # forceNewProperties: a Secret's data replaces unless the provider has enableSecretMutable and the
    # Secret is not immutable; likewise a ConfigMap with enableConfigMapMutable.
    immutable = inputs.get("immutable") is True
    if (group, kind) == ("core", "Secret"):
        rules += _rules(PULUMI_KUBERNETES_DIFF, "type")
        if immutable or not _truthy(provider_inputs.get("enableSecretMutable")):
            rules += _rules(PULUMI_KUBERNETES_DIFF, "stringData", "data")
    if (group, kind) == ("core", "ConfigMap") and (immutable or not _truthy(provider_inputs.get(
            "enableConfigMapMutable"))):
        rules += _rules(PULUMI_KUBERNETES_DIFF, "binaryData", "data")
    return rules


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


# --- GKE (pulumi-gcp bridges terraform-provider-google) ----------------------------------------------
# Every ForceNew attribute of the three schemas, as tests/fixtures/terraform_google_container_forcenew.json
# records them; tests/test_plan_diff_rules.py holds the tables to that record in both directions.
# schemaNodeConfig: ForceNew fields of node_config, shared by the node pool and the cluster (whose
# node_config describes the default pool). Updatable in place (not listed), among others: disk_size_gb,
# disk_type, machine_type, image_type, labels, resource_labels, taint, tags, gvnic, gcfs_config,
# kubelet_config, workload_metadata_config, storage_pools, fast_socket, resource_manager_tags.
_NODE_CONFIG = ("guestAccelerators", "localSsdCount", "ephemeralStorageConfig", "ephemeralStorageLocalSsdConfig",
                "localNvmeSsdBlockConfig", "secondaryBootDisks", "metadata", "minCpuPlatform", "oauthScopes",
                "preemptible", "reservationAffinity", "spot", "serviceAccount", "shieldedInstanceConfig",
                "bootDiskKmsKey", "nodeGroup", "advancedMachineFeatures.threadsPerCore",
                "advancedMachineFeatures.enableNestedVirtualization", "soleTenantConfig.nodeAffinities",
                "hostMaintenancePolicy", "confidentialNodes.confidentialInstanceType", "enableConfidentialStorage",
                "localSsdEncryptionMode", "maxRunDuration", "flexStart")
# ForceNew blocks whose own fields update in place (sandbox_type, performance_monitoring_unit, min_node_cpus)
_NODE_CONFIG_BLOCKS = ("sandboxConfig", "advancedMachineFeatures", "soleTenantConfig")


def _node_config_rules() -> list[Rule]:
    return (_rules(GOOGLE_NODE_CONFIG, *(f"nodeConfig.{f}" for f in _NODE_CONFIG))
            + _rules(GOOGLE_NODE_CONFIG, *(f"nodeConfig.{f}" for f in _NODE_CONFIG_BLOCKS), kind="block"))


_GKE_NODE_POOL = (
    _rules(GOOGLE_NODE_POOL, "project", "cluster", "location", "name", "namePrefix", "initialNodeCount",
           "maxPodsPerNode", "placementPolicy.policyName", "queuedProvisioning",
           "networkConfig.acceleratorNetworkProfile", "networkConfig.createPodRange", "networkConfig.podRange",
           "networkConfig.podIpv4CidrBlock", "networkConfig.additionalNodeNetworkConfigs",
           "networkConfig.additionalPodNetworkConfigs", "networkConfig.subnetwork")
    + _rules(GOOGLE_NODE_POOL, "placementPolicy", "nodeConfig", "networkConfig.podCidrOverprovisionConfig",
             kind="block")
    + _node_config_rules()
)

# resource_container_cluster.go.tmpl. Updatable (not listed), among others: node_locations,
# deletion_protection, release_channel, min_master_version, master_authorized_networks_config,
# workload_identity_config, enable_shielded_nodes, remove_default_node_pool, resource_labels,
# private_cluster_config.enable_private_endpoint and, from terraform-provider-google v7.13.0
# (ForceNew removed between v7.12.0 and v7.13.0 of resource_container_cluster.go),
# private_cluster_config.enable_private_nodes.
_GKE_CLUSTER = (
    _rules(GOOGLE_CLUSTER, "name", "location", "project", "network", "subnetwork", "initialNodeCount",
           "networkingMode", "datapathProvider", "dataplaneOptimizationMode", "defaultMaxPodsPerNode",
           "enableKubernetesAlpha", "enableTpu", "enableAutopilot", "clusterIpv4Cidr", "description",
           "confidentialNodes", "masterAuth.clientCertificateConfig", "nodePools",
           "clusterAutoscaling.autoProvisioningDefaults.bootDiskKmsKey", "tpuConfig.enabled",
           "tpuConfig.useServiceNetworking", "ipAllocationPolicy.clusterIpv4CidrBlock",
           "ipAllocationPolicy.servicesIpv4CidrBlock", "ipAllocationPolicy.clusterSecondaryRangeName",
           "ipAllocationPolicy.servicesSecondaryRangeName", "privateClusterConfig.masterIpv4CidrBlock",
           "privateClusterConfig.privateEndpointSubnetwork", "userManagedKeysConfig.clusterCa",
           "userManagedKeysConfig.etcdApiCa", "userManagedKeysConfig.etcdPeerCa",
           "userManagedKeysConfig.aggregationCa")
    + _rules(GOOGLE_CLUSTER, "ipAllocationPolicy", "ipAllocationPolicy.podCidrOverprovisionConfig", "nodeConfig",
             kind="block")
    + _node_config_rules()
)

GKE_TABLES: dict[str, list[Rule]] = {
    "gcp:container/nodePool:NodePool": _GKE_NODE_POOL,
    "gcp:container/cluster:Cluster": _GKE_CLUSTER,
}

# --- EKS (pulumi-aws bridges terraform-provider-aws) -------------------------------------------------
# node_group.go: updatable in place (not listed): labels, taint, scaling_config, update_config, version,
# release_version, launch_template.version, tags.
_EKS_NODE_GROUP = _rules(AWS_NODE_GROUP, "amiType", "capacityType", "clusterName", "diskSize", "instanceTypes",
                         "launchTemplate.id", "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix",
                         "nodeRoleArn", "remoteAccess", "subnetIds")
# cluster.go: vpc_config (subnets, security groups, endpoint access) and version update in place;
# encryption_config replaces only when it is removed (CustomizeDiff ForceNewIfChange).
_EKS_CLUSTER = (
    _rules(AWS_CLUSTER, "name", "roleArn", "bootstrapSelfManagedAddons",
           "accessConfig.bootstrapClusterCreatorAdminPermissions", "kubernetesNetworkConfig.ipFamily",
           "kubernetesNetworkConfig.serviceIpv4Cidr", "outpostConfig.controlPlaneInstanceType",
           "outpostConfig.controlPlanePlacement.groupName")
    + _rules(AWS_CLUSTER, "encryptionConfig", kind="removed")
)

EKS_TABLES: dict[str, list[Rule]] = {
    "aws:eks/nodeGroup:NodeGroup": _EKS_NODE_GROUP,
    "aws:eks/cluster:Cluster": _EKS_CLUSTER,
}
# --- AKS (pulumi-azure-native, a native provider: its own forceNewMap and resource ids) ---------------
AKS_TABLES: dict[str, list[Rule]] = azure_native_rules(Rule)  # plan_diff/rules_azure.py

#: One table per provider's resource type; a new cloud adds its provider's tables here.
_BY_TYPE: dict[str, list[Rule]] = {**GKE_TABLES, **EKS_TABLES, **AKS_TABLES}

#: Inputs the pinned SDK has that no source read here shows: a change there is noted, not judged.
UNREAD: dict[str, tuple[Path, ...]] = {
    "aws:eks/cluster:Cluster": tuple(parse_path(p) for p in (
        "defaultAddonsToRemoves", "kubeApiServerConfig", "kubeControllerManagerConfig", "kubeSchedulerConfig")),
    "aws:eks/nodeGroup:NodeGroup": (parse_path("warmPoolConfig"),),
}


def unread(type_: str, path: Path) -> bool:
    """The change at ``path`` falls under an input whose replacement behaviour no source read here shows."""
    return any(_agree(p, path) and len(p) <= len(path) for p in UNREAD.get(type_, ()))


def rules_for(type_: str, inputs: dict[str, Any], provider_inputs: dict[str, Any] | None = None) -> list[Rule] | None:
    """The replacement rules of a resource type, or None when this module has none for it."""
    if type_.startswith("kubernetes:") and not type_.startswith("kubernetes:index:"):
        return _k8s_rules(type_, inputs, provider_inputs or {})
    return _BY_TYPE.get(type_)


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
