"""Stack config and the per-cloud composition of components."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stacks.config import StackConfig
    from stacks.loader import LoadedStack


def composition_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Problems only the cloud composition and the in-cluster objects can see.

    The loader adds them to the config's own, so one run reports every problem
    before anything is built; each component still validates its own inputs.
    """
    from stacks.in_cluster import in_cluster_issues

    issues: list[tuple[str, str]] = []
    if cfg.cluster.cloud == "gke":
        from components.gke_cluster import cluster_issues
        from components.gke_network import network_issues

        issues += [*network_issues(cfg.cluster), *cluster_issues(cfg.cluster)]
    else:
        from stacks.eks import eks_issues

        issues += eks_issues(cfg)
    issues += in_cluster_issues(cfg)
    return list(dict.fromkeys(issues))


def compose(loaded: LoadedStack) -> None:
    """Build the whole stack for the configured cloud."""
    if loaded.config.cluster.cloud == "gke":
        from stacks.gke import compose_gke

        compose_gke(loaded)
    else:
        from stacks.eks import compose_eks

        compose_eks(loaded)
