"""How much of an AKS node's VM is capacity, and how much of that AKS reserves (the formulas of
:mod:`gpu_fungibility.node_capacity`'s two steps, each with its source).

``tests/test_node_capacity.py`` checks them against the measurements in
``tests/fixtures/node_capacity_measurements.csv``. Memory in MiB, CPU in millicores.
"""

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


def cpu_reserved_millicores(vcpus: int) -> int:
    """AKS's kube-reserved CPU for a VM of this many cores."""
    for cores, millicores in AKS_CPU_RESERVED:
        if vcpus <= cores:
            return millicores
    last_cores, last = AKS_CPU_RESERVED[-1]
    return last + AKS_CPU_RESERVED_PER_CORE_ABOVE * (vcpus - last_cores)


def kernel_reserved_mib(nominal_mib: float) -> float:
    return nominal_mib / AKS_KERNEL_RATIO + AKS_KERNEL_FIXED_MIB


def kube_reserved_mib(nominal_mib: float, max_pods: int) -> int:
    """AKS's kube-reserved memory (1.29 and later) for a VM of this nominal memory and maxPods."""
    return int(min(AKS_RESERVED_MIB_PER_POD * max_pods + AKS_RESERVED_BASE_MIB,
                   AKS_RESERVED_MAX_RATIO * nominal_mib))
