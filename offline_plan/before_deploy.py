"""What to check before ``pulumi up``: where the stack deploys, who can reach it, what always costs money.

The "Before you deploy" block at the top of ``summary.md`` and on the terminal (the advisory about replicas
that cannot fit is the simulator's: ``simulator.advisories``).

What only a cloud knows comes from its share of the offline plan (:mod:`offline_plan.cloud_parts`):
``account(cfg, provider) -> Item`` (which project, account or subscription the provider deploys into),
``control_plane_items(cfg) -> list[Item]`` (how `pulumi up` reaches the API server, beyond the shared
settings) and ``deletion(cfg) -> Item | None`` (where the cloud does not take cluster.deletionProtection);
each is optional.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from offline_plan.cloud_parts import cloud_part

#: Address ranges reserved for documentation (RFC 5737, RFC 3849): a stack that still lists one has
#: not been given its real workstation or CI range, and nobody can reach its control plane.
DOCUMENTATION_RANGES = tuple(ipaddress.ip_network(n) for n in
                             ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"))
OPEN_RANGES = ("0.0.0.0/0", "::/0")


@dataclass(frozen=True)
class Item:
    level: str  # "ok" | "warning" | "cost"
    topic: str
    text: str


def items(run: Any) -> list[Item]:
    cfg = run.config
    provider = getattr(run, "provider_config", {}) or {}
    return [_account(cfg, provider), *_control_plane(cfg), *_always_on(cfg), _deletion(cfg)]


def _hook(cfg: Any, name: str) -> Callable[..., Any] | None:
    """The function ``name`` of the stack's cloud's share of the offline plan, or None where it has none."""
    return getattr(cloud_part(cfg.cluster.cloud), name, None)


def _account(cfg: Any, provider: dict[str, Any]) -> Item:
    account = _hook(cfg, "account")
    if account is not None:
        return account(cfg, provider)
    return Item("ok", "account", f"the account of your credentials, region {cfg.cluster.location}")


def _control_plane(cfg: Any) -> list[Item]:
    access = cfg.cluster.control_plane
    found = []
    if access.public_endpoint:
        found.append(Item("ok", "control plane",
                          f"public endpoint, reachable from {', '.join(access.authorized_networks) or 'nowhere'} "
                          "(cluster.controlPlane.authorizedNetworks)"))
    else:
        found.append(Item("ok", "control plane", "private IP endpoint (cluster.controlPlane.publicEndpoint: false)"))
    if access.runner_cidrs:
        found.append(Item("ok", "control plane", f"`pulumi up` runs from {', '.join(access.runner_cidrs)} "
                                                 "(cluster.controlPlane.runnerCidrs)"))
    cloud_items = _hook(cfg, "control_plane_items")
    if cloud_items is not None:
        found.extend(cloud_items(cfg))
    for key, cidrs in (("authorizedNetworks", access.authorized_networks), ("runnerCidrs", access.runner_cidrs)):
        for i, cidr in enumerate(cidrs):
            path = f"cluster.controlPlane.{key}[{i}]"
            if cidr in OPEN_RANGES:
                found.append(Item("warning", "control plane", f"{path} is {cidr}: the API endpoint is open to the "
                                                              "internet"))
            elif _documentation(cidr):
                found.append(Item("warning", "control plane",
                                  f"{path} is {cidr}, a range reserved for documentation: replace it with your "
                                  "workstation or CI egress range, or nobody reaches the API endpoint"))
    return found


def _documentation(cidr: str) -> bool:
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
    return any(net.version == doc.version and net.subnet_of(doc) for doc in DOCUMENTATION_RANGES)


def _always_on(cfg: Any) -> list[Item]:
    from stacks.arguments import machine_types

    found = []
    for name, pool in cfg.node_pools.items():
        if pool.family is None or pool.autoscaling.min < 1:
            continue
        machine = " or ".join(machine_types(cfg, name))
        capacity = "spot" if pool.spot else "on-demand"
        acc = pool.accelerator
        found.append(Item("cost", "always running",
                          f"`{name}`: {pool.autoscaling.min} x {machine} ({acc.count} x {acc.type}), {capacity}, "
                          f"min {pool.autoscaling.min} (nodePools.{name}.autoscaling.min)"))
    if not found:
        found.append(Item("ok", "always running", "no accelerator node: every accelerator pool scales from 0"))
    return found


def _deletion(cfg: Any) -> Item:
    own = _hook(cfg, "deletion")
    cloud_item = own(cfg) if own is not None else None
    if cloud_item is not None:
        return cloud_item
    if cfg.cluster.deletion_protection:
        return Item("ok", "deletion protection", "on: `pulumi destroy` cannot delete the cluster until "
                                                 "cluster.deletionProtection is false")
    return Item("warning", "deletion protection", "off (cluster.deletionProtection: false): `pulumi destroy` "
                                                  "or a replacement deletes the cluster")


_MARK = {"ok": "", "warning": "**warning**: ", "cost": "**costs money**: "}


def markdown(run: Any) -> str:
    lines = [f"- {item.topic}: {_MARK[item.level]}{item.text}" for item in items(run)]
    return "## Before you deploy\n\n" + "\n".join(lines) + "\n"


def terminal(run: Any) -> list[str]:
    label = {"ok": "", "warning": "warning: ", "cost": "costs money: "}
    return ["before you deploy:"] + [f"  {item.topic}: {label[item.level]}{item.text}" for item in items(run)]
