"""MIG as partitionable devices: what the NVIDIA DRA driver publishes with its ``DynamicMIG`` feature gate on.

The pinned driver (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1, 764900e7, also its newest tag; ``main`` at
95932046, 2026-08-07, publishes the same form and adds a ``numaNode`` attribute) has the gate, alpha and **off by
default** (pkg/featuregates/featuregates.go:63-64, 116-122); the chart turns it on through its documented ``featureGates`` map
(deployments/helm/dra-driver-nvidia-gpu/values.yaml:84-93, passed to the plugin as ``FEATURE_GATES``,
templates/kubeletplugin.yaml:166-168). With it on, for every MIG-capable GPU (cmd/gpu-kubelet-plugin/ at v0.4.1):

- the GPU is not cut in advance: every MIG profile NVML lists (``C == G`` compute instances, the ``1_SLICE_REV1``
  compute profile skipped: nvlib.go:1208-1215) at **every** possible placement is one device, named as a static
  MIG device (mig.go:111-114); the full GPU ``gpu-<minor>`` is a device too on Hopper and later (which switch
  MIG mode without a reset), not on an Ampere GPU, which only takes this path with MIG already on
  (nvlib.go:231-272, 1472-1505);
- one counter set per GPU, ``gpu-<minor>-counter-set`` (partitions.go:62-64), holding one counter per capacity
  (the capacity name in kebab case: ``multiprocessors``, ``copy-engines``, ``decoders``, ``encoders``,
  ``jpeg-engines``, ``ofa-engines``, ``memory``; mig.go:262-273, partitions.go:179-186), each the largest value
  any profile has (nvlib.go:1202-1275), plus ``memory-slice-<i>: 1`` for each of the GPU's memory slices (the
  largest placement size, nvlib.go:1248-1251; partitions.go:70-83, 234-248);
- a MIG device's capacities are its profile's (``multiprocessors`` ... ``memory`` in bytes, without the static
  form's ``memorySlice<i>``: mig.go:118-135, partitions.go:171-173), its attributes the static form's without a
  ``uuid`` (the instance does not exist yet: mig.go:139-185), and it consumes from its GPU's set its capacities
  as counters plus the memory slices of its placement (partitions.go:209-214); the full GPU has the largest
  capacities and consumes the whole set (partitions.go:53-58, 89-99, 102-117);
- on Kubernetes 1.35 and later the node's pool holds G+1 slices: first one with every GPU's counter set and no
  devices, then one per GPU with its devices sorted by name (driver.go:197-252, 570-587); before 1.35 the sets
  sit in each GPU's slice (driver.go:254-307), which this module does not build.

What the counters hold is NVML's geometry: a full H100 partitions into seven ``1g.10gb`` (seven decoders and
JPEG engines), ``3g.40gb`` + ``4g.40gb`` fit, a second ``4g.40gb`` does not. The per-profile figures come from
:mod:`mig_geometry` (measured NVML on H100 and H200). Kubernetes honours the counters only with
``DRAPartitionableDevices`` (beta, on, from 1.36); before, the API server drops them and every device is
independent, so a scheduler may hand out overlapping slices that the plugin then fails to create.
"""

import re
from collections.abc import Mapping
from typing import Any

from . import catalog, mig_geometry

#: The driver's feature gate (pkg/featuregates/featuregates.go at v0.4.1).
GATE = "DynamicMIG"
#: resource.k8s.io/v1 (k8s.io/api v0.36 resource/v1 types.go): counter sets per slice, counters per set,
#: devices per slice when they consume counters.
MAX_COUNTER_SETS_PER_SLICE = 8
MAX_COUNTERS_PER_SET = 32
MAX_DEVICES_WITH_COUNTERS = 64
#: Architectures that switch MIG mode without a GPU reset (nvlib.go ``supportsMIGModeToggle``: Hopper and later).
_NO_MODE_TOGGLE = ("Ampere",)

Entry = dict[str, Any]


def enabled(chart_values: Mapping[str, Any] | None) -> bool:
    """Whether a release of the driver's chart with these (extra) values runs the kubelet plugin with the gate on."""
    gates = (chart_values or {}).get("featureGates") or {}
    return str(gates.get(GATE, False)).lower() == "true"


def counter_name(capacity: str) -> str:
    """The driver's ``camelToDNSName`` (mig.go:262-273): ``copyEngines`` -> ``copy-engines``."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", capacity)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", name).lower()
    return re.sub(r"[^a-z0-9-.]", "-", name).strip("-").removesuffix(".")


def counter_set_name(minor: int) -> str:
    """``gpu-<minor>-counter-set`` (partitions.go:62-64)."""
    return f"gpu-{minor}-counter-set"


def profile_capacity(profile: mig_geometry.MigProfile) -> dict[str, int]:
    """``CommonCapacitiesMig`` (mig.go:118-135) as integers: engines and memory in bytes."""
    return {
        "multiprocessors": profile.multiprocessors,
        "copyEngines": profile.copy_engines,
        "decoders": profile.decoders,
        "encoders": profile.encoders,
        "jpegEngines": profile.jpeg_engines,
        "ofaEngines": profile.ofa_engines,
        "memory": profile.memory_mib * 1024 * 1024,
    }


def largest_capacity(accelerator_type: str) -> dict[str, int]:
    """Each capacity's largest value over the GPU's profiles (``maxCapacities``, nvlib.go:1202-1275)."""
    largest: dict[str, int] = {}
    for profile in mig_geometry.profiles_of(accelerator_type).values():
        for name, value in profile_capacity(profile).items():
            largest[name] = max(largest.get(name, 0), value)
    return largest


def memory_slice_count(accelerator_type: str) -> int:
    """The GPU's memory slices as the driver infers them: the largest placement size (nvlib.go:1248-1251)."""
    return max((p.memory_slices for p in mig_geometry.profiles_of(accelerator_type).values()), default=0)


def counters(capacity: Mapping[str, int], slices: range, quantity) -> dict[str, Entry]:
    """Capacities as counters, plus ``memory-slice-<i>: 1`` for each memory slice (partitions.go:234-248)."""
    out = {counter_name(name): {"value": quantity(value)} for name, value in capacity.items()}
    out.update({f"memory-slice-{i}": {"value": "1"} for i in slices})
    return out


def gpu_counter_set(accelerator_type: str, minor: int, quantity) -> Entry:
    """The set one GPU publishes (``PartSharedCounterSets``, partitions.go:70-83)."""
    return {"name": counter_set_name(minor),
            "counters": counters(largest_capacity(accelerator_type), range(memory_slice_count(accelerator_type)),
                                 quantity)}


def full_gpu_published(model: catalog.GpuModel) -> bool:
    """Whether the full GPU is a device next to its MIG devices (Hopper and later; nvlib.go:271-273, 1461-1470)."""
    return model.architecture not in _NO_MODE_TOGGLE


def gpu_devices(model: catalog.GpuModel, minor: int, gpu_attributes: Entry, mig_attributes: Entry,
                quantity) -> list[Entry]:
    """One GPU's devices, sorted by name as the driver sorts them (driver.go:211-233).

    ``gpu_attributes``: what the full GPU publishes (``GpuInfo.Attributes``); ``mig_attributes``: what its MIG
    devices share, without ``profile`` (``CommonAttributesMig``); ``quantity``: an int as a BinarySI quantity.
    """
    from .devices import mig_device_name  # the static form's naming, which the dynamic form shares

    set_name = counter_set_name(minor)
    slices = memory_slice_count(model.type)
    found: list[Entry] = []
    if full_gpu_published(model):
        largest = largest_capacity(model.type)
        found.append({
            "name": f"gpu-{minor}",
            "attributes": dict(gpu_attributes),
            "capacity": {name: {"value": quantity(value)} for name, value in largest.items()},
            "consumesCounters": [{"counterSet": set_name, "counters": counters(largest, range(slices), quantity)}],
        })
    for profile in mig_geometry.profiles_of(model.type).values():
        capacity = profile_capacity(profile)
        for start in profile.placements:
            found.append({
                "name": mig_device_name(minor, profile, start),
                "attributes": {**mig_attributes, "profile": {"string": profile.name}},
                "capacity": {name: {"value": quantity(value)} for name, value in capacity.items()},
                "consumesCounters": [{"counterSet": set_name,
                                      "counters": counters(capacity, profile.slices_at(start), quantity)}],
            })
    return sorted(found, key=lambda e: e["name"].encode())


def fits(counter_set: Entry, consumers: list[Entry]) -> bool:
    """Whether these devices can all be allocated at once from this counter set (``checkAvailableCounters``)."""
    from .dra_cel.quantity import Quantity

    left = {name: Quantity.parse(c["value"]).value for name, c in counter_set["counters"].items()}
    for device in consumers:
        for consumption in device.get("consumesCounters") or ():
            if consumption["counterSet"] != counter_set["name"]:
                continue
            for name, c in consumption["counters"].items():
                left[name] = left.get(name, 0) - Quantity.parse(c["value"]).value
    return all(v >= 0 for v in left.values())
