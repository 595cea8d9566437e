"""ZKC, a fictitious fourth cloud kept outside the project: its profile, registered the way a cloud kept
elsewhere registers itself, and its own share of each area, named in its profile's ``parts``: its library
components (:mod:`.components`, the pool on the same base as every cloud's), its stack arguments and
composition (:mod:`.arguments`, :mod:`.stack`), its offline-plan mocks (:mod:`.offline_plan`) and its share
of the policy pack (:mod:`.pack`, :mod:`.pack_rules`). No shared file of the project knows it.

Its pools are ``zkc:index/nodePool:NodePool`` resources; its nodes are labelled ``zkc.example/pool=<name>``
and GPU nodes tainted ``nvidia.com/gpu=present:NoSchedule``; the order of a claim's alternatives is the pools'
``zkc.example/priority`` resource label, highest first.
"""

from collections.abc import Sequence

from gpu_fungibility import wiring_keys as w
from gpu_fungibility.catalog import HostShape, MachineShape, shapes
from gpu_fungibility.clouds import CloudProfile, CpuMemory, Issues, register
from gpu_fungibility.node_capacity import MIB_PER_GIB, cpu_reserved_millicores
from gpu_fungibility.node_selection import NodeTaint
from gpu_fungibility.wiring_keys import PoolSpec

POOL_LABEL = "zkc.example/pool"
PRIORITY_LABEL = "zkc.example/priority"


class Zkc(CloudProfile):
    name, title = "zkc", "ZKC"
    parts = {"policies": "tests.zkc.pack", "policies.rules": "tests.zkc.pack_rules", "stacks": "tests.zkc.stack",
             "stacks.arguments": "tests.zkc.arguments", "offline_plan": "tests.zkc.offline_plan"}
    families = ("gpu",)
    fallback_mechanism = "pool priority labels"
    dra_scales_from_zero = True
    pool_machine_argument = "machine_type"
    spot_notice_seconds, spot_pod_grace_seconds = 60, 30
    node_pool_label = POOL_LABEL
    cluster_type, pool_type = "zkc:index/cluster:Cluster", "zkc:index/nodePool:NodePool"
    machines = shapes(MachineShape("z1-gpu-1", "nvidia-l4", 1, "zkc", vcpus=8, memory_gib=32),
                      MachineShape("z1-gpu-8", "nvidia-h100-80gb", 8, "zkc", vcpus=208, memory_gib=1872))

    def capacity(self, host: HostShape) -> CpuMemory:
        nominal = host.memory_gib * MIB_PER_GIB
        return host.vcpus * 1000, int(nominal * 0.95)

    def kube_reserved(self, host: HostShape) -> CpuMemory:
        return cpu_reserved_millicores(host.vcpus), 1024

    def stack_taints(self, pool: PoolSpec) -> list[NodeTaint]:
        return []

    def added_labels(self, pool: PoolSpec) -> dict[str, str]:
        return {POOL_LABEL: pool.name}

    def added_taints(self, pool: PoolSpec) -> list[NodeTaint]:
        return [NodeTaint(w.GPU_TAINT_KEY, "present", "NoSchedule")]

    def load_balancer_annotations(self, public: bool) -> dict[str, str]:
        return {} if public else {"zkc.example/internal": "true"}

    def workload_node_selector(self, pools: Sequence[PoolSpec], compute_class: str | None) -> dict[str, str] | None:
        return {w.GPU_DRA: "true"} if pools and all(p.dra for p in pools) else None

    def pool_shape_issues(self, family: str, accelerator_type: str, accelerator_count: int,
                          machine_types: Sequence[str], topology: str | None = None) -> Issues:
        shape = self.machine_shape(machine_types[0]) if machine_types else None
        if shape is None:
            return [("machine_type", f"one of {', '.join(self.machines)}")]
        if (shape.accelerator, shape.count) != (accelerator_type, accelerator_count):
            return [("accelerator", f"{shape.name} carries {shape.count} x {shape.accelerator}")]
        return []


PROFILE = register(Zkc())
