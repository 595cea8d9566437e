"""Every pinned artefact the library installs: Helm charts and container images.

One module, so an upgrade is one reviewed change and a dependency bot finds
every pin in one place. Components default to these; a caller (or a stack's
``drivers`` config) may pin something else.
"""

# ---- Helm charts: reference, version, the namespace the release goes to
# Each chart's defaults, as the policy pack models them, are recorded in policies/charts.py with the
# version they were read at: moving a pin means re-reading that chart's values.yaml and templates.

NVIDIA_DRA_CHART = "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
# renovate: datasource=docker depName=registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu
NVIDIA_DRA_VERSION = "0.4.1"
NVIDIA_DRA_NAMESPACE = "dra-driver-nvidia-gpu"

TPU_DRA_CHART = "oci://registry.k8s.io/dra-driver-google/charts/dra-driver-google-tpu"
# renovate: datasource=docker depName=registry.k8s.io/dra-driver-google/charts/dra-driver-google-tpu
TPU_DRA_VERSION = "0.2.0"
TPU_DRA_NAMESPACE = "dra-driver-google-tpu"

NVIDIA_DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
NVIDIA_DEVICE_PLUGIN_REPO = "https://nvidia.github.io/k8s-device-plugin"
# renovate: datasource=helm depName=nvidia-device-plugin registryUrl=https://nvidia.github.io/k8s-device-plugin
NVIDIA_DEVICE_PLUGIN_VERSION = "0.20.0"
NVIDIA_DEVICE_PLUGIN_NAMESPACE = "nvidia-device-plugin"

CLUSTER_AUTOSCALER_CHART = "cluster-autoscaler"
CLUSTER_AUTOSCALER_REPO = "https://kubernetes.github.io/autoscaler"
#: 9.59.0 (kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0, 5a0b98e4, 2026-07-21): its ClusterRole reads
#: resource.k8s.io (deviceclasses, resourceslices, resourceclaims) since #8827 (2025-12-09); 9.46.6 did not.
# renovate: datasource=helm depName=cluster-autoscaler registryUrl=https://kubernetes.github.io/autoscaler
CLUSTER_AUTOSCALER_VERSION = "9.59.0"
CLUSTER_AUTOSCALER_NAMESPACE = "kube-system"

# ---- images

# renovate: datasource=docker
#: vLLM serving images used when a workload names none: pinned tags, never ``latest``.
VLLM_GPU_IMAGE = "vllm/vllm-openai:v0.11.0"
# renovate: datasource=docker
VLLM_TPU_IMAGE = "vllm/vllm-tpu:v0.19.0"

# renovate: datasource=docker depName=registry.k8s.io/autoscaling/cluster-autoscaler
#: The Cluster Autoscaler image per Kubernetes minor version (it must match the cluster's minor).
#: The newest patch of each minor (kubernetes/autoscaler tags cluster-autoscaler-1.34.5 cb2123ed, -1.35.2 2d425888,
#: -1.36.1 35e8a280, all 2026-07-22): 1.34.3-1.34.5 carry DRA fixes (a node's devices spread over several
#: ResourceSlices, scale-down simulation of DRA pods).
CLUSTER_AUTOSCALER_IMAGE_TAG_BY_MINOR = {"1.34": "v1.34.5", "1.35": "v1.35.2", "1.36": "v1.36.1"}

# The driver installer's images follow Google's own COS installer DaemonSet,
# GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer/cos/daemonset-preloaded.yaml
# (and -latest.yaml) at commit f2cf4197a5c3f0f20133be15d5fad8b7453beed5 (2025-07-02, unchanged through
# 992db81257553607f1477945f1b3219632991829, 2026-06-09). GKE 1.33+ nodes run containerd 2.0, which cannot pull
# Docker Schema 1 images (GKE "Migrate nodes to containerd 2"): every image below that a node pulls is pinned by
# digest to a manifest upstream's own installer runs on those nodes (components/image_pins.py records the proof).

# renovate: ignore (preloaded on COS GPU nodes, never pulled from a registry)
#: GKE's COS driver installer, preloaded on COS GPU nodes to match their COS build (never pulled).
COS_DRIVER_INSTALLER_IMAGE = "cos-nvidia-installer:fixed"
# renovate: datasource=docker
#: GPU partitioning (MIG) image, pulled, so pinned by digest.
GPU_PARTITION_IMAGE = (
    "gcr.io/gke-release/nvidia-partition-gpu@sha256:de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17"
)
# renovate: datasource=docker
#: The container that keeps the installer's pod alive once the init containers finished.
PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"

#: Every digest the library pins, with the source that shows the manifest is one containerd 2 pulls
#: (Docker Schema 2 or OCI; containerd 2.0 refuses Docker Schema 1). A digest with no entry here is unproven.
PULLABLE_MANIFESTS = {
    "sha256:de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17": (
        "GoogleCloudPlatform/container-engine-accelerators@f2cf4197 nvidia-driver-installer/cos/"
        "daemonset-preloaded.yaml: the installer GKE's docs apply to GKE 1.33+ COS nodes (containerd 2.0)"),
    "sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830": (
        "GoogleCloudPlatform/container-engine-accelerators@f2cf4197 nvidia-driver-installer/cos/"
        "daemonset-preloaded.yaml: the installer GKE's docs apply to GKE 1.33+ COS nodes (containerd 2.0)"),
}

#: References known to be Docker Schema 1 manifests, which containerd 2.0 (GKE 1.33+ nodes) cannot pull:
#: pause 2.0 predates Schema 2; upstream's installer moved off it in container-engine-accelerators@22f1e653
#: (2024-06-11).
SCHEMA1_IMAGES = ("gcr.io/google-containers/pause:2.0", "k8s.gcr.io/pause:2.0")
