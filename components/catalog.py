"""The accelerator catalog the project owns.

Every accelerator `type` a stack may name is looked up here; unknown types are
configuration errors. GPU entries record what the NVIDIA DRA driver publishes in
its ResourceSlices (``productName``, ``architecture``, ``brand``,
``cudaComputeCapability`` and the NVML total memory, which is *not* the
marketing figure: an H100 80GB publishes 81559Mi). Machine/instance shapes
record how many devices each machine carries, so a pool's ``accelerator.count``
can be checked, and the simulator can build nodes, and the vCPUs and memory
the cloud sells with it, so serving pods can be sized to fit (public specs:
cloud.google.com/compute/docs/accelerator-optimized-machines,
cloud.google.com/compute/docs/general-purpose-machines#n1_machines,
cloud.google.com/tpu/docs/v6e, /v5e and /v5p, aws.amazon.com/ec2/instance-types/g5,
/g6, /g6e, /g4, /p4, /p5, /p6; Compute Engine's "GB" of memory is GiB; Azure's VM size
pages, MicrosoftDocs/azure-compute-docs articles/virtual-machines/sizes/gpu-accelerated/
nca100v4-, ncadsh100v5-, ndh100v5-, nvadsa10v5- and ncast4v3-series.md, whose memory is GiB
as the Resource SKUs API's ``MemoryGB`` capability).

tests/test_machine_catalog.py checks every shape against real data: GCE against a recorded slice of
``gcloud compute machine-types list`` (tests/fixtures/gce_machine_types.csv), EC2 against the
DescribeInstanceTypes data moto ships (vCPUs, memory, GPU count and model), EKS ``max_pods`` against
the ENI figures AL2023's nodeadm uses (tests/fixtures/eks_max_pods.csv); tests/test_aks_catalog.py
checks the AKS sizes against Azure's size tables and Resource SKUs (tests/fixtures/aks_vm_sizes.json,
recorded by tools/record_aks_sizes.py with each source's repository, commit and path).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Family = Literal["gpu", "tpu"]


@dataclass(frozen=True)
class GpuModel:
    """One NVIDIA GPU model, as the DRA driver describes it."""

    type: str  # accelerator type name used in stack config (GKE's names where GKE has it)
    product_name: str  # NVML product name, the driver's `productName` attribute
    memory_gib: int  # marketed memory
    published_memory_mib: int  # NVML total memory, the driver's `memory` capacity
    architecture: str
    cuda_compute_capability: str  # semver, as the driver publishes it
    brand: str = "Nvidia"
    mig_profiles: tuple[str, ...] = ()  # GPU instance profiles (components/mig_geometry.py has their figures)
    clouds: tuple[str, ...] = ("gke", "eks")

    family: Family = field(default="gpu", init=False)


#: Clouds that offer GKE's and EKS's models and Azure's too (NCasT4_v3, ND H100 v5).
ALL_CLOUDS = ("gke", "eks", "aks")


@dataclass(frozen=True)
class TpuModel:
    """One TPU generation, as GKE names it."""

    type: str  # GKE accelerator label value, e.g. tpu-v6e-slice
    generation: str  # v5e, v5p, v6e
    hbm_gib_per_chip: int
    clouds: tuple[str, ...] = ("gke",)

    family: Family = field(default="tpu", init=False)


@dataclass(frozen=True)
class MachineShape:
    """A machine (GKE machine type or EC2 instance type) with fixed accelerators."""

    name: str
    accelerator: str  # catalog type
    count: int
    cloud: Literal["gke", "eks", "aks"]
    topology: str | None = None  # TPU single-host topology
    vcpus: int = 0
    memory_gib: float = 0.0
    #: EKS: the pods the VPC CNI lets a node run (ENIs x (IPv4 per ENI - 1) + 2), which AL2023's
    #: nodeadm uses for kube-reserved memory (awslabs/amazon-eks-ami nodeadm/internal/kubelet/
    #: instance-info.jsonl, tag v20260724; formerly templates/shared/runtime/eni-max-pods.txt).
    max_pods: int | None = None


@dataclass(frozen=True)
class HostShape:
    """What a machine sells besides its accelerators: vCPUs and memory (GiB)."""

    name: str
    vcpus: int
    memory_gib: float
    max_pods: int | None = None


#: DeviceClasses the DRA drivers' charts create (the names a stack must not reuse).
NVIDIA_DRIVER_DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com")
NVIDIA_COMPUTE_DOMAIN_DEVICE_CLASSES = ("compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com")
TPU_DRIVER_DEVICE_CLASSES = ("tpu.google.com",)
DRIVER_DEVICE_CLASSES = (*NVIDIA_DRIVER_DEVICE_CLASSES, *NVIDIA_COMPUTE_DOMAIN_DEVICE_CLASSES,
                         *TPU_DRIVER_DEVICE_CLASSES)

GPUS: dict[str, GpuModel] = {
    g.type: g
    for g in (
        GpuModel("nvidia-tesla-t4", "Tesla T4", 16, 15360, "Turing", "7.5.0", brand="Nvidia", clouds=ALL_CLOUDS),
        GpuModel("nvidia-l4", "NVIDIA L4", 24, 23034, "Ada Lovelace", "8.9.0"),
        # NVML reports the A10G's brand as NVML_BRAND_NVIDIA_RTX (NVIDIA/k8s-device-plugin#344), which go-nvlib's
        # GetBrandAsString (pkg/nvlib/device/device.go), the DRA driver's source of the attribute, names NvidiaRTX.
        GpuModel("nvidia-a10g", "NVIDIA A10G", 24, 23028, "Ampere", "8.6.0", brand="NvidiaRTX", clouds=("eks",)),
        GpuModel("nvidia-l40s", "NVIDIA L40S", 48, 46068, "Ada Lovelace", "8.9.0", clouds=("eks",)),
        GpuModel(
            "nvidia-tesla-a100",
            "NVIDIA A100-SXM4-40GB",
            40,
            40960,
            "Ampere",
            "8.0.0",
            mig_profiles=("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
        ),
        GpuModel(
            "nvidia-a100-80gb",
            "NVIDIA A100-SXM4-80GB",
            80,
            81920,
            "Ampere",
            "8.0.0",
            mig_profiles=("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
        ),
        GpuModel(
            "nvidia-h100-80gb",
            "NVIDIA H100 80GB HBM3",
            80,
            81559,
            "Hopper",
            "9.0.0",
            mig_profiles=("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
            clouds=ALL_CLOUDS,
        ),
        # Azure's PCIe and NVL parts (NC A100 v4 "Nvidia PCIe A100 GPU (80GB)", NCads H100 v5 "Nvidia PCIe
        # H100 GPU (94GB)", NVadsA10 v5 "Nvidia A10 GPU (24GB)"): NVML names them apart from the SXM parts,
        # so they are their own types and a claim selector on productName tells them apart. The NVML product
        # names and totals are NVIDIA's for these boards; not checked against a live AKS node here.
        GpuModel(
            "nvidia-a100-80gb-pcie",
            "NVIDIA A100 80GB PCIe",
            80,
            81920,
            "Ampere",
            "8.0.0",
            mig_profiles=("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
            clouds=("aks",),
        ),
        GpuModel("nvidia-h100-nvl", "NVIDIA H100 NVL", 94, 95830, "Hopper", "9.0.0",
                 mig_profiles=("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb",
                               "7g.94gb"), clouds=("aks",)),
        GpuModel("nvidia-a10", "NVIDIA A10", 24, 23028, "Ampere", "8.6.0", clouds=("aks",)),
        GpuModel(
            "nvidia-h200-141gb",
            "NVIDIA H200",
            141,
            143771,
            "Hopper",
            "9.0.0",
            mig_profiles=("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
        ),
        GpuModel("nvidia-b200", "NVIDIA B200", 180, 183359, "Blackwell", "10.0.0"),
    )
}

TPUS: dict[str, TpuModel] = {
    t.type: t
    for t in (
        TpuModel("tpu-v5-lite-podslice", "v5e", 16),
        TpuModel("tpu-v5p-slice", "v5p", 95),
        TpuModel("tpu-v6e-slice", "v6e", 32),
    )
}


def _shapes(*shapes: MachineShape) -> dict[str, MachineShape]:
    return {s.name: s for s in shapes}


GKE_MACHINES: dict[str, MachineShape] = _shapes(
    MachineShape("a2-highgpu-1g", "nvidia-tesla-a100", 1, "gke", vcpus=12, memory_gib=85),
    MachineShape("a2-highgpu-2g", "nvidia-tesla-a100", 2, "gke", vcpus=24, memory_gib=170),
    MachineShape("a2-highgpu-4g", "nvidia-tesla-a100", 4, "gke", vcpus=48, memory_gib=340),
    MachineShape("a2-highgpu-8g", "nvidia-tesla-a100", 8, "gke", vcpus=96, memory_gib=680),
    MachineShape("a2-megagpu-16g", "nvidia-tesla-a100", 16, "gke", vcpus=96, memory_gib=1360),
    MachineShape("a2-ultragpu-1g", "nvidia-a100-80gb", 1, "gke", vcpus=12, memory_gib=170),
    MachineShape("a2-ultragpu-2g", "nvidia-a100-80gb", 2, "gke", vcpus=24, memory_gib=340),
    MachineShape("a2-ultragpu-4g", "nvidia-a100-80gb", 4, "gke", vcpus=48, memory_gib=680),
    MachineShape("a2-ultragpu-8g", "nvidia-a100-80gb", 8, "gke", vcpus=96, memory_gib=1360),
    MachineShape("a3-highgpu-1g", "nvidia-h100-80gb", 1, "gke", vcpus=26, memory_gib=234),
    MachineShape("a3-highgpu-2g", "nvidia-h100-80gb", 2, "gke", vcpus=52, memory_gib=468),
    MachineShape("a3-highgpu-4g", "nvidia-h100-80gb", 4, "gke", vcpus=104, memory_gib=936),
    MachineShape("a3-highgpu-8g", "nvidia-h100-80gb", 8, "gke", vcpus=208, memory_gib=1872),
    MachineShape("a3-ultragpu-8g", "nvidia-h200-141gb", 8, "gke", vcpus=224, memory_gib=2952),
    MachineShape("a4-highgpu-8g", "nvidia-b200", 8, "gke", vcpus=224, memory_gib=3968),
    MachineShape("g2-standard-4", "nvidia-l4", 1, "gke", vcpus=4, memory_gib=16),
    MachineShape("g2-standard-8", "nvidia-l4", 1, "gke", vcpus=8, memory_gib=32),
    MachineShape("g2-standard-12", "nvidia-l4", 1, "gke", vcpus=12, memory_gib=48),
    MachineShape("g2-standard-16", "nvidia-l4", 1, "gke", vcpus=16, memory_gib=64),
    MachineShape("g2-standard-24", "nvidia-l4", 2, "gke", vcpus=24, memory_gib=96),
    MachineShape("g2-standard-32", "nvidia-l4", 1, "gke", vcpus=32, memory_gib=128),
    MachineShape("g2-standard-48", "nvidia-l4", 4, "gke", vcpus=48, memory_gib=192),
    MachineShape("g2-standard-96", "nvidia-l4", 8, "gke", vcpus=96, memory_gib=384),
    MachineShape("ct5lp-hightpu-1t", "tpu-v5-lite-podslice", 1, "gke", "1x1", vcpus=24, memory_gib=48),
    MachineShape("ct5lp-hightpu-4t", "tpu-v5-lite-podslice", 4, "gke", "2x2", vcpus=112, memory_gib=192),
    MachineShape("ct5lp-hightpu-8t", "tpu-v5-lite-podslice", 8, "gke", "2x4", vcpus=224, memory_gib=384),
    MachineShape("ct5p-hightpu-4t", "tpu-v5p-slice", 4, "gke", "2x2x1", vcpus=208, memory_gib=448),
    MachineShape("ct6e-standard-1t", "tpu-v6e-slice", 1, "gke", "1x1", vcpus=44, memory_gib=176),
    MachineShape("ct6e-standard-4t", "tpu-v6e-slice", 4, "gke", "2x2", vcpus=180, memory_gib=720),
    MachineShape("ct6e-standard-8t", "tpu-v6e-slice", 8, "gke", "2x4", vcpus=360, memory_gib=1440),
)

# T4 attaches to general-purpose N1 machines in counts of 1, 2 or 4.
ATTACHABLE_GPUS: dict[str, tuple[str, tuple[int, ...]]] = {
    "n1-": ("nvidia-tesla-t4", (1, 2, 4)),
}

#: N1 machine types: n1-<kind>-<vCPUs>, memory GiB per vCPU by kind, and the sizes each kind comes in
#: (there is no n1-highmem-1 or n1-highcpu-1); checked against `gcloud compute machine-types list` in
#: tests/test_machine_catalog.py.
N1_MEMORY_PER_VCPU = {"standard": 3.75, "highmem": 6.5, "highcpu": 0.9}
N1_VCPUS = (1, 2, 4, 8, 16, 32, 64, 96)
N1_VCPUS_BY_KIND = {"standard": N1_VCPUS, "highmem": N1_VCPUS[1:], "highcpu": N1_VCPUS[1:]}

EKS_INSTANCES: dict[str, MachineShape] = _shapes(
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


#: Pods per AKS node: the library sets ``maxPods`` on every AKS pool to this, and AKS's kube-reserved
#: memory grows with it (learn.microsoft.com/azure/aks/node-resource-reservations).
AKS_MAX_PODS = 110

#: GPU VM sizes on AKS (the sizes' pages cited at the top; fractional-GPU NVadsA10 v5 sizes left out:
#: they expose a vGPU slice, not a whole device a DRA claim can count). Every figure is checked against the
#: pages and Azure's Resource SKUs as tools/record_aks_sizes.py records them (tests/fixtures/aks_vm_sizes.json).
AKS_VM_SIZES: dict[str, MachineShape] = _shapes(
    MachineShape("Standard_NC24ads_A100_v4", "nvidia-a100-80gb-pcie", 1, "aks", vcpus=24, memory_gib=220,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC48ads_A100_v4", "nvidia-a100-80gb-pcie", 2, "aks", vcpus=48, memory_gib=440,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC96ads_A100_v4", "nvidia-a100-80gb-pcie", 4, "aks", vcpus=96, memory_gib=880,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC40ads_H100_v5", "nvidia-h100-nvl", 1, "aks", vcpus=40, memory_gib=320,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC80adis_H100_v5", "nvidia-h100-nvl", 2, "aks", vcpus=80, memory_gib=640,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_ND96isr_H100_v5", "nvidia-h100-80gb", 8, "aks", vcpus=96, memory_gib=1900,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NV36ads_A10_v5", "nvidia-a10", 1, "aks", vcpus=36, memory_gib=440, max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NV36adms_A10_v5", "nvidia-a10", 1, "aks", vcpus=36, memory_gib=880,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NV72ads_A10_v5", "nvidia-a10", 2, "aks", vcpus=72, memory_gib=880, max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC4as_T4_v3", "nvidia-tesla-t4", 1, "aks", vcpus=4, memory_gib=28, max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC8as_T4_v3", "nvidia-tesla-t4", 1, "aks", vcpus=8, memory_gib=56, max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC16as_T4_v3", "nvidia-tesla-t4", 1, "aks", vcpus=16, memory_gib=110,
                 max_pods=AKS_MAX_PODS),
    MachineShape("Standard_NC64as_T4_v3", "nvidia-tesla-t4", 4, "aks", vcpus=64, memory_gib=440,
                 max_pods=AKS_MAX_PODS),
)


def accelerator(type_: str) -> GpuModel | TpuModel | None:
    """The catalog entry for an accelerator type, or None when unknown."""
    return GPUS.get(type_) or TPUS.get(type_)


def known_accelerator_types() -> list[str]:
    return sorted([*GPUS, *TPUS])


def natural_sorted(names: Iterable[str]) -> list[str]:
    """Names in the order a person reads them: numbers by value (``g2-standard-4`` before ``g2-standard-12``,
    ``g6.2xlarge`` before ``g6.12xlarge``, ``Standard_NC8as_T4_v3`` before ``Standard_NC16as_T4_v3``)."""
    return sorted(names, key=lambda name: [(0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                                           for part in re.findall(r"\d+|\D+", name)])


def same_gpu_elsewhere(accelerator_type: str, cloud: str) -> list[str]:
    """GPU types offered on ``cloud`` that are the same GPU as ``accelerator_type`` in another form factor or
    name (same architecture and memory): ``nvidia-a100-80gb-pcie`` on AKS for ``nvidia-a100-80gb``,
    ``nvidia-a10`` for ``nvidia-a10g``."""
    model = GPUS.get(accelerator_type)
    if model is None:
        return []
    return [g.type for g in GPUS.values() if g.type != accelerator_type and cloud in g.clouds
            and g.architecture == model.architecture and g.memory_gib == model.memory_gib]


def offered_on(cloud: str) -> list[str]:
    """Every accelerator type of the catalog offered on ``cloud``."""
    return sorted(t for t, m in [*GPUS.items(), *TPUS.items()] if cloud in m.clouds)


def gke_machine_shape(machine_type: str) -> MachineShape | None:
    return GKE_MACHINES.get(machine_type)


def gke_attachable(machine_type: str) -> tuple[str, tuple[int, ...]] | None:
    """(GPU type, allowed counts) for machine families that take attached GPUs."""
    for prefix, spec in ATTACHABLE_GPUS.items():
        if machine_type.startswith(prefix):
            return spec
    return None


def eks_instance_shape(instance_type: str) -> MachineShape | None:
    return EKS_INSTANCES.get(instance_type)


def aks_vm_size_shape(vm_size: str) -> MachineShape | None:
    return AKS_VM_SIZES.get(vm_size)


def host_shape(machine: str) -> HostShape | None:
    """The vCPUs and memory of a machine the catalog knows (accelerator shapes and N1), or None."""
    shape = GKE_MACHINES.get(machine) or EKS_INSTANCES.get(machine) or AKS_VM_SIZES.get(machine)
    if shape is not None:
        return HostShape(shape.name, shape.vcpus, shape.memory_gib, shape.max_pods)
    family, _, rest = machine.partition("-")
    kind, _, size = rest.partition("-")
    if family == "n1" and kind in N1_MEMORY_PER_VCPU and size.isdigit() and int(size) in N1_VCPUS_BY_KIND[kind]:
        return HostShape(machine, int(size), N1_MEMORY_PER_VCPU[kind] * int(size))
    return None


def machines_for(shapes: dict[str, MachineShape], accelerator_type: str, count: int | None = None,
                 attachable: dict[str, tuple[str, tuple[int, ...]]] | None = None) -> list[str]:
    """The machines among ``shapes`` that carry ``accelerator_type`` (``count`` of them when given).

    What an error about a machine suggests instead; machine families that take attached GPUs
    (``attachable``, e.g. GKE's N1) are named as a pattern (``n1-standard-*``).
    """
    found = natural_sorted(s.name for s in shapes.values()
                           if s.accelerator == accelerator_type and (count is None or s.count == count))
    for prefix, (gpu, counts) in (attachable or {}).items():
        if gpu == accelerator_type and (count is None or count in counts):
            found.append(f"{prefix}standard-* (attached: {', '.join(map(str, counts))})")
    return found
