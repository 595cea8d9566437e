"""The Cluster Autoscaler on EKS: the fallback order of a compute class, as priority-expander priorities.

Each fallback order lists node groups most-preferred first; group ``i`` of ``n``
gets priority ``(n - i) * 10`` (the priority expander picks the highest
number among the node groups that could fit the pending pods). The expander
matches Auto Scaling group names, which EKS derives from the node group name
(``eks-<nodeGroupName>-<uuid>``); each regex is anchored on both ends, so a
pool named ``a100`` can never match the ASG of ``a100-80gb``.

With DRA pools the autoscaler runs with ``--enable-dynamic-resource-allocation``
and then lists and watches DeviceClasses, ResourceSlices and ResourceClaims. From
1.35 that mode is locked on (``config/flags/flags.go`` at cluster-autoscaler-1.35.2:
the flag must be true), so a cluster with no DRA pool needs the same access. The
pinned chart (9.59.0) grants it; the component also adds its own read-only
ClusterRole, bound to the autoscaler's service account, before the release
starts, so a caller who pins an older chart is still served.

Limit (documented in docs/eks.md): the upstream autoscaler cannot describe the
DRA devices of a node group that has no nodes on AWS; with
``--enable-dynamic-resource-allocation`` it copies the ResourceSlices of a
running node, so DRA groups scale up from one node, not from zero.
"""

import json
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ... import helm_values, pins
from ...autoscaler_priorities import PRIORITY_CONFIGMAP, expander_priorities, priorities_document
from ...base import Issues, LibraryComponent
from ...releases import chart_issues, helm_release
from ...versions import DEFAULT_KUBERNETES_VERSION, minor_version
from .node_groups import asg_name_regex

SERVICE_ACCOUNT = "cluster-autoscaler"
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
    extra: dict[str, Any] | None,
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
    return helm_values.merge(project, extra or {})


def dra_mode_locked_on(kubernetes_minor: str) -> bool:
    """From 1.35 the autoscaler refuses to start with DRA handling off, so it always reads the DRA objects."""
    major, minor = (int(x) for x in kubernetes_minor.split(".")[:2])
    return (major, minor) >= (1, 35)


def image_tag_issues(values: dict[str, Any] | None, kubernetes_minor: str) -> Issues:
    if kubernetes_minor in IMAGE_TAG_BY_MINOR or ((values or {}).get("image") or {}).get("tag"):
        return []
    return [("values.image.tag",
             f"no autoscaler image is known for Kubernetes {kubernetes_minor} (known: "
             f"{', '.join(IMAGE_TAG_BY_MINOR)}); set the cluster-autoscaler release matching your minor version")]


class ClusterAutoscalerArgs(TypedDict):
    """The Cluster Autoscaler of one EKS cluster."""

    cluster_name: str
    """The cluster's name (auto-discovery of its node groups' Auto Scaling groups)."""
    region: str
    """The AWS region."""
    oidc_provider_arn: pulumi.Input[str]
    """The cluster's IAM OIDC provider (``EksCluster.oidc_provider_arn``), for IRSA."""
    oidc_issuer: pulumi.Input[str]
    """The OIDC issuer without ``https://`` (``EksCluster.oidc_issuer``)."""
    nodegroup_arn_prefix: pulumi.Input[str]
    """``arn:<partition>:eks:<region>:<account>:nodegroup``: the node groups it may describe."""
    system_node_group: str
    """The node group the autoscaler itself runs on (``EksCluster.system_node_group_name``)."""
    fallback_orders: NotRequired[list[list[str]]]
    """Node group names in fallback order, most preferred first, one list per order (priority expander)."""
    other_node_groups: NotRequired[list[str]]
    """Every other node group it may scale (the system group, classic groups): listed at the lowest priority,
    or the expander would never pick them while a listed group could grow."""
    dynamic_resource_allocation: NotRequired[bool]
    """Simulate DRA claims when scaling (``--enable-dynamic-resource-allocation``) and read the DRA objects."""
    kubernetes_version: NotRequired[str]
    """The cluster's version: the autoscaler image must match its minor (default ``1.35``)."""
    chart: NotRequired[str]
    """The chart name (default ``cluster-autoscaler``)."""
    version: NotRequired[str]
    """The exact chart version (default: the pinned one)."""
    repository: NotRequired[str]
    """The chart repository (default the Kubernetes autoscaler's)."""
    namespace: NotRequired[str]
    """The namespace of the release (default ``kube-system``)."""
    values: NotRequired[dict[str, Any]]
    """Chart values merged over the library's."""


def autoscaler_issues(args: ClusterAutoscalerArgs) -> Issues:
    minor = minor_version(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION))
    issues = chart_issues(dict(args)) + image_tag_issues(args.get("values"), minor)
    for i, order in enumerate(args.get("fallback_orders") or []):
        if len(set(order)) != len(order):
            issues.append((f"fallback_orders[{i}]", "a node group is listed twice"))
    return issues


def dra_read_access(parent: LibraryComponent, name: str, namespace: str) -> k8s.rbac.v1.ClusterRoleBinding:
    """Read access to the DRA objects for the autoscaler's service account (a ClusterRole and its binding)."""
    role = k8s.rbac.v1.ClusterRole(
        f"{name}-dra-reader",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=DRA_READER_ROLE),
        rules=[k8s.rbac.v1.PolicyRuleArgs(**DRA_READ_RULE)],
        opts=parent.child(),
    )
    return k8s.rbac.v1.ClusterRoleBinding(
        f"{name}-dra-reader-binding",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=DRA_READER_ROLE),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole",
                                         name=role.metadata.name),
        subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=namespace)],
        opts=parent.child(),
    )


class ClusterAutoscaler(LibraryComponent):
    """IRSA role, priority-expander ConfigMap, DRA read access and the pinned ``cluster-autoscaler`` release."""

    LEGACY_TYPE = "gpu-fungibility:cluster_autoscaler:ClusterAutoscaler"

    role_arn: pulumi.Output[str]
    """The autoscaler's IAM role (IRSA)."""
    release_name: pulumi.Output[str]
    """The Helm release's name."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return autoscaler_issues(args)

    def __init__(self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None):
        import pulumi_aws as aws

        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        namespace = args.get("namespace", pins.CLUSTER_AUTOSCALER_NAMESPACE)
        cluster_name = args["cluster_name"]
        orders = [list(order) for order in args.get("fallback_orders") or []]
        others = list(args.get("other_node_groups") or [])
        priorities = expander_priorities(orders, others)
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=pulumi.Output.all(args["oidc_provider_arn"], args["oidc_issuer"]).apply(
                lambda a: json.dumps(irsa_trust_policy(a[0], a[1], namespace, SERVICE_ACCOUNT))
            ),
            opts=self.child(),
        )
        aws.iam.RolePolicy(
            f"{name}-policy",
            role=role.id,
            policy=pulumi.Output.from_input(args["nodegroup_arn_prefix"]).apply(
                lambda prefix: json.dumps(autoscaler_policy(cluster_name, prefix))
            ),
            opts=self.child(),
        )
        config_map = k8s.core.v1.ConfigMap(
            f"{name}-priorities",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=PRIORITY_CONFIGMAP, namespace=namespace),
            data={"priorities": priorities_document(
                priorities, {g: asg_name_regex(g) for g in [*(g for o in orders for g in o), *others]})},
            opts=self.child(),
        )
        dra = bool(args.get("dynamic_resource_allocation", False))
        minor = minor_version(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION))
        dra_access = dra_read_access(self, name, namespace) if dra or dra_mode_locked_on(minor) else None
        values = autoscaler_values(
            args.get("values"),
            cluster_name=cluster_name,
            region=args["region"],
            kubernetes_minor=minor,
            role_arn=role.arn,
            system_node_group=args["system_node_group"],
            dra=dra,
        )
        release = helm_release(
            self, name, "cluster-autoscaler", chart=args.get("chart", pins.CLUSTER_AUTOSCALER_CHART),
            version=args.get("version", pins.CLUSTER_AUTOSCALER_VERSION),
            repository=args.get("repository", pins.CLUSTER_AUTOSCALER_REPO), namespace=namespace, values=values,
            # The priority expander reads its ConfigMap at start-up; DRA informers need their access.
            depends_on=[config_map, *([dra_access] if dra_access else [])])
        self.role_arn = role.arn
        self.release_name = release.name
        self.register()
