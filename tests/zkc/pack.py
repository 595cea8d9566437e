"""How the policy pack reads ZKC's resources (the ``policies`` part of its profile)."""

from collections.abc import Mapping

from gpu_fungibility.node_selection import taint_from_api

from policies.stack_view import Family, Pool, Res, Taint, int_or_none, require_known, str_map

from . import POOL_LABEL, PROFILE

SPOT_FIELDS = (("spot",),)
CLUSTER_VERSION, POOL_VERSION, RELEASE_CHANNEL = "kubernetesVersion", "version", None


def pool(res: Res, nfd_labels_gpus: bool = False) -> Pool:
    for field in ("labels", "taints", "machineType", "spot"):
        require_known(res, field)
    props = res.props
    machine = str(props.get("machineType") or "")
    shape = PROFILE.machine_shape(machine)
    family: Family = "gpu" if shape else "cpu"
    name = str(props.get("name") or res.name)
    labels = str_map(props.get("labels"))
    taints = [taint_from_api(t) for t in props.get("taints") or [] if isinstance(t, Mapping)]
    if family == "gpu":
        taints.append(Taint("nvidia.com/gpu", "present", "NoSchedule"))
    return Pool(urn=res.urn, resource_name=res.name, pool_name=name, cloud=PROFILE.name, family=family,
                labels=labels, node_labels={POOL_LABEL: name, **labels}, taints=tuple(taints),
                spot=bool(props.get("spot")), min_size=int_or_none(props.get("minNodes")),
                accelerator_type=shape.accelerator if shape else None, accelerator_count=shape.count if shape else 0,
                resource_labels=str_map(props.get("resourceLabels")), machine_types=(machine,) if machine else ())
