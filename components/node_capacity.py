"""How much of a machine a Kubernetes node reports, and how much of that it offers pods.

Two steps, the same on every cloud (GKE, EKS, AKS):

1. **Capacity** (what ``kubectl get node`` shows under ``capacity``): the kernel's MemTotal, which is the
   machine's nominal memory minus what the kernel and firmware keep (page tables, the software IO TLB, ...).
2. **Allocatable**: capacity minus the cloud's ``kube-reserved`` and the kubelet's hard eviction threshold.

The formulas below are the clouds' own, each with its source. Where a cloud publishes no formula (EKS's
kernel share) the figure is fitted *below* public measurements, so an estimate errs on the side of a pod
that still schedules. ``tests/test_node_capacity.py`` checks every formula against the measurements in
``tests/fixtures/node_capacity_measurements.csv``.

All memory figures are MiB, CPU figures millicores.
"""

from collections.abc import Sequence

MIB_PER_GIB = 1024

#: The kubelet's hard eviction threshold ``memory.available`` on every cloud, subtracted from capacity:
#: kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/gce_reserved.go (``defaultKubeletEvictionHardMemory``,
#: commit 0a2d05b6); awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go (``evictionHard``, tag v20260724);
#: learn.microsoft.com/azure/aks/node-resource-reservations ("AKS 1.29 and later": ``memory.available<100Mi``).
EVICTION_HARD_MIB = 100


def tiered(amount: float, tiers: Sequence[tuple[float | None, float]]) -> float:
    """Sum of ``rate x part`` over consecutive tiers of ``amount`` (size ``None``: the rest)."""
    total, left = 0.0, amount
    for size, rate in tiers:
        part = left if size is None else min(left, size)
        total += part * rate
        left -= part
        if left <= 0:
            break
    return total


def cpu_reserved_millicores(vcpus: int) -> int:
    """kube-reserved CPU on GKE and EKS: 6% of the first core, 1% of the second, 0.5% of the next two,
    0.25% of every core above four.

    GKE: cluster-autoscaler/cloudprovider/gce/reserved.go ``cpuReservedMillicores`` (kubernetes/autoscaler
    commit 729ba955) and cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes. EKS:
    awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go ``getCPUMillicoresToReserve`` (tag v20260724).
    Measured: 2i2c's n2-highmem-32 and r5.16xlarge allocatable CPU (31.85, 63.77) match to the millicore.
    """
    return int(tiered(vcpus * 1000, ((1000, 0.06), (1000, 0.01), (2000, 0.005), (None, 0.0025))))


# ---- GKE ---------------------------------------------------------------------------------------

#: kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/gce_reserved.go ``CalculateKernelReserved``
#: (commit 0a2d05b6, at main 55c37cd5 of 2026-08-22), which templates.go ``BuildCapacity`` subtracts from the
#: machine's memory (``memTotal := mem - CalculateKernelReserved(...)``). For COS (GKE's node image):
GCE_KERNEL_RATIO = 64  # physical / 64: the kernel's page structures
GCE_KERNEL_FIXED_MIB = 16
GCE_SWIOTLB_MIB = 64  # only above 3 GiB of memory
GCE_SWIOTLB_THRESHOLD_MIB = 3 * MIB_PER_GIB
GCE_LOW_MEMORY_OFFSET_MIB = 8  # only at or below 8 GiB
GCE_LOW_MEMORY_THRESHOLD_MIB = 8 * MIB_PER_GIB
GCE_CORRECTION_RATE = 0.00175  # COS's statistical correction, capped:
GCE_CORRECTION_MAX_MIB = 248
#: The template model overestimates MemTotal by up to 20 MiB on 2i2c's small n1/n2 measurements (and
#: underestimates it by up to 223 MiB on large ones); this margin keeps the estimate below every
#: measurement. The library's own figure, not the autoscaler's.
GKE_KERNEL_MARGIN_MIB = 64

#: GKE's kube-reserved memory: 255 MiB up to 1000 MiB, else 25% of the first 4000 MiB, 20% of the next
#: 4000, 10% of the next 8000, 6% of the next 112000 and 2% of the rest, of the machine's *nominal*
#: memory. The tiers are GB-as-1000-MiB, as the autoscaler notes ("duplicating an upstream bug"):
#: cluster-autoscaler/cloudprovider/gce/reserved.go ``memoryReservedMiB`` (kubernetes/autoscaler commit
#: 729ba955); cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes. 2i2c's GKE measurements
#: (capacity - allocatable) equal these tiers plus the eviction threshold to the MiB.
GKE_MEMORY_TIERS: tuple[tuple[float | None, float], ...] = (
    (4000, 0.25), (4000, 0.20), (8000, 0.10), (112000, 0.06), (None, 0.02))
GKE_SMALL_MACHINE_MIB = 1000
GKE_SMALL_MACHINE_RESERVED_MIB = 255


def gke_kernel_reserved_mib(nominal_mib: float) -> float:
    """The kernel's share of a COS node's memory (the autoscaler's estimate plus the library's margin)."""
    reserved = nominal_mib / GCE_KERNEL_RATIO + GCE_KERNEL_FIXED_MIB
    if nominal_mib > GCE_SWIOTLB_THRESHOLD_MIB:
        reserved += GCE_SWIOTLB_MIB
    if nominal_mib <= GCE_LOW_MEMORY_THRESHOLD_MIB:
        reserved += GCE_LOW_MEMORY_OFFSET_MIB
    reserved += min(GCE_CORRECTION_RATE * nominal_mib, GCE_CORRECTION_MAX_MIB)
    return reserved + GKE_KERNEL_MARGIN_MIB


def gke_kube_reserved_mib(nominal_mib: float) -> int:
    """GKE's kube-reserved memory for a machine of this nominal memory."""
    if nominal_mib <= GKE_SMALL_MACHINE_MIB:
        return GKE_SMALL_MACHINE_RESERVED_MIB if nominal_mib > 0 else 0
    return int(tiered(int(nominal_mib), GKE_MEMORY_TIERS))


# ---- EKS ---------------------------------------------------------------------------------------

#: EC2 publishes no kernel model and the Cluster Autoscaler has none for AWS. Measured capacity/nominal on
#: EKS (2i2c-org/infrastructure deployer/commands/generate/resource_allocation/instance_capacities.yaml,
#: commit 026837dd, the lowest capacity seen per type): 0.9326 (m5.large, 8 GiB) rising to 0.9734
#: (r5.16xlarge, 512 GiB): a share proportional to memory plus a fixed part. The kernel's share is taken
#: as 2.7% of nominal (the largest machine's measured ratio, rounded down) plus 420 MiB (the smallest
#: fixed part that keeps every measured machine at or below its measurement).
EKS_CAPACITY_RATIO = 0.973
EKS_KERNEL_FIXED_MIB = 420

#: awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go ``getMemoryMebibytesToReserve`` (tag v20260724):
#: kube-reserved memory = 11 MiB x maxPods + 255 MiB, subtracted from capacity.
EKS_RESERVED_MIB_PER_POD = 11
EKS_RESERVED_BASE_MIB = 255


def eks_kernel_reserved_mib(nominal_mib: float) -> float:
    return nominal_mib * (1 - EKS_CAPACITY_RATIO) + EKS_KERNEL_FIXED_MIB


def eks_kube_reserved_mib(max_pods: int) -> int:
    return EKS_RESERVED_MIB_PER_POD * max_pods + EKS_RESERVED_BASE_MIB


# ---- AKS ---------------------------------------------------------------------------------------

#: kube-reserved CPU by cores on the host (learn.microsoft.com/azure/aks/node-resource-reservations,
#: "CPU reservations"); between the listed sizes the next larger size's figure is taken, above 64 cores
#: the last step (10 millicores a core) is extended.
AKS_CPU_RESERVED: tuple[tuple[int, int], ...] = (
    (1, 60), (2, 100), (4, 140), (8, 180), (16, 260), (32, 420), (64, 740))
AKS_CPU_RESERVED_PER_CORE_ABOVE = 10

#: The kernel's share of a VM's memory (MemTotal below nominal): struct page (64 bytes per 4 KiB page,
#: 1/64) plus 128 MiB, which stays below the capacity AKS nodes report (DS1 v2 3.5 GiB -> 3500452Ki,
#: DS2 v2 7 GiB -> 7113660Ki; tests/fixtures/node_capacity_measurements.csv): the cautious side.
AKS_KERNEL_RATIO = 64
AKS_KERNEL_FIXED_MIB = 128

#: learn.microsoft.com/azure/aks/node-resource-reservations, "AKS 1.29 and later": kube-reserved memory is
#: the lesser of 20 MB x maxPods + 50 MB and 25% of the VM's memory. "MB" is read as MiB and the 25% taken
#: of the nominal memory: both the larger reading, so allocatable errs low.
AKS_RESERVED_MIB_PER_POD = 20
AKS_RESERVED_BASE_MIB = 50
AKS_RESERVED_MAX_RATIO = 0.25


def aks_cpu_reserved_millicores(vcpus: int) -> int:
    """AKS's kube-reserved CPU for a VM of this many cores."""
    for cores, millicores in AKS_CPU_RESERVED:
        if vcpus <= cores:
            return millicores
    last_cores, last = AKS_CPU_RESERVED[-1]
    return last + AKS_CPU_RESERVED_PER_CORE_ABOVE * (vcpus - last_cores)


def aks_kernel_reserved_mib(nominal_mib: float) -> float:
    return nominal_mib / AKS_KERNEL_RATIO + AKS_KERNEL_FIXED_MIB


def aks_kube_reserved_mib(nominal_mib: float, max_pods: int) -> int:
    """AKS's kube-reserved memory (1.29 and later) for a VM of this nominal memory and maxPods."""
    return int(min(AKS_RESERVED_MIB_PER_POD * max_pods + AKS_RESERVED_BASE_MIB,
                   AKS_RESERVED_MAX_RATIO * nominal_mib))
