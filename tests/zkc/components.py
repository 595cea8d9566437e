"""ZKC's library components: its cluster and its GPU pool, the pool on the same base as every cloud's
(:class:`gpu_fungibility.node_pool_base.AcceleratorPool`)."""

from typing import NotRequired, TypedDict

import pulumi
from gpu_fungibility.base import LibraryComponent
from gpu_fungibility.node_pool_base import AcceleratorPool
from gpu_fungibility.node_selection import API_EFFECTS
from gpu_fungibility.pool_args import AcceleratorPoolArgs, autoscaling_of
from gpu_fungibility.wiring_keys import PoolSpec

CLUSTER_TYPE, POOL_TYPE = "zkc:index/cluster:Cluster", "zkc:index/nodePool:NodePool"


class ZkcSystemPool(TypedDict):
    machine_type: str
    """The system pool's machine."""
    min_nodes: int
    """Fewest system nodes."""
    max_nodes: int
    """Most system nodes."""
    disk_size_gb: NotRequired[int]
    """Boot disk size in GB."""


class ZkcClusterArgs(TypedDict):
    name: str
    """The cluster's name."""
    location: str
    """The region."""
    kubernetes_version: str
    """The Kubernetes minor."""
    public_endpoint: bool
    """Whether the API server has a public endpoint."""
    authorized_networks: list[str]
    """Ranges allowed to reach a public endpoint."""
    labels: dict[str, str]
    """Resource labels."""
    system_pool: ZkcSystemPool
    """The cluster's own CPU pool."""


class ZkcCluster(LibraryComponent):
    """A ZKC cluster: one resource, whose kubeconfig reaches the cluster's API server."""

    cluster_name: pulumi.Output[str]
    """The cluster's name."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster."""

    @staticmethod
    def _rules(args: ZkcClusterArgs) -> list[tuple[str, str]]:
        if args["public_endpoint"] and not args["authorized_networks"]:
            return [("authorized_networks", "a public endpoint lists the ranges that may reach it")]
        return []

    RULES = staticmethod(_rules)

    def __init__(self, name: str, args: ZkcClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        cluster = pulumi.CustomResource(CLUSTER_TYPE, f"{name}-cluster", {
            "name": args["name"], "location": args["location"], "kubernetesVersion": args["kubernetes_version"],
            "publicEndpoint": args["public_endpoint"], "authorizedNetworks": list(args["authorized_networks"]),
            "labels": dict(args["labels"]), "systemMachineType": args["system_pool"]["machine_type"],
            "kubeconfig": None,
        }, opts=self.child())
        self.cluster_name = pulumi.Output.from_input(args["name"])
        self.kubeconfig = pulumi.Output.secret(cluster.kubeconfig)  # type: ignore[attr-defined]
        self.register()


class ZkcNodePoolArgs(AcceleratorPoolArgs):
    """One ZKC pool of GPU nodes."""

    cluster: pulumi.Input[str]
    """The cluster's name (``ZkcCluster.cluster_name``)."""
    machine_type: str
    """The pool's machine (``z1-gpu-1``, ``z1-gpu-8``)."""
    priority: NotRequired[int]
    """Where the pool stands in the autoscaler's order: higher is tried first (default 0)."""


class ZkcGpuNodePool(AcceleratorPool):
    """A ZKC node pool: the base checks and wires it, this class says only its machine and its resource."""

    CLOUD = "zkc"

    node_pool_name: pulumi.Output[str]
    """The pool's name."""

    def __init__(self, name: str, args: ZkcNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    @classmethod
    def machine_types(cls, args: ZkcNodePoolArgs) -> list[str]:
        return [args["machine_type"]] if args.get("machine_type") else []

    def build(self, name: str, args: ZkcNodePoolArgs, spec: PoolSpec) -> None:
        low, high = autoscaling_of(args)
        pulumi.CustomResource(POOL_TYPE, f"{name}-pool", {
            "name": spec.name, "cluster": args["cluster"], "machineType": args["machine_type"], "spot": spec.spot,
            "minNodes": low, "maxNodes": high, "labels": self.stack_labels(spec),
            "taints": [{"key": t.key, "value": t.value, "effect": API_EFFECTS[t.effect]}
                       for t in self.stack_taints(spec)],
            "resourceLabels": {"zkc.example/priority": str(args.get("priority", 0))},
        }, opts=self.child())
        self.node_pool_name = pulumi.Output.from_input(spec.name)
