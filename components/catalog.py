"""The accelerator catalog the project owns.

Every accelerator `type` a stack may name is looked up here; unknown types are
configuration errors. GPU entries record what the NVIDIA DRA driver publishes in
its ResourceSlices (``productName``, ``architecture``, ``brand``,
``cudaComputeCapability`` and the NVML total memory, which is *not* the
marketing figure: an H100 80GB publishes 81559Mi). Machine shapes record how
many devices each machine carries, so a pool's ``accelerator.count`` can be
checked, and the simulator can build nodes, and the vCPUs and memory the cloud
sells with it, so serving pods can be sized to fit. Each cloud keeps its own
machines in its folder (``clouds/<cloud>/machines.py``, with the public specs
each figure comes from and the test that checks it against real data); this
module asks the registered clouds (:func:`machine_shape`, :func:`host_shape`),
and a model is offered on the clouds with a machine that carries it
(:func:`offering_clouds`).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

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

    family: Family = field(default="gpu", init=False)

    @property
    def clouds(self) -> tuple[str, ...]:
        """The registered clouds with a machine that carries this GPU (see :func:`offering_clouds`)."""
        return offering_clouds(self.type)


@dataclass(frozen=True)
class TpuModel:
    """One TPU generation, as GKE names it."""

    type: str  # GKE accelerator label value, e.g. tpu-v6e-slice
    generation: str  # v5e, v5p, v6e
    hbm_gib_per_chip: int

    family: Family = field(default="tpu", init=False)

    @property
    def clouds(self) -> tuple[str, ...]:
        """The registered clouds with a machine that carries this TPU (see :func:`offering_clouds`)."""
        return offering_clouds(self.type)


@dataclass(frozen=True)
class MachineShape:
    """A machine (a machine type, instance type or VM size) with fixed accelerators."""

    name: str
    accelerator: str  # catalog type
    count: int
    cloud: str  # the registered cloud's name
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
        GpuModel("nvidia-tesla-t4", "Tesla T4", 16, 15360, "Turing", "7.5.0", brand="Nvidia"),
        GpuModel("nvidia-l4", "NVIDIA L4", 24, 23034, "Ada Lovelace", "8.9.0"),
        # NVML reports the A10G's brand as NVML_BRAND_NVIDIA_RTX (NVIDIA/k8s-device-plugin#344), which go-nvlib's
        # GetBrandAsString (pkg/nvlib/device/device.go), the DRA driver's source of the attribute, names NvidiaRTX.
        GpuModel("nvidia-a10g", "NVIDIA A10G", 24, 23028, "Ampere", "8.6.0", brand="NvidiaRTX"),
        GpuModel("nvidia-l40s", "NVIDIA L40S", 48, 46068, "Ada Lovelace", "8.9.0"),
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
        ),
        GpuModel("nvidia-h100-nvl", "NVIDIA H100 NVL", 94, 95830, "Hopper", "9.0.0",
                 mig_profiles=("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb",
                               "7g.94gb")),
        GpuModel("nvidia-a10", "NVIDIA A10", 24, 23028, "Ampere", "8.6.0"),
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


def shapes(*machines: MachineShape) -> dict[str, MachineShape]:
    """A cloud's machine table, by machine name (each cloud's ``machines`` module builds its own)."""
    return {s.name: s for s in machines}


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


def _registered() -> list[Any]:
    """The registered clouds' profiles (imported here: the registry imports this module)."""
    from . import clouds as registry

    return [registry.profile(name) for name in registry.names()]


def offering_clouds(accelerator_type: str) -> tuple[str, ...]:
    """The registered clouds with a machine that carries ``accelerator_type`` (fixed or attached)."""
    return tuple(cloud.name for cloud in _registered() if cloud.offers(accelerator_type))


def machine_shape(cloud: str, machine: str) -> MachineShape | None:
    """The shape of one of ``cloud``'s machines, or None when its catalog does not know it."""
    from . import clouds as registry

    return registry.profile(cloud).machine_shape(machine)


def host_shape(machine: str) -> HostShape | None:
    """The vCPUs and memory of a machine the catalog knows (any registered cloud's), or None."""
    for cloud in _registered():
        host = cloud.host_shape(machine)
        if host is not None:
            return host
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
