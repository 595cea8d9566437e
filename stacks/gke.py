"""GKE composition: cluster, accelerator pools, drivers, compute classes, then workloads."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def compose_gke(loaded: LoadedStack) -> None:
    raise NotImplementedError("GKE composition")
