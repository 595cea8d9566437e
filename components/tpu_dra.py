"""The TPU DRA driver (chart ``dra-driver-google-tpu``, seed 003), only for stacks with TPU pools.

Seed 003's values: no priority class for the kubelet plugin (GKE refuses
``system-node-critical`` outside kube-system without a quota) and a toleration
for GKE's ``google.com/tpu`` taint. Tolerations for every other taint on the
TPU pools (a compute-class taint, user taints) are added explicitly. The node
affinity is set to what the chart selects by default (``gke-tpu-accelerator``
present and ``gke-tpu-dra-driver=true``), so the stack states it rather than
inheriting it from whatever chart version is pinned.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import dra_wiring
from components.dra_wiring import GKE_TPU_ACCELERATOR, GKE_TPU_DRA_DRIVER, TPU_TAINT_KEY, NodeTaint
from components.nvidia_dra import deep_merge, driver_namespace, helm_release, tolerations_for
from stacks.config import HelmChart, StackConfig

RELEASE_NAME = "dra-driver-google-tpu"
TPU_TOLERATION = {"key": TPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
KUBELET_PLUGIN_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{
                "matchExpressions": [
                    {"key": GKE_TPU_ACCELERATOR, "operator": "Exists"},
                    {"key": GKE_TPU_DRA_DRIVER, "operator": "In", "values": ["true"]},
                ],
            }],
        },
    },
}


def tpu_pools(cfg: StackConfig) -> list[str]:
    return [n for n, p in cfg.node_pools.items() if p.family == "tpu"]


def tpu_node_taints(cfg: StackConfig) -> list[NodeTaint]:
    seen: list[NodeTaint] = []
    for pool_name in tpu_pools(cfg):
        for taint in dra_wiring.node_taints(cfg, pool_name):
            if taint not in seen:
                seen.append(taint)
    return seen


def tpu_dra_values(taints: list[NodeTaint], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    values = {
        "kubeletPlugin": {
            "priorityClassName": "",
            "tolerations": tolerations_for(taints, base=[TPU_TOLERATION]),
            "affinity": copy.deepcopy(KUBELET_PLUGIN_AFFINITY),
        },
    }
    return deep_merge(values, extra or {})


@dataclass(frozen=True)
class TpuDraDriverArgs:
    """``taints``: every taint on the TPU pools' nodes. Use :meth:`for_stack`."""

    chart: HelmChart
    taints: tuple[NodeTaint, ...] = field(default_factory=tuple)

    @classmethod
    def for_stack(cls, cfg: StackConfig) -> TpuDraDriverArgs:
        return cls(chart=cfg.drivers.tpu_dra, taints=tuple(tpu_node_taints(cfg)))


class TpuDraDriver(pulumi.ComponentResource):
    """Namespace and the pinned ``dra-driver-google-tpu`` Helm release (provider via ``opts``)."""

    namespace: k8s.core.v1.Namespace
    release: k8s.helm.v3.Release
    values: dict[str, Any]

    def __init__(self, name: str, args: TpuDraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:tpu_dra:TpuDraDriver", name, None, opts)
        if not (args.chart.chart.startswith("oci://") or args.chart.repo):
            from stacks.loader import ConfigError

            raise ConfigError([("drivers.tpuDra.chart", "use an oci:// chart reference or set repo")])
        self.values = tpu_dra_values(list(args.taints), args.chart.values)
        self.namespace = driver_namespace(self, name, args.chart.namespace)
        self.release = helm_release(self, name, RELEASE_NAME, args.chart, self.namespace, self.values, depends_on=[])
        self.register_outputs({"namespace": self.namespace.metadata.name, "releaseName": self.release.name})
