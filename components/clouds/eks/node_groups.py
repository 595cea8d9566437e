"""An EKS managed node group of GPU nodes, with the Cluster Autoscaler's node-template tags.

Labels and taints come from :mod:`components.dra_wiring` and the EKS profile
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

import hashlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired

import pulumi

from ...base import Issues
from ...node_pool_base import AcceleratorPool
from ...node_selection import API_EFFECTS, NodeTaint
from ...pool_args import AcceleratorPoolArgs, autoscaling_of
from ...wiring_keys import PoolSpec

if TYPE_CHECKING:
    import pulumi_aws as aws

CLOUD = "eks"
GPU_AMI_TYPE = "AL2023_x86_64_NVIDIA"
MAX_NODE_GROUP_NAME = 63
NODE_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/"
NODE_TEMPLATE_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/"
#: EKS names a managed node group's Auto Scaling group ``eks-<nodeGroupName>-<uuid>``.
ASG_UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def capacity_type(spot: bool) -> str:
    return "SPOT" if spot else "ON_DEMAND"


def node_group_taints(taints: list[NodeTaint]) -> "list[aws.eks.NodeGroupTaintArgs]":
    import pulumi_aws as aws

    return [aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value or None, effect=API_EFFECTS[t.effect])
            for t in taints]


def node_template_tags(labels: Mapping[str, str], taints: list[NodeTaint]) -> dict[str, str]:
    """The ASG tags that tell the Cluster Autoscaler a group's labels and taints before it has nodes."""
    tags = {f"{NODE_TEMPLATE_LABEL}{k}": v for k, v in labels.items()}
    for taint in taints:
        tags[f"{NODE_TEMPLATE_TAINT}{taint.key}"] = f"{taint.value}:{taint.effect}"
    return tags


def asg_name_of(node_group: "aws.eks.NodeGroup") -> pulumi.Output[str]:
    """The name of the Auto Scaling group EKS created for a managed node group."""
    return node_group.resources.apply(lambda res: res[0].autoscaling_groups[0].name)


def asg_name_regex(node_group: str) -> str:
    """A regex for exactly the ASG of ``node_group`` (the uuid suffix keeps ``a100`` off ``a100-80gb``).

    Known at preview time, unlike the ASG name itself, so the fallback order is
    reviewable in a plan.
    """
    return f"^eks-{re.escape(node_group).replace(chr(92) + '-', '-')}-{ASG_UUID_PATTERN}$"


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


class EksGpuNodeGroupArgs(AcceleratorPoolArgs):
    """One EKS managed node group of GPU nodes on the AL2023 NVIDIA AMI. On AWS the autoscaler cannot scale a
    DRA group up from zero."""

    cluster_name: pulumi.Input[str]
    """The cluster's name (``EksCluster.cluster_name``)."""
    node_role_arn: pulumi.Input[str]
    """The nodes' IAM role (``EksCluster.node_role_arn``)."""
    subnet_ids: pulumi.Input[list[str]]
    """Private subnets the group may use."""
    instance_types: list[str]
    """EC2 instance types; every one must carry the same GPU model and count."""
    node_group_name: NotRequired[str]
    """The EKS node group's name, at most 63 characters (default: the component's name)."""
    tags: NotRequired[dict[str, str]]
    """AWS tags on the node group."""


class EksGpuNodeGroup(AcceleratorPool):
    """An EKS managed node group on the NVIDIA AL2023 AMI, wired for DRA, plus its ASG node-template tags."""

    LEGACY_TYPE = "gpu-fungibility:eks_node_groups:GpuNodeGroup"
    CLOUD = CLOUD
    NAME_ARGUMENT = "node_group_name"

    node_group_name: str
    """The EKS node group's name."""
    asg_name: pulumi.Output[str]
    """The Auto Scaling group EKS created for it."""

    def __init__(self, name: str, args: EksGpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def build(self, name: str, args: EksGpuNodeGroupArgs, spec: PoolSpec) -> None:
        import pulumi_aws as aws

        low, high = autoscaling_of(args)
        labels, taints = self.stack_labels(spec), self.stack_taints(spec)
        node_group = aws.eks.NodeGroup(
            f"{name}-nodes",
            cluster_name=args["cluster_name"],
            node_group_name=spec.name,
            node_role_arn=args["node_role_arn"],
            subnet_ids=args["subnet_ids"],
            ami_type=GPU_AMI_TYPE,
            capacity_type=capacity_type(spec.spot),
            instance_types=list(args["instance_types"]),
            disk_size=args.get("disk_size_gb", 200),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(min_size=low, max_size=high, desired_size=low),
            labels=labels,
            taints=node_group_taints(taints),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            tags=dict(args.get("tags") or {}),
            opts=self.child(ignore_changes=["scalingConfig.desiredSize"]),
        )
        self.node_group_name = spec.name
        self.asg_name = asg_name_of(node_group)
        for slug, (key, value) in _slugged(node_template_tags(labels, taints)).items():
            aws.autoscaling.Tag(
                f"{name}-asg-tag-{slug}",
                autoscaling_group_name=self.asg_name,
                tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                opts=self.child(),
            )

    @classmethod
    def machine_types(cls, args: EksGpuNodeGroupArgs) -> list[str]:
        return list(args.get("instance_types") or [])

    @classmethod
    def spec_machine(cls, args: EksGpuNodeGroupArgs) -> str | None:
        return None  # a group may mix instance types

    @classmethod
    def cloud_issues(cls, name: str, args: EksGpuNodeGroupArgs) -> Issues:
        group = args.get("node_group_name") or name
        if len(group) > MAX_NODE_GROUP_NAME:
            return [("node_group_name", f"the EKS node group name {group!r} has {len(group)} characters; "
                                        f"EKS allows {MAX_NODE_GROUP_NAME}")]
        return []
