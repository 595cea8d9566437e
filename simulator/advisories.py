"""What a plan says about a simulation in one line: workloads whose replicas cannot all be placed."""

from __future__ import annotations

from simulator.results import PENDING, SCHEDULED, SimulationResult


def replica_advisories(result: SimulationResult) -> list[str]:
    """``vllm-gpu: 3 of 20 replicas fit at the pools' maximum; ...`` for every workload with replicas left pending.

    A replica fits when it is scheduled in every outcome or in some (an undetermined replica that may land).
    """
    found = []
    for workload in dict.fromkeys(r.workload for r in result.replicas):
        replicas = result.of(workload)
        fit = sum(1 for r in replicas
                  if r.status == SCHEDULED or any(o.status == SCHEDULED for o in r.outcomes))
        if fit < len(replicas):
            reasons = {r.reason for r in replicas if r.status == PENDING and r.reason}
            why = f" ({sorted(reasons)[0]})" if len(reasons) == 1 else ""
            found.append(f"{workload}: {fit} of {len(replicas)} replicas fit at the pools' maximum; "
                         f"the other {len(replicas) - fit} stay pending{why}")
    return found
