"""ZKC's rules (the ``policies.rules`` part of its profile): one policy of its own and its answers to the
shared rules."""

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from policies.rules.common import claim_alternatives, claims_of, pool_for, workloads
from policies.stack_view import Pool, StackView
from policies.unknowns import Pending

from . import PRIORITY_LABEL, PROFILE

SCALING_GROUP_NAME = None
ENDPOINT_SETTINGS = (("publicEndpoint",),)
ENDPOINT_FIX = "Set publicEndpoint, or list where `pulumi up` runs in this policy's runnerCidrs config."


def validate_zkc_pool_priority(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type == PROFILE.pool_type and PRIORITY_LABEL not in (args.props.get("resourceLabels") or {}):
        report_violation(f"pool {args.name} has no {PRIORITY_LABEL} resource label: ZKC scales it up last", None)


POLICIES = [ResourceValidationPolicy(name="zkc-pool-priority", description="ZKC pools say their priority.",
                                     validate=validate_zkc_pool_priority,
                                     enforcement_level=EnforcementLevel.ADVISORY)]


def autoscaler_order_checks(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    """Each claim's alternatives name pools of strictly decreasing priority."""
    for workload, spec in workloads(view):
        for claim in claims_of(view, workload, spec):
            for request, names in claim_alternatives(claim):
                pools = [pool_for(n, view.pools) for n in names]
                ranks = [int(p.resource_labels.get(PRIORITY_LABEL, 0)) if p else 0 for p in pools]
                if any(a <= b for a, b in zip(ranks, ranks[1:], strict=False)):
                    report_violation(f"{workload.kind} {workload.k8s_name}: request {request} tries "
                                     f"[{', '.join(names)}] but ZKC ranks them {ranks}", workload.urn)


def dra_pool_problems(pool: Pool) -> list[str]:
    return []


def cluster_advisories(args: ResourceValidationArgs, props: Mapping[str, Any]) -> list[str]:
    return []


def reach_inputs(resources: Sequence[Any]) -> None:
    return None


def unknown_reach_inputs(inputs: None) -> list[str]:
    return []


def unreachable(cluster: Mapping[str, Any], inputs: None, runner_ranges: list) -> str | None:
    if cluster.get("publicEndpoint") is False and not runner_ranges:
        return "its endpoint is private and this policy's runnerCidrs config names no range"
    return None
