"""What a plan holds beyond its objects, for the tools beside ``make plan`` (the rehearsal): the stack's driver
Helm releases as they would run, each with its chart's defaults under the stack's values.

This is the surface those tools rely on; how the policy pack models a stack (``policies.stack_view``) stays the
pack's own and may change under it.
"""

from __future__ import annotations

from typing import Any

from offline_plan.run import PlanRun


def driver_releases(run: PlanRun) -> list[Any]:
    """The plan's driver Helm releases (``policies.charts.DriverRelease``: kind, chart, version, namespace and
    effective values), in plan order, as the policy pack reads them; releases with unknown values are left out."""
    from policies.stack_view import Res, StackView

    view = StackView([Res(r.type, r.urn, r.urn.rsplit("::", 1)[1], r.inputs) for r in run.resources])
    return list(view.releases)
