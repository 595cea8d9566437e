"""The devices a pool's nodes publish: ResourceSlice ``spec.devices[]`` entries built from the catalog.

One copy of what the DRA drivers put in their ResourceSlices, so the
simulator (which allocates them) and the policy pack (which checks that a
claim alternative can match them) read the same attributes:

- NVIDIA (``gpu.nvidia.com``), one device ``gpu-<i>`` per GPU with the
  attributes of seed 000's ResourceSlice: ``type: gpu``, ``uuid``,
  ``productName``, ``brand``, ``architecture``, ``cudaComputeCapability``,
  ``driverVersion`` and ``cudaDriverVersion`` (versions), ``addressingMode``,
  ``resource.kubernetes.io/pciBusID`` / ``pcieRoot``; capacity ``memory`` is
  the NVML total (``published_memory_mib``).
- MIG: each GPU partitioned into the given slices, as many copies of the set
  as fit the GPU's real slice geometry (:mod:`mig_geometry`; none when not even
  one set fits); each slice is a device
  ``gpu-<i>-mig-<profile>-<k>`` with ``type: mig``, ``profile``,
  ``parentUUID``, ``parentIndex``, ``index`` and the parent's product
  attributes; capacity ``memory`` is the profile's nominal size.
- Google TPU (``tpu.google.com``), one device ``accel<i>`` per chip with
  ``index``, ``uuid`` and ``tpuGen`` (what the 0.1.x driver documents).

UUIDs are derived from the cluster, node and device names, so the same
inputs always give the same devices.
"""

import uuid
from collections.abc import Sequence
from typing import Any

from . import catalog, device_selectors, mig_geometry

#: Versions on the GPU nodes (seed 000's ResourceSlice: GKE COS driver 580 with CUDA 13).
NVIDIA_DRIVER_VERSION = "580.126.20"
CUDA_DRIVER_VERSION = "13.0.0"
#: An A100/H100/H200 has seven MIG compute slices (and eight memory slices: see mig_geometry).
MIG_COMPUTE_SLICES = mig_geometry.COMPUTE_SLICES

Entry = dict[str, Any]


def mig_sets_per_gpu(profiles: Sequence[str], accelerator_type: str) -> int:
    """How many copies of this set of MIG slices one GPU of this type holds (0: not even one fits)."""
    return mig_geometry.copies_per_gpu(accelerator_type, profiles)


def mig_partition(profiles: Sequence[str], accelerator_type: str, sets: int | None = None) -> list[str]:
    """The slices one GPU is cut into: as many copies of the requested set as fit (or ``sets`` copies)."""
    return list(profiles) * (mig_sets_per_gpu(profiles, accelerator_type) if sets is None else sets)


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(("gpu-fungibility", *parts))))


def gpu_attributes(model: catalog.GpuModel) -> Entry:
    """The product attributes every device of this GPU (whole or MIG slice) publishes."""
    return {
        "productName": {"string": model.product_name},
        "brand": {"string": model.brand},
        "architecture": {"string": model.architecture},
        "cudaComputeCapability": {"version": model.cuda_compute_capability},
        "driverVersion": {"version": NVIDIA_DRIVER_VERSION},
        "cudaDriverVersion": {"version": CUDA_DRIVER_VERSION},
    }


def gpu_entries(cluster: str, node: str, model: catalog.GpuModel, count: int,
                mig_profiles: Sequence[str] | None = None, mig_sets: int | None = None) -> list[Entry]:
    """The NVIDIA driver's devices on one node with ``count`` GPUs (MIG slices when profiles are given).

    ``mig_sets`` fixes the copies of the slice set per GPU (default: as many as the geometry holds).
    """
    entries: list[Entry] = []
    for i in range(count):
        gpu_uuid = f"GPU-{_uuid(cluster, node, f'gpu-{i}')}"
        if mig_profiles:
            for k, profile in enumerate(mig_partition(mig_profiles, model.type, mig_sets)):
                memory_gb = int(profile.split(".")[1].removesuffix("gb"))
                entries.append({
                    "name": f"gpu-{i}-mig-{profile.replace('.', '')}-{k}",
                    "attributes": {
                        "type": {"string": "mig"},
                        "uuid": {"string": f"MIG-{_uuid(cluster, node, f'gpu-{i}', f'mig-{k}')}"},
                        "parentUUID": {"string": gpu_uuid},
                        "parentIndex": {"int": i},
                        "index": {"int": k},
                        "profile": {"string": profile},
                        **gpu_attributes(model),
                    },
                    "capacity": {"memory": {"value": f"{memory_gb * 1024}Mi"}},
                })
            continue
        entries.append({
            "name": f"gpu-{i}",
            "attributes": {
                "type": {"string": "gpu"},
                "uuid": {"string": gpu_uuid},
                "addressingMode": {"string": "None"},
                **gpu_attributes(model),
                "resource.kubernetes.io/pciBusID": {"string": f"0000:00:{4 + i:02x}.0"},
                "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
            },
            "capacity": {"memory": {"value": f"{model.published_memory_mib}Mi"}},
        })
    return entries


def tpu_entries(cluster: str, node: str, model: catalog.TpuModel, count: int) -> list[Entry]:
    """The TPU driver's devices on one node with ``count`` chips."""
    generation = device_selectors.tpu_driver_generation(model.type)
    return [
        {
            "name": f"accel{i}",
            "attributes": {
                "index": {"int": i},
                "uuid": {"string": f"tpu-{_uuid(cluster, node, f'accel{i}')}"},
                "tpuGen": {"string": generation},
            },
        }
        for i in range(count)
    ]


def published(cluster: str, node: str, accelerator_type: str, count: int,
              mig_profiles: Sequence[str] | None = None, mig_sets: int | None = None) -> tuple[str, list[Entry]]:
    """``(driver, entries)`` of a node carrying ``count`` of this catalog accelerator; raises for an unknown type."""
    model = catalog.accelerator(accelerator_type)
    if model is None:
        raise ValueError(f"unknown accelerator type {accelerator_type!r}")
    if isinstance(model, catalog.GpuModel):
        return device_selectors.NVIDIA_DRIVER, gpu_entries(cluster, node, model, count, mig_profiles, mig_sets)
    return device_selectors.TPU_DRIVER, tpu_entries(cluster, node, model, count)
