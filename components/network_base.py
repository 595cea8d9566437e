"""What every cluster network component shares: build a network, or pass an existing one through.

A network component (GKE, EKS, AKS, or a cloud registered later) either builds the network its cluster's
nodes live in or, given the id(s) of an existing one in ``EXISTING_ARGUMENT``, builds nothing and hands
them on. :class:`ClusterNetwork` runs that choice once; the address range every built network takes
(``cidr``, :class:`NetworkArgs`) and its rule (:func:`range_issues`: a CIDR block, large enough for a
cluster) live here too.

A cloud's network component supplies:

- an Args TypedDict built on :class:`NetworkArgs` with its own fields, and an ``__init__`` taking it;
- ``EXISTING_ARGUMENT``: the argument naming what to use instead of building;
- ``RULES`` (see :class:`~.base.LibraryComponent`), :func:`range_issues` among them where it builds from ``cidr``;
- :meth:`ClusterNetwork.build` and :meth:`ClusterNetwork.use_existing`, each setting every output
  (annotated on its class).
"""

import ipaddress
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import pulumi

from .base import Issues, LibraryComponent

DEFAULT_CIDR = "10.0.0.0/16"
#: The longest prefix of a range a cluster is built in: a /20 has room for the nodes and what they hold.
SMALLEST_PREFIX = 20


class NetworkArgs(TypedDict):
    """What every built cluster network takes."""

    cidr: NotRequired[str]
    """The network's address range, /20 or larger (default ``10.0.0.0/16``)."""


def cidr_problem(value: Any) -> str | None:
    """Why ``value`` is not a CIDR block (host bits unset), or None."""
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        return f"{value!r} is not a CIDR block such as {DEFAULT_CIDR} ({exc})"
    return None


def range_issues(args: Mapping[str, Any], key: str = "cidr", default: str = DEFAULT_CIDR) -> Issues:
    """The range ``args[key]`` (default ``default``) is a CIDR block a cluster fits in (/20 or larger)."""
    value = args.get(key, default)
    problem = cidr_problem(value)
    if problem:
        return [(key, problem)]
    network = ipaddress.ip_network(value, strict=True)
    if network.prefixlen > SMALLEST_PREFIX:
        return [(key, f"{network} is too small for a cluster; use a /{SMALLEST_PREFIX} or larger")]
    return []


class ClusterNetwork(LibraryComponent):
    """Base of the network components (see the module's docstring for what a cloud supplies)."""

    EXISTING_ARGUMENT = ""

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts, args)
        if args.get(self.EXISTING_ARGUMENT):
            self.use_existing(args)
        else:
            self.build(name, args)
        self.register()

    def build(self, name: str, args: Any) -> None:
        """Create the network and set the outputs."""
        raise NotImplementedError

    def use_existing(self, args: Any) -> None:
        """Set the outputs from the existing network the arguments name."""
        raise NotImplementedError
