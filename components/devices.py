"""The devices a pool's nodes publish: ResourceSlice devices (and whole ResourceSlices) built from the catalog.

One copy of what the DRA drivers put in their ResourceSlices, so the simulator (which allocates
them), the policy pack (which checks that a claim alternative can match them), ``make verify``
(which compares them with a live node) and the rehearsal (which feeds them to a real scheduler)
read the same devices.

Public entry point for a whole node: :func:`node_resource_slices` ``(node_name, accelerator_type,
count, *, mig_profiles=None, mig_sets=None, cluster="", generation=1, dynamic_mig=False) -> list[dict]`` returns the
complete ``resource.k8s.io/v1`` ResourceSlice objects the pinned driver publishes for one node of a
pool. :func:`published` returns only the ``(driver, spec.devices)`` of the same node.

NVIDIA (``gpu.nvidia.com``), as the pinned driver ``dra-driver-nvidia-gpu`` v0.4.1 builds them
(kubernetes-sigs/dra-driver-nvidia-gpu at tag v0.4.1, ``cmd/gpu-kubelet-plugin/``), with its
default feature gates (``DynamicMIG`` and ``PassthroughSupport`` off, pkg/featuregates/
featuregates.go:109-122), so MIG is "static": slices are cut before the driver starts:

- one pool named after the node, one ResourceSlice holding every device (driver.go:473-486),
  generation 1 on a fresh node and ``generateName: <node>-gpu.nvidia.com-`` (the
  k8s.io/dynamic-resource-allocation ResourceSlice controller, resourceslicecontroller.go);
- a GPU without MIG is one device ``gpu-<minor>`` (deviceinfo.go:106-108) with attributes
  ``type: gpu``, ``uuid``, ``productName``, ``brand``, ``architecture``, ``cudaComputeCapability``,
  ``driverVersion``, ``cudaDriverVersion`` (versions as semver, deviceinfo.go:152-178),
  ``resource.kubernetes.io/pciBusID`` / ``pcieRoot`` (deviceinfo.go:180-185) and
  ``addressingMode`` (deviceinfo.go:191-195); capacity ``memory`` is the NVML total in bytes
  (partitions.go:34-43);
- a GPU with MIG enabled publishes only its MIG devices (nvlib.go:302-319), each named
  ``gpu-<minor>-mig-<profile without dots, RFC 1123>-<GI profile id>-<placement start>``
  (mig.go:111-114, 247-260: ``1g.10gb+me`` becomes ``1g10gb-me``), with ``type: mig``,
  ``parentUUID``, ``profile`` and the parent's product, version, ``addressingMode`` and PCI
  attributes (mig.go:139-185) plus its own ``uuid`` (deviceinfo.go:209-214); capacities
  ``multiprocessors``, ``copyEngines``, ``decoders``, ``encoders``, ``jpegEngines``, ``ofaEngines``
  and ``memory`` (NVML ``memorySizeMB`` MiB as bytes, mig.go:118-135), and ``memorySlice<i>: 1``
  for each memory slice the instance occupies (deviceinfo.go:222-229). Profiles, memory and
  placements: :mod:`mig_geometry`.

Attribute values are as the driver derives them from NVML: ``cudaDriverVersion`` is
``<v/1000>.<v%1000/10>`` (nvlib.go:610) and every version goes through Masterminds semver, which
drops leading zeros (``580.159.04`` -> ``580.159.4``). The driver and CUDA versions differ per
cloud, node image and driver branch and are **not modelled per cloud**: every simulated node
carries one pair (:data:`NVIDIA_DRIVER_VERSION`, :data:`CUDA_DRIVER_VERSION`), so a selector must
never depend on an exact driver version.

With the driver's ``DynamicMIG`` gate on (off by default; :mod:`dynamic_mig`), a MIG-capable GPU is published as
partitionable devices instead: every profile at every placement plus the whole GPU, each consuming a per-GPU
counter set (``node_resource_slices(..., dynamic_mig=True)``).

Google TPU (``tpu.google.com``), one device ``accel<i>`` per chip with ``index``, ``uuid`` and
``tpuGen`` (what the 0.1.x driver documents).

UUIDs and PCI addresses are derived from the cluster, node and device names, so the same inputs
always give the same devices.
"""

import hashlib
import re
import uuid
from collections.abc import Sequence
from typing import Any

from . import catalog, device_selectors, dynamic_mig, mig_geometry

#: The driver on the GPU nodes (seed 000's ResourceSlice: GKE COS, driver 580.126.20 with CUDA 13.0).
#: One pair for every cloud: not modelled per cloud or node image (see the module docstring).
NVIDIA_DRIVER_VERSION = "580.126.20"
CUDA_DRIVER_VERSION = "13.0.0"
#: An A100/H100/H200 has seven MIG compute slices (and eight memory slices: see mig_geometry).
MIG_COMPUTE_SLICES = mig_geometry.COMPUTE_SLICES

#: resource.k8s.io/v1 limits (k8s.io/api resource/v1 types.go): devices per slice, and attributes plus
#: capacities per device.
RESOURCE_SLICE_MAX_DEVICES = 128
MAX_ATTRIBUTES_AND_CAPACITIES = 32
API_VERSION = "resource.k8s.io/v1"

Entry = dict[str, Any]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def mig_sets_per_gpu(profiles: Sequence[str], accelerator_type: str) -> int:
    """How many copies of this set of MIG slices one GPU of this type holds (0: not even one fits)."""
    return mig_geometry.copies_per_gpu(accelerator_type, profiles)


def mig_partition(profiles: Sequence[str], accelerator_type: str, sets: int | None = None) -> list[str]:
    """The slices one GPU is cut into: as many copies of the requested set as fit (or ``sets`` copies)."""
    return list(profiles) * (mig_sets_per_gpu(profiles, accelerator_type) if sets is None else sets)


def binary_quantity(value: int) -> str:
    """A byte count as Kubernetes serialises a BinarySI quantity (``resource.NewQuantity(n, BinarySI)``)."""
    suffix = ""
    for candidate in _BINARY_SUFFIXES:
        if value == 0 or value % 1024:
            break
        value //= 1024
        suffix = candidate
    return f"{value}{suffix}"


def semver(version: str) -> str:
    """A version as Masterminds semver v3 prints it after parsing (leading zeros dropped, missing parts 0)."""
    parts = (version.split("-")[0].split("+")[0].removeprefix("v").split(".") + ["0", "0"])[:3]
    return ".".join(str(int(p)) for p in parts)


def cuda_driver_version(nvml_value: int) -> str:
    """``nvmlSystemGetCudaDriverVersion`` (e.g. 13000) as the driver publishes it (nvlib.go:610)."""
    return semver(f"{nvml_value // 1000}.{(nvml_value % 1000) // 10}")


def pci_bus_id(nvml_bus_id: str) -> str:
    """NVML's ``busId`` as go-nvlib's ``GetPCIBusID`` hands it to the driver: lower case, 8-digit domain cut to 4."""
    bus_id = nvml_bus_id.lower()
    return bus_id[4:] if re.match(r"^0{4}[0-9a-f]{4}:", bus_id) else bus_id


def pcie_root(sysfs_path: str) -> str:
    """The ``pcieRoot`` attribute: the first directory under /sys/devices of the GPU's PCI device."""
    return sysfs_path.removeprefix("/sys/devices/").split("/")[0]


def rfc1123(name: str) -> str:
    """The driver's ``toRFC1123Compliant`` (mig.go:247-260)."""
    name = re.sub(r"[^a-z0-9-.]", "-", name.lower()).strip("-").removesuffix(".")
    return name[:253]


def mig_device_name(minor: int, profile: mig_geometry.MigProfile, start: int) -> str:
    """``gpu-<minor>-mig-<profile>-<profile id>-<placement start>`` (mig.go:111-114)."""
    return f"gpu-{minor}-mig-{rfc1123(profile.name.replace('.', ''))}-{profile.profile_id}-{start}"


def mig_gpus(product_names: Sequence[str] = (), architectures: Sequence[str] = ()) -> list[str]:
    """Catalog GPUs with MIG that pass a DeviceClass's productName / architecture filters (empty: any)."""
    return [g.type for g in catalog.GPUS.values() if mig_geometry.profiles_of(g.type)
            and (not product_names or g.product_name in product_names)
            and (not architectures or g.architecture in architectures)]


def mig_slices_with(min_memory_gi: int, accelerator_types: Sequence[str],
                    profiles: Sequence[str] | None = None) -> list[tuple[str, mig_geometry.MigProfile]]:
    """The ``(GPU, profile)`` slices whose real memory is at least ``min_memory_gi`` GiB (``profiles``: only these)."""
    return [(gpu, p) for gpu in accelerator_types for p in mig_geometry.profiles_of(gpu).values()
            if (profiles is None or p.name in profiles) and p.memory_mib >= min_memory_gi * 1024]


def mig_slices_named_above_their_memory(min_memory_gi: int, accelerator_types: Sequence[str],
                                        profiles: Sequence[str] | None = None
                                        ) -> list[tuple[str, mig_geometry.MigProfile]]:
    """Slices whose profile name promises ``min_memory_gi`` GB or more while NVML gives them less than that in GiB.

    The trap of a memory floor on MIG slices: ``1g.10gb`` reads as 10 GB, a real H100 slice has 9984 MiB.
    """
    found = []
    for gpu in accelerator_types:
        for p in mig_geometry.profiles_of(gpu).values():
            nominal = int(p.name.split(".")[1].split("gb")[0])
            if (profiles is None or p.name in profiles) and nominal >= min_memory_gi > p.memory_mib / 1024:
                found.append((gpu, p))
    return found


def gpus_named_above_their_memory(min_memory_gi: int, product_names: Sequence[str] = (),
                                  architectures: Sequence[str] = ()) -> list[catalog.GpuModel]:
    """Catalog GPUs (passing a DeviceClass's filters) sold with ``min_memory_gi`` GB or more whose NVML total,
    the driver's ``memory`` capacity, is below ``min_memory_gi`` GiB: a real H100 80GB has 81559 MiB (79.6 GiB),
    so ``memory >= 80Gi`` never selects it (NVML figures: ../reality/nvml, held in tests/test_devices*.py)."""
    return [g for g in catalog.GPUS.values()
            if (not product_names or g.product_name in product_names)
            and (not architectures or g.architecture in architectures)
            and g.memory_gib >= min_memory_gi > g.published_memory_mib / 1024]


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(("gpu-fungibility", *parts))))


def gpu_attributes(model: catalog.GpuModel) -> Entry:
    """The product attributes every device of this GPU (whole or MIG slice) publishes."""
    return {
        "productName": {"string": model.product_name},
        "brand": {"string": model.brand},
        "architecture": {"string": model.architecture},
        "cudaComputeCapability": {"version": semver(model.cuda_compute_capability)},
        "driverVersion": {"version": semver(NVIDIA_DRIVER_VERSION)},
        "cudaDriverVersion": {"version": semver(CUDA_DRIVER_VERSION)},
    }


def _parent_attributes(model: catalog.GpuModel, minor: int) -> Entry:
    """What a GPU and each of its MIG devices share: product, versions, addressing mode and PCI place."""
    return {
        **gpu_attributes(model),
        "addressingMode": {"string": "None"},
        "resource.kubernetes.io/pciBusID": {"string": f"0000:00:{4 + minor:02x}.0"},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
    }


def mig_capacity(profile: mig_geometry.MigProfile, start: int) -> Entry:
    """A MIG device's capacities: the profile's engines and memory, and the memory slices it occupies."""
    return {
        "multiprocessors": {"value": str(profile.multiprocessors)},
        "copyEngines": {"value": str(profile.copy_engines)},
        "decoders": {"value": str(profile.decoders)},
        "encoders": {"value": str(profile.encoders)},
        "jpegEngines": {"value": str(profile.jpeg_engines)},
        "ofaEngines": {"value": str(profile.ofa_engines)},
        "memory": {"value": binary_quantity(profile.memory_mib * 1024 * 1024)},
        **{f"memorySlice{i}": {"value": "1"} for i in profile.slices_at(start)},
    }


def gpu_entries(cluster: str, node: str, model: catalog.GpuModel, count: int,
                mig_profiles: Sequence[str] | None = None, mig_sets: int | None = None,
                every_profile: bool = False) -> list[Entry]:
    """The NVIDIA driver's devices on one node with ``count`` GPUs (MIG slices when profiles are given).

    ``mig_sets`` fixes the copies of the slice set per GPU (default: as many as the geometry holds).
    ``every_profile``: one slice of every MIG profile per GPU, each at its first placement - what each
    kind of slice looks like, not a layout a GPU holds. Raises ValueError when the slices do not fit one GPU.
    """
    entries: list[Entry] = []
    for minor in range(count):
        gpu_uuid = f"GPU-{_uuid(cluster, node, f'gpu-{minor}')}"
        parent = _parent_attributes(model, minor)
        if mig_profiles or every_profile:
            if every_profile:
                placed = [(p, p.placements[0]) for p in mig_geometry.profiles_of(model.type).values()]
            else:
                layout = mig_partition(mig_profiles or (), model.type, mig_sets)
                placed = mig_geometry.place(model.type, layout) if layout else []
                if placed is None:
                    raise ValueError(mig_geometry.layout_problem(model.type, layout))
            for profile, start in placed:
                name = mig_device_name(minor, profile, start)
                entries.append({
                    "name": name,
                    "attributes": {
                        "type": {"string": "mig"},
                        "uuid": {"string": f"MIG-{_uuid(cluster, node, name)}"},
                        "parentUUID": {"string": gpu_uuid},
                        "profile": {"string": profile.name},
                        **parent,
                    },
                    "capacity": mig_capacity(profile, start),
                })
            continue
        entries.append({
            "name": f"gpu-{minor}",
            "attributes": {"type": {"string": "gpu"}, "uuid": {"string": gpu_uuid}, **parent},
            "capacity": {"memory": {"value": binary_quantity(model.published_memory_mib * 1024 * 1024)}},
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
              mig_profiles: Sequence[str] | None = None, mig_sets: int | None = None,
              every_mig_profile: bool = False) -> tuple[str, list[Entry]]:
    """``(driver, entries)`` of a node carrying ``count`` of this catalog accelerator; raises for an unknown type.

    ``every_mig_profile``: one slice of every MIG profile per GPU (see :func:`gpu_entries`).
    """
    model = catalog.accelerator(accelerator_type)
    if model is None:
        raise ValueError(f"unknown accelerator type {accelerator_type!r}")
    if isinstance(model, catalog.GpuModel):
        return device_selectors.NVIDIA_DRIVER, gpu_entries(cluster, node, model, count, mig_profiles, mig_sets,
                                                           every_profile=every_mig_profile)
    return device_selectors.TPU_DRIVER, tpu_entries(cluster, node, model, count)


def _name_suffix(*parts: str) -> str:
    """Five characters from the alphabet the API server's generateName uses, fixed by the inputs."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def dynamic_mig_entries(cluster: str, node: str, model: catalog.GpuModel, count: int
                        ) -> tuple[list[Entry], list[list[Entry]]]:
    """``(counter sets, devices per GPU)`` the driver publishes with ``DynamicMIG`` on (:mod:`dynamic_mig`)."""
    counter_sets, per_gpu = [], []
    for minor in range(count):
        gpu_uuid = f"GPU-{_uuid(cluster, node, f'gpu-{minor}')}"
        parent = _parent_attributes(model, minor)
        counter_sets.append(dynamic_mig.gpu_counter_set(model.type, minor, binary_quantity))
        per_gpu.append(dynamic_mig.gpu_devices(
            model, minor, {"type": {"string": "gpu"}, "uuid": {"string": gpu_uuid}, **parent},
            {"type": {"string": "mig"}, "parentUUID": {"string": gpu_uuid}, **parent}, binary_quantity))
    return counter_sets, per_gpu


def _slice(node_name: str, driver: str, cluster: str, index: int, count: int, generation: int,
           body: dict[str, Any]) -> dict[str, Any]:
    generate_name = f"{node_name}-{driver}-"
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {
            "generateName": generate_name,
            "name": f"{generate_name}{_name_suffix(cluster, node_name, driver, str(index))}"[:253],
        },
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": count},
            **body,
        },
    }


def _dynamic_mig_slices(node_name: str, model: catalog.GpuModel, count: int, cluster: str,
                        generation: int) -> list[dict[str, Any]]:
    """G+1 slices: every GPU's counter set first, then one slice of devices per GPU (driver.go:197-252)."""
    if count > dynamic_mig.MAX_COUNTER_SETS_PER_SLICE:
        raise ValueError(f"{count} GPUs: the driver's one slice of counter sets holds at most "
                         f"{dynamic_mig.MAX_COUNTER_SETS_PER_SLICE}")
    counter_sets, per_gpu = dynamic_mig_entries(cluster, node_name, model, count)
    for entry in (e for gpu in per_gpu for e in gpu):
        problem = device_problem(entry)
        if problem:
            raise ValueError(f"device {entry.get('name')!r}: {problem}")
    driver = device_selectors.NVIDIA_DRIVER
    bodies = [{"sharedCounters": counter_sets}] + [{"devices": d} for d in per_gpu]
    return [_slice(node_name, driver, cluster, i, len(bodies), generation, body) for i, body in enumerate(bodies)]


def node_resource_slices(node_name: str, accelerator_type: str, count: int, *,
                         mig_profiles: Sequence[str] | None = None, mig_sets: int | None = None,
                         cluster: str = "", generation: int = 1, dynamic_mig: bool = False) -> list[dict[str, Any]]:
    """The complete ``resource.k8s.io/v1`` ResourceSlices the pinned driver publishes for one node.

    ``node_name``: the Node (also the pool name, as the drivers name their pools);
    ``accelerator_type``: a catalog GPU or TPU type; ``count``: accelerators on the node;
    ``mig_profiles``: the MIG slices each GPU is cut into (as many copies of the set as fit, or
    ``mig_sets`` copies); ``cluster``: only seeds the UUIDs; ``generation``: ``spec.pool.generation``
    (1 on a fresh node). Each object carries ``metadata.generateName`` as the ResourceSlice controller
    sets it and a fixed ``metadata.name`` built from it, so it can be created or applied as is.

    The NVIDIA driver publishes one slice per node; more than 128 devices (the API's limit, never
    reached by a catalog machine) are split over several slices of the same pool. Raises ValueError
    for an unknown type, a layout that does not fit, or a node name that is not a DNS subdomain.

    ``dynamic_mig``: the NVIDIA driver with its ``DynamicMIG`` gate on (off in the pinned driver's defaults;
    the chart's ``featureGates`` value turns it on): a MIG-capable GPU publishes every profile at every placement,
    consuming a per-GPU counter set, in G+1 slices (:mod:`dynamic_mig`); ``mig_profiles`` is then ignored.
    Other accelerators publish as without it (the driver falls back on a node without MIG).
    """
    if not node_name or len(node_name) > 253 or not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", node_name):
        raise ValueError(f"{node_name!r} is not a node name (a DNS subdomain)")
    model = catalog.accelerator(accelerator_type)
    if dynamic_mig and isinstance(model, catalog.GpuModel) and mig_geometry.profiles_of(model.type):
        return _dynamic_mig_slices(node_name, model, count, cluster, generation)
    driver, entries = published(cluster, node_name, accelerator_type, count, mig_profiles, mig_sets)
    for entry in entries:
        problem = device_problem(entry)
        if problem:
            raise ValueError(f"device {entry.get('name')!r}: {problem}")
    chunks = [entries[i:i + RESOURCE_SLICE_MAX_DEVICES]
              for i in range(0, len(entries), RESOURCE_SLICE_MAX_DEVICES)] or [[]]
    return [_slice(node_name, driver, cluster, i, len(chunks), generation, {"devices": chunk})
            for i, chunk in enumerate(chunks)]


def device_problem(entry: Entry) -> str | None:
    """What the API server would refuse in one ``spec.devices[]`` entry (resource.k8s.io/v1), or None."""
    name = str(entry.get("name", ""))
    if not _DNS_LABEL.match(name):
        return f"the name {name!r} is not a DNS label"
    attributes, capacity = entry.get("attributes") or {}, entry.get("capacity") or {}
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        return f"{len(attributes) + len(capacity)} attributes and capacities (at most {MAX_ATTRIBUTES_AND_CAPACITIES})"
    for key in (*attributes, *capacity):
        domain, _, ident = key.rpartition("/")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,31}", ident):
            return f"{key!r}: {ident!r} is not a C identifier of at most 32 characters"
        if domain and (len(domain) > 63 or not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", domain)):
            return f"{key!r}: {domain!r} is not a DNS subdomain of at most 63 characters"
    for key, value in attributes.items():
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("string", "int", "bool",
                                                                                       "version"):
            return f"attribute {key!r} must hold exactly one of string, int, bool, version"
    for key, value in capacity.items():
        if not isinstance(value, dict) or set(value) != {"value"}:
            return f"capacity {key!r} must be {{value: <quantity>}}"
    return None
