"""What every managed cluster component shares: the control-plane arguments, their rules and outputs.

A cluster component (GKE, EKS, AKS, or a cloud registered later) builds a managed control plane, a small
system pool for the controllers, and the Kubernetes provider every in-cluster component is given. What
they share lives here once: the arguments that say which Kubernetes and who may reach the API server
(:class:`ClusterArgs`), the rules over them (:func:`control_plane_issues`: a supported version, never an
open public endpoint, CIDR blocks that parse, a valid cluster name), and the outputs ``cluster_name`` and
``kubernetes_provider``.

A cloud's cluster component supplies:

- an Args TypedDict built on :class:`ClusterArgs` with its own fields, and an ``__init__`` taking it;
- ``RULES``: ``staticmethod(f)`` where ``f(args)`` lists every problem, :func:`control_plane_issues` first;
- :meth:`ManagedCluster.build`: the cloud's resources, setting ``cluster_name``, ``kubernetes_provider``
  and its own outputs (annotated on its class, ``kubeconfig`` among them).
"""

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from .argument_rules import cluster_name_issues
from .base import Issues, LibraryComponent
from .versions import DEFAULT_KUBERNETES_VERSION, kubernetes_version_problem


class ClusterArgs(TypedDict):
    """What every managed cluster takes: its name, its Kubernetes version, who reaches its API server."""

    name: str
    """The cluster's name (a DNS label; the cloud's resources are named after it)."""
    kubernetes_version: NotRequired[str]
    """Control-plane version, 1.34 or later: DRA is GA there (default ``1.35``)."""
    public_endpoint: NotRequired[bool]
    """Expose the API server publicly, to ``authorized_networks`` only (default false: a private control
    plane)."""
    authorized_networks: NotRequired[list[str]]
    """CIDR blocks allowed to reach the API server's endpoint (needed with ``public_endpoint``)."""


def cidr_issues(args: Mapping[str, Any], keys: Sequence[str]) -> Issues:
    """Each entry of the list arguments ``keys`` that is not a CIDR block (host bits unset)."""
    issues: Issues = []
    for key in keys:
        for i, cidr in enumerate(args.get(key) or []):
            try:
                ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                issues.append((f"{key}[{i}]", f"{cidr!r} is not a CIDR block ({exc})"))
    return issues


def control_plane_issues(args: Mapping[str, Any], cidr_arguments: Sequence[str] = ("authorized_networks",)) -> Issues:
    """The rules every cluster's control plane follows, in argument names."""
    issues: Issues = []
    problem = kubernetes_version_problem(args.get("kubernetes_version", DEFAULT_KUBERNETES_VERSION))
    if problem:
        issues.append(("kubernetes_version", problem))
    if args.get("public_endpoint") and not args.get("authorized_networks"):
        issues.append(("public_endpoint", "needs authorized_networks (the CIDR blocks allowed to reach the API); "
                                          "an open control plane is never the default"))
    return issues + cidr_issues(args, cidr_arguments) + cluster_name_issues(args.get("name"))


class ManagedCluster(LibraryComponent):
    """Base of the cluster components (see the module's docstring for what a cloud supplies)."""

    cluster_name: pulumi.Output[str]
    """The cluster's name."""
    kubernetes_provider: k8s.Provider
    """The Kubernetes provider for the cluster: pass it to every in-cluster component."""

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts, args)
        self.build(name, args)
        self.register()

    def build(self, name: str, args: Any) -> None:
        """Create the cloud's resources and set the outputs."""
        raise NotImplementedError
