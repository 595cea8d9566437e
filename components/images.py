"""Which image each pinned chart runs, how a chart is told its digest, and the images left as tags.

GKE 1.33+, EKS and AKS nodes run containerd 2.x, which refuses Docker Schema 1 manifests: every image a
shipped stack runs is either pinned by digest to a manifest ``pins.PULLABLE_MANIFESTS`` proves is Docker
Schema 2 or OCI, or listed in :data:`UNPINNED_IMAGES` with the reason no digest is pinned.

The three driver charts write their image as ``{{ image.repository }}:{{ image.tag | default "v" + appVersion }}``
(the ``fullimage`` helper of ``_helpers.tpl`` at the pinned tags: kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
764900e7, kubernetes-sigs/dra-driver-google-tpu v0.2.0 b912410, NVIDIA/k8s-device-plugin v0.20.0 1b826acc), so
``image.tag: "v0.4.1@sha256:..."`` renders ``repository:v0.4.1@sha256:...``, which containerd resolves by the
digest. The cluster-autoscaler chart writes ``{{ image.repository }}:{{ image.tag }}`` the same way.
"""

from typing import Any

from . import pins

#: (chart name, pinned chart version) -> the image its ``image`` values select there, by digest. Each chart's
#: appVersion equals its version at these tags, so the image's tag is ``v<version>``.
CHART_IMAGES = {
    ("dra-driver-nvidia-gpu", pins.NVIDIA_DRA_VERSION): pins.NVIDIA_DRA_IMAGE,
    ("dra-driver-google-tpu", pins.TPU_DRA_VERSION): pins.TPU_DRA_IMAGE,
    ("nvidia-device-plugin", pins.NVIDIA_DEVICE_PLUGIN_VERSION): pins.NVIDIA_DEVICE_PLUGIN_IMAGE,
}

#: (chart name, pinned chart version) -> ``kubeletPlugin.containers.<name>`` -> the image the chart itself pins.
CHART_OWN_IMAGES = {
    ("dra-driver-google-tpu", pins.TPU_DRA_VERSION): pins.TPU_DRA_CHART_OWN_IMAGES,
}

_AUTOSCALER = "registry.k8s.io/autoscaling/cluster-autoscaler"

#: Images a shipped stack runs that no source available offline pins to a digest, with the reason. They stay
#: tags (resolved by the node when it pulls; the tag can move). docs/images.md lists them.
UNPINNED_IMAGES = {
    pins.VLLM_TPU_IMAGE: "no public source found records a digest for the v0.19.0 tag of vllm/vllm-tpu",
    "vllm/vllm-openai:gemma4": (
        "a moving tag the dev and prod stack files choose (workloads.vllm-gpu.image); no source pins a digest"),
    **{f"{_AUTOSCALER}:{tag}": (
        "the promoter manifest of registry.k8s.io/autoscaling (kubernetes/k8s.io registry.k8s.io/images/"
        f"k8s-staging-autoscaling/images.yaml) as stored offline ends at v1.33.1: no authoritative digest of {tag}")
       for tag in pins.CLUSTER_AUTOSCALER_IMAGE_TAG_BY_MINOR.values()},
}


def chart_name(chart: str) -> str:
    """``oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu`` -> ``dra-driver-nvidia-gpu``."""
    return chart.rstrip("/").rsplit("/", 1)[-1]


def split_reference(image: str) -> tuple[str, str]:
    """``repo:tag@sha256:...`` -> (``repo``, ``tag@sha256:...``); the chart values' repository and tag."""
    name, at, digest = image.partition("@")
    repository, colon, tag = name.rpartition(":")
    if not colon or "/" in tag:
        raise ValueError(f"{image}: a chart image needs a tag")
    return repository, f"{tag}{at}{digest}"


def chart_image_values(chart: str, version: str) -> dict[str, Any]:
    """The ``image`` values that pin a chart's image by digest; ``{}`` for a chart or version not pinned here."""
    image = CHART_IMAGES.get((chart_name(chart), version))
    if not image:
        return {}
    repository, tag = split_reference(image)
    return {"image": {"repository": repository, "tag": tag}}
