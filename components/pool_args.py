"""Argument types and checks that every accelerator pool shares, whatever the cloud.

:class:`Taint` and :class:`PoolAutoscaling` are types of the package schema (one ``index`` module), so each
name is used once in the whole library. :class:`AcceleratorPoolArgs` is the base of every pool component's
Args: its fields are declared here once and appear among each pool component's inputs.
"""

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from . import catalog, clouds
from .argument_rules import at_least, disk_size_issues
from .base import Issues
from .node_selection import TAINT_EFFECTS, NodeTaint, label_key_problem, label_value_problem
from .wiring_keys import PoolSpec


class Taint(TypedDict):
    """A node taint, in Kubernetes spelling."""

    key: str
    """The taint key, e.g. ``nvidia.com/gpu``."""
    value: NotRequired[str]
    """The taint value (default empty)."""
    effect: NotRequired[str]
    """``NoSchedule`` (default), ``PreferNoSchedule`` or ``NoExecute``."""


class PoolAutoscaling(TypedDict):
    """How many nodes a pool may have; the autoscaler moves between the two."""

    min_nodes: NotRequired[int]
    """Minimum nodes in total (default 0)."""
    max_nodes: NotRequired[int]
    """Maximum nodes in total (default 1)."""


class AcceleratorPoolArgs(TypedDict):
    """The arguments every accelerator pool takes, whatever the cloud (a cloud's Args add its own)."""

    accelerator_type: str
    """The accelerator, by the catalog's name (``nvidia-l4``, ``nvidia-a100-80gb``, ``tpu-v6e-slice``, ...): one
    the cloud offers, checked against the machine."""
    accelerator_count: NotRequired[int]
    """Accelerators per node (default: what the machine carries)."""
    spot: NotRequired[bool]
    """Spot capacity (default true)."""
    autoscaling: NotRequired[PoolAutoscaling]
    """Node counts, in total over the pool's zones (default 0 to 1). Where the cloud's autoscaler cannot add
    the first node of an empty DRA pool, a pool at 0 stays empty."""
    disk_size_gb: NotRequired[int]
    """The nodes' boot disk size in GB (default 200)."""
    dra: NotRequired[bool]
    """GPU pools: true (default) wires the pool for DRA; false makes a classic device-plugin GPU pool (the
    cloud's own driver and device plugin where it has them). TPU pools are always DRA pools."""
    on_demand_fallback: NotRequired[bool]
    """Marks a deliberate on-demand pool (node label ``gpu-fungibility/on-demand-fallback=true``)."""
    labels: NotRequired[dict[str, str]]
    """Extra node labels."""
    taints: NotRequired[list[Taint]]
    """Extra node taints."""


def taints_of(raw: Sequence[Mapping[str, Any]] | None) -> tuple[NodeTaint, ...]:
    return tuple(NodeTaint(str(t["key"]), str(t.get("value") or ""), str(t.get("effect") or "NoSchedule"))
                 for t in raw or [])


def taint_dicts(taints: Sequence[NodeTaint]) -> list[dict[str, str]]:
    return [t.as_dict() for t in taints]


def autoscaling_of(args: Mapping[str, Any]) -> tuple[int, int]:
    scaling = args.get("autoscaling") or {}
    return int(scaling.get("min_nodes", 0)), int(scaling.get("max_nodes", 1))


def label_issues(labels: Mapping[str, str], field: str = "labels") -> Issues:
    return [(f"{field}.{key}", problem) for key, value in labels.items()
            for problem in (label_key_problem(key), label_value_problem(value)) if problem]


def taint_issues(taints: Sequence[Mapping[str, Any]], field: str = "taints") -> Issues:
    issues: Issues = []
    for i, taint in enumerate(taints):
        for problem in (label_key_problem(str(taint.get("key", ""))), label_value_problem(str(taint.get("value") or ""))):
            if problem:
                issues.append((f"{field}[{i}]", problem))
        if taint.get("effect", "NoSchedule") not in TAINT_EFFECTS:
            issues.append((f"{field}[{i}].effect", f"{taint.get('effect')!r} is not one of {', '.join(TAINT_EFFECTS)}"))
    return issues


def accelerator_issues(cloud: str, family: str, args: Mapping[str, Any], machine_types: Sequence[str],
                       default_count: int) -> Issues:
    """The accelerator against the catalog and the cloud's machine shapes, in argument names."""
    accelerator = str(args.get("accelerator_type", ""))
    model = catalog.accelerator(accelerator)
    if model is None:
        return [("accelerator_type", f"unknown accelerator type {accelerator!r}; known: "
                                     f"{', '.join(catalog.known_accelerator_types())}")]
    profile = clouds.profile(cloud)
    if profile.name not in model.clouds:
        same = catalog.same_gpu_elsewhere(accelerator, profile.name)
        instead = (f"write {' or '.join(same)} (the same GPU as {profile.title} offers it, "
                   f"{', '.join(catalog.GPUS[t].product_name for t in same)}); " if same else "")
        return [("accelerator_type", f"{accelerator} is not offered on {profile.title}: {instead}"
                                     f"{profile.title} offers {', '.join(catalog.offered_on(profile.name))}")]
    if model.family != family:
        return [("accelerator_type", f"{accelerator} is not a {family.upper()}")]
    return profile.pool_shape_issues(family, accelerator, int(args.get("accelerator_count", default_count)),
                                     machine_types, args.get("topology"))


def scaling_issues(args: Mapping[str, Any]) -> Issues:
    low, high = autoscaling_of(args)
    issues: Issues = []
    if low < 0:
        issues.append(("autoscaling.min_nodes", "must be 0 or more"))
    if high < 1:
        issues.append(("autoscaling.max_nodes", "must be 1 or more"))
    elif high < low:
        issues.append(("autoscaling.max_nodes", f"{high} is below the minimum ({low}); the maximum must be "
                                                "at least the minimum"))
    return issues


def common_pool_issues(args: Mapping[str, Any]) -> Issues:
    issues = [*scaling_issues(args), *label_issues(args.get("labels") or {}),
              *taint_issues(args.get("taints") or []), *disk_size_issues(args),
              *at_least(args, "accelerator_count", 1)]
    if args.get("on_demand_fallback") and args.get("spot", True):
        issues.append(("on_demand_fallback", "an on-demand fallback pool needs spot: false"))
    return issues


def pool_spec(name: str, family: str, args: Mapping[str, Any], machine_type: str | None,
              default_count: int) -> PoolSpec:
    """The wiring description of a pool built from a component's arguments."""
    return PoolSpec(
        name=name,
        family=family,
        accelerator_type=str(args["accelerator_type"]),
        accelerator_count=int(args.get("accelerator_count", default_count)),
        dra=bool(args.get("dra", True)),
        spot=bool(args.get("spot", True)),
        compute_class=args.get("compute_class"),
        on_demand_fallback=bool(args.get("on_demand_fallback", False)),
        machine_type=machine_type,
        topology=args.get("topology"),
        labels=dict(args.get("labels") or {}),
        taints=taints_of(args.get("taints")),
    )
