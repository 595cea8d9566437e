"""The stack program: config model, config rules, and the per-cloud composition of the library's components."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_fungibility import clouds

if TYPE_CHECKING:
    from stacks.config import StackConfig
    from stacks.loader import LoadedStack


def composition_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Problems the components would report, in config key paths, plus the cloud's own config rules.

    The loader adds them to the config's own, so one run reports every problem
    before anything is built.
    """
    from stacks.aks import aks_issues
    from stacks.arguments import argument_issues
    from stacks.eks import eks_issues

    cloud_rules = {"gke": lambda _: [], "eks": eks_issues, "aks": aks_issues}
    issues = [*cloud_rules[clouds.profile(cfg.cluster.cloud).name](cfg), *argument_issues(cfg)]
    return list(dict.fromkeys(issues))


def compose(loaded: LoadedStack) -> None:
    """Build the whole stack for the configured cloud."""
    import importlib

    # Each cloud's composition imports only its own provider SDK.
    composers = {"gke": ("stacks.gke", "compose_gke"), "eks": ("stacks.eks", "compose_eks"),
                 "aks": ("stacks.aks", "compose_aks")}
    module, function = composers[clouds.profile(loaded.config.cluster.cloud).name]
    getattr(importlib.import_module(module), function)(loaded)
