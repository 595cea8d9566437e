"""How the pack reads EKS's resources: managed node groups, with the labels EKS puts on every node (its node
group and capacity type), and where an EKS cluster says its version."""

from __future__ import annotations

from collections.abc import Mapping

from gpu_fungibility.clouds.eks import PROFILE
from gpu_fungibility.node_selection import taint_from_api

from . import facts
from .stack_view import Family, Pool, Res, int_or_none, object_or_empty, require_known, str_map

#: Where a node group says it is spot.
SPOT_FIELDS = (("capacityType",),)
#: The fields holding the cluster's version (required) and a node group's (not checked), and the release channel.
CLUSTER_VERSION, POOL_VERSION, RELEASE_CHANNEL = "version", None, None


def pool(res: Res, nfd_labels_gpus: bool = False) -> Pool:
    """A EKS NodeGroup as the pool its nodes make (nfd_labels_gpus: NFD labels its GPU nodes too)."""
    for field_ in ("labels", "taints", "amiType", "instanceTypes", "nodeGroupName", "capacityType"):
        require_known(res, field_)
    props = res.props
    ami_type = str(props.get("amiType") or "")
    instance_types = [str(t) for t in props.get("instanceTypes") or []]
    shape = next((s for s in map(PROFILE.machine_shape, instance_types) if s), None)
    family: Family = "gpu" if (shape or "NVIDIA" in ami_type.upper()) else "cpu"
    pool_name = str(props.get("nodeGroupName") or res.name)
    spot = str(props.get("capacityType") or "ON_DEMAND").upper() == "SPOT"
    labels = str_map(props.get("labels"))
    added = {facts.EKS_NODEGROUP: pool_name, facts.EKS_CAPACITY_TYPE: "SPOT" if spot else "ON_DEMAND"}
    if family == "gpu" and nfd_labels_gpus:
        added[facts.NFD_NVIDIA_PCI] = "true"
    taints = tuple(taint_from_api(t) for t in props.get("taints") or [] if isinstance(t, Mapping))
    scaling = object_or_empty(props.get("scalingConfig"))
    return Pool(
        urn=res.urn, resource_name=res.name, pool_name=pool_name, cloud="eks", family=family,
        labels=labels, node_labels={**added, **labels}, taints=taints, spot=spot,
        min_size=int_or_none(scaling.get("minSize")),
        accelerator_type=shape.accelerator if shape else None, accelerator_count=shape.count if shape else 0,
        ami_type=ami_type or None, resource_labels=str_map(props.get("tags")), machine_types=tuple(instance_types),
    )
