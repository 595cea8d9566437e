"""GKE composition: network, cluster, accelerator pools, drivers, compute classes, then workloads.

Order (explicit ``depends_on`` where no output links two resources, so one
``pulumi up`` converges): cluster -> pools -> drivers (installer, then NVIDIA
DRA; TPU DRA) and compute classes -> DRA objects and workloads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp

from components.compute_class import GkeComputeClass, GkeComputeClassArgs
from components.driver_installer import NvidiaDriverInstaller, NvidiaDriverInstallerArgs
from components.gke_cluster import GkeCluster, GkeClusterArgs
from components.gke_network import GkeNetwork, GkeNetworkArgs
from components.gke_pools import GkeGpuNodePool, GkeNodePoolArgs, GkeTpuNodePool, pools_needing_driver_installer
from components.nvidia_dra import NvidiaDraDriver, NvidiaDraDriverArgs, dra_gpu_pools
from components.tpu_dra import TpuDraDriver, TpuDraDriverArgs, tpu_pools

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def compose_gke(loaded: LoadedStack) -> None:
    cfg = loaded.config
    project = gcp.organizations.get_client_config_output().project

    network = GkeNetwork("network", GkeNetworkArgs(cluster=cfg.cluster, project=project))
    cluster = GkeCluster(
        "gke",
        GkeClusterArgs(
            config=cfg.cluster,
            project=project,
            network=network.network,
            subnetwork=network.subnetwork,
            pods_range_name=network.pods_range_name,
            services_range_name=network.services_range_name,
        ),
        # Private nodes need NAT egress before they can pull images.
        opts=pulumi.ResourceOptions(depends_on=[network]),
    )
    k8s = pulumi.ResourceOptions(providers=[cluster.provider])

    pools: dict[str, GkeGpuNodePool | GkeTpuNodePool] = {}
    for pool_name, pool in cfg.node_pools.items():
        component = GkeGpuNodePool if pool.family == "gpu" else GkeTpuNodePool
        pools[pool_name] = component(
            pool_name,
            GkeNodePoolArgs(config=cfg, pool_name=pool_name, cluster=cluster.cluster_name,
                            service_account=cluster.node_service_account_email, project=project),
        )

    def after(names: list[str], *extra: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions.merge(
            k8s, pulumi.ResourceOptions(depends_on=[cluster.system_pool, *extra, *(pools[n] for n in names)]))

    drivers: list[pulumi.Resource] = []
    installer_pools = pools_needing_driver_installer(cfg)
    if installer_pools:
        drivers.append(NvidiaDriverInstaller(
            "nvidia-driver-installer", NvidiaDriverInstallerArgs.for_pools(cfg, installer_pools),
            opts=after(installer_pools)))
    if dra_gpu_pools(cfg):
        drivers.append(NvidiaDraDriver(
            "nvidia-dra", NvidiaDraDriverArgs.for_stack(cfg), opts=after(dra_gpu_pools(cfg), *drivers)))
    if tpu_pools(cfg):
        drivers.append(TpuDraDriver("tpu-dra", TpuDraDriverArgs.for_stack(cfg), opts=after(tpu_pools(cfg))))

    compute_classes = [
        GkeComputeClass(
            class_name,
            GkeComputeClassArgs(class_name=class_name, config=cc,
                                node_pool_names=[pools[p].node_pool_name for p in cc.pools]),
            opts=after(list(cc.pools)),
        )
        for class_name, cc in cfg.compute_classes.items()
    ]

    from stacks.in_cluster import deploy_dra_and_workloads

    deploy_dra_and_workloads(loaded, cluster.provider, depends_on=[*drivers, *compute_classes])

    pulumi.export("cloud", "gke")
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("nodeServiceAccount", cluster.node_service_account_email)
    pulumi.export("nodePools", {name: _pool_summary(cfg, name) for name in cfg.node_pools})
    pulumi.export("computeClasses", {name: list(cc.pools) for name, cc in cfg.compute_classes.items()})
    pulumi.export("drivers", {
        "nvidiaDra": f"{cfg.drivers.nvidia_dra.chart}:{cfg.drivers.nvidia_dra.version}" if dra_gpu_pools(cfg) else None,
        "tpuDra": f"{cfg.drivers.tpu_dra.chart}:{cfg.drivers.tpu_dra.version}" if tpu_pools(cfg) else None,
        "nvidiaDriverInstaller": bool(installer_pools),
    })


def _pool_summary(cfg, name: str) -> dict:
    pool = cfg.node_pools[name]
    return {
        "machineType": pool.machine_type,
        "accelerator": f"{pool.accelerator.count} x {pool.accelerator.type}",
        "spot": pool.spot,
        "dra": pool.dra,
        "min": pool.autoscaling.min,
        "max": pool.autoscaling.max,
        "computeClass": cfg.compute_class_of(name),
    }
