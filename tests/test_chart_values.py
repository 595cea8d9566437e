"""The values the library passes to each pinned chart are values that chart has, at the pinned version.

``tests/fixtures/chart_value_keys.json`` records the key paths of each chart's ``values.yaml`` at the tag
``components/pins.py`` pins (the charts themselves cannot be fetched offline). Helm ignores a key the chart
does not read, so a renamed value would silently stop applying: this catches it, and a pin moved without
reading the chart again fails here too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpu_fungibility import pins
from gpu_fungibility.device_plugin import device_plugin_values
from gpu_fungibility.node_selection import NodeTaint
from gpu_fungibility.nvidia_dra import nvidia_dra_values
from gpu_fungibility.tpu_dra import tpu_dra_values

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "chart_value_keys.json").read_text())["charts"]
#: keys whose value the charts copy verbatim into the manifests (nothing below them is a chart value)
VERBATIM = {"affinity", "tolerations", "nodeSelector", "podAnnotations", "podSecurityContext", "securityContext",
            "annotations", "env", "featureGates", "labels", "selectorLabelsOverride"}

GPU_TAINTS = [NodeTaint("nvidia.com/gpu", "present", "NoSchedule"),
              NodeTaint("cloud.google.com/compute-class", "vllm-gpu-ccc", "NoSchedule")]
#: AKS's Spot taint beside the library's GPU taint (docs/aks.md).
AKS_TAINTS = [NodeTaint("nvidia.com/gpu", "true", "NoSchedule"),
              NodeTaint("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")]
TPU_TAINTS = [NodeTaint("google.com/tpu", "present", "NoSchedule")]

LIBRARY_VALUES = {
    "dra-driver-nvidia-gpu on GKE": ("dra-driver-nvidia-gpu", nvidia_dra_values("gke", GPU_TAINTS)),
    "dra-driver-nvidia-gpu on EKS with its quota": (
        "dra-driver-nvidia-gpu", nvidia_dra_values("eks", [NodeTaint("nvidia.com/gpu", "true", "NoSchedule")],
                                                   resource_quota=True)),
    "dra-driver-nvidia-gpu on AKS with Spot pools": (
        "dra-driver-nvidia-gpu", nvidia_dra_values("aks", AKS_TAINTS, resource_quota=True)),
    "dra-driver-google-tpu": ("dra-driver-google-tpu", tpu_dra_values(TPU_TAINTS)),
    "nvidia-device-plugin": ("nvidia-device-plugin", device_plugin_values()),
}


def key_paths(values: Any, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    if not isinstance(values, dict):
        return
    for key, value in values.items():
        path = (*prefix, key)
        yield ".".join(path)
        if key not in VERBATIM:
            yield from key_paths(value, path)


@pytest.mark.parametrize("label", sorted(LIBRARY_VALUES))
def test_every_value_the_library_sets_is_a_value_of_the_pinned_chart(label):
    chart, values = LIBRARY_VALUES[label]
    unknown = sorted(set(key_paths(values)) - set(RECORDED[chart]["keys"]))
    assert unknown == [], f"{label}: keys {RECORDED[chart]['source']} does not have"


def test_the_recorded_charts_are_the_pinned_versions():
    pinned = {"dra-driver-nvidia-gpu": pins.NVIDIA_DRA_VERSION, "dra-driver-google-tpu": pins.TPU_DRA_VERSION,
              "nvidia-device-plugin": pins.NVIDIA_DEVICE_PLUGIN_VERSION}
    assert {chart: RECORDED[chart]["version"] for chart in pinned} == pinned


def test_a_renamed_value_is_caught():
    """The check itself: a key the chart lacks (a value from an older chart, a typo) is reported."""
    values = tpu_dra_values(TPU_TAINTS, {"kubeletPlugin": {"tolerations": [], "nodeAffinity": {}}})
    assert set(key_paths(values)) - set(RECORDED["dra-driver-google-tpu"]["keys"]) == {"kubeletPlugin.nodeAffinity"}
