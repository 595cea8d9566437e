"""GKE's stack arguments: VPC network, cluster, GPU and TPU node pools, the COS driver installer, the TPU DRA
driver and one ComputeClass per compute class."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stacks import arguments as shared
from stacks.arguments.cloud import CloudArguments
from stacks.arguments.planned import CLUSTER_PATHS, FROM_POOLS, PENDING, KeyPaths, Planned, component

if TYPE_CHECKING:
    from stacks.config import StackConfig


class GkeArguments(CloudArguments):
    cloud = "gke"
    network_keys = ("existingNetwork", "existingSubnetwork")
    nvidia_dra_name = "nvidia-dra"

    def network(self, cfg: StackConfig, *, project: Any = None) -> Planned:
        cluster, net = cfg.cluster, cfg.cluster.network
        args: dict[str, Any] = {"name": cluster.name, "region": cluster.location, "cidr": net.cidr,
                                "pods_cidr": net.pods_cidr, "services_cidr": net.services_cidr,
                                "private_nodes": cluster.private_nodes}
        if project is not None:
            args["project"] = project
        if net.existing_network:
            args["existing_network"] = net.existing_network
        if net.existing_subnetwork:
            args["existing_subnetwork"] = net.existing_subnetwork
        return Planned(component("GkeNetwork"), "network", args, KeyPaths("cluster.network", {
            "name": "/cluster.name", "region": "/cluster.location", "private_nodes": "/cluster.privateNodes"}))

    def cluster(self, cfg: StackConfig, *, project: Any = PENDING, network: Any = PENDING,
                subnetwork: Any = PENDING, pods_range_name: str | None = None,
                services_range_name: str | None = None) -> Planned:
        cluster = cfg.cluster
        args: dict[str, Any] = {
            **self.cluster_args(cfg),
            "zones": list(cluster.zones),
            "project": project,
            "network": network,
            "subnetwork": subnetwork,
            "pods_cidr": cluster.network.pods_cidr,
            "services_cidr": cluster.network.services_cidr,
            "release_channel": cluster.release_channel,
            "private_nodes": cluster.private_nodes,
            "dns_endpoint": cluster.control_plane.dns_endpoint,
            "runner_cidrs": list(cluster.control_plane.runner_cidrs),
            "deletion_protection": cluster.deletion_protection,
        }
        if pods_range_name and services_range_name:
            args["pods_range_name"], args["services_range_name"] = pods_range_name, services_range_name
        return Planned(component("GkeCluster"), "gke", args, KeyPaths("cluster", CLUSTER_PATHS))

    def pool(self, cfg: StackConfig, pool_name: str, *, cluster: Any = PENDING, service_account: Any = PENDING,
             project: Any = None) -> Planned:
        pool = cfg.node_pools[pool_name]
        args = {
            **self.pool_args(cfg, pool_name),
            "cluster": cluster,
            "location": cfg.cluster.location,
            "zones": list(pool.zones or cfg.cluster.zones),
            **self.machines(pool),
            "service_account": service_account,
            "resource_labels": dict(cfg.cluster.labels),
        }
        if project is not None:
            args["project"] = project
        kind = "GkeTpuNodePool" if pool.family == "tpu" else "GkeGpuNodePool"
        return Planned(component(kind), pool_name, args, self.pool_paths(pool_name))

    def cloud_components(self, cfg: StackConfig) -> list[Callable[[], Planned]]:
        planned: list[Callable[[], Planned]] = []
        if shared.pools_needing_driver_installer(cfg):
            planned.append(lambda: driver_installer(cfg))
        if shared.tpu_pools(cfg):
            planned.append(lambda: shared.tpu_dra(cfg))
        return planned + [lambda c=c: compute_class(cfg, c) for c in cfg.compute_classes]


def driver_installer(cfg: StackConfig, node_pools: list[Any] | None = None) -> Planned:
    pools = shared.pools_needing_driver_installer(cfg)
    images = cfg.drivers.nvidia_driver_installer
    args = {
        "node_pools": node_pools if node_pools is not None else list(pools),
        "node_taints": shared.taint_dicts(shared.node_taints(cfg, pools)),
        "driver_version": images.driver_version,
        "installer_image": images.installer_image,
        "partition_image": images.partition_image,
        "pause_image": images.pause_image,
    }
    return Planned(component("NvidiaDriverInstaller"), "nvidia-driver-installer", args,
                   KeyPaths("drivers.nvidiaDriverInstaller", {"node_pools": "/nodePools", "node_taints": FROM_POOLS}))


def compute_class(cfg: StackConfig, class_name: str, node_pools: list[Any] | None = None) -> Planned:
    cc = cfg.compute_classes[class_name]
    args: dict[str, Any] = {"class_name": class_name,
                            "node_pools": node_pools if node_pools is not None else list(cc.pools)}
    if cc.consolidation_delay_minutes is not None:
        args["consolidation_delay_minutes"] = cc.consolidation_delay_minutes
    if cc.when_unsatisfiable:
        args["when_unsatisfiable"] = cc.when_unsatisfiable
    if cc.active_migration is not None:
        args["optimize_rule_priority"] = cc.active_migration.optimize_rule_priority
    return Planned(component("GkeComputeClass"), class_name, args, KeyPaths(f"computeClasses.{class_name}", {
        "node_pools": "pools", "optimize_rule_priority": "activeMigration.optimizeRulePriority",
        "class_name": ""}))


ARGUMENTS = GkeArguments()
