"""What a cloud's stack builds from the config: the base every cloud's arguments share.

Each cloud says how its network, cluster and pools are built, and which components only it has, in
``stacks/arguments/<cloud>.py`` (an instance named ``ARGUMENTS``); the shared code finds it through the
cloud registry (:func:`for_cloud`), so a cloud registered later (a fork's, a test's) brings its own module
and no shared file changes. The base holds what every cloud's pools and cluster take from the config; a
cloud's class adds only the arguments its components name differently or alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpu_fungibility import clouds

from stacks.arguments.planned import POOL_PATHS, Issues, KeyPaths, Planned

if TYPE_CHECKING:
    from gpu_fungibility.clouds import CloudProfile

    from stacks.config import NodePool, StackConfig, SystemPool

#: The registry area of a cloud's stack arguments: ``clouds.part(cloud, AREA)`` is ``stacks.arguments.<cloud>``.
AREA = "stacks.arguments"


class CloudArguments:
    """How one cloud's stack turns the config into its components' arguments."""

    #: The registered cloud these arguments are for.
    cloud: str = ""
    #: The stack file's provider key naming a region (``aws:region``), which the program's explicit provider
    #: for ``cluster.location`` ignores; None where the cloud's provider has none.
    provider_region_key: str | None = None
    #: The ``cluster.network`` keys (camelCase) that bring an existing network on this cloud.
    network_keys: tuple[str, ...] = ()
    #: The resource name of the stack's NVIDIA DRA driver.
    nvidia_dra_name: str = "nvidia-dra-driver"
    #: The cluster component's argument naming the region, its labels, and its system pool.
    location_argument: str = "location"
    labels_argument: str = "labels"
    system_pool_argument: str = "system_pool"

    @property
    def profile(self) -> CloudProfile:
        return clouds.profile(self.cloud)

    def issues(self, cfg: StackConfig) -> Issues:
        """Config rules only this cloud has (the components check their own arguments)."""
        return []

    def network(self, cfg: StackConfig) -> Planned:
        raise NotImplementedError

    def cluster(self, cfg: StackConfig) -> Planned:
        raise NotImplementedError

    def pool(self, cfg: StackConfig, pool_name: str) -> Planned:
        """The pool's component, with stand-ins for what other resources provide."""
        raise NotImplementedError

    def cloud_components(self, cfg: StackConfig) -> list[Callable[[], Planned]]:
        """The drivers and controllers only this cloud's stack creates, in the order they are checked."""
        return []

    def components(self, cfg: StackConfig) -> list[Callable[[], Planned]]:
        """The cloud's share of the stack: network, cluster, pools, then :meth:`cloud_components`."""
        planned: list[Callable[[], Planned]] = [lambda: self.network(cfg), lambda: self.cluster(cfg)]
        planned += [lambda p=p: self.pool(cfg, p) for p in cfg.node_pools]
        return [*planned, *self.cloud_components(cfg)]

    # ---- what every cloud's pools and cluster take from the config ----

    def machines(self, chosen: NodePool | SystemPool) -> dict[str, Any]:
        """The pool's machine argument under the profile's name (``machine_type``, ``instance_types``, ...):
        a list where the config key is one, empty where the pool sets none (its check says so)."""
        from stacks.config import SystemPool

        argument = self.profile.pool_machine_argument
        value = getattr(chosen, argument)
        if value is None:
            value = type(getattr(SystemPool(), argument))()
        return {argument: list(value) if isinstance(value, list) else value}

    def pool_args(self, cfg: StackConfig, pool_name: str) -> dict[str, Any]:
        """The arguments every cloud's pool takes; the compute class only where pools carry it on their nodes."""
        pool = cfg.node_pools[pool_name]
        args: dict[str, Any] = {
            "accelerator_type": pool.accelerator.type,
            "accelerator_count": pool.accelerator.count,
            "spot": pool.spot,
            "on_demand_fallback": pool.on_demand_fallback,
            "dra": pool.dra,
            "autoscaling": {"min_nodes": pool.autoscaling.min, "max_nodes": pool.autoscaling.max},
            "disk_size_gb": pool.disk_size_gb,
            "labels": dict(pool.labels),
            "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints],
        }
        if pool.accelerator.topology:
            args["topology"] = pool.accelerator.topology
        compute_class = cfg.compute_class_of(pool_name)
        if compute_class and self.profile.compute_class_on_nodes:
            args["compute_class"] = compute_class
        return args

    def pool_paths(self, pool_name: str, **extra: str) -> KeyPaths:
        return KeyPaths(f"nodePools.{pool_name}", {**POOL_PATHS, **extra})

    def cluster_args(self, cfg: StackConfig) -> dict[str, Any]:
        """The arguments every cloud's cluster takes, under its component's names."""
        cluster = cfg.cluster
        system = cluster.system_pool
        return {
            "name": cluster.name,
            self.location_argument: cluster.location,
            "kubernetes_version": cluster.kubernetes_version,
            "public_endpoint": cluster.control_plane.public_endpoint,
            "authorized_networks": list(cluster.control_plane.authorized_networks),
            self.labels_argument: dict(cluster.labels),
            self.system_pool_argument: {**self.machines(system), "min_nodes": system.min, "max_nodes": system.max,
                                        "disk_size_gb": system.disk_size_gb},
        }


def for_cloud(cloud: str) -> CloudArguments:
    """The registered cloud's stack arguments (``stacks/arguments/<cloud>.py``, or the module its profile names)."""
    return clouds.part(cloud, AREA).ARGUMENTS


def registered() -> list[CloudArguments]:
    """The stack arguments of every registered cloud that has a stack (a cloud registered for the library or
    the policy pack alone has none)."""
    modules = [clouds.optional_part(name, AREA) for name in clouds.names()]
    return [module.ARGUMENTS for module in modules if module is not None]
