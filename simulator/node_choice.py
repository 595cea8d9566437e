"""Which of the running nodes that can take a pod the scheduler may pick: the engine's state, scored.

Builds, for each of the engine's choices, what :mod:`simulator.scoring` reads of a node (labels, taints,
every machine its pool may be with what already runs there, the workload's pods on it, the ``firstAvailable``
subrequests its allocation uses) and keeps the choices no other one outscores for certain. ``sim`` is the
engine's ``Simulation`` and ``branch`` one of its ``Branch`` es (not imported: the engine imports this).
"""

from __future__ import annotations

from typing import Any

from gpu_fungibility import sizing

from simulator import scoring
from simulator.workloads import PodSpec

MIB = 1024 * 1024


def best_scored(sim: Any, branch: Any, pod: PodSpec, choices: list[Any], counts: list[int]) -> list[Any]:
    """The choices the default profile's scores leave open; ``counts``: the nodes each choice stands for."""
    candidates = [candidate(sim, branch, pod, c, n) for c, n in zip(choices, counts, strict=True)]
    scored_pod = scoring.ScoredPod((pod.cpu_m, pod.memory_mib * MIB), tuple(pod.preferred_terms),
                                   tuple(pod.tolerations))
    in_zone: dict[str, int] = {}
    placed = 0
    for p, nodes in enumerate(branch.nodes):
        for i, state in enumerate(nodes):
            mine = sum(1 for key in state.replicas if key[0] == pod.workload)
            if mine and not state.lost:
                zone = sim.node(p, i).labels.get(scoring.ZONE, "")
                in_zone[zone] = in_zone.get(zone, 0) + mine
                placed += mine
    scored = scoring.score(sim.scoring, scored_pod, candidates, in_zone)
    zones = {z for c in choices for z in pool_zones(sim, c.pool)}
    uncertain = any(len(pool_zones(sim, c.pool)) > 1 for c in choices)
    bound = scoring.zone_spread_bound(placed, len(zones)) if uncertain else 0
    return [s.candidate.key for s in scoring.winners(scored, sim.scoring, bound)]


def pool_zones(sim: Any, p: int) -> tuple[str, ...]:
    """The zones a node of the pool may be in (the simulator labels it with the first)."""
    pool = sim.pools[p].config
    return tuple(pool.zones or sim.cfg.cluster.zones)


def candidate(sim: Any, branch: Any, pod: PodSpec, choice: Any, count: int) -> scoring.Candidate:
    """One choice as the score plugins see its node."""
    node = sim.node(choice.pool, choice.node)
    state = branch.nodes[choice.pool][choice.node]
    pool = sim.pools[choice.pool].config
    shapes = []
    for machine in [pool.machine_type or pool.vm_size or "", *(pool.instance_types or [])]:
        room = sizing.node_room(sim.cfg.cluster.cloud, machine, pool.family or "gpu", pool.dra) if machine else None
        if room is None:
            continue
        used = (room.reserved[0] + state.cpu_m, (room.reserved[1] + state.memory_mib) * MIB)
        shapes.append(scoring.NodeShape((room.allocatable[0], room.allocatable[1] * MIB), used))
    if not shapes:  # a machine the catalog does not know: what the node has room for
        shapes.append(scoring.NodeShape((node.room[0], node.room[1] * MIB), (state.cpu_m, state.memory_mib * MIB)))
    by_claim: dict[str, dict[str, int]] = {}
    for pick in choice.picks:
        if pick.alternative.subrequest is not None:
            by_claim.setdefault(pick.claim, {})[pick.alternative.label] = pick.alternative.rank
    mine = sum(1 for key in state.replicas if key[0] == pod.workload)
    return scoring.Candidate(choice, node.labels, tuple(node.taints), tuple(shapes), pods_here=mine,
                             has_image=mine > 0, subrequests=tuple(tuple(r.values()) for r in by_claim.values()),
                             count=count)
