"""The fungibility simulator: where each replica of a stack's workloads lands, before deployment.

``simulate(cfg, objects, replicas=None, stockout=frozenset(), reclaim=())`` builds a
virtual cluster from the stack's pools and places every replica of the
Deployments among ``objects`` (the Kubernetes objects the stack generates),
with the scheduler's predicates, DRA structured-parameters allocation on a
real CEL engine, CPU and memory requests against each node's room, the
scheduler's scoring of the stack's Kubernetes version (where it cannot decide,
every possible outcome is reported), and the cluster autoscaler's priority order.
``render_table``, ``render_markdown`` and ``to_json`` present the result.
"""

from simulator.engine import SimulationError, simulate
from simulator.render import render_markdown, render_table, to_json
from simulator.results import (
    PENDING,
    SCHEDULED,
    UNDETERMINED,
    Outcome,
    PoolUsage,
    ReplicaPlacement,
    SimulationResult,
)

__all__ = [
    "PENDING",
    "SCHEDULED",
    "UNDETERMINED",
    "Outcome",
    "PoolUsage",
    "ReplicaPlacement",
    "SimulationError",
    "SimulationResult",
    "render_markdown",
    "render_table",
    "simulate",
    "to_json",
]
