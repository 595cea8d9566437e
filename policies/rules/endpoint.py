"""``control-plane-reachable`` (stack, mandatory): the Kubernetes provider can reach its cluster's API.

A Kubernetes provider built from a cluster of the stack (it depends on the
cluster) talks to one of the cluster's endpoints in the same run that creates
the network. The rule refuses a plan where nothing in the plan or the config
could reach that endpoint: a private endpoint no declared runner range, no
network of the plan and no range of this policy's ``runnerCidrs`` config can
reach, or an allow-list that admits none of them. Each cloud's rules module
(``policies/rules/gke.py``, ``eks.py``, ``aks.py``) says what its clusters'
endpoints admit: ``ENDPOINT_SETTINGS`` (the settings the verdict is decided
on), ``reach_inputs`` (what the plan's networks hold), ``unreachable`` (the
verdict) and ``ENDPOINT_FIX``.

The violation is reported on the provider, naming the cluster and the fix.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from pulumi_policy import ReportViolation, StackValidationArgs

from .. import cloud_parts
from ..stack_view import dig, plain
from ..unknowns import Pending, dig_known, has_unknown
from .common import config_list

K8S_PROVIDER = "pulumi:providers:kubernetes"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(values: Iterable[Any]) -> list[Network]:
    """The values that are CIDR blocks (unknown or malformed ones are skipped)."""
    found = []
    for value in values:
        try:
            found.append(ipaddress.ip_network(str(value), strict=False))
        except ValueError:
            continue
    return found


def overlaps(block: Network, others: Iterable[Network]) -> bool:
    """Whether the block overlaps one of the others (of its IP version)."""
    return any(block.version == o.version and block.overlaps(o) for o in others)


def validate_control_plane_reachable(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    runner_ranges = networks(config_list(args.get_config(), "runnerCidrs"))
    clusters = {r.urn: r for r in resources if cloud_parts.cloud_of_cluster(r.resource_type)}
    reach_inputs: dict[str, Any] = {}  # per cloud, read from the plan once
    pending = Pending()
    for provider in (r for r in resources if r.resource_type == K8S_PROVIDER):
        for dependency in provider.dependencies or []:
            cluster = clusters.get(getattr(dependency, "urn", None))
            if cluster is None:
                continue
            cloud = str(cloud_parts.cloud_of_cluster(cluster.resource_type))
            rules = cloud_parts.part(cloud, "rules")
            if cloud not in reach_inputs:
                reach_inputs[cloud] = rules.reach_inputs(resources)
            props = plain(cluster.props)
            unknown = [".".join(path) for path in rules.ENDPOINT_SETTINGS
                       if not dig_known(props, *path)[0] or has_unknown(dig(props, *path))]
            unknown += rules.unknown_reach_inputs(reach_inputs[cloud])
            if unknown:
                pending.add(", ".join(unknown), f"cluster {cluster.name} ({cluster.urn})")
                continue
            problem = rules.unreachable(props, reach_inputs[cloud], runner_ranges)
            if problem:
                report_violation(
                    f"Kubernetes provider {provider.name} talks to cluster {props.get('name') or cluster.name}, but "
                    f"{problem}: `pulumi up` could create the cluster and then apply none of its Kubernetes "
                    f"resources. {rules.ENDPOINT_FIX}",
                    provider.urn,
                )
    pending.finish()
