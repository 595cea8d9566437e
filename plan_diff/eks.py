"""EKS's share of the plan diff: which pulumi-aws changes replace a cluster or node group, and what they mean.

pulumi-aws 7.x bridges terraform-provider-aws 6.x (pulumi/pulumi-aws#5665); read at the newest stored
forms: cluster.go of 2026 (control_plane_scaling_config, deletion_protection) and node_group.go at 012e0a3
(node_repair_config). The pinned SDK also has fields no stored source shows (ClusterArgs.default_addons_to_removes,
kube_*_config; NodeGroupArgs.warm_pool_config): they are listed in ``UNREAD``, and a change there is an update
with a note that the provider may replace.
"""

from __future__ import annotations

from typing import Any

from plan_diff.properties import parse_path
from plan_diff.rules import Rule, rules_from

AWS_NODE_GROUP = ("hashicorp/terraform-provider-aws internal/service/eks/node_group.go, read at 012e0a3 "
                  "(terraform-provider-aws 6.x, bridged by the pinned pulumi-aws 7.51)")
AWS_CLUSTER = ("hashicorp/terraform-provider-aws internal/service/eks/cluster.go, read in its 2026 form "
               "(terraform-provider-aws 6.x, bridged by the pinned pulumi-aws 7.51)")

CLUSTER_TYPE = "aws:eks/cluster:Cluster"
NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"

# node_group.go: updatable in place (not listed): labels, taint, scaling_config, update_config, version,
# release_version, launch_template.version, tags.
_NODE_GROUP = rules_from(AWS_NODE_GROUP, "amiType", "capacityType", "clusterName", "diskSize", "instanceTypes",
                         "launchTemplate.id", "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix",
                         "nodeRoleArn", "remoteAccess", "subnetIds")
# cluster.go: vpc_config (subnets, security groups, endpoint access) and version update in place;
# encryption_config replaces only when it is removed (CustomizeDiff ForceNewIfChange).
_CLUSTER = (
    rules_from(AWS_CLUSTER, "name", "roleArn", "bootstrapSelfManagedAddons",
               "accessConfig.bootstrapClusterCreatorAdminPermissions", "kubernetesNetworkConfig.ipFamily",
               "kubernetesNetworkConfig.serviceIpv4Cidr", "outpostConfig.controlPlaneInstanceType",
               "outpostConfig.controlPlanePlacement.groupName")
    + rules_from(AWS_CLUSTER, "encryptionConfig", kind="removed")
)

REPLACEMENT_RULES: dict[str, list[Rule]] = {
    NODE_GROUP_TYPE: _NODE_GROUP,
    CLUSTER_TYPE: _CLUSTER,
}

#: Inputs the pinned SDK has that no source read here shows: a change there is noted, not judged.
UNREAD = {
    CLUSTER_TYPE: tuple(parse_path(p) for p in (
        "defaultAddonsToRemoves", "kubeApiServerConfig", "kubeControllerManagerConfig", "kubeSchedulerConfig")),
    NODE_GROUP_TYPE: (parse_path("warmPoolConfig"),),
}

CLUSTERS = {CLUSTER_TYPE: "EKS cluster"}
POOLS = {NODE_GROUP_TYPE: "node group"}


def accelerator(type_: str, inputs: dict[str, Any]) -> str | None:
    """"GPU" for a node group that carries accelerators (by its AMI or labels), None otherwise."""
    if type_ != NODE_GROUP_TYPE:
        return None
    ami = str(inputs.get("amiType", ""))
    labels = inputs.get("labels") or {}
    if any(word in ami for word in ("NVIDIA", "GPU", "NEURON")) or any("nvidia.com/gpu" in k for k in labels):
        return "GPU"
    return None
