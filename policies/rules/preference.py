"""``preference-follows-claim`` (stack): among running nodes, the scheduler prefers the claim's pools in order.

A claim's ``firstAvailable`` order only decides which alternative is allocated on the node the scheduler
already chose. Which node that is comes from the scores of kube-scheduler's default profile: Kubernetes 1.34
gives the prioritized list no score at all, and from 1.35 the DynamicResources score (8 minus the index of
each allocated subrequest, normalised; pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go
``computeScore``) is too small to outweigh the resource scores: a bigger node of a fallback pool wins
NodeResourcesFit's LeastAllocated score by up to 100 points, the DRA score separates the first two alternatives
by 26 (2 x (100 - 87)). What makes the order hold is the pods' weighted preferred node affinity
(NodeAffinity, weight 2 in the default profile).

So, for every workload whose claim has a request with two or more ``firstAvailable`` alternatives named
after pools of the stack, each alternative's pool gets its NodeAffinity score (the sum of the weights of the
pods' ``preferredDuringSchedulingIgnoredDuringExecution`` terms its node labels match) and the scores must
strictly decrease along the alternatives: the first alternative's pool scores highest. A pool listed twice is
judged at its first place. Reported on the workload, naming the pools and their weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_fungibility.node_selection import term_matches
from pulumi_policy import ReportViolation, StackValidationArgs

from ..stack_view import WORKLOAD_KINDS, Pool, StackView, dig
from ..unknowns import Pending, has_unknown
from .common import claim_alternatives, claims_of, note_unknown_pod_specs, pool_for, workloads


def preferred_terms(spec: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    """(weight, preference) of a pod spec's preferred node affinity terms."""
    terms = dig(spec, "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", default=[])
    found = []
    for term in terms or []:
        if not isinstance(term, Mapping):
            continue
        try:
            weight = int(term.get("weight") or 0)
        except (TypeError, ValueError):
            continue
        found.append((weight, term.get("preference") or {}))
    return found


def affinity_score(terms: list[tuple[int, Mapping[str, Any]]], pool: Pool) -> int:
    """NodeAffinity's raw score of a node of the pool: the weights of the terms its labels match."""
    return sum(weight for weight, preference in terms if term_matches(preference, pool.node_labels))


def preference_problems(view: StackView, pending: Pending | None = None) -> list[tuple[str, str]]:
    """(message, urn) for each workload whose preferred affinity does not follow its claim's order (``pending``:
    names the workloads and claims whose affinity or requests are not known yet, left out)."""
    problems = []
    if pending is not None:
        view.note_unknown(pending, *WORKLOAD_KINDS, "ResourceClaimTemplate", "ResourceClaim")
        note_unknown_pod_specs(view, pending)
    for workload, spec in workloads(view):
        if pending is not None and has_unknown([spec.get("affinity"), spec.get("resourceClaims")]):
            pending.add("its pods' affinity or claims", f"{workload.title} ({workload.urn})")
            continue
        terms = preferred_terms(spec)
        for claim in claims_of(view, workload, spec):
            if pending is not None and has_unknown(claim.props.get("spec")):
                pending.add("its device requests", f"{claim.title} ({claim.urn})")
                continue
            for request, names in claim_alternatives(claim):
                pools: list[tuple[str, Pool]] = []
                for name in names:
                    pool = pool_for(name, view.pools)
                    if pool is not None and all(p.urn != pool.urn for _, p in pools):
                        pools.append((name, pool))
                if len(pools) < 2:
                    continue
                scores = [(name, affinity_score(terms, pool)) for name, pool in pools]
                if all(a[1] > b[1] for a, b in zip(scores, scores[1:], strict=False)):
                    continue
                listed = ", ".join(f"{name} ({score})" for name, score in scores)
                problems.append((
                    f"{workload.kind} {workload.k8s_name}: {claim.kind} {claim.k8s_name} request {request} prefers "
                    f"[{', '.join(n for n, _ in pools)}] in that order, but the pods' preferred node affinity "
                    f"weights them [{listed}]: once nodes of several of these pools run, the scheduler picks by "
                    "its other scores (a bigger node wins) and not by the list. Give each pool a preferred term "
                    "with strictly decreasing weights along the claim.",
                    workload.urn))
    return problems


def validate_preference_follows_claim(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    view = StackView.from_policy_resources(args.resources)
    pending = Pending()
    for message, urn in preference_problems(view, pending):
        report_violation(message, urn)
    pending.finish()
