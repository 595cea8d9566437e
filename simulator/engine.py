"""The simulation: where each replica lands, with real scheduler and autoscaler semantics.

The cluster starts with every pool at ``autoscaling.min`` nodes. Replicas are
placed one at a time, workload by workload in the order of the objects:

1. **Scheduler.** An existing node is used when the pod's nodeSelector,
   required affinity and tolerations allow it and its claims can be
   allocated there (:mod:`simulator.allocator`). Nodes are tried in pool
   priority order, oldest first, and the first that fits wins on 1.34; from
   1.35 the scheduler scores nodes by the rank of the ``firstAvailable``
   alternatives their allocation uses, so the best-ranked fit wins.
2. **Cluster autoscaler.** Otherwise the highest-priority pool (compute class
   order on GKE, priority expander order on EKS) whose new node would fit the
   pod grows by one node, unless it is at ``max``, stocked out, or (EKS) a
   DRA group with no node to copy devices from: the upstream autoscaler
   cannot model DRA devices of an empty AWS node group.
3. Otherwise the replica is **pending**, with the reason.

A pod whose selector raises a CEL runtime error stays pending with that
error (the scheduler aborts allocation for it). A shared claim is allocated
with its first pod; later pods must go to the same node.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gpu_fungibility import clouds
from gpu_fungibility.dra_cel import CelEvaluationError

from simulator.allocator import Allocator, MissingDeviceClass, Pick
from simulator.cluster import ClusterBuilder, SimNode, SimPool, pool_priority_order
from simulator.scheduling import node_predicates
from simulator.workloads import PodSpec, device_classes, pod_specs
from stacks.config import StackConfig

SCHEDULED, PENDING = "scheduled", "pending"


@dataclass(frozen=True)
class ReplicaPlacement:
    workload: str
    replica: int  # 1-based
    status: str  # scheduled | pending
    pool: str | None = None
    node: str | None = None
    devices: tuple[str, ...] = ()
    tensor_parallel_size: int | None = None
    reason: str | None = None
    alternatives: tuple[str, ...] = ()  # the request/subrequest each claim request used


@dataclass(frozen=True)
class PoolUsage:
    name: str
    priority: int
    min: int
    max: int
    nodes: int  # at the end of the simulation
    stocked_out: bool
    devices_per_node: int
    devices_in_use: int


@dataclass
class SimulationResult:
    cloud: str
    replicas: list[ReplicaPlacement]
    pools: list[PoolUsage]
    warnings: list[str] = field(default_factory=list)

    def of(self, workload: str) -> list[ReplicaPlacement]:
        return [r for r in self.replicas if r.workload == workload]


class SimulationError(ValueError):
    """The request names something the stack does not have (a workload, a pool)."""


@dataclass
class _SharedState:
    node: SimNode
    picks: list[Pick]


class Simulation:
    def __init__(self, cfg: StackConfig, objects: list[Mapping[str, Any]], stockout: Collection[str]):
        self.cfg = cfg
        self.profile = clouds.profile(cfg.cluster.cloud)
        classes, self.class_problems = device_classes(objects)
        self.allocator = Allocator(classes, self.class_problems)
        # Kubernetes 1.35 scores nodes by the rank of the firstAvailable alternatives they satisfy
        # (kubernetes/kubernetes#134711); 1.34 takes the first node that fits.
        major, minor = (int(x) for x in cfg.cluster.minor_version.split("."))
        self.scores_prioritized_list = (major, minor) >= (1, 35)
        self.builder = ClusterBuilder(cfg)
        self.pools = [
            SimPool(name, cfg.node_pools[name], i, name in stockout)
            for i, name in enumerate(pool_priority_order(cfg))
        ]
        self.templates = {p.name: self.builder.node(p.name, 0, template=True) for p in self.pools}
        for pool in self.pools:
            for _ in range(pool.min):
                self._add_node(pool)
        self.shared: dict[str, _SharedState] = {}
        self._failed: set[tuple[int, str]] = set()  # (pod spec id, node) known not to fit: nodes only fill up
        self._predicates: dict[tuple[int, str], str | None] = {}  # (pod spec id, pool) -> predicate reason

    def _add_node(self, pool: SimPool) -> SimNode:
        node = self.builder.node(pool.name, len(pool.nodes))
        pool.nodes.append(node)
        return node

    # ---- placement ----
    def place(self, pod: PodSpec, replica: int) -> ReplicaPlacement:
        if pod.problem:
            return self._pending(pod, replica, pod.problem)
        try:
            placed = self._existing(pod) or self._scale_up(pod)
        except CelEvaluationError as exc:
            return self._pending(pod, replica, f"CEL runtime error: {exc.detail} (in {exc.expression!r})")
        except MissingDeviceClass as exc:
            return self._pending(pod, replica, str(exc))
        if isinstance(placed, str):
            return self._pending(pod, replica, placed)
        node, picks = placed
        return self._scheduled(pod, replica, node, picks)

    def _pool_predicates(self, pod: PodSpec, pool: SimPool) -> str | None:
        key = (id(pod), pool.name)
        if key not in self._predicates:
            self._predicates[key] = node_predicates(pod, self.templates[pool.name])
        return self._predicates[key]

    def _unallocated(self, pod: PodSpec) -> list:
        return [c for c in pod.claims if not (c.shared and c.source in self.shared)]

    def _fit(self, pod: PodSpec, node: SimNode) -> list[Pick] | None:
        """New picks for the pod's claims not yet allocated, or None."""
        return self.allocator.allocate(self._unallocated(pod), node)

    def _commit(self, pod: PodSpec, node: SimNode, new: list[Pick]) -> tuple[SimNode, list[Pick]]:
        """Mark the new devices in use; the pod's picks are the new ones plus its shared claims'."""
        picks: list[Pick] = []
        for claim in pod.claims:
            if claim.shared and claim.source in self.shared:
                picks.extend(replace(p, claim=claim.entry) for p in self.shared[claim.source].picks)
                continue
            mine = [p for p in new if p.claim == claim.entry]
            if claim.shared:
                self.shared[claim.source] = _SharedState(node, mine)
            picks.extend(mine)
        node.allocated.update(p.device.uid for p in new)
        return node, picks

    def _existing(self, pod: PodSpec) -> tuple[SimNode, list[Pick]] | None:
        """The first node that fits; from 1.35 the one whose allocation uses the best-ranked alternatives."""
        pinned = {self.shared[c.source].node.name for c in pod.claims if c.shared and c.source in self.shared}
        best: tuple[int, SimNode, list[Pick]] | None = None
        for pool in self.pools:
            if self._pool_predicates(pod, pool):
                continue
            for node in pool.nodes:
                if pinned and node.name not in pinned:
                    continue
                key = (id(pod), node.name)
                if key in self._failed:
                    continue
                picks = self._fit(pod, node)
                if picks is None:
                    self._failed.add(key)
                    continue
                rank = sum(p.alternative.rank for p in picks) if self.scores_prioritized_list else 0
                if best is None or rank < best[0]:
                    best = (rank, node, picks)
                if rank == 0:
                    return self._commit(pod, node, picks)
        return None if best is None else self._commit(pod, best[1], best[2])

    def _scale_up(self, pod: PodSpec) -> tuple[SimNode, list[Pick]] | str:
        pinned = [(c.source, self.shared[c.source].node) for c in pod.claims if c.shared and c.source in self.shared]
        if pinned:
            source, node = pinned[0]
            return (f"no capacity: shared {source} is allocated on {node.name}, "
                    f"which cannot take another pod with these claims")
        eligible, blocked, unfit = 0, [], []
        for pool in self.pools:
            if self._pool_predicates(pod, pool):
                continue
            eligible += 1
            if self._fit(pod, self.templates[pool.name]) is None:
                unfit.append(pool.name)
                continue
            blocker = self._cannot_grow(pool)
            if blocker:
                blocked.append((pool, blocker))
                continue
            node = self._add_node(pool)
            picks = self._fit(pod, node)
            assert picks is not None, "a new node is identical to its pool's template"
            return self._commit(pod, node, picks)
        if not eligible:
            return "no matching pool: no pool's labels and taints admit the pod (nodeSelector, affinity, tolerations)"
        if not blocked:
            return f"no alternative matches: the claim cannot be satisfied on a node of {', '.join(unfit)}"
        details = "; ".join(f"{pool.name} {why}" for pool, why in blocked)
        if all(pool.stocked_out for pool, _ in blocked):
            return f"stocked out: {details}"
        return f"no capacity: {details}"

    def _cannot_grow(self, pool: SimPool) -> str | None:
        if pool.stocked_out:
            running = len(pool.nodes)
            return f"is stocked out ({running} node{'s' if running != 1 else ''} running, none with room)"
        if len(pool.nodes) >= pool.max:
            return f"is at max ({pool.max} node{'s' if pool.max != 1 else ''}, none with room)"
        if not pool.nodes and pool.config.dra and not self._scales_from_zero(pool):
            if not self.profile.dra_scales_from_zero:
                return (f"has no node: the {self.profile.title} autoscaler cannot model the DRA devices of an "
                        "empty pool (keep min >= 1)")
            return (f"has no node and lacks the label that lets the {self.profile.title} autoscaler scale a "
                    "DRA pool from zero")
        return None

    def _scales_from_zero(self, pool: SimPool) -> bool:
        """Whether the autoscaler can add the first node of an empty DRA pool for a pending claim."""
        if not self.profile.dra_scales_from_zero:
            return False
        labels = self.templates[pool.name].labels
        wanted = self.profile.accelerator_labels(pool.config.family, dra=True)
        return all(labels.get(k) == v for k, v in wanted.items())

    # ---- results ----
    def _pending(self, pod: PodSpec, replica: int, reason: str) -> ReplicaPlacement:
        return ReplicaPlacement(pod.workload, replica, PENDING, reason=reason)

    def _scheduled(self, pod: PodSpec, replica: int, node: SimNode, picks: list[Pick]) -> ReplicaPlacement:
        return ReplicaPlacement(
            pod.workload, replica, SCHEDULED, pool=node.pool, node=node.name,
            devices=tuple(p.device.name for p in picks),
            tensor_parallel_size=_tensor_parallel_size(pod, picks),
            alternatives=tuple(dict.fromkeys(f"{p.claim}:{p.alternative.label}" for p in picks)),
        )

    def usage(self) -> list[PoolUsage]:
        return [
            PoolUsage(p.name, p.priority, p.min, p.max, len(p.nodes), p.stocked_out,
                      len(self.templates[p.name].devices), sum(len(n.allocated) for n in p.nodes))
            for p in self.pools
        ]


def _tensor_parallel_size(pod: PodSpec, picks: list[Pick]) -> int:
    """Devices the serving container sees: what ``nvidia-smi -L | wc -l`` (or the TPU runtime) counts."""
    if not pod.counted:
        return len(picks)
    seen = {p.device.uid for p in picks
            if any(p.claim == entry and (request is None or p.alternative.request == request)
                   for entry, request in pod.counted)}
    return len(seen)


def simulate(
    cfg: StackConfig,
    objects: list[dict],
    replicas: Mapping[str, int] | None = None,
    stockout: Collection[str] = frozenset(),
) -> SimulationResult:
    """Place every replica of every workload the objects define.

    ``replicas`` overrides a workload's replica count (others keep their
    Deployment's); ``stockout`` names pools that cannot add nodes. Raises
    SimulationError for an unknown workload or pool.
    """
    unknown_pools = sorted(set(stockout) - set(cfg.node_pools))
    if unknown_pools:
        raise SimulationError(
            f"unknown pool{'s' if len(unknown_pools) > 1 else ''} in stockout: {', '.join(unknown_pools)} "
            f"(pools: {', '.join(cfg.node_pools) or 'none'})")
    pods = pod_specs(cfg, objects, replicas)
    known = [p.workload for p in pods]
    unknown = sorted(set(replicas or {}) - set(known))
    if unknown:
        raise SimulationError(
            f"unknown workload{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)} "
            f"(workloads with claims in the plan: {', '.join(known) or 'none'})")
    for name, count in (replicas or {}).items():
        if count < 0:
            raise SimulationError(f"replicas for {name} must be >= 0, got {count}")
    simulation = Simulation(cfg, objects, stockout)
    warnings = [problem for problem in simulation.class_problems.values()]
    missing = [w for w in cfg.workloads if w not in known]
    if missing:
        warnings.append(f"workloads without a Deployment with claims in the objects: {', '.join(missing)}")
    placements = [simulation.place(pod, r) for pod in pods for r in range(1, pod.replicas + 1)]
    return SimulationResult(cfg.cluster.cloud, placements, simulation.usage(), warnings)
