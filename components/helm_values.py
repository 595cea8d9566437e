"""Helm's value merge, the one copy in the project.

Helm combines values in two steps (``helm.sh/helm/v3/pkg/chartutil`` coalescing):
the values a user supplies are merged together first, and the result is then
coalesced over the chart's own ``values.yaml``. In both, maps merge key by key
and anything else (lists, scalars) replaces. A ``null`` supplied by the user
survives the first step and, in the second, *deletes* the chart's default for
that key: that is how a stack clears, say, the controller's default affinity.

:func:`merge` implements both: ``delete_nulls=False`` for layering the
project's values and a caller's overrides (the nulls stay, for Helm to apply),
``delete_nulls=True`` to compute the effective values of a release from the
chart defaults (what the policy pack reasons about). Inputs are never changed;
leaves (which may be Pulumi Outputs) are shared, never copied.
"""

from collections.abc import Mapping
from typing import Any


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def merge(base: Mapping[str, Any] | None, override: Mapping[str, Any] | None, *,
          delete_nulls: bool = False) -> dict[str, Any]:
    """``override`` over ``base`` as Helm merges values; see the module docstring for ``delete_nulls``."""
    result: dict[str, Any] = {k: _copy(v) for k, v in (base or {}).items()}
    for key, value in (override or {}).items():
        if value is None and delete_nulls:
            result.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merge(result[key], value, delete_nulls=delete_nulls)
        else:
            result[key] = _copy(value)
    return result


def coalesce(chart_defaults: Mapping[str, Any], supplied: Mapping[str, Any] | None) -> dict[str, Any]:
    """The effective values of a release: what it supplies over the chart's defaults, nulls deleting."""
    return merge(chart_defaults, supplied, delete_nulls=True)


def truthy(value: Any) -> bool:
    """Helm truthiness, including the strings users pass with ``--set`` (``"false"`` is false)."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "off", "null")
    return bool(value)
