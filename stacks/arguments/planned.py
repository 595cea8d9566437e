"""One component the stack will create, and the map from its argument paths back to config key paths.

The library's components report problems in their own argument names (``autoscaling.max_nodes``); a
:class:`Planned` carries the component, its arguments and a :class:`KeyPaths` that turns those names into
the config key paths a user edits (``nodePools.a100.autoscaling.max``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gpu_fungibility

if TYPE_CHECKING:
    from gpu_fungibility.base import LibraryComponent

    from stacks.config import HelmChart

Issues = list[tuple[str, str]]

#: Stands in for a value another resource provides, in up-front checks.
PENDING = "(known after creation)"
#: Key path of an argument built from the pools' own (the taints on their nodes): its problems are
#: reported by the pool components' checks, at the pool's key, not again under a meaningless index.
FROM_POOLS = None


def component(name: str) -> type[LibraryComponent]:
    """A library component, imported on first use: a GKE stack never imports the AWS SDK, nor an EKS stack GCP's."""
    return getattr(gpu_fungibility, name)


def camel(segment: str) -> str:
    head, *rest = segment.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def camel_path(path: str) -> str:
    out, word = "", ""
    for char in path:
        if char in ".[":
            out += camel(word) + char
            word = ""
        else:
            word += char
    return out + camel(word)


@dataclass(frozen=True)
class KeyPaths:
    """Maps a component's argument paths to config key paths.

    ``table`` maps an argument path prefix to a key under ``base`` (or, with a
    leading ``/``, to an absolute key). The longest matching prefix wins and
    the rest of the path is kept as is; an argument with no entry is the
    camelCased argument path under ``base``. An argument mapped to
    :data:`FROM_POOLS` has no key of its own (None).
    """

    base: str
    table: Mapping[str, str | None] = field(default_factory=dict)

    def __call__(self, arg_path: str) -> str | None:
        for prefix in sorted(self.table, key=len, reverse=True):
            if arg_path == prefix or arg_path.startswith((prefix + ".", prefix + "[")):
                target = self.table[prefix]
                if target is None:
                    return None
                rest = arg_path[len(prefix):]
                if target.startswith("/"):
                    return target[1:] + rest
                return f"{self.base}.{target}{rest}" if target else f"{self.base}{rest}"
        return f"{self.base}.{camel_path(arg_path)}"


@dataclass(frozen=True)
class Planned:
    """One component the stack will create: its class, resource name, arguments and key paths."""

    component: type[LibraryComponent]
    name: str
    args: dict[str, Any]
    paths: KeyPaths

    def issues(self) -> Issues:
        """The component's check, in key paths; problems of :data:`FROM_POOLS` arguments are left to the pools."""
        return [(key, message) for path, message in self.component.check(self.name, self.args)
                if (key := self.paths(path)) is not None]


def chart_args(chart: HelmChart) -> dict[str, Any]:
    args: dict[str, Any] = {"chart": chart.chart, "version": chart.version, "namespace": chart.namespace,
                            "values": dict(chart.values)}
    if chart.repo:
        args["repository"] = chart.repo
    return args


CHART_PATHS = {"repository": "repo", "values": "values"}  # values keys are the chart's own: kept as written

POOL_PATHS = {
    "labels": "labels",  # label keys are kept as written (never camelCased)
    "machine_type": "machineType",
    "instance_types": "instanceTypes",
    "vm_size": "vmSize",
    "pool_name": "",
    "accelerator_type": "accelerator.type",
    "accelerator_count": "accelerator.count",
    "topology": "accelerator.topology",
    "accelerator": "accelerator",
    "autoscaling.min_nodes": "autoscaling.min",
    "autoscaling.max_nodes": "autoscaling.max",
    "node_group_name": "",
    "node_pool_name": "",
    "resource_labels": "/cluster.labels",
    "tags": "/cluster.labels",
    "location": "/cluster.location",
}

CLUSTER_PATHS = {
    "labels": "labels",
    "public_endpoint": "controlPlane.publicEndpoint",
    "authorized_networks": "controlPlane.authorizedNetworks",
    "dns_endpoint": "controlPlane.dnsEndpoint",
    "runner_cidrs": "controlPlane.runnerCidrs",
    "admin_principals": "controlPlane.adminPrincipals",
    "system_pool.min_nodes": "systemPool.min",
    "system_pool.max_nodes": "systemPool.max",
    "system_node_group.min_nodes": "systemPool.min",
    "system_node_group.max_nodes": "systemPool.max",
    "system_node_group.disk_size_gb": "systemPool.diskSizeGb",
    "system_node_group": "systemPool",
    "support_type": "eksSupportType",
    "pods_cidr": "network.podsCidr",
    "services_cidr": "network.servicesCidr",
    "subnet_ids": "network.existingSubnetIds",
    "region": "location",
    "tags": "labels",
}
