"""The simulation: where each replica lands, with the scheduler and autoscaler of the stack's version.

The cluster starts with every pool at ``autoscaling.min`` nodes. Replicas are
placed one at a time, workload by workload in the order of the objects:

1. **Scheduler.** A running node can take the pod when its nodeSelector,
   required affinity and tolerations allow it, its claims can be allocated
   there (:mod:`simulator.allocator`), and its CPU and memory requests fit
   next to what already runs there (the cloud's system pods, the stack's
   DaemonSets and earlier replicas; :meth:`simulator.cluster.ClusterBuilder.room`).
   When several running nodes can, they are scored the way the default profile
   of the stack's minor scores them (:mod:`simulator.scoring`: NodeAffinity's
   preferred terms, TaintToleration, LeastAllocated, BalancedAllocation,
   PodTopologySpread's system defaults, and from 1.35 DynamicResources' score
   for the ``firstAvailable`` rank, kubernetes/kubernetes#134711) and the
   highest total wins. Where totals tie, or lie within what the simulator
   cannot know (a node's zone in a multi-zone pool, its machine among a
   group's instance types, a cached image), which one the scheduler takes
   is not known (1.34 picks at random, 1.35 and 1.36 take the tied node
   first in an order the simulator does not model, :mod:`simulator.scoring`):
   the simulation follows every such choice and reports every outcome it
   leads to. Nodes of one pool in the same state are one choice.
2. **Cluster autoscaler.** Otherwise the highest-priority pool (compute class
   order on GKE, priority expander order on EKS) whose new node would fit the
   pod grows by one node, unless it is at ``max``, stocked out, or (EKS) a
   DRA group with no node to copy devices from.
3. Otherwise the replica is **pending**, with the reason (which resource ran
   out, which pool could not grow).

**Spot reclaim** (``reclaim``): after every replica is placed, one running
node of each named spot pool is lost (the first one serving a replica), the
pool cannot replace it (the capacity went away), and the replicas it served
are placed again.

Following every choice multiplies the outcomes; past :data:`MAX_BRANCHES`
the simulation keeps one and reports, for each later replica, every pool
whose node could take it (less precise, never more certain than the cluster).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpu_fungibility import clouds, mig_geometry, sizing
from gpu_fungibility.dra_cel import CelEvaluationError
from gpu_fungibility.versions import later_all_takes_the_first_alternative

from simulator import node_choice, recovery, scoring
from simulator.allocator import Allocator, ConstraintError, MissingDeviceClass, Pick, SearchAbandoned
from simulator.cluster import ClusterBuilder, SimNode, SimPool, pool_priority_order
from simulator.dra_features import DraFeatures
from simulator.results import (
    PENDING,
    SCHEDULED,
    Outcome,
    Placements,
    PoolUsage,
    SimulationResult,
    placement,
)
from simulator.scheduling import node_predicates
from simulator.workloads import ClaimSpec, PodSpec, device_classes, pod_specs
from stacks.config import StackConfig

#: Distinct ways the cluster can unfold that the simulation follows before it stops enumerating.
MAX_BRANCHES = 64
#: The most replicas the simulation places per workload: a million fits in bounded time and memory
#: (bench/bench_simulator_replicas.py prints both); callers refuse more up front instead of ending in a MemoryError.
MAX_REPLICAS = 1_000_000


class SimulationError(ValueError):
    """The request names something the stack does not have (a workload, a pool), or reclaims an on-demand pool."""


# ---- the cluster's state in one unfolding ----------------------------------------------------------


@dataclass(frozen=True)
class NodeState:
    in_use: frozenset[str] = frozenset()  # device uids
    cpu_m: int = 0
    memory_mib: int = 0
    replicas: tuple[tuple[str, int], ...] = ()  # (workload, replica) served
    lost: bool = False

    @functools.cached_property
    def equivalence(self) -> tuple:
        """Equal for nodes of one pool the scheduler cannot tell apart (the same devices and room in use)."""
        return tuple(sorted(d.split("/", 1)[1] for d in self.in_use)), self.cpu_m, self.memory_mib


@dataclass(frozen=True)
class SharedAllocation:
    pool: int
    node: int
    picks: tuple[Pick, ...]


@dataclass
class Branch:
    """One unfolding: every pool's nodes, the shared claims' allocations, each replica's outcome."""

    nodes: tuple[tuple[NodeState, ...], ...]
    shared: dict[str, SharedAllocation]
    history: dict[tuple[str, int], Outcome]
    stocked_out: frozenset[int] = frozenset()
    reclaimed: tuple[tuple[int, int], ...] = ()

    def child(self) -> Branch:
        return Branch(self.nodes, dict(self.shared), dict(self.history), self.stocked_out, self.reclaimed)

    def set_node(self, pool: int, index: int, state: NodeState) -> None:
        nodes = list(self.nodes[pool])
        if index == len(nodes):
            nodes.append(state)
        else:
            nodes[index] = state
        self.nodes = (*self.nodes[:pool], tuple(nodes), *self.nodes[pool + 1:])


@dataclass(frozen=True)
class _Choice:
    pool: int
    node: int
    picks: tuple[Pick, ...]
    rank: int


class Simulation:
    def __init__(self, cfg: StackConfig, objects: list[Mapping[str, Any]], stockout: Collection[str]):
        self.cfg = cfg
        self.profile = clouds.profile(cfg.cluster.cloud)
        classes, self.class_problems = device_classes(objects)
        self.allocator = Allocator(classes, self.class_problems,
                                   later_all_quirk=later_all_takes_the_first_alternative(cfg.cluster.minor_version),
                                   features=DraFeatures.at(cfg.cluster.minor_version))
        # The default profile's score plugins at the stack's minor (prioritized-list scoring from 1.35).
        self.scoring = scoring.default_profile(cfg.cluster.minor_version)
        self.scores_prioritized_list = self.scoring.scores_prioritized_list
        self.builder = ClusterBuilder(cfg, self.allocator.features)
        for pool_name, layout in self.builder.mig.items():  # never round an over-full GPU up to one set
            problem = mig_geometry.layout_problem(cfg.node_pools[pool_name].accelerator.type, layout)
            if problem:
                raise SimulationError(f"pool {pool_name}: its GPUs cannot be cut into the MIG slices its "
                                      f"workloads ask for: {problem}")
        self.pools = [SimPool(name, cfg.node_pools[name], i, name in stockout, self.profile.dra_grows_past_min)
                      for i, name in enumerate(pool_priority_order(cfg))]
        self.templates = [self.builder.node(p.name, 0, template=True) for p in self.pools]
        self._nodes: dict[tuple[int, int], SimNode] = {}
        self._fits: dict[tuple, tuple[Pick, ...] | SearchAbandoned | None] = {}
        self._predicates: dict[tuple[int, int], str | None] = {}
        self.enumerated = True

    def node(self, pool: int, index: int) -> SimNode:
        key = (pool, index)
        if key not in self._nodes:
            self._nodes[key] = self.builder.node(self.pools[pool].name, index)
        return self._nodes[key]

    def start(self) -> Branch:
        return Branch(tuple(tuple(NodeState() for _ in range(p.min)) for p in self.pools), {}, {})

    # ---- one replica ----
    def place(self, branch: Branch, pod: PodSpec, key: tuple[str, int], note: str | None = None) -> list[Branch]:
        """Every branch placing this replica can lead to (one per distinct scheduler choice)."""
        if pod.problem:
            return [self._record(branch, key, Outcome(PENDING, reason=pod.problem, note=note))]
        try:
            choices, shortages = self._running(branch, pod)
            if not choices:
                scaled = self._scale_up(branch, pod, shortages)
                if isinstance(scaled, str):
                    return [self._record(branch, key, Outcome(PENDING, reason=scaled, note=note))]
                choices = [scaled]
        except CelEvaluationError as exc:
            reason = f"CEL runtime error: {exc.detail} (in {exc.expression!r})"
            return [self._record(branch, key, Outcome(PENDING, reason=reason, note=note))]
        except (MissingDeviceClass, SearchAbandoned, ConstraintError) as exc:
            return [self._record(branch, key, Outcome(PENDING, reason=str(exc), note=note))]
        return [self._commit(branch.child() if len(choices) > 1 else branch, pod, key, choice, note)
                for choice in choices]

    def _record(self, branch: Branch, key: tuple[str, int], outcome: Outcome) -> Branch:
        branch.history[key] = outcome
        return branch

    def _pool_predicates(self, pod: PodSpec, pool: int) -> str | None:
        key = (id(pod), pool)
        if key not in self._predicates:
            self._predicates[key] = node_predicates(pod, self.templates[pool])
        return self._predicates[key]

    def _unallocated(self, branch: Branch, pod: PodSpec) -> list[ClaimSpec]:
        return [c for c in pod.claims if not (c.shared and c.source in branch.shared)]

    def _fit(self, branch: Branch, pod: PodSpec, node: SimNode, in_use: frozenset[str]) -> tuple[Pick, ...] | None:
        claims = self._unallocated(branch, pod)
        key = (id(pod), node.name, in_use, tuple(c.source for c in claims))
        if key not in self._fits:
            try:
                picks = self.allocator.allocate(claims, node, in_use)
                self._fits[key] = None if picks is None else tuple(picks)
            except SearchAbandoned as exc:
                self._fits[key] = exc  # the same search again would be abandoned again
        fit = self._fits[key]
        if isinstance(fit, SearchAbandoned):
            raise fit
        return fit

    @staticmethod
    def _short(pod: PodSpec, room: tuple[int, int], state: NodeState) -> list[str]:
        """The resources the node lacks for the pod, described."""
        free = room[0] - state.cpu_m, room[1] - state.memory_mib
        short = []
        if pod.cpu_m > free[0]:
            short.append(f"cpu (requests {sizing.format_cpu(pod.cpu_m)}, {sizing.format_cpu(max(free[0], 0))} free)")
        if pod.memory_mib > free[1]:
            short.append(f"memory (requests {sizing.format_memory(pod.memory_mib)}, "
                         f"{sizing.format_memory(max(free[1], 0))} free)")
        return short

    def _running(self, branch: Branch, pod: PodSpec) -> tuple[list[_Choice], list[str]]:
        """The scheduler's choices among running nodes, and the nodes that lacked CPU or memory."""
        pinned = {(s.pool, s.node) for c in pod.claims if c.shared and (s := branch.shared.get(c.source))}
        choices: list[_Choice] = []
        shortages: list[str] = []
        alike: dict[tuple, int] = {}  # (pool, equivalence) -> feasible nodes the choice stands for
        for p in range(len(self.pools)):
            if self._pool_predicates(pod, p):
                continue
            seen: set[tuple] = set()
            for i, state in enumerate(branch.nodes[p]):
                if state.lost or (pinned and (p, i) not in pinned):
                    continue
                if state.equivalence in seen and not pinned:
                    if (p, state.equivalence) in alike:
                        alike[(p, state.equivalence)] += 1
                    continue  # the same as an earlier node of this pool: the same choice
                seen.add(state.equivalence)
                node = self.node(p, i)
                picks = self._fit(branch, pod, node, state.in_use)
                if picks is None:
                    continue
                short = self._short(pod, node.room, state)
                if short:
                    shortages.append(f"{node.name} lacks {' and '.join(short)}")
                    continue
                rank = sum(pick.alternative.rank for pick in picks)
                choices.append(_Choice(p, i, picks, rank))
                alike[(p, state.equivalence)] = 1
        if len(choices) > 1:
            counts = [alike.get((c.pool, branch.nodes[c.pool][c.node].equivalence), 1) for c in choices]
            choices = node_choice.best_scored(self, branch, pod, choices, counts)
        return choices, shortages

    def _scale_up(self, branch: Branch, pod: PodSpec, shortages: list[str]) -> _Choice | str:
        prefix = _shortage_prefix(shortages)
        pinned = [(c.source, s) for c in pod.claims if c.shared and (s := branch.shared.get(c.source))]
        if pinned:
            source, shared = pinned[0]
            name = self.node(shared.pool, shared.node).name
            return prefix + (f"no capacity: shared {source} is allocated on {name}, "
                             "which cannot take another pod with these claims")
        eligible, blocked, unfit, too_small = 0, [], [], []
        for p, pool in enumerate(self.pools):
            if self._pool_predicates(pod, p):
                continue
            eligible += 1
            template = self.templates[p]
            if self._fit(branch, pod, template, frozenset()) is None:
                unfit.append(pool.name)
                continue
            short = self._short(pod, template.room, NodeState())
            if short:
                too_small.append(f"one {template.machine} node of {pool.name} has room for less "
                                 f"({' and '.join(short)})")
                continue
            blocker = self._cannot_grow(branch, p)
            if blocker:
                blocked.append((pool, blocker))
                continue
            index = len(branch.nodes[p])
            node = self.node(p, index)
            picks = self._fit(branch, pod, node, frozenset())
            assert picks is not None, "a new node is identical to its pool's template"
            return _Choice(p, index, picks, 0)
        if not eligible:
            return "no matching pool: no pool's labels and taints admit the pod (nodeSelector, affinity, tolerations)"
        if not blocked:
            if too_small:
                resource = "memory" if all("memory" in t for t in too_small) else "cpu"
                return prefix + f"insufficient {resource}: " + "; ".join(too_small)
            return f"no alternative matches: the claim cannot be satisfied on a node of {', '.join(unfit)}"
        details = "; ".join(f"{pool.name} {why}" for pool, why in blocked)
        if all(pool.stocked_out or self.pools.index(pool) in branch.stocked_out for pool, _ in blocked):
            return prefix + f"stocked out: {details}"
        return prefix + f"no capacity: {details}"

    def _cannot_grow(self, branch: Branch, p: int) -> str | None:
        pool = self.pools[p]
        running = sum(not s.lost for s in branch.nodes[p])
        if pool.stocked_out or p in branch.stocked_out:
            why = "reclaimed and stocked out" if p in branch.stocked_out else "stocked out"
            return f"is {why} ({running} node{'s' if running != 1 else ''} running, none with room)"
        if running >= pool.max and pool.held_at_min:
            return (f"is at min ({pool.max} node{'s' if pool.max != 1 else ''}, none with room; max "
                    f"{pool.config.autoscaling.max} is not reached: {self.profile.dra_growth_limit})")
        if running >= pool.max:
            return f"is at max ({pool.max} node{'s' if pool.max != 1 else ''}, none with room)"
        if not running and pool.config.dra and not self._scales_from_zero(p):
            if not self.profile.dra_scales_from_zero:
                return (f"has no node: the {self.profile.title} autoscaler cannot model the DRA devices of an "
                        "empty pool (keep min >= 1)")
            return (f"has no node and lacks the label that lets the {self.profile.title} autoscaler scale a "
                    "DRA pool from zero")
        return None

    def _scales_from_zero(self, p: int) -> bool:
        """Whether the autoscaler can add the first node of an empty DRA pool for a pending claim."""
        if not self.profile.dra_scales_from_zero:
            return False
        labels = self.templates[p].labels
        wanted = self.profile.accelerator_labels(self.pools[p].config.family, dra=True)
        return all(labels.get(k) == v for k, v in wanted.items())

    def _commit(self, branch: Branch, pod: PodSpec, key: tuple[str, int], choice: _Choice,
                note: str | None) -> Branch:
        nodes = branch.nodes[choice.pool]
        state = nodes[choice.node] if choice.node < len(nodes) else NodeState()
        picks: list[Pick] = []
        for claim in pod.claims:
            shared = branch.shared.get(claim.source) if claim.shared else None
            if shared is not None:
                picks.extend(replace(p, claim=claim.entry) for p in shared.picks)
                continue
            mine = tuple(p for p in choice.picks if p.claim == claim.entry)
            if claim.shared:
                branch.shared[claim.source] = SharedAllocation(choice.pool, choice.node, mine)
            picks.extend(mine)
        branch.set_node(choice.pool, choice.node, NodeState(
            state.in_use | {p.device.uid for p in choice.picks if not p.alternative.admin_access},
            state.cpu_m + pod.cpu_m,
            state.memory_mib + pod.memory_mib, (*state.replicas, key)))
        node = self.node(choice.pool, choice.node)
        branch.history[key] = Outcome(
            SCHEDULED, pool=node.pool, node=node.name, devices=tuple(p.device.name for p in picks),
            tensor_parallel_size=_tensor_parallel_size(pod, picks), alternatives=_labels(pod, picks), note=note)
        return branch

    # ---- spot reclaim ----
    def reclaim(self, branch: Branch, pool_names: list[str], pods: Mapping[str, PodSpec]) -> list[Branch]:
        """Lose one running node of each pool; re-place the replicas it served. Returns the branches that follows."""
        displaced: list[tuple[tuple[str, int], str]] = []
        for name in pool_names:
            p = next(i for i, pool in enumerate(self.pools) if pool.name == name)
            running = [(i, s) for i, s in enumerate(branch.nodes[p]) if not s.lost]
            if not running:
                continue
            index, state = next(((i, s) for i, s in running if s.replicas), running[0])
            lost_name = self.node(p, index).name
            branch.set_node(p, index, replace(state, lost=True))
            branch.stocked_out = branch.stocked_out | {p}
            branch.reclaimed = (*branch.reclaimed, (p, index))
            for source, shared in list(branch.shared.items()):
                if (shared.pool, shared.node) == (p, index):
                    del branch.shared[source]  # the claim is deallocated and allocated again
            displaced += [(key, lost_name) for key in state.replicas]
        branches = [branch]
        for key, lost_name in sorted(displaced, key=lambda d: _order(d[0], pods)):
            note = f"rescheduled: {lost_name} was reclaimed"
            branches = [child for b in branches for child in self.place(b, pods[key[0]], key, note)]
        return branches

    # ---- results ----
    def usage(self, branches: list[Branch]) -> list[PoolUsage]:
        first = branches[0]
        usage = []
        for p, pool in enumerate(self.pools):
            nodes = [sum(not s.lost for s in b.nodes[p]) for b in branches]
            in_use = [sum(len(s.in_use) for s in b.nodes[p] if not s.lost) for b in branches]
            usage.append(PoolUsage(
                pool.name, pool.priority, pool.min, pool.max, nodes[0], pool.stocked_out,
                len(self.templates[p].devices), in_use[0], (min(nodes), max(nodes)), (min(in_use), max(in_use)),
                tuple(self.node(p, i).name for q, i in first.reclaimed if q == p)))
        return usage

    def possible_anywhere(self, branch: Branch, pod: PodSpec) -> list[Outcome]:
        """Every pool whose node could take the pod (once enumeration stopped): the honest range."""
        if pod.problem:
            return [Outcome(PENDING, reason=pod.problem)]
        found = []
        for p, pool in enumerate(self.pools):
            if self._pool_predicates(pod, p):
                continue
            template = self.templates[p]
            try:
                picks = self._fit(branch, pod, template, frozenset())
            except (CelEvaluationError, MissingDeviceClass, SearchAbandoned, ConstraintError):
                continue
            if picks is None or self._short(pod, template.room, NodeState()):
                continue
            found.append(Outcome(SCHEDULED, pool=pool.name, tensor_parallel_size=_tensor_parallel_size(pod, picks),
                                 alternatives=_labels(pod, picks)))
        return found


def _labels(pod: PodSpec, picks: list[Pick] | tuple[Pick, ...]) -> tuple[str, ...]:
    """The request/subrequest each claim request was satisfied with (``claim:`` first when a pod has several)."""
    several = len(pod.claims) > 1
    return tuple(dict.fromkeys(f"{p.claim}:{p.alternative.label}" if several else p.alternative.label
                               for p in picks))


def _shortage_prefix(shortages: list[str]) -> str:
    if not shortages:
        return ""
    resource = "memory" if all("memory" in s and "cpu (" not in s for s in shortages) else "cpu"
    return f"insufficient {resource} on running nodes ({'; '.join(shortages)}); "


def _order(key: tuple[str, int], pods: Mapping[str, PodSpec]) -> tuple[int, int]:
    return list(pods).index(key[0]), key[1]


def _tensor_parallel_size(pod: PodSpec, picks: list[Pick] | tuple[Pick, ...]) -> int:
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
    reclaim: Collection[str] = (),
) -> SimulationResult:
    """Place every replica of every workload the objects define.

    ``replicas`` overrides a workload's replica count (others keep their
    Deployment's); ``stockout`` names pools that cannot add nodes; ``reclaim``
    names spot pools that lose a running node once every replica is placed.
    Raises SimulationError for an unknown workload or pool, or an on-demand pool to reclaim.
    """
    for what, names in (("stockout", stockout), ("reclaim", reclaim)):
        unknown_pools = sorted(set(names) - set(cfg.node_pools))
        if unknown_pools:
            raise SimulationError(
                f"unknown pool{'s' if len(unknown_pools) > 1 else ''} in {what}: {', '.join(unknown_pools)} "
                f"(pools: {', '.join(cfg.node_pools) or 'none'})")
    on_demand = sorted(p for p in reclaim if not cfg.node_pools[p].spot)
    if on_demand:
        raise SimulationError(f"only spot nodes are reclaimed; {', '.join(on_demand)} "
                              f"{'is' if len(on_demand) == 1 else 'are'} on-demand (spot: false)")
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
    warnings = list(simulation.class_problems.values())
    missing = [w for w in cfg.workloads if w not in known]
    if missing:
        warnings.append(f"workloads without a Deployment with claims in the objects: {', '.join(missing)}")
    by_name = {p.workload: p for p in pods}
    keys: list[tuple[str, int]] = []  # the replicas placed one by one
    # A replica pending in every unfolding changes nothing, so each later replica of its workload meets the
    # same state and the same outcome: they are not placed, only counted (key -> how many follow it).
    more: dict[tuple[str, int], int] = {}
    branches = [simulation.start()]
    # Once enumeration stops, each replica's possible outcomes are gathered here instead.
    coarse: dict[tuple[str, int], list[Outcome]] = {}
    for pod in pods:
        for r in range(1, pod.replicas + 1):
            key = (pod.workload, r)
            keys.append(key)
            grown = [child for b in branches for child in simulation.place(b, pod, key)]
            if len(grown) > MAX_BRANCHES:
                simulation.enumerated = False
                for done in keys:  # every outcome so far is known exactly; keep one unfolding
                    coarse[done] = [b.history[done] for b in grown]
                grown = grown[:1]
            elif not simulation.enumerated:
                coarse[key] = [grown[0].history[key], *simulation.possible_anywhere(grown[0], pod)]
                grown = grown[:1]
            branches = grown
            if r < pod.replicas and all(b.history[key].status == PENDING for b in branches):
                more[key] = pod.replicas - r
                break
    if reclaim:
        order = [p.name for p in simulation.pools if p.name in set(reclaim)]
        before = {k: coarse.get(k) or [b.history[k] for b in branches] for k in keys}
        branches = [child for b in branches for child in simulation.reclaim(b, order, by_name)]
        if len(branches) > MAX_BRANCHES:
            simulation.enumerated = False
            branches = branches[:1]
        if not simulation.enumerated:
            # Less precise, never more certain: what a replica had before, or got after, the reclaim.
            coarse = {k: [*before[k], branches[0].history[k]] for k in keys}
        lost = {simulation.pools[p].name for p, _ in branches[0].reclaimed}
        warnings += [f"reclaim: {p} has no running node to lose" for p in order if p not in lost]
    placements = []
    for key in keys:
        outcomes = coarse.get(key) or [b.history[key] for b in branches]
        placed = placement(key[0], key[1], outcomes, branches[0].history[key], simulation.enumerated,
                           {p.name: p.priority for p in simulation.pools}, simulation.scores_prioritized_list)
        if placed.status == SCHEDULED and placed.pool:
            placed = replace(placed, moves_back=recovery.moves_back(cfg, key[0], placed.pool))
        placements.append((placed, more.get(key, 0)))
    if not simulation.enumerated:
        warnings.append(f"more than {MAX_BRANCHES} ways the cluster can unfold: later replicas list every pool "
                        "that could take them")
    return SimulationResult(cfg.cluster.cloud, Placements(placements), simulation.usage(branches), warnings,
                            cfg.cluster.kubernetes_version, len(branches), simulation.enumerated)
