"""CPU and memory for serving pods: what a pool's nodes leave free, and what each pod asks for.

A node's room for serving pods is its allocatable CPU and memory (the
cloud's model, :meth:`gpu_fungibility.clouds.CloudProfile.allocatable`: the
capacity the node reports, below the machine's nominal memory, minus the
cloud's reservations) minus what always runs there: the cloud's own per-node
pods (``system_pods_reserve``) and the library's DaemonSets for the pool's
accelerator (:func:`daemon_sets`). A serving container, by default, asks for
its share of the smallest such room among the pools it can land on, less
:data:`HEADROOM_PERCENT` of the node's allocatable, so an estimate that is a
little off still schedules: CPU and memory requests, and a memory limit equal
to the request, which includes the in-memory ``/dev/shm`` volume (its
``sizeLimit``). Given requests are checked against every pool: one that does
not fit a pool's node (without the headroom) is an error naming the pool and
the numbers.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from . import catalog, clouds
from .dra_cel.quantity import Quantity, QuantityError

CpuMemory = clouds.CpuMemory

#: The NVIDIA driver installer's containers each request this much CPU (GKE DRA pools).
DRIVER_INSTALLER_CPU = "150m"
#: Room the library keeps on a node for each of its DaemonSets, ``(millicores, MiB)``: the requests they set,
#: or, for chart-installed plugins that set none, a margin for their own use.
DAEMON_SET_ROOM: dict[str, CpuMemory] = {
    "NVIDIA DRA kubelet plugin": (100, 256),
    "TPU DRA kubelet plugin": (100, 128),
    "NVIDIA device plugin": (100, 128),
    "NVIDIA driver installer": (150, 64),
}
#: /dev/shm for vLLM (tensor-parallel workers exchange data through it); vLLM's own Kubernetes example
#: (docs.vllm.ai, deployment/k8s) gives it 2Gi. Smaller containers get a quarter of their memory.
SHM_MIB = 2048
#: Default requests stay this share of the node's estimated allocatable (CPU and memory) below the free room:
#: the capacity model is within 1.5% of every public measurement (tests/test_node_capacity.py), and the
#: cloud's own per-node pods vary with the cluster version and add-ons.
HEADROOM_PERCENT = 3
CPU_STEP_M = 100
MEMORY_STEP_MIB = 1024
SMALL_MEMORY_STEP_MIB = 128


def daemon_sets(cloud: str, family: str, dra: bool) -> list[str]:
    """The library's DaemonSets that run on every node of such a pool (keys of :data:`DAEMON_SET_ROOM`)."""
    if family == "tpu":
        return ["TPU DRA kubelet plugin"]
    if not dra:
        return ["NVIDIA device plugin"] if not clouds.profile(cloud).default_device_plugin_opt_out else []
    found = ["NVIDIA DRA kubelet plugin"]
    if clouds.profile(cloud).library_installs_gpu_driver(dra):
        found.append("NVIDIA driver installer")
    return found


def _sum(parts: Sequence[CpuMemory]) -> CpuMemory:
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


@dataclass(frozen=True)
class NodeRoom:
    """One machine of a pool: what it offers pods, and what always runs there."""

    machine: str
    allocatable: CpuMemory
    reserved: CpuMemory  # the cloud's system pods and the library's DaemonSets
    capacity: CpuMemory = (0, 0)  # what the node reports as capacity (0: not given)

    @property
    def free(self) -> CpuMemory:
        return self.allocatable[0] - self.reserved[0], self.allocatable[1] - self.reserved[1]

    @property
    def headroom(self) -> CpuMemory:
        """What default requests leave unasked: :data:`HEADROOM_PERCENT` of the allocatable."""
        return self.allocatable[0] * HEADROOM_PERCENT // 100, self.allocatable[1] * HEADROOM_PERCENT // 100

    @property
    def sizable(self) -> CpuMemory:
        """The free room default requests share: ``free`` minus ``headroom``."""
        return self.free[0] - self.headroom[0], self.free[1] - self.headroom[1]


def node_room(cloud: str, machine: str, family: str, dra: bool = True) -> NodeRoom | None:
    """The room on one node of this machine; None for a machine the catalog does not know."""
    host = catalog.host_shape(machine)
    if host is None:
        return None
    profile = clouds.profile(cloud)
    reserved = _sum([profile.system_pods_reserve, *(DAEMON_SET_ROOM[d] for d in daemon_sets(cloud, family, dra))])
    return NodeRoom(machine, profile.allocatable(host), reserved, profile.capacity(host))


@dataclass(frozen=True)
class PoolRoom:
    """The smallest node of a pool (per resource, over its machine types)."""

    pool: str
    rooms: tuple[NodeRoom, ...]

    @property
    def cpu(self) -> NodeRoom:
        return min(self.rooms, key=lambda r: r.free[0])

    @property
    def memory(self) -> NodeRoom:
        return min(self.rooms, key=lambda r: r.free[1])

    @property
    def free(self) -> CpuMemory:
        return self.cpu.free[0], self.memory.free[1]

    @property
    def sizable(self) -> CpuMemory:
        return min(r.sizable[0] for r in self.rooms), min(r.sizable[1] for r in self.rooms)


def pool_room(cloud: str, pool: str, machines: Sequence[str], family: str, dra: bool = True) -> PoolRoom | None:
    """The pool's smallest room; None when a machine is unknown (the pool's own check reports it)."""
    rooms = [node_room(cloud, m, family, dra) for m in machines]
    if not rooms or any(r is None for r in rooms):
        return None
    return PoolRoom(pool, tuple(r for r in rooms if r is not None))


# ---- quantities -----------------------------------------------------------------------------


def parse_cpu(text: str) -> int:
    """Millicores of a Kubernetes CPU quantity (``"8"``, ``"7500m"``); raises ValueError."""
    value = _positive(text, "CPU")
    millicores = value * 1000
    if millicores.denominator != 1:
        raise ValueError(f"{text!r} is finer than a millicore")
    return int(millicores)


def parse_memory(text: str) -> int:
    """MiB of a Kubernetes memory quantity (``"64Gi"``, ``"512Mi"``, ``"80G"``), rounded down; raises ValueError."""
    return int(_positive(text, "memory") / 2**20)


def _positive(text: str, what: str) -> Fraction:
    try:
        value = Quantity.parse(str(text)).value
    except QuantityError as exc:
        raise ValueError(f"{text!r} is not a Kubernetes {what} quantity ({exc})") from None
    if value <= 0:
        raise ValueError(f"{text!r}: the {what} request must be more than zero")
    return value


def format_cpu(millicores: int) -> str:
    return f"{millicores // 1000}" if millicores % 1000 == 0 else f"{millicores}m"


def format_memory(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def describe(amount: CpuMemory) -> str:
    return f"{format_cpu(amount[0])} CPU, {format_memory(amount[1])} memory"


# ---- serving containers ---------------------------------------------------------------------


@dataclass(frozen=True)
class ServingResources:
    """One serving container's requests; memory is also its limit and includes ``shm_mib`` of /dev/shm."""

    cpu_m: int
    memory_mib: int

    @property
    def shm_mib(self) -> int:
        return min(SHM_MIB, self.memory_mib // 4)

    @property
    def cpu(self) -> str:
        return format_cpu(self.cpu_m)

    @property
    def memory(self) -> str:
        return format_memory(self.memory_mib)

    @property
    def shm(self) -> str:
        return format_memory(self.shm_mib)


def _floor(value: int, step: int) -> int:
    return max(step, value // step * step)


def default_resources(rooms: Sequence[PoolRoom], share: int = 1) -> ServingResources | None:
    """Each container's share of the smallest pool's free room less the headroom (None without a known pool).

    ``share``: how many serving containers share one node (pods per node x containers per pod).
    CPU is rounded down to 100m, memory to whole GiB (128 MiB steps below 4 GiB).
    """
    if not rooms:
        return None
    cpu = min(r.sizable[0] for r in rooms) // max(share, 1)
    memory = min(r.sizable[1] for r in rooms) // max(share, 1)
    memory_step = MEMORY_STEP_MIB if memory >= 4 * MEMORY_STEP_MIB else SMALL_MEMORY_STEP_MIB
    return ServingResources(_floor(cpu, CPU_STEP_M), _floor(memory, memory_step))


def fit_issues(resources: ServingResources, rooms: Sequence[PoolRoom], share: int = 1) -> list[tuple[str, str]]:
    """``(resource, message)`` for every pool whose node cannot hold ``share`` such containers."""
    issues: list[tuple[str, str]] = []
    for room in rooms:
        for index, (name, wanted) in enumerate((("cpu", resources.cpu_m), ("memory", resources.memory_mib))):
            node = room.cpu if index == 0 else room.memory
            total, free = wanted * max(share, 1), node.free[index]
            if total <= free:
                continue
            fmt = format_cpu if index == 0 else format_memory
            asked = fmt(wanted) if share <= 1 else f"{share} x {fmt(wanted)} = {fmt(total)}"
            issues.append((name, (
                f"{asked} does not fit pool {room.pool}: one {node.machine} node has {fmt(node.allocatable[index])} "
                f"allocatable, {fmt(node.reserved[index])} of it kept for system pods and DaemonSets, "
                f"so {fmt(max(free, 0))} is free")))
    return issues
