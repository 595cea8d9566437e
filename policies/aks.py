"""How the pack reads AKS's resources: agent pools, with the labels and taints AKS adds, and where an AKS
cluster or pool says its version.

AKS labels every node with its agent pool, GPU nodes ``kubernetes.azure.com/accelerator=nvidia``, and labels
and taints Spot nodes ``kubernetes.azure.com/scalesetpriority=spot``.
"""

from __future__ import annotations

from gpu_fungibility.clouds.aks import PROFILE

from . import facts
from .stack_view import Family, Pool, Res, Taint, dig, int_or_none, require_known, str_map

#: Where an agent pool says it is spot.
SPOT_FIELDS = (("scaleSetPriority",),)
#: The fields holding the cluster's version (required) and a pool's, and the release channel.
CLUSTER_VERSION, POOL_VERSION, RELEASE_CHANNEL = "kubernetesVersion", "orchestratorVersion", None


def _taint(text: str) -> Taint:
    """``key=value:Effect`` (AKS's spelling) as a taint."""
    head, _, effect = text.partition(":")
    key, _, value = head.partition("=")
    return Taint(key, value, effect or "NoSchedule")


def pool(res: Res, nfd_labels_gpus: bool = False) -> Pool:
    """A AKS AgentPool as the pool its nodes make (nfd_labels_gpus: NFD labels its GPU nodes too)."""
    for field_ in ("nodeLabels", "nodeTaints", "vmSize", "agentPoolName", "scaleSetPriority"):
        require_known(res, field_)
    props = res.props
    vm_size = str(props.get("vmSize") or "")
    shape = PROFILE.machine_shape(vm_size)
    family: Family = "gpu" if shape else "cpu"
    pool_name = str(props.get("agentPoolName") or res.name)
    spot = str(props.get("scaleSetPriority") or "Regular") == "Spot"
    labels = str_map(props.get("nodeLabels"))
    taints = [_taint(str(t)) for t in props.get("nodeTaints") or [] if isinstance(t, str)]
    added: dict[str, str] = {facts.AKS_AGENTPOOL: pool_name}
    if spot:
        added[facts.AKS_SCALESET_PRIORITY] = "spot"
        if Taint(facts.AKS_SCALESET_PRIORITY, "spot", "NoSchedule") not in taints:  # the pool may carry it already
            taints.append(Taint(facts.AKS_SCALESET_PRIORITY, "spot", "NoSchedule"))
    if family == "gpu":
        added[facts.AKS_ACCELERATOR] = "nvidia"
        if nfd_labels_gpus:
            added[facts.NFD_NVIDIA_PCI] = "true"
    managed = (str(dig(props, "gpuProfile", "nvidia", "managementMode", default="")) == "Managed"
               or str(str_map(props.get("tags")).get("EnableManagedGPUExperience", "")).lower() == "true")
    driver = dig(props, "gpuProfile", "driver")
    return Pool(
        urn=res.urn, resource_name=res.name, pool_name=pool_name, cloud="aks", family=family,
        labels=labels, node_labels={**added, **labels}, taints=tuple(taints), spot=spot,
        min_size=int_or_none(props.get("minCount")),
        accelerator_type=shape.accelerator if shape else None, accelerator_count=shape.count if shape else 0,
        gpu_driver_version=str(driver) if driver else None,
        ami_type=PROFILE.MANAGED_GPU_STACK if managed else None, resource_labels=str_map(props.get("tags")),
        machine_types=(vm_size,) if vm_size else (),
    )
