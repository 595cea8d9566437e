"""The label and taint keys that route the DRA plugins, and the description of a pool.

Plain facts with no dependencies, so :mod:`gpu_fungibility.clouds` (what each
cloud adds) and :mod:`gpu_fungibility.dra_wiring` (what the library sets) can
both read them.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from .node_selection import NodeTaint

__all__ = [
    "GPU_PRESENT",
    "GPU_DRA",
    "GKE_NO_DEFAULT_DEVICE_PLUGIN",
    "GKE_GPU_DRA_DRIVER",
    "GKE_AUTOSCALER_GPU_DRA",
    "GKE_TPU_DRA_DRIVER",
    "GKE_COMPUTE_CLASS",
    "GKE_ACCELERATOR",
    "GKE_TPU_ACCELERATOR",
    "GKE_TPU_TOPOLOGY",
    "GKE_NODEPOOL",
    "GKE_SPOT",
    "EKS_NODEGROUP",
    "EKS_CAPACITY_TYPE",
    "AKS_AGENTPOOL",
    "AKS_SCALESET_PRIORITY",
    "AKS_ACCELERATOR",
    "ON_DEMAND_FALLBACK",
    "NFD_NVIDIA_PCI",
    "GPU_TAINT_KEY",
    "TPU_TAINT_KEY",
    "FAMILIES",
]

# Labels that route the plugins.
GPU_PRESENT = "nvidia.com/gpu.present"
GPU_DRA = "nvidia.com/gpu.dra"
GKE_NO_DEFAULT_DEVICE_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"
GKE_GPU_DRA_DRIVER = "cloud.google.com/gke-nvidia-gpu-dra-driver"
#: The label the upstream Cluster Autoscaler's GCE provider reads to treat a GPU node as served by DRA (not
#: "resource unready" for lacking nvidia.com/gpu): cloudprovider/gce/dynamicresources.go DraGPULabel at
#: cluster-autoscaler-1.35.2. GKE's own autoscaler is closed source; the pools carry both labels.
GKE_AUTOSCALER_GPU_DRA = "cloud.google.com/gke-gpu-dra-driver"
GKE_TPU_DRA_DRIVER = "cloud.google.com/gke-tpu-dra-driver"
GKE_COMPUTE_CLASS = "cloud.google.com/compute-class"
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
GKE_TPU_ACCELERATOR = "cloud.google.com/gke-tpu-accelerator"
GKE_TPU_TOPOLOGY = "cloud.google.com/gke-tpu-topology"
GKE_NODEPOOL = "cloud.google.com/gke-nodepool"
GKE_SPOT = "cloud.google.com/gke-spot"
EKS_NODEGROUP = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_TYPE = "eks.amazonaws.com/capacityType"
#: AKS labels every node with its agent pool (learn.microsoft.com/azure/aks/use-labels, "reserved labels").
AKS_AGENTPOOL = "kubernetes.azure.com/agentpool"
#: AKS labels and taints Spot nodes ``kubernetes.azure.com/scalesetpriority=spot`` (:NoSchedule)
#: (learn.microsoft.com/azure/aks/spot-node-pool).
AKS_SCALESET_PRIORITY = "kubernetes.azure.com/scalesetpriority"
#: AKS labels NVIDIA GPU nodes ``kubernetes.azure.com/accelerator=nvidia`` (Azure/AgentBaker node labels).
AKS_ACCELERATOR = "kubernetes.azure.com/accelerator"
ON_DEMAND_FALLBACK = "gpu-fungibility/on-demand-fallback"  # marks a deliberate on-demand pool
#: NFD's label for a node with an NVIDIA PCI device.
NFD_NVIDIA_PCI = "feature.node.kubernetes.io/pci-10de.present"

GPU_TAINT_KEY = "nvidia.com/gpu"
TPU_TAINT_KEY = "google.com/tpu"

FAMILIES = ("gpu", "tpu")


@dataclass(frozen=True)
class PoolSpec:
    """What the wiring needs to know about one accelerator pool.

    ``name`` is the pool's name as the cloud knows it (the GKE node pool or
    EKS node group name). ``labels`` and ``taints`` are the caller's own,
    applied on top of the library's.
    """

    name: str
    family: str  # gpu | tpu
    accelerator_type: str
    accelerator_count: int = 1
    dra: bool = True
    spot: bool = True
    compute_class: str | None = None
    on_demand_fallback: bool = False
    machine_type: str | None = None
    topology: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[NodeTaint, ...] = ()
