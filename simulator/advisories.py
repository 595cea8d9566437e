"""What a plan says about a simulation in one line: workloads whose replicas cannot all be placed."""

from __future__ import annotations

from simulator.results import PENDING, SCHEDULED, SimulationResult


def replica_advisories(result: SimulationResult) -> list[str]:
    """``vllm-gpu: 3 of 20 replicas fit at the pools' maximum; ...`` for every workload with replicas left pending.

    A replica fits when it is scheduled in every outcome or in some (an undetermined replica that may land).
    Counted over the result's runs of like replicas, so a hundred million pending ones cost one step.
    """
    totals: dict[str, list[int]] = {}  # workload -> [replicas, fit]
    reasons: dict[str, set[str]] = {}
    for first, more in result.replicas.runs:  # a run of like replicas counts once, times its length
        count = totals.setdefault(first.workload, [0, 0])
        count[0] += 1 + more
        if first.status == SCHEDULED or any(o.status == SCHEDULED for o in first.outcomes):
            count[1] += 1 + more
        elif first.status == PENDING and first.reason:
            reasons.setdefault(first.workload, set()).add(first.reason)
    found = []
    for workload, (replicas, fit) in totals.items():
        if fit < replicas:
            why = reasons.get(workload, set())
            because = f" ({sorted(why)[0]})" if len(why) == 1 else ""
            found.append(f"{workload}: {fit} of {replicas} replicas fit at the pools' maximum; "
                         f"the other {replicas - fit} stay pending{because}")
    return found
