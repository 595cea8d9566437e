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
from typing import Any, NotRequired

import pulumi
import pulumi_kubernetes as k8s

from . import clouds, helm_values, pins
from .base import Issues, LibraryComponent
from .driver_release import DriverRelease, DriverReleaseArgs, kubelet_plugin_affinity
from .errors import UnknownCloudError
from .node_selection import NodeTaint, tolerations_for
from .wiring_keys import GPU_DRA, GPU_PRESENT, GPU_TAINT_KEY

RELEASE_NAME = "dra-driver-nvidia-gpu"
CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
QUOTA_PODS = "100"

GPU_TOLERATION = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}

KUBELET_PLUGIN_AFFINITY = kubelet_plugin_affinity(GPU_PRESENT, GPU_DRA)


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


class NvidiaDraDriverArgs(DriverReleaseArgs):
    """The NVIDIA DRA driver release (chart and namespace ``dra-driver-nvidia-gpu`` by default) and where its
    kubelet plugin runs: the DRA GPU pools whose ``node_taints`` it is given."""

    cloud: str
    """A registered cloud (``gke``, ``eks``, ``aks``, ...): its profile says where the driver lives on the host
    and how critical pods are admitted."""
    resource_quota: NotRequired[bool]
    """Create seed 004's ResourceQuota admitting system-critical pods in the driver's namespace
    (default: as the cloud's profile says, on EKS and AKS; on GKE the plugin runs without a priority class
    instead)."""


class NvidiaDraDriver(DriverRelease):
    """Namespace, optional ResourceQuota and the pinned ``dra-driver-nvidia-gpu`` Helm release.

    Pass the cluster's Kubernetes provider through ``opts`` (``providers=[...]``).
    """

    LEGACY_TYPE = "gpu-fungibility:nvidia_dra:NvidiaDraDriver"
    RELEASE_NAME = RELEASE_NAME
    CHART, VERSION, NAMESPACE = pins.NVIDIA_DRA_CHART, pins.NVIDIA_DRA_VERSION, pins.NVIDIA_DRA_NAMESPACE

    def __init__(self, name: str, args: NvidiaDraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    @classmethod
    def own_issues(cls, args: Any) -> Issues:
        try:
            clouds.profile(args["cloud"])
        except UnknownCloudError as exc:
            return exc.issues
        return []

    def chart_values(self, args: Any, taints: Sequence[NodeTaint], extra: dict[str, Any]) -> dict[str, Any]:
        return nvidia_dra_values(clouds.profile(args["cloud"]).name, taints, resource_quota=quota_wanted(args),
                                 extra=extra)

    def before_release(self, name: str, args: Any, namespace: k8s.core.v1.Namespace) -> list[pulumi.Resource]:
        return [critical_pods_quota(self, name, namespace)] if quota_wanted(args) else []


def quota_wanted(args: NvidiaDraDriverArgs) -> bool:
    """Whether the driver's namespace gets the ResourceQuota: as asked, else as the cloud's profile says."""
    return bool(args.get("resource_quota", clouds.profile(args["cloud"]).nvidia_dra_quota_by_default))


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
