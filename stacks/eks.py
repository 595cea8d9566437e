"""EKS composition: network, cluster, node groups, drivers, autoscaler, then workloads."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def compose_eks(loaded: LoadedStack) -> None:
    raise NotImplementedError("EKS composition")
