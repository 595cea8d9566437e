"""The NVIDIA DRA driver (chart ``dra-driver-nvidia-gpu``) on GKE or EKS.

The chart's kubelet plugin, left to its defaults, selects every node with NFD's
NVIDIA PCI labels or ``nvidia.com/gpu.present=true`` and tolerates only
``nvidia.com/gpu``. Here it is pinned to the DRA GPU pools instead: a required
node affinity on ``nvidia.com/gpu.dra In [true]`` (set by
:mod:`components.dra_wiring` on DRA GPU pools of both clouds) plus
``nvidia.com/gpu.present``, and explicit tolerations for every taint those
pools carry (compute-class taints, ``nvidia.com/gpu``, user taints) - never a
blanket ``operator: Exists``.

Cloud differences (seeds 000 and 004):

- GKE: the driver lives under ``/home/kubernetes/bin/nvidia/`` (installed by the
  COS driver installer). GKE refuses ``system-node-critical`` pods outside
  kube-system unless the namespace has a ResourceQuota for that priority: the
  plugin runs without a priority class (seed 000) or, with
  ``resource_quota=True``, keeps it and the quota is created (seed 004).
- EKS: the AL2023 NVIDIA AMI has the driver on the host (chart default root
  ``/``); the namespace gets seed 004's ResourceQuota.

On both: ``gpuResourcesEnabledOverride=true`` (the chart refuses to enable GPUs
without it), ComputeDomains off (no multi-node NVLink here), and the controller's
affinity cleared (managed control planes have no schedulable control-plane
nodes; the controller only runs with ComputeDomains anyway).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from components import dra_wiring
from components.dra_wiring import GPU_DRA, GPU_PRESENT, GPU_TAINT_KEY, NodeTaint
from stacks.config import HelmChart, StackConfig

RELEASE_NAME = "dra-driver-nvidia-gpu"
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia/"
CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
QUOTA_PODS = "100"


# ---- pure helpers (also used by the TPU driver and the driver installer) ----

def covers(toleration: dict[str, Any], taint: NodeTaint) -> bool:
    """Whether a toleration tolerates a taint (Kubernetes' matching rules)."""
    if toleration.get("key") not in (None, taint.key):
        return False
    if toleration.get("effect") not in (None, "", taint.effect):
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return True
    return toleration.get("value", "") == taint.value


def tolerations_for(taints: list[NodeTaint], base: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """``base`` plus one explicit toleration per taint not yet covered, in order."""
    result = [dict(t) for t in (base or [])]
    for taint in taints:
        if any(covers(t, taint) for t in result):
            continue
        if taint.value:
            result.append({"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect})
        else:
            result.append({"key": taint.key, "operator": "Exists", "effect": taint.effect})
    return result


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` over ``base`` the way Helm merges values (maps merge, everything else replaces)."""
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def dra_gpu_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "gpu" and p.dra]


def dra_gpu_node_taints(cfg: StackConfig) -> list[NodeTaint]:
    """Every taint on a node of a DRA GPU pool (stack-set and cloud-added), first occurrence order."""
    seen: list[NodeTaint] = []
    for pool_name in dra_gpu_pools(cfg):
        for taint in dra_wiring.node_taints(cfg, pool_name):
            if taint not in seen:
                seen.append(taint)
    return seen


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


def nvidia_dra_values(
    cloud: Literal["gke", "eks"],
    taints: list[NodeTaint],
    *,
    resource_quota: bool = False,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The chart values for ``cloud``; ``taints`` are those on the DRA GPU pools' nodes."""
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
    if cloud == "gke":
        values["nvidiaDriverRoot"] = GKE_DRIVER_ROOT
        if not resource_quota:
            kubelet_plugin["priorityClassName"] = ""
    return deep_merge(values, extra or {})


# ---- the component ----

@dataclass(frozen=True)
class NvidiaDraDriverArgs:
    """``taints``: every taint on the DRA GPU pools' nodes (the plugin tolerates each one).

    ``resource_quota``: create seed 004's ResourceQuota (pods 100 at
    system-node-critical / system-cluster-critical) in the driver's namespace.
    Use :meth:`for_stack` to derive taints from the stack config.
    """

    cloud: Literal["gke", "eks"]
    chart: HelmChart
    taints: tuple[NodeTaint, ...] = field(default_factory=tuple)
    resource_quota: bool = False

    @classmethod
    def for_stack(cls, cfg: StackConfig, *, resource_quota: bool | None = None) -> NvidiaDraDriverArgs:
        """Args for a stack: its chart pin and its DRA GPU pools' taints; quota by default on EKS."""
        cloud = cfg.cluster.cloud
        return cls(
            cloud=cloud,
            chart=cfg.drivers.nvidia_dra,
            taints=tuple(dra_gpu_node_taints(cfg)),
            resource_quota=(cloud == "eks") if resource_quota is None else resource_quota,
        )


def _validate(args: NvidiaDraDriverArgs) -> None:
    issues = []
    if args.cloud not in ("gke", "eks"):
        issues.append(("cluster.cloud", f"{args.cloud!r} is not gke or eks"))
    if not (args.chart.chart.startswith("oci://") or args.chart.repo):
        issues.append(("drivers.nvidiaDra.chart", "use an oci:// chart reference or set repo"))
    if issues:
        from stacks.loader import ConfigError

        raise ConfigError(issues)


class NvidiaDraDriver(pulumi.ComponentResource):
    """Namespace, optional ResourceQuota, and the pinned ``dra-driver-nvidia-gpu`` Helm release.

    Pass the cluster's Kubernetes provider through ``opts`` (``providers=[...]``).
    """

    namespace: k8s.core.v1.Namespace
    quota: k8s.core.v1.ResourceQuota | None
    release: k8s.helm.v3.Release
    values: dict[str, Any]

    def __init__(self, name: str, args: NvidiaDraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:nvidia_dra:NvidiaDraDriver", name, None, opts)
        _validate(args)
        self.values = nvidia_dra_values(args.cloud, list(args.taints), resource_quota=args.resource_quota,
                                        extra=args.chart.values)
        self.namespace = driver_namespace(self, name, args.chart.namespace)
        self.quota = critical_pods_quota(self, name, self.namespace) if args.resource_quota else None
        self.release = helm_release(self, name, RELEASE_NAME, args.chart, self.namespace, self.values,
                                    depends_on=[self.quota] if self.quota else [])
        self.register_outputs({"namespace": self.namespace.metadata.name, "releaseName": self.release.name})


def driver_namespace(parent: pulumi.Resource, name: str, namespace: str) -> k8s.core.v1.Namespace:
    """The driver's own namespace; its pods are privileged by design."""
    return k8s.core.v1.Namespace(
        f"{name}-namespace",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=namespace, labels={"pod-security.kubernetes.io/enforce": "privileged"}),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def critical_pods_quota(parent: pulumi.Resource, name: str,
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
        opts=pulumi.ResourceOptions(parent=parent),
    )


def helm_release(parent: pulumi.Resource, name: str, release_name: str, chart: HelmChart,
                 namespace: k8s.core.v1.Namespace, values: dict[str, Any],
                 depends_on: list[pulumi.Resource]) -> k8s.helm.v3.Release:
    """A pinned release with a fixed name (no random suffix) in ``namespace``."""
    return k8s.helm.v3.Release(
        f"{name}-release",
        k8s.helm.v3.ReleaseArgs(
            name=release_name,
            chart=chart.chart,
            version=chart.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart.repo) if chart.repo else None,
            namespace=namespace.metadata.name,
            create_namespace=False,
            values=values,
            allow_null_values=True,  # null removes a chart default (controller.affinity)
        ),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
    )
