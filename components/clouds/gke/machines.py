"""GKE's machine types with fixed accelerators, and the N1 machines GPUs attach to.

Public specs: cloud.google.com/compute/docs/accelerator-optimized-machines,
cloud.google.com/compute/docs/general-purpose-machines#n1_machines, cloud.google.com/tpu/docs/v6e, /v5e and
/v5p; Compute Engine's "GB" of memory is GiB. tests/test_machine_catalog.py checks every shape against a
recorded slice of ``gcloud compute machine-types list`` (tests/fixtures/gce_machine_types.csv).
"""

from ...catalog import HostShape, MachineShape, shapes

MACHINES: dict[str, MachineShape] = shapes(
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


def machine_shape(machine_type: str) -> MachineShape | None:
    return MACHINES.get(machine_type)


def attachable(machine_type: str) -> tuple[str, tuple[int, ...]] | None:
    """(GPU type, allowed counts) for machine families that take attached GPUs."""
    for prefix, spec in ATTACHABLE_GPUS.items():
        if machine_type.startswith(prefix):
            return spec
    return None


def n1_host_shape(machine: str) -> HostShape | None:
    """The vCPUs and memory of an N1 machine type (``n1-highmem-8``), or None."""
    family, _, rest = machine.partition("-")
    kind, _, size = rest.partition("-")
    if family == "n1" and kind in N1_MEMORY_PER_VCPU and size.isdigit() and int(size) in N1_VCPUS_BY_KIND[kind]:
        return HostShape(machine, int(size), N1_MEMORY_PER_VCPU[kind] * int(size))
    return None
