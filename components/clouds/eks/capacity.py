"""How much of an EKS node's instance is capacity, and how much of that the AL2023 node reserves (the
formulas of :mod:`gpu_fungibility.node_capacity`'s two steps, each with its source).

EC2 publishes no kernel model: that share is fitted *below* public measurements, so an estimate errs on the
side of a pod that still schedules. ``tests/test_node_capacity.py`` checks both against the measurements in
``tests/fixtures/node_capacity_measurements.csv``. Memory in MiB.
"""

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


def kernel_reserved_mib(nominal_mib: float) -> float:
    return nominal_mib * (1 - EKS_CAPACITY_RATIO) + EKS_KERNEL_FIXED_MIB


def kube_reserved_mib(max_pods: int) -> int:
    return EKS_RESERVED_MIB_PER_POD * max_pods + EKS_RESERVED_BASE_MIB
