"""What the pinned driver charts do when a value is not set, as data.

The isolation rules decide where a plugin runs from the release's *effective*
values: the values the stack passes, coalesced over the chart's defaults the
way Helm does it (maps merge key by key, lists and scalars replace, ``null``
deletes a default). Defaults recorded here come from the charts' own
``values.yaml`` and templates, at the pinned versions (``components/pins.py``):

- ``dra-driver-nvidia-gpu`` 0.4.1 (kubernetes-sigs/dra-driver-nvidia-gpu tag
  v0.4.1, 764900e7, ``deployments/helm/dra-driver-nvidia-gpu/``): the kubelet
  plugin selects any node with one of NFD's NVIDIA PCI labels (vendor
  ``pci-10de``, or the class-qualified ``pci-0302_10de`` / ``pci-0300_10de``),
  the NFD NVIDIA CPU vendor label, or ``nvidia.com/gpu.present=true``;
  tolerates only ``nvidia.com/gpu`` (``NoSchedule``); priority
  ``system-node-critical``. The controller (``system-node-critical``) runs only
  with compute domains enabled; the webhook (``system-cluster-critical``) is off
  by default. ``templates/validation.yaml`` refuses GPUs without
  ``gpuResourcesEnabledOverride``. Unchanged from 0.4.0 in all of this (0.4.1
  drops a pod label and adds an environment variable).
- ``dra-driver-google-tpu`` 0.2.0 (kubernetes-sigs/dra-driver-google-tpu tag
  v0.2.0, b912410): the kubelet plugin has no affinity (it runs on every node
  and idles where there is no TPU), tolerates ``google.com/tpu``
  (``NoSchedule``), priority ``system-node-critical``; DeviceClass
  ``tpu.google.com``. (0.1.0 required ``cloud.google.com/gke-tpu-accelerator``
  and ``cloud.google.com/gke-tpu-dra-driver=true`` and tolerated nothing.)
- ``nvidia-device-plugin`` 0.20.0 (NVIDIA/k8s-device-plugin tag v0.20.0,
  1b826acc, ``deployments/helm/nvidia-device-plugin/values.yaml``): the
  three-way NVIDIA node affinity (vendor PCI label, CPU vendor, ``gpu.present``);
  tolerates ``CriticalAddonsOnly`` and ``nvidia.com/gpu`` (``NoSchedule``);
  priority ``system-node-critical``; GFD and NFD off. Unchanged from 0.17.1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gpu_fungibility import catalog
from gpu_fungibility.helm_values import coalesce, truthy  # noqa: F401  (the pack's Helm semantics)
from gpu_fungibility.node_selection import PodPlacement

ChartKind = Literal["nvidia-dra", "tpu-dra", "nvidia-device-plugin", "other"]

def _required_any(*expressions: dict[str, Any]) -> dict[str, Any]:
    """A required node affinity whose terms are ORed, one expression each."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [e]} for e in expressions]}}}


def _label_in(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": [value]}


_NFD = "feature.node.kubernetes.io"
_NVIDIA_CPU = _label_in(f"{_NFD}/cpu-model.vendor_id", "NVIDIA")
_GPU_PRESENT = _label_in("nvidia.com/gpu.present", "true")
_DRA_KUBELET_PLUGIN_AFFINITY = _required_any(
    _label_in(f"{_NFD}/pci-10de.present", "true"), _label_in(f"{_NFD}/pci-0302_10de.present", "true"),
    _label_in(f"{_NFD}/pci-0300_10de.present", "true"), _NVIDIA_CPU, _GPU_PRESENT)
_DEVICE_PLUGIN_AFFINITY = _required_any(_label_in(f"{_NFD}/pci-10de.present", "true"), _NVIDIA_CPU, _GPU_PRESENT)

NVIDIA_DRA_DEFAULTS: dict[str, Any] = {
    "gpuResourcesEnabledOverride": False,
    "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": True}},
    "webhook": {"enabled": False, "priorityClassName": "system-cluster-critical"},
    "controller": {"priorityClassName": "system-node-critical"},
    "kubeletPlugin": {
        "priorityClassName": "system-node-critical",
        "nodeSelector": {},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": _DRA_KUBELET_PLUGIN_AFFINITY,
    },
}

TPU_DRA_DEFAULTS: dict[str, Any] = {
    "kubeletPlugin": {
        "priorityClassName": "system-node-critical",
        "nodeSelector": {},
        "tolerations": [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {},
    },
}

DEVICE_PLUGIN_DEFAULTS: dict[str, Any] = {
    "priorityClassName": "system-node-critical",
    "nodeSelector": {},
    "affinity": _DEVICE_PLUGIN_AFFINITY,
    "tolerations": [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ],
    "devicePlugin": {"enabled": True},
    "gfd": {"enabled": False},
    "nfd": {"enabled": False},
}

#: DeviceClasses each driver chart creates (the project's catalog holds the names).
NVIDIA_GPU_CLASSES = catalog.NVIDIA_DRIVER_DEVICE_CLASSES
NVIDIA_COMPUTE_DOMAIN_CLASSES = catalog.NVIDIA_COMPUTE_DOMAIN_DEVICE_CLASSES
TPU_CLASSES = catalog.TPU_DRIVER_DEVICE_CLASSES



def chart_kind(chart: str) -> ChartKind:
    """Which driver a Helm release installs, from its chart reference."""
    name = chart.rstrip("/").rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    if name in ("dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu"):
        return "nvidia-dra"
    if name == "dra-driver-google-tpu":
        return "tpu-dra"
    if name == "nvidia-device-plugin":
        return "nvidia-device-plugin"
    return "other"


def defaults_for(kind: ChartKind) -> dict[str, Any]:
    return {"nvidia-dra": NVIDIA_DRA_DEFAULTS, "tpu-dra": TPU_DRA_DEFAULTS,
            "nvidia-device-plugin": DEVICE_PLUGIN_DEFAULTS}.get(kind, {})


@dataclass(frozen=True)
class DriverRelease:
    """A driver Helm release with its effective (coalesced) values."""

    urn: str
    name: str
    kind: ChartKind
    chart: str
    version: str
    namespace: str
    values: dict[str, Any]

    @property
    def label(self) -> str:
        return f"Helm release {self.name} ({self.chart.rsplit('/', 1)[-1]} {self.version or 'unpinned'})"

    def _get(self, *path: str, default: Any = None) -> Any:
        node: Any = self.values
        for key in path:
            if not isinstance(node, Mapping) or key not in node:
                return default
            node = node[key]
        return node

    def runs_kubelet_plugin(self) -> bool:
        if self.kind == "nvidia-dra":
            return truthy(self._get("resources", "gpus", "enabled", default=True))
        if self.kind == "tpu-dra":
            return True
        return False

    def runs_device_plugin(self) -> bool:
        return self.kind == "nvidia-device-plugin" and truthy(self._get("devicePlugin", "enabled", default=True))

    def labels_gpu_nodes_with_nfd(self) -> bool:
        """The device plugin chart's GFD/NFD sub-charts label every NVIDIA node with NFD's PCI label."""
        return self.kind == "nvidia-device-plugin" and (
            truthy(self._get("gfd", "enabled", default=False)) or truthy(self._get("nfd", "enabled", default=False)))

    def plugin_placement(self) -> PodPlacement:
        """nodeSelector/affinity/tolerations of the node-level pod (kubelet plugin or device plugin)."""
        scope = self.values if self.kind == "nvidia-device-plugin" else (self._get("kubeletPlugin") or {})
        return PodPlacement(
            node_selector=dict(scope.get("nodeSelector") or {}),
            affinity=scope.get("affinity") or None,
            tolerations=list(scope.get("tolerations") or []),
        )

    def critical_pods(self) -> list[tuple[str, str]]:
        """(values key, priorityClassName) for every pod the release runs with a ``system-*`` priority."""
        pods: list[tuple[str, Any]] = []
        if self.kind == "nvidia-dra":
            compute_domains = truthy(self._get("resources", "computeDomains", "enabled"))
            if self.runs_kubelet_plugin() or compute_domains:
                pods.append(("kubeletPlugin.priorityClassName", self._get("kubeletPlugin", "priorityClassName")))
            if compute_domains:
                pods.append(("controller.priorityClassName", self._get("controller", "priorityClassName")))
            if truthy(self._get("webhook", "enabled")):
                pods.append(("webhook.priorityClassName", self._get("webhook", "priorityClassName")))
        elif self.kind == "tpu-dra":
            pods.append(("kubeletPlugin.priorityClassName", self._get("kubeletPlugin", "priorityClassName")))
        elif self.runs_device_plugin():
            pods.append(("priorityClassName", self._get("priorityClassName")))
        return [(key, str(p)) for key, p in pods if str(p or "").startswith("system-")]

    def device_classes(self) -> tuple[str, ...]:
        if self.kind == "nvidia-dra":
            classes: tuple[str, ...] = ()
            if truthy(self._get("resources", "gpus", "enabled", default=True)):
                classes += NVIDIA_GPU_CLASSES
            if truthy(self._get("resources", "computeDomains", "enabled", default=True)):
                classes += NVIDIA_COMPUTE_DOMAIN_CLASSES
            return classes
        if self.kind == "tpu-dra":
            return TPU_CLASSES
        return ()
