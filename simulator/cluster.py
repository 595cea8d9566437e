"""The virtual cluster: pools, nodes and the ResourceSlice devices the DRA drivers publish.

Every node of a pool carries the pool's labels and taints
(:mod:`components.dra_wiring`) and, for a DRA pool, the devices its driver
would publish, built from the accelerator catalog:

- NVIDIA (``gpu.nvidia.com``), one device ``gpu-<i>`` per GPU with the
  attributes of seed 000's ResourceSlice: ``type: gpu``, ``uuid``,
  ``productName``, ``brand``, ``architecture``, ``cudaComputeCapability``,
  ``driverVersion`` and ``cudaDriverVersion`` (versions), ``addressingMode``,
  ``resource.kubernetes.io/pciBusID`` / ``pcieRoot``; capacity ``memory`` is
  the NVML total (``published_memory_mib``).
- MIG pools (a pool a workload with ``mig`` slices runs on): each GPU is
  partitioned into the slices those workloads ask for; each slice is a
  device ``gpu-<i>-mig-<profile>-<k>`` with ``type: mig``, ``profile``,
  ``parentUUID``, ``parentIndex``, ``index`` and the parent's product
  attributes; capacity ``memory`` is the profile's nominal size.
- Google TPU (``tpu.google.com``), one device ``accel<i>`` per chip with
  ``index``, ``uuid`` and ``tpuGen`` (what the 0.1.x driver documents).

UUIDs are derived from the cluster, node and device names, so every run
builds the same cluster.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from gpu_fungibility import catalog, dra_wiring, selectors
from gpu_fungibility.dra_cel import Device
from gpu_fungibility.node_selection import NodeTaint

from stacks.arguments import pool_specs
from stacks.config import NodePool, StackConfig

#: Versions on the GPU nodes (seed 000's ResourceSlice: GKE COS driver 580 with CUDA 13).
NVIDIA_DRIVER_VERSION = "580.126.20"
CUDA_DRIVER_VERSION = "13.0.0"
MIG_COMPUTE_SLICES = 7  # an A100/H100/H200 has seven compute slices

#: The DeviceClasses the DRA drivers' charts install, with their selectors.
DRIVER_DEVICE_CLASSES: dict[str, list[str]] = {
    selectors.GPU_DEVICE_CLASS: ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"],
    selectors.MIG_DEVICE_CLASS: ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"],
    selectors.TPU_DEVICE_CLASS: ["device.driver == 'tpu.google.com'"],
}


@dataclass(frozen=True)
class SimDevice:
    """One published device: its ResourceSlice entry and what CEL sees of it."""

    uid: str  # node/device, unique in the cluster
    name: str
    driver: str
    entry: dict  # the ResourceSlice ``spec.devices[]`` entry
    cel: Device

    @classmethod
    def build(cls, node_name: str, driver: str, entry: dict) -> SimDevice:
        return cls(f"{node_name}/{entry['name']}", entry["name"], driver, entry,
                   Device.from_slice_device(driver, entry))


@dataclass
class SimNode:
    name: str
    pool: str
    labels: dict[str, str]
    taints: list[NodeTaint]
    devices: list[SimDevice]
    template: bool = False  # the autoscaler's model of a node it could add
    allocated: set[str] = field(default_factory=set)  # device uids in use

    def free_devices(self) -> int:
        return len(self.devices) - len(self.allocated)


@dataclass
class SimPool:
    """A node pool / node group as the autoscaler sees it."""

    name: str
    config: NodePool
    priority: int  # 0 = most preferred
    stocked_out: bool
    nodes: list[SimNode] = field(default_factory=list)

    @property
    def min(self) -> int:
        return self.config.autoscaling.min

    @property
    def max(self) -> int:
        return self.config.autoscaling.max


def pool_priority_order(cfg: StackConfig) -> list[str]:
    """Scale-up preference: each compute class's pools in order, then the other pools.

    GKE: the ComputeClass priorities; EKS: the priority expander's order,
    which the stack derives from the same lists.
    """
    order: list[str] = []
    for cc in cfg.compute_classes.values():
        order.extend(p for p in cc.pools if p not in order and p in cfg.node_pools)
    order.extend(p for p in cfg.node_pools if p not in order)
    return order


def mig_profiles_by_pool(cfg: StackConfig) -> dict[str, list[str]]:
    """The MIG slices each pool's GPUs are partitioned into (from the workloads that use it)."""
    layout: dict[str, list[str]] = {}
    for workload in cfg.workloads.values():
        if workload.mig and workload.pool:
            layout.setdefault(workload.pool, []).extend(piece.profile for piece in workload.mig)
    return layout


def _mig_partition(profiles: list[str]) -> list[str]:
    """As many copies of the requested set of slices as fit in one GPU (at least one)."""
    per_set = sum(int(p.split("g.")[0]) for p in profiles)
    copies = max(1, MIG_COMPUTE_SLICES // max(per_set, 1))
    return profiles * copies


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(("gpu-fungibility", *parts))))


def _gpu_attributes(model: catalog.GpuModel) -> dict:
    return {
        "productName": {"string": model.product_name},
        "brand": {"string": model.brand},
        "architecture": {"string": model.architecture},
        "cudaComputeCapability": {"version": model.cuda_compute_capability},
        "driverVersion": {"version": NVIDIA_DRIVER_VERSION},
        "cudaDriverVersion": {"version": CUDA_DRIVER_VERSION},
    }


def gpu_devices(cluster: str, node: str, model: catalog.GpuModel, count: int,
                mig_profiles: list[str] | None = None) -> list[SimDevice]:
    devices: list[SimDevice] = []
    for i in range(count):
        gpu_uuid = f"GPU-{_uuid(cluster, node, f'gpu-{i}')}"
        if mig_profiles:
            for k, profile in enumerate(_mig_partition(mig_profiles)):
                memory_gb = int(profile.split(".")[1].removesuffix("gb"))
                entry = {
                    "name": f"gpu-{i}-mig-{profile.replace('.', '')}-{k}",
                    "attributes": {
                        "type": {"string": "mig"},
                        "uuid": {"string": f"MIG-{_uuid(cluster, node, f'gpu-{i}', f'mig-{k}')}"},
                        "parentUUID": {"string": gpu_uuid},
                        "parentIndex": {"int": i},
                        "index": {"int": k},
                        "profile": {"string": profile},
                        **_gpu_attributes(model),
                    },
                    "capacity": {"memory": {"value": f"{memory_gb * 1024}Mi"}},
                }
                devices.append(SimDevice.build(node, selectors.NVIDIA_DRIVER, entry))
            continue
        entry = {
            "name": f"gpu-{i}",
            "attributes": {
                "type": {"string": "gpu"},
                "uuid": {"string": gpu_uuid},
                "addressingMode": {"string": "None"},
                **_gpu_attributes(model),
                "resource.kubernetes.io/pciBusID": {"string": f"0000:00:{4 + i:02x}.0"},
                "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
            },
            "capacity": {"memory": {"value": f"{model.published_memory_mib}Mi"}},
        }
        devices.append(SimDevice.build(node, selectors.NVIDIA_DRIVER, entry))
    return devices


def tpu_devices(cluster: str, node: str, model: catalog.TpuModel, count: int) -> list[SimDevice]:
    generation = selectors.tpu_driver_generation(model.type)
    return [
        SimDevice.build(node, selectors.TPU_DRIVER, {
            "name": f"accel{i}",
            "attributes": {
                "index": {"int": i},
                "uuid": {"string": f"tpu-{_uuid(cluster, node, f'accel{i}')}"},
                "tpuGen": {"string": generation},
            },
        })
        for i in range(count)
    ]


class ClusterBuilder:
    """Builds the nodes of each pool the same way every time."""

    def __init__(self, cfg: StackConfig):
        self.cfg = cfg
        self.mig = mig_profiles_by_pool(cfg)
        specs = pool_specs(cfg)
        self._labels = {p: dra_wiring.node_labels(cfg.cluster.cloud, specs[p]) for p in cfg.node_pools}
        self._taints = {p: dra_wiring.node_taints(cfg.cluster.cloud, specs[p]) for p in cfg.node_pools}

    def node_name(self, pool: str, index: int) -> str:
        return f"{self.cfg.cluster.cloud}-{pool}-{index}"

    def node(self, pool_name: str, index: int, template: bool = False) -> SimNode:
        pool = self.cfg.node_pools[pool_name]
        name = f"{pool_name}-template" if template else self.node_name(pool_name, index)
        labels = {
            **self._labels[pool_name],
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "topology.kubernetes.io/zone": (pool.zones or self.cfg.cluster.zones)[0],
        }
        machine = pool.machine_type or (pool.instance_types or [""])[0]
        if machine:
            labels["node.kubernetes.io/instance-type"] = machine
        return SimNode(name, pool_name, labels, list(self._taints[pool_name]),
                       self.devices(pool_name, name), template=template)

    def devices(self, pool_name: str, node: str) -> list[SimDevice]:
        pool = self.cfg.node_pools[pool_name]
        if not pool.dra:
            return []  # no DRA driver publishes there: the device plugin serves it
        model = pool.accelerator.model
        if isinstance(model, catalog.GpuModel):
            return gpu_devices(self.cfg.cluster.name, node, model, pool.accelerator.count, self.mig.get(pool_name))
        return tpu_devices(self.cfg.cluster.name, node, model, pool.accelerator.count)
