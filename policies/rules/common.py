"""Small helpers the rules share: pod specs of workload objects, policy config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..stack_view import UNKNOWN, WORKLOAD_KINDS, Res, StackView, dig
from ..unknowns import Pending, is_unknown

_POD_SPEC_PATHS = {"Pod": ("spec",), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec")}


def pod_spec_problem(res: Res) -> str | None:
    """Why a workload object's pod spec cannot be read (``spec`` a string, a list...), or None.

    A rule that skipped such an object would pass it unchecked; the pack reports it instead. Values
    unknown during a preview are not a problem.
    """
    kind = res.kind or res.type.rsplit(":", 1)[-1]
    if kind not in WORKLOAD_KINDS:
        return None
    node: Any = res.props
    walked: list[str] = []
    for key in _POD_SPEC_PATHS.get(kind, ("spec", "template", "spec")):
        value = node.get(key) if isinstance(node, Mapping) else None
        walked.append(key)
        if value is None or value == UNKNOWN:
            return None
        if not isinstance(value, Mapping):
            return (f"{'.'.join(walked)} is a {type(value).__name__}, not an object, so its pods cannot be "
                    "checked (nor created by Kubernetes)")
        node = value
    return None


def pod_spec(res: Res) -> dict[str, Any] | None:
    """The pod spec of a workload object (Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod)."""
    kind = res.kind or res.type.rsplit(":", 1)[-1]
    if kind not in WORKLOAD_KINDS:
        return None
    if kind == "Pod":
        spec = dig(res.props, "spec")
    elif kind == "CronJob":
        spec = dig(res.props, "spec", "jobTemplate", "spec", "template", "spec")
    else:
        spec = dig(res.props, "spec", "template", "spec")
    return spec if isinstance(spec, Mapping) else None


def note_unknown_pod_specs(view: StackView, pending: Pending) -> bool:
    """Name to ``pending`` every known workload object whose pod spec (or a step to it) is unknown; whether any."""
    found = False
    for res in view.kubernetes():
        kind = res.kind or res.type.rsplit(":", 1)[-1]
        if kind not in WORKLOAD_KINDS or pod_spec(res) is not None:
            continue
        node: Any = res.props
        for key in _POD_SPEC_PATHS.get(kind, ("spec", "template", "spec")):
            node = node.get(key) if isinstance(node, Mapping) else None
            if is_unknown(node):
                pending.add("its pod spec", f"{res.title} ({res.urn})")
                found = True
                break
    return found


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every container of a pod spec, init containers included."""
    return [c for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
            if isinstance(c, Mapping)]


def config_list(config: Mapping[str, Any] | None, key: str) -> list[str]:
    value = (config or {}).get(key) or []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
