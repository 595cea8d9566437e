"""One EKS managed node group per GPU pool, with the Cluster Autoscaler's node-template tags.

The node group's labels and taints come from :mod:`components.dra_wiring`
only: DRA groups carry ``nvidia.com/gpu.present=true`` and
``nvidia.com/gpu.dra=true``; every GPU group is tainted
``nvidia.com/gpu=true:NoSchedule``; ``dra: false`` groups are classic
device-plugin groups (no ``gpu.dra`` label).

Managed node groups tag their Auto Scaling group for autoscaler discovery
(``k8s.io/cluster-autoscaler/enabled``, ``k8s.io/cluster-autoscaler/<cluster>``),
but tags set on the node group itself do not reach the ASG. So the labels and
taints the autoscaler must know to scale a group up from zero are written as
``k8s.io/cluster-autoscaler/node-template/{label,taint}/<key>`` tags directly
on the ASG, with ``aws.autoscaling.Tag`` resources.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components import dra_wiring
from stacks.config import StackConfig

GPU_AMI_TYPE = "AL2023_x86_64_NVIDIA"
MAX_NODE_GROUP_NAME = 63
NODE_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/"
NODE_TEMPLATE_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/"

#: Kubernetes taint effects in the spelling of the EKS API.
AWS_TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


node_group_name = dra_wiring.eks_node_group_name


def node_group_name_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Pools whose node group name EKS would refuse (more than 63 characters)."""
    issues = []
    for pool_name in cfg.node_pools:
        full = node_group_name(cfg.cluster.name, pool_name)
        if len(full) > MAX_NODE_GROUP_NAME:
            issues.append((
                f"nodePools.{pool_name}",
                f"the EKS node group name {full!r} has {len(full)} characters; EKS allows "
                f"{MAX_NODE_GROUP_NAME}: shorten the pool name or cluster.name",
            ))
    return issues


def capacity_type(spot: bool) -> str:
    return "SPOT" if spot else "ON_DEMAND"


def node_group_taints(cfg: StackConfig, pool_name: str) -> list[aws.eks.NodeGroupTaintArgs]:
    return [
        aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value or None, effect=AWS_TAINT_EFFECT[t.effect])
        for t in dra_wiring.pool_taints(cfg, pool_name)
    ]


def node_template_tags(cfg: StackConfig, pool_name: str) -> dict[str, str]:
    """The ASG tags that tell the Cluster Autoscaler a group's labels and taints before it has nodes."""
    tags = {f"{NODE_TEMPLATE_LABEL}{k}": v for k, v in dra_wiring.pool_labels(cfg, pool_name).items()}
    for taint in dra_wiring.pool_taints(cfg, pool_name):
        tags[f"{NODE_TEMPLATE_TAINT}{taint.key}"] = f"{taint.value}:{taint.effect}"
    return tags


def asg_name_of(node_group: aws.eks.NodeGroup) -> pulumi.Output[str]:
    """The name of the Auto Scaling group EKS created for a managed node group."""
    return node_group.resources.apply(lambda res: res[0].autoscaling_groups[0].name)


#: EKS names a managed node group's Auto Scaling group ``eks-<nodeGroupName>-<uuid>``.
ASG_UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def asg_name_regex(node_group: str) -> str:
    """A regex for exactly the ASG of ``node_group`` (the uuid suffix keeps ``a100`` off ``a100-80gb``).

    Known at preview time, unlike the ASG name itself, so the fallback order is
    reviewable in a plan.
    """
    return f"^eks-{re.escape(node_group).replace(chr(92) + '-', '-')}-{ASG_UUID_PATTERN}$"


@dataclass
class GpuNodeGroupArgs:
    """One GPU pool of ``config`` (``pool_name``) in cluster ``cluster_name``.

    ``subnet_ids`` are the private subnets the group may use; the composition
    narrows them to the pool's ``zones`` when it sets any.
    """

    config: StackConfig
    pool_name: str
    cluster_name: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    subnet_ids: pulumi.Input[list[str]]
    tags: dict[str, str] = field(default_factory=dict)


class GpuNodeGroup(pulumi.ComponentResource):
    """An ``aws.eks.NodeGroup`` on the NVIDIA AL2023 AMI plus its ASG node-template tags."""

    node_group: aws.eks.NodeGroup
    node_group_name: str
    asg_name: pulumi.Output[str]
    asg_tags: list[aws.autoscaling.Tag]

    def __init__(self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:eks_node_groups:GpuNodeGroup", name, None, opts)
        cfg = args.config
        pool = _validated_pool(args)
        self.node_group_name = node_group_name(cfg.cluster.name, args.pool_name)
        scaling = pool.autoscaling
        self.node_group = aws.eks.NodeGroup(
            f"{name}-nodes",
            cluster_name=args.cluster_name,
            node_group_name=self.node_group_name,
            node_role_arn=args.node_role_arn,
            subnet_ids=args.subnet_ids,
            ami_type=GPU_AMI_TYPE,
            capacity_type=capacity_type(pool.spot),
            instance_types=list(pool.instance_types or []),
            disk_size=pool.disk_size_gb,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=scaling.min, max_size=scaling.max, desired_size=scaling.min
            ),
            labels=dra_wiring.pool_labels(cfg, args.pool_name),
            taints=node_group_taints(cfg, args.pool_name),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            tags={**args.tags, "gpu-fungibility/pool": args.pool_name},
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["scalingConfig.desiredSize"]),
        )
        self.asg_name = asg_name_of(self.node_group)
        self.asg_tags = [
            aws.autoscaling.Tag(
                f"{name}-asg-tag-{slug}",
                autoscaling_group_name=self.asg_name,
                tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for slug, (key, value) in _slugged(node_template_tags(cfg, args.pool_name)).items()
        ]
        self.register_outputs({"node_group_name": self.node_group_name, "asg_name": self.asg_name})


def _validated_pool(args: GpuNodeGroupArgs):
    from stacks.loader import ConfigError

    cfg = args.config
    if cfg.cluster.cloud != "eks":
        raise ConfigError([("cluster.cloud", "GPU node groups are built on EKS only")])
    pool = cfg.node_pools.get(args.pool_name)
    if pool is None:
        raise ConfigError([("nodePools", f"no node pool named {args.pool_name!r}")])
    issues = [i for i in node_group_name_issues(cfg) if i[0] == f"nodePools.{args.pool_name}"]
    if pool.family != "gpu":
        issues.append((f"nodePools.{args.pool_name}.accelerator.type", "EKS node groups carry NVIDIA GPUs only"))
    if not pool.instance_types:
        issues.append((f"nodePools.{args.pool_name}.instanceTypes", "required on EKS"))
    if issues:
        raise ConfigError(issues)
    return pool


def _slugged(tags: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Tags keyed by a resource-name-safe, unique suffix (``.../label/nvidia.com/gpu.dra`` -> ``label-nvidia-com-gpu-dra``)."""
    out: dict[str, tuple[str, str]] = {}
    for key, value in tags.items():
        tail = key.removeprefix("k8s.io/cluster-autoscaler/node-template/")
        slug = re.sub(r"[^a-z0-9]+", "-", tail.lower()).strip("-")
        if slug in out:
            slug = f"{slug}-{hashlib.sha256(key.encode()).hexdigest()[:6]}"
        out[slug] = (key, value)
    return out
