"""EKS composition: network, cluster, node groups, drivers, autoscaler, then workloads.

Every AWS resource goes through one explicit provider for ``cluster.location``
(the config is the single source of the region), and every Kubernetes object
through the cluster's own provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from components.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from components.device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.eks_cluster import SYSTEM_NODE_GROUP, EksCluster, EksClusterArgs
from components.eks_network import EksNetwork, EksNetworkArgs
from components.eks_node_groups import (
    GpuNodeGroup,
    GpuNodeGroupArgs,
    asg_name_regex,
    node_group_name,
    node_group_name_issues,
)
from components.nvidia_dra import NvidiaDraDriver, NvidiaDraDriverArgs
from stacks.config import StackConfig

if TYPE_CHECKING:
    from stacks.loader import LoadedStack

#: Availability zones an EKS control plane needs subnets in.
MIN_CLUSTER_ZONES = 2


def eks_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Problems only the EKS composition can see (all reported together, before anything is built)."""
    cluster = cfg.cluster
    issues = list(node_group_name_issues(cfg))
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
    if SYSTEM_NODE_GROUP in cfg.node_pools:
        issues.append((f"nodePools.{SYSTEM_NODE_GROUP}", f"the name {SYSTEM_NODE_GROUP!r} is taken by the "
                                                         "cluster's CPU node group; rename the pool"))
    if cluster.network.existing_subnet_ids:
        for name, pool in cfg.node_pools.items():
            if pool.zones:
                issues.append((f"nodePools.{name}.zones", "per-pool zones need the network this stack builds; "
                                                          "with cluster.network.existingSubnetIds, remove zones"))
    return issues


def compose_eks(loaded: LoadedStack) -> None:
    from stacks.in_cluster import deploy_dra_and_workloads
    from stacks.loader import ConfigError

    cfg = loaded.config
    issues = eks_issues(cfg)
    if issues:
        raise ConfigError(issues)
    cluster_cfg = cfg.cluster
    name = cluster_cfg.name
    region = cluster_cfg.location

    aws_provider = aws.Provider("aws", region=region)
    on_aws = pulumi.ResourceOptions(providers=[aws_provider])

    network = EksNetwork(f"{name}-network", EksNetworkArgs(
        cluster_name=name,
        cidr=cluster_cfg.network.cidr,
        zones=list(cluster_cfg.zones),
        existing_subnet_ids=list(cluster_cfg.network.existing_subnet_ids),
        nat_gateway_per_zone=cluster_cfg.network.nat_gateway_per_zone,
        tags=dict(cluster_cfg.labels),
    ), opts=on_aws)
    cluster = EksCluster(name, EksClusterArgs(
        config=cluster_cfg, region=region, subnet_ids=network.private_subnet_ids,
    ), opts=pulumi.ResourceOptions(
        providers=[aws_provider],
        # Nodes boot in the private subnets and pull images from ECR: the NAT routes come first.
        depends_on=[network],
    ))

    node_groups: dict[str, GpuNodeGroup] = {}
    for pool_name, pool in cfg.node_pools.items():
        subnets = (
            pulumi.Output.all(*[network.private_subnet_by_zone[z] for z in pool.zones])
            if pool.zones else network.private_subnet_ids
        )
        node_groups[pool_name] = GpuNodeGroup(f"{name}-{pool_name}", GpuNodeGroupArgs(
            config=cfg,
            pool_name=pool_name,
            cluster_name=cluster.cluster_name,
            node_role_arn=cluster.node_role_arn,
            subnet_ids=subnets,
            tags=dict(cluster_cfg.labels),
        ), opts=pulumi.ResourceOptions(
            providers=[aws_provider], depends_on=cluster.node_role_attachments
        ))

    on_k8s = pulumi.ResourceOptions(providers=[cluster.k8s_provider, aws_provider])
    drivers: list[pulumi.Resource] = []
    dra_driver = _nvidia_dra_driver(cfg, on_k8s)
    if dra_driver is not None:
        drivers.append(dra_driver)
    if any(p.family == "gpu" and not p.dra for p in cfg.node_pools.values()):
        drivers.append(NvidiaDevicePlugin("nvidia-device-plugin", NvidiaDevicePluginArgs(
            chart=cfg.drivers.nvidia_device_plugin,
        ), opts=on_k8s))

    account = aws.get_caller_identity_output(opts=pulumi.InvokeOptions(provider=aws_provider)).account_id
    partition = aws.get_partition_output(opts=pulumi.InvokeOptions(provider=aws_provider)).partition
    autoscaler = ClusterAutoscaler(f"{name}-autoscaler", ClusterAutoscalerArgs(
        config=cfg,
        region=region,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer=cluster.oidc_issuer,
        nodegroup_arn_prefix=pulumi.Output.concat("arn:", partition, ":eks:", region, ":", account, ":nodegroup"),
        system_node_group=node_group_name(name, SYSTEM_NODE_GROUP),
        asg_regex_by_pool={p: asg_name_regex(ng.node_group_name) for p, ng in node_groups.items()},
    ), opts=on_k8s)

    deploy_dra_and_workloads(loaded, cluster.k8s_provider,
                             depends_on=[*drivers, autoscaler, *node_groups.values()])

    pulumi.export("cloud", "eks")
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterEndpoint", cluster.endpoint)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("nodeGroups", {p: ng.node_group_name for p, ng in node_groups.items()})


def _nvidia_dra_driver(cfg: StackConfig, opts: pulumi.ResourceOptions) -> NvidiaDraDriver | None:
    """The NVIDIA DRA driver release when any pool is DRA; on EKS its args carry seed 004's ResourceQuota."""
    if not any(p.family == "gpu" and p.dra for p in cfg.node_pools.values()):
        return None
    return NvidiaDraDriver("nvidia-dra-driver", NvidiaDraDriverArgs.for_stack(cfg), opts=opts)
