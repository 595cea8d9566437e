"""A later pool of a compute class whose nodes an earlier alternative also fits: what the scheduler does there."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stacks.config import StackConfig


def shadowed_alternatives(cfg: StackConfig) -> list[tuple[str, int, str, str, int, int]]:
    """``(class, later index, earlier pool, later pool, earlier count, later count)`` for each later GPU pool of a
    compute class whose nodes an earlier alternative also fits: the same accelerator with fewer per node.

    ``firstAvailable`` takes the first alternative that fits on the node the scheduler chose, and an alternative
    selects its pool's accelerator, not its pool: on a 2 x L4 node a ``1 x L4`` alternative listed first fits, so
    each replica there gets one device and two replicas share the node (the simulator and the rehearsal agree).
    """
    found = []
    for name, cc in cfg.compute_classes.items():
        pools = [(p, cfg.node_pools.get(p)) for p in cc.pools]
        for j, (later, later_pool) in enumerate(pools):
            if later_pool is None or later_pool.family != "gpu":
                continue
            for earlier, earlier_pool in pools[:j]:
                if (earlier_pool is not None and earlier_pool.family == "gpu"
                        and earlier_pool.accelerator.type == later_pool.accelerator.type
                        and earlier_pool.accelerator.count < later_pool.accelerator.count):
                    found.append((name, j, earlier, later, earlier_pool.accelerator.count,
                                  later_pool.accelerator.count))
                    break
    return found


def shadowing_warnings(cfg: StackConfig) -> list[str]:
    warnings = []
    for name, j, earlier, later, low, high in shadowed_alternatives(cfg):
        gpu = cfg.node_pools[later].accelerator.type
        warnings.append(
            f"computeClasses.{name}.pools[{j}] ({later}, {high} x {gpu} per node) comes after {earlier} ({low} x "
            f"{gpu}): the claim's {earlier} alternative fits on {later}'s nodes too and is taken first there, so "
            f"each replica on {later} gets {low} device{'s' if low != 1 else ''} (tensor-parallel {low}) and "
            f"{high // low} replicas share a node, not {high} devices each. List {later} before {earlier} if a "
            "replica needs them all, or give the pools different accelerators.")
    return warnings
