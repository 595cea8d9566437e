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
from stacks.config import StackConfig

if TYPE_CHECKING:
    from stacks.loader import LoadedStack

AZURE_ZONES = ("1", "2", "3")


def aks_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Config rules only an AKS stack has (the components check their own arguments)."""
    from gpu_fungibility.aks_cluster import SYSTEM_POOL

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
        issues.append(("cluster.controlPlane.runnerCidrs", "is for GKE and EKS; a private AKS API server answers "
                                                           "inside its virtual network: run `pulumi up` there and "
                                                           "list that range in the policy pack's runnerCidrs "
                                                           "config (docs/aks.md), or use publicEndpoint with "
                                                           "authorizedNetworks"))
    if SYSTEM_POOL in cfg.node_pools:
        issues.append((f"nodePools.{SYSTEM_POOL}", f"the name {SYSTEM_POOL!r} is taken by the cluster's system "
                                                   "pool; rename the pool"))
    return issues


def compose_aks(loaded: LoadedStack) -> None:
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
            "resource-group", resource_group_name=build.resource_group_name(cfg), location=location,
            tags=dict(cfg.cluster.labels), opts=on_azure)
        resource_group = group.name

    network = create(build.aks_network(cfg, resource_group=resource_group), opts=on_azure)
    cluster = create(build.aks_cluster(cfg, resource_group=resource_group, node_subnet_id=network.node_subnet_id),
                     opts=pulumi.ResourceOptions(providers=[azure_provider], depends_on=[network]))
    pools = {
        name: create(build.aks_pool(cfg, name, cluster_name=cluster.cluster_name, resource_group=resource_group,
                                  node_subnet_id=network.node_subnet_id), opts=on_azure)
        for name in cfg.node_pools
    }

    on_k8s = pulumi.ResourceOptions(providers=[cluster.kubernetes_provider, azure_provider])
    drivers: list[pulumi.Resource] = []
    if build.dra_gpu_pools(cfg):
        drivers.append(create(build.nvidia_dra(cfg), opts=on_k8s))
    if build.device_plugin_pools(cfg):
        drivers.append(create(build.aks_device_plugin(cfg), opts=on_k8s))
    if cfg.compute_classes:
        drivers.append(create(build.aks_priorities(cfg), opts=on_k8s))

    deploy_dra_and_workloads(loaded, cluster.kubernetes_provider, depends_on=[*drivers, *pools.values()])

    pulumi.export("cloud", "aks")
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("resourceGroup", cluster.resource_group_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("nodePools", {p: pool.pool_name for p, pool in pools.items()})
