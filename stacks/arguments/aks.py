"""AKS's stack arguments: virtual network, cluster, one GPU node pool per pool, the device plugin (tolerating
Spot pools' taint) and the autoscaler's priorities (which order the pools of a compute class); AKS's own
config rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stacks import arguments as shared
from stacks.arguments.cloud import CloudArguments
from stacks.arguments.planned import CLUSTER_PATHS, PENDING, Issues, KeyPaths, Planned, component

if TYPE_CHECKING:
    from stacks.config import StackConfig

AZURE_ZONES = ("1", "2", "3")


def system_pool() -> str:
    """The pool name the AKS cluster's own system pool takes."""
    from gpu_fungibility.clouds.aks.system_pool import SYSTEM_POOL

    return SYSTEM_POOL


def resource_group_name(cfg: StackConfig) -> str:
    """The cluster's resource group: ``cluster.resourceGroup``, or the one the stack builds."""
    return cfg.cluster.resource_group or f"{cfg.cluster.name}-rg"


class AksArguments(CloudArguments):
    cloud = "aks"
    provider_region_key = "azure-native:location"
    network_keys = ("existingSubnetId",)
    labels_argument = "tags"

    def issues(self, cfg: StackConfig) -> Issues:
        cluster = cfg.cluster
        issues = []
        for i, zone in enumerate(cluster.zones):
            if zone not in AZURE_ZONES:
                issues.append((f"cluster.zones[{i}]", f"{zone!r} is not an Azure availability zone; list zones as "
                                                      "\"1\", \"2\" or \"3\" (cluster.location is the region)"))
        access = cluster.control_plane
        if "dns_endpoint" in access.model_fields_set:
            issues.append(("cluster.controlPlane.dnsEndpoint", "is for GKE; an AKS API server is public with "
                                                               "authorizedNetworks (publicEndpoint: true) or private"))
        if access.runner_cidrs:
            issues.append(("cluster.controlPlane.runnerCidrs", "is for GKE and EKS; a private AKS API server "
                                                               "answers inside its virtual network: run `pulumi up` "
                                                               "there and list that range in the policy pack's "
                                                               "runnerCidrs config (docs/aks.md), or use "
                                                               "publicEndpoint with authorizedNetworks"))
        if system_pool() in cfg.node_pools:
            issues.append((f"nodePools.{system_pool()}", f"the name {system_pool()!r} is taken by the cluster's "
                                                         "system pool; rename the pool"))
        return issues

    def network(self, cfg: StackConfig, *, resource_group: Any = PENDING) -> Planned:
        cluster, net = cfg.cluster, cfg.cluster.network
        args: dict[str, Any] = {"cluster_name": cluster.name, "resource_group_name": resource_group,
                                "location": cluster.location, "cidr": net.cidr, "tags": dict(cluster.labels)}
        if net.existing_subnet_id:
            args["existing_subnet_id"] = net.existing_subnet_id
        return Planned(component("AksNetwork"), f"{cluster.name}-network", args, KeyPaths("cluster.network", {
            "cluster_name": "/cluster.name", "location": "/cluster.location", "tags": "/cluster.labels",
            "resource_group_name": "/cluster.resourceGroup"}))

    def cluster(self, cfg: StackConfig, *, resource_group: Any = None, node_subnet_id: Any = PENDING) -> Planned:
        """``resource_group``: the group's name or output (default: the configured one, or the one the stack
        builds)."""
        cluster = cfg.cluster
        args = {
            **self.cluster_args(cfg),
            "resource_group_name": resource_group if resource_group is not None else resource_group_name(cfg),
            "node_subnet_id": node_subnet_id,
            "zones": list(cluster.zones),
            "admin_group_object_ids": list(cluster.control_plane.admin_group_object_ids),
        }
        return Planned(component("AksCluster"), cluster.name, args, KeyPaths("cluster", {
            **CLUSTER_PATHS, "admin_group_object_ids": "controlPlane.adminGroupObjectIds",
            "resource_group_name": "resourceGroup", "node_subnet_id": "network.existingSubnetId",
            "system_pool.vm_size": "systemPool.vmSize", "system_pool.disk_size_gb": "systemPool.diskSizeGb"}))

    def pool(self, cfg: StackConfig, pool_name: str, *, cluster_name: Any = PENDING, resource_group: Any = PENDING,
             node_subnet_id: Any = None) -> Planned:
        pool = cfg.node_pools[pool_name]
        args: dict[str, Any] = {
            **self.pool_args(cfg, pool_name),
            "cluster_name": cluster_name,
            "resource_group_name": resource_group,
            **self.machines(pool),
            "pool_name": pool_name,
            "zones": list(pool.zones or cfg.cluster.zones),
            "kubernetes_version": cfg.cluster.kubernetes_version,
            "tags": {**cfg.cluster.labels, "gpu-fungibility-pool": pool_name},
        }
        if node_subnet_id is not None:
            args["node_subnet_id"] = node_subnet_id
        return Planned(component("AksGpuNodePool"), pool_name, args, self.pool_paths(
            pool_name, zones="zones", kubernetes_version="/cluster.kubernetesVersion"))

    def cloud_components(self, cfg: StackConfig) -> list[Callable[[], Planned]]:
        planned: list[Callable[[], Planned]] = []
        if shared.device_plugin_pools(cfg):
            planned.append(lambda: device_plugin(cfg))
        if cfg.compute_classes:
            planned.append(lambda: priorities(cfg))
        return planned


def priorities(cfg: StackConfig) -> Planned:
    args = {"fallback_orders": [list(cc.pools) for cc in cfg.compute_classes.values()],
            "other_pools": [system_pool(), *shared.unlisted_pools(cfg)]}
    return Planned(component("AksAutoscalerPriorities"), f"{cfg.cluster.name}-autoscaler-priorities", args,
                   KeyPaths("computeClasses", {"fallback_orders": "/computeClasses"}))


def device_plugin(cfg: StackConfig) -> Planned:
    """The device plugin, tolerating every taint of the classic pools: on AKS a Spot pool's nodes carry
    ``kubernetes.azure.com/scalesetpriority=spot:NoSchedule``, which the chart's values do not tolerate."""
    from gpu_fungibility import helm_values
    from gpu_fungibility.device_plugin import device_plugin_values

    planned = shared.device_plugin(cfg)
    library = device_plugin_values()["tolerations"]
    extra = [{"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
             for t in shared.node_taints(cfg, shared.device_plugin_pools(cfg)) if t.key != library[0]["key"]]
    values = helm_values.merge({"tolerations": [*library, *extra]}, planned.args.get("values") or {})
    return Planned(planned.component, planned.name, {**planned.args, "values": values}, planned.paths)


ARGUMENTS = AksArguments()
