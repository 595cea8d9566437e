"""The stack program: config model, config rules, and the per-cloud composition of the library's components.

Each cloud's share lives in modules of its own, found through the cloud registry: its arguments and config
rules in ``stacks/arguments/<cloud>.py`` (:mod:`stacks.arguments.cloud`), its composition in
``stacks/<cloud>.py`` (a ``compose(loaded)`` function, the only code that imports the cloud's SDK).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_fungibility import clouds

if TYPE_CHECKING:
    from stacks.config import StackConfig
    from stacks.loader import LoadedStack

#: The registry area of a cloud's composition: ``clouds.part(cloud, AREA)`` is ``stacks.<cloud>``.
AREA = "stacks"


def composition_issues(cfg: StackConfig) -> list[tuple[str, str]]:
    """Problems the components would report, in config key paths, plus the cloud's own config rules.

    The loader adds them to the config's own, so one run reports every problem
    before anything is built.
    """
    from stacks.arguments import argument_issues, cloud_arguments

    issues = [*cloud_arguments(cfg).issues(cfg), *argument_issues(cfg)]
    return list(dict.fromkeys(issues))


def compose(loaded: LoadedStack) -> None:
    """Build the whole stack for the configured cloud (each cloud's composition imports only its own SDK)."""
    clouds.part(loaded.config.cluster.cloud, AREA).compose(loaded)
