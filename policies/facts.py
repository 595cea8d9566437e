"""The library facts the pack reads: label and taint keys, machine shapes.

With :mod:`charts` (the drivers' DeviceClass names, from the catalog), the
place the pack reads the component library's facts
(:mod:`gpu_fungibility.wiring_keys`, :mod:`gpu_fungibility.catalog`), so the
keys the pools are built with and the keys the policies check can never differ.
The pack depends on the library as a package (see requirements.txt), never on
files outside its folder.
"""

from __future__ import annotations

from gpu_fungibility.catalog import eks_instance_shape, gke_machine_shape
from gpu_fungibility.clouds import Eks
from gpu_fungibility.wiring_keys import (
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
    NFD_NVIDIA_PCI,
    TPU_TAINT_KEY,
)
from gpu_fungibility.wiring_keys import ON_DEMAND_FALLBACK as ON_DEMAND_FALLBACK_LABEL

#: GKE TPU machine families (v6e, v5e, v5p).
TPU_MACHINE_PREFIXES = ("ct6e-", "ct5lp-", "ct5p-")

#: The name part of the node label marking a deliberate on-demand pool (any prefix is accepted),
#: and the GKE resource label / EKS tag key that marks it too.
ON_DEMAND_FALLBACK = ON_DEMAND_FALLBACK_LABEL.rsplit("/", 1)[-1]

#: EKS AMI types whose nodes run the NVIDIA device plugin as a host service.
EKS_AMIS_WITH_DEVICE_PLUGIN = Eks.AMIS_WITH_DEVICE_PLUGIN

__all__ = [
    "EKS_AMIS_WITH_DEVICE_PLUGIN", "EKS_CAPACITY_TYPE", "EKS_NODEGROUP", "GKE_ACCELERATOR", "GKE_COMPUTE_CLASS",
    "GKE_GPU_DRA_DRIVER", "GKE_NODEPOOL", "GKE_NO_DEFAULT_DEVICE_PLUGIN", "GKE_SPOT", "GKE_TPU_ACCELERATOR",
    "GKE_TPU_DRA_DRIVER", "GKE_TPU_TOPOLOGY", "GPU_DRA", "GPU_PRESENT", "GPU_TAINT_KEY", "NFD_NVIDIA_PCI",
    "ON_DEMAND_FALLBACK", "ON_DEMAND_FALLBACK_LABEL", "TPU_MACHINE_PREFIXES", "TPU_TAINT_KEY", "eks_instance_shape", "gke_machine_shape",
]
