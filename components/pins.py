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
#: vLLM serving images used when a workload names none: pinned tags, never ``latest``. The GPU image is the
#: v0.11.0 multi-arch index (its linux/amd64 manifest is sha256:d8d39b59...); the TPU image has no digest any
#: source records (UNPINNED_IMAGES).
VLLM_GPU_IMAGE = (
    "vllm/vllm-openai:v0.11.0@sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c")
# renovate: datasource=docker
VLLM_TPU_IMAGE = "vllm/vllm-tpu:v0.19.0"

# ---- the image each driver chart runs at its pinned version, by digest (components/images.py sets them as
# chart values while the chart is at its pinned version)

# renovate: datasource=docker
NVIDIA_DRA_IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1@sha256:eefe67396dedea4df74f68a94d5883f33204888b83979babd42b91501a2de1d8"
# renovate: datasource=docker
TPU_DRA_IMAGE = "registry.k8s.io/dra-driver-google/dra-driver-google-tpu:v0.2.0@sha256:cb143a7e6753fb0b05719dd57c3e6bdf3a1c1c8cba498ce8313a6a155efe9ddc"
# renovate: datasource=docker
NVIDIA_DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312"

#: Images dra-driver-google-tpu 0.2.0 runs from values of its own, already by digest in its values.yaml
#: (kubernetes-sigs/dra-driver-google-tpu tag v0.2.0, b912410, ``kubeletPlugin.containers.<name>.image``, each on
#: unless ``enabled: false``); the library leaves them to the chart.
TPU_DRA_CHART_OWN_IMAGES = {
    "networkOptimizer": "gcr.io/gke-release/tpu_network_optimizer:tpu_network_optimizer_20250625.00_p0"
                        "@sha256:0404b7f8ce86b25284a844ee4935c8927cd2572c1d6b07d1d2bd944f215fb80d",
    "logCollector": "gcr.io/gke-release/gke-distroless/bash:gke_distroless_20250807.00_p0"
                    "@sha256:4de2c75a1f363c26c4f74bdd702d313410267c464a059b4fa32ac5d4cf10aba9",
    "vbarControlAgent": "gcr.io/gke-release/vbar_control_agent"
                        "@sha256:631a35b6cc0638b3eed328ccea240199043dcfe4bed69c7cfc3d98752faa23fb",
}

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
# digest to a manifest upstream's own installer runs on those nodes (PULLABLE_MANIFESTS records the proof).

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
    # dra-driver-nvidia-gpu v0.4.1
    "sha256:eefe67396dedea4df74f68a94d5883f33204888b83979babd42b91501a2de1d8": (
        "kubernetes/k8s.io@1a15ab54 registry.k8s.io/images/k8s-staging-dra-driver-nvidia/images.yaml maps it to "
        "dra-driver-nvidia-gpu v0.4.1; the image is built multi-arch (kubernetes-sigs/dra-driver-nvidia-gpu@764900e7 "
        "deployments/container/Makefile: buildx --platform=linux/amd64,linux/arm64), so the tag is an OCI index or "
        "Docker manifest list v2 (Schema 1 has no multi-arch form)"),
    # dra-driver-google-tpu v0.2.0
    "sha256:cb143a7e6753fb0b05719dd57c3e6bdf3a1c1c8cba498ce8313a6a155efe9ddc": (
        "kubernetes/k8s.io@411029b1 registry.k8s.io/images/k8s-staging-dra-driver-google/images.yaml maps it to "
        "dra-driver-google-tpu v0.2.0; the tag is made by `docker manifest create` over per-arch images "
        "(kubernetes-sigs/dra-driver-google-tpu@b912410 deployments/container/Makefile), a Docker manifest list v2"),
    # k8s-device-plugin v0.20.0
    "sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312": (
        "NVIDIA/gpu-operator@10ee5b36 (tag v26.7.0) bundle/manifests/gpu-operator-certified.clusterserviceversion"
        ".yaml relatedImages: NVIDIA's certified operator bundle pins v0.20.0 to this multi-arch index (an OCI "
        "index or a Docker manifest list v2; Schema 1 has no multi-arch form)"),
    # vllm-openai v0.11.0
    "sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c": (
        "tinfoilsh/vllm-openai-audio@074bce26 Dockerfile (FROM vllm/vllm-openai:v0.11.0@sha256:014a95f2...), and "
        "public files that record it as the tag's digest on a Kubernetes node (containerd) and Docker Desktop, "
        "with linux/amd64 manifest sha256:d8d39b59... recorded apart: a multi-arch index (OCI index or Docker "
        "manifest list v2; Schema 1 has no multi-arch form)"),
    # dra-driver-google-tpu 0.2.0's own helper images
    "sha256:0404b7f8ce86b25284a844ee4935c8927cd2572c1d6b07d1d2bd944f215fb80d": (
        "kubernetes-sigs/dra-driver-google-tpu@b912410 (v0.2.0) values.yaml pins it for GKE TPU nodes with DRA "
        "(GKE 1.34+, containerd 2.x, which refuses Schema 1)"),
    "sha256:4de2c75a1f363c26c4f74bdd702d313410267c464a059b4fa32ac5d4cf10aba9": (
        "kubernetes-sigs/dra-driver-google-tpu@b912410 (v0.2.0) values.yaml pins it for GKE TPU nodes with DRA "
        "(GKE 1.34+, containerd 2.x, which refuses Schema 1)"),
    "sha256:631a35b6cc0638b3eed328ccea240199043dcfe4bed69c7cfc3d98752faa23fb": (
        "kubernetes-sigs/dra-driver-google-tpu@b912410 (v0.2.0) values.yaml pins it for GKE TPU nodes with DRA "
        "(GKE 1.34+, containerd 2.x, which refuses Schema 1)"),
}

#: References known to be Docker Schema 1 manifests, which containerd 2.0 (GKE 1.33+ nodes) cannot pull:
#: pause 2.0 predates Schema 2; upstream's installer moved off it in container-engine-accelerators@22f1e653
#: (2024-06-11).
SCHEMA1_IMAGES = ("gcr.io/google-containers/pause:2.0", "k8s.gcr.io/pause:2.0")
