"""Capacity rules (resource, advisory).

``accelerator-pools-spot``: accelerator pools use spot capacity unless marked
as the deliberate on-demand fallback: the node label
``gpu-fungibility/on-demand-fallback=true`` (:mod:`components.dra_wiring`;
any prefix is accepted), a GKE resource
label / EKS tag ``on-demand-fallback: "true"``, or the pool's name in the
policy config ``onDemandPools`` list.

``eks-dra-scale-from-zero``: an EKS node group labelled ``nvidia.com/gpu.dra=true``
with ``scalingConfig.minSize: 0``. The upstream Cluster Autoscaler builds an empty group's node
template without DRA devices on AWS, so such a group never scales up for a pending claim.

``aks-dra-pool-size``: an AKS agent pool so labelled with ``minCount: 0`` (AKS's managed autoscaler
builds an empty pool's template without DRA devices too) or with ``maxCount > minCount`` (it counts a
DRA GPU node as resource unready, so it does not grow the pool past ``minCount``).
"""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs

from .. import facts
from ..stack_view import (
    AKS_AGENT_POOL,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    Pool,
    aks_pool,
    eks_pool,
    gke_pool,
    plain,
    res_of,
)
from ..unknowns import NotJudged, dig_known
from .common import config_list

#: Where each pool type says spot or not, and its smallest size (what the two capacity rules judge).
_SPOT = {GKE_NODE_POOL: (("nodeConfig", "spot"), ("nodeConfig", "preemptible")), EKS_NODE_GROUP: (("capacityType",),),
         AKS_AGENT_POOL: (("scaleSetPriority",),)}
_MIN = {EKS_NODE_GROUP: (("scalingConfig", "minSize"),), AKS_AGENT_POOL: (("minCount",), ("maxCount",))}


def _require(args: ResourceValidationArgs, paths: tuple[tuple[str, ...], ...]) -> None:
    """NotJudged (advisory) when a value the rule decides on is unknown during the preview."""
    props = plain(args.props)
    for path in paths:
        known, _ = dig_known(props, *path)  # unknown itself, or an object on the way to it
        if not known:
            raise NotJudged([f"{'.'.join(path)} of {args.name} ({args.urn})"])


def pool_of(args: ResourceValidationArgs) -> Pool | None:
    if args.resource_type == GKE_NODE_POOL:
        return gke_pool(res_of(args))
    if args.resource_type == EKS_NODE_GROUP:
        return eks_pool(res_of(args))
    if args.resource_type == AKS_AGENT_POOL:
        return aks_pool(res_of(args))
    return None


def marked_on_demand_fallback(pool: Pool, allowed: list[str]) -> bool:
    if pool.pool_name in allowed or pool.resource_name in allowed:
        return True
    labels = {k.rsplit("/", 1)[-1]: v for k, v in pool.labels.items()}
    return labels.get(facts.ON_DEMAND_FALLBACK) == "true" or pool.resource_labels.get(facts.ON_DEMAND_FALLBACK) == "true"


def validate_accelerator_pools_spot(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    _require(args, _SPOT.get(args.resource_type, ()))
    pool = pool_of(args)
    if pool is None or pool.family not in ("gpu", "tpu") or pool.spot:
        return
    if marked_on_demand_fallback(pool, config_list(args.get_config(), "onDemandPools")):
        return
    report_violation(
        f"{pool.title} ({pool.accelerator_type or pool.family}) is on-demand. Use spot capacity, or mark it as the "
        f"deliberate on-demand fallback (node label {facts.ON_DEMAND_FALLBACK_LABEL}=true, or list it in this policy's "
        "onDemandPools config).",
        None,
    )


def validate_aks_dra_pool_size(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != AKS_AGENT_POOL:
        return
    _require(args, _MIN.get(args.resource_type, ()))
    pool = aks_pool(res_of(args))
    if pool.labels.get(facts.GPU_DRA) == "true" and pool.min_size == 0:
        report_violation(
            f"{pool.title} is a DRA agent pool with minCount 0: AKS's managed autoscaler builds an empty pool's "
            "node template from the VM size, without DRA devices, so it will not scale this pool up from zero "
            "for a pending claim. Keep minCount >= 1 for a pool that must serve claims.",
            None,
        )
    max_count = plain(args.props).get("maxCount")
    if pool.labels.get(facts.GPU_DRA) == "true" and isinstance(max_count, (int, float)) \
            and max_count > (pool.min_size or 0):
        report_violation(
            f"{pool.title} is a DRA agent pool with maxCount {int(max_count)} > minCount {pool.min_size}: AKS "
            f"labels its GPU nodes {facts.AKS_ACCELERATOR}, the Azure provider's GPU label, and the autoscaler "
            "marks a node with that label and no nvidia.com/gpu as resource unready (cluster-autoscaler "
            "processors/customresources/gpu_processor.go at 1.35.2; the Azure provider has no DRA exemption), "
            "so the pool probably never grows past minCount. Size it with minCount (set minCount = maxCount) "
            "and scale it by hand; docs/aks.md.",
            None,
        )


def validate_eks_dra_scale_from_zero(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != EKS_NODE_GROUP:
        return
    _require(args, _MIN.get(args.resource_type, ()))
    pool = eks_pool(res_of(args))
    if pool.labels.get(facts.GPU_DRA) == "true" and pool.min_size == 0:
        report_violation(
            f"{pool.title} is a DRA node group with scalingConfig.minSize 0: the Cluster Autoscaler cannot model DRA "
            "devices on AWS, so it will not scale this group up from zero for a pending claim. Keep minSize >= 1 "
            "for a group that must serve claims.",
            None,
        )
