"""GKE's share of ``make verify``: the pods of GKE's own NVIDIA device plugin, and the label GKE puts on accelerator
nodes.

GKE runs its device plugin as the ``nvidia-gpu-device-plugin`` DaemonSets in kube-system, pods labelled
``k8s-app: nvidia-gpu-device-plugin``; a node with an accelerator carries ``cloud.google.com/gke-accelerator``
(a GPU model, or a TPU one: ``tpu-v5-lite-podslice``, ...).
"""

from __future__ import annotations

from gpu_fungibility import wiring_keys

from verify.snapshot import Node, Pod

DEVICE_PLUGIN_NAME = "nvidia-gpu-device-plugin"


def is_device_plugin(pod: Pod) -> bool:
    """Whether the pod is GKE's own NVIDIA device plugin."""
    owner_kind, owner = pod.owner
    return pod.namespace == "kube-system" and (pod.labels.get("k8s-app") == DEVICE_PLUGIN_NAME or (
        owner_kind == "DaemonSet" and owner.startswith(DEVICE_PLUGIN_NAME)))


def gpu_node(node: Node) -> bool:
    """Whether GKE labels the node as carrying a GPU (its accelerator label names no TPU)."""
    accelerator = node.labels.get(wiring_keys.GKE_ACCELERATOR)
    return accelerator is not None and "tpu" not in accelerator
