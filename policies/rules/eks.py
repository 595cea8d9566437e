"""EKS's rules: the pack's policies only EKS has, and EKS's answers to the shared rules.

``eks-dra-scale-from-zero``: an EKS node group labelled ``nvidia.com/gpu.dra=true``
with ``scalingConfig.minSize: 0``. The upstream Cluster Autoscaler builds an empty group's node
template without DRA devices on AWS, so such a group never scales up for a pending claim.

``claim-follows-compute-class``: the order of a claim's alternatives lives in the Cluster Autoscaler's
priority expander (:mod:`.priority_expander`).

``control-plane-reachable``: an endpoint that is private only (``vpcConfig.endpointPublicAccess:
false``) answers inside the VPC, and the cluster security group admits only itself; it is reachable when
the plan opens 443 to a range (``aws:vpc/securityGroupIngressRule`` with ``cidrIpv4`` whose ports include
443) that lies inside a VPC of the plan (``cidrBlock``) or is described as a runner (``pulumi up runner``,
as ``controlPlane.runnerCidrs`` writes it), or that overlaps the ``runnerCidrs`` config.

``kubernetes-version-advisories``: an EKS cluster that leaves ``upgradePolicy.supportType`` unset (EKS's
default, extended support) or sets it to ``EXTENDED`` is told what extended support costs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_fungibility.clouds.eks import PROFILE
from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from .. import facts
from ..eks import pool as eks_pool
from ..stack_view import UNKNOWN, Pool, dig, plain, res_of
from ..unknowns import NotJudged, dig_known, has_unknown
from . import priority_expander
from .common import require_fields
from .endpoint import Network, networks, overlaps

VPC = "aws:ec2/vpc:Vpc"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
RUNNER_DESCRIPTION_PREFIX = "pulumi up runner"
API_PORT = 443
#: Where a node group says its smallest size.
MIN_SIZE_FIELDS = (("scalingConfig", "minSize"),)
#: The name of the Auto Scaling group of a managed node group (its pattern; the priority expander matches it).
SCALING_GROUP_NAME = "eks-{pool}-00000000-0000-0000-0000-000000000000"
#: EKS per-cluster hourly price: standard support $0.10, extended support $0.60 (EKS pricing page).
EXTENDED_SUPPORT_NOTE = ("EKS charges $0.60 per cluster hour in extended support instead of $0.10: set "
                         "cluster.eksSupportType (upgradePolicy.supportType) to STANDARD to have EKS upgrade the "
                         "cluster at the end of standard support instead")
#: The settings a cluster's control-plane-reachable verdict is decided on.
ENDPOINT_SETTINGS = (("vpcConfig", "endpointPublicAccess"),)
ENDPOINT_FIX = ("Set controlPlane.publicEndpoint with authorizedNetworks, or list the ranges in the VPC that "
                "`pulumi up` runs from in controlPlane.runnerCidrs.")


def validate_eks_dra_scale_from_zero(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != PROFILE.pool_type:
        return
    require_fields(args, MIN_SIZE_FIELDS)
    pool = eks_pool(res_of(args))
    if pool.labels.get(facts.GPU_DRA) == "true" and pool.min_size == 0:
        report_violation(
            f"{pool.title} is a DRA node group with scalingConfig.minSize 0: the Cluster Autoscaler cannot model DRA "
            "devices on AWS, so it will not scale this group up from zero for a pending claim. Keep minSize >= 1 "
            "for a group that must serve claims.",
            None,
        )


POLICIES = [
    ResourceValidationPolicy(
        name="eks-dra-scale-from-zero",
        description="EKS DRA node groups keep minSize >= 1 (the autoscaler cannot scale DRA groups from zero "
                    "on AWS).",
        validate=validate_eks_dra_scale_from_zero,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]

autoscaler_order_checks = priority_expander.check_order


def dra_pool_problems(pool: Pool) -> list[str]:
    """What only EKS refuses of a DRA-labelled pool (``dra-pool-served``): nothing."""
    return []


def cluster_advisories(args: ResourceValidationArgs, props: Mapping[str, Any]) -> list[str]:
    """The cost of extended support, where the cluster leaves it on; NotJudged while that is unknown."""
    if not dig_known(props, "upgradePolicy", "supportType")[0]:
        raise NotJudged([f"upgradePolicy.supportType of {args.name} ({args.urn})"])
    if dig(props, "upgradePolicy", "supportType") in (None, "", "EXTENDED"):
        return [EXTENDED_SUPPORT_NOTE]
    return []


@dataclass(frozen=True)
class PlanNetworks:
    """The plan's VPC ranges and security group ingress rules."""

    vpc_ranges: list[Network]
    ingress_rules: Sequence[Mapping[str, Any]]


def reach_inputs(resources: Sequence[Any]) -> PlanNetworks:
    return PlanNetworks(networks(plain(r.props).get("cidrBlock") for r in resources if r.resource_type == VPC),
                        [plain(r.props) for r in resources if r.resource_type == INGRESS_RULE])


def unknown_reach_inputs(plan: PlanNetworks) -> list[str]:
    """What the verdict reads from the plan that is unknown yet."""
    if any(has_unknown([r.get("cidrIpv4"), r.get("fromPort"), r.get("toPort"), r.get("ipProtocol")])
           for r in plan.ingress_rules):
        return ["the ranges and ports of its security group rules"]
    return []


def unreachable(cluster: Mapping[str, Any], plan: PlanNetworks, runner_ranges: list[Network]) -> str | None:
    """Why no machine of the plan or the config can reach a private-only EKS endpoint (None: reachable)."""
    vpc_ranges, ingress_rules = plan.vpc_ranges, plan.ingress_rules
    vpc = cluster.get("vpcConfig") or {}
    public = vpc.get("endpointPublicAccess")
    if public is not False:  # absent: AWS's default is a public endpoint
        return None
    opened = []
    for rule in ingress_rules:
        low, high = rule.get("fromPort"), rule.get("toPort")
        if rule.get("ipProtocol") not in ("tcp", "-1", -1) or UNKNOWN in (low, high):
            continue
        if rule.get("ipProtocol") == "tcp" and not (isinstance(low, int) and isinstance(high, int)
                                                    and low <= API_PORT <= high):
            continue
        for block in networks([rule.get("cidrIpv4")]):
            described = str(rule.get("description") or "").startswith(RUNNER_DESCRIPTION_PREFIX)
            inside = any(block.version == v.version and block.subnet_of(v) for v in vpc_ranges)
            if described or inside or overlaps(block, runner_ranges):
                opened.append(block)
    if opened:
        return None
    return ("its endpoint is private only (endpointPublicAccess: false) and no runner inside the VPC is declared: "
            "no security group rule of the plan opens port 443 to a range in the VPC or to this policy's "
            "runnerCidrs config")
