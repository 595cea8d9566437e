"""How much of a machine a Kubernetes node reports, and how much of that it offers pods.

Two steps, the same on every cloud (GKE, EKS, AKS):

1. **Capacity** (what ``kubectl get node`` shows under ``capacity``): the kernel's MemTotal, which is the
   machine's nominal memory minus what the kernel and firmware keep (page tables, the software IO TLB, ...).
2. **Allocatable**: capacity minus the cloud's ``kube-reserved`` and the kubelet's hard eviction threshold.

The formulas are the clouds' own, each with its source. Where a cloud publishes no formula (EKS's
kernel share) the figure is fitted *below* public measurements, so an estimate errs on the side of a pod
that still schedules. Each cloud's formulas live in its folder (``clouds/<cloud>/capacity.py``), which its
profile's ``capacity`` and ``kube_reserved`` use; the shared parts are here. ``tests/test_node_capacity.py``
checks every formula against the measurements in ``tests/fixtures/node_capacity_measurements.csv``.

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
