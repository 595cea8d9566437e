"""The stack ``make verify`` checks the cluster against: its pools, workloads and cloud."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from gpu_fungibility import clouds

from stacks.arguments.eks import node_group_name
from stacks.config import NodePool, StackConfig
from verify.snapshot import Node


class StackError(Exception):
    """The stack cannot be loaded (unknown stack, invalid config); exit code 2."""


@dataclass(frozen=True)
class Stack:
    name: str
    config: StackConfig

    @property
    def cloud(self) -> clouds.CloudProfile:
        return clouds.profile(self.config.cluster.cloud)

    @functools.cached_property
    def pools(self) -> dict[str, NodePool]:
        return dict(self.config.node_pools)

    def pool_of(self, node: Node) -> str:
        """The node's pool as its cloud labels it ("" for a node of no pool the stack knows).

        GKE node pools carry the pool's name; EKS node groups ``<cluster>-<pool>``
        (:func:`stacks.arguments.eks.node_group_name`).
        """
        value = node.labels.get(self._pool_label, "")
        return value if value in self.pools else self._group_pools.get(value, "")

    @functools.cached_property
    def _pool_label(self) -> str:
        return self.cloud.node_pool_label

    @functools.cached_property
    def _group_pools(self) -> dict[str, str]:
        """EKS node group name -> pool."""
        return {node_group_name(self.config.cluster.name, p): p for p in self.config.node_pools}

    def workload_pools(self, workload: str) -> list[str]:
        """The pools a workload's replicas may land on (its pool, or its compute class's pools)."""
        spec = self.config.workloads.get(workload)
        if spec is None:
            return []
        if spec.pool:
            return [spec.pool]
        if spec.compute_class and spec.compute_class in self.config.compute_classes:
            return [p for p in self.config.compute_classes[spec.compute_class].pools if p in self.config.node_pools]
        return list(self.config.node_pools)


def load_stack(name: str, stack_dir: Path) -> Stack:
    from offline_plan.run import read_stack_file
    from stacks.loader import ConfigError, parse_stack_config

    try:
        stack_file = read_stack_file(name, stack_dir)
        return Stack(name, parse_stack_config(stack_file.namespace_config))
    except FileNotFoundError as exc:
        raise StackError(f"unknown stack {name!r}: {exc}") from None
    except ConfigError as exc:
        raise StackError(f"Pulumi.{name}.yaml: {exc}") from None
