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
# renovate: datasource=helm depName=cluster-autoscaler registryUrl=https://kubernetes.github.io/autoscaler
CLUSTER_AUTOSCALER_VERSION = "9.46.6"
CLUSTER_AUTOSCALER_NAMESPACE = "kube-system"

# ---- images

# renovate: datasource=docker
#: vLLM serving images used when a workload names none: pinned tags, never ``latest``.
VLLM_GPU_IMAGE = "vllm/vllm-openai:v0.11.0"
# renovate: datasource=docker
VLLM_TPU_IMAGE = "vllm/vllm-tpu:v0.19.0"

# renovate: datasource=docker depName=registry.k8s.io/autoscaling/cluster-autoscaler
#: The Cluster Autoscaler image per Kubernetes minor version (it must match the cluster's minor).
CLUSTER_AUTOSCALER_IMAGE_TAG_BY_MINOR = {"1.34": "v1.34.0", "1.35": "v1.35.0"}

# renovate: ignore (preloaded on COS GPU nodes, never pulled from a registry)
#: GKE's COS driver installer, preloaded on COS GPU nodes to match their COS build (never pulled).
COS_DRIVER_INSTALLER_IMAGE = "cos-nvidia-installer:fixed"
# renovate: datasource=docker
#: GPU partitioning (MIG) image, pulled, so pinned by digest.
GPU_PARTITION_IMAGE = (
    "gcr.io/gke-release/nvidia-partition-gpu@sha256:c54fd003948fac687c2a93a55ea6e4d47ffbd641278a9191e75e822fe72471c2"
)
# renovate: datasource=docker
PAUSE_IMAGE = "gcr.io/google-containers/pause:2.0"
