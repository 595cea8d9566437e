"""The virtual cluster: pools, nodes and the ResourceSlice devices the DRA drivers publish.

Every node of a pool carries the pool's labels and taints
(:mod:`gpu_fungibility.dra_wiring`) and, for a DRA pool, the devices its
driver would publish (:mod:`gpu_fungibility.devices`, shared with the policy
pack): NVIDIA GPUs or, on a pool a ``mig`` workload uses, the MIG slices that
workload asks for; TPU chips. UUIDs are derived from the cluster, node and
device names, so every run builds the same cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_fungibility import device_selectors, devices, dra_wiring, dynamic_mig, sizing
from gpu_fungibility.dra_cel import Device
from gpu_fungibility.node_selection import NodeTaint

from simulator.dra_features import DraFeatures
from stacks.arguments import pool_specs
from stacks.config import NodePool, StackConfig

#: The DeviceClasses the DRA drivers' charts install, with their selectors.
DRIVER_DEVICE_CLASSES = device_selectors.DRIVER_DEVICE_CLASS_SELECTORS


@dataclass(frozen=True, eq=False)
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


@dataclass(eq=False)
class SimNode:
    """What does not change about a node: name, labels, taints, devices, room for pods."""

    name: str
    pool: str
    labels: dict[str, str]
    taints: list[NodeTaint]
    devices: list[SimDevice]
    template: bool = False  # the autoscaler's model of a node it could add
    machine: str = ""
    room: tuple[int, int] = (0, 0)  # (millicores, MiB) free for pods: allocatable minus system pods and DaemonSets


@dataclass
class SimPool:
    """A node pool / node group as the autoscaler sees it."""

    name: str
    config: NodePool
    priority: int  # 0 = most preferred
    stocked_out: bool
    #: False where the cloud's autoscaler does not grow a DRA GPU pool past its min (AKS: clouds.Aks).
    dra_grows_past_min: bool = True

    @property
    def min(self) -> int:
        return self.config.autoscaling.min

    @property
    def held_at_min(self) -> bool:
        """Whether the autoscaler keeps this pool at its min although its max is higher."""
        return (not self.dra_grows_past_min and self.config.dra and self.config.family == "gpu"
                and self.config.autoscaling.max > self.config.autoscaling.min)

    @property
    def max(self) -> int:
        """The most nodes the autoscaler gives the pool: its max, or its min where it is held there."""
        return self.config.autoscaling.min if self.held_at_min else self.config.autoscaling.max


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


def dynamic_mig_on(cfg: StackConfig) -> bool:
    """Whether the stack's NVIDIA driver release turns the driver's ``DynamicMIG`` gate on (the chart's
    ``featureGates`` value; off by default in the pinned driver)."""
    return dynamic_mig.enabled(cfg.drivers.nvidia_dra.values)


class ClusterBuilder:
    """Builds the nodes of each pool the same way every time.

    ``features``: told the counter sets of each node built with the driver's ``DynamicMIG`` gate on, which a
    node's GPUs then publish as partitionable devices (all MIG profiles at all placements, sharing counters).
    """

    def __init__(self, cfg: StackConfig, features: DraFeatures | None = None):
        self.cfg = cfg
        self.features = features
        self.dynamic_mig = dynamic_mig_on(cfg)
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
        # The Cluster Autoscaler builds a group's nodes from its first instance type.
        machine = pool.machine_type or pool.vm_size or (pool.instance_types or [""])[0]
        if machine:
            labels["node.kubernetes.io/instance-type"] = machine
        return SimNode(name, pool_name, labels, list(self._taints[pool_name]),
                       self.devices(pool_name, name), template=template, machine=machine,
                       room=self.room(pool_name, machine))

    def room(self, pool_name: str, machine: str) -> tuple[int, int]:
        """What a node of this machine leaves for serving pods (the same arithmetic that sized them)."""
        pool = self.cfg.node_pools[pool_name]
        found = sizing.node_room(self.cfg.cluster.cloud, machine, pool.family or "gpu", pool.dra)
        return found.free if found else (0, 0)

    def devices(self, pool_name: str, node: str) -> list[SimDevice]:
        pool = self.cfg.node_pools[pool_name]
        if not pool.dra:
            return []  # no DRA driver publishes there: the device plugin serves it
        if self.dynamic_mig and pool.family == "gpu":
            slices = devices.node_resource_slices(node, pool.accelerator.type, pool.accelerator.count,
                                                  cluster=self.cfg.cluster.name, dynamic_mig=True)
            if self.features is not None:
                self.features.add(slices)
            return [SimDevice.build(node, s["spec"]["driver"], entry)
                    for s in slices for entry in s["spec"].get("devices") or ()]
        driver, entries = devices.published(self.cfg.cluster.name, node, pool.accelerator.type,
                                            pool.accelerator.count, self.mig.get(pool_name))
        return [SimDevice.build(node, driver, entry) for entry in entries]
