"""GKE's share of the plan diff: which pulumi-gcp changes replace a cluster or node pool, and what they mean.

pulumi-gcp 10.x (released 2026-10-06) bridges terraform-provider-google-beta 8.x: 9.35.0, the last 9.x,
bridged 7.45.0 (pulumi/pulumi-gcp 14da5bc), and Terraform's 8.0.0 came out on 2026-08-26. Read at
magic-modules d57784406a (2026-08-21), main just after the 8.0.0 major-release branch was merged
(#18733): the 8.0 schemas. private_cluster_config.enable_private_nodes lost ForceNew in v7.13.0
(terraform-provider-google resource_container_cluster.go, v7.12.0 vs v7.13.0).

Not modelled, for want of a plain ForceNew to read: the GKE cluster's CustomizeDiff rules
(ForceNewIfChange on enable_l4_ilb_subsetting and enable_fqdn_network_policy when turned off,
d.ForceNew on dns_config.additive_vpc_scope_dns_domain and enable_k8s_beta_apis.enabled_apis when one is
removed; the program sets none of them).
"""

from __future__ import annotations

from typing import Any

from plan_diff.compare import ResourceChange
from plan_diff.rules import Rule, rules_from

_MAGIC_MODULES = ("GoogleCloudPlatform/magic-modules mmv1/third_party/terraform/services/container/{file}, read at "
                  "d57784406a (terraform-provider-google-beta 8.0, bridged by the pinned pulumi-gcp 10.2)")
GOOGLE_NODE_POOL = _MAGIC_MODULES.format(file="resource_container_node_pool.go.tmpl")
GOOGLE_NODE_CONFIG = _MAGIC_MODULES.format(file="node_config.go.tmpl (schemaNodeConfig)")
GOOGLE_CLUSTER = _MAGIC_MODULES.format(file="resource_container_cluster.go.tmpl")

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"

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
    return (rules_from(GOOGLE_NODE_CONFIG, *(f"nodeConfig.{f}" for f in _NODE_CONFIG))
            + rules_from(GOOGLE_NODE_CONFIG, *(f"nodeConfig.{f}" for f in _NODE_CONFIG_BLOCKS), kind="block"))


_NODE_POOL = (
    rules_from(GOOGLE_NODE_POOL, "project", "cluster", "location", "name", "namePrefix", "initialNodeCount",
               "maxPodsPerNode", "placementPolicy.policyName", "queuedProvisioning",
               "networkConfig.acceleratorNetworkProfile", "networkConfig.createPodRange", "networkConfig.podRange",
               "networkConfig.podIpv4CidrBlock", "networkConfig.additionalNodeNetworkConfigs",
               "networkConfig.additionalPodNetworkConfigs", "networkConfig.subnetwork")
    + rules_from(GOOGLE_NODE_POOL, "placementPolicy", "nodeConfig", "networkConfig.podCidrOverprovisionConfig",
                 kind="block")
    + _node_config_rules()
)

# resource_container_cluster.go.tmpl. Updatable (not listed), among others: node_locations,
# deletion_protection, release_channel, min_master_version, master_authorized_networks_config,
# workload_identity_config, enable_shielded_nodes, remove_default_node_pool, resource_labels,
# private_cluster_config.enable_private_endpoint and, from terraform-provider-google v7.13.0
# (ForceNew removed between v7.12.0 and v7.13.0 of resource_container_cluster.go),
# private_cluster_config.enable_private_nodes.
_CLUSTER = (
    rules_from(GOOGLE_CLUSTER, "name", "location", "project", "network", "subnetwork", "initialNodeCount",
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
    + rules_from(GOOGLE_CLUSTER, "ipAllocationPolicy", "ipAllocationPolicy.podCidrOverprovisionConfig", "nodeConfig",
                 kind="block")
    + _node_config_rules()
)

REPLACEMENT_RULES: dict[str, list[Rule]] = {
    NODE_POOL_TYPE: _NODE_POOL,
    CLUSTER_TYPE: _CLUSTER,
}

CLUSTERS = {CLUSTER_TYPE: "GKE cluster"}
POOLS = {NODE_POOL_TYPE: "node pool"}


def accelerator(type_: str, inputs: dict[str, Any]) -> str | None:
    """"GPU" or "TPU" for a node pool that carries accelerators, None otherwise."""
    if type_ != NODE_POOL_TYPE:
        return None
    node_config = inputs.get("nodeConfig") or {}
    labels = node_config.get("labels") or {}
    if str(node_config.get("machineType", "")).startswith("ct") or any("tpu" in k for k in labels):
        return "TPU"
    if node_config.get("guestAccelerators") or any("nvidia.com/gpu" in k for k in labels):
        return "GPU"
    return None


#: Node pool fields pulumi-gcp updates in place (not ForceNew: tests/fixtures/terraform_google_container_
#: forcenew.json) by an upgrade that recreates every node: google/container/v1 cluster_service.proto,
#: UpdateNodePoolRequest ``machine_type``, ``disk_type``, ``disk_size_gb`` ("Initiates an upgrade operation that
#: migrates the nodes in the node pool to the specified machine type", googleapis/googleapis cf6f9ee).
NODE_RECREATING_UPDATES = {("nodeConfig", "machineType"): "machine type", ("nodeConfig", "diskType"): "disk type",
                           ("nodeConfig", "diskSizeGb"): "disk size"}


def node_recreating_update(change: ResourceChange, name: str) -> str | None:
    """The warning for an in-place update of an accelerator node pool that recreates its nodes, or None."""
    if change.type != NODE_POOL_TYPE:
        return None
    kind = accelerator(change.type, change.resource.inputs)
    changed = [NODE_RECREATING_UPDATES[p.path[:2]] for p in change.properties
               if tuple(p.path[:2]) in NODE_RECREATING_UPDATES]
    if kind is None or not changed:
        return None
    what = ", ".join(dict.fromkeys(changed))
    return (f"**{kind} node pool `{name}` is updated in place, and GKE replaces every node** (changed: "
            f"{what}): the pool keeps its name, but GKE migrates its nodes to the new {what} with the pool's upgrade "
            "strategy (surge by default), so each GPU node is drained and deleted. The replicas running there are "
            "evicted and stay Pending until new nodes are up, or land on the next pool of their fallback order.")
