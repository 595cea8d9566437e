"""The library facts the pack reads: label and taint keys, machine shapes.

With :mod:`charts` (the drivers' DeviceClass names, from the catalog), the
place the pack reads the component library's facts
(:mod:`gpu_fungibility.wiring_keys`, :mod:`gpu_fungibility.catalog`), so the
keys the pools are built with and the keys the policies check can never differ.
The pack depends on the library as a package (see requirements.txt), never on
files outside its folder.
"""

from __future__ import annotations

from gpu_fungibility import wiring_keys
from gpu_fungibility.clouds.aks import Aks
from gpu_fungibility.clouds.aks.machines import machine_shape as aks_vm_size_shape
from gpu_fungibility.clouds.eks import Eks
from gpu_fungibility.clouds.eks.machines import machine_shape as eks_instance_shape
from gpu_fungibility.clouds.gke.machines import machine_shape as gke_machine_shape
from gpu_fungibility.wiring_keys import *  # noqa: F403  (every label and taint key, by the library's __all__)
from gpu_fungibility.wiring_keys import ON_DEMAND_FALLBACK as ON_DEMAND_FALLBACK_LABEL

#: GKE TPU machine families (v6e, v5e, v5p).
TPU_MACHINE_PREFIXES = ("ct6e-", "ct5lp-", "ct5p-")

#: The name part of the node label marking a deliberate on-demand pool (any prefix is accepted),
#: and the GKE resource label / EKS tag key that marks it too.
ON_DEMAND_FALLBACK = ON_DEMAND_FALLBACK_LABEL.rsplit("/", 1)[-1]

#: EKS AMI types whose nodes run the NVIDIA device plugin as a host service.
EKS_AMIS_WITH_DEVICE_PLUGIN = Eks.AMIS_WITH_DEVICE_PLUGIN
#: How an AKS pool with AKS's managed GPU stack (driver and device plugin) is marked.
AKS_MANAGED_GPU_STACK = Aks.MANAGED_GPU_STACK

__all__ = [*(k for k in wiring_keys.__all__ if k != "ON_DEMAND_FALLBACK"), "EKS_AMIS_WITH_DEVICE_PLUGIN",
           "AKS_MANAGED_GPU_STACK", "aks_vm_size_shape",
           "ON_DEMAND_FALLBACK", "ON_DEMAND_FALLBACK_LABEL",
           "TPU_MACHINE_PREFIXES", "eks_instance_shape", "gke_machine_shape"]
