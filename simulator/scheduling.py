"""Node predicates of the scheduler: nodeSelector, required node affinity, taints.

The matching rules are the library's (:mod:`gpu_fungibility.node_selection`), shared with
the policy pack.

Each check returns None when the pod may use the node, or a short reason.
CPU and memory are checked by the engine, against each node's room.
"""

from __future__ import annotations

from gpu_fungibility.node_selection import term_matches, toleration_tolerates

from simulator.cluster import SimNode
from simulator.workloads import PodSpec

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def node_predicates(pod: PodSpec, node: SimNode) -> str | None:
    """Why the pod cannot use the node before devices are considered (None: it can)."""
    for key, value in pod.node_selector.items():
        if node.labels.get(key) != value:
            return f"nodeSelector {key}={value} does not match"
    if pod.affinity_terms is not None and not any(term_matches(t, node.labels, node.name) for t in pod.affinity_terms):
        return "required node affinity does not match"
    for taint in node.taints:
        if taint.effect in BLOCKING_EFFECTS and not any(toleration_tolerates(t, taint) for t in pod.tolerations):
            value = f"={taint.value}" if taint.value else ""
            return f"taint {taint.key}{value}:{taint.effect} is not tolerated"
    return None
