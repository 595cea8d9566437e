"""GKE's share of the rehearsal: what GKE itself runs and serves on a cluster, which the rehearsal's control plane
stands in for.

- GKE's own NVIDIA device plugin, a DaemonSet in kube-system on nodes with an NVIDIA accelerator label that lack
  the opt-out label (cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra: "gke-no-default-nvidia-gpu-device-
  plugin=true ... disables the default device plugin"); it tolerates every taint, as GKE's kube-system add-ons do.
- GKE's ComputeClass (``cloud.google.com/v1``), served by a minimal CustomResourceDefinition: GKE serves the real one.
"""

from __future__ import annotations

from typing import Any

from gpu_fungibility import sizing, wiring_keys

from rehearse.cluster import DEVICE_PLUGIN, GKE_DEVICE_PLUGIN, Plugin, daemonset

DEVICE_PLUGIN_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [
        {"key": wiring_keys.GKE_ACCELERATOR, "operator": "Exists"},
        {"key": wiring_keys.GKE_NO_DEFAULT_DEVICE_PLUGIN, "operator": "NotIn", "values": ["true"]},
    ]}]}}}

#: Why the ComputeClass CRD is a stand-in (a note of the rehearsal's apply phase).
CRD_NOTE = ("GKE's ComputeClass (cloud.google.com/v1) is served by a minimal CRD that accepts any spec "
            "(x-kubernetes-preserve-unknown-fields): the API server stores it, GKE's own schema is not checked here")


def cloud_plugins() -> list[Plugin]:
    """The node-level plugins GKE runs by itself: its default NVIDIA device plugin."""
    labels = {"k8s-app": "nvidia-gpu-device-plugin"}
    return [Plugin(GKE_DEVICE_PLUGIN, "GKE (the cloud's own add-on)", daemonset(
        "kube-system", "nvidia-gpu-device-plugin", labels, GKE_DEVICE_PLUGIN,
        {"affinity": DEVICE_PLUGIN_AFFINITY, "tolerations": [{"operator": "Exists"}]},
        sizing.DAEMON_SET_ROOM[DEVICE_PLUGIN], "system-node-critical"))]


def custom_resource_definitions() -> list[dict[str, Any]]:
    """The CRDs of the custom resources GKE serves that the stack may create: ComputeClass."""
    return [{
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "computeclasses.cloud.google.com"},
        "spec": {
            "group": "cloud.google.com", "scope": "Cluster",
            "names": {"plural": "computeclasses", "singular": "computeclass", "kind": "ComputeClass",
                      "listKind": "ComputeClassList"},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }]
