"""How the pack reads GKE's resources: node pools with the labels and taints GKE adds, and where a GKE
cluster or pool says its version.

GKE labels GPU nodes with the accelerator and taints them ``nvidia.com/gpu=present:NoSchedule``, TPU nodes
likewise with ``google.com/tpu``, and every node with its pool (and spot nodes as spot).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpu_fungibility.clouds.gke import PROFILE
from gpu_fungibility.node_selection import taint_from_api

from . import facts
from .stack_view import Family, Pool, Res, Taint, dig, int_or_none, object_or_empty, require_known, str_map

#: GKE TPU machine families (v6e, v5e, v5p).
TPU_MACHINE_PREFIXES = ("ct6e-", "ct5lp-", "ct5p-")
#: Where a pool says it is spot.
SPOT_FIELDS = (("nodeConfig", "spot"), ("nodeConfig", "preemptible"))
#: The fields holding the cluster's and a pool's version (the cluster's required), and the release channel.
CLUSTER_VERSION, POOL_VERSION, RELEASE_CHANNEL = "minMasterVersion", "version", ("releaseChannel", "channel")


def pool(res: Res, nfd_labels_gpus: bool = False) -> Pool:
    """A GKE NodePool as the pool its nodes make (nfd_labels_gpus: NFD labels its GPU nodes too)."""
    for field_ in ("labels", "taints", "guestAccelerators", "machineType", "spot", "preemptible"):
        require_known(res, "nodeConfig", field_)
    require_known(res, "name")
    node_config = res.props.get("nodeConfig") or {}
    machine_type = str(node_config.get("machineType") or "")
    accelerators = [a for a in (node_config.get("guestAccelerators") or []) if isinstance(a, Mapping)]
    shape = PROFILE.machine_shape(machine_type)
    accelerator_type = str(accelerators[0].get("type")) if accelerators else (shape.accelerator if shape else None)
    count = int_or_none(accelerators[0].get("count")) if accelerators else (shape.count if shape else 0)
    family: Family = "cpu"
    if (accelerator_type or "").startswith("tpu-") or machine_type.startswith(TPU_MACHINE_PREFIXES):
        family = "tpu"
    elif accelerator_type:
        family = "gpu"
    pool_name = str(res.props.get("name") or res.name)
    spot = bool(node_config.get("spot")) or bool(node_config.get("preemptible"))
    labels = str_map(node_config.get("labels"))
    added: dict[str, str] = {facts.GKE_NODEPOOL: pool_name}
    if spot:
        added[facts.GKE_SPOT] = "true"
    taints = [taint_from_api(t) for t in node_config.get("taints") or [] if isinstance(t, Mapping)]
    if family == "gpu":
        added[facts.GKE_ACCELERATOR] = str(accelerator_type)
        taints.append(Taint(facts.GPU_TAINT_KEY, "present", "NoSchedule"))
        if nfd_labels_gpus:
            added[facts.NFD_NVIDIA_PCI] = "true"
    elif family == "tpu":
        added[facts.GKE_TPU_ACCELERATOR] = str(accelerator_type or "")
        if shape and shape.topology:
            added[facts.GKE_TPU_TOPOLOGY] = shape.topology
        taints.append(Taint(facts.TPU_TAINT_KEY, "present", "NoSchedule"))
    driver = dig(accelerators, 0, "gpuDriverInstallationConfig", "gpuDriverVersion") if accelerators else None
    autoscaling = object_or_empty(res.props.get("autoscaling"))
    min_size = int_or_none(autoscaling.get("minNodeCount", autoscaling.get("totalMinNodeCount")))
    return Pool(
        urn=res.urn, resource_name=res.name, pool_name=pool_name, cloud="gke", family=family,
        labels=labels, node_labels={**added, **labels}, taints=tuple(taints), spot=spot, min_size=min_size,
        accelerator_type=accelerator_type, accelerator_count=count or 0,
        gpu_driver_version=str(driver) if driver else None,
        resource_labels=str_map(node_config.get("resourceLabels")),
        machine_types=(machine_type,) if machine_type else (),
    )
