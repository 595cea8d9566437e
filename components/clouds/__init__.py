"""The seam for a cloud: what every cloud answers, and the registry of the clouds.

A :class:`CloudProfile` answers every cloud-specific question the library, the
stack program, the simulator and the policy pack ask: which labels and taints
the cloud puts on accelerator nodes and which the library must add, how a
LoadBalancer Service is kept internal, how the fallback order is expressed,
whether DRA pools can scale up from zero, which machine shapes carry which
accelerators. :func:`profile` is the only dispatch on a cloud's name, and it
refuses a cloud it does not know, so a new cloud can never silently inherit
another cloud's labels or load-balancer annotations.

Each cloud lives in a folder of its own (``clouds/gke/``, ``clouds/eks/``,
``clouds/aks/``) and registers its profile with :func:`register`; shared code
asks the registry (:func:`profile`, :func:`names`, :func:`part`) and never
names a cloud. The clouds the project ships are the one line
:data:`SHIPPED_CLOUDS`; a cloud kept elsewhere (a test's, a fork's) registers
itself the same way before it is used.
"""

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import catalog, node_capacity, zones
from .. import wiring_keys as w
from ..errors import UnknownCloudError
from ..node_selection import NodeTaint
from ..support_calendar import MinorSupport

if TYPE_CHECKING:
    from ..wiring_keys import PoolSpec

Issues = list[tuple[str, str]]
#: ``(millicores, MiB)``
CpuMemory = tuple[int, int]


class CloudProfile:
    """The questions every cloud answers; one subclass per cloud."""

    name: str = ""
    title: str = ""
    #: Modules holding this cloud's share of an area, where they are not ``<area>.<name>`` (see :func:`part`).
    parts: Mapping[str, str] = {}
    #: Accelerator families the cloud offers.
    families: tuple[str, ...] = ()
    #: How the pools' fallback order reaches the autoscaler.
    fallback_mechanism: str = ""
    #: Whether the autoscaler can add the first node of an empty DRA pool for a pending claim.
    dra_scales_from_zero: bool = False
    #: Whether the autoscaler adds nodes to a running DRA GPU pool (below its max) for a pending claim.
    dra_grows_past_min: bool = True
    #: Why it does not, where it does not (shown by the simulator and the config warning).
    dra_growth_limit: str | None = None
    #: Whether pools in a compute class carry the class's node label and taint.
    compute_class_on_nodes: bool = False
    #: The node label (and taint key) naming a node's compute class, where pools carry it.
    compute_class_label: str = ""
    #: Why GPU sharing (MIG partitions, time-sharing, MPS) is refused on this cloud's DRA pools, or None.
    dra_gpu_sharing_refused: str | None = None
    #: Where the NVIDIA driver lives on the host (None: the chart's default root, ``/``).
    nvidia_driver_root: str | None = None
    #: Whether system-node-critical pods outside kube-system need a ResourceQuota admitting them.
    critical_pods_need_quota: bool = False
    #: Whether the NVIDIA DRA driver's namespace gets that ResourceQuota unless told otherwise.
    nvidia_dra_quota_by_default: bool = False
    #: The pool argument naming its machine shape(s): ``machine_type`` or ``instance_types``.
    pool_machine_argument: str = ""
    #: The node label whose value is the name of the node's pool / node group (``make verify`` reads it).
    node_pool_label: str = ""
    #: The Pulumi resource types of the cloud's cluster and of its node pools, as a plan names them (the
    #: policy pack finds a stack's cloud, clusters and pools by them).
    cluster_type: str = ""
    pool_type: str = ""
    #: Whether a GPU pool that opts out of the cloud's own device plugin needs the library's plugins.
    default_device_plugin_opt_out: str | None = None
    #: Room left on every accelerator node for the cloud's own per-node pods (kube-proxy, logging and
    #: metrics agents, CSI and network plugins), as ``(millicores, MiB)``. A margin the library chooses,
    #: not a documented figure: those pods' requests vary with the cluster version and add-ons. It is above
    #: the requests of the non-workload pods measured on real nodes (2i2c-org/infrastructure
    #: node-capacity-info.json, commit 1097ae3c, ``measured_overhead``: kube-system and that operator's own
    #: per-node pods): GKE n2-highmem-4 443m / 596 MiB, EKS r5.xlarge 170m / 250 MiB.
    system_pods_reserve: CpuMemory = (500, 1024)
    #: Seconds between the cloud's spot reclaim notice and the end of the VM (see docs/workloads.md).
    spot_notice_seconds: int = 0
    #: The longest ``terminationGracePeriodSeconds`` a serving pod on a spot node can actually use.
    spot_pod_grace_seconds: int = 0

    #: The kubelet's hard eviction threshold for memory (MiB), subtracted from capacity.
    eviction_hard_mib: int = node_capacity.EVICTION_HARD_MIB
    #: The cloud's machines with fixed accelerators, by name (its ``machines`` module, each figure cited there).
    machines: Mapping[str, catalog.MachineShape] = {}
    #: Machine families that take attached GPUs: name prefix -> (GPU type, allowed counts).
    attachable_gpus: Mapping[str, tuple[str, tuple[int, ...]]] = {}
    #: Standard support and DRA per Kubernetes minor (its ``calendar`` module, each row cited there).
    support_calendar: Mapping[str, MinorSupport] = {}
    #: The minor a new cluster in each release channel gets by default (channel name in capitals), where the
    #: cloud upgrades a cluster below it.
    channel_default_minor: Mapping[str, str] = {}
    #: The library's public components that build this cloud's resources, by the module of ``gpu_fungibility``
    #: defining each (``from gpu_fungibility import GkeCluster``); the package and its schema collect them.
    library_components: Mapping[str, str] = {}
    #: Their public argument types, by module.
    library_args: Mapping[str, str] = {}

    def machine_shape(self, machine: str) -> catalog.MachineShape | None:
        """The shape of one of the cloud's accelerator machines, or None."""
        return self.machines.get(machine)

    def attachable(self, machine: str) -> tuple[str, tuple[int, ...]] | None:
        """(GPU type, allowed counts) when ``machine`` is of a family that takes attached GPUs, else None."""
        for prefix, spec in self.attachable_gpus.items():
            if machine.startswith(prefix):
                return spec
        return None

    def host_shape(self, machine: str) -> catalog.HostShape | None:
        """The vCPUs and memory of one of the cloud's machines the catalog knows, or None."""
        shape = self.machines.get(machine)
        if shape is None:
            return None
        return catalog.HostShape(shape.name, shape.vcpus, shape.memory_gib, shape.max_pods)

    def offers(self, accelerator_type: str) -> bool:
        """Whether a machine of the cloud carries the accelerator (fixed or attached)."""
        return (any(s.accelerator == accelerator_type for s in self.machines.values())
                or any(gpu == accelerator_type for gpu, _ in self.attachable_gpus.values()))


    def capacity(self, host: catalog.HostShape) -> CpuMemory:
        """``(millicores, MiB)`` a node of this machine reports as its capacity: every vCPU, and the nominal
        memory minus the kernel's share (the kernel's MemTotal).

        A new cloud implements this and :meth:`kube_reserved`, each figure citing the cloud's own source
        or public measurements (``tests/fixtures/node_capacity_measurements.csv``), and erring low where it
        must guess: a capacity above the real one makes pods that never schedule.
        """
        raise NotImplementedError

    def kube_reserved(self, host: catalog.HostShape) -> CpuMemory:
        """``(millicores, MiB)`` the cloud's kubelet configuration reserves (``kube-reserved`` plus
        ``system-reserved``) on a node of this machine."""
        raise NotImplementedError

    def allocatable(self, host: catalog.HostShape) -> CpuMemory:
        """``(millicores, MiB)`` a node of this machine offers pods: capacity minus what the cloud reserves
        and the hard eviction threshold."""
        cpu, memory = self.capacity(host)
        reserved_cpu, reserved_memory = self.kube_reserved(host)
        return cpu - reserved_cpu, memory - reserved_memory - self.eviction_hard_mib

    def accelerator_labels(self, family: str, dra: bool) -> dict[str, str]:
        """Labels the library puts on the nodes of an accelerator pool. By default (a cloud with no labels of its
        own for this): ``nvidia.com/gpu.present=true`` on GPU pools, plus ``nvidia.com/gpu.dra=true`` on DRA
        ones, the labels the NVIDIA DRA driver's kubelet plugin and the device plugin select on."""
        if family != "gpu":
            return {}
        return {w.GPU_PRESENT: "true", w.GPU_DRA: "true"} if dra else {w.GPU_PRESENT: "true"}

    def stack_labels(self, pool: "PoolSpec") -> dict[str, str]:
        """Labels the library sets on every node of the pool (the caller's labels last)."""
        labels = dict(self.accelerator_labels(pool.family, pool.dra))
        if pool.compute_class and self.compute_class_on_nodes:
            labels[self.compute_class_label] = pool.compute_class
        if pool.on_demand_fallback:
            labels[w.ON_DEMAND_FALLBACK] = "true"
        labels.update(pool.labels)
        return labels

    def stack_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        raise NotImplementedError

    def added_labels(self, pool: "PoolSpec") -> dict[str, str]:
        raise NotImplementedError

    def added_taints(self, pool: "PoolSpec") -> list[NodeTaint]:
        raise NotImplementedError

    def load_balancer_annotations(self, public: bool) -> dict[str, str]:
        raise NotImplementedError

    def workload_node_selector(self, pools: Sequence["PoolSpec"], compute_class: str | None) -> dict[str, str] | None:
        """The ``nodeSelector`` that steers a workload's pods (and the autoscaler) to its pools. By default the
        labels the library sets on every pool the claim can use (``nvidia.com/gpu.dra=true`` and the caller's
        shared labels): they keep pods and the autoscaler off CPU and device-plugin pools."""
        if not pools:
            return None
        common = self.stack_labels(pools[0])
        for pool in pools[1:]:
            labels = self.stack_labels(pool)
            common = {k: v for k, v in common.items() if labels.get(k) == v}
        return common or None

    def implied_tolerations(self, node_selector: Mapping[str, str]) -> list[dict[str, str]]:
        """Tolerations the cloud adds to a pod by itself (GKE: a selected compute class's taint)."""
        return []

    def built_in_device_plugins(self, family: str, node_labels: Mapping[str, str],
                                image_type: str | None = None) -> list[str]:
        """Device plugins the cloud itself runs on such nodes (descriptions; empty: none)."""
        return []

    def library_installs_gpu_driver(self, dra: bool) -> bool:
        """Whether the NVIDIA driver of a GPU pool must be installed by the library (not the cloud)."""
        return False

    def zone_findings(self, location: str, zoned: "zones.Zoned",
                      pools: "zones.PoolZones") -> tuple[Issues, list[str]]:
        """(errors, warnings) about the stack's zones against the region and the recorded offerings."""
        return [], []

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        """Problems with a pool's machine(s) for its accelerator, as (argument, message)."""
        raise NotImplementedError

    def unrecorded_machine(self, machine: str) -> str | None:
        """Why a machine outside the accelerator catalog (a system pool's) is not one the cloud has, as far as
        recorded, or None (also where nothing is recorded)."""
        return None


def machines_hint(shapes: Mapping[str, catalog.MachineShape], accelerator_type: str, count: int,
                  attachable: Mapping[str, tuple[str, tuple[int, ...]]] | None = None) -> str:
    """Which machines of the catalog fit: those with ``count`` x ``accelerator_type``, else any count of it."""
    exact = catalog.machines_for(shapes, accelerator_type, count, attachable)
    if exact:
        return f"machines with {count} x {accelerator_type}: {', '.join(exact)}"
    other = catalog.machines_for(shapes, accelerator_type, None, attachable)
    if other:
        counts = sorted({s.count for s in shapes.values() if s.accelerator == accelerator_type})
        return (f"no machine carries {count} x {accelerator_type}; machines for {accelerator_type} "
                f"(counts {', '.join(map(str, counts))}): {', '.join(other)}")
    return f"no machine of this cloud in the catalog carries {accelerator_type} (docs/machines.md lists them)"


#: The kubelet's hard eviction threshold for memory on every cloud (see node_capacity).
EVICTION_HARD_MIB = node_capacity.EVICTION_HARD_MIB
cpu_reserved_millicores = node_capacity.cpu_reserved_millicores


#: The registered clouds by name, in registration order (the shipped ones first).
PROFILES: dict[str, CloudProfile] = {}


def register(cloud: CloudProfile) -> CloudProfile:
    """Add a cloud to the registry (again under the same name: replaced, so a re-import is harmless)."""
    if not cloud.name:
        raise ValueError(f"{type(cloud).__name__} has no name")
    PROFILES[cloud.name] = cloud
    return cloud


def names() -> tuple[str, ...]:
    """The names of the registered clouds."""
    return tuple(PROFILES)


def profile(cloud: "str | CloudProfile | Any") -> CloudProfile:
    """The profile of a registered cloud (``"gke"``, ``"eks"``, ``"aks"``, or one registered later); any
    other name raises :class:`UnknownCloudError`."""
    if isinstance(cloud, CloudProfile):
        return cloud
    found = PROFILES.get(str(getattr(cloud, "value", cloud)))
    if found is None:
        raise UnknownCloudError(cloud, names())
    return found


def part(cloud: "str | CloudProfile", area: str) -> Any:
    """The module that holds a cloud's share of an area of the project (``"stacks"``, ``"preflight"``, ...).

    A profile names its modules in :attr:`CloudProfile.parts`; an area it does not name is looked up by
    the house rule, the module ``<area>.<cloud>`` (``stacks.gke``). Raises :class:`UnknownCloudError` for an
    unknown cloud and ``ModuleNotFoundError`` when the cloud has no module for the area.
    """
    found = profile(cloud)
    return importlib.import_module(found.parts.get(area) or f"{area}.{found.name}")


def optional_part(cloud: "str | CloudProfile", area: str) -> Any:
    """:func:`part`, or None where the cloud has no module for the area (it takes the area's shared behaviour).

    A module that exists but fails to import still raises: only the absence of the cloud's own module is an
    answer.
    """
    found = profile(cloud)
    expected = found.parts.get(area) or f"{area}.{found.name}"
    try:
        return part(found, area)
    except ModuleNotFoundError as exc:
        if exc.name == expected:
            return None
        raise


#: The clouds the project ships, each the folder of the same name beside this file. A new cloud adds its
#: folder and its name here.
SHIPPED_CLOUDS = ("gke", "eks", "aks")

#: Modules of clouds kept outside the library (comma-separated importable names), each registering its
#: profile when imported. Every process of the project that asks about clouds (the program, the policy
#: pack's server, the simulator) imports this package, so one variable reaches them all.
EXTRA_CLOUDS_ENV = "GPU_FUNGIBILITY_CLOUDS"

for _name in SHIPPED_CLOUDS:
    importlib.import_module(f"{__name__}.{_name}")
del _name


def load_extra_clouds(spec: str | None = None) -> tuple[str, ...]:
    """Import the modules named in ``spec`` (default: ``$GPU_FUNGIBILITY_CLOUDS``); returns their names."""
    import os

    modules = tuple(m.strip() for m in (os.environ.get(EXTRA_CLOUDS_ENV, "") if spec is None else spec).split(",")
                    if m.strip())
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                raise ImportError(f"{EXTRA_CLOUDS_ENV} names {module!r}, which is not importable here (is its "
                                  "folder on PYTHONPATH?)") from exc
            raise
    return modules


load_extra_clouds()


def __getattr__(attribute: str) -> Any:
    if attribute == "CLOUDS":  # the registered names, read when asked (a cloud may register later)
        return names()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
