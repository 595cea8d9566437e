"""EKS's stack arguments: VPC, cluster, one managed node group per pool, the device plugin for classic GPU
groups and the Cluster Autoscaler (which orders the node groups of a compute class); EKS's own config rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stacks import arguments as shared
from stacks.arguments.cloud import CloudArguments
from stacks.arguments.planned import (
    CHART_PATHS,
    CLUSTER_PATHS,
    PENDING,
    Issues,
    KeyPaths,
    Planned,
    chart_args,
    component,
)

if TYPE_CHECKING:
    from stacks.config import StackConfig

#: Availability zones an EKS control plane needs subnets in.
MIN_CLUSTER_ZONES = 2


def system_node_group() -> str:
    """The pool name the EKS cluster's own CPU node group takes."""
    from gpu_fungibility.clouds.eks.system_pool import SYSTEM_NODE_GROUP

    return SYSTEM_NODE_GROUP


def node_group_name(cluster_name: str, pool_name: str) -> str:
    """The EKS node group of a pool (and the component's resource name)."""
    return f"{cluster_name}-{pool_name}"


def _listed(subnet_ids: Any) -> Any:
    return list(subnet_ids) if isinstance(subnet_ids, tuple) else subnet_ids


class EksArguments(CloudArguments):
    cloud = "eks"
    provider_region_key = "aws:region"
    network_keys = ("existingSubnetIds",)
    location_argument = "region"
    labels_argument = "tags"
    system_pool_argument = "system_node_group"

    def issues(self, cfg: StackConfig) -> Issues:
        cluster = cfg.cluster
        issues = []
        for i, zone in enumerate(cluster.zones):
            if not zone.startswith(cluster.location):
                issues.append((f"cluster.zones[{i}]", f"{zone} is not an availability zone of region "
                                                      f"{cluster.location} (cluster.location)"))
        # EKS places the control plane's network interfaces in two or more zones: CreateCluster refuses
        # subnets that all sit in one availability zone.
        if cluster.network.existing_subnet_ids:
            if len(set(cluster.network.existing_subnet_ids)) < MIN_CLUSTER_ZONES:
                issues.append(("cluster.network.existingSubnetIds",
                               f"EKS needs subnets in at least {MIN_CLUSTER_ZONES} availability zones; "
                               "list a subnet in each of two or more zones"))
        elif len(set(cluster.zones)) < MIN_CLUSTER_ZONES:
            issues.append(("cluster.zones", f"EKS needs at least {MIN_CLUSTER_ZONES} availability zones of "
                                            f"{cluster.location}; list two or more (a pool may still use one, "
                                            "with nodePools.<pool>.zones)"))
        if system_node_group() in cfg.node_pools:
            issues.append((f"nodePools.{system_node_group()}", f"the name {system_node_group()!r} is taken by the "
                                                               "cluster's CPU node group; rename the pool"))
        # EKS has no DNS-based endpoint. A private-only endpoint takes requests from within the cluster VPC and
        # from networks connected to it (a peered VPC, a Transit Gateway, VPN or Direct Connect: EKS user guide,
        # "Cluster API server endpoint"), so a runner range outside the VPC is accepted like any other.
        if "dns_endpoint" in cluster.control_plane.model_fields_set:
            issues.append(("cluster.controlPlane.dnsEndpoint", "is for GKE; EKS has only its IP endpoint: use "
                                                               "publicEndpoint with authorizedNetworks, or runnerCidrs"))
        if cluster.network.existing_subnet_ids:
            for name, pool in cfg.node_pools.items():
                if pool.zones:
                    issues.append((f"nodePools.{name}.zones", "per-pool zones need the network this stack builds; "
                                                              "with cluster.network.existingSubnetIds, remove zones"))
        return issues

    def network(self, cfg: StackConfig) -> Planned:
        cluster, net = cfg.cluster, cfg.cluster.network
        args = {"cluster_name": cluster.name, "cidr": net.cidr, "zones": list(cluster.zones),
                "existing_subnet_ids": list(net.existing_subnet_ids), "nat_gateway_per_zone": net.nat_gateway_per_zone,
                "tags": dict(cluster.labels)}
        return Planned(component("EksNetwork"), f"{cluster.name}-network", args, KeyPaths("cluster.network", {
            "cluster_name": "/cluster.name", "zones": "/cluster.zones", "tags": "/cluster.labels"}))

    def cluster(self, cfg: StackConfig, *, subnet_ids: Any = (PENDING,)) -> Planned:
        cluster = cfg.cluster
        args = {
            **self.cluster_args(cfg),
            "subnet_ids": _listed(subnet_ids),
            "runner_cidrs": list(cluster.control_plane.runner_cidrs),
            "admin_principals": list(cluster.control_plane.admin_principals),
            "deletion_protection": cluster.deletion_protection,
            "support_type": cluster.eks_support_type,
        }
        return Planned(component("EksCluster"), cluster.name, args, KeyPaths("cluster", CLUSTER_PATHS))

    def pool(self, cfg: StackConfig, pool_name: str, *, cluster_name: Any = PENDING, node_role_arn: Any = PENDING,
             subnet_ids: Any = (PENDING,)) -> Planned:
        group = node_group_name(cfg.cluster.name, pool_name)
        args = {
            **self.pool_args(cfg, pool_name),
            "cluster_name": cluster_name,
            "node_role_arn": node_role_arn,
            "subnet_ids": _listed(subnet_ids),
            **self.machines(cfg.node_pools[pool_name]),
            "node_group_name": group,
            "tags": {**cfg.cluster.labels, "gpu-fungibility/pool": pool_name},
        }
        return Planned(component("EksGpuNodeGroup"), group, args, self.pool_paths(pool_name))

    def cloud_components(self, cfg: StackConfig) -> list[Callable[[], Planned]]:
        planned: list[Callable[[], Planned]] = []
        if shared.device_plugin_pools(cfg):
            planned.append(lambda: shared.device_plugin(cfg))
        return [*planned, lambda: cluster_autoscaler(cfg)]


def cluster_autoscaler(cfg: StackConfig, *, oidc_provider_arn: Any = PENDING, oidc_issuer: Any = PENDING,
                       nodegroup_arn_prefix: Any = PENDING) -> Planned:
    name = cfg.cluster.name
    args = {
        "cluster_name": name,
        "region": cfg.cluster.location,
        "oidc_provider_arn": oidc_provider_arn,
        "oidc_issuer": oidc_issuer,
        "nodegroup_arn_prefix": nodegroup_arn_prefix,
        "system_node_group": node_group_name(name, system_node_group()),
        "fallback_orders": [[node_group_name(name, p) for p in cc.pools] for cc in cfg.compute_classes.values()],
        "other_node_groups": [node_group_name(name, p) for p in [system_node_group(), *shared.unlisted_pools(cfg)]],
        "dynamic_resource_allocation": any(p.dra for p in cfg.node_pools.values()),
        "kubernetes_version": cfg.cluster.kubernetes_version,
        **chart_args(cfg.drivers.cluster_autoscaler),
    }
    return Planned(component("ClusterAutoscaler"), f"{name}-autoscaler", args, KeyPaths("drivers.clusterAutoscaler", {
        **CHART_PATHS, "cluster_name": "/cluster.name", "region": "/cluster.location",
        "kubernetes_version": "/cluster.kubernetesVersion", "fallback_orders": "/computeClasses"}))


ARGUMENTS = EksArguments()
