"""Stack config and the per-cloud composition of components."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stacks.loader import LoadedStack


def compose(loaded: LoadedStack) -> None:
    """Build the whole stack for the configured cloud."""
    if loaded.config.cluster.cloud == "gke":
        from stacks.gke import compose_gke

        compose_gke(loaded)
    else:
        from stacks.eks import compose_eks

        compose_eks(loaded)
