"""EKS composition: network, cluster, node groups, drivers, autoscaler, then workloads.

Every AWS resource goes through one explicit provider for ``cluster.location``
(the config is the single source of the region), and every Kubernetes object
through the cluster's own provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from stacks import arguments as build
from stacks.arguments import create
from stacks.config import StackConfig

if TYPE_CHECKING:
    from stacks.loader import LoadedStack

#: Availability zones an EKS control plane needs subnets in.
MIN_CLUSTER_ZONES = 2


def eks_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Config rules only an EKS stack has (the components check their own arguments)."""

    from gpu_fungibility.eks_cluster import SYSTEM_NODE_GROUP

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
    if SYSTEM_NODE_GROUP in cfg.node_pools:
        issues.append((f"nodePools.{SYSTEM_NODE_GROUP}", f"the name {SYSTEM_NODE_GROUP!r} is taken by the "
                                                         "cluster's CPU node group; rename the pool"))
    issues.extend(_control_plane_issues(cfg))
    if cluster.network.existing_subnet_ids:
        for name, pool in cfg.node_pools.items():
            if pool.zones:
                issues.append((f"nodePools.{name}.zones", "per-pool zones need the network this stack builds; "
                                                          "with cluster.network.existingSubnetIds, remove zones"))
    return issues


def _control_plane_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """EKS has no DNS-based endpoint. A private-only endpoint takes requests from within the cluster VPC and from
    networks connected to it (a peered VPC, a Transit Gateway, VPN or Direct Connect: EKS user guide, "Cluster
    API server endpoint"), so a runner range outside the VPC is accepted; its 443 rule is made like any other."""
    access = cfg.cluster.control_plane
    issues = []
    if "dns_endpoint" in access.model_fields_set:
        issues.append(("cluster.controlPlane.dnsEndpoint", "is for GKE; EKS has only its IP endpoint: use "
                                                           "publicEndpoint with authorizedNetworks, or runnerCidrs"))
    return issues


def compose_eks(loaded: LoadedStack) -> None:
    import pulumi_aws as aws

    from stacks.in_cluster import deploy_dra_and_workloads

    cfg = loaded.config
    region = cfg.cluster.location

    aws_provider = aws.Provider("aws", region=region)
    on_aws = pulumi.ResourceOptions(providers=[aws_provider])

    network = create(build.eks_network(cfg), opts=on_aws)
    cluster = create(build.eks_cluster(cfg, subnet_ids=network.private_subnet_ids), opts=pulumi.ResourceOptions(
        providers=[aws_provider],
        # Nodes boot in the private subnets and pull images from ECR: the NAT routes come first.
        depends_on=[network],
    ))

    node_groups = {}
    for pool_name, pool in cfg.node_pools.items():
        subnets = (
            pulumi.Output.all(*[network.private_subnet_by_zone[z] for z in pool.zones])
            if pool.zones else network.private_subnet_ids
        )
        node_groups[pool_name] = create(
            build.eks_node_group(cfg, pool_name, cluster_name=cluster.cluster_name,
                                 node_role_arn=cluster.node_role_arn, subnet_ids=subnets),
            opts=pulumi.ResourceOptions(providers=[aws_provider], depends_on=cluster.node_role_attachments))

    on_k8s = pulumi.ResourceOptions(providers=[cluster.kubernetes_provider, aws_provider])
    drivers: list[pulumi.Resource] = []
    if build.dra_gpu_pools(cfg):
        drivers.append(create(build.nvidia_dra(cfg), opts=on_k8s))
    if build.device_plugin_pools(cfg):
        drivers.append(create(build.device_plugin(cfg), opts=on_k8s))

    account = aws.get_caller_identity_output(opts=pulumi.InvokeOptions(provider=aws_provider)).account_id
    partition = aws.get_partition_output(opts=pulumi.InvokeOptions(provider=aws_provider)).partition
    autoscaler = create(build.cluster_autoscaler(
        cfg,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer=cluster.oidc_issuer,
        nodegroup_arn_prefix=pulumi.Output.concat("arn:", partition, ":eks:", region, ":", account, ":nodegroup"),
    ), opts=on_k8s)

    deploy_dra_and_workloads(loaded, cluster.kubernetes_provider,
                             depends_on=[*drivers, autoscaler, *node_groups.values()])

    pulumi.export("cloud", "eks")
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterEndpoint", cluster.endpoint)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("nodeGroups", {p: ng.node_group_name for p, ng in node_groups.items()})
