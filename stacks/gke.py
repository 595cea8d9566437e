"""GKE composition: network, cluster, accelerator pools, drivers, compute classes, then workloads.

Order (explicit ``depends_on`` where no output links two resources, so one
``pulumi up`` converges): cluster -> pools -> drivers (installer, then NVIDIA
DRA; TPU DRA) and compute classes -> DRA objects and workloads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from stacks import arguments as build
from stacks.arguments import create
from stacks.arguments.gke import ARGUMENTS as gke
from stacks.arguments.gke import compute_class, driver_installer

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def compose(loaded: LoadedStack) -> None:
    import pulumi_gcp as gcp

    cfg = loaded.config
    project = gcp.organizations.get_client_config_output().project

    network = create(gke.network(cfg, project=project))
    cluster = create(
        gke.cluster(cfg, project=project, network=network.network, subnetwork=network.subnetwork,
                          pods_range_name=network.pods_range_name, services_range_name=network.services_range_name),
        # Private nodes need NAT egress before they can pull images.
        opts=pulumi.ResourceOptions(depends_on=[network]),
    )
    k8s = pulumi.ResourceOptions(providers=[cluster.kubernetes_provider])

    pools = {
        name: create(gke.pool(cfg, name, cluster=cluster.cluster_name,
                                    service_account=cluster.node_service_account, project=project))
        for name in cfg.node_pools
    }

    def after(names: list[str], *extra: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions.merge(
            k8s, pulumi.ResourceOptions(depends_on=[cluster.system_pool, *extra, *(pools[n] for n in names)]))

    drivers: list[pulumi.Resource] = []
    installer_pools = build.pools_needing_driver_installer(cfg)
    if installer_pools:
        drivers.append(create(driver_installer(cfg),
                              opts=after(installer_pools)))
    dra_pools = build.dra_gpu_pools(cfg)
    if dra_pools:
        drivers.append(create(build.nvidia_dra(cfg), opts=after(dra_pools, *drivers)))
    tpu_pools = build.tpu_pools(cfg)
    if tpu_pools:
        drivers.append(create(build.tpu_dra(cfg), opts=after(tpu_pools)))

    compute_classes = [
        create(compute_class(cfg, name, [pools[p].node_pool_name for p in cc.pools]), opts=after(list(cc.pools)))
        for name, cc in cfg.compute_classes.items()
    ]

    from stacks.in_cluster import deploy_dra_and_workloads

    deploy_dra_and_workloads(loaded, cluster.kubernetes_provider, depends_on=[*drivers, *compute_classes])

    pulumi.export("cloud", "gke")
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("nodeServiceAccount", cluster.node_service_account)
    pulumi.export("nodePools", {name: _pool_summary(cfg, name) for name in cfg.node_pools})
    pulumi.export("computeClasses", {name: list(cc.pools) for name, cc in cfg.compute_classes.items()})
    pulumi.export("drivers", {
        "nvidiaDra": f"{cfg.drivers.nvidia_dra.chart}:{cfg.drivers.nvidia_dra.version}" if dra_pools else None,
        "tpuDra": f"{cfg.drivers.tpu_dra.chart}:{cfg.drivers.tpu_dra.version}" if tpu_pools else None,
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
