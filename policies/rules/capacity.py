"""Capacity rule (resource, advisory).

``accelerator-pools-spot``: accelerator pools use spot capacity unless marked
as the deliberate on-demand fallback: the node label
``gpu-fungibility/on-demand-fallback=true`` (:mod:`components.dra_wiring`;
any prefix is accepted), a GKE resource
label / EKS tag ``on-demand-fallback: "true"``, or the pool's name in the
policy config ``onDemandPools`` list.

Rules on the size of one cloud's DRA pools live with that cloud's rules
(``policies/rules/eks.py``, ``aks.py``).
"""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs

from .. import cloud_parts, facts
from ..stack_view import Pool, res_of
from .common import config_list, require_fields


def pool_of(args: ResourceValidationArgs) -> Pool | None:
    """The pool a node pool resource of a registered cloud makes; None for any other resource."""
    cloud = cloud_parts.cloud_of_pool(args.resource_type)
    return cloud_parts.part(cloud).pool(res_of(args)) if cloud else None


def marked_on_demand_fallback(pool: Pool, allowed: list[str]) -> bool:
    if pool.pool_name in allowed or pool.resource_name in allowed:
        return True
    labels = {k.rsplit("/", 1)[-1]: v for k, v in pool.labels.items()}
    return labels.get(facts.ON_DEMAND_FALLBACK) == "true" or pool.resource_labels.get(facts.ON_DEMAND_FALLBACK) == "true"


def validate_accelerator_pools_spot(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    cloud = cloud_parts.cloud_of_pool(args.resource_type)
    require_fields(args, cloud_parts.part(cloud).SPOT_FIELDS if cloud else ())
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
