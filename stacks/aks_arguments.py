"""From an AKS stack config to the AKS components' arguments, with their key paths.

The AKS half of :mod:`stacks.arguments`: same :class:`~stacks.arguments.Planned` shape, same stand-ins
(:data:`~stacks.arguments.PENDING`) for values other resources provide.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stacks.arguments import (
    CLUSTER_PATHS,
    PENDING,
    POOL_PATHS,
    KeyPaths,
    Planned,
    _component,
    _pool_common,
    device_plugin,
    device_plugin_pools,
    node_taints,
)

if TYPE_CHECKING:
    from stacks.config import StackConfig


def resource_group_name(cfg: StackConfig) -> str:
    """The cluster's resource group: ``cluster.resourceGroup``, or the one the stack builds."""
    return cfg.cluster.resource_group or f"{cfg.cluster.name}-rg"


def aks_network(cfg: StackConfig, *, resource_group: Any = PENDING) -> Planned:
    cluster, net = cfg.cluster, cfg.cluster.network
    args: dict[str, Any] = {"cluster_name": cluster.name, "resource_group_name": resource_group,
                            "location": cluster.location, "cidr": net.cidr, "tags": dict(cluster.labels)}
    if net.existing_subnet_id:
        args["existing_subnet_id"] = net.existing_subnet_id
    return Planned(_component("AksNetwork"), f"{cluster.name}-network", args, KeyPaths("cluster.network", {
        "cluster_name": "/cluster.name", "location": "/cluster.location", "tags": "/cluster.labels",
        "resource_group_name": "/cluster.resourceGroup"}))


def aks_cluster(cfg: StackConfig, *, resource_group: Any = PENDING, node_subnet_id: Any = PENDING) -> Planned:
    cluster = cfg.cluster
    args = {
        "name": cluster.name,
        "resource_group_name": resource_group,
        "location": cluster.location,
        "node_subnet_id": node_subnet_id,
        "zones": list(cluster.zones),
        "kubernetes_version": cluster.kubernetes_version,
        "public_endpoint": cluster.control_plane.public_endpoint,
        "authorized_networks": list(cluster.control_plane.authorized_networks),
        "admin_group_object_ids": list(cluster.control_plane.admin_group_object_ids),
        "tags": dict(cluster.labels),
        "system_pool": {"vm_size": cluster.system_pool.vm_size, "min_nodes": cluster.system_pool.min,
                        "max_nodes": cluster.system_pool.max, "disk_size_gb": cluster.system_pool.disk_size_gb},
    }
    return Planned(_component("AksCluster"), cluster.name, args, KeyPaths("cluster", {
        **CLUSTER_PATHS, "admin_group_object_ids": "controlPlane.adminGroupObjectIds",
        "resource_group_name": "resourceGroup", "node_subnet_id": "network.existingSubnetId",
        "system_pool.vm_size": "systemPool.vmSize", "system_pool.disk_size_gb": "systemPool.diskSizeGb"}))


def aks_pool(cfg: StackConfig, pool_name: str, *, cluster_name: Any = PENDING, resource_group: Any = PENDING,
             node_subnet_id: Any = None) -> Planned:
    pool = cfg.node_pools[pool_name]
    common = _pool_common(cfg, pool_name)
    common.pop("compute_class", None)  # AKS orders pools through the autoscaler's priorities, not node labels
    args: dict[str, Any] = {
        **common,
        "cluster_name": cluster_name,
        "resource_group_name": resource_group,
        "vm_size": pool.vm_size or "",
        "pool_name": pool_name,
        "zones": list(pool.zones or cfg.cluster.zones),
        "kubernetes_version": cfg.cluster.kubernetes_version,
        "tags": {**cfg.cluster.labels, "gpu-fungibility-pool": pool_name},
    }
    if node_subnet_id is not None:
        args["node_subnet_id"] = node_subnet_id
    return Planned(_component("AksGpuNodePool"), pool_name, args, KeyPaths(f"nodePools.{pool_name}", {
        **POOL_PATHS, "zones": "zones", "kubernetes_version": "/cluster.kubernetesVersion"}))


def aks_priorities(cfg: StackConfig) -> Planned:
    args = {"fallback_orders": [list(cc.pools) for cc in cfg.compute_classes.values()]}
    return Planned(_component("AksAutoscalerPriorities"), f"{cfg.cluster.name}-autoscaler-priorities", args,
                   KeyPaths("computeClasses", {"fallback_orders": "/computeClasses"}))


def aks_device_plugin(cfg: StackConfig) -> Planned:
    """The device plugin, tolerating every taint of the classic pools: on AKS a Spot pool's nodes carry
    ``kubernetes.azure.com/scalesetpriority=spot:NoSchedule``, which the chart's values do not tolerate."""
    from gpu_fungibility import helm_values
    from gpu_fungibility.device_plugin import device_plugin_values

    planned = device_plugin(cfg)
    library = device_plugin_values()["tolerations"]
    extra = [{"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
             for t in node_taints(cfg, device_plugin_pools(cfg)) if t.key != library[0]["key"]]
    values = helm_values.merge({"tolerations": [*library, *extra]}, planned.args.get("values") or {})
    return Planned(planned.component, planned.name, {**planned.args, "values": values}, planned.paths)


def aks_components(cfg: StackConfig) -> list[Callable[[], Planned]]:
    planned: list[Callable[[], Planned]] = [lambda: aks_network(cfg), lambda: aks_cluster(cfg)]
    planned += [lambda p=p: aks_pool(cfg, p) for p in cfg.node_pools]
    if device_plugin_pools(cfg):
        planned.append(lambda: aks_device_plugin(cfg))
    if cfg.compute_classes:
        planned.append(lambda: aks_priorities(cfg))
    return planned
