"""Small helpers the rules share: pod specs of workload objects, policy config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..stack_view import WORKLOAD_KINDS, Res, dig


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


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every container of a pod spec, init containers included."""
    return [c for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
            if isinstance(c, Mapping)]


def config_list(config: Mapping[str, Any] | None, key: str) -> list[str]:
    value = (config or {}).get(key) or []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
