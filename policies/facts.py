"""The project facts the pack reads: label and taint keys, machine shapes.

With :mod:`policies.charts` (the drivers' DeviceClass names, from the
catalog), the only place the pack imports the project's own modules
(:mod:`components.dra_wiring`, :mod:`components.catalog`), so the keys the pools
are built with and the keys the policies check can never differ.
"""

from __future__ import annotations

from components.catalog import eks_instance_shape, gke_machine_shape
from components.dra_wiring import (
    EKS_CAPACITY_TYPE,
    EKS_NODEGROUP,
    GKE_ACCELERATOR,
    GKE_COMPUTE_CLASS,
    GKE_GPU_DRA_DRIVER,
    GKE_NO_DEFAULT_DEVICE_PLUGIN,
    GKE_NODEPOOL,
    GKE_SPOT,
    GKE_TPU_ACCELERATOR,
    GKE_TPU_DRA_DRIVER,
    GKE_TPU_TOPOLOGY,
    GPU_DRA,
    GPU_PRESENT,
    GPU_TAINT_KEY,
    TPU_TAINT_KEY,
)
from components.dra_wiring import ON_DEMAND_FALLBACK as ON_DEMAND_FALLBACK_LABEL
from policies.charts import NFD_NVIDIA_PCI

#: GKE TPU machine families (v6e, v5e, v5p).
TPU_MACHINE_PREFIXES = ("ct6e-", "ct5lp-", "ct5p-")

#: The name part of the node label marking a deliberate on-demand pool (any prefix is accepted),
#: and the GKE resource label / EKS tag key that marks it too.
ON_DEMAND_FALLBACK = ON_DEMAND_FALLBACK_LABEL.rsplit("/", 1)[-1]

#: EKS AMI types whose nodes run the NVIDIA device plugin as a host service.
EKS_AMIS_WITH_DEVICE_PLUGIN = ("BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA")

__all__ = [
    "EKS_AMIS_WITH_DEVICE_PLUGIN", "EKS_CAPACITY_TYPE", "EKS_NODEGROUP", "GKE_ACCELERATOR", "GKE_COMPUTE_CLASS",
    "GKE_GPU_DRA_DRIVER", "GKE_NODEPOOL", "GKE_NO_DEFAULT_DEVICE_PLUGIN", "GKE_SPOT", "GKE_TPU_ACCELERATOR",
    "GKE_TPU_DRA_DRIVER", "GKE_TPU_TOPOLOGY", "GPU_DRA", "GPU_PRESENT", "GPU_TAINT_KEY", "NFD_NVIDIA_PCI",
    "ON_DEMAND_FALLBACK", "ON_DEMAND_FALLBACK_LABEL", "TPU_MACHINE_PREFIXES", "TPU_TAINT_KEY", "eks_instance_shape", "gke_machine_shape",
]
