"""The NVIDIA DRA driver (chart ``dra-driver-nvidia-gpu``) on GKE or EKS.

The chart's kubelet plugin, left to its defaults, selects every node with NFD's
NVIDIA PCI labels or ``nvidia.com/gpu.present=true`` and tolerates only
``nvidia.com/gpu``. Here it is pinned to the DRA GPU pools instead: a required
node affinity on ``nvidia.com/gpu.dra In [true]`` (set by
:mod:`components.dra_wiring` on DRA GPU pools of both clouds) plus
``nvidia.com/gpu.present``, and explicit tolerations for every taint those
pools carry (compute-class taints, ``nvidia.com/gpu``, user taints) - never a
blanket ``operator: Exists``.

Cloud differences (seeds 000 and 004), from the cloud's profile:

- GKE: the driver lives under ``/home/kubernetes/bin/nvidia/`` (installed by the
  COS driver installer). GKE refuses ``system-node-critical`` pods outside
  kube-system unless the namespace has a ResourceQuota for that priority: the
  plugin runs without a priority class (seed 000) or, with
  ``resource_quota``, keeps it and the quota is created (seed 004).
- EKS: the AL2023 NVIDIA AMI has the driver on the host (chart default root
  ``/``); the namespace gets seed 004's ResourceQuota.

On both: ``gpuResourcesEnabledOverride=true`` (the chart refuses to enable GPUs
without it), ComputeDomains off (no multi-node NVLink here), and the controller's
affinity cleared (managed control planes have no schedulable control-plane
nodes; the controller only runs with ComputeDomains anyway).
"""

import copy
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from . import clouds, helm_values, images, pins
from .base import Issues, LibraryComponent, resolved
from .errors import UnknownCloudError
from .node_selection import NodeTaint, tolerations_for
from .pool_args import Taint, taint_issues, taints_of
from .releases import chart_issues, helm_release, privileged_namespace
from .wiring_keys import GPU_DRA, GPU_PRESENT, GPU_TAINT_KEY

RELEASE_NAME = "dra-driver-nvidia-gpu"
CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
QUOTA_PODS = "100"

GPU_TOLERATION = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}

KUBELET_PLUGIN_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{
                "matchExpressions": [
                    {"key": GPU_PRESENT, "operator": "Exists"},
                    {"key": GPU_DRA, "operator": "In", "values": ["true"]},
                ],
            }],
        },
    },
}


def nvidia_dra_values(cloud: str, taints: Sequence[NodeTaint], *, resource_quota: bool = False,
                      extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chart values for ``cloud``; ``taints`` are those on the DRA GPU pools' nodes."""
    profile = clouds.profile(cloud)
    kubelet_plugin: dict[str, Any] = {
        "tolerations": tolerations_for(taints, base=[GPU_TOLERATION]),
        "nodeSelector": {GPU_PRESENT: "true"},
        "affinity": copy.deepcopy(KUBELET_PLUGIN_AFFINITY),
    }
    values: dict[str, Any] = {
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "controller": {"affinity": None},
        "kubeletPlugin": kubelet_plugin,
    }
    if profile.nvidia_driver_root:
        values["nvidiaDriverRoot"] = profile.nvidia_driver_root
    if profile.critical_pods_need_quota and not resource_quota:
        kubelet_plugin["priorityClassName"] = ""
    return helm_values.merge(values, extra or {})


class NvidiaDraDriverArgs(TypedDict):
    """The NVIDIA DRA driver release and where its kubelet plugin runs."""

    cloud: str
    """``gke`` or ``eks``: where the driver lives on the host and how critical pods are admitted."""
    node_taints: NotRequired[pulumi.Input[list[Taint]]]
    """Every taint on the nodes of the DRA GPU pools it serves (their ``node_taints`` outputs): the kubelet
    plugin tolerates each one explicitly."""
    resource_quota: NotRequired[bool]
    """Create seed 004's ResourceQuota admitting system-critical pods in the driver's namespace
    (default: on EKS; on GKE the plugin runs without a priority class instead)."""
    chart: NotRequired[str]
    """The chart reference (default: the pinned ``dra-driver-nvidia-gpu`` OCI chart)."""
    version: NotRequired[str]
    """The exact chart version (default: the pinned one)."""
    repository: NotRequired[str]
    """The chart repository, for a chart that is not an ``oci://`` reference."""
    namespace: NotRequired[str]
    """The namespace the stack creates for the driver (default ``dra-driver-nvidia-gpu``)."""
    values: NotRequired[dict[str, Any]]
    """Chart values merged over the library's (Helm's merge: a null deletes a default)."""


class NvidiaDraDriver(LibraryComponent):
    """Namespace, optional ResourceQuota and the pinned ``dra-driver-nvidia-gpu`` Helm release.

    Pass the cluster's Kubernetes provider through ``opts`` (``providers=[...]``).
    """

    LEGACY_TYPE = "gpu-fungibility:nvidia_dra:NvidiaDraDriver"

    namespace: pulumi.Output[str]
    """The driver's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name."""
    values: pulumi.Output[dict[str, Any]]
    """The values the release was given."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return driver_issues(args)

    def __init__(self, name: str, args: NvidiaDraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        profile = clouds.profile(args["cloud"])
        quota_wanted = args.get("resource_quota", profile.nvidia_dra_quota_by_default)
        chart, version = args.get("chart", pins.NVIDIA_DRA_CHART), args.get("version", pins.NVIDIA_DRA_VERSION)
        extra = helm_values.merge(images.chart_image_values(chart, version), args.get("values"))
        values = resolved(args.get("node_taints", []), lambda taints: nvidia_dra_values(
            profile.name, taints_of(taints), resource_quota=quota_wanted, extra=extra))
        namespace = privileged_namespace(self, name, args.get("namespace", pins.NVIDIA_DRA_NAMESPACE))
        quota = critical_pods_quota(self, name, namespace) if quota_wanted else None
        release = helm_release(
            self, name, RELEASE_NAME, chart=chart, version=version, repository=args.get("repository"),
            namespace=namespace.metadata.name, values=values, depends_on=[quota] if quota else [],
            create_namespace=False, allow_null_values=True)  # null removes a chart default (controller.affinity)
        self.namespace = namespace.metadata.name
        self.release_name = release.name
        self.values = pulumi.Output.from_input(values)
        self.register()


def driver_issues(args: NvidiaDraDriverArgs) -> Issues:
    issues = chart_issues(dict(args))
    try:
        clouds.profile(args["cloud"])
    except UnknownCloudError as exc:
        issues += exc.issues
    taints = args.get("node_taints")
    if isinstance(taints, list):
        issues += taint_issues(taints, "node_taints")
    return issues


def critical_pods_quota(parent: LibraryComponent, name: str,
                        namespace: k8s.core.v1.Namespace) -> k8s.core.v1.ResourceQuota:
    """Seed 004's quota: lets node/cluster-critical pods run outside kube-system (GKE requires it)."""
    return k8s.core.v1.ResourceQuota(
        f"{name}-quota",
        metadata=k8s.meta.v1.ObjectMetaArgs(name="critical-pods", namespace=namespace.metadata.name),
        spec=k8s.core.v1.ResourceQuotaSpecArgs(
            hard={"pods": QUOTA_PODS},
            scope_selector=k8s.core.v1.ScopeSelectorArgs(match_expressions=[
                k8s.core.v1.ScopedResourceSelectorRequirementArgs(
                    operator="In", scope_name="PriorityClass", values=list(CRITICAL_PRIORITY_CLASSES)),
            ]),
        ),
        opts=parent.child(),
    )
