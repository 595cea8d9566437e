"""AKS composition: resource group, network, cluster, GPU pools, drivers, autoscaler priorities, workloads.

Every Azure resource goes through one explicit azure-native provider for ``cluster.location`` (the
subscription comes from the provider's own configuration: ``azure-native:subscriptionId`` or
``ARM_SUBSCRIPTION_ID``), and every Kubernetes object through the cluster's own provider. The Azure SDK is
imported only here, when an AKS stack is composed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from stacks import arguments as build
from stacks.arguments import create
from stacks.arguments.aks import ARGUMENTS as aks
from stacks.arguments.aks import device_plugin, priorities, resource_group_name

if TYPE_CHECKING:
    from stacks.loader import LoadedStack

def compose(loaded: LoadedStack) -> None:
    import pulumi_azure_native as azure_native

    from stacks.in_cluster import deploy_dra_and_workloads

    cfg = loaded.config
    location = cfg.cluster.location
    azure_provider = azure_native.Provider("azure-native", location=location)
    on_azure = pulumi.ResourceOptions(providers=[azure_provider])

    if cfg.cluster.resource_group:
        resource_group: pulumi.Input[str] = cfg.cluster.resource_group
    else:
        group = azure_native.resources.ResourceGroup(
            "resource-group", resource_group_name=resource_group_name(cfg), location=location,
            tags=dict(cfg.cluster.labels), opts=on_azure)
        resource_group = group.name

    network = create(aks.network(cfg, resource_group=resource_group), opts=on_azure)
    cluster = create(aks.cluster(cfg, resource_group=resource_group, node_subnet_id=network.node_subnet_id),
                     opts=pulumi.ResourceOptions(providers=[azure_provider], depends_on=[network]))
    pools = {
        name: create(aks.pool(cfg, name, cluster_name=cluster.cluster_name, resource_group=resource_group,
                                  node_subnet_id=network.node_subnet_id), opts=on_azure)
        for name in cfg.node_pools
    }

    on_k8s = pulumi.ResourceOptions(providers=[cluster.kubernetes_provider, azure_provider])
    drivers: list[pulumi.Resource] = []
    if build.dra_gpu_pools(cfg):
        drivers.append(create(build.nvidia_dra(cfg), opts=on_k8s))
    if build.device_plugin_pools(cfg):
        drivers.append(create(device_plugin(cfg), opts=on_k8s))
    if cfg.compute_classes:
        drivers.append(create(priorities(cfg), opts=on_k8s))

    deploy_dra_and_workloads(loaded, cluster.kubernetes_provider, depends_on=[*drivers, *pools.values()])

    pulumi.export("cloud", "aks")
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("resourceGroup", cluster.resource_group_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("nodePools", {p: pool.pool_name for p, pool in pools.items()})
