"""ZKC's stack arguments (the ``stacks.arguments`` part of its profile): a cluster and its pools, no network."""

from collections.abc import Callable
from typing import Any

from stacks.arguments.cloud import CloudArguments
from stacks.arguments.planned import CLUSTER_PATHS, PENDING, KeyPaths, Planned

from .components import ZkcCluster, ZkcGpuNodePool


class ZkcArguments(CloudArguments):
    cloud = "zkc"

    def issues(self, cfg: Any) -> list[tuple[str, str]]:
        return [(f"cluster.zones[{i}]", f"{zone!r} is not a zone of {cfg.cluster.location}")
                for i, zone in enumerate(cfg.cluster.zones) if not zone.startswith(cfg.cluster.location)]

    def cluster(self, cfg: Any) -> Planned:
        return Planned(ZkcCluster, cfg.cluster.name, self.cluster_args(cfg), KeyPaths("cluster", CLUSTER_PATHS))

    def pool(self, cfg: Any, pool_name: str, *, cluster: Any = PENDING) -> Planned:
        order = [p for cc in cfg.compute_classes.values() for p in cc.pools]
        priority = (len(order) - order.index(pool_name)) * 10 if pool_name in order else 0
        args = {**self.pool_args(cfg, pool_name), **self.machines(cfg.node_pools[pool_name]), "cluster": cluster,
                "priority": priority}
        return Planned(ZkcGpuNodePool, pool_name, args, self.pool_paths(pool_name))

    def components(self, cfg: Any) -> list[Callable[[], Planned]]:
        return [lambda: self.cluster(cfg), *[lambda p=p: self.pool(cfg, p) for p in cfg.node_pools]]


ARGUMENTS = ZkcArguments()
