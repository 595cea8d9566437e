"""EKS's GPU instance types (EC2), with the pods the VPC CNI lets each node run.

Public specs: aws.amazon.com/ec2/instance-types/g5, /g6, /g6e, /g4, /p4, /p5, /p6. tests/test_machine_catalog.py
checks every shape against the DescribeInstanceTypes data moto ships (vCPUs, memory, GPU count and model), and
``max_pods`` against the ENI figures AL2023's nodeadm uses (tests/fixtures/eks_max_pods.csv).
"""

from ...catalog import MachineShape, shapes

MACHINES: dict[str, MachineShape] = shapes(
    MachineShape("g4dn.xlarge", "nvidia-tesla-t4", 1, "eks", vcpus=4, memory_gib=16, max_pods=29),
    MachineShape("g4dn.2xlarge", "nvidia-tesla-t4", 1, "eks", vcpus=8, memory_gib=32, max_pods=29),
    MachineShape("g4dn.12xlarge", "nvidia-tesla-t4", 4, "eks", vcpus=48, memory_gib=192, max_pods=234),
    MachineShape("g5.xlarge", "nvidia-a10g", 1, "eks", vcpus=4, memory_gib=16, max_pods=58),
    MachineShape("g5.2xlarge", "nvidia-a10g", 1, "eks", vcpus=8, memory_gib=32, max_pods=58),
    MachineShape("g5.4xlarge", "nvidia-a10g", 1, "eks", vcpus=16, memory_gib=64, max_pods=234),
    MachineShape("g5.12xlarge", "nvidia-a10g", 4, "eks", vcpus=48, memory_gib=192, max_pods=737),
    MachineShape("g5.24xlarge", "nvidia-a10g", 4, "eks", vcpus=96, memory_gib=384, max_pods=737),
    MachineShape("g5.48xlarge", "nvidia-a10g", 8, "eks", vcpus=192, memory_gib=768, max_pods=345),
    MachineShape("g6.xlarge", "nvidia-l4", 1, "eks", vcpus=4, memory_gib=16, max_pods=58),
    MachineShape("g6.2xlarge", "nvidia-l4", 1, "eks", vcpus=8, memory_gib=32, max_pods=58),
    MachineShape("g6.12xlarge", "nvidia-l4", 4, "eks", vcpus=48, memory_gib=192, max_pods=234),
    MachineShape("g6.48xlarge", "nvidia-l4", 8, "eks", vcpus=192, memory_gib=768, max_pods=737),
    MachineShape("g6e.xlarge", "nvidia-l40s", 1, "eks", vcpus=4, memory_gib=32, max_pods=58),
    MachineShape("g6e.2xlarge", "nvidia-l40s", 1, "eks", vcpus=8, memory_gib=64, max_pods=58),
    MachineShape("g6e.12xlarge", "nvidia-l40s", 4, "eks", vcpus=48, memory_gib=384, max_pods=292),
    MachineShape("g6e.48xlarge", "nvidia-l40s", 8, "eks", vcpus=192, memory_gib=1536, max_pods=492),
    MachineShape("p4d.24xlarge", "nvidia-tesla-a100", 8, "eks", vcpus=96, memory_gib=1152, max_pods=737),
    MachineShape("p4de.24xlarge", "nvidia-a100-80gb", 8, "eks", vcpus=96, memory_gib=1152, max_pods=737),
    MachineShape("p5.48xlarge", "nvidia-h100-80gb", 8, "eks", vcpus=192, memory_gib=2048, max_pods=100),
    MachineShape("p5e.48xlarge", "nvidia-h200-141gb", 8, "eks", vcpus=192, memory_gib=2048, max_pods=100),
    MachineShape("p6-b200.48xlarge", "nvidia-b200", 8, "eks", vcpus=192, memory_gib=2048, max_pods=198),
)


def machine_shape(instance_type: str) -> MachineShape | None:
    return MACHINES.get(instance_type)
