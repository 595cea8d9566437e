"""AKS's GPU VM sizes.

Azure's VM size pages, MicrosoftDocs/azure-compute-docs articles/virtual-machines/sizes/gpu-accelerated/
nca100v4-, ncadsh100v5-, ndh100v5-, nvadsa10v5- and ncast4v3-series.md, whose memory is GiB as the Resource
SKUs API's ``MemoryGB`` capability. tests/test_aks_catalog.py checks the sizes against Azure's size tables and
Resource SKUs (tests/fixtures/aks_vm_sizes.json, recorded by tools/record_aks_sizes.py with each source's
repository, commit and path).
"""

from ...catalog import MachineShape, shapes

#: Pods per AKS node: the library sets ``maxPods`` on every AKS pool to this, and AKS's kube-reserved
#: memory grows with it (learn.microsoft.com/azure/aks/node-resource-reservations).
MAX_PODS = 110

#: GPU VM sizes on AKS (the sizes' pages cited above; fractional-GPU NVadsA10 v5 sizes left out:
#: they expose a vGPU slice, not a whole device a DRA claim can count). Every figure is checked against the
#: pages and Azure's Resource SKUs as tools/record_aks_sizes.py records them (tests/fixtures/aks_vm_sizes.json).
MACHINES: dict[str, MachineShape] = shapes(
    MachineShape("Standard_NC24ads_A100_v4", "nvidia-a100-80gb-pcie", 1, "aks", vcpus=24, memory_gib=220,
                 max_pods=MAX_PODS),
    MachineShape("Standard_NC48ads_A100_v4", "nvidia-a100-80gb-pcie", 2, "aks", vcpus=48, memory_gib=440,
                 max_pods=MAX_PODS),
    MachineShape("Standard_NC96ads_A100_v4", "nvidia-a100-80gb-pcie", 4, "aks", vcpus=96, memory_gib=880,
                 max_pods=MAX_PODS),
    MachineShape("Standard_NC40ads_H100_v5", "nvidia-h100-nvl", 1, "aks", vcpus=40, memory_gib=320,
                 max_pods=MAX_PODS),
    MachineShape("Standard_NC80adis_H100_v5", "nvidia-h100-nvl", 2, "aks", vcpus=80, memory_gib=640,
                 max_pods=MAX_PODS),
    MachineShape("Standard_ND96isr_H100_v5", "nvidia-h100-80gb", 8, "aks", vcpus=96, memory_gib=1900,
                 max_pods=MAX_PODS),
    MachineShape("Standard_NV36ads_A10_v5", "nvidia-a10", 1, "aks", vcpus=36, memory_gib=440, max_pods=MAX_PODS),
    MachineShape("Standard_NV36adms_A10_v5", "nvidia-a10", 1, "aks", vcpus=36, memory_gib=880,
                 max_pods=MAX_PODS),
    MachineShape("Standard_NV72ads_A10_v5", "nvidia-a10", 2, "aks", vcpus=72, memory_gib=880, max_pods=MAX_PODS),
    MachineShape("Standard_NC4as_T4_v3", "nvidia-tesla-t4", 1, "aks", vcpus=4, memory_gib=28, max_pods=MAX_PODS),
    MachineShape("Standard_NC8as_T4_v3", "nvidia-tesla-t4", 1, "aks", vcpus=8, memory_gib=56, max_pods=MAX_PODS),
    MachineShape("Standard_NC16as_T4_v3", "nvidia-tesla-t4", 1, "aks", vcpus=16, memory_gib=110,
                 max_pods=MAX_PODS),
    MachineShape("Standard_NC64as_T4_v3", "nvidia-tesla-t4", 4, "aks", vcpus=64, memory_gib=440,
                 max_pods=MAX_PODS),
)


def machine_shape(vm_size: str) -> MachineShape | None:
    return MACHINES.get(vm_size)
