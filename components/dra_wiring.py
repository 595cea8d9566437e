"""The DRA wiring of a pool: the labels and taints that decide which plugin runs where.

One pure module, so the pool components, the DRA driver values, the workloads,
the simulator and the policy pack all read the same facts. It covers both what
the library sets on a pool and what the cloud adds to every node of it (that
part comes from the cloud's profile, :mod:`components.clouds`).

A pool is described by a :class:`PoolSpec` (no Pulumi, no stack config): its
name as the cloud knows it, its accelerator, whether it is a DRA pool, spot,
the compute class it belongs to, and the caller's own labels and taints.
"""

from . import clouds
from .node_selection import NodeTaint
from .wiring_keys import PoolSpec


def stack_labels(cloud: str | clouds.CloudProfile, pool: PoolSpec) -> dict[str, str]:
    """Labels the library sets on every node of the pool (the caller's labels last)."""
    return clouds.profile(cloud).stack_labels(pool)


def stack_taints(cloud: str | clouds.CloudProfile, pool: PoolSpec) -> list[NodeTaint]:
    """Taints the library sets on the pool (the caller's taints last)."""
    return [*clouds.profile(cloud).stack_taints(pool), *pool.taints]


def node_labels(cloud: str | clouds.CloudProfile, pool: PoolSpec) -> dict[str, str]:
    """Every label a node of the pool ends up with: the cloud's, then the library's and the caller's."""
    profile = clouds.profile(cloud)
    return {**profile.added_labels(pool), **stack_labels(profile, pool)}


def node_taints(cloud: str | clouds.CloudProfile, pool: PoolSpec) -> list[NodeTaint]:
    """Every taint a node of the pool ends up with."""
    profile = clouds.profile(cloud)
    return [*stack_taints(profile, pool), *profile.added_taints(pool)]
