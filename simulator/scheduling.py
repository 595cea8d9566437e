"""Node predicates of the scheduler: nodeSelector, required node affinity, taints.

Each check returns None when the pod may use the node, or a short reason.
CPU and memory requests are not modelled: accelerator nodes are sized for
the one inference server they carry.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.dra_wiring import NodeTaint
from simulator.cluster import SimNode
from simulator.workloads import PodSpec

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def tolerates(toleration: Mapping[str, str], taint: NodeTaint) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    if (toleration.get("operator") or "Equal") == "Exists":
        return key == "" or key == taint.key
    return key == taint.key and (toleration.get("value") or "") == taint.value


def _expression_matches(expression: Mapping, labels: Mapping[str, str]) -> bool:
    key, operator = expression.get("key"), expression.get("operator")
    values = [str(v) for v in expression.get("values") or ()]
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and values:
        try:
            label, bound = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return label > bound if operator == "Gt" else label < bound
    return False


def _term_matches(term: Mapping, node: SimNode) -> bool:
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return False  # an empty term selects nothing
    if not all(_expression_matches(e, node.labels) for e in expressions):
        return False
    return all(_expression_matches(f, {"metadata.name": node.name}) for f in fields)


def node_predicates(pod: PodSpec, node: SimNode) -> str | None:
    """Why the pod cannot use the node before devices are considered (None: it can)."""
    for key, value in pod.node_selector.items():
        if node.labels.get(key) != value:
            return f"nodeSelector {key}={value} does not match"
    if pod.affinity_terms is not None and not any(_term_matches(t, node) for t in pod.affinity_terms):
        return "required node affinity does not match"
    for taint in node.taints:
        if taint.effect in BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in pod.tolerations):
            value = f"={taint.value}" if taint.value else ""
            return f"taint {taint.key}{value}:{taint.effect} is not tolerated"
    return None
