"""GKE's half of ``claim-follows-compute-class``: the compute class orders the pools.

On GKE a workload's class is the pod's ``cloud.google.com/compute-class``
nodeSelector (or a required affinity term naming one class) and its order the
ComputeClass ``priorities[].nodepools``: the ``firstAvailable`` subrequest names
must equal that list, and every pool the class lists must exist in the stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import ReportViolation

from .. import facts
from ..stack_view import Res, StackView, dig
from ..unknowns import Pending, has_unknown, is_unknown
from .common import claim_alternatives, claim_requests, claims_of, workloads


def _compute_class_of(spec: Mapping[str, Any]) -> str | None:
    """The compute class a pod spec selects (callers check its placement is known first)."""
    selected = dig(spec, "nodeSelector", facts.GKE_COMPUTE_CLASS)
    if selected:
        return str(selected)
    terms = dig(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms", default=[]) or []
    for term in terms if isinstance(terms, list) else []:
        for expression in (term if isinstance(term, Mapping) else {}).get("matchExpressions") or []:
            if not isinstance(expression, Mapping):
                continue
            values = expression.get("values") or []
            if expression.get("key") == facts.GKE_COMPUTE_CLASS and expression.get("operator") == "In" \
                    and len(values) == 1:
                return str(values[0])
    return None


def check_order(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    """Every pool a ComputeClass lists exists, a selected class exists, and each claim's alternatives are the
    class's pools in its order."""
    classes = {c.k8s_name: c for c in view.k8s("ComputeClass")}
    classes_unknown = view.note_unknown(pending, "ComputeClass")
    for compute_class in view.k8s("ComputeClass"):
        if is_unknown(dig(compute_class.props, "metadata", "name")) or is_unknown(compute_class.props.get("metadata")):
            pending.add("its name", f"{compute_class.title} ({compute_class.urn})")
            classes_unknown = True
    pool_names = {p.pool_name for p in view.pools}
    for name, compute_class in list(classes.items()):
        if has_unknown(compute_class.props.get("spec")):
            pending.add("its priorities", f"{compute_class.title} ({compute_class.urn})")
            continue
        for pool in _class_pools(compute_class):
            if pool not in pool_names:
                report_violation(f"ComputeClass {name} lists node pool {pool}, which the stack does not create",
                                 compute_class.urn)
    for workload, spec in workloads(view):
        class_name = _compute_class_of(spec)
        if class_name and is_unknown(class_name) or has_unknown([spec.get("nodeSelector"), spec.get("affinity")]):
            pending.add("the compute class its pods select", f"{workload.title} ({workload.urn})")
            continue
        if not class_name:
            continue
        compute_class = classes.get(class_name)
        if compute_class is None and classes_unknown:
            pending.add(f"whether compute class {class_name} exists", f"{workload.title} ({workload.urn})")
            continue
        if compute_class is None:
            report_violation(f"{workload.kind} {workload.k8s_name} selects compute class {class_name}, which the "
                             "stack does not create", workload.urn)
            continue
        if has_unknown(compute_class.props.get("spec")):
            continue
        expected = _class_pools(compute_class)
        for claim in claims_of(view, workload, spec):
            if has_unknown(claim_requests(claim)):
                pending.add("its device requests", f"{claim.title} ({claim.urn})")
                continue
            for request, names in claim_alternatives(claim):
                if names == expected or (not names and len(expected) <= 1):
                    continue
                got = names or ["a single `exactly` alternative"]
                report_violation(
                    f"{workload.kind} {workload.k8s_name}: {claim.kind} {claim.k8s_name} request {request} tries "
                    f"[{', '.join(got)}] but compute class {class_name} scales up [{', '.join(expected)}]; the claim's "
                    "firstAvailable alternatives must be the class's pools in the same order",
                    workload.urn,
                )


def _class_pools(compute_class: Res) -> list[str]:
    return [str(p) for priority in dig(compute_class.props, "spec", "priorities", default=[]) or []
            if isinstance(priority, Mapping) for p in priority.get("nodepools") or []]
