"""How much of a GKE node's machine is capacity, and how much of that GKE reserves (the formulas of
:mod:`gpu_fungibility.node_capacity`'s two steps, each with its source).

``tests/test_node_capacity.py`` checks them against the measurements in
``tests/fixtures/node_capacity_measurements.csv``. Memory in MiB.
"""

from ...node_capacity import MIB_PER_GIB, tiered

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


def kernel_reserved_mib(nominal_mib: float) -> float:
    """The kernel's share of a COS node's memory (the autoscaler's estimate plus the library's margin)."""
    reserved = nominal_mib / GCE_KERNEL_RATIO + GCE_KERNEL_FIXED_MIB
    if nominal_mib > GCE_SWIOTLB_THRESHOLD_MIB:
        reserved += GCE_SWIOTLB_MIB
    if nominal_mib <= GCE_LOW_MEMORY_THRESHOLD_MIB:
        reserved += GCE_LOW_MEMORY_OFFSET_MIB
    reserved += min(GCE_CORRECTION_RATE * nominal_mib, GCE_CORRECTION_MAX_MIB)
    return reserved + GKE_KERNEL_MARGIN_MIB


def kube_reserved_mib(nominal_mib: float) -> int:
    """GKE's kube-reserved memory for a machine of this nominal memory."""
    if nominal_mib <= GKE_SMALL_MACHINE_MIB:
        return GKE_SMALL_MACHINE_RESERVED_MIB if nominal_mib > 0 else 0
    return int(tiered(int(nominal_mib), GKE_MEMORY_TIERS))
