"""What a simulation reports: each replica's placement (or every outcome it may have) and the pools' sizes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

SCHEDULED, PENDING, UNDETERMINED = "scheduled", "pending", "undetermined"


@dataclass(frozen=True)
class Outcome:
    """Where one replica ends up in one possible unfolding of the cluster."""

    status: str  # scheduled | pending
    pool: str | None = None
    node: str | None = None
    devices: tuple[str, ...] = ()
    tensor_parallel_size: int | None = None
    alternatives: tuple[str, ...] = ()  # the request/subrequest each claim request was satisfied with
    reason: str | None = None  # why pending
    note: str | None = None  # e.g. rescheduled after a reclaim

    @property
    def key(self) -> tuple:
        """What tells two outcomes apart for a user (node names within a pool are interchangeable)."""
        return self.status, self.pool, self.tensor_parallel_size, self.alternatives, self.reason, self.note


@dataclass(frozen=True)
class ReplicaPlacement:
    workload: str
    replica: int  # 1-based
    status: str  # scheduled | pending | undetermined
    pool: str | None = None
    node: str | None = None
    devices: tuple[str, ...] = ()
    tensor_parallel_size: int | None = None
    reason: str | None = None
    alternatives: tuple[str, ...] = ()
    outcomes: tuple[Outcome, ...] = ()  # every possible outcome, when more than one
    note: str | None = None
    moves_back: str | None = None  # on a less preferred pool: what brings it back, or that nothing will

    @property
    def determined(self) -> bool:
        return self.status != UNDETERMINED


@dataclass(frozen=True)
class PoolUsage:
    name: str
    priority: int
    min: int
    max: int
    nodes: int  # at the end of the simulation (the first outcome)
    stocked_out: bool
    devices_per_node: int
    devices_in_use: int
    nodes_range: tuple[int, int] = (0, 0)  # over every outcome
    devices_in_use_range: tuple[int, int] = (0, 0)
    reclaimed: tuple[str, ...] = ()


class Placements(Sequence[ReplicaPlacement]):
    """Every replica's placement, in order; a run of replicas with one outcome is stored once with its length.

    Once a replica stays pending in every unfolding, the cluster does not change and each later replica of its
    workload meets the same outcome: ``runs`` holds ``(first placement, how many more)`` so a million such
    replicas cost one entry. Iterating or indexing still yields one placement per replica.
    """

    def __init__(self, runs: Sequence[tuple[ReplicaPlacement, int]] = ()):
        self.runs: list[tuple[ReplicaPlacement, int]] = list(runs)
        self._len = sum(1 + more for _, more in self.runs)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[ReplicaPlacement]:
        for first, more in self.runs:
            yield first
            for k in range(1, more + 1):
                yield replace(first, replica=first.replica + k)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError(index)
        for first, more in self.runs:
            if index <= more:
                return first if index == 0 else replace(first, replica=first.replica + index)
            index -= 1 + more
        raise IndexError(index)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Placements | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Placements({self.runs!r})"


@dataclass
class SimulationResult:
    cloud: str
    replicas: Placements
    pools: list[PoolUsage]
    warnings: list[str] = field(default_factory=list)
    kubernetes_version: str = ""
    branches: int = 1  # how many unfoldings were followed
    enumerated: bool = True  # False: stopped enumerating at MAX_BRANCHES

    def __post_init__(self) -> None:
        if not isinstance(self.replicas, Placements):
            self.replicas = Placements((r, 0) for r in self.replicas)

    def of(self, workload: str) -> list[ReplicaPlacement]:
        return [r for r in self.replicas if r.workload == workload]


def placement(workload: str, replica: int, outcomes: list[Outcome], representative: Outcome,
               enumerated: bool, priority: Mapping[str, int], scored: bool) -> ReplicaPlacement:
    distinct = sorted({o.key: o for o in outcomes}.values(),
                      key=lambda o: (o.pool is None, priority.get(o.pool or "", 0), o.tensor_parallel_size or 0))
    if len(distinct) == 1:
        o = representative
        return ReplicaPlacement(workload, replica, o.status, o.pool, o.node, o.devices, o.tensor_parallel_size,
                                o.reason, o.alternatives, note=o.note)
    unknowns = "a node's zone, its machine, a cached image" + ("" if scored else "; 1.34 has no DRA score")
    why = (f"the scheduler's scores tie, or differ by less than what is not known before the nodes run "
           f"({unknowns}): which of the best it takes is not known ({len(distinct)} possible outcomes)")
    if not enumerated:
        why = f"too many ways the cluster can unfold to follow them all; any of these {len(distinct)} outcomes is possible"
    return ReplicaPlacement(workload, replica, UNDETERMINED, reason=why, outcomes=tuple(distinct))


