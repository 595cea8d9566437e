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
from stacks.arguments.eks import ARGUMENTS as eks
from stacks.arguments.eks import cluster_autoscaler

if TYPE_CHECKING:
    from stacks.loader import LoadedStack

def compose(loaded: LoadedStack) -> None:
    import pulumi_aws as aws

    from stacks.in_cluster import deploy_dra_and_workloads

    cfg = loaded.config
    region = cfg.cluster.location

    aws_provider = aws.Provider("aws", region=region)
    on_aws = pulumi.ResourceOptions(providers=[aws_provider])

    network = create(eks.network(cfg), opts=on_aws)
    cluster = create(eks.cluster(cfg, subnet_ids=network.private_subnet_ids), opts=pulumi.ResourceOptions(
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
            eks.pool(cfg, pool_name, cluster_name=cluster.cluster_name,
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
    autoscaler = create(cluster_autoscaler(
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
