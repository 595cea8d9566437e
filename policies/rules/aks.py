"""AKS's rules: the pack's policies only AKS has, and AKS's answers to the shared rules.

``aks-dra-pool-size``: an AKS agent pool labelled ``nvidia.com/gpu.dra=true`` with ``minCount: 0``
(AKS's managed autoscaler builds an empty pool's template without DRA devices) or with
``maxCount > minCount`` (it counts a DRA GPU node as resource unready, so it does not grow the pool past
``minCount``).

``claim-follows-compute-class``: the cluster's autoscaler profile uses the priority expander, whose
ConfigMap orders the pools' scale sets (:mod:`.priority_expander`).

``dra-pool-served``: a DRA pool that skips AKS's NVIDIA driver (``gpuProfile.driver: None``) has no driver.

``control-plane-reachable``: a private cluster (``apiServerAccessProfile.enablePrivateCluster``) has its API
server on a private endpoint in the cluster's virtual network, with no public address
(learn.microsoft.com/azure/aks/private-clusters); it is reachable when a range of this policy's
``runnerCidrs`` config lies in a virtual network or subnet of the plan (``addressSpace.addressPrefixes``,
``addressPrefix``), or, when the plan builds no network (an existing subnet), when ``runnerCidrs`` names any
range. A public API server with ``authorizedIPRanges`` admits only those ranges
(learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges); when the ``runnerCidrs`` config says where
``pulumi up`` runs, one of those ranges must overlap an authorized range. With no authorized ranges AKS's
public API server admits every address.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpu_fungibility.clouds.aks import PROFILE
from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from .. import facts
from ..aks import pool as aks_pool
from ..stack_view import UNKNOWN, Pool, StackView, dig, plain, res_of
from ..unknowns import Pending, dig_known
from . import priority_expander
from .common import require_fields
from .endpoint import Network, networks, overlaps

VNET = "azure-native:network:VirtualNetwork"
SUBNET = "azure-native:network:Subnet"
#: Where an agent pool says its smallest and largest size.
MIN_SIZE_FIELDS = (("minCount",), ("maxCount",))
#: The name of an agent pool's virtual machine scale set (its pattern; the priority expander matches it).
SCALING_GROUP_NAME = "aks-{pool}-12345678-vmss"
#: The settings a cluster's control-plane-reachable verdict is decided on.
ENDPOINT_SETTINGS = (("apiServerAccessProfile", "enablePrivateCluster"), ("apiServerAccessProfile", "authorizedIPRanges"))
ENDPOINT_FIX = ("Set controlPlane.publicEndpoint with authorizedNetworks that hold where `pulumi up` runs, or "
                "run it inside the cluster's virtual network and list that range in this policy's "
                "runnerCidrs config.")


def validate_aks_dra_pool_size(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != PROFILE.pool_type:
        return
    require_fields(args, MIN_SIZE_FIELDS)
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


POLICIES = [
    ResourceValidationPolicy(
        name="aks-dra-pool-size",
        description="AKS DRA agent pools keep minCount >= 1 and minCount = maxCount (AKS's managed autoscaler "
                    "neither scales a DRA pool from zero nor grows it past minCount).",
        validate=validate_aks_dra_pool_size,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]


def autoscaler_order_checks(view: StackView, report_violation: ReportViolation, pending: Pending) -> None:
    """AKS's managed autoscaler: the cluster's autoscaler profile uses the priority expander, then the same
    ConfigMap checks as on EKS (its node groups are the pools' scale sets)."""
    for cluster in view.of_type(PROFILE.cluster_type):
        expander = str(dig(cluster.props, "autoScalerProfile", "expander", default=""))
        if not dig_known(cluster.props, "autoScalerProfile", "expander")[0]:
            pending.add("autoScalerProfile.expander", f"the AKS cluster ({cluster.urn})")
        elif expander != "priority":
            report_violation("the AKS cluster's autoscaler profile does not use the priority expander "
                             "(autoScalerProfile.expander: priority), so pools scale up in no set order", cluster.urn)
    priority_expander.check_order(view, report_violation, pending)


def dra_pool_problems(pool: Pool) -> list[str]:
    """What only AKS refuses of a DRA-labelled pool (``dra-pool-served``)."""
    if pool.nvidia_dra_labelled and pool.gpu_driver_version == "None":
        # learn.microsoft.com/azure/aks/use-nvidia-gpu: gpuProfile.driver None skips AKS's driver install,
        # and nothing in the stack installs one on AKS.
        return [f"{pool.title} is labelled for DRA but skips AKS's NVIDIA driver (gpuProfile.driver: None): its "
                "nodes have no driver, so the DRA kubelet plugin publishes no devices and claims pend forever. "
                "Keep gpuProfile.driver: Install."]
    return []


def cluster_advisories(args: ResourceValidationArgs, props: Mapping[str, Any]) -> list[str]:
    """Advisories only AKS has about a cluster (``kubernetes-version-advisories``): none."""
    return []


def reach_inputs(resources: Sequence[Any]) -> list[Network] | None:
    """The ranges of the plan's virtual networks and subnets; None when the plan builds none."""
    vnets = [r for r in resources if r.resource_type == VNET]
    subnets = [r for r in resources if r.resource_type == SUBNET]
    if not (vnets or subnets):
        return None
    return networks([*(p for r in vnets for p in dig(plain(r.props), "addressSpace", "addressPrefixes", default=[]) or []),
                     *(plain(r.props).get("addressPrefix") for r in subnets)])


def unknown_reach_inputs(vnet_ranges: list[Network] | None) -> list[str]:
    return []


def unreachable(cluster: Mapping[str, Any], vnet_ranges: list[Network] | None,
                runner_ranges: list[Network]) -> str | None:
    """Why no runner can reach this AKS API server (None: reachable). ``vnet_ranges`` None: the plan builds
    no virtual network (the cluster uses an existing subnet), so where the endpoint sits is not in the plan."""
    access = cluster.get("apiServerAccessProfile") or {}
    private = access.get("enablePrivateCluster")
    authorized = access.get("authorizedIPRanges") or []
    if private == UNKNOWN or authorized == UNKNOWN or UNKNOWN in authorized:
        return None
    if private is True:
        if vnet_ranges is None and runner_ranges:
            return None
        if vnet_ranges and any(overlaps(r, vnet_ranges) for r in runner_ranges):
            return None
        where = ", ".join(str(r) for r in vnet_ranges or []) or "an existing subnet"
        return (f"its API server is private (apiServerAccessProfile.enablePrivateCluster) and answers only inside "
                f"its virtual network ({where}), and this policy's runnerCidrs config names no range there")
    if not authorized or not runner_ranges:
        return None  # open to all, or the allow-list is where the operator runs
    if any(overlaps(r, networks(authorized)) for r in runner_ranges):
        return None
    return (f"its public API server admits only its authorized IP ranges ({', '.join(map(str, authorized))}), "
            f"and none of them holds a range of this policy's runnerCidrs config "
            f"({', '.join(str(r) for r in runner_ranges)})")
