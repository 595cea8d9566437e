"""The Cluster Autoscaler on EKS: the fallback order of a compute class, as priority-expander priorities.

Each compute class lists its pools most-preferred first; pool ``i`` of ``n``
gets priority ``(n - i) * 10`` (the priority expander picks the highest
number among the node groups that could fit the pending pods). The expander
matches Auto Scaling group names, which EKS derives from the node group name
(``eks-<nodeGroupName>-<uuid>``); each regex is anchored on both ends, so a
pool named ``a100`` can never match the ASG of ``a100-80gb``.

With DRA pools the autoscaler runs with ``--enable-dynamic-resource-allocation``
and then lists and watches DeviceClasses, ResourceSlices and ResourceClaims.
The pinned chart's ClusterRole grants nothing in ``resource.k8s.io``, so the
component adds a read-only ClusterRole for them, bound to the autoscaler's
service account, before the release starts.

Limit (documented in docs/eks.md): the upstream autoscaler cannot describe the
DRA devices of a node group that has no nodes on AWS; with
``--enable-dynamic-resource-allocation`` it copies the ResourceSlices of a
running node, so DRA groups scale up from one node, not from zero.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import yaml

from components import pins
from components.device_plugin import merge_values
from stacks.config import HelmChart, StackConfig

PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
SERVICE_ACCOUNT = "cluster-autoscaler"
PRIORITY_STEP = 10
VALUES_PATH = "drivers.clusterAutoscaler.values"
IMAGE_TAG_BY_MINOR = pins.CLUSTER_AUTOSCALER_IMAGE_TAG_BY_MINOR
#: Read-only calls the autoscaler makes on AWS (cloudprovider/aws README), on any resource.
READ_ACTIONS = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "autoscaling:DescribeTags",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
)
#: What the autoscaler reads to simulate DRA claims (the upstream AWS example manifest grants the same).
DRA_READ_RULE = {"api_groups": ["resource.k8s.io"],
                 "resources": ["deviceclasses", "resourceslices", "resourceclaims"],
                 "verbs": ["get", "list", "watch"]}
DRA_READER_ROLE = "cluster-autoscaler-dra-reader"
#: Calls that change capacity: only on ASGs EKS tagged as owned by this cluster.
WRITE_ACTIONS = ("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup")


def expander_priorities(cfg: StackConfig) -> dict[int, list[str]]:
    """Priority -> pool names, from every compute class's pool order (higher number = preferred)."""
    priorities: dict[int, list[str]] = {}
    for cc in cfg.compute_classes.values():
        count = len(cc.pools)
        for index, pool in enumerate(cc.pools):
            priorities.setdefault((count - index) * PRIORITY_STEP, []).append(pool)
    return dict(sorted(priorities.items(), reverse=True))


def priorities_document(priorities: dict[int, list[str]], regex_of: dict[str, str]) -> str:
    """The ConfigMap's ``priorities`` text: ``<priority>: [regex, ...]``, highest first."""
    doc = {priority: [regex_of[pool] for pool in pools] for priority, pools in priorities.items()}
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def autoscaler_policy(cluster_name: str, nodegroup_arn_prefix: str) -> dict[str, Any]:
    """Least privilege: describe anything, scale only this cluster's node groups."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "Describe", "Effect": "Allow", "Action": list(READ_ACTIONS), "Resource": "*"},
            {"Sid": "DescribeNodegroups", "Effect": "Allow", "Action": ["eks:DescribeNodegroup"],
             "Resource": f"{nodegroup_arn_prefix}/{cluster_name}/*"},
            {
                "Sid": "ScaleOwnNodeGroups",
                "Effect": "Allow",
                "Action": list(WRITE_ACTIONS),
                "Resource": "*",
                "Condition": {"StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"}},
            },
        ],
    }


def irsa_trust_policy(oidc_provider_arn: str, oidc_issuer: str, namespace: str, service_account: str) -> dict:
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": oidc_provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {
                f"{oidc_issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                f"{oidc_issuer}:aud": "sts.amazonaws.com",
            }},
        }],
    }


def autoscaler_values(
    chart: HelmChart,
    *,
    cluster_name: str,
    region: str,
    kubernetes_minor: str,
    role_arn: pulumi.Input[str],
    system_node_group: str,
    dra: bool,
) -> dict[str, Any]:
    """Chart values: auto-discovery for this cluster, IRSA, the priority expander, DRA simulation when needed."""
    extra_args: dict[str, Any] = {"expander": "priority"}
    if dra:
        extra_args["enable-dynamic-resource-allocation"] = "true"
    project: dict[str, Any] = {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster_name},
        "rbac": {"serviceAccount": {
            "create": True,
            "name": SERVICE_ACCOUNT,
            "annotations": {"eks.amazonaws.com/role-arn": role_arn},
        }},
        "extraArgs": extra_args,
        "nodeSelector": {"eks.amazonaws.com/nodegroup": system_node_group},
    }
    tag = IMAGE_TAG_BY_MINOR.get(kubernetes_minor)
    if tag:
        project["image"] = {"tag": tag}
    return merge_values(project, chart.values)


def image_tag_issues(chart: HelmChart, kubernetes_minor: str) -> list[tuple[str, str]]:
    if kubernetes_minor in IMAGE_TAG_BY_MINOR or (chart.values.get("image") or {}).get("tag"):
        return []
    return [(f"{VALUES_PATH}.image.tag",
             f"no autoscaler image is known for Kubernetes {kubernetes_minor} (known: "
             f"{', '.join(IMAGE_TAG_BY_MINOR)}); set the cluster-autoscaler release matching your minor version")]


@dataclass
class ClusterAutoscalerArgs:
    """Everything the autoscaler needs; ``asg_regex_by_pool`` maps each GPU pool to its ASG name regex."""

    config: StackConfig
    region: str
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer: pulumi.Input[str]
    nodegroup_arn_prefix: pulumi.Input[str]  # arn:<partition>:eks:<region>:<account>:nodegroup
    system_node_group: str
    asg_regex_by_pool: dict[str, str] = field(default_factory=dict)


def dra_read_access(parent: pulumi.Resource, name: str, namespace: str) -> k8s.rbac.v1.ClusterRoleBinding:
    """Read access to the DRA objects for the autoscaler's service account (a ClusterRole and its binding)."""
    role = k8s.rbac.v1.ClusterRole(
        f"{name}-dra-reader",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=DRA_READER_ROLE),
        rules=[k8s.rbac.v1.PolicyRuleArgs(**DRA_READ_RULE)],
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return k8s.rbac.v1.ClusterRoleBinding(
        f"{name}-dra-reader-binding",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=DRA_READER_ROLE),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole",
                                         name=role.metadata.name),
        subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=namespace)],
        opts=pulumi.ResourceOptions(parent=parent),
    )


class ClusterAutoscaler(pulumi.ComponentResource):
    """IRSA role, priority-expander ConfigMap, DRA read access and the pinned ``cluster-autoscaler`` release."""

    role: aws.iam.Role
    priority_config_map: k8s.core.v1.ConfigMap
    dra_access: k8s.rbac.v1.ClusterRoleBinding | None
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:cluster_autoscaler:ClusterAutoscaler", name, None, opts)
        from stacks.loader import ConfigError

        cfg = args.config
        chart = cfg.drivers.cluster_autoscaler
        priorities = expander_priorities(cfg)
        issues = image_tag_issues(chart, cfg.cluster.minor_version)
        missing = sorted({p for pools in priorities.values() for p in pools} - set(args.asg_regex_by_pool))
        if missing:
            issues.append(("computeClasses", f"no node group for pools {', '.join(missing)}"))
        if issues:
            raise ConfigError(issues)
        namespace = chart.namespace
        cluster_name = cfg.cluster.name

        self.role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=pulumi.Output.all(args.oidc_provider_arn, args.oidc_issuer).apply(
                lambda a: json.dumps(irsa_trust_policy(a[0], a[1], namespace, SERVICE_ACCOUNT))
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=pulumi.Output.from_input(args.nodegroup_arn_prefix).apply(
                lambda prefix: json.dumps(autoscaler_policy(cluster_name, prefix))
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.priority_config_map = k8s.core.v1.ConfigMap(
            f"{name}-priorities",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=PRIORITY_CONFIGMAP, namespace=namespace),
            data={"priorities": priorities_document(priorities, args.asg_regex_by_pool)},
            opts=pulumi.ResourceOptions(parent=self),
        )
        dra = any(p.dra for p in cfg.node_pools.values())
        self.dra_access = dra_read_access(self, name, namespace) if dra else None
        values = autoscaler_values(
            chart,
            cluster_name=cluster_name,
            region=args.region,
            kubernetes_minor=cfg.cluster.minor_version,
            role_arn=self.role.arn,
            system_node_group=args.system_node_group,
            dra=dra,
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            k8s.helm.v3.ReleaseArgs(
                name="cluster-autoscaler",
                chart=chart.chart,
                version=chart.version,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart.repo) if chart.repo else None,
                namespace=namespace,
                values=values,
            ),
            # The priority expander reads its ConfigMap at start-up; DRA informers need their access.
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[self.priority_config_map, *([self.dra_access] if self.dra_access else [])]),
        )
        self.register_outputs({"role_arn": self.role.arn, "release": self.release.name})
