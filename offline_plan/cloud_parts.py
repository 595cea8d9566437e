"""Each cloud's share of an area (the offline plan, the plan diff), found through the cloud registry.

A cloud's share is the module ``offline_plan.<cloud>`` (or the one its profile names in
``parts["offline_plan"]``): the mock outputs of its providers' resources (``OUTPUTS_BY_TYPE``), the results of
the provider functions its program calls (``CALL_RESULTS``) and what the "Before you deploy" block says about
where it deploys (``account``, ``control_plane_items``, ``deletion``; see :mod:`offline_plan.before_deploy`).
A cloud without one still plans: its resources echo their inputs, and the block says only what every cloud
shares. ``plan_diff`` finds each cloud's replacement rules the same way (area ``plan_diff``).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from gpu_fungibility import clouds

AREA = "offline_plan"


def cloud_part(cloud: Any, area: str = AREA) -> ModuleType | None:
    """The cloud's module for ``area``, or None when the cloud has none (an unknown cloud still raises)."""
    return clouds.optional_part(cloud, area)


def registered_parts(area: str = AREA) -> list[ModuleType]:
    """The ``area`` modules of every registered cloud, in registration order (read each time: a cloud may
    register after this module is imported)."""
    found = (cloud_part(name, area) for name in clouds.names())
    return [part for part in found if part is not None]
